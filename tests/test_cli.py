#!/usr/bin/env python3
"""Drives the attnlab binary as a user would: every bad invocation or file gets
a one-line message and the documented exit code; good ones work. Standard
library only."""
import argparse
import atexit
import json
import re
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--attnlab", required=True)
ARGS = ap.parse_args()
TMP = tempfile.mkdtemp(prefix="attnlab-cli-")
# removed at the end unless a check failed (then kept to look at)
atexit.register(lambda: failed or shutil.rmtree(TMP, True))
OUT = os.path.join(TMP, "t.safetensors")
PNG = os.path.join(TMP, "p.png")
passed = failed = 0


def run(args):
    args = [a if isinstance(a, bytes) else a.encode() for a in args]
    return subprocess.run([ARGS.attnlab.encode()] + args, capture_output=True, timeout=120)


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def expect(args, code, message=None, stream="stderr"):
    r = run(args)
    text = (r.stderr if stream == "stderr" else r.stdout).decode(errors="replace")
    name = " ".join(a if isinstance(a, str) else repr(a) for a in args)
    ok = r.returncode == code and (message is None or message in text)
    if code != 0 and ok:
        # a clear one-line message naming the problem
        ok = text.count("\n") == 1 and text.startswith("attnlab")
    check(name, ok, f"exit {r.returncode} (want {code}), {stream}: {text!r}, want {message!r}")
    return r


# ---- usage and configuration errors: exit 2, one line ----
USAGE = [
    (["trace", "--heads", "8", "--kv-heads", "3", "-o", OUT], "kv_heads (3) must divide heads (8)"),
    (["trace", "--heads", "8", "--mode", "mqa", "--kv-heads", "2", "-o", OUT], "mode mqa needs kv_heads = 1, got 2"),
    (["trace", "--heads", "8", "--mode", "mha", "--kv-heads", "4", "-o", OUT], "mode mha needs kv_heads = heads (8)"),
    (["trace", "--heads", "3", "--mode", "gqa", "--d-model", "12", "-o", OUT], "mode gqa needs 1 < kv_heads < heads"),
    (["trace", "--heads", "5", "-o", OUT], "heads (5) must divide d_model (32)"),
    (["trace", "--tokens", "", "-o", OUT], "--tokens: must be one or more tokens (got an empty text)"),
    (["trace", "--tokens", "  ", "-o", OUT], "tokens: must be one or more tokens (got only blanks)"),
    (["generate", "--model", "tang", "--text", ""], "--text: must be some text (got an empty text)"),
    (["trace", "--heads", "x", "-o", OUT], "heads: 'x' is not a whole number"),
    (["trace", "--d-model", "30", "--heads", "6", "--rope", "-o", OUT], "rope needs an even head dim"),
    (["trace", "--rope-theta", "-5", "-o", OUT], "rope_theta: must be a finite number above 1"),
    (["trace", "--mask-value", "0", "-o", OUT], "mask_value: must be -inf or a finite negative number"),
    (["trace", "--mask-value=abc", "-o", OUT], "mask_value: 'abc' is not a number"),
    (["trace", "--dropout", "1.5", "-o", OUT], "dropout: must be at least 0 and below 1"),
    (["trace", "--past", "6", "-o", OUT], "past (6) must be less than the sequence length (6)"),
    (["trace", "--pad-side", "up", "-o", OUT], "pad_side: 'up' is not right or left"),
    (["trace", "--mode", "sparse", "-o", OUT], "mode: 'sparse' is not mha, mqa or gqa"),
    (["trace", "--seq", "0", "-o", OUT], "seq: 0 is out of range"),
    (["trace", "--seed", "abc", "-o", OUT], "seed: 'abc' is not a whole number"),
    (["trace", "--tokens", "a b", "--seq", "3", "-o", OUT], "seq (3) contradicts tokens"),
    (["trace", "--tokens", "a | | b", "-o", OUT], "tokens: row 2 has no tokens"),
    (["trace", "--tokens", b"a \xff b", "-o", OUT], "tokens: not valid UTF-8"),
    (["trace", "--tokens", "a <pad>", "-o", OUT], "'<pad>' is reserved"),
    (["trace", "--source-tokens", "I love AI | x", "-o", OUT], "cross-attention has no causal mask"),
    (["trace", "--source-tokens", "I love AI", "--no-causal", "-o", OUT], "source_tokens has 1 rows but tokens has 2"),
    (["trace", "--source-tokens", "I | x", "--no-causal", "--past", "1", "-o", OUT], "KV cache applies to self-attention"),
    (["trace", "--seq", "65536", "--batch", "1024", "--heads", "256", "--d-model", "16384", "-o", OUT],
     "this trace would need about"),
    (["trace"], "no output file: use -o FILE.safetensors"),
    (["trace", "--frobnicate", "-o", OUT], "unknown option '--frobnicate'"),
    (["trace", "-o"], "-o needs a value"),
    (["trace", "--heads"], "--heads needs a value"),
    (["trace", "--rope=1"], "--rope takes no value"),
    (["trace", "--no-softmax-guard", "--softmax-guard"], "unknown option '--softmax-guard'"),
    (["trace", "stray", "-o", OUT], "unexpected argument 'stray'"),
    (["trace", "--repeat", "3", "-o", OUT], "trace does not take --repeat"),
    (["bench", "--repeat", "0"], "--repeat: '0' is not a count"),
    (["bench", "-o", OUT], "bench does not take -o"),
    (["info"], "expected one trace file"),
    (["info", "a", "b"], "expected one trace file"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["--heads", "7"], "heads (7) must divide d_model (32)"),
    (["render", "--stage", "k_cache", "-o", PNG], "--stage: this trace has no stage 'k_cache' (it has x, w_q"),
    (["render", "--stage", "nonsense", "-o", PNG], "no stage 'nonsense'"),
    (["render", "--head", "4", "-o", PNG], "--head: 4 is out of range (h = 4: heads 0 to 3)"),
    (["render", "--head", "-1", "-o", PNG], "--head: '-1' is not a whole number"),
    (["render", "--batch-index", "2", "-o", PNG], "--batch-index: 2 is out of range (b = 2"),
    (["render", "--view", "wide", "-o", PNG], "--view: 'wide' is not single, grid, compare or geometry"),
    (["render", "--view", "compare", "--compare", "x", "-o", PNG], "--compare: 'x' is not causal, padding, fill or window"),
    (["render", "--size", "10x10", "-o", PNG], "--size: '10x10' is not WIDTHxHEIGHT"),
    (["render", "--size", "800", "-o", PNG], "--size: '800' is not WIDTHxHEIGHT"),
    (["render", "--font-scale", "9", "-o", PNG], "--font-scale: '9' is not a number from 0.75 to 3"),
    (["render", "--row", "6", "-o", PNG], "--row: 6 is out of range (s = 6"),
    (["render", "--layer", "1", "-o", PNG], "--layer: 1 is out of range (this trace has 1 layer: 0 to 0)"),
    (["render", "--decode-step", "9", "-o", PNG], "--decode-step: 9 is beyond the 6 tokens"),
    (["render", "--heads", "3", "-o", PNG], "heads (3) must divide d_model (32)"),
    (["render"], "no output file: use -o FILE.png"),
    (["render", "--stage", "q", "a.safetensors", "b.safetensors", "-o", PNG], "unexpected argument 'b.safetensors'"),
    (["trace", "--stage", "q", "-o", OUT], "trace does not take --stage"),
    (["bench", "--frames", "0"], "--frames: '0' is not a whole number from 1"),
    (["bench", "--generate", "3"], "--generate times a model's decoding: it needs --model"),
    (["bench", "--seq", "512", "--heads", "8", "--memory-gib", "0.05"],
     "bench holds two traces of about 26 MiB each, more than the 51 MiB limit (--memory-gib)"),
    (["bench", "--generate", "0", "--model", "tang"], "--generate"),
    (["trace", "--generate", "3"], "trace does not take --generate"),
    (["bench", "--frames", "2", "--stage", "nope"], "no stage 'nope'"),
    (["view"], "expected one trace file"),
    (["view", "a", "b"], "unexpected argument 'b'"),
]
for args, msg in USAGE:
    expect(args, 2, msg)

# nothing is lost: a failed run leaves an existing output file untouched
with open(OUT, "wb") as f:
    f.write(b"keep me")
run(["trace", "--heads", "3", "-o", OUT])
check("failed trace keeps existing file", open(OUT, "rb").read() == b"keep me")

# ---- unreadable or invalid files: exit 1, one line naming the file ----
good = os.path.join(TMP, "good.safetensors")
expect(["trace", "--rope", "--past", "2", "-o", good], 0, "wrote " + good, stream="stdout")
blob = open(good, "rb").read()


def bad_file(name, data):
    p = os.path.join(TMP, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


n = struct.unpack("<Q", blob[:8])[0]
header = json.loads(blob[8:8 + n])


def with_header(h, data=None):
    text = json.dumps(h).encode()
    return struct.pack("<Q", len(text)) + text + (blob[8 + n:] if data is None else data)


h_dtype = json.loads(json.dumps(header)); h_dtype["x"]["dtype"] = "F64"
h_range = json.loads(json.dumps(header)); h_range["out"]["data_offsets"] = [o + (1 << 20) for o in h_range["out"]["data_offsets"]]
h_shape = json.loads(json.dumps(header)); h_shape["q"]["shape"][2] += 1
FILES = [
    ("missing.safetensors", None, "missing.safetensors: No such file or directory"),
    ("empty.safetensors", b"", "too short to be safetensors"),
    ("short.safetensors", b"\x01\x02\x03", "too short to be safetensors"),
    ("truncated.safetensors", blob[: len(blob) // 2], "lie beyond the"),
    ("trailing.safetensors", blob + b"\0" * 4, "the data section has"),
    ("headerlen.safetensors", struct.pack("<Q", 1 << 40) + blob[8:], "larger than the"),
    ("beyond.safetensors", struct.pack("<Q", len(blob)) + blob[8:], "runs past the end"),
    ("notjson.safetensors", struct.pack("<Q", 9) + b"{not json" + blob[8 + n:], "header is not valid JSON"),
    ("dtype.safetensors", with_header(h_dtype), "dtype F64"),
    ("range.safetensors", with_header(h_range), "beyond the"),
    ("shape.safetensors", with_header(h_shape), "shape needs"),
]
for name, data, msg in FILES:
    p = os.path.join(TMP, name) if data is None else bad_file(name, data)
    r = expect(["info", p], 1, msg)
    check(f"info {name} names the file", p in r.stderr.decode(), r.stderr)
expect(["trace", "-o", os.path.join(TMP, "no/such/dir/x.safetensors")], 1, "cannot write")
expect(["trace", "--weights", os.path.join(TMP, "nope.safetensors"), "-o", OUT], 1, "nope.safetensors: No such file or directory")
expect(["trace", "--weights", good, "--kv-heads", "2", "-o", OUT], 1, "'w_k' has shape (32, 32) but this config needs")

# ---- things that work ----
for cmd in ["trace", "info", "bench", "summary"]:
    expect([cmd, "--help"], 0, "Usage: attnlab " + cmd, stream="stdout")
expect(["--help"], 0, "attnlab trace [config] -o FILE.safetensors", stream="stdout")
r = expect(["summary"], 0, "weights, batch row 0, head 0", stream="stdout")
check("summary shows CJK labels", "你" in r.stdout.decode())
r = expect(["info", good], 0, "k_cache          (b=2, g=4, t=6, k=8)", stream="stdout")
check("info lists q_rope", "q_rope" in r.stdout.decode())

for form, want in ([["--mask-value", "-inf"], "-inf"], [["--mask-value=-1e9"], "-1e+09"],
                   [["--mask-value", "-1e9"], "-1e+09"]):
    p = os.path.join(TMP, "mv.safetensors")
    expect(["trace"] + form + ["-o", p], 0, "wrote", stream="stdout")
    b = open(p, "rb").read()
    meta = json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]])["__metadata__"]
    check(f"mask value {form}", meta["mask_value"] == want and meta["format"] == "attnlab-trace/1", meta["mask_value"])

p = os.path.join(TMP, "cross.safetensors")
expect(["trace", "--tokens", "我 爱 AI", "--source-tokens", "I love AI very much", "--no-causal", "-o", p], 0,
       "wrote", stream="stdout")
r = expect(["info", p], 0, "cross-attention", stream="stdout")
check("cross-attention scores are s x t", "scores           (b=1, h=4, s=3, t=5)" in r.stdout.decode(), r.stdout)
r = expect(["bench", "--model", "tang", "--repeat", "2", "--generate", "3"], 0, "prefill", stream="stdout")
check("bench --generate: decode tokens/s",
      re.search(r"decode: [0-9.]+ ms per token \(median of 3 steps after a prompt of \d+;.*\), [0-9.]+ tokens/s",
                r.stdout.decode()), r.stdout)
r = expect(["bench", "--seq", "16", "--repeat", "3"], 0, "ms per traced forward (median of 3)", stream="stdout")
check("bench last line", r.stdout.decode().strip().splitlines()[-1].startswith("bench: "), r.stdout)

# generation: <unk> is never chosen unless --allow-unk; it stops at </s>
r = expect(["generate", "--model", "brown", "--text", "the jury said"], 0, " → ", stream="stdout")
check("generate: greedy brown writes no <unk>", "<unk>" not in r.stdout.decode(), r.stdout.decode())
r = expect(["generate", "--model", "brown", "--text", "the jury said", "--allow-unk"], 0, " → ", stream="stdout")
check("generate --allow-unk: brown's most likely word is <unk> here", "<unk>" in r.stdout.decode(), r.stdout.decode())
for seed in ("3", "12"):  # seeds whose draws at T = 1.5 hit <unk> when it may be chosen
    args = ["generate", "--model", "tang", "--text", "春眠不觉晓", "--max-new", "60", "--temperature", "1.5",
            "--seed", seed, "--probs"]
    r = expect(args, 0, " → ", stream="stdout")
    check(f"generate: tang at T = 1.5, seed {seed}, no <unk>", "<unk>" not in r.stdout.decode(), r.stdout.decode())
    r = expect(args + ["--allow-unk"], 0, " → ", stream="stdout")
    check(f"generate --allow-unk: seed {seed} draws <unk>", "<unk>\t0\t" in r.stdout.decode(), r.stdout.decode())
r = expect(["generate", "--model", "tang", "--text", "春眠不觉晓", "--max-new", "60", "--probs"], 0, " → ",
           stream="stdout")
lines = r.stdout.decode().splitlines()
check("generate stops at </s>: its last new token, well before --max-new",
      lines[-2].startswith("</s>\t2\t") and len(lines) < 40 and lines[-1].endswith("。"), lines)
r = expect(["generate", "--help"], 0, "--allow-unk", stream="stdout")
check("generate --help says <unk> and </s>", "<unk>" in r.stdout.decode() and "</s>" in r.stdout.decode(), r.stdout)

# ---- the visualizer's picture, drawn without a display ----
def png_size(path):
    b = open(path, "rb").read(32)
    if b[:8] != b"\x89PNG\r\n\x1a\n" or b[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", b[16:24])


for cmd in ["render", "view", "window"]:
    expect([cmd, "--help"], 0, "Usage: attnlab " + cmd, stream="stdout")
expect(["render", "--stage", "scores", "--head", "3", "--size", "800x600", "-o", PNG], 0, "wrote " + PNG, stream="stdout")
check("render writes an 800x600 PNG", png_size(PNG) == (800, 600), png_size(PNG))
for extra in (["--view", "grid", "--heads", "8", "--kv-heads", "2", "--d-model", "64"],
              ["--view", "compare", "--compare", "padding", "--batch-index", "1"],
              ["--row", "2", "--stage", "masked_scores", "--mask-value", "-1e9"],
              ["--decode-step", "4", "--stage", "k_cache"],
              ["--tokens", "我 爱 AI", "--source-tokens", "I love AI very much", "--no-causal"],
              ["--rope", "--train", "--stage", "weights_dropout", "--font-scale", "1.5"],
              ["--seq", "64", "--view", "grid", "--heads", "16", "--d-model", "64"]):
    os.remove(PNG)
    expect(["render"] + extra + ["-o", PNG], 0, "wrote", stream="stdout")
    check("render " + " ".join(extra) + " is a PNG", png_size(PNG) == (1280, 800), png_size(PNG))
# render --decode-step past a model's text writes on, as ] does, up to </s>
expect(["render", "--model", "tang", "--text", "春眠不觉晓", "--decode-step", "20", "-o", PNG], 0, "wrote",
       stream="stdout")
check("render --decode-step past a model's text is a PNG", png_size(PNG) == (1280, 800), png_size(PNG))
expect(["render", "--model", "tang", "--text", "春眠不觉晓", "--decode-step", "60", "-o", PNG], 2,
       "--decode-step: 60 is past the end of the text: tang wrote its end (</s>) at step 26")
# from trace files: attnlab's own and the cross-attention one
expect(["render", good, "--stage", "k_cache", "-o", PNG], 0, "wrote", stream="stdout")
expect(["render", p, "--stage", "weights", "--head", "2", "-o", PNG], 0, "wrote", stream="stdout")
for name, data, msg in FILES[:4]:
    bad = os.path.join(TMP, name)
    r = expect(["render", bad, "-o", PNG], 1, msg)
    check(f"render {name} names the file", bad in r.stderr.decode(), r.stderr)
    r = expect(["view", bad], 1, msg)
    check(f"view {name} names the file", bad in r.stderr.decode(), r.stderr)
# a file from another program in the same contract: the tensors without attnlab's metadata
h_foreign = {k: v for k, v in header.items() if k != "__metadata__"}
foreign = bad_file("foreign.safetensors", with_header(h_foreign))
expect(["render", foreign, "--stage", "weights", "--head", "3", "-o", PNG], 0, "wrote", stream="stdout")
check("render of a foreign file is a PNG", png_size(PNG) == (1280, 800), png_size(PNG))
# no font at all: a clear message, not a crash
empty_conf = os.path.join(TMP, "fonts.conf")
with open(empty_conf, "w") as f:
    f.write("<?xml version='1.0'?><fontconfig></fontconfig>\n")
r = subprocess.run([ARGS.attnlab, "render", "-o", PNG], capture_output=True, timeout=120,
                   env=dict(os.environ, FONTCONFIG_FILE=empty_conf))
err = r.stderr.decode()
check("render without fonts: exit 1, one line naming the font", r.returncode == 1 and "font" in err
      and err.count("\n") == 1 and err.startswith("attnlab render:"), err)
with open(PNG, "wb") as f:
    f.write(b"keep me")
run(["render", "--head", "9", "-o", PNG])
check("failed render keeps existing file", open(PNG, "rb").read() == b"keep me")
expect(["render", "-o", os.path.join(TMP, "no/such/dir/x.png")], 1, "cannot write")
r = expect(["bench", "--frames", "3", "--view", "grid", "--seq", "32"], 0, "ms per frame (median)", stream="stdout")
check("bench --frames last line", re.match(r"render: [0-9.]+ ms per frame \(median\)$",
                                           r.stdout.decode().strip().splitlines()[-1]) is not None, r.stdout)

# ---- the progress file: one that cannot be read is never replaced; a corrupt one is moved aside ----
def lessons(args, state):
    return subprocess.run([ARGS.attnlab, "lessons"] + args, capture_output=True, timeout=30,
                          env=dict(os.environ, XDG_STATE_HOME=state))


state = os.path.join(TMP, "state")
os.makedirs(os.path.join(state, "attnlab"))
prog = os.path.join(state, "attnlab", "progress.json")
os.mkdir(prog)
r = lessons(["--reset-progress"], state)
err = r.stderr.decode()
check("reset-progress, progress.json a folder: exit 1, one line, kept",
      r.returncode == 1 and err == f"attnlab lessons: progress not saved: {prog}: is a directory, not a regular file\n"
      and os.path.isdir(prog), err)
os.rmdir(prog)
os.mkfifo(prog)
r = lessons(["--list"], state)  # returns: the FIFO is opened without blocking
err = r.stderr.decode()
check("lessons --list, progress.json a FIFO: said, kept", r.returncode == 0 and "is a FIFO, not a regular file" in err
      and not os.path.isfile(prog), err)
os.remove(prog)
for i in range(2):
    with open(prog, "w") as f:
        f.write(f"corrupt {i}")
    r = lessons(["--reset-progress"], state)
    err = r.stderr.decode()
    check(f"reset-progress of a corrupt file ({i + 1}): moved aside, said on stderr",
          r.returncode == 0 and "not a progress file; moved to " + prog + ".bad-" in err, err)
bad = sorted(n for n in os.listdir(os.path.dirname(prog)) if ".bad-" in n)
check("two corrupt files: two .bad- files, both kept", len(bad) == 2 and
      sorted(open(os.path.join(state, "attnlab", n)).read() for n in bad) == ["corrupt 0", "corrupt 1"], bad)

# a trace of three layers (the contract's layers.N.<stage>, made from a
# single-layer trace): --layer picks the layer, --stage reads in it
one = os.path.join(TMP, "one.safetensors")
run(["trace", "-o", one])
raw = open(one, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
head = json.loads(raw[8:8 + n])
meta, data = head.pop("__metadata__"), raw[8 + n:]
out_head, blobs, off = {"__metadata__": dict(meta, layers="3")}, [], 0
for layer in range(3):
    for name, e in head.items():
        blob = data[e["data_offsets"][0]:e["data_offsets"][1]]
        out_head[f"layers.{layer}.{name}"] = dict(e, data_offsets=[off, off + len(blob)])
        blobs.append(blob)
        off += len(blob)
hj = json.dumps(out_head).encode()
three = os.path.join(TMP, "three.safetensors")
with open(three, "wb") as f:
    f.write(struct.pack("<Q", len(hj)) + hj + b"".join(blobs))
by_layer, by_name = os.path.join(TMP, "layer2.png"), os.path.join(TMP, "name2.png")
r1 = run(["render", three, "--layer", "2", "--stage", "weights", "-o", by_layer])
r2 = run(["render", three, "--stage", "layers.2.weights", "-o", by_name])
check("render --layer 2 --stage weights of a 3-layer trace is layers.2.weights",
      r1.returncode == 0 and r2.returncode == 0 and open(by_layer, "rb").read() == open(by_name, "rb").read(),
      (r1.stderr, r2.stderr))
expect(["render", three, "--layer", "3", "-o", PNG], 2, "--layer: 3 is out of range (this trace has 3 layers: 0 to 2)")
info = run(["info", three]).stdout.decode()
check("info on a 3-layer trace names every layer's stages", "layers.2.weights" in info, info[:300])

# --scale: the same picture, N times finer, for slides
r = run(["render", "--scale", "2", "--size", "640x400", "-o", PNG])
check("render --scale 2 --size 640x400 writes 1280x800 pixels", r.returncode == 0 and png_size(PNG) == (1280, 800),
      (r.returncode, r.stderr))
expect(["render", "--scale", "5", "-o", PNG], 2, "--scale: '5' is not a whole number from 1 to 4")

# ---- inputs that are not regular files never hang; outputs never destroy an input ----
# run() has a timeout, so a FIFO that blocks fails the test instead of hanging it
fifo = os.path.join(TMP, "fifo")
os.mkfifo(fifo)
for args in (["info", fifo], ["view", fifo], ["trace", "--weights", fifo, "-o", OUT],
             ["trace", "--input", fifo, "-o", OUT], ["render", fifo, "-o", PNG]):
    expect(args, 1, fifo + ": is a FIFO, not a regular file")
r = run(["lesson", "--check", fifo])
check("lesson --check FIFO: FILE: message, then the count", r.returncode == 2 and r.stderr.decode() ==
      f"{fifo}: is a FIFO, not a regular file\nattnlab lesson --check: 1 problem\n", (r.returncode, r.stderr))
expect(["info", "/dev/zero"], 1, "/dev/zero: is a character device, not a regular file")
expect(["info", TMP], 1, TMP + ": is a directory, not a regular file")
lessons_dir = os.path.join(TMP, "fifo-lessons")
os.makedirs(os.path.join(lessons_dir, "en"))
os.mkfifo(os.path.join(lessons_dir, "en", "01-fifo.md"))
r = subprocess.run([ARGS.attnlab, "lessons", "--list", "--lang", "en"], capture_output=True, timeout=30,
                   env=dict(os.environ, ATTNLAB_LESSONS=lessons_dir, XDG_STATE_HOME=os.path.join(TMP, "st")))
check("a FIFO among the lessons is listed as an error, not read", r.returncode == 0 and
      b"is a FIFO, not a regular file" in r.stdout, (r.returncode, r.stdout, r.stderr))

big = os.path.join(TMP, "big.md")
with open(big, "wb") as f:
    f.write(b"# Big\n\n" + b"a" * (3 << 20))
r = run(["lesson", "--check", big])
check("a lesson too large says its real size", r.returncode == 2 and
      f"too large ({(3 << 20) + 7} bytes; the limit is {1 << 20})".encode() in r.stderr, r.stderr)

src = os.path.join(TMP, "in.safetensors")
run(["trace", "-o", src])
before = open(src, "rb").read()
link = os.path.join(TMP, "in-link.safetensors")
os.symlink(src, link)
folder = os.path.join(TMP, "outdir")
os.mkdir(folder)
for args, msg in (
        (["render", src, "-o", src], f"{src}: is the input {src} itself: write to another file"),
        (["render", src, "-o", link], f"{link}: is the input {src} itself"),
        (["render", link, "-o", src], f"{src}: is the input {link} itself"),
        (["render", src, "-o", os.path.join(TMP, ".", "in.safetensors")], "is the input"),
        (["trace", "--weights", src, "-o", src], "is the input"),
        (["trace", "-o", folder], f"{folder}: is a directory: give the file to write in it"),
        (["trace", "-o", folder + "/"], f"{folder}/: ends in '/', which names a folder"),
        (["trace", "-o", os.path.join(TMP, "new") + "/"], "ends in '/'"),
        (["trace", "-o", fifo], f"{fifo}: is a FIFO, not a regular file; not replaced"),
        (["render", "-o", "/dev/null"], "/dev/null: is a character device, not a regular file; not replaced")):
    expect(args, 2, msg)
check("an input named as the output is left as it was", open(src, "rb").read() == before)

# traces another program wrote: only the weights (no K/V heads: g = 0), or s = t = 0,
# drawn in every view without a division by zero (issue 21); h = 0 or b = 0 refused in words
def weights_only(path, b, h, s, t):
    hdr = json.dumps({"weights": {"dtype": "F32", "shape": [b, h, s, t], "data_offsets": [0, 4 * b * h * s * t]}})
    hdr += " " * (-len(hdr) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr.encode() + bytes(4 * b * h * s * t))
for shape in ((1, 2, 3, 3), (1, 2, 0, 0)):
    wpath = os.path.join(TMP, "weights-%d-%d-%d-%d.safetensors" % shape)
    weights_only(wpath, *shape)
    for view in ("single", "grid", "compare", "geometry"):
        expect(["render", wpath, "--view", view, "-o", os.path.join(TMP, "w.png")], 0)
for shape in ((1, 0, 3, 3), (0, 2, 3, 3)):
    wpath = os.path.join(TMP, "weights-%d-%d-%d-%d.safetensors" % shape)
    weights_only(wpath, *shape)
    expect(["render", wpath, "--view", "grid", "-o", os.path.join(TMP, "w.png")], 2, "is out of range")

# nor any file of a model folder the command reads, however the output is spelled (issue 21)
mdir = os.path.join(TMP, "model-copy")
shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "models", "tang"), mdir)
mlink = os.path.join(TMP, "model-link")
os.symlink(mdir, mlink)
kept = {f: open(os.path.join(mdir, f), "rb").read() for f in ("model.safetensors", "tokenizer.json", "config.json")}
for args, out in (
        (["trace", "--model", mdir, "--text", "床前", "-o"], os.path.join(mdir, "model.safetensors")),
        (["trace", "--model", mdir, "--text", "床前", "-o"], os.path.join(mdir, "tokenizer.json")),
        (["render", "--model", mdir, "--text", "床前", "-o"], os.path.join(mdir, "config.json")),
        (["render", "--model", mdir, "--text", "床前", "-o"], os.path.join(mlink, "new", "x.png")),
        (["trace", "--model", mlink, "--text", "床前", "-o"], os.path.join(mdir, "x.safetensors"))):
    expect(args + [out], 2, f"{out}: lies inside the model folder")
check("a model folder named as the output is left as it was",
      all(open(os.path.join(mdir, f), "rb").read() == b for f, b in kept.items()) and
      not os.path.exists(os.path.join(mdir, "new")) and not os.path.exists(os.path.join(mdir, "x.safetensors")))
expect(["trace", "--model", mdir, "--text", "床前", "-o", os.path.join(TMP, "beside-model.safetensors")], 0)
check("/dev/null is still a device", not os.path.isfile("/dev/null"))
r = run(["trace", "--seed", "7", "-o", link])
check("writing through a symbolic link replaces the file it names and keeps the link",
      r.returncode == 0 and os.path.islink(link) and open(src, "rb").read() != before, r.stderr)

# NaN and infinities (issue 21): a model whose weights hold one is refused, naming the file and
# the tensor; one whose products overflow traces with a warning naming the first stage that holds
# one, and generating refuses to sample from its NaN logits; the unguarded softmax's NaN rows, a
# pitfall shown on purpose, are no warning
def rewrite_tensor(path, name, values_of):
    """Stores tensor `name` of a safetensors file as F32, its values replaced by values_of(values)."""
    blob = open(path, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    header, data = json.loads(blob[8:8 + n]), blob[8 + n:]
    out, parts, off = {}, [], 0
    for key, e in header.items():
        if key == "__metadata__":
            out[key] = e
            continue
        raw = data[e["data_offsets"][0]:e["data_offsets"][1]]
        if key == name:
            fmt = {"F16": "e", "F32": "f"}[e["dtype"]]
            vals = struct.unpack("<%d%s" % (len(raw) // struct.calcsize(fmt), fmt), raw)
            raw = struct.pack("<%df" % len(vals), *values_of(list(vals)))
            e = dict(e, dtype="F32")
        out[key] = dict(e, data_offsets=[off, off + len(raw)])
        parts.append(raw)
        off += len(raw)
    hdr = json.dumps(out)
    hdr += " " * (-len(hdr) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr.encode() + b"".join(parts))


def poisoned(name, tensor, values_of):
    d = os.path.join(TMP, name)
    shutil.copytree(mdir, d)
    rewrite_tensor(os.path.join(d, "model.safetensors"), tensor, values_of)
    return d


def put(i, v):
    return lambda vals: vals[:i] + [v] + vals[i + 1:]


nan_q = poisoned("nan-q", "model.layers.0.self_attn.q_proj.weight", put(5, float("nan")))
inf_up = poisoned("inf-up", "model.layers.3.mlp.up_proj.weight", put(2 * 128 + 7, float("inf")))
for args in (["generate", "--model", nan_q, "--text", "床前"], ["trace", "--model", nan_q, "--text", "床前", "-o", OUT],
             ["render", "--model", nan_q, "--text", "床前", "-o", PNG]):
    expect(args, 1, "model.safetensors: tensor 'model.layers.0.self_attn.q_proj.weight' holds NaN at [0, 5]")
expect(["generate", "--model", inf_up, "--text", "床前"], 1,
       "model.safetensors: tensor 'model.layers.3.mlp.up_proj.weight' holds +inf at [2, 7]")
overflow = poisoned("overflow", "model.layers.0.mlp.down_proj.weight", lambda vals: [3e38 if v >= 0 else -3e38 for v in vals])
first = "first appears in layer 0's mlp_out (layers.0.mlp_out)"
expect(["generate", "--model", overflow, "--text", "床前", "--probs"], 1, "the next-token logits after 3 tokens are not all numbers")
expect(["generate", "--model", overflow, "--text", "床前", "--temperature", "1"], 1, first)
r = expect(["trace", "--model", overflow, "--text", "床前", "-o", OUT], 0, "attnlab trace: warning: -inf " + first)
check("a trace holding NaN is still written", r.returncode == 0 and os.path.getsize(OUT) > 0)
expect(["info", OUT], 0, "attnlab info: warning: -inf " + first)
expect(["render", OUT, "--stage", "layers.1.weights", "-o", PNG], 0, "attnlab render: warning: -inf " + first)
expect(["render", "--model", overflow, "--text", "床前", "-o", PNG], 0, "attnlab render: warning: -inf " + first)
for args in (["trace", "--pad-side", "left", "--no-softmax-guard", "-o", OUT], ["info", OUT],
             ["trace", "--model", mdir, "--text", "床前", "-o", OUT], ["info", OUT]):
    r = run(args)
    check(" ".join(args) + ": no warning", r.returncode == 0 and not r.stderr, r.stderr)

# A saved trace is mapped, not copied: drawing a 100 MiB one holds at most 1.3 times
# its size (it held 3 times when the file was read into memory and then copied).
big = os.path.join(TMP, "big.safetensors")
r = run(["trace", "--seq", "1024", "--heads", "8", "--d-model", "64", "-o", big])
check("a 100 MiB trace", r.returncode == 0 and os.path.getsize(big) > 100 << 20, r.stderr)
peak = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys; "
                       "r = subprocess.run(sys.argv[1:], capture_output=True); "
                       "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                       ARGS.attnlab, "render", big, "-o", os.path.join(TMP, "big.png")],
                      capture_output=True, text=True).stdout.split()
# AddressSanitizer's shadow memory and quarantine make RSS meaningless: only the exit counts there
asan = b"libasan" in subprocess.run(["ldd", ARGS.attnlab], capture_output=True).stdout
check("render of a mapped trace: peak RSS within 1.3x the file size" + (" (not measured under ASan)" if asan else ""),
      peak and peak[0] == "0" and (asan or int(peak[1]) * 1024 <= 1.3 * os.path.getsize(big)),
      f"exit {peak[:1]}, peak {int(peak[1]) >> 10 if len(peak) > 1 else '?'} MiB for a "
      f"{os.path.getsize(big) >> 20} MiB file")
r = run(["info", big])
out = r.stdout.decode()
check("info names the memory a mapped trace takes and the limit",
      re.search(r"memory: 10[0-9.]+ MiB of tensors, mapped from the file .*up to [0-9.]+ GiB", out), out[:600])
check("info cuts a long token row", "… (976 more)" in out and len(out.splitlines()[2]) < 600, out[:600])
os.unlink(big)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
