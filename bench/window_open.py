#!/usr/bin/env python3
"""How long a user waits for a big checkpoint in the window (issue 36): from
the command to its first frame, to layer 0 on screen, and to the whole
picture, under Xvfb, round by round, with `bench`'s traced and untraced
passes of the same tokens beside them.

    /usr/bin/python3 bench/window_open.py --model DIR [--tokens 361,512] [--rounds 3]
        [--attnlab build/attnlab]

The times come from the window's title, which the app sets with every frame:
"attnlab - opening NAME" while the notice alone is shown, "... - tracing, K of
L layers ready" while the first layers are shown and the rest traced, the
stage's name alone once the whole trace is in. Polled every 20 ms with xprop,
so each time is good to about 30 ms. The text is the model's own words
repeated (a word a token with the project's test tokenizers). Prints one line
a round and medians with their range; the load average at each round's start.
Needs Xvfb, xprop and xdotool (scripts/bootstrap.sh installs them)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def start_xvfb():
    for n in range(90, 120):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
            return proc, f":{n}"
    sys.exit("window_open: no free display")


def title(env):
    r = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "^attnlab$"], env=env,
                       capture_output=True, text=True)
    ids = r.stdout.split()
    if not ids:
        return None
    r = subprocess.run(["xprop", "-id", ids[0], "WM_NAME"], env=env, capture_output=True, text=True)
    m = re.search(r'= "(.*)"', r.stdout)
    return m.group(1) if m else ""


def one_round(a, env, text):
    t0 = time.monotonic()
    proc = subprocess.Popen([a.attnlab, "--model", a.model, "--text", text], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = layer0 = full = None
    while time.monotonic() - t0 < 600 and proc.poll() is None:
        t = title(env)
        now = (time.monotonic() - t0) * 1000
        if t is not None and first is None:
            first = now
        if t and " - tracing, " in t and layer0 is None:
            layer0 = now
        if t and "layers." in t and " - tracing" not in t:
            full = now
            break
        time.sleep(0.02)
    proc.terminate()
    proc.wait(10)
    return first, layer0 if layer0 is not None else full, full


def bench_ratio(a, text):
    r = subprocess.run([a.attnlab, "bench", "--model", a.model, "--text", text, "--repeat", "3"],
                       capture_output=True, text=True)
    traced = re.search(r"bench: ([\d.]+) ms per traced forward", r.stdout)
    plain = re.search(r"prefill untraced: ([\d.]+) ms", r.stdout)
    return (float(traced.group(1)), float(plain.group(1))) if traced and plain else (None, None)


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return f"{statistics.median(xs):,.0f} ({min(xs):,.0f}–{max(xs):,.0f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--tokens", default="361,512")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--attnlab", default="build/attnlab")
    ap.add_argument("--window-only", action="store_true", help="the window's times alone, not bench's passes")
    a = ap.parse_args()
    a.attnlab = os.path.abspath(a.attnlab)
    xvfb, display = start_xvfb()
    env = dict(os.environ, DISPLAY=display, SDL_VIDEODRIVER="x11", SDL_AUDIODRIVER="dummy",
               XDG_STATE_HOME=tempfile.mkdtemp(prefix="attnlab-window-open-"))
    words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "far", "and", "it"]
    try:
        for n in (int(x) for x in a.tokens.split(",")):
            text = " ".join(words[i % len(words)] for i in range(n - 1))  # and <s>
            rows = []
            for r in range(a.rounds):
                load = os.getloadavg()[0]
                first, layer0, full = one_round(a, env, text)
                print(f"{n} tokens, round {r + 1} (load {load:.2f}): window: first frame {first:.0f} ms, layer 0 "
                      f"{layer0:.0f} ms, whole picture {full:.0f} ms", flush=True)
                if a.window_only:
                    rows.append((first, layer0, full, None, None, None))
                    continue
                traced, plain = bench_ratio(a, text)
                ratio = traced / plain if traced and plain else None
                rows.append((first, layer0, full, traced, plain, ratio))
                print(f"{n} tokens, round {r + 1}: bench traced {traced:.0f} ms, untraced {plain:.0f} ms, "
                      f"{ratio:.2f}× (load {os.getloadavg()[0]:.2f})", flush=True)
            cols = list(zip(*rows))
            ratios = [x for x in cols[5] if x] or [0.0]
            passes = "" if a.window_only else (
                f"; traced {spread(cols[3])} ms, untraced {spread(cols[4])} ms, traced/untraced "
                f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})×")
            print(f"{n} tokens, {a.rounds} rounds: first frame {spread(cols[0])} ms, layer 0 {spread(cols[1])} ms, "
                  f"whole picture {spread(cols[2])} ms{passes}", flush=True)
        print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    finally:
        xvfb.terminate()


if __name__ == "__main__":
    main()
