"""gpt-oss's part of check_models.py (--only gptoss): small random
GptOssForCausalLM folders, every feature on (non-zero sinks and biases, a
sliding window shorter than the text, 4 to 6 experts with top 2 or 3, the
SwiGLU clamp biting; YaRN as gpt-oss publishes it, truncate false, and
GptOssConfig's default YaRN when rope_scaling is absent), against
hf_gptoss.py. run(h) takes check_models' own
module for its helpers (trace, fail, close, the folder writers and the
cache and generation checks)."""
import json
import os

import torch

import hf_gptoss

TEXT = "the cat sat on the mat . a dog ran far"
STAGES = ("q_heads", "q_rope", "k_rope", "scores", "mask", "weights", "sink_weight", "context", "out", "resid_mid",
          "mlp_norm", "router_scores", "expert_weights", "mlp_out", "resid_out")
TOL = {"logits": 2e-3, "weights": 1e-3}  # relative to max(1, |reference|); the other stages 1e-3
MUTATIONS = ("no_sinks", "no_window", "no_bias", "halves", "no_clamp", "softmax_all", "rope_halves", "no_yarn",
             "yarn_no_attention", "yarn_plain_freqs", "yarn_truncate")
DIFF, BITES = {}, {}

CASES = [  # layers, heads, kv heads, head_dim, experts, top k, dtype, other keys
    (2, 4, 2, 8, 4, 2, "F32", {"sliding_window": 3, "swiglu_limit": 1.5}),
    # as the hub publishes: BF16 in shards; layer_types given (global first), the default limit 7 biting
    (3, 4, 1, 6, 5, 2, "BF16", {"sliding_window": 4, "_shards": 2, "_gate_up_scale": 6.0,
                                "layer_types": ["full_attention", "sliding_attention", "sliding_attention"]}),
    # no biases, tied, 6 experts top 3, GptOssConfig's layer pattern and limit given
    (2, 2, 2, 8, 6, 3, "F16", {"sliding_window": 2, "attention_bias": False, "tie_word_embeddings": True,
                               "swiglu_limit": 2.0, "hidden_size": 12}),
    # YaRN as gpt-oss-20b's (truncate false, betas 32 and 1) sized to the text: factor 2 over an original 32
    # positions (max 64), θ 20, head_dim 8. The ramp runs from lo = 8·ln(32/(32·2π))/(2·ln 20) < 0, so 0, to
    # hi = 8·ln(32/2π)/(2·ln 20) ≈ 2.17: pair 0 keeps ω, pairs 1 and 2 blend (ramp 0.46 and 0.92; truncated,
    # hi = 3 would give 0.33 and 0.67), pair 3 turns at ω/2 (by position 11: 0.58 rad, not 1.17); cos and sin
    # × 0.1·ln 2 + 1 ≈ 1.069
    (2, 4, 1, 8, 4, 2, "F32", {"sliding_window": 5, "rope_theta": 20.0, "rope_scaling": {
        "rope_type": "yarn", "factor": 2.0, "beta_fast": 32.0, "beta_slow": 1.0,
        "original_max_position_embeddings": 32, "truncate": False}}),
]


def config(layers, heads, kv, k, E, top, dtype, V, **over):
    cfg = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 16,
           "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": k,
           "intermediate_size": 8, "num_local_experts": E, "num_experts_per_tok": top, "rms_norm_eps": 1e-5,
           "rope_theta": 100.0, "rope_scaling": None, "vocab_size": V, "max_position_embeddings": 64,
           "tie_word_embeddings": False, "attention_bias": True, "router_aux_loss_coef": 0.9,
           "output_router_logits": False, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2,
           "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]}
    cfg.update(over)
    return cfg


def weights(cfg, seed, gate_up_scale=3.0):
    """Random weights in HF's names and shapes; the experts (E, in, out) as GptOssExperts keeps them."""
    torch.manual_seed(seed)
    d, h, g, k = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    E, I, V = cfg["num_local_experts"], cfg["intermediate_size"], cfg["vocab_size"]
    bias = cfg.get("attention_bias", True)
    W = {"model.embed_tokens.weight": torch.randn(V, d)}
    for li in range(cfg["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        W[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        W[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        for n, rows, scale in (("q_proj", h * k, 2), ("k_proj", g * k, 2), ("v_proj", g * k, 1)):
            W[a + n + ".weight"] = torch.randn(rows, d) / d ** 0.5 * scale
            if bias:
                W[a + n + ".bias"] = 0.5 * torch.randn(rows)
        W[a + "o_proj.weight"] = torch.randn(d, h * k) / (h * k) ** 0.5
        if bias:
            W[a + "o_proj.bias"] = 0.5 * torch.randn(d)
        W[a + "sinks"] = 1.5 * torch.randn(h)
        W[p + "mlp.router.weight"] = torch.randn(E, d) / d ** 0.5 * 2
        W[p + "mlp.router.bias"] = 0.5 * torch.randn(E)
        W[p + "mlp.experts.gate_up_proj"] = torch.randn(E, d, 2 * I) / d ** 0.5 * gate_up_scale
        W[p + "mlp.experts.gate_up_proj_bias"] = 0.5 * torch.randn(E, 2 * I)
        W[p + "mlp.experts.down_proj"] = torch.randn(E, I, d) / I ** 0.5
        W[p + "mlp.experts.down_proj_bias"] = 0.3 * torch.randn(E, d)
    W["model.norm.weight"] = 1 + 0.1 * torch.randn(d)
    if not cfg.get("tie_word_embeddings", False):
        W["lm_head.weight"] = torch.randn(V, d) / d ** 0.5
    return W


def check(h, name, model, W, cfg, text):
    """logits and every layer's stages of `attnlab trace` against hf_gptoss; the clamp must bite,
    the window must be shorter than the text, and each mutated semantic must move the logits."""
    t, meta = h.trace(model, "--text", text)
    ids = torch.tensor(json.loads(meta["token_ids"]))
    logits, layers = hf_gptoss.reference(W, cfg, ids)
    bad, windows = [], []
    for li, stages in enumerate(layers):
        for st in STAGES:
            ref = stages[st]
            key = f"layers.{li}.{st}" if len(layers) > 1 else st
            if key not in t:
                bad.append(f"{key} missing")
                continue
            if st == "mask":  # compare what is hidden
                if not torch.equal(t[key][0, 0] < -1e30, ref < -1e30):
                    bad.append(f"{key} hides other keys")
                windows.append(int((ref[-1] > -1e30).sum()))
                continue
            got = t[key].reshape(ref.shape)
            diff = float((got - ref).abs().max()) / max(1.0, float(ref.abs().max()))
            DIFF[st] = max(DIFF.get(st, 0.0), diff)
            if diff > TOL.get(st, 1e-3):
                bad.append(f"{key} (max |Δ| {diff:.2e})")
    diff = float((t["logits"] - logits).abs().max()) / max(1.0, float(logits.abs().max()))
    DIFF["logits"] = max(DIFF.get("logits", 0.0), diff)
    if diff > TOL["logits"]:
        bad.append(f"logits (max |Δ| {diff:.2e})")
    gate, up = sum(st["clamped_gate"] for st in layers), sum(st["clamped_up"] for st in layers)
    if not gate or not up:
        bad.append(f"the clamp does not bite (gate {gate}, up {up} values past the limit in chosen experts)")
    if min(windows) >= ids.shape[1]:
        bad.append("no window is shorter than the text")
    bit = []
    for what in MUTATIONS:
        wrong, _ = hf_gptoss.reference(W, cfg, ids, mutate=what)
        moved = float((t["logits"] - wrong).abs().max()) / max(1.0, float(wrong.abs().max())) > TOL["logits"]
        BITES.setdefault(what, []).append(name) if moved else BITES.setdefault(what, [])
        bit += [what] if moved else []
    if bad:
        h.fail(f"{name}: differs from the reference on {text!r}: " + ", ".join(bad[:6]))
    else:
        print(f"ok   {name}: logits and {len(layers)} layers' {len(STAGES)} stages on {ids.shape[1]} tokens, keys "
              f"seen by the last query per layer {windows}, clamp bites on {gate} gate and {up} up values "
              f"(max |Δlogits| {diff:.1e}); mutated and out of tolerance: {', '.join(bit)}")


def run(h):
    vocab = len(h.WORDS)
    for i, (layers, heads, kv, k, E, top, dtype, over) in enumerate(CASES):
        over = dict(over)
        shards, scale = over.pop("_shards", 1), over.pop("_gate_up_scale", 3.0)
        cfg = config(layers, heads, kv, k, E, top, dtype, vocab, **over)
        path = os.path.join(h.TMP, f"gptoss{i}")
        W0 = weights(cfg, seed=300 + i, gate_up_scale=scale)
        if shards > 1:
            h.sharded_folder(path, cfg, W0, dtype, shards)
        else:
            h.deepseek_folder(path, cfg, W0, dtype)
        W = h.read_folder(path)
        name = (f"gpt-oss {layers} layers {heads}/{kv} heads of {k}, {E} experts top {top}, {dtype}"
                + (f" in {shards} shards" if shards > 1 else "")
                + (f", YaRN ×{cfg['rope_scaling']['factor']:g} from "
                   f"{cfg['rope_scaling']['original_max_position_embeddings']}" if cfg["rope_scaling"] else ""))
        full = lambda W_, c_, ids: hf_gptoss.reference(W_, c_, ids)[0]  # noqa: E731
        try:
            check(h, name, path, W, cfg, TEXT)
            h.check_padding_and_cache(name, path, "the cat sat on the mat .", "a dog ran")
            h.check_every_past(name, path, "the cat sat on the mat . a dog")
            h.check_stream_nll(name, path, W, cfg, TEXT, full)
            h.check_generate_probs(name, path, W, cfg, "the cat sat on the mat", full)
            # 30 tokens, then 8 steps that take the cache past its first 32 rows: a cache that let the local
            # layers' old rows go grew another room for them, and this path read them at the wrong stride
            long = " ".join((TEXT.split() * 3)[:29])
            h.check_generate_probs(name + ", 30 tokens", path, W, cfg, long, full, n=8)
            h.check_generate(name, path, W, cfg, h.tokenizer_json(), "it was a good day", reference=full)
        except RuntimeError as e:
            h.fail(f"{name}: {e}")
    # rope_scaling absent: GptOssConfig's YaRN (factor 32 from 4096, truncate false) on case 0's weights; over
    # θ 100 and head_dim 8 it keeps pairs 0 to 2 (lo ≈ 2.62) and blends pair 3 a little, and A ≈ 1.347 scales q·k
    # by A² ≈ 1.81: the trace and its stages only (the cache and generation paths are case 3's)
    layers, heads, kv, k, E, top, dtype, over = CASES[0]
    cfg = config(layers, heads, kv, k, E, top, dtype, vocab, **over)
    del cfg["rope_scaling"]
    path = os.path.join(h.TMP, "gptoss-default-yarn")
    h.deepseek_folder(path, cfg, weights(cfg, seed=300), dtype)
    try:
        check(h, "gpt-oss with rope_scaling absent (GptOssConfig's YaRN)", path, h.read_folder(path), cfg, TEXT)
    except RuntimeError as e:
        h.fail(f"gpt-oss with rope_scaling absent: {e}")
    blind = [what for what, cases in BITES.items() if not cases]
    if blind:
        h.fail("the gpt-oss cases would not see these broken: " + ", ".join(blind))
    else:
        print(f"ok   each of {len(BITES)} gpt-oss semantics, broken in the reference, fails at least one case: "
              + "; ".join(f"{w} {len(c)}" for w, c in BITES.items()))
    print("largest |attnlab − reference| over the gpt-oss cases (relative to max(1, |reference|); cached logits: "
          "absolute, against attnlab's full pass): "
          + ", ".join(f"{k} {v:.1e}" for k, v in {**DIFF, **h.FAMILY_MAX}.items()))
    h.FAMILY_MAX.clear()
