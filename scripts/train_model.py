#!/usr/bin/env python3
"""Trains one attnlab model and writes its Hugging Face LlamaForCausalLM folder:
config.json, model.safetensors (F16), tokenizer.json, eval.json, README.md.

Variants differ in one thing only: gqa (4 query heads share 2 K/V heads),
mha (4 K/V heads), mqa (1 K/V head), nocausal (gqa trained without the
causal mask: it learns to read the next token, so its training loss
collapses while it is useless as a language model).
Usage: train_model.py zh|en|DATA OUT --variant gqa [--steps N] [--threads 2]
With zh or en it fetches the corpora with `npm pack` (scripts/train/corpora.sh)
and prepares them (scripts/train/prep.py) into $ATTNLAB_TRAIN_DIR/LANG (default
~/.cache/attnlab/train/LANG) unless that is done; DATA is a folder prep.py wrote.
scripts/train/make_models.sh runs this for every shipped model."""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

TRAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train")
sys.path.insert(0, TRAIN)
from llama import Config, Llama, write_safetensors

KV = {"gqa": 2, "mha": 4, "mqa": 1, "nocausal": 2}


def batch_loss(model, rows):
    ids = torch.from_numpy(rows[:, :-1].astype(np.int64))
    tgt = torch.from_numpy(rows[:, 1:].astype(np.int64))
    logits = model(ids.clamp(min=0))
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-1,
                           reduction="sum"), int((tgt >= 0).sum())


@torch.no_grad()
def evaluate(model, rows, bs=256):
    total, n = 0.0, 0
    for i in range(0, len(rows), bs):
        l, k = batch_loss(model, rows[i:i + bs])
        total, n = total + float(l), n + k
    return total / n


def prepared(data):
    """The folder of prepared data: DATA itself, or for zh/en the cached corpora, fetched and prepared once."""
    if data not in ("zh", "en"):
        return data
    work = os.environ.get("ATTNLAB_TRAIN_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "attnlab", "train")
    out = os.path.join(work, data)
    if not os.path.exists(os.path.join(out, "train.npy")):
        corpora = subprocess.run(["sh", os.path.join(TRAIN, "corpora.sh"), os.path.join(work, "corpora")],
                                 check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        subprocess.run([sys.executable, os.path.join(TRAIN, "prep.py"), data, corpora, out], check=True)
    return out


def write_tokenizer_config(out):
    """What AutoTokenizer.from_pretrained needs beside tokenizer.json (attnlab reads only tokenizer.json)."""
    json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
               "unk_token": "<unk>", "add_bos_token": True, "model_max_length": 128},
              open(os.path.join(out, "tokenizer_config.json"), "w"), indent=2)


def command(args):
    """The command as run from the source tree, with the output folder relative to it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.relpath(os.path.abspath(args[1]), root)
    return " ".join(["scripts/train_model.py", args[0], out] + args[2:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data", help="zh or en (fetched and prepared), or a folder prep.py wrote")
    ap.add_argument("out")
    ap.add_argument("--variant", choices=sorted(KV), default="gqa")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=48)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--ffn", type=int, default=352)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    a.data = prepared(a.data)
    train = np.load(os.path.join(a.data, "train.npy"))
    held = np.load(os.path.join(a.data, "heldout.npy"))
    tok = json.load(open(os.path.join(a.data, "tokenizer.json"), encoding="utf-8"))
    stats = json.load(open(os.path.join(a.data, "stats.json"), encoding="utf-8"))
    vocab = len(tok["model"]["vocab"])
    cfg = Config(vocab, d=a.d, layers=a.layers, heads=4, kv_heads=KV[a.variant], ffn=a.ffn, ctx=128,
                 causal=a.variant != "nocausal")
    model = Llama(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    rng = np.random.default_rng(a.seed)
    warm = 100
    t0 = time.time()
    for step in range(1, a.steps + 1):
        lr = a.lr * min(step / warm, 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / a.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        loss, n = batch_loss(model, train[rng.integers(0, len(train), a.batch)])
        opt.zero_grad(set_to_none=True)
        (loss / n).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == 1:
            print(f"step {step} loss {float(loss) / n:.4f} lr {lr:.2e} {time.time() - t0:.0f}s", flush=True)
    minutes = (time.time() - t0) / 60
    # the shipped weights are F16: measure the model as shipped
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    model.eval()
    held_loss = evaluate(model, held)
    train_loss = evaluate(model, train[:len(held)])
    os.makedirs(a.out, exist_ok=True)
    write_safetensors(os.path.join(a.out, "model.safetensors"), model.hf_tensors())
    json.dump(cfg.hf("float16"), open(os.path.join(a.out, "config.json"), "w"), indent=2)
    shutil.copy(os.path.join(a.data, "tokenizer.json"), os.path.join(a.out, "tokenizer.json"))
    write_tokenizer_config(a.out)
    ev = {"variant": a.variant, "lang": stats["lang"], "heldout_loss": round(held_loss, 4),
          "train_loss": round(train_loss, 4), "steps": a.steps, "batch": a.batch, "seed": a.seed,
          "train_minutes": round(minutes, 1), "heldout_rows": len(held),
          "kv_bytes_per_token": 2 * cfg.layers * cfg.kv_heads * cfg.head_dim * 4,
          "params": sum(p.numel() for p in model.hf_tensors().values()),
          "threads": a.threads, "command": command(sys.argv[1:])}
    json.dump(ev, open(os.path.join(a.out, "eval.json"), "w"), indent=2)
    print(json.dumps(ev), flush=True)


if __name__ == "__main__":
    main()
