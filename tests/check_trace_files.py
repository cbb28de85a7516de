#!/usr/bin/env python3
"""Every trace attnlab writes passes a strict safetensors reader (issue 21,
finding 13): the rules of the reference implementation, written out here
(Debian has no python3-safetensors; when the `safetensors` package can be
imported it reads every file too).

  - 8-byte little-endian header length N, at most 100 MiB, within the file;
  - the N header bytes are valid UTF-8 (decoded strictly) holding one JSON
    object that starts with '{', has no key twice, and only trailing spaces;
  - __metadata__, when present, maps strings to strings;
  - every other entry has exactly dtype, shape and data_offsets; the dtype is
    known, the shape whole numbers >= 0 whose product (checked at each step)
    times the dtype's size is the span of data_offsets;
  - the offsets, sorted, cover the data section exactly: from 0, no gap, no
    overlap, ending at its last byte.

And the settings are recorded whole: a model's long Chinese text and a model
folder's long path come back byte for byte. Standard library only (the HF
checkpoint case uses tests/make_checkpoints.py, which needs numpy)."""
import json
import os
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check  # noqa: E402

ap = common.parser()
ap.add_argument("--models", required=True, help="the shipped models (assets/models)")
ARGS = common.parse(ap)
TMP = common.temp_folder("attnlab-tracefiles-")

DTYPE_SIZES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
               "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
MAX_HEADER = 100 << 20
U64 = (1 << 64) - 1


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise ValueError(f"key {dup[0]!r} appears twice")
    return dict(pairs)


def strict_read(raw):
    """The problems a strict reader finds in a safetensors file's bytes ([] when none), and its metadata."""
    if len(raw) < 8:
        return [f"{len(raw)} bytes: too short for the header length"], {}
    n = struct.unpack("<Q", raw[:8])[0]
    if n > MAX_HEADER:
        return [f"header length {n} over the {MAX_HEADER}-byte limit"], {}
    if 8 + n > len(raw):
        return [f"header length {n} runs past the {len(raw)}-byte file"], {}
    try:
        text = raw[8:8 + n].decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        return [f"header is not valid UTF-8: {e}"], {}
    if not text.startswith("{"):
        return ["header does not start with '{'"], {}
    stripped = text.rstrip(" ")
    try:
        head = json.loads(stripped, object_pairs_hook=no_duplicates)
    except ValueError as e:
        return [f"header is not JSON: {e}"], {}
    problems = []
    if not isinstance(head, dict):
        return ["header is not a JSON object"], {}
    meta = head.pop("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        problems.append("__metadata__ is not an object of strings")
    data = len(raw) - 8 - n
    spans = []
    for name, e in head.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            problems.append(f"{name}: not exactly dtype, shape, data_offsets: {e!r}")
            continue
        size = DTYPE_SIZES.get(e["dtype"])
        shape, offs = e["shape"], e["data_offsets"]
        if size is None:
            problems.append(f"{name}: unknown dtype {e['dtype']!r}")
            continue
        if not isinstance(shape, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                  for v in shape):
            problems.append(f"{name}: shape {shape!r}")
            continue
        if (not isinstance(offs, list) or len(offs) != 2 or
                not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= U64 for v in offs)
                or offs[1] < offs[0]):
            problems.append(f"{name}: data_offsets {offs!r}")
            continue
        count = 1
        for v in shape:  # the reference multiplies with checked_mul: an overflow is an error
            count *= v
            if count > U64:
                problems.append(f"{name}: shape {shape} overflows")
                break
        if count * size != offs[1] - offs[0]:
            problems.append(f"{name}: shape {shape} x {size} bytes != span {offs[1] - offs[0]}")
        spans.append((offs[0], offs[1], name))
    end = 0
    for b, e, name in sorted(spans):
        if b != end:
            problems.append(f"{name}: begins at {b}, the previous tensor ends at {end} "
                            f"({'overlap' if b < end else 'gap'})")
        end = max(end, e)
    if end != data:
        problems.append(f"the tensors cover {end} bytes of a {data}-byte data section")
    return problems, meta


def reference_read(path):
    """The `safetensors` package's own reader, when it is installed: None, or what it said."""
    try:
        from safetensors import safe_open
    except ImportError:
        return None
    try:
        with safe_open(path, framework="numpy") as f:
            for k in f.keys():
                f.get_tensor(k)
        return "ok"
    except Exception as e:  # anything it raises is a failure of the file
        return f"{type(e).__name__}: {e}"


def trace(name, args, env=None):
    """Runs attnlab trace ARGS -o NAME and checks the file strictly; returns its metadata."""
    out = os.path.join(TMP, name)
    r = subprocess.run([ARGS.attnlab, "trace", *args, "-o", out], capture_output=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    if not check(f"{name}: written", r.returncode == 0 and os.path.exists(out), r.stderr.decode(errors="replace")):
        return {}
    with open(out, "rb") as f:
        raw = f.read()
    problems, meta = strict_read(raw)
    check(f"{name}: passes the strict reader", not problems, "; ".join(problems[:5]))
    ref = reference_read(out)
    if ref is not None:
        check(f"{name}: the safetensors package reads it", ref == "ok", ref)
    check(f"{name}: the header is padded to 8 bytes, so the data is aligned",
          struct.unpack("<Q", raw[:8])[0] % 8 == 0)
    return meta


# the strict reader's own cases: it must refuse what it is meant to refuse
def tiny(head, data=b""):
    text = json.dumps(head, ensure_ascii=False).encode()
    return struct.pack("<Q", len(text)) + text + data


good = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "__metadata__": {"k": "v"}}
check("strict reader: a good file", strict_read(tiny(good, bytes(8)))[0] == [])
cut = json.dumps(dict(good, __metadata__={"text": "春眠"}), ensure_ascii=False).encode()
cut = cut.replace("春眠".encode(), "春眠".encode()[:4])
for what, raw in (("cut mid-character", struct.pack("<Q", len(cut)) + cut + bytes(8)),
                  ("a gap", tiny({"x": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8))),
                  ("an overlap", tiny({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                                       "y": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8))),
                  ("a shape that does not fit", tiny({"x": {"dtype": "F16", "shape": [3], "data_offsets": [0, 8]}},
                                                    bytes(8))),
                  ("trailing bytes", tiny(good, bytes(12))),
                  ("a number in the metadata", tiny(dict(good, __metadata__={"k": 1}), bytes(8))),
                  ("a key twice", struct.pack("<Q", 60) + b'{"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"x":1}'
                   + bytes(4)),
                  ("an overflowing shape", tiny({"x": {"dtype": "F32", "shape": [1 << 40, 1 << 40, 0],
                                                       "data_offsets": [0, 0]}}))):
    check(f"strict reader refuses {what}", strict_read(raw)[0] != [], raw[:120])

# ---- every kind of trace attnlab writes ----
LONG = "春眠不觉晓，处处闻啼鸟。|独在异乡为异客，每逢佳节倍思亲。"
trace("layer.safetensors", [])
trace("rope-past.safetensors", ["--rope", "--past", "2", "--mask-value", "-1e9", "--train"])
trace("cross.safetensors", ["--tokens", "我 爱 AI", "--source-tokens", "I love AI very much", "--no-causal"])
trace("tokens-long.safetensors", ["--tokens", " ".join(["长长的词"] * 40) + " | 短"])
meta = trace("tang-long.safetensors", ["--model", "tang", "--text", LONG])
check("tang: the Chinese text is recorded whole", meta.get("text") == LONG, repr(meta.get("text")))
check("tang: model recorded", meta.get("model") == "tang", repr(meta.get("model")))
meta = trace("brown.safetensors", ["--model", "brown", "--text", "the jury said it was a good day for all " * 4])
check("brown: the text is recorded whole", meta.get("text") == "the jury said it was a good day for all " * 4,
      repr(meta.get("text")))
# a model folder whose path is long and Chinese: `model` records it whole
folder = os.path.join(TMP, "一个名字很长的模型文件夹" * 4, "tang")
shutil.copytree(os.path.join(ARGS.models, "tang"), folder)
meta = trace("folder.safetensors", ["--model", folder, "--text", LONG])
check("a long model folder path is recorded whole", meta.get("model") == folder, repr(meta.get("model")))
# a long prompt that keeps one layer's attention weights (the budget's path: 8.4 MiB
# for every layer's, 7.3 MiB with one layer's, measured)
POEM = LONG.replace("|", "") * 3
meta = trace("one-layer-kept.safetensors", ["--model", "tang", "--text", POEM, "--memory-gib", "0.008"])
check("one layer's weights kept: the text whole", meta.get("text") == POEM, repr(meta.get("text")))

# a Hugging Face checkpoint (BF16 shards and an index), as make_checkpoints.py writes them
try:
    import make_checkpoints
    hf = os.path.join(TMP, "hf-llama3")
    make_checkpoints.write(hf, make_checkpoints.TINY["llama3"], 1)
except ImportError as e:  # numpy missing: said, not hidden
    check("make_checkpoints.py can run (numpy)", False, repr(e))
    hf = None
if hf:
    meta = trace("checkpoint.safetensors", ["--model", hf, "--text", "the cat sat on the mat . " * 3])
    check("checkpoint: the folder is recorded whole", meta.get("model") == hf, repr(meta.get("model")))

common.finish()
