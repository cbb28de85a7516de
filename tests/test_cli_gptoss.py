#!/usr/bin/env python3
"""gpt-oss folders (GptOssForCausalLM) at the command line: they run (trace
with the sink column, info with the local layers and the KV bytes noted,
generate, a past), and every config this engine cannot run as transformers
would is refused with one line and a non-zero exit, never a crash or a quiet
wrong answer: a missing key, tensors that disagree with the config, MXFP4
experts, another rope type, broken YaRN fields, hostile values; then a fuzz
of the gpt-oss keys. YaRN runs: given as rope_scaling, as v5's
rope_parameters, or GptOssConfig's default when rope_scaling is absent.
Standard library only; the harness and the folder writer are tests/common.py.
The numbers themselves are check_models.py's (PyTorch, tests/hf_gptoss.py)."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, expect, run  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-cli-gptoss-")
OUT = os.path.join(TMP, "t.safetensors")


def config(**over):
    c = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 8, "num_hidden_layers": 3,
         "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 6, "intermediate_size": 4,
         "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": len(common.WORDS),
         "max_position_embeddings": 16, "rms_norm_eps": 1e-5, "rope_theta": 100.0, "rope_scaling": None,
         "sliding_window": 3, "attention_bias": True, "swiglu_limit": 7.0, "tie_word_embeddings": False,
         "router_aux_loss_coef": 0.9, "output_router_logits": False, "bos_token_id": 1, "eos_token_id": 2}
    c.update(over)
    return c


def shapes(c):
    """HF's tensor names and shapes for config c: the experts stacked (E, in, out)."""
    d, h, g, k, V = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                     c["vocab_size"])
    E, I = c["num_local_experts"], c["intermediate_size"]
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,), "lm_head.weight": (V, d)}
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        out.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                    a + "q_proj.weight": (h * k, d), a + "k_proj.weight": (g * k, d), a + "v_proj.weight": (g * k, d),
                    a + "o_proj.weight": (d, h * k), a + "sinks": (h,),
                    p + "mlp.router.weight": (E, d), p + "mlp.router.bias": (E,),
                    p + "mlp.experts.gate_up_proj": (E, d, 2 * I), p + "mlp.experts.gate_up_proj_bias": (E, 2 * I),
                    p + "mlp.experts.down_proj": (E, I, d), p + "mlp.experts.down_proj_bias": (E, d)})
        if c.get("attention_bias", True):
            out.update({a + "q_proj.bias": (h * k,), a + "k_proj.bias": (g * k,), a + "v_proj.bias": (g * k,),
                        a + "o_proj.bias": (d,)})
    return out


def folder(name, c, tensors=None):
    """A model folder: config c (a dict, or the text itself), float32 weights (tensors: shapes, else c's)."""
    return common.folder(TMP, name, c, tensors if tensors is not None else shapes(c))


def refused(name, c, message, tensors=None):
    """Every command that opens the model refuses it with one line holding message."""
    common.refused_everywhere(folder(name, c, tensors), message, OUT)


def renamed(tensors, old, new):
    return {k.replace(old, new): v for k, v in tensors.items()}


# ---- it runs ----
ok = folder("gptoss", config())
expect(["trace", "--model", ok, "--text", "the cat sat on the mat", "-o", OUT], 0, "wrote", stream="stdout")
expect(["trace", "--model", ok, "--text", "the cat sat on the mat", "--past", "3", "-o", OUT], 0, "wrote",
       stream="stdout")
expect(["generate", "--model", ok, "--text", "the cat", "--max-new", "3"], 0)
expect(["generate", "--model", ok, "--text", "the cat", "--max-new", "3", "--probs"], 0)
expect(["trace", "--model", ok, "--text", "the cat sat on the mat", "-o", OUT], 0, "wrote", stream="stdout")
# the default pattern: layers 0 and 2 slide, 1 sees everything
expect(["info", OUT], 0, "local layers (each masks keys outside its window of 3): 2 of 3 (0, 2)", stream="stdout")
r = run(["info", OUT])
rows = {line.split()[1]: line for line in r.stdout.decode().splitlines() if line.strip()[:1].isdigit()}
check("a gpt-oss trace's stage table: every layer has sink_weight and the router's stages, no dense MLP; "
      "layer 0's mask names its window, layer 1's none; q and out with their biases",
      all(f"layers.{li}.{st}" in rows for li in range(3) for st in ("sink_weight", "router_scores", "expert_weights"))
      and "layers.0.gate" not in rows and "the sink's column X dropped" in rows.get("layers.0.weights", "")
      and "outside the window" in rows.get("layers.0.mask", "") and "window" not in rows.get("layers.1.mask", "?window")
      and "out = merged · W_O + b_O" in rows.get("layers.0.out", "") and "+ b_Q" in rows.get("layers.0.q", ""),
      "; ".join(rows.get(k, k + " missing") for k in ("layers.0.weights", "layers.0.mask", "layers.1.mask")))
# K and V, 2 · 1 kv head · 6 · 4 B = 48 B a layer and token: the global layer's every token, the 2 local
# layers' (96 B a token) for their last 3 tokens only (kv_bytes.c)
expect(["info", "--model", ok], 0, "KV cache: 48 B/token (the 1 global layer, a key and a value per kv head, "
       "float32) + local layers capped at 3 tokens × 96 B (2 layers: 288 B at most); in BF16 24 B/token + 3 × 48 B",
       stream="stdout")
expect(["info", "--model", ok], 0, "local layers (sliding_window 3): 2 of 3 (0, 2); each reads only its last 3 "
       "positions", stream="stdout")
expect(["info", "--model", ok], 0, "gpt-oss: a learned sink logit per head", stream="stdout")
expect(["info", "--model", ok], 0, "every layer a mixture of 4 experts of 4 features, top 2", stream="stdout")
d = folder("types", config(layer_types=["full_attention", "sliding_attention", "full_attention"]))
expect(["info", "--model", d], 0, "local layers (sliding_window 3): 1 of 3 (1)", stream="stdout")
expect(["trace", "--model", d, "--text", "the cat sat on the mat", "-o", OUT], 0, "wrote", stream="stdout")
d = folder("global", config(layer_types=["full_attention"] * 3))
expect(["trace", "--model", d, "--text", "the cat", "--sliding-window", "2", "-o", OUT], 2,
       "sliding_window: every layer of global sees the whole past")
r = run(["info", "--model", d])
check("a gpt-oss folder without local layers: info notes none", r.returncode == 0 and b"local layers" not in r.stdout)
d = folder("nobias", config(attention_bias=False))
expect(["info", "--model", d], 0, "no attention biases", stream="stdout")
expect(["generate", "--model", d, "--text", "the cat", "--max-new", "2"], 0)
# GptOssConfig's defaults where keys are absent: 8 kv heads, head_dim 64, 128 experts, top 4, window 128
d = folder("defaults", {k: v for k, v in config(num_attention_heads=8).items()
                        if k not in ("num_key_value_heads", "head_dim", "num_local_experts", "num_experts_per_tok",
                                     "sliding_window", "max_position_embeddings")},
           tensors=shapes(config(num_attention_heads=8, num_key_value_heads=8, head_dim=64, num_local_experts=128)))
expect(["info", "--model", d], 0, "128 experts of 4 features, top 4", stream="stdout")
expect(["info", "--model", d], 0, "local layers (sliding_window 128)", stream="stdout")
expect(["info", "--model", d], 0, "context 131072", stream="stdout")
# num_experts is GptOssConfig's other name for num_local_experts
d = folder("num_experts", {**{k: v for k, v in config().items() if k != "num_local_experts"}, "num_experts": 4},
           tensors=shapes(config()))
expect(["info", "--model", d], 0, "4 experts of 4 features", stream="stdout")
# YaRN (gpt-oss's own RoPE): given, as GptOssConfig's default when rope_scaling is absent, and as v5's
# rope_parameters; each runs, and info says the ramp and the attention factor (0.1·ln f + 1)
YARN = {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
        "original_max_position_embeddings": 4096, "truncate": False}
for name, c, line in (
        ("yarn", config(rope_scaling=YARN), "rope: yarn ×32 from 4096 (beta_fast 32, beta_slow 1, truncate false), "
                                            "attention ×1.347"),
        ("no_rope_scaling", {k: v for k, v in config().items() if k != "rope_scaling"},
         "rope: yarn ×32 from 4096 (beta_fast 32, beta_slow 1, truncate false), attention ×1.347"),
        ("yarn_v5", {**{k: v for k, v in config().items() if k not in ("rope_scaling", "rope_theta")},
                     "rope_parameters": {"rope_type": "yarn", "factor": 4.0, "rope_theta": 100.0,
                                         "original_max_position_embeddings": 8, "truncate": False}},
         "rope: yarn ×4 from 8 (beta_fast 32, beta_slow 1, truncate false), attention ×1.139")):
    d = folder(name, c)
    expect(["info", "--model", d], 0, line, stream="stdout")
    expect(["trace", "--model", d, "--text", "the cat sat on the mat", "-o", OUT], 0, "wrote", stream="stdout")
    expect(["generate", "--model", d, "--text", "the cat", "--max-new", "3"], 0)
r = run(["info", "--model", folder("plain", config())])
check("rope_scaling null: plain RoPE, no rope line", r.returncode == 0 and b"rope: yarn" not in r.stdout)

# settings a trained gpt-oss has its own of, or that would run it wrongly
expect(["trace", "--model", ok, "--text", "the cat", "--sliding-window", "2", "-o", OUT], 2,
       "sliding_window: gptoss's layers have their own windows")

# FlashAttention's tiles with the learned sinks: each head's X_h enters the online softmax's last step, so the
# tiled context is the plain one's (and the logits after it), in a folder with its local layers and sinks
TILED = OUT + ".tiled"
expect(["trace", "--model", ok, "--text", "the cat sat on the mat and the dog", "-o", OUT], 0, "wrote", stream="stdout")
expect(["trace", "--model", ok, "--text", "the cat sat on the mat and the dog", "--tiles", "2x3", "-o", TILED], 0,
       "wrote", stream="stdout")
def tensors(path):
    header, data = common.read_st(path)
    return {k: struct.unpack(f"<{(v['data_offsets'][1] - v['data_offsets'][0]) // 4}f",
                             data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}
plain, tiled = tensors(OUT), tensors(TILED)
for name in [n for n in plain if n.endswith(".context")] + ["logits"]:
    a, b = plain[name], tiled.get(name, ())
    scale = max(1.0, max(abs(x) for x in a))
    diff = max((abs(x - y) for x, y in zip(a, b)), default=float("inf"))
    check(f"--tiles 2x3: {name} as the plain pass's with the per-head sinks (max |diff| {diff:.2e})",
          len(a) == len(b) and diff <= 2e-5 * scale, (len(a), len(b), diff))
check("--tiles 2x3: the tiled trace keeps its running max and sum", any(n.endswith(".tile_max") for n in tiled))
expect(["trace", "--model", ok, "--text", "the cat", "--sink-logit", "1", "-o", OUT], 2, "sink_logit: a trained model's")
expect(["stream", "--model", ok, "--text", "the cat sat on the mat", "--window", "4", "--keep-first", "1"], 2,
       "does not handle gpt-oss's learned sinks and local layers yet")

# ---- gpt-oss-20b's config.json as published: its MXFP4 experts named first; without its quantization_config
# (a BF16 copy's) its YaRN is read, and what stops this folder is its weights: the sparse folder below holds the
# small test config's tensors, not 2880-wide ones, and the first the loader meets is named with both shapes ----
REAL = {"architectures": ["GptOssForCausalLM"], "attention_bias": True, "attention_dropout": 0.0,
        "eos_token_id": 200002, "experts_per_token": 4, "head_dim": 64, "hidden_act": "silu", "hidden_size": 2880,
        "initial_context_length": 4096, "initializer_range": 0.02, "intermediate_size": 2880,
        "layer_types": ["sliding_attention", "full_attention"] * 12, "max_position_embeddings": 131072,
        "model_type": "gpt_oss", "num_attention_heads": 64, "num_experts_per_tok": 4, "num_hidden_layers": 24,
        "num_key_value_heads": 8, "num_local_experts": 32, "output_router_logits": False, "pad_token_id": 199999,
        "quantization_config": {"modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                                           "model.embed_tokens", "lm_head"], "quant_method": "mxfp4"},
        "rms_norm_eps": 1e-05, "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                                                "original_max_position_embeddings": 4096, "rope_type": "yarn",
                                                "truncate": False},
        "rope_theta": 150000, "router_aux_loss_coef": 0.9, "sliding_window": 128, "swiglu_limit": 7.0,
        "tie_word_embeddings": False, "transformers_version": "4.55.0.dev0", "use_cache": True, "vocab_size": 201088}
refused("gpt-oss-20b", REAL, "quantization_config: MXFP4 experts (*_blocks, *_scales) are not read",
        tensors=shapes(config()))
BF16 = {k: v for k, v in REAL.items() if k != "quantization_config"}
refused("gpt-oss-20b-bf16", BF16, "'model.embed_tokens.weight' has shape (%d, 8) but config.json needs (201088, 2880)"
        % len(common.WORDS), tensors=shapes(config()))

# ---- what it does not run: one line each, naming the key ----
mx = renamed(renamed(shapes(config()), "gate_up_proj", "gate_up_proj_blocks"), "down_proj", "down_proj_blocks")
mx = {k.replace("_blocks_bias", "_bias"): v for k, v in mx.items()}
refused("mxfp4", config(quantization_config={"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}),
        "quantization_config: MXFP4 experts (*_blocks, *_scales) are not read", tensors=mx)
refused("mxfp4_no_config", config(), "'model.layers.0.mlp.experts.gate_up_proj' is stored as MXFP4", tensors=mx)
refused("quant", config(quantization_config={"quant_method": "bitsandbytes"}),
        "quantization_config: quantized checkpoints are not supported")
refused("yarn_no_factor", config(rope_scaling={"rope_type": "yarn", "beta_fast": 32.0, "beta_slow": 1.0}),
        "rope_scaling yarn needs its factor")
refused("yarn_betas", config(rope_scaling={"rope_type": "yarn", "factor": 4.0, "beta_fast": 1.0, "beta_slow": 32.0}),
        "rope_scaling.beta_fast (1) must be above rope_scaling.beta_slow (32)")
refused("yarn_truncate", config(rope_scaling={"rope_type": "yarn", "factor": 4.0, "truncate": "false"}),
        "rope_scaling.truncate")
refused("yarn_v5_factor", {**{k: v for k, v in config().items() if k != "rope_scaling"},
                           "rope_parameters": {"rope_type": "yarn", "factor": 0.5, "rope_theta": 100.0}},
        "'rope_parameters.factor' must be a number from 1")
refused("dynamic", config(rope_scaling={"rope_type": "dynamic", "factor": 2.0}),
        "rope_scaling type 'dynamic' is not supported")
refused("rope_parameters_dynamic", {**{k: v for k, v in config().items() if k != "rope_scaling"},
                                    "rope_parameters": {"rope_type": "dynamic", "factor": 2.0}},
        "rope_parameters.rope_type 'dynamic' is not supported for GptOssForCausalLM")
refused("missing", {k: v for k, v in config().items() if k != "hidden_size"}, "'hidden_size' is missing",
        tensors=shapes(config()))
refused("partial", config(partial_rotary_factor=0.5), "partial_rotary_factor other than 1 is not supported")
refused("window_null", config(sliding_window=None), "sliding_window is null but layer_types has sliding_attention")
refused("chunked", config(layer_types=["sliding_attention", "chunked_attention", "full_attention"]),
        "layer_types[1] 'chunked_attention' is not an attention type this engine runs")
refused("kv_default", {k: v for k, v in config().items() if k != "num_key_value_heads"},
        "num_key_value_heads is absent, so 8 (GptOssConfig's default), more than the 2 heads",
        tensors=shapes(config()))
for key, value, msg in (("num_experts_per_tok", 5, "'num_experts_per_tok' must be a whole number from 1 to 4"),
                        ("num_experts_per_tok", 0, "'num_experts_per_tok' must be a whole number from 1"),
                        ("num_local_experts", 0, "'num_local_experts' must be a whole number from 1"),
                        ("swiglu_limit", "7", "'swiglu_limit' must be a number, not a string"),
                        ("swiglu_limit", -1, "'swiglu_limit' must be a number from 1e-06"),
                        ("sliding_window", 0, "'sliding_window' must be a whole number from 1"),
                        ("head_dim", 5, "heads of 5 and 1 K/V heads do not fit"),
                        ("attention_bias", "yes", "attention_bias"),
                        ("layer_types", "sliding", "'layer_types' must be a list of 3 attention types")):
    refused(f"bad_{key}_{value}", config(**{key: value}), msg, tensors=shapes(config()))
# sizes that disagree with the tensors: named with the tensor and both shapes
bad = dict(shapes(config()))
bad["model.layers.1.self_attn.sinks"] = (3,)
refused("shape_sinks", config(), "'model.layers.1.self_attn.sinks' has shape (3) but config.json needs (2)", tensors=bad)
bad = dict(shapes(config()))
bad["model.layers.0.mlp.experts.gate_up_proj"] = (4, 8, 4)  # as if gate and up were not both there
refused("shape_gate_up", config(), "'model.layers.0.mlp.experts.gate_up_proj' has shape (4, 8, 4) but config.json "
        "needs (4, 8, 8)", tensors=bad)
bad = dict(shapes(config()))
bad["model.layers.0.mlp.experts.down_proj"] = (4, 8, 4)  # (E, out, in): transposed
refused("shape_down", config(), "'model.layers.0.mlp.experts.down_proj' has shape (4, 8, 4) but config.json needs "
        "(4, 4, 8)", tensors=bad)
refused("no_bias_tensors", config(), "tensor 'model.layers.0.self_attn.q_proj.bias' is missing",
        tensors=shapes(config(attention_bias=False)))
refused("extra_bias", config(attention_bias=False), "unexpected tensor 'model.layers.0.self_attn.q_proj.bias'",
        tensors=shapes(config()))
refused("no_sinks", config(), "tensor 'model.layers.0.self_attn.sinks' is missing",
        tensors={k: v for k, v in shapes(config()).items() if "sinks" not in k})

# ---- a fuzz: every gpt-oss key over hostile values, weights as the valid config has them ----
KEYS = ("num_local_experts", "num_experts_per_tok", "swiglu_limit", "swiglu_alpha", "sliding_window", "head_dim",
        "layer_types", "rope_scaling", "num_key_value_heads", "attention_bias", "quantization_config",
        "intermediate_size", "rope_theta")
VALUES = (-(2 ** 31), -1, 0, 1, 2, 3, 4, 6, 2 ** 31, 1e300, float("nan"), 2.5, None, "3", True, [], {},
          ["sliding_attention"] * 3, {"rope_type": "yarn", "factor": 32.0}, {"quant_method": "mxfp4"})
common.fuzz_configs("gpt-oss", 40, 13, lambda rng: config(), KEYS, VALUES,
                    lambda text, c: folder("fuzz", text, tensors=shapes(config())), "the cat sat on", OUT)
common.finish()
