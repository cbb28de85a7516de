"""The script tests' shared harness, standard library only: the --attnlab
option, a temporary folder kept when a check failed, running the binary, the
count of checks and its closing line "N passed, N failed" (which CI reads),
the one-line error attnlab gives, copies of a shipped model, and safetensors
files read and written.

A script imports it from its own folder:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import common
"""
import argparse
import atexit
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import wordlevel  # noqa: E402  (scripts/wordlevel.py: tokenizer.json shared with scripts/family_folders.py)

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "models")
MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")

passed = failed = 0
say_ok = False  # print "ok NAME" for the checks that pass too
attnlab = None  # the binary run() runs, from --attnlab
tmp = None  # the folder temp_folder() made


# ---- the command line and the temporary folder ----

def parser(description=None):
    """An argument parser that takes --attnlab PATH; a script adds its own options to it."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--attnlab", required=True, help="the attnlab binary")
    return ap


def parse(ap=None):
    """The command line, read by ap (parser() if none); run() runs its --attnlab."""
    global attnlab
    args = (ap or parser()).parse_args()
    attnlab = args.attnlab
    return args


def temp_folder(prefix):
    """A new folder in $ATTNLAB_TEST_TMP (ctest sets it to the build folder for some tests) or the
    system's temporary folder, removed at exit unless a check failed (then kept to look at)."""
    global tmp
    tmp = d = tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("ATTNLAB_TEST_TMP") or None)
    atexit.register(lambda: failed or shutil.rmtree(d, True))
    return d


# ---- counting ----

def check(name, ok, detail=""):
    """Counts one check; a failed one prints FAIL NAME: DETAIL. Returns ok."""
    global passed, failed
    if ok:
        passed += 1
        if say_ok:
            print(f"ok {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")
    return ok


def finish(started=None):
    """Prints the closing line "N passed, N failed" and exits 1 if a check failed, else 0.
    started (a time.monotonic()): the line ends with the seconds taken and, after a
    failure, where the files are kept; without it the folder is named on a line before."""
    notes = [f"{time.monotonic() - started:.1f} s"] if started is not None else []
    if failed and tmp:
        if started is None:
            print(f"(files kept in {tmp})")
        else:
            notes.append(f"files kept in {tmp}")
    print(f"{passed} passed, {failed} failed" + (f" ({'; '.join(notes)})" if notes else ""))
    sys.exit(1 if failed else 0)


# ---- running attnlab ----

def run(args, timeout=120, env=None, **kw):
    """attnlab ARGS (str or bytes), its output captured. env: variables set over this
    process's own; kw: more of subprocess.run's arguments (cwd, preexec_fn)."""
    args = [a if isinstance(a, bytes) else a.encode() for a in args]
    return subprocess.run([attnlab.encode()] + args, capture_output=True, timeout=timeout,
                          env=None if env is None else {**os.environ, **env}, **kw)


def one_line(r, prefix="attnlab"):
    """Whether run r wrote one line on stderr, starting with prefix."""
    err = r.stderr.decode(errors="replace")
    return err.count("\n") == 1 and err.startswith(prefix)


def one_line_error(name, r, code, message):
    """Checks that run r failed as attnlab fails: exit code, one line on stderr starting
    "attnlab", containing message."""
    return check(name, r.returncode == code and one_line(r) and message in r.stderr.decode(errors="replace"),
                 f"exit {r.returncode} (want {code}), stderr {r.stderr[:400]!r}, want {message!r}")


def expect(args, code, message=None, stream="stderr", within=None):
    """Runs attnlab ARGS and checks its exit code and that message (if any) is in its stream;
    a failure (code not 0) must also be one line on stderr starting "attnlab". within: the
    seconds it may take. Returns the run, or None when it did not end."""
    name = " ".join(a if isinstance(a, str) else repr(a) for a in args)[:200]
    t0 = time.monotonic()
    try:
        r = run(args, timeout=within * 4 if within else 120)
    except subprocess.TimeoutExpired:
        check(name, False, "timed out")
        return None
    took = time.monotonic() - t0
    text = (r.stderr if stream == "stderr" else r.stdout).decode(errors="replace")
    ok = r.returncode == code and (message is None or message in text) and (code == 0 or one_line(r))
    check(name, ok and (within is None or took < within),
          f"exit {r.returncode} (want {code}) in {took:.1f} s, {stream}: {text!r}, want {message!r}")
    return r


# ---- shipped models and safetensors files ----

def model_copy(dest, like="tang"):
    """A copy at dest (made anew) of the whole folder of the shipped model `like`."""
    shutil.rmtree(dest, True)
    shutil.copytree(os.path.join(MODELS, like), dest)
    return dest


def model_files(dest, like="tang", skip=()):
    """A new folder dest holding the shipped model's config, tokenizer and weights, less those in skip."""
    os.makedirs(dest)
    for f in MODEL_FILES:
        if f not in skip:
            shutil.copy(os.path.join(MODELS, like, f), dest)
    return dest


def snapshot(d, step):
    """A training checkpoint of model folder d: d/checkpoints/step<N> (or the folder named step, a
    string) holding copies of d's config, tokenizer and weights."""
    s = os.path.join(d, "checkpoints", f"step{step}" if isinstance(step, int) else step)
    os.makedirs(s)
    for f in MODEL_FILES:
        shutil.copyfile(os.path.join(d, f), os.path.join(s, f))
    return s


def st_parts(path):
    """A safetensors file's header, as the JSON bytes it holds (padding and all), and its data section."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    return raw[8:8 + n], raw[8 + n:]


def read_st(path):
    """A safetensors file's header (a dict, __metadata__ and all) and its data section."""
    header, data = st_parts(path)
    return json.loads(header.decode("utf-8")), data


def st_bytes(header, data=b"", pad=True):
    """A safetensors file's bytes: the header (a dict, or JSON bytes kept as they are) padded
    with spaces to a multiple of 8 bytes, as attnlab and Hugging Face pad it (pad=False: as
    it is), then data."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def write_st(path, header, data=b"", pad=True):
    """Writes st_bytes(header, data, pad) to path; returns path."""
    with open(path, "wb") as f:
        f.write(st_bytes(header, data, pad))
    return path


# ---- small model folders of one family (the family CLI tests: test_cli_*.py) ----

# google/gemma-3-270m's config.json as published (test_cli_gemma.py reads it over sparse
# weights of its shapes; tests/make_checkpoints.py's gemma3-270m shape fills them at random)
GEMMA3_270M = {
    "_sliding_window_pattern": 6, "architectures": ["Gemma3ForCausalLM"], "attention_bias": False,
    "attention_dropout": 0.0, "attn_logit_softcapping": None, "bos_token_id": 2, "eos_token_id": 1,
    "final_logit_softcapping": None, "head_dim": 256, "hidden_activation": "gelu_pytorch_tanh",
    "hidden_size": 640, "initializer_range": 0.02, "intermediate_size": 2048,
    "layer_types": ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(18)],
    "max_position_embeddings": 32768, "model_type": "gemma3_text", "num_attention_heads": 4,
    "num_hidden_layers": 18, "num_key_value_heads": 1, "pad_token_id": 0, "query_pre_attn_scalar": 256,
    "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000.0, "rope_scaling": None, "rope_theta": 1000000.0,
    "sliding_window": 512, "torch_dtype": "bfloat16", "transformers_version": "4.55.0.dev0",
    "use_bidirectional_attention": False, "use_cache": True, "vocab_size": 262144}


WORDS = ["<unk>", "<s>", "</s>", "the", "cat", "sat", "on", "mat", ".", "a", "dog"]


def tokenizer():
    """tokenizer.json of a word-level vocabulary of WORDS, <s> before every text (scripts/wordlevel.py)."""
    return wordlevel.tokenizer_json(WORDS)


def folder(root, name, c, tensors, gain=1.0):
    """A model folder root/name (made anew): config c (a dict, or the text itself), tokenizer(),
    float32 weights of the shapes in tensors ({name: shape}), random by name: matrices N(0, 0.5²),
    vectors (norm gains) gain + N(0, 0.1²)."""
    d = os.path.join(root, name)
    shutil.rmtree(d, True)
    os.makedirs(d)
    rng = random.Random(name)
    header, blobs, off = {}, [], 0
    for k, shape in tensors.items():
        n = 1
        for s in shape:
            n *= s
        vals = [gain + 0.1 * rng.gauss(0, 1) if len(shape) == 1 else rng.gauss(0, 0.5) for _ in range(n)]
        b = struct.pack(f"<{n}f", *vals)
        header[k] = {"dtype": "F32", "shape": list(shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    write_st(os.path.join(d, "model.safetensors"), header, b"".join(blobs))
    with open(os.path.join(d, "config.json"), "w") as f:
        f.write(c if isinstance(c, str) else json.dumps(c))
    with open(os.path.join(d, "tokenizer.json"), "w") as f:
        json.dump(tokenizer(), f)
    return d


def refused_everywhere(d, message, out):
    """info, trace (writing out) and generate each refuse model folder d with one line holding message."""
    expect(["info", "--model", d], 1, message)
    expect(["trace", "--model", d, "--text", "the cat", "-o", out], 1, message)
    expect(["generate", "--model", d, "--text", "the cat", "--max-new", "2"], 1, message)


def fuzz_configs(family, n, seed, config, keys, values, folder, text, out, silent_unless=None):
    """A fuzz of a family's keys (the family CLI tests): n configs, each config(rng) with 1 to 3 of keys
    set to one of values (rng = random.Random(seed)), written as JSON text (NaN as NaN: JSON refuses it,
    and so must the reader) into the folder folder(text, c) returns; info and trace (of text, writing
    out) over each must end in success or one line and exit 1 or 2. silent_unless (a config): a success
    must also write nothing on stderr, unless the keys all hold silent_unless's values. One check for
    the 2n runs, naming the first three that did not."""
    rng = random.Random(seed)
    crashes = []
    for _ in range(n):
        c = config(rng)
        for key in rng.sample(keys, rng.randint(1, 3)):
            c[key] = rng.choice(values)
        js = json.dumps(c)
        d = folder(js, c)
        for args in (["info", "--model", d], ["trace", "--model", d, "--text", text, "-o", out]):
            r = run(args)
            err = r.stderr.decode(errors="replace")
            quiet = silent_unless is None or not err or all(c.get(k) == silent_unless.get(k) for k in keys)
            good = (r.returncode == 0 and quiet) or (r.returncode in (1, 2) and one_line(r))
            if not good:
                crashes.append(f"{args[0]} {js}: exit {r.returncode} {err[:200]!r}")
    check(f"fuzzed {family} configs: {2 * n} runs end in success or one line and exit 1 or 2 ({len(crashes)} did "
          "not)", not crashes, "; ".join(crashes[:3]))
