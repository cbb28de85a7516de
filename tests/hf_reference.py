"""PyTorch references for the model tests, written from the Hugging Face
modelling code's semantics (transformers' modeling_llama, modeling_mistral,
modeling_qwen2, modeling_qwen3; eager attention; modeling_rope_utils' llama3
and yarn), independently of attnlab:
check_models.py and check_checkpoints.py share them. float64 throughout."""
import json
import math
import struct

import numpy as np
import torch


def read_st(path):
    """A safetensors file's tensors (F32, F16 or BF16) as float64, and its metadata."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    data, out = raw[8 + n:], {}
    for k, e in header.items():
        b = data[e["data_offsets"][0]:e["data_offsets"][1]]
        if e["dtype"] == "F32":
            a = np.frombuffer(b, "<f4")
        elif e["dtype"] == "F16":
            a = np.frombuffer(b, "<f2").astype(np.float32)
        elif e["dtype"] == "BF16":
            a = (np.frombuffer(b, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(e["dtype"])
        out[k] = torch.from_numpy(a.reshape(e["shape"]).astype(np.float64))
    return out, meta


def rms_norm(x, w, eps):
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def scaling_type(cfg):
    """rope_scaling's type ("rope_type", or the older "type"), None without one."""
    rs = cfg.get("rope_scaling")
    return rs.get("rope_type", rs.get("type")) if rs else None


def get_mscale(factor, m=1.0):
    """YaRN's attention factor for a temperature m: 0.1·m·ln(factor) + 1 (1 when factor ≤ 1)."""
    return 1.0 if factor <= 1 else 0.1 * m * math.log(factor) + 1.0


def yarn(cfg, k):
    """transformers' _compute_yarn_parameters: (inv_freq, attention_factor) over the k features RoPE turns."""
    rs, base = cfg["rope_scaling"], cfg.get("rope_theta", 10000.0)
    factor = rs["factor"]
    orig = rs.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
    att = rs.get("attention_factor")
    if att is None:
        ms, ms_all = rs.get("mscale"), rs.get("mscale_all_dim")
        att = get_mscale(factor, ms) / get_mscale(factor, ms_all) if ms and ms_all else get_mscale(factor)
    beta_fast, beta_slow = rs.get("beta_fast") or 32, rs.get("beta_slow") or 1

    def turns_at(rot):  # the pair index m at which a pair turns rot times over orig positions
        return k * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(base))

    low, high = turns_at(beta_fast), turns_at(beta_slow)
    if rs.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, k - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(k // 2).double() - low) / (high - low)).clamp(0, 1)
    pos = base ** (torch.arange(0, k, 2).double() / k)
    return (1.0 / (factor * pos)) * ramp + (1.0 / pos) * (1 - ramp), att


def inv_freq(cfg, k):
    """RoPE's frequencies, with rope_scaling "llama3" as _compute_llama3_parameters does it,
    "yarn" as _compute_yarn_parameters (its attention factor: rope_attention)."""
    inv = 1.0 / (cfg.get("rope_theta", 10000.0) ** (torch.arange(0, k, 2) / k))
    rs = cfg.get("rope_scaling")
    if scaling_type(cfg) == "yarn":
        return yarn(cfg, k)[0]
    if scaling_type(cfg) == "llama3":
        factor, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        inv = torch.where(medium, smoothed, scaled)
    return inv


def rope_attention(cfg, k):
    """The factor the rotary embedding multiplies cos and sin by (YaRN's; 1 for the others)."""
    return yarn(cfg, k)[1] if scaling_type(cfg) == "yarn" else 1.0


def reference(W, cfg, ids, attn_mask=None):
    """logits (b, s, V), each layer's attention weights (b, h, s, s) and, for
    Qwen3, its q_norm/k_norm outputs, for ids (b, s); attn_mask (b, s): 1 real, 0 pad."""
    arch = cfg["architectures"][0]
    d, h, g = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    k = cfg.get("head_dim") or d // h
    eps = cfg["rms_norm_eps"]
    b, s = ids.shape
    x = W["model.embed_tokens.weight"][ids]
    # position ids: 0.. for every row (attnlab's positions are absolute slots, like HF without position_ids)
    freqs = torch.outer(torch.arange(s).double(), inv_freq(cfg, k))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos() * rope_attention(cfg, k), emb.sin() * rope_attention(cfg, k)
    i, j = torch.arange(s)[:, None], torch.arange(s)[None, :]
    # attnlab's own key: a model trained without the causal mask (tang-nocausal) runs without it
    allowed = j <= i if cfg.get("attnlab_causal", True) else torch.ones(s, s, dtype=torch.bool)
    if arch == "MistralForCausalLM" and cfg.get("sliding_window"):
        allowed &= (i - j) < cfg["sliding_window"]
    mask = torch.zeros(s, s).masked_fill(~allowed, float("-inf"))[None, None].repeat(b, 1, 1, 1)
    if attn_mask is not None:
        mask = mask.masked_fill(attn_mask[:, None, None, :] == 0, float("-inf"))
    extra = {}
    weights = []
    for li in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{li}."
        hs = rms_norm(x, W[p + "input_layernorm.weight"], eps)

        def proj(name, heads):
            y = hs @ W[p + f"self_attn.{name}_proj.weight"].T
            if arch == "Qwen2ForCausalLM":
                y = y + W[p + f"self_attn.{name}_proj.bias"]
            return y.view(b, s, heads, k)

        q, kk, v = proj("q", h), proj("k", g), proj("v", g).transpose(1, 2)
        if arch == "Qwen3ForCausalLM":  # RMSNorm over head_dim, before the transpose and RoPE
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps)
            kk = rms_norm(kk, W[p + "self_attn.k_norm.weight"], eps)
        q, kk = q.transpose(1, 2), kk.transpose(1, 2)
        extra[li] = (q, kk)
        q, kk = q * cos + rotate_half(q) * sin, kk * cos + rotate_half(kk) * sin
        kk, v = kk.repeat_interleave(h // g, dim=1), v.repeat_interleave(h // g, dim=1)
        scores = q @ kk.transpose(2, 3) / math.sqrt(k) + mask
        w = torch.softmax(scores, dim=-1).nan_to_num(0.0)
        weights.append(w)
        o = (w @ v).transpose(1, 2).reshape(b, s, h * k) @ W[p + "self_attn.o_proj.weight"].T
        x = x + o
        hs = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate, up = hs @ W[p + "mlp.gate_proj.weight"].T, hs @ W[p + "mlp.up_proj.weight"].T
        x = x + (torch.nn.functional.silu(gate) * up) @ W[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, W["model.norm.weight"], eps)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    return x @ head.T, weights, extra


def kv_bytes(cfg, value_bytes=4):
    """The KV cache of a Llama-family config per token: (bytes of the layers that keep every
    position, their window W or 0, bytes of the layers that keep only their last W). Each layer
    caches a key and a value per kv head, 2 · g · head_dim values; Mistral's sliding_window
    applies to every layer."""
    d, h, layers = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_hidden_layers"]
    g = cfg.get("num_key_value_heads") or h
    k = cfg.get("head_dim") or d // h
    per = 2 * g * k * value_bytes
    W = cfg.get("sliding_window") if cfg["architectures"][0] == "MistralForCausalLM" else None
    return (0, W, per * layers) if W else (per * layers, 0, 0)
