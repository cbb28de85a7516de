#!/usr/bin/env python3
"""check_course.py: the shipped course keeps its teaching rules.

Reads lessons/en and lessons/zh as text (the parser's own tests are in
test_lesson.c) and fails (exit 1) when
  - a multiple-choice choice has no explanation (a plain '-' item indented
    under it);
  - the right answer of one-answer quizzes is predictably the longest choice
    (more than MAX_LONGEST of them in a language) or predictably in the same
    place (more than MAX_SAME_PLACE at one index);
  - a language has more than MAX_ARGMAX "click the argmax" quizzes, or more
    than MAX_SCALE numeric quizzes that ask for the value of √dₖ again;
  - a Chinese lesson quotes, in 「」, an interface label that the Chinese
    screen does not show: a quote that is neither a msgstr of
    assets/po/zh_CN.po (or a line of one),
    nor made of the course's tokens, nor one of the PROSE quotes below. A
    msgstr's printf conversions match any value: 「头 5 · kv 1」 is "头 %d · kv %d";
  - a Chinese paragraph breaks its source line between a Chinese character
    (or full-width punctuation) and a Latin one: the break reads as a stray
    space on screen ("结果： weights");
  - a Chinese lesson, the Chinese glossary or a msgstr of zh_CN.po spells a
    concept of lessons/terms.tsv with one of its forbidden variants (one
    Chinese term per concept: 键值头, never kv 头 or K/V 头);
  - a term of lessons/terms.tsv is missing from the glossary of either
    language (lessons/*/99-glossary.md), lacks its name in the other
    language, or names the wrong lesson as the one where it first appears;
  - with --attnlab BIN: a generation quoted in a paragraph after the command
    that makes it ("`attnlab generate --model M --text P` writes `X`", and
    "where `N` writes `Y`" for model N on the same text; 写出的是 in Chinese)
    is not what BIN generates: X is its whole output, or X… its beginning.

Usage: python3 tests/check_course.py [--root DIR] [--attnlab BIN]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import unicodedata

MAX_LONGEST = 0.35
MAX_SAME_PLACE = 0.45
MAX_ARGMAX = 4
MAX_SCALE = 2

# Quotes in the Chinese course that are words about words, not labels on the
# screen: what a head "does", a student's question, a quoted idea.
PROSE = {
    "预测下一个 token", "问什么", "训练时再做 dropout", "被遮住", "自己的权重", "看前一个字", "相对", "果断",
    "抄答案", "往回一步", "往回一个位置", "源句里哪些词和我现在这个 token 有关？", "标签", "查询 − 键",
    "真、真、真、pad、pad、pad", "未来", "这个词我以前见过，上次它后面是什么，这次多半还是什么",
    "先前那个 `old` 后面的词",
}

CHOICE = re.compile(r"^(\s*)[-*+] \[( |x|X)\] (.*)$")
ITEM = re.compile(r"^(\s*)[-*+] (?!\[[ xX]\] )(.*)$")
FENCE = re.compile(r"^\s*(```+|~~~+)")


MEASURE = re.compile(r"\{\{\s*([^|}]*?)\s*\|[^}]*\}\}")


def width(s):
    """Width of s as the panel shows it: a measure {{NUMBER | WHAT}} as its NUMBER."""
    s = MEASURE.sub(r"\1", s)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def quizzes(path):
    """Yields (line, [(right, text, explained)]) for each task list."""
    lines = open(path, encoding="utf-8").read().split("\n")
    cur, fenced = None, False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        m = CHOICE.match(line)
        if m:
            if cur is None:
                cur = (n, [], len(m.group(1)))
            cur[1].append([m.group(2) != " ", m.group(3).strip(), False])
            continue
        if cur is not None:
            m = ITEM.match(line)
            if m and len(m.group(1)) > cur[2]:
                cur[1][-1][2] = True
                continue
            if line.strip() == "" or (line.startswith(" " * (cur[2] + 2)) and line.strip()):
                continue
            yield cur[0], cur[1]
            cur = None
    if cur is not None:
        yield cur[0], cur[1]


def quiz_blocks(path):
    """Yields (line, {key: value}) for each ```quiz block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```quiz":
            start, kv = i + 1, {}
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                if "=" in lines[i]:
                    k, v = lines[i].split("=", 1)
                    kv[k.strip()] = v.strip()
                i += 1
            yield start, kv
        i += 1


def msgstrs(po):
    out, cur, key = set(), [], None
    for line in open(po, encoding="utf-8"):
        line = line.strip()
        if line.startswith("msgstr "):
            key, cur = "s", [line[7:]]
        elif line.startswith("msgid"):
            if key == "s":
                out.add("".join(eval(x) for x in cur))
            key, cur = "i", []
        elif line.startswith('"') and key:
            cur.append(line)
    if key == "s":
        out.add("".join(eval(x) for x in cur))
    # each line of a msgstr, its conversions standing for any value: 「头 5 · kv 1」 is "头 %d · kv %d"
    conv = r"%(?:\d+\$)?[-+ 0#]*\d*(?:\.\d+)?[a-z]+"
    patterns = []
    for s in out:
        for line in s.split("\n"):
            parts = re.split(conv, line.strip())
            if any(p.strip() for p in parts):
                patterns.append(re.compile(".+?".join(re.escape(p) for p in parts)))
    return out, patterns


def course_tokens(root):
    toks = set()
    for path in glob.glob(os.path.join(root, "lessons", "*", "*.md")):
        for line in open(path, encoding="utf-8"):
            m = re.match(r"\s*(tokens|text|source_tokens|source)\s*=\s*(.*)$", line)
            if m:
                words = [t for t in re.split(r"[\s|]+", m.group(2)) if t]
                toks.update(words)
                toks.update(c for w in words for c in w)  # a character model reads "床前明月光" a character at a time
    return toks


GLOSSARY = "99-glossary.md"
# a glossary entry: "- **causal mask** (因果掩码; lesson 4): ..." and
# "- **因果掩码**（causal mask；第 4 课）：..."
GLOSS_EN = re.compile(r"^[-*+] \*\*(.+?)\*\* \((.+?); lesson (\d+)\)")
GLOSS_ZH = re.compile(r"^[-*+] \*\*(.+?)\*\*（(.+?)；第 (\d+) 课）")


def load_terms(path):
    """The rows of lessons/terms.tsv as dicts."""
    rows = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        f = line.rstrip("\n").split("\t")
        f += [""] * (6 - len(f))
        kind, en, zh, en_pat, zh_pat, variants = f[:6]
        rows.append({
            "line": n, "kind": kind, "en": en, "zh": zh,
            "en_re": None if en_pat in ("", "-") else re.compile(en_pat, re.I),
            "zh_re": re.compile(re.escape(zh) if zh_pat in ("", "-") else zh_pat),
            "variants": [re.compile(v.strip()) for v in variants.split(" ; ") if v.strip()],
        })
    return rows


def prose_lines(path, code=False):
    """Yields (line number, text) of a lesson's prose: what the panel shows as
    words. ```attnlab blocks are settings; inline code (identifiers, `<s>`) is
    left out unless code is true; a measure {{N | WHAT}} reads as its N."""
    fenced = None
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        m = FENCE.match(line)
        if m and fenced is None:
            fenced = line.strip()[3:].strip() or "code"
            continue
        if m and fenced is not None:
            fenced = None
            continue
        if fenced is not None and fenced != "quiz":
            continue
        line = re.sub(r"\{\{\s*([^|}]*?)\s*\|[^}]*\}\}", r"\1", line)
        yield n, line.replace("`", "") if code else re.sub(r"`[^`]*`", "", line)


def prose_text(path):
    """A lesson's prose as one string: English lines wrap inside a term ("LM
    head"), so a line break reads as a space."""
    return " ".join(line.strip() for _, line in prose_lines(path, code=True))


def lesson_number(path):
    m = re.match(r"(\d+)-", os.path.basename(path))
    return int(m.group(1)) if m else None


def check_terms(root, problems, hits):
    """One Chinese spelling per concept, and a glossary that lists them all."""
    terms = load_terms(os.path.join(root, "lessons", "terms.tsv"))
    zh_files = sorted(glob.glob(os.path.join(root, "lessons", "zh", "*.md")))
    for path in zh_files:
        rel = os.path.relpath(path, root)
        for n, line in prose_lines(path):
            if os.path.basename(path) == GLOSSARY:  # an entry's English name is not a Chinese spelling
                line = re.sub(r"（[^（）]*(?:（[^（）]*）[^（）]*)*；第 \d+ 课）", "", line, count=1)
            for t in terms:
                for v in t["variants"]:
                    for m in v.finditer(line):
                        hits.append((rel, n, m.group(0), t["zh"]))
    po = os.path.join(root, "assets", "po", "zh_CN.po")
    for entry in po_entries(po):
        for t in terms:
            for v in t["variants"]:
                for m in v.finditer(entry["msgstr"]):
                    hits.append((f"assets/po/zh_CN.po", entry["line"], m.group(0), t["zh"]))
    for rel, n, found, term in hits:
        problems.append(f"{rel}:{n}: 「{found}」: the course writes 「{term}」 (lessons/terms.tsv)")

    for lang, pattern in (("en", GLOSS_EN), ("zh", GLOSS_ZH)):
        gloss_path = os.path.join(root, "lessons", lang, GLOSSARY)
        rel_g = os.path.relpath(gloss_path, root)
        entries = {}
        for n, line in prose_lines(gloss_path):
            m = pattern.match(line)
            if m:
                entries[m.group(1)] = (n, m.group(2), int(m.group(3)))
        lessons = sorted((lesson_number(p), p) for p in glob.glob(os.path.join(root, "lessons", lang, "*.md"))
                         if os.path.basename(p) != GLOSSARY and lesson_number(p) is not None)
        for t in terms:
            if t["kind"] != "term":
                continue
            name, other = (t["en"], t["zh"]) if lang == "en" else (t["zh"], t["en"])
            if name not in entries:
                problems.append(f"{rel_g}: no entry for **{name}** (lessons/terms.tsv:{t['line']})")
                continue
            n, names, said = entries[name]
            if other not in names:
                problems.append(f"{rel_g}:{n}: **{name}** does not give its {'Chinese' if lang == 'en' else 'English'} "
                                f"name {other}")
            find = t["en_re"] if lang == "en" else t["zh_re"]
            if find is None:
                continue
            first = next((num for num, p in lessons if find.search(prose_text(p))), None)
            if first != said:
                where = "no lesson" if first is None else f"lesson {first}"
                problems.append(f"{rel_g}:{n}: **{name}** first appears in {where}, not in lesson {said}")


def po_entries(po):
    """The msgstrs of a catalogue (obsolete #~ entries left out), each with the
    line where it starts."""
    out, cur, start, key = [], [], 0, None
    for n, line in enumerate(open(po, encoding="utf-8"), 1):
        line = line.strip()
        if line.startswith("msgstr"):
            key, cur, start = "s", [line.split(" ", 1)[1]], n
        elif line.startswith('"') and key:
            cur.append(line)
        else:
            if key == "s":
                out.append({"line": start, "msgstr": "".join(eval(x) for x in cur)})
            key = "i" if line.startswith("msgid") else None
    if key == "s":
        out.append({"line": start, "msgstr": "".join(eval(x) for x in cur)})
    return out


GENERATE = re.compile(r"`attnlab generate --model (\S+) --text ([^`\s]+)`")
WRITES = re.compile(r"(?:`([\w-]+)` )?(?:writes|写出的是) `([^`]+)`")


def quoted_generations(root):
    """(file, line, model, prompt, quote) of every generation a lesson quotes
    after the `attnlab generate` command that makes it, in the same paragraph."""
    found = []
    for path in sorted(glob.glob(os.path.join(root, "lessons", "*", "*.md"))):
        rel = os.path.relpath(path, root)
        text = open(path, encoding="utf-8").read()
        start = 0
        for para in re.split(r"\n\s*\n", text):
            at = text.index(para, start)
            start = at + len(para)
            flat = para.replace("\n", " ")  # a command may wrap; same offsets
            for cmd in GENERATE.finditer(flat):
                for w in WRITES.finditer(flat, cmd.end()):
                    line = text.count("\n", 0, at + w.start()) + 1
                    found.append((rel, line, w.group(1) or cmd.group(1), cmd.group(2), w.group(2)))
                break
    return found


def check_generations(root, attnlab, problems):
    runs = {}
    found = quoted_generations(root)
    for rel, line, model, prompt, quote in found:
        if (model, prompt) not in runs:
            r = subprocess.run([attnlab, "generate", "--model", model, "--text", prompt],
                               capture_output=True, text=True, timeout=120)
            runs[model, prompt] = r.stdout.strip().split(" → ", 1)[-1] if r.returncode == 0 else None
            if r.returncode:
                problems.append(f"{rel}:{line}: attnlab generate --model {model} --text {prompt} failed: {r.stderr.strip()}")
        out = runs[model, prompt]
        if out is not None and not (out.startswith(quote[:-1]) if quote.endswith("…") else out == quote):
            problems.append(f"{rel}:{line}: the lesson quotes {model} writing `{quote}` after {prompt}; it writes `{out}`")
    print(f"generations: {len(found)} quoted, {len(runs)} generated")
    if len(found) < 4:
        problems.append(f"lessons: only {len(found)} quoted generations found (13 quotes two in each language): "
                        "the pattern no longer reads them")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--attnlab", help="the binary: check the generations the lessons quote")
    args = ap.parse_args()
    root = args.root
    problems = []
    if args.attnlab:
        check_generations(root, args.attnlab, problems)
    for lang in ("en", "zh"):
        files = sorted(glob.glob(os.path.join(root, "lessons", lang, "*.md")))
        single = longest = 0
        places = {}
        argmax = scale = 0
        for path in files:
            rel = os.path.relpath(path, root)
            for line, choices in quizzes(path):
                for i, (right, text, explained) in enumerate(choices):
                    if not explained:
                        problems.append(f"{rel}:{line + i}: choice {i + 1} has no explanation (an indented '- ' line under it)")
                rights = [i for i, c in enumerate(choices) if c[0]]
                if len(rights) == 1 and len(choices) > 1:
                    single += 1
                    w = [width(c[1]) for c in choices]
                    longest += w[rights[0]] == max(w) and w.count(max(w)) == 1
                    places[rights[0]] = places.get(rights[0], 0) + 1
            for line, kv in quiz_blocks(path):
                if kv.get("click") == "argmax":
                    argmax += 1
                if "answer" in kv and "√" in kv.get("hint", "") + kv.get("explain", ""):
                    try:
                        a = float(kv["answer"])
                    except ValueError:
                        continue
                    if any(abs(a - d ** 0.5) < 0.01 for d in (4, 8, 16, 32, 64, 128, 256, 512)):
                        scale += 1
        if single:
            if longest / single > MAX_LONGEST:
                problems.append(f"lessons/{lang}: the right answer is the longest choice in {longest} of {single} quizzes "
                                f"(at most {MAX_LONGEST:.0%})")
            for place, n in sorted(places.items()):
                if n / single > MAX_SAME_PLACE:
                    problems.append(f"lessons/{lang}: the right answer is choice {place + 1} in {n} of {single} quizzes "
                                    f"(at most {MAX_SAME_PLACE:.0%})")
        if argmax > MAX_ARGMAX:
            problems.append(f"lessons/{lang}: {argmax} 'click = argmax' quizzes (at most {MAX_ARGMAX})")
        if scale > MAX_SCALE:
            problems.append(f"lessons/{lang}: {scale} numeric quizzes ask for √dₖ (at most {MAX_SCALE})")
        print(f"{lang}: {single} one-answer choice quizzes, right answer longest in {longest}, "
              f"places {dict(sorted(places.items()))}, {argmax} argmax clicks, {scale} √dₖ values")

    full, patterns = msgstrs(os.path.join(root, "assets", "po", "zh_CN.po"))
    toks = course_tokens(root)
    for path in sorted(glob.glob(os.path.join(root, "lessons", "zh", "*.md"))):
        rel = os.path.relpath(path, root)
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            for q in re.findall(r"「([^」]*)」", line):
                if q in PROSE or q in full or any(r.search(q) and r.fullmatch(q) for r in patterns):
                    continue
                if all(t in toks for t in q.split()) or all(c in toks for c in q if not c.isspace()):
                    continue
                problems.append(f"{rel}:{n}: 「{q}」 is not on the Chinese screen (no msgstr of zh_CN.po shows it)")
    for path in sorted(glob.glob(os.path.join(root, "lessons", "zh", "*.md"))):
        rel = os.path.relpath(path, root)
        lines, fenced = open(path, encoding="utf-8").read().split("\n"), False
        for n in range(len(lines) - 1):
            a, b = lines[n].rstrip(), lines[n + 1].strip()
            if FENCE.match(a):
                fenced = not fenced
            if fenced or not a.strip() or not b or re.match(r"(```|~~~|#|[-*+] |\d+\. |\||>)", b):
                continue
            if width(a[-1]) != width(b[0]):
                problems.append(f"{rel}:{n + 1}: the line breaks between '{a[-1]}' and '{b[0]}': a stray space on screen")
    hits = []
    check_terms(root, problems, hits)
    files = {}
    for rel, _, _, _ in hits:
        files[rel] = files.get(rel, 0) + 1
    print(f"terms: {len(hits)} forbidden spellings" + (": " + ", ".join(f"{f} {k}" for f, k in sorted(files.items())) if hits else ""))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
