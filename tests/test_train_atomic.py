#!/usr/bin/env python3
"""scripts/train/atomic.py, the training tools' writer: the old file or the
new one, never a torn one; modes kept; nothing left behind when stopped. And
the training tools write through it (no plain open for writing is left)."""
import glob
import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "train"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import atomic  # noqa: E402
import common  # noqa: E402
from common import check  # noqa: E402


def leftovers(d):
    return [f for f in os.listdir(d) if ".tmp-" in f]


d = common.temp_folder("attnlab-atomic-")
p = os.path.join(d, "card.json")

# a new file: 0666 less the umask
old_umask = os.umask(0o077)
atomic.write_json(p, {"a": 1})
os.umask(old_umask)
check("new file under umask 077", oct(os.stat(p).st_mode & 0o777) == oct(0o600), oct(os.stat(p).st_mode))
check("new file's content", open(p).read() == '{"a": 1}')

# a replaced file keeps its mode
os.chmod(p, 0o640)
atomic.write_json(p, {"a": 2})
check("mode kept", os.stat(p).st_mode & 0o777 == 0o640, oct(os.stat(p).st_mode))

# an exception half way: the old file stays, no temporary
try:
    with atomic.open_out(p, "w") as f:
        f.write('{"a": 3, "b": ')
        raise RuntimeError("stopped")
except RuntimeError:
    pass
check("exception keeps the old file", open(p).read() == '{"a": 2}', open(p).read())
check("exception leaves no temporary", not leftovers(d), leftovers(d))

# a link at the target: the file it names is replaced, the link stays
real = os.path.join(d, "real.json")
atomic.write_json(real, {"r": 0})
link = os.path.join(d, "link.json")
os.symlink("real.json", link)
atomic.write_json(link, {"r": 1})
check("link followed", os.path.islink(link) and open(real).read() == '{"r": 1}')

# a folder at the target is refused
os.mkdir(os.path.join(d, "sub"))
try:
    atomic.write_json(os.path.join(d, "sub"), {})
    check("folder refused", False, "written")
except OSError:
    check("folder refused", True)

# SIGTERM while writing: dies of the signal, the temporary removed, the old file kept
child = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
sys.path.insert(0, {os.path.join(ROOT, "scripts", "train")!r})
import atomic
with atomic.open_out({p!r}, "w") as f:
    f.write("half")
    f.flush()
    print("writing", flush=True)
    time.sleep(30)
"""], stdout=subprocess.PIPE)
child.stdout.readline()
check("temporary exists while writing", len(leftovers(d)) == 1, leftovers(d))
child.send_signal(signal.SIGTERM)
rc = child.wait(timeout=10)
check("SIGTERM: dies of it", rc == -signal.SIGTERM, rc)
check("SIGTERM: no temporary", not leftovers(d), leftovers(d))
check("SIGTERM: old file kept", open(p).read() == '{"a": 2}', open(p).read())

# Ctrl-C (KeyboardInterrupt) likewise
child = subprocess.Popen([sys.executable, "-c", f"""
import sys, time
sys.path.insert(0, {os.path.join(ROOT, "scripts", "train")!r})
import atomic
with atomic.open_out({p!r}, "wb") as f:
    f.write(b"half")
    print("writing", flush=True)
    time.sleep(30)
"""], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
child.stdout.readline()
child.send_signal(signal.SIGINT)
rc = child.wait(timeout=10)
check("SIGINT: stops", rc != 0, rc)
check("SIGINT: no temporary", not leftovers(d), leftovers(d))
check("SIGINT: old file kept", open(p).read() == '{"a": 2}', open(p).read())

# the training tools write only through atomic.py
plain = re.compile(r"""\bopen\(.*,\s*["'](w|a|x)b?["']|np\.save\(os\.path""")
for f in [os.path.join(ROOT, "scripts", "train_model.py")] + glob.glob(os.path.join(ROOT, "scripts", "train", "*.py")):
    if f.endswith("atomic.py"):
        continue
    hits = [i + 1 for i, line in enumerate(open(f, encoding="utf-8")) if plain.search(line)]
    check(f"{os.path.basename(f)} writes through atomic.py", not hits, f"plain writes at lines {hits}")

common.finish()
