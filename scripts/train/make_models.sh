#!/bin/sh
# Trains every shipped model from the npm corpora into assets/models/.
# Needs Debian's python3-torch, python3-numpy and opencc, and npm. Each model
# takes about 25 minutes on two cores. Usage: scripts/train/make_models.sh [MODEL...]
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=${ATTNLAB_TRAIN_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab/train}
PY=/usr/bin/python3
CORPORA=$("$HERE/corpora.sh" "$WORK/corpora")
mkdir -p "$WORK"
[ -f "$WORK/zh/train.npy" ] || "$PY" "$HERE/prep.py" zh "$CORPORA" "$WORK/zh"
[ -f "$WORK/en/train.npy" ] || "$PY" "$HERE/prep.py" en "$CORPORA" "$WORK/en"
MODELS=${*:-"zh-gqa zh-mha zh-mqa zh-nocausal en-gqa"}
for m in $MODELS; do
  lang=${m%%-*}
  variant=${m#*-}
  "$PY" "$HERE/train.py" "$WORK/$lang" "$ROOT/assets/models/$m" --variant "$variant" | tee "$WORK/$m.log"
done
