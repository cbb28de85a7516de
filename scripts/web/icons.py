#!/usr/bin/env python3
"""icons.py: the web page's icons, drawn in the app's own look.

A causal attention pattern as the app draws it: a 6 x 6 grid of cells on the
window's background (#1E1E24), the masked cells above the diagonal left dark,
each row's weights in viridis (the app's map, src/app/colormap.c), the
diagonal brightest, framed in the accent colour (#4FC3F7). Written as
icon-192.png, icon-512.png (the manifest's) and favicon.ico (a 32 px PNG
inside an ICO), with the standard library only.

Usage: python3 scripts/web/icons.py OUTDIR
"""
import os
import struct
import sys
import zlib

BG = (0x1E, 0x1E, 0x24)
MASKED = (0x2A, 0x2A, 0x33)
ACCENT = (0x4F, 0xC3, 0xF7)
# viridis at 0, 1/4, 1/2, 3/4, 1 (colormap.c's table at 0, 64, 128, 192, 255)
VIRIDIS = [(0x44, 0x01, 0x54), (0x3B, 0x52, 0x8B), (0x21, 0x91, 0x8C), (0x5E, 0xC9, 0x62), (0xFD, 0xE7, 0x25)]
N = 6


def viridis(t):
    t = min(1.0, max(0.0, t)) * (len(VIRIDIS) - 1)
    i = min(int(t), len(VIRIDIS) - 2)
    f = t - i
    return tuple(round(a + (b - a) * f) for a, b in zip(VIRIDIS[i], VIRIDIS[i + 1]))


def weight(i, j):
    """A causal row's softmax: most on the diagonal, some on the key before."""
    if j > i:
        return None
    raw = [4.0 if k == i else 2.0 if k == i - 1 else 1.0 for k in range(i + 1)]
    return raw[j] / max(raw)


def draw(size):
    px = [[BG] * size for _ in range(size)]
    margin = round(size * 0.09)
    border = max(1, round(size * 0.025))
    inner = size - 2 * margin
    gap = max(1, round(size * 0.012))
    cell = (inner - 2 * border - (N + 1) * gap) / N
    for y in range(margin, size - margin):
        for x in range(margin, size - margin):
            if x < margin + border or x >= size - margin - border or y < margin + border or y >= size - margin - border:
                px[y][x] = ACCENT
    x0 = margin + border + gap
    for i in range(N):
        for j in range(N):
            w = weight(i, j)
            colour = MASKED if w is None else viridis(w)
            top = round(x0 + i * (cell + gap))
            left = round(x0 + j * (cell + gap))
            for y in range(top, round(top + cell)):
                for x in range(left, round(left + cell)):
                    px[y][x] = colour
    return px


def png(px):
    h, w = len(px), len(px[0])
    raw = b"".join(b"\0" + bytes(c for p in row for c in p) for row in px)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def ico(data, size):
    """An ICO holding one PNG image (Windows Vista's format, read by every browser)."""
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", size % 256, size % 256, 0, 0, 1, 32, len(data), 6 + 16)
    return header + entry + data


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for size in (192, 512):
        with open(os.path.join(out, "icon-%d.png" % size), "wb") as f:
            f.write(png(draw(size)))
    with open(os.path.join(out, "favicon.ico"), "wb") as f:
        f.write(ico(png(draw(32)), 32))


if __name__ == "__main__":
    main()
