"""A PyTorch reference for OLMo 2 checkpoints (Olmo2ForCausalLM), written from
transformers' modeling_olmo2 semantics (eager attention), independently of
attnlab: check_models.py compares `attnlab trace` with it. float64 throughout.

What OLMo 2 changes from Llama, as modeling_olmo2 does it:
  - q_norm and k_norm are RMSNorms over the whole projection, h·k and g·k
    features (Olmo2RMSNorm(num_heads * head_dim)), applied to q_proj(x) and
    k_proj(x) before the view into heads and before RoPE;
  - no input_layernorm and no pre-MLP norm: the decoder layer is
      h = x + post_attention_layernorm(attn(x))
      out = h + post_feedforward_layernorm(mlp(h))
  - rms_norm_eps 1e-5 by default; tie_word_embeddings false by default.
Per layer it returns the stages attnlab names: q, k (projections), q_norm,
k_norm (split into heads), q_rope, k_rope, weights, out, resid_mid, resid_out.

mutate="per_head" normalises each head on its own instead (Qwen3's way): a
deliberately wrong reference the test must tell apart from attnlab."""
import math

import torch

from hf_reference import inv_freq, rms_norm, rope_attention, rotate_half


def theta_cfg(cfg):
    """cfg with rope_theta taken from transformers v5's rope_parameters when given."""
    rp = cfg.get("rope_parameters")
    if rp and "rope_theta" in rp:
        return dict(cfg, rope_theta=rp["rope_theta"])
    return cfg


def reference(W, cfg, ids, mutate=None):
    """logits (b, s, V) and a list of per-layer dicts of stages, for ids (b, s)."""
    cfg = theta_cfg(cfg)
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    g = cfg.get("num_key_value_heads") or h
    k = cfg.get("head_dim") or d // h
    eps = cfg.get("rms_norm_eps", 1e-5)
    b, s = ids.shape
    x = W["model.embed_tokens.weight"][ids]
    freqs = torch.outer(torch.arange(s).double(), inv_freq(cfg, k))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * rope_attention(cfg, k), emb.sin() * rope_attention(cfg, k)
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    mask = torch.zeros(s, s).masked_fill(j > i, float("-inf"))
    layers = []
    for li in range(cfg["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        q, kk, v = x @ W[a + "q_proj.weight"].T, x @ W[a + "k_proj.weight"].T, x @ W[a + "v_proj.weight"].T
        if mutate == "per_head":  # wrong on purpose: one RMS per head
            qn = rms_norm(q.view(b, s, h, k), W[a + "q_norm.weight"].view(h, k), eps).reshape(b, s, h * k)
            kn = rms_norm(kk.view(b, s, g, k), W[a + "k_norm.weight"].view(g, k), eps).reshape(b, s, g * k)
        else:  # Olmo2Attention: the whole projection, every head together
            qn, kn = rms_norm(q, W[a + "q_norm.weight"], eps), rms_norm(kk, W[a + "k_norm.weight"], eps)
        qh, kh = qn.view(b, s, h, k).transpose(1, 2), kn.view(b, s, g, k).transpose(1, 2)
        vh = v.view(b, s, g, k).transpose(1, 2)
        qr, kr = qh * cos + rotate_half(qh) * sin, kh * cos + rotate_half(kh) * sin
        ke, ve = kr.repeat_interleave(h // g, dim=1), vh.repeat_interleave(h // g, dim=1)
        w = torch.softmax(qr @ ke.transpose(2, 3) / math.sqrt(k) + mask, dim=-1)
        out = (w @ ve).transpose(1, 2).reshape(b, s, h * k) @ W[a + "o_proj.weight"].T
        mid = x + rms_norm(out, W[p + "post_attention_layernorm.weight"], eps)
        gate, up = mid @ W[p + "mlp.gate_proj.weight"].T, mid @ W[p + "mlp.up_proj.weight"].T
        mlp = (torch.nn.functional.silu(gate) * up) @ W[p + "mlp.down_proj.weight"].T
        x = mid + rms_norm(mlp, W[p + "post_feedforward_layernorm.weight"], eps)
        layers.append({"q": q, "k": kk, "q_norm": qh, "k_norm": kh, "q_rope": qr, "k_rope": kr, "weights": w,
                       "out": out, "resid_mid": mid, "resid_out": x})
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", False) else W["lm_head.weight"]
    return x @ head.T, layers


def kv_bytes(cfg, value_bytes=4):
    """OLMo 2's KV cache per token, every layer full: (bytes, 0, 0); 2 · g · head_dim values a layer."""
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    g = cfg.get("num_key_value_heads") or h
    k = cfg.get("head_dim") or d // h
    return 2 * g * k * value_bytes * cfg["num_hidden_layers"], 0, 0
