#!/usr/bin/env python3
"""`attnlab stream` (issue 33's StreamingLLM measurement) on a short text, run
as a user would: everything kept is the plain pass (the loss a trace of the
same text gives, position by position); the window and the sink agree with it
until the window first evicts and differ from each other once the text is past
N + W; the CSV is one row per prediction with the columns asked for; --text-file
reads each line as <s> LINE </s>; the refusals are one line and exit 2, the
CSV never written over the text it reads. Standard library only; the harness
is tests/common.py."""
import csv
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, expect, one_line_error, read_st, run  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-cli-stream-")
TEXT = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"


def traced_losses(text):
    """−log softmax(logits[i])[ids[i + 1]] of a trace of text with tang, per position."""
    out = os.path.join(TMP, "t.safetensors")
    r = run(["trace", "--model", "tang", "--text", text, "-o", out])
    if not check("trace of the text", r.returncode == 0, r.stderr):
        return [], []
    header, data = read_st(out)
    ids = json.loads(header["__metadata__"]["token_ids"])[0]
    shape, (a, b) = header["logits"]["shape"], header["logits"]["data_offsets"]
    V = shape[2]
    logits = struct.unpack(f"<{(b - a) // 4}f", data[a:b])
    losses = []
    for i in range(len(ids) - 1):
        row = logits[i * V:(i + 1) * V]
        mx = max(row)
        losses.append(math.log(sum(math.exp(x - mx) for x in row)) - (row[ids[i + 1]] - mx))
    return ids, losses


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


ids, want = traced_losses(TEXT)
n = len(ids)

# ---- everything kept, a window larger than the text: the plain pass ----
plain = os.path.join(TMP, "plain.csv")
r = expect(["stream", "--model", "tang", "--text", TEXT, "--policy", "all", "--window", "100", "--csv", plain], 0)
rows = read_csv(plain) if os.path.exists(plain) else []
check("all: the CSV is position,next,all and one row per prediction",
      rows[:1] == [["position", "next", "all"]] and len(rows) == n, rows[:2])
check("all: position and next token as the trace numbers them",
      all(r_[0] == str(i) and r_[1] == str(ids[i + 1]) for i, r_ in enumerate(rows[1:])), rows[1:3])
got = [float(r_[2]) for r_ in rows[1:]]
check("all: each position's loss is the trace's", len(got) == len(want) and
      all(abs(x - y) < 1e-3 for x, y in zip(got, want)), list(zip(got, want))[:4])
mean = sum(want) / len(want)
out = r.stdout.decode() if r else ""
check("all: the printed mean is the trace's loss", f"{mean:.4f}" in out, (mean, out))

# ---- window and sink: the same as all until the window evicts, then not as each other ----
W, N = 8, 2
three = os.path.join(TMP, "three.csv")
r = expect(["stream", "--model", "tang", "--text", TEXT, "--window", str(W), "--keep-first", str(N),
            "--csv", three], 0)
rows = read_csv(three) if os.path.exists(three) else []
check("three policies: header and well-formed rows", rows[:1] == [["position", "next", "all", "window", "sink"]] and
      len(rows) == n and all(len(r_) == 5 for r_ in rows), rows[:2])
body = [[float(x) for x in r_[2:]] for r_ in rows[1:]]
check("before the window evicts (positions < W) every policy is the plain pass",
      all(abs(a - w) < 1e-4 and abs(a - s) < 1e-4 for a, w, s in body[:W]), body[:W])
check("sink is the plain pass until N + W", all(abs(a - s) < 1e-4 for a, w, s in body[:N + W]), body[:N + W])
check("window and sink differ once the text is past N + W",
      any(abs(w - s) > 1e-3 for a, w, s in body[N + W:]), body[N + W:])

# ---- --text-file: each line <s> LINE </s>; --one-text joins them ----
lines = os.path.join(TMP, "poems.txt")
with open(lines, "w") as f:
    f.write("床前明月光，疑是地上霜。\n\n举头望明月，低头思故乡。\n")
two = os.path.join(TMP, "two.csv")
r = expect(["stream", "--model", "tang", "--text-file", lines, "--window", "8", "--keep-first", "2",
            "--csv", two], 0, "2 texts", stream="stdout")
rows = read_csv(two) if os.path.exists(two) else []
nexts = [r_[1] for r_ in rows[1:]]
check("--text-file: two texts, each ended by </s> (2), the second begun by <s> (1)",
      len(rows) == 2 * 14 and nexts.count("2") == 2 and nexts.count("1") == 1 and nexts[-1] == "2", nexts)
r = expect(["stream", "--model", "tang", "--text-file", lines, "--one-text", "--policy", "all"], 0,
           "25 tokens", stream="stdout")

# ---- a --text past the context: all stops at 128 and says so, window and sink read on ----
LONG = "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。|" * 9  # 9 × 25 + <s> = 226 tokens, '|' a character
far = os.path.join(TMP, "far.csv")
r = run(["stream", "--model", "tang", "--text", LONG, "--window", "32", "--keep-first", "4", "--csv", far])
rows = read_csv(far) if os.path.exists(far) else []
check("a long --text: exit 0, one note on stderr that all stops at the context",
      r.returncode == 0 and common.one_line(r) and b"positions 128..224 are not scored" in r.stderr, r.stderr)
check("a long --text: all scored up to position 127, window and sink to the end",
      len(rows) == 226 and all(x[2] for x in rows[1:129]) and not any(x[2] for x in rows[129:]) and
      all(x[3] and x[4] for x in rows[1:]), rows[127:131])

# ---- refusals: one line, exit 2 ----
REFUSED = [
    (["--window", "0"], "--window 0"),
    (["--window", "8", "--keep-first", "8"], "--keep-first 8 must be below --window 8"),
    (["--window", "8", "--keep-first", "0", "--policy", "sink"], "--keep-first 0"),
    (["--policy", "window", "--window", "64"], "fit window's cache of 64 positions"),
    (["--window", "120", "--keep-first", "10", "--policy", "sink"], "beyond tang's context of 128"),
    (["--policy", "stream"], "'stream' is not all, window or sink"),
    (["--window", "many"], "not a whole number"),
    (["--frobnicate"], "unknown option"),
]
for extra, message in REFUSED:
    one_line_error(f"refused: {' '.join(extra)}", run(["stream", "--model", "tang", "--text", TEXT] + extra), 2,
                   message)
one_line_error("refused: no model", run(["stream", "--text", TEXT]), 2, "no model")
one_line_error("refused: --text and --text-file", run(["stream", "--model", "tang", "--text", TEXT,
                                                       "--text-file", lines]), 2, "give one text")
before = open(lines, "rb").read()
one_line_error("refused: the CSV over the text it reads",
               run(["stream", "--model", "tang", "--text-file", lines, "--csv", lines]), 2, lines)
check("the text file is left as it was", open(lines, "rb").read() == before)
common.finish()
