#!/usr/bin/env python3
"""Memory that is accounted for (issue 13): under `ulimit -v` (RLIMIT_AS) each
command either runs to the end or is refused up front, in one line naming its
estimate and the limit, never failing halfway.

For each command (trace, render, bench, info, render and view of a saved
trace, trace and generate with a shipped model), sized so that its estimate is
large beside the process's baseline:

  1. its estimate E: from its refusal under a tiny --memory-gib (a trace), or
     the file's size (a saved trace, which is mapped);
  2. a probe under a limit far too small: the refusal says what the limit
     leaves after what the process has mapped and what it keeps back, so the
     limit T it asks for is E + mapped + reserved;
  3. just above T (a few per cent): the command must succeed, its output
     written (a second check that refuses, e.g. a file mapped twice, gives a
     new T and another try); its peak address space, read from /proc while it
     runs, must be below the limit and not far below T (the accounting is
     not wildly careful);
  4. just below T, and (for a large E) just below E itself: the command must
     exit non-zero within seconds, with one line that names the estimate and
     `ulimit -v`, no signal, no "out of memory", no output file left.

The window (`view`) is driven on a private Xvfb display and skipped without
Xvfb and xdotool; the model commands are skipped without the shipped models.
Exits 77 (skipped) where RLIMIT_AS or /proc cannot be used or there is not
enough free memory. Standard library only."""
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check  # noqa: E402

ap = common.parser()
ap.add_argument("--models", default=common.MODELS)
ap.add_argument("-v", "--verbose", action="store_true", help="print each command's figures")
ARGS = common.parse(ap)
ATTNLAB = os.path.abspath(ARGS.attnlab)
STARTED = time.monotonic()
MIB = 1 << 20
GIB = 1 << 30
common.say_ok = ARGS.verbose
FIGURES = []  # one line per command: estimate, T, peak
JUDGED = []  # the commands whose peak was read and judged


def skip(why):
    print(f"skipped: {why}")
    sys.exit(77)


if not sys.platform.startswith("linux") or not os.path.exists("/proc/self/statm"):
    skip("needs Linux's /proc")
if b"libasan" in subprocess.run(["ldd", ATTNLAB], capture_output=True).stdout:
    skip("AddressSanitizer reserves terabytes of shadow address space: a build with it cannot run under ulimit -v")
_, hard = resource.getrlimit(resource.RLIMIT_AS)
if hard != resource.RLIM_INFINITY and hard < 6 * GIB:
    skip(f"this process already runs under an address-space limit of {hard / GIB:.1f} GiB")
avail = 0
with open("/proc/meminfo") as f:
    for line in f:
        if line.startswith("MemAvailable:"):
            avail = int(line.split()[1]) * 1024
if avail < 3 * GIB:
    skip(f"needs 3 GiB of free memory, {avail / GIB:.1f} GiB available")

TMP = common.temp_folder("attnlab-ulimit-")
# Two compute threads whatever the machine, so that the figures below are this test's,
# not the machine's (one case runs with four).
ENV = dict(os.environ, LC_ALL="C.UTF-8", LANGUAGE="en", SDL_AUDIODRIVER="dummy", OMP_NUM_THREADS="2")


def finish():
    if common.failed or ARGS.verbose:
        for line in FIGURES:
            print(line)
    common.finish(STARTED)


# ---- sizes in messages ("785 MiB", "1.23 GiB") -----------------------------------

SIZE = r"([\d.]+) (bytes|KiB|MiB|GiB)"
UNIT = {"bytes": 1, "KiB": 1 << 10, "MiB": MIB, "GiB": GIB}


def size_of(m, i=1):
    return float(m.group(i)) * UNIT[m.group(i + 1)]


LIMIT = re.compile(r"the " + SIZE + r" that the address-space limit \(ulimit -v " + SIZE + r"\) leaves after " +
                   SIZE + r" mapped and " + SIZE + r" reserved")


def estimate_in(text):
    """The estimate a refusal names, in bytes: "about X" (bench: "two traces of about X each")."""
    m = re.search(r"about " + SIZE, text)
    if not m:
        return None
    return size_of(m) * (2 if "two traces of about" in text else 1)


def asks_for(text, lean=False):
    """The limit a refusal under `ulimit -v` asks for: the estimate, what was mapped and what is
    kept back. lean: for a model's trace with one layer's attention weights (None if not said)."""
    m, need = LIMIT.search(text), estimate_in(text)
    if lean:
        one = re.search(r"and " + SIZE + r" even with one layer's attention weights", text)
        need = size_of(one) if one else None
    if not m or need is None:
        return None
    return need + size_of(m, 5) + size_of(m, 7)


# ---- running under a limit ---------------------------------------------------------

class Run:
    def __init__(self, rc, err, seconds, peak):
        self.rc, self.err, self.seconds, self.peak = rc, err, seconds, peak


def vm_peak(pid):
    """VmPeak of attnlab's process (0 before it has exec'd, or once it has gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            lines = f.read().splitlines()
        if lines[0].split()[1] != "attnlab":  # still this script's fork
            return 0
        for line in lines:
            if line.startswith("VmPeak:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError):
        pass
    return 0


def run(args, limit, timeout=60, env=None, window=None, use=None):
    """attnlab args under RLIMIT_AS = limit (None: unlimited), its peak address space
    read from /proc while it runs. window: once it shows one (a callable that says so),
    use() is called (keys sent to it), then it is closed with SIGTERM, as a person closes it."""
    def pre():
        os.setpgrp()
        if limit:
            resource.setrlimit(resource.RLIMIT_AS, (int(limit), int(limit)))
    t0 = time.monotonic()
    errf = tempfile.TemporaryFile(dir=TMP)
    p = subprocess.Popen([ATTNLAB, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf,
                         env=env or ENV, cwd=TMP, preexec_fn=pre)
    peak, shown, rc = 0, None, None
    while True:
        rc = p.poll()
        if rc is not None:
            break
        peak = max(peak, vm_peak(p.pid))
        if time.monotonic() - t0 > timeout:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            rc = "timeout"
            break
        if window and shown is None and window():
            shown = time.monotonic()
            if use:  # used as a person would, under the same limit
                use()
        if shown and time.monotonic() - shown > (4.0 if use else 1.0):  # time to draw, then closed
            peak = max(peak, vm_peak(p.pid))
            p.send_signal(signal.SIGTERM)
            shown = float("inf")
        time.sleep(0.001 if time.monotonic() - t0 < 0.2 else 0.005)
    errf.seek(0)
    return Run(rc, errf.read().decode(errors="replace"), time.monotonic() - t0, peak)


def margin(t):
    return max(32 * MIB, 0.03 * t)


def refused(name, r, estimate, out):
    """A refusal as the issue asks: quick, one line naming the estimate and the limit, nothing left behind."""
    text = r.err.strip()
    said = estimate_in(text)
    ok = (isinstance(r.rc, int) and r.rc > 0 and r.seconds < 15 and "\n" not in text and text.startswith("attnlab")
          and "ulimit -v" in text and "out of memory" not in text and said is not None
          and abs(said - estimate) <= max(0.01 * estimate, 1 * MIB) and not (out and os.path.exists(out)))
    return check(name, ok, f"exit {r.rc} after {r.seconds:.1f} s, stderr {r.err!r}, estimate {estimate / MIB:.0f} MiB, "
                           f"output left: {bool(out and os.path.exists(out))}")


def case(name, args, out=None, estimate=None, window=None, env=None, succeeded=None, use=None, tiny="0.00001"):
    """One command: its estimate, the limit it asks for, then runs just above and below it.
    tiny: the --memory-gib that refuses its trace (a picture over it alone is refused first)."""
    def clean():
        if out and os.path.exists(out):
            os.remove(out)
    if estimate is None:  # a tiny budget: the refusal names the estimate
        clean()
        r = run(args + ["--memory-gib", tiny], None, 30, env)
        estimate = estimate_in(r.err)
        if not check(f"{name}: estimate", r.rc == 2 and estimate, f"exit {r.rc}, stderr {r.err!r}"):
            return
    # too small a limit for this command, enough for the process to start (half the estimate: a
    # model's trace too long for the limit may still fit with one layer's attention weights)
    clean()
    probe = START + estimate / 2 + 16 * MIB
    r = run(args, probe, 30, env)
    ask, lean = asks_for(r.err), asks_for(r.err, lean=True)
    if not refused(f"{name}: probe under {probe / MIB:.0f} MiB", r, estimate, out) or not ask:
        return
    for attempt in range(3):  # each later check refused gives the limit it asks for
        above = ask + margin(ask)
        clean()
        r = run(args, above, 90, env, window, use)
        later = asks_for(r.err) if r.rc not in (0, "timeout") else None
        if later and later > ask:
            ask = later
            continue
        ok = r.rc == 0 and (not out or (os.path.exists(out) and os.path.getsize(out) > 0))
        check(f"{name}: succeeds under {above / MIB:.0f} MiB (it asks for {ask / MIB:.0f} MiB)", ok,
              f"exit {r.rc} after {r.seconds:.1f} s, stderr {r.err!r}")
        if ok and succeeded:
            succeeded()
        # the accounting is careful, not wildly so: what the command asks for is near what it maps
        # (a command whose peak the polling missed - under the estimate itself, on a busy machine -
        # is not judged)
        if ok and r.peak and r.peak >= estimate:
            JUDGED.append(name)
            check(f"{name}: asks for {ask / MIB:.0f} MiB, peak {r.peak / MIB:.0f} MiB", r.peak <= above and
                  ask <= 1.25 * r.peak + 128 * MIB, "the peak must lie below the limit, and not far below what is asked")
        FIGURES.append(f"{name}: estimate {estimate / MIB:.0f} MiB, asks for {ask / MIB:.0f} MiB, "
                       f"peak {r.peak / MIB:.0f} MiB (peak - estimate: {(r.peak - estimate) / MIB:.0f} MiB), "
                       f"{r.seconds:.1f} s")
        break
    else:
        check(f"{name}: succeeds", False, f"still refused after 3 limits: {r.err!r}")
    below = ask - margin(ask)
    if lean and lean + margin(lean) < below:  # a model's trace: between the two, one layer's attention weights
        clean()
        r = run(args, below, 90, env)
        info = subprocess.run([ATTNLAB, "info", out], capture_output=True, env=env).stdout.decode() if out else ""
        check(f"{name}: one layer's attention weights under {below / MIB:.0f} MiB", r.rc == 0 and
              (not out or "only, of" in info), f"exit {r.rc}, stderr {r.err!r}, info {info[-300:]!r}")
        below = lean - margin(lean)
    clean()
    refused(f"{name}: refused under {below / MIB:.0f} MiB", run(args, below, 30, env), estimate, out)
    if estimate > 512 * MIB:  # below the estimate itself (still above what the process needs to start)
        clean()
        refused(f"{name}: refused under {(estimate - 32 * MIB) / MIB:.0f} MiB",
                run(args, estimate - 32 * MIB, 30, env), estimate, out)
    clean()


# ---- the commands ------------------------------------------------------------------

# What the process maps before it computes anything (its libraries; OpenBLAS is opened at
# the first product, when there is room for it), as `info` reports it under a limit.
TINY = os.path.join(TMP, "tiny.safetensors")
r = subprocess.run([ATTNLAB, "trace", "--seq", "4", "-o", TINY], capture_output=True, env=ENV)
r = subprocess.run([ATTNLAB, "info", TINY], capture_output=True, env=ENV,
                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (64 * GIB, 64 * GIB)))
m = re.search(r"after " + SIZE + r" mapped", r.stdout.decode())
check("info shows the address-space limit", m and "ulimit -v 64.00 GiB" in r.stdout.decode(),
      f"exit {r.returncode}, stdout {r.stdout[-600:]!r}, stderr {r.stderr!r}")
START = size_of(m) if m else 512 * MIB  # (carry on, to show what else fails)

# ---- a very low limit (issue 21): every command starts, and runs or says in one line what it cannot ----
# OpenBLAS, linked, mapped a 128 MiB buffer for each thread while it loaded, before main, and
# retried forever when it could not: under `ulimit -v 300000` even `attnlab --help` hung.
LOW = 300000 * 1024
LOW_PNG = os.path.join(TMP, "low.png")
LOW_TRACE = os.path.join(TMP, "low.safetensors")
LOW_CASES = [("--help", ["--help"], None), ("info", ["info", TINY], None),
             ("trace", ["trace", "--seq", "8", "-o", LOW_TRACE], LOW_TRACE),
             ("render", ["render", "--seq", "8", "-o", LOW_PNG], LOW_PNG)]


def works(args, out, limit):
    if out and os.path.exists(out):
        os.remove(out)
    r = run(args, limit, timeout=20)
    return r, r.rc == 0 and (not out or (os.path.exists(out) and os.path.getsize(out) > 0))


lowest = {}
for name, args, out in LOW_CASES:
    r, ok = works(args, out, LOW)
    if not check(f"{name} under ulimit -v 300000", ok, f"exit {r.rc} after {r.seconds:.1f} s, stderr {r.err!r}"):
        continue
    lo, hi = 4 * MIB, LOW  # the lowest limit it works under, to 2 MiB (fails at lo, works at hi)
    while hi - lo > 2 * MIB:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if works(args, out, mid)[1] else (mid, hi)
    lowest[name] = hi
    FIGURES.append(f"{name}: works under ulimit -v {hi // 1024} ({hi / MIB:.0f} MiB), not under {lo // 1024}")
# below its lowest, a command that computes says why in one line, at once: it is refused, not hung
# or killed (a limit below what the program itself needs, --help's lowest, is not judged)
for name, args, out in LOW_CASES:
    if name in ("trace", "render") and name in lowest and lowest[name] - 4 * MIB > lowest.get("--help", LOW):
        r, ok = works(args, out, lowest[name] - 4 * MIB)
        text = r.err.strip()
        check(f"{name} under {(lowest[name] - 4 * MIB) // 1024} KiB: refused in one line", not ok and r.rc == 2 and
              r.seconds < 15 and "\n" not in text and "ulimit -v" in text, f"exit {r.rc}, stderr {r.err!r}")

BIG = ["--seq", "1024", "--heads", "48", "--d-model", "192"]  # about 600 MiB a trace
SAVED = os.path.join(TMP, "big.safetensors")
PNG = os.path.join(TMP, "big.png")

case("trace", ["trace", *BIG, "-o", SAVED], SAVED, succeeded=lambda: os.replace(SAVED, SAVED + ".keep"))
if os.path.exists(SAVED + ".keep"):
    os.replace(SAVED + ".keep", SAVED)
OTHER = os.path.join(TMP, "other.safetensors")
case("trace, 4 threads", ["trace", *BIG, "-o", OTHER], OTHER, env=dict(ENV, OMP_NUM_THREADS="4"))
# the picture counts against --memory-gib too (16 and 183 MiB): a limit above it, below the trace
case("render", ["render", *BIG, "-o", PNG], PNG, tiny="0.2")
case("render, 4000 x 3000", ["render", *BIG, "--size", "4000x3000", "-o", PNG], PNG, tiny="0.2")
case("bench", ["bench", "--seq", "768", "--heads", "48", "--d-model", "192", "--repeat", "1"])

if os.path.exists(SAVED):
    size = os.path.getsize(SAVED)
    case("info FILE", ["info", SAVED], estimate=size)
    case("render FILE", ["render", SAVED, "-o", PNG], PNG, estimate=size)
    if shutil.which("Xvfb") and shutil.which("xdotool"):
        rfd, wfd = os.pipe()
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(wfd), "-screen", "0", "1600x1000x24", "-nolisten", "tcp", "-noreset"],
                                pass_fds=(wfd,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        os.close(wfd)
        text, end = b"", time.monotonic() + 20
        while b"\n" not in text and time.monotonic() < end and xvfb.poll() is None:
            if select.select([rfd], [], [], 0.2)[0]:
                chunk = os.read(rfd, 64)
                if not chunk:
                    break
                text += chunk
        os.close(rfd)
        if text.strip().isdigit():
            xenv = {k: v for k, v in ENV.items() if k not in ("WAYLAND_DISPLAY", "XAUTHORITY")}
            xenv.update(DISPLAY=":" + text.strip().decode(), SDL_VIDEODRIVER="x11")

            def shown():
                r = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "^attnlab$"], env=xenv,
                                   capture_output=True, timeout=5)
                return r.returncode == 0 and r.stdout.strip()
            def use():  # the lesson picker, the model picker, the grid: their readers and job thread
                wid = shown().split()[0].decode()
                for key in ["l", "Escape", "o", "Escape", "g"]:
                    subprocess.run(["xdotool", "key", "--window", wid, key], env=xenv, capture_output=True, timeout=5)
                    time.sleep(0.5)
            case("view FILE", ["view", SAVED], estimate=size, window=shown, env=xenv, use=use)
        else:
            check("Xvfb starts", False, "no display number from Xvfb -displayfd")
        xvfb.terminate()
        xvfb.wait(10)
    else:
        print("view FILE: skipped (needs Xvfb and xdotool)")
    os.remove(SAVED)
else:
    check("a saved trace for info, render and view", False, "the trace case wrote none")

# the peaks are read from /proc by the process's name: attnlab runs itself again at start (main.c),
# and a process named "exe" (run again through /proc/self/exe) would leave every peak unjudged
check("peaks read and judged", {"trace", "render", "bench", "render FILE"} <= set(JUDGED), f"judged: {JUDGED}")

if os.path.isdir(os.path.join(ARGS.models, "tang")):
    env = dict(ENV, ATTNLAB_MODELS=os.path.abspath(ARGS.models))
    with open(os.path.join(ARGS.models, "tang", "example.txt"), encoding="utf-8") as f:
        line = f.readline().strip()
    rows = "|".join([line * 4] * 64)  # 64 rows of the model's whole context: about 600 MiB
    case("trace --model", ["trace", "--model", "tang", "--text", rows, "-o", OTHER], OTHER, env=env)
    # generate traces nothing (issue 25): its prefill is refused up front under a tiny budget, but
    # what it takes (the KV cache and one chunk's activations, under 1 MiB here) is smaller than the
    # model's weights, mapped first, so those are what an address-space limit refuses
    gen = ["generate", "--model", "tang", "--text", line, "--max-new", "8"]
    r = run(gen + ["--memory-gib", "0.00001"], None, 30, env)
    check("generate --model: its prefill refused under a tiny --memory-gib", r.rc == 2 and estimate_in(r.err) and
          "this prefill" in r.err and "\n" not in r.err.strip(), f"exit {r.rc}, stderr {r.err!r}")
    case("generate --model", gen, estimate=os.path.getsize(os.path.join(ARGS.models, "tang", "model.safetensors")),
         env=env)
else:
    print("trace and generate --model: skipped (no assets/models/tang)")

finish()
