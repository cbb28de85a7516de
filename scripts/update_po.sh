#!/bin/sh
# Regenerates assets/po/attnlab.pot from the interface sources (src/app, src/draw
# and src/platform/*: _() and N_(); the stage descriptions in src/engine/trace/stages.c and the hover
# explanations in src/engine/trace/explain.c and the compare toggles in src/engine/trace/settings.c: ATTN_N_()) and merges it into every
# assets/po/*.po. New strings arrive untranslated, changed ones as fuzzy:
# translate them, drop the fuzzy flag, then check with `python3 tests/check_po.py`.
# Usage: scripts/update_po.sh   (from anywhere; needs gettext's xgettext and msgmerge)
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PO="$ROOT/assets/po"
cd "$ROOT"

# the interface's files in the order of their names, whatever their folder, so
# that moving a file between folders leaves the catalogs' order as it was
UI_SOURCES=$(for f in src/app/*.c src/draw/*.c src/platform/*/*.c; do echo "$(basename "$f") $f"; done |
  LC_ALL=C sort | cut -d' ' -f2)

# the same command tests/check_po.py runs to see whether the .pot is stale
xgettext --language=C --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=ATTN_N_ \
  --add-comments=TRANSLATORS: --package-name=attnlab --msgid-bugs-address= \
  --output="$PO/attnlab.pot" $UI_SOURCES src/engine/trace/settings.c src/engine/trace/stages.c src/engine/trace/explain.c

for po in "$PO"/*.po; do
  [ -e "$po" ] || continue
  if [ "$(basename "$po")" = en.po ]; then
    # English: the msgids are the text; msgen copies each new msgid to its msgstr
    msgmerge --quiet --update --backup=none --no-fuzzy-matching "$po" "$PO/attnlab.pot"
    msgen --output-file="$po" "$po"
  else
    msgmerge --quiet --update --backup=none --previous "$po" "$PO/attnlab.pot"
  fi
  echo "merged $(basename "$po"): $(msgfmt --check --statistics -o /dev/null "$po" 2>&1)"
done
