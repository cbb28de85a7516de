#!/bin/sh
# Trains every shipped model from the npm corpora into assets/models/.
# Needs Debian's python3-torch, python3-numpy and opencc, and npm. Each model
# takes about 25 minutes on one core. Usage: scripts/train/make_models.sh [MODEL...]
# with MODEL one of tang tang-mha tang-mqa tang-nocausal brown (all by default).
# ATTNLAB_TRAIN_THREADS sets torch's threads (default 1).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=${ATTNLAB_TRAIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab/train}
PY=/usr/bin/python3
CORPORA=$("$HERE/corpora.sh" "$WORK/corpora")
mkdir -p "$WORK"
[ -f "$WORK/zh/train.npy" ] || "$PY" "$HERE/prep.py" zh "$CORPORA" "$WORK/zh"
[ -f "$WORK/en/train.npy" ] || "$PY" "$HERE/prep.py" en "$CORPORA" "$WORK/en"
for m in ${*:-tang tang-mha tang-mqa tang-nocausal brown}; do
  case $m in
    tang) lang=zh variant=gqa ;;
    tang-*) lang=zh variant=${m#tang-} ;;
    brown) lang=en variant=gqa ;;
    *) echo "make_models.sh: unknown model '$m'" >&2; exit 2 ;;
  esac
  "$PY" "$ROOT/scripts/train_model.py" "$WORK/$lang" "$ROOT/assets/models/$m" --variant "$variant" \
    --threads "${ATTNLAB_TRAIN_THREADS:-1}" | tee "$WORK/$m.log"
done
