#!/usr/bin/env python3
"""check_includes.py: the #include graph of src/ has no circles and keeps its layers.

Reads every `#include "..."` and `#include <...>` line of the .c and .h files
under src/, resolves the quoted ones to files (the including file's folder
first, then src/ and its module folders, as CMake's include paths do) and fails
(exit 1) when

  - files include each other in a circle (a.h -> b.h -> a.h);
  - modules do: a module is a folder's foo.c + foo.h, and foo.c including
    bar.h while bar.c includes foo.h is a circle even though no file is in one;
  - an engine file includes a header of an engine folder that comes after
    its own in ENGINE_FOLDERS (base <- tokenizer <- trace <- formats <-
    attention <- model <- run), or lies outside those folders;
  - a layer above the engine includes one of its internal headers
    (ENGINE_INTERNAL: BLAS, kernels' size checks, the thread team, the head,
    the tokenizer's inside) instead of a public one;
  - an engine header is included by its bare name from another folder (it
    is named by its path from src/: "engine/trace/trace.h"; a file of the
    engine's own folder may use the bare name);
  - a file under src/engine/ or src/lesson/ reaches a window or interface
    library: SDL, fontconfig or libintl, included directly or through a header
    of src/; or one under src/app/ or src/draw/ (the app core and the command
    list, which every backend shares) reaches SDL, fontconfig or cairo, or
    includes <pthread.h> itself (work away from the frame is the platform's
    job service's, jobs.h);
  - a folder includes a folder above it
    (engine <- lesson <- app <- draw <- platform <- cli);
  - a quoted include names no file under src/.

`--self-test` builds small synthetic trees in a temporary folder and checks
that each kind of problem is found (and that a clean tree passes).

Usage: python3 tests/check_includes.py [--root DIR] [--self-test]
Exit 0 clean, 1 problems found, 2 cannot run.
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import selftest  # noqa: E402  (the self-test runner check_calls.py shares)
from selftest import write_tree  # noqa: E402

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
# folders searched for a quoted include after the includer's own (CMake's include paths)
SEARCH = ["", "lesson", "app", "draw", "platform/paint", "platform/sdl", "platform/export", "platform/posix",
          "platform/web"]
# the engine's folders in order: each may include its own and the ones before it
ENGINE_FOLDERS = ["base", "tokenizer", "trace", "formats", "attention", "model", "run"]
# engine headers that only the engine includes: kernels, BLAS, size checks and
# the tokenizer's inside; the layers above use the public headers built on them
ENGINE_INTERNAL = {"engine/base/blas.h", "engine/base/checked.h", "engine/base/team.h", "engine/model/head.h",
                   "engine/tokenizer/tokenizer_impl.h"}
# folders in layers: each may include its own and the ones before it
LAYERS = ["engine", "lesson", "app", "draw", "platform", "cli"]
# libraries the engine and the lessons must never reach (pure C, no window, no gettext)
FORBIDDEN = re.compile(r"^(SDL2?/|SDL[_.]|fontconfig/|libintl\.h$)")
PURE = ("engine", "lesson")
# libraries the app core and the command list must never reach: the backends' (src/platform/*)
BACKEND = re.compile(r"^(SDL2?/|SDL[_.]|fontconfig/|cairo)")
# nor start threads themselves (the engine may, behind its own calls)
THREADS = re.compile(r"^(pthread|threads)\.h$")
WINDOWLESS = ("app", "draw")
# Module circles known and being removed: skipped only while their modules are
# exactly these (a third module joining makes it fail again). None left.
KNOWN_MODULE_CIRCLES = {}


def source_files(root):
    """(rel, path) of every .c/.h under root/src, rel with / and from src/ ("app/app.c")."""
    src = os.path.join(root, "src")
    for dirpath, _, names in os.walk(src):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                path = os.path.join(dirpath, n)
                yield os.path.relpath(path, src).replace(os.sep, "/"), path


def scan(root):
    """{relpath: [(kind, name, line)]} for every .c/.h under root/src."""
    files = {}
    for rel, path in source_files(root):
        incs = []
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if m:
                    incs.append(("local" if m.group(1) == '"' else "system", m.group(2), lineno))
        files[rel] = incs
    return files


def resolve(files, rel, name):
    here = os.path.dirname(rel)
    for base in [here] + SEARCH:
        cand = os.path.normpath(os.path.join(base, name)).replace(os.sep, "/")
        if cand in files:
            return cand
    return None


def folder(rel):
    return rel.split("/")[0] if "/" in rel else ""


def engine_folder(rel):
    """"trace" for engine/trace/trace.h; "" for a file directly in engine/."""
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 else ""


def module(rel):
    return os.path.splitext(rel)[0]


def find_cycles(graph):
    """Strongly connected components with more than one node (or a self-loop): (nodes, one circle path)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def strong(v):  # iterative Tarjan, so deep trees cannot overflow Python's stack
        work = [(v, iter(sorted(graph.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1 or node in graph.get(node, ()):
                    out.append((frozenset(comp), circle_path(graph, set(comp))))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def circle_path(graph, comp):
    """One concrete circle through a component: start -> ... -> start."""
    start = min(comp)
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w in comp and w not in prev:
                prev[w] = v
                queue.append(w)
    return [start, start]


def reach(graph, v):
    seen, todo = set(), [v]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def check(root, known=KNOWN_MODULE_CIRCLES):
    files = scan(root)
    problems, notes = [], []
    engine_headers = {os.path.basename(r): r for r in files if r.startswith("engine/") and r.endswith(".h")}
    fgraph, mgraph = {}, {}
    for rel, incs in files.items():
        fgraph.setdefault(rel, set())
        mgraph.setdefault(module(rel), set())
        for kind, name, line in incs:
            if kind == "system":
                continue
            target = resolve(files, rel, name)
            if target is None and "/" not in name and name in engine_headers:
                problems.append(f"src/{rel}:{line}: #include \"{name}\": an engine header is named by its path, "
                                f"\"{engine_headers[name]}\"")
                continue
            if target is None:
                if not os.path.isabs(name):
                    problems.append(f"src/{rel}:{line}: #include \"{name}\" names no file under src/")
                continue
            fgraph[rel].add(target)
            if module(target) != module(rel):
                mgraph[module(rel)].add(module(target))
            lf, lt = folder(rel), folder(target)
            if lt == "engine" and lf != "engine" and target in ENGINE_INTERNAL:
                problems.append(f"src/{rel}:{line}: {name} is the engine's own; the layers above reach the "
                                "engine through its public headers")
            if lf in LAYERS and lt in LAYERS and LAYERS.index(lt) > LAYERS.index(lf):
                problems.append(f"src/{rel}:{line}: {lf}/ includes {name} from {lt}/, a layer above it")

    for _, circle in find_cycles(fgraph):
        problems.append("file include circle: " + " -> ".join("src/" + c for c in circle))
    for comp, circle in find_cycles(mgraph):
        text = "module circle: " + " -> ".join(circle)
        if comp in known:
            notes.append(f"skipped ({known[comp]}): {text}")
        else:
            problems.append(text)

    # the engine's folders, in order
    order = " <- ".join(ENGINE_FOLDERS)
    for rel in sorted(files):
        if folder(rel) != "engine":
            continue
        own = engine_folder(rel)
        if own not in ENGINE_FOLDERS:
            problems.append(f"src/{rel}: outside the engine's folders ({', '.join(ENGINE_FOLDERS)})")
            continue
        for kind, name, line in files[rel]:
            target = resolve(files, rel, name) if kind == "local" else None
            their = engine_folder(target) if target and folder(target) == "engine" else None
            if their in ENGINE_FOLDERS and ENGINE_FOLDERS.index(their) > ENGINE_FOLDERS.index(own):
                problems.append(f"src/{rel}:{line}: engine order: {own}/ includes {name} from {their}/, "
                                f"which comes after it ({order})")

    # no window or gettext library below the interface, and no backend's
    # library in the app core or the command list, not even through a header
    for rel, incs in sorted(files.items()):
        rule = (FORBIDDEN, "SDL, fontconfig or libintl") if folder(rel) in PURE else \
               (BACKEND, "SDL, fontconfig or cairo") if folder(rel) in WINDOWLESS else None
        if not rule:
            continue
        for via in [rel] + sorted(reach(fgraph, rel)):
            for kind, name, line in files[via]:
                if rule[0].match(name):
                    how = "" if via == rel else f" through src/{via}:{line}"
                    problems.append(f"src/{rel}: reaches <{name}>{how}; {folder(rel)}/ must not use {rule[1]}")
        if folder(rel) in WINDOWLESS:
            for kind, name, line in incs:
                if kind == "system" and THREADS.match(name):
                    problems.append(f"src/{rel}:{line}: <{name}>: {folder(rel)}/ starts no thread; "
                                    "the platform's job service runs its work (jobs.h)")
    return problems, notes


# ---- self-test ------------------------------------------------------------------

CLEAN = {
    "engine/base/error.h": "#include <stdint.h>\n",
    "engine/trace/stages.h": "#include <stdint.h>\n",
    "engine/trace/stages.c": '#include "stages.h"\n',
    "engine/trace/config.h": '#include "stages.h"\n#include "engine/base/error.h"\n',
    "engine/trace/config.c": '#include "config.h"\n#include <string.h>\n',
    "engine/trace/trace.h": '#include "config.h"\n',
    "engine/trace/trace.c": '#include "trace.h"\n',
    "engine/run/forward.h": '#include "engine/trace/trace.h"\n',
    "lesson/quiz.c": '#include "engine/trace/trace.h"\n',
    "app/app.h": '#include "engine/trace/trace.h"\n',
    "app/app.c": '#include "app.h"\n#include <libintl.h>\n',
    "draw/render.h": '#include "app.h"\n',
    "platform/sdl/window.c": '#include "render.h"\n#include <SDL.h>\n#include <cairo.h>\n',
}

CASES = [
    ("a clean tree", {}, None),
    ("a file circle", {"engine/trace/trace.h": '#include "config.h"\n#include "trace_io.h"\n',
                       "engine/trace/trace_io.h": '#include "trace.h"\n'}, "file include circle"),
    ("a module circle", {"engine/trace/stages.c": '#include "stages.h"\n#include "trace.h"\n'}, "module circle"),
    ("the engine order", {"engine/trace/stages.h": '#include "engine/run/forward.h"\n',
                          "engine/run/forward.h": "\n"},
     "engine order: trace/ includes engine/run/forward.h from run/, which comes after it"),
    ("an engine file outside its folders", {"engine/loose.c": '#include "engine/trace/trace.h"\n'},
     "outside the engine's folders"),
    ("an engine header by its bare name", {"lesson/quiz.c": '#include "trace.h"\n'},
     'an engine header is named by its path, "engine/trace/trace.h"'),
    ("another engine folder's header by its bare name", {"engine/run/forward.h": '#include "trace.h"\n'},
     "an engine header is named by its path"),
    ("SDL in the engine", {"engine/trace/trace.c": '#include "trace.h"\n#include <SDL.h>\n'}, "must not use SDL"),
    ("SDL2/ in a lesson", {"lesson/quiz.c": '#include <SDL2/SDL_ttf.h>\n'}, "must not use SDL"),
    ("fontconfig in a lesson", {"lesson/quiz.c": '#include <fontconfig/fontconfig.h>\n'}, "must not use SDL"),
    ("libintl through a header", {"engine/trace/config.h": '#include "stages.h"\n#include "intl.h"\n',
                                  "engine/trace/intl.h": '#include <libintl.h>\n'},
     "through src/engine/trace/intl.h"),
    ("a layer upside down", {"engine/trace/trace.c": '#include "trace.h"\n#include "app.h"\n'}, "a layer above it"),
    ("the app core drawing", {"app/app.c": '#include "app.h"\n#include "render.h"\n'}, "a layer above it"),
    ("SDL in the app core", {"app/app.h": '#include "engine/trace/trace.h"\n#include <SDL.h>\n'}, "app/ must not use SDL"),
    ("cairo in the command list", {"draw/render.h": '#include "app.h"\n#include <cairo.h>\n'},
     "draw/ must not use SDL, fontconfig or cairo"),
    ("a thread in the app core", {"app/app.c": '#include "app.h"\n#include <pthread.h>\n'}, "app/ starts no thread"),
    ("an engine-internal header from above", {"engine/base/blas.h": "\n",
                                              "app/app.c": '#include "app.h"\n#include "engine/base/blas.h"\n'},
     "is the engine's own"),
    ("an unknown header", {"engine/trace/trace.c": '#include "nothere.h"\n'}, "names no file"),
]


def known_circle_test():
    """A known circle is skipped only while it has exactly its known modules."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = dict(CLEAN)
        tree.update({"app/player.h": "\n", "app/player.c": '#include "player.h"\n#include "app.h"\n',
                     "app/app.c": '#include "app.h"\n#include "player.h"\n'})
        write_tree(tmp, tree)
        pair = frozenset({"app/app", "app/player"})
        p_skip, n_skip = check(tmp, known={pair: "someone"})
        p_all, _ = check(tmp, known={})
        tree.update({"app/render.h": '#include "app.h"\n', "app/player.c": '#include "player.h"\n#include "render.h"\n',
                     "app/app.c": '#include "app.h"\n#include "player.h"\n'})
        write_tree(tmp, tree)
        p_grown, _ = check(tmp, known={pair: "someone"})
        ok = not p_skip and n_skip and p_all and p_grown
    return selftest.report("a known circle is skipped only with exactly its modules", bool(ok))


def self_test():
    cases = [(what, {**CLEAN, **change}, expect) for what, change, expect in CASES]
    return selftest.run(cases, lambda tmp: check(tmp, known={})[0], more=[known_circle_test])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not os.path.isdir(os.path.join(a.root, "src")):
        print(f"check_includes: no src/ under {a.root}", file=sys.stderr)
        return 2
    problems, notes = check(a.root)
    for n in notes:
        print(n)
    for p in problems:
        print(p)
    if problems:
        print(f"check_includes: {len(problems)} problem(s)")
        return 1
    print("check_includes: no circles; the engine's line and the layers hold")
    return 0


if __name__ == "__main__":
    sys.exit(main())
