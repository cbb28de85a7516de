"""A PyTorch reference for DeepSeek-V2 and V3 checkpoints whose layers are all
dense (multi-head latent attention, SwiGLU MLP), written from transformers'
modeling_deepseek_v2 / modeling_deepseek_v3 semantics (eager attention),
independently of attnlab: check_models.py compares `attnlab trace` with it.
float64 throughout. Per layer it returns the stages attnlab names:
q, q_nope, q_pe (rotated), c_kv (after kv_a_layernorm), k_pe (rotated),
k_nope, v_up, scores (scaled, before the mask), weights, context, out."""
import torch

from hf_reference import rms_norm, rotate_half


def rope_v3(x, cos, sin, interleave):
    """DeepseekV3: rotate_half, after regrouping each pair (2m, 2m+1) into
    halves when rope_interleave (apply_rotary_pos_emb_interleave)."""
    if interleave:
        *lead, n = x.shape
        x = x.reshape(*lead, n // 2, 2).transpose(-1, -2).reshape(*lead, n)
    return x * cos + rotate_half(x) * sin


def rope_v2(x, freqs):
    """DeepseekV2: pairs (2m, 2m+1) as complex numbers times e^(i·pos·ω_m)."""
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * torch.polar(torch.ones_like(freqs), freqs)).flatten(-2)


def reference(W, cfg, ids):
    """logits (b, s, V) and a list of per-layer dicts of stages, for ids (b, s)."""
    v3 = cfg.get("model_type", "deepseek_v3") == "deepseek_v3"
    d, h = cfg["hidden_size"], cfg["num_attention_heads"]
    R, D = cfg.get("kv_lora_rank", 512), cfg.get("qk_rope_head_dim", 64)
    kn, kv_dim = cfg.get("qk_nope_head_dim", 128), cfg.get("v_head_dim", 128)
    qr = cfg.get("q_lora_rank", 1536)
    eps = cfg.get("rms_norm_eps", 1e-6)
    interleave = cfg.get("rope_interleave", True)
    b, s = ids.shape
    x = W["model.embed_tokens.weight"][ids]
    inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, D, 2).double() / D))
    freqs = torch.outer(torch.arange(s).double(), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    mask = torch.zeros(s, s).masked_fill(j > i, float("-inf"))
    layers = []
    for li in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{li}."
        a = p + "self_attn."
        hs = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        if qr is None:
            q = hs @ W[a + "q_proj.weight"].T
        else:  # the latent norms are built with the default eps, 1e-6
            q = rms_norm(hs @ W[a + "q_a_proj.weight"].T, W[a + "q_a_layernorm.weight"], 1e-6) @ W[a + "q_b_proj.weight"].T
        qh = q.view(b, s, h, kn + D).transpose(1, 2)
        q_nope, q_pe = qh[..., :kn], qh[..., kn:]
        ckv = hs @ W[a + "kv_a_proj_with_mqa.weight"].T
        c, k_pe = ckv[..., :R], ckv[..., R:]
        c = rms_norm(c, W[a + "kv_a_layernorm.weight"], 1e-6)
        kvb = (c @ W[a + "kv_b_proj.weight"].T).view(b, s, h, kn + kv_dim).transpose(1, 2)
        k_nope, v = kvb[..., :kn], kvb[..., kn:]
        k_pe = k_pe.view(b, 1, s, D)
        if v3:
            q_pe, k_pe = rope_v3(q_pe, cos, sin, interleave), rope_v3(k_pe, cos, sin, interleave)
        else:
            q_pe, k_pe = rope_v2(q_pe, freqs), rope_v2(k_pe, freqs)
        query = torch.cat((q_nope, q_pe), -1)
        key = torch.cat((k_nope, k_pe.expand(b, h, s, D)), -1)
        scores = query @ key.transpose(2, 3) * (kn + D) ** -0.5
        w = torch.softmax(scores + mask, dim=-1)
        ctx = w @ v
        out = ctx.transpose(1, 2).reshape(b, s, h * kv_dim) @ W[a + "o_proj.weight"].T
        layers.append({"q": q, "q_nope": q_nope, "q_pe": q_pe, "c_kv": c, "k_pe": k_pe[:, 0], "k_nope": k_nope,
                       "v_up": v, "scores": scores, "weights": w, "context": ctx, "out": out})
        x = x + out
        hs = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate, up = hs @ W[p + "mlp.gate_proj.weight"].T, hs @ W[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ W[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    return x @ head.T, layers
