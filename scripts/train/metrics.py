"""What a model's heads do, measured the same way during training
(train_model.py --checkpoints, each snapshot into checkpoints/metrics.json)
and from the saved folders (card.py: the card's head table, and --check
recomputing metrics.json).

Attention weights W: (layers, heads, s, s), row i the query, column j the key.
  offset o      mean over queries i of W[i, i + o] (the previous token is o = -1)
  first         mean over queries i >= 1 of W[i, 0] (the <s> every row opens with)
  induction     on rows <s> x x, x of L distinct tokens drawn uniformly from
                the vocabulary without its specials (Olsson et al. 2022): the query
                at i = L + 1 + k in the second copy repeats x[k], first seen at
                1 + k; an induction head looks at the token that came AFTER it,
                at 2 + k = i - L + 1.  score = mean_k W[L + 1 + k, k + 2]
  in-context loss drop  the mean loss predicting the second copy minus the
                mean loss predicting the first: a model that copies from
                context predicts a repeat far better than random tokens."""
import json
import os

import numpy as np
import torch
import torch.nn.functional as F

N_SPECIALS = 3         # <unk>, <s>, </s> (prep.py's SPECIALS) open every vocabulary
BOS = 1
# <s> + 30 + 30 = 61 tokens: within training's 64. The tokens are drawn from the `pool` most frequent
# (prep.py numbers the vocabulary by frequency after the specials): in brown's 4,096 words the 500th is
# still seen about 200 times in training, where the rarest are seen a handful of times and their
# embeddings barely move from their random start; a copy of those measures the embeddings, not a head.
INDUCTION = {"seed": 0, "rows": 32, "length": 30, "pool": 500}
OFFSETS = range(-8, 2)   # the offsets measured one by one; "beyond" is every other key but the first
# Verse, whose lines are `back` tokens long with their punctuation mark (5 + 1 or 7 + 1): the key at the
# query's own place in the previous line, and at the place of the token it predicts (one after it) one and
# two lines back. Each is measured on the queries that have such a key.
LINE_SLOTS = {"prev_line": lambda back: -back, "next_prev_line": lambda back: 1 - back,
              "next_two_lines_back": lambda back: 1 - 2 * back}
SNAPSHOT_SLOTS = ["-1", "first"] + [str(-k) for k in range(2, 9)]   # what metrics.json keeps per head


def snapshot_steps(total):
    """0, then from 25 up by a factor √2 (two significant digits: 25, 35, 50, 71,
    100, 140, 200, ...) below `total`, then `total` itself: dense enough that a
    sudden change, such as an induction head's, falls between close snapshots."""
    steps, i = [0], 0
    while True:
        s = 25 * 2 ** (i / 2)
        s = int(round(s, 2 - len(str(int(s)))))
        if s >= total:
            break
        steps.append(s)
        i += 1
    return steps + [total] if total > 0 else steps


def attention_weights(m, ids, batch=False):
    """Each layer's attention weights on one row of ids, (layers, heads, s, s) in
    float64, taken from the model's own attention as it runs; with batch, on
    every row of ids (b, s): (layers, b, heads, s, s)."""
    out = []
    pick = (lambda w: w) if batch else (lambda w: w[0])
    hooks = [layer.self_attn.register_forward_hook(lambda attn, args, _: out.append(pick(attn.weights(*args)[0])))
             for layer in m.model.layers]
    try:
        with torch.no_grad():
            m(ids)
    finally:
        for h in hooks:
            h.remove()
    return np.stack([w.numpy() for w in out]).astype(np.float64)


def row_sums(W, back=None):
    """W: one row's weights (layers, heads, s, s). For each slot, the summed
    weight over the queries it applies to (every query but the first, which
    sees only itself) and how many queries that was."""
    s = W.shape[-1]
    out = {}
    for off in OFFSETS:                    # the diagonal W[..., i, i + off]
        d = np.diagonal(W, off, 2, 3)[..., 1 if off >= 0 else 0:]
        out[str(off)] = (d.sum(-1), d.shape[-1])
    out["first"] = (W[..., 1:, 0].sum(-1), s - 1)
    for k, off in (LINE_SLOTS if back else {}).items():   # verse: keys in earlier lines, not the first token
        d = np.diagonal(W, off(back), 2, 3)[..., 1:]
        out[k] = (d.sum(-1), d.shape[-1])
    i, j = np.indices((s, s))
    far = (i >= 1) & (j > 0) & ((j < i + OFFSETS[0]) | (j > i + OFFSETS[-1]))
    out["beyond"] = ((W * far).sum((2, 3)), s - 1)
    return out


def head_means(m, rows, slots, backs=None):
    """slot -> (layers, heads) mean weight over every query of every row that has the slot."""
    sums = {k: np.zeros((m.c.layers, m.c.heads)) for k in slots}
    counts = dict.fromkeys(slots, 0)
    for r, row in enumerate(rows):
        for k, (v, n) in row_sums(attention_weights(m, torch.tensor([row])), backs[r] if backs else None).items():
            if k in sums:
                sums[k] += v
                counts[k] += n
    return {k: sums[k] / max(counts[k], 1) for k in slots}


def induction_rows(vocab, seed=INDUCTION["seed"], rows=INDUCTION["rows"], length=INDUCTION["length"],
                   pool=INDUCTION["pool"]):
    """rows × (1 + 2 length) ids: <s>, then `length` random tokens twice, drawn
    from the `pool` most frequent non-special ones; no token twice in one copy
    (when the pool allows), so each token of the second copy has exactly one
    earlier occurrence."""
    rng = np.random.default_rng(seed)
    n = min(vocab - N_SPECIALS, pool)
    x = np.stack([N_SPECIALS + rng.choice(n, length, replace=n < length) for _ in range(rows)])
    return np.concatenate([np.full((rows, 1), BOS), x, x], 1)


def induction_score(W, length):
    """W: (..., s, s) on a row <s> x x with len(x) = length: the mean weight from
    each query of the second copy onto the token after the first occurrence."""
    k = np.arange(length)
    return W[..., length + 1 + k, k + 2].mean(-1)


def copy_losses(m, rows):
    """The mean loss predicting the first copy (targets 1..L) and the second (L+1..2L)."""
    L = (rows.shape[1] - 1) // 2
    with torch.no_grad():
        ids = torch.from_numpy(rows.astype(np.int64))
        logits = m(ids[:, :-1])
        nll = F.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")   # (rows, 2L)
    return float(nll[:, :L].mean()), float(nll[:, L:].mean())


def sample_loss(m, rows):
    """Mean loss per predicted token over rows of ids (lists, any lengths)."""
    total, n = 0.0, 0
    with torch.no_grad():
        for row in rows:
            ids = torch.tensor([row])
            logits = m(ids[:, :-1])
            total += float(F.cross_entropy(logits[0], ids[0, 1:], reduction="sum"))
            n += len(row) - 1
    return total / n


def snapshot(m, step, train_rows, held_rows):
    """One snapshot's entry in metrics.json, every number to 4 places."""
    r4 = lambda v: round(float(v), 4)
    ind = induction_rows(m.c.vocab)
    W = attention_weights(m, torch.from_numpy(ind.astype(np.int64)), batch=True)   # (layers, rows, heads, s, s)
    score = induction_score(W, INDUCTION["length"]).mean(1)       # (layers, heads)
    first, second = copy_losses(m, ind)
    means = head_means(m, held_rows, SNAPSHOT_SLOTS)
    heads = [{"layer": l, "head": h, "induction": r4(score[l, h]),
              **{k: r4(means[k][l, h]) for k in SNAPSHOT_SLOTS}}
             for l in range(m.c.layers) for h in range(m.c.heads)]
    return {"step": step, "train_loss": r4(sample_loss(m, train_rows)), "heldout_loss": r4(sample_loss(m, held_rows)),
            "copy_loss_first": r4(first), "copy_loss_second": r4(second), "icl_drop": r4(second - first),
            "heads": heads}


def unpadded(rows):
    """Rows of a prepared .npy (padded with -1) as lists of ids."""
    return [[int(x) for x in r if x >= 0] for r in rows]


def first_crossing(snaps, key, threshold):
    """(step, layer, head, value) of the first snapshot where some head's `key`
    reaches `threshold` (the highest head there), or None."""
    for s in snaps:
        best = max(s["heads"], key=lambda h: h[key])
        if best[key] >= threshold:
            return s["step"], best["layer"], best["head"], best[key]
    return None


def read_samples(ck):
    """checkpoints/samples.json: the fixed training and held-out rows every snapshot is measured on."""
    with open(os.path.join(ck, "samples.json"), encoding="utf-8") as f:
        s = json.load(f)
    if not isinstance(s, dict) or not all(isinstance(s.get(k), list) and s[k] for k in ("train", "heldout")):
        raise ValueError(f"{ck}/samples.json: needs non-empty lists train and heldout")
    return s["train"], s["heldout"]
