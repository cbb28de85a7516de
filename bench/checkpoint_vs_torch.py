#!/usr/bin/python3
"""Prefill and decode speed of a Hugging Face checkpoint: attnlab against PyTorch.

attnlab: `attnlab bench --model DIR --tokens IDS --repeat N --generate G`, the
traced prefill (every stage of every layer kept, as the window holds it) and
greedy decoding over the KV cache: untraced steps (attn_kv_step, what a
deployed decoder does, compared with PyTorch and the bound), then traced ones
(each a traced pass of one token, as the window shows decoding).

PyTorch: the same checkpoint in eager float32, written here from the Hugging
Face Llama semantics (RMSNorm, rotate-half RoPE, repeat_kv, softmax attention,
SwiGLU), torch.no_grad(), the same number of threads: the prefill of the same
tokens to the logits, and decoding with a KV cache (one token per step). It
keeps nothing but the cache, so it does less work than attnlab's traced passes.
A Gemma 2 or 3 checkpoint runs GemmaModel instead: tests/hf_gemma.py's
semantics in the same float32 form with a cache.

Also measured: the copy bandwidth (a 256 MiB float32 copy, median), and from it
the decode bounds: the weight bytes each token reads (every layer and the LM
head), as float32 (what torch reads) and as stored (what attnlab reads: BF16
is half), divided by that bandwidth.

Usage (from the repository root):
    /usr/bin/python3 tests/make_checkpoints.py /tmp/smol --shape smollm2-135m   (or tinyllama-1.1b)
    /usr/bin/python3 bench/checkpoint_vs_torch.py /tmp/smol [--tokens 512] [--generate 32]
        [--repeat 5] [--threads 2] [--attnlab build/attnlab]
"""
import argparse
import json
import os
import random
import re
import statistics
import struct
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # hf_gemma.py, GemmaModel's float64 twin


def load(folder):
    """config.json and the weights as float32 tensors; also the bytes each tensor takes as stored.
    One model.safetensors, or the shards model.safetensors.index.json lists."""
    cfg = json.load(open(os.path.join(folder, "config.json")))
    index = os.path.join(folder, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else ["model.safetensors"]
    W, stored = {}, {}
    for name in files:
        raw = open(os.path.join(folder, name), "rb").read()
        n = struct.unpack("<Q", raw[:8])[0]
        header = json.loads(raw[8:8 + n])
        header.pop("__metadata__", None)
        for k, e in header.items():
            b = raw[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]]
            if e["dtype"] == "BF16":
                a = (np.frombuffer(b, "<u2").astype(np.uint32) << 16).view(np.float32)
            elif e["dtype"] == "F16":
                a = np.frombuffer(b, "<f2").astype(np.float32)
            else:
                a = np.frombuffer(b, "<f4").copy()
            W[k] = torch.from_numpy(a.reshape(e["shape"]).copy())
            stored[k] = len(b)
        del raw
    return cfg, W, stored


def tied(cfg):
    """Whether the LM head is the embedding: tie_word_embeddings, whose default is false
    for a Llama and true for Gemma (Gemma2Config, Gemma3TextConfig)."""
    return cfg.get("tie_word_embeddings", cfg.get("model_type", "").startswith("gemma"))


class Model:
    def __init__(self, cfg, W):
        self.c, self.W = cfg, W
        self.d, self.h, self.g = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
        self.k = cfg.get("head_dim") or self.d // self.h
        self.eps = cfg["rms_norm_eps"]
        self.inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, self.k, 2, dtype=torch.float32) / self.k))
        self.head = W["model.embed_tokens.weight"] if tied(cfg) else W["lm_head.weight"]

    def norm(self, x, w):
        return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def rope(self, x, pos):
        f = torch.outer(pos.float(), self.inv)
        emb = torch.cat((f, f), -1)
        x1, x2 = x[..., : self.k // 2], x[..., self.k // 2:]
        return x * emb.cos() + torch.cat((-x2, x1), -1) * emb.sin()

    def forward(self, ids, cache):
        """ids (1, s) at positions after what cache holds; cache: list of (k, v) per layer, extended."""
        W, h, g, k = self.W, self.h, self.g, self.k
        s = ids.shape[1]
        P = cache[0][0].shape[2] if cache and cache[0] is not None else 0
        pos = torch.arange(P, P + s)
        x = W["model.embed_tokens.weight"][ids]
        mask = torch.full((s, P + s), float("-inf")).triu(P + 1) if s > 1 else None
        for li in range(self.c["num_hidden_layers"]):
            p = f"model.layers.{li}."
            hs = self.norm(x, W[p + "input_layernorm.weight"])
            q = F.linear(hs, W[p + "self_attn.q_proj.weight"]).view(1, s, h, k).transpose(1, 2)
            kk = F.linear(hs, W[p + "self_attn.k_proj.weight"]).view(1, s, g, k).transpose(1, 2)
            v = F.linear(hs, W[p + "self_attn.v_proj.weight"]).view(1, s, g, k).transpose(1, 2)
            q, kk = self.rope(q, pos), self.rope(kk, pos)
            if cache[li] is not None:
                kk = torch.cat((cache[li][0], kk), 2)
                v = torch.cat((cache[li][1], v), 2)
            cache[li] = (kk, v)
            kx, vx = kk.repeat_interleave(h // g, 1), v.repeat_interleave(h // g, 1)
            sc = q @ kx.transpose(2, 3) / k ** 0.5
            if mask is not None:
                sc = sc + mask
            o = (torch.softmax(sc, -1) @ vx).transpose(1, 2).reshape(1, s, h * k)
            x = x + F.linear(o, W[p + "self_attn.o_proj.weight"])
            hs = self.norm(x, W[p + "post_attention_layernorm.weight"])
            x = x + F.linear(F.silu(F.linear(hs, W[p + "mlp.gate_proj.weight"])) * F.linear(hs, W[p + "mlp.up_proj.weight"]),
                             W[p + "mlp.down_proj.weight"])
        return F.linear(self.norm(x[:, -1:], W["model.norm.weight"]), self.head)


class GemmaModel(Model):
    """Gemma 2 and Gemma 3 (text) in eager float32 with a KV cache, the semantics of
    tests/hf_gemma.py (which checks these logits in float64): embeddings · √d (rounded to the
    stored dtype, BF16 here), RMSNorm · (1 + w), q_norm and k_norm (Gemma 3), each layer's RoPE
    base and window, scores · query_pre_attn_scalar^−½ (soft-capped in Gemma 2), norms after
    the attention and the MLP, GELU_tanh; the final norm, the tied head, its soft-cap."""

    def __init__(self, cfg, W):
        import hf_gemma
        c, self.g3 = hf_gemma.defaults(cfg)
        super().__init__(c, W)
        self.k = c["head_dim"]
        self.local = [t == "sliding_attention" for t in c["layer_types"]]
        inv = lambda theta: 1.0 / (theta ** (torch.arange(0, self.k, 2, dtype=torch.float32) / self.k))
        if c["rope_scaling"]:
            raise ValueError("GemmaModel runs no rope_scaling (hf_gemma.py does)")
        self.inv_global = inv(c["rope_theta"])
        self.inv_local = inv(c["rope_local_base_freq"]) if self.g3 else self.inv_global
        self.scale = c["query_pre_attn_scalar"] ** -0.5
        self.normalizer = float(torch.tensor(self.d ** 0.5, dtype=torch.bfloat16))

    def norm(self, x, w):
        return (1.0 + w) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))

    def rope_with(self, x, pos, inv):
        f = torch.outer(pos.float(), inv)
        emb = torch.cat((f, f), -1)
        x1, x2 = x[..., : self.k // 2], x[..., self.k // 2:]
        return x * emb.cos() + torch.cat((-x2, x1), -1) * emb.sin()

    def forward(self, ids, cache):
        """ids (1, s) at positions after what cache holds; cache: list of (k, v) per layer, extended."""
        W, h, g, k, c = self.W, self.h, self.g, self.k, self.c
        s = ids.shape[1]
        P = cache[0][0].shape[2] if cache and cache[0] is not None else 0
        pos = torch.arange(P, P + s)
        i, j = pos[:, None], torch.arange(P + s)[None, :]
        masks = {local: torch.zeros(s, P + s).masked_fill(~((j <= i) & ((i - j < c["sliding_window"]) | (not local))),
                                                          float("-inf")) for local in (False, True)}
        x = W["model.embed_tokens.weight"][ids] * self.normalizer
        for li in range(c["num_hidden_layers"]):
            p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
            hs = self.norm(x, W[p + "input_layernorm.weight"])
            q = F.linear(hs, W[a + "q_proj.weight"]).view(1, s, h, k).transpose(1, 2)
            kk = F.linear(hs, W[a + "k_proj.weight"]).view(1, s, g, k).transpose(1, 2)
            v = F.linear(hs, W[a + "v_proj.weight"]).view(1, s, g, k).transpose(1, 2)
            if self.g3:
                q, kk = self.norm(q, W[a + "q_norm.weight"]), self.norm(kk, W[a + "k_norm.weight"])
            inv = self.inv_local if self.local[li] else self.inv_global
            q, kk = self.rope_with(q, pos, inv), self.rope_with(kk, pos, inv)
            if cache[li] is not None:
                kk = torch.cat((cache[li][0], kk), 2)
                v = torch.cat((cache[li][1], v), 2)
            cache[li] = (kk, v)
            kx, vx = kk.repeat_interleave(h // g, 1), v.repeat_interleave(h // g, 1)
            sc = q @ kx.transpose(2, 3) * self.scale
            if c["attn_logit_softcapping"]:
                sc = torch.tanh(sc / c["attn_logit_softcapping"]) * c["attn_logit_softcapping"]
            o = (torch.softmax(sc + masks[self.local[li]], -1) @ vx).transpose(1, 2).reshape(1, s, h * k)
            x = x + self.norm(F.linear(o, W[a + "o_proj.weight"]), W[p + "post_attention_layernorm.weight"])
            hs = self.norm(x, W[p + "pre_feedforward_layernorm.weight"])
            act = F.gelu(F.linear(hs, W[p + "mlp.gate_proj.weight"]), approximate="tanh")
            mlp = F.linear(act * F.linear(hs, W[p + "mlp.up_proj.weight"]), W[p + "mlp.down_proj.weight"])
            x = x + self.norm(mlp, W[p + "post_feedforward_layernorm.weight"])
        logits = F.linear(self.norm(x[:, -1:], W["model.norm.weight"]), self.head)
        if c["final_logit_softcapping"]:
            logits = torch.tanh(logits / c["final_logit_softcapping"]) * c["final_logit_softcapping"]
        return logits


def model(cfg, W):
    """The torch model of cfg's family: GemmaModel for Gemma 2 and 3, Model (Llama's) otherwise."""
    return GemmaModel(cfg, W) if cfg.get("model_type") in ("gemma2", "gemma3_text") else Model(cfg, W)


def times_ms(fn, n):
    """n calls of fn, the time of each in ms."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def median_ms(fn, n):
    times = times_ms(fn, n)
    return statistics.median(times), min(times), max(times)


def decode_ms(m, cache, logits, steps):
    """steps greedy tokens after logits, one forward of one token over cache each; the
    time of each step in ms."""
    times = []
    for _ in range(steps):
        nxt = logits[0, -1].argmax().view(1, 1)
        t0 = time.perf_counter()
        logits = m.forward(nxt, cache)
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def copy_bandwidth():
    """Bytes read and written per second by a 256 MiB float32 copy (median of 7), with
    torch's threads."""
    big = torch.empty(64 << 20, dtype=torch.float32).normal_()
    dst = torch.empty_like(big)
    copy_ms, _, _ = median_ms(lambda: dst.copy_(big), 7)
    return 2 * big.numel() * 4 / (copy_ms / 1e3)


def bytes_per_token(cfg, W, matrix=4, vector=4):
    """The weight bytes one decoded token reads: every layer, the final norm and the LM
    head (the embedding table only as a tied head), at matrix bytes an element in
    matrices and vector bytes in the norms' vectors."""
    return sum(v.numel() * (matrix if v.dim() == 2 else vector) for k, v in W.items()
               if k != "model.embed_tokens.weight" or tied(cfg))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("folder")
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--generate", type=int, default=32)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--attnlab", default=os.path.join(ROOT, "build", "attnlab"))
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    cfg, W, stored = load(a.folder)
    m = model(cfg, W)
    tok = json.load(open(os.path.join(a.folder, "tokenizer.json")))
    words = [w for w in tok["model"]["vocab"] if not w.startswith("<")]
    random.seed(1)
    text = " ".join(random.choice(words) for _ in range(a.tokens - 1))  # + BOS = a.tokens

    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads))
    out = subprocess.run([a.attnlab, "bench", "--model", a.folder, "--tokens", text, "--repeat", str(a.repeat),
                          "--generate", str(a.generate)], capture_output=True, text=True, env=env)
    if out.returncode:
        print(out.stderr.strip(), file=sys.stderr)
        return 1
    seq = int(re.search(r"seq (\d+)", out.stdout).group(1))
    pre = float(re.search(r"bench: ([0-9.]+) ms", out.stdout).group(1))
    dec = float(re.search(r"decode: ([0-9.]+) ms", out.stdout).group(1))
    dec_traced = float(re.search(r"decode traced: ([0-9.]+) ms", out.stdout).group(1))

    ids = torch.randint(3, cfg["vocab_size"], (1, seq))
    with torch.no_grad():
        m.forward(ids, [None] * cfg["num_hidden_layers"])  # warm-up
        tpre, tlo, thi = median_ms(lambda: m.forward(ids, [None] * cfg["num_hidden_layers"]), a.repeat)
        cache = [None] * cfg["num_hidden_layers"]
        tdec = statistics.median(decode_ms(m, cache, m.forward(ids, cache), a.generate))
        bandwidth = copy_bandwidth()
    per_token = bytes_per_token(cfg, W)  # float32, as torch reads them
    per_token_stored = sum(n for k, n in stored.items()  # as attnlab reads them (BF16: half)
                           if k != "model.embed_tokens.weight" or tied(cfg))
    bound_ms = per_token / bandwidth * 1e3
    bound_stored_ms = per_token_stored / bandwidth * 1e3
    print(f"checkpoint {os.path.basename(a.folder.rstrip('/'))}: {cfg['num_hidden_layers']} layers, d {m.d}, "
          f"{m.h}/{m.g} heads, vocab {cfg['vocab_size']}; torch {torch.__version__}, {a.threads} threads")
    print(f"prefill {seq} tokens: torch {tpre:.1f} ms (min {tlo:.1f}, max {thi:.1f}), "
          f"attnlab {pre:.1f} ms traced; ratio attnlab/torch {pre / tpre:.2f}")
    print(f"decode after {seq}: torch {tdec:.2f} ms/token ({1e3 / tdec:.1f} tokens/s), attnlab {dec:.2f} ms/token "
          f"({1e3 / dec:.1f} tokens/s); ratio attnlab/torch {dec / tdec:.2f}")
    print(f"decode traced (every stage of each step kept): attnlab {dec_traced:.2f} ms/token")
    print(f"copy bandwidth {bandwidth / 1e9:.1f} GB/s; float32 weights read per token {per_token / 1e6:.0f} MB, "
          f"bound {bound_ms:.2f} ms/token; as stored {per_token_stored / 1e6:.0f} MB, bound {bound_stored_ms:.2f} "
          f"ms/token; attnlab at {dec / bound_stored_ms:.1f}x the stored bound")
    return 0


if __name__ == "__main__":
    sys.exit(main())
