#!/usr/bin/env python3
"""check_links.py: every relative link in the documentation resolves.

Reads README.md, docs/*.md, bench/results/*.md and lessons/README.md (or the
files given) and fails (exit 1) when a Markdown link or image that is not a
URL names a file or folder that does not exist, or a #fragment that is not
the GitHub anchor of a heading in the file it names. Code blocks and inline
code are skipped. Usage: scripts/check_links.py [--root DIR] [FILE.md...]"""
import argparse
import glob
import os
import re
import sys

LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~)")


def outside_fences(text):
    """The lines of text outside fenced code blocks (and not their fences)."""
    fence = None
    for line in text.split("\n"):
        if FENCE.match(line.lstrip()):
            tick = line.lstrip()[:3]
            fence = None if fence == tick else (fence or tick)
        elif fence is None:
            yield line


def prose(text):
    """The text outside fenced code blocks, with inline code blanked."""
    return "\n".join(re.sub(r"`+[^`]*`+", "``", line) for line in outside_fences(text))


def anchor(heading):
    """GitHub's anchor of a heading: its text as shown (a link's text, no code
    or emphasis marks; an underscore within a word, as in W_O, stays), lower
    case, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    parts = re.split(r"(`+)(.*?)\1", h)  # text, then each code span's ticks and its text as written
    for i in range(0, len(parts), 3):
        t = parts[i].replace("*", "")
        parts[i] = re.sub(r"(?<![^\W_])(__?)(?=\S)(.+?)(?<=\S)\1(?![^\W_])", r"\2", t)  # _emphasis_, __strong__
    h = "".join(p for i, p in enumerate(parts) if i % 3 != 1)
    h = re.sub(r"[^\w\- ]", "", h.lower())
    return h.replace(" ", "-")


# Headings and the anchors GitHub gives them, checked before any link.
KNOWN = [
    ("Mixing the heads: W_O", "mixing-the-heads-w_o"),
    ("repeat_kv: from (b, g, n, dₖ) to (b, h, t, dₖ)", "repeat_kv-from-b-g-n-dₖ-to-b-h-t-dₖ"),
    ("A wider head: d_model = 256", "a-wider-head-d_model--256"),
    ("The `attnlab` block: what the visualizer shows", "the-attnlab-block-what-the-visualizer-shows"),
    ("Measured numbers: `{{NUMBER | WHAT key=value ...}}`", "measured-numbers-number--what-keyvalue-"),
    ("Some *stress*, _stress_, **more** and __more__", "some-stress-stress-more-and-more"),
    ("A [linked](x.md) word", "a-linked-word"),
    ("The `__init__` method, _not_ code", "the-__init__-method-not-code"),
]


def anchors(path):
    seen, out = {}, set()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for line in outside_fences(text):
        if re.match(r"#{1,6} ", line):
            a = anchor(line.lstrip("#"))
            n = seen.get(a, 0)
            seen[a] = n + 1
            out.add(a if n == 0 else f"{a}-{n}")
    return out


def check(path, root):
    problems = []
    with open(path, encoding="utf-8") as f:
        text = prose(f.read())
    for m in LINK.finditer(text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, frag = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        line = text[: m.start()].count("\n") + 1
        rel = os.path.relpath(path, root)
        if not os.path.exists(dest):
            problems.append(f"{rel}:{line}: {target}: no such file")
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            problems.append(f"{rel}:{line}: {target}: no heading #{frag} in {os.path.relpath(dest, root)}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    wrong = [(h, want, anchor(h)) for h, want in KNOWN if anchor(h) != want]
    for h, want, got in wrong:
        print(f"check_links: the anchor of '{h}' is {want}, not {got}")
    if wrong:
        return 1
    files = a.files or [os.path.join(root, "README.md"), os.path.join(root, "lessons", "README.md")] + sorted(
        glob.glob(os.path.join(root, "docs", "*.md")) + glob.glob(os.path.join(root, "bench", "results", "*.md")))
    problems = [p for f in files for p in check(os.path.abspath(f), root)]
    for p in problems:
        print(p)
    print(f"check_links: {len(files)} files, {len(problems)} broken links")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
