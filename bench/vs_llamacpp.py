#!/usr/bin/python3
"""attnlab against llama.cpp and PyTorch on the same checkpoint: logits, prefill, decode, memory.

Not part of `make test`: it installs llama.cpp from npm and runs for minutes.

1. Installs, the first time, into ~/.cache/attnlab/llamacpp ($XDG_CACHE_HOME
   respected): the npm packages node-llama-cpp and @node-llama-cpp/linux-x64,
   both pinned to NODE_LLAMA_CPP below, with --ignore-scripts and no optional
   packages, so nothing is compiled and nothing is fetched but those packages.
   The prebuilt package holds llama.cpp as shared libraries (libllama, one
   libggml-cpu per x86 level, chosen at run time) and node-llama-cpp's addon,
   no llama-cli or llama-bench: bench/vs_llamacpp.mjs drives the library
   through node-llama-cpp's API. The llama.cpp source node-llama-cpp bundles
   (llama/gitRelease.bundle, a git bundle) is cloned beside them for gguf-py.
2. Writes the checkpoints with tests/make_checkpoints.py (random weights, BF16:
   SmolLM2-135M's shape and TinyLlama-1.1B's; Gemma-3-270M's with --shapes) and each as a GGUF in BF16 and
   in F32, with that gguf-py's GGUFWriter. Not with convert_hf_to_gguf.py: it
   imports transformers, which Debian 12 does not package, and needs a newer
   torch than Debian's 1.13 (torch.float8_e4m3fn). The GGUF follows what it
   writes for a Llama: gguf-py's own tensor-name map, q and k rows permuted as
   its LlamaModel.permute does (llama.cpp's `llama` ropes adjacent pairs,
   Hugging Face rotates halves), norms kept in F32, the tied head left out.
   The vocabulary is the checkpoint's words as a `llama` (SentencePiece-type)
   list, the 256 after the special tokens renamed as the byte tokens such a
   list must have; only token ids are fed, so the names change nothing.
   Gemma-3-270M's shape (gemma-3-270m's published config, tests/common.py)
   is written as its Gemma3Model writes a `gemma3`: the same tensor-name map
   for that architecture, every norm weight w written as 1 + w (Gemma's
   RMSNorm multiplies by 1 + w, llama.cpp's by the weight), nothing permuted
   (llama.cpp ropes Gemma 3 by halves, NeoX's way), head_dim as the key and
   value lengths, rope_theta as rope.freq_base and rope_local_base_freq as
   rope.freq_base_swa, the sliding window (llama.cpp then takes every 6th
   layer as global), and no output.weight: the head is token_embd.
3. Checks the logits of the last of 64 tokens: attnlab's (`attnlab trace`,
   the trace file's logits, and, for the untraced prefill, the probability
   `attnlab generate --probs` gives its greedy token), llama.cpp's on each GGUF, each against the
   PyTorch reference of bench/checkpoint_vs_torch.py: max |difference|, and
   the top-1 token. Exits 1, naming the engine, when they do not agree. For
   Gemma the reference is tests/hf_gemma.py's (float64), which the timed
   float32 torch model is checked against too; llama.cpp is held to it with
   llama.cpp's own embedding scale, √d in float32 where transformers rounds
   it to the weights' BF16 (25.25 for √640 = 25.30), and the distance
   between the two is printed.
4. Times, in interleaved rounds (the order rotating each round), each engine
   in its own process with the same threads: prefill of 64 and 512 tokens
   (attnlab's untraced prefill, `attnlab bench`'s `prefill untraced:`; its
   traced pass, `bench:`, is reported beside it with the ratio of the two),
   and greedy decoding after the 512 (`attnlab bench --generate`'s untraced
   `decode:` step). Each process repeats each prefill after a warm-up and
   reports the median; the table gives the median over rounds of those, with
   the rounds' min–max. Peak RSS is the process's (wait4's ru_maxrss, taken by
   a small launcher that forks it: see LAUNCH): attnlab
   `bench`, which holds two traced passes, and `attnlab generate` once.
   Each round also measures the copy bandwidth (torch, 2 threads) and from
   it the read-bandwidth bounds of decode: the weight bytes a token reads in
   F32 and in BF16 over the bandwidth. The load average is sampled before
   each round. Before any of it, every weight file (the checkpoint's and the
   GGUFs) is dropped from the page cache and read back in order (recache).

llama.cpp runs with its defaults otherwise (F16 KV cache, flash attention
"auto"); torch is eager float32 from the widened BF16 weights.

Usage (from the repository root, after `make`):
    /usr/bin/python3 bench/vs_llamacpp.py [--quick] [--rounds 3] [--reps 3] [--threads 2]
        [--shapes smollm2-135m,tinyllama-1.1b,gemma3-270m] [--attnlab build/attnlab] [--compete | --compete-only]
--quick: SmolLM2's shape only, 2 rounds of 2 repetitions: checks that it all
works end to end in a few minutes. --compete: then each engine's decode after
the shortest prompt, alone and beside one competing CPU-bound process (a
spinning python), alternating; the slowdown of each and attnlab's over
llama.cpp BF16's.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "bench"), os.path.join(ROOT, "tests")]

NODE_LLAMA_CPP = "3.22.1"  # node-llama-cpp and @node-llama-cpp/linux-x64: the same version
CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnlab", "llamacpp")
ENGINES = ["attnlab", "torch", "llama.cpp BF16", "llama.cpp F32"]
CHECK = 64  # tokens of the logits check
EXACT = "llama.cpp F32, F32 KV cache, no flash attention"
# max |Δ| allowed against torch's logits, times max(1, max |torch logit|). attnlab and
# EXACT compute in float32 from the same BF16 values (measured: 2e-5 and 3e-5 of the
# largest logit on SmolLM2's shape). llama.cpp's defaults keep K and V in F16 and its
# CPU flash attention rounds through F16 (8e-3); on a BF16 GGUF it also rounds the
# activations to BF16 before each product (0.09)
TOLERANCE = {"attnlab": 1e-3, EXACT: 1e-3, "llama.cpp F32": 2e-2, "llama.cpp BF16": 0.15}


class Fail(Exception):
    """A problem worth one line: printed, and the exit status is 1."""


# Linux starts a process's peak RSS (ru_maxrss) at its parent's peak when the
# parent vforks it, as Python's subprocess does: every engine would report at
# least this script's own peak (several GB after writing a GGUF). So each
# command runs under a small launcher that forks it (a fork starts the child's
# peak at the launcher's few MB), waits for it and writes its ru_maxrss.
LAUNCH = """import os, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
open(sys.argv[1], "w").write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status) % 256)
"""


def run(cmd, env=None):
    """Runs cmd; returns (stdout, its peak RSS in MB). A non-zero exit is a Fail with its stderr's last line."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        p = subprocess.run([sys.executable, "-c", LAUNCH, rss.name, *cmd], stdout=out, stderr=err, text=True, env=env)
        out.seek(0)
        err.seek(0)
        if p.returncode:
            lines = err.read().strip().splitlines() or ["(no message)"]
            raise Fail(f"{os.path.basename(cmd[0])} {cmd[1]} exited {p.returncode}: {lines[-1]}")
        return out.read(), int(rss.read() or 0) / 1024


def install(cache):
    """The pinned npm packages and the bundled llama.cpp source in cache; returns
    (node_modules, llama.cpp source folder)."""
    mods = os.path.join(cache, "node_modules")
    want = {"node-llama-cpp": NODE_LLAMA_CPP, "@node-llama-cpp/linux-x64": NODE_LLAMA_CPP}

    def version(name):
        try:
            return json.load(open(os.path.join(mods, name, "package.json")))["version"]
        except OSError:
            return None
    if any(version(n) != v for n, v in want.items()):
        os.makedirs(cache, exist_ok=True)
        json.dump({"name": "attnlab-vs-llamacpp", "private": True, "dependencies": want},
                  open(os.path.join(cache, "package.json"), "w"), indent=2)
        print(f"installing node-llama-cpp {NODE_LLAMA_CPP} and its linux-x64 build into {cache}", flush=True)
        try:
            run(["npm", "install", "--ignore-scripts", "--omit=optional", "--no-audit", "--no-fund", "--prefix", cache])
        except (Fail, OSError) as e:
            raise Fail(f"npm could not install node-llama-cpp {NODE_LLAMA_CPP}: {e}")
        if any(version(n) != v for n, v in want.items()):
            raise Fail(f"npm installed other versions than {want}")
    src = os.path.join(cache, "llama.cpp")
    if not os.path.isfile(os.path.join(src, "gguf-py", "gguf", "gguf_writer.py")):
        run(["git", "clone", "-q", os.path.join(mods, "node-llama-cpp", "llama", "gitRelease.bundle"), src])
    return mods, src


def permute(w, heads):
    """Rows of q_proj or k_proj, (heads · k, d), from Hugging Face's halves to llama.cpp's
    adjacent RoPE pairs: LlamaModel.permute of the bundled conversion/llama.py."""
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def vocab_keys(w, cfg, folder, gguf, unk):
    """The checkpoint's words as a `llama` (SentencePiece-type) vocabulary; unk is the <unk> id."""
    vocab = json.load(open(os.path.join(folder, "tokenizer.json")))["model"]["vocab"]
    words = sorted(vocab, key=vocab.get)
    special = {cfg["bos_token_id"], cfg["eos_token_id"], cfg.get("pad_token_id", unk)} - {unk}
    # A SentencePiece vocabulary must have the 256 byte tokens (llama.cpp falls back on them
    # when node-llama-cpp tokenizes text of its own; without them it aborts): the words after
    # the specials are renamed <0x00> ... <0xFF>. Only ids are fed, so names change nothing.
    first = max(special | {unk}) + 1
    words[first:first + 256] = [f"<0x{b:02X}>" for b in range(256)]
    kind = lambda i: (gguf.TokenType.UNKNOWN if i == unk else gguf.TokenType.CONTROL if i in special else
                      gguf.TokenType.BYTE if first <= i < first + 256 else gguf.TokenType.NORMAL)
    w.add_tokenizer_model("llama")
    w.add_token_list(words)
    w.add_token_scores([0.0] * len(words))
    w.add_token_types([kind(i) for i in range(len(words))])
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])
    w.add_unk_token_id(unk)
    if "pad_token_id" in cfg:
        w.add_pad_token_id(cfg["pad_token_id"])
    w.add_add_bos_token(True)


def llama_keys(w, cfg, gguf):
    """A `llama`'s sizes (the checkpoint's q and k rows are permuted as the tensors are written)."""
    h = cfg["num_attention_heads"]
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(h)
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_rope_dimension_count(cfg.get("head_dim") or cfg["hidden_size"] // h)
    w.add_rope_freq_base(cfg.get("rope_theta", 10000.0))
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_vocab_size(cfg["vocab_size"])


def gemma3_keys(w, cfg, gguf):
    """A `gemma3`'s, as convert_hf_to_gguf.py's Gemma3Model writes them (conversion/gemma.py and
    TextModel.set_gguf_parameters): head_dim as the key and value lengths, rope_theta for the
    global layers and rope_local_base_freq as rope.freq_base_swa for the local ones, the
    sliding window (llama.cpp takes every 6th layer as global when no pattern is written),
    no attention soft-cap (Gemma 3 has none). Its rotation is NeoX's, Hugging Face's halves:
    nothing is permuted."""
    w.add_context_length(cfg.get("max_position_embeddings", 131072))
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg.get("num_attention_heads", 8))
    w.add_head_count_kv(cfg.get("num_key_value_heads", 4))
    w.add_key_length(cfg.get("head_dim", 256))
    w.add_value_length(cfg.get("head_dim", 256))
    w.add_rope_freq_base(cfg.get("rope_theta", 1_000_000.0))
    w.add_rope_freq_base_swa(cfg.get("rope_local_base_freq", 10000.0))
    w.add_layer_norm_rms_eps(cfg.get("rms_norm_eps", 1e-6))
    if cfg.get("final_logit_softcapping"):
        w.add_final_logit_softcapping(cfg["final_logit_softcapping"])
    if cfg.get("sliding_window_pattern") != 1:
        w.add_sliding_window(cfg["sliding_window"])
    w.add_add_space_prefix(False)


def write_gguf(folder, out, dtype, gguf):
    """The checkpoint in folder as a GGUF of llama.cpp's `llama` or `gemma3` architecture,
    matrices in dtype ("bf16" or "f32"), written with gguf-py's GGUFWriter. Gemma 3's
    norms are written as 1 + w, the gains Gemma3RMSNorm multiplies by (as the conversion
    does: llama.cpp's RMS norm multiplies by the stored weight)."""
    import checkpoint_vs_torch as ref
    cfg, W, _ = ref.load(folder)
    gemma = cfg.get("model_type") == "gemma3_text"
    arch = "gemma3" if gemma else "llama"
    h, g = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    w = gguf.GGUFWriter(out + ".part", arch, use_temp_file=True)
    w.add_name(os.path.basename(folder.rstrip("/")))
    (gemma3_keys if gemma else llama_keys)(w, cfg, gguf)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_BF16 if dtype == "bf16" else gguf.LlamaFileType.ALL_F32)
    vocab_keys(w, cfg, folder, gguf, unk=3 if gemma else 0)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.GEMMA3 if gemma else gguf.MODEL_ARCH.LLAMA,
                                     cfg["num_hidden_layers"])
    for name in list(W):
        a = W.pop(name).numpy()
        if gemma and name.endswith("norm.weight"):
            a = a + 1.0
        elif not gemma and name.endswith("q_proj.weight"):
            a = permute(a, h)
        elif not gemma and name.endswith("k_proj.weight"):
            a = permute(a, g)
        new = names.get_name(name, try_suffixes=(".weight",))
        if new is None:
            raise Fail(f"gguf-py has no {arch} name for {name}")
        if dtype == "bf16" and a.ndim == 2:
            w.add_tensor(new, gguf.quants.quantize(a, gguf.GGMLQuantizationType.BF16),
                         raw_dtype=gguf.GGMLQuantizationType.BF16)
        else:
            w.add_tensor(new, a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(out + ".part", out)


def prepare(shape, src, work):
    """The checkpoint of shape and its two GGUFs in work/shape, written when missing."""
    import make_checkpoints
    d = os.path.join(work, shape)
    folder = os.path.join(d, "checkpoint")
    if not os.path.isfile(os.path.join(folder, "tokenizer.json")):
        print(f"writing {folder}", flush=True)
        make_checkpoints.write_shape(folder, shape)
    sys.path.insert(0, os.path.join(src, "gguf-py"))
    import gguf
    ggufs = {}
    for dtype in ("bf16", "f32"):
        ggufs[dtype] = os.path.join(d, f"{dtype}.gguf")
        if not os.path.isfile(ggufs[dtype]):
            print(f"writing {ggufs[dtype]}", flush=True)
            write_gguf(folder, ggufs[dtype], dtype, gguf)
    return folder, ggufs


def recache(paths):
    """Each file dropped from the page cache and read back in order, so that every
    engine's weights sit in pages the kernel's readahead filled the same way: a
    file's cached pages keep the layout of whatever first brought them in (here a
    checkpoint written by cp read 10-15% slower through its mapping than the
    same bytes in anonymous memory, and as fast once read back like this)."""
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            while os.read(fd, 1 << 24):
                pass
        finally:
            os.close(fd)


def prompt(folder, n):
    """n token ids (BOS, then random words, seeded) and their text for attnlab."""
    cfg = json.load(open(os.path.join(folder, "config.json")))
    vocab = json.load(open(os.path.join(folder, "tokenizer.json")))["model"]["vocab"]
    words = [w for w in vocab if not w.startswith("<")]
    rng = random.Random(1)
    text = [rng.choice(words) for _ in range(n - 1)]
    return [cfg["bos_token_id"]] + [vocab[w] for w in text], " ".join(text)


# ---- one engine, one process ----

def job_file(job):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(job, f)
    f.close()
    return f.name


def llamacpp(mods, gguf_path, ids, a, logits=0, vocab=0, prefill=(), reps=0, decode=0, exact=False):
    path = job_file({"modules": mods, "gguf": gguf_path, "threads": a.threads, "ids": ids, "logits": logits,
                     "vocab": vocab, "prefill": list(prefill), "reps": reps, "decode": decode, "exact": exact})
    try:
        out, rss = run(["node", os.path.join(ROOT, "bench", "vs_llamacpp.mjs"), path])
    finally:
        os.unlink(path)
    return json.loads(out.strip().splitlines()[-1]), rss


def torch_engine(folder, ids, a, logits=0, prefill=(), reps=0, decode=0):
    path = job_file({"folder": folder, "threads": a.threads, "ids": ids, "logits": logits,
                     "prefill": list(prefill), "reps": reps, "decode": decode})
    try:
        out, rss = run([sys.executable, os.path.abspath(__file__), "--torch-job", path])
    finally:
        os.unlink(path)
    return json.loads(out.strip().splitlines()[-1]), rss


def torch_job(path):
    """The --torch-job side: bench/checkpoint_vs_torch.py's reference, as llamacpp() is
    llama.cpp's; also the copy bandwidth and the bytes a decoded token reads."""
    import torch
    import checkpoint_vs_torch as ref
    job = json.load(open(path))
    torch.set_num_threads(job["threads"])
    cfg, W, _ = ref.load(job["folder"])
    m = ref.model(cfg, W)
    fresh = lambda: [None] * cfg["num_hidden_layers"]
    ids = torch.tensor([job["ids"]])
    res = {"logits": None, "prefill": {}, "decode": []}
    with torch.no_grad():
        if job["logits"]:
            res["logits"] = m.forward(ids[:, :job["logits"]], fresh())[0, -1].tolist()
            if isinstance(m, ref.GemmaModel):  # the logits are tests/hf_gemma.py's, in float64
                res.update(gemma_logits(cfg, W, ids[:, :job["logits"]], res["logits"]))
        for n in job["prefill"]:
            m.forward(ids[:, :n], fresh())  # warm-up
            res["prefill"][n] = ref.times_ms(lambda: m.forward(ids[:, :n], fresh()), job["reps"])
        if job["decode"]:
            cache = fresh()
            logits = m.forward(ids[:, :max(job["prefill"])], cache)
            res["decode"] = ref.decode_ms(m, cache, logits, job["decode"])
            res["bandwidth"] = ref.copy_bandwidth()
    res["bytes_f32"] = ref.bytes_per_token(cfg, W)
    res["bytes_bf16"] = ref.bytes_per_token(cfg, W, matrix=2)
    print(json.dumps(res))


def gemma_logits(cfg, W, ids, timed):
    """tests/hf_gemma.py's logits of the last of ids (float64: check_models.py's reference):
    "logits" as transformers computes them (the embeddings times √d rounded to BF16, the
    weights' dtype), "logits_sqrt_f32" with √d in float32 as llama.cpp's gemma3 graph scales
    them (sqrtf(n_embd)); "timed_model": the max |difference| of timed, the timed float32
    model's logits, from the first."""
    import torch
    import hf_gemma
    W64 = {k: v.double() for k, v in W.items()}
    row = hf_gemma.reference(W64, cfg, ids, "BF16")[0][0, -1]
    row_f32 = hf_gemma.reference(W64, cfg, ids, "F32")[0][0, -1]
    return {"logits": row.tolist(), "logits_sqrt_f32": row_f32.tolist(),
            "timed_model": float((row - torch.tensor(timed, dtype=torch.float64)).abs().max())}


def attnlab_env(a):
    return dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS=str(a.threads))


def attnlab_logits(a, folder, text):
    from hf_reference import read_st
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.safetensors")
        run([a.attnlab, "trace", "--model", folder, "--text", text, "-o", out], env=attnlab_env(a))
        t, _ = read_st(out)
    return t["logits"][0, -1].tolist(), t["logits"].shape[1]


def attnlab_untraced(a, folder, text):
    """attnlab's untraced prefill, as `generate` runs a prompt: its greedy next token after
    text and the probability it gave it (every token allowed)."""
    out, _ = run([a.attnlab, "generate", "--model", folder, "--text", text, "--max-new", "1", "--probs",
                  "--allow-unk"], env=attnlab_env(a))
    rows = [ln.split("\t") for ln in out.splitlines() if ln.count("\t") == 2]
    if not rows:
        raise Fail(f"attnlab generate printed no token: {out.strip().splitlines()[-1:]}")
    return int(rows[0][1]), float(rows[0][2])


def grab(pattern, out, what):
    """The number pattern's group 1 finds in attnlab's output out, or a Fail naming what."""
    m = re.search(pattern, out, re.M)
    if not m:
        raise Fail(f"attnlab bench printed no {what}: {out.strip().splitlines()[-1:]}")
    return float(m.group(1))


def attnlab_round(a, folder, texts):
    """One round of attnlab: each prefill its own `bench` (the untraced prefill, and the traced
    pass), decoding after the longest."""
    res, peak = {"prefill": {}, "traced": {}}, 0
    for n in sorted(texts):
        cmd = [a.attnlab, "bench", "--model", folder, "--text", texts[n], "--repeat", str(a.reps)]
        if n == max(texts):
            cmd += ["--generate", str(a.decode)]
        out, rss = run(cmd, env=attnlab_env(a))
        peak = max(peak, rss)
        res["prefill"][n] = grab(r"^prefill untraced: ([0-9.]+) ms", out, "untraced prefill time")
        res["traced"][n] = grab(r"^bench: ([0-9.]+) ms", out, "traced pass time")
        if n == max(texts):
            res["decode"] = grab(r"^decode: ([0-9.]+) ms", out, "decode time")
            res["decode_traced"] = grab(r"^decode traced: ([0-9.]+) ms", out, "traced decode time")
            res["read_ms"] = grab(r"^decode reads .* they take ([0-9.]+) ms", out, "read bound")
    return res, peak


# ---- the check and the rounds ----

def top1(row):
    return max(range(len(row)), key=row.__getitem__)


def check_logits(a, mods, folder, ggufs, ids, text):
    """Each engine's logits of the last of CHECK tokens against torch's; returns the lines to print."""
    vocab = json.load(open(os.path.join(folder, "config.json")))["vocab_size"]
    ref, _ = torch_engine(folder, ids[:CHECK], a, logits=CHECK)
    want = ref["logits"]
    got = {}
    got["attnlab"], n = attnlab_logits(a, folder, text)
    if n != CHECK:
        raise Fail(f"attnlab read the check's text as {n} tokens, not {CHECK}")
    for dtype, path in ggufs.items():
        res = llamacpp(mods, path, ids[:CHECK], a, logits=CHECK, vocab=vocab)[0]
        got["llama.cpp " + dtype.upper()] = res["logits"]
    got[EXACT] = llamacpp(mods, ggufs["f32"], ids[:CHECK], a, logits=CHECK, vocab=vocab, exact=True)[0]["logits"]
    scale = max(1.0, max(abs(v) for v in want))
    best = top1(want)
    margin = want[best] - max(v for i, v in enumerate(want) if i != best)
    lines, bad = [], []
    if "timed_model" in ref:  # Gemma: the timed float32 torch model against hf_gemma.py's float64
        diff = ref["timed_model"]
        lines.append(f"torch float32 (the model timed): max |Δ| {diff:.2e} (allowed {TOLERANCE['attnlab'] * scale:.2e})")
        if diff > TOLERANCE["attnlab"] * scale:
            bad.append("torch float32")
        # llama.cpp scales Gemma's embeddings by √d in float32, transformers by √d in BF16
        # (25.25 for √640 = 25.30): llama.cpp is held to the reference with its √d
        lines.append("llama.cpp against the reference with its own √d (float32): transformers' differs from it by "
                     f"{max(abs(x - y) for x, y in zip(want, ref['logits_sqrt_f32'])):.2e}")
    for name, row in got.items():
        if len(row) != len(want) or any(v is None for v in row):
            raise Fail(f"{name} gave logits for {sum(v is not None for v in row)} of {len(want)} tokens")
        diff = max(abs(x - y) for x, y in zip(row, ref.get("logits_sqrt_f32", want) if name != "attnlab" else want))
        same = top1(row) == best
        lines.append(f"{name}: max |Δ| {diff:.2e} (allowed {TOLERANCE[name] * scale:.2e}), top-1 "
                     f"{'the same' if same else f'{top1(row)}, not {best}'}")
        # a top-1 within the allowed error of torch's runner-up is a tie, not a disagreement
        if diff > TOLERANCE[name] * scale or (not same and margin > 2 * diff):
            bad.append(name)
    # the untraced prefill (what is timed) through generate: its token's log probability
    tid, p = attnlab_untraced(a, folder, text)
    mx = max(want)
    log_z = mx + math.log(sum(math.exp(v - mx) for v in want))
    dlogp, allowed = abs(math.log(p) - (want[tid] - log_z)), TOLERANCE["attnlab"] * scale
    lines.append(f"attnlab untraced prefill (generate): its greedy token's |Δ log p| {dlogp:.2e} (allowed "
                 f"{allowed:.2e}), top-1 {'the same' if tid == best else f'{tid}, not {best}'}")
    if dlogp > allowed or want[best] - want[tid] > 2 * allowed:
        bad.append("attnlab untraced prefill")
    info = (f"llama.cpp: node-llama-cpp {NODE_LLAMA_CPP}, {res['build']} llama.cpp release {res['release']}; "
            f"{res['system']}")
    head = f"logits of token {CHECK} against torch's (max |logit| {scale:.2f}, top-1 {best}, margin {margin:.3f})"
    if bad:
        raise Fail(head + " disagree: " + "; ".join(lines))
    return [info, head + ":"] + ["  " + ln for ln in lines]


def rounds(a, mods, folder, ggufs, ids, texts):
    """a.rounds interleaved rounds; returns {engine: [per-round results]}, the
    bandwidths and bytes per token, and the load averages."""
    got = {e: [] for e in ENGINES}
    bw, loads, per_token = [], [], None
    for r in range(a.rounds):
        loads.append(os.getloadavg()[0])
        for e in ENGINES[r % 4:] + ENGINES[:r % 4]:
            if e == "attnlab":
                res, rss = attnlab_round(a, folder, texts)
            elif e == "torch":
                res, rss = torch_engine(folder, ids, a, prefill=sorted(texts), reps=a.reps, decode=a.decode)
                bw.append(res["bandwidth"])
                per_token = res["bytes_f32"], res["bytes_bf16"]
            else:
                res, rss = llamacpp(mods, ggufs[e.split()[-1].lower()], ids, a, prefill=sorted(texts), reps=a.reps,
                                    decode=a.decode)
            if e != "attnlab":  # per-round medians, as attnlab bench prints them
                res = {"prefill": {int(n): statistics.median(v) for n, v in res["prefill"].items()},
                       "decode": statistics.median(res["decode"])}
            res["rss"] = rss
            got[e].append(res)
        # each round's figures as it ends, so that a run cut short (or a round spoiled) still tells
        n = max(got["attnlab"][-1]["prefill"])
        figures = "; ".join(f"{e} decode {got[e][-1]['decode']:.1f} ms, prefill {n} {got[e][-1]['prefill'][n]:,.1f} ms"
                            for e in ENGINES if e != "torch")
        print(f"round {r + 1}/{a.rounds} done (load average {loads[-1]:.2f} at its start): {figures}", flush=True)
    loads.append(os.getloadavg()[0])
    return got, bw, per_token, loads


def busy():
    """A competing CPU-bound process: one thread spinning, as another program on the machine would."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def decode_once(a, mods, folder, ggufs, ids, texts, e):
    """One process of engine e: decode ms/token after the shortest prompt."""
    n = min(texts)
    if e == "attnlab":
        out, _ = run([a.attnlab, "bench", "--model", folder, "--text", texts[n], "--repeat", "1",
                      "--generate", str(a.decode)], env=attnlab_env(a))
        return grab(r"^decode: ([0-9.]+) ms", out, "decode time")
    if e == "torch":
        res, _ = torch_engine(folder, ids, a, prefill=[n], reps=1, decode=a.decode)
    else:
        res, _ = llamacpp(mods, ggufs[e.split()[-1].lower()], ids, a, prefill=[n], reps=1, decode=a.decode)
    return statistics.median(res["decode"])


def compete(a, mods, folder, ggufs, ids, texts):
    """--compete: each engine's decode alone and beside busy(), alternating, a.rounds
    times; returns {engine: ([alone], [beside])}."""
    got = {e: ([], []) for e in ENGINES}
    for r in range(a.rounds):
        for e in ENGINES[r % 4:] + ENGINES[:r % 4]:
            got[e][0].append(decode_once(a, mods, folder, ggufs, ids, texts, e))
            b = busy()
            try:
                got[e][1].append(decode_once(a, mods, folder, ggufs, ids, texts, e))
            finally:
                b.kill()
                b.wait()
        print(f"competing round {r + 1}/{a.rounds} done", flush=True)
    return got


def report_compete(shape, got, a):
    print(f"\nDecode after {min(int(n) for n in a.prefill.split(','))} tokens, {a.threads} threads, alone and beside "
          f"one competing CPU-bound process ({a.rounds} alternating rounds; medians, min–max in brackets):\n")
    print("| | alone, ms/token | beside a busy process | slowdown |")
    print("|---|---|---|---|")
    slow = {}
    for e in ENGINES:
        alone, beside = got[e]
        slow[e] = statistics.median(beside) / statistics.median(alone)
        print(f"| {e} | {cell(alone)} | {cell(beside)} | {slow[e]:.2f}× |")
    print(f"\nattnlab's slowdown over llama.cpp BF16's: {slow['attnlab'] / slow['llama.cpp BF16']:.2f}×.")


def cell(values, fmt="{:,.1f}"):
    m = statistics.median(values)
    if len(values) == 1:
        return fmt.format(m)
    return f"{fmt.format(m)} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def report(shape, got, bw, per_token, loads, gen_rss, check, a):
    lengths = sorted(got["attnlab"][0]["prefill"])
    longest = lengths[-1]
    title = {"smollm2-135m": "SmolLM2-135M", "tinyllama-1.1b": "TinyLlama-1.1B", "gemma3-270m": "Gemma-3-270M"}[shape]
    print(f"\n### {title} shape, random BF16 weights: {a.rounds} rounds, {a.threads} threads each\n")
    print("| | " + " | ".join(ENGINES) + " |")
    print("|---" * (len(ENGINES) + 1) + "|")
    rows = [(f"decode after {longest}, ms/token", lambda r: r["decode"])]
    rows += [(f"prefill {n}, ms", lambda r, n=n: r["prefill"][n]) for n in lengths]
    rows += [("peak RSS, MB", lambda r: r["rss"])]
    for label, pick in rows:
        if "RSS" in label:  # the largest of the rounds
            cells = [f"{max(pick(r) for r in got[e]):,.0f}" for e in ENGINES]
            cells[0] += f" (bench), {gen_rss:,.0f} (generate)"
        else:
            cells = [cell([pick(r) for r in got[e]]) for e in ENGINES]
        print(f"| {label} | " + " | ".join(cells) + " |")
    band = [b / 1e9 for b in bw]
    bound32 = [per_token[0] / b * 1e3 for b in bw]
    bound16 = [per_token[1] / b * 1e3 for b in bw]
    print(f"\nMedians of the rounds' medians ({a.reps} passes each, after a warm-up), the rounds' min–max in brackets;"
          f" peak RSS the largest of the rounds. attnlab's prefill is its untraced prefill over the KV cache"
          f" (`bench`'s `prefill untraced:`, as `generate` runs a prompt), its decode the untraced KV-cache step.")
    for n in lengths:
        traced = [r["traced"][n] for r in got["attnlab"]]
        ratio = [r["traced"][n] / r["prefill"][n] for r in got["attnlab"]]
        print(f"attnlab's traced pass of {n} tokens (every stage kept): {cell(traced)} ms, "
              f"{cell(ratio, '{:,.2f}')}× its untraced prefill.")
    print(f"attnlab decode with each step traced: {cell([r['decode_traced'] for r in got['attnlab']])} ms/token.")
    print(f"Copy bandwidth {cell(band)} GB/s; decode read-bandwidth bounds: F32 {per_token[0] / 1e6:,.0f} MB a token, "
          f"{cell(bound32, '{:,.2f}')} ms; BF16 {per_token[1] / 1e6:,.0f} MB, {cell(bound16, '{:,.2f}')} ms.")
    dec = {e: statistics.median(r["decode"] for r in got[e]) for e in ENGINES}
    print(f"Decode over the bounds: attnlab {dec['attnlab'] / statistics.median(bound32):.2f}× F32's, "
          f"{dec['attnlab'] / statistics.median(bound16):.2f}× BF16's; llama.cpp BF16 "
          f"{dec['llama.cpp BF16'] / statistics.median(bound16):.2f}× BF16's; llama.cpp F32 "
          f"{dec['llama.cpp F32'] / statistics.median(bound32):.2f}× F32's.")
    pairs = list(zip(got["attnlab"], got["llama.cpp BF16"]))  # the same round: the machine closer to the same state
    paired = [f"decode {cell([x['decode'] / y['decode'] for x, y in pairs], '{:,.2f}')}×"]
    paired += [f"prefill {n} {cell([x['prefill'][n] / y['prefill'][n] for x, y in pairs], '{:,.2f}')}×" for n in lengths]
    print(f"attnlab over llama.cpp BF16 round by round (each round's two medians): {', '.join(paired)}.")
    read = [r["read_ms"] for r in got["attnlab"]]
    print(f"The weights a decoded token reads, read alone by attnlab's own threads in its own process (`bench`'s"
          f" `decode reads`): {cell(read, '{:,.2f}')} ms, {cell([per_token[1] / 1e6 / m for m in read], '{:,.1f}')} GB/s;"
          f" attnlab decode at {cell([r['decode'] / r['read_ms'] for r in got['attnlab']], '{:,.2f}')}× that read.")
    print(f"Load average (1 min) at each round's start and at the end: {', '.join(f'{v:.2f}' for v in loads)} "
          f"on {os.cpu_count()} CPUs.")
    print("\n".join(check))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--torch-job":
        return torch_job(sys.argv[2])
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="SmolLM2's shape, 2 rounds of 2 repetitions")
    p.add_argument("--shapes", default="smollm2-135m,tinyllama-1.1b")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=3, help="passes of each prefill a process times after its warm-up")
    p.add_argument("--decode", type=int, default=32, help="greedy decoding steps after the longest prefill")
    p.add_argument("--prefill", default="64,512")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--attnlab", default=os.path.join(ROOT, "build", "attnlab"))
    p.add_argument("--work", default=os.path.join(CACHE, "models"), help="where the checkpoints and GGUFs are kept")
    p.add_argument("--compete", action="store_true",
                   help="also time each engine's decode beside a competing CPU-bound process")
    p.add_argument("--compete-only", action="store_true", help="only that (after the logits check)")
    a = p.parse_args()
    if a.quick:
        a.shapes, a.rounds, a.reps = "smollm2-135m", 2, 2
    try:
        import make_checkpoints
        shapes = a.shapes.split(",")
        unknown = [s for s in shapes if s not in make_checkpoints.SHAPES]
        if unknown:
            raise Fail(f"unknown shape {unknown[0]}: the shapes are {', '.join(make_checkpoints.SHAPES)}")
        if not os.access(a.attnlab, os.X_OK):
            raise Fail(f"{a.attnlab} is not an executable: run make first, or give --attnlab")
        lengths = sorted(int(n) for n in a.prefill.split(","))
        mods, src = install(CACHE)
        for shape in shapes:
            folder, ggufs = prepare(shape, src, a.work)
            recache(sorted(glob.glob(os.path.join(folder, "*.safetensors"))) + [ggufs["bf16"], ggufs["f32"]])
            ids, _ = prompt(folder, max(lengths + [CHECK]))  # each shorter prompt is a prefix of it
            texts = {n: prompt(folder, n)[1] for n in lengths}
            check = check_logits(a, mods, folder, ggufs, ids, prompt(folder, CHECK)[1])
            print("\n".join(check), flush=True)
            # generate's peak RSS: the model and a KV cache, no trace; a few tokens show it
            _, gen_rss = run([a.attnlab, "generate", "--model", folder, "--text", texts[min(texts)],
                              "--max-new", "8"], env=attnlab_env(a))
            if not a.compete_only:
                report(shape, *rounds(a, mods, folder, ggufs, ids, texts), gen_rss, check, a)
            if a.compete or a.compete_only:
                report_compete(shape, compete(a, mods, folder, ggufs, ids, texts), a)
    except Fail as e:
        print(f"vs_llamacpp: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
