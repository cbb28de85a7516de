"""A Llama decoder written from the Hugging Face LlamaForCausalLM semantics, in
plain PyTorch, and the safetensors/config.json writer for its directory.

Per layer:  h = x + o_proj(attn(rms_norm(x)))
            x = h + down_proj(silu(gate_proj(n)) * up_proj(n)),  n = rms_norm(h)
then a final rms_norm and lm_head (tied to embed_tokens when asked).
RMSNorm: x / sqrt(mean(x^2) + eps) * weight, in float32.
RoPE in HF's rotate-half convention: inv_freq_i = theta^(-2i/d), the angle of
position p is p*inv_freq repeated twice, and q' = q*cos + rotate_half(q)*sin
with rotate_half([a, b]) = [-b, a]."""
import json
import math
import os
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import atomic


class Config:
    def __init__(self, vocab, d=128, layers=4, heads=4, kv_heads=2, ffn=352, ctx=128, eps=1e-5,
                 theta=10000.0, tie=True, causal=True):
        self.vocab, self.d, self.layers, self.heads, self.kv_heads = vocab, d, layers, heads, kv_heads
        self.ffn, self.ctx, self.eps, self.theta, self.tie, self.causal = ffn, ctx, eps, theta, tie, causal
        self.head_dim = d // heads

    @classmethod
    def from_hf(cls, hf):
        """The Config of a config.json (the inverse of hf())."""
        try:
            d, heads, kv = hf["hidden_size"], hf["num_attention_heads"], hf["num_key_value_heads"]
            c = cls(hf["vocab_size"], d=d, layers=hf["num_hidden_layers"], heads=heads, kv_heads=kv,
                    ffn=hf["intermediate_size"], ctx=hf["max_position_embeddings"], eps=hf["rms_norm_eps"],
                    theta=hf["rope_theta"], tie=hf.get("tie_word_embeddings", False),
                    causal=hf.get("attnlab_causal", True))
        except KeyError as e:
            raise ValueError(f"config.json: no {e}") from None
        if min(d, heads, kv) < 1 or d % heads or heads % kv:
            raise ValueError(f"config.json: hidden_size {d}, {heads} heads and {kv} K/V heads do not divide")
        return c

    def hf(self, dtype):
        c = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": self.d,
             "intermediate_size": self.ffn, "num_hidden_layers": self.layers,
             "num_attention_heads": self.heads, "num_key_value_heads": self.kv_heads,
             "head_dim": self.head_dim, "hidden_act": "silu", "max_position_embeddings": self.ctx,
             "rms_norm_eps": self.eps, "rope_theta": self.theta, "rope_scaling": None,
             "attention_bias": False, "attention_dropout": 0.0, "mlp_bias": False,
             "vocab_size": self.vocab, "tie_word_embeddings": self.tie, "bos_token_id": 1,
             "eos_token_id": 2, "initializer_range": 0.02, "use_cache": True, "torch_dtype": dtype}
        if not self.causal:
            c["attnlab_causal"] = False   # trained without the causal mask (the "cheater")
        return c


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * self.weight


def rope(x, pos, theta):
    """x: (b, h, s, hd); pos: (s,). Rotate-half RoPE."""
    hd = x.shape[-1]
    inv = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd)
    ang = pos.float()[:, None] * inv[None, :]
    ang = torch.cat([ang, ang], -1)
    cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
    x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.q_proj = nn.Linear(c.d, c.heads * c.head_dim, bias=False)
        self.k_proj = nn.Linear(c.d, c.kv_heads * c.head_dim, bias=False)
        self.v_proj = nn.Linear(c.d, c.kv_heads * c.head_dim, bias=False)
        self.o_proj = nn.Linear(c.heads * c.head_dim, c.d, bias=False)

    def weights(self, x, causal):
        """x: (b, s, d) -> the attention weights (b, heads, s, s) and the values
        (b, heads, s, head_dim), each K/V head repeated for the query heads it serves."""
        b, s, _ = x.shape
        c = self.c
        q = self.q_proj(x).view(b, s, c.heads, c.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        pos = torch.arange(s)
        q, k = rope(q, pos, c.theta), rope(k, pos, c.theta)
        rep = c.heads // c.kv_heads                     # GQA: each K/V head serves `rep` query heads
        k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(c.head_dim)
        if causal:
            scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
        return torch.softmax(scores.float(), -1).to(q.dtype), v

    def forward(self, x, causal):
        b, s, _ = x.shape
        w, v = self.weights(x, causal)
        return self.o_proj((w @ v).transpose(1, 2).reshape(b, s, -1))


class Layer(nn.Module):
    """One decoder layer: attention and a SwiGLU MLP, each after an RMSNorm, each added to the residual.
    `attention` is the attention module's class (deepseek.py passes its latent attention)."""
    def __init__(self, c, attention=None):
        super().__init__()
        self.input_layernorm = RMSNorm(c.d, c.eps)
        self.self_attn = (attention or Attention)(c)
        self.post_attention_layernorm = RMSNorm(c.d, c.eps)
        self.mlp = nn.Module()
        self.mlp.gate_proj = nn.Linear(c.d, c.ffn, bias=False)
        self.mlp.up_proj = nn.Linear(c.d, c.ffn, bias=False)
        self.mlp.down_proj = nn.Linear(c.ffn, c.d, bias=False)

    def forward(self, x, causal):
        h = x + self.self_attn(self.input_layernorm(x), causal)
        n = self.post_attention_layernorm(h)
        return h + self.mlp.down_proj(F.silu(self.mlp.gate_proj(n)) * self.mlp.up_proj(n))


class Llama(nn.Module):
    attention = Attention  # each layer's attention: a subclass names its own (deepseek.DeepseekV3)

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(c.vocab, c.d)
        self.model.layers = nn.ModuleList(Layer(c, self.attention) for _ in range(c.layers))
        self.model.norm = RMSNorm(c.d, c.eps)
        self.lm_head = nn.Linear(c.d, c.vocab, bias=False)
        if c.tie:
            self.lm_head.weight = self.model.embed_tokens.weight
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids):
        x = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            x = layer(x, self.c.causal)
        return self.lm_head(self.model.norm(x))

    def hf_tensors(self):
        sd = self.state_dict()
        if self.c.tie:
            sd.pop("lm_head.weight")
        return sd


def write_safetensors(path, tensors, dtype=torch.float16, metadata=None):
    """The safetensors layout: u64 header size, JSON header, then the raw little-endian data."""
    names = {torch.float16: "F16", torch.bfloat16: "BF16", torch.float32: "F32"}
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().to(dtype).contiguous()
        raw = t.view(torch.int16).numpy().tobytes() if dtype != torch.float32 else t.numpy().tobytes()
        header[name] = {"dtype": names[dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {"format": "pt", **(metadata or {})}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with atomic.open_out(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


DTYPES = {"F16": np.dtype("<f2"), "BF16": np.dtype("<u2"), "F32": np.dtype("<f4")}


def read_safetensors(path):
    """The tensors of a safetensors file widened to float32, by name. Raises
    ValueError with one line naming the file on anything malformed."""
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0] if len(raw) >= 8 else None
    if n is None or 8 + n > len(raw):
        raise ValueError(f"{path}: truncated (the header does not fit in {len(raw)} bytes)")
    try:
        header = json.loads(raw[8:8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{path}: the header is not JSON") from None
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is not a JSON object")
    header.pop("__metadata__", None)
    data = raw[8 + n:]
    return {name: _tensor(path, name, e, data) for name, e in header.items()}


def _tensor(path, name, e, data):
    try:
        dt, shape, (lo, hi) = DTYPES.get(e["dtype"]), [int(x) for x in e["shape"]], e["data_offsets"]
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"{path}: {name}: needs dtype, shape and data_offsets [begin, end]") from None
    if dt is None:
        raise ValueError(f"{path}: {name}: dtype {e['dtype']} is not F16, BF16 or F32")
    if not 0 <= lo <= hi <= len(data) or hi - lo != dt.itemsize * int(np.prod(shape)):
        raise ValueError(f"{path}: {name}: bytes {lo}..{hi} do not hold {e['dtype']} {shape} "
                         f"in {len(data)} bytes of data")
    a = np.frombuffer(data[lo:hi], dt)
    if e["dtype"] == "BF16":
        a = (a.astype(np.uint32) << 16).view(np.float32)   # bfloat16 is float32's top half
    return torch.from_numpy(a.astype(np.float32).reshape(shape))


def read_json(path):
    """A JSON file; ValueError naming the file if it is not JSON (a missing file is OSError)."""
    try:
        return json.load(open(path, encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not JSON ({e})") from None


def load(model_dir):
    """A model folder (config.json, model.safetensors) as (Llama in eval mode,
    config.json's dict); every tensor's name and shape are checked first."""
    hf = read_json(os.path.join(model_dir, "config.json"))
    if not isinstance(hf, dict):
        raise ValueError(f"{model_dir}/config.json: not a JSON object")
    m = Llama(Config.from_hf(hf))
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
