#!/usr/bin/env python3
"""The output guard and model lookup (issue 37): -o never lands on a file the
command reads (the model folder and its parent model, checkpoints, a lesson's
models, the picker's lessons, the progress file); a bare model name means the
shipped model even beside a folder of that name; checkpoint folders are listed
and looked up by one rule. Standard library only."""
import hashlib
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import MODELS, check, model_copy, snapshot  # noqa: E402

common.parse()
TMP = common.temp_folder("attnlab-guard-")
STATE = os.path.join(TMP, "state")


def run(args, env=None, cwd=None):
    return common.run(args, env={"XDG_STATE_HOME": STATE, **(env or {})}, cwd=cwd)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def refused(name, args, target, want, env=None):
    """args exit 2 with one line containing want, and target (if it exists) is unchanged."""
    before = digest(target) if os.path.exists(target) else None
    r = run(args, env)
    err = r.stderr.decode(errors="replace")
    after = digest(target) if os.path.exists(target) else None
    check(name, r.returncode == 2 and want in err and err.count("\n") == 1 and before == after,
          f"exit {r.returncode}, stderr {err!r}, want {want!r}, changed {before != after}")


def fresh_models(tag):
    """A models folder holding `ck` (tang with snapshots at steps 0 and 25) and `brown2`, made anew for each
    case, so that a case that writes over one (before the fix) does not change the next."""
    root = os.path.join(TMP, f"models-{tag}")
    ck = model_copy(os.path.join(root, "ck"))
    for step in (0, 25):
        snapshot(ck, step)
    model_copy(os.path.join(root, "brown2"), "brown")
    return root, ck


CK_ROOT, CK = fresh_models("trace")
CK_ENV = {"ATTNLAB_MODELS": CK_ROOT}
OUT = os.path.join(TMP, "out.safetensors")
PNG = os.path.join(TMP, "out.png")

# ---- finding 2: the model folder, its parent model and its checkpoints ----
INSIDE = "lies inside the model folder"
for name in ("model.safetensors", "config.json", "tokenizer.json", "checkpoints/step25/model.safetensors",
             "checkpoints/step0/config.json", "checkpoints/new.safetensors"):
    target = os.path.join(CK, name)
    refused(f"trace --checkpoint 0 -o DIR/{name}",
            ["trace", "--model", CK, "--checkpoint", "0", "--text", "床前", "-o", target], target, INSIDE)
    refused(f"trace --model DIR/checkpoints/step0 -o DIR/{name}",
            ["trace", "--model", os.path.join(CK, "checkpoints", "step0"), "--text", "床前", "-o", target],
            target, INSIDE)
R_ROOT, R_CK = fresh_models("render")
refused("render --checkpoint 25 -o DIR/tokenizer.json",
        ["render", "--model", "ck", "--checkpoint", "25", "--text", "床前", "-o", os.path.join(R_CK, "tokenizer.json")],
        os.path.join(R_CK, "tokenizer.json"), INSIDE, {"ATTNLAB_MODELS": R_ROOT})
r = run(["trace", "--model", CK, "--checkpoint", "0", "--text", "床前", "-o", OUT])
check("trace --checkpoint 0 -o elsewhere still writes", r.returncode == 0 and os.path.getsize(OUT) > 0, r.stderr)

# render --lesson: every model the lesson opens, and the parent of the checkpoint it opens
LESSON = os.path.join(TMP, "ck.md")
with open(LESSON, "w") as f:
    f.write("# Checkpoints\n\n```attnlab\nmodel = ck\ntext = 床前明月光\n```\n\n## Early\n\n```attnlab\n"
            "checkpoint = 0\n```\n\nThe start.\n\n## Other\n\nBrown on held-out text: {{4.14 | card key=heldout_loss model=brown2 on=heldout}}.\n")
for i, name in enumerate(("ck/config.json", "ck/checkpoints/step0/model.safetensors", "ck/x.png", "brown2/config.json")):
    root, _ = fresh_models(f"lesson{i}")
    target = os.path.join(root, name)
    refused(f"render --lesson -o <a model the lesson reads>/{name}",
            ["render", "--lesson", LESSON, "--step", "1", "-o", target], target, INSIDE, {"ATTNLAB_MODELS": root})
r = run(["render", "--lesson", LESSON, "--step", "1", "-o", PNG], {"ATTNLAB_MODELS": fresh_models("lesson")[0]})
check("render --lesson -o elsewhere still writes", r.returncode == 0, r.stderr)

# ---- finding 3: render --picker reads the lessons and the progress file ----
LESSONS = os.path.join(TMP, "lessons")
os.makedirs(os.path.join(LESSONS, "en"))
os.makedirs(os.path.join(LESSONS, "zh"))
for lang in ("en", "zh"):
    with open(os.path.join(LESSONS, lang, "01-one.md"), "w") as f:
        f.write("# One\n\nA lesson.\n\n## Step\n\nText.\n")
os.makedirs(os.path.join(STATE, "attnlab"))
PROGRESS = os.path.join(STATE, "attnlab", "progress.json")


def student():
    """A student's progress, written anew before each case."""
    with open(PROGRESS, "w") as f:
        f.write('{"version": 1, "lessons": {"01-one.md": {"step": 1, "steps": 1}}}\n')


L_ENV = {"ATTNLAB_LESSONS": LESSONS}
for target, want in ((os.path.join(LESSONS, "en", "01-one.md"), "lies inside the lessons folder"),
                     (os.path.join(LESSONS, "zh", "01-one.md"), "lies inside the lessons folder"),
                     (os.path.join(LESSONS, "en", "02-new.md"), "lies inside the lessons folder"),
                     (PROGRESS, "lies inside the progress folder"),
                     (PROGRESS + ".lock", "lies inside the progress folder")):
    student()
    refused(f"render --picker -o {os.path.relpath(target, TMP)}",
            ["render", "--picker", "--lang", "en", "-o", target], target, want, L_ENV)
student()
refused("trace -o the progress file", ["trace", "-o", PROGRESS], PROGRESS, "lies inside the progress folder")
check("no new lesson file was written", not os.path.exists(os.path.join(LESSONS, "en", "02-new.md")))
student()
r = run(["render", "--picker", "--lang", "en", "-o", PNG], L_ENV)
check("render --picker -o elsewhere still writes, and the progress stays",
      r.returncode == 0 and b"moved" not in r.stderr and b'"01-one.md"' in open(PROGRESS, "rb").read(), r.stderr)

# ---- finding 12: a folder here named like a shipped model ----
HERE_DIR = os.path.join(TMP, "cwd")
os.makedirs(os.path.join(HERE_DIR, "tang"))          # an empty folder: no model
M_ENV = {"ATTNLAB_MODELS": os.path.abspath(MODELS)}
r = run(["models"], M_ENV, cwd=HERE_DIR)
out = r.stdout.decode(errors="replace")
check("models beside ./tang: the shipped tang is readable", r.returncode == 0 and "cannot be read" not in out,
      (r.returncode, out))
r = run(["trace", "--model", "tang", "--text", "床前", "-o", OUT], M_ENV, cwd=HERE_DIR)
err = r.stderr.decode(errors="replace")
check("--model tang beside ./tang opens the shipped model and says so",
      r.returncode == 0 and "./tang" in err and "shipped" in err, (r.returncode, err))
r = run(["trace", "--model", "./tang", "--text", "床前", "-o", OUT], M_ENV, cwd=HERE_DIR)
err = r.stderr.decode(errors="replace")
check("--model ./tang opens the folder here", r.returncode != 0 and "tang/config.json" in err, (r.returncode, err))
r = run(["trace", "--help"])
check("the usage text says which a bare name means", b"./NAME" in r.stdout, r.stdout)

# ---- finding 13: more than 64 checkpoints ----
MANY_ROOT = os.path.join(TMP, "many")
MANY = os.path.join(MANY_ROOT, "many")
model_copy(MANY)
for step in range(0, 700, 10):     # 70 steps; only config.json, which is what makes a snapshot listed
    s = os.path.join(MANY, "checkpoints", f"step{step}")
    os.makedirs(s)
    shutil.copyfile(os.path.join(MANY, "config.json"), os.path.join(s, "config.json"))
for f in ("model.safetensors", "tokenizer.json"):
    shutil.copyfile(os.path.join(MANY, f), os.path.join(MANY, "checkpoints", "step350", f))
r = run(["trace", "--model", MANY, "--checkpoint", "350", "--text", "床前", "-o", OUT])
check("--checkpoint 350 of 70 checkpoints opens", r.returncode == 0, r.stderr)
for step in range(0, 700, 10):     # each is found (the others then miss their weights: exit 1, not "no step")
    r = run(["trace", "--model", MANY, "--checkpoint", str(step), "--text", "床前", "-o", OUT])
    check(f"--checkpoint {step} of 70 is found", r.returncode in (0, 1) and b"no step" not in r.stderr, r.stderr)
r = run(["trace", "--model", MANY, "--checkpoint", "5", "--text", "床前", "-o", OUT])
err = r.stderr.decode(errors="replace")
m = re.search(r"has no step 5 \(its (\d+) steps: ([0-9, ]+)(, …)?\)$", err.strip())
nums = [int(x) for x in m.group(2).split(", ")] if m else []
check("a missing step lists whole numbers, and says how many there are",
      r.returncode == 2 and m and m.group(1) == "70" and nums == list(range(0, 10 * len(nums), 10)), err)
r = run(["models"], {"ATTNLAB_MODELS": MANY_ROOT})
line = [x for x in r.stdout.decode().splitlines() if "checkpoints at steps" in x]
steps = [int(x) for x in re.findall(r"\d+", line[0])] if line else []
check("models: past 64 checkpoints, the first and the last are among those listed",
      len(steps) == 64 and steps[0] == 0 and steps[-1] == 690 and steps == sorted(steps), line)

# ---- finding 24: step025 is not the folder of step 25 ----
Z_ROOT = os.path.join(TMP, "zeros")
Z = os.path.join(Z_ROOT, "z")
model_copy(Z)
snapshot(Z, 0)
snapshot(Z, "step025")
r = run(["models"], {"ATTNLAB_MODELS": Z_ROOT})
line = [x for x in r.stdout.decode().splitlines() if "checkpoints at steps" in x]
listed = [int(x) for x in re.findall(r"\d+", line[0])] if line else []
check("models lists step0 but not step025", listed == [0], line)
for n in listed:
    r = run(["trace", "--model", Z, "--checkpoint", str(n), "--text", "床前", "-o", OUT])
    check(f"a listed step ({n}) opens", r.returncode == 0, r.stderr)
r = run(["trace", "--model", Z, "--checkpoint", "25", "--text", "床前", "-o", OUT])
err = r.stderr.decode(errors="replace")
check("--checkpoint 25 beside step025: no step 25, with the steps there are",
      r.returncode == 2 and "has no step 25 (its steps: 0)" in err, err)
r = run(["trace", "--model", os.path.join(Z, "checkpoints", "step025"), "--text", "床前", "-o", OUT])
check("--model DIR/checkpoints/step025 still opens as a folder", r.returncode == 0, r.stderr)

common.finish()
