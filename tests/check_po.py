#!/usr/bin/env python3
"""check_po.py: the interface catalogs are complete, consistent and current.

Fails (exit 1) when
  - a msgid of assets/po/attnlab.pot is missing from a checked .po, or its
    msgstr is empty, or the entry is fuzzy;
  - the printf conversions of a msgstr differ from those of its msgid (the
    same conversions for the same arguments, in order, or by %N$ position);
  - attnlab.pot is stale: xgettext, run again on the sources with the options
    of scripts/update_po.sh, finds a different set of msgids.

Checks zh_CN.po by default (every msgid translated); en.po too when present
(its msgstr may equal the msgid). Python 3 and gettext's xgettext only.

Usage: python3 tests/check_po.py [--root DIR] [--xgettext PATH] [--skip-stale] [LANG ...]
Exit 0 clean, 1 problems found, 2 cannot run (no xgettext, unreadable file).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

XGETTEXT_ARGS = ["--language=C", "--from-code=UTF-8", "--keyword=_", "--keyword=N_", "--keyword=ATTN_N_",
                 "--add-comments=TRANSLATORS:", "--package-name=attnlab", "--msgid-bugs-address="]
# the interface, and the engine's stage descriptions and hover explanations (marked ATTN_N_, translated where drawn)
SOURCES = ["src/app/*.c", "src/draw/*.c", "src/platform/*/*.c", "src/engine/trace/settings.c", "src/engine/trace/stages.c", "src/engine/trace/explain.c"]


# ---- reading PO files -------------------------------------------------------

def unquote(s, where):
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise ValueError(f"{where}: expected a quoted string, got {s!r}")
    out, i, body = [], 0, s[1:-1]
    esc = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n in esc:
                out.append(esc[n])
                i += 2
                continue
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            if m:
                out.append(chr(int(m.group(0), 8)))
                i += 1 + len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


class Entry:
    def __init__(self, line):
        self.line = line
        self.flags = set()
        self.msgctxt = None
        self.msgid = None
        self.msgid_plural = None
        self.msgstr = {}  # index -> text (0 for a plain msgstr)

    @property
    def key(self):
        return (self.msgctxt, self.msgid)


def read_po(path):
    """Entries of a PO/POT file (obsolete #~ entries skipped), in file order."""
    entries, cur, field = [], None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")

    def finish():
        if cur is not None and cur.msgid is not None:
            entries.append(cur)

    for n, raw in enumerate(lines, 1):
        line = raw.strip()
        where = f"{path}:{n}"
        if not line:
            continue
        if line.startswith("#~"):
            continue
        if line.startswith("#"):
            if cur is not None and cur.msgid is not None:  # comments start the next entry
                finish()
                cur, field = None, None
            if cur is None:
                cur = Entry(n)
            if line.startswith("#,"):
                cur.flags.update(x.strip() for x in line[2:].split(","))
            continue
        m = re.match(r'(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*")$', line)
        if m:
            kw, idx, val = m.group(1), m.group(2), unquote(m.group(3), where)
            if kw in ("msgctxt", "msgid") and cur is not None and cur.msgid is not None:
                finish()
                cur = None
            if cur is None:
                cur = Entry(n)
            if kw == "msgctxt":
                cur.msgctxt, field = val, ("msgctxt", None)
            elif kw == "msgid":
                cur.msgid, field = val, ("msgid", None)
            elif kw == "msgid_plural":
                cur.msgid_plural, field = val, ("msgid_plural", None)
            else:
                i = int(idx) if idx is not None else 0
                cur.msgstr[i], field = val, ("msgstr", i)
            continue
        if line.startswith('"'):
            if cur is None or field is None:
                raise ValueError(f"{where}: a string continues nothing")
            val = unquote(line, where)
            kind, i = field
            if kind == "msgstr":
                cur.msgstr[i] += val
            else:
                setattr(cur, kind, getattr(cur, kind) + val)
            continue
        raise ValueError(f"{where}: cannot read {raw!r}")
    finish()
    return entries


# ---- printf conversions -----------------------------------------------------

CONV = re.compile(r"%(?:(\d+)\$)?([-+ #0']*)(\*(?:\d+\$)?|\d+)?(?:\.(\*(?:\d+\$)?|\d+))?"
                  r"(hh|h|ll|l|L|q|j|z|Z|t)?([diouxXeEfFgGaAcspnm%])")
TYPE = {**dict.fromkeys("di", "int"), **dict.fromkeys("ouxX", "unsigned"),
        **dict.fromkeys("eEfFgGaA", "double"), "c": "int", "s": "string", "p": "pointer", "n": "count"}


def conversions(fmt):
    """The arguments a printf format consumes: {position: type}, or an error string."""
    args, seq, positional = {}, 0, None
    for m in CONV.finditer(fmt):
        pos, flags, width, prec, size, conv = m.groups()
        if conv == "%" or conv == "m":
            continue
        uses_pos = pos is not None
        if positional is None:
            positional = uses_pos
        elif positional != uses_pos:
            return "mixes numbered and unnumbered conversions"
        for star in (width, prec):
            if star and star.startswith("*"):
                if uses_pos:
                    args[int(star[1:-1])] = "int"
                else:
                    seq += 1
                    args[seq] = "int"
        if uses_pos:
            p = int(pos)
        else:
            seq += 1
            p = seq
        t = (size or "") + TYPE[conv]
        if args.get(p, t) != t:
            return f"argument {p} used as {args[p]} and {t}"
        args[p] = t
    return args


# ---- the checks -------------------------------------------------------------

def check_catalog(path, pot, require_translation):
    problems = []
    try:
        po = {e.key: e for e in read_po(path)}
    except (OSError, ValueError, UnicodeDecodeError) as e:
        return [f"{path}: {e}"]
    name = os.path.basename(path)
    for e in pot:
        if e.msgid == "":
            continue
        where = f"{name}: msgid {e.msgid!r}"
        t = po.get(e.key)
        if t is None:
            problems.append(f"{where}: missing (run scripts/update_po.sh)")
            continue
        if "fuzzy" in t.flags:
            problems.append(f"{where}: fuzzy (check the translation, then remove the fuzzy flag)")
        strs = [t.msgstr[i] for i in sorted(t.msgstr)] or [""]
        if require_translation and any(s == "" for s in strs):
            problems.append(f"{where}: not translated")
            continue
        if "c-format" in e.flags or "c-format" in t.flags or "%" in e.msgid:
            want = conversions(e.msgid)
            if isinstance(want, str):
                problems.append(f"{where}: bad format in the msgid: {want}")
                continue
            for s in strs:
                if s == "":
                    continue
                got = conversions(s)
                if isinstance(got, str):
                    problems.append(f"{where}: bad format in msgstr {s!r}: {got}")
                elif got != want:
                    problems.append(f"{where}: msgstr {s!r} takes {fmt_args(got)}, the msgid takes {fmt_args(want)}")
    hdr = po.get((None, ""))
    if hdr is None or "charset=UTF-8" not in hdr.msgstr.get(0, ""):
        problems.append(f"{name}: the header must declare charset=UTF-8")
    return problems


def fmt_args(a):
    return "(" + ", ".join(a[k] for k in sorted(a)) + ")" if a else "no arguments"


def check_stale(root, pot_path, xgettext):
    exe = xgettext or shutil.which("xgettext")
    if not exe:
        print("check_po: xgettext not found (install gettext), cannot check the .pot is current", file=sys.stderr)
        sys.exit(2)
    sources = [os.path.relpath(p, root) for pat in SOURCES for p in sorted(glob.glob(os.path.join(root, pat)))]
    with tempfile.TemporaryDirectory(prefix="check_po-") as tmp:
        out = os.path.join(tmp, "fresh.pot")
        r = subprocess.run([exe, *XGETTEXT_ARGS, "--output=" + out, *sources], cwd=root,
                           capture_output=True, text=True, env=dict(os.environ, LC_ALL="C"))
        if r.returncode:
            print(f"check_po: xgettext failed:\n{r.stderr}", file=sys.stderr)
            sys.exit(2)
        fresh = {e.key for e in read_po(out) if e.msgid}
    old = {e.key for e in read_po(pot_path) if e.msgid}
    problems = []
    for k in sorted(fresh - old, key=str):
        problems.append(f"attnlab.pot is stale: the sources have {k[1]!r}, the .pot does not (run scripts/update_po.sh)")
    for k in sorted(old - fresh, key=str):
        problems.append(f"attnlab.pot is stale: it has {k[1]!r}, the sources no longer do (run scripts/update_po.sh)")
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="the attnlab checkout (default: ..)")
    ap.add_argument("--xgettext", help="xgettext to run (default: from PATH)")
    ap.add_argument("--skip-stale", action="store_true", help="do not re-run xgettext")
    ap.add_argument("langs", nargs="*", help="catalogs to check (default: zh_CN, and en when present)")
    a = ap.parse_args()
    podir = os.path.join(a.root, "assets", "po")
    pot_path = os.path.join(podir, "attnlab.pot")
    try:
        pot = read_po(pot_path)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        print(f"check_po: {e}", file=sys.stderr)
        return 2
    langs = a.langs or ["zh_CN"] + (["en"] if os.path.exists(os.path.join(podir, "en.po")) else [])
    problems = []
    for lang in langs:
        # English may leave a msgstr empty (gettext then shows the msgid); the others may not
        problems += check_catalog(os.path.join(podir, lang + ".po"), pot, require_translation=lang != "en")
    if not a.skip_stale:
        problems += check_stale(a.root, pot_path, a.xgettext)
    for p in problems:
        print("check_po: " + p)
    n = sum(1 for e in pot if e.msgid)
    if problems:
        print(f"check_po: {len(problems)} problem(s) in {', '.join(langs)} ({n} msgids)")
        return 1
    print(f"check_po: ok: {', '.join(langs)} translate all {n} msgids of attnlab.pot, formats match, .pot current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
