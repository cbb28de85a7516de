#!/usr/bin/env python3
"""Hostile files and texts at the command line (issue 37): each is refused with
one line naming the problem and a non-zero exit, never a crash, a hang or a
quiet wrong answer. Standard library only; the harness is test_cli.py's."""
import argparse
import atexit
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--attnlab", required=True)
ARGS = ap.parse_args()
TMP = tempfile.mkdtemp(prefix="attnlab-cli-files-")
atexit.register(lambda: failed or shutil.rmtree(TMP, True))
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "models")
OUT = os.path.join(TMP, "t.safetensors")
passed = failed = 0


def run(args, timeout=120):
    args = [a if isinstance(a, bytes) else a.encode() for a in args]
    return subprocess.run([ARGS.attnlab.encode()] + args, capture_output=True, timeout=timeout)


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def expect(args, code, message, within=None):
    """args exit with code; a failure says message in one line (within: seconds)."""
    t0 = time.monotonic()
    try:
        r = run(args, timeout=within * 4 if within else 120)
    except subprocess.TimeoutExpired:
        check(" ".join(map(repr, args)), False, "timed out")
        return None
    took = time.monotonic() - t0
    err = r.stderr.decode(errors="replace")
    ok = r.returncode == code and message in (err if code else r.stdout.decode(errors="replace"))
    if code != 0:
        ok = ok and err.count("\n") == 1 and err.startswith("attnlab")
    if within is not None:
        ok = ok and took < within
    name = " ".join(a if isinstance(a, str) else repr(a) for a in args)[:200]
    check(name, ok, f"exit {r.returncode} (want {code}) in {took:.1f} s, stderr: {err!r}, want {message!r}")
    return r


def model_copy(name, like="tang"):
    d = os.path.join(TMP, name)
    shutil.rmtree(d, True)
    shutil.copytree(os.path.join(MODELS, like), d)
    return d


def read_st(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    return data[8:8 + n], data[8 + n:]


def write_st(path, header, body):
    header += b" " * (-len(header) % 8)  # padded with spaces, as Hugging Face's writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + body)


# ---- finding 7: '|' rows, as many as the bars make (a heap overflow before) ----
for text, msg in (("|||", "text: row 1 is empty"), ("床前||||||||", "text: row 2 is empty"),
                  ("|" * 1000, "text: row 1 is empty")):
    for cmd in (["trace", "-o", OUT], ["generate"], ["render", "-o", os.path.join(TMP, "rows.png")]):
        expect([cmd[0], "--model", "tang", "--text", text] + cmd[1:], 2, msg)
expect(["trace", "--model", "tang", "--text", "床前|明月", "-o", OUT], 0, "wrote")

# ---- finding 19: a model's example.txt is checked as --text is ----
d = model_copy("example")
for example, msg in ((b"|||\n", "example.txt: row 1 is empty"),
                     (b"\xe5\xba\x8a\xff\n", "example.txt: not valid UTF-8 at byte offset 3 (0xFF)")):
    open(os.path.join(d, "example.txt"), "wb").write(example)
    expect(["trace", "--model", d, "-o", OUT], 2, msg)

# ---- findings 15 and 22: one JSON rule for every file ----
d = model_copy("json")
cfg = open(os.path.join(MODELS, "tang", "config.json")).read()
open(os.path.join(d, "config.json"), "w").write(cfg + '\n{"num_hidden_layers": 9}\n')
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1, "config.json: data after the JSON value")
open(os.path.join(d, "config.json"), "w").write(cfg + "\n  \n")  # blanks after it are fine
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 0, "wrote")
st = os.path.join(d, "model.safetensors")
header, body = read_st(os.path.join(MODELS, "tang", "model.safetensors"))
write_st(st, header.rstrip() + b'{"x":1}', body)
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1, "header: data after the JSON value")
write_st(st, header.replace(b'"model.norm.weight"', b'"model.norm.weight\\u0000 renamed"'), body)
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1, "header: a key holds a NUL character")

# ---- finding 21: a tied model's saved head has the embedding's shape ----
d = model_copy("tied")
h = json.loads(header)
end = max(e["data_offsets"][1] for k, e in h.items() if k != "__metadata__")
h["lm_head.weight"] = {"dtype": "F32", "shape": [3, 5], "data_offsets": [end, end + 60]}
write_st(os.path.join(d, "model.safetensors"), json.dumps(h).encode(), body + bytes(60))
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1,
       "'lm_head.weight' has shape (3, 5) but config.json needs (3072, 128)")

# ---- finding 17: a trace's metadata agrees with its tensors ----
expect(["trace", "--model", "tang", "--text", "床前明月光", "-o", OUT], 0, "wrote")
theader, tbody = read_st(OUT)
meta = json.loads(theader)["__metadata__"]
for key, value, msg in (("layers", "256", "metadata says layers = 256 but the tensors have 4"),
                        ("attention", "cross", "metadata says attention = cross but the trace has no memory tensor")):
    h = json.loads(theader)
    h["__metadata__"] = {**meta, key: value}
    bad = os.path.join(TMP, f"meta-{key}.safetensors")
    write_st(bad, json.dumps(h).encode(), tbody)
    expect(["info", bad], 1, msg)
    expect(["render", bad, "-o", os.path.join(TMP, "meta.png")], 1, msg)

# ---- finding 10: a pre-tokenizer that reads to the end from every match is refused at once ----
d = model_copy("scan", like="brown")
tok = json.load(open(os.path.join(d, "tokenizer.json")))
tok["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": "a(?=[^c]*c)?"}, "behavior": "Isolated"}
json.dump(tok, open(os.path.join(d, "tokenizer.json"), "w"))
expect(["trace", "--model", d, "--text", "a" * 100000, "-o", OUT], 1,
       "tokenizer.json: pre_tokenizer step 1 (Split): the pattern reads too far ahead", within=2.0)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
