#!/bin/sh
# The installed copy: `cmake --install` into a temporary prefix, then that copy
# finds its own models, lessons and translations (PREFIX/share/attnlab), not
# the source tree's. Usage: check_install.sh BUILD_DIR
set -eu
BUILD=$1
P=$(mktemp -d "${ATTNLAB_TEST_TMP:-/tmp}/attnlab-install-XXXXXX")
trap 'rm -rf "$P"' EXIT
fail() { echo "check_install: $*" >&2; exit 1; }
cmake --install "$BUILD" --prefix "$P" >/dev/null
unset ATTNLAB_MODELS ATTNLAB_LESSONS ATTNLAB_LOCALEDIR
A="$P/bin/attnlab"
[ -f "$P/share/attnlab/locale/zh_CN/LC_MESSAGES/attnlab.mo" ] || fail "no zh_CN translations installed"
out=$("$A" models) || fail "attnlab models failed: $out"
echo "$out" | grep -q "^(in $P/share/attnlab/models;" || fail "models are not the installed ones: $out"
echo "$out" | grep -q "^tang " || fail "tang is not listed: $out"
gen=$("$A" generate --model tang --text 床前明月光 --max-new 6) || fail "generate from the installed copy failed"
[ -n "$gen" ] || fail "generate wrote nothing"
list=$("$A" lessons --list --lang zh) || fail "lessons --list failed"
echo "$list" | grep -q "01-self-attention.md" || fail "no lessons: $list"
# the installed copy reads its own lessons: one changed there shows up
sed -i '1s/.*/# INSTALLED COPY/' "$P/share/attnlab/lessons/en/01-self-attention.md"
"$A" lessons --list --lang en | grep -q "INSTALLED COPY" || fail "the lessons listed are not the installed ones"
echo "check_install: ok: models, lessons and translations come from $P/share/attnlab"
