"""A dense DeepSeek-V3 decoder (multi-head latent attention, every layer's MLP
dense) written from the Hugging Face DeepseekV3ForCausalLM semantics, in plain
PyTorch, and its config.json. It shares llama.py's RMSNorm, safetensors I/O and
layer layout; only the attention differs.

Per layer, as llama.py:  h = x + o_proj(mla(rms_norm(x)))
                         x = h + down_proj(silu(gate_proj(n)) * up_proj(n)),  n = rms_norm(h)
The attention, for H heads, latent rank R, head dims nope N, rope P, value V
(q_lora_rank null: the query is one projection, as in DeepSeek-V2-Lite):

  q            = q_proj(x)                      (b, s, H, N + P), split [q_nope | q_pe]
  [c | k_pe]   = kv_a_proj_with_mqa(x)          (b, s, R + P): the latent and ONE rope key
  c_kv         = kv_a_layernorm(c)              RMSNorm over R, eps 1e-6 (HF fixes it there,
                                                whatever rms_norm_eps says)
  [k_nope | v] = kv_b_proj(c_kv)                (b, s, H, N + V): per-head keys and values
  q_pe, k_pe   = RoPE over P dims (k_pe shared by every head)
  scores       = (q_nope·k_nope + q_pe·k_pe) / sqrt(N + P), causal, softmax
  out          = o_proj(weights @ v)            (H·V -> hidden)

What a decoder caches per token and layer is c_kv and k_pe: R + P values.

RoPE with rope_interleave true (HF's default for deepseek_v3, which this config
writes out): the P rope features are read as pairs (x0, x1), (x2, x3), ... and
pair i is turned by the angle pos * theta^(-2i/P), as DeepSeek's own complex
multiplication does. HF computes this by first permuting the features to
(x0, x2, x4, ..., x1, x3, ...) and then applying its rotate-half formula, so
the rotated q_pe and k_pe come out in that permuted order; the scores are the
same either way. rope() below does exactly HF's permute-then-rotate-half."""
import math
import os

import torch
import torch.nn as nn

from llama import Llama, RMSNorm, read_json, read_safetensors

LATENT_EPS = 1e-6   # DeepseekV3RMSNorm's default: HF builds kv_a_layernorm without rms_norm_eps


class Config:
    def __init__(self, vocab, d=128, layers=4, heads=4, kv_rank=48, nope=32, rope_dim=16, v_dim=32, ffn=363,
                 ctx=128, eps=1e-5, theta=10000.0, tie=True, interleave=True):
        self.vocab, self.d, self.layers, self.heads = vocab, d, layers, heads
        self.kv_rank, self.nope, self.rope_dim, self.v_dim = kv_rank, nope, rope_dim, v_dim
        self.ffn, self.ctx, self.eps, self.theta, self.tie = ffn, ctx, eps, theta, tie
        self.interleave, self.causal = interleave, True
        self.qk_dim = nope + rope_dim

    @property
    def kv_values_per_token(self):
        """What the latent cache keeps per token: c_kv and k_pe in every layer."""
        return (self.kv_rank + self.rope_dim) * self.layers

    @classmethod
    def from_hf(cls, hf):
        """The Config of a deepseek_v3 config.json this module wrote (the inverse of hf())."""
        try:
            if hf["model_type"] != "deepseek_v3":
                raise ValueError(f"config.json: model_type {hf['model_type']!r}, not deepseek_v3")
            if hf.get("q_lora_rank") is not None:
                raise ValueError("config.json: q_lora_rank must be null (one q_proj)")
            if hf["first_k_dense_replace"] < hf["num_hidden_layers"]:
                raise ValueError("config.json: mixture-of-experts layers (first_k_dense_replace < layers)")
            if hf.get("rope_scaling") is not None:
                raise ValueError("config.json: rope_scaling is not supported")
            c = cls(hf["vocab_size"], d=hf["hidden_size"], layers=hf["num_hidden_layers"],
                    heads=hf["num_attention_heads"], kv_rank=hf["kv_lora_rank"], nope=hf["qk_nope_head_dim"],
                    rope_dim=hf["qk_rope_head_dim"], v_dim=hf["v_head_dim"], ffn=hf["intermediate_size"],
                    ctx=hf["max_position_embeddings"], eps=hf["rms_norm_eps"], theta=hf["rope_theta"],
                    tie=hf.get("tie_word_embeddings", False), interleave=hf.get("rope_interleave", True))
        except KeyError as e:
            raise ValueError(f"config.json: no {e}") from None
        return c

    def hf(self, dtype):
        """config.json as DeepseekV3Config writes it: every key, the unused
        mixture-of-experts ones too (no layer has experts: first_k_dense_replace
        is the number of layers)."""
        return {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                "vocab_size": self.vocab, "max_position_embeddings": self.ctx, "hidden_size": self.d,
                "intermediate_size": self.ffn, "moe_intermediate_size": self.ffn,
                "num_hidden_layers": self.layers, "num_attention_heads": self.heads,
                "num_key_value_heads": self.heads, "n_shared_experts": 1, "n_routed_experts": 1,
                "routed_scaling_factor": 1.0, "kv_lora_rank": self.kv_rank, "q_lora_rank": None,
                "qk_rope_head_dim": self.rope_dim, "v_head_dim": self.v_dim, "qk_nope_head_dim": self.nope,
                "qk_head_dim": self.qk_dim, "head_dim": self.rope_dim, "n_group": 1, "topk_group": 1,
                "num_experts_per_tok": 1, "first_k_dense_replace": self.layers, "norm_topk_prob": True,
                "rope_interleave": self.interleave, "hidden_act": "silu", "initializer_range": 0.02,
                "rms_norm_eps": self.eps, "pretraining_tp": 1, "use_cache": True,
                "rope_theta": self.theta, "rope_scaling": None, "attention_bias": False,
                "attention_dropout": 0.0, "tie_word_embeddings": self.tie, "pad_token_id": None,
                "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": dtype}


def rope(x, pos, theta, interleave):
    """x: (b, h, s, P); pos: (s,). HF's DeepSeek RoPE: with interleave the
    features are first permuted to (x0, x2, ..., x1, x3, ...), then rotated
    half against half; the result stays in the permuted order."""
    P = x.shape[-1]
    if interleave:
        x = x.reshape(*x.shape[:-1], P // 2, 2).transpose(-1, -2).reshape(x.shape)
    dt = torch.promote_types(x.dtype, torch.float32)   # float32 as HF; float64 in the checks
    inv = 1.0 / theta ** (torch.arange(0, P, 2, dtype=dt) / P)
    ang = pos.to(dt)[:, None] * inv[None, :]
    ang = torch.cat([ang, ang], -1)
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., :P // 2], x[..., P // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


def softmax32(scores):
    """The softmax in float32 at least, as HF's eager attention (float64 stays float64)."""
    return torch.softmax(scores.to(torch.promote_types(scores.dtype, torch.float32)), -1)


class Attention(nn.Module):
    """Multi-head latent attention with the weights named as HF names them."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.q_proj = nn.Linear(c.d, c.heads * c.qk_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(c.d, c.kv_rank + c.rope_dim, bias=False)
        self.kv_a_layernorm = RMSNorm(c.kv_rank, LATENT_EPS)
        self.kv_b_proj = nn.Linear(c.kv_rank, c.heads * (c.nope + c.v_dim), bias=False)
        self.o_proj = nn.Linear(c.heads * c.v_dim, c.d, bias=False)

    def latent(self, x):
        """x: (b, s, d) -> what the cache keeps: c_kv (b, s, R) after the latent
        norm, and k_pe (b, 1, s, P) after RoPE."""
        c = self.c
        b, s, _ = x.shape
        ckv, k_pe = self.kv_a_proj_with_mqa(x).split([c.kv_rank, c.rope_dim], -1)
        return self.kv_a_layernorm(ckv), rope(k_pe.view(b, 1, s, c.rope_dim), torch.arange(s), c.theta,
                                               c.interleave)

    def query(self, x):
        """x: (b, s, d) -> q_nope (b, H, s, N) and q_pe (b, H, s, P) after RoPE."""
        c = self.c
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, c.heads, c.qk_dim).transpose(1, 2)
        q_nope, q_pe = q.split([c.nope, c.rope_dim], -1)
        return q_nope, rope(q_pe, torch.arange(s), c.theta, c.interleave)

    def weights(self, x, causal):
        """x: (b, s, d) -> the attention weights (b, H, s, s) and the values (b, H, s, V)."""
        c = self.c
        b, s, _ = x.shape
        q_nope, q_pe = self.query(x)
        ckv, k_pe = self.latent(x)
        kv = self.kv_b_proj(ckv).view(b, s, c.heads, c.nope + c.v_dim).transpose(1, 2)
        k_nope, v = kv.split([c.nope, c.v_dim], -1)
        # k_pe (b, 1, s, P) broadcasts over the heads: one rope key for all of them
        scores = (q_nope @ k_nope.transpose(-1, -2) + q_pe @ k_pe.transpose(-1, -2)) / math.sqrt(c.qk_dim)
        if causal:
            scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
        return softmax32(scores).to(x.dtype), v

    def forward(self, x, causal):
        b, s, _ = x.shape
        w, v = self.weights(x, causal)
        return self.o_proj((w @ v).transpose(1, 2).reshape(b, s, -1))

    def absorbed(self, x, causal):
        """The same output computed as an inference kernel does it, from the
        latent cache alone: W_UK folded into the query, W_UV applied after the
        weights (a check of forward(), not used in training)."""
        c = self.c
        b, s, _ = x.shape
        q_nope, q_pe = self.query(x)
        ckv, k_pe = self.latent(x)
        wb = self.kv_b_proj.weight.view(c.heads, c.nope + c.v_dim, c.kv_rank)
        w_uk, w_uv = wb[:, :c.nope], wb[:, c.nope:]                        # (H, N, R), (H, V, R)
        q_lat = torch.einsum("bhsn,hnr->bhsr", q_nope, w_uk)               # the query in latent space
        scores = (q_lat @ ckv.unsqueeze(1).transpose(-1, -2) + q_pe @ k_pe.transpose(-1, -2)) / math.sqrt(c.qk_dim)
        if causal:
            scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
        w = softmax32(scores).to(x.dtype)
        ctx_lat = w @ ckv.unsqueeze(1)                                     # (b, H, s, R)
        out = torch.einsum("bhsr,hvr->bshv", ctx_lat, w_uv).reshape(b, s, -1)
        return self.o_proj(out)


class DeepseekV3(Llama):
    """LlamaForCausalLM's layers, norms, SwiGLU MLP and head (llama.py) with the latent attention above:
    the tensor names DeepseekV3ForCausalLM's dense layers have."""
    attention = Attention


def load(model_dir):
    """A deepseek_v3 folder (config.json, model.safetensors) as (DeepseekV3 in
    eval mode, config.json's dict); every tensor's name and shape are checked first."""
    hf = read_json(os.path.join(model_dir, "config.json"))
    if not isinstance(hf, dict):
        raise ValueError(f"{model_dir}/config.json: not a JSON object")
    m = DeepseekV3(Config.from_hf(hf))
    path = os.path.join(model_dir, "model.safetensors")
    sd, want = read_safetensors(path), m.hf_tensors()
    for name in sorted(set(want) | set(sd)):
        if name not in sd or name not in want:
            raise ValueError(f"{path}: {'no tensor' if name not in sd else 'unexpected tensor'} {name}")
        if list(sd[name].shape) != list(want[name].shape):
            raise ValueError(f"{path}: {name} is {list(sd[name].shape)}, config.json wants "
                             f"{list(want[name].shape)}")
    if m.c.tie:
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    m.load_state_dict(sd)
    return m.eval(), hf
