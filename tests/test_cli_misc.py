#!/usr/bin/env python3
"""Command-line checks of issue 37's findings 16, 18, 27 and 28, run as a user
would: the compare view counted against --memory-gib, `info --model` reading
the weights' headers, messages that are valid UTF-8, and `generate` at the
end of the model's context; and issue 32's: trace, summary and generate run a
model as the window opens it, tang-nocausal without the causal mask; and issue
33's `render --tile N`, the FlashAttention view at a key tile. Standard
library only; the harness is tests/common.py."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check, one_line_error, read_st, run, write_st  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-cli-misc-")


def valid_utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def tang_copy(name, skip=()):
    return common.model_files(os.path.join(TMP, name), "tang", skip)


# ---- 27: messages cut inside a character are still valid UTF-8 ----
# a token longer than 64 bytes is quoted by its first 16 bytes, which cut the sixth character
r = run(["trace", "--tokens", "日本語" * 10, "-o", os.path.join(TMP, "t.safetensors")])
one_line_error("a long token's message", r, 2, "token '日本語日本…' in row 1 is longer than 64 bytes")
check("a long token's message is valid UTF-8", valid_utf8(r.stderr), r.stderr)
# an architecture is quoted by its first 60 bytes: 'a' then 59 of three-byte characters
d = tang_copy("arch")
cfg = json.load(open(os.path.join(d, "config.json")))
cfg["architectures"] = ["a" + "日本語" * 7]
json.dump(cfg, open(os.path.join(d, "config.json"), "w"), ensure_ascii=False)
for cmd in (["generate", "--model", d, "--text", "春"], ["info", "--model", d]):
    r = run(cmd)
    one_line_error(f"{cmd[0]}: an unknown architecture's message", r, 1,
                   "architecture 'a" + "日本語" * 6 + "日' is not supported")
    check(f"{cmd[0]}: an unknown architecture's message is valid UTF-8", valid_utf8(r.stderr), r.stderr)

# ---- 28: generate at the end of the model's context prints what it generated ----
# tang has 128 positions; 124 characters are 125 tokens with its <s>, so 3 new tokens fit
spring = "春" * 124
for probs in ([], ["--probs"]):
    r = run(["generate", "--model", "tang", "--text", spring, "--max-new", "5"] + probs)
    out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
    lines = out.splitlines()
    text = lines[-1] if lines else ""
    new = text.split(" → ", 1)[1] if " → " in text else ""
    check(f"generate {' '.join(probs)} to the context's end: exit 0, the text and its 3 new tokens printed",
          r.returncode == 0 and text.startswith(spring + " → ") and len(new) >= 1 and
          len(lines) == (4 if probs else 1) and all(len(x.split("\t")) == 3 for x in lines[:-1]),
          f"exit {r.returncode}, stdout {out!r}, stderr {err!r}")
    check(f"generate {' '.join(probs)} to the context's end: one line says the context is full", err ==
          "attnlab generate: stopped after 3 of 5 new tokens: the text fills tang's context of 128 positions\n", err)
# exactly 3 asked: the context is not what stopped it
r = run(["generate", "--model", "tang", "--text", spring, "--max-new", "3"])
check("generate of as many tokens as fit: exit 0, nothing on stderr", r.returncode == 0 and r.stderr == b"",
      f"exit {r.returncode}, stderr {r.stderr!r}")
# a text that fills the context leaves no room: refused like a text longer than it
one_line_error("generate of a text that fills the context",
               run(["generate", "--model", "tang", "--text", "春" * 127, "--max-new", "5"]), 2,
               "text: 128 tokens fill tang's 128 positions, leaving none to generate")

# ---- 18: info --model checks the weights' headers against config.json ----
r = run(["info", "--model", "tang"])
check("info --model tang describes it", r.returncode == 0 and r.stdout.startswith(b"model tang (LlamaForCausalLM): 4 layers"),
      f"exit {r.returncode}, stdout {r.stdout[:200]!r}, stderr {r.stderr!r}")
d = tang_copy("no-weights", skip=("model.safetensors",))
one_line_error("info --model of a folder without weights", run(["info", "--model", d]), 1,
               f"{d}/model.safetensors: No such file or directory")
d = tang_copy("cut-header")
with open(os.path.join(d, "model.safetensors"), "r+b") as f:
    f.truncate(100)
one_line_error("info --model of weights cut inside their header", run(["info", "--model", d]), 1,
               "model.safetensors: header length")
d = tang_copy("garbled-header")
with open(os.path.join(d, "model.safetensors"), "r+b") as f:
    f.seek(8)
    f.write(b"#")  # the header's JSON no longer parses
r = run(["info", "--model", d])
one_line_error("info --model of weights whose header is not JSON", r, 1, f"{d}: ")
d = tang_copy("wrong-shape")
cfg = json.load(open(os.path.join(d, "config.json")))
cfg["intermediate_size"] += 8
json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
one_line_error("info --model of weights of another shape than config.json's", run(["info", "--model", d]), 1,
               "'model.layers.0.mlp.gate_proj.weight' has shape (352, 128) but config.json needs (360, 128)")
d = tang_copy("missing-tensor")
h, data = read_st(os.path.join(d, "model.safetensors"))
h["model.norm.gain"] = h.pop("model.norm.weight")
write_st(os.path.join(d, "model.safetensors"), h, data)
one_line_error("info --model of weights missing a tensor", run(["info", "--model", d]), 1,
               "weights: tensor 'model.norm.weight' is missing")

# ---- 16: the compare view's second trace and the picture count against --memory-gib ----
# --seq 512 --heads 8: a trace of about 26 MiB; 0.04 GiB is 41 MiB, of which a 320 × 240 picture holds 1
PNG = os.path.join(TMP, "p.png")
SMALL = ["--seq", "512", "--heads", "8", "--size", "320x240", "--memory-gib", "0.04"]
r = run(["render"] + SMALL + ["--view", "single", "-o", PNG])
check("render of one 26 MiB trace within 41 MiB", r.returncode == 0, r.stderr)
r = run(["render"] + SMALL + ["--view", "compare", "-o", PNG])
one_line_error("render --view compare of two 26 MiB traces within 41 MiB", r, 2,
               "compare: the toggled trace would need about 26 MiB besides the 26 MiB of the trace shown: over the "
               "40 MiB that the 41 MiB limit (--memory-gib) leaves besides the picture (1 MiB)")
r = run(["render", "--seq", "512", "--heads", "8", "--size", "320x240", "--memory-gib", "0.06", "--view", "compare",
         "-o", PNG])
check("render --view compare of two 26 MiB traces within 61 MiB", r.returncode == 0, r.stderr)
# the same from a trace file: the file's problem, exit 1
big = os.path.join(TMP, "big.safetensors")
r = run(["trace", "--seq", "512", "--heads", "8", "-o", big])
check("a 26 MiB trace written", r.returncode == 0, r.stderr)
r = run(["render", "--size", "320x240", "--memory-gib", "0.04", "--view", "compare", big, "-o", PNG])
one_line_error("render --view compare of a 26 MiB trace file within 41 MiB", r, 1,
               "compare: the toggled trace would need about 26 MiB besides the 26 MiB of the trace shown")
r = run(["render", "--size", "320x240", "--memory-gib", "0.04", "--view", "single", big, "-o", PNG])
check("render of the 26 MiB trace file within 41 MiB", r.returncode == 0, r.stderr)
os.unlink(big)
# the picture: by itself over the limit, refused before anything is computed
for size in (["--size", "8192x8192", "--scale", "2"], ["--size", "4096x4096", "--scale", "4"]):
    r = run(["render", "--memory-gib", "1"] + size + ["-o", PNG])
    one_line_error(f"render {' '.join(size)} within 1 GiB", r, 2, "a 16384 × 16384 picture needs about 4.00 GiB, "
                   "more than the 1.00 GiB limit (--memory-gib); use a smaller --size or --scale")
# with the trace: a 61 MiB picture and a 26 MiB trace within 61 MiB
r = run(["render", "--seq", "512", "--heads", "8", "--size", "2000x2000", "--memory-gib", "0.06", "-o", PNG])
one_line_error("render of a 61 MiB picture and a 26 MiB trace within 61 MiB", r, 2,
               "KiB that the 61 MiB limit (--memory-gib) leaves besides the picture (61 MiB); reduce seq")

# ---- issue 32: every command runs a model as it was trained, as the window opens it ----
POEM = ["--text", "床前明月光"]
NOTE = ("note: tang-nocausal was trained without the causal mask and runs without it, as the window opens it "
        "(--causal runs it with the mask)\n")


def settings_line(r):
    lines = r.stdout.decode(errors="replace").splitlines()
    return lines[1] if len(lines) > 1 else ""


for flags, want, note in (([], "causal off", True), (["--causal"], "causal on", False),
                          (["--no-causal"], "causal off", False), (["--reversed-causal"], "causal REVERSED", False)):
    r = run(["summary", "--model", "tang-nocausal"] + POEM + flags)
    check(f"summary --model tang-nocausal {' '.join(flags)}: {want}", r.returncode == 0 and
          f" {want} " in settings_line(r), settings_line(r))
    check(f"summary --model tang-nocausal {' '.join(flags)}: {'a note' if note else 'nothing'} on stderr",
          r.stderr.decode() == ("attnlab summary: " + NOTE if note else ""), r.stderr)
r = run(["summary", "--model", "tang"] + POEM)
check("summary --model tang: causal on, nothing on stderr", r.returncode == 0 and " causal on " in settings_line(r)
      and r.stderr == b"", (settings_line(r), r.stderr))
# the trace file records the setting it ran with
t = os.path.join(TMP, "nocausal.safetensors")
r = run(["trace", "--model", "tang-nocausal"] + POEM + ["-o", t])
check("trace --model tang-nocausal: written, the note on stderr", r.returncode == 0 and
      r.stderr.decode() == "attnlab trace: " + NOTE, r.stderr)
r = run(["info", t])
check("trace --model tang-nocausal: the file says causal off", " causal off " in settings_line(r), settings_line(r))
# generate: the default is --no-causal's continuation, probabilities and all, not --causal's
gen = {f: run(["generate", "--model", "tang-nocausal", "--max-new", "3", "--probs"] + POEM + ([f] if f else []))
       for f in ("", "--causal", "--no-causal")}
check("generate --model tang-nocausal: as --no-causal, with the note", gen[""].returncode == 0 and
      gen[""].stdout == gen["--no-causal"].stdout and gen[""].stderr.decode() == "attnlab generate: " + NOTE,
      (gen[""].stdout, gen["--no-causal"].stdout, gen[""].stderr))
check("generate --model tang-nocausal --causal: the mask on, no note", gen["--causal"].stdout != gen[""].stdout
      and gen["--causal"].stderr == b"", (gen["--causal"].stdout, gen["--causal"].stderr))

# ---- issue 33: render --tile N draws the FlashAttention view at key tile N ----
# (test_ui_tiles checks through the app core that it is what ] pressed N times shows)
TILES = ["render", "--tiles", "2x2", "--seq", "8"]
for n in range(4):  # --tile counts from 1, as the view's caption does
    svg = os.path.join(TMP, f"tile{n}.svg")
    r = run(TILES + ["--tile", str(n + 1), "-o", svg])
    text = open(svg, encoding="utf-8").read() if r.returncode == 0 and os.path.exists(svg) else ""
    check(f"render --tile {n + 1}: exit 0, the view says key tile {n + 1} of 4", f"Key tile {n + 1} of 4" in text,
          f"exit {r.returncode}, stderr {r.stderr[:300]!r}")
    check(f"render --tile {n + 1}: at the last tile (only), the largest difference", ("the plain one (weights·v) is" in text)
          == (n == 3), "")
pngs = []
for n in (1, 2):
    png = os.path.join(TMP, f"tile{n}.png")
    r = run(TILES + ["--view", "tiles", "--tile", str(n), "-o", png])
    pngs.append(open(png, "rb").read() if r.returncode == 0 and os.path.exists(png) else b"")
check("render --view tiles --tile 1 and --tile 2: two PNGs, not the same picture", pngs[0] and pngs[1] and
      pngs[0] != pngs[1], "")
for args, msg in ((["--tile", "5"], "--tile: 5 is out of range (this trace has 4 key tiles: 1 to 4)"),
                  (["--tile", "1", "--view", "grid"], "--tile: steps the FlashAttention view's key tiles; it goes "
                   "with --view tiles, not --view grid"),
                  (["--tile", "0"], "--tile: '0' is not a whole number from 1")):
    one_line_error(f"render {' '.join(args)}", run(TILES + args + ["-o", os.path.join(TMP, "x.png")]), 2, msg)
for args, msg in ((["--tile", "1"], "--tile: the FlashAttention view needs tiles: --tiles BQxBK"),
                  (["--view", "tiles"], "--view tiles: the FlashAttention view needs tiles: --tiles BQxBK")):
    one_line_error(f"render {' '.join(args)} without --tiles", run(["render"] + args + ["-o", os.path.join(TMP, "x.png")]),
                   2, msg)
# mode mla by tiles, absorbed: the view over the latent cache
svg = os.path.join(TMP, "mla.svg")
r = run(["render", "--mode", "mla", "--mla-absorb", "--tiles", "2x4", "--seq", "8", "--tile", "2", "-o", svg])
text = open(svg, encoding="utf-8").read() if r.returncode == 0 and os.path.exists(svg) else ""
check("render --mode mla --mla-absorb --tiles 2x4 --tile 2: the latent context, tile 2 of 2",
      "Key tile 2 of 2" in text and "the plain one (weights·c_kv) is" in text, f"exit {r.returncode} {r.stderr[:300]!r}")
# ---- issue 36: a long command's progress on stderr, when stderr is a terminal ----
import random  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import make_checkpoints as mc  # noqa: E402

big = os.path.join(TMP, "progress-model")  # 12 layers of 384 and 400 tokens: a trace of a few hundred ms
mc.write(big, dict(mc.TINY["tinyllama"], hidden_size=384, num_hidden_layers=12, num_attention_heads=6,
                   num_key_value_heads=2, intermediate_size=1024, max_position_embeddings=2048),
         seed=3, shards=1, keep=False)
words = " ".join(random.Random(2).choice(mc.WORDS[3:]) for _ in range(400))
for cmd, what in ((["trace", "-o", os.path.join(TMP, "p.safetensors")], "tracing layer"),
                  (["render", "-o", os.path.join(TMP, "p.png")], "tracing layer")):
    args = [common.attnlab] + cmd + ["--model", big, "--text", words]
    plain = run(args[1:])
    check(f"{cmd[0]} with stderr not a terminal: no progress on it", plain.returncode == 0 and
          b"layer" not in plain.stderr and b"\r" not in plain.stderr, plain.stderr[-300:])
    # script(1) runs it on a pseudo-terminal: what it wrote comes back on script's stdout
    # a line every 20 ms (250 by default): the trace alone takes a few hundred ms on a quiet machine
    r = subprocess.run(["script", "-qec", shlex.join(args), "/dev/null"], capture_output=True, timeout=120,
                       env=dict(os.environ, ATTNLAB_PROGRESS_MS="20"))
    out = r.stdout.decode(errors="replace")
    lines = [x for x in out.split("\r") if f"attnlab {cmd[0]}: " in x]
    check(f"{cmd[0]} on a terminal: a progress line rewritten in place, the layer and the time left",
          r.returncode == 0 and any(what in x and " of 12 (" in x for x in lines), repr(out[-600:]))
    check(f"{cmd[0]} on a terminal: the line cleared before the output", "\r\x1b[K" in out and
          out.rindex("\r\x1b[K") < out.rindex("wrote "), repr(out[-300:]))
common.finish()
