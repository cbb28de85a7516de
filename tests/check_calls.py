#!/usr/bin/env python3
"""check_calls.py: the app core's files call each other top to bottom, never in a circle.

Runs cflow (Debian package cflow) on each .c file of src/app/ alone, so that
a static function stays in its file, and links a call to the file that
defines the function. Fails (exit 1) when

  - a room calls a room above it in ROOMS (app_impl.h draws the same map:
    the loop, input and a command line's picture, actions, the actions'
    parts, the page's downloads before an opening, requests, the state);
  - a file outside ROOMS (player.c, view.c, keys.c, ...: the leaves the
    rooms use) calls into a room;
  - any files of src/app/ call each other in a circle.

A key press then goes input -> action -> state change -> request, and a
recomputation's result comes back only through the loop's install call.

`--self-test` checks small synthetic trees (a call up, a circle among
leaves, a clean tree). Exit 0 clean, 1 problems found, 2 cannot run,
77 cflow is not installed (skipped; scripts/bootstrap.sh installs it).

Usage: python3 tests/check_calls.py [--root DIR] [--self-test]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selftest  # noqa: E402  (the self-test runner check_includes.py shares)
from check_includes import find_cycles  # noqa: E402  (the same circles)

# top to bottom: a file may call only files of the rows below its own (and leaves)
ROOMS = [
    ["app_loop"],
    ["app_input", "app_picture"],
    ["app_actions"],
    ["app_lesson", "app_train", "app_edit", "app_model"],
    ["app_fetch"],
    ["app_job", "app_open"],
    ["app"],
]
RANK = {name: i for i, row in enumerate(ROOMS) for name in row}
LINE = re.compile(r"^(\t*)(\w+)\(\)(?: <.* at [^>]*>)?")
STATIC = re.compile(r"^static\b[^;(=]*?\b(\w+)\s*\(", re.M)


def calls_of(path):
    """[(caller, callee, callee defined in this file)] as cflow sees this file alone."""
    out = subprocess.run(["cflow", "--omit-arguments", "--level-indent=0=\t", path],
                         capture_output=True, text=True, check=True).stdout
    rows, stack = [], []
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        depth, name = len(m.group(1)), m.group(2)
        stack = stack[:depth]
        if stack:
            rows.append((stack[-1], name, " at " in line))
        stack.append(name)
    return rows


def graph(root):
    """{file: {file it calls: [caller -> callee, ...]}} over root/src/app/*.c."""
    folder = os.path.join(root, "src", "app")
    files = sorted(f for f in os.listdir(folder) if f.endswith(".c"))
    calls, defined = {}, {}
    for f in files:
        path = os.path.join(folder, f)
        calls[f] = calls_of(path)
        with open(path, encoding="utf-8") as src:
            static = set(STATIC.findall(src.read()))
        for _, callee, here in calls[f]:
            if here and callee not in static:
                defined.setdefault(callee, f)
        # a function defined here but never called here still counts as defined here
        out = subprocess.run(["cflow", "--omit-arguments", "-d", "1", path], capture_output=True, text=True).stdout
        for m in re.finditer(r"^(\w+)\(\) <.* at ", out, re.M):
            if m.group(1) not in static:
                defined.setdefault(m.group(1), f)
    g = {f: {} for f in files}
    for f in files:
        for caller, callee, here in calls[f]:
            to = defined.get(callee)
            if not here and to and to != f:
                g[f].setdefault(to, []).append(f"{caller} -> {callee}")
    return g


def check(root):
    g = graph(root)
    problems = []
    for f, targets in sorted(g.items()):
        me = RANK.get(f[:-2])
        for to, how in sorted(targets.items()):
            them = RANK.get(to[:-2])
            if them is None:
                continue  # a leaf: anyone may call it
            if me is None:
                problems.append(f"src/app/{f} calls the room {to} ({how[0]}); a leaf calls no room")
            elif them <= me:
                problems.append(f"src/app/{f} calls {to} ({how[0]}), which is not below it in ROOMS")
    for comp, circle in find_cycles({f: set(targets) for f, targets in g.items()}):
        problems.append(f"a circle of calls among {', '.join(sorted(comp))}: one is {' -> '.join(circle)}")
    return problems, g


CASES = [
    ("a clean tree", {"app/app.c": "int app_state_get(void) { return 1; }\n",
                      "app/app_job.c": "int app_state_get(void);\nint app_ask(void) { return app_state_get(); }\n"}, None),
    ("the state calling a request", {"app/app.c": "int app_ask(void);\nint app_state_get(void) { return app_ask(); }\n",
                                     "app/app_job.c": "int app_ask(void) { return 0; }\n"}, "not below it"),
    ("a leaf calling a room", {"app/app.c": "int app_state_get(void) { return 1; }\n",
                               "app/player.c": "int app_state_get(void);\nint app_play(void) { return app_state_get(); }\n"},
     "a leaf calls no room"),
    ("a circle among leaves", {"app/view.c": "int b(void);\nint a(void) { return b(); }\n",
                               "app/keys.c": "int a(void);\nint b(void) { return a(); }\n"}, "a circle of calls"),
    ("static names stay in their file",
     {"app/app.c": "static int start(void) { return 1; }\nint s(void) { return start(); }\n",
      "app/app_job.c": "static int start(void) { return 2; }\nint j(void) { return start(); }\n"}, None),
]


def self_test():
    return selftest.run(CASES, lambda tmp: check(tmp)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--graph", action="store_true", help="print who calls whom, file by file")
    a = ap.parse_args()
    if not shutil.which("cflow"):
        print("check_calls: cflow not found (apt-get install cflow, or scripts/bootstrap.sh): skipped")
        return 77
    if a.self_test:
        return self_test()
    if not os.path.isdir(os.path.join(a.root, "src", "app")):
        print(f"check_calls: no src/app/ under {a.root}", file=sys.stderr)
        return 2
    problems, g = check(a.root)
    if a.graph:
        for f, targets in sorted(g.items()):
            for to, how in sorted(targets.items()):
                print(f"{f} -> {to}: {'; '.join(how)}")
    for p in problems:
        print(p)
    if problems:
        print(f"check_calls: {len(problems)} problem(s)")
        return 1
    print("check_calls: the app core calls top to bottom (loop, input, actions, requests, state), no circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
