#!/usr/bin/env python3
"""Vector export as a teacher would use it: every view of the window rendered
to PNG, SVG and PDF with `attnlab render`, and each file checked with the
tools a reader would open it with.

- the SVG parses as XML, its text layer (<text> under the glyph outlines)
  holds the view's token labels, and rsvg-convert draws it at the PNG's size; the two
  pictures agree (per-pixel difference, averaged and at the 99th percentile:
  text is anti-aliased differently, nothing may be missing or moved);
- the PDF is read by pdfinfo (one page, the picture's size in points) and
  pdftotext, and its text holds the view's token labels (text stays text),
  with every font embedded (pdffonts), the CJK face included.

Needs rsvg-convert (librsvg2-bin), poppler-utils and ImageMagick's convert to
read PNGs; skipped (77) without them."""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--attnlab", required=True)
ap.add_argument("--lessons", required=True)
ARGS = ap.parse_args()
for tool in ("rsvg-convert", "pdfinfo", "pdftotext", "pdffonts", "convert"):
    if not shutil.which(tool):
        print(f"skip: {tool} is not installed")
        sys.exit(77)
TMP = tempfile.mkdtemp(prefix="attnlab-export-")
W, H = 1280, 800
failed = 0

TOKENS = ["--tokens", "我 爱 AI | I love AI"]
# name, render flags, labels the PDF's text must hold
VIEWS = [
    ("weights", TOKENS + ["--stage", "weights"], ["我", "爱", "AI", "weights"]),
    ("scores", TOKENS + ["--stage", "masked_scores", "--head", "1"], ["我", "masked_scores"]),
    ("grid", TOKENS + ["--view", "grid"], ["head 3"]),
    ("compare", TOKENS + ["--view", "compare", "--compare", "causal"], ["我", "AI"]),
    ("row", TOKENS + ["--stage", "weights", "--row", "2"], ["AI"]),
    ("decode", TOKENS + ["--decode-step", "2", "--stage", "k_cache"], ["k_cache"]),
    ("nan", ["--tokens", "a b c | d", "--pad-side", "left", "--no-softmax-guard", "--batch-index", "1",
             "--stage", "weights"], ["NaN"]),
    ("wide", ["--tokens", "the cat sat on the mat", "--stage", "q"], ["the", "mat"]),
    ("lesson_en", ["--lesson", os.path.join(ARGS.lessons, "en", "01-self-attention.md"), "--step", "2"],
     ["Three weight matrices", "m30"]),
    ("lesson_zh", ["--lesson", os.path.join(ARGS.lessons, "zh", "01-self-attention.md"), "--step", "2", "--lang", "zh"],
     ["三个权重矩阵", "注意力"]),
    ("picker", ["--picker"], ["Self-attention", "Arrows", "Pitfalls"]),
]


def fail(msg):
    global failed
    failed += 1
    print(f"FAIL {msg}")


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=120)


def pixels(png):
    out = subprocess.run(["convert", png, "-alpha", "off", "-depth", "8", "rgb:-"], capture_output=True, check=True)
    return np.frombuffer(out.stdout, np.uint8).reshape(-1, 3).astype(np.int16)


def check_view(name, flags, labels):
    before = failed
    paths = {ext: os.path.join(TMP, f"{name}.{ext}") for ext in ("png", "svg", "pdf")}
    for ext, path in paths.items():
        r = run(ARGS.attnlab, "render", *flags, "--size", f"{W}x{H}", "-o", path)
        if r.returncode or not os.path.exists(path):
            fail(f"{name}.{ext}: attnlab render exited {r.returncode}: {r.stderr.strip()}")
            return
    try:
        svg = ET.parse(paths["svg"])
    except ET.ParseError as e:
        fail(f"{name}.svg does not parse as XML: {e}")
        return
    # the drawing's text is also SVG text (an invisible layer), so it can be selected and found
    words = "\n".join(e.text or "" for e in svg.iter("{http://www.w3.org/2000/svg}text"))
    missing = [t for t in labels if t not in words]
    if missing:
        fail(f"{name}.svg: its text layer lacks {missing}")
    raster = os.path.join(TMP, f"{name}.svg.png")
    r = run("rsvg-convert", paths["svg"], "-o", raster)
    if r.returncode:
        fail(f"{name}.svg: rsvg-convert: {r.stderr.strip()}")
        return
    a, b = pixels(paths["png"]), pixels(raster)
    if a.shape != b.shape:
        fail(f"{name}: the SVG draws {b.shape[0]} pixels, the PNG {a.shape[0]}")
        return
    diff = np.abs(a - b).max(axis=1)
    mean, p99 = float(diff.mean()), float(np.percentile(diff, 99))
    if mean > 3.0 or p99 > 80:
        fail(f"{name}: SVG and PNG differ: mean {mean:.2f}, 99th percentile {p99:.0f} (of 255)")
    info = run("pdfinfo", paths["pdf"]).stdout
    if not re.search(r"^Pages: +1$", info, re.M) or not re.search(rf"^Page size: +{W} x {H} pts$", info, re.M):
        fail(f"{name}.pdf: pdfinfo says {info!r}")
    text = run("pdftotext", paths["pdf"], "-").stdout
    missing = [t for t in labels if t not in text]
    if missing or len(text.strip()) < 20:
        fail(f"{name}.pdf: its text lacks {missing} ({len(text)} characters)")
    fonts = run("pdffonts", paths["pdf"]).stdout.splitlines()[2:]
    if not fonts or any(" yes " not in f for f in fonts):
        fail(f"{name}.pdf: a font is not embedded: {fonts}")
    if any("我" in t for t in labels) and not any("WenQuanYi" in f for f in fonts):
        fail(f"{name}.pdf: no CJK face embedded for its Chinese labels: {fonts}")
    if failed == before:
        print(f"ok   {name}: SVG ~ PNG (mean |Δ| {mean:.2f}, 99th percentile {p99:.0f}); PDF text has "
              f"{len(labels)} labels, {len(fonts)} embedded fonts")


for view in VIEWS:
    check_view(*view)

def read_trace(path):
    """The tensors of an attnlab trace (safetensors, float32) as numpy arrays."""
    raw = open(path, "rb").read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    return {k: np.frombuffer(raw[8 + n + e["data_offsets"][0]:8 + n + e["data_offsets"][1]], "<f4").reshape(e["shape"])
            for k, e in header.items()}


def check_csv():
    """The CSV of the matrix shown holds exactly the trace's numbers (%.9g
    round-trips float32), under its labels; a label with a comma or a quote
    is quoted."""
    config = ["--tokens", 'we , "love" AI | I love AI', "--no-softmax-guard"]
    trace = os.path.join(TMP, "t.safetensors")
    if run(ARGS.attnlab, "trace", *config, "-o", trace).returncode:
        return fail("attnlab trace for the CSV check")
    t = read_trace(trace)
    for stage, batch, head in (("weights", 0, 2), ("masked_scores", 1, 0), ("w_q", 0, 0)):
        path = os.path.join(TMP, f"{stage}.csv")
        r = run(ARGS.attnlab, "render", *config, "--stage", stage, "--batch-index", str(batch), "--head", str(head),
                "-o", path)
        if r.returncode:
            return fail(f"render -o {stage}.csv: {r.stderr.strip()}")
        rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
        want = t[stage]
        want = want[batch, head] if want.ndim == 4 else want[batch] if stage != "w_q" else want
        got = np.array([[float(x) for x in row[1:]] for row in rows[1:]], np.float32)
        if got.shape != want.shape or not np.array_equal(got, want.astype(np.float32), equal_nan=True):
            return fail(f"{stage}.csv: its numbers are not the trace's ({got.shape} against {want.shape})")
        if stage == "weights" and (rows[0][1:3] != ["we", ","] or rows[0][3] != '"love"'):
            return fail(f"{stage}.csv: column labels {rows[0]}")
    print(f"ok   CSV: weights, masked scores (−inf kept) and w_q equal the trace's numbers; labels quoted")


check_csv()

# a vector file that cannot be written: one line, exit 1, nothing left behind
bad = os.path.join(TMP, "no-such-dir", "x.pdf")
r = run(ARGS.attnlab, "render", *TOKENS, "-o", bad)
if r.returncode != 1 or len(r.stderr.strip().splitlines()) != 1 or "x.pdf" not in r.stderr:
    fail(f"render to a missing folder: exit {r.returncode}, {r.stderr!r}")
if os.listdir(TMP) and any(f.startswith("x.pdf") for f in os.listdir(TMP)):
    fail("a temporary file was left behind")

shutil.rmtree(TMP)
print(f"{len(VIEWS)} views exported, {failed} failed")
sys.exit(1 if failed else 0)
