"""A PyTorch reference for SmolLM3 checkpoints (SmolLM3ForCausalLM), written
from transformers' modeling_smollm3 and configuration_smollm3 semantics
(eager attention), independently of attnlab: check_models.py compares
`attnlab trace` with it. float64 throughout.

Llama's layer (input_layernorm, GQA attention, post_attention_layernorm,
SwiGLU), except that a layer whose no_rope_layers entry is 0 skips RoPE
(SmolLM3Attention's use_rope): its q and k reach the scores unrotated. Without
no_rope_layers, SmolLM3Config builds it from no_rope_layer_interval N (4):
entry l is int((l + 1) % N != 0). Its defaults: 4 key/value heads,
rope_theta 2e6, tied embeddings. Per layer it returns q, k, q_heads, k_heads,
q_rope, k_rope, weights, out, resid_mid, resid_out.

mutate="rope_everywhere" turns every layer: a deliberately wrong reference."""
import math

import torch

from hf_olmo2 import theta_cfg
from hf_reference import inv_freq, rms_norm, rope_attention, rotate_half


def use_rope(cfg):
    """SmolLM3Config.no_rope_layers as a list of num_hidden_layers booleans."""
    n = cfg["num_hidden_layers"]
    given = cfg.get("no_rope_layers")
    if given is None:
        every = cfg.get("no_rope_layer_interval", 4)
        given = [int((li + 1) % every != 0) for li in range(n)]
    return [bool(given[li]) for li in range(n)]


def reference(W, cfg, ids, mutate=None):
    """logits (b, s, V) and a list of per-layer dicts of stages, for ids (b, s)."""
    cfg = dict(theta_cfg(cfg))
    cfg.setdefault("rope_theta", 2000000.0)
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    g = cfg.get("num_key_value_heads", 4) or h
    k = cfg.get("head_dim") or d // h
    eps = cfg.get("rms_norm_eps", 1e-6)
    b, s = ids.shape
    x = W["model.embed_tokens.weight"][ids]
    freqs = torch.outer(torch.arange(s).double(), inv_freq(cfg, k))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * rope_attention(cfg, k), emb.sin() * rope_attention(cfg, k)
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    mask = torch.zeros(s, s).masked_fill(j > i, float("-inf"))
    rope = use_rope(cfg)
    layers = []
    for li in range(cfg["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        hs = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q, kk, v = hs @ W[a + "q_proj.weight"].T, hs @ W[a + "k_proj.weight"].T, hs @ W[a + "v_proj.weight"].T
        qh, kh = q.view(b, s, h, k).transpose(1, 2), kk.view(b, s, g, k).transpose(1, 2)
        vh = v.view(b, s, g, k).transpose(1, 2)
        if rope[li] or mutate == "rope_everywhere":
            qr, kr = qh * cos + rotate_half(qh) * sin, kh * cos + rotate_half(kh) * sin
        else:  # a NoPE layer
            qr, kr = qh, kh
        ke, ve = kr.repeat_interleave(h // g, dim=1), vh.repeat_interleave(h // g, dim=1)
        w = torch.softmax(qr @ ke.transpose(2, 3) / math.sqrt(k) + mask, dim=-1)
        out = (w @ ve).transpose(1, 2).reshape(b, s, h * k) @ W[a + "o_proj.weight"].T
        mid = x + out
        hs = rms_norm(mid, W[p + "post_attention_layernorm.weight"], eps)
        gate, up = hs @ W[p + "mlp.gate_proj.weight"].T, hs @ W[p + "mlp.up_proj.weight"].T
        x = mid + (torch.nn.functional.silu(gate) * up) @ W[p + "mlp.down_proj.weight"].T
        layers.append({"q": q, "k": kk, "q_heads": qh, "k_heads": kh, "q_rope": qr, "k_rope": kr, "weights": w,
                       "out": out, "resid_mid": mid, "resid_out": x})
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", True) else W["lm_head.weight"]
    return x @ head.T, layers


def kv_bytes(cfg, value_bytes=4):
    """SmolLM3's KV cache per token: (bytes, 0, 0). A NoPE layer caches its keys (unrotated) and
    values like any other, so every layer counts: 2 · g · head_dim values (g 4 by default)."""
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    g = cfg.get("num_key_value_heads", 4) or h
    k = cfg.get("head_dim") or d // h
    return 2 * g * k * value_bytes * cfg["num_hidden_layers"], 0, 0
