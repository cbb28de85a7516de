"""A PyTorch reference for Gemma 2 (model_type gemma2) and Gemma 3 text
(gemma3_text) checkpoints, written from transformers' modeling_gemma2 /
modeling_gemma3 semantics (eager attention), independently of attnlab:
check_models.py compares `attnlab trace` with it. float64 throughout, except
where transformers rounds on purpose (√hidden in the weights' dtype).

What it follows, from the modelling and configuration code:
- Gemma*RMSNorm: x · rsqrt(mean(x²) + eps) · (1 + w), in float32 (here float64).
- embeddings · tensor(hidden_size ** 0.5, dtype=the weights' dtype).
- layer_types when given; else Gemma 2: layer i slides when (i + 1) % 2 != 0,
  Gemma 3: when (i + 1) % sliding_window_pattern != 0 (default 6).
- a sliding layer masks key j for query i when i − j >= sliding_window.
- scaling = query_pre_attn_scalar ** −0.5; attn_logit_softcapping C:
  C · tanh(scores / C) after the scaling, before the mask.
- Gemma 3: q_norm, k_norm (RMSNorm over head_dim, (1 + w)) before RoPE;
  local layers' RoPE with rope_local_base_freq and no scaling, global layers'
  with rope_theta and rope_scaling ("linear": inv_freq / factor; "yarn":
  hf_reference.yarn, its attention factor on cos and sin).
  Gemma 2: one RoPE (rope_theta, its rope_scaling) for every layer.
- decoder layer: x + post_attention_layernorm(attn(input_layernorm(x))), then
  + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x))); MLP
  down(gelu_tanh(gate(x)) · up(x)).
- final norm, LM head (tied: the embedding), final_logit_softcapping C:
  C · tanh(logits / C).
Per layer it returns the stages attnlab names: q_heads, q_norm, k_norm (Gemma 3),
q_rope, k_rope, scores (scaled, before the cap), capped_scores (with a cap),
mask (0 or -inf), weights, context, out, resid_mid, mlp_out (the MLP's output
before post_feedforward_layernorm, as attnlab names it for OLMo 2 too),
resid_out."""
import math

import torch

from hf_reference import yarn


def rms_norm(x, w, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * (1.0 + w)


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def defaults(cfg):
    """The config with Gemma2Config's or Gemma3TextConfig's defaults filled in."""
    g3 = cfg["model_type"] == "gemma3_text"
    c = {"head_dim": 256, "query_pre_attn_scalar": 256, "sliding_window": 4096, "rms_norm_eps": 1e-6,
         "rope_theta": 1e6 if g3 else 10000.0, "attn_logit_softcapping": None if g3 else 50.0,
         "final_logit_softcapping": None if g3 else 30.0, "rope_scaling": None, "rope_local_base_freq": 10000.0,
         "sliding_window_pattern": 6, "tie_word_embeddings": True, "layer_types": None}
    c.update(cfg)
    if c["layer_types"] is None:
        every = c["sliding_window_pattern"] if g3 else 2
        c["layer_types"] = ["sliding_attention" if (i + 1) % every else "full_attention"
                            for i in range(c["num_hidden_layers"])]
    return c, g3


def rope(theta, scaling, k, s, max_pos=131072):
    """cos and sin (s, k): plain, "linear" (inv_freq / factor) or "yarn" (hf_reference.yarn, its
    attention factor on both)."""
    inv = 1.0 / (theta ** (torch.arange(0, k, 2, dtype=torch.int64).double() / k))
    att = 1.0
    if scaling and scaling.get("rope_type", scaling.get("type")) == "linear":
        inv = inv / scaling["factor"]
    if scaling and scaling.get("rope_type", scaling.get("type")) == "yarn":
        inv, att = yarn({"rope_theta": theta, "rope_scaling": scaling, "max_position_embeddings": max_pos}, k)
    freqs = torch.outer(torch.arange(s).double(), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * att, emb.sin() * att


def reference(W, cfg, ids, dtype="F32"):
    """logits (b, s, V) and a list of per-layer dicts of stages, for ids (b, s);
    dtype: the checkpoint's (F32, F16, BF16), for √hidden's rounding."""
    c, g3 = defaults(cfg)
    d, h, g, k = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    eps = c["rms_norm_eps"]
    b, s = ids.shape
    tdtype = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}[dtype]
    normalizer = float(torch.tensor(d ** 0.5, dtype=tdtype))
    x = W["model.embed_tokens.weight"][ids] * normalizer
    glob = rope(c["rope_theta"], c["rope_scaling"], k, s, c.get("max_position_embeddings", 131072 if g3 else 8192))
    loc = rope(c["rope_local_base_freq"], None, k, s) if g3 else glob
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    scaling = c["query_pre_attn_scalar"] ** -0.5
    cap = c["attn_logit_softcapping"]
    layers = []
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        local = c["layer_types"][li] == "sliding_attention"
        visible = j <= i
        if local:
            visible = visible & (i - j < c["sliding_window"])
        mask = torch.zeros(s, s).masked_fill(~visible, float("-inf"))
        cos, sin = loc if local else glob
        hs = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = (hs @ W[a + "q_proj.weight"].T).view(b, s, h, k).transpose(1, 2)
        kk = (hs @ W[a + "k_proj.weight"].T).view(b, s, g, k).transpose(1, 2)
        v = (hs @ W[a + "v_proj.weight"].T).view(b, s, g, k).transpose(1, 2)
        st = {"q_heads": q}
        if g3:
            q = rms_norm(q, W[a + "q_norm.weight"], eps)
            kk = rms_norm(kk, W[a + "k_norm.weight"], eps)
            st["q_norm"], st["k_norm"] = q, kk
        q = q * cos + rotate_half(q) * sin
        kk = kk * cos + rotate_half(kk) * sin
        st["q_rope"], st["k_rope"] = q, kk
        ke, ve = kk.repeat_interleave(h // g, dim=1), v.repeat_interleave(h // g, dim=1)
        scores = q @ ke.transpose(2, 3) * scaling
        st["scores"] = scores
        if cap is not None:
            scores = torch.tanh(scores / cap) * cap
            st["capped_scores"] = scores
        w = torch.softmax(scores + mask, dim=-1)
        ctx = w @ ve
        out = ctx.transpose(1, 2).reshape(b, s, h * k) @ W[a + "o_proj.weight"].T
        x = x + rms_norm(out, W[p + "post_attention_layernorm.weight"], eps)
        st.update({"mask": mask, "weights": w, "context": ctx, "out": out, "resid_mid": x})
        hs = rms_norm(x, W[p + "pre_feedforward_layernorm.weight"], eps)
        gate, up = hs @ W[p + "mlp.gate_proj.weight"].T, hs @ W[p + "mlp.up_proj.weight"].T
        down = (gelu_tanh(gate) * up) @ W[p + "mlp.down_proj.weight"].T
        x = x + rms_norm(down, W[p + "post_feedforward_layernorm.weight"], eps)
        st.update({"mlp_out": down, "resid_out": x})
        layers.append(st)
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if c["tie_word_embeddings"] else W["lm_head.weight"]
    logits = x @ head.T
    if c["final_logit_softcapping"] is not None:
        logits = torch.tanh(logits / c["final_logit_softcapping"]) * c["final_logit_softcapping"]
    return logits, layers


def kv_bytes(cfg, value_bytes=4):
    """Gemma's KV cache per token: (bytes of the full_attention layers, sliding_window, bytes of
    the sliding_attention layers, which keep at most sliding_window positions); each layer
    2 · num_key_value_heads · head_dim values."""
    c, _ = defaults(cfg)
    per = 2 * c["num_key_value_heads"] * c["head_dim"] * value_bytes
    local = sum(t == "sliding_attention" for t in c["layer_types"])
    full = c["num_hidden_layers"] - local
    return per * full, c["sliding_window"] if local else 0, per * local
