#!/usr/bin/python3
"""Subsets the CJK face the desktop draws with, WenQuanYi Micro Hei (Debian's
fonts-wqy-microhei; Apache-2.0, which allows a modified copy, this subset),
to the characters the web page can show: the lessons, the sources' strings
(the built-in example), the zh_CN catalog, and the shipped models'
vocabularies, example texts and cards.

    scripts/web/cjk_font.py ROOT OUT.ttf [FONT.ttc]

Needs Debian's fonttools (pyftsubset). Prints how many characters it kept and
the subset's size. A character outside the subset (a student's own text) is
drawn by the browser's own CJK font."""
import glob
import json
import os
import re
import sys

FONT = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"


def die(msg):
    print("cjk_font.py: " + msg, file=sys.stderr)
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
    if len(sys.argv) not in (3, 4):
        die("usage: cjk_font.py ROOT OUT.ttf [FONT.ttc]")
    root, out = sys.argv[1], sys.argv[2]
    font = sys.argv[3] if len(sys.argv) == 4 else FONT
    if not os.path.exists(font):
        die(font + " is missing: apt-get install fonts-wqy-microhei")
    try:
        from fontTools import subset
    except ImportError:
        die("fontTools is missing: apt-get install fonttools")
    # everything outside ASCII (DejaVu draws that), plus ASCII for the face's own fallbacks
    chars = {c for c in text_of(root) if ord(c) > 0x7F} | {chr(c) for c in range(0x20, 0x7F)}
    unicodes = ",".join("U+%04X" % ord(c) for c in sorted(chars))
    subset.main([font, "--font-number=0", "--unicodes=" + unicodes, "--output-file=" + out,
                 "--layout-features=*", "--no-hinting", "--desubroutinize", "--name-IDs=*", "--name-legacy"])
    print("cjk_font.py: %d characters, %s: %d bytes" % (len(chars), os.path.basename(out), os.path.getsize(out)))


if __name__ == "__main__":
    main()
