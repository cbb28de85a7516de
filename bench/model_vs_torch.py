#!/usr/bin/python3
"""Time a shipped model's whole forward pass in attnlab against PyTorch.

attnlab: `attnlab bench --model NAME --text TEXT --repeat N`, the traced
forward pass the window runs on every change of a setting (embeddings, every
layer's norms, attention stages and MLP, the final norm, logits and
probabilities, each kept as its own tensor).

PyTorch: the same model (scripts/train/llama.py, the training code, loaded
from the same folder) on the same token ids, float32, torch.no_grad(), the
plain forward to the logits plus a softmax: nothing is kept, so it does less
work than attnlab's trace.  Both warm up once; medians of --repeat runs.

Usage (from the repository root):
    /usr/bin/python3 bench/model_vs_torch.py [--model tang] [--tokens 64]
        [--repeat 21] [--threads 2] [--attnlab build/attnlab]

The text is the model's example.txt, cut or repeated to --tokens tokens
(including <s>).  Prints torch, attnlab and the ratio attnlab/torch, with each
side's min and max.  Exit status 1 if attnlab fails, 2 on bad arguments.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "train"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="tang")
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--repeat", type=int, default=21)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--attnlab", default=os.path.join(ROOT, "build", "attnlab"))
    a = p.parse_args()
    if a.tokens < 2 or a.repeat < 1:
        p.error("--tokens must be at least 2 and --repeat at least 1")
    import torch
    from llama import load
    folder = os.path.join(ROOT, "assets", "models", a.model)
    model, hf = load(folder)
    torch.set_num_threads(a.threads)

    # the text, in characters (tang) or words (brown), long enough for --tokens
    example = open(os.path.join(folder, "example.txt"), encoding="utf-8").read().split("\n")[0].strip()
    words = example.split() if " " in example else list(example)
    text = words * (a.tokens // len(words) + 2)
    sep = " " if " " in example else ""
    # attnlab tokenizes; its bench says how many tokens it ran
    n_text = a.tokens - 1
    while True:
        t = sep.join(text[:n_text])
        out = subprocess.run([a.attnlab, "bench", "--model", a.model, "--text", t, "--repeat", str(a.repeat)],
                             capture_output=True, text=True)
        if out.returncode:
            print(out.stderr.strip(), file=sys.stderr)
            return 1
        seq = int(re.search(r"seq (\d+)", out.stdout).group(1))
        if seq <= a.tokens or n_text <= 1:
            break
        n_text -= seq - a.tokens
    med = float(re.search(r"bench: ([0-9.]+) ms", out.stdout).group(1))
    lo, hi = map(float, re.search(r"min ([0-9.]+) ms, max ([0-9.]+) ms", out.stdout).groups())

    ids = torch.randint(3, hf["vocab_size"], (1, seq))   # the values do not change the work
    times = []
    with torch.no_grad():
        torch.softmax(model(ids), -1)
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            torch.softmax(model(ids), -1)
            times.append((time.perf_counter() - t0) * 1e3)
    tmed = statistics.median(times)
    print(f"model {a.model}: {seq} tokens, {hf['num_hidden_layers']} layers, torch {torch.__version__} "
          f"({a.threads} threads)")
    print(f"torch:   {tmed:.2f} ms median (min {min(times):.2f}, max {max(times):.2f}), logits and softmax only")
    print(f"attnlab: {med:.2f} ms median (min {lo:.2f}, max {hi:.2f}), every stage traced")
    print(f"ratio attnlab/torch: {med / tmed:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
