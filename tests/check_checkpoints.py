#!/usr/bin/env python3
"""`attnlab trace --model` on Hugging Face checkpoints of every architecture it
reads, against PyTorch written here from each architecture's published
semantics (transformers' modeling_llama, modeling_mistral, modeling_qwen2,
modeling_qwen3; eager attention), independently of the engine.

The checkpoints are random-weight ones in the exact HF layout, BF16 shards
and an index (tests/make_checkpoints.py). Checks, for each architecture:
logits and every layer's attention weights; Qwen3's q_norm and k_norm;
left padding keeps each row's predictions; past = P (the KV cache) equals
the full pass; decoding over the KV cache, which reads the BF16 weights in
place, gives each token the reference's probability, with each of wmat.c's
kernels the CPU has (ATTNLAB_KERNEL). Checkpoints with the real tokenizers of
tests/data/hf (GPT-2, Qwen2.5, Llama 2) tokenize mixed text with the
right BOS and readable labels. Then that the reference's special parts bite
(Llama 3's rope_scaling and Mistral's window change the weights), and that
hostile or inconsistent checkpoints get a one-line message and exit 1.
Needs python3-torch, else exits 77 (skipped)."""
import argparse
import atexit
import gzip
import json
import math
import os
import random
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
import make_checkpoints as mk  # noqa: E402
from hf_reference import read_st, reference  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--attnlab", required=True)
ARGS = ap.parse_args()
TMP = tempfile.mkdtemp(prefix="attnlab-ckpt-")
atexit.register(shutil.rmtree, TMP, True)
torch.set_default_dtype(torch.float64)
FAILED = []


def fail(what):
    FAILED.append(what)
    print("FAIL " + what)


# ---- attnlab ----

def attnlab(*args, env=None):
    r = subprocess.run([ARGS.attnlab, *args], capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    return r.returncode, r.stdout, r.stderr


def trace(model, *args, env=None, out="t.safetensors"):
    path = os.path.join(TMP, out)
    rc, _, err = attnlab("trace", "--model", model, *args, "-o", path, env=env)
    if rc:
        raise RuntimeError(f"attnlab trace {' '.join(args)} exited {rc}: {err.strip()}")
    t, meta = read_st(path)
    return t, meta, path


def close(got, want, tol=2e-4):
    scale = max(1.0, float(want.abs().max()))
    return float((got - want).abs().max()) <= tol * scale


TEXT = "the cat sat on the mat . a dog ran far over the hill"


def check_arch(name, path, W, cfg):
    t, meta, _ = trace(path, "--text", TEXT)
    ids = torch.tensor(json.loads(meta["token_ids"]))
    logits, weights, extra = reference(W, cfg, ids)
    bad = []
    if not close(t["logits"], logits):
        bad.append(f"logits (max |Δ| {float((t['logits'] - logits).abs().max()):.2e})")
    for li, w in enumerate(weights):
        if not close(t[f"layers.{li}.weights"], w, 1e-4):
            bad.append(f"layer {li} weights")
        if cfg["architectures"][0] == "Qwen3ForCausalLM":
            if not (close(t[f"layers.{li}.q_norm"], extra[li][0]) and close(t[f"layers.{li}.k_norm"], extra[li][1])):
                bad.append(f"layer {li} q_norm/k_norm")
    if bad:
        fail(f"{name}: differs from the reference: {', '.join(bad)}")
        return
    print(f"ok   {name}: logits and {len(weights)} layers' attention weights on {ids.shape[1]} tokens")

    # padding (left, the HF way for batches) keeps each row's predictions; the cache equals the full pass
    short = "a dog ran far"
    t_short, _, _ = trace(path, "--text", short, out="short.safetensors")
    both, meta, _ = trace(path, "--text", f"{TEXT}|{short}", "--pad-side", "left", out="both.safetensors")
    n = json.loads(meta["lengths"])[1]
    L = both["logits"].shape[1]
    if not close(both["logits"][1, L - n:], t_short["logits"][0]) or not close(both["logits"][0], t["logits"][0]):
        fail(f"{name}: a left-padded row predicts differently from its unpadded run")
        return
    cached, _, _ = trace(path, "--text", TEXT, "--past", "5", out="cached.safetensors")
    if not close(cached["logits"][0], t["logits"][0, 5:]):
        fail(f"{name}: past = 5 (the KV cache) differs from the full pass at the new positions")
        return
    print(f"ok   {name}: left padding keeps predictions; past = 5 equals the full pass")
    for kernel in ("avx512", "avx2", "c") if name == "llama" else ("",):
        check_decoding(name, path, W, cfg, ids, kernel)


def check_decoding(name, path, W, cfg, ids, kernel):
    """`generate` runs the prompt and decodes over the KV cache with nothing traced
    (attn_kv_prefill, then attn_kv_step); the first token's probability is the
    prefill's logits. Each token it adds must have the probability the reference gives it after
    the same tokens. A high temperature picks unlikely tokens, whose log
    probabilities show any error in the logits. Every token may be drawn
    (--allow-unk): the draws then do not depend on which one is <unk>."""
    rc, out, err = attnlab("generate", "--model", path, "--text", TEXT, "--max-new", "12", "--temperature", "4",
                           "--seed", "3", "--probs", "--allow-unk", env={"ATTNLAB_KERNEL": kernel} if kernel else None)
    if rc:
        fail(f"{name}: generate exited {rc}: {err.strip()}")
        return
    rows = [line.split("\t") for line in out.splitlines() if line.count("\t") == 2]
    seq = ids[0].tolist()
    worst = 0.0
    for _, tid, p in rows:
        logits, _, _ = reference(W, cfg, torch.tensor([seq]))
        ref = torch.log_softmax(logits[0, -1].double(), -1)[int(tid)]
        worst = max(worst, abs(float(ref) - math.log(float(p))))
        seq.append(int(tid))
    if len(rows) < 6 or worst > 1e-3:
        fail(f"{name}: decoding over the KV cache: {len(rows)} tokens, worst |Δ log p| {worst:.2e}")
        return
    print(f"ok   {name}: {len(rows)} tokens decoded over the KV cache{' (' + kernel + ' kernel, if the CPU has it)' if kernel else ''}, "
          f"each with the reference's probability (worst |Δ log p| {worst:.1e})")


def check_bites(models):
    """The special parts of the reference matter on these checkpoints, so the checks above can fail."""
    W, cfg, path = models["llama3"]
    ids = torch.tensor([[1, 3, 4, 5, 6, 3, 7, 8, 9, 10, 11, 12]])
    plain = dict(cfg, rope_scaling=None)
    a, b = reference(W, cfg, ids)[1][0], reference(W, plain, ids)[1][0]
    if float((a - b).abs().max()) < 1e-3:
        fail("llama3: rope_scaling does not change the reference's weights; the check cannot bite")
    W, cfg, path = models["mistral"]
    t, _, _ = trace(path, "--text", TEXT)
    w = t["layers.0.weights"][0, 0]
    s = w.shape[0]
    outside = [(i, j) for i in range(s) for j in range(s) if j <= i and i - j >= cfg["sliding_window"]]
    if not outside or any(float(w[i, j]) != 0.0 for i, j in outside):
        fail("mistral: keys outside the sliding window are not exactly 0")
    else:
        print(f"ok   mistral: {len(outside)} cells outside the window of {cfg['sliding_window']} are exactly 0; "
              f"rope_scaling changes llama3's weights")


# ---- hostile and inconsistent checkpoints ----

def expect_error(what, path, want):
    rc, out, err = attnlab("trace", "--model", path, "--text", "the cat", "-o", os.path.join(TMP, "x.safetensors"))
    lines = err.strip().split("\n")
    if rc != 1 or len(lines) != 1 or want not in err:
        fail(f"{what}: exit {rc}, message {err.strip()!r}; expected one line containing {want!r}")
    else:
        print(f"ok   {what}: {err.strip()}")


def hostile(base):
    def copy(name):
        dst = os.path.join(TMP, "bad-" + name)
        shutil.rmtree(dst, True)
        shutil.copytree(base, dst)
        return dst

    def edit_json(path, fn):
        j = json.load(open(path))
        fn(j)
        json.dump(j, open(path, "w"))

    p = copy("missing-shard")
    os.unlink(os.path.join(p, "model-00002-of-00002.safetensors"))
    expect_error("a missing shard", p, "model-00002-of-00002.safetensors")

    IDX = "model.safetensors.index.json"
    for name, edit, what, want in (
            ("index-wrong-shard",
             lambda j: j["weight_map"].update({"model.norm.weight": "model-00001-of-00002.safetensors"}),
             "an index that puts a tensor in the wrong shard", "which has no such tensor"),
            ("index-unlisted", lambda j: j["weight_map"].pop("model.norm.weight"),
             "a shard tensor the index does not list", "does not list there"),
            ("index-path",
             lambda j: j["weight_map"].update({"model.norm.weight": "../model-00002-of-00002.safetensors"}),
             "an index naming a file outside the folder", "names no shard file in this folder")):
        p = copy(name)
        edit_json(os.path.join(p, IDX), edit)
        expect_error(what, p, want)

    p = copy("shape")
    edit_json(os.path.join(p, "config.json"), lambda j: j.update(intermediate_size=j["intermediate_size"] + 8))
    expect_error("shapes that disagree with config.json", p, "but config.json needs")

    p = copy("overlap")  # two tensors' data_offsets overlap in the first shard
    shard = os.path.join(p, "model-00001-of-00002.safetensors")
    raw = bytearray(open(shard, "rb").read())
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    names = sorted((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"][0])
    a, b2 = header[names[0]], header[names[1]]
    size = b2["data_offsets"][1] - b2["data_offsets"][0]
    b2["data_offsets"] = [a["data_offsets"][0], a["data_offsets"][0] + size]
    h = json.dumps(header).encode().ljust(n)
    open(shard, "wb").write(bytes(raw[:8]) + h + bytes(raw[8 + n:]))
    expect_error("overlapping data offsets", p, "overlap")

    p = copy("arch")
    edit_json(os.path.join(p, "config.json"), lambda j: j.update(architectures=["GemmaForCausalLM"]))
    expect_error("an unsupported architecture", p, "architecture 'GemmaForCausalLM' is not supported (supported: "
                 "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, "
                 "DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, "
                 "Olmo2ForCausalLM, SmolLM3ForCausalLM, GptOssForCausalLM)")

    p = copy("yarn")
    edit_json(os.path.join(p, "config.json"),
              lambda j: j.update(rope_scaling={"rope_type": "yarn", "factor": 4.0}))
    expect_error("an unsupported rope_scaling", p, "rope_scaling type 'yarn' is not supported (supported: llama3)")

    p = copy("index-json")
    open(os.path.join(p, "model.safetensors.index.json"), "w").write('{"weight_map": [1, 2]}')
    expect_error("an index without a weight_map object", p, "no \"weight_map\" object")


# ---- checkpoints with the real tokenizers of tests/data/hf ----

REAL = [  # tokenizer file, the architecture it goes with, the BOS the tokenizer adds (None: none)
    ("gpt2.tokenizer.json.gz", "llama3", None),
    ("qwen2_5.tokenizer.json.gz", "qwen2", None),
    ("llama2.tokenizer.json.gz", "tinyllama", 1),
]
MIXED = "床前明月光 hello  world 😀 def f(x): return x**2\n\tdone"


def check_real_tokenizers():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "hf")
    for file, arch, bos in REAL:
        tok = json.loads(gzip.open(os.path.join(here, file)).read())
        V = max(list(tok["model"]["vocab"].values()) + [a["id"] for a in tok["added_tokens"]]) + 1
        path = os.path.join(TMP, "real-" + file.split(".")[0])
        W, cfg = mk.write(path, dict(mk.TINY[arch], vocab_size=V), seed=7, tokenizer=tok)
        W = {k: torch.from_numpy(v) for k, v in W.items()}
        t, meta, _ = trace(path, "--text", MIXED, out="real.safetensors")
        ids = json.loads(meta["token_ids"])
        labels = json.loads(meta["tokens"])[0]
        logits, _, _ = reference(W, cfg, torch.tensor(ids))
        bad = []
        if not close(t["logits"], logits):
            bad.append("logits differ from the reference")
        if (ids[0][0] == bos) != (bos is not None):
            bad.append(f"first id {ids[0][0]}, expected BOS {bos}")
        if any("\ufffd" in x or "Ġ" in x or "▁" in x for x in labels):
            bad.append(f"unreadable labels {labels}")
        if file.startswith("gpt2") and not any(x.startswith("<0x") for x in labels):
            bad.append(f"no partial-byte label in {labels}")
        if bad:
            fail(f"real tokenizer {file}: " + "; ".join(bad))
        else:
            print(f"ok   {file} on a {arch} checkpoint: {len(ids[0])} tokens, logits equal the reference, "
                  f"labels {' '.join(labels[:8])} …")


# ---- a long prompt ----

def check_long_prompt():
    """4,096 tokens on a 4-layer checkpoint: every layer's attention weights would
    take 3.5 GB, over a 3 GiB budget, so the trace keeps one layer's; the window
    (render) shows layer 2's weights, computed on demand, within the budget."""
    cfg = dict(mk.TINY["tinyllama"], num_hidden_layers=4, max_position_embeddings=8192)
    path = os.path.join(TMP, "long")
    mk.write(path, cfg, seed=5)
    random.seed(3)
    tokens = " ".join(random.choice(mk.WORDS[3:]) for _ in range(4095))  # + <s>
    png = os.path.join(TMP, "long.png")
    budget = 3.0
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
            "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(r.stderr.strip())")
    r = subprocess.run([sys.executable, "-c", code, ARGS.attnlab, "render", "--model", path, "--tokens", tokens,
                        "--memory-gib", str(budget), "--stage", "layers.2.weights", "--head", "1", "-o", png],
                       capture_output=True, text=True)
    lines = r.stdout.split("\n")
    rc, peak = (lines[0].split() + ["?", "0"])[:2]
    asan = b"libasan" in subprocess.run(["ldd", ARGS.attnlab], capture_output=True).stdout
    if rc != "0":
        fail(f"long prompt: render exited {rc}: {' '.join(lines[1:])[:300]}")
        return
    peak_gib = int(peak) / (1 << 20)
    if not asan and peak_gib > budget + 0.25:  # the budget is the traces'; the model, fonts and picture come on top
        fail(f"long prompt: peak RSS {peak_gib:.2f} GiB, over the {budget} GiB budget")
        return
    t, meta, _ = trace(path, "--tokens", tokens, "--memory-gib", str(budget), out="long.safetensors")
    kept = [k for k in t if k.endswith(".weights")]
    if kept != ["layers.0.weights"] or t["layers.0.weights"].shape[-1] != 4096:
        fail(f"long prompt: the trace kept {kept}, expected layer 0's (4096 keys) only")
        return
    print(f"ok   4,096 tokens on 4 layers: one layer's weights kept; render of layer 2 on demand, peak RSS "
          f"{'not measured under ASan' if asan else f'{peak_gib:.2f} GiB'} within the {budget} GiB budget")


models = {}
for i, (name, cfg) in enumerate(mk.TINY.items()):
    path = os.path.join(TMP, name)
    W, cfg = mk.write(path, cfg, seed=10 + i)
    models[name] = ({k: torch.from_numpy(v) for k, v in W.items()}, cfg, path)
for name, (W, cfg, path) in models.items():
    try:
        check_arch(f"{name} ({cfg['architectures'][0]})", path, W, cfg)
    except RuntimeError as e:
        fail(f"{name}: {e}")
try:
    check_bites(models)
    check_real_tokenizers()
    check_long_prompt()
    hostile(models["llama3"][2])
except RuntimeError as e:
    fail(str(e))
if FAILED:
    print(f"{len(FAILED)} check(s) failed")
    sys.exit(1)
print("all checkpoint checks passed")
