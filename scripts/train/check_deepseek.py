#!/usr/bin/env python3
"""Checks deepseek.py's batched MLA against a re-derivation written the long
way: one head, one query, one key at a time, RoPE as DeepSeek's own code does
it (pairs of adjacent features as complex numbers, multiplied by e^(i·pos·f)),
RMSNorm by hand; and the absorbed computation against the naive one. Random
tiny configurations; exits non-zero on a mismatch.
Usage: check_deepseek.py [--trials N]"""
import argparse
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deepseek  # noqa: E402


def rms(x, w, eps):
    return [w[i] * x[i] / math.sqrt(sum(v * v for v in x) / len(x) + eps) for i in range(len(x))]


def rotate_pairs(x, pos, theta):
    """DeepSeek's convention: (x[2i], x[2i+1]) as x[2i] + i·x[2i+1], turned by pos·theta^(-2i/P)."""
    P = len(x)
    out = []
    for i in range(P // 2):
        a = pos * theta ** (-2 * i / P)
        z = complex(x[2 * i], x[2 * i + 1]) * complex(math.cos(a), math.sin(a))
        out += [z.real, z.imag]
    return out


def naive_attention(at, x):
    """x: (s, d) as lists -> the attention output (s, d), one head and one pair at a time."""
    c = at.c
    W = {n: getattr(at, n).weight.double().tolist() for n in ("q_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj")}
    g = at.kv_a_layernorm.weight.double().tolist()
    mv = lambda M, v: [sum(M[r][k] * v[k] for k in range(len(v))) for r in range(len(M))]  # noqa: E731
    s = len(x)
    lat, kpe = [], []
    for t in range(s):
        a = mv(W["kv_a_proj_with_mqa"], x[t])
        lat.append(rms(a[:c.kv_rank], g, deepseek.LATENT_EPS))
        kpe.append(rotate_pairs(a[c.kv_rank:], t, c.theta))
    kv = [mv(W["kv_b_proj"], lat[t]) for t in range(s)]
    out = []
    for i in range(s):
        q = mv(W["q_proj"], x[i])
        heads = []
        for h in range(c.heads):
            qh = q[h * c.qk_dim:(h + 1) * c.qk_dim]
            q_nope, q_pe = qh[:c.nope], rotate_pairs(qh[c.nope:], i, c.theta)
            sc = []
            for j in range(i + 1):
                kh = kv[j][h * (c.nope + c.v_dim):(h + 1) * (c.nope + c.v_dim)]
                dot = sum(a * b for a, b in zip(q_nope, kh[:c.nope])) + sum(a * b for a, b in zip(q_pe, kpe[j]))
                sc.append(dot / math.sqrt(c.nope + c.rope_dim))
            m = max(sc)
            e = [math.exp(v - m) for v in sc]
            w = [v / sum(e) for v in e]
            ctx = [0.0] * c.v_dim
            for j in range(i + 1):
                vh = kv[j][h * (c.nope + c.v_dim) + c.nope:(h + 1) * (c.nope + c.v_dim)]
                ctx = [ctx[k] + w[j] * vh[k] for k in range(c.v_dim)]
            heads += ctx
        out.append(mv(W["o_proj"], heads))
    return out


def rms_norm64(self, x):
    """llama.RMSNorm computes in float32 as HF does; the check runs in float64 throughout."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=6)
    a = ap.parse_args()
    torch.manual_seed(0)
    deepseek.RMSNorm.forward = rms_norm64
    gen = torch.Generator().manual_seed(0)
    worst = {"naive": 0.0, "absorbed": 0.0, "model": 0.0}
    for t in range(a.trials):
        pick = lambda *v: v[int(torch.randint(len(v), (1,), generator=gen))]  # noqa: E731
        c = deepseek.Config(50, d=pick(8, 12, 16), layers=2, heads=pick(1, 2, 3), kv_rank=pick(4, 6, 8),
                            nope=pick(2, 4, 6), rope_dim=pick(2, 4, 8), v_dim=pick(3, 4, 5), ffn=pick(10, 20),
                            theta=pick(10000.0, 100.0))
        m = deepseek.DeepseekV3(c).double()
        with torch.no_grad():
            for p in m.parameters():      # larger than the 0.02 init, so RoPE and the softmax matter
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.5 + (p.dim() == 1))
        s = int(torch.randint(2, 9, (1,), generator=gen))
        x = torch.randn(1, s, c.d, generator=gen, dtype=torch.float64)
        at = m.model.layers[0].self_attn
        with torch.no_grad():
            fast = at(x, True)[0]
            slow = torch.tensor(naive_attention(at, x[0].tolist()), dtype=torch.float64)
            absorbed = at.absorbed(x, True)[0]
        worst["naive"] = max(worst["naive"], float((fast - slow).abs().max() / slow.abs().max()))
        worst["absorbed"] = max(worst["absorbed"], float((fast - absorbed).abs().max() / fast.abs().max()))
        # the whole model, its attention swapped for the absorbed path, gives the same logits
        ids = torch.randint(0, c.vocab, (2, s), generator=gen)
        with torch.no_grad():
            ref = m(ids)
            for layer in m.model.layers:
                layer.self_attn.forward = layer.self_attn.absorbed
            alt = m(ids)
        worst["model"] = max(worst["model"], float((ref - alt).abs().max() / ref.abs().max()))
        print(f"trial {t}: d {c.d} heads {c.heads} R {c.kv_rank} nope {c.nope} rope {c.rope_dim} v {c.v_dim} "
              f"s {s}: batched vs naive {float((fast - slow).abs().max()):.2e}, "
              f"absorbed {float((fast - absorbed).abs().max()):.2e}")
    print("worst relative difference:", {k: f"{v:.1e}" for k, v in worst.items()})
    if max(worst.values()) > 1e-10:
        sys.exit("check_deepseek: MISMATCH")
    print("check_deepseek: batched = naive per head = absorbed (float64)")


if __name__ == "__main__":
    main()
