#!/usr/bin/env python3
"""How attnlab writes its outputs (issue 37): a disk that fills, a link planted
at a temporary's name, the mode of a replaced file and the umask, a signal in
the middle of a write or a render, and an extension no export writes. Every
output goes through one writer (src/engine/fileio.h): what was there stays
whole until the new file replaces it, and nothing half-written is left.
Standard library only."""
import os
import resource
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, one_line, run  # noqa: E402

ARGS = common.parse()
TMP = common.temp_folder("attnlab-writes-")


def fresh(name):
    """An empty folder of its own: what is left in it after a command is what the command left."""
    d = os.path.join(TMP, name)
    os.mkdir(d)
    return d


def read(path):
    with open(path, "rb") as f:
        return f.read()


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def disk_of(limit):
    """A disk that fills after limit bytes of any one file: RLIMIT_FSIZE, with
    SIGXFSZ ignored so that the write fails with EFBIG as it would with ENOSPC."""
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


# ---- 1. a full disk: the export fails in one line, the good file stays, no temporary ----
d = fresh("full")
png = os.path.join(d, "p.png")
r = run(["render", "--seq", "8", "-o", png])
check("render a good PNG", r.returncode == 0, r.stderr)
good = read(png)
for out, extra in (("p.png", ["--heads", "8"]), ("t.safetensors", []), ("p.svg", [])):
    path = os.path.join(d, out)
    if out != "p.png":
        r = run(["render" if out.endswith(".svg") else "trace", "--seq", "8", "-o", path])
        check(f"write a good {out}", r.returncode == 0, r.stderr)
    before = read(path)
    cmd = "trace" if out.endswith(".safetensors") else "render"
    r = run([cmd, "--seq", "8"] + extra + ["-o", path], preexec_fn=disk_of(len(before) // 2))
    check(f"{out} on a full disk: exit 1, one line naming the cause",
          r.returncode == 1 and one_line(r, f"attnlab {cmd}:") and b"File too large" in r.stderr and not r.stdout,
          f"exit {r.returncode}, {r.stdout!r}, {r.stderr!r}")
    check(f"{out} on a full disk: the old file is whole", read(path) == before, f"{len(read(path))} bytes")
check("a full disk leaves no temporary", sorted(os.listdir(d)) == ["p.png", "p.svg", "t.safetensors"],
      os.listdir(d))
check("the good PNG is the first one", read(png) == good)

# ---- 4. a link planted at the PNG's old temporary name (OUT.png.tmp<PID>) is not followed ----
d = fresh("links")
png, victim = os.path.join(d, "p.png"), os.path.join(d, "victim")
with open(victim, "wb") as f:
    f.write(b"precious")


def plant():
    # in the child, before exec: its PID is the command's
    os.symlink(victim, f"{png}.tmp{os.getpid()}")


r = run(["render", "--seq", "8", "-o", png], preexec_fn=plant)
check("render beside a planted link", r.returncode == 0, r.stderr)
check("the link's target is untouched", read(victim) == b"precious", read(victim)[:16])
check("the PNG is a regular file, not the planted link", not os.path.islink(png) and read(png)[:8] == b"\x89PNG\r\n\x1a\n")

# ---- 5. modes: a replaced file keeps its own, a new one gets the umask's ----
d = fresh("modes")
for out, cmd in (("p.png", "render"), ("t.safetensors", "trace"), ("p.svg", "render")):
    path = os.path.join(d, out)
    r = run([cmd, "--seq", "8", "-o", path])
    os.chmod(path, 0o600)
    r = run([cmd, "--seq", "8", "--heads", "8", "-o", path])
    check(f"{cmd} -o {out} over a 0600 file keeps 0600", r.returncode == 0 and mode(path) == 0o600,
          f"exit {r.returncode}, mode {mode(path):o}")
    os.chmod(path, 0o640)
    r = run([cmd, "--seq", "8", "-o", path])
    check(f"{cmd} -o {out} over a 0640 file keeps 0640", r.returncode == 0 and mode(path) == 0o640,
          f"exit {r.returncode}, mode {mode(path):o}")
    new = os.path.join(d, "new-" + out)
    r = run([cmd, "--seq", "8", "-o", new], preexec_fn=lambda: os.umask(0o077))
    check(f"{cmd} -o {out} under umask 077 is 0600", r.returncode == 0 and mode(new) == 0o600,
          f"exit {r.returncode}, mode {mode(new):o}")
    r = run([cmd, "--seq", "8", "-o", os.path.join(d, "022-" + out)], preexec_fn=lambda: os.umask(0o022))
    check(f"{cmd} -o {out} under umask 022 is 0644", r.returncode == 0 and mode(os.path.join(d, "022-" + out)) == 0o644,
          f"exit {r.returncode}")


# ---- 6. SIGINT or SIGTERM in the middle of `trace -o`: it dies of the signal, the temporary goes ----
def stopped(pid):
    """Whether every thread of pid is stopped (state T in /proc), None if it cannot be told."""
    try:
        states = [open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()[0]
                  for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return None
    return all(st in "Tt" for st in states)


def interrupted(args, d, sig, tries=5):
    """Runs args and sends sig as soon as a temporary appears in d. Returns
    (returncode, seconds from the signal to the end), or None if every try
    finished before its temporary was seen."""
    for _ in range(tries):
        p = subprocess.Popen([ARGS.attnlab] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while p.poll() is None and not any(".tmp" in n for n in os.listdir(d)):
            time.sleep(0.001)
        if p.poll() is not None:
            continue
        # stopped, then looked at again: a temporary still there has not been
        # renamed yet, so the signal lands in the middle of the write however
        # slow this machine is
        p.send_signal(signal.SIGSTOP)
        stopped_by = time.monotonic() + 10  # SIGSTOP is asynchronous: look once it has taken hold
        while stopped(p.pid) is False and time.monotonic() < stopped_by:
            time.sleep(0.001)
        if not any(".tmp" in n for n in os.listdir(d)):
            p.send_signal(signal.SIGCONT)
            p.wait(timeout=60)
            continue
        p.send_signal(sig)
        p.send_signal(signal.SIGCONT)
        t = time.monotonic()
        p.wait(timeout=60)
        return p.returncode, time.monotonic() - t
    return None


d = fresh("signals")
out = os.path.join(d, "t.safetensors")
r = run(["trace", "--seq", "8", "-o", out])
small = read(out)
for sig in (signal.SIGINT, signal.SIGTERM):
    got = interrupted(["trace", "--seq", "1024", "--heads", "8", "-o", out], d, sig)
    name = f"trace -o interrupted by {signal.Signals(sig).name}"
    check(f"{name}: the temporary was seen", got is not None)
    if got:
        check(f"{name}: dies of the signal", got[0] in (-sig, 128 + sig), got)
        check(f"{name}: no temporary left", os.listdir(d) == ["t.safetensors"], os.listdir(d))
        check(f"{name}: the old trace is whole", read(out) == small)

# ---- 23. render stops at SIGINT or SIGTERM: no file, exit by the signal ----
d = fresh("render-signals")
png = os.path.join(d, "big.png")
for sig in (signal.SIGINT, signal.SIGTERM):
    p = subprocess.Popen([ARGS.attnlab, "render", "--seq", "64", "--size", "4000x3000", "--scale", "2", "-o", png],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(0.5)
    running = p.poll() is None
    p.send_signal(sig)
    t = time.monotonic()
    stdout, stderr = p.communicate(timeout=120)
    took = time.monotonic() - t
    name = f"render interrupted by {signal.Signals(sig).name}"
    check(f"{name}: still running when signalled", running)
    # by the signal, not run to its end (a loaded machine may take its time to deliver it)
    check(f"{name}: ends by the signal", p.returncode in (-sig, 128 + sig) and took < 10.0,
          f"exit {p.returncode} after {took:.2f} s, {stdout!r}, {stderr!r}")
    check(f"{name}: nothing written", os.listdir(d) == [], os.listdir(d))

# ---- 20. an extension no export writes is refused before anything is computed ----
d = fresh("extensions")
for name in ("x.jpg", "x.json", "x", "x.png.bak", os.path.join("sub.d", "x")):
    path = os.path.join(d, name)
    r = run(["render", "--seq", "8", "-o", path])
    check(f"render -o {name}: exit 2, one line", r.returncode == 2 and one_line(r, "attnlab render:")
          and b".png, .svg, .pdf or .csv" in r.stderr and not r.stdout, f"exit {r.returncode}, {r.stderr!r}")
check("refused extensions write nothing", os.listdir(d) == [], os.listdir(d))
for name in ("x.PNG", "x.Svg", "x.pdf", "x.csv"):
    r = run(["render", "--seq", "8", "-o", os.path.join(d, name)])
    check(f"render -o {name} writes it", r.returncode == 0 and os.path.getsize(os.path.join(d, name)) > 0, r.stderr)

common.finish()
