#!/usr/bin/env python3
"""OLMo 2 and SmolLM3 folders at the command line: each runs (trace, info with
its family and KV bytes a token, generate, a trace over a past), and every
config this engine cannot run as transformers would is refused with one line
naming the field and a non-zero exit: quantization_config, a rope_scaling or
rope_parameters type other than default and llama3, attention_bias,
a sliding window, partial_rotary_factor, malformed no_rope_layers, a missing
key, tensors that do not fit (a per-head q_norm in an OLMo 2 folder, an
input_layernorm it has not, an MLP of another width). Then a fuzz of SmolLM3's NoPE keys. Standard library only (float32
weights packed by hand); the harness is tests/common.py. The numbers
themselves are check_models.py's (PyTorch: --only olmo2, --only smollm3)."""
import json
import os
import random
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, expect, run  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-cli-olmo2-smollm3-")
OUT = os.path.join(TMP, "t.safetensors")
WORDS = common.WORDS
tokenizer = common.tokenizer


def config(family, **over):
    c = {"architectures": ["Olmo2ForCausalLM" if family == "olmo2" else "SmolLM3ForCausalLM"],
         "model_type": family, "hidden_size": 8, "num_hidden_layers": 4, "num_attention_heads": 2,
         "num_key_value_heads": 1, "intermediate_size": 12, "vocab_size": len(WORDS), "max_position_embeddings": 16,
         "rms_norm_eps": 1e-6, "rope_theta": 100.0, "tie_word_embeddings": family == "smollm3", "hidden_act": "silu",
         "bos_token_id": 1, "eos_token_id": 2, "attention_bias": False, "rope_scaling": None}
    if family == "smollm3":
        c.update({"no_rope_layers": [1, 1, 1, 0], "no_rope_layer_interval": 4, "use_sliding_window": False,
                  "sliding_window": None, "max_window_layers": 4, "mlp_bias": False,
                  "layer_types": ["full_attention"] * 4})
    c.update(over)
    return {k: v for k, v in c.items() if v is not Ellipsis}  # ...: the key left out


def shapes(c):
    """HF's tensor names and shapes for config c (OLMo 2 or SmolLM3)."""
    d, h, f, V = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"], c["vocab_size"]
    olmo = c["model_type"] == "olmo2"
    g = c.get("num_key_value_heads", h if olmo else 4) or h  # the config classes' defaults
    k = c.get("head_dim") or d // h
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    if not c.get("tie_word_embeddings", not olmo):
        out["lm_head.weight"] = (V, d)
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        out.update({a + "q_proj.weight": (h * k, d), a + "k_proj.weight": (g * k, d), a + "v_proj.weight": (g * k, d),
                    a + "o_proj.weight": (d, h * k), p + "post_attention_layernorm.weight": (d,),
                    p + "mlp.gate_proj.weight": (f, d), p + "mlp.up_proj.weight": (f, d),
                    p + "mlp.down_proj.weight": (d, f)})
        if olmo:
            out.update({a + "q_norm.weight": (h * k,), a + "k_norm.weight": (g * k,),
                        p + "post_feedforward_layernorm.weight": (d,)})
        else:
            out[p + "input_layernorm.weight"] = (d,)
    return out


def folder(name, c, tensors=None):
    """A model folder: config c (a dict, or the text itself), float32 weights (tensors: shapes, else c's)."""
    return common.folder(TMP, name, c, tensors if tensors is not None else shapes(c), gain=1.0)


def refused(name, c, message, tensors=None):
    """Every command that opens the model refuses it with one line holding message."""
    common.refused_everywhere(folder(name, c, tensors), message, OUT)


# ---- each runs; info names the family and the KV bytes a token (2 · 4 layers · 1 kv head · 4 · 4 B) ----
for fam in ("olmo2", "smollm3"):
    ok = folder(fam, config(fam))
    expect(["trace", "--model", ok, "--text", "the cat sat", "-o", OUT], 0, "wrote", stream="stdout")
    expect(["trace", "--model", ok, "--text", "the cat sat on", "--past", "2", "-o", OUT], 0, "wrote", stream="stdout")
    expect(["generate", "--model", ok, "--text", "the cat", "--max-new", "3"], 0)
    expect(["info", "--model", ok], 0, "KV cache: 128 B a token (a key and a value per kv head, 4 layers",
           stream="stdout")
    expect(["stream", "--model", ok, "--text", "the cat sat on the mat", "--window", "4", "--keep-first", "1"], 2,
           "re-rotates keys as a Llama layer does")
expect(["info", "--model", os.path.join(TMP, "olmo2")], 0, "(Olmo2ForCausalLM): 4 layers", stream="stdout")
# a trace's stage table: each layer's own formula (layer 3 has no RoPE), OLMo 2's norms over the whole projection
expect(["trace", "--model", os.path.join(TMP, "smollm3"), "--text", "the cat sat", "-o", OUT], 0, "wrote",
       stream="stdout")
r = run(["info", OUT])
lines = r.stdout.decode().splitlines()
nope = [ln.split()[1] for ln in lines if "this layer has no RoPE (SmolLM3's no_rope_layers 0: NoPE)" in ln]
check("info FILE: the NoPE layer's q_rope and k_rope say so, the others' do not",
      nope == ["layers.3.q_rope", "layers.3.k_rope"], repr(nope))
expect(["trace", "--model", os.path.join(TMP, "olmo2"), "--text", "the cat sat", "-o", OUT], 0, "wrote",
       stream="stdout")
expect(["info", OUT], 0, "q_norm = split(q / √(mean over all h·k features of q² + ε) ⊙ g_q): OLMo 2 normalises the "
       "whole projection", stream="stdout")
expect(["info", OUT], 0, "resid_mid = resid_in + RMSNorm(out) ⊙ g_post_attn", stream="stdout")
expect(["info", "--model", os.path.join(TMP, "olmo2")], 0, "q and k RMS-normalised over the whole projection (8 and 4 "
       "features)", stream="stdout")
expect(["info", "--model", os.path.join(TMP, "smollm3")], 0, "SmolLM3: 1 of 4 layers without RoPE (no_rope_layers 0: "
       "NoPE): layers 3", stream="stdout")
# the interval when no list is given: every 2nd layer (1, 3) without RoPE
d = folder("interval", config("smollm3", no_rope_layers=..., no_rope_layer_interval=2))
expect(["info", "--model", d], 0, "2 of 4 layers without RoPE (no_rope_layers 0: NoPE): layers 1, 3", stream="stdout")
# SmolLM3Config's defaults: 4 kv heads, tied, rope_theta 2e6 (the model runs)
d = folder("defaults", config("smollm3", num_attention_heads=4, num_key_value_heads=..., tie_word_embeddings=...,
                              rope_theta=..., hidden_size=16))
expect(["info", "--model", d], 0, "heads 4, kv_heads 4", stream="stdout")
# transformers v5's rope_parameters with the default type
d = folder("rope_parameters", config("olmo2", rope_theta=..., rope_parameters={"rope_type": "default",
                                                                               "rope_theta": 500000.0}))
expect(["trace", "--model", d, "--text", "the cat", "-o", OUT], 0, "wrote", stream="stdout")

# ---- the published checkpoints' config.json (allenai/OLMo-2-0425-1B, HuggingFaceTB/SmolLM3-3B) over
# headers of their real shapes (a sparse file: info reads no weight): the family and the KV bytes a token ----
PUBLISHED = {
    "olmo2": {"architectures": ["Olmo2ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
              "bos_token_id": None, "eos_token_id": 100257, "hidden_act": "silu", "hidden_size": 2048,
              "initializer_range": 0.02, "intermediate_size": 8192, "max_position_embeddings": 4096,
              "model_type": "olmo2", "num_attention_heads": 16, "num_hidden_layers": 16, "num_key_value_heads": 16,
              "pad_token_id": 100277, "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 500000,
              "tie_word_embeddings": False, "torch_dtype": "float32", "transformers_version": "4.48.0.dev0",
              "use_cache": True, "vocab_size": 100352},
    "smollm3": {"architectures": ["SmolLM3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
                "bos_token_id": None, "eos_token_id": 128012, "hidden_act": "silu", "hidden_size": 2048,
                "initializer_range": 0.02, "intermediate_size": 11008,
                "layer_types": ["full_attention"] * 36, "max_position_embeddings": 65536, "max_window_layers": 28,
                "mlp_bias": False, "model_type": "smollm3", "no_rope_layer_interval": 4,
                "no_rope_layers": [1, 1, 1, 0] * 9, "num_attention_heads": 16, "num_hidden_layers": 36,
                "num_key_value_heads": 4, "pad_token_id": 128004, "pretraining_tp": 2, "rms_norm_eps": 1e-06,
                "rope_scaling": None, "rope_theta": 5000000.0, "sliding_window": None, "torch_dtype": "bfloat16",
                "transformers_version": "4.54.0.dev0", "use_cache": False, "use_sliding_window": False,
                "vocab_size": 128256},
}


def headers_only(name, c):
    """A folder of config c whose model.safetensors has c's tensors in BF16, all zero (sparse)."""
    d = os.path.join(TMP, name)
    shutil.rmtree(d, True)
    os.makedirs(d)
    header, off = {}, 0
    for k, shape in shapes(c).items():
        n = 2
        for x in shape:
            n *= x
        header[k] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + n]}
        off += n
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        f.truncate(8 + len(h) + off)
    json.dump(c, open(os.path.join(d, "config.json"), "w"))
    return d


# OLMo-2-0425-1B: 2 · 16 layers · 16 kv heads · 128 · 4 B; SmolLM3-3B: 2 · 36 · 4 · 128 · 4 B
d = headers_only("olmo2_published", PUBLISHED["olmo2"])
expect(["info", "--model", d], 0, "(Olmo2ForCausalLM): 16 layers, d_model 2048, heads 16, kv_heads 16, head_dim 128, "
       "MLP 8192, vocabulary 100352, context 4096", stream="stdout")
expect(["info", "--model", d], 0, "KV cache: 262144 B a token (a key and a value per kv head, 16 layers, float32; "
       "131072 B in BF16)", stream="stdout")
d = headers_only("smollm3_published", PUBLISHED["smollm3"])
expect(["info", "--model", d], 0, "(SmolLM3ForCausalLM): 36 layers, d_model 2048, heads 16, kv_heads 4, head_dim 128, "
       "MLP 11008, vocabulary 128256, context 65536", stream="stdout")
expect(["info", "--model", d], 0, "KV cache: 147456 B a token (a key and a value per kv head, 36 layers, float32; "
       "73728 B in BF16)", stream="stdout")
expect(["info", "--model", d], 0, "9 of 36 layers without RoPE (no_rope_layers 0: NoPE): layers 3, 7, 11, 15, 19, 23, "
       "27, 31, 35", stream="stdout")

# ---- what it does not follow: one line each, naming the field ----
for fam, arch in (("olmo2", "Olmo2ForCausalLM"), ("smollm3", "SmolLM3ForCausalLM")):
    base = shapes(config(fam))
    refused(f"{fam}_quant", config(fam, quantization_config={"quant_method": "gptq", "bits": 4}),
            f"quantization_config: quantized {arch} checkpoints are not supported")
    refused(f"{fam}_yarn", config(fam, rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                                     "original_max_position_embeddings": 8}),
            "rope_scaling type 'yarn' is not supported")
    refused(f"{fam}_rp_yarn", config(fam, rope_parameters={"rope_type": "yarn", "factor": 4.0}),
            f"rope_parameters.rope_type 'yarn' is not supported for {arch}")
    refused(f"{fam}_rp_extra", config(fam, rope_parameters={"rope_type": "default", "rope_theta": 10.0, "factor": 2}),
            "rope_parameters.factor is not supported")
    refused(f"{fam}_bias", config(fam, attention_bias=True), f"attention_bias = true is not supported for {arch}",
            tensors=base)
    refused(f"{fam}_window", config(fam, use_sliding_window=True, sliding_window=4),
            f"use_sliding_window = true is not supported for {arch}")
    refused(f"{fam}_act", config(fam, hidden_act="gelu"), "hidden_act 'gelu' is not supported")
    refused(f"{fam}_missing", config(fam, num_hidden_layers=...), "config.json: 'num_hidden_layers' is missing",
            tensors=base)
    refused(f"{fam}_shape", config(fam, intermediate_size=10), "'model.layers.0.mlp.gate_proj.weight' has shape "
            "(12, 8) but config.json needs (10, 8)", tensors=base)
refused("smollm3_types", config("smollm3", layer_types=["full_attention"] * 3 + ["sliding_attention"]),
        "layer_types[3] 'sliding_attention' is not supported for SmolLM3ForCausalLM")
refused("smollm3_types_short", config("smollm3", layer_types=["full_attention"]),
        "'layer_types' has 1 entries, fewer than the 4 layers")
refused("smollm3_partial", config("smollm3", partial_rotary_factor=0.5), "partial_rotary_factor other than 1")
refused("smollm3_short", config("smollm3", no_rope_layers=[1, 0]), "'no_rope_layers' has 2 entries, fewer than the 4")
refused("smollm3_two", config("smollm3", no_rope_layers=[1, 2, 1, 0]), "'no_rope_layers[1]' must be 1 (RoPE) or 0")
refused("smollm3_kind", config("smollm3", no_rope_layers="1110"), "'no_rope_layers' must be a list of 0 and 1 or null")
refused("smollm3_interval", config("smollm3", no_rope_layers=None, no_rope_layer_interval=0),
        "'no_rope_layer_interval' must be a whole number from 1, not 0")
refused("smollm3_kv_default", config("smollm3", num_key_value_heads=...),  # 4 by default, over 2 heads
        "2 heads of 4 and 4 K/V heads do not fit")
# tensors that do not fit the family
per_head = dict(shapes(config("olmo2")), **{"model.layers.0.self_attn.q_norm.weight": (4,)})
refused("olmo2_per_head", config("olmo2"), "'model.layers.0.self_attn.q_norm.weight' has shape (4) but config.json "
        "needs (8)", tensors=per_head)
pre = dict(shapes(config("olmo2")), **{"model.layers.0.input_layernorm.weight": (8,)})
refused("olmo2_pre_norm", config("olmo2"), "unexpected tensor 'model.layers.0.input_layernorm.weight' (not part of a "
        "Olmo2ForCausalLM", tensors=pre)
no_post = {k: v for k, v in shapes(config("olmo2")).items() if "post_feedforward" not in k}
refused("olmo2_no_post", config("olmo2"), "tensor 'model.layers.0.post_feedforward_layernorm.weight' is missing",
        tensors=no_post)

# ---- a fuzz of SmolLM3's NoPE keys ----
VALUES = (-1, 0, 1, 2, 4, 2 ** 31, 1e300, 2.5, None, "4", True, [], [1], [0, 0, 0, 0], [1, 1, 1, 1, 1, 1], {})
rng = random.Random(11)
crashes = []
for i in range(40):
    c = config("smollm3")
    for key in rng.sample(("no_rope_layers", "no_rope_layer_interval", "layer_types"), rng.randint(1, 2)):
        c[key] = rng.choice(VALUES)
    d = folder("fuzz", json.dumps(c), tensors=shapes(config("smollm3")))
    r = run(["trace", "--model", d, "--text", "the cat", "-o", OUT])
    good = r.returncode == 0 or (r.returncode in (1, 2) and common.one_line(r))
    if not good:
        crashes.append(f"{json.dumps(c)[:200]}: exit {r.returncode} {r.stderr.decode(errors='replace')[:200]!r}")
check(f"fuzzed SmolLM3 NoPE keys: 40 runs end in success or one line and exit 1 or 2 ({len(crashes)} did not)",
      not crashes, "; ".join(crashes[:3]))
common.finish()
