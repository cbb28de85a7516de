#!/usr/bin/env python3
"""Drives the attnlab binary as a user would: every bad invocation or file gets
a one-line message and the documented exit code; good ones work. Standard
library only."""
import json
import re
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, expect, run  # noqa: E402

ARGS = common.parse()
TMP = common.temp_folder("attnlab-cli-")
OUT = os.path.join(TMP, "t.safetensors")
PNG = os.path.join(TMP, "p.png")

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
    (["trace", "--mode", "sparse", "-o", OUT], "mode: 'sparse' is not mha, mqa, gqa or mla"),
    (["trace", "--seq", "0", "-o", OUT], "seq: 0 is out of range"),
    (["trace", "--seed", "abc", "-o", OUT], "seed: 'abc' is not a whole number"),
    (["trace", "--tokens", "a b", "--seq", "3", "-o", OUT], "seq (3) contradicts tokens"),
    (["trace", "--tokens", "a | | b", "-o", OUT], "tokens: row 2 has no tokens"),
    (["trace", "--tokens", b"a \xff b", "-o", OUT], "tokens: not valid UTF-8"),
    (["trace", "--tokens", "a <pad>", "-o", OUT], "'<pad>' is reserved"),
    # a stray byte in a model's text, which the tokenizer would read as U+FFFD and then <unk> (issue 21)
    (["trace", "--model", "brown", "--text", b"the \xffjury", "-o", OUT], "text: not valid UTF-8 at byte offset 4 (0xFF)"),
    (["generate", "--model", "tang", "--text", b"\xe5\xba"], "text: not valid UTF-8 at byte offset 0 (0xE5)"),
    (["trace", "--model", "brown", "--text", b"a|b\xc0\x80", "-o", OUT], "text: not valid UTF-8 at byte offset 3 (0xC0)"),
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
    (["info"], "expected one trace file (attnlab info FILE.safetensors) or --model NAME|DIR"),
    (["info", "a", "b"], "expected one trace file"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["--heads", "7"], "heads (7) must divide d_model (32)"),
    (["render", "--stage", "k_cache", "-o", PNG], "--stage: this trace has no stage 'k_cache' (it has x, w_q"),
    (["render", "--stage", "nonsense", "-o", PNG], "no stage 'nonsense'"),
    (["render", "--head", "4", "-o", PNG], "--head: 4 is out of range (h = 4: heads 0 to 3)"),
    (["render", "--head", "-1", "-o", PNG], "--head: '-1' is not a whole number"),
    (["render", "--batch-index", "2", "-o", PNG], "--batch-index: 2 is out of range (b = 2"),
    (["render", "--view", "wide", "-o", PNG], "--view: 'wide' is not single, grid, compare, geometry, training, tiles or experts"),
    (["render", "--view", "compare", "--compare", "x", "-o", PNG], "--compare: 'x' is not causal, padding, fill, window, keep_first, alibi, softcap, qk_norm, sink or mla_absorb"),
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
    # the settings around the scores (issue 33): a bad value or a combination without sense, one line
    (["trace", "--keep-first", "2", "-o", OUT], "keep_first: keeps the first keys beside a sliding window; set --sliding-window W too"),
    (["trace", "--keep-first", "-1", "-o", OUT], "keep_first: -1 is out of range (0 to 65536)"),
    (["trace", "--softcap", "-1", "-o", OUT], "softcap: must be 0 (off) or a number from 0.001 to 1e6 (got -1)"),
    (["render", "--softcap", "0.0001", "-o", PNG], "softcap: must be 0 (off) or a number from 0.001 to 1e6 (got 0.0001)"),
    (["trace", "--sink-logit", "nan", "-o", OUT], "sink_logit: 'nan' is not a usable number"),
    (["bench", "--sink-logit", "1e5"], "sink_logit: must be -inf (off) or a number from -1e4 to 1e4 (got 1e5)"),
    (["trace", "--alibi=1", "-o", OUT], "--alibi takes no value"),
    (["trace", "--alibi", "--tokens", "x y", "--source-tokens", "a b", "--no-causal", "-o", OUT],
     "alibi: its bias grows with the distance |i − j| inside one sequence; cross-attention's keys are another sequence"),
    (["trace", "--model", "tang", "--text", "床前", "--alibi", "-o", OUT],
     "alibi: a trained model's attention is the one it was trained with; this setting is for one attention layer"),
    (["bench", "--model", "tang", "--qk-norm"], "qk_norm: a trained model's attention is the one it was trained with"),
    (["generate", "--model", "tang", "--text", "床前", "--softcap", "30"], "softcap: a trained model's attention"),
    (["generate", "--model", "tang", "--text", "床前", "--sink-logit", "1"], "sink_logit: a trained model's attention"),
    (["trace", "--model", "tang", "--text", "床前明月光", "--keep-first", "1", "-o", OUT], "keep_first: keeps the first keys"),
    # multi-head latent attention (issue 33): what it has no use for, one line
    (["trace", "--mode", "mla", "--kv-heads", "2", "-o", OUT],
     "kv_heads: mode mla rebuilds a key and a value for every query head from one latent"),
    (["trace", "--kv-rank", "8", "-o", OUT], "kv_rank: belongs to multi-head latent attention; set --mode mla too"),
    (["render", "--mla-absorb", "-o", PNG], "mla_absorb: belongs to multi-head latent attention; set --mode mla too"),
    (["trace", "--mode", "mla", "--qk-norm", "-o", OUT], "qk_norm: mode mla has no key heads to normalise"),
    (["trace", "--mode", "mla", "--rope", "--rope-dim", "3", "-o", OUT], "rope_dim: RoPE turns pairs of features"),
    (["trace", "--mode", "mla", "--tokens", "x y", "--source-tokens", "a b", "--no-causal", "-o", OUT],
     "source_tokens: mode mla compresses a self-attention KV cache"),
    (["trace", "--mode", "mla", "--kv-rank", "-1", "-o", OUT], "kv_rank: -1 is out of range"),
    (["trace", "--model", "tang", "--text", "床前", "--mode", "mla", "-o", OUT],
     "mode mla: a trained model's attention is the one it was trained with"),
    (["generate", "--model", "tang", "--text", "床前", "--mode", "mla", "--kv-rank", "8"], "mode mla: a trained model's"),
    (["bench", "--mode", "mla", "--tiles", "8x8"], "the untraced tiled layer takes self-attention of tokens drawn "
     "from the seed, not --mode mla; trace it instead"),
    # FlashAttention's tiles: a bad shape, and what the untraced tiled bench does not take
    (["trace", "--tiles", "64", "-o", OUT], "tiles: '64' is not BQxBK (query rows x keys of a tile, e.g. 64x64) or 0"),
    (["trace", "--tiles", "0x4", "-o", OUT], "tiles: 0x4 is out of range (each from 1 to 65536)"),
    (["bench", "--tiles", "8x8", "--past", "2"], "the untraced tiled layer takes self-attention of tokens drawn from the "
     "seed, not --past; trace it instead"),
    (["bench", "--tiles", "8x8", "--seq", "16384", "--d-model", "256", "--memory-gib", "0.05"],
     "this untraced layer would need about 161 MiB, more than the 51 MiB limit (--memory-gib)"),
]
for args, msg in USAGE:
    expect(args, 2, msg)

# the settings around the scores run together, and the file and `info` say so
p = os.path.join(TMP, "modern.safetensors")
expect(["trace", "--alibi", "--softcap", "5", "--qk-norm", "--sink-logit", "0.5", "--sliding-window", "3",
        "--keep-first", "1", "--past", "2", "-o", p], 0, "wrote", stream="stdout")
r = expect(["info", p], 0, "kept first 1 · ALiBi on · softcap 5 · qk-norm on · sink logit 0.5", stream="stdout")
for stage in ("w_qn", "w_kn", "q_norm", "k_norm", "bias", "capped_scores", "sink_weight"):
    check(f"info lists {stage}", r is not None and f"  {stage} " in r.stdout.decode(), stage)
expect(["trace", "--model", "tang", "--text", "床前明月光", "--sliding-window", "2", "--keep-first", "1", "-o", p], 0,
       "wrote", stream="stdout")
# tiles: the trace keeps tile_max and tile_sum and says so; bench runs the layer untraced, and says what
# the traced one would hold
expect(["trace", "--tiles", "2x3", "--sink-logit", "1", "--train", "--past", "2", "-o", p], 0, "wrote", stream="stdout")
r = expect(["info", p], 0, "tiles 2x3 (online softmax)", stream="stdout")
for stage in ("tile_max", "tile_sum"):
    check(f"info lists {stage}", r is not None and f"  {stage} " in r.stdout.decode(), stage)
expect(["bench", "--tiles", "16x16", "--seq", "100", "--repeat", "1"], 0, "bench: ", stream="stdout")
expect(["bench", "--tiles", "16x16", "--seq", "100", "--repeat", "1"], 0, "the same layer traced would hold about",
       stream="stdout")
expect(["generate", "--model", "tang", "--text", "床前", "--max-new", "3", "--tiles", "4x4"], 0, "", stream="stdout")

# MLA: its stages and KV bytes in info; its weights read back with --weights give the same output
p = os.path.join(TMP, "mla.safetensors")
expect(["trace", "--mode", "mla", "--kv-rank", "12", "--rope-dim", "4", "--rope", "--past", "2", "-o", p], 0, "wrote",
       stream="stdout")
r = expect(["info", p], 0, "latent 12 + RoPE key 4 a token (naive)", stream="stdout")
check("info: MLA's KV bytes", r is not None and "KV cache: 64 B/token" in r.stdout.decode(), r and r.stdout.decode())
for stage in ("w_dkv", "w_uk", "w_uv", "w_kr", "q_nope", "q_pe", "c_kv", "k_pe", "k_nope", "v_up"):
    check(f"info lists {stage}", r is not None and f"  {stage} " in r.stdout.decode(), stage)
p2 = os.path.join(TMP, "mla2.safetensors")
expect(["trace", "--mode", "mla", "--kv-rank", "12", "--rope-dim", "4", "--rope", "--past", "2", "--mla-absorb",
        "--seed", "7", "--weights", p, "--input", p, "-o", p2], 0, "wrote", stream="stdout")
r2 = expect(["info", p2], 0, "(absorbed)", stream="stdout")
check("info: the absorbed stages", r2 is not None and "  q_latent " in r2.stdout.decode()
      and "  context_latent " in r2.stdout.decode() and "  k_nope " not in r2.stdout.decode())
_, a = common.read_st(p)
_, b = common.read_st(p2)
ha, hb = common.read_st(p)[0], common.read_st(p2)[0]
for name in ("w_dkv", "w_uk", "w_uv", "w_kr", "w_q", "c_kv"):
    ea, eb = ha[name]["data_offsets"], hb[name]["data_offsets"]
    check(f"--weights reads MLA's {name} back", a[ea[0]:ea[1]] == b[eb[0]:eb[1]], name)

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


header, body = common.read_st(good)


def with_header(h):
    return common.st_bytes(h, body, pad=False)


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
    ("notjson.safetensors", struct.pack("<Q", 9) + b"{not json" + body, "header: not valid JSON"),
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
# a model's info says what a traced pass holds, from the estimate the budget refuses with
r = expect(["info", "--model", "brown"], 0, "MiB per token at 128 tokens", stream="stdout")
said = re.search(r"; (\S+ \S+) at its context of 128 tokens, (\S+ \S+) with one layer's", r.stdout.decode())
r = expect(["trace", "--model", "brown", "--text", " ".join(["the"] * 127), "--memory-gib", "0.001", "-o", OUT], 2,
           "this trace would need about ")
check("info --model: the budget's own numbers", said is not None and
      f"about {said.group(1)}, and {said.group(2)} even with one layer's" in r.stderr.decode(), r.stderr.decode())
expect(["info", "--model", "no-such-model"], 1, "no such folder or shipped model")

for form, want in ([["--mask-value", "-inf"], "-inf"], [["--mask-value=-1e9"], "-1e+09"],
                   [["--mask-value", "-1e9"], "-1e+09"]):
    p = os.path.join(TMP, "mv.safetensors")
    expect(["trace"] + form + ["-o", p], 0, "wrote", stream="stdout")
    meta = common.read_st(p)[0]["__metadata__"]
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
# the read bound: the bytes of every matrix a step reads (each layer's seven, then the head: tang ties it to
# the embedding), from the file's own header
hdr = common.read_st(os.path.join(common.MODELS, "tang", "model.safetensors"))[0]
step_bytes = sum(e["data_offsets"][1] - e["data_offsets"][0] for k, e in hdr.items()
                 if k == "model.embed_tokens.weight" or (k.startswith("model.layers.") and k.endswith("proj.weight")))
m = re.search(r"^decode reads (\d+) MB of weights a token; read alone by the same threads they take ([0-9.]+) ms "
              r"\(([0-9.]+) GB/s, median of 3 passes, one after each step\): decode at ([0-9.]+)x that read bound$", r.stdout.decode(), re.M)
check("bench --generate: decode's read bound, of the step's bytes",
      m and int(m.group(1)) == round(step_bytes / 1e6) and float(m.group(2)) > 0, (step_bytes, r.stdout))
check("bench --model: the untraced prefill beside the traced pass",
      re.search(r"^prefill untraced: [0-9.]+ ms for \d+ tokens \(median of 2; min [0-9.]+, max [0-9.]+\), [0-9.]+ "
                r"tokens/s; traced/untraced [0-9.]+$", r.stdout.decode(), re.M), r.stdout)
m = re.search(r"^first pass / untraced [0-9.]+: it wrote (\d+) MiB of new memory \(\d+ (?:bytes|KiB|MiB) more as its masked "
              r"scores, logits and probs are read\), which this machine writes the "
              r"first time at ([0-9.]+) GB/s \(a fresh 256 MiB block\): about \d+ ms of the pass$", r.stdout.decode(), re.M)
check("bench --model: the first pass against the untraced prefill, with its new memory and the machine's rate",
      m and int(m.group(1)) >= 1 and float(m.group(2)) > 0, r.stdout)
r = expect(["bench", "--model", "tang", "--text", "a|b", "--repeat", "1"], 0, "not timed (it runs one text, not 2 rows)",
           stream="stdout")
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
# a model's rows: '|' between them, "\|" a bar and "\\" a backslash, so a row can end in one (issue 21)
for text, rows in (("the jury\\\\|said it", "(lengths 4, 3): <s> the jury <unk> | <s> said it"),
                   ("the jury\\|said it", "(lengths 6): <s> the jury <unk> said it"),
                   ("the \\jury|said", "(lengths 4, 2): <s> the <unk> jury | <s> said")):
    expect(["trace", "--model", "brown", "--text", text, "-o", OUT], 0, "wrote", stream="stdout")
    r = run(["info", OUT])
    check(f"--text {text!r}: rows {rows}", rows in r.stdout.decode(), r.stdout.decode())
r = expect(["trace", "--help"], 0, "'\\\\' a backslash", stream="stdout")
# a model whose tokenizer.json has a step that grows without bound, or a pattern that backtracks without end:
# refused as the file's problem (exit 1) naming the file and the step (issue 21, findings 5 and 6)
hdir = os.path.join(TMP, "hostile-tokenizer")
common.model_copy(hdir, "brown")
tok = json.load(open(os.path.join(hdir, "tokenizer.json")))
grow = {"type": "Replace", "pattern": {"Regex": ""}, "content": "a" * 100}
for step, text, msg in (
        ({"normalizer": {"type": "Sequence", "normalizers": [grow, grow]}}, "the jury",
         "tokenizer.json: normalizer step 2 (Replace) makes more than 15552 bytes of 908"),
        ({"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(x+x+)+y|\\S+"}, "behavior": "Isolated"}},
         "the jury said " + "x" * 25, "tokenizer.json: pre_tokenizer step 1 (Split): the pattern backtracks without end")):
    with open(os.path.join(hdir, "tokenizer.json"), "w") as f:
        json.dump({**tok, **step}, f)
    expect(["trace", "--model", hdir, "--text", text, "-o", OUT], 1, msg)

# a trace of an older attnlab, which cut its text at 63 bytes inside a character, still opens: read up to the cut
expect(["trace", "--model", "tang", "--text", "床前明月光", "-o", OUT], 0, "wrote", stream="stdout")
head, data = common.st_parts(OUT)
common.write_st(OUT, head.replace('"床前明月光"'.encode(), '"床前明月'.encode() + b'\xe5\x85 "'), data, pad=False)
expect(["info", OUT], 0, "text 床前明月 ·", stream="stdout")
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
r = run(["render", "-o", PNG], env={"FONTCONFIG_FILE": empty_conf})
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
    return run(["lessons"] + args, timeout=30, env={"XDG_STATE_HOME": state})


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

# another attnlab keeps the lock (stopped, or on a hung network folder): reset-progress waited for
# ever; now it waits a few seconds, says which file is locked, exits 1 and changes nothing
with open(prog, "w") as f:
    f.write('{"version": 1, "lessons": {"04.md": {"step": 7, "steps": 9}}}\n')
kept = open(prog).read()
holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); "
                           "fcntl.lockf(f, fcntl.LOCK_EX); print('locked', flush=True); sys.stdin.read()",
                           prog + ".lock"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
holder.stdout.readline()
t0 = time.monotonic()
try:
    r = lessons(["--reset-progress"], state)
    code, err = r.returncode, r.stderr.decode()
except subprocess.TimeoutExpired:
    code, err = None, "(still waiting after 30 s)"
took = time.monotonic() - t0
check(f"reset-progress while another process holds the lock: exit 1 within 3 + 2 s ({took:.1f} s)",
      code == 1 and took < 5, f"exit {code} after {took:.1f} s, stderr {err!r}")
check("reset-progress while locked: one line naming the locked file",
      err == f"attnlab lessons: progress not saved: progress file {prog} is locked by another attnlab "
             "(waited 3.0 s); nothing was reset: try again once it has finished\n", err)
check("reset-progress while locked: the file as it was", open(prog).read() == kept)
holder.stdin.close()
holder.wait(10)
r = lessons(["--reset-progress"], state)
check("reset-progress once the lock is free: exit 0, progress forgotten", r.returncode == 0 and
      json.load(open(prog))["lessons"] == {}, r.stderr.decode())

# a trace of three layers (the contract's layers.N.<stage>, made from a
# single-layer trace): --layer picks the layer, --stage reads in it
one = os.path.join(TMP, "one.safetensors")
run(["trace", "-o", one])
head, data = common.read_st(one)
meta = head.pop("__metadata__")
out_head, blobs, off = {"__metadata__": dict(meta, layers="3")}, [], 0
for layer in range(3):
    for name, e in head.items():
        blob = data[e["data_offsets"][0]:e["data_offsets"][1]]
        out_head[f"layers.{layer}.{name}"] = dict(e, data_offsets=[off, off + len(blob)])
        blobs.append(blob)
        off += len(blob)
three = common.write_st(os.path.join(TMP, "three.safetensors"), out_head, b"".join(blobs), pad=False)
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
r = run(["lessons", "--list", "--lang", "en"], timeout=30,
        env={"ATTNLAB_LESSONS": lessons_dir, "XDG_STATE_HOME": os.path.join(TMP, "st")})
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
def weights_only(path, b, h, s, t, meta=None):
    hdr = {"weights": {"dtype": "F32", "shape": [b, h, s, t], "data_offsets": [0, 4 * b * h * s * t]}}
    if meta:
        hdr["__metadata__"] = meta
    common.write_st(path, hdr, bytes(4 * b * h * s * t))
for shape in ((1, 2, 3, 3), (1, 2, 0, 0)):
    wpath = os.path.join(TMP, "weights-%d-%d-%d-%d.safetensors" % shape)
    weights_only(wpath, *shape)
    for view in ("single", "grid", "compare", "geometry"):
        expect(["render", wpath, "--view", view, "-o", os.path.join(TMP, "w.png")], 0)
# a trace of no heads or no batch rows is the file's problem when no flag asked for one (exit 1,
# naming the file); a --head or --batch-index it cannot have is the command line's (exit 2)
for shape, axis, flag in (((1, 0, 3, 3), "no heads (h = 0)", "--head"), ((0, 2, 3, 3), "no batch rows (b = 0)", "--batch-index")):
    wpath = os.path.join(TMP, "weights-%d-%d-%d-%d.safetensors" % shape)
    weights_only(wpath, *shape)
    for view in ("single", "grid"):
        r = expect(["render", wpath, "--view", view, "-o", os.path.join(TMP, "w.png")], 1, wpath + ": a broken trace")
        check("render names what the broken trace lacks: " + axis, axis in r.stderr.decode(), r.stderr)
        check("render of a broken trace says nothing of " + flag, flag not in r.stderr.decode(), r.stderr)
    expect(["render", wpath, flag, "0", "-o", os.path.join(TMP, "w.png")], 2, flag + ": 0 is out of range")
# a trace without the weights stage opens on its own first stage unless --stage asks for weights
xpath = common.write_st(os.path.join(TMP, "x-only.safetensors"),
                        {"x": {"dtype": "F32", "shape": [1, 3, 4], "data_offsets": [0, 48]}}, bytes(48))
expect(["render", xpath, "-o", os.path.join(TMP, "w.png")], 0)
expect(["render", xpath, "--stage", "weights", "-o", os.path.join(TMP, "w.png")], 2, "--stage: this trace has no stage 'weights'")

# info prints a file's text with its control characters escaped, never raw: a trace's
# metadata may clear the screen (ESC[2J), retitle the terminal (ESC]0;... BEL) or hold C1 and DEL
epath = os.path.join(TMP, "escapes\x1b[31m.safetensors")
weights_only(epath, 1, 1, 2, 2, {"tokens": json.dumps([["\x1b[2J", "b\u009b1m"]]), "model": "\x1b]0;pwned\x07",
                                 "text": "a\x7fb\tc"})
r = expect(["info", epath], 0, stream="stdout")
out = r.stdout
check("info writes no control character of the file", not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", out), out[:300])
for shown in (rb"\x1b[2J", rb"b\u009b1m", rb"\x1b]0;pwned\x07", rb"a\x7fb\x09c", rb"escapes\x1b[31m.safetensors"):
    check("info shows %r escaped" % shown, shown in out, out[:400])

# nor any file of a model folder the command reads, however the output is spelled (issue 21)
mdir = common.model_copy(os.path.join(TMP, "model-copy"))
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

# ---- model folders (issue 21) ----
TANG = os.path.join(common.MODELS, "tang")


def tang_copy(name, skip=()):
    return common.model_files(os.path.join(TMP, name), "tang", skip)


# a folder path of 4,083 bytes: config.json fits in the 4,095 a path may have,
# model.safetensors.index.json and tokenizer.json do not; cut, they would read
# the decoys model.safet (an index of shard w.st) and tokenizer.j, and load
deep = os.path.join(TMP, "deep")
while len(deep) < 4083:
    rest = 4083 - len(deep) - 1
    deep = os.path.join(deep, "d" * (rest if rest <= 200 else 150 if rest - 200 < 2 else 200))
os.makedirs(deep)
shutil.copy(os.path.join(TANG, "config.json"), deep)
shutil.copy(os.path.join(TANG, "model.safetensors"), os.path.join(deep, "w.st"))
shutil.copy(os.path.join(TANG, "tokenizer.json"), os.path.join(deep, "tokenizer.j"))
with open(os.path.join(deep, "model.safet"), "w") as f:
    json.dump({"weight_map": {k: "w.st" for k in common.read_st(os.path.join(TANG, "model.safetensors"))[0]
                              if k != "__metadata__"}}, f)
r = expect(["generate", "--model", deep, "--text", "春眠", "--max-new", "3"], 1,
           "/model.safetensors.index.json: the path is 4112 bytes, longer than the 4095 a path may have")
check("a folder path too long for its files: named by its ends", "…" in r.stderr.decode(), r.stderr)

# a tensor in two shards: refused, naming both (one copy would win silently)
d = tang_copy("two-shards", skip=("model.safetensors",))
h, data = common.read_st(os.path.join(TANG, "model.safetensors"))
names = sorted(k for k in h if k != "__metadata__")
def write_shard(path, keys):
    out, blobs, off = {}, [], 0
    for k in keys:
        b0, b1 = h[k]["data_offsets"]
        out[k] = dict(h[k], data_offsets=[off, off + b1 - b0])
        blobs.append(data[b0:b1])
        off += b1 - b0
    common.write_st(path, out, b"".join(blobs))
half = len(names) // 2
write_shard(os.path.join(d, "a.safetensors"), names[:half])
write_shard(os.path.join(d, "b.safetensors"), names[half:] + [names[0]])
with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
    json.dump({"weight_map": {k: "a.safetensors" if i < half else "b.safetensors" for i, k in enumerate(names)}}, f)
expect(["generate", "--model", d, "--text", "春眠", "--max-new", "3"], 1,
       f"tensor '{names[0]}' is in two shards, a.safetensors and b.safetensors")

# a vocabulary key that is not UTF-8: refused, naming the file and the token's id
d = tang_copy("bad-utf8", skip=("tokenizer.json",))
tok = open(os.path.join(TANG, "tokenizer.json"), "rb").read()
key = [k for k, v in json.loads(tok)["model"]["vocab"].items() if v == 100][0]
spelled = [sp for sp in (json.dumps(key, ensure_ascii=False).encode() + b":", json.dumps(key).encode() + b":")
           if tok.count(sp) == 1][0]  # as the file spells it: UTF-8 or \\u escapes
with open(os.path.join(d, "tokenizer.json"), "wb") as f:
    f.write(tok.replace(spelled, b'"\xff\xfe":'))
expect(["generate", "--model", d, "--text", "春眠", "--max-new", "3"], 1,
       "bad-utf8/tokenizer.json: vocab entry of id 100 is not valid UTF-8 (byte 0xFF at offset 0 of 2)")

# a vocab_size larger than the tokenizer (DeepSeek-V3: 129,280 vs 128,815): the ids without a token
# are never drawn, even at T = 100 where the draws spread over the whole vocabulary
d = tang_copy("holes", skip=("tokenizer.json",))
tok = json.loads(open(os.path.join(TANG, "tokenizer.json"), "rb").read())
tok["model"]["vocab"] = {k: v for k, v in tok["model"]["vocab"].items() if v < 2048}
with open(os.path.join(d, "tokenizer.json"), "w") as f:
    json.dump(tok, f, ensure_ascii=False)
for seed in ("1", "2", "3"):
    r = expect(["generate", "--model", d, "--text", "春眠", "--max-new", "40", "--temperature", "100", "--seed", seed,
                "--probs"], 0, " → ", stream="stdout")
    ids = [int(line.split("\t")[1]) for line in r.stdout.decode().splitlines() if line.count("\t") == 2]
    check(f"generate at T = 100, seed {seed}: 40 tokens (or up to </s>), none without a token",
          (len(ids) == 40 or ids[-1:] == [2]) and max(ids) < 2048, ids)

# config.json's values of the wrong kind, or given twice, are refused: never the default instead
tang_cfg = open(os.path.join(TANG, "config.json")).read()
for i, (change, msg) in enumerate((
        (('"rope_theta": 10000.0', '"rope_theta": "10000"'), "config.json: 'rope_theta' must be a number, not a string"),
        (('"max_position_embeddings": 128', '"max_position_embeddings": "x"'),
         "config.json: 'max_position_embeddings' must be a number, not a string (\"x\")"),
        (('"rms_norm_eps": 1e-05', '"rms_norm_eps": "1e-5"'), "config.json: 'rms_norm_eps' must be a number"),
        (('"tie_word_embeddings": true', '"tie_word_embeddings": "true"'),
         "config.json: 'tie_word_embeddings' must be true or false, not a string"),
        (('"num_hidden_layers": 4', '"num_hidden_layers": -4'), "'num_hidden_layers' must be a whole number from 1"),
        (('"rope_theta": 10000.0', '"rope_theta": 10000.0, "rope_theta": 500000.0'),
         "config.json: key 'rope_theta' appears twice"))):
    assert change[0] in tang_cfg
    d = tang_copy(f"kind{i}", skip=("config.json",))
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write(tang_cfg.replace(*change))
    expect(["generate", "--model", d, "--text", "春眠", "--max-new", "3"], 1, msg)

# NaN and infinities (issue 21): a model whose weights hold one is refused, naming the file and
# the tensor; one whose products overflow traces with a warning naming the first stage that holds
# one, and generating refuses to sample from its NaN logits; the unguarded softmax's NaN rows, a
# pitfall shown on purpose, are no warning
def rewrite_tensor(path, name, values_of):
    """Stores tensor `name` of a safetensors file as F32, its values replaced by values_of(values)."""
    header, data = common.read_st(path)
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
    common.write_st(path, out, b"".join(parts))


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
# which non-finite value comes first (−inf, +inf or NaN, from inf − inf) depends on the order of the
# kernel's sums: the warning must name one of them and the stage


def expect_overflow(args, command):
    r = expect(args, 0, first)
    warned = re.search(r"attnlab %s: warning: (NaN|[+-]inf) %s" % (command, re.escape(first)), r.stderr.decode())
    check(" ".join(args) + ": the warning names the value and the stage", warned, r.stderr)
    return r


r = expect_overflow(["trace", "--model", overflow, "--text", "床前", "-o", OUT], "trace")
check("a trace holding NaN is still written", r.returncode == 0 and os.path.getsize(OUT) > 0)
# info describes a trace without reading its tensors (finding 4), so it does not look for NaN: render does
expect_overflow(["render", OUT, "--stage", "layers.1.weights", "-o", PNG], "render")
expect_overflow(["render", "--model", overflow, "--text", "床前", "-o", PNG], "render")
for args in (["trace", "--pad-side", "left", "--no-softmax-guard", "-o", OUT], ["info", OUT],
             ["trace", "--model", mdir, "--text", "床前", "-o", OUT], ["info", OUT],
             # the online softmax's running max is −∞ in a padded row until it meets a visible key
             ["trace", "--model", mdir, "--text", "床前明月光|春", "--pad-side", "left", "--tiles", "2x2", "-o", OUT]):
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

# A large F16 trace and --memory-gib (issue 21): its tensors widen to float32 in memory, so a
# command that draws it estimates that first and refuses it over the budget, in one line, before
# allocating; `info` widens nothing. The file is sparse: 64 MiB declared, no disk used.
def peak_run(args):
    """(exit code, peak RSS in bytes, stderr, stdout) of attnlab ARGS, measured in a child of its own."""
    r = subprocess.run([sys.executable, "-c", "import resource, subprocess, sys; "
                        "r = subprocess.run(sys.argv[1:], capture_output=True); "
                        "sys.stderr.buffer.write(r.stderr); sys.stdout.buffer.write(r.stdout); "
                        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)",
                        ARGS.attnlab, *args], capture_output=True, timeout=120)
    *lines, last = r.stderr.decode(errors="replace").rstrip("\n").split("\n")
    code, kib = last.split()
    return int(code), int(kib) * 1024, "".join(line + "\n" for line in lines), r.stdout.decode(errors="replace")


sparse = os.path.join(TMP, "sparse-f16.safetensors")
shape = [1, 8, 2048, 2048]  # 64 MiB of F16, 128 MiB as float32
common.write_st(sparse, {"weights": {"dtype": "F16", "shape": shape, "data_offsets": [0, 2 * 8 * 2048 * 2048]}})
os.truncate(sparse, os.path.getsize(sparse) + 2 * 8 * 2048 * 2048)
MIB = 1 << 20
rss = "" if not asan else " (peak RSS not measured under ASan)"
# (render's 1280 × 800 picture counts against the limit too, issue 37)
for cmd, limit in ((["render", "--memory-gib", "0.1", sparse, "-o", PNG],
                    "the 87 MiB that the 102 MiB limit (--memory-gib) leaves besides the picture (16 MiB)"),
                   (["view", "--memory-gib", "0.1", sparse], "the 102 MiB limit (--memory-gib)")):
    code, peak, err, _ = peak_run(cmd)
    check(f"{cmd[0]} --memory-gib 0.1 of a 64 MiB F16 trace: refused up front in one line, low peak{rss}",
          code == 1 and err == f"attnlab {cmd[0]}: {sparse}: as float32 its F16 tensors would take about 128 MiB of "
          f"memory, more than {limit}\n" and (asan or peak < 64 * MIB),
          f"exit {code}, peak {peak // MIB} MiB, stderr {err!r}")
code, peak, err, out = peak_run(["info", sparse])
check(f"info of a 64 MiB F16 trace widens nothing{rss}", code == 0 and "read into memory as float32 when drawn" in out
      and (asan or peak < 64 * MIB), f"exit {code}, peak {peak // MIB} MiB, stderr {err!r}")
code, peak, err, _ = peak_run(["render", "--memory-gib", "0.5", sparse, "-o", PNG])
check(f"render --memory-gib 0.5 of it: drawn, holding one float32 copy (128 MiB), not two{rss}",
      code == 0 and (asan or peak < 192 * MIB), f"exit {code}, peak {peak // MIB} MiB, stderr {err!r}")

# A model's weights cut short while `generate` reads them (issue 21): one line naming the file,
# exit 1, never death by SIGBUS (exit 135, returncode -7). Every step reads the weights from
# the mapped file. The cut is made once the weights are mapped and
# read (the process is stopped meanwhile); a run that ended first, or whose cut came before
# the header was read (then the file is merely too short), is tried again with another delay.
def cut_while_running(args, path, env, source):
    outcome = None
    for delay in (0.03, 0.01, 0.06, 0.0, 0.1):
        shutil.copyfile(source, path)
        p = subprocess.Popen([ARGS.attnlab, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=dict(os.environ, **env))
        mapped, end = False, time.monotonic() + 20
        while not mapped and p.poll() is None and time.monotonic() < end:
            try:
                with open(f"/proc/{p.pid}/maps") as f:
                    mapped = path in f.read()
            except OSError:
                break
        if mapped:
            time.sleep(delay)
            p.send_signal(signal.SIGSTOP)
            os.truncate(path, 4096)
            p.send_signal(signal.SIGCONT)
        out, err = p.communicate(timeout=60)
        outcome = (mapped, p.returncode, err.decode(errors="replace"))
        if mapped and p.returncode not in (0, 2) and "lie beyond" not in outcome[2]:
            break
    return outcome


mcut = common.model_copy(os.path.join(TMP, "model-cut"))
weights, whole = os.path.join(mcut, "model.safetensors"), os.path.join(TMP, "tang-weights.safetensors")
shutil.copyfile(weights, whole)
mapped, code, err = cut_while_running(["generate", "--model", mcut, "--text", "春眠不觉晓", "--max-new", "100",
                                       "--temperature", "1.5", "--seed", "5"], weights, {},
                                      whole)
check("generate, its weights cut short while it runs: exit 1, one line naming the file",
      mapped and code == 1 and err.count("\n") == 1 and err.startswith(f"attnlab generate: {weights}: the file became "
                                                                      "shorter while attnlab was reading it"),
      f"mapped {mapped}, exit {code}, stderr {err!r}")

# ---- training checkpoints: DIR/checkpoints/step<N>/, each a model folder (train_model.py --checkpoints) ----
def checkpointed_model():
    """A models folder holding `ck`: tang with two snapshots, step 0 with every 128th weight set to 0.5."""
    root = os.path.join(TMP, "ck-models")
    d = common.model_copy(os.path.join(root, "ck"))
    for step in (25, 0):
        common.snapshot(d, step)
    step0 = os.path.join(d, "checkpoints", "step0", "model.safetensors")
    head, data = common.st_parts(step0)
    data = bytearray(data)
    for i in range(0, len(data) - 1, 256):
        data[i:i + 2] = struct.pack("<e", 0.5)
    common.write_st(step0, head, bytes(data), pad=False)
    os.makedirs(os.path.join(d, "checkpoints", "step50"))   # no config.json: not a snapshot
    return root, d


ck_root, ck = checkpointed_model()
r = run(["models"], env={"ATTNLAB_MODELS": ck_root})
check("models lists a model's checkpoint steps", r.returncode == 0 and
      b"checkpoints at steps 0, 25 (--checkpoint N)" in r.stdout, r.stdout + r.stderr)
traces = {}
for how, args in (("by step", ["--model", ck, "--checkpoint", "25"]),
                  ("as a folder", ["--model", os.path.join(ck, "checkpoints", "step25")]),
                  ("step 0", ["--model", ck, "--checkpoint", "0"])):
    out = os.path.join(TMP, f"ck-{len(traces)}.safetensors")
    expect(["trace", *args, "--text", "床前明月光", "-o", out], 0, "wrote", stream="stdout")
    traces[how] = open(out, "rb").read() if os.path.exists(out) else b""
check("--checkpoint 25 traces what --model DIR/checkpoints/step25 does; step 0's weights give another trace",
      traces["by step"] == traces["as a folder"] != traces["step 0"] and traces["by step"], "")
expect(["render", "--model", ck, "--checkpoint", "0", "--text", "床前明月光", "-o", PNG], 0, "wrote", stream="stdout")
expect(["trace", "--model", ck, "--checkpoint", "50", "--text", "床前", "-o", OUT], 2,
       f"checkpoint: model '{ck}' has no step 50 (its steps: 0, 25)")
expect(["render", "--model", "tang", "--checkpoint", "3", "--text", "床前", "-o", PNG], 2,
       "checkpoint: model 'tang' has no training checkpoints")
expect(["trace", "--checkpoint", "3", "-o", OUT], 2, "--checkpoint needs --model")

# render --checkpoint draws the training panel from checkpoints/metrics.json, and the step in its header
# (the SVG's text layer holds what was drawn); a broken metrics.json is one warning line and no panel.
metrics = os.path.join(ck, "checkpoints", "metrics.json")
with open(metrics, "w") as f:
    json.dump({"snapshots": [{"step": s, "train_loss": 5.0 - s / 25, "heldout_loss": 5.2 - s / 25, "heads": [
        {"layer": l, "head": h, "-1": 0.1 + s / 50 * (l == 2 and h == 3), "first": 0.2, "induction": 0.05}
        for l in range(4) for h in range(4)]} for s in (0, 25)]}, f)
SVG = os.path.join(TMP, "ck.svg")
svg_text = lambda: " ".join(e.text or "" for e in ET.parse(SVG).iter("{http://www.w3.org/2000/svg}text"))
r = run(["render", "--model", ck, "--checkpoint", "0", "--text", "床前明月光", "--size", "1280x800", "-o", SVG])
words = svg_text() if r.returncode == 0 else ""
check("render --checkpoint draws the training panel and names the step",
      r.returncode == 0 and not r.stderr and "training step 0 of 25" in words and "loss, nats/token:" in words
      and "previous-token weight over training" in words and "step 0 (j J)" in words, r.stderr + words.encode())
with open(metrics, "w") as f:
    f.write('{"snapshots": [{"step": 0}]}')
r = run(["render", "--model", ck, "--checkpoint", "25", "--text", "床前明月光", "--size", "1280x800", "-o", SVG])
err = r.stderr.decode(errors="replace")
words = svg_text() if r.returncode == 0 else ""
check("a broken metrics.json: one line naming the file, the picture without the panel",
      r.returncode == 0 and err.count("\n") == 1 and f"{metrics}: " in err and "heads" in err
      and "loss, nats/token:" not in words and "training step 25 (j J)" in words, err + words)
os.remove(metrics)
expect(["trace", "--model", ck, "--checkpoint", "x", "-o", OUT], 2, "checkpoint")

common.finish()
