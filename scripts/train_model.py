#!/usr/bin/env python3
"""Trains one attnlab model and writes its Hugging Face LlamaForCausalLM folder:
config.json, model.safetensors (F16), tokenizer.json, eval.json, README.md.

Variants differ in one thing only: gqa (4 query heads share 2 K/V heads),
mha (4 K/V heads), mqa (1 K/V head), nocausal (gqa trained without the
causal mask: it learns to read the next token, so its training loss
collapses while it is useless as a language model), mla (multi-head latent
attention: a dense DeepseekV3ForCausalLM folder instead, scripts/train/deepseek.py;
--kv-rank, --qk-nope, --qk-rope, --v-dim set its attention, by default 48, 32,
16 and 32, and its MLP is widened by default to 363 so that it has about the
parameters of tang-mha).
Usage: train_model.py zh|en|DATA OUT --variant gqa [--steps N] [--threads 2]
                      [--repeat P] [--checkpoints] [--seed S]
--repeat P gives a share P of the training rows a repeated span (repeat_spans),
text to learn copying from: induction heads. --checkpoints saves the model at
steps 0, 25, 50, 100, 200, ... and the end as complete folders
OUT/checkpoints/step<N>/ (F16, as shipped) and measures each into
OUT/checkpoints/metrics.json (scripts/train/metrics.py): losses on fixed
training and held-out samples, every head's weight on the previous token, on
<s>, at offsets 2..8, its induction score, and the in-context loss drop.
Neither is on by default, so the shipped models' commands still reproduce them.
With zh or en it fetches the corpora with `npm pack` (scripts/train/corpora.sh)
and prepares them (scripts/train/prep.py) into $ATTNLAB_TRAIN_DIR/LANG (default
~/.cache/attnlab/train/LANG) unless that is done; DATA is a folder prep.py wrote.
scripts/train/make_models.sh runs this for every shipped model."""
import argparse
import copy
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
import deepseek
import atomic
import metrics

KV = {"gqa": 2, "mha": 4, "mqa": 1, "nocausal": 2, "mla": None}
MLA_FFN = 363   # tang-mha's MLP (352) widened by what the latent attention saves: 1,197,888 against 1,197,184


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
    atomic.write_json(os.path.join(out, "tokenizer_config.json"),
                      {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
                       "unk_token": "<unk>", "add_bos_token": True, "model_max_length": 128}, indent=2)


def write_folder(model, cfg, out, tokenizer, link=False):
    """A Hugging Face folder: config.json, model.safetensors (F16), tokenizer.json
    (a copy of `tokenizer`, or with link a hard link where the file system
    allows: a snapshot's costs no space), tokenizer_config.json."""
    os.makedirs(out, exist_ok=True)
    write_safetensors(os.path.join(out, "model.safetensors"), model.hf_tensors())
    atomic.write_json(os.path.join(out, "config.json"), cfg.hf("float16"), indent=2)
    dst = os.path.join(out, "tokenizer.json")
    if link and os.path.exists(dst):
        os.remove(dst)
    try:
        if not link:
            raise OSError
        os.link(tokenizer, dst)
    except OSError:
        shutil.copy(tokenizer, dst)
    write_tokenizer_config(out)


def as_shipped(model):
    """A copy of the model with its weights rounded to F16, as saved, in eval mode."""
    m = copy.deepcopy(model)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(p.half().float())
    return m.eval()


class Snapshots:
    """--checkpoints: OUT/checkpoints/step<N>/ at metrics.snapshot_steps, each
    measured as saved into OUT/checkpoints/metrics.json, on the fixed rows of
    OUT/checkpoints/samples.json (the first 64 training rows, as trained on,
    and the first 64 held-out rows)."""

    def __init__(self, out, steps, train, held, tokenizer):
        self.dir, self.tokenizer = os.path.join(out, "checkpoints"), os.path.join(out, "tokenizer.json")
        os.makedirs(self.dir, exist_ok=True)
        shutil.copy(tokenizer, self.tokenizer)   # the snapshots' tokenizer.json link to the model's
        self.steps, self.snaps = set(metrics.snapshot_steps(steps)), []
        self.train, self.held = metrics.unpadded(train[:64]), metrics.unpadded(held[:64])
        atomic.write_json(os.path.join(self.dir, "samples.json"), {"train": self.train, "heldout": self.held},
                          separators=(",", ":"))
        self.seconds = 0.0

    def __call__(self, model, cfg, step):
        if step not in self.steps:
            return
        t0 = time.time()
        m = as_shipped(model)
        write_folder(m, cfg, os.path.join(self.dir, f"step{step}"), self.tokenizer, link=True)
        self.snaps.append(metrics.snapshot(m, step, self.train, self.held))
        atomic.write_json(os.path.join(self.dir, "metrics.json"),
                          {"induction": metrics.INDUCTION, "snapshots": self.snaps}, indent=1)
        self.seconds += time.time() - t0
        s = self.snaps[-1]
        print(f"snapshot {step}: held-out {s['heldout_loss']}, induction "
              f"{max(h['induction'] for h in s['heads']):.3f}, in-context drop {s['icl_drop']}", flush=True)


def repeat_spans(rows, rng, p):
    """With probability p a row <s> x </s> becomes <s> x x </s>, cut to the row's
    length: the whole sentence said twice, so that half of such a row can be
    predicted by copying. (Repeating only a sentence's last part, and only in
    half the rows, grew no induction head in 4,000 steps: the copies were too
    short and too rare to pay for one.)"""
    rows = rows.copy()
    width = rows.shape[1]
    for r in np.nonzero(rng.random(len(rows)) < p)[0]:
        x = rows[r][rows[r] >= 0][1:-1]
        if len(x) < 2:
            continue
        row = np.concatenate([[metrics.BOS], x, x, rows[r][rows[r] >= 0][-1:]])[:width]
        rows[r, :len(row)] = row
    return rows


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
    ap.add_argument("--ffn", type=int, default=None, help=f"MLP width (352, or {MLA_FFN} for mla)")
    ap.add_argument("--kv-rank", type=int, default=48, help="mla: kv_lora_rank, the cached latent's size")
    ap.add_argument("--qk-nope", type=int, default=32, help="mla: qk_nope_head_dim")
    ap.add_argument("--qk-rope", type=int, default=16, help="mla: qk_rope_head_dim, the shared RoPE key's size")
    ap.add_argument("--v-dim", type=int, default=32, help="mla: v_head_dim")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=float, default=0.0,
                    help="share of training rows given a repeated span (repeat_spans), 0 to 1")
    ap.add_argument("--checkpoints", action="store_true",
                    help="save and measure snapshots in OUT/checkpoints (the Snapshots class)")
    a = ap.parse_args()
    if not 0 <= a.repeat <= 1 or a.steps < 1:
        ap.error("--repeat must be 0 to 1 and --steps at least 1")
    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    a.data = prepared(a.data)
    train = np.load(os.path.join(a.data, "train.npy"))
    held = np.load(os.path.join(a.data, "heldout.npy"))
    tok = json.load(open(os.path.join(a.data, "tokenizer.json"), encoding="utf-8"))
    stats = json.load(open(os.path.join(a.data, "stats.json"), encoding="utf-8"))
    vocab = len(tok["model"]["vocab"])
    if a.variant == "mla":
        cfg = deepseek.Config(vocab, d=a.d, layers=a.layers, heads=4, kv_rank=a.kv_rank, nope=a.qk_nope,
                              rope_dim=a.qk_rope, v_dim=a.v_dim, ffn=a.ffn or MLA_FFN, ctx=128)
        model = deepseek.DeepseekV3(cfg)
    else:
        cfg = Config(vocab, d=a.d, layers=a.layers, heads=4, kv_heads=KV[a.variant], ffn=a.ffn or 352, ctx=128,
                     causal=a.variant != "nocausal")
        model = Llama(cfg)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    rng = np.random.default_rng(a.seed)
    warm = 100
    # the training sample as trained on: with --repeat, its rows said twice too (a fixed draw)
    sample = repeat_spans(train[:64], np.random.default_rng(0), a.repeat) if a.repeat else train[:64]
    snap = (Snapshots(a.out, a.steps, sample, held, os.path.join(a.data, "tokenizer.json")) if a.checkpoints
            else lambda *_: None)
    t0 = time.time()
    snap(model, cfg, 0)
    for step in range(1, a.steps + 1):
        lr = a.lr * min(step / warm, 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / a.steps)))
        for g in opt.param_groups:
            g["lr"] = lr
        rows = train[rng.integers(0, len(train), a.batch)]
        loss, n = batch_loss(model, repeat_spans(rows, rng, a.repeat) if a.repeat else rows)
        opt.zero_grad(set_to_none=True)
        (loss / n).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 100 == 0 or step == 1:
            print(f"step {step} loss {float(loss) / n:.4f} lr {lr:.2e} {time.time() - t0:.0f}s", flush=True)
        snap(model, cfg, step)
    snap_minutes = snap.seconds / 60 if a.checkpoints else 0.0
    minutes = (time.time() - t0) / 60 - snap_minutes
    # the shipped weights are F16: measure the model as shipped
    model = as_shipped(model)
    held_loss = evaluate(model, held)
    train_loss = evaluate(model, train[:len(held)])
    write_folder(model, cfg, a.out, os.path.join(a.data, "tokenizer.json"))
    extra = {"repeat": a.repeat} if a.repeat else {}
    if a.variant == "mla":
        # the cache keeps c_kv and the shared k_pe: (kv_lora_rank + qk_rope_head_dim) values a layer
        kv_bytes = cfg.kv_values_per_token * 4
        extra["mla"] = {"kv_lora_rank": cfg.kv_rank, "qk_nope_head_dim": cfg.nope, "qk_rope_head_dim": cfg.rope_dim,
                        "v_head_dim": cfg.v_dim}
    else:
        kv_bytes = 2 * cfg.layers * cfg.kv_heads * cfg.head_dim * 4
    if a.checkpoints:
        extra["snapshot_minutes"] = round(snap_minutes, 1)
    ev = {"variant": a.variant, "lang": stats["lang"], "heldout_loss": round(held_loss, 4),
          "train_loss": round(train_loss, 4), "steps": a.steps, "batch": a.batch, "seed": a.seed,
          "train_minutes": round(minutes, 1), "heldout_rows": len(held),
          "train_units": stats["train"],
          "kv_bytes_per_token": kv_bytes,
          "params": sum(p.numel() for p in model.hf_tensors().values()),
          "threads": a.threads, "command": command(sys.argv[1:]), **extra}
    atomic.write_json(os.path.join(a.out, "eval.json"), ev, indent=2)
    print(json.dumps(ev), flush=True)


if __name__ == "__main__":
    main()
