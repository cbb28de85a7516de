#!/usr/bin/env python3
"""`attnlab stream` against an independent reference: tang's Llama written
again here in plain Python from Hugging Face's LlamaForCausalLM semantics
(RMSNorm, rotate-half RoPE, GQA, SwiGLU, the tied head), decoding with a cache
as mit-han-lab/streaming-llm does it: each layer keeps every kept token's key
before RoPE and its value, and at every step the kept keys are rotated at
their slots 0 … len − 1 and the query at the last (StartRecentKVCache with
start_size N and recent_size W − 1, the new token making W). The loss at each
position of a short text, under sink and window with evictions and under
everything kept, must be attnlab's within float rounding. Standard library
only (about 10 s); the harness is tests/common.py."""
import csv
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, read_st, run  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-stream-ref-")
HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "assets", "models", "tang")


def weights():
    header, data = read_st(os.path.join(MODEL, "model.safetensors"))
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        assert t["dtype"] == "F16", t["dtype"]
        flat = struct.unpack(f"<{(b - a) // 2}e", data[a:b])
        cols = t["shape"][-1]
        out[name] = [flat[i:i + cols] for i in range(0, len(flat), cols)] if len(t["shape"]) == 2 else flat
    return out


CFG = json.load(open(os.path.join(MODEL, "config.json")))
D, H, G = CFG["hidden_size"], CFG["num_attention_heads"], CFG["num_key_value_heads"]
K, EPS, THETA = D // H, CFG["rms_norm_eps"], CFG["rope_theta"]
Wt = weights()


def matvec(m, x):
    return [sum(a * b for a, b in zip(row, x)) for row in m]


def rms(x, g):
    s = 1.0 / math.sqrt(sum(v * v for v in x) / len(x) + EPS)
    return [v * s * w for v, w in zip(x, g)]


def rope(x, pos):
    """One head (K) rotated at pos, rotate_half pairs (i, i + K/2)."""
    half, y = K // 2, list(x)
    for i in range(half):
        ang = pos * THETA ** (-2.0 * i / K)
        c, s = math.cos(ang), math.sin(ang)
        y[i], y[i + half] = x[i] * c - x[i + half] * s, x[i + half] * c + x[i] * s
    return y


def step(tok, cache, first, window):
    """Token tok after the kept cache (per layer: lists of (key before RoPE, value) per kv head);
    appends its own, evicts as StartRecentKVCache, returns the next-token log-probabilities."""
    x = list(Wt["model.embed_tokens.weight"][tok])
    for layer, kept in enumerate(cache):
        p = f"model.layers.{layer}."
        n = rms(x, Wt[p + "input_layernorm.weight"])
        q, k, v = (matvec(Wt[p + f"self_attn.{w}_proj.weight"], n) for w in "qkv")
        kept.append(([k[j * K:(j + 1) * K] for j in range(G)], [v[j * K:(j + 1) * K] for j in range(G)]))
        slot = len(kept) - 1
        ctx = []
        for h in range(H):
            j = h // (H // G)
            qh = rope(q[h * K:(h + 1) * K], slot)
            s = [sum(a * b for a, b in zip(qh, rope(kk[j], i))) / math.sqrt(K) for i, (kk, _) in enumerate(kept)]
            mx = max(s)
            e = [math.exp(v_ - mx) for v_ in s]
            z = sum(e)
            ctx += [sum(e[i] / z * kept[i][1][j][c] for i in range(len(kept))) for c in range(K)]
        x = [a + b for a, b in zip(x, matvec(Wt[p + "self_attn.o_proj.weight"], ctx))]
        n = rms(x, Wt[p + "post_attention_layernorm.weight"])
        gate, up = matvec(Wt[p + "mlp.gate_proj.weight"], n), matvec(Wt[p + "mlp.up_proj.weight"], n)
        act = [g_ / (1 + math.exp(-g_)) * u for g_, u in zip(gate, up)]
        x = [a + b for a, b in zip(x, matvec(Wt[p + "mlp.down_proj.weight"], act))]
        if window and len(kept) == first + window:
            del kept[first]  # after the step: the next token sees first + window − 1 of them, then itself
    logits = matvec(Wt["model.embed_tokens.weight"], rms(x, Wt["model.norm.weight"]))
    mx = max(logits)
    lse = mx + math.log(sum(math.exp(v - mx) for v in logits))
    return [v - lse for v in logits]


def reference(ids, first, window):
    cache = [[] for _ in range(CFG["num_hidden_layers"])]
    return [-step(ids[i], cache, first, window)[ids[i + 1]] for i in range(len(ids) - 1)]


TEXT = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
out = os.path.join(TMP, "s.csv")
r = run(["stream", "--model", "tang", "--text", TEXT, "--window", "8", "--keep-first", "2", "--csv", out])
check("attnlab stream ran", r.returncode == 0, r.stderr)
rows = list(csv.reader(open(out))) if os.path.exists(out) else [["position", "next"]]
got = {name: [float(x[c]) for x in rows[1:]] for c, name in enumerate(rows[0]) if c >= 2}
nexts = [int(x[1]) for x in rows[1:]]
ids = [1] + nexts  # the text's <s>, then each position's next token
for name, first, window in (("all", 0, 0), ("window", 0, 8), ("sink", 2, 8)):
    want = reference(ids, first, window)
    worst = max((abs(a - b) for a, b in zip(got.get(name, []), want)), default=math.inf)
    check(f"{name}: each position's loss is the reference's (worst {worst:.2e} nats)",
          len(got.get(name, [])) == len(want) and worst < 2e-3, list(zip(got.get(name, []), want))[:12])
common.finish()
