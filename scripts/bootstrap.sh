#!/bin/sh
# Installs the Debian packages attnlab needs to build and test, if any is missing,
# plus any package named on the command line (e.g. clang for `make fuzz`).
# Runs apt-get directly as root, through sudo otherwise.
set -eu

PACKAGES="$* build-essential cmake pkg-config libopenblas-dev libopenblas-openmp-dev libcjson-dev libpcre2-dev libutf8proc-dev libcmocka-dev libmd4c-dev gettext python3-numpy python3-torch
  libsdl2-dev libsdl2-ttf-dev libsdl2-image-dev libfontconfig-dev fonts-dejavu-core fonts-wqy-microhei
  libcairo2-dev librsvg2-bin poppler-utils cflow
  xvfb xdotool imagemagick x11-utils"

missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0

echo "bootstrap: installing missing Debian packages:$missing"
if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "bootstrap: need root or sudo to install:$missing" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
