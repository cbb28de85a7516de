#!/usr/bin/env python3
"""A tiny checkpointed model, trained for real by scripts/train_model.py in a
few seconds: random English-like sentences over 40 words, prepared as prep.py
writes them (tokenizer.json, train.npy, heldout.npy, stats.json), then 30
steps of a 2-layer d = 16 model with --checkpoints and --repeat 0.5.

    tiny_training.py OUT [--steps N]    OUT/data and the model folder OUT/model

Needs python3-torch and python3-numpy."""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "train"))
import prep  # noqa: E402

WORDS = ("the a cat dog sun moon hill mat sat ran saw was on over under to and it is good far day night "
         "old new red tree river stone bird sang fell rose . , she he they we").split()


def data(out, n_train=400, n_held=80):
    rng = np.random.default_rng(7)
    vocab = prep.SPECIALS + WORDS
    sents = [list(rng.integers(len(prep.SPECIALS), len(vocab), rng.integers(4, 20))) for _ in range(n_train + n_held)]
    sents = [[int(t) for t in s] for s in sents]
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "train.npy"), prep.rows(sents[:n_train], 32))
    np.save(os.path.join(out, "heldout.npy"), prep.rows(sents[n_train:], 32))
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(prep.tokenizer_json("en", vocab), f, indent=1)
    json.dump({"lang": "en", "units": len(sents), "train": n_train, "heldout": n_held, "vocab": len(vocab)},
              open(os.path.join(out, "stats.json"), "w"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    data(os.path.join(a.out, "data"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "train_model.py"), os.path.join(a.out, "data"),
                        os.path.join(a.out, "model"), "--steps", str(a.steps), "--d", "16", "--layers", "2",
                        "--ffn", "24", "--batch", "8", "--threads", "1", "--repeat", "0.5", "--checkpoints"],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"tiny_training: train_model.py failed: {r.stderr.strip().splitlines()[-1:]}")


if __name__ == "__main__":
    main()
