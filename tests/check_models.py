#!/usr/bin/env python3
"""Whole-model comparison of `attnlab trace --model` and `attnlab generate`
against PyTorch, written here from Hugging Face's LlamaForCausalLM semantics
(modeling_llama, in hf_reference.py: LlamaRMSNorm, rotate_half RoPE, repeat_kv, eager attention
with the causal mask, SwiGLU MLP, tied or untied LM head), independently of
the training code in scripts/train/.

Models: every shipped one under assets/models/ (and each of its training
checkpoints, checkpoints/step<N>/: logits and weights), and small random ones written
here in the same format (MHA, GQA, MQA; 1-3 layers; tied and untied; F16 and
BF16; DeepSeek, Gemma, OLMo 2, SmolLM3 and gpt-oss folders, gpt-oss's in
check_gptoss.py). Checks: logits and every layer's attention weights against the
reference; greedy `generate` (KV cache) token for token against the
reference's full-pass greedy loop; a left-padded batch gives each row's
unpadded predictions; a trace with past = P (the cache) equals the full pass
at the new positions. Needs python3-torch, else exits 77 (skipped)."""
import argparse
import glob
import json
import atexit
import os
import shutil
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:
    print("torch is not installed (apt-get install python3-torch): skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_gptoss  # noqa: E402
import hf_deepseek  # noqa: E402
import hf_gemma  # noqa: E402
import hf_olmo2  # noqa: E402
import hf_reference  # noqa: E402
import hf_smollm3  # noqa: E402
import make_checkpoints as mk  # noqa: E402
from hf_reference import read_st  # noqa: E402


def reference(W, cfg, ids, attn_mask=None):
    """logits and each layer's attention weights (hf_reference's, Llama semantics)."""
    logits, weights, _ = hf_reference.reference(W, cfg, ids, attn_mask)
    return logits, weights

ap = argparse.ArgumentParser()
ap.add_argument("--attnlab", required=True)
ap.add_argument("--models", required=True, help="the shipped models' folder")
ap.add_argument("--only", choices=("random", "deepseek", "moe", "gemma", "olmo2", "smollm3", "gptoss", "shipped"),
                help="run one part (default: all)")
ARGS = ap.parse_args()
TMP = tempfile.mkdtemp(prefix="attnlab-models-")
atexit.register(shutil.rmtree, TMP, True)
torch.set_default_dtype(torch.float64)
FAILED = []


def fail(what):
    FAILED.append(what)
    print("FAIL " + what)


# ---- safetensors ----

def write_st(path, tensors, dtype):
    header, blobs, off = {}, [], 0
    for k, v in tensors.items():
        a = v.detach().numpy().astype(np.float32)
        if dtype == "F16":
            b = a.astype("<f2").tobytes()
        else:  # BF16, round to nearest even
            u = a.view(np.uint32).astype(np.uint64)
            b = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype("<u2")).tobytes()
        header[k] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


# ---- attnlab ----

def attnlab(*args):
    env = dict(os.environ, ATTNLAB_MODELS=ARGS.models)
    r = subprocess.run([ARGS.attnlab, *args], capture_output=True, text=True, env=env)
    return r.returncode, r.stdout, r.stderr


def trace(model, *args):
    path = os.path.join(TMP, "t.safetensors")
    rc, _, err = attnlab("trace", "--model", model, *args, "-o", path)
    if rc:
        raise RuntimeError(f"attnlab trace {' '.join(args)} exited {rc}: {err.strip()}")
    return read_st(path)


def close(got, want, tol=2e-4):
    scale = max(1.0, float(want.abs().max()))
    return float((got - want).abs().max()) <= tol * scale


def check_logits(name, model, W, cfg, text):
    t, meta = trace(model, "--text", text)
    ids = torch.tensor(json.loads(meta["token_ids"]))
    logits, weights = reference(W, cfg, ids)
    ok = close(t["logits"], logits)
    for li, w in enumerate(weights):  # a model of one layer has the single-layer names
        ok &= close(t[f"layers.{li}.weights" if len(weights) > 1 else "weights"], w, 1e-4)
    probs_ok = close(t["probs"], torch.softmax(logits, -1), 1e-4)
    if not (ok and probs_ok):
        fail(f"{name}: logits/weights/probs differ from the reference on {text!r} "
             f"(max |Δlogits| {float((t['logits'] - logits).abs().max()):.2e})")
    else:
        print(f"ok   {name}: logits and {len(weights)} layers' weights on {ids.shape[1]} tokens")
    return ids


def vocab_ids(tok):
    ids = dict(tok["model"]["vocab"])
    for a in tok.get("added_tokens", []):
        ids[a["content"]] = a["id"]
    return ids


def vocab_strings(tok):
    inv = {i: s for s, i in tok["model"]["vocab"].items()}
    for a in tok.get("added_tokens", []):
        inv[a["id"]] = a["content"]
    return inv


def check_generate(name, model, W, cfg, tok, text, n=12, reference=lambda W_, c_, ids: reference(W_, c_, ids)[0]):
    _, meta = trace(model, "--text", text)
    ids = json.loads(meta["token_ids"])[0]
    prompt = len(ids)
    # generation never chooses the unknown token (attnlab generate without --allow-unk)
    unk = vocab_ids(tok).get(tok["model"].get("unk_token"))
    while len(ids) - prompt < n and len(ids) < cfg["max_position_embeddings"]:
        logits = reference(W, cfg, torch.tensor([ids]))
        last = logits[0, -1].clone()
        if unk is not None:
            last[unk] = -float("inf")
        nxt = int(last.argmax())
        ids.append(nxt)
        if nxt == cfg.get("eos_token_id"):
            break
    inv = vocab_strings(tok)
    special = {cfg.get("bos_token_id"), cfg.get("eos_token_id")}  # an unknown token is shown
    sep = "" if (tok.get("decoder") or {}).get("type") == "Fuse" else " "
    want = sep.join(inv[i] for i in ids[prompt:] if i not in special)
    rc, out, err = attnlab("generate", "--model", model, "--text", text, "--max-new", str(n))
    got = out.rstrip("\n").split(" → ", 1)[-1] if rc == 0 else None
    if got != want:
        fail(f"{name}: generate {text!r} gave {got!r} (exit {rc} {err.strip()}), the reference {want!r}")
    else:
        print(f"ok   {name}: greedy generation over the KV cache equals the reference: {want!r}")


def check_padding_and_cache(name, model, text_a, text_b, causal_model=True):
    full = {}
    for t in (text_a, text_b):
        full[t], _ = trace(model, "--text", t)
    for side in ("left", "right"):
        both, meta = trace(model, "--text", f"{text_a}|{text_b}", "--pad-side", side)
        lengths = json.loads(meta["lengths"])
        L = both["logits"].shape[1]
        for r, t in enumerate((text_a, text_b)):
            n = lengths[r]
            got = both["logits"][r, L - n:] if side == "left" else both["logits"][r, :n]
            if not close(got, full[t]["logits"][0]):
                fail(f"{name}: row {r} padded on the {side} predicts differently from its unpadded run")
                return
        # without the pad mask, the padded row's predictions do change
        nomask, _ = trace(model, "--text", f"{text_a}|{text_b}", "--pad-side", side, "--no-pad-mask")
        short = 0 if lengths[0] < lengths[1] else 1
        if close(nomask["logits"][short], both["logits"][short], 1e-6):
            fail(f"{name}: turning the pad mask off changed nothing")
            return
    # the KV cache holds only under the causal mask (without it a past key would
    # change with the tokens after it): a model trained without the mask is run with it here
    causal = ("--causal",) if not causal_model else ()
    whole, _ = trace(model, "--text", text_a, *causal)
    cached, meta = trace(model, "--text", text_a, "--past", "3", *causal)
    if not close(cached["logits"][0], whole["logits"][0, 3:]):
        fail(f"{name}: past = 3 (the KV cache) differs from the full pass at the new positions")
        return
    print(f"ok   {name}: left/right padding keeps each row's predictions; pad mask off changes them; "
          f"past = 3 equals the full pass")


# ---- random models in the shipped format ----

WORDS = ["<unk>", "<s>", "</s>", "the", "cat", "sat", "on", "mat", ".", "a", "dog", "ran", "far", "and", "it",
         "was", "good", "day", "to", "see"]


def tokenizer_json():
    return mk.tokenizer_json(WORDS)


def random_model(path, layers, heads, kv, tied, dtype, seed):
    torch.manual_seed(seed)
    d, f, V = 16, 40, len(WORDS)
    cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": d,
           "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv,
           "intermediate_size": f, "rms_norm_eps": 1e-5, "rope_theta": 100.0, "vocab_size": V,
           "max_position_embeddings": 32, "tie_word_embeddings": tied, "hidden_act": "silu",
           "bos_token_id": 1, "eos_token_id": 2, "torch_dtype": "bfloat16" if dtype == "BF16" else "float16"}
    k = d // heads
    W = {"model.embed_tokens.weight": torch.randn(V, d)}
    for li in range(layers):
        p = f"model.layers.{li}."
        W[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        W[p + "self_attn.q_proj.weight"] = torch.randn(d, d) / d ** 0.5 * 2
        W[p + "self_attn.k_proj.weight"] = torch.randn(kv * k, d) / d ** 0.5 * 2
        W[p + "self_attn.v_proj.weight"] = torch.randn(kv * k, d) / d ** 0.5
        W[p + "self_attn.o_proj.weight"] = torch.randn(d, d) / d ** 0.5
        W[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        W[p + "mlp.gate_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.up_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.down_proj.weight"] = torch.randn(d, f) / f ** 0.5
    W["model.norm.weight"] = 1 + 0.1 * torch.randn(d)
    if not tied:
        W["lm_head.weight"] = torch.randn(V, d) / d ** 0.5
    os.makedirs(path, exist_ok=True)
    write_st(os.path.join(path, "model.safetensors"), W, dtype)
    json.dump(cfg, open(os.path.join(path, "config.json"), "w"))
    json.dump(tokenizer_json(), open(os.path.join(path, "tokenizer.json"), "w"))


def write_st_f32(path, tensors):
    header, blobs, off = {}, [], 0
    for k, v in tensors.items():
        b = v.detach().numpy().astype("<f4").tobytes()
        header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def deepseek_config(v3, layers, heads, q_rank, tied, dtype, R=8, D=4, k=6, interleave=True, moe=None):
    d, f, V = 16, 40, len(WORDS)
    cfg = {"architectures": ["DeepseekV3ForCausalLM" if v3 else "DeepseekV2ForCausalLM"],
           "model_type": "deepseek_v3" if v3 else "deepseek_v2", "hidden_size": d,
           "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": heads,
           "intermediate_size": f, "rms_norm_eps": 1e-5, "rope_theta": 100.0, "vocab_size": V,
           "max_position_embeddings": 32, "tie_word_embeddings": tied, "hidden_act": "silu",
           "bos_token_id": 1, "eos_token_id": 2, "q_lora_rank": q_rank, "kv_lora_rank": R,
           "qk_rope_head_dim": D, "qk_nope_head_dim": k, "v_head_dim": k,
           "first_k_dense_replace": layers, "n_routed_experts": 4, "moe_intermediate_size": 8,
           "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]}
    if v3:
        cfg["rope_interleave"] = interleave
    for key, v in (moe or {}).items():  # a mixture of experts: its keys (None removes one, for the default)
        if v is None:
            cfg.pop(key, None)
        else:
            cfg[key] = v
    return cfg


def moe_layer_weights(W, cfg, li, bias_mean):
    """Layer li's mixture of experts in HF's names: the router, V3's bias, the experts, the shared MLP."""
    c = hf_deepseek.moe_defaults(cfg)
    d, E, I, S = cfg["hidden_size"], c["n_routed_experts"], c["moe_intermediate_size"], c["n_shared_experts"]
    p = f"model.layers.{li}.mlp."
    for n in ("gate_proj", "up_proj", "down_proj"):
        del W[p + n + ".weight"]
    W[p + "gate.weight"] = torch.randn(E, d) / d ** 0.5 * 2
    if cfg["model_type"] == "deepseek_v3":  # steers the choice only; negative enough that HF's 0.0 fill bites
        W[p + "gate.e_score_correction_bias"] = bias_mean + 0.3 * torch.randn(E)
    for e in range(E):
        W[f"{p}experts.{e}.gate_proj.weight"] = torch.randn(I, d) / d ** 0.5
        W[f"{p}experts.{e}.up_proj.weight"] = torch.randn(I, d) / d ** 0.5
        W[f"{p}experts.{e}.down_proj.weight"] = torch.randn(d, I) / I ** 0.5 * 2
    if S:
        W[p + "shared_experts.gate_proj.weight"] = torch.randn(S * I, d) / d ** 0.5
        W[p + "shared_experts.up_proj.weight"] = torch.randn(S * I, d) / d ** 0.5
        W[p + "shared_experts.down_proj.weight"] = torch.randn(d, S * I) / (S * I) ** 0.5


def deepseek_weights(cfg, seed, bias_mean=-0.5):
    """Random weights of a dense DeepSeek folder, HF's names and (out, in) shapes."""
    torch.manual_seed(seed)
    d, h, f, V = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"], cfg["vocab_size"]
    R, D, k, q_rank = cfg["kv_lora_rank"], cfg["qk_rope_head_dim"], cfg["qk_nope_head_dim"], cfg["q_lora_rank"]
    W = {"model.embed_tokens.weight": torch.randn(V, d)}
    for li in range(cfg["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        W[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        if q_rank is None:
            W[a + "q_proj.weight"] = torch.randn(h * (k + D), d) / d ** 0.5 * 2
        else:
            W[a + "q_a_proj.weight"] = torch.randn(q_rank, d) / d ** 0.5
            W[a + "q_a_layernorm.weight"] = 1 + 0.1 * torch.randn(q_rank)
            W[a + "q_b_proj.weight"] = torch.randn(h * (k + D), q_rank) / q_rank ** 0.5 * 2
        W[a + "kv_a_proj_with_mqa.weight"] = torch.randn(R + D, d) / d ** 0.5 * 2
        W[a + "kv_a_layernorm.weight"] = 1 + 0.1 * torch.randn(R)
        W[a + "kv_b_proj.weight"] = torch.randn(h * 2 * k, R) / R ** 0.5
        W[a + "o_proj.weight"] = torch.randn(d, h * k) / (h * k) ** 0.5
        W[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        W[p + "mlp.gate_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.up_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.down_proj.weight"] = torch.randn(d, f) / f ** 0.5
    for li in range(hf_deepseek.moe_defaults(cfg)["first_k_dense_replace"], cfg["num_hidden_layers"]):
        moe_layer_weights(W, cfg, li, bias_mean)
    W["model.norm.weight"] = 1 + 0.1 * torch.randn(d)
    if not cfg["tie_word_embeddings"]:
        W["lm_head.weight"] = torch.randn(V, d) / d ** 0.5
    return W


def deepseek_folder(path, cfg, W, dtype):
    os.makedirs(path, exist_ok=True)
    if dtype == "F32":
        write_st_f32(os.path.join(path, "model.safetensors"), W)
    else:
        write_st(os.path.join(path, "model.safetensors"), W, dtype)
    json.dump(cfg, open(os.path.join(path, "config.json"), "w"))
    json.dump(tokenizer_json(), open(os.path.join(path, "tokenizer.json"), "w"))


MLA_STAGES = ("q", "q_nope", "q_pe", "c_kv", "k_pe", "k_nope", "v_up", "scores", "weights", "context", "out")
MLP_STAGES = ("mlp_out", "router_scores", "expert_weights")  # the last two in a MoE layer only
MAX_DIFF = {}  # stage: the largest |attnlab − reference| over every DeepSeek case


def check_deepseek(name, model, W, cfg, text, *extra):
    """logits and every layer's MLA stages of `attnlab trace` against hf_deepseek."""
    t, meta = trace(model, "--text", text, *extra)
    ids = torch.tensor(json.loads(meta["token_ids"]))
    logits, layers = hf_deepseek.reference(W, cfg, ids)
    absorbed = "--mla-absorb" in extra
    bad = []
    for li, stages in enumerate(layers):
        moe = "expert_weights" in stages  # a MoE layer has the router's stages and not the dense MLP's
        one = "" if len(layers) == 1 else f"layers.{li}."
        for st, want in (("gate", not moe), ("router_scores", moe)):
            if (one + st in t) != want:
                bad.append(f"{one}{st} {'missing' if want else 'present'} in a {'MoE' if moe else 'dense'} layer")
        for st in MLA_STAGES + MLP_STAGES:
            if st not in stages:
                continue
            ref = stages[st]
            if absorbed and st in ("k_nope", "v_up"):
                continue
            key = f"layers.{li}.{st}" if len(layers) > 1 else st
            if key not in t:
                bad.append(f"{key} missing")
                continue
            got = t[key].reshape(ref.shape)
            diff = float((got - ref).abs().max())
            MAX_DIFF[st] = max(MAX_DIFF.get(st, 0.0), diff / max(1.0, float(ref.abs().max())))
            if not close(got, ref, 1e-4):
                bad.append(f"{key} (max |Δ| {diff:.2e})")
    diff = float((t["logits"] - logits).abs().max())
    MAX_DIFF["logits"] = max(MAX_DIFF.get("logits", 0.0), diff / max(1.0, float(logits.abs().max())))
    if not close(t["logits"], logits):
        bad.append(f"logits (max |Δ| {diff:.2e})")
    if bad:
        fail(f"{name}: differs from the reference on {text!r}{' ' + ' '.join(extra) if extra else ''}: "
             + ", ".join(bad[:6]))
    else:
        routed = sum("expert_weights" in st for st in layers)
        print(f"ok   {name}{' ' + ' '.join(extra) if extra else ''}: logits and {len(layers)} layers' "
              f"{len(MLA_STAGES) - 2 * absorbed} MLA stages and mlp_out on {ids.shape[1]} tokens"
              + (f", {routed} MoE layers' router_scores and expert_weights" if routed else "")
              + f" (max |Δlogits| {diff:.1e})")
    return t, W, cfg, ids


def check_latent_cache(name, model, text):
    """Every past P: the cached pass's logits, and its latent cache (c_kv, k_pe over every
    position, the cached ones read from the prefix's own), equal the full pass's."""
    full, _ = trace(model, "--text", text)
    L = full["logits"].shape[1]
    one = "layers.0." if any(k.startswith("layers.1.") for k in full) else ""
    worst = 0.0
    for P in range(1, L):
        cached, _ = trace(model, "--text", text, "--past", str(P))
        worst = max(worst, float((cached["logits"][0] - full["logits"][0, P:]).abs().max()))
        for st in ("c_kv", "k_pe"):
            if not close(cached[one + st], full[one + st]):
                fail(f"{name}: past = {P}: {one + st} differs from the full pass's")
                return
        if not close(cached["logits"][0], full["logits"][0, P:]):
            fail(f"{name}: past = {P}: logits differ from the full pass at the new positions ({worst:.1e})")
            return
    absorbed, _ = trace(model, "--text", text, "--past", str(L // 2), "--mla-absorb")
    if not close(absorbed["logits"][0], full["logits"][0, L // 2:]):
        fail(f"{name}: past = {L // 2} absorbed: logits differ from the full pass at the new positions")
        return
    MAX_DIFF["cached logits"] = max(MAX_DIFF.get("cached logits", 0.0), worst)
    print(f"ok   {name}: every past 1..{L - 1} (the latent cache), and one absorbed, equals the full pass "
          f"(max |Δlogits| {worst:.1e})")


DEEPSEEK = [  # V3?, layers, heads, q_lora_rank, tied, dtype, rope_interleave
    (True, 2, 4, None, True, "F16", True),    # what tang-mla is: q_lora_rank null, tied, F16
    (True, 1, 3, 12, False, "BF16", True),
    (True, 3, 2, None, False, "F32", False),
    (True, 2, 4, 10, True, "F32", True),
    (False, 2, 4, None, False, "F16", True),  # V2: RoPE pairs interleaved in place
    (False, 1, 2, 12, True, "BF16", True),
]


def run_deepseek():
    for i, (v3, layers, heads, q_rank, tied, dtype, inter) in enumerate(DEEPSEEK):
        path = os.path.join(TMP, f"deepseek{i}")
        cfg = deepseek_config(v3, layers, heads, q_rank, tied, dtype, interleave=inter)
        deepseek_folder(path, cfg, deepseek_weights(cfg, seed=100 + i), dtype)
        W, _ = read_st(os.path.join(path, "model.safetensors"))
        name = (f"deepseek {'v3' if v3 else 'v2'} {layers} layers {heads} heads q_lora {q_rank} "
                f"{'tied' if tied else 'untied'} {dtype}{'' if inter or not v3 else ' rope_interleave false'}")
        try:
            check_deepseek(name, path, W, cfg, "the cat sat on the mat . a dog ran far")
            check_deepseek(name, path, W, cfg, "the cat sat on the mat . a dog ran far", "--mla-absorb")
            # FlashAttention's tiles over the rebuilt heads (naive) or the latent cache (absorbed)
            check_deepseek(name, path, W, cfg, "the cat sat on the mat . a dog ran far", "--tiles", "4x3")
            check_deepseek(name, path, W, cfg, "the cat sat on the mat . a dog ran far", "--tiles", "3x5",
                           "--mla-absorb")
            check_padding_and_cache(name, path, "the cat sat on the mat .", "a dog ran")
            check_latent_cache(name, path, "the cat sat on the mat . a dog")
            check_generate(name, path, W, cfg, tokenizer_json(), "it was a good day",
                           reference=lambda W_, c_, ids: hf_deepseek.reference(W_, c_, ids)[0])
        except RuntimeError as e:
            fail(f"{name}: {e}")
    run_moe()
    print("largest |attnlab − reference| over the DeepSeek cases (relative to max(1, |reference|); cached "
          "logits: absolute, against attnlab's full pass): "
          + ", ".join(f"{k} {v:.1e}" for k, v in MAX_DIFF.items()))



# ---- DeepSeek's mixture of experts (hf_deepseek.py's moe) ----

MOE = [  # name, V3?, layers, q_lora_rank, dtype, MoE keys, the mutations its test must see
    ("v2 greedy, 1 shared", False, 2, None, "F32",
     {"first_k_dense_replace": 1, "n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1,
      "moe_intermediate_size": 8, "topk_method": "greedy"}, ()),
    ("v2 greedy, norm_topk_prob true (HF ignores it), 2 shared, scale 1.5", False, 2, 12, "BF16",
     {"first_k_dense_replace": 1, "n_routed_experts": 6, "num_experts_per_tok": 3, "n_shared_experts": 2,
      "moe_intermediate_size": 8, "norm_topk_prob": True, "routed_scaling_factor": 1.5, "moe_layer_freq": 1},
     ("v2_norm",)),
    ("v2 group_limited_greedy, no shared", False, 3, None, "F16",
     {"first_k_dense_replace": 1, "n_routed_experts": 8, "num_experts_per_tok": 3, "n_shared_experts": 0,
      "moe_intermediate_size": 8, "topk_method": "group_limited_greedy", "n_group": 4, "topk_group": 2,
      "routed_scaling_factor": 2.0}, ()),
    ("v3 sigmoid, bias, 4 groups keep 2, 1 shared, norm, scale 2.5", True, 2, 10, "F32",
     {"first_k_dense_replace": 1, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 1,
      "moe_intermediate_size": 8, "n_group": 4, "topk_group": 2, "norm_topk_prob": True,
      "routed_scaling_factor": 2.5, "scoring_func": "sigmoid", "topk_method": "noaux_tc", "_bias": -0.8},
     ("v3_neg_inf", "no_bias", "group_max")),
    ("v3 every layer MoE, 2 shared, no norm, scale 0.7, 2 groups keep 1", True, 2, None, "BF16",
     {"first_k_dense_replace": 0, "n_routed_experts": 8, "num_experts_per_tok": 2, "n_shared_experts": 2,
      "moe_intermediate_size": 6, "n_group": 2, "topk_group": 1, "norm_topk_prob": False,
      "routed_scaling_factor": 0.7}, ("no_bias", "v3_neg_inf")),
    ("v3 config defaults for the groups and norm (n_group 8, topk_group 4), no shared", True, 2, None, "F32",
     {"first_k_dense_replace": 1, "n_routed_experts": 16, "num_experts_per_tok": 3, "n_shared_experts": 0,
      "moe_intermediate_size": 4, "n_group": None, "topk_group": None, "norm_topk_prob": None,
      "routed_scaling_factor": None}, ("group_max",)),
]
MOE_MAX = {}


def check_mutations(name, t, W, cfg, ids, mutations):
    """Each broken routing rule must make the reference disagree with attnlab (logits or expert_weights)."""
    for mut in mutations:
        logits, layers = hf_deepseek.reference(W, cfg, ids, mutate=mut)
        ew = [(f"layers.{li}.expert_weights", st["expert_weights"]) for li, st in enumerate(layers)
              if "expert_weights" in st]
        same = close(t["logits"], logits) and all(close(t[k].reshape(v.shape), v, 1e-4) for k, v in ew)
        if same:
            fail(f"{name}: the reference with '{mut}' agrees too: the test cannot see that rule")
        else:
            print(f"ok   {name}: the reference with '{mut}' differs (max |Δlogits| "
                  f"{float((t['logits'] - logits).abs().max()):.1e})")


def run_moe():
    text = "the cat sat on the mat . a dog ran far"
    for i, (label, v3, layers, q_rank, dtype, keys, mutations) in enumerate(MOE):
        path = os.path.join(TMP, f"moe{i}")
        keys = dict(keys)
        bias = keys.pop("_bias", -0.6 if v3 else 0.0)  # e_score_correction_bias's mean
        cfg = deepseek_config(v3, layers, 4, q_rank, i % 2 == 0, dtype, moe=keys)
        deepseek_folder(path, cfg, deepseek_weights(cfg, seed=300 + i, bias_mean=bias), dtype)
        W, _ = read_st(os.path.join(path, "model.safetensors"))
        name = f"deepseek moe {label} ({layers} layers, {dtype})"
        try:
            t, _, _, ids = check_deepseek(name, path, W, cfg, text)
            check_deepseek(name, path, W, cfg, text, "--mla-absorb")
            check_mutations(name, t, W, cfg, ids, mutations)
            check_padding_and_cache(name, path, "the cat sat on the mat .", "a dog ran")
            check_latent_cache(name, path, "the cat sat on the mat . a dog")
            check_generate(name, path, W, cfg, tokenizer_json(), "it was a good day",
                           reference=lambda W_, c_, ids_: hf_deepseek.reference(W_, c_, ids_)[0])
        except RuntimeError as e:
            fail(f"{name}: {e}")


# ---- OLMo 2 and SmolLM3 (hf_olmo2.py, hf_smollm3.py) ----

FAMILY_MAX = {}  # stage: the largest |attnlab − reference| / max(1, |reference|) over the OLMo 2 and SmolLM3 cases


def family_config(family, layers, heads, kv, tied, dtype, **extra):
    """An Olmo2ForCausalLM or SmolLM3ForCausalLM config.json as HF writes one; extra keys
    override (None removes a key, to take the config class's default)."""
    d, f, V = 16, 40, len(WORDS)
    arch = {"olmo2": "Olmo2ForCausalLM", "smollm3": "SmolLM3ForCausalLM"}[family]
    cfg = {"architectures": [arch], "model_type": family, "hidden_size": d, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": kv, "intermediate_size": f,
           "rms_norm_eps": 1e-5 if family == "olmo2" else 1e-6, "rope_theta": 100.0, "vocab_size": V,
           "max_position_embeddings": 32, "tie_word_embeddings": tied, "hidden_act": "silu",
           "attention_bias": False, "attention_dropout": 0.0, "rope_scaling": None,
           "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0,
           "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]}
    if family == "smollm3":  # the keys SmolLM3-3B's config.json has
        cfg.update({"mlp_bias": False, "use_sliding_window": False, "sliding_window": None,
                    "max_window_layers": layers, "no_rope_layer_interval": 4,
                    "layer_types": ["full_attention"] * layers})
    for key, v in extra.items():
        if v is None:
            cfg.pop(key, None)
        else:
            cfg[key] = v
    return cfg


def family_weights(family, cfg, seed):
    """Random weights in the family's HF names and (out, in) shapes."""
    torch.manual_seed(seed)
    d, h, f, V = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"], cfg["vocab_size"]
    g = cfg.get("num_key_value_heads", 4 if family == "smollm3" else h)
    k = cfg.get("head_dim") or d // h
    W = {"model.embed_tokens.weight": torch.randn(V, d)}
    for li in range(cfg["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        W[a + "q_proj.weight"] = torch.randn(h * k, d) / d ** 0.5 * 2
        W[a + "k_proj.weight"] = torch.randn(g * k, d) / d ** 0.5 * 2
        W[a + "v_proj.weight"] = torch.randn(g * k, d) / d ** 0.5
        W[a + "o_proj.weight"] = torch.randn(d, h * k) / (h * k) ** 0.5
        if family == "olmo2":  # whole-projection q/k norms; norms after each sublayer
            # gains far from 1 and a spread between heads, so a per-head norm would differ
            W[a + "q_norm.weight"] = 1 + 0.5 * torch.randn(h * k)
            W[a + "k_norm.weight"] = 1 + 0.5 * torch.randn(g * k)
            W[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
            W[p + "post_feedforward_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        else:
            W[p + "input_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
            W[p + "post_attention_layernorm.weight"] = 1 + 0.1 * torch.randn(d)
        W[p + "mlp.gate_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.up_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.down_proj.weight"] = torch.randn(d, f) / f ** 0.5
    if family == "olmo2":  # heads of unequal size, so one RMS over all of them differs from each head's
        for li in range(cfg["num_hidden_layers"]):
            a = f"model.layers.{li}.self_attn."
            W[a + "q_proj.weight"] *= torch.linspace(0.3, 3.0, h).repeat_interleave(k)[:, None]
    W["model.norm.weight"] = 1 + 0.1 * torch.randn(d)
    if not cfg.get("tie_word_embeddings", family == "smollm3"):
        W["lm_head.weight"] = torch.randn(V, d) / d ** 0.5
    return W


def family_stages(family, t, ref_layers, nl):
    """(name, attnlab's, reference's) for every stage the family's reference gives, every layer."""
    for li, stages in enumerate(ref_layers):
        for st, ref in stages.items():
            key = f"layers.{li}.{st}" if nl > 1 else st
            yield key, (t[key].reshape(ref.shape) if key in t else None), ref


def check_family(family, name, model, W, cfg, text):
    """logits and every layer's stages of `attnlab trace` against the family's reference; a
    reference with one semantic broken (mutate) must disagree; SmolLM3's NoPE layers keep q_rope = q_heads."""
    ref_mod = hf_olmo2 if family == "olmo2" else hf_smollm3
    t, meta = trace(model, "--text", text)
    ids = torch.tensor(json.loads(meta["token_ids"]))
    logits, layers = ref_mod.reference(W, cfg, ids)
    bad = []
    for key, got, ref in family_stages(family, t, layers, len(layers)):
        if got is None:
            bad.append(f"{key} missing")
            continue
        diff = float((got - ref).abs().max())
        st = key.rsplit(".", 1)[-1]
        FAMILY_MAX[st] = max(FAMILY_MAX.get(st, 0.0), diff / max(1.0, float(ref.abs().max())))
        if not close(got, ref, 1e-4):
            bad.append(f"{key} (max |Δ| {diff:.2e})")
    diff = float((t["logits"] - logits).abs().max())
    FAMILY_MAX["logits"] = max(FAMILY_MAX.get("logits", 0.0), diff / max(1.0, float(logits.abs().max())))
    if not close(t["logits"], logits):
        bad.append(f"logits (max |Δ| {diff:.2e})")
    if family == "smollm3":  # a NoPE layer's q_rope is its q_heads exactly; a RoPE layer's is not
        one = len(layers) == 1
        for li, turned in enumerate(hf_smollm3.use_rope(cfg)):
            pre = "" if one else f"layers.{li}."
            same = torch.equal(t[pre + "q_rope"], t[pre + "q_heads"]) and torch.equal(t[pre + "k_rope"], t[pre + "k_heads"])
            if same == turned:
                bad.append(f"layer {li}: q_rope {'equals' if same else 'differs from'} q_heads, "
                           f"no_rope_layers says {int(turned)}")
    # the test must tell a wrong semantic apart: the broken reference's logits differ
    wrong, _ = ref_mod.reference(W, cfg, ids, mutate="per_head" if family == "olmo2" else "rope_everywhere")
    if close(t["logits"], wrong) and (family == "olmo2" or not all(hf_smollm3.use_rope(cfg))):
        bad.append("the mutated reference agrees too: the test cannot see the semantic")
    if bad:
        fail(f"{name}: differs from the reference on {text!r}: " + ", ".join(bad[:6]))
    else:
        print(f"ok   {name}: logits and {len(layers)} layers' {len(layers[0])} stages on {ids.shape[1]} tokens "
              f"(max |Δlogits| {diff:.1e}); the mutated reference differs "
              f"(max |Δlogits| {float((t['logits'] - wrong).abs().max()):.1e})")


def check_every_past(name, model, text):
    """Every past P (the KV cache of keys and values, each layer's read as stored) equals the full pass."""
    full, _ = trace(model, "--text", text)
    L = full["logits"].shape[1]
    worst = 0.0
    for P in range(1, L):
        cached, _ = trace(model, "--text", text, "--past", str(P))
        worst = max(worst, float((cached["logits"][0] - full["logits"][0, P:]).abs().max()))
        if not close(cached["logits"][0], full["logits"][0, P:]):
            fail(f"{name}: past = {P}: logits differ from the full pass at the new positions ({worst:.1e})")
            return
    FAMILY_MAX["cached logits"] = max(FAMILY_MAX.get("cached logits", 0.0), worst)
    print(f"ok   {name}: every past 1..{L - 1} equals the full pass (max |Δlogits| {worst:.1e})")


def check_stream_nll(name, model, W, cfg, text, ref):
    """`attnlab stream --policy all`, one token at a time over the KV cache (attn_kv_step),
    gives each next token's −log p as the reference's full pass does."""
    _, meta = trace(model, "--text", text)
    ids = json.loads(meta["token_ids"])[0]
    csv = os.path.join(TMP, "stream.csv")
    rc, _, err = attnlab("stream", "--model", model, "--text", text, "--policy", "all", "--csv", csv)
    if rc:
        raise RuntimeError(f"attnlab stream exited {rc}: {err.strip()}")
    rows = [ln.split(",") for ln in open(csv).read().split("\n")[1:] if ln]
    logp = torch.log_softmax(ref(W, cfg, torch.tensor([ids]))[0], -1)
    worst = 0.0
    for pos, nxt, loss in rows:
        want = -float(logp[int(pos), int(nxt)])
        worst = max(worst, abs(float(loss) - want) / max(1.0, abs(want)))
    FAMILY_MAX["decoded −log p"] = max(FAMILY_MAX.get("decoded −log p", 0.0), worst)
    if len(rows) != len(ids) - 1 or worst > 1e-4:
        fail(f"{name}: stream's −log p over the KV cache differs from the reference's ({worst:.1e}, "
             f"{len(rows)} of {len(ids) - 1} positions)")
    else:
        print(f"ok   {name}: decoding token by token over the KV cache gives the reference's −log p at "
              f"{len(rows)} positions (max {worst:.1e})")


def check_generate_probs(name, model, W, cfg, text, ref, n=6):
    """`generate --probs`: the first token's probability from the untraced prefill, the others' from
    decoding steps over the KV cache, each the reference's softmax at that position."""
    _, meta = trace(model, "--text", text)
    ids = json.loads(meta["token_ids"])[0]
    rc, out, err = attnlab("generate", "--model", model, "--text", text, "--max-new", str(n), "--probs")
    if rc:
        raise RuntimeError(f"attnlab generate --probs exited {rc}: {err.strip()}")
    rows = [ln.split("\t") for ln in out.splitlines() if ln.count("\t") == 2]
    new = [int(r[1]) for r in rows]
    probs = torch.softmax(ref(W, cfg, torch.tensor([ids + new]))[0], -1)
    worst = max(abs(float(r[2]) - float(probs[len(ids) - 1 + i, new[i]])) for i, r in enumerate(rows)) if rows else 1
    FAMILY_MAX["generated p"] = max(FAMILY_MAX.get("generated p", 0.0), worst)
    if not rows or worst > 2e-6:  # printed with 6 decimals
        fail(f"{name}: generate --probs differs from the reference's probabilities ({worst:.1e}, {len(rows)} tokens)")
    else:
        print(f"ok   {name}: generate --probs (prefill, then {len(rows) - 1} steps over the KV cache) gives the "
              f"reference's probabilities (max |Δp| {worst:.1e})")


FAMILIES = [  # family, layers, heads, kv heads, tied, dtype, extra config keys
    ("olmo2", 2, 4, 2, False, "F32", {"_shards": 3}),
    ("olmo2", 3, 4, 4, True, "BF16", {"rms_norm_eps": None}),  # Olmo2Config's eps, 1e-5
    ("olmo2", 2, 4, 1, False, "BF16", {"head_dim": 6,
                                       "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                        "high_freq_factor": 4.0,
                                                        "original_max_position_embeddings": 8}}),
    ("olmo2", 1, 2, 2, True, "F16", {"rope_theta": None, "rope_parameters": {"rope_type": "default",
                                                                             "rope_theta": 50.0}}),
    # wide enough (d · f > 65,536) that a decoding step shares its products and heads between threads
    ("olmo2", 2, 8, 2, False, "BF16", {"hidden_size": 256, "intermediate_size": 512}),
    ("smollm3", 2, 8, 2, True, "BF16", {"hidden_size": 256, "intermediate_size": 512, "no_rope_layers": [1, 0]}),
    ("smollm3", 4, 4, 2, None, "BF16", {"tie_word_embeddings": None, "_shards": 2}),  # interval 4: layer 3 NoPE;
    # tied by default; in two shards as SmolLM3-3B is published
    ("smollm3", 3, 4, 1, False, "F32", {"no_rope_layers": [1, 0, 1, 0, 1]}),  # HF's list may be longer
    ("smollm3", 2, 8, None, True, "F16", {"num_key_value_heads": None, "no_rope_layers": None,
                                          "no_rope_layer_interval": 2}),  # 4 kv heads by default
    ("smollm3", 3, 4, 4, False, "BF16", {"no_rope_layers": [0, 0, 1]}),
]


def sharded_folder(path, cfg, W, dtype, shards):
    """A folder as the hub publishes a larger model: model-0000i-of-0000n.safetensors and their index."""
    os.makedirs(path, exist_ok=True)
    names = list(W)
    per, weight_map = -(-len(names) // shards), {}
    for i in range(shards):
        fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        part = {k: W[k] for k in names[i * per:(i + 1) * per]}
        (write_st_f32 if dtype == "F32" else lambda p_, t_: write_st(p_, t_, dtype))(os.path.join(path, fname), part)
        weight_map.update({k: fname for k in part})
    json.dump({"metadata": {}, "weight_map": weight_map}, open(os.path.join(path, "model.safetensors.index.json"), "w"))
    json.dump(cfg, open(os.path.join(path, "config.json"), "w"))
    json.dump(tokenizer_json(), open(os.path.join(path, "tokenizer.json"), "w"))


def read_folder(path):
    """Every tensor of a folder, one file or shards, as read_st gives them."""
    W = {}
    for f in sorted(glob.glob(os.path.join(path, "model*.safetensors"))):
        W.update(read_st(f)[0])
    return W


def run_families(which):
    for i, (family, layers, heads, kv, tied, dtype, extra) in enumerate(FAMILIES):
        if family != which:
            continue
        path = os.path.join(TMP, f"{family}{i}")
        extra = dict(extra)
        shards = extra.pop("_shards", 1)
        cfg = family_config(family, layers, heads, kv, tied, dtype, **extra)
        W0 = family_weights(family, cfg, seed=200 + i)
        if shards > 1:
            sharded_folder(path, cfg, W0, dtype, shards)
        else:
            deepseek_folder(path, cfg, W0, dtype)
        W = read_folder(path)
        keys = ", ".join([f"{k} {'default' if v is None else json.dumps(v)}" for k, v in extra.items()]
                         + ([f"{shards} shards"] if shards > 1 else []))
        name = (f"{family} {layers} layers {heads}/{cfg.get('num_key_value_heads', 4)} heads "
                f"{'tied' if cfg.get('tie_word_embeddings', family == 'smollm3') else 'untied'} {dtype}"
                + (f" ({keys})" if keys else ""))
        ref = (hf_olmo2 if family == "olmo2" else hf_smollm3).reference
        try:
            check_family(family, name, path, W, cfg, "the cat sat on the mat . a dog ran far")
            check_padding_and_cache(name, path, "the cat sat on the mat .", "a dog ran")
            check_every_past(name, path, "the cat sat on the mat . a dog")
            full = lambda W_, c_, ids, r=ref: r(W_, c_, ids)[0]  # noqa: E731
            check_stream_nll(name, path, W, cfg, "the cat sat on the mat . a dog ran far", full)
            check_generate_probs(name, path, W, cfg, "the cat sat on the mat", full)
            check_generate(name, path, W, cfg, tokenizer_json(), "it was a good day",
                           reference=lambda W_, c_, ids, r=ref: r(W_, c_, ids)[0])
        except RuntimeError as e:
            fail(f"{name}: {e}")
    print(f"largest |attnlab − reference| over the {which} cases (relative to max(1, |reference|); cached "
          "logits: absolute, against attnlab's full pass): " + ", ".join(f"{k} {v:.1e}" for k, v in FAMILY_MAX.items()))
    FAMILY_MAX.clear()


# ---- Gemma 2 and Gemma 3 (text): hf_gemma.py is the reference ----

def gemma_config(g3, layers, heads, kv, k, tied, dtype, **over):
    d, f, V = 16, 40, len(WORDS)
    cfg = {"architectures": ["Gemma3ForCausalLM" if g3 else "Gemma2ForCausalLM"],
           "model_type": "gemma3_text" if g3 else "gemma2", "hidden_size": d, "num_hidden_layers": layers,
           "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": k, "intermediate_size": f,
           "rms_norm_eps": 1e-6, "vocab_size": V, "max_position_embeddings": 32, "tie_word_embeddings": tied,
           "hidden_activation": "gelu_pytorch_tanh", "bos_token_id": 1, "eos_token_id": 2,
           "torch_dtype": {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]}
    cfg.update(over)
    return cfg


def gemma_weights(cfg, seed):
    """Random weights of a Gemma folder, HF's names and (out, in) shapes; norm
    weights w around 0 (the model multiplies by 1 + w)."""
    torch.manual_seed(seed)
    d, h, g, k = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    f, V = cfg["intermediate_size"], cfg["vocab_size"]
    g3 = cfg["model_type"] == "gemma3_text"
    W = {"model.embed_tokens.weight": torch.randn(V, d) / d ** 0.5}
    for li in range(cfg["num_hidden_layers"]):
        p, a = f"model.layers.{li}.", f"model.layers.{li}.self_attn."
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            W[p + n + ".weight"] = 0.3 * torch.randn(d)
        W[a + "q_proj.weight"] = torch.randn(h * k, d) / d ** 0.5 * 3
        W[a + "k_proj.weight"] = torch.randn(g * k, d) / d ** 0.5 * 3
        W[a + "v_proj.weight"] = torch.randn(g * k, d) / d ** 0.5
        W[a + "o_proj.weight"] = torch.randn(d, h * k) / (h * k) ** 0.5
        if g3:
            W[a + "q_norm.weight"] = 0.3 * torch.randn(k)
            W[a + "k_norm.weight"] = 0.3 * torch.randn(k)
        W[p + "mlp.gate_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.up_proj.weight"] = torch.randn(f, d) / d ** 0.5
        W[p + "mlp.down_proj.weight"] = torch.randn(d, f) / f ** 0.5
    W["model.norm.weight"] = 0.3 * torch.randn(d)
    if not cfg["tie_word_embeddings"]:
        W["lm_head.weight"] = torch.randn(V, d) / d ** 0.5
    return W


GEMMA_STAGES = ("q_heads", "q_norm", "k_norm", "q_rope", "k_rope", "scores", "capped_scores", "mask", "weights",
                "context", "out", "resid_mid", "mlp_out", "resid_out")
GEMMA_DIFF = {}  # stage: the largest |attnlab − reference| over every Gemma case


def check_gemma(name, model, W, cfg, dtype, text):
    """logits and every layer's stages of `attnlab trace` against hf_gemma."""
    t, meta = trace(model, "--text", text)
    ids = torch.tensor(json.loads(meta["token_ids"]))
    logits, layers = hf_gemma.reference(W, cfg, ids, dtype)
    bad, windows = [], []
    for li, stages in enumerate(layers):
        for st, ref in stages.items():
            key = f"layers.{li}.{st}" if len(layers) > 1 else st
            if key not in t:
                bad.append(f"{key} missing")
                continue
            got = t[key].reshape(ref.shape) if st != "mask" else t[key][0, 0]
            if st == "mask":  # the fill is -inf or a large negative: compare what is hidden
                if not torch.equal(got < -1e30, ref < -1e30):
                    bad.append(f"{key} hides other keys")
                windows.append(int((ref[-1] > -1e30).sum()))
                continue
            diff = float((got - ref).abs().max())
            GEMMA_DIFF[st] = max(GEMMA_DIFF.get(st, 0.0), diff / max(1.0, float(ref.abs().max())))
            if not close(got, ref, 1e-4):
                bad.append(f"{key} (max |Δ| {diff:.2e})")
        for st in ("q_norm", "k_norm", "capped_scores"):  # present exactly when the model has them
            key = f"layers.{li}.{st}" if len(layers) > 1 else st
            if key in t and st not in stages:
                bad.append(f"{key} present but the model has none")
    diff = float((t["logits"] - logits).abs().max())
    GEMMA_DIFF["logits"] = max(GEMMA_DIFF.get("logits", 0.0), diff / max(1.0, float(logits.abs().max())))
    if not close(t["logits"], logits):
        bad.append(f"logits (max |Δ| {diff:.2e})")
    if bad:
        fail(f"{name}: differs from the reference on {text!r}: " + ", ".join(bad[:6]))
    else:
        print(f"ok   {name}: logits and {len(layers)} layers' stages on {ids.shape[1]} tokens, keys seen by "
              f"the last query per layer {windows} (max |Δlogits| {diff:.1e})")


GEMMA_BITES = {}  # a semantic broken in the reference: the cases whose logits it moved out of tolerance


def check_gemma_bites(name, model, W, cfg, dtype, text):
    """Which Gemma semantics this folder's logits depend on: the reference with one broken
    disagrees with attnlab. run_gemma then asks that each bites in some case, so the
    comparison would catch the engine breaking any of them."""
    t, meta = trace(model, "--text", text)
    ids = torch.tensor(json.loads(meta["token_ids"]))
    g3 = cfg["model_type"] == "gemma3_text"
    plain_norm, tanh_gelu = hf_gemma.rms_norm, hf_gemma.gelu_tanh
    variants = {"norm gains w instead of 1 + w": ({}, "norm"),
                "GELU exact instead of tanh": ({}, "gelu"),
                "scale 1/√head_dim": ({"query_pre_attn_scalar": cfg["head_dim"]}, None),
                "no window": ({"sliding_window": 10 ** 6}, None),
                "every layer global": ({"layer_types": ["full_attention"] * cfg["num_hidden_layers"]}, None),
                "final soft-cap dropped": ({"final_logit_softcapping": None}, None)}
    if cfg.get("attn_logit_softcapping", None if g3 else 50.0) is not None:
        variants["no attention soft-cap"] = ({"attn_logit_softcapping": None}, None)
    if g3:
        variants["one RoPE base"] = ({"rope_local_base_freq": cfg.get("rope_theta", 1e6)}, None)
    if cfg.get("rope_scaling"):
        variants["rope_scaling ignored"] = ({"rope_scaling": None}, None)
    if dtype != "F32" and cfg["hidden_size"] ** 0.5 != int(cfg["hidden_size"] ** 0.5):
        variants["√d unrounded"] = ({}, "f32")
    bit = []
    for what, (over, how) in variants.items():
        try:
            if how == "norm":
                hf_gemma.rms_norm = lambda x, w, eps: plain_norm(x, w - 1.0, eps)
            if how == "gelu":
                hf_gemma.gelu_tanh = lambda x: torch.nn.functional.gelu(x)
            logits, _ = hf_gemma.reference(W, dict(cfg, **over), ids, "F32" if how == "f32" else dtype)
        finally:
            hf_gemma.rms_norm, hf_gemma.gelu_tanh = plain_norm, tanh_gelu
        GEMMA_BITES.setdefault(what, [])
        if not close(t["logits"], logits):
            GEMMA_BITES[what].append(name)
            bit.append(what)
    print(f"ok   {name}: broken in the reference, {len(bit)} semantics move the logits out of tolerance "
          f"({', '.join(bit)})")


def check_gemma_cache(name, model, text):
    """Every past P (the prefix's keys and values as the cache) equals the full pass."""
    full, _ = trace(model, "--text", text)
    L = full["logits"].shape[1]
    worst = 0.0
    for P in range(1, L):
        cached, _ = trace(model, "--text", text, "--past", str(P))
        worst = max(worst, float((cached["logits"][0] - full["logits"][0, P:]).abs().max()))
        if not close(cached["logits"][0], full["logits"][0, P:]):
            fail(f"{name}: past = {P}: logits differ from the full pass at the new positions ({worst:.1e})")
            return
    GEMMA_DIFF["cached logits"] = max(GEMMA_DIFF.get("cached logits", 0.0), worst)
    print(f"ok   {name}: every past 1..{L - 1} (the KV cache) equals the full pass (max |Δlogits| {worst:.1e})")


GEMMA = [  # Gemma 3?, layers, heads, kv heads, head_dim, tied, dtype, other keys
    (False, 3, 4, 2, 6, True, "F32",  # caps that bite, a window of 4, a scalar that is not head_dim
     {"sliding_window": 4, "attn_logit_softcapping": 2.0, "final_logit_softcapping": 3.0,
      "query_pre_attn_scalar": 10, "rope_theta": 100.0}),
    (False, 2, 2, 1, 8, False, "BF16",  # layer_types given (global first), Gemma 2's default caps
     {"sliding_window": 3, "layer_types": ["full_attention", "sliding_attention"], "query_pre_attn_scalar": 8,
      "hidden_size": 24}),  # √24 is 4.90625 in BF16: the scale as transformers rounds it
    (True, 4, 4, 1, 8, True, "BF16",  # 2 local : 1 global, linear scaling on the global layer
     {"sliding_window": 3, "sliding_window_pattern": 3, "rope_theta": 1000.0, "rope_local_base_freq": 50.0,
      "rope_scaling": {"rope_type": "linear", "factor": 8.0}, "query_pre_attn_scalar": 8, "hidden_size": 20}),
    (True, 2, 2, 2, 6, False, "F16",  # soft-capping configured on Gemma 3, layer_types
     {"sliding_window": 5, "attn_logit_softcapping": 3.0, "final_logit_softcapping": 4.0,
      "layer_types": ["sliding_attention", "full_attention"], "query_pre_attn_scalar": 6, "rope_theta": 500.0,
      "hidden_size": 18}),
    (True, 6, 2, 1, 10, True, "F32",  # the default pattern: five local, one global
     {"sliding_window": 4, "rope_local_base_freq": 30.0, "rope_theta": 300.0}),
    (False, 2, 4, 2, 8, True, "BF16",  # as the hub publishes: two BF16 shards and their index
     {"sliding_window": 2, "query_pre_attn_scalar": 16, "hidden_size": 20, "_shards": 2}),
]


def gemma_sharded_folder(path, cfg, W, shards):
    """A folder of BF16 shards and model.safetensors.index.json, as the hub's."""
    os.makedirs(path, exist_ok=True)
    names, weight_map, total = list(W), {}, 0
    per = -(-len(names) // shards)
    for i in range(shards):
        part = {n: W[n].numpy().astype(np.float32) for n in names[i * per:(i + 1) * per]}
        fname = f"model-{i + 1:05d}-of-{shards:05d}.safetensors"
        total += mk.write_shard(os.path.join(path, fname), part)
        weight_map.update({n: fname for n in part})
    json.dump({"metadata": {"total_size": total}, "weight_map": weight_map},
              open(os.path.join(path, "model.safetensors.index.json"), "w"))
    json.dump(cfg, open(os.path.join(path, "config.json"), "w"))
    json.dump(tokenizer_json(), open(os.path.join(path, "tokenizer.json"), "w"))
    W = {}
    for i in range(shards):
        W.update(read_st(os.path.join(path, f"model-{i + 1:05d}-of-{shards:05d}.safetensors"))[0])
    return W


def run_gemma():
    text = "the cat sat on the mat . a dog ran far"
    for i, (g3, layers, heads, kv, k, tied, dtype, over) in enumerate(GEMMA):
        path = os.path.join(TMP, f"gemma{i}")
        over = dict(over)
        shards = over.pop("_shards", 1)
        cfg = gemma_config(g3, layers, heads, kv, k, tied, dtype, **over)
        if shards > 1:
            W = gemma_sharded_folder(path, cfg, gemma_weights(cfg, seed=200 + i), shards)
        else:
            deepseek_folder(path, cfg, gemma_weights(cfg, seed=200 + i), dtype)
            W, _ = read_st(os.path.join(path, "model.safetensors"))
        name = (f"gemma{3 if g3 else 2} {layers} layers {heads}/{kv} heads of {k} "
                f"{'tied' if tied else 'untied'} {dtype}{f' in {shards} shards' if shards > 1 else ''}")
        try:
            check_gemma(name, path, W, cfg, dtype, text)
            check_gemma_bites(name, path, W, cfg, dtype, text)
            check_padding_and_cache(name, path, "the cat sat on the mat .", "a dog ran")
            check_gemma_cache(name, path, "the cat sat on the mat . a dog")
            check_generate(name, path, W, cfg, tokenizer_json(), "it was a good day",
                           reference=lambda W_, c_, ids, dt=dtype: hf_gemma.reference(W_, c_, ids, dt)[0])
        except RuntimeError as e:
            fail(f"{name}: {e}")
    blind = [what for what, cases in GEMMA_BITES.items() if not cases]
    if blind:
        fail("the Gemma cases would not see these broken: " + ", ".join(blind))
    else:
        print(f"ok   each of {len(GEMMA_BITES)} Gemma semantics, broken in the reference, fails at least one case: "
              + "; ".join(f"{w} {len(c)}" for w, c in GEMMA_BITES.items()))
    print("largest |attnlab − reference| over the Gemma cases (relative to max(1, |reference|); cached "
          "logits: absolute, against attnlab's full pass): "
          + ", ".join(f"{k} {v:.1e}" for k, v in GEMMA_DIFF.items()))


RANDOM = [  # layers, heads, kv heads, tied, dtype
    (1, 4, 4, True, "F16"),
    (2, 4, 2, False, "BF16"),
    (3, 4, 1, True, "BF16"),
    (2, 2, 1, False, "F16"),
]
for i, (layers, heads, kv, tied, dtype) in enumerate(RANDOM if ARGS.only in (None, "random") else []):
    path = os.path.join(TMP, f"random{i}")
    random_model(path, layers, heads, kv, tied, dtype, seed=i)
    name = f"random {layers} layers {heads}/{kv} heads {'tied' if tied else 'untied'} {dtype}"
    W, _ = read_st(os.path.join(path, "model.safetensors"))
    cfg = json.load(open(os.path.join(path, "config.json")))
    try:
        check_logits(name, path, W, cfg, "the cat sat on the mat . a dog ran far")
        check_padding_and_cache(name, path, "the cat sat on the mat .", "a dog ran")
        check_generate(name, path, W, cfg, tokenizer_json(), "it was a good day")
    except RuntimeError as e:
        fail(f"{name}: {e}")

if ARGS.only in (None, "deepseek"):
    run_deepseek()
elif ARGS.only == "moe":
    run_moe()
    print("largest |attnlab − reference| over the MoE cases (relative to max(1, |reference|)): "
          + ", ".join(f"{k} {v:.1e}" for k, v in MAX_DIFF.items()))
for fam in ("olmo2", "smollm3"):
    if ARGS.only in (None, fam):
        run_families(fam)

if ARGS.only in (None, "gemma"):
    run_gemma()

if ARGS.only in (None, "gptoss"):  # check_gptoss.py, with this script's helpers
    check_gptoss.run(sys.modules[__name__])

PROMPTS = {"zh": ("床前明月光，疑是地上霜。", "白日依山尽", "春眠不觉晓"),
           "en": ("the jury said it did not know .", "it was a good day", "he said")}
for path in sorted(glob.glob(os.path.join(ARGS.models, "*", "config.json")) if ARGS.only in (None, "shipped") else []):
    folder = os.path.dirname(path)
    name = os.path.basename(folder)
    W, _ = read_st(os.path.join(folder, "model.safetensors"))
    cfg = json.load(open(path))
    tok = json.load(open(os.path.join(folder, "tokenizer.json"), encoding="utf-8"))
    lang = "en" if tok["model"]["type"] == "WordLevel" else "zh"
    a, b, c = PROMPTS[lang]
    deepseek = cfg.get("model_type") in ("deepseek_v2", "deepseek_v3")  # tang-mla: latent attention
    try:
        if deepseek:
            check_deepseek(name, name, W, cfg, a)
        else:
            check_logits(name, name, W, cfg, a)
        check_padding_and_cache(name, name, a, b, cfg.get("attnlab_causal", True))
        if deepseek:
            check_generate(name, name, W, cfg, tok, c,
                           reference=lambda W_, c_, ids: hf_deepseek.reference(W_, c_, ids)[0])
        else:
            check_generate(name, name, W, cfg, tok, c)
        # its training checkpoints (checkpoints/step<N>/), each a model folder like any other
        ck = os.path.join(folder, "checkpoints")
        for step in sorted(int(d[4:]) for d in os.listdir(ck) if d[4:].isdigit()) if os.path.isdir(ck) else []:
            sf = os.path.join(ck, f"step{step}")
            (check_deepseek if deepseek else check_logits)(
                f"{name} step {step}", sf, read_st(os.path.join(sf, "model.safetensors"))[0],
                json.load(open(os.path.join(sf, "config.json"))), a)
    except RuntimeError as e:
        fail(f"{name}: {e}")

print(f"{len(FAILED)} failed")
sys.exit(1 if FAILED else 0)
