#!/usr/bin/env python3
"""check_names.py: a name says where it lives, one place renames files, no function over 80 lines.

Reads the .c and .h files under src/ as text (comments, strings and
preprocessor lines set aside) and finds the functions defined at file scope
that are not static: a place's exported functions. A place is a top-level
folder of src/ (engine, lesson, app, draw, cli), each folder of
src/platform/ (paint, sdl, export, posix, web), or src/ itself (main.c). Fails
(exit 1) when

  - one exported two-word prefix (the first two `_`-separated words of a
    name: `draw_plot` for draw_plot_rows) is defined in two places, so that
    a name like ui_render could be looked for in either;
  - an exported function of a place does not start with that place's prefix
    (PREFIXES: engine attn_, app app_, draw draw_, platform/sdl sdl_, ...),
    or is not one of the few names a toolchain requires (main; the web
    page's __map_file, which takes the place of libc's);
  - `rename(` is called in no file of src/ or in more than one: every file
    written whole goes through the one atomic writer (RENAMER);
  - a function in src/ is over MAX_FUNCTION_LINES (80) lines, counted from
    the first line of its signature to its closing brace. A function body is
    found as the house style writes it: an opening `{` at column 0 right
    after a signature, to the next `}` at column 0 (comments, strings and
    preprocessor lines set aside, so a brace in them counts for nothing).

`--self-test` builds small synthetic trees in a temporary folder and checks
that each kind of problem is found (and that a clean tree passes).

Usage: python3 tests/check_names.py [--root DIR] [--self-test]
Exit 0 clean, 1 problems found, 2 cannot run.
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_includes import source_files, write_tree  # noqa: E402  (the same files, the same synthetic trees)

# each place's prefixes; a place's exported functions start with one of them
PREFIXES = {
    "": ("main",),
    "engine": ("attn_",),
    "lesson": ("lesson_", "parser_"),
    "app": ("app_",),
    "draw": ("draw_",),
    "platform/paint": ("paint_",),
    "platform/sdl": ("sdl_",),
    "platform/export": ("export_",),
    "platform/posix": ("posix_",),
    "platform/web": ("web_",),
    "cli": ("cli_", "cmd_"),
}
# names a toolchain asks for, whatever the place's prefix
REQUIRED = {
    "": {"main"},
    "platform/web": {"main", "__map_file"},  # emscripten's entry; musl's file mapper, replaced (map_file.c)
}
# the one file that calls rename(): the atomic writer
RENAMER = "engine/base/fileio.c"
# the longest a function may be, signature to closing brace
MAX_FUNCTION_LINES = 80

COMMENTS_STRINGS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
PREPROCESSOR = re.compile(r"^[ \t]*#[^\n]*", re.M)
ATTRIBUTE = re.compile(r"\b__attribute__\s*\(\(")
RENAME_CALL = re.compile(r"(?<![\w.>])rename\s*\(")


def plain(text):
    """The C text with comments, strings, char literals and preprocessor lines blanked."""
    text = text.replace("\\\n", "")
    text = COMMENTS_STRINGS.sub(lambda m: " " if m.group(0)[0] == "/" else '""', text)
    return PREPROCESSOR.sub("", text)


def plain_lines(text):
    """The C text's lines with comments, strings, char literals and preprocessor
    lines (with their continuations) blanked to spaces: one line for each line."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", blank, text, flags=re.M)
    return COMMENTS_STRINGS.sub(blank, text).split("\n")


def function_lengths(text):
    """[(name, first line (1-based), lines)] for each function of a C text whose
    body opens with a `{` at column 0 after its signature; lines run from the
    signature's first line to the `}` at column 0 that closes it (the same line
    when the body closes on its own opening line)."""
    lines, out = plain_lines(text), []
    for i, line in enumerate(lines):
        if not line.startswith("{") or i == 0:
            continue
        # the signature: the lines above, back to a blank line (comments and
        # preprocessor lines are blank now) or the end of a declaration
        j = i
        while j > 0 and lines[j - 1].strip() and not lines[j - 1].rstrip().endswith((";", "}", "{")):
            j -= 1
        decl = drop_attributes(" ".join(lines[j:i])).strip()
        if j == i or not decl.endswith(")"):
            continue  # an initializer (`= {`) or a struct, not a function
        if line.count("{") == line.count("}"):
            k = i  # { ... } on one line
        else:
            k = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("}")), None)
            if k is None:
                out.append((function_name(decl), j + 1, None))
                continue
        out.append((function_name(decl), j + 1, k - j + 1))
    return out


def name_before_parameters(decl):
    """The match of the name before the last balanced (...) group of a declaration, or None."""
    d, j = 0, len(decl) - 1
    while j >= 0:
        d += {")": 1, "(": -1}.get(decl[j], 0)
        if d == 0:
            break
        j -= 1
    return re.search(r"([A-Za-z_]\w*)\s*$", decl[:j])


def function_name(decl):
    """The name before the last balanced (...) group of a declaration."""
    m = name_before_parameters(decl)
    return m.group(1) if m else "?"


def drop_attributes(decl):
    """decl without its __attribute__((...)) groups."""
    while True:
        m = ATTRIBUTE.search(decl)
        if not m:
            return decl
        depth, i = 0, m.end() - 2
        while i < len(decl):
            depth += {"(": 1, ")": -1}.get(decl[i], 0)
            i += 1
            if depth == 0:
                break
        decl = decl[:m.start()] + " " + decl[i:]


def definitions(text):
    """[(name, static)] for each function defined at file scope in a C text."""
    t, out, depth, start = plain(text), [], 0, 0
    for i, c in enumerate(t):
        if c == "{":
            if depth == 0:
                decl = drop_attributes(t[start:i]).rstrip()
                if decl.endswith(")"):
                    # the parameter list is the last balanced group; the name stands before it
                    m = name_before_parameters(decl)
                    if m:
                        # this declaration's words: back to the last group closed before it
                        head = decl[:m.start()]
                        head = head[head.rfind(")") + 1:]
                        if "=" not in head:
                            out.append((m.group(1), bool(re.search(r"\bstatic\b", head))))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
    return out


def place(rel):
    """"app" for app/view.c, "platform/sdl" for platform/sdl/gfx.c, "" for main.c."""
    parts = rel.split("/")
    if len(parts) == 1:
        return ""
    if parts[0] == "platform" and len(parts) > 2:
        return "platform/" + parts[1]
    return parts[0]


def prefix2(name):
    """The first two `_`-separated words: draw_plot for draw_plot_rows (a leading `_` kept)."""
    m = re.match(r"(_*[^_]+(?:_[^_]+)?)", name)
    return m.group(1) if m else name


def scan(root):
    """({rel: [(name, static)]}, {rel: number of rename( calls}, {rel: function_lengths})
    over root/src."""
    defs, renames, lengths = {}, {}, {}
    for rel, path in source_files(root):
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        defs[rel] = definitions(text)
        lengths[rel] = function_lengths(text)
        calls = len(RENAME_CALL.findall(plain(text)))
        if calls:
            renames[rel] = calls
    return defs, renames, lengths


def check(root):
    defs, renames, lengths = scan(root)
    problems = []
    where = {}  # two-word prefix -> {place: first file}
    for rel in sorted(defs):
        p = place(rel)
        allowed = PREFIXES.get(p)
        if allowed is None:
            problems.append(f"src/{rel}: in no known place ({', '.join(sorted(k or 'src/' for k in PREFIXES))}); "
                            "add the folder and its prefix to PREFIXES")
            continue
        for name, static in defs[rel]:
            if static:
                continue
            if name in REQUIRED.get(p, ()):
                continue
            where.setdefault(prefix2(name), {}).setdefault(p, rel)
            if not name.startswith(allowed):
                problems.append(f"src/{rel}: {name} is exported from {p or 'src/'} but does not start with "
                                f"{' or '.join(allowed)}")
    for pre, places in sorted(where.items()):
        if len(places) > 1:
            problems.append(f"{pre}_ is defined in {len(places)} places: "
                            + ", ".join(f"{p or 'src/'} (src/{rel})" for p, rel in sorted(places.items())))
    if sorted(renames) != [RENAMER] or renames.get(RENAMER) != 1:
        found = ", ".join(f"src/{r} ({k})" for r, k in sorted(renames.items())) or "no file"
        problems.append(f"rename( is called in {found}; only src/{RENAMER}, the atomic writer, "
                        "should call it, once")
    for rel in sorted(lengths):
        for name, line, n in lengths[rel]:
            if n is None:
                problems.append(f"src/{rel}:{line}: {name}: no `}}` at column 0 closes the body opened below "
                                "its signature")
            elif n > MAX_FUNCTION_LINES:
                problems.append(f"src/{rel}:{line}: {name} is {n} lines, over {MAX_FUNCTION_LINES}: "
                                "split it into steps that each do one thing")
    return problems


# ---- self-test ------------------------------------------------------------------

def long_function(name, n, inside=()):
    """A function of exactly n lines: a three-line signature, its body opened
    and closed at column 0, the lines inside (braces in comments, strings)
    among its statements."""
    body = list(inside) + ["    x += 1;"] * (n - 6 - len(inside))
    return "\n".join(["static int", f"{name}(int x,", "        int y)", "{", *body, "    return x + y;", "}"]) + "\n"


CLEAN = {
    "main.c": "int main(void) { return 0; }\n",
    "engine/base/fileio.c": ("#include <stdio.h>\n/* rename( in a comment is no call */\n"
                             "int attn_file_write(const char *a, const char *b) { return rename(a, b); }\n"),
    "engine/trace/trace.c": ("static int helper(int x) { return x; }\n"
                             "__attribute__((format(printf, 1, 2))) static void say(const char *f, ...) { }\n"
                             "int\nattn_trace_size(const struct t *t,\n                int (*cb)(int))\n{ return helper(1); }\n"
                             "const char *s = \"app_x(void) {\";\n"),
    "lesson/parse.c": "int lesson_parse(void) { return 0; }\nint parser_step(void) { if (1) { } return 0; }\n",
    "app/app.c": ("#define TWICE(x) \\\n  int x(void) { return 2; }\nstruct app { int a; };\n"
                  "int app_key(struct app *a) { return a->a; }\nstatic const int table[] = { 1, 2 };\n"),
    "draw/render.c": "void draw_frame(void) { }\n" + long_function("just_80", MAX_FUNCTION_LINES),
    "draw/table.c": "static const int rows[] =\n{\n" + "    1,\n" * 100 + "};\nvoid draw_table(void) { }\n",
    "platform/sdl/window.c": "int sdl_window_run(void) { return 0; }\n",
    "platform/export/export.c": "int export_svg(void) { return 0; }\n",
    "platform/posix/jobs_thread.c": "void posix_jobs_start(void) { }\n",
    "platform/web/main_web.c": ("#define KEEP __attribute__((used))\nKEEP int web_frame(void) { return 0; }\n"
                                "int main(void) { return 0; }\n"),
    "platform/web/map_file.c": "const unsigned char *__map_file(const char *p, unsigned long *n) { return 0; }\n",
    "cli/args.c": "int cli_parse(void) { return 0; }\nint cmd_trace(void) { return 0; }\n",
}

CASES = [
    ("a clean tree", {}, None),
    ("one prefix in two places", {"platform/sdl/draw_sdl.c": "void sdl_render(void) { }\n",
                                  "draw/render.c": "void draw_frame(void) { }\nvoid sdl_render_frame(void) { }\n"},
     "sdl_render_ is defined in 2 places"),
    ("one prefix in two platform folders", {"platform/posix/jobs_thread.c": "void posix_jobs_start(void) { }\n",
                                            "platform/web/jobs.c": "void posix_jobs_stop(void) { }\n"},
     "posix_jobs_ is defined in 2 places"),
    ("a name without its place's prefix", {"app/view.c": "int ui_view_rows(void) { return 0; }\n"},
     "ui_view_rows is exported from app but does not start with app_"),
    ("a multi-line definition without its prefix", {"draw/plot.c": "static int z;\nvoid\nplot_rows(int a,\n int b)\n{\n}\n"},
     "plot_rows is exported from draw"),
    ("an engine name without attn_", {"engine/tokenizer/tok.c": "int tok_step(void) { return 0; }\n"},
     "tok_step is exported from engine"),
    ("a file in no known place", {"gui/window.c": "int gui_run(void) { return 0; }\n"}, "in no known place"),
    ("a second rename(", {"platform/sdl/offscreen.c": "#include <stdio.h>\nint sdl_png(void) { return rename(\"a\", \"b\"); }\n"},
     "rename( is called in src/engine/base/fileio.c (1), src/platform/sdl/offscreen.c (1)"),
    ("no rename( at all", {"engine/base/fileio.c": "int attn_file_write(void) { return 0; }\n"},
     "rename( is called in no file"),
    ("an 81-line function", {"draw/render.c": "void draw_frame(void) { }\n" + long_function("draw_long", 81)},
     "src/draw/render.c:2: draw_long is 81 lines, over 80"),
    ("an 81-line function with a column-0 } in a comment and a { in a string",
     {"app/app.c": "int app_key(void) { return 0; }\n/* a\n} comment */\n"
                   + long_function("step", 81, ["/*", "} not the end", "*/", '    puts("{");', "    x = '}';"])},
     "src/app/app.c:4: step is 81 lines"),
    ("a body no } at column 0 closes", {"lesson/parse.c": "int lesson_parse(void)\n{\n    return 0;\n    }\n"},
     "lesson_parse: no `}` at column 0"),
]


def self_test():
    failed = 0
    for what, change, expect in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            tree = dict(CLEAN)
            tree.update(change)
            write_tree(tmp, tree)
            problems = check(tmp)
            ok = not problems if expect is None else any(expect in p for p in problems)
            print(f"{'ok  ' if ok else 'FAIL'} {what}: {problems[0] if problems else 'clean'}")
            failed += not ok
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--list", action="store_true", help="print each place's exported functions")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not os.path.isdir(os.path.join(a.root, "src")):
        print(f"check_names: no src/ under {a.root}", file=sys.stderr)
        return 2
    if a.list:
        defs, _, _ = scan(a.root)
        for rel in sorted(defs):
            for name, static in defs[rel]:
                if not static:
                    print(f"{place(rel) or 'src/'}\tsrc/{rel}\t{name}")
        return 0
    problems = check(a.root)
    for p in problems:
        print(p)
    if problems:
        print(f"check_names: {len(problems)} problem(s)")
        return 1
    print(f"check_names: each place's names carry its prefix, no prefix in two places, one rename( caller, "
          f"no function over {MAX_FUNCTION_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
