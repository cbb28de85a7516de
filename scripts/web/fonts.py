#!/usr/bin/python3
"""Subsets the faces the desktop draws with to the characters the web page can
show, into OUTDIR under their own file names (the CJK face: NAME-subset.ttf):

- DejaVu Sans and DejaVu Sans Bold (fonts-dejavu-core; the Bitstream Vera
  licence allows a modified copy under a name without "Bitstream" or "Vera"),
  kept with their hinting, so that glyphs rasterise as the full faces do;
- WenQuanYi Micro Hei (fonts-wqy-microhei; Apache-2.0, which allows a modified
  copy), the first face of its .ttc.

The characters: those of the lessons, the sources' strings (the built-in
example), the zh_CN catalog and the shipped models' vocabularies, example
texts and cards; and, for what a student types, Latin-1, Latin Extended-A,
Greek, punctuation, sub- and superscripts, arrows, mathematical operators and
box drawing. A character outside them is drawn by the browser's own fonts.

    scripts/web/fonts.py ROOT OUTDIR FONT...

Needs Debian's fonttools. Prints each subset's characters and size."""
import glob
import json
import os
import re
import sys

# what a student may type beside the texts the page ships
BLOCKS = [(0x20, 0x7E), (0xA0, 0x17F), (0x370, 0x3FF), (0x2000, 0x206F), (0x2070, 0x209F), (0x2190, 0x21FF),
          (0x2200, 0x22FF), (0x2500, 0x25FF)]


def die(msg):
    print("fonts.py: " + msg, file=sys.stderr)
    sys.exit(1)


def po_strings(path):
    """The msgstr texts of a .po file (escapes left in: only their characters count)."""
    out, on = [], False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("msgstr"):
                on = True
            elif line.startswith("msgid") or line.startswith("#"):
                on = False
            if on:
                m = re.search(r'"(.*)"', line)
                if m:
                    out.append(m.group(1))
    return "".join(out)


def vocabulary(path):
    with open(path, encoding="utf-8") as f:
        tok = json.load(f)
    vocab = tok.get("model", {}).get("vocab", {})
    words = list(vocab) if isinstance(vocab, dict) else [w for w, _ in vocab]
    return "".join(words) + "".join(t.get("content", "") for t in tok.get("added_tokens", []))


def text_of(root):
    parts = []
    # the lessons (the English ones show Chinese tokens too) and the sources' strings (the built-in example)
    files = glob.glob(os.path.join(root, "lessons", "*", "*.md")) + glob.glob(os.path.join(root, "src", "**", "*.[ch]"),
                                                                              recursive=True)
    for p in sorted(files):
        parts.append(open(p, encoding="utf-8").read())
    po = os.path.join(root, "assets", "po", "zh_CN.po")
    if not os.path.exists(po):
        die(po + " is missing")
    parts.append(po_strings(po))
    for model in sorted(glob.glob(os.path.join(root, "assets", "models", "*"))):
        tok = os.path.join(model, "tokenizer.json")
        if os.path.exists(tok):
            parts.append(vocabulary(tok))
        for name in ("example.txt", "card.json", "README.md"):
            p = os.path.join(model, name)
            if os.path.exists(p):
                parts.append(open(p, encoding="utf-8").read())
    return "".join(parts)


def main():
    if len(sys.argv) < 4:
        die("usage: fonts.py ROOT OUTDIR FONT...")
    root, outdir, fonts = sys.argv[1], sys.argv[2], sys.argv[3:]
    try:
        from fontTools import subset
    except ImportError:
        die("fontTools is missing: apt-get install fonttools")
    shipped = set(text_of(root))
    typed = set(shipped)
    for a, b in BLOCKS:
        typed |= {chr(c) for c in range(a, b + 1)}
    os.makedirs(outdir, exist_ok=True)
    for font in fonts:
        if not os.path.exists(font):
            die(font + " is missing")
        name, ext = os.path.splitext(os.path.basename(font))
        cjk = ext == ".ttc"
        # the CJK face draws what DejaVu lacks: the shipped texts' characters are enough
        chars = shipped if cjk else typed
        unicodes = ",".join("U+%04X" % ord(c) for c in sorted(chars) if ord(c) >= 0x20)
        out = os.path.join(outdir, name + ("-subset.ttf" if cjk else ext))
        subset.main([font, "--font-number=0", "--unicodes=" + unicodes, "--output-file=" + out,
                     "--layout-features=*", "--name-IDs=*", "--name-legacy", "--notdef-outline", "--glyph-names"])
        print("fonts.py: %s: %d bytes" % (os.path.basename(out), os.path.getsize(out)))


if __name__ == "__main__":
    main()
