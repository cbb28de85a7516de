#!/usr/bin/env python3
"""Random-weight checkpoints in the exact Hugging Face layout, one per
architecture attnlab reads: config.json with the keys each family's real
config has, tensor names as transformers saves them, BF16 shards listed by
model.safetensors.index.json, and a tokenizer.json.

    python3 tests/make_checkpoints.py OUT            tiny ones: OUT/llama3, OUT/mistral, ...
    python3 tests/make_checkpoints.py OUT --shape smollm2-135m   full size, for bench/
    python3 tests/make_checkpoints.py OUT --shape tinyllama-1.1b  (2.2 GB in two shards)
    python3 tests/make_checkpoints.py OUT --shape gemma3-270m     (gemma-3-270m's config, 536 MB)

As a module: write(path, arch, seed, ...) returns (weights, config) with the
weights as float64 tensors holding exactly the values saved (after BF16
rounding). Needs numpy; torch only for the random numbers' generator."""
import argparse
import json
import os
import struct
import sys

import numpy as np

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import wordlevel  # noqa: E402  (scripts/wordlevel.py: tokenizer.json shared with scripts/family_folders.py)
from common import GEMMA3_270M  # noqa: E402

WORDS = ["<unk>", "<s>", "</s>", "the", "cat", "sat", "on", "mat", ".", "a", "dog", "ran", "far", "and", "it",
         "was", "good", "day", "to", "see", "sun", "moon", "over", "hill"]

# Tiny versions of each family's config.json: the same keys, small sizes.
TINY = {
    "llama3": {  # Llama 3.2's keys: rope_scaling llama3, head_dim, eos list, tied
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 48,
        "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 131072,
        # with k = 8 the pairs' wavelengths are 6.3, 63, 628 and 6283 positions: one stays
        # (< 64/4), one is blended, two are slowed (> 64/1)
        "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 64, "rope_type": "llama3"},
        "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False, "hidden_act": "silu",
        "initializer_range": 0.02, "pretraining_tp": 1, "use_cache": True, "tie_word_embeddings": True,
        "bos_token_id": 1, "eos_token_id": [2, 0], "torch_dtype": "bfloat16", "transformers_version": "4.45.0"},
    "tinyllama": {  # TinyLlama / SmolLM2 keys: no head_dim, no rope_scaling, untied
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 32, "num_hidden_layers": 3,
        "num_attention_heads": 4, "num_key_value_heads": 1, "intermediate_size": 40, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "max_position_embeddings": 64, "rope_scaling": None, "attention_bias": False,
        "hidden_act": "silu", "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2,
        "torch_dtype": "bfloat16", "use_cache": True},
    "mistral": {  # Mistral 7B v0.1's keys: sliding_window
        "architectures": ["MistralForCausalLM"], "model_type": "mistral", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 56, "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0, "max_position_embeddings": 128, "sliding_window": 4, "hidden_act": "silu",
        "tie_word_embeddings": False, "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "bfloat16",
        "attention_dropout": 0.0, "use_cache": True},
    "qwen2": {  # Qwen2.5's keys: q/k/v biases implied, use_sliding_window false, tied
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 48, "rms_norm_eps": 1e-6,
        "rope_theta": 1000000.0, "max_position_embeddings": 256, "sliding_window": 256, "use_sliding_window": False,
        "max_window_layers": 2, "hidden_act": "silu", "tie_word_embeddings": True, "bos_token_id": 1,
        "eos_token_id": 2, "torch_dtype": "bfloat16", "attention_dropout": 0.0, "use_cache": True},
    "qwen3": {  # Qwen3's keys: head_dim larger than hidden / heads, q_norm and k_norm
        "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16, "intermediate_size": 48,
        "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "max_position_embeddings": 256, "rope_scaling": None,
        "attention_bias": False, "sliding_window": None, "use_sliding_window": False, "max_window_layers": 2,
        "hidden_act": "silu", "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2,
        "torch_dtype": "bfloat16", "attention_dropout": 0.0, "use_cache": True},
}
# Qwen3 with the YaRN its model cards add for long texts (factor 4 from 32,768;
# here from 4096). With k = 16 (8 pairs) and θ = 10^6 pair m turns
# 4096·10^(−6m/8)/2π times over 4096 positions: the ramp's ends m(32 turns) =
# 1.75 and m(1 turn) = 3.76 become 1 and 4, so pairs 0-1 keep ω, 2-3 are
# blended, 4-7 are ω / 4; cos and sin × 0.1·ln 4 + 1. max_position_embeddings
# is factor · 4096 (older transformers read the factor from it).
TINY["qwen3_yarn"] = dict(TINY["qwen3"], max_position_embeddings=16384,
                          rope_scaling={"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096})

# SmolLM2-135M's sizes (its config.json), for the benchmarks.
SMOLLM2_135M = dict(TINY["tinyllama"], hidden_size=576, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, intermediate_size=1536, vocab_size=49152, max_position_embeddings=8192,
                    rope_theta=100000.0, tie_word_embeddings=True, bos_token_id=1, eos_token_id=2)
# TinyLlama-1.1B's sizes (TinyLlama-1.1B-Chat-v1.0's config.json): GQA 32/4, untied, 22 layers.
TINYLLAMA_1_1B = dict(TINY["tinyllama"], hidden_size=2048, num_hidden_layers=22, num_attention_heads=32,
                      num_key_value_heads=4, intermediate_size=5632, vocab_size=32000, max_position_embeddings=2048,
                      rope_theta=10000.0, tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
# Gemma-3-270M's: google/gemma-3-270m's config.json as published (tests/common.py), tied.
SHAPES = {"smollm2-135m": SMOLLM2_135M, "tinyllama-1.1b": TINYLLAMA_1_1B, "gemma3-270m": GEMMA3_270M}
# Gemma's specials lead its vocabulary: <pad> 0, <eos> 1, <bos> 2, <unk> 3 (its config's ids)
GEMMA_WORDS = ["<pad>", "<eos>", "<bos>", "<unk>"] + WORDS[3:]


def bf16_round(a):
    """float32 → the nearest bfloat16 (ties to even), as uint16."""
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")


def write_shard(path, tensors):
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = bf16_round(a).tobytes()
        header[name] = {"dtype": "BF16", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)
    return off


def tokenizer_json(words=WORDS, specials=3, bos="<s>", unk="<unk>"):
    """A WordLevel tokenizer of words, the first specials of them special (<unk> <s> </s>), with a
    template that puts bos before every text (scripts/wordlevel.py)."""
    return wordlevel.tokenizer_json(words, specials, bos, unk)


def weights(cfg, rng):
    """HF tensor names → float32 arrays, the shapes of cfg's architecture."""
    d, L, f, V = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["intermediate_size"], cfg["vocab_size"]
    h, g = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    k = cfg.get("head_dim") or d // h
    arch = cfg["architectures"][0]
    gemma = arch == "Gemma3ForCausalLM"
    n = lambda *shape, s=1.0: (rng.standard_normal(shape) * s).astype(np.float32)
    # Gemma: the embedding times √d enters the residual, so N(0, 1/d) makes it of RMS 1;
    # its norms' gains are 1 + w, so w is drawn about 0
    W = {"model.embed_tokens.weight": n(V, d, s=1 / d ** 0.5 if gemma else 1.0)}
    gain = (lambda m: n(m, s=0.1)) if gemma else (lambda m: 1 + n(m, s=0.1))
    for li in range(L):
        p = f"model.layers.{li}."
        W[p + "input_layernorm.weight"] = gain(d)
        W[p + "self_attn.q_proj.weight"] = n(h * k, d, s=2 / d ** 0.5)
        W[p + "self_attn.k_proj.weight"] = n(g * k, d, s=2 / d ** 0.5)
        W[p + "self_attn.v_proj.weight"] = n(g * k, d, s=1 / d ** 0.5)
        if arch == "Qwen2ForCausalLM":
            W[p + "self_attn.q_proj.bias"] = n(h * k, s=0.5)
            W[p + "self_attn.k_proj.bias"] = n(g * k, s=0.5)
            W[p + "self_attn.v_proj.bias"] = n(g * k, s=0.5)
        if arch == "Qwen3ForCausalLM" or gemma:
            W[p + "self_attn.q_norm.weight"] = (n(k, s=0.3) if gemma else 1 + n(k, s=0.3))
            W[p + "self_attn.k_norm.weight"] = (n(k, s=0.3) if gemma else 1 + n(k, s=0.3))
        W[p + "self_attn.o_proj.weight"] = n(d, h * k, s=1 / (h * k) ** 0.5)
        W[p + "post_attention_layernorm.weight"] = gain(d)
        if gemma:  # the norms before the MLP and after it
            W[p + "pre_feedforward_layernorm.weight"] = gain(d)
            W[p + "post_feedforward_layernorm.weight"] = gain(d)
        W[p + "mlp.gate_proj.weight"] = n(f, d, s=1 / d ** 0.5)
        W[p + "mlp.up_proj.weight"] = n(f, d, s=1 / d ** 0.5)
        W[p + "mlp.down_proj.weight"] = n(d, f, s=1 / f ** 0.5)
    W["model.norm.weight"] = gain(d)
    if not cfg.get("tie_word_embeddings", gemma):  # Gemma3TextConfig ties by default (gemma-3-270m's
        W["lm_head.weight"] = n(V, d, s=1 / d ** 0.5)  # config.json does not say)
    return W


def write(path, cfg, seed=0, shards=2, tokenizer=None, keep=True):
    """Writes a checkpoint folder; returns (weights as saved, float64 numpy, or None unless keep; cfg)."""
    cfg = dict(cfg)
    cfg.setdefault("vocab_size", len(WORDS))
    rng = np.random.default_rng(seed)
    W = weights(cfg, rng)
    os.makedirs(path, exist_ok=True)
    names = list(W)
    if shards <= 1:
        write_shard(os.path.join(path, "model.safetensors"), W)
    else:
        per = -(-len(names) // shards)
        weight_map, total = {}, 0
        for i in range(shards):
            part = {nm: W[nm] for nm in names[i * per:(i + 1) * per]}
            fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
            total += write_shard(os.path.join(path, fname), part)
            weight_map.update({nm: fname for nm in part})
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map},
                  open(os.path.join(path, "model.safetensors.index.json"), "w"), indent=2)
    json.dump(cfg, open(os.path.join(path, "config.json"), "w"), indent=2)
    json.dump(tokenizer or tokenizer_json(), open(os.path.join(path, "tokenizer.json"), "w"))
    if not keep:
        return None, cfg
    saved = {nm: (bf16_round(a).astype(np.uint32) << 16).view(np.float32).astype(np.float64) for nm, a in W.items()}
    return saved, cfg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--shape", choices=["tiny", *SHAPES], default="tiny")
    a = ap.parse_args()
    if a.shape == "tiny":
        for i, (name, cfg) in enumerate(TINY.items()):
            write(os.path.join(a.out, name), cfg, seed=i)
            print(os.path.join(a.out, name))
    else:
        write_shape(a.out, a.shape)
        print(a.out)


def write_shape(path, shape):
    """A full-size checkpoint of SHAPES[shape] (TinyLlama's in two shards), seed 0; its vocabulary the
    tiny one's words (Gemma's: its specials first), then w24, w25, ... (one token a word)."""
    cfg = SHAPES[shape]
    gemma = cfg is GEMMA3_270M
    words = GEMMA_WORDS if gemma else WORDS
    vocab = {w: i for i, w in enumerate(words)}
    vocab.update({f"w{i}": i for i in range(len(words), cfg["vocab_size"])})
    tok = tokenizer_json(GEMMA_WORDS, 4, "<bos>") if gemma else tokenizer_json()
    tok["model"]["vocab"] = vocab
    return write(path, cfg, seed=0, shards=2 if cfg is TINYLLAMA_1_1B else 1, tokenizer=tok, keep=False)


if __name__ == "__main__":
    main()
