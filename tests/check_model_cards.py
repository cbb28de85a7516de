#!/usr/bin/env python3
"""Every shipped model's card against its weights: scripts/train/card.py
--check measures each assets/models/*/ folder again (held-out sample loss,
every head's pattern, generations) and compares with its card.json and
README.md; a folder without its card or weights fails. First the script
itself: its pattern measure on hand-made weights, its labels at the 0.30
threshold, a tiny random model's card that checks until one weight, the
README or a label is changed, and malformed folders that get one line, never
a traceback. Then training's metrics (scripts/train/metrics.py): the
induction score on hand-made weights, --repeat's sentences said twice, and a tiny
model trained with --checkpoints whose metrics.json card.py recomputes from
the snapshot folders and catches a changed snapshot weight. Needs python3-torch, else exits 77 (skipped)."""
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
import card as cardpy  # noqa: E402
import metrics  # noqa: E402
from llama import Config, Llama, read_safetensors, write_safetensors  # noqa: E402
import deepseek  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import train_model  # noqa: E402

SHIPPED = ("config.json", "model.safetensors", "tokenizer.json", "eval.json", "heldout_ids.json", "card.json",
           "README.md")
failed = []


def expect(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failed.append(what)


def card_cli(*args):
    """card.py as a separate process, as a user runs it: exit status and output."""
    r = subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable, CARD, *args],
                       capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip()


def card(*args):
    """card.py in this process (torch is loaded once, not for each of ~30 calls): exit status and output.
    An exception that main() lets through ends this test with its traceback, as it would the command."""
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = cardpy.main(list(args))
    return rc, buf.getvalue().strip()


def measure_on_hand_made_weights():
    """One layer, five heads on a row of 5-character verse (lines 6 keys long with their mark)."""
    s, back = 19, 6
    W = np.zeros((1, 5, s, s))
    for i in range(s):
        W[0, 0, i, max(i - 1, 0)] = 1                       # previous token
        W[0, 1, i, 0] = 1                                   # first token
        W[0, 2, i, i - back if i > back else 0] = 1         # same place in the previous line
        W[0, 3, i, i + 1 - back if i >= back else 0] = 1    # the next character's place one line back
        W[0, 4, i, :i + 1] = 1 / (i + 1)                    # uniform over what it may see
    sums = cardpy.row_sums(W, back)
    mean = {k: v[0] / n for k, (v, n) in sums.items()}
    expect(np.allclose([mean["-1"][0], mean["first"][1], mean["prev_line"][2], mean["next_prev_line"][3]], 1),
           "measure: each hand-made head gets all of its slot (previous, first, same place, next's place)")
    expect(sums["prev_line"][1] == s - 1 - back and sums["next_prev_line"][1] == s - back,
           "measure: the line slots count only the queries that have such a key")
    far = np.mean([max(i - 9, 0) / (i + 1) for i in range(1, s)])   # keys 1 .. i-9 of each query
    expect(abs(mean["beyond"][4] - far) < 1e-12 and mean["beyond"][0] == 0,
           f"measure: 'beyond' is the weight on keys past -8..+1 other than the first ({far:.4f})")


def labels_at_the_threshold():
    base = {str(o): 0.0 for o in range(-8, 2)}
    base.update(first=0.0, beyond=0.0)
    cases = [({"-1": 0.61}, "previous token (0.61)"),
             ({"-1": 0.294, "-2": 0.2}, "mixed: offset −1 0.29, offset −2 0.20"),
             ({"-1": 0.31, "first": 0.4}, "first token (attention sink) (0.40)"),
             ({"-1": 0.31, "beyond": 0.6}, "previous token (0.31)"), ({"1": 0.99}, "next token (0.99)"),
             ({"next_two_lines_back": 0.5, "-5": 0.3}, "the next character's place two lines back (0.50)"),
             ({"beyond": 0.6, "-3": 0.2, "0": 0.1}, "mixed: beyond −8..+1 0.60, offset −3 0.20, itself 0.10")]
    for change, want in cases:
        got = cardpy.label({**base, **change})
        expect(got.startswith(want), f"label of {change}: {got!r} (wanted {want!r})")


def induction_on_hand_made_weights():
    """metrics.induction_score against heads built from the tokens themselves."""
    L = metrics.INDUCTION["length"]
    rows = metrics.induction_rows(40)
    expect(rows.shape == (metrics.INDUCTION["rows"], 1 + 2 * L) and rows[:, 1:].min() >= metrics.N_SPECIALS
           and (rows[:, 1:L + 1] == rows[:, L + 1:]).all() and (rows[:, 0] == metrics.BOS).all(),
           "induction rows: <s>, then the same random non-special tokens twice")
    s = 1 + 2 * L
    scores = []
    for row in rows:
        W = np.zeros((1, 3, s, s))
        for i in range(s):
            earlier = [j for j in range(i) if row[j] == row[i]]
            W[0, 0, i, earlier[0] + 1 if earlier else 0] = 1    # induction: the token after the first occurrence
            W[0, 1, i, max(i - 1, 0)] = 1                       # previous token
            W[0, 2, i, :i + 1] = 1 / (i + 1)                    # uniform
        scores.append(metrics.induction_score(W, L)[0])
    got = np.mean(scores, 0)
    uniform = np.mean([1 / (L + 2 + k) for k in range(L)])
    expect(abs(got[0] - 1) < 1e-12 and got[1] == 0 and abs(got[2] - uniform) < 1e-12,
           f"induction score: 1 for a head on the token after the earlier occurrence, 0 for the previous token, "
           f"{uniform:.4f} for uniform: {got}")
    expect(metrics.snapshot_steps(3000) == [0, 25, 35, 50, 71, 100, 140, 200, 280, 400, 570, 800, 1100, 1600, 2300,
                                            3000]
           and metrics.snapshot_steps(4000)[-2:] == [3200, 4000] and metrics.snapshot_steps(25) == [0, 25],
           f"snapshot steps grow by √2 from 25 and end at the last step: {metrics.snapshot_steps(4000)}")
    snaps = [{"step": st, "heads": [{"layer": 0, "head": h, "induction": v[h]} for h in range(2)]}
             for st, v in ((0, (0.02, 0.1)), (25, (0.29, 0.1)), (50, (0.1, 0.31)), (100, (0.6, 0.5)))]
    expect(metrics.first_crossing(snaps, "induction", 0.3) == (50, 0, 1, 0.31)
           and metrics.first_crossing(snaps, "induction", 0.7) is None,
           "first crossing: the first snapshot where some head reaches the threshold")


def repeated_spans():
    rows = np.full((200, 33), -1, np.int32)
    for r in range(200):
        rows[r, :12] = [1] + list(range(3, 13)) + [2]
    short = np.full((1, 16), -1, np.int32)
    short[0, :12] = [1] + list(range(3, 13)) + [2]
    out = train_model.repeat_spans(rows, np.random.default_rng(0), 0.5)
    changed = [r for r in out if (r >= 0).sum() > 12]
    twice = [1] + list(range(3, 13)) * 2 + [2]
    ok = all(list(r[r >= 0]) == twice for r in changed)
    cut = train_model.repeat_spans(short, np.random.default_rng(0), 1.0)[0]
    expect(ok and 60 < len(changed) < 140 and (rows[:, 12] == -1).all() and list(cut) == twice[:16],
           f"--repeat: about half the rows say their sentence twice before </s>, cut to the row ({len(changed)} of 200)")


def checkpointed(tmp):
    """A tiny model trained by train_model.py with --checkpoints: its snapshots
    as measured in training equal card.py's from the folders; its card checks
    until a snapshot's weight or metrics.json changes."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "tiny_training.py"), tmp],
                       capture_output=True, text=True)
    d, ck = os.path.join(tmp, "model"), os.path.join(tmp, "model", "checkpoints")
    expect(r.returncode == 0, f"checkpoints: the tiny training runs: {r.stdout}{r.stderr}")
    if r.returncode:
        return
    steps = cardpy.checkpoint_steps(ck)
    expect(steps == [0, 25, 30] and all(sorted(os.listdir(os.path.join(ck, f"step{n}"))) == [
        "config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"] for n in steps),
        f"checkpoints: complete folders at steps 0, 25 and the end: {steps}")
    expect(open(os.path.join(ck, "step30", "model.safetensors"), "rb").read()
           == open(os.path.join(d, "model.safetensors"), "rb").read()
           and os.stat(os.path.join(ck, "step0", "tokenizer.json")).st_nlink > 1,
           "checkpoints: the last is the model's weights; the tokenizers are hard links")
    trained = json.load(open(os.path.join(ck, "metrics.json")))
    again = cardpy.measure_checkpoints(d)
    expect(cardpy.close(again, trained["snapshots"], 1e-4) and trained["snapshots"][0]["heads"][0]["induction"] > 0,
           "checkpoints: metrics.json as measured in training equals card.py's measure of the saved folders")
    rc, out = card(d, os.path.join(tmp, "data"))
    readme = open(os.path.join(d, "README.md"), encoding="utf-8").read()
    expect(rc == 0 and "## Training curve" in readme and "| 25 | " in readme and "A share 0.5 of" in readme,
           f"checkpoints: the card has the training curve: {out}")
    rc, out = card("--check", d)
    expect(rc == 0, f"checkpoints: the card checks: {out}")
    good = open(os.path.join(ck, "metrics.json")).read()
    open(os.path.join(ck, "metrics.json"), "w").write(good.replace('"heldout_loss": 3.', '"heldout_loss": 2.', 1))
    rc, out = card("--check", d)
    expect(rc == 1 and "step 0 differ" in out, f"checkpoints: a changed metrics.json is caught: {out}")
    open(os.path.join(ck, "metrics.json"), "w").write(good)
    edit(os.path.join(ck, "step25", "model.safetensors"), lambda b: b[:-2] + np.float16(7.5).tobytes(), True)
    rc, out = card("--check", d)
    expect(rc == 1 and "step 25 differ" in out and "\n" not in out,
           f"checkpoints: a changed weight in one snapshot is caught: {out}")
    shutil.rmtree(os.path.join(ck, "step25"))
    rc, out = card("--check", d)
    expect(rc == 1 and "metrics.json does not match" in out, f"checkpoints: a missing snapshot is caught: {out}")
    os.remove(os.path.join(ck, "samples.json"))
    rc, out = card("--check", d)
    expect(rc == 1 and "samples.json" in out and "\n" not in out, f"checkpoints: no samples.json is one line: {out}")


def tiny(d, seed=1, variant="gqa"):
    """A random 2-layer model in the shipped format, with its tokenizer, eval.json and sample."""
    torch.manual_seed(2 + seed)
    chars = ["<unk>", "<s>", "</s>", "，", "。"] + list("床前明月光疑是地上霜举头望低思故乡春眠不觉晓")
    c = Config(len(chars), d=16, layers=2, heads=4, kv_heads=2, ffn=24, ctx=32)
    write_safetensors(os.path.join(d, "model.safetensors"), Llama(c).hf_tensors())
    json.dump(c.hf("float16"), open(os.path.join(d, "config.json"), "w"))
    vocab = {ch: i for i, ch in enumerate(chars)}
    json.dump({"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
               "post_processor": None, "decoder": {"type": "Fuse"},
               "model": {"type": "BPE", "vocab": vocab, "merges": [], "unk_token": "<unk>"}},
              open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
    json.dump({"variant": variant, "lang": "zh", "heldout_loss": 3.0 + seed / 10, "train_loss": 2.9, "steps": 1,
               "batch": 1, "seed": seed, "train_minutes": 0.0, "heldout_rows": 2, "params": 1, "threads": 1,
               "command": "scripts/train_model.py --variant gqa"}, open(os.path.join(d, "eval.json"), "w"))
    poem = "床前明月光，疑是地上霜。举头望明月，低头思故乡。"
    row = [1] + [vocab[ch] for ch in poem] + [2]
    json.dump([row, row[:13]], open(os.path.join(d, "heldout_ids.json"), "w"))


def mla_cards(tmp):
    """An MLA model (a dense deepseek_v3 folder): its card writes and checks, compares with the MHA model's
    card beside it, catches a changed latent-norm weight, and refuses a config it cannot run in one line."""
    gqa = os.path.join(tmp, "good")
    d, mha = os.path.join(tmp, "m-mla"), os.path.join(tmp, "m-mha")
    shutil.copytree(gqa, mha)
    mha_card = os.path.join(mha, "card.json")  # named and typed as the MHA model beside it, whatever "good" was
    with open(mha_card, encoding="utf-8") as f:
        named = dict(json.load(f), name="m-mha", variant="mha")
    with open(mha_card, "w", encoding="utf-8") as f:
        json.dump(named, f)
    shutil.copytree(gqa, d)
    for f in ("card.json", "README.md", "model.safetensors"):
        os.remove(os.path.join(d, f))
    torch.manual_seed(5)
    c = deepseek.Config(len(json.load(open(os.path.join(d, "tokenizer.json")))["model"]["vocab"]), d=16, layers=2,
                        heads=2, kv_rank=6, nope=4, rope_dim=4, v_dim=4, ffn=24, ctx=32)
    write_safetensors(os.path.join(d, "model.safetensors"), deepseek.DeepseekV3(c).hf_tensors())
    json.dump(c.hf("float16"), open(os.path.join(d, "config.json"), "w"))
    edit(os.path.join(d, "eval.json"), lambda t: t.replace('"variant": "gqa"', '"variant": "mla"'))
    rc, out = card_cli(d)
    rc2, out2 = card_cli("--check", d)
    expect(rc == 0 and rc2 == 0, f"mla: card.py writes and checks a deepseek_v3 card: {out} / {out2}")
    made = json.load(open(os.path.join(d, "card.json")))
    readme = open(os.path.join(d, "README.md"), encoding="utf-8").read()
    expect(made["kv_bytes_per_token"] == (6 + 4) * 2 * 4 and [x["name"] for x in made["compare"]] == ["m-mha"]
           and "DeepseekV3ForCausalLM" in readme and "| m-mha | MHA |" in readme,
           f"mla: the cache is (kv_lora_rank + qk_rope_head_dim) x layers x 4 bytes ({made['kv_bytes_per_token']}), "
           f"and the MHA card beside it is compared (compared: {[x['name'] for x in made['compare']]}; "
           f"DeepseekV3ForCausalLM in the README: {'DeepseekV3ForCausalLM' in readme}; its m-mha row: "
           f"{'| m-mha | MHA |' in readme})")
    names = set(read_safetensors(os.path.join(d, "model.safetensors")))
    expect("model.layers.0.self_attn.kv_a_layernorm.weight" in names and "lm_head.weight" not in names,
           "mla: HF's tensor names, the LM head tied")
    good = open(os.path.join(d, "model.safetensors"), "rb").read()
    header, data = safetensors_header(good)
    lo = header["model.layers.1.self_attn.kv_a_layernorm.weight"]["data_offsets"][0]
    bad = bytearray(good)
    at = len(good) - len(data) + lo
    bad[at:at + 2] = np.float16(9.0).tobytes()
    open(os.path.join(d, "model.safetensors"), "wb").write(bytes(bad))
    rc, out = card("--check", d)
    expect(rc == 1 and "does not match the weights" in out, f"mla: a changed latent-norm weight is caught: {out}")
    open(os.path.join(d, "model.safetensors"), "wb").write(good)
    edit(os.path.join(d, "config.json"), lambda t: json.dumps({**json.loads(t), "q_lora_rank": 8}))
    rc, out = card("--check", d)
    expect(rc == 1 and "\n" not in out and "q_lora_rank" in out, f"mla: q_lora_rank set is refused in one line: {out}")


def edit(path, fn, binary=False):
    mode = "b" if binary else ""
    data = open(path, "r" + mode, **({} if binary else {"encoding": "utf-8"})).read()
    open(path, "w" + mode, **({} if binary else {"encoding": "utf-8"})).write(fn(data))


def safetensors_header(raw):
    n = int.from_bytes(raw[:8], "little")
    return json.loads(raw[8:8 + n]), raw[8 + n:]


def with_header(raw, fn):
    """The file with its JSON header changed by fn (offsets kept)."""
    header, data = safetensors_header(raw)
    h = json.dumps(fn(header)).encode()
    return len(h).to_bytes(8, "little") + h + data


def wrong_shape(h):
    h["model.norm.weight"]["shape"] = [8, 2]   # same bytes, a shape config.json does not want
    return h


BROKEN = [  # (what, file, change, binary, a word the message must hold)
    ("no weights", "model.safetensors", None, True, "No such file"),
    ("truncated weights", "model.safetensors", lambda b: b[:len(b) // 2], True, "do not hold"),
    ("a header that does not fit", "model.safetensors", lambda b: b[:20], True, "truncated"),
    ("an unknown dtype", "model.safetensors",
     lambda b: with_header(b, lambda h: {**h, "model.norm.weight": {**h["model.norm.weight"], "dtype": "I8"}}),
     True, "I8"),
    ("a tensor of the wrong shape", "model.safetensors", lambda b: with_header(b, wrong_shape), True,
     "config.json wants"),
    ("a missing tensor", "model.safetensors",
     lambda b: with_header(b, lambda h: {k: v for k, v in h.items() if k != "model.norm.weight"}), True,
     "no tensor model.norm.weight"),
    ("config.json without hidden_size", "config.json",
     lambda t: json.dumps({k: v for k, v in json.loads(t).items() if k != "hidden_size"}), False, "hidden_size"),
    ("eval.json that is not JSON", "eval.json", lambda t: t[:-3], False, "not JSON"),
    ("eval.json without lang", "eval.json",
     lambda t: json.dumps({k: v for k, v in json.loads(t).items() if k != "lang"}), False, "no lang"),
    ("a tokenizer.json without a vocabulary", "tokenizer.json", lambda t: "{}", False, "model.vocab"),
    ("a held-out id past the vocabulary", "heldout_ids.json", lambda t: "[[1, 9999]]", False, "below"),
    ("no card.json", "card.json", None, False, "No such file"),
]


def malformed_folders(good, tmp):
    for what, name, change, binary, word in BROKEN:
        d = os.path.join(tmp, "broken")
        shutil.rmtree(d, True)
        shutil.copytree(good, d)
        if change is None:
            os.remove(os.path.join(d, name))
        else:
            edit(os.path.join(d, name), change, binary)
        rc, out = card("--check", d)
        expect(rc == 1 and "\n" not in out and "Traceback" not in out and word in out,
               f"malformed folder, {what}: {out}")


def self_test(tmp):
    d = os.path.join(tmp, "tiny")
    os.makedirs(d)
    tiny(d)
    rc, out = card(d)
    expect(rc == 0, f"self-test: card.py writes a card: {out}")
    rc, out = card("--check", d)
    expect(rc == 0, f"self-test: a fresh card checks: {out}")
    good = os.path.join(tmp, "good")
    shutil.copytree(d, good)
    edit(os.path.join(d, "README.md"), lambda t: t.replace("| 0 | 1 |", "| 0 | 1 | ", 1))
    rc, out = card("--check", d)
    expect(rc == 1 and "README.md was not generated" in out, f"self-test: an edited README.md is caught: {out}")
    shutil.copy(os.path.join(good, "README.md"), d)
    edit(os.path.join(d, "card.json"), lambda t: t.replace('"label": "', '"label": "previous token ', 1))
    rc, out = card("--check", d)
    expect(rc == 1 and "heads differ" in out, f"self-test: a changed label is caught: {out}")
    shutil.copy(os.path.join(good, "card.json"), d)
    edit(os.path.join(d, "model.safetensors"), lambda b: b[:-2] + np.float16(7.5).tobytes(), True)
    rc, out = card("--check", d)
    expect(rc == 1 and "does not match the weights" in out, f"self-test: a changed weight is caught: {out}")
    malformed_folders(good, tmp)
    seed_runs(good, tmp)
    mla_cards(tmp)


def seed_runs(good, tmp):
    """Other seeds' losses: kept in card.json with their mean and spread, checked, kept on a rewrite."""
    runs = []
    for seed, variant in ((2, "gqa"), (3, "gqa"), (4, "mha")):
        runs.append(os.path.join(tmp, f"seed{seed}"))
        os.makedirs(runs[-1])
        tiny(runs[-1], seed, variant)
        os.remove(os.path.join(runs[-1], "heldout_ids.json"))  # train_model.py writes none: the card's sample is used
    d = os.path.join(tmp, "seeded")
    shutil.copytree(good, d)
    rc, out = card(d, "--seed-run", runs[0], "--seed-run", runs[1])
    seeds = json.load(open(os.path.join(d, "card.json"))).get("seeds", {})
    x = [3.1, 3.2, 3.3]
    expect(rc == 0 and [r["seed"] for r in seeds.get("runs", [])] == [1, 2, 3]
           and abs(seeds["heldout_loss_mean"] - 3.2) < 1e-9 and abs(seeds["heldout_loss_sd"] - 0.1) < 1e-9
           and seeds["heldout_loss_min"] == x[0] and seeds["heldout_loss_max"] == x[2],
           f"seeds: three runs give mean 3.2, sd 0.1, range 3.1–3.3: {out} {seeds}")
    readme = open(os.path.join(d, "README.md"), encoding="utf-8").read()
    expect("| 2 | 3.2000 |" in readme and "mean 3.2000, standard deviation 0.1000" in readme,
           "seeds: the card's README lists each seed and the mean and spread")
    rc, out = card("--check", d)
    expect(rc == 0 and "3 seeds" in out, f"seeds: a seeded card checks: {out}")
    rc, out = card(d)
    expect(rc == 0 and len(json.load(open(os.path.join(d, "card.json")))["seeds"]["runs"]) == 3,
           f"seeds: a card written again without --seed-run keeps its runs: {out}")
    edit(os.path.join(d, "card.json"), lambda t: t.replace('"heldout_loss_mean": 3.2', '"heldout_loss_mean": 3.25'))
    rc, out = card("--check", d)
    expect(rc == 1 and "seeds differ" in out, f"seeds: a mean that is not the runs' is caught: {out}")
    for what, args, word in (("another variant", ["--seed-run", runs[2]], "variant differ"),
                             ("the shipped seed", ["--seed-run", good], "shipped model's own"),
                             ("the same seed twice", ["--seed-run", runs[0], "--seed-run", runs[0]], "same seed")):
        rc, out = card(d, *args)
        expect(rc == 1 and "\n" not in out and word in out, f"seeds: {what} is refused: {out}")


def shipped():
    models = os.path.join(ROOT, "assets", "models")
    for name in sorted(os.listdir(models)) if os.path.isdir(models) else []:
        d = os.path.join(models, name)
        if not os.path.isdir(d):
            continue
        missing = [f for f in SHIPPED if not os.path.exists(os.path.join(d, f))]
        if missing:
            expect(False, f"{name}: no {', '.join(missing)} (a shipped model needs all of {', '.join(SHIPPED)})")
            continue
        rc, out = card("--check", d)
        expect(rc == 0, out)


measure_on_hand_made_weights()
labels_at_the_threshold()
induction_on_hand_made_weights()
repeated_spans()
tmp = tempfile.mkdtemp(prefix="attnlab-cards-")
try:
    checkpointed(os.path.join(tmp, "trained"))
    self_test(tmp)
finally:
    shutil.rmtree(tmp, True)
shipped()
print(f"{len(failed)} failed" if failed else "all passed")
sys.exit(1 if failed else 0)
