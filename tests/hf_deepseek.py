"""A PyTorch reference for DeepSeek-V2 and V3 checkpoints (multi-head latent
attention; a SwiGLU MLP in the first first_k_dense_replace layers, a mixture
of experts after), written from transformers' modeling_deepseek_v2 /
modeling_deepseek_v3 semantics (eager attention; DeepseekV2Moe,
DeepseekV3TopkRouter and DeepseekV3MoE), independently of attnlab:
check_models.py compares `attnlab trace` with it. float64 throughout. Per
layer it returns the stages attnlab names: q, q_nope, q_pe (rotated), c_kv
(after kv_a_layernorm), k_pe (rotated), k_nope, v_up, scores (scaled, before
the mask), weights, context, out, mlp_out; a MoE layer also router_scores and
expert_weights (b, s, E: the chosen experts' weights, 0 elsewhere).
rope_scaling as modeling_rope_utils reads it (hf_reference.inv_freq: llama3,
yarn over qk_rope_head_dim features, its attention factor on cos and sin)
and the attention's softmax scale × mscale² (softmax_scale).

HF's semantics where DeepSeek's own code differs: V2's router ignores
norm_topk_prob; V3's dropped groups are filled with 0.0 (not −∞). A top-k's
ties (only the 0.0 fills can tie) go to the lowest index (a stable sort),
where torch.topk leaves the order unspecified. `mutate` breaks one rule, for
the test that must see it: "v2_norm" (V2 normalises when norm_topk_prob),
"v3_neg_inf" (V3 fills with −∞), "no_bias" (V3 chooses without
e_score_correction_bias), "group_max" (V3 ranks groups by their best, not
the sum of the two best)."""
import torch

from hf_reference import get_mscale, inv_freq, rms_norm, rope_attention, rotate_half, scaling_type


def rope_v3(x, cos, sin, interleave):
    """DeepseekV3: rotate_half, after regrouping each pair (2m, 2m+1) into
    halves when rope_interleave (apply_rotary_pos_emb_interleave)."""
    if interleave:
        *lead, n = x.shape
        x = x.reshape(*lead, n // 2, 2).transpose(-1, -2).reshape(*lead, n)
    return x * cos + rotate_half(x) * sin


def rope_v2(x, freqs, att=1.0):
    """DeepseekV2: pairs (2m, 2m+1) as complex numbers times att·e^(i·pos·ω_m)
    (att: the rotary embedding's attention_scaling, YaRN's attention factor)."""
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(xc * torch.polar(torch.ones_like(freqs), freqs) * att).flatten(-2)


def softmax_scale(cfg, qk_head_dim):
    """DeepseekV2/V3Attention.scaling: qk_head_dim^−½, times mscale² when rope_scaling
    (a type other than default) gives a non-zero mscale_all_dim, mscale = get_mscale(factor,
    mscale_all_dim). (transformers' V2 gained it in July 2026, as DeepSeek's own V2 code has it.)"""
    scale = qk_head_dim ** -0.5
    rs = cfg.get("rope_scaling")
    if scaling_type(cfg) not in (None, "default") and rs.get("mscale_all_dim"):
        m = get_mscale(rs["factor"], rs["mscale_all_dim"])
        scale = scale * m * m
    return scale


def moe_defaults(cfg):
    """The MoE keys with DeepseekV2Config's or DeepseekV3Config's defaults."""
    v3 = cfg.get("model_type", "deepseek_v3") == "deepseek_v3"
    d = {"n_routed_experts": 256 if v3 else 64, "num_experts_per_tok": 8 if v3 else None,
         "n_shared_experts": 1 if v3 else 2, "moe_intermediate_size": 2048 if v3 else 1407,
         "routed_scaling_factor": 2.5 if v3 else 1.0, "norm_topk_prob": v3, "topk_method": "greedy",
         "n_group": 8 if v3 else None, "topk_group": 4 if v3 else None,
         "first_k_dense_replace": 3 if v3 else 0}
    return {k: cfg.get(k, v) for k, v in d.items()}


def top(v, k):
    """Indices of the k largest of each row of v, ties to the lowest index."""
    return torch.sort(v, dim=-1, descending=True, stable=True)[1][..., :k]


def keep_groups(choice, n_group, topk_group, score_of_group, fill):
    """choice with all but the topk_group best of n_group groups set to fill."""
    n, E = choice.shape
    g = score_of_group(choice.view(n, n_group, E // n_group))
    keep = torch.zeros(n, n_group, dtype=torch.bool)
    keep.scatter_(1, top(g, topk_group), True)
    return choice.masked_fill(~keep.repeat_interleave(E // n_group, dim=1), fill)


def route(hs, W, p, cfg, v3, mutate):
    """DeepseekV2Moe.route_tokens_to_experts / DeepseekV3TopkRouter: scores (n, E) and
    dense weights (n, E), 0 for the experts a token did not choose."""
    c = moe_defaults(cfg)
    k, E = c["num_experts_per_tok"], c["n_routed_experts"]
    logits = hs @ W[p + "mlp.gate.weight"].T
    if v3:
        scores = logits.sigmoid()
        choice = scores + (0 if mutate == "no_bias" else W[p + "mlp.gate.e_score_correction_bias"])
        rank = (lambda g: g.max(-1).values) if mutate == "group_max" else (lambda g: g.topk(2, dim=-1)[0].sum(-1))
        choice = keep_groups(choice, c["n_group"], c["topk_group"], rank,
                             float("-inf") if mutate == "v3_neg_inf" else 0.0)
        idx = top(choice, k)
        w = scores.gather(1, idx)
        if c["norm_topk_prob"]:
            w = w / (w.sum(-1, keepdim=True) + 1e-20)
    else:
        scores = logits.softmax(-1)
        choice = scores
        if c["topk_method"] == "group_limited_greedy":
            choice = keep_groups(choice, c["n_group"], c["topk_group"], lambda g: g.max(-1).values, 0.0)
        idx = top(choice, k)
        w = choice.gather(1, idx)
        if mutate == "v2_norm" and c["norm_topk_prob"] and k > 1:  # DeepSeek's own V2 code
            w = w / (w.sum(-1, keepdim=True) + 1e-20)
    w = w * c["routed_scaling_factor"]
    dense = torch.zeros(hs.shape[0], E).scatter(1, idx, w)
    return scores, dense


def swiglu(x, W, p):
    return (torch.nn.functional.silu(x @ W[p + "gate_proj.weight"].T) * (x @ W[p + "up_proj.weight"].T)) \
        @ W[p + "down_proj.weight"].T


def moe(hs, W, p, cfg, v3, mutate):
    """DeepseekV*MoE: the chosen experts' weighted sum plus the shared MLP."""
    b, s, d = hs.shape
    x = hs.reshape(-1, d)
    scores, dense = route(x, W, p, cfg, v3, mutate)
    out = torch.zeros_like(x)
    for e in range(dense.shape[1]):
        rows = dense[:, e] != 0
        if rows.any():
            out[rows] += dense[rows, e:e + 1] * swiglu(x[rows], W, f"{p}mlp.experts.{e}.")
    if moe_defaults(cfg)["n_shared_experts"]:
        out = out + swiglu(x, W, p + "mlp.shared_experts.")
    E = dense.shape[1]
    return out.view(b, s, d), scores.view(b, s, E), dense.view(b, s, E)


def reference(W, cfg, ids, mutate=None):
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
    # the rotary embedding's dim is qk_rope_head_dim (the configs set head_dim to it): YaRN's ramp runs over D
    if cfg.get("max_position_embeddings") is None:
        cfg = dict(cfg, max_position_embeddings=4096 if v3 else 2048)
    att = rope_attention(cfg, D)
    freqs = torch.outer(torch.arange(s).double(), inv_freq(cfg, D))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * att, emb.sin() * att
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
            q_pe, k_pe = rope_v2(q_pe, freqs, att), rope_v2(k_pe, freqs, att)
        query = torch.cat((q_nope, q_pe), -1)
        key = torch.cat((k_nope, k_pe.expand(b, h, s, D)), -1)
        scores = query @ key.transpose(2, 3) * softmax_scale(cfg, kn + D)
        w = torch.softmax(scores + mask, dim=-1)
        ctx = w @ v
        out = ctx.transpose(1, 2).reshape(b, s, h * kv_dim) @ W[a + "o_proj.weight"].T
        layers.append({"q": q, "q_nope": q_nope, "q_pe": q_pe, "c_kv": c, "k_pe": k_pe[:, 0], "k_nope": k_nope,
                       "v_up": v, "scores": scores, "weights": w, "context": ctx, "out": out})
        x = x + out
        hs = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        if li >= moe_defaults(cfg)["first_k_dense_replace"]:  # DeepseekV*MoE
            mlp, layers[-1]["router_scores"], layers[-1]["expert_weights"] = moe(hs, W, p, cfg, v3, mutate)
        else:
            mlp = swiglu(hs, W, p + "mlp.")
        layers[-1]["mlp_out"] = mlp
        x = x + mlp
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    return x @ head.T, layers


def kv_bytes(cfg, value_bytes=4):
    """Latent attention's cache per token: (bytes, 0, 0). Each layer keeps the latent c_kv
    (kv_lora_rank) and the one RoPE key k_pe (qk_rope_head_dim), whatever the heads."""
    R, D = cfg.get("kv_lora_rank", 512), cfg.get("qk_rope_head_dim", 64)
    return (R + D) * value_bytes * cfg["num_hidden_layers"], 0, 0
