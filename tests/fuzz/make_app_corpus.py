#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_app (tests/fuzz/app_corpus): crafted traces
another program could write (only `weights`, sizes 0, no K/V heads) and the
trace reader's seeds, each followed by a tour of every view and key; and
generated traces (fuzz_app.c's even first byte) of every stage with one size 0
at a time. Run from anywhere: python3 tests/fuzz/make_app_corpus.py"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "app_corpus")

SPECIAL = ["LEFT", "RIGHT", "UP", "DOWN", "HOME", "END", "PAGEUP", "PAGEDOWN", "F1", "F5", "RETURN", "ESCAPE",
           "BACKSPACE", "DELETE", "TAB", "SPACE"]


def key(k, shift=False):
    code = 128 + SPECIAL.index(k) if k in SPECIAL else ord(k)
    return bytes([24 if shift else 0, code, 0])


def mouse(op, x, y):  # x, y: 0..255 of the window's width and height
    return bytes([{"move": 5, "click": 6, "drag": 7}[op], x, y]) + (bytes([x // 2, y // 2]) if op == "drag" else b"")


def wheel(dy):
    return bytes([8, dy + 3, 0])


def resize(w, h):  # fuzz_app: w = 1 + 10 a, h = 1 + 6 c
    return bytes([9, (w - 1) // 10, (h - 1) // 6])


def text(i):
    return bytes([4, i, 0])


# every view, and in each the keys that step and the mouse
TOUR = b"".join([
    key("g"), mouse("click", 128, 128), mouse("move", 100, 140), key("UP"), key("DOWN"), key("b"),
    key("TAB"), key("t"), mouse("click", 90, 120), key("RIGHT"),
    key("a"), mouse("move", 128, 150), mouse("click", 128, 150), key("LEFT"), key("UP"),
    key("y"), key("y"), key(","), key("."),
    key("TAB"), wheel(1), mouse("move", 128, 128), wheel(2), mouse("drag", 128, 128), key("z"),
    key("k"), key("]"), key("["), key("k"),
    resize(51, 31), key("g"), key("a"), resize(1, 1), key("TAB"), resize(1281, 799),
    key("?"), key("ESCAPE"), key("s", shift=True), key("2"), key("ESCAPE"), key("n"), key("u"), key("+"), key("-"),
    key("c"), key("p"), key("h"), key("v", shift=True), key("x"), key("e"), text(2), key("RETURN"),
])


def weights_only(b, h, s, t):
    n = 4 * b * h * s * t
    hdr = json.dumps({"weights": {"dtype": "F32", "shape": [b, h, s, t], "data_offsets": [0, n]}})
    hdr += " " * (-len(hdr) % 8)
    return struct.pack("<Q", len(hdr)) + hdr.encode() + bytes(n)


def raw(trace):
    assert len(trace) < 65536
    return bytes([1]) + struct.pack("<H", len(trace)) + trace + TOUR


# fuzz_app.c's generated trace: sizes b h g s t P d k f V, flags, layers, value pattern, 6 bytes of stages
ALL_STAGES = bytes([255] * 6)


def generated(b, h, g, s, t, P, d, k, f, V, flags=0xFE, layers=0, pattern=0, stages=ALL_STAGES):
    return bytes([0, b, h, g, s, t, P, d, k, f, V, flags, layers, pattern]) + stages + TOUR


def main():
    os.makedirs(OUT, exist_ok=True)
    seeds = {}
    for shape in ((1, 2, 3, 3), (1, 0, 3, 3), (0, 2, 3, 3), (1, 2, 0, 0), (1, 1, 1, 1), (1, 2, 3, 0), (1, 2, 0, 3)):
        seeds["weights-%d-%d-%d-%d" % shape] = raw(weights_only(*shape))
    for name in sorted(os.listdir(os.path.join(HERE, "corpus"))):
        if name.endswith(".safetensors"):
            with open(os.path.join(HERE, "corpus", name), "rb") as fp:
                seeds["reader-" + name[:-len(".safetensors")]] = raw(fp.read())
    # every stage, sizes that agree, a model's (V, f) and two layers; then each size 0 in turn
    base = dict(b=2, h=2, g=1, s=3, t=3, P=0, d=4, k=2, f=3, V=5)
    seeds["gen-all"] = generated(**base)
    seeds["gen-all-layers"] = generated(**base, layers=1)
    seeds["gen-all-nan"] = generated(**base, pattern=9 * 8 + 3)
    seeds["gen-all-1e7"] = generated(**base, pattern=10 * 8 + 2)  # every other cell 10^7: past an int's pixels
    seeds["gen-cross"] = generated(**dict(base, t=4), flags=0xFF)
    for zero in base:
        seeds["gen-zero-" + zero] = generated(**dict(base, **{zero: 0}))
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as fp:
            fp.write(data)


if __name__ == "__main__":
    main()
