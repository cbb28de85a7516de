#!/usr/bin/env python3
"""Stage-by-stage comparison of `attnlab trace` against PyTorch.

Each stage is recomputed in float64 with PyTorch's own idioms (nn.functional
projections, view/transpose head splits, llama's complex-number RoPE,
repeat_interleave for repeat_kv, torch.triu masks, torch.softmax) from the
inputs recorded in the trace, and compared within 1e-4 relative. Needs Debian's
python3-torch; without it the script exits 77, which ctest reports as skipped."""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check  # noqa: E402

try:
    import numpy as np
    import torch
except ImportError:
    print("torch is not installed (apt-get install python3-torch): skipped")
    sys.exit(77)

ARGS = common.parse()
TMP = common.temp_folder("attnlab-torch-")
common.say_ok = True
torch.set_default_dtype(torch.float64)


def load(path):
    header, data = common.read_st(path)
    meta = header.pop("__metadata__")
    t = {k: torch.from_numpy(np.frombuffer(data[e["data_offsets"][0]:e["data_offsets"][1]], "<f4")
                             .reshape(e["shape"]).astype(np.float64)) for k, e in header.items()}
    return t, meta


def rope(x, start, theta, half=False):
    """llama's apply_rotary_emb: pairs (2i, 2i+1) as complex numbers times e^(i·pos·θ^(−2i/k)).
    half: Hugging Face's rotate_half, x·cos + rotate_half(x)·sin with pairs (i, i + k/2)."""
    k = x.shape[-1]
    if half:
        inv = 1.0 / (theta ** (torch.arange(0, k, 2, dtype=torch.float64) / k))
        ang = torch.outer(torch.arange(start, start + x.shape[-2], dtype=torch.float64), inv)
        cos, sin = torch.cat([ang, ang], -1).cos().float(), torch.cat([ang, ang], -1).sin().float()
        rot = torch.cat([-x[..., k // 2:], x[..., :k // 2]], -1)
        return x * cos + rot * sin
    freqs = 1.0 / (theta ** (torch.arange(0, k, 2, dtype=torch.float64) / k))
    pos = torch.arange(start, start + x.shape[-2], dtype=torch.float64)
    cis = torch.polar(torch.ones(len(pos), k // 2), torch.outer(pos, freqs))
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], k // 2, 2).contiguous())
    return torch.view_as_real(xc * cis).flatten(-2)


def alibi_slopes(n):
    """BLOOM's build_alibi_tensor slopes: base 2^(-8/p) to the powers 1..p for p = the largest power
    of two <= n, then the odd powers 1, 3, 5, ... of 2p's base for the heads left over."""
    p = 2 ** math.floor(math.log2(n))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(p) - 3))))
    slopes = torch.pow(base, torch.arange(1, 1 + p, dtype=torch.float64))
    if p != n:
        extra = torch.tensor(2 ** (-(2 ** -(math.log2(2 * p) - 3))))
        left = min(p, n - p)
        slopes = torch.cat([slopes, torch.pow(extra, torch.arange(1, 1 + 2 * left, 2, dtype=torch.float64))])
    return slopes


def rms_norm(x, w, eps=1e-6):
    """Qwen3RMSNorm over the last axis: x · rsqrt(mean(x²) + ε) · w (w plain, not 1 + w)."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def mla(t, m, b, h, s, k, P, theta, use_rope, half):
    """DeepSeek-V3's MLA, attn_impl "naive" (inference/model.py), without the latent norm: the query
    heads [q_nope | q_pe], the latent c_kv of every position and the shared RoPE key k_pe; keys
    cat(k_nope, k_pe expanded over the heads) and values from wkv_b; softmax_scale (dₖ + D)^-½.
    Then the absorbed path's stages (attn_impl "absorb") from the same tensors."""
    R, D = t["w_dkv"].shape[1], t["w_kr"].shape[1]
    x_all = torch.cat([t["x_past"], t["x"]], dim=1) if P else t["x"]
    e = {"q": t["x"] @ t["w_q"]}
    q = e["q"].view(b, s, h, k + D)
    q_nope, q_pe = torch.split(q, [k, D], dim=-1)
    e["q_nope"] = q_nope.transpose(1, 2)
    e["q_pe"] = q_pe.transpose(1, 2)
    e["c_kv"] = x_all @ t["w_dkv"]
    k_pe = (x_all @ t["w_kr"]).unsqueeze(1)  # (b, 1, t, D): one head
    if use_rope:
        e["q_pe"] = rope(e["q_pe"], P, theta, half)
        k_pe = rope(k_pe, 0, theta, half)
    e["k_pe"] = k_pe.squeeze(1)
    tt = x_all.shape[1]
    wkv_b = torch.cat([t["w_uk"].view(R, h, k), t["w_uv"].view(R, h, k)], dim=-1)  # (R, h, 2k)
    kv = torch.einsum("btr,rhc->bhtc", e["c_kv"], wkv_b)
    e["k_nope"], e["v_up"] = torch.split(kv, [k, k], dim=-1)
    keys = torch.cat([e["k_nope"], k_pe.expand(b, h, tt, D)], dim=-1)
    scale = 1 / math.sqrt(k + D) if m.get("scale", "true") == "true" else 1.0
    e["scores"] = torch.cat([e["q_nope"], e["q_pe"]], dim=-1) @ keys.transpose(-1, -2) * scale
    e["q_latent"] = torch.einsum("bhsc,rhc->bhsr", e["q_nope"], t["w_uk"].view(R, h, k))
    return e, tt


def expected(t, m):
    b, h, g, d = int(m["batch"]), int(m["heads"]), int(m["kv_heads"]), int(m["d_model"])
    k, P, cross = d // h, int(m["past"]), m["attention"] == "cross"
    theta, use_rope, causal = float(m["rope_theta"]), m["rope"] == "true", m["causal"] == "true"
    half = m.get("rope_style", "interleaved") == "half"
    fill = -math.inf if m["mask_value"] == "-inf" else float(m["mask_value"])
    x = t["x"]
    s = x.shape[1]
    src = t["memory"] if cross else x
    if m.get("mode") == "mla":
        e, tt = mla(t, m, b, h, s, k, P, theta, use_rope, half)
    else:
        e = {}
        e["q"] = torch.nn.functional.linear(x, t["w_q"].T)
        e["k"] = torch.nn.functional.linear(src, t["w_k"].T)
        e["v"] = torch.nn.functional.linear(src, t["w_v"].T)
        n = src.shape[1]
        e["q_heads"] = e["q"].view(b, s, h, k).transpose(1, 2)
        e["k_heads"] = e["k"].view(b, n, g, k).transpose(1, 2)
        e["v_heads"] = e["v"].view(b, n, g, k).transpose(1, 2)
        q, kk, vv = e["q_heads"], e["k_heads"], e["v_heads"]
        qk_norm = m.get("qk_norm", "false") == "true"
        if qk_norm:  # Qwen3: per head, before RoPE
            q = e["q_norm"] = rms_norm(q, t["w_qn"])
            kk = e["k_norm"] = rms_norm(kk, t["w_kn"])
        if use_rope:
            q = e["q_rope"] = rope(q, P, theta, half)
            kk = e["k_rope"] = rope(kk, P, theta, half)
        if P:
            xp = t["x_past"]
            kp = (xp @ t["w_k"]).view(b, P, g, k).transpose(1, 2)
            vp = (xp @ t["w_v"]).view(b, P, g, k).transpose(1, 2)
            if qk_norm:
                kp = rms_norm(kp, t["w_kn"])
            if use_rope:
                kp = rope(kp, 0, theta, half)
            kk = e["k_cache"] = torch.cat([kp, kk], dim=2)
            vv = e["v_cache"] = torch.cat([vp, vv], dim=2)
        tt = kk.shape[2]
        e["k_expanded"] = kk.repeat_interleave(h // g, dim=1)
        e["v_expanded"] = vv.repeat_interleave(h // g, dim=1)
        e["scores"] = q @ e["k_expanded"].transpose(-1, -2) / math.sqrt(k)
    pre = e["scores"]
    if m.get("alibi", "false") == "true":  # -m_h·|i - j|, positions from the sequence's start
        dist = (torch.arange(P, P + s)[:, None] - torch.arange(tt)[None, :]).abs().double()
        e["bias"] = (-alibi_slopes(h)[:, None, None] * dist).expand(b, h, s, tt)
        pre = pre + e["bias"]
    cap = float(m.get("softcap", "0"))
    if cap > 0:  # Gemma 2: after the scaling and the bias, before the mask
        pre = e["capped_scores"] = cap * torch.tanh(pre / cap)
    blocked = torch.zeros(b, 1, s, tt, dtype=torch.bool)
    if causal:
        blocked |= torch.triu(torch.ones(s, tt, dtype=torch.bool), diagonal=P + 1)
    W = int(m.get("sliding_window", "0"))
    if W:   # Mistral's sliding window: key j hidden when j <= p - W; Longformer's also when j >= p + W
        window = torch.tril(torch.ones(s, tt, dtype=torch.bool), diagonal=P - W)
        if not causal:
            window |= torch.triu(torch.ones(s, tt, dtype=torch.bool), diagonal=P + W)
        window[:, :int(m.get("keep_first", "0"))] = False  # StreamingLLM: the first N keys stay
        blocked |= window
    lengths = json.loads(m["source_lengths" if cross else "lengths"])
    for r, length in enumerate(lengths):
        if m["pad_side"] == "right":
            blocked[r, :, :, length:] = True
        else:
            blocked[r, :, :, :tt - length] = True
    e["mask"] = torch.zeros(b, 1, s, tt).masked_fill(blocked, fill)
    # the mask is added in float32, as a float32 model does: there -1e9 + score
    # rounds to -1e9, which is what makes a fully masked finite-fill row uniform
    e["masked_scores"] = (pre.float() + e["mask"].float()).double()
    tiles = m.get("tiles", "0")
    if tiles != "0":  # FlashAttention's running max and sum after each key tile, here not online:
        bk = int(tiles.split("x")[1])  # straight from the masked scores of the keys before the tile's end
        ms = e["masked_scores"]
        ends = [min(tt, (j + 1) * bk) for j in range((tt + bk - 1) // bk)]
        mx = torch.stack([ms[..., :end].max(dim=-1).values for end in ends], dim=-1)
        e["tile_max"] = mx
        e["tile_sum"] = torch.stack([torch.exp(ms[..., :end] - mx[..., j:j + 1]).nan_to_num(nan=0.0).sum(dim=-1)
                                     for j, end in enumerate(ends)], dim=-1)
    sink = float(m.get("sink_logit", "-inf"))
    if sink != -math.inf:  # gpt-oss: one more column of logits, softmaxed with the row, then dropped
        logits = torch.cat([e["masked_scores"], torch.full((b, h, s, 1), sink)], dim=-1)
        probs = torch.softmax(logits, dim=-1)
        e["weights"], e["sink_weight"] = probs[..., :-1], probs[..., -1]
        return e, (b, h, s, k, d)
    # torch.softmax gives NaN for an all -inf row; attnlab's guarded softmax
    # (the default) gives zeros, its unguarded one what torch gives
    e["weights"] = torch.softmax(e["masked_scores"], dim=-1)
    if m.get("softmax_guard", "true") == "true":
        e["weights"] = torch.nan_to_num(e["weights"], nan=0.0)
    return e, (b, h, s, k, d)


WORST = {}  # stage: the largest absolute and relative differences seen, for the closing lines


def compare(name, got, want):
    if got.shape != want.shape:
        return f"{name}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    if not torch.equal(torch.isnan(got), torch.isnan(want)):
        return f"{name}: NaN in {int(torch.isnan(got).sum())} cells, torch has {int(torch.isnan(want).sum())}"
    nan = torch.isnan(want)
    got, want = got.masked_fill(nan, 0.0), want.masked_fill(nan, 0.0)
    inf_ok = torch.equal(torch.isinf(got), torch.isinf(want)) and torch.equal(got[torch.isinf(got)], want[torch.isinf(want)])
    fin = ~torch.isinf(want)
    err = ((got[fin] - want[fin]).abs() / want[fin].abs().clamp(min=1.0)).max().item() if fin.any() else 0.0
    gap = (got[fin] - want[fin]).abs().max().item() if fin.any() else 0.0
    was = WORST.get(name, (0.0, 0.0))
    WORST[name] = (max(was[0], gap), max(was[1], err))
    if not inf_ok or not err <= 1e-4:
        return f"{name}: max relative error {err:.3g}, inf cells match: {inf_ok}"
    return None


CONFIGS = [
    [],
    ["--pad-side", "left"],
    ["--pad-side", "left", "--mask-value", "-1e9"],
    ["--heads", "8", "--kv-heads", "2", "--d-model", "64"],
    ["--heads", "8", "--mode", "mqa", "--d-model", "64", "--no-causal"],
    ["--rope", "--heads", "4", "--kv-heads", "2"],
    ["--rope", "--rope-theta", "500", "--past", "3", "--pad-side", "left"],
    ["--rope", "--rope-style", "half", "--past", "3", "--pad-side", "left", "--heads", "4", "--kv-heads", "2"],
    ["--past", "2", "--heads", "4", "--kv-heads", "1"],
    ["--tokens", "我 爱 AI | 猫", "--source-tokens", "I love AI very much | a cat", "--no-causal", "--heads", "2"],
    ["--seq", "40", "--batch", "3", "--d-model", "128", "--heads", "8", "--kv-heads", "4", "--rope"],
    ["--train", "--dropout", "0.3", "--heads", "4", "--kv-heads", "2"],
    ["--pad-side", "left", "--no-softmax-guard"],
    ["--pad-side", "left", "--no-softmax-guard", "--train", "--dropout", "0.3"],
    ["--sliding-window", "3", "--pad-side", "left", "--heads", "4", "--kv-heads", "2"],
    ["--sliding-window", "2", "--no-causal", "--rope", "--past", "2"],
    ["--seq", "40", "--batch", "2", "--d-model", "64", "--heads", "4", "--kv-heads", "1", "--sliding-window", "8", "--past", "5"],
]
# The settings around the scores, by hand where they meet the old ones ...
CONFIGS += [
    ["--alibi", "--heads", "8", "--d-model", "64"],
    ["--alibi", "--heads", "12", "--d-model", "96", "--no-causal", "--past", "2"],
    ["--alibi", "--softcap", "2", "--rope", "--past", "3", "--pad-side", "left"],
    ["--softcap", "0.5", "--mask-value", "-1e9", "--pad-side", "left"],
    ["--qk-norm", "--rope", "--rope-style", "half", "--past", "2", "--heads", "4", "--kv-heads", "2"],
    ["--qk-norm", "--tokens", "我 爱 AI | 猫", "--source-tokens", "I love AI very much | a cat", "--no-causal"],
    ["--softcap", "1", "--sink-logit", "0.2", "--tokens", "我 爱 | 猫", "--source-tokens", "I love AI | a", "--no-causal"],
    ["--sink-logit", "0.5", "--pad-side", "left", "--no-softmax-guard"],
    ["--sink-logit", "-1", "--sliding-window", "2", "--keep-first", "1", "--past", "3", "--mode", "mqa"],
    ["--keep-first", "2", "--sliding-window", "2", "--no-causal", "--seq", "12", "--batch", "2"],
    ["--sink-logit", "2", "--pad-side", "left", "--mask-value", "-inf"],  # left pads: rows all on the sink
]
# FlashAttention's tiles with each of them: context and out as above, tile_max and tile_sum recomputed
CONFIGS += [
    ["--tiles", "1x1", "--pad-side", "left", "--no-softmax-guard"],
    ["--tiles", "3x5", "--seq", "13", "--batch", "2", "--heads", "4", "--kv-heads", "2", "--rope", "--past", "4"],
    ["--tiles", "64x64", "--alibi", "--softcap", "2", "--sink-logit", "0.5", "--pad-side", "left"],
    ["--tiles", "2x3", "--sliding-window", "2", "--keep-first", "1", "--no-causal", "--mask-value", "-1e9"],
    ["--tiles", "4x2", "--tokens", "我 爱 AI | 猫", "--source-tokens", "I love AI very much | a cat", "--no-causal"],
    ["--tiles", "3x3", "--train", "--dropout", "0.3", "--heads", "4", "--kv-heads", "1"],
]
# ... and at random, new with old: every draw the same from one run to the next
RNG = np.random.default_rng(33)
for _ in range(16):
    heads = int(RNG.choice([2, 4, 6, 8, 12]))
    cfg = ["--heads", str(heads), "--d-model", str(heads * int(RNG.choice([4, 8]))), "--seed", str(int(RNG.integers(1e6)))]
    kv = [g for g in range(1, heads + 1) if heads % g == 0]
    cfg += ["--kv-heads", str(int(RNG.choice(kv)))]
    seq = int(RNG.integers(3, 14))
    cfg += ["--seq", str(seq), "--batch", str(int(RNG.integers(1, 4)))]
    if RNG.random() < 0.5:
        cfg += ["--past", str(int(RNG.integers(0, seq)))]
    causal = RNG.random() < 0.7
    cfg += [] if causal else ["--no-causal"]
    if RNG.random() < 0.5:
        cfg += ["--rope"] + (["--rope-style", "half"] if RNG.random() < 0.5 else [])
    if RNG.random() < 0.5:
        cfg += ["--alibi"]
    if RNG.random() < 0.5:
        cfg += ["--softcap", f"{RNG.uniform(0.3, 5):.3g}"]
    if RNG.random() < 0.5:
        cfg += ["--qk-norm"]
    if RNG.random() < 0.5:
        cfg += ["--sink-logit", f"{RNG.uniform(-3, 3):.3g}"]
    if RNG.random() < 0.5:
        cfg += ["--sliding-window", str(int(RNG.integers(1, 5)))]
        if RNG.random() < 0.6:
            cfg += ["--keep-first", str(int(RNG.integers(1, 4)))]
    if RNG.random() < 0.3:
        cfg += ["--mask-value", "-1e9"]
    if RNG.random() < 0.5:
        cfg += ["--tiles", f"{int(RNG.integers(1, seq + 3))}x{int(RNG.integers(1, seq + 3))}"]
    CONFIGS.append(cfg)

# Multi-head latent attention, by hand and at random with the other settings, naive and absorbed
CONFIGS += [
    ["--mode", "mla", "--kv-rank", "12", "--rope-dim", "4", "--rope"],
    ["--mode", "mla", "--kv-rank", "12", "--rope-dim", "4", "--rope", "--mla-absorb", "--past", "3"],
    ["--mode", "mla", "--rope", "--rope-style", "half", "--past", "2", "--pad-side", "left", "--alibi"],
    ["--mode", "mla", "--kv-rank", "5", "--rope-dim", "3", "--no-causal", "--softcap", "2", "--mla-absorb"],
    # by tiles: naive over each head's rebuilt keys, absorbed over the latent cache
    ["--mode", "mla", "--kv-rank", "12", "--rope-dim", "4", "--rope", "--past", "3", "--tiles", "2x3"],
    ["--mode", "mla", "--kv-rank", "7", "--rope-dim", "2", "--rope", "--mla-absorb", "--past", "2", "--tiles", "3x2",
     "--sink-logit", "0.5", "--pad-side", "left", "--batch", "2"],
    ["--mode", "mla", "--kv-rank", "9", "--rope-dim", "3", "--mla-absorb", "--no-causal", "--sliding-window", "2",
     "--keep-first", "1", "--alibi", "--softcap", "2", "--tiles", "1x1"],
]
for _ in range(12):
    heads = int(RNG.choice([1, 2, 4, 8]))
    use_rope = RNG.random() < 0.7
    cfg = ["--mode", "mla", "--heads", str(heads), "--d-model", str(heads * int(RNG.choice([4, 8]))),
           "--kv-rank", str(int(RNG.integers(1, 40))), "--rope-dim", str(2 * int(RNG.integers(1, 5))),
           "--seed", str(int(RNG.integers(1e6))), "--seq", str(int(RNG.integers(3, 12))),
           "--batch", str(int(RNG.integers(1, 3)))]
    cfg += ["--rope"] + (["--rope-style", "half"] if RNG.random() < 0.3 else []) if use_rope else []
    cfg += ["--mla-absorb"] if RNG.random() < 0.5 else []
    cfg += ["--past", str(int(RNG.integers(1, 3)))] if RNG.random() < 0.5 else []
    cfg += ["--no-causal"] if RNG.random() < 0.3 else []
    cfg += ["--alibi"] if RNG.random() < 0.3 else []
    cfg += ["--softcap", f"{RNG.uniform(0.5, 5):.3g}"] if RNG.random() < 0.3 else []
    cfg += ["--sink-logit", f"{RNG.uniform(-2, 2):.3g}"] if RNG.random() < 0.3 else []
    if RNG.random() < 0.4:
        cfg += ["--sliding-window", str(int(RNG.integers(1, 4)))]
        cfg += ["--keep-first", "1"] if RNG.random() < 0.5 else []
    cfg += ["--pad-side", "left"] if RNG.random() < 0.3 else []
    seq = int(cfg[cfg.index("--seq") + 1])
    cfg += ["--tiles", f"{int(RNG.integers(1, seq + 3))}x{int(RNG.integers(1, seq + 3))}"] if RNG.random() < 0.5 else []
    CONFIGS.append(cfg)

for cfg in CONFIGS:
    shown = " ".join(cfg) or "(defaults)"
    path = os.path.join(TMP, "t.safetensors")
    r = subprocess.run([ARGS.attnlab, "trace", *cfg, "-o", path], capture_output=True, text=True)
    if r.returncode:
        check(shown, False, f"attnlab exited {r.returncode}: {r.stderr.strip()}")
        continue
    t, m = load(path)
    e, (b, h, s, k, d) = expected(t, m)
    problems = [p for name, want in e.items() if name in t and (p := compare(name, t[name], want))]
    other_path = ({"k_nope", "v_up"} if m.get("mla_absorb") == "true" else {"q_latent"}) if m.get("mode") == "mla" else set()
    problems += [f"{name}: missing" for name in e if name not in t and name not in other_path]
    p = float(m["dropout"])
    w = t.get("weights_dropout", t["weights"])
    if "weights_dropout" in t:  # each cell dropped or scaled by 1/(1-p)
        kept = t["weights_dropout"] != 0
        err = compare("weights_dropout", t["weights_dropout"][kept], t["weights"][kept] / (1 - p))
        problems += [err] if err else []
    if m.get("mode") == "mla":  # weights · v_up, or the latent context then W_UV: the same
        ctx = w @ e["v_up"]
        lat = w @ t["c_kv"].unsqueeze(1)
        for name, want in (("context_latent", lat),
                           ("context", torch.einsum("bhsr,rhc->bhsc", lat, t["w_uv"].view(-1, h, k)))):
            err = compare(name, t[name], want) if name in t else None
            problems += [err] if err else []
    else:
        ctx = w @ t["v_expanded"]
    merged = ctx.transpose(1, 2).reshape(b, s, d)
    for name, want in (("context", ctx), ("merged", merged)):
        err = compare(name, t[name], want)
        problems += [err] if err else []
    out = merged @ t["w_o"]
    if m["train"] == "true" and p > 0:
        kept = t["out"] != 0
        err = compare("out", t["out"][kept], out[kept] / (1 - p))
    else:
        err = compare("out", t["out"], out)
    problems += [err] if err else []
    check(f"{shown}: {len(t)} tensors", not problems, "; ".join(problems))
for name in ("q_norm", "k_norm", "c_kv", "k_pe", "q_latent", "scores", "context_latent", "bias", "capped_scores",
             "masked_scores", "weights", "sink_weight", "tile_max", "tile_sum", "context", "out"):
    if name in WORST:
        print(f"{name}: largest difference {WORST[name][0]:.3g} absolute, {WORST[name][1]:.3g} relative (to max(|x|, 1))")
common.finish()
