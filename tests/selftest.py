"""selftest.py: the --self-test runner of the source checkers (check_includes.py, check_calls.py).

A case is (what, tree, expect): tree maps paths under src/ to their text;
it is written to a temporary folder and checked there. expect None wants
the tree clean, a string wants a problem that contains it. Each case
prints one line, "ok" or "FAIL", its name and the first problem found.
"""
import os
import tempfile


def write_tree(base, tree):
    """Writes tree ({path under src/: text}) under base/src/."""
    for rel, text in tree.items():
        path = os.path.join(base, "src", rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def report(what, ok, detail=None):
    """Prints a check's line and returns ok."""
    print(f"{'ok  ' if ok else 'FAIL'} {what}" + (f": {detail}" if detail is not None else ""))
    return ok


def run(cases, check, more=()):
    """Runs cases through check (a folder -> the list of problems in it), then
    each of more (a function that reports itself and returns True when it
    passes). Returns the exit status: 0 all passed, 1 some failed."""
    failed = 0
    for what, tree, expect in cases:
        with tempfile.TemporaryDirectory() as tmp:
            write_tree(tmp, tree)
            problems = check(tmp)
        ok = not problems if expect is None else any(expect in p for p in problems)
        failed += not report(what, ok, problems[0] if problems else "clean")
    for test in more:
        failed += not test()
    return 1 if failed else 0
