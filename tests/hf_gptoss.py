"""A PyTorch reference for gpt-oss checkpoints (GptOssForCausalLM, model_type
gpt_oss), written from transformers' modeling_gpt_oss / configuration_gpt_oss
semantics (eager attention, the inference path of GptOssExperts),
independently of attnlab: check_gptoss.py compares `attnlab trace` with it.
float64 throughout.

What it follows, from the modelling and configuration code:
- GptOssConfig's defaults: head_dim 64 (None: hidden // heads), 8 kv heads
  (None: the heads), 128 experts (num_experts is the same key), top 4,
  sliding_window 128, rms_norm_eps 1e-5, rope_theta 150000, attention_bias
  true, swiglu_limit 7.0, swiglu_alpha 1.702, untied; layer_types None:
  layer i slides when (i + 1) % 2 != 0, max_position_embeddings 131072.
- RoPE: rope_scaling null is plain RoPE; absent, GptOssConfig's default
  YaRN {rope_type yarn, factor 32, beta_fast 32, beta_slow 1,
  original_max_position_embeddings 4096, truncate false}; transformers v5's
  rope_parameters holds the same with rope_theta beside it. YaRN's frequencies
  and attention factor are hf_reference.yarn's (_compute_yarn_parameters);
  GptOssRotaryEmbedding multiplies cos and sin both by that factor. Other
  types: NotImplementedError.
- RMSNorm: w · x · rsqrt(mean(x²) + eps).
- q, k, v, o projections with biases when attention_bias; RoPE as
  _apply_rotary_emb: the head's first half x1 and second half x2 become
  x1·cos − x2·sin and x2·cos + x1·sin, cos and sin of position · inv_freq
  (head_dim / 2 of them).
- eager attention: scores · head_dim^−½ + mask; a sliding layer hides key j
  from query i unless i − sliding_window < j ≤ i (masking_utils'
  sliding_window_overlay); the head's sink logit is appended to each row,
  the row shifted by its max, softmax, the sink's column dropped.
- the router: logits = x · Wᵀ + b; top-k of the logits; softmax over those k;
  scattered into E (zeros elsewhere).
- swiglu_limit and swiglu_alpha read from the config, as the newest
  GptOssConfig documents them (transformers' modelling up to 4.57 fixes them
  at 7.0 and 1.702; published configs say 7.0, where the two agree).
- the experts: gate_up = x · gate_up_proj[e] + gate_up_proj_bias[e]; gate the
  even columns, up the odd; gate clamped above at limit, up to ±limit;
  glu = gate · sigmoid(alpha · gate); (up + 1) · glu · down_proj[e] +
  down_proj_bias[e]; every expert computed, each weighed by its routing
  weight (0 for those not chosen).
- the decoder layer: x + attn(input_layernorm(x)), then + mlp(post_attention_layernorm(x)).
Per layer it returns the stages attnlab names: q_heads, q_rope, k_rope,
scores, mask, weights, sink_weight, context, out, resid_mid, mlp_norm,
router_scores (softmax of the logits over all E: the picture's), expert_weights,
mlp_out, resid_out; and how many gate and up values the clamp changed in the
chosen experts (clamped_gate, clamped_up)."""
import torch

from hf_reference import rms_norm, yarn

# configuration_gpt_oss.py: rope_scaling (v5: rope_parameters) when the config has none
GPTOSS_YARN = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
               "original_max_position_embeddings": 4096, "truncate": False}


def defaults(cfg):
    """The config with GptOssConfig's defaults filled in."""
    c = {"head_dim": 64, "num_key_value_heads": 8, "num_local_experts": cfg.get("num_experts", 128),
         "num_experts_per_tok": 4, "sliding_window": 128, "rms_norm_eps": 1e-5, "rope_theta": 150000.0,
         "attention_bias": True, "swiglu_limit": 7.0, "swiglu_alpha": 1.702, "tie_word_embeddings": False,
         "layer_types": None, "max_position_embeddings": 131072}
    c.update(cfg)
    if c["head_dim"] is None:
        c["head_dim"] = c["hidden_size"] // c["num_attention_heads"]
    if c["num_key_value_heads"] is None:
        c["num_key_value_heads"] = c["num_attention_heads"]
    if c["layer_types"] is None:
        c["layer_types"] = ["sliding_attention" if (i + 1) % 2 else "full_attention"
                            for i in range(c["num_hidden_layers"])]
    if cfg.get("rope_parameters") is not None:  # v5: the rope_scaling fields and rope_theta in one object
        rp = dict(cfg["rope_parameters"])
        c["rope_theta"] = rp.pop("rope_theta", c["rope_theta"])
        c["rope_scaling"] = rp
    elif "rope_scaling" not in cfg:
        c["rope_scaling"] = dict(GPTOSS_YARN)
    rs = c["rope_scaling"]
    kind = rs.get("rope_type", rs.get("type", "default")) if rs else "default"
    if kind not in ("default", "yarn"):
        raise NotImplementedError(f"rope_scaling {rs}")
    c["rope_scaling"] = rs if kind == "yarn" else None
    return c


def rope_table(c, k, s, mutate):
    """cos, sin (s, k/2) at positions 0..s−1, each multiplied by YaRN's attention factor, and the angles."""
    inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, k, 2, dtype=torch.int64).double() / k))
    att = 1.0
    if c["rope_scaling"] is not None and mutate != "no_yarn":
        rc = c
        if mutate == "yarn_truncate":  # the ramp's ends floored and ceiled (transformers' default)
            rc = {**c, "rope_scaling": {**c["rope_scaling"], "truncate": True}}
        scaled, att = yarn(rc, k)
        if mutate != "yarn_plain_freqs":
            inv = scaled
        if mutate == "yarn_no_attention":
            att = 1.0
    freqs = torch.outer(torch.arange(s).double(), inv)
    return freqs.cos() * att, freqs.sin() * att, freqs, att


def rotary(x, cos, sin):
    first, second = torch.chunk(x, 2, dim=-1)
    return torch.cat((first * cos - second * sin, second * cos + first * sin), dim=-1)


def linear(x, W, name, bias):
    y = x @ W[name + ".weight"].T
    return y + W[name + ".bias"] if bias else y


def experts(hs, W, p, c, dense, mutate):
    """The mixture's output (b, s, d) and how many gate and up values the clamp changed in chosen experts."""
    E, limit, alpha = dense.shape[-1], c["swiglu_limit"], c["swiglu_alpha"]
    out = torch.zeros_like(hs)
    n_gate = n_up = 0
    for e in range(E):
        gu = hs @ W[p + "experts.gate_up_proj"][e] + W[p + "experts.gate_up_proj_bias"][e]
        if mutate == "halves":
            gate, up = torch.chunk(gu, 2, dim=-1)
        else:
            gate, up = gu[..., ::2], gu[..., 1::2]
        chosen = (dense[..., e] > 0)[..., None]
        n_gate += int(((gate > limit) & chosen).sum())
        n_up += int(((up.abs() > limit) & chosen).sum())
        if mutate != "no_clamp":
            gate = gate.clamp(max=limit)
            up = up.clamp(min=-limit, max=limit)
        glu = gate * torch.sigmoid(gate * alpha)
        y = ((up + 1) * glu) @ W[p + "experts.down_proj"][e] + W[p + "experts.down_proj_bias"][e]
        out = out + y * dense[..., e:e + 1]
    return out, n_gate, n_up


def route(hs, W, p, c, mutate):
    """router_scores (softmax over all E) and the dense weights (softmax over the top k, 0 elsewhere)."""
    logits = hs @ W[p + "router.weight"].T + W[p + "router.bias"]
    k = c["num_experts_per_tok"]
    idx = torch.sort(logits, dim=-1, descending=True, stable=True)[1][..., :k]  # ties to the lowest index
    top = logits.gather(-1, idx)
    wts = torch.softmax(top, dim=-1)
    if mutate == "softmax_all":  # DeepSeek-V2's way: softmax over all E, then the top k's probabilities
        wts = torch.softmax(logits, dim=-1).gather(-1, idx)
    dense = torch.zeros_like(logits).scatter(-1, idx, wts)
    return torch.softmax(logits, dim=-1), dense


def reference(W, cfg, ids, mutate=None):
    """logits (b, s, V) and a list of per-layer dicts of stages, for ids (b, s). mutate breaks one
    semantic (a test must see it): no_sinks, no_window, no_bias, halves, no_clamp, softmax_all, rope_halves;
    with YaRN: no_yarn (plain RoPE), yarn_no_attention (cos and sin not multiplied), yarn_plain_freqs
    (the factor without the ramp's frequencies), yarn_truncate (truncate true instead of false)."""
    c = defaults(cfg)
    d, h, g, k = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    eps, bias = c["rms_norm_eps"], c["attention_bias"] and mutate != "no_bias"
    b, s = ids.shape
    x = W["model.embed_tokens.weight"][ids]
    cos, sin, freqs, att = rope_table(c, k, s, mutate)
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    layers = []
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        visible = j <= i
        if c["layer_types"][li] == "sliding_attention" and mutate != "no_window":
            visible = visible & (j > i - c["sliding_window"])
        mask = torch.zeros(s, s).masked_fill(~visible, float("-inf"))
        hs = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = linear(hs, W, a + "q_proj", bias).view(b, s, h, k).transpose(1, 2)
        kk = linear(hs, W, a + "k_proj", bias).view(b, s, g, k).transpose(1, 2)
        v = linear(hs, W, a + "v_proj", bias).view(b, s, g, k).transpose(1, 2)
        st = {"q_heads": q}
        if mutate == "rope_halves":  # pairs (2m, 2m + 1) turned instead of the halves
            rot = lambda t: torch.view_as_real(torch.view_as_complex(t.reshape(*t.shape[:-1], -1, 2).contiguous())  # noqa: E731
                                               * torch.polar(att * torch.ones_like(freqs), freqs)).flatten(-2)
            q, kk = rot(q), rot(kk)
        else:
            q, kk = rotary(q, cos, sin), rotary(kk, cos, sin)
        st["q_rope"], st["k_rope"] = q, kk
        ke, ve = kk.repeat_interleave(h // g, dim=1), v.repeat_interleave(h // g, dim=1)
        scores = q @ ke.transpose(2, 3) * k ** -0.5
        sinks = W[a + "sinks"] if mutate != "no_sinks" else torch.full((h,), float("-inf"))
        combined = torch.cat([scores + mask, sinks.reshape(1, h, 1, 1).expand(b, h, s, 1)], dim=-1)
        combined = combined - combined.max(dim=-1, keepdim=True).values
        probs = torch.softmax(combined, dim=-1)
        w = probs[..., :-1]
        ctx = w @ ve
        out = linear(ctx.transpose(1, 2).reshape(b, s, h * k), W, a + "o_proj", bias)
        x = x + out
        st.update({"scores": scores, "mask": mask, "weights": w, "sink_weight": probs[..., -1], "context": ctx,
                   "out": out, "resid_mid": x})
        hs = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        scores_r, dense = route(hs, W, p + "mlp.", c, mutate)
        mlp, n_gate, n_up = experts(hs, W, p + "mlp.", c, dense, mutate)
        x = x + mlp
        st.update({"mlp_norm": hs, "router_scores": scores_r, "expert_weights": dense, "mlp_out": mlp,
                   "resid_out": x, "clamped_gate": n_gate, "clamped_up": n_up})
        layers.append(st)
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if c["tie_word_embeddings"] else W["lm_head.weight"]
    return x @ head.T, layers
