#!/usr/bin/env python3
"""Three small random-weight model folders in Hugging Face's layout, for the
gallery's pictures of today's families (scripts/screenshots.sh) and the
window's test (tests/test_window_xvfb.py):

    python3 scripts/family_folders.py OUT     writes OUT/deepseek-moe, OUT/gemma2 and OUT/gpt-oss

- deepseek-moe: DeepseekV3ForCausalLM, 3 layers of latent attention (R = 8,
  RoPE key D = 4); layer 0 dense, layers 1 and 2 a mixture of 16 routed
  experts in 4 groups, each token taking the top 4 (from the best 2 groups),
  plus 1 shared expert.
- gemma2: Gemma2ForCausalLM, 2 layers (the first local, window 3), its
  scores soft-capped at C = 5 (attn_logit_softcapping; real Gemma 2 uses 50,
  which random weights never reach).
- gpt-oss: GptOssForCausalLM, 2 layers (the first local, window 4; the
  second global), 4 query heads over 2 kv heads, a learned sink logit per
  head (−2, 0, 2, 4: from a sink that takes little of a row to one that takes
  most), biases on q, k, v and o, 8 experts, each token taking the top 2;
  plain RoPE (rope_scaling null).

Standard library only; the same bytes every run (random.Random seeded by the
folder's name), so the screenshots they make compare to the pixel."""
import json
import os
import random
import struct
import sys

from wordlevel import tokenizer_json  # scripts/wordlevel.py, beside this file

WORDS = ["<unk>", "<s>", "</s>", "the", "cat", "sat", "on", "mat", ".", "a", "dog", "ran", "far", "and", "it",
         "was", "good", "day", "to", "see", "sun", "moon", "over", "hill"]
TEXT = "the cat sat on the mat . a dog ran over the hill to see the sun"

DEEPSEEK = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 16,
            "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 32,
            "vocab_size": len(WORDS), "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 100.0,
            "tie_word_embeddings": True, "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2,
            "q_lora_rank": None, "kv_lora_rank": 8, "qk_rope_head_dim": 4, "qk_nope_head_dim": 4, "v_head_dim": 4,
            "rope_interleave": True, "first_k_dense_replace": 1, "n_routed_experts": 16, "num_experts_per_tok": 4,
            "n_shared_experts": 1, "moe_intermediate_size": 8, "n_group": 4, "topk_group": 2,
            "norm_topk_prob": True, "routed_scaling_factor": 1.0}

GEMMA2 = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 16, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 32,
          "vocab_size": len(WORDS), "max_position_embeddings": 64, "rms_norm_eps": 1e-6, "rope_theta": 100.0,
          "tie_word_embeddings": True, "hidden_activation": "gelu_pytorch_tanh", "bos_token_id": 1,
          "eos_token_id": 2, "sliding_window": 3, "query_pre_attn_scalar": 8, "attn_logit_softcapping": 5.0,
          "final_logit_softcapping": 30.0}

GPTOSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 16, "num_hidden_layers": 2,
          "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 12,
          "vocab_size": len(WORDS), "max_position_embeddings": 64, "rms_norm_eps": 1e-5, "rope_theta": 100.0,
          "rope_scaling": None, "tie_word_embeddings": True, "bos_token_id": 1, "eos_token_id": 2,
          "sliding_window": 4, "layer_types": ["sliding_attention", "full_attention"], "attention_bias": True,
          "num_local_experts": 8, "num_experts_per_tok": 2, "swiglu_limit": 7.0}


def deepseek_shapes(c):
    d, h, f, V = c["hidden_size"], c["num_attention_heads"], c["intermediate_size"], c["vocab_size"]
    R, D, k, v = c["kv_lora_rank"], c["qk_rope_head_dim"], c["qk_nope_head_dim"], c["v_head_dim"]
    E, I, S = c["n_routed_experts"], c["moe_intermediate_size"], c["n_shared_experts"]
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        out.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                    a + "q_proj.weight": (h * (k + D), d), a + "kv_a_proj_with_mqa.weight": (R + D, d),
                    a + "kv_a_layernorm.weight": (R,), a + "kv_b_proj.weight": (h * (k + v), R),
                    a + "o_proj.weight": (d, h * v)})
        if li < c["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (f, d), p + "mlp.up_proj.weight": (f, d),
                        p + "mlp.down_proj.weight": (d, f)})
            continue
        out[p + "mlp.gate.weight"] = (E, d)
        out[p + "mlp.gate.e_score_correction_bias"] = (E,)
        for e in range(E):
            out.update({f"{p}mlp.experts.{e}.gate_proj.weight": (I, d), f"{p}mlp.experts.{e}.up_proj.weight": (I, d),
                        f"{p}mlp.experts.{e}.down_proj.weight": (d, I)})
        out.update({p + "mlp.shared_experts.gate_proj.weight": (S * I, d),
                    p + "mlp.shared_experts.up_proj.weight": (S * I, d),
                    p + "mlp.shared_experts.down_proj.weight": (d, S * I)})
    return out


def gemma2_shapes(c):
    d, h, g, f, V, k = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["intermediate_size"],
                        c["vocab_size"], c["head_dim"])
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    for li in range(c["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        out.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                    p + "pre_feedforward_layernorm.weight": (d,), p + "post_feedforward_layernorm.weight": (d,),
                    a + "q_proj.weight": (h * k, d), a + "k_proj.weight": (g * k, d), a + "v_proj.weight": (g * k, d),
                    a + "o_proj.weight": (d, h * k), p + "mlp.gate_proj.weight": (f, d),
                    p + "mlp.up_proj.weight": (f, d), p + "mlp.down_proj.weight": (d, f)})
    return out


def gptoss_shapes(c):
    d, h, g, f, V, k, E = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"],
                           c["intermediate_size"], c["vocab_size"], c["head_dim"], c["num_local_experts"])
    out = {"model.embed_tokens.weight": (V, d), "model.norm.weight": (d,)}
    for li in range(c["num_hidden_layers"]):
        p, a, m = f"model.layers.{li}.", f"model.layers.{li}.self_attn.", f"model.layers.{li}.mlp."
        out.update({p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,),
                    a + "q_proj.weight": (h * k, d), a + "q_proj.bias": (h * k,), a + "k_proj.weight": (g * k, d),
                    a + "k_proj.bias": (g * k,), a + "v_proj.weight": (g * k, d), a + "v_proj.bias": (g * k,),
                    a + "o_proj.weight": (d, h * k), a + "o_proj.bias": (d,), a + "sinks": (h,),
                    m + "router.weight": (E, d), m + "router.bias": (E,),
                    m + "experts.gate_up_proj": (E, d, 2 * f), m + "experts.gate_up_proj_bias": (E, 2 * f),
                    m + "experts.down_proj": (E, f, d), m + "experts.down_proj_bias": (E, d)})
    return out


def gptoss_one_d(rng, name):
    """gpt-oss's 1-D tensors: each head's sink logit −2, 0, 2, 4; norm gains near 1; biases near 0."""
    if name.endswith("sinks"):
        gptoss_one_d.head = (getattr(gptoss_one_d, "head", -1) + 1) % 4
        return 2.0 * gptoss_one_d.head - 2.0
    return 1 + 0.1 * rng.gauss(0, 1) if name.endswith("norm.weight") else 0.1 * rng.gauss(0, 1)


def folder(path, c, shapes, one_d):
    """config c and float32 weights of shapes; a 1-D tensor's values one_d(rng, name), the others' N(0, 0.5)."""
    os.makedirs(path, exist_ok=True)
    rng = random.Random(os.path.basename(path))
    header, blobs, off = {}, [], 0
    for name, shape in shapes.items():
        n = 1
        for s in shape:
            n *= s
        vals = [one_d(rng, name) if len(shape) == 1 else rng.gauss(0, 0.5) for _ in range(n)]
        b = struct.pack(f"<{n}f", *vals)
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(path, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    with open(os.path.join(path, "config.json"), "w") as f:
        json.dump(c, f, indent=2)
    with open(os.path.join(path, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(WORDS), f)
    return path


def write(out):
    """Writes the three folders under out; returns their paths (deepseek-moe, gemma2, gpt-oss)."""
    # DeepSeek's norms are gains near 1 (and its router bias small); Gemma's are (1 + w), w near 0
    ds = folder(os.path.join(out, "deepseek-moe"), DEEPSEEK, deepseek_shapes(DEEPSEEK),
                lambda r, name: 1 + 0.1 * r.gauss(0, 1))
    g2 = folder(os.path.join(out, "gemma2"), GEMMA2, gemma2_shapes(GEMMA2), lambda r, name: 0.1 * r.gauss(0, 1))
    gptoss_one_d.head = -1
    go = folder(os.path.join(out, "gpt-oss"), GPTOSS, gptoss_shapes(GPTOSS), gptoss_one_d)
    return ds, g2, go


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    for p in write(sys.argv[1]):
        print(p)
