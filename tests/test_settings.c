/* test_settings.c — the settings table (config.h): every row round-trips
 * through the command line, a lesson block and trace metadata, and bad values,
 * out-of-range values and unknown names are refused with one-line messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "engine/formats/trace_io.h"
#include "engine/run/forward.h"
#include "engine/trace/config.h"
#include "engine/trace/settings.h"
#include "lesson.h"
#include "state.h"

/* Values tried, in order, to find one other than a row's default. */
static const char *const CANDIDATES[] = {"true", "false", "2", "3", "5", "8", "16", "0.25", "-1e9", "20000",
                                         "a b | c", "w.safetensors",
                                         "4x3"};

/* A value of row, other than its default, in its formatted form; with
 * must_run, one with which the default configuration still resolves. */
/* What a setting needs beside it to run: keep_first keeps keys beside a
 * window; kv_rank, rope_dim and mla_absorb are mode mla's. */
static void companions(attn_config *c, const attn_setting *row)
{
    if (!strcmp(row->name, "keep_first")) c->sliding_window = 3;
    if (!strcmp(row->name, "kv_rank") || !strcmp(row->name, "rope_dim") || !strcmp(row->name, "mla_absorb"))
        c->mode = ATTN_MODE_MLA; /* multi-head latent attention's own sizes and path */
}

static bool pick_value(const attn_setting *row, bool must_run, char *out, int size)
{
    int n_choices = 0;
    while (row->choices && row->choices[n_choices].name) n_choices++;
    int n = n_choices + (int)(sizeof CANDIDATES / sizeof CANDIDATES[0]);
    for (int i = 0; i < n; i++) {
        const char *v = i < n_choices ? row->choices[i].name : CANDIDATES[i - n_choices];
        attn_config c;
        attn_config_init(&c);
        companions(&c, row);
        bool ok = attn_setting_parse(&c, row, v, NULL) == ATTN_OK && !attn_setting_is_default(&c, row);
        if (ok && must_run) {
            attn_dims d;
            attn_tokens t, s;
            ok = attn_config_resolve(&c, &d, &t, &s, NULL) == ATTN_OK;
            if (ok) attn_tokens_free(&t), attn_tokens_free(&s);
        }
        char buf[ATTN_SETTING_VALUE_MAX];
        if (ok) snprintf(out, (size_t)size, "%s", attn_setting_format(&c, row, buf, sizeof buf));
        attn_config_free(&c);
        if (ok) return true;
    }
    return false;
}

/* row's value in c, formatted */
static const char *value_of(const attn_config *c, const attn_setting *row)
{
    static char buf[256];
    return attn_setting_format(c, row, buf, sizeof buf);
}

static void table_is_sound(void **state)
{
    (void)state;
    assert_true(attn_setting_count() > 0);
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        assert_ptr_equal(attn_setting_find(row->name), row);
        assert_non_null(row->help);
        for (int j = 0; j < i; j++) assert_string_not_equal(attn_setting_at(j)->name, row->name);
        attn_config c;
        attn_config_init(&c);
        assert_true(attn_setting_is_default(&c, row));
        attn_error err;
        if (row->def && attn_setting_parse(&c, row, row->def, &err)) fail_msg("%s: default: %s", row->name, err.msg);
        /* what format writes, parse reads back (an unset size, 0, cannot be set) */
        char text[256], buf[ATTN_SETTING_VALUE_MAX], again[ATTN_SETTING_VALUE_MAX];
        snprintf(text, sizeof text, "%s", attn_setting_format(&c, row, buf, sizeof buf));
        bool unset = row->type == ATTN_SET_INT && !row->def && row->min > 0;
        assert_int_equal(attn_setting_parse(&c, row, text, &err), unset ? ATTN_ERR_CONFIG : ATTN_OK);
        assert_string_equal(attn_setting_format(&c, row, again, sizeof again), text);
        for (int k = 0; row->cycle && row->cycle[k]; k++)
            if (attn_setting_parse(&c, row, row->cycle[k], &err)) fail_msg("%s: cycle: %s", row->name, err.msg);
        for (int k = 0; k < 3 && row->sw[k].flag; k++)
            if (attn_setting_parse(&c, row, row->sw[k].value, &err)) fail_msg("%s: switch: %s", row->name, err.msg);
        if (row->type == ATTN_SET_FLOAT || row->type == ATTN_SET_DOUBLE) assert_true(row->ok && row->rule);
        if (row->type == ATTN_SET_ENUM) assert_non_null(row->choices);
        if (row->flags & ATTN_SETTING_FILE) assert_false(row->flags & (ATTN_SETTING_LESSON | ATTN_SETTING_TRACE));
        attn_config_free(&c);
    }
    assert_null(attn_setting_at(attn_setting_count()));
    assert_null(attn_setting_find("no_such_setting"));
    assert_ptr_equal(attn_setting_find("kv-heads"), attn_setting_find("kv_heads"));
}

static int parse_args(cli_args *a, const char *x, const char *y)
{
    char *argv[] = {"trace", (char *)x, (char *)y, NULL};
    return cli_parse(y ? 3 : 2, argv, "trace", CLI_OPT_OUTPUT, a);
}

static void command_line_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        char flag[40], want[256];
        cli_args a;
        if (row->arg) {
            snprintf(flag, sizeof flag, "--%s", row->name);
            for (char *p = flag; *p; p++) *p = *p == '_' ? '-' : *p;
            if (!pick_value(row, false, want, sizeof want)) fail_msg("%s: no value to try", row->name);
            if (parse_args(&a, flag, want)) fail_msg("%s %s refused", flag, want);
            if (strcmp(value_of(&a.cfg, row), want)) fail_msg("%s %s gave %s", flag, want, value_of(&a.cfg, row));
            cli_args_free(&a);
        }
        for (int k = 0; k < 3 && row->sw[k].flag; k++) {
            attn_config c;
            attn_config_init(&c);
            assert_int_equal(attn_setting_parse(&c, row, row->sw[k].value, NULL), ATTN_OK);
            snprintf(want, sizeof want, "%s", value_of(&c, row));
            attn_config_free(&c);
            snprintf(flag, sizeof flag, "--%s", row->sw[k].flag);
            if (parse_args(&a, flag, NULL)) fail_msg("%s refused", flag);
            if (strcmp(value_of(&a.cfg, row), want)) fail_msg("%s gave %s", flag, value_of(&a.cfg, row));
            cli_args_free(&a);
        }
        assert_true(row->arg || row->sw[0].flag); /* every setting has a flag */
    }
}

/* Parses a one-step lesson whose step sets `key = value`; the step's config into *c. */
static int lesson_with(const char *key, const char *value, attn_config *c, lesson_diags *dg)
{
    char md[512];
    lesson ls;
    snprintf(md, sizeof md, "# Settings\n\nIntro.\n\n## One\n\nText.\n\n```attnlab\n%s = %s\n```\n", key, value);
    *dg = (lesson_diags){0};
    lesson_view v;
    int rc = lesson_parse(md, strlen(md), "t.md", &ls, dg); /* filled even when refused */
    if (rc) attn_config_init(c);
    else rc = lesson_step_state(&ls, 0, c, &v, NULL, dg);
    lesson_free(&ls);
    return rc;
}

static bool has_diag(const lesson_diags *dg, const char *part)
{
    for (int i = 0; i < dg->n; i++)
        if (strstr(dg->items[i].msg, part)) return true;
    for (int i = 0; i < dg->n; i++) print_message("  got %d: %s\n", dg->items[i].line, dg->items[i].msg);
    return false;
}

static void lesson_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        char want[256];
        attn_config c;
        lesson_diags dg;
        if (!pick_value(row, false, want, sizeof want)) fail_msg("%s: no value to try", row->name);
        int rc = lesson_with(row->name, want, &c, &dg);
        if (row->flags & ATTN_SETTING_LESSON) {
            if (rc) fail_msg("lesson %s = %s: %s", row->name, want, dg.n ? dg.items[0].msg : "refused");
            if (strcmp(value_of(&c, row), want)) fail_msg("lesson %s = %s gave %s", row->name, want, value_of(&c, row));
        } else {
            assert_int_not_equal(rc, 0); /* not for lessons: refused by name, with why */
            assert_true(has_diag(&dg, row->name));
            assert_true(has_diag(&dg, "not allowed in lessons"));
        }
        attn_config_free(&c);
        lesson_diags_free(&dg);
    }
}

static void trace_round_trip(void **state)
{
    (void)state;
    char path[512];
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(path, sizeof path, "%s/test_settings_%d.safetensors", tmp ? tmp : "/tmp", (int)getpid());
    int tested = 0;
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        if (!(row->flags & ATTN_SETTING_TRACE)) continue;
        if (!strcmp(row->name, "model") || !strcmp(row->name, "text")) continue; /* need a model: test_model */
        char want[256];
        attn_config c;
        attn_error err;
        attn_trace tr, back;
        if (!pick_value(row, true, want, sizeof want)) fail_msg("%s: no value that runs", row->name);
        attn_config_init(&c);
        companions(&c, row);
        assert_int_equal(attn_setting_parse(&c, row, want, &err), ATTN_OK);
        if (attn_trace_run(&c, NULL, &tr, &err)) fail_msg("%s = %s: %s", row->name, want, err.msg);
        if (attn_trace_save(&tr, path, &err)) fail_msg("save: %s", err.msg);
        if (attn_trace_load(path, &back, &err)) fail_msg("%s = %s: load: %s", row->name, want, err.msg);
        /* what ran is what the file says ran */
        attn_config ran = attn_config_as_run(&c, &tr.dims), read = attn_config_as_run(&back.cfg, &back.dims);
        char abuf[ATTN_SETTING_VALUE_MAX], bbuf[ATTN_SETTING_VALUE_MAX];
        const char *a = attn_setting_format(&ran, row, abuf, sizeof abuf);
        const char *b = attn_setting_format(&read, row, bbuf, sizeof bbuf);
        if (strcmp(a, b)) fail_msg("%s = %s ran as %s but reads back as %s", row->name, want, a, b);
        tested++;
        attn_trace_free(&tr);
        attn_trace_free(&back);
        attn_config_free(&c);
    }
    unlink(path);
    assert_true(tested > 10);
}

/* err.msg names the setting and contains part */
static void expect_refused(const attn_setting *row, const char *value, const char *part)
{
    attn_config c;
    attn_error err = {0};
    attn_config_init(&c);
    if (attn_setting_parse(&c, row, value, &err) != ATTN_ERR_CONFIG)
        fail_msg("%s = '%s' was accepted", row->name, value);
    attn_config_free(&c);
    if (strncmp(err.msg, row->name, strlen(row->name)) || !strstr(err.msg, part))
        fail_msg("%s = '%s': '%s' lacks '%s'", row->name, value, err.msg, part);
    assert_null(strchr(err.msg, '\n'));
}

static void bad_values_refused(void **state)
{
    (void)state;
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        char v[64];
        switch (row->type) {
        case ATTN_SET_BOOL: expect_refused(row, "maybe", "is not true or false"); break;
        case ATTN_SET_INT:
            expect_refused(row, "x", "is not a whole number");
            expect_refused(row, "", "is not a whole number");
            snprintf(v, sizeof v, "%ld", row->min - 1);
            expect_refused(row, v, "is out of range");
            snprintf(v, sizeof v, "%ld", row->max + 1);
            expect_refused(row, v, "is out of range");
            break;
        case ATTN_SET_U64:
            expect_refused(row, "x", "is not a whole number");
            expect_refused(row, "-1", "is not a whole number");
            expect_refused(row, "18446744073709551616", "is not a whole number");
            break;
        case ATTN_SET_FLOAT:
        case ATTN_SET_DOUBLE: {
            expect_refused(row, "x", "is not a number");
            expect_refused(row, "nan", "is not a usable number");
            static const char *const outside[] = {"5", "-5", "1e300", "-1e300", "inf", "0.5"};
            int found = 0;
            for (int k = 0; k < 6; k++) {
                attn_config c;
                attn_config_init(&c);
                if (attn_setting_parse(&c, row, outside[k], NULL)) expect_refused(row, outside[k], "must be"), found++;
            }
            assert_true(found > 0);
            break;
        }
        case ATTN_SET_ENUM: expect_refused(row, "sideways", "is not"); break;
        case ATTN_SET_TILES:
            expect_refused(row, "64", "is not BQxBK");
            expect_refused(row, "64x", "is not BQxBK");
            expect_refused(row, "x64", "is not BQxBK");
            expect_refused(row, "0x4", "is out of range");
            expect_refused(row, "4x999999", "is out of range");
            break;
        case ATTN_SET_TEXT: /* tokens are checked when the config resolves; only blanks are refused here */
            if (row->rule) expect_refused(row, " ", "(got only blanks)");
            break;
        }
    }
}

static void unknown_names_get_suggestions(void **state)
{
    (void)state;
    attn_config c;
    attn_error err;
    attn_config_init(&c);
    assert_int_equal(attn_config_set(&c, "hedas", "2", &err), ATTN_ERR_CONFIG);
    assert_string_equal(err.msg, "unknown setting 'hedas' (did you mean 'heads'?)");
    assert_int_equal(attn_config_set(&c, "frobnicate", "2", &err), ATTN_ERR_CONFIG);
    assert_string_equal(err.msg, "unknown setting 'frobnicate'");
    attn_config_free(&c);
    /* lessons: settings and the view keys, not the rows lessons may not set */
    static const char *const view[] = {"stage", "head"};
    assert_string_equal(attn_setting_suggest("pad_sied", ATTN_SETTING_LESSON, view, 2), "pad_side");
    assert_string_equal(attn_setting_suggest("stgae", ATTN_SETTING_LESSON, view, 2), "stage");
    assert_null(attn_setting_suggest("weight", ATTN_SETTING_LESSON, view, 2));
    assert_string_equal(attn_setting_suggest("weight", 0, NULL, 0), "weights");
    lesson_diags dg;
    assert_int_not_equal(lesson_with("rope_thta", "5", &c, &dg), 0);
    assert_true(has_diag(&dg, "unknown attnlab key 'rope_thta' (did you mean 'rope_theta'?)"));
    attn_config_free(&c);
    lesson_diags_free(&dg);
    assert_int_not_equal(lesson_with("stag", "scores", &c, &dg), 0);
    assert_true(has_diag(&dg, "did you mean 'stage'?"));
    attn_config_free(&c);
    lesson_diags_free(&dg);
    /* a lesson's bad value is the setting's own message */
    assert_int_not_equal(lesson_with("heads", "300", &c, &dg), 0);
    assert_true(has_diag(&dg, "heads: 300 is out of range (1 to 256)"));
    attn_config_free(&c);
    lesson_diags_free(&dg);
    /* the command line: a bad value, and an unknown flag */
    cli_args a;
    assert_int_equal(parse_args(&a, "--dropout", "1.5"), CLI_EUSAGE);
    cli_args_free(&a);
    assert_int_equal(parse_args(&a, "--hedas", "2"), CLI_EUSAGE);
    cli_args_free(&a);
}

static void describe_and_cycle(void **state)
{
    (void)state;
    attn_config c;
    char buf[160];
    attn_error err;
    attn_config_init(&c);
    const attn_setting *rope = attn_setting_find("rope"), *guard = attn_setting_find("softmax_guard"),
                       *fill = attn_setting_find("mask_value"), *causal = attn_setting_find("causal");
    assert_string_equal(attn_setting_describe(&c, rope, buf, sizeof buf), "rope off");
    assert_string_equal(attn_setting_describe(&c, guard, buf, sizeof buf), "");
    assert_int_equal(attn_setting_cycle(&c, rope, &err), ATTN_OK);
    assert_true(c.rope);
    assert_string_equal(attn_setting_describe(&c, rope, buf, sizeof buf), "rope on (theta 10000)");
    assert_int_equal(attn_setting_cycle(&c, rope, &err), ATTN_OK);
    assert_false(c.rope);
    assert_int_equal(attn_setting_cycle(&c, fill, &err), ATTN_OK);
    assert_string_equal(value_of(&c, fill), "-1e+09");
    assert_int_equal(attn_setting_cycle(&c, fill, &err), ATTN_OK);
    assert_string_equal(value_of(&c, fill), "-inf");
    c.causal = ATTN_CAUSAL_REVERSED; /* not in the cycle: back to its start, on */
    assert_int_equal(attn_setting_cycle(&c, causal, &err), ATTN_OK);
    assert_int_equal((int)c.causal, ATTN_CAUSAL_ON);
    assert_int_equal(attn_setting_cycle(&c, attn_setting_find("seed"), &err), ATTN_ERR_CONFIG);
    /* a row without a describe function: "name value" once it differs from the default */
    static const attn_setting plain = {.name = "plain_seed", .type = ATTN_SET_U64, .offset = offsetof(attn_config, seed),
                                       .def = "42", .help = "test"};
    assert_string_equal(attn_setting_describe(&c, &plain, buf, sizeof buf), "");
    c.seed = 7;
    assert_string_equal(attn_setting_describe(&c, &plain, buf, sizeof buf), "plain_seed 7");
    attn_config_free(&c);
}

/* Every command that runs a model opens it as it was trained: tang-nocausal without
 * the causal mask unless a causal flag says otherwise; tang with it. */
static void models_open_as_trained(void **state)
{
    (void)state;
    static const struct { const char *args[4]; int n; attn_causal want; } cases[] = {
        {{"render", "--model", "tang-nocausal"}, 3, ATTN_CAUSAL_OFF},
        {{"render", "--model", "tang-nocausal", "--causal"}, 4, ATTN_CAUSAL_ON},
        {{"render", "--model", "tang"}, 3, ATTN_CAUSAL_ON},
        {{"render", "--model", "tang", "--no-causal"}, 4, ATTN_CAUSAL_OFF},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_args a;
        char *argv[5] = {NULL};
        for (int k = 0; k < cases[i].n; k++) argv[k] = (char *)cases[i].args[k];
        assert_int_equal(cli_parse(cases[i].n, argv, "render", CLI_OPT_OUTPUT | CLI_OPT_PICTURE, &a), CLI_OK);
        cli_open_as_trained("render", &a);
        assert_int_equal(a.cfg.causal, cases[i].want);
        cli_args_free(&a);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_is_sound),
        cmocka_unit_test(command_line_round_trip),
        cmocka_unit_test(lesson_round_trip),
        cmocka_unit_test(trace_round_trip),
        cmocka_unit_test(bad_values_refused),
        cmocka_unit_test(unknown_names_get_suggestions),
        cmocka_unit_test(describe_and_cycle),
        cmocka_unit_test(models_open_as_trained),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
