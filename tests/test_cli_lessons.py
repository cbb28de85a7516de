#!/usr/bin/env python3
"""The lesson commands and `models` against hostile lessons and folders
(issue 37, findings 8, 14, 25, 26): a measure's batch row, head or layer
outside the trace it measures is one line at its line and exit 2, never a
crash (`lesson --check` and `render --lesson`, which checks the lesson too);
a lesson saved with a byte-order mark is read; the names, titles and card
summaries `lessons --list` and `models` print reach the terminal without their
escape sequences or line breaks; and issue 32's: `lessons --list` calls a lesson
finished only once its end is reached and every quiz answered right. Standard
library only."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from common import check  # noqa: E402

ap = common.parser()
ap.add_argument("--models", required=True, help="the shipped models' folder (assets/models)")
ARGS = common.parse(ap)
TMP = common.temp_folder("attnlab-cli-lessons-")


def run(args, env=None):
    return common.run(args, env={"XDG_STATE_HOME": os.path.join(TMP, "state"), **(env or {})})


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    return path


def clean(b):
    """No control character but the line ends: nothing a terminal would act on."""
    return all(c >= 0x20 and c != 0x7F or c == 0x0A for c in b) and b"\xc2\x9b" not in b


# ---- a measure's batch row, head and layer are the trace's (findings 8 and 14) ----
STEP = "# T\n\n## S\n\n```attnlab\ntokens = a b c\n```\n\n"  # one batch row, 4 heads, 1 layer; line 9 next
POEM = "# T\n\n## S\n\n```attnlab\nmodel = tang\ntext = 床前明月光，\n```\n\n"  # line 10 next
MEASURES = [
    (STEP, "{{6 | count what=tokens batch=1000000}}", "batch 1000000 is outside the trace's 1 batch row"),
    (STEP, "{{3 | count what=tokens batch=1}}", "batch 1 is outside the trace's 1 batch row"),
    (STEP, "{{3 | count what=chars batch=1}}", "batch 1 is outside"),
    (STEP, "{{1 | sum row=a batch=7}}", "batch 7 is outside"),
    (STEP, "{{0.5 | weight row=0 col=0 head=1000000}}", "head 1000000 is outside the trace's 4 heads"),
    (STEP, "{{0.5 | weight row=0 col=0 head=4}}", "head 4 is outside the trace's 4 heads"),
    (STEP, "{{3 | count what=masked head=9}}", "head 9 is outside"),
    (STEP, "{{0.5 | weight row=0 col=0 layer=1048576}}", "layer 1048576 is outside the trace's 1 layer"),
    (STEP, "{{3 | count what=masked layer=1}}", "layer 1 is outside"),
    (POEM, "{{0.5 | loss row=1 batch=1000000}}", "batch 1000000 is outside"),
    (POEM, "{{0.5 | loss batch=3}}", "batch 3 is outside"),
    (POEM, "{{0.5 | prob token=， row=5 batch=2}}", "batch 2 is outside"),
]
for i, (head, measure, want) in enumerate(MEASURES):
    path = write(f"measure{i}.md", head + measure + "\n")
    line = head.count("\n") + 1
    r = run(["lesson", "--check", path])
    err = r.stderr.decode(errors="replace")
    check(f"lesson --check {measure}: one line at line {line}, exit 2",
          r.returncode == 2 and err.startswith(f"{path}:{line}: ") and want in err
          and err.count("\n") == 2 and err.endswith("attnlab lesson --check: 1 problem\n"), (r.returncode, err))
    if i in (0, 4, 7, 9):  # the same checker before drawing: a line and exit 2, not SIGSEGV
        png = os.path.join(TMP, f"measure{i}.png")
        r = run(["render", "--lesson", path, "-o", png])
        err = r.stderr.decode(errors="replace")
        check(f"render --lesson with {measure}: refused in one line, nothing written",
              r.returncode == 2 and want in err and err.count("\n") == 1 and not os.path.exists(png),
              (r.returncode, err))

# ---- a lesson saved with a byte-order mark (finding 25) ----
bom = write("bom.md", b"\xef\xbb\xbf" + (STEP + "{{3 | count what=tokens}} tokens.\n").encode())
r = run(["lesson", "--check", bom])
check("a lesson with a byte-order mark is read: its title, its step, its measure",
      r.returncode == 0 and r.stdout == b"1 lesson, 1 steps, 0 quizzes: no problems\n", (r.returncode, r.stderr))
bad = write("bom-bad.md", b"\xef\xbb\xbf# T\n\n## S\n\n```attnlab\nheads = 3\nkv_heads = 2\n```\n")
r = run(["lesson", "--check", bad])
check("its lines are counted as the editor shows them: line 7 is line 7",
      r.returncode == 2 and r.stderr.decode().startswith(f"{bad}:7: "), (r.returncode, r.stderr))

# ---- what `lessons --list` and `models` print is one clean line each (finding 26) ----
course = os.path.join(TMP, "course")
os.makedirs(os.path.join(course, "en"))
with open(os.path.join(course, "en", "01-bom.md"), "wb") as f:
    f.write(b"\xef\xbb\xbf# Read with its mark\n\n## S\n\nText.\n")
with open(os.path.join(course, "en", "02-title.md"), "wb") as f:
    f.write(b"# Red \x1b[31mtitle\x1b]0;pwned\x07 \xc2\x9b2J\xe2\x80\xa8end\n\n## S\n\nText.\n")
with open(os.path.join(course, "en", "03-named\x1b[2J.md"), "wb") as f:  # a name that says it in its error
    f.write(b"# Broken \x1b[5m\n\n## S\n\n{{half\x1b[0m | weight}}\n")
r = run(["lessons", "--list", "--lang", "en"], env={"ATTNLAB_LESSONS": course})
out = r.stdout
check("lessons --list: a title with a byte-order mark is the title", r.returncode == 0 and
      b"Read with its mark" in out and b"no title" not in out, (r.returncode, out, r.stderr))
check("lessons --list: titles, names and errors without their escape sequences", r.returncode == 0 and
      clean(out) and b"title ]0;pwned" in out and b"Broken" in out and b"error: " in out and out.count(b"\n") == 6, out)

models = os.path.join(TMP, "models")
evil = os.path.join(models, "evil\x1b[31m")
os.makedirs(evil)
with open(os.path.join(evil, "config.json"), "w") as f:  # a model, unreadable: its name twice, in the error too
    f.write("{}")
tang = os.path.join(models, "tang2")
shutil.copytree(os.path.join(ARGS.models, "tang"), tang)
readme = open(os.path.join(tang, "README.md"), "rb").read()
with open(os.path.join(tang, "README.md"), "wb") as f:
    f.write(readme.replace(b"summary: GQA", b"summary: \x1b]0;pwned\x07\x1b[2JGQA\xc2\x85 \x7f\xe2\x80\xa9x"))
r = run(["models"], env={"ATTNLAB_MODELS": models})
out = r.stdout
check("models: folder names and card summaries without their escape sequences",
      clean(out) and b"evil [31m" in out and b"]0;pwned  [2JGQA" in out, (r.returncode, out, r.stderr))

# ---- issue 32: finished is the last step and every quiz right ----
quiz_course = os.path.join(TMP, "quiz-course")
os.makedirs(os.path.join(quiz_course, "en"))
with open(os.path.join(quiz_course, "en", "01-two.md"), "w") as f:
    f.write("# Two quizzes\n\nIntro.\n\n## One\n\nWhich?\n\n- [x] a\n- [ ] b\n\n"
            "## Two\n\nWhich?\n\n- [ ] a\n- [x] b\n")
state = os.path.join(TMP, "quiz-state")
os.makedirs(os.path.join(state, "attnlab"))
for quizzes, want in (({}, "last step reached · quizzes 0/2 right: not finished"),
                      ({"0.0": True, "1.0": False, "0.5": True}, "last step reached · quizzes 1/2 right: not finished"),
                      ({"0.0": True, "1.0": True}, "finished · quizzes 2/2 right")):
    with open(os.path.join(state, "attnlab", "progress.json"), "w") as f:
        json.dump({"version": 1, "lessons": {"01-two.md": {"step": 2, "steps": 2, "finished": True,
                                                            "quizzes": quizzes}}}, f)
    r = common.run(["lessons", "--list", "--lang", "en"], env={"ATTNLAB_LESSONS": quiz_course, "XDG_STATE_HOME": state})
    lines = r.stdout.decode().splitlines()
    check(f"lessons --list with the end reached and quizzes {quizzes}: {want}",
          r.returncode == 0 and len(lines) == 2 and lines[1] == "    " + want, (r.returncode, lines, r.stderr))

common.finish()
