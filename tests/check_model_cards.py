#!/usr/bin/env python3
"""Every shipped model's card against its weights: scripts/train/card.py
--check measures each assets/models/*/ folder again (held-out sample loss,
every head's pattern, generations) and compares with its card.json and
README.md. First a self-test on a tiny random model: its card passes, then
one changed weight makes the check fail. Needs python3-torch, else exits 77."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:
    print("torch is not installed (apt-get install python3-torch): skipped")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CARD = os.path.join(ROOT, "scripts", "train", "card.py")
sys.path.insert(0, os.path.join(ROOT, "scripts", "train"))
from llama import Config, Llama, write_safetensors  # noqa: E402


def card(*args):
    r = subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable, CARD, *args],
                       capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def tiny(d):
    """A random 2-layer model in the shipped format, with its tokenizer, eval.json and sample."""
    torch.manual_seed(3)
    chars = ["<unk>", "<s>", "</s>", "，", "。"] + list("床前明月光疑是地上霜举头望低思故乡春眠不觉晓")
    c = Config(len(chars), d=16, layers=2, heads=4, kv_heads=2, ffn=24, ctx=32)
    m = Llama(c)
    write_safetensors(os.path.join(d, "model.safetensors"), m.hf_tensors())
    json.dump(c.hf("float16"), open(os.path.join(d, "config.json"), "w"))
    vocab = {ch: i for i, ch in enumerate(chars)}
    json.dump({"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
               "post_processor": None, "decoder": {"type": "Fuse"},
               "model": {"type": "BPE", "vocab": vocab, "merges": [], "unk_token": "<unk>"}},
              open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
    json.dump({"variant": "gqa", "lang": "zh", "heldout_loss": 3.0, "train_loss": 2.9, "steps": 1, "batch": 1,
               "seed": 1, "train_minutes": 0.0, "heldout_rows": 2, "params": 1, "threads": 1,
               "command": "scripts/train_model.py --variant gqa"}, open(os.path.join(d, "eval.json"), "w"))
    poem = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
    row = [1] + [vocab[ch] for ch in poem] + [2]
    json.dump([row, row[:13]], open(os.path.join(d, "heldout_ids.json"), "w"))


failed = []
tmp = tempfile.mkdtemp(prefix="attnlab-cards-")
try:
    d = os.path.join(tmp, "tiny")
    os.makedirs(d)
    tiny(d)
    rc, out = card(d)
    if rc:
        failed.append(f"self-test: card.py could not write a card: {out}")
    rc, out = card("--check", d)
    if rc:
        failed.append(f"self-test: a fresh card does not check: {out}")
    # one weight changed: the check must notice
    w = os.path.join(d, "model.safetensors")
    raw = bytearray(open(w, "rb").read())
    raw[-2:] = np.float16(7.5).tobytes()
    open(w, "wb").write(bytes(raw))
    rc, out = card("--check", d)
    if rc == 0 or "does not match the weights" not in out:
        failed.append(f"self-test: a changed weight went unnoticed ({out})")
    else:
        print(f"ok   self-test: a fresh card checks, a changed weight is caught: {out}")
finally:
    shutil.rmtree(tmp, True)

models = os.path.join(ROOT, "assets", "models")
for name in sorted(os.listdir(models)) if os.path.isdir(models) else []:
    d = os.path.join(models, name)
    if not os.path.exists(os.path.join(d, "config.json")):
        continue
    missing = [f for f in ("README.md", "card.json", "heldout_ids.json", "eval.json") if not os.path.exists(os.path.join(d, f))]
    if missing:
        failed.append(f"{name}: no {', '.join(missing)}")
        continue
    rc, out = card("--check", d)
    (failed.append(out) if rc else print("ok   " + out))

for f in failed:
    print("FAIL " + f)
sys.exit(1 if failed else 0)
