#!/usr/bin/env python3
"""Hostile files and texts at the command line (issue 37): each is refused with
one line naming the problem and a non-zero exit, never a crash, a hang or a
quiet wrong answer. Standard library only; the harness is tests/common.py."""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import MODELS, check, expect, run, st_parts, write_st  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-cli-files-")
OUT = os.path.join(TMP, "t.safetensors")


def model_copy(name, like="tang"):
    return common.model_copy(os.path.join(TMP, name), like)


# ---- finding 7: '|' rows, as many as the bars make (a heap overflow before) ----
for text, msg in (("|||", "text: row 1 is empty"), ("床前||||||||", "text: row 2 is empty"),
                  ("|" * 1000, "text: row 1 is empty")):
    for cmd in (["trace", "-o", OUT], ["generate"], ["render", "-o", os.path.join(TMP, "rows.png")]):
        expect([cmd[0], "--model", "tang", "--text", text] + cmd[1:], 2, msg)
expect(["trace", "--model", "tang", "--text", "床前|明月", "-o", OUT], 0, "wrote", stream="stdout")

# ---- finding 19: a model's example.txt is checked as --text is ----
d = model_copy("example")
for example, msg in ((b"|||\n", "example.txt: row 1 is empty"),
                     (b"\xe5\xba\x8a\xff\n", "example.txt: not valid UTF-8 at byte offset 3 (0xFF)")):
    open(os.path.join(d, "example.txt"), "wb").write(example)
    expect(["trace", "--model", d, "-o", OUT], 2, msg)

# ---- findings 15 and 22: one JSON rule for every file ----
d = model_copy("json")
cfg = open(os.path.join(MODELS, "tang", "config.json")).read()
open(os.path.join(d, "config.json"), "w").write(cfg + '\n{"num_hidden_layers": 9}\n')
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1, "config.json: data after the JSON value")
open(os.path.join(d, "config.json"), "w").write(cfg + "\n  \n")  # blanks after it are fine
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 0, "wrote", stream="stdout")
st = os.path.join(d, "model.safetensors")
header, body = st_parts(os.path.join(MODELS, "tang", "model.safetensors"))
write_st(st, header.rstrip() + b'{"x":1}', body)
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1, "header: data after the JSON value")
write_st(st, header.replace(b'"model.norm.weight"', b'"model.norm.weight\\u0000 renamed"'), body)
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1, "header: a key holds a NUL character")

# ---- finding 21: a tied model's saved head has the embedding's shape ----
d = model_copy("tied")
h = json.loads(header)
end = max(e["data_offsets"][1] for k, e in h.items() if k != "__metadata__")
h["lm_head.weight"] = {"dtype": "F32", "shape": [3, 5], "data_offsets": [end, end + 60]}
write_st(os.path.join(d, "model.safetensors"), h, body + bytes(60))
expect(["trace", "--model", d, "--text", "床前", "-o", OUT], 1,
       "'lm_head.weight' has shape (3, 5) but config.json needs (3072, 128)")

# ---- finding 17: a trace's metadata agrees with its tensors ----
expect(["trace", "--model", "tang", "--text", "床前明月光", "-o", OUT], 0, "wrote", stream="stdout")
theader, tbody = st_parts(OUT)
meta = json.loads(theader)["__metadata__"]
for key, value, msg in (("layers", "256", "metadata says layers = 256 but the tensors have 4"),
                        ("attention", "cross", "metadata says attention = cross but the trace has no memory tensor")):
    h = json.loads(theader)
    h["__metadata__"] = {**meta, key: value}
    bad = os.path.join(TMP, f"meta-{key}.safetensors")
    write_st(bad, h, tbody)
    expect(["info", bad], 1, msg)
    expect(["render", bad, "-o", os.path.join(TMP, "meta.png")], 1, msg)

# ---- finding 10: a pre-tokenizer that reads to the end from every match is refused at once ----
d = model_copy("scan", like="brown")
tok = json.load(open(os.path.join(d, "tokenizer.json")))
# a megabyte of a's in a lesson's `text =` (a --text that long is past the kernel's
# limit for one argument): the quadratic search took hours, and [cd] kept one
# unanchored search trying every start; refused now in milliseconds, so a loaded
# machine's 30 s is plenty
lesson_md = os.path.join(TMP, "scan.md")
with open(lesson_md, "w") as f:
    f.write(f"# T\n\n## S\n\n```attnlab\nmodel = {d}\ntext = {'a' * 1000000}\n```\n\nText.\n")
for pattern in ("a(?=[^c]*c)?", "a(?=[^c]*[cd])"):
    tok["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated"}
    json.dump(tok, open(os.path.join(d, "tokenizer.json"), "w"))
    t0 = time.monotonic()
    r = run(["lesson", "--check", lesson_md], timeout=120)
    took = time.monotonic() - t0
    err = r.stderr.decode(errors="replace")
    lines = err.splitlines()
    check(f"a lesson's megabyte text under {pattern}: refused at its line, at once",
          r.returncode == 2 and len(lines) == 2 and lines[0].startswith(lesson_md + ":7: ")
          and "the pattern reads too far ahead" in lines[0] and lines[1] == "attnlab lesson --check: 1 problem"
          and took < 30,
          f"exit {r.returncode} in {took:.1f} s: {err[:300]!r}")

common.finish()
