/* test_lesson.c — the lesson module: Markdown to steps, settings, prose and
 * quizzes; malformed files give one clear (line, message) each and never
 * crash; step states inherit; --check finds bad values, stages and answers;
 * cell answers come from the trace; grading; the progress file. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <utf8proc.h>

#include "catalog.h"
#include "engine/base/utf8.h"
#include "engine/model/loss.h"
#include "engine/model/model.h"
#include "engine/model/model_run.h"
#include "engine/run/stream.h"
#include "engine/run/forward.h"
#include "lesson.h"
#include "progress.h"
#include "quiz.h"
#include "state.h"

static int parse(const char *md, lesson *ls, lesson_diags *dg)
{
    *dg = (lesson_diags){0};
    return lesson_parse(md, strlen(md), "t.md", ls, dg);
}

/* The diagnostics must include one at `line` containing `part`. */
static void expect_diag(const lesson_diags *dg, int line, const char *part)
{
    for (int i = 0; i < dg->n; i++)
        if (dg->items[i].line == line && strstr(dg->items[i].msg, part)) return;
    for (int i = 0; i < dg->n; i++) print_message("  got %d: %s\n", dg->items[i].line, dg->items[i].msg);
    fail_msg("no diagnostic at line %d containing '%s'", line, part);
}

static const char *const GOOD =
    "# The causal mask\n"                               /* 1 */
    "\n"
    "A decoder must not *read* the future.\n"           /* 3 */
    "\n"
    "```attnlab\n"                                      /* 5 */
    "tokens = 我 爱 你 们\n"
    "heads = 2\n"
    "```\n"
    "\n"
    "## Scores\n"                                       /* 10 */
    "\n"
    "Each query has a `score` for **every** key.\n"
    "\n"
    "```attnlab\n"
    "stage = scores\n"                                  /* 15 */
    "causal = false\n"
    "```\n"
    "\n"
    "- one\n"
    "  - nested\n"                                      /* 20 */
    "1. first\n"
    "\n"
    "## Mask\n"                                         /* 23 */
    "\n"
    "Which cells are −∞?\n"
    "\n"
    "- [ ] the diagonal\n"                              /* 27 */
    "- [x] above the diagonal\n"
    "\n"
    "```quiz\n"                                         /* 30 */
    "explain = the future\n"
    "```\n"
    "\n"
    "```attnlab\n"
    "causal = true\n"                                   /* 35 */
    "stage = masked_scores\n"
    "highlight = cells 0,1 1,2\n"
    "```\n"
    "\n"
    "Click them.\n"                                     /* 40 */
    "\n"
    "```quiz\n"
    "click = masked\n"
    "hint = above the diagonal\n"
    "```\n"                                             /* 45 */
    "\n"
    "How many cells does it mask for 4 tokens?\n"
    "\n"
    "```quiz\n"
    "answer = 6\n"                                      /* 50 */
    "tolerance = 0\n"
    "```\n";

static void good_lesson_parses(void **state)
{
    (void)state;
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(GOOD, &ls, &dg), 0);
    assert_int_equal(dg.n, 0);
    assert_string_equal(ls.title, "The causal mask");
    assert_string_equal(ls.summary, "A decoder must not read the future.");
    assert_int_equal(ls.n_steps, 2);
    assert_int_equal(ls.intro.n_settings, 2);
    assert_string_equal(ls.intro.settings[0].key, "tokens");
    assert_string_equal(ls.intro.settings[0].value, "我 爱 你 们");
    assert_int_equal(ls.intro.settings[1].line, 7);

    const lesson_step *s1 = &ls.steps[0];
    assert_string_equal(s1->title, "Scores");
    assert_int_equal(s1->line, 10);
    assert_int_equal(s1->n_settings, 2);
    assert_int_equal(s1->settings[0].line, 15);
    /* prose: paragraph with code and strong spans, a list item and a nested one */
    assert_int_equal(s1->blocks[0].kind, LESSON_BLOCK_PARA);
    assert_string_equal(s1->blocks[0].text, "Each query has a score for every key.");
    assert_int_equal(s1->blocks[0].n_spans, 2);
    assert_int_equal(s1->blocks[0].spans[0].style, LESSON_CODE);
    assert_int_equal(s1->blocks[0].spans[1].style, LESSON_STRONG);
    assert_int_equal(s1->blocks[1].kind, LESSON_BLOCK_ITEM);
    assert_string_equal(s1->blocks[1].text, "one");
    assert_string_equal(s1->blocks[1].marker, "•");
    assert_int_equal(s1->blocks[2].level, 2);
    assert_string_equal(s1->blocks[2].text, "nested");
    assert_string_equal(s1->blocks[3].marker, "1.");

    const lesson_step *s2 = &ls.steps[1];
    assert_int_equal(s2->n_quizzes, 3);
    const lesson_quiz *mc = &s2->quizzes[0], *cells = &s2->quizzes[1], *num = &s2->quizzes[2];
    assert_int_equal(mc->kind, LESSON_QUIZ_CHOICE);
    assert_int_equal(mc->n_choices, 2);
    assert_false(mc->correct[0]);
    assert_true(mc->correct[1]);
    assert_int_equal(mc->line, 27);
    assert_string_equal(mc->question, "Which cells are −∞?");
    assert_string_equal(mc->explain, "the future"); /* the quiz block after the list adds to it */
    assert_int_equal(cells->kind, LESSON_QUIZ_CELLS);
    assert_int_equal(cells->rule, LESSON_CELLS_MASKED);
    assert_string_equal(cells->hint, "above the diagonal");
    assert_string_equal(cells->question, "Click them.");
    assert_int_equal(num->kind, LESSON_QUIZ_NUMBER);
    assert_true(num->answer == 6.0 && num->tolerance == 0.0);
    assert_int_equal(lesson_quiz_count(&ls), 3);
    /* the lesson runs through the engine */
    assert_int_equal(lesson_check(&ls, &dg), 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

static void steps_inherit_and_restore(void **state)
{
    (void)state;
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(GOOD, &ls, &dg), 0);
    attn_config c;
    lesson_view v;
    lesson_marks mk;
    assert_int_equal(lesson_step_state(&ls, 0, &c, &v, &mk, &dg), 0);
    assert_int_equal(c.heads, 2);
    assert_int_equal((int)c.causal, ATTN_CAUSAL_OFF);
    assert_string_equal(v.stage, "scores");
    assert_int_equal(mk.hl, LESSON_HL_NONE);
    attn_config_free(&c);
    assert_int_equal(lesson_step_state(&ls, 1, &c, &v, &mk, &dg), 0);
    assert_int_equal(c.heads, 2); /* from the introduction */
    assert_string_equal(c.tokens, "我 爱 你 们");
    assert_int_equal((int)c.causal, ATTN_CAUSAL_ON);
    assert_string_equal(v.stage, "masked_scores");
    assert_int_equal(mk.hl, LESSON_HL_CELLS);
    assert_int_equal(mk.n_hl_cells, 2);
    assert_int_equal(mk.hl_cells[1][0], 1);
    assert_int_equal(mk.hl_cells[1][1], 2);
    attn_config_free(&c);
    /* going back gives step 1 again, exactly */
    assert_int_equal(lesson_step_state(&ls, 0, &c, &v, NULL, &dg), 0);
    assert_int_equal((int)c.causal, ATTN_CAUSAL_OFF);
    assert_string_equal(v.stage, "scores");
    attn_config_free(&c);
    assert_int_equal(dg.n, 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

/* panels = shown | hidden | side | auto: a step asks for the stage list and
 * side panel (side: the side panel alone), the next steps keep it until one
 * says auto; another word is an error at its line. */
static void steps_set_the_panels(void **state)
{
    (void)state;
    static const char *const md = "# P\n\n## One\n\n```attnlab\npanels = shown\n```\n\nText.\n\n"
                                  "## Two\n\nMore.\n\n## Three\n\n```attnlab\npanels = side\n```\n\nMore.\n\n"
                                  "## Four\n\n```attnlab\npanels = auto\n```\n\nEnd.\n";
    lesson ls;
    lesson_diags dg;
    attn_config c;
    lesson_view v;
    assert_int_equal(parse(md, &ls, &dg), 0);
    int want[] = {LESSON_PANELS_SHOWN, LESSON_PANELS_SHOWN, LESSON_PANELS_SIDE, LESSON_PANELS_AUTO};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(lesson_step_state(&ls, i, &c, &v, NULL, &dg), 0);
        assert_int_equal((int)v.panels, want[i]);
        attn_config_free(&c);
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);
    assert_int_equal(parse("# P\n\n## One\n\n```attnlab\npanels = open\n```\n\nText.\n", &ls, &dg), 0);
    assert_int_equal(lesson_step_state(&ls, 0, &c, &v, NULL, &dg), -1);
    attn_config_free(&c);
    expect_diag(&dg, 6, "panels: 'open' is not auto, shown, hidden or side");
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

/* checkpoint = N | final: the model set so far as saved at training step N.
 * The folders need only a config.json: the step's state loads no weights. */
static void steps_open_training_checkpoints(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char root[512], path[800], md[2000];
    snprintf(root, sizeof root, "%s/lesson-ck-XXXXXX", tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(root));
    const char *const dirs[] = {"", "/checkpoints", "/checkpoints/step0", "/checkpoints/step200"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s%s", root, dirs[i]);
        mkdir(path, 0755);
        if (i != 1) {
            snprintf(path, sizeof path, "%s%s/config.json", root, dirs[i]);
            FILE *f = fopen(path, "w");
            assert_non_null(f);
            fputs("{}", f);
            fclose(f);
        }
    }
    snprintf(md, sizeof md, "# H\n\n```attnlab\nmodel = %s\ncheckpoint = 0\n```\n\n## Later\n\n```attnlab\n"
             "checkpoint = 200\n```\n\nText.\n\n## End\n\n```attnlab\ncheckpoint = final\n```\n\nText.\n", root);
    lesson ls;
    lesson_diags dg;
    attn_config c;
    lesson_view v;
    assert_int_equal(parse(md, &ls, &dg), 0);
    const char *const want[] = {"/checkpoints/step200", ""};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(lesson_step_state(&ls, i, &c, &v, NULL, &dg), 0);
        snprintf(path, sizeof path, "%s%s", root, want[i]);
        assert_string_equal(c.model, path);
        attn_config_free(&c);
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);
    /* a step the model lacks names the ones it has; without a model first; not a number */
    static const struct { const char *setting; int line; const char *says; } BAD[] = {
        {"model = %s\ncheckpoint = 7", 5, "has no step 7 (its steps: 0, 200)"},
        {"checkpoint = 0", 4, "set 'model = NAME' first"},
        {"model = %s\ncheckpoint = soon", 5, "'soon' is not a training step from 0 or final"},
    };
    for (int i = 0; i < 3; i++) {
        char block[700];
        snprintf(block, sizeof block, BAD[i].setting, root);
        snprintf(md, sizeof md, "# H\n\n```attnlab\n%s\n```\n\n## One\n\nText.\n", block);
        assert_int_equal(parse(md, &ls, &dg), 0);
        assert_int_equal(lesson_step_state(&ls, 0, &c, &v, NULL, &dg), -1);
        attn_config_free(&c);
        expect_diag(&dg, BAD[i].line, BAD[i].says);
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }
}

/* Each malformed lesson: parse or check fails with the expected line and words. */
static void malformed_lessons_report_lines(void **state)
{
    (void)state;
    static const struct {
        const char *md;
        int line;
        const char *part;
    } CASES[] = {
        {"", 1, "no title"},
        {"just text\n", 1, "no title"},
        {"# T\n\nno steps\n", 1, "no steps"},
        {"# T\n\n## S\n\n```attnlab\nheads = 2\n", 5, "never closed"},
        {"# T\n\n## S\n\n```attnlab\nhaeds = 2\n```\n", 6, "did you mean 'heads'"},
        {"# T\n\n## S\n\n```attnlab\nheads 2\n```\n", 6, "expected 'key = value'"},
        {"# T\n\n## S\n\n```attnlab\n = 2\n```\n", 6, "missing key"},
        {"# T\n\n## S\n\n```attnlab\nweights = w.safetensors\n```\n", 6, "not allowed"},
        {"# T\n\n## S\n\n```atnlab\nheads = 2\n```\n", 5, "did you mean 'attnlab'"},
        {"# T\n\n## S\n\nQ?\n\n- [ ] a\n- [ ] b\n", 7, "no right answer"},
        {"# T\n\n## S\n\n```quiz\nhint = h\n```\n", 5, "no right answer"},
        {"# T\n\n## S\n\n```quiz\nanswer = x\n```\n", 6, "not a number"},
        {"# T\n\n## S\n\n```quiz\nanswer = 1\nclick = nan\n```\n", 7, "not both"},
        {"# T\n\n## S\n\n```quiz\nclick = diagonal\n```\n", 6, "not masked, unmasked"},
        {"# T\n\n## S\n\n```quiz\nclick = nan\nstage = scorez\n```\n", 7, "unknown stage"},
        {"# T\n\n## S\n\n```quiz\nanswer = 2\ntolerance = -1\n```\n", 7, "tolerance"},
        {"# T\n\n## S\n\n```quiz\nanswer = 2\nwhy = x\n```\n", 7, "unknown quiz key"},
        {"# T\n\n## S\n\n```quiz\n```\n", 5, "empty quiz"},
        {"# T\n\n## S\n\n```quiz\nclick = nan\n```\n\n```quiz\nclick = masked\n```\n", 9, "at most one cell quiz"},
        {"# T\n\nQ?\n\n```quiz\nanswer = 1\n```\n\n## S\n", 5, "before the first step"},
        {"# T\n\n## S\n\n# Second\n", 5, "second '#' title"},
        {"# T\n\n##\n", 3, "empty heading"},
        {"# T\n\n## S\n\nok\n\xff\xfe\n", 6, "invalid UTF-8"},
        {"# T\n\n## S\n\n```attnlab\nhighlight = diagonal\n```\n", 6, "highlight"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        lesson ls;
        lesson_diags dg;
        int rc = parse(CASES[i].md, &ls, &dg);
        if (!rc) rc = lesson_check(&ls, &dg);
        if (!rc) fail_msg("case %zu accepted", i);
        expect_diag(&dg, CASES[i].line, CASES[i].part);
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }
}

/* Values and views that only the engine can judge (lesson_check). */
static void check_runs_every_step(void **state)
{
    (void)state;
    static const struct {
        const char *block;
        const char *part;
    } CASES[] = {
        {"heads = 8\nkv_heads = 3\n", "must divide"},
        {"causal = maybe\n", "true, false or reversed"},
        {"stage = weights_dropout\n", "train = true"},
        {"stage = q_rope\n", "rope = true"},
        {"stage = memory\n", "source_tokens"},
        {"head = 4\n", "head: 4 is out of range"},
        {"batch_row = 2\n", "batch_row: 2 is out of range"},
        {"layer = 1\n", "layer: 1 is out of range (this step's trace has 1 layer)"},
        {"layer = top\n", "layer: 'top' is not a whole number"},
        {"sliding_window = 2\nsource_tokens = a b\ncausal = false\n", "sliding_window: a window over positions"},
        {"highlight = row 6\n", "outside weights's 6 rows"},
        {"highlight = cells 0,9\n", "cell 0,9 is outside"},
        {"row = 6\n", "row: 6 is outside"},
        {"decode_step = 7\n", "past the last token"},
        {"view = triple\n", "not single, grid, compare, geometry, training, tiles or experts"},
        {"view = tiles\n", "view = tiles: this step's configuration has no tiles"},
        {"source_tokens = a b\ncausal = true\n", "causal"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char md[512];
        snprintf(md, sizeof md, "# T\n\n## S\n\n```attnlab\n%s```\n", CASES[i].block);
        lesson ls;
        lesson_diags dg;
        assert_int_equal(parse(md, &ls, &dg), 0);
        if (!lesson_check(&ls, &dg)) fail_msg("case %zu (%s) passed --check", i, CASES[i].block);
        bool found = false;
        for (int k = 0; k < dg.n; k++) found |= dg.items[k].line >= 6 && strstr(dg.items[k].msg, CASES[i].part) != NULL;
        if (!found) {
            for (int k = 0; k < dg.n; k++) print_message("  got %d: %s\n", dg.items[k].line, dg.items[k].msg);
            fail_msg("case %zu: no '%s'", i, CASES[i].part);
        }
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }
    /* a cell quiz with no right cells for its step: nothing is masked */
    const char *md = "# T\n\n## S\n\n```attnlab\ncausal = false\ntokens = a b c\n```\n\n```quiz\nclick = masked\n```\n";
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(md, &ls, &dg), 0);
    assert_int_equal(lesson_check(&ls, &dg), -1);
    expect_diag(&dg, 10, "no right answer");
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

/* {{NUMBER | WHAT ...}}: the prose shows NUMBER, --check measures WHAT on the
 * step's trace and fails at the measure's line when they disagree. */
static void measured_numbers(void **state)
{
    (void)state;
    const char *cfg = "# T\n\n## S\n\n```attnlab\ntokens = a b c\ncausal = true\n```\n\n";
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(cfg, &ls, &dg), 0);
    attn_trace tr;
    assert_int_equal(lesson_step_run(&ls, 0, &tr, &dg), 0);
    attn_matrix m;
    assert_int_equal(attn_trace_matrix(&tr, "weights", 0, 0, &m), 0);
    /* at=self: the rows with a choice, as the model cards count: row 0 sees only itself (1.0) and is left out */
    assert_true(m.data[0] == 1.0f);
    double w10 = m.data[1 * 3 + 0], self = (m.data[4] + m.data[8]) / 2;
    attn_trace_free(&tr);
    lesson_free(&ls);
    lesson_diags_free(&dg);

    char md[2048];
    snprintf(md, sizeof md,
             "%s"                                                         /* lines 1-9 */
             "Row b puts {{%.2f | weight row=b col=a}} on **a**, and\n"     /* 10 */
             "{{%.3f | weight at=self}} on itself; {{9 | count what=cells}} cells,\n" /* 11 */
             "{{3 | count what=masked}} masked, {{%.0f%% | weight row=1 col=0}}.\n"  /* 12 */
             "\n"
             "```quiz\nanswer = 3\nhint = {{3 | count what=tokens}} tokens\n```\n", /* 14-17 */
             cfg, w10, self, 100 * w10);
    assert_int_equal(parse(md, &ls, &dg), 0);
    const lesson_step *st = &ls.steps[0];
    assert_int_equal(st->n_measures, 6);
    char want[256];
    snprintf(want, sizeof want, "Row b puts %.2f on a, and %.3f on itself; 9 cells, 3 masked, %.0f%%.", w10, self,
             100 * w10);
    const lesson_block *b = NULL;
    for (int i = 0; i < st->n_blocks; i++)
        if (st->blocks[i].kind == LESSON_BLOCK_PARA) b = &st->blocks[i];
    assert_non_null(b);
    assert_string_equal(b->text, want);
    /* the bold span moved with the text: it covers "a" after the number */
    assert_int_equal(b->n_spans, 1);
    assert_int_equal(b->spans[0].end - b->spans[0].start, 1);
    assert_int_equal(b->text[b->spans[0].start], 'a');
    assert_string_equal(st->quizzes[0].hint, "3 tokens");
    assert_int_equal(st->measures[0].line, 10);
    assert_int_equal(st->measures[2].line, 11);
    assert_int_equal(st->measures[5].line, 16);
    assert_int_equal(lesson_check(&ls, &dg), 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* a wrong number fails at its line with both values */
    snprintf(md, sizeof md, "%sSo {{%.2f | weight row=b col=a}}\nand {{4 | count what=tokens}}.\n", cfg, w10 + 0.02);
    assert_int_equal(parse(md, &ls, &dg), 0);
    assert_int_equal(lesson_check(&ls, &dg), -1);
    expect_diag(&dg, 10, "the text shows");
    expect_diag(&dg, 11, "measures 3");
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* malformed measures: each one line, at its line */
    static const struct {
        const char *m, *part;
    } BAD[] = {
        {"{{0.5 weight at=self}}", "no '|'"},
        {"{{half | weight at=self}}", "not a number"},
        {"{{0.5 | heft at=self}}", "not a measure"},
        {"{{0.5 | weight}}", "row= and col="},
        {"{{0.5 | weight at=self colour=red}}", "unknown measure key 'colour'"},
        {"{{0.5 | weight row=z col=a}}", "no row holds the token 'z'"},
        {"{{0.5 | weight row=7 col=a}}", "row 7 is outside"},
        {"{{0.5 | weight at=self step=3}}", "the lesson has 1 steps"},
        {"{{0.5 | prob token=x row=0}}", "has no probs"},
        {"{{0.5 | weight at=self on=heldout}} on held-out text", "no model card"},
        {"{{0.5 | count what=poems}}", "not one of"},
        {"{{0.5 | weight at=self", "not closed"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(md, sizeof md, "%sText\n%s here.\n", cfg, BAD[i].m);
        int rc = parse(md, &ls, &dg);
        if (!rc) rc = lesson_check(&ls, &dg);
        assert_int_equal(rc, -1);
        expect_diag(&dg, 11, BAD[i].part);
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }
}

/* The trace of a one-step lesson whose block is cfg. */
static void run_block(const char *cfg, attn_trace *tr)
{
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(cfg, &ls, &dg), 0);
    assert_int_equal(lesson_step_run(&ls, 0, tr, &dg), 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

/* Checks md; want_ok: no diagnostic, else one at `line` containing part. */
static void check_md(const char *md, bool want_ok, int line, const char *part)
{
    lesson ls;
    lesson_diags dg;
    int rc = parse(md, &ls, &dg);
    if (!rc) rc = lesson_check(&ls, &dg);
    if (want_ok) {
        for (int i = 0; i < dg.n; i++) print_message("  got %d: %s\n", dg.items[i].line, dg.items[i].msg);
        assert_int_equal(rc, 0);
    } else {
        assert_int_equal(rc, -1);
        expect_diag(&dg, line, part);
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

/* weight at= averages over the query rows that have a choice, more than one
 * key the mask keeps, as the model cards do (every query but the first under
 * the causal mask): a row that can see only itself, or nothing, would add a
 * 1.0 or a 0 that says nothing about the head. */
static void weight_at_counts_rows_with_a_choice(void **state)
{
    (void)state;
    static const char *const CFG[] = {
        "# T\n\n## S\n\n```attnlab\ntokens = a b c d\ncausal = true\n```\n\n",
        "# T\n\n## S\n\n```attnlab\ntokens = a b c d\ncausal = false\n```\n\n",
        "# T\n\n## S\n\n```attnlab\ntokens = a b c d | x y\npad_side = left\ncausal = true\nbatch_row = 1\n```\n\n",
    };
    for (int c = 0; c < 3; c++) {
        attn_trace tr;
        attn_matrix w;
        run_block(CFG[c], &tr);
        assert_int_equal(attn_trace_matrix(&tr, "weights", c == 2, 0, &w), 0);
        double self, first;
        if (c == 0) { /* row 0 sees only itself: left out */
            self = (w.data[5] + w.data[10] + w.data[15]) / 3;
            first = (w.data[4] + w.data[8] + w.data[12]) / 3;
        } else if (c == 1) { /* no mask: every row chooses among four */
            self = (w.data[0] + w.data[5] + w.data[10] + w.data[15]) / 4;
            first = (w.data[0] + w.data[4] + w.data[8] + w.data[12]) / 4;
        } else { /* <pad> <pad> x y: the pads' rows see nothing, x only itself; y alone chooses */
            self = w.data[15];
            first = w.data[12];
        }
        attn_trace_free(&tr);
        char md[1024];
        snprintf(md, sizeof md, "%sSelf {{%.4f | weight at=self}}, first {{%.4f | weight at=first}}.\n", CFG[c], self,
                 first);
        check_md(md, true, 0, NULL);
    }
    /* no row with a choice: said, not averaged over nothing */
    check_md("# T\n\n## S\n\n```attnlab\ntokens = a\ncausal = true\n```\n\nX {{1 | weight at=self}}.\n", false, 10,
             "no query row with a choice of keys has a key at self");
}

/* sum of a row or column, the cells a mask keeps or dropout zeroes, all
 * heads at once, a measure on the compare view's toggled configuration, and
 * another model's card (a nested key too). */
static void measured_numbers_vocabulary(void **state)
{
    (void)state;
    const char *cfg = "# T\n\n## S\n\n```attnlab\ntokens = a b c d\ncausal = true\ntrain = true\ndropout = 0.5\n"
                      "seed = 3\n```\n\n"; /* lines 1-12 */
    attn_trace tr;
    run_block(cfg, &tr);
    attn_matrix w, wd;
    assert_int_equal(attn_trace_matrix(&tr, "weights", 0, 0, &w), 0);
    double col0 = 0;
    for (int i = 0; i < 4; i++) col0 += w.data[i * 4];
    int dropped = 0, dropped_all = 0;
    for (int h = 0; h < tr.dims.h; h++) {
        attn_trace_matrix(&tr, "weights", 0, h, &w);
        assert_int_equal(attn_trace_matrix(&tr, "weights_dropout", 0, h, &wd), 0);
        for (int i = 0; i < 16; i++) {
            int d = wd.data[i] == 0 && w.data[i] != 0;
            dropped_all += d;
            dropped += h == 0 && d;
        }
    }
    assert_true(dropped_all > dropped); /* seed 3 drops cells beyond head 0's */
    int heads = tr.dims.h, peak_prev = 0, peak_self = 0; /* head 0's rows whose largest weight is on the key before, on itself */
    attn_trace_matrix(&tr, "weights", 0, 0, &w);
    for (int i = 0; i < 4; i++) {
        int best = 0;
        for (int j = 1; j < 4; j++) best = w.data[i * 4 + j] > w.data[i * 4 + best] ? j : best;
        peak_prev += best == i - 1;
        peak_self += best == i;
    }
    assert_int_equal(peak_prev + peak_self > 0, 1);
    attn_trace_free(&tr);

    /* the weight of row a on key c without the causal mask */
    attn_trace open;
    run_block("# T\n\n## S\n\n```attnlab\ntokens = a b c d\ncausal = false\nseed = 3\n```\n\n", &open);
    attn_trace_matrix(&open, "weights", 0, 0, &w);
    double open02 = w.data[2];
    attn_trace_free(&open);

    char md[4096];
    snprintf(md, sizeof md,
             "%s"
             "Row a sums to {{1.000 | sum row=a stage=weights}}, key a gets {{%.3f | sum col=a stage=weights}};\n" /* 13 */
             "{{10 | count what=visible}} visible, {{6 | count what=masked}} masked, {{%d | count what=masked head=all}}\n"
             "in all heads; {{%d | count what=dropped}} dropped, {{%d | count what=dropped head=all}} in all heads.\n"
             "Without the mask: {{%.3f | weight row=a col=c toggle=causal}}, peaks {{%d | count what=peaks at=-1 stage=weights}}\n" /* 16 */
             "and {{%d | count what=peaks at=self stage=weights}}.\n" /* 17 */
             "\n"
             "## Toggled\n\n"                                                  /* 19 */
             "```attnlab\ncausal = false\ntrain = false\nview = compare\ncompare = causal\n```\n\n"
             "The other pane: {{6 | count what=masked toggle=causal}} and {{%.3f | weight row=a col=c step=1 toggle=causal}}.\n",
             cfg, col0, 6 * heads, dropped, dropped_all, open02, peak_prev, peak_self, open02);
    check_md(md, true, 0, NULL);

    /* a wrong number on the toggled configuration names the toggle */
    snprintf(md, sizeof md, "%sSo {{%.3f | weight row=a col=c toggle=causal}}.\n", cfg, open02 + 0.01);
    check_md(md, false, 13, "step 1 toggled: causal measures");

    /* another model's card, and a number inside one of its objects */
    /* a short folder of its own in /tmp, wherever the repository is: a
     * measure's model= takes at most 63 bytes (ATTNLAB_TEST_TMP is under the clone) */
    char dir[64] = "/tmp/attnlab-measure_card-XXXXXX", path[1100];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/card.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"heldout_loss\": 4.2813, \"config\": {\"vocab_size\": 3072}, \"heads\": "
          "[{\"layer\": 1, \"head\": 2, \"mean\": {\"-5\": 0.37}}], "
          "\"training\": {\"curve\": [{\"step\": 0}, {\"step\": 25, \"heldout_loss\": 6.5}]}}\n", f);
    fclose(f);
    snprintf(md, sizeof md,
             "%sHeld-out: {{4.28 | card key=heldout_loss model=%s on=heldout}}, {{3,072 | card key=config.vocab_size model=%s on=model}},\n"
             "{{0.37 | weight at=-5 layer=1 head=2 on=heldout model=%s}}.\n",
             cfg, dir, dir, dir);
    check_md(md, true, 0, NULL);
    snprintf(md, sizeof md, "%sHeld-out {{6.5 | card key=training.curve.1.heldout_loss model=%s on=heldout}}\n", cfg, dir);
    check_md(md, true, 0, NULL); /* a list's item by its index */
    snprintf(md, sizeof md, "%sHeld-out {{6.5 | card key=training.curve.2.heldout_loss model=%s on=heldout}}\n", cfg, dir);
    check_md(md, false, 13, "no number 'training.curve.2.heldout_loss'");
    snprintf(md, sizeof md, "%sHeld-out {{6.5 | card key=training.curve.-1.heldout_loss model=%s on=heldout}}\n", cfg, dir);
    check_md(md, false, 13, "no number");
    snprintf(md, sizeof md, "%s{{1 | card key=config.layers model=%s on=model}}\n", cfg, dir);
    check_md(md, false, 13, "no number 'config.layers'");
    snprintf(md, sizeof md, "%sHeld-out {{1 | card key=heldout_loss model=%s/none on=heldout}}\n", cfg, dir);
    check_md(md, false, 13, "model:");
    /* the one JSON rule: a card with a second object after it is refused, not read as the first */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"heldout_loss\": 4.2813}{\"heldout_loss\": 9}\n", f);
    fclose(f);
    snprintf(md, sizeof md, "%sHeld-out {{4.28 | card key=heldout_loss model=%s/. on=heldout}}\n", cfg, dir);
    check_md(md, false, 13, "data after the JSON value");
    unlink(path);
    rmdir(dir);

    static const struct {
        const char *m, *part;
    } BAD[] = {
        {"{{1 | sum row=0 col=0}}", "not both"},
        {"{{1 | sum}}", "sum needs row="},
        {"{{1 | weight row=0 col=0 head=all}}", "head=all is for count"},
        {"{{1 | count what=tokens toggle=sideways}}", "toggle: 'sideways' is not one of"},
        {"{{1 | weight row=0 col=0 model=tang}}", "model= names the card"},
        {"{{1 | count what=dropped step=2}}", "the lesson has 1 steps"},
        {"{{1 | count what=peaks}}", "what=peaks takes at="},
        {"{{1 | count what=cells at=-1}}", "what=peaks takes at="},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(md, sizeof md, "%s%s\n", cfg, BAD[i].m);
        check_md(md, false, 13, BAD[i].part);
    }
    snprintf(md, sizeof md, "# T\n\n## S\n\n```attnlab\ntokens = a b\n```\n\n{{1 | count what=dropped}}\n");
    check_md(md, false, 9, "no weights_dropout");
    /* the loss at one row of a model's text, as a quiz's answer that --check measures */
    const char *poem = "# T\n\n## S\n\n```attnlab\nmodel = tang\ntext = 床前明月光，\nstage = probs\n```\n\n";
    run_block(poem, &tr);
    const attn_tensor *lg = attn_trace_stage(&tr, -1, ATTN_STAGE_LOGITS);
    assert_non_null(lg);
    int V = tr.dims.V, next = tr.token_ids[6]; /* <s> 床 前 明 月 光 ，: the comma follows row 5 */
    attn_tensor_fill(lg, 5, 1);
    double nll = attn_token_nll(lg->data + 5 * (size_t)V, V, next);
    attn_trace_free(&tr);
    assert_true(nll > 0 && nll < 1);
    const char *quiz = "%sWhat does row 光 add to the loss?\n\n```quiz\nanswer = %s\ntolerance = 0.01\n"
                       "explain = {{%.3f | loss row=光}} nats.\n```\n";
    char answer[64];
    snprintf(answer, sizeof answer, "{{%.2f | loss row=5}}", nll);
    snprintf(md, sizeof md, quiz, poem, answer, nll);
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(md, &ls, &dg), 0);
    assert_int_equal(ls.steps[0].quizzes[0].kind, LESSON_QUIZ_NUMBER);
    assert_true(fabs(ls.steps[0].quizzes[0].answer - round(nll * 100) / 100) < 1e-9);
    assert_int_equal(lesson_check(&ls, &dg), 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);
    snprintf(answer, sizeof answer, "{{%.2f | loss row=5}}", nll + 0.05); /* a wrong answer fails at its line */
    snprintf(md, sizeof md, quiz, poem, answer, nll);
    check_md(md, false, 14, "loss row=5}}: the text shows");
    snprintf(md, sizeof md, quiz, poem, "about {{0.08 | loss row=5}}", nll);
    check_md(md, false, 14, "nothing else");
    snprintf(md, sizeof md, quiz, poem, "{{0.08 | loss row=6}}", nll);
    check_md(md, false, 14, "row 6 has no next token");

    /* the introduction's numbers are measured on step 1, or on the step= they name */
    const char *intro = "# T\n\nIntro: {{%d | count what=tokens}} and {{%d | count what=tokens step=2}}.\n\n```attnlab\n"
                        "tokens = a b\n```\n\n## S\n\nOne.\n\n## U\n\n```attnlab\ntokens = a b c\n```\n\nTwo.\n";
    snprintf(md, sizeof md, intro, 2, 3);
    check_md(md, true, 0, NULL);
    snprintf(md, sizeof md, intro, 3, 3);
    check_md(md, false, 3, "step 1 measures 2");
    snprintf(md, sizeof md, intro, 2, 2);
    check_md(md, false, 3, "step 2 measures 3");
}

/* FlashAttention's numbers: the tiles the causal mask skips (count
 * what=skipped), the bytes each path keeps (bytes what=scores, tile, kv,
 * cache), m and ℓ read as cells of tile_max and tile_sum, and the key tile a
 * step shows (`tile = N`, from 1, refused past the last). */
static void tiles_measured(void **state)
{
    (void)state;
    /* 10 tokens in tiles of 4: query tiles 0-3, 4-7, 8-9 against key tiles
     * 0-3, 4-7, 8-9; the first query tile skips two, the second one */
    const char *cfg = "# T\n\n## S\n\n```attnlab\ntokens = a b c d e f g h i j\nheads = 2\nd_model = 16\n"
                      "tiles = 4x4\nview = tiles\ntile = %s\n```\n\n"; /* 14: the text */
    char md[2048], first[16];
    snprintf(first, sizeof first, "3");
    snprintf(md, sizeof md, cfg, first);
    attn_trace tr;
    run_block(md, &tr);
    assert_int_equal(tr.dims.T, 3);
    float m00 = attn_tensor_at4(attn_trace_stage(&tr, 0, ATTN_STAGE_TILE_MAX), 0, 0, 9, 2);
    float l00 = attn_tensor_at4(attn_trace_stage(&tr, 0, ATTN_STAGE_TILE_SUM), 0, 0, 9, 2);
    attn_trace_free(&tr);
    char text[1024];
    snprintf(text, sizeof text,
             "{{3 | count what=skipped}} of {{3 | count what=key_tiles}} skipped; {{400 | bytes what=scores}} B against {{64 | bytes what=tile}} B;\n"
             "K and V {{640 | bytes what=kv}} B a head, {{1,280 | bytes what=cache}} B in all; row j: m {{%.3f | weight "
             "stage=tile_max row=9 col=2}}, ℓ {{%.3f | weight stage=tile_sum row=j col=2}}.\n",
             m00, l00);
    strcat(md, text);
    check_md(md, true, 0, NULL);
    /* with 4 positions cached: 6 queries (4-9) in tiles 4-7, 8-9; only key tile 8-9 of the first is skipped */
    snprintf(md, sizeof md, "# T\n\n## S\n\n```attnlab\ntokens = a b c d e f g h i j\nheads = 2\nd_model = 16\n"
                            "tiles = 4x4\npast = 4\n```\n\n{{1 | count what=skipped}}, {{240 | bytes what=scores}}.\n");
    check_md(md, true, 0, NULL);
    /* without the causal mask nothing is skipped; the last key tile is 3 */
    snprintf(md, sizeof md, "# T\n\n## S\n\n```attnlab\ntokens = a b c d e f g h i j\ncausal = false\ntiles = 4x4\n"
                            "```\n\n{{0 | count what=skipped}}\n");
    check_md(md, true, 0, NULL);

    snprintf(md, sizeof md, cfg, "4");
    check_md(md, false, 11, "tile: 4 is past the last key tile (this step's trace has 3)");
    snprintf(md, sizeof md, cfg, "0");
    check_md(md, false, 11, "is not a key tile from 1");
    static const struct {
        const char *m, *part;
    } BAD[] = {
        {"{{1 | bytes}}", "bytes needs what="},
        {"{{1 | bytes what=cells}}", "what: 'cells' is not one of scores, tile, kv, cache"},
        {"{{1 | count what=scores}}", "is not one of tokens"},
        {"{{1 | bytes what=scores on=heldout}}", "bytes on=heldout: it measures the step's own text"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(md, sizeof md, cfg, "1");
        strcat(md, BAD[i].m);
        strcat(md, "\n");
        check_md(md, false, 14, BAD[i].part);
    }
    /* without tiles: no tile to weigh, none skipped */
    const char *plain = "# T\n\n## S\n\n```attnlab\ntokens = a b c\n```\n\n%s\n";
    snprintf(md, sizeof md, plain, "{{64 | bytes what=tile}}");
    check_md(md, false, 9, "has no tiles");
    snprintf(md, sizeof md, plain, "{{0 | count what=skipped}}");
    check_md(md, false, 9, "has no tiles");
    snprintf(md, sizeof md, plain, "{{0 | count what=key_tiles}}");
    check_md(md, false, 9, "has no tiles");
}

/* stream: the mean loss of the model's held-out sample over an evicting
 * cache, as engine/run/stream.h computes it (here from the engine itself, on
 * the sample's first 100 tokens joined into one text: cheap enough for a
 * test), and each key's rule at the measure's line. */
static void stream_measures_the_heldout_sample(void **state)
{
    (void)state;
    attn_model m;
    attn_config cfg, run;
    attn_error err;
    int *ids, n, texts, scored;
    double loss[99], want[2];
    assert_int_equal(attn_model_load("tang", &m, &err), 0);
    attn_config_init(&cfg);
    assert_int_equal(attn_config_set(&cfg, "model", "tang", &err), 0);
    assert_int_equal(attn_model_run_config(&m, &cfg, &run, &err), 0);
    assert_int_equal(attn_stream_heldout(&m, &ids, &n, &texts, &err), 0);
    attn_stream_join(&m, ids, &n);
    assert_true(n > 100);
    for (int p = 0; p < 2; p++) { /* the window of 16, then the first 4 kept beside 12 */
        attn_stream_opts o = {p ? ATTN_STREAM_SINK : ATTN_STREAM_WINDOW, p ? 12 : 16, p ? 4 : 0};
        assert_int_equal(attn_stream_run(&m, &run, &o, ids, 100, loss, &scored, &err), 0);
        assert_int_equal(scored, 99);
        want[p] = 0;
        for (int i = 0; i < 99; i++) want[p] += loss[i] / 99;
    }
    assert_true(fabs(want[0] - want[1]) > 1e-3); /* the two caches differ, so the measure tells them apart */
    free(ids);
    attn_config_free(&run);
    attn_config_free(&cfg);
    attn_model_free(&m);

    const char *poem = "# T\n\n## S\n\n```attnlab\nmodel = tang\ntext = 床前明月光，\n```\n\n"; /* 1-9 */
    char md[1024];
    snprintf(md, sizeof md,
             "%sOn held-out poems, {{%.4f | stream policy=window window=16 one_text=true tokens=100 on=heldout}} and\n"
             "on held-out poems {{%.4f | stream policy=sink window=12 keep_first=4 one_text=true tokens=100 "
             "on=heldout}}.\n", poem, want[0], want[1]);
    check_md(md, true, 0, NULL);
    snprintf(md, sizeof md, "%sOn held-out poems, {{%.4f | stream policy=window window=16 one_text=true tokens=100 "
             "on=heldout}}.\n", poem, want[1]);
    check_md(md, false, 10, "measures"); /* the sink's figure is not the window's */
    static const struct {
        const char *m, *part;
    } BAD[] = {
        {"{{1 | stream policy=window on=heldout}}", "policy=window needs window="},
        {"{{1 | stream policy=sink window=8 on=heldout}}", "policy=sink needs keep_first="},
        {"{{1 | stream policy=all window=8 on=heldout}}", "policy=all takes no window="},
        {"{{1 | stream policy=window window=8 keep_first=2 on=heldout}}", "policy=window takes no keep_first="},
        {"{{1 | stream policy=sideways window=8 on=heldout}}", "'sideways' is not all, window or sink"},
        {"{{1 | stream window=8 on=heldout}}", "stream needs policy="},
        {"{{1 | stream policy=window window=8}}", "say so with on=heldout"},
        {"{{1 | stream policy=window window=8 one_text=maybe on=heldout}}", "not true or false"},
        {"{{1 | count what=tokens window=8}}", "are stream's"},
        {"{{1 | stream policy=sink window=4 keep_first=4 tokens=100 on=heldout}}", "must be below --window"},
        {"{{1 | stream policy=window window=8 tokens=1 on=heldout}}", "nothing to predict"},
        {"{{1 | stream policy=window window=8 tokens=20 model=nosuchmodel on=heldout}}", "model:"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(md, sizeof md, "%sHeld-out: %s\n", poem, BAD[i].m);
        check_md(md, false, 10, BAD[i].part);
    }
    check_md("# T\n\n## S\n\n```attnlab\ntokens = a b\n```\n\nHeld-out: {{1 | stream policy=window window=8 "
             "on=heldout}}\n", false, 9, "stream needs a model");
}

/* What a lesson wrote, quoted in a message, is cut to its first 40 bytes at
 * most, on a character's boundary and marked "…": a long argument neither
 * crowds the reason out of the message (it was quoted whole, bounded only by
 * the buffer) nor ends it inside a character. */
static void long_arguments_quoted_by_their_start(void **state)
{
    (void)state;
    char long_cjk[700] = "", long_ascii[700] = "", spec[1600], why[512];
    for (int i = 0; i < 66; i++) strcat(long_cjk, "日本語"); /* 594 bytes */
    memset(long_ascii, 'x', 600);
    /* 13 characters (39 bytes) of 日本語…: the fourteenth would end at byte 42 */
    const char *cjk13 = "日本語日本語日本語日本語日…";
    static const struct {
        const char *fmt, *head, *tail;
    } CASES[] = {
        {"0.5 | count what=%s", "what: '", "' is not one of tokens, chars, letters, punct, cells, masked, visible, "
                                          "dropped, peaks, layers, heads, kv_heads, skipped, key_tiles, kv_bytes"},
        {"0.5 | count what=kv_bytes mode=%s", "mode: '", "' is not one of mha, gqa, mqa, mla"},
        {"0.5 | weight at=self %s=1", "unknown measure key '", "'"},
        {"0.5 | %s at=self", "'", "' is not a measure (weight, prob, rank, loss, card, count, sum, bytes, stream, max, "
                                  "min)"},
        {"0.5 | weight at=self %s", "'", "' is not key=value"},
        {"0.5 | weight at=self on=%s", "on: '", "' is not one of heldout, training, random, model, text (lessons/sources.tsv)"},
        {"0.5 | weight row=%s col=0", "row: '", "' is longer than 63 bytes"},
        {"0.5 | weight at=self layer=%s", "layer: '", "' is not a count from 0"},
        {"0.5 | weight at=self toggle=%s", "toggle: '", "' is not one of "},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        for (int ascii = 0; ascii < 2; ascii++) {
            lesson_measure m;
            char want[1024];
            snprintf(spec, sizeof spec, CASES[i].fmt, ascii ? long_ascii : long_cjk);
            assert_int_equal(lesson_measure_parse(spec, strlen(spec), 1, &m, why, sizeof why), -1);
            snprintf(want, sizeof want, "%s%s%s", CASES[i].head, ascii ? "" : cjk13, CASES[i].tail);
            if (ascii) snprintf(want, sizeof want, "%s%.40s…%s", CASES[i].head, long_ascii, CASES[i].tail);
            bool whole = !strcmp(CASES[i].tail, "' is not one of ") ? !strncmp(why, want, strlen(want))
                                                                    : !strcmp(why, want);
            if (!whole || !attn_utf8_valid(why, strlen(why))) fail_msg("case %zu: got \"%s\", want \"%s\"", i, why, want);
        }
    /* the number shown, not zero-terminated in the lesson's text */
    snprintf(spec, sizeof spec, "1.2.%s | count what=tokens", long_cjk);
    lesson_measure m;
    assert_int_equal(lesson_measure_parse(spec, strlen(spec), 1, &m, why, sizeof why), -1);
    assert_string_equal(why, "'1.2.日本語日本語日本語日本語…' is not a number (a measure shows one number)");
}

/* A quoted figure names its source (lessons/sources.tsv, source.h): a card
 * figure says on= which data its key was measured on, and its sentence says
 * so in the lesson's language. Issue 32 found "this head's small plot says
 * 0.39: that one is measured on the training text" of a series measured on
 * the held-out sample; both ways of writing it are refused at its line. */
static void figures_name_their_source(void **state)
{
    (void)state;
    const char *head = "# T\n\n## S\n\n```attnlab\ntokens = a b c\n```\n\n"; /* lines 1-8, the figure on 9 */
    static const struct {
        const char *path, *line, *part; /* part NULL: accepted */
    } CASES[] = {
        /* the sentence: the plot's series is the held-out sample's */
        {"t.md", "This head's small plot says {{0.39 | card key=training.curve.7.previous_token.value on=heldout}}: "
                 "that one is measured on the training text.",
         "measured on the held-out text, which the sentence does not say"},
        {"t.md", "This head's small plot says {{0.39 | card key=training.curve.7.previous_token.value on=training}}: "
                 "that one is measured on the training text.",
         "is measured on=heldout, not on=training"},
        {"t.md", "This head's small plot says {{0.39 | card key=training.curve.7.previous_token.value on=heldout}}: "
                 "the small plots are measured on the held-out sample.", NULL},
        /* the sentence holding it, not the paragraph's other one */
        {"t.md", "Measured on held-out poems. The plot says {{0.39 | card key=training.curve.7.previous_token.value "
                 "on=heldout}}.", "which the sentence does not say"},
        /* a card figure without on=, a key the table lacks, a source that is not the key's */
        {"t.md", "The training loss is {{4.03 | card key=train_loss}}.", "say where it was measured: on=training"},
        {"t.md", "Held-out: {{4.03 | card key=heldout_loss_new on=heldout}}.", "lessons/sources.tsv does not say"},
        {"t.md", "A vocabulary of {{3,072 | card key=config.vocab_size on=heldout}}.", "is measured on=model"},
        {"t.md", "A vocabulary of {{3,072 | card key=config.vocab_size on=model}}.", NULL},
        {"t.md", "Random rows said twice: {{0.06 | card key=training.curve.9.induction.value on=random}}.", NULL},
        {"t.md", "On held-out text {{0.06 | card key=training.curve.9.induction.value on=random}}.",
         "measured on rows of random tokens said twice"},
        /* measures of the step's own text are on=text */
        {"t.md", "A loss of {{0.5 | loss on=training}}.", "loss on=training: it measures the step's own text"},
        {"t.md", "Held-out {{0.5 | weight at=-1 on=training}}.", "weight on=training"},
        {"t.md", "Here {{0.5 | weight at=-1 on=text}}.", NULL},
        /* the lesson's language: a Chinese lesson names it in Chinese */
        {"lessons/zh/t.md", "在留出文本上是 {{4.28 | card key=heldout_loss on=heldout}}。", NULL},
        {"lessons/zh/t.md", "held-out：{{4.28 | card key=heldout_loss on=heldout}}。", "(留出|没见过|没训练过:"},
        {"lessons/en/t.md", "在留出文本上是 {{4.28 | card key=heldout_loss on=heldout}}.", "(held-out|held out"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char md[1024];
        snprintf(md, sizeof md, "%s%s\n", head, CASES[i].line);
        lesson ls;
        lesson_diags dg = {0};
        int rc = lesson_parse(md, strlen(md), CASES[i].path, &ls, &dg);
        if (!CASES[i].part && rc) {
            for (int k = 0; k < dg.n; k++) print_message("  got %d: %s\n", dg.items[k].line, dg.items[k].msg);
            fail_msg("case %zu refused", i);
        }
        if (CASES[i].part) {
            if (!rc) fail_msg("case %zu accepted", i);
            expect_diag(&dg, 9, CASES[i].part);
        }
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }
    /* in a quiz, the question may name it for its choices and their explanations */
    const char *quiz = "# T\n\n## S\n\nWhat training loss did it reach?\n\n"
                       "- [x] about {{4.0 | card key=train_loss on=training}}\n  - it is {{4.03 | card key=train_loss on=training}}\n"
                       "- [ ] about 9\n  - too high\n";
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(quiz, &ls, &dg), 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

/* count what=kv_bytes: the KV cache's bytes per token of the step's
 * configuration, or of its heads in another mode (MHA 2·h·dₖ, GQA the
 * decode panel's g, MQA 2·dₖ, MLA R + D, all × layers × 4 bytes), computed
 * from the trace's sizes; max and min: the score range, the cells the mask
 * sets to −∞ left out, one head or every head. */
static void measured_cache_bytes_and_range(void **state)
{
    (void)state;
    /* d = 32, h = 4, dₖ = 8: MHA 2·4·8·4 = 256 B, GQA (g = 2) 128, MQA 64, MLA (12 + 4)·4 = 64 */
    const char *cfg = "# T\n\n## S\n\n```attnlab\ntokens = a b c d\nd_model = 32\nheads = 4\nmode = mla\n"
                      "kv_rank = 12\nrope_dim = 4\nstage = masked_scores\n```\n\n"; /* lines 1-14 */
    attn_trace tr;
    run_block(cfg, &tr);
    double hi = -INFINITY, lo = INFINITY, hi_all = -INFINITY, lo_all = INFINITY;
    for (int h = 0; h < tr.dims.h; h++) {
        attn_matrix m;
        assert_int_equal(attn_trace_matrix(&tr, "masked_scores", 0, h, &m), 0);
        for (int i = 0; i < m.rows * m.cols; i++) {
            if (!isfinite(m.data[i])) continue; /* the causal mask's −∞ */
            hi_all = fmax(hi_all, m.data[i]), lo_all = fmin(lo_all, m.data[i]);
            if (h == 1) hi = fmax(hi, m.data[i]), lo = fmin(lo, m.data[i]);
        }
    }
    attn_trace_free(&tr);
    char md[4096];
    snprintf(md, sizeof md,
             "%s"
             "{{64 | count what=kv_bytes}} B, MHA {{256 | count what=kv_bytes mode=mha}}, GQA\n" /* 15 */
             "{{128 | count what=kv_bytes mode=gqa}}, MQA {{64 | count what=kv_bytes mode=mqa}}.\n"
             "Head 1 from {{%.4f | min head=1}} to {{%.4f | max head=1}}, all from\n" /* 17 */
             "{{%.4f | min head=all}} to {{%.4f | max head=all}}.\n\n"
             "## GQA\n\n```attnlab\nmode = gqa\nkv_heads = 2\nkv_rank = 0\nrope_dim = 0\nstage = scores\n```\n\n" /* 20 */
             "{{128 | count what=kv_bytes}} and {{64 | count what=kv_bytes mode=mla step=1}}.\n",
             cfg, lo, hi, lo_all, hi_all);
    check_md(md, true, 0, NULL);

    /* a wrong figure, mode=mla on a step without a latent, and a mode= elsewhere, each at its line */
    snprintf(md, sizeof md, "%sMHA keeps {{512 | count what=kv_bytes mode=mha}} B.\n", cfg);
    check_md(md, false, 15, "measures 256");
    snprintf(md, sizeof md, "%s## G\n\n```attnlab\nmode = mha\nkv_rank = 0\nrope_dim = 0\n```\n\n"
             "So {{64 | count what=kv_bytes mode=mla}}.\n", cfg);
    check_md(md, false, 23, "needs an MLA step");
    snprintf(md, sizeof md, "%sSo {{4 | count what=tokens mode=mha}}.\n", cfg);
    check_md(md, false, 15, "mode= is for count what=kv_bytes");
    snprintf(md, sizeof md, "%sSo {{4 | count what=kv_bytes mode=gq}}.\n", cfg);
    check_md(md, false, 15, "is not one of mha, gqa, mqa, mla");
    snprintf(md, sizeof md, "%sSo {{%.4f | max head=1}}.\n", cfg, hi + 0.01);
    check_md(md, false, 15, "measures");
}

/* A measure's batch row, head and layer must be those of the trace it
 * measures: each outside it is one line at the measure's line. Before, batch=
 * was never checked (the tokens' lengths, strings and ids read past their
 * rows: a crash, or garbage with batch=1 on a one-row trace), and head= or
 * layer= were clamped or ignored (issue 37, findings 8 and 14). */
static void measure_arguments_in_range(void **state)
{
    (void)state;
    const char *cfg = "# T\n\n## S\n\n```attnlab\ntokens = a b c\nheads = 4\n```\n\n"; /* lines 1-9 */
    static const struct {
        const char *m, *part;
    } BAD[] = {
        {"{{6 | count what=tokens batch=1000000}}", "batch 1000000 is outside the trace's 1 batch row"},
        {"{{3 | count what=tokens batch=1}}", "batch 1 is outside the trace's 1 batch row"},
        {"{{3 | count what=chars batch=1}}", "batch 1 is outside"},
        {"{{3 | count what=letters batch=2}}", "batch 2 is outside"},
        {"{{1 | sum row=a batch=5}}", "batch 5 is outside"},
        {"{{1 | weight row=a col=a batch=5}}", "batch 5 is outside"},
        {"{{0.5 | weight row=0 col=0 head=1000000}}", "head 1000000 is outside the trace's 4 heads"},
        {"{{0.5 | weight row=0 col=0 head=4}}", "head 4 is outside the trace's 4 heads"},
        {"{{3 | count what=masked head=9}}", "head 9 is outside"},
        {"{{0.5 | weight row=0 col=0 layer=1048576}}", "layer 1048576 is outside the trace's 1 layer"},
        {"{{3 | count what=masked layer=1}}", "layer 1 is outside"},
        {"{{3 | count what=peaks at=self layer=2}}", "layer 2 is outside"},
    };
    char md[1024];
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        snprintf(md, sizeof md, "%s%s\n", cfg, BAD[i].m);
        check_md(md, false, 10, BAD[i].part);
    }
    /* the last of each is in range */
    snprintf(md, sizeof md, "%s{{3 | count what=tokens batch=0}} {{3 | count what=masked head=3 layer=0}}\n", cfg);
    check_md(md, true, 0, NULL);
    /* a second row, and a toggled trace measured as its own */
    const char *two = "# T\n\n## S\n\n```attnlab\ntokens = a b c | d e\n```\n\n"; /* lines 1-8 */
    snprintf(md, sizeof md, "%s{{2 | count what=tokens batch=1}} {{5 | count what=chars batch=1}}\n", two);
    check_md(md, false, 9, "measures 2"); /* row 1's 2 tokens, d e: 2 characters, not 5 */
    snprintf(md, sizeof md, "%s{{2 | count what=tokens batch=2 toggle=causal}}\n", two);
    check_md(md, false, 9, "batch 2 is outside the trace's 2 batch rows");

    /* a model's rows: the loss at a row, the whole loss, prob and rank */
    const char *poem = "# T\n\n## S\n\n```attnlab\nmodel = tang\ntext = 床前明月光，\n```\n\n"; /* 1-9 */
    static const struct {
        const char *m, *part;
    } MODEL[] = {
        {"{{0.5 | loss row=1 batch=1000000}}", "batch 1000000 is outside"},
        {"{{0.5 | loss row=1 batch=1}}", "batch 1 is outside"},
        {"{{0.5 | loss batch=3}}", "batch 3 is outside"},
        {"{{0.5 | prob token=， row=5 batch=2}}", "batch 2 is outside"},
        {"{{1 | rank token=， row=5 head=64}}", "head 64 is outside"},
        {"{{1 | rank token=， row=5 layer=9}}", "layer 9 is outside"},
    };
    for (size_t i = 0; i < sizeof MODEL / sizeof MODEL[0]; i++) {
        snprintf(md, sizeof md, "%s%s\n", poem, MODEL[i].m);
        check_md(md, false, 10, MODEL[i].part);
    }
}

/* One file asked for as a card and as a tokenizer (a model folder whose
 * card.json links to its tokenizer.json): each read as what it is asked
 * for, never the one given for the other (it was: a NULL tokenizer read). */
static void one_file_as_card_and_tokenizer(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char dir[1024], tang[4096], from[4200], to[1100];
    attn_error err;
    assert_int_equal(attn_model_find("tang", tang, sizeof tang, &err), ATTN_OK);
    snprintf(dir, sizeof dir, "%s/measure_kinds_%d", tmp ? tmp : "/tmp", (int)getpid());
    mkdir(dir, 0700);
    static const char *const FILES[] = {"config.json", "model.safetensors", "tokenizer.json"};
    for (int i = 0; i < 3; i++) {
        snprintf(from, sizeof from, "%s/%s", tang, FILES[i]);
        snprintf(to, sizeof to, "%s/%s", dir, FILES[i]);
        assert_int_equal(symlink(from, to), 0);
    }
    snprintf(to, sizeof to, "%s/card.json", dir);
    assert_int_equal(symlink("tokenizer.json", to), 0);
    char md[2048];
    for (int order = 0; order < 2; order++) { /* the card first, then the tokenizer first */
        const char *card = "{{4.3 | card key=heldout_loss on=heldout}}", *prob = "{{0.1 | prob token=， row=0}}";
        snprintf(md, sizeof md, "# T\n\n## S\n\n```attnlab\nmodel = %s\ntext = 床前明月光，\n```\n\nHeld-out %s\n%s\n", dir,
                 order ? prob : card, order ? card : prob);
        lesson ls;
        lesson_diags dg;
        assert_int_equal(parse(md, &ls, &dg), 0);
        lesson_check_work w = {0};
        lesson_check_counted(&ls, &dg, &w);
        assert_int_equal(w.tokenizer_loads, 1);
        assert_int_equal(w.card_loads, 1);
        bool card_said = false;
        for (int i = 0; i < dg.n; i++) {
            if (strstr(dg.items[i].msg, "heldout_loss")) card_said = true; /* no such number in that "card" */
            if (strstr(dg.items[i].msg, "prob")) /* a value measured with the tokenizer, not a reading failure */
                assert_non_null(strstr(dg.items[i].msg, "the text shows 0.1 but step 1 measures"));
        }
        assert_true(card_said);
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(to, sizeof to, "%s/%s", dir, FILES[i]);
        unlink(to);
    }
    snprintf(to, sizeof to, "%s/card.json", dir);
    unlink(to);
    rmdir(dir);
}

/* A check reads each model's tokenizer and each card once, however many
 * measures read them (issue 37, finding 9: 1,000 prob measures reloaded
 * GPT-2's tokenizer 1,000 times, past 60 s; 200 card measures reparsed a
 * 7.5 MB card 200 times). */
static void measure_files_read_once(void **state)
{
    (void)state;
    /* a short folder of its own in /tmp, wherever the repository is: a
     * measure's model= takes at most 63 bytes (ATTNLAB_TEST_TMP is under the clone) */
    char dir[64] = "/tmp/attnlab-measure_once-XXXXXX", path[1100];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/card.json", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"heldout_loss\": 4.2813, \"heads\": [{\"layer\": 1, \"head\": 2, \"mean\": {\"-5\": 0.37}}]}\n", f);
    fclose(f);
    /* two steps, one with the compare view's toggle: three traces, twelve prob and rank
     * measures on tang's tokenizer; six card measures on two cards (tang's and dir's,
     * named two ways), and a card that is not there, asked for three times */
    char *md = malloc(1 << 14), *at = md;
    at += sprintf(at, "# T\n\n## S\n\n```attnlab\nmodel = tang\ntext = 床前明月光，\n```\n\n");
    for (int i = 0; i < 4; i++)
        at += sprintf(at, "{{0.1 | prob token=， row=%d}} {{1 | rank token=光 row=%d}}\n", i, i);
    at += sprintf(at, "Held-out {{4.3 | card key=heldout_loss on=heldout}} {{4.28 | card key=heldout_loss model=%s on=heldout}}\n"
                      "{{0.37 | weight at=-5 layer=1 head=2 on=heldout model=%s/}}\n"
                      "{{4.28 | card key=heldout_loss model=%s/. on=heldout}}\n",
                  dir, dir, dir);
    for (int i = 0; i < 3; i++) at += sprintf(at, "{{1 | card key=heldout_loss on=heldout model=%s/none}}\n", dir);
    at += sprintf(at, "\n## U\n\n```attnlab\ncausal = false\nview = compare\n```\n\n");
    for (int i = 0; i < 2; i++)
        at += sprintf(at, "{{0.1 | prob token=， row=%d}} {{0.1 | prob token=， row=%d toggle=causal}}\n"
                          "{{1 | rank token=光 row=%d step=1}} held-out {{4.3 | card key=heldout_loss step=1 on=heldout}}\n",
                      i, i, i);
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(md, &ls, &dg), 0);
    lesson_check_work w = {0};
    lesson_check_counted(&ls, &dg, &w); /* some numbers are wrong: it is the reading that counts */
    for (int i = 0; i < dg.n; i++) { /* every model found, but the one not there */
        const char *msg = dg.items[i].msg;
        assert_true(!strstr(msg, "none") == !strstr(msg, "model:"));
        assert_null(strstr(msg, "card.json"));
    }
    assert_int_equal(w.tokenizer_loads, 1);
    assert_int_equal(w.card_loads, 2);
    lesson_free(&ls);
    lesson_diags_free(&dg);
    free(md);
    unlink(path);
    rmdir(dir);
}

/* lesson_checker, a step a call, says what lesson_check says: the same
 * problems at the same lines, in the same order, its steps each a call. */
static void checked_a_step_at_a_time(void **state)
{
    (void)state;
    static const char *const MDS[] = {
        /* a problem in steps 2 and 4, a measure past the last step, a good step between */
        "# T\n\nIntro {{2 | count what=tokens step=9}}.\n\n```attnlab\ntokens = a b\n```\n\n## One\n\nText.\n\n"
        "## Two\n\n```attnlab\nstage = q_rope\n```\n\nText.\n\n## Three\n\n```attnlab\nhead = 1\n```\n\nText.\n\n"
        "## Four\n\n```attnlab\nheads = 8\nkv_heads = 3\n```\n\nText.\n",
        /* all good */
        "# T\n\n## One\n\n{{2 | count what=tokens}} tokens.\n\n```attnlab\ntokens = a b\n```\n\n## Two\n\nText.\n",
        /* a setting that fails fails every step after it: said once, and no step is run */
        "# T\n\n```attnlab\ncausal = maybe\n```\n\n## One\n\nText.\n\n## Two\n\nText.\n",
    };
    for (size_t i = 0; i < sizeof MDS / sizeof MDS[0]; i++) {
        lesson ls;
        lesson_diags whole, steps;
        assert_int_equal(parse(MDS[i], &ls, &whole), 0);
        lesson_check_work w1 = {0}, w2 = {0};
        int rc = lesson_check_counted(&ls, &whole, &w1);
        steps = (lesson_diags){0};
        lesson_checker c;
        lesson_checker_init(&c, &ls, &w2, &steps);
        int calls = 1;
        while (lesson_checker_step(&c, &steps)) calls++;
        assert_int_equal(lesson_checker_end(&c, &steps), rc);
        if (i < 2) assert_int_equal(calls, ls.n_steps); /* one a step, the last saying none is left */
        assert_int_equal(w1.runs, w2.runs);
        assert_int_equal(w1.settings, w2.settings);
        assert_int_equal(whole.n, steps.n);
        for (int k = 0; k < whole.n; k++) {
            assert_int_equal(whole.items[k].line, steps.items[k].line);
            assert_string_equal(whole.items[k].msg, steps.items[k].msg);
        }
        if (i == 0) {
            assert_int_equal(rc, -1);
            expect_diag(&steps, 16, "rope = true");
            expect_diag(&steps, 33, "must divide");
            expect_diag(&steps, 3, "the lesson has 4 steps");
        }
        if (i == 1) assert_int_equal(rc, 0);
        if (i == 2) assert_int_equal(w2.runs, 0);
        /* init and end alone check the whole lesson */
        lesson_diags again = {0};
        lesson_checker_init(&c, &ls, NULL, &again);
        assert_int_equal(lesson_checker_end(&c, &again), rc);
        assert_int_equal(again.n, whole.n);
        lesson_diags_free(&again);
        lesson_diags_free(&whole);
        lesson_diags_free(&steps);
        lesson_free(&ls);
    }
}

/* Huge lines, deep nesting, NULs, entities: clear answers, no crash. */
static void hostile_input(void **state)
{
    (void)state;
    size_t n = 300000;
    char *big = malloc(n + 64);
    strcpy(big, "# T\n\n## S\n\n");
    size_t at = strlen(big);
    memset(big + at, 'x', n - at);
    big[n] = '\0';
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(big, &ls, &dg), 0);
    assert_int_equal(strlen(ls.steps[0].blocks[0].text), n - at);
    lesson_free(&ls);
    lesson_diags_free(&dg);
    /* a huge attnlab value is refused by the engine, not by a crash */
    snprintf(big, n, "# T\n\n## S\n\n```attnlab\nheads = ");
    at = strlen(big);
    memset(big + at, '9', 5000);
    strcpy(big + at + 5000, "\n```\n");
    assert_int_equal(parse(big, &ls, &dg), 0);
    assert_int_equal(lesson_check(&ls, &dg), -1);
    expect_diag(&dg, 6, "heads");
    lesson_free(&ls);
    lesson_diags_free(&dg);
    free(big);

    /* too large */
    size_t huge = LESSON_MAX_BYTES + 10;
    char *h = calloc(1, huge + 1);
    memset(h, 'a', huge);
    assert_int_equal(lesson_parse(h, huge, "h.md", &ls, &dg), -1);
    expect_diag(&dg, 0, "too large");
    lesson_free(&ls);
    lesson_diags_free(&dg);
    free(h);

    /* a NUL byte */
    static const char nul[] = "# T\n\n## S\n\na\0b\n";
    dg = (lesson_diags){0};
    assert_int_equal(lesson_parse(nul, sizeof nul - 1, "n.md", &ls, &dg), -1);
    expect_diag(&dg, 5, "NUL");
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* a byte-order mark, as Notepad saves UTF-8, is not text: the title is read and the lines
     * are the editor's (issue 37, finding 25: "no title") */
    assert_int_equal(parse("\xEF\xBB\xBF# T\n\n## S\n\n```attnlab\nheads = 3\nkv_heads = 2\n```\n", &ls, &dg), 0);
    assert_string_equal(ls.title, "T");
    assert_int_equal(ls.title_line, 1);
    assert_int_equal(lesson_check(&ls, &dg), -1);
    expect_diag(&dg, 7, "must divide");
    lesson_free(&ls);
    lesson_diags_free(&dg);
    /* only at the start: a second one is text */
    assert_int_equal(parse("\xEF\xBB\xBF\xEF\xBB\xBF# T\n\n## S\n", &ls, &dg), -1);
    expect_diag(&dg, 1, "no title");
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* lists nested deeper than the parser keeps */
    char deep[8192] = "# T\n\n## S\n\n";
    for (int i = 0; i < 40; i++) {
        size_t l = strlen(deep);
        for (int k = 0; k < 2 * i; k++) deep[l++] = ' ';
        strcpy(deep + l, "- a\n");
    }
    parse(deep, &ls, &dg);
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* a step heading inside a task list: each step keeps its own choice quiz
     * (found by the fuzzer: the old step's quiz index was used in the new step) */
    assert_int_equal(parse("# T\n\n## S1\n\nQ?\n\n- [ ] a\n- ## S2\n- [x] b\n- [ ] c\n", &ls, &dg), -1);
    assert_int_equal(ls.n_steps, 2);
    expect_diag(&dg, 7, "no right answer"); /* S1's quiz ended at the heading */
    for (int s = 0; s < 2; s++) {
        const lesson_step *st = &ls.steps[s];
        assert_int_equal(st->n_quizzes, 1);
        assert_int_equal(st->quizzes[0].n_choices, s ? 2 : 1);
        assert_int_equal(st->quizzes[0].n_correct, s ? 1 : 0);
        int n_quiz_blocks = 0;
        for (int b = 0; b < st->n_blocks; b++) {
            if (st->blocks[b].kind == LESSON_BLOCK_CHOICE || st->blocks[b].kind == LESSON_BLOCK_QUIZ)
                assert_int_equal(st->blocks[b].quiz, 0);
            n_quiz_blocks += st->blocks[b].kind == LESSON_BLOCK_QUIZ;
        }
        assert_int_equal(n_quiz_blocks, 1);
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* a measure whose number runs over lines (a line break, U+2028) is reported on one line, its
     * quote cut at 40 bytes and never inside a character (found by the fuzzer:
     * the message carried the lesson's line breaks) */
    assert_int_equal(parse("# T\n\n## S\n\nnow {{the\nmask\xe2\x80\xa8T | weight row=0 col=0}}\n"
                           "and {{注意力机制的权重注意力机制的权重注意力机制 | weight row=0 col=0}}\n",
                           &ls, &dg), -1);
    expect_diag(&dg, 5, "'the mask T' is not a number");
    expect_diag(&dg, 7, "is not a number");
    for (int i = 0; i < dg.n; i++) {
        const char *m = dg.items[i].msg;
        assert_null(strpbrk(m, "\n\t\r"));
        assert_null(strstr(m, "\xe2\x80\xa8")); /* U+2028, a line separator */
        for (utf8proc_ssize_t k = 0, len; m[k]; k += len) {
            utf8proc_int32_t c;
            len = utf8proc_iterate((const utf8proc_uint8_t *)m + k, -1, &c);
            assert_true(len > 0);
        }
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* a line break between two CJK characters is no space; elsewhere it is one,
     * and it keeps the style before it */
    assert_int_equal(parse("# T\n\n## S\n\n注意\n力 and\nEnglish 词\n语。\n下一句\n*强调*\n尾 `a`\nb\n", &ls, &dg), 0);
    assert_string_equal(ls.steps[0].blocks[0].text, "注意力 and English 词语。下一句强调尾 a b");
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* wide is attn_utf8_is_wide: Hangul, full-width punctuation and emoji join;
     * half-width katakana and math letters are narrow */
    assert_int_equal(parse("# T\n\n## S\n\n한국\n어，\n好😀\n😀 ｱ\nｲ 𝐴\n中\n", &ls, &dg), 0);
    assert_string_equal(ls.steps[0].blocks[0].text, "한국어，好😀😀 ｱ ｲ 𝐴 中");
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* a code span of spaces at the end of a paragraph is trimmed away with its span */
    assert_int_equal(parse("# T\n\n## S\n\nnone\n` `\n", &ls, &dg), 0);
    assert_string_equal(ls.steps[0].blocks[0].text, "none");
    assert_int_equal(ls.steps[0].blocks[0].n_spans, 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* entities and HTML */
    assert_int_equal(parse("# A &amp; B\n\n## S\n\nx &lt; y &#x221E; <b>bold</b>\n", &ls, &dg), 0);
    assert_string_equal(ls.title, "A & B");
    assert_non_null(strstr(ls.steps[0].blocks[0].text, "x < y ∞"));
    lesson_free(&ls);
    lesson_diags_free(&dg);

    /* a missing file */
    assert_int_equal(lesson_load("/nonexistent/lesson.md", &ls, &dg), -1);
    expect_diag(&dg, 0, "No such file or directory");
    lesson_free(&ls);
    lesson_diags_free(&dg);
}

/* Cell answers follow the live trace, and grading counts right / wrong / missing. */
static void cell_answers_and_grading(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr;
    attn_error err;
    attn_config_init(&c);
    attn_config_set(&c, "tokens", "a b c d", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), 0);
    lesson_quiz q = {.kind = LESSON_QUIZ_CELLS, .rule = LESSON_CELLS_MASKED};
    unsigned char ans[16], pick[16] = {0};
    int rows, cols;
    char why[200];
    assert_int_equal(lesson_quiz_cells(&q, &tr, "weights", 0, 0, 1, ans, &rows, &cols, why, sizeof why), 6);
    assert_int_equal(rows, 4);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) assert_int_equal(ans[i * 4 + j], j > i);
    pick[1] = pick[2] = pick[4] = 1; /* two right, one wrong (below the diagonal) */
    lesson_grade g = lesson_grade_cells(&q, ans, pick, 4, 4);
    assert_false(g.right);
    assert_int_equal(g.n_right, 2);
    assert_int_equal(g.n_wrong, 1);
    assert_int_equal(g.n_missed, 4);
    memcpy(pick, ans, 16);
    assert_true(lesson_grade_cells(&q, ans, pick, 4, 4).right);
    q.rule = LESSON_CELLS_UNMASKED;
    assert_int_equal(lesson_quiz_cells(&q, &tr, "scores", 0, 0, 0, NULL, NULL, NULL, why, sizeof why), 10);
    /* masked needs a query × key stage */
    q.rule = LESSON_CELLS_MASKED;
    assert_int_equal(lesson_quiz_cells(&q, &tr, "q", 0, 0, 0, NULL, NULL, NULL, why, sizeof why), -1);
    assert_non_null(strstr(why, "query × key"));

    /* argmax: one per row, at the row's largest weight */
    q.rule = LESSON_CELLS_ARGMAX;
    assert_int_equal(lesson_quiz_cells(&q, &tr, "weights", 0, 0, 2, ans, NULL, NULL, why, sizeof why), 4);
    attn_matrix m;
    attn_trace_matrix(&tr, "weights", 0, 2, &m);
    memset(pick, 0, 16);
    for (int i = 0; i < 4; i++) {
        int best = 0;
        for (int j = 1; j < 4; j++)
            if (m.data[i * 4 + j] > m.data[i * 4 + best]) best = j;
        assert_int_equal(ans[i * 4 + best], 1);
        pick[i * 4 + best] = 1;
    }
    assert_true(lesson_grade_cells(&q, ans, pick, 4, 4).right);
    pick[3 * 4 + 3] ^= 1; /* a second pick in the last row, or none: wrong */
    assert_false(lesson_grade_cells(&q, ans, pick, 4, 4).right);
    attn_trace_free(&tr);

    /* the answer follows the configuration: causal off masks nothing */
    attn_config_set(&c, "causal", "false", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), 0);
    q.rule = LESSON_CELLS_MASKED;
    assert_int_equal(lesson_quiz_cells(&q, &tr, "weights", 0, 0, 0, NULL, NULL, NULL, why, sizeof why), 0);
    attn_trace_free(&tr);

    /* left padding + causal: rows with nothing to attend to are all masked */
    attn_config_set(&c, "causal", "true", &err);
    attn_config_set(&c, "pad_side", "left", &err);
    attn_config_set(&c, "tokens", "a b c | d", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), 0);
    q.rule = LESSON_CELLS_MASKED;
    assert_int_equal(lesson_quiz_cells(&q, &tr, "weights", 0, 1, 0, NULL, NULL, NULL, why, sizeof why), 3 + 3 + 2);
    attn_trace_free(&tr);
    attn_config_free(&c);
}

/* A cell quiz's region (rows = A..B, cols = A..B): parsed, refused with its
 * line when malformed or outside the picture, and the only place graded. */
static void quiz_region(void **state)
{
    (void)state;
    lesson ls;
    lesson_diags dg;
    const char *md = "# T\n\n## S\n\n```attnlab\ntokens = a b c d e f\n```\n\n"
                     "```quiz\nclick = argmax\nrows = 2..4\ncols = 1\n```\n";
    assert_int_equal(parse(md, &ls, &dg), 0);
    const lesson_quiz *q = &ls.steps[0].quizzes[0];
    assert_int_equal(q->rows[0], 2);
    assert_int_equal(q->rows[1], 5);
    assert_int_equal(q->cols[0], 1);
    assert_int_equal(q->cols[1], 2);
    assert_int_equal(q->rows_line, 11);
    assert_int_equal(q->cols_line, 12);
    assert_true(lesson_quiz_has_region(q));
    assert_int_equal(lesson_check(&ls, &dg), 0);
    lesson_free(&ls);
    lesson_diags_free(&dg);

    static const struct {
        const char *keys;
        int line;
        const char *part;
    } BAD[] = {
        {"click = argmax\nrows = 4..2\n", 7, "rows: '4..2' is not a range FIRST..LAST"},
        {"click = argmax\nrows = 1-3\n", 7, "rows: '1-3' is not a range"},
        {"click = argmax\ncols = ..3\n", 7, "cols: '..3' is not a range"},
        {"click = argmax\ncols = -1..2\n", 7, "cols: '-1..2' is not a range"},
        {"click = argmax\nrows = 2..\n", 7, "rows: '2..' is not a range"},
        {"answer = 1\nrows = 1..2\n", 7, "rows: only a cell quiz"},
        {"answer = 1\ncols = 1..2\n", 7, "cols: only a cell quiz"},
        {"click = argmax\nrows = 3..6\n", 7, "rows: 3..6 is outside weights's 6 rows (0..5)"},
        {"click = argmax\ncols = 6\n", 7, "cols: 6..6 is outside weights's 6 columns (0..5)"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        char buf[512];
        snprintf(buf, sizeof buf, "# T\n\n## S\n\n```quiz\n%s```\n", BAD[i].keys);
        int rc = parse(buf, &ls, &dg);
        if (!rc) rc = lesson_check(&ls, &dg);
        if (!rc) fail_msg("case %zu accepted", i);
        expect_diag(&dg, BAD[i].line, BAD[i].part);
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }

    /* graded only in the region; argmax among the region's columns */
    attn_config c;
    attn_trace tr;
    attn_error err;
    attn_config_init(&c);
    attn_config_set(&c, "tokens", "a b c d e f", &err);
    attn_config_set(&c, "causal", "false", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), 0);
    lesson_quiz rq = {.kind = LESSON_QUIZ_CELLS, .rule = LESSON_CELLS_ARGMAX, .rows = {2, 5}, .cols = {1, 4}};
    unsigned char ans[36];
    int rows, cols;
    char why[200];
    assert_int_equal(lesson_quiz_cells(&rq, &tr, "weights", 0, 0, 0, ans, &rows, &cols, why, sizeof why), 3);
    assert_int_equal(rows, 6);
    attn_matrix m;
    attn_trace_matrix(&tr, "weights", 0, 0, &m);
    for (int i = 0; i < 6; i++) {
        int best = 1;
        for (int j = 2; j < 4; j++)
            if (m.data[i * 6 + j] > m.data[i * 6 + best]) best = j;
        for (int j = 0; j < 6; j++)
            assert_int_equal(ans[i * 6 + j], i >= 2 && i <= 4 && j == best);
    }
    int r0, r1, c0, c1;
    lesson_quiz_region(&rq, 6, 6, &r0, &r1, &c0, &c1);
    assert_int_equal(r0, 2);
    assert_int_equal(r1, 4);
    assert_int_equal(c0, 1);
    assert_int_equal(c1, 3);
    lesson_quiz whole = {.kind = LESSON_QUIZ_CELLS, .rule = LESSON_CELLS_ARGMAX};
    assert_false(lesson_quiz_has_region(&whole));
    assert_int_equal(lesson_quiz_cells(&whole, &tr, "weights", 0, 0, 0, NULL, NULL, NULL, why, sizeof why), 6);
    /* a model's stage named without its layer is the layer asked for */
    assert_ptr_equal(lesson_stage_tensor(&tr, "weights", 0), attn_trace_find(&tr, "weights"));
    assert_null(lesson_stage_tensor(&tr, "memory", 0));
    attn_trace_free(&tr);
    attn_config_free(&c);
}

static void choice_and_number_grading(void **state)
{
    (void)state;
    bool correct[3] = {false, true, true};
    lesson_quiz q = {.kind = LESSON_QUIZ_CHOICE, .n_choices = 3, .correct = correct, .n_correct = 2};
    bool picked[3] = {false, true, false};
    lesson_grade g = lesson_grade_choice(&q, picked);
    assert_false(g.right);
    assert_int_equal(g.n_missed, 1);
    picked[2] = true;
    assert_true(lesson_grade_choice(&q, picked).right);
    picked[0] = true;
    g = lesson_grade_choice(&q, picked);
    assert_false(g.right);
    assert_int_equal(g.n_wrong, 1);

    lesson_quiz n = {.kind = LESSON_QUIZ_NUMBER, .answer = 0.25, .tolerance = 0.01};
    static const struct {
        const char *text;
        int rc;
        bool right;
    } T[] = {{"0.25", 0, true}, {"1/4", 0, true}, {"25%", 0, true}, {" 0.255 ", 0, true}, {"0.3", 0, false},
             {"abc", -1, false}, {"1/0", -1, false}, {"", -1, false}, {"0.25x", -1, false}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        assert_int_equal(lesson_grade_number(&n, T[i].text, &g), T[i].rc);
        if (!T[i].rc) assert_int_equal(g.right, T[i].right);
    }
    n.answer = -1e9;
    n.tolerance = 0;
    assert_int_equal(lesson_grade_number(&n, "−1e9", &g), 0); /* U+2212 minus */
    assert_true(g.right);
}

static void progress_roundtrip(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[512], bad[600], err[600];
    snprintf(path, sizeof path, "%s/progress-test/sub/progress.json", tmp ? tmp : "/tmp");
    remove(path);
    lesson_progress *p = lesson_progress_open(path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    assert_non_null(p);
    assert_int_equal(lesson_progress_get(p, "04.md", NULL).step, 0);
    lesson_progress_visit(p, "04.md", 2, 9);
    lesson_progress_visit(p, "04.md", 1, 9); /* going back keeps the furthest step */
    lesson_progress_quiz(p, "04.md", 2, 0, false);
    lesson_progress_quiz(p, "04.md", 2, 0, true);
    lesson_progress_quiz(p, "04.md", 3, 1, false);
    assert_int_equal(lesson_progress_save(p, err, sizeof err), 0);
    lesson_progress_close(p);

    p = lesson_progress_open(path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    lesson_record r = lesson_progress_get(p, "04.md", NULL);
    assert_int_equal(r.step, 3);
    assert_int_equal(r.steps, 9);
    assert_false(r.reached_end);
    assert_int_equal(r.quizzes_tried, 2);
    assert_int_equal(r.quizzes_right, 1);
    assert_int_equal(lesson_progress_quiz_result(p, "04.md", 2, 0), 1);
    assert_int_equal(lesson_progress_quiz_result(p, "04.md", 3, 1), 0);
    assert_int_equal(lesson_progress_quiz_result(p, "04.md", 5, 0), -1);
    lesson_progress_visit(p, "04.md", 8, 9);
    assert_true(lesson_progress_get(p, "04.md", NULL).reached_end);
    lesson_progress_reset(p, NULL);
    assert_int_equal(lesson_progress_get(p, "04.md", NULL).step, 0);
    assert_int_equal(lesson_progress_save(p, err, sizeof err), 0);
    lesson_progress_close(p);

    /* a corrupt file is set aside, not overwritten */
    FILE *f = fopen(path, "w");
    fputs("{ not json", f);
    fclose(f);
    p = lesson_progress_open(path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    assert_non_null(p);
    assert_non_null(strstr(err, "not a progress file"));
    /* "…; moved to PATH.bad-YYYYMMDD-HHMMSS and starting afresh" (tests/test_progress.c has more) */
    const char *to = strstr(err, "moved to ");
    assert_non_null(to);
    snprintf(bad, sizeof bad, "%.*s", (int)(strstr(to, " and ") - to - 9), to + 9);
    assert_non_null(strstr(bad, ".bad-"));
    assert_int_equal(access(bad, F_OK), 0);
    lesson_progress_close(p);
    remove(bad);
    remove(path);
}

static void catalog_lists_the_course(void **state)
{
    (void)state;
    char dir[1024], err[600];
    setenv("LANGUAGE", "zh_CN:en", 1);
    assert_string_equal(lesson_lang_from_env(), "zh");
    setenv("LANGUAGE", "", 1);
    setenv("LC_ALL", "en_US.UTF-8", 1);
    assert_string_equal(lesson_lang_from_env(), "en");
    unsetenv("LC_ALL");
    lesson_catalog cat;
    assert_int_equal(lesson_catalog_load(&cat, lesson_catalog_dir("en", dir, sizeof dir), err, sizeof err), 0);
    assert_true(cat.n >= 11);
    for (int i = 0; i < cat.n; i++) {
        assert_null(cat.items[i].error);
        if (i) assert_true(strcmp(cat.items[i - 1].name, cat.items[i].name) < 0);
        if (!strcmp(cat.items[i].name, "99-glossary.md")) { /* a reference page: a few steps, no quiz */
            assert_true(cat.items[i].n_steps >= 1 && cat.items[i].n_quizzes == 0);
            continue;
        }
        assert_true(cat.items[i].n_steps >= 5 && cat.items[i].n_steps <= 12);
        assert_true(cat.items[i].n_quizzes >= 1);
    }
    lesson_catalog_free(&cat);
    assert_int_equal(lesson_catalog_load(&cat, "/nonexistent", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent"));
}

/* The Chinese course is the English one translated: the same files, steps,
 * settings and quizzes, with the same right answers. */
static void both_languages_have_the_same_steps(void **state)
{
    (void)state;
    char dir[2][1024], err[600];
    lesson_catalog cat[2];
    assert_int_equal(lesson_catalog_load(&cat[0], lesson_catalog_dir("en", dir[0], sizeof dir[0]), err, sizeof err), 0);
    assert_int_equal(lesson_catalog_load(&cat[1], lesson_catalog_dir("zh", dir[1], sizeof dir[1]), err, sizeof err), 0);
    assert_int_equal(cat[0].n, cat[1].n);
    for (int i = 0; i < cat[0].n; i++) {
        assert_string_equal(cat[0].items[i].name, cat[1].items[i].name);
        lesson ls[2];
        lesson_diags dg = {0};
        for (int l = 0; l < 2; l++)
            if (lesson_load(cat[l].items[i].path, &ls[l], &dg)) fail_msg("%s", cat[l].items[i].path);
        const char *name = cat[0].items[i].name;
        if (ls[0].n_steps != ls[1].n_steps) fail_msg("%s: %d steps in en, %d in zh", name, ls[0].n_steps, ls[1].n_steps);
        for (int s = -1; s < ls[0].n_steps; s++) {
            const lesson_step *a = s < 0 ? &ls[0].intro : &ls[0].steps[s], *b = s < 0 ? &ls[1].intro : &ls[1].steps[s];
            if (a->n_settings != b->n_settings) fail_msg("%s step %d: settings differ", name, s + 1);
            for (int k = 0; k < a->n_settings; k++)
                if (strcmp(a->settings[k].key, b->settings[k].key) || strcmp(a->settings[k].value, b->settings[k].value))
                    fail_msg("%s step %d: '%s = %s' in en, '%s = %s' in zh", name, s + 1, a->settings[k].key,
                             a->settings[k].value, b->settings[k].key, b->settings[k].value);
            if (a->n_quizzes != b->n_quizzes) fail_msg("%s step %d: quizzes differ", name, s + 1);
            for (int q = 0; q < a->n_quizzes; q++) {
                const lesson_quiz *x = &a->quizzes[q], *y = &b->quizzes[q];
                bool same = x->kind == y->kind && x->n_choices == y->n_choices && x->answer == y->answer &&
                            x->tolerance == y->tolerance && x->rule == y->rule && !strcmp(x->stage, y->stage);
                for (int c = 0; same && c < x->n_choices; c++) same = x->correct[c] == y->correct[c];
                if (!same) fail_msg("%s step %d: quiz %d differs between en and zh", name, s + 1, q + 1);
            }
        }
        lesson_free(&ls[0]);
        lesson_free(&ls[1]);
        lesson_diags_free(&dg);
    }
    lesson_catalog_free(&cat[0]);
    lesson_catalog_free(&cat[1]);
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* A lesson of `steps` steps, each setting the head shown, parsed: the CPU ms it took. */
static double parse_ms(int steps)
{
    size_t cap = 48 * (size_t)steps + 64, n = 0;
    char *md = malloc(cap);
    assert_non_null(md);
    n += (size_t)snprintf(md, cap, "# Many\n");
    for (int i = 0; i < steps; i++) n += (size_t)snprintf(md + n, cap - n, "## %d\n```attnlab\nhead = 1\n```\n", i);
    lesson ls;
    lesson_diags dg;
    double t0 = cpu_ms();
    assert_int_equal(parse(md, &ls, &dg), 0);
    double ms = cpu_ms() - t0;
    assert_int_equal(ls.n_steps, steps);
    lesson_free(&ls);
    lesson_diags_free(&dg);
    free(md);
    return ms;
}

/* --check of 20,000 steps applies each step's settings once: the work grows
 * with the steps, not their square (each step's state was built again from
 * step 1, and the parser looked for each heading's line from the top: 20,000
 * steps took 43 s, issue 21); the engine runs again only for a step that sets
 * the configuration. A problem in step 10,000 is said once, at its line, and
 * the steps after it are still checked. */
static void check_is_linear_in_the_steps(void **state)
{
    /* parsing 10 times the steps takes about 10 times as long (square: 100), with room for a noisy machine */
    double small = parse_ms(2000), large = parse_ms(20000);
    if (large > 30 * small + 100) fail_msg("parsing 20,000 steps took %.0f ms, 2,000 took %.1f ms", large, small);
    (void)state;
    enum { STEPS = 20000, RUNS = 500 };
    size_t cap = 64 * (size_t)STEPS + 256, n = 0;
    char *md = malloc(cap);
    assert_non_null(md);
    const char *intro = "# Many\n\n```attnlab\nd_model = 8\nheads = 2\ntokens = a b\n```\n"; /* lines 1-7 */
    n += (size_t)snprintf(md + n, cap - n, "%s", intro);
    for (int i = 0; i < STEPS; i++)
        n += (size_t)snprintf(md + n, cap - n, "## %d\n```attnlab\nhead = %d\n```\n", i, i % 2);
    lesson ls;
    lesson_diags dg;
    assert_int_equal(parse(md, &ls, &dg), 0);
    assert_int_equal(ls.n_steps, STEPS);
    lesson_check_work work = {0};
    assert_int_equal(lesson_check_counted(&ls, &dg, &work), 0);
    assert_int_equal(dg.n, 0);
    assert_int_equal(work.settings, 3 + STEPS); /* the introduction's three and one a step, each once */
    assert_int_equal(work.runs, 1);             /* the steps change only the head shown */
    lesson_free(&ls);
    lesson_diags_free(&dg);
    /* step 10,000 shows a head the problem does not have: one problem, at its line */
    n = (size_t)snprintf(md, cap, "%s", intro);
    int bad_line = 0;
    for (int i = 0, line = 8; i < STEPS; i++, line += 4) {
        if (i == STEPS / 2) bad_line = line + 2;
        n += (size_t)snprintf(md + n, cap - n, "## %d\n```attnlab\nhead = %d\n```\n", i, i == STEPS / 2 ? 7 : i % 2);
    }
    assert_int_equal(parse(md, &ls, &dg), 0);
    work = (lesson_check_work){0};
    assert_int_equal(lesson_check_counted(&ls, &dg, &work), -1);
    assert_int_equal(work.settings, 3 + STEPS);
    assert_int_equal(dg.n, 1);
    expect_diag(&dg, bad_line, "head: 7 is out of range");
    lesson_free(&ls);
    lesson_diags_free(&dg);
    /* steps that set the configuration each run it once; one that breaks it
     * is said once, and so are the steps left unchecked after it */
    n = (size_t)snprintf(md, cap, "%s", intro);
    for (int i = 0; i < RUNS; i++)
        n += (size_t)snprintf(md + n, cap - n, "## %d\n```attnlab\ncausal = %s\n```\n", i, i % 2 ? "true" : "false");
    assert_int_equal(parse(md, &ls, &dg), 0);
    work = (lesson_check_work){0};
    assert_int_equal(lesson_check_counted(&ls, &dg, &work), 0);
    assert_int_equal(work.settings, 3 + RUNS);
    assert_int_equal(work.runs, RUNS);
    lesson_free(&ls);
    free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_lesson_parses),
        cmocka_unit_test(steps_open_training_checkpoints),
        cmocka_unit_test(steps_inherit_and_restore),
        cmocka_unit_test(steps_set_the_panels),
        cmocka_unit_test(malformed_lessons_report_lines),
        cmocka_unit_test(check_runs_every_step),
        cmocka_unit_test(check_is_linear_in_the_steps),
        cmocka_unit_test(measured_numbers),
        cmocka_unit_test(measured_numbers_vocabulary),
        cmocka_unit_test(stream_measures_the_heldout_sample),
        cmocka_unit_test(measure_arguments_in_range),
        cmocka_unit_test(measured_cache_bytes_and_range),
        cmocka_unit_test(long_arguments_quoted_by_their_start),
        cmocka_unit_test(tiles_measured),
        cmocka_unit_test(weight_at_counts_rows_with_a_choice),
        cmocka_unit_test(figures_name_their_source),
        cmocka_unit_test(measure_files_read_once),
        cmocka_unit_test(one_file_as_card_and_tokenizer),
        cmocka_unit_test(checked_a_step_at_a_time),
        cmocka_unit_test(hostile_input),
        cmocka_unit_test(cell_answers_and_grading),
        cmocka_unit_test(quiz_region),
        cmocka_unit_test(choice_and_number_grading),
        cmocka_unit_test(progress_roundtrip),
        cmocka_unit_test(catalog_lists_the_course),
        cmocka_unit_test(both_languages_have_the_same_steps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
