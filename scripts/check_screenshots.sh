#!/bin/sh
# Renders every README screenshot with the current build (scripts/screenshots.sh
# into a temporary folder) and compares each with assets/screenshots/*.png,
# pixel by pixel (ImageMagick `compare -metric AE`). Prints the number of
# differing pixels per picture; fails if any picture differs in more than
# MAX_PIXELS pixels (default 0) or is missing. Two colours within FUZZ (default
# 1%) are the same: another CPU's kernels sum in another order, which moves a
# heatmap cell's colour by a step of the colour map (25 cells of tang's grid,
# between an AVX2 and an AVX-512 machine), while anything drawn in the wrong
# place or colour differs by far more.
# Usage: scripts/check_screenshots.sh [path/to/attnlab]   (from the repository root)
set -eu
A=${1:-build/attnlab}
MAX=${MAX_PIXELS:-0}
FUZZ=${FUZZ:-1%}
command -v compare >/dev/null || { echo "check_screenshots: ImageMagick's compare is not installed"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
scripts/screenshots.sh "$A" "$T/new" >/dev/null
bad=0
for ref in assets/screenshots/*.png; do
    name=$(basename "$ref")
    # the web page's, taken in headless Chromium by tests/web (ATTNLAB_WEB_SHOT), not by attnlab render
    case $name in web.png|web-*.png) continue ;; esac
    new="$T/new/$name"
    if [ ! -f "$new" ]; then
        echo "$name: not rendered"
        bad=1
        continue
    fi
    # compare prints the count on stderr and exits 1 when the pictures differ
    n=$(compare -metric AE -fuzz "$FUZZ" "$ref" "$new" null: 2>&1) || true
    case $n in
    ''|*[!0-9]*) echo "$name: cannot compare: $n"; bad=1; continue ;;
    esac
    echo "$name: $n differing pixels"
    [ "$n" -le "$MAX" ] || bad=1
done
[ "$bad" -eq 0 ] && echo "screenshots: all match (at most $MAX differing pixels each)"
exit "$bad"
