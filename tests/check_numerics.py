#!/usr/bin/python3
"""Independent float64 reference check of attnlab traces (contract "attnlab-trace/1").

Usage: /usr/bin/python3 tests/check_numerics.py --attnlab PATH/TO/attnlab [--workdir DIR] [-v]

For every config in CONFIGS this runs `attnlab trace FLAGS -o FILE.safetensors`, reads the trace with
the small reader below (stdlib + numpy only), recomputes every pipeline stage in float64 from the
recorded inputs (x, x_past, memory, w_q, w_k, w_v, w_o, and w_qn, w_kn with QK-norm) and the metadata,
and compares every tensor.
The mask and fully_masked_rows are derived independently from causal/past/pad_side/lengths.
A handful of invalid configs must make attnlab exit non-zero.

Written from the contract only (no knowledge of the C sources).
Prints one line per config and, last, "N passed, M failed"; exits 0 iff M == 0.
"""
import json
import math
import os
import shlex
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check  # noqa: E402

RTOL = 1e-4          # |got - want| <= RTOL * max(1, |want|)


# ----------------------------------------------------------------------------- safetensors reader
def read_safetensors(path):
    """Return (tensors: name -> float32 ndarray, metadata: dict, header: dict, data_len: int)."""
    header, data = common.read_st(path)
    meta = header.pop("__metadata__", None) or {}
    tensors = {}
    for name, info in header.items():
        if info.get("dtype") != "F32":
            raise ValueError("tensor %s has dtype %r, expected F32" % (name, info.get("dtype")))
        b, e = info["data_offsets"]
        shape = tuple(int(v) for v in info["shape"])
        if not (0 <= b <= e <= len(data)) or e - b != 4 * int(np.prod(shape, dtype=np.int64)):
            raise ValueError("tensor %s: bad data_offsets %r for shape %r" % (name, [b, e], shape))
        tensors[name] = np.frombuffer(data, dtype="<f4", count=(e - b) // 4, offset=b).reshape(shape)
    return tensors, meta, header, len(data)


# ----------------------------------------------------------------------------- configs
T_ZH = "你 是 一 只 猫 娘 | 我 爱 AI"                                    # lengths 6, 3
T_EN3 = "the cat sat on the mat | a dog | hello world again now"          # 6, 2, 4
T_ONE = "一 二 三 四 五"                                                   # 5
T_ZH2 = "我 爱 猫 娘 和 狗 | 你 好"                                        # 6, 2
T_MIX = "猫 娘 说 喵 | cats say meow too | 是"                             # 4, 4, 1
S_EN = "I am a cat | I love AI very much indeed"                          # 4, 6
S_ZH3 = "源 句 子 | 另 一 个 源 句 子 很 长 | 短"                            # 3, 8, 1


def tok(t):
    return ["--tokens", t]


def src(t):
    return ["--source-tokens", t]


def f(s):
    return shlex.split(s)


M32 = f("--d-model 32 --heads 4")
CONFIGS = [
    # defaults (causal, right pad, no rope, -inf, past 0, dropout 0.1 inactive, seed 42)
    tok(T_ZH),
    f("--seq 8 --batch 2"),
    # MHA / MQA / GQA x causal x padding side
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --causal --pad-side right"),
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --causal --pad-side left"),
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --no-causal --pad-side right"),
    # padding mask switched off: the <pad> keys get weight
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --no-pad-mask --pad-side left"),
    tok(T_EN3) + M32 + f("--kv-heads 4 --mode mha --no-causal --no-pad-mask --pad-side right"),
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --no-causal --pad-side left"),
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --causal --pad-side left --seed 7"),
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --no-causal --pad-side right --seed 7"),
    tok(T_EN3) + M32 + f("--kv-heads 1 --mode mqa --causal --pad-side right"),
    tok(T_EN3) + M32 + f("--kv-heads 1 --mode mqa --no-causal --pad-side left"),
    tok(T_ZH2) + f("--d-model 64 --heads 8 --kv-heads 8 --mode mha --pad-side left"),
    tok(T_ZH2) + f("--d-model 64 --heads 8 --kv-heads 4 --mode gqa --pad-side left --seed 3"),
    tok(T_ZH2) + f("--d-model 64 --heads 8 --kv-heads 2 --mode gqa --no-causal --pad-side right"),
    tok(T_ZH2) + f("--d-model 64 --heads 8 --kv-heads 1 --mode mqa --causal --pad-side left"),
    tok(T_MIX) + f("--d-model 48 --heads 6 --kv-heads 3 --mode gqa --pad-side left --seed 11"),
    tok(T_MIX) + f("--d-model 16 --heads 2 --kv-heads 1 --mode mqa --no-causal"),
    tok(T_MIX) + f("--d-model 12 --heads 4 --kv-heads 2 --mode gqa --pad-side left"),  # head_dim 3
    # RoPE
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --rope --rope-theta 10000"),
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --rope --rope-theta 500 --pad-side left"),
    tok(T_EN3) + M32 + f("--kv-heads 1 --mode mqa --rope --rope-theta 1000000 --no-causal"),
    tok(T_ZH2) + f("--d-model 64 --heads 8 --kv-heads 2 --mode gqa --rope --rope-theta 10000 --pad-side left"),
    tok(T_MIX) + f("--d-model 24 --heads 4 --kv-heads 2 --mode gqa --rope --rope-theta 50 --seed 5"),  # head_dim 6
    tok(T_MIX) + f("--d-model 24 --heads 4 --kv-heads 2 --mode gqa --rope --rope-style half --seed 5"),
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --past 3 --rope --rope-style half --pad-side left"),
    tok(T_ONE) + f("--d-model 32 --heads 2 --kv-heads 2 --mode mha --rope"),
    # past (KV cache)
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --past 2"),
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --past 3 --rope --pad-side left"),
    tok(T_ZH) + M32 + f("--kv-heads 1 --mode mqa --past 1 --rope --rope-theta 100 --no-causal"),
    tok(T_EN3) + f("--d-model 64 --heads 8 --kv-heads 4 --mode gqa --past 4 --rope --rope-theta 1000 --pad-side left"),
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --past 2 --pad-side right --mask-value -1e9"),
    tok(T_ONE) + M32 + f("--kv-heads 4 --mode mha --past 4"),                 # single decode query
    tok(T_ONE) + M32 + f("--kv-heads 2 --mode gqa --past 4 --rope --no-causal"),
    tok(T_ZH2) + M32 + f("--kv-heads 2 --mode gqa --past 1 --rope --pad-side left --mask-value=-1e9"),
    tok(T_EN3) + M32 + f("--kv-heads 4 --mode mha --past 3 --rope --pad-side right --seed 21"),  # pads inside the cache
    # cross-attention
    tok(T_ZH) + src(S_EN) + M32 + f("--kv-heads 4 --mode mha --no-causal"),
    tok(T_ZH) + src(S_EN) + M32 + f("--kv-heads 2 --mode gqa --no-causal --pad-side left"),
    tok(T_ZH) + src(S_EN) + M32 + f("--kv-heads 1 --mode mqa --no-causal --mask-value -1e9"),
    tok(T_MIX) + src(S_ZH3) + f("--d-model 64 --heads 8 --kv-heads 2 --mode gqa --no-causal --pad-side left --seed 9"),
    tok(T_MIX) + src(S_ZH3) + f("--d-model 48 --heads 4 --kv-heads 4 --mode mha --no-causal"),
    tok("我 爱 AI") + src("猫") + f("--d-model 16 --heads 4 --kv-heads 2 --mode gqa --no-causal --no-rope"),
    # fill values
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --pad-side left --mask-value -1e9"),
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --pad-side left --mask-value=-1e9 --rope"),
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --no-causal --mask-value -1e9"),
    tok(T_MIX) + M32 + f("--kv-heads 4 --mode mha --pad-side left --mask-value -10000"),
    tok(T_MIX) + M32 + f("--kv-heads 4 --mode mha --pad-side left --mask-value -inf"),
    # seeds
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --seed 1"),
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --seed 12345 --pad-side left"),
    # synthetic / larger
    f("--seq 16 --batch 3 --d-model 64 --heads 8 --kv-heads 2 --mode gqa --rope"),
    f("--seq 12 --batch 2 --d-model 32 --heads 4 --kv-heads 4 --mode mha --pad-side left --seed 2"),
    f("--seq 64 --batch 1 --d-model 128 --heads 8 --kv-heads 8 --mode mha"),
    f("--seq 64 --batch 2 --d-model 128 --heads 8 --kv-heads 2 --mode gqa --rope --rope-theta 10000 --pad-side left"),
    f("--seq 64 --batch 3 --d-model 128 --heads 4 --kv-heads 1 --mode mqa --past 16 --rope"),
    f("--seq 32 --batch 2 --d-model 64 --heads 4 --kv-heads 2 --mode gqa --past 8 --no-causal --mask-value -1e9"),
    f("--seq 5 --batch 1 --d-model 8 --heads 2 --kv-heads 1 --mode mqa"),
    f("--seq 24 --batch 2 --d-model 96 --heads 12 --kv-heads 3 --mode gqa --rope --rope-theta 20000 --past 5 "
      "--pad-side left --train --dropout 0.15 --seed 8"),
    # training / dropout
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --train --dropout 0.1"),
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --train --dropout 0.5 --pad-side left"),
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --train --dropout 0.2 --past 2 --rope"),
    tok(T_ZH) + src(S_EN) + M32 + f("--kv-heads 4 --mode mha --no-causal --train --dropout 0.3"),
    f("--seq 32 --batch 3 --d-model 64 --heads 8 --kv-heads 4 --mode gqa --train --dropout 0.25 --seed 99"),
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --train"),                   # default dropout 0.1
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --dropout 0.3"),             # eval: no dropout
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --train --dropout 0"),       # p = 0: no dropout
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --train --dropout 0.4 --pad-side left --mask-value -1e9"),
    # sliding window (Mistral's with the causal mask, Longformer's two-sided without), with padding,
    # the KV cache, RoPE and GQA; a window longer than the sequence changes nothing
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --sliding-window 2 --pad-side left"),
    tok(T_EN3) + M32 + f("--kv-heads 4 --mode mha --sliding-window 3 --no-causal --pad-side right"),
    tok(T_ZH) + M32 + f("--kv-heads 1 --mode mqa --sliding-window 3 --past 2 --rope"),
    tok(T_EN3) + M32 + f("--kv-heads 2 --mode gqa --sliding-window 1 --no-causal --past 1 --mask-value -1e9"),
    tok(T_MIX) + M32 + f("--kv-heads 4 --mode mha --sliding-window 64"),
    f("--seq 24 --batch 2 --d-model 64 --heads 4 --kv-heads 2 --mode gqa --sliding-window 5 --past 6"),
    # teaching pitfalls: the reversed (tril) causal mask, and scores without 1/√k
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --reversed-causal --pad-side left --mask-value -1e9"),
    tok(T_EN3) + M32 + f("--kv-heads 4 --mode mha --reversed-causal --past 2 --rope"),
    tok(T_ZH) + f("--d-model 64 --heads 2 --kv-heads 2 --mode mha --no-scale"),
    f("--seq 12 --batch 2 --d-model 256 --heads 1 --no-scale --no-causal"),
    # the unguarded softmax: rows with every key masked are NaN, and so are their context and out rows
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --pad-side left --no-softmax-guard"),
    tok(T_EN3) + M32 + f("--kv-heads 4 --mode mha --reversed-causal --no-softmax-guard"),
    tok(T_ZH) + M32 + f("--kv-heads 1 --mode mqa --pad-side left --no-softmax-guard --train --dropout 0.3"),
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --pad-side left --no-softmax-guard --mask-value -1e9"),
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --no-softmax-guard"),      # right padding: no NaN
    # the settings around the scores (issue 33), alone and with the others
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --alibi --pad-side left --past 2"),
    tok(T_ZH2) + f("--d-model 96 --heads 12 --kv-heads 4 --mode gqa --alibi --no-causal"),
    tok(T_EN3) + M32 + f("--kv-heads 4 --mode mha --softcap 1.5 --rope --past 1"),
    tok(T_ZH) + M32 + f("--kv-heads 1 --mode mqa --qk-norm --rope --rope-style half --past 3 --pad-side left"),
    tok(T_ZH) + src(S_EN) + M32 + f("--kv-heads 2 --mode gqa --qk-norm --softcap 2 --sink-logit 0.5 --no-causal"),
    tok(T_ZH) + M32 + f("--kv-heads 2 --mode gqa --sink-logit 1 --pad-side left --no-softmax-guard"),
    tok(T_ZH) + M32 + f("--kv-heads 4 --mode mha --sink-logit -2 --pad-side left --mask-value -1e9 --alibi"),
    f("--seq 16 --batch 2 --d-model 32 --heads 4 --kv-heads 2 --mode gqa --sliding-window 3 --keep-first 2 --past 5"),
    f("--seq 12 --batch 1 --d-model 32 --heads 4 --sliding-window 2 --keep-first 1 --no-causal --alibi --softcap 3 --sink-logit 0"),
    # multi-head latent attention (issue 33), naive and absorbed, with the other settings
    tok(T_ZH) + M32 + f("--mode mla --kv-rank 12 --rope-dim 4 --rope --past 2 --pad-side left"),
    tok(T_EN3) + M32 + f("--mode mla --kv-rank 6 --rope-dim 2 --rope --rope-style half --mla-absorb --alibi --past 1"),
    tok(T_ZH) + M32 + f("--mode mla --kv-rank 20 --rope-dim 3 --mla-absorb --no-causal --softcap 2 --sink-logit 0.5"),
    f("--seq 10 --batch 2 --d-model 32 --heads 2 --mode mla --mla-absorb --rope --sliding-window 3 --keep-first 1 --train --dropout 0.3"),
]

# configs attnlab must reject (non-zero exit)
INVALID = [
    tok(T_ZH) + src(S_EN) + M32 + f("--causal"),
    tok(T_ZH) + src(S_EN) + M32 + f("--reversed-causal"),
    tok(T_ZH) + src(S_EN) + M32 + f("--no-causal --rope"),
    tok(T_ZH) + src(S_EN) + M32 + f("--no-causal --past 1"),
    tok(T_ZH) + src(S_EN) + M32 + f("--no-causal --sliding-window 2"),
    tok(T_ZH) + M32 + f("--sliding-window -1"),
    tok(T_ZH) + src("only one row") + M32 + f("--no-causal"),
    tok(T_ZH) + f("--d-model 32 --heads 3 --kv-heads 3 --mode mha"),
    tok(T_ZH) + f("--d-model 32 --heads 4 --kv-heads 3 --mode gqa"),
    tok(T_ZH) + M32 + f("--keep-first 2"),
    tok(T_ZH) + src(S_EN) + M32 + f("--no-causal --alibi"),
    tok(T_ZH) + M32 + f("--softcap -1"),
    tok(T_ZH) + M32 + f("--kv-rank 8"),
    tok(T_ZH) + M32 + f("--mode mla --kv-heads 2"),
    tok(T_ZH) + src(S_EN) + M32 + f("--mode mla --no-causal"),
]


# ----------------------------------------------------------------------------- flag parsing (ours)
DEFAULTS = dict(causal="true", scale=True, softmax_guard=True, pad_side="right", pad_mask=True, rope=False, mask_value=float("-inf"), past=0, sliding_window=0,
                dropout=0.1, train=False, seed=42, keep_first=0, alibi=False, softcap=0.0, qk_norm=False,
                sink_logit=float("-inf"), mla_absorb=False)


def parse_flags(flags):
    """What we asked for: dict of expected settings (only those we know)."""
    want = dict(DEFAULTS)
    it = iter(flags)
    for a in it:
        if "=" in a and a.startswith("--"):
            a, v = a.split("=", 1)
        elif a in ("--causal", "--no-causal", "--reversed-causal", "--no-scale", "--no-softmax-guard", "--rope", "--no-rope", "--train",
                   "--pad-mask", "--no-pad-mask", "--alibi", "--qk-norm", "--mla-absorb"):
            v = None
        else:
            v = next(it)
        if a == "--tokens":
            want["tokens"] = v
        elif a == "--source-tokens":
            want["source_tokens"] = v
        elif a == "--seq":
            want["seq"] = int(v)
        elif a == "--batch":
            want["batch"] = int(v)
        elif a == "--d-model":
            want["d_model"] = int(v)
        elif a == "--heads":
            want["heads"] = int(v)
        elif a == "--kv-heads":
            want["kv_heads"] = int(v)
        elif a == "--mode":
            want["mode"] = v
        elif a in ("--causal", "--no-causal", "--reversed-causal"):
            want["causal"] = {"--causal": "true", "--no-causal": "false", "--reversed-causal": "reversed"}[a]
        elif a == "--no-scale":
            want["scale"] = False
        elif a == "--no-softmax-guard":
            want["softmax_guard"] = False
        elif a == "--pad-side":
            want["pad_side"] = v
        elif a in ("--pad-mask", "--no-pad-mask"):
            want["pad_mask"] = a == "--pad-mask"
        elif a in ("--rope", "--no-rope"):
            want["rope"] = a == "--rope"
        elif a == "--rope-theta":
            want["rope_theta"] = float(v)
        elif a == "--rope-style":
            want["rope_style"] = v
        elif a == "--mask-value":
            want["mask_value"] = float(v)
        elif a == "--past":
            want["past"] = int(v)
        elif a == "--sliding-window":
            want["sliding_window"] = int(v)
        elif a == "--dropout":
            want["dropout"] = float(v)
        elif a == "--train":
            want["train"] = True
        elif a == "--seed":
            want["seed"] = int(v)
        elif a == "--keep-first":
            want["keep_first"] = int(v)
        elif a in ("--alibi", "--qk-norm"):
            want[a[2:].replace("-", "_")] = True
        elif a == "--softcap":
            want["softcap"] = float(v)
        elif a == "--sink-logit":
            want["sink_logit"] = float(v)
        elif a in ("--kv-rank", "--rope-dim"):
            want[a[2:].replace("-", "_")] = int(v)
        elif a == "--mla-absorb":
            want["mla_absorb"] = True
        else:
            raise ValueError("unknown flag in config: " + a)
    return want


def split_rows(text):
    return [r.split() for r in text.split("|")]


# ----------------------------------------------------------------------------- checking helpers
class Fail(Exception):
    pass


class Checker:
    def __init__(self):
        self.fails = []

    def fail(self, what, reason):
        self.fails.append("%s: %s" % (what, reason))

    def require(self, cond, what, reason):
        if not cond:
            self.fail(what, reason)
        return cond

    def compare(self, name, got, want, exact=False):
        """Elementwise |got-want| <= RTOL*max(1,|want|); -inf must match -inf; NaN must match NaN."""
        if got is None:
            return self.fail(name, "missing tensor")
        if tuple(got.shape) != tuple(want.shape):
            return self.fail(name, "shape %s, expected %s" % (list(got.shape), list(want.shape)))
        g = got.astype(np.float64)
        w = np.asarray(want, dtype=np.float64)
        gnan, wnan = np.isnan(g), np.isnan(w)
        if (gnan != wnan).any():
            idx = tuple(int(i) for i in np.argwhere(gnan != wnan)[0])
            return self.fail(name, "NaN mismatch at %s: got %r expected %r (%d cells)"
                             % (list(idx), float(g[idx]), float(w[idx]), int((gnan != wnan).sum())))
        g, w = np.where(wnan, 0.0, g), np.where(wnan, 0.0, w)
        ginf, winf = np.isinf(g), np.isinf(w)
        bad = (ginf | winf) & ~((g == w) & ginf & winf)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return self.fail(name, "inf mismatch at %s: got %r expected %r (%d cells)"
                             % (list(idx), float(g[idx]), float(w[idx]), int(bad.sum())))
        fin = ~winf
        err = np.zeros_like(w)
        err[fin] = np.abs(g[fin] - w[fin])
        if exact:
            bad = err > 0
        else:
            bad = err > RTOL * np.maximum(1.0, np.abs(np.where(fin, w, 0.0)))
        if bad.any():
            rel = err / np.maximum(1.0, np.abs(np.where(fin, w, 0.0)))
            idx = tuple(int(i) for i in np.unravel_index(np.argmax(rel), rel.shape))
            return self.fail(name, "max err %.3g (scaled %.3g) at %s: got %.9g expected %.9g (%d/%d cells off)"
                             % (err[idx], rel[idx], list(idx), g[idx], w[idx], int(bad.sum()), bad.size))


# stages where an unguarded softmax's NaN rows may appear (checked cell by cell against the reference)
NAN_OK = ("weights", "weights_dropout", "context", "merged", "out")


def softmax_rows(z):
    """Max-subtracted softmax over the last axis, float64; rows of all -inf -> zeros."""
    m = np.max(z, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(z - m)
    s = e.sum(axis=-1, keepdims=True)
    return np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)


def dropout_check(ck, name, got, base, p, min_abs):
    """Each cell of `got` must be 0 or base/(1-p). Also a loose binomial check on the drop rate."""
    scaled = base / (1.0 - p)
    if got is None:
        return ck.fail(name, "missing tensor")
    if tuple(got.shape) != tuple(base.shape):
        return ck.fail(name, "shape %s, expected %s" % (list(got.shape), list(base.shape)))
    g = got.astype(np.float64)
    nan = np.isnan(base)                 # an unguarded softmax's NaN rows: x·0 and x/(1-p) stay NaN
    if (np.isnan(g) != nan).any() or not np.isfinite(g[~nan]).all():
        return ck.fail(name, "non-finite values where the reference has none, or NaN cells that differ (%d cells)"
                       % int(((np.isnan(g) != nan) | (~nan & ~np.isfinite(g))).sum()))
    g, base = np.where(nan, 0.0, g), np.where(nan, 0.0, base)
    zero = g == 0.0
    err = np.where(zero, 0.0, np.abs(g - scaled))
    lim = RTOL * np.maximum(1.0, np.abs(scaled))
    bad = err > lim
    if bad.any():
        idx = tuple(int(i) for i in np.unravel_index(np.argmax(err / lim), err.shape))
        return ck.fail(name, "cell neither 0 nor value/(1-p): at %s got %.9g, value/(1-p)=%.9g (value %.9g), "
                       "%d cells off, max err %.3g" % (list(idx), g[idx], scaled[idx], base[idx],
                                                       int(bad.sum()), err[idx]))
    live = np.abs(base) > min_abs        # cells where a zero unambiguously means "dropped"
    n = int(live.sum())
    if n >= 50:
        frac = float(zero[live].mean())
        sd = math.sqrt(p * (1 - p) / n)
        if abs(frac - p) > 6 * sd + 0.01:
            ck.fail(name, "drop rate %.3f over %d cells, expected p=%.3f (+-%.3f)" % (frac, n, p, 6 * sd + 0.01))


# ----------------------------------------------------------------------------- reference model
def mla_reference(F, P, s, h, k, R, D, scale, absorb, rope):
    """DeepSeek-V2/V3's multi-head latent attention without the latent norm, in float64: each query
    head [q_nope | q_pe], the latent c_kv = [x_past ; x]·W_DKV and the RoPE key k_pe = RoPE([x_past ;
    x]·W_KR) shared by the heads, k_nope and v_up = c_kv·W_UK, c_kv·W_UV per head, and scores
    (q_nope·k_nopeᵀ + q_pe·k_peᵀ)/√(k + D); absorbed, q_latent = q_nope·W_UKᵀ per head. rope: the
    rotation, or None. Returns the stages, the scores and the values the weights read."""
    x = F("x")
    xall = np.concatenate([F("x_past"), x], axis=1) if P else x
    b, t = x.shape[0], xall.shape[1]
    ref = {"q": x @ F("w_q")}
    qh = ref["q"].reshape(b, s, h, k + D).transpose(0, 2, 1, 3)
    q_nope, q_pe = qh[..., :k], qh[..., k:]
    ckv, kpe = xall @ F("w_dkv"), (xall @ F("w_kr"))[:, None]  # (b, t, R), (b, 1, t, D)
    if rope:
        q_pe, kpe = rope(q_pe, P + np.arange(s)), rope(kpe, np.arange(t))
    wuk, wuv = F("w_uk").reshape(R, h, k), F("w_uv").reshape(R, h, k)
    k_nope = np.einsum("btr,rhc->bhtc", ckv, wuk)
    v_up = np.einsum("btr,rhc->bhtc", ckv, wuv)
    ref.update(q_nope=q_nope, q_pe=q_pe, c_kv=ckv, k_pe=kpe[:, 0])
    if absorb:
        ref["q_latent"] = np.einsum("bhsc,rhc->bhsr", q_nope, wuk)
    else:
        ref.update(k_nope=k_nope, v_up=v_up)
    scores = (q_nope @ k_nope.transpose(0, 1, 3, 2) + q_pe @ kpe.transpose(0, 1, 3, 2)) / \
        (math.sqrt(k + D) if scale else 1.0)
    ref["scores"] = scores
    return ref, scores, v_up


def check_trace(path, want):
    ck = Checker()
    try:
        T, meta, header, data_len = read_safetensors(path)
    except Exception as e:          # noqa: BLE001
        ck.fail("file", "cannot read safetensors: %s" % e)
        return ck.fails

    # ---- layout: contiguous, in file order
    order = sorted(header, key=lambda n: header[n]["data_offsets"][0])
    pos = 0
    for n in order:
        b, e = header[n]["data_offsets"]
        if b != pos:
            ck.fail("file", "tensor %s starts at %d, expected contiguous %d" % (n, b, pos))
            break
        pos = e
    ck.require(pos == data_len, "file", "data section is %d bytes, tensors cover %d" % (data_len, pos))

    # ---- metadata
    for key in ("format", "attention", "batch", "seq", "d_model", "heads", "kv_heads", "head_dim", "mode",
                "causal", "scale", "softmax_guard", "pad_side", "lengths", "rope", "rope_theta", "mask_value", "past", "dropout",
                "train", "seed", "tokens", "fully_masked_rows", "stages"):
        if key not in meta:
            ck.fail("metadata", "missing key %r" % key)
    bad_types = [k for k, v in meta.items() if not isinstance(v, str)]
    ck.require(not bad_types, "metadata", "non-string values for %s" % bad_types)
    if ck.fails:
        return ck.fails
    try:
        cross = meta["attention"] == "cross"
        b_, L = int(meta["batch"]), int(meta["seq"])
        d, h, g, k = int(meta["d_model"]), int(meta["heads"]), int(meta["kv_heads"]), int(meta["head_dim"])
        P = int(meta["past"])
        W = int(meta.get("sliding_window", "0"))
        causal = meta["causal"]
        scale = meta.get("scale", "true") == "true"
        guard = meta.get("softmax_guard", "true") == "true"
        pad_side = meta["pad_side"]
        pad_mask = meta.get("pad_mask", "true") == "true"
        lengths = json.loads(meta["lengths"])
        rope = meta["rope"] == "true"
        theta = float(meta["rope_theta"])
        rope_half = meta.get("rope_style", "interleaved") == "half"
        fill = float(meta["mask_value"])
        keep = int(meta.get("keep_first", "0"))
        alibi = meta.get("alibi", "false") == "true"
        cap = float(meta.get("softcap", "0"))
        qk_norm = meta.get("qk_norm", "false") == "true"
        sink = float(meta.get("sink_logit", "-inf"))
        mla = meta["mode"] == "mla"  # multi-head latent attention: R, D, and which path
        R, D = int(meta.get("kv_rank", "0")), int(meta.get("rope_dim", "0"))
        absorb = meta.get("mla_absorb", "false") == "true"
        p = float(meta["dropout"])
        train = meta["train"] == "true"
        tokens = json.loads(meta["tokens"])
        fmr = json.loads(meta["fully_masked_rows"])
        stages = json.loads(meta["stages"])
        if cross:
            src_tokens = json.loads(meta["source_tokens"])
            src_lengths = json.loads(meta["source_lengths"])
    except Exception as e:          # noqa: BLE001
        ck.fail("metadata", "cannot parse: %r" % e)
        return ck.fails

    ck.require(meta["format"] == "attnlab-trace/1", "metadata", "format %r" % meta["format"])
    ck.require(meta["attention"] in ("self", "cross"), "metadata", "attention %r" % meta["attention"])
    ck.require(cross == ("source_tokens" in want), "metadata", "attention %r but source tokens %s"
               % (meta["attention"], "given" if "source_tokens" in want else "not given"))
    ck.require(causal in ("true", "false", "reversed"), "metadata", "causal=%r" % causal)
    for key in ("scale", "softmax_guard", "rope", "train"):
        ck.require(meta[key] in ("true", "false"), "metadata", "%s=%r not true/false" % (key, meta[key]))
    ck.require(pad_side in ("right", "left"), "metadata", "pad_side %r" % pad_side)
    ck.require(meta["mode"] in ("mha", "mqa", "gqa", "mla"), "metadata", "mode %r" % meta["mode"])
    ck.require(k * h == d, "metadata", "head_dim %d * heads %d != d_model %d" % (k, h, d))
    ck.require(g >= 1 and h % g == 0, "metadata", "kv_heads %d does not divide heads %d" % (g, h))
    exp_mode = "mla" if mla else "mha" if g == h else ("mqa" if g == 1 else "gqa")
    ck.require(meta["mode"] == exp_mode, "metadata", "mode %r but heads=%d kv_heads=%d" % (meta["mode"], h, g))
    # what we asked for vs what the trace says
    actual = dict(causal=causal, scale=scale, softmax_guard=guard, pad_side=pad_side, pad_mask=pad_mask, rope=rope, past=P, sliding_window=W, dropout=p, train=train,
                  seed=int(meta["seed"]), batch=b_, seq=L, d_model=d, heads=h, kv_heads=g, mode=meta["mode"],
                  rope_theta=theta, rope_style="half" if rope_half else "interleaved", keep_first=keep, alibi=alibi,
                  softcap=cap, qk_norm=qk_norm, sink_logit=sink, kv_rank=R, rope_dim=D, mla_absorb=absorb)
    for key, val in actual.items():
        if key in want:
            ok = val == want[key] or (isinstance(val, float) and abs(val - want[key]) <= 1e-6 * abs(want[key]))
            ck.require(ok, "metadata", "%s=%r, asked for %r" % (key, meta[key], want[key]))
    ck.require(fill == want["mask_value"], "metadata", "mask_value=%r, asked for %r" % (meta["mask_value"], want["mask_value"]))
    if math.isinf(fill):
        ck.require(meta["mask_value"] == "-inf", "metadata", "mask_value %r, expected \"-inf\"" % meta["mask_value"])

    # ---- tokens / lengths
    def check_rows(label, rows, lens, width, given):
        if not ck.require(isinstance(rows, list) and len(rows) == b_ and all(isinstance(r, list) and len(r) == width for r in rows),
                          "metadata", "%s is not %d rows of %d tokens: %r" % (label, b_, width, rows)):
            return False
        if not ck.require(isinstance(lens, list) and len(lens) == b_ and all(isinstance(n, int) and 1 <= n <= width for n in lens),
                          "metadata", "%s lengths %r invalid for %d rows of width %d" % (label, lens, b_, width)):
            return False
        if given is not None:
            ck.require(len(given) == b_, "metadata", "%s: %d rows, asked for %d" % (label, b_, len(given)))
            ck.require(width == max(len(r) for r in given), "metadata",
                       "%s padded length %d, expected %d" % (label, width, max(len(r) for r in given)))
            ck.require(lens == [len(r) for r in given], "metadata", "%s lengths %r, expected %r" % (label, lens, [len(r) for r in given]))
        for bi in range(b_):
            n = lens[bi]
            real = rows[bi][:n] if pad_side == "right" else rows[bi][width - n:]
            pads = rows[bi][n:] if pad_side == "right" else rows[bi][:width - n]
            if not ck.require(all(x == "<pad>" for x in pads) and all(x != "<pad>" for x in real), "metadata",
                              "%s row %d %r: pads not at %s side for length %d" % (label, bi, rows[bi], pad_side, n)):
                return False
            if given is not None and bi < len(given):
                ck.require(real == given[bi], "metadata", "%s row %d real tokens %r, expected %r" % (label, bi, real, given[bi]))
        return True

    given = split_rows(want["tokens"]) if "tokens" in want else None
    if not check_rows("tokens", tokens, lengths, L, given):
        return ck.fails
    t_src = None
    if cross:
        gsrc = split_rows(want["source_tokens"])
        t_src = len(src_tokens[0]) if src_tokens and isinstance(src_tokens[0], list) else 0
        if not check_rows("source_tokens", src_tokens, src_lengths, t_src, gsrc):
            return ck.fails
        ck.require(P == 0 and causal == "false" and not rope, "metadata", "cross-attention with past/causal/rope")
    if not ck.require(0 <= P < L, "metadata", "past %d not in [0, seq=%d)" % (P, L)):
        return ck.fails
    s = L - P
    t = t_src if cross else L
    n_new = t if cross else s

    # ---- tensor set and order
    expected = ["x"] + (["x_past"] if P > 0 else []) + (["memory"] if cross else []) + \
        ["w_q", "w_k", "w_v", "w_o"] + (["w_qn", "w_kn"] if qk_norm else []) + \
        ["q", "k", "v", "q_heads", "k_heads", "v_heads"] + (["q_norm", "k_norm"] if qk_norm else []) + \
        (["q_rope", "k_rope"] if rope else []) + (["k_cache", "v_cache"] if P > 0 else []) + \
        ["k_expanded", "v_expanded", "scores"] + (["bias"] if alibi else []) + (["capped_scores"] if cap > 0 else []) + \
        ["mask", "masked_scores", "weights"] + (["sink_weight"] if sink != -math.inf else []) + \
        (["weights_dropout"] if train and p > 0 else []) + ["context", "merged", "out"]
    if mla:  # its own weights and stages up to the scores; the latent context when absorbed
        expected = ["x"] + (["x_past"] if P > 0 else []) + ["w_q", "w_o", "w_dkv", "w_uk", "w_uv", "w_kr", "q", "q_nope",
                   "q_pe", "c_kv", "k_pe"] + (["q_latent"] if absorb else ["k_nope", "v_up"]) + expected[expected.index("scores"):]
        if absorb:
            expected.insert(expected.index("context"), "context_latent")
    missing = [n for n in expected if n not in T]
    extra = [n for n in T if n not in expected]
    ck.require(not missing, "tensors", "missing %s" % missing)
    ck.require(not extra, "tensors", "unexpected %s" % extra)
    if not missing and not extra:
        ck.require(order == expected, "tensors", "file order %s, expected %s" % (order, expected))
    for name, arr in T.items():
        if np.isnan(arr).any() and (guard or name not in NAN_OK):
            ck.fail(name, "contains NaN (%d cells)" % int(np.isnan(arr).sum()))
    # stages metadata: list of {"name","dims","desc","formula"} in pipeline order
    if ck.require(isinstance(stages, list) and all(isinstance(st, dict) for st in stages), "metadata", "stages not a list of objects"):
        for st in stages:
            miss = [kk for kk in ("name", "dims", "desc", "formula") if kk not in st]
            if miss:
                ck.fail("metadata", "stage %r lacks %s" % (st.get("name"), miss))
                break
        snames = [st.get("name") for st in stages]
        in_file = [n for n in snames if n in T]
        ck.require(in_file == [n for n in order if n in snames], "metadata",
                   "stages order %s differs from tensor order" % snames)
        ck.require(set(snames) <= set(T) , "metadata", "stages name tensors not in file: %s" % sorted(set(snames) - set(T)))

    # ---- input shapes
    shapes = dict(x=(b_, s, d), x_past=(b_, P, d), memory=(b_, t, d), w_q=(d, d), w_k=(d, g * k),
                  w_v=(d, g * k), w_o=(d, d))
    if mla:
        del shapes["w_k"], shapes["w_v"]
        shapes.update(w_q=(d, h * (k + D)), w_dkv=(d, R), w_uk=(R, h * k), w_uv=(R, h * k), w_kr=(d, D))
    for name, shp in shapes.items():
        if name in T and T[name].shape != shp:
            ck.fail(name, "shape %s, expected %s" % (list(T[name].shape), list(shp)))
    if any(n not in T or T[n].shape != shapes[n] for n in shapes if n not in ("x_past", "memory")) or \
            (P > 0 and ("x_past" not in T or T["x_past"].shape != shapes["x_past"])) or \
            (cross and ("memory" not in T or T["memory"].shape != shapes["memory"])):
        return ck.fails
    for name in shapes:
        if name in T and not np.isfinite(T[name]).all():
            ck.fail(name, "non-finite input values")
    if ck.fails:
        return ck.fails

    # ---- float64 recomputation
    F = lambda n: T[n].astype(np.float64)      # noqa: E731
    x, wq, wo = F("x"), F("w_q"), F("w_o")
    wk, wv = (None, None) if mla else (F("w_k"), F("w_v"))
    srcx = F("memory") if cross else x
    q = x @ wq
    kk = None if mla else srcx @ wk
    vv = None if mla else srcx @ wv

    def heads(a, nh):
        return a.reshape(a.shape[0], a.shape[1], nh, k).transpose(0, 2, 1, 3)

    def apply_rope(a, positions):
        k = a.shape[-1]  # a head's k features, or MLA's D
        half = np.arange(k // 2, dtype=np.float64)
        inv = theta ** (-2.0 * half / k)
        ang = np.asarray(positions, dtype=np.float64)[:, None] * inv[None, :]
        c, sn = np.cos(ang), np.sin(ang)
        y = a.copy()
        if rope_half:  # Hugging Face's rotate_half: pairs (m, m + k/2)
            ia, ib = np.arange(k // 2), np.arange(k // 2) + k // 2
        else:          # Meta's interleaved pairs (2m, 2m + 1)
            ia, ib = np.arange(k // 2) * 2, np.arange(k // 2) * 2 + 1
        x0, x1 = a[..., ia], a[..., ib]
        y[..., ia] = x0 * c - x1 * sn
        y[..., ib] = x0 * sn + x1 * c
        return y

    def rms(a, gain):  # QK-norm: each head over its k features, eps 1e-6, a plain gain
        return a / np.sqrt((a * a).mean(axis=-1, keepdims=True) + 1e-6) * gain

    if mla:
        ref, scores, ve = mla_reference(F, P, s, h, k, R, D, scale, absorb, apply_rope if rope else None)
    else:
        qh, kh, vh = heads(q, h), heads(kk, g), heads(vv, g)
        ref = dict(q=q, k=kk, v=vv, q_heads=qh, k_heads=kh, v_heads=vh)
        if qk_norm:
            if "w_qn" not in T or "w_kn" not in T or T["w_qn"].shape != (k,) or T["w_kn"].shape != (k,):
                ck.fail("w_qn", "QK-norm's gains missing or not (k,)")
                return ck.fails
            qh, kh = rms(qh, F("w_qn")), rms(kh, F("w_kn"))
            ref["q_norm"], ref["k_norm"] = qh, kh
        qq, kn = qh, kh
        if rope:
            qq = apply_rope(qh, P + np.arange(s))
            kn = apply_rope(kh, P + np.arange(s))
            ref["q_rope"], ref["k_rope"] = qq, kn
        kfull, vfull = kn, vh
        if P > 0:
            xp = F("x_past")
            kp, vp = heads(xp @ wk, g), heads(xp @ wv, g)
            if qk_norm:
                kp = rms(kp, F("w_kn"))
            if rope:
                kp = apply_rope(kp, np.arange(P))
            kfull = np.concatenate([kp, kn], axis=2)
            vfull = np.concatenate([vp, vh], axis=2)
            ref["k_cache"], ref["v_cache"] = kfull, vfull
        grp = np.arange(h) // (h // g)
        ke, ve = kfull[:, grp], vfull[:, grp]
        ref["k_expanded"], ref["v_expanded"] = ke, ve
        scores = qq @ ke.transpose(0, 1, 3, 2) / (math.sqrt(k) if scale else 1.0)
        ref["scores"] = scores
    pre = scores
    if alibi:  # BLOOM's slopes: 2^(-8(i+1)/p) for the largest power of two p <= h, then 2p's odd ones
        p2 = 1 << (h.bit_length() - 1)
        slopes = [2.0 ** (-8.0 * (i + 1) / p2) for i in range(p2)] + \
                 [2.0 ** (-8.0 * (2 * i + 1) / (2 * p2)) for i in range(h - p2)]
        dist = np.abs((P + np.arange(s))[:, None] - np.arange(t)[None, :])
        ref["bias"] = np.broadcast_to(-np.asarray(slopes)[:, None, None] * dist, (b_, h, s, t))
        pre = pre + ref["bias"]
    if cap > 0:  # soft-capping after the scale and the bias, before the mask
        pre = ref["capped_scores"] = cap * np.tanh(pre / cap)

    # mask from our own reading of causal / past / padding
    key_len, key_lens = (t, src_lengths) if cross else (L, lengths)
    jj = np.arange(key_len)
    keypad = np.zeros((b_, key_len), dtype=bool)
    for bi in range(b_):
        n = key_lens[bi]
        keypad[bi] = jj >= n if pad_side == "right" else jj < key_len - n
    if not pad_mask:                                          # padding mask switched off: pads are ordinary keys
        keypad[:] = False
    allowed = np.broadcast_to(~keypad[:, None, :], (b_, s, t)).copy()
    if causal == "true":                                      # keys up to the query's own position
        allowed &= (jj[None, :] <= (P + np.arange(s))[:, None])[None]
    elif causal == "reversed":                                # the tril pitfall: the query's position and later
        allowed &= (jj[None, :] >= (P + np.arange(s))[:, None])[None]
    if W > 0:                                                 # sliding window: the W nearest keys
        dist = (P + np.arange(s))[:, None] - jj[None, :]      # query position − key position
        near = dist < W if causal == "true" else np.abs(dist) < W
        near |= jj[None, :] < keep                            # StreamingLLM: the first keys stay
        allowed &= near[None]
    mask = np.where(allowed, 0.0, fill)[:, None, :, :]
    ref["mask"] = mask
    masked = pre + mask
    ref["masked_scores"] = masked
    full_rows = ~allowed.any(axis=2)                          # (b, s)
    my_fmr = [[int(bi), int(i)] for bi, i in np.argwhere(full_rows)]

    has_sink = sink != -math.inf
    if has_sink:  # one more logit X per row, dropped after the softmax: never 0/0
        top = np.maximum(masked.max(axis=-1, keepdims=True), sink)
        e = np.exp(masked - top)
        z = e.sum(axis=-1, keepdims=True) + np.exp(sink - top)
        weights, ref["sink_weight"] = e / z, (np.exp(sink - top) / z)[..., 0]
    else:
        weights = softmax_rows(masked)
    if not guard and math.isinf(fill) and not has_sink:      # 0/0 where every key is -inf
        weights[np.broadcast_to(full_rows[:, None, :], weights.shape[:3])] = np.nan
    if not math.isinf(fill) and full_rows.any() and not has_sink and "masked_scores" in T and \
            T["masked_scores"].shape == masked.shape:
        # Finite fill, every key masked: "ordinary arithmetic". In float32, score + (-1e9) collapses to
        # (nearly) the same value everywhere, so the result is (nearly) uniform -- something float64 cannot
        # reproduce from the unrounded scores. For these rows only, use the softmax of the trace's own
        # float32 masked_scores (which were themselves checked against our masked_scores above).
        ms = T["masked_scores"].astype(np.float64)
        rows = np.broadcast_to(full_rows[:, None, :], weights.shape[:3])
        weights[rows] = softmax_rows(ms[rows])
    ref["weights"] = weights

    for name in ("q", "k", "v", "q_heads", "k_heads", "v_heads", "q_norm", "k_norm", "q_rope", "k_rope", "k_cache",
                 "v_cache", "k_expanded", "v_expanded", "q_nope", "q_pe", "c_kv", "k_pe", "k_nope", "v_up", "q_latent",
                 "scores", "bias", "capped_scores", "sink_weight"):
        if name in ref:
            ck.compare(name, T.get(name), ref[name])
    ck.compare("mask", T.get("mask"), mask, exact=True)
    ck.compare("masked_scores", T.get("masked_scores"), masked)
    ck.compare("weights", T.get("weights"), weights)
    # invariants on the engine's weights
    W = T.get("weights")
    if W is not None and W.shape == weights.shape:
        W64 = W.astype(np.float64)
        sums = W64.sum(axis=-1)
        want_sums = np.where(full_rows[:, None, :] & math.isinf(fill), 0.0 if guard else np.nan, 1.0) * np.ones(sums.shape)
        if has_sink:  # rows sum to 1 − the sink's share, fully masked ones to 0 (the sink takes all)
            want_sums = 1.0 - ref["sink_weight"]
        dev = np.where(np.isnan(want_sums) & np.isnan(sums), 0.0, np.abs(sums - want_sums))
        if not (np.nan_to_num(dev, nan=1.0) <= 1e-4).all():
            idx = tuple(int(i) for i in np.unravel_index(np.argmax(np.nan_to_num(dev, nan=1.0)), sums.shape))
            ck.fail("weights", "row sum %.7g at %s, expected %g" % (sums[idx], list(idx), want_sums[idx]))
        live = np.broadcast_to((~allowed & ~full_rows[:, :, None])[:, None], W.shape)
        if (W64[live] != 0).any():
            idx = tuple(int(i) for i in np.argwhere(live & (W64 != 0))[0])
            ck.fail("weights", "masked cell not exactly 0 at %s: %r" % (list(idx), float(W64[idx])))
        if (W64 < 0).any():
            ck.fail("weights", "negative weights")
        if not math.isinf(fill) and abs(fill) >= 1e9 and full_rows.any() and not has_sink:
            # float32 spacing at |fill| >= 1e9 is >= 64, so score + fill collapses to one value: uniform
            rows = np.broadcast_to(full_rows[:, None, :], W.shape[:3])
            dev = np.abs(W64[rows] - 1.0 / t).max()
            ck.require(dev <= 1e-4, "weights", "fully masked rows with finite fill not uniform (max |w - 1/t| = %.3g)" % dev)

    use_w = weights
    drop = train and p > 0
    if drop:
        dropout_check(ck, "weights_dropout", T.get("weights_dropout"), weights, p, 1e-6)
        WD = T.get("weights_dropout")
        if WD is not None and WD.shape == weights.shape and (np.isnan(WD) == np.isnan(weights)).all() and \
                np.isfinite(WD[~np.isnan(weights)]).all():
            use_w = WD.astype(np.float64)    # random mask: continue from the engine's (checked) cells
    context = use_w @ ve
    if mla and absorb:  # weights · c_kv, per head: W_UV comes after it
        ck.compare("context_latent", T.get("context_latent"), use_w @ ref["c_kv"][:, None])
    ck.compare("context", T.get("context"), context)
    merged = context.transpose(0, 2, 1, 3).reshape(b_, s, d)
    ck.compare("merged", T.get("merged"), merged)
    out = merged @ wo
    if drop:
        dropout_check(ck, "out", T.get("out"), out, p, 1e-3)
    else:
        ck.compare("out", T.get("out"), out)
    ck.require(isinstance(fmr, list) and sorted(map(list, fmr)) == my_fmr, "metadata",
               "fully_masked_rows %s, expected %s" % (meta["fully_masked_rows"], json.dumps(my_fmr)))
    return ck.fails


# ----------------------------------------------------------------------------- driver
def trace_fails(exe, flags, out):
    """What is wrong with `attnlab trace FLAGS -o OUT` and the trace it writes ([] when nothing)."""
    if os.path.exists(out):
        os.remove(out)
    try:
        r = subprocess.run([exe, "trace"] + flags + ["-o", out], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return ["run: %s" % e]
    if r.returncode != 0:
        return ["run: exit %d, stderr: %s" % (r.returncode, r.stderr.decode("utf-8", "replace").strip()[:2000])]
    if not os.path.exists(out):
        return ["run: exit 0 but no trace file written"]
    try:
        return check_trace(out, parse_flags(flags))
    except Exception as e:      # noqa: BLE001  (a checker crash is a failure, not a pass)
        return ["checker: %s: %s" % (type(e).__name__, e)]


def rejection(exe, flags, out):
    """Why `attnlab trace FLAGS -o OUT` of an invalid config is not a clean rejection (None when it is)."""
    try:
        rc = subprocess.run([exe, "trace"] + flags + ["-o", out], capture_output=True, timeout=60).returncode
    except (OSError, subprocess.TimeoutExpired) as e:
        return "run: %s" % e
    if rc == 0:
        return "invalid config accepted (exit 0), expected an error"
    if rc < 0:
        return "invalid config crashed with signal %d" % -rc
    return None


def main():
    ap = common.parser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", help="directory for trace files (default: a temp dir, removed afterwards unless a check failed)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every failure, not just the first")
    args = common.parse(ap)
    exe = os.path.abspath(args.attnlab)
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        work = args.workdir
    else:
        work = common.temp_folder("attnlab-numref-")
    common.say_ok = True
    t0 = time.time()
    for ci, flags in enumerate(CONFIGS):
        fails = trace_fails(exe, flags, os.path.join(work, "trace_%02d.safetensors" % ci))
        more = " (+%d more)" % (len(fails) - 1) if len(fails) > 1 and not args.verbose else ""
        rest = "".join("\n       %s" % x for x in fails[1:]) if args.verbose else ""
        check(shlex.join(flags), not fails, (fails[0] if fails else "") + more + rest)
        sys.stdout.flush()
    for ci, flags in enumerate(INVALID):
        why = rejection(exe, flags, os.path.join(work, "invalid_%02d.safetensors" % ci))
        check(shlex.join(flags) + " (rejected)", why is None, why)
        sys.stdout.flush()
    print("# %.1f s" % (time.time() - t0), file=sys.stderr)
    common.finish()


if __name__ == "__main__":
    main()
