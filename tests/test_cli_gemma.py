#!/usr/bin/env python3
"""Gemma 2 and Gemma 3 (text) folders at the command line: they run (trace,
info with the local layers noted, generate, a past), and every config this
engine cannot run as transformers would is refused with one line and a
non-zero exit, never a crash or a quiet wrong answer: a rope_scaling type
other than linear and yarn (which run), quantization_config, an attention type it does not run, another
activation, biases, bidirectional attention, transformers 5's
rope_parameters, the multimodal gemma3 wrapper; malformed keys; tensors that
disagree with the config; then a fuzz of the Gemma keys over hostile values.
Standard library only (float32 weights packed by hand); the harness is
tests/common.py. The numbers themselves are check_models.py's (PyTorch,
tests/hf_gemma.py)."""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, expect, run  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-cli-gemma-")
OUT = os.path.join(TMP, "t.safetensors")
WORDS = common.WORDS
tokenizer = common.tokenizer


def config(g3=False, **over):
    c = {"architectures": ["Gemma3ForCausalLM" if g3 else "Gemma2ForCausalLM"],
         "model_type": "gemma3_text" if g3 else "gemma2", "hidden_size": 8, "num_hidden_layers": 3,
         "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 6, "intermediate_size": 12,
         "vocab_size": len(WORDS), "max_position_embeddings": 16, "rms_norm_eps": 1e-6, "rope_theta": 100.0,
         "tie_word_embeddings": True, "hidden_activation": "gelu_pytorch_tanh", "bos_token_id": 1,
         "eos_token_id": 2, "sliding_window": 3, "query_pre_attn_scalar": 6}
    if g3:
        c.update({"rope_local_base_freq": 10.0, "sliding_window_pattern": 3})
    c.update(over)
    return c


def shapes(c):
    """HF's tensor names and shapes for config c (the sizes it must agree with)."""
    d, h, g, f, V = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"],
                     c["vocab_size"])
    k = c.get("head_dim", 256)
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        out.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                    p + "pre_feedforward_layernorm.weight": (d,), p + "post_feedforward_layernorm.weight": (d,),
                    a + "q_proj.weight": (h * k, d), a + "k_proj.weight": (g * k, d), a + "v_proj.weight": (g * k, d),
                    a + "o_proj.weight": (d, h * k), p + "mlp.gate_proj.weight": (f, d),
                    p + "mlp.up_proj.weight": (f, d), p + "mlp.down_proj.weight": (d, f)})
        if c["model_type"] == "gemma3_text":
            out.update({a + "q_norm.weight": (k,), a + "k_norm.weight": (k,)})
    return out


def folder(name, c, tensors=None):
    """A model folder: config c (a dict, or the text itself), float32 weights (tensors: shapes, else c's)."""
    return common.folder(TMP, name, c, tensors if tensors is not None else shapes(c), gain=0.0)


def refused(name, c, message, tensors=None):
    """Every command that opens the model refuses it with one line holding message."""
    common.refused_everywhere(folder(name, c, tensors), message, OUT)


# ---- both run ----
g2 = folder("gemma2", config())
g3 = folder("gemma3", config(True, rope_scaling={"rope_type": "linear", "factor": 8.0}))
for d in (g2, g3):
    expect(["trace", "--model", d, "--text", "the cat sat on the mat", "-o", OUT], 0, "wrote", stream="stdout")
    expect(["trace", "--model", d, "--text", "the cat sat on the mat", "--past", "3", "-o", OUT], 0, "wrote",
           stream="stdout")
    expect(["generate", "--model", d, "--text", "the cat", "--max-new", "3"], 0)
# generate's cache keeps a local layer's last rows only (about window + 16 of them): 50 sampled tokens, far
# past that, each given the probability a full traced pass of the same tokens gives it
long = folder("gemma2_long", config(max_position_embeddings=64))
r = run(["generate", "--model", long, "--text", "the cat", "--max-new", "50", "--temperature", "1", "--seed", "5",
         "--probs"])
rows = [line.split("\t") for line in r.stdout.decode().splitlines() if line.count("\t") == 2]
r2 = run(["trace", "--model", long, "--tokens", " ".join(["the", "cat"] + [w for w, _, _ in rows]), "-o", OUT])
worst, seen = None, 0
if r.returncode == 0 and r2.returncode == 0 and len(rows) > 20:
    header, data = common.read_st(OUT)
    probs = header["probs"]
    V, at = probs["shape"][-1], probs["data_offsets"][0]
    worst = 0.0
    for i, (_, tid, p) in enumerate(rows):  # token i was chosen at position 2 + i (after <s> the cat …)
        want = struct.unpack_from("<f", data, at + 4 * ((2 + i) * V + int(tid)))[0]
        worst = max(worst, abs(want - float(p)))
        seen += 1
check("generate past a Gemma window: each sampled token's probability is a full pass's", worst is not None and
      worst < 2e-5, f"{seen} tokens, worst |Δp| {worst}; exit {r.returncode}/{r2.returncode} {r2.stderr.decode()[:200]}")
expect(["trace", "--model", g2, "--text", "the cat sat on the mat", "-o", OUT], 0, "wrote", stream="stdout")
expect(["info", OUT], 0, "local layers (each masks keys outside its window of 3): 2 of 3 (0, 2)", stream="stdout")
r = run(["info", OUT])
rows = {line.split()[1]: line for line in r.stdout.decode().splitlines() if line.strip()[:1].isdigit()}
check("a Gemma trace's stage table: layer 0's mask names the window, layer 1's none; Gemma's own formulas",
      "outside the window" in rows.get("layers.0.mask", "") and "window" not in rows.get("layers.1.mask", "?window")
      and "√query_pre_attn_scalar" in rows.get("layers.0.scores", "")
      and "RMSNorm(out) ⊙ (1 + w_post_attn)" in rows.get("layers.0.resid_mid", "")
      and "RMSNorm(mlp_out) ⊙ (1 + w_post_ff)" in rows.get("layers.0.resid_out", "")
      and "GELU_tanh" in rows.get("layers.0.act", "") and "· √d" in rows.get("embeddings", ""),
      "; ".join(rows.get(k, k + " missing") for k in ("layers.0.mask", "layers.1.mask", "layers.0.scores")))
# 2 · 1 kv head · 6 · 4 bytes = 48 B a layer; Gemma 2's layers 0 and 2 are local, Gemma 3's 0 and 1 (pattern 3)
expect(["info", "--model", g2], 0, "local layers (sliding_window 3): 2 of 3 (0, 2)", stream="stdout")
# one global layer caches 48 B a token; the two local ones at most 3 tokens of 96 B
expect(["info", "--model", g2], 0, "KV cache: 48 B/token (the 1 global layer, a key and a value per kv head, float32) "
       "+ local layers capped at 3 tokens × 96 B (2 layers: 288 B at most); in BF16 24 B/token + 3 × 48 B",
       stream="stdout")
expect(["info", "--model", g2], 0, "attn_logit_softcapping 50, final_logit_softcapping 30", stream="stdout")
expect(["info", "--model", g3], 0, "local layers (sliding_window 3): 2 of 3 (0, 1)", stream="stdout")
expect(["info", "--model", g3], 0, "attn_logit_softcapping none, final_logit_softcapping none", stream="stdout")
expect(["info", "--model", g3], 0, "RoPE base 100 on global layers, 10 on local ones", stream="stdout")
d = folder("types", config(True, layer_types=["full_attention", "sliding_attention", "full_attention"]))
expect(["info", "--model", d], 0, "local layers (sliding_window 3): 1 of 3 (1)", stream="stdout")
# the defaults where keys are absent: Gemma3TextConfig's pattern 6 and context 131072, Gemma2Config's 8192
d = folder("g3_defaults", {k: v for k, v in config(True, num_hidden_layers=7).items()
                           if k not in ("sliding_window_pattern", "max_position_embeddings")})
expect(["info", "--model", d], 0, "local layers (sliding_window 3): 6 of 7 (0, 1, 2, 3, 4, 6)", stream="stdout")
expect(["info", "--model", d], 0, "context 131072", stream="stdout")
d = folder("g2_defaults", {k: v for k, v in config().items() if k != "max_position_embeddings"})
expect(["info", "--model", d], 0, "context 8192", stream="stdout")
# settings a trained Gemma has its own of, or that would run it wrongly
expect(["trace", "--model", g2, "--text", "the cat", "--sliding-window", "2", "-o", OUT], 2,
       "sliding_window: gemma2's layers have their own windows")
expect(["trace", "--model", g2, "--text", "the cat", "--tiles", "2x2", "-o", OUT], 2, "tiles: the tiled attention")
expect(["trace", "--model", g2, "--text", "the cat", "--softcap", "20", "-o", OUT], 2, "softcap: a trained model's")
expect(["trace", "--model", g2, "--text", "the cat", "--softcap", "50", "-o", OUT], 0, "wrote", stream="stdout")
expect(["stream", "--model", g2, "--text", "the cat sat on the mat", "--window", "4", "--keep-first", "1"], 2,
       "does not handle Gemma's local and global layers yet")

# ---- gemma-3-270m's config.json as published, over weights of its shapes (a sparse file: info reads headers) ----
REAL = common.GEMMA3_270M
real = os.path.join(TMP, "gemma-3-270m-shape")
os.makedirs(real, exist_ok=True)
header, off = {}, 0
for name, shape in shapes(REAL).items():
    n = 2 * (shape[0] * (shape[1] if len(shape) > 1 else 1))
    header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [off, off + n]}
    off += n
h = json.dumps(header).encode()
h += b" " * (-len(h) % 8)
with open(os.path.join(real, "model.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(h)) + h)
    f.truncate(8 + len(h) + off)
json.dump(REAL, open(os.path.join(real, "config.json"), "w"))
json.dump(tokenizer(), open(os.path.join(real, "tokenizer.json"), "w"))
# 18 layers · 1 kv head · 256 · 2 (K and V) · 4 bytes; 15 local layers of 512 positions, layers 5, 11, 17 global
expect(["info", "--model", real], 0, "KV cache: 6,144 B/token (the 3 global layers, a key and a value per kv head, "
       "float32) + local layers capped at 512 tokens × 30,720 B (15 layers: 15,728,640 B at most); in BF16 "
       "3,072 B/token + 512 × 15,360 B", stream="stdout")
expect(["info", "--model", real], 0, "local layers (sliding_window 512): 15 of 18 (0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, "
       "13, 14, 15, 16); each reads only its last 512 positions", stream="stdout")
expect(["info", "--model", real], 0, "RoPE base 1e+06 on global layers, 10000 on local ones", stream="stdout")
# 3 global layers · 32768 positions · 2048 B + 15 local · 512 · 2048 B = 207 MiB; all 18 · 32768 · 2048 B = 1152 MiB
expect(["info", "--model", real], 0, "at its context of 32768 tokens a cache that keeps only the windows needs 207.0 MiB "
       "in float32 (103.5 in BF16; attnlab generate keeps only them), every position of every layer 1152.0 MiB", stream="stdout")

# ---- what it does not run: one line each, naming the key ----
# YaRN runs on Gemma 3's global layers (the numbers: check_models.py --only gemma)
d = folder("yarn", config(True, rope_scaling={"rope_type": "yarn", "factor": 8.0}))
expect(["info", "--model", d], 0, "rope: yarn ×8 from ", stream="stdout")
expect(["trace", "--model", d, "--text", "the cat sat", "-o", OUT], 0, "wrote", stream="stdout")
refused("yarn_nofactor", config(True, rope_scaling={"rope_type": "yarn"}), "rope_scaling yarn needs its factor")
refused("longrope", config(True, rope_scaling={"rope_type": "longrope", "factor": 8.0}),
        "rope_scaling type 'longrope' is not supported for Gemma (supported: linear, yarn, default)")
refused("llama3", config(rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1,
                                       "high_freq_factor": 4, "original_max_position_embeddings": 8}),
        "rope_scaling type 'llama3' is not supported for Gemma")
refused("linear_nofactor", config(True, rope_scaling={"rope_type": "linear"}), "rope_scaling linear needs its factor")
refused("quant", config(quantization_config={"quant_method": "bitsandbytes", "load_in_4bit": True}),
        "quantization_config: quantized checkpoints are not supported")
refused("chunked", config(True, layer_types=["sliding_attention", "chunked_attention", "full_attention"]),
        "layer_types[1] 'chunked_attention' is not an attention type this engine runs")
refused("types_len", config(layer_types=["sliding_attention"]), "'layer_types' must be a list of 3 attention types")
refused("gelu", config(hidden_activation="gelu"), "hidden_activation 'gelu' is not supported for Gemma 2")
refused("bias", config(True, attention_bias=True), "attention_bias = true is not supported for Gemma 3")
refused("bidirectional", config(True, use_bidirectional_attention=True),
        "use_bidirectional_attention = true is not supported for Gemma 3")
refused("rope_parameters", config(True, rope_parameters={"full_attention": {"rope_type": "default"}}),
        "rope_parameters (transformers 5's RoPE layout) is not read yet")
refused("multimodal", {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
                       "text_config": config(True)}, "architecture 'Gemma3ForConditionalGeneration' is not supported",
        tensors=shapes(config(True)))
for key, value, msg in (("query_pre_attn_scalar", 0, "'query_pre_attn_scalar' must be a number from 1e-06"),
                        ("query_pre_attn_scalar", "6", "'query_pre_attn_scalar' must be a number, not a string"),
                        ("attn_logit_softcapping", -1, "'attn_logit_softcapping' must be a number from 1e-06"),
                        ("final_logit_softcapping", "30", "'final_logit_softcapping' must be a number or null"),
                        ("sliding_window", 0, "'sliding_window' must be a whole number from 1"),
                        ("sliding_window", 2.5, "'sliding_window' must be a whole number from 1"),
                        ("head_dim", 5, "heads of 5 and 1 K/V heads do not fit"),
                        ("head_dim", "6", "'head_dim' must be a whole number, not a string"),
                        ("layer_types", "sliding", "'layer_types' must be a list of 3 attention types")):
    refused(f"bad_{key}_{value}", config(**{key: value}), msg, tensors=shapes(config()))
refused("bad_pattern", config(True, sliding_window_pattern=0), "'sliding_window_pattern' must be a whole number from 1",
        tensors=shapes(config(True)))
refused("bad_local_theta", config(True, rope_local_base_freq=1), "'rope_local_base_freq' must be a number from",
        tensors=shapes(config(True)))
# sizes that disagree with the tensors: named with the tensor and both shapes
refused("shape_head_dim", config(head_dim=4), "q_proj.weight' has shape (12, 8) but config.json needs (8, 8)",
        tensors=shapes(config()))
refused("default_head_dim", {k: v for k, v in config().items() if k != "head_dim"},
        "q_proj.weight' has shape (12, 8) but config.json needs (512, 8)", tensors=shapes(config()))  # 256 a head
refused("no_qk_norm", config(True), "tensor 'model.layers.0.self_attn.q_norm.weight' is missing",
        tensors=shapes(config()))
refused("extra_qk_norm", config(), "unexpected tensor 'model.layers.0.self_attn.q_norm.weight' (not part of a "
        "Gemma2ForCausalLM", tensors=shapes(config(True, model_type="gemma3_text")))
no_post = {k: v for k, v in shapes(config()).items() if "post_feedforward" not in k}
refused("no_post_norm", config(), "tensor 'model.layers.0.post_feedforward_layernorm.weight' is missing",
        tensors=no_post)

# ---- a fuzz: every Gemma key over hostile values, weights as the valid config has them ----
KEYS = ("query_pre_attn_scalar", "attn_logit_softcapping", "final_logit_softcapping", "sliding_window", "head_dim",
        "layer_types", "sliding_window_pattern", "rope_local_base_freq", "rope_scaling", "num_key_value_heads")
VALUES = (-(2 ** 31), -1, 0, 1, 2, 3, 6, 2 ** 31, 1e300, float("nan"), 2.5, None, "3", True, [], {},
          ["sliding_attention"] * 3, {"rope_type": "linear", "factor": 0.5})
common.fuzz_configs("Gemma", 60, 11, lambda rng: config(rng.random() < 0.5), KEYS, VALUES,
                    lambda text, c: folder("fuzz", text, tensors=shapes(config(c["model_type"] == "gemma3_text"))),
                    "the cat sat on", OUT)
common.finish()
