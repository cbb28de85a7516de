#!/usr/bin/env python3
"""DeepSeek-V2/V3 folders at the command line: a dense one and one with
mixture-of-experts layers run (trace, info, generate), so do DeepSeek-V3's
and DeepSeek-V2-Lite's YaRN (info names its factors), and every config this
engine cannot run as transformers would is refused with one line and a
non-zero exit, never a crash or a quiet wrong answer: the MoE keys HF ignores
or cannot run (moe_layer_freq, scoring_func, topk_method, null counts, groups
that do not fit), rope_scaling types other than YaRN's and Llama 3's and
YaRN's fields out of range or of the wrong kind, quantization_config, biases,
ranks and head sizes out of range or of the wrong kind, sizes that disagree
with the tensors; then a fuzz of every size key over hostile values.
Standard library only (float32 weights packed by hand); the harness is
tests/common.py. The numbers themselves are check_models.py's (PyTorch)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, expect, run  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-cli-deepseek-")
OUT = os.path.join(TMP, "t.safetensors")
WORDS = common.WORDS
tokenizer = common.tokenizer


def config(**over):
    c = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 8,
         "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "intermediate_size": 12,
         "vocab_size": len(WORDS), "max_position_embeddings": 16, "rms_norm_eps": 1e-6, "rope_theta": 100.0,
         "tie_word_embeddings": True, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2,
         "q_lora_rank": None, "kv_lora_rank": 4, "qk_rope_head_dim": 2, "qk_nope_head_dim": 3, "v_head_dim": 3,
         "first_k_dense_replace": 2, "n_routed_experts": 4, "rope_interleave": True}
    c.update(over)
    return c


def shapes(c):
    """HF's tensor names and shapes for config c (the sizes it must agree with)."""
    d, h, f, V = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"], c["vocab_size"]
    R, D, k, q = c["kv_lora_rank"], c["qk_rope_head_dim"], c["qk_nope_head_dim"], c["q_lora_rank"]
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        out.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                    a + "kv_a_proj_with_mqa.weight": (R + D, d), a + "kv_a_layernorm.weight": (R,),
                    a + "kv_b_proj.weight": (h * 2 * k, R), a + "o_proj.weight": (d, h * k),
                    p + "mlp.gate_proj.weight": (f, d), p + "mlp.up_proj.weight": (f, d),
                    p + "mlp.down_proj.weight": (d, f)})
        if li >= c.get("first_k_dense_replace", 3):  # a MoE layer: router, experts, shared MLP
            E, I, S = c.get("n_routed_experts", 256), c.get("moe_intermediate_size", 2048), c.get("n_shared_experts", 1)
            for n in ("gate_proj", "up_proj", "down_proj"):
                del out[f"{p}mlp.{n}.weight"]
            out[p + "mlp.gate.weight"] = (E, d)
            if c["model_type"] == "deepseek_v3":
                out[p + "mlp.gate.e_score_correction_bias"] = (E,)
            for e in range(E):
                out.update({f"{p}mlp.experts.{e}.gate_proj.weight": (I, d), f"{p}mlp.experts.{e}.up_proj.weight": (I, d),
                            f"{p}mlp.experts.{e}.down_proj.weight": (d, I)})
            if S:
                out.update({p + "mlp.shared_experts.gate_proj.weight": (S * I, d),
                            p + "mlp.shared_experts.up_proj.weight": (S * I, d),
                            p + "mlp.shared_experts.down_proj.weight": (d, S * I)})
        if q is None:
            out[a + "q_proj.weight"] = (h * (k + D), d)
        else:
            out.update({a + "q_a_proj.weight": (q, d), a + "q_a_layernorm.weight": (q,),
                        a + "q_b_proj.weight": (h * (k + D), q)})
    return out


def folder(name, c, tensors=None):
    """A model folder: config c (a dict, or the text itself), float32 weights (tensors: shapes, else c's)."""
    return common.folder(TMP, name, c, tensors if tensors is not None else shapes(c), gain=1.0)


def refused(name, c, message, tensors=None):
    """Every command that opens the model refuses it with one line holding message."""
    common.refused_everywhere(folder(name, c, tensors), message, OUT)


# ---- a dense folder runs ----
ok = folder("dense", config())
expect(["trace", "--model", ok, "--text", "the cat sat", "-o", OUT], 0, "wrote", stream="stdout")
expect(["info", "--model", ok], 0, "KV cache: 48 B/token (latent 4 + RoPE key 2, 2 layers", stream="stdout")
expect(["generate", "--model", ok, "--text", "the cat", "--max-new", "3"], 0)
expect(["trace", "--model", ok, "--text", "the cat sat", "--mla-absorb", "-o", OUT], 0, "wrote", stream="stdout")
expect(["trace", "--model", ok, "--text", "the cat sat", "--past", "2", "-o", OUT], 0, "wrote", stream="stdout")
for v2 in ("deepseek_v2",):
    expect(["trace", "--model", folder("v2", config(architectures=["DeepseekV2ForCausalLM"], model_type=v2)),
            "--text", "the cat", "-o", OUT], 0, "wrote", stream="stdout")
# settings a trained latent attention has its own of, or cannot take
expect(["trace", "--model", ok, "--text", "the cat", "--kv-rank", "8", "-o", OUT], 2, "kv_rank: dense's latent is its own")
expect(["trace", "--model", ok, "--text", "the cat", "--rope-dim", "4", "-o", OUT], 2, "rope_dim: dense's RoPE key")
expect(["trace", "--model", ok, "--text", "the cat sat", "--tiles", "2x2", "-o", OUT], 0, "wrote", stream="stdout")
expect(["trace", "--model", ok, "--text", "the cat", "--alibi", "-o", OUT], 2, "alibi: a trained model's attention")
expect(["stream", "--model", ok, "--text", "the cat sat on the mat", "--window", "4", "--keep-first", "1"], 2,
       "does not handle latent attention's cache yet")

# ---- a folder with mixture-of-experts layers runs, its routing traced ----
MOE_KEYS = {"first_k_dense_replace": 1, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
            "moe_intermediate_size": 4, "n_group": 2, "topk_group": 1}
moe = folder("moe", config(**MOE_KEYS))
expect(["trace", "--model", moe, "--text", "the cat sat", "-o", OUT], 0, "wrote", stream="stdout")
expect(["info", OUT], 0, "layers.1.expert_weights", stream="stdout")
expect(["info", "--model", moe], 0, "mixture of experts from layer 1: 4 routed experts of 4 features, top 2 (sigmoid + "
       "e_score_correction_bias, groups by their two best; n_group 2, topk_group 1), 1 shared, routed_scaling_factor "
       "2.5, norm_topk_prob", stream="stdout")
expect(["generate", "--model", moe, "--text", "the cat", "--max-new", "3"], 0)
V2 = dict(architectures=["DeepseekV2ForCausalLM"], model_type="deepseek_v2")
moe2 = folder("moe_v2", config(**dict(MOE_KEYS, **V2, topk_method="group_limited_greedy")))
expect(["trace", "--model", moe2, "--text", "the cat sat", "-o", OUT], 0, "wrote", stream="stdout")

# ---- the MoE keys HF ignores, or cannot run: one line each, naming the key ----
def moe_refused(name, message, tensors=None, **over):
    c = config(**dict(MOE_KEYS, **over))
    c = {k: v for k, v in c.items() if v != "-"}  # "-": the key left out (the config class's default)
    refused(name, c, message, tensors=tensors)


moe_refused("freq", "moe_layer_freq 2 is not supported: HF's DeepSeek ignores it", moe_layer_freq=2)
moe_refused("v3_scoring", "scoring_func 'softmax' is not supported (DeepSeek-V3 scores experts with a sigmoid",
            scoring_func="softmax")
moe_refused("v3_method", "topk_method 'greedy' is not supported (DeepSeek-V3 chooses with noaux_tc",
            topk_method="greedy")
moe_refused("v2_method", "topk_method 'noaux_tc' is not supported (HF's DeepseekV2 runs greedy and "
            "group_limited_greedy only)", topk_method="noaux_tc", **V2)
moe_refused("v2_top_k", "'num_experts_per_tok' is missing: HF's router takes the top", num_experts_per_tok="-", **V2)
moe_refused("v2_shared_null", "'n_shared_experts' is null: HF's DeepseekV2Moe then has no shared_experts",
            n_shared_experts=None, **V2)
moe_refused("v2_groups", "'n_group' is missing: the group-limited router needs it", topk_method="group_limited_greedy",
            n_group="-", **V2)
moe_refused("group_divides", "n_group 3 does not divide n_routed_experts 4", n_group=3)
moe_refused("group_of_one", "n_group 4 leaves groups of 1 expert; DeepSeek-V3's router scores a group by its two best",
            n_group=4)
moe_refused("top_k_kept", "num_experts_per_tok 3 is more than the 2 experts of topk_group 1 groups",
            num_experts_per_tok=3)
moe_refused("top_k_range", "'num_experts_per_tok' must be a whole number from 1 to 4", num_experts_per_tok=5)
moe_refused("scale", "'routed_scaling_factor' must be a number above 0", routed_scaling_factor=0)
moe_refused("norm", "'norm_topk_prob' must be true or false, not a string", norm_topk_prob="yes")
moe_refused("no_bias", "tensor 'model.layers.1.mlp.gate.e_score_correction_bias' is missing",
            tensors={k: v for k, v in shapes(config(**MOE_KEYS)).items() if "correction" not in k})
moe_refused("expert_shape", "'model.layers.1.mlp.experts.3.down_proj.weight' has shape (8, 5) but config.json "
            "needs (8, 4)", tensors=dict(shapes(config(**MOE_KEYS)), **{"model.layers.1.mlp.experts.3.down_proj.weight":
                                                                        (8, 5)}))
refused("moe_default", {k: v for k, v in config(num_hidden_layers=4).items() if k != "first_k_dense_replace"},
        "n_group 8 does not divide n_routed_experts 4")  # DeepseekV3Config's defaults: first_k_dense_replace 3, n_group 8
# ---- YaRN: DeepSeek-V3's and DeepSeek-V2-Lite's rope_scaling run (the numbers: check_models.py) ----
V3_YARN = {"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
           "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1}
y3 = folder("yarn_v3", config(rope_scaling=V3_YARN, max_position_embeddings=163840))
expect(["info", "--model", y3], 0, "rope: yarn ×40 from 4096 (beta_fast 32, beta_slow 1), attention ×1; scores ×1.874 "
       "(mscale² of mscale_all_dim)", stream="stdout")
expect(["trace", "--model", y3, "--text", "the cat sat", "--tiles", "2x2", "-o", OUT], 0, "wrote", stream="stdout")
expect(["generate", "--model", y3, "--text", "the cat", "--max-new", "3"], 0)
LITE = dict(V3_YARN, mscale=0.707, mscale_all_dim=0.707)
y2 = folder("yarn_v2", config(rope_scaling=LITE, **V2))
expect(["info", "--model", y2], 0, "rope: yarn ×40 from 4096 (beta_fast 32, beta_slow 1), attention ×1; scores ×1.59",
       stream="stdout")
expect(["trace", "--model", y2, "--text", "the cat sat", "--mla-absorb", "-o", OUT], 0, "wrote", stream="stdout")
# the ones a DeepSeek config may hold wrong: one line each, naming the field
for name, rs, msg in (
        ("no_factor", {"type": "yarn", "mscale": 0.707}, "rope_scaling yarn needs its factor"),
        ("factor_small", dict(LITE, factor=0.5), "'rope_scaling.factor' must be a number from 1 to 1e+06, not 0.5"),
        ("betas", dict(LITE, beta_fast=1, beta_slow=32), "rope_scaling.beta_fast (1) must be above "
         "rope_scaling.beta_slow (32)"),
        ("betas_equal", dict(LITE, beta_fast=4, beta_slow=4), "rope_scaling.beta_fast (4) must be above"),
        ("beta_string", dict(LITE, beta_fast="32"), "'rope_scaling.beta_fast' must be a number, not a string"),
        ("factor_string", dict(LITE, factor="40"), "'rope_scaling.factor' must be a number, not a string"),
        ("mscale_string", dict(LITE, mscale_all_dim="0.707"), "'rope_scaling.mscale_all_dim' must be a number, not a "
         "string"),
        ("orig_zero", dict(LITE, original_max_position_embeddings=0), "'rope_scaling.original_max_position_embeddings' "
         "must be a whole number from 1"),
        ("orig_half", dict(LITE, original_max_position_embeddings=40.5),
         "'rope_scaling.original_max_position_embeddings' must be a whole number"),
        ("truncate", dict(LITE, truncate="no"), "'rope_scaling.truncate' must be true or false, not a string"),
        ("type_number", {"type": 3, "factor": 2}, "'rope_scaling.type' must be a string, not a number"),
        ("longrope", {"rope_type": "longrope", "factor": 2}, "rope_scaling type 'longrope' is not supported "
         "(supported: llama3, yarn)"),
        ("dynamic", {"type": "dynamic", "factor": 2}, "rope_scaling type 'dynamic' is not supported"),
        ("linear", {"type": "linear", "factor": 2}, "rope_scaling type 'linear' is not supported"),
        ("notype", {"factor": 2}, "rope_scaling must be null or an object with a rope_type"),
        ("not_object", "yarn", "'rope_scaling' must be null or an object, not a string")):
    refused(f"yarn_{name}", config(rope_scaling=rs), msg)
refused("yarn_nan", json.dumps(config(rope_scaling=dict(LITE, factor=float("nan")))), "config.json",
        tensors=shapes(config()))  # NaN is not JSON
refused("yarn_huge", json.dumps(config(rope_scaling=dict(LITE, beta_fast=12345))).replace("12345", "1e999"),
        "'rope_scaling.beta_fast' must be a number from", tensors=shapes(config()))
refused("fp8", config(quantization_config={"quant_method": "fp8", "weight_block_size": [128, 128]}),
        "quantization_config: quantized checkpoints")
refused("bias", config(attention_bias=True), "attention_bias = true is not supported for DeepseekV3ForCausalLM")
refused("v_dim", config(v_head_dim=2), "v_head_dim 2 differs from qk_nope_head_dim 3")
refused("kv_heads", config(num_key_value_heads=1), "num_key_value_heads 1 must equal num_attention_heads 2")
refused("odd_rope", config(qk_rope_head_dim=3), "'qk_rope_head_dim' must be even")
for key, value, msg in (("kv_lora_rank", 0, "'kv_lora_rank' must be a whole number from 1 to 65536, not 0"),
                        ("kv_lora_rank", -4, "'kv_lora_rank' must be a whole number from 1 to 65536, not -4"),
                        ("kv_lora_rank", "4", "'kv_lora_rank' must be a whole number, not a string"),
                        ("kv_lora_rank", None, "'kv_lora_rank' must be a whole number, not null"),
                        ("q_lora_rank", 0, "'q_lora_rank' must be a whole number from 1 to 65536, not 0"),
                        ("q_lora_rank", 2.5, "'q_lora_rank' must be a whole number from 1 to 65536, not 2.5"),
                        ("q_lora_rank", True, "'q_lora_rank' must be a whole number or null, not a boolean"),
                        ("qk_rope_head_dim", 0, "'qk_rope_head_dim' must be a whole number from 2"),
                        ("qk_nope_head_dim", -1, "'qk_nope_head_dim' must be a whole number from 1"),
                        ("v_head_dim", 1e9, "'v_head_dim' must be a whole number from 1 to 4096"),
                        ("first_k_dense_replace", -1, "'first_k_dense_replace' must be a whole number from 0"),
                        ("rope_interleave", "yes", "'rope_interleave' must be true or false, not a string")):
    refused(f"bad_{key}_{value}", config(**{key: value}), msg, tensors=shapes(config()))
# sizes that disagree with the tensors: named with the tensor and both shapes
refused("shape_rank", config(kv_lora_rank=6), "kv_a_proj_with_mqa.weight' has shape (6, 8) but config.json needs (8, 8)",
        tensors=shapes(config()))
refused("shape_nope", config(qk_nope_head_dim=4, v_head_dim=4), "q_proj.weight' has shape (10, 8) but config.json "
        "needs (12, 8)", tensors=shapes(config()))
refused("q_lora_given", config(q_lora_rank=5), "q_a_proj.weight' is missing", tensors=shapes(config()))
refused("q_lora_null", config(), "tensor 'model.layers.0.self_attn.q_proj.weight' is missing",
        tensors=shapes(config(q_lora_rank=5)))
experts = dict(shapes(config()), **{"model.layers.1.mlp.experts.0.gate_proj.weight": (4, 8)})
refused("experts", config(), "unexpected tensor 'model.layers.1.mlp.experts.0.gate_proj.weight' (not part of a "
        "DeepseekV3ForCausalLM", tensors=experts)
no_norm = {k: v for k, v in shapes(config()).items() if "kv_a_layernorm" not in k}
refused("no_norm", config(), "tensor 'model.layers.0.self_attn.kv_a_layernorm.weight' is missing", tensors=no_norm)

# ---- transformers' defaults where a key is absent (DeepseekV3Config's) ----
def without(*keys, **over):
    return {k: v for k, v in config(**over).items() if k not in keys}


refused("default_kv_rank", without("kv_lora_rank"), "kv_a_proj_with_mqa.weight' has shape (6, 8) but config.json "
        "needs (514, 8)", tensors=shapes(config()))  # 512 + the RoPE key's 2
refused("default_q_rank", without("q_lora_rank"), "q_a_proj.weight' is missing", tensors=shapes(config()))  # 1536
refused("default_v_dim", without("v_head_dim"), "v_head_dim 128 differs from qk_nope_head_dim 3")
d = folder("default_context", without("max_position_embeddings", "rope_interleave", "bos_token_id", "eos_token_id"))
expect(["info", "--model", d], 0, "context 4096", stream="stdout")

# ---- a fuzz: every size key over hostile values, weights as the valid config has them ----
KEYS = ("kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "num_key_value_heads",
        "first_k_dense_replace", "num_attention_heads", "hidden_size", "n_routed_experts", "rope_interleave")
VALUES = (-(2 ** 31), -1, 0, 1, 2, 3, 5, 7, 2 ** 31, 1e300, float("nan"), 2.5, None, "3", True, [], {})
common.fuzz_configs("DeepSeek", 60, 7, lambda rng: config(), KEYS, VALUES,
                    lambda text, c: folder("fuzz", text, tensors=shapes(config())), "the cat", OUT,
                    silent_unless=config())
common.finish()
