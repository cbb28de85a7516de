#!/bin/sh
# Trains every shipped model from the npm corpora into assets/models/.
# Needs Debian's python3-torch, python3-numpy and opencc, and npm. Each model
# takes about 25 minutes on one core. Usage: scripts/train/make_models.sh [MODEL...]
# with MODEL one of tang tang-mha tang-mqa tang-mla tang-nocausal brown (all by default)
# (tang-mla: multi-head latent attention, a dense DeepSeek-V3 folder; its other seeds
# are the same command with --seed 2 and 3 into folders of their own, measured into
# its card by scripts/train/card.py assets/models/tang-mla --seed-run DIR ...)
# or brown-induction: 2 layers, every row's sentence said twice (--repeat 1),
# saved and measured at 0, 25, 50, ... 1600 and 3000 steps (--checkpoints), to
# watch its previous-token and induction heads form; about 25 minutes on one core.
# ATTNLAB_TRAIN_THREADS sets torch's threads (default 1).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=${ATTNLAB_TRAIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab/train}
PY=/usr/bin/python3
mkdir -p "$WORK"
for m in ${*:-tang tang-mha tang-mqa tang-mla tang-nocausal brown}; do
  extra=
  case $m in
    tang) lang=zh variant=gqa ;;
    tang-*) lang=zh variant=${m#tang-} ;;
    brown) lang=en variant=gqa ;;
    brown-induction) lang=en variant=gqa extra="--layers 2 --steps 3000 --repeat 1 --checkpoints" ;;
    *) echo "make_models.sh: unknown model '$m'" >&2; exit 2 ;;
  esac
  (cd "$ROOT" && "$PY" scripts/train_model.py "$lang" "assets/models/$m" --variant "$variant" $extra \
    --threads "${ATTNLAB_TRAIN_THREADS:-1}") | tee "$WORK/$m.log"
done
