/* test_train_metrics.c — checkpoints/metrics.json (train_metrics.h) and a
 * checkpoint's way back to its model (attn_model_base). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/model/model.h"
#include "engine/model/train_metrics.h"

static char dir[512];

/* dir/checkpoints/metrics.json holding text (NULL: no file). */
static void write_metrics(const char *text)
{
    char path[700];
    snprintf(path, sizeof path, "%s/checkpoints/metrics.json", dir);
    remove(path);
    if (!text) return;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char ck[600];
    snprintf(dir, sizeof dir, "%s/train-metrics-XXXXXX", tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(ck, sizeof ck, "%s/checkpoints", dir);
    mkdir(ck, 0755);
    return 0;
}

#define HEAD(l, h, v) "{\"layer\": " #l ", \"head\": " #h ", \"induction\": " v ", \"-1\": 0.5, \"first\": 0.25}"
#define SNAP(step, heads) "{\"step\": " #step ", \"train_loss\": 3.5, \"heldout_loss\": 3.75, \"heads\": [" heads "]}"

static void reads_every_number(void **state)
{
    (void)state;
    attn_metrics m;
    attn_error err;
    write_metrics("{\"snapshots\": [" SNAP(0, HEAD(0, 0, "0.1") "," HEAD(0, 1, "0.2")) ","
                  SNAP(25, HEAD(0, 1, "0.4") "," HEAD(0, 0, "0.3")) "]}");
    assert_int_equal(attn_metrics_load(dir, &m, &err), ATTN_OK);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.layers, 1);
    assert_int_equal(m.heads, 2);
    assert_int_equal(m.step[1], 25);
    assert_true(m.train_loss[0] == 3.5 && m.heldout_loss[1] == 3.75);
    /* placed by their layer and head, not by their order in the list */
    assert_true(attn_metrics_head(&m, ATTN_METRIC_INDUCTION, 1, 0, 0) == 0.3);
    assert_true(attn_metrics_head(&m, ATTN_METRIC_INDUCTION, 1, 0, 1) == 0.4);
    assert_true(attn_metrics_head(&m, ATTN_METRIC_PREV, 0, 0, 1) == 0.5);
    assert_true(attn_metrics_head(&m, ATTN_METRIC_FIRST, 0, 0, 1) == 0.25);
    assert_int_equal(attn_metrics_find(&m, 25), 1);
    assert_int_equal(attn_metrics_find(&m, 50), -1);
    attn_metrics_free(&m);
    /* no file: nothing to show, not an error */
    write_metrics(NULL);
    assert_int_equal(attn_metrics_load(dir, &m, &err), ATTN_OK);
    assert_int_equal(m.n, 0);
    attn_metrics_free(&m);
}

static void a_broken_file_is_one_line_naming_it(void **state)
{
    (void)state;
    static const struct { const char *text, *says; } BAD[] = {
        {"[1, 2", "not valid JSON"},
        {"[1, 2]", "not a JSON object"},
        {"{\"snapshots\": []} {\"snapshots\": [1]}", "data after the JSON value, at byte 18"}, /* issue 37 */
        {"{}", "'snapshots' must be a list, not nothing"},
        {"{\"snapshots\": []}", "'snapshots' is empty"},
        {"{\"snapshots\": [" SNAP(0, HEAD(0, 0, "0.1")) "," SNAP(0, HEAD(0, 0, "0.1")) "]}", "step 0 does not follow step 0"},
        {"{\"snapshots\": [" SNAP(0, HEAD(0, 0, "0.1") "," HEAD(0, 0, "0.2")) "]}", "2 heads listed"},
        {"{\"snapshots\": [" SNAP(0, HEAD(0, 0, "0.1") "," HEAD(0, 1, "0.2")) "," SNAP(5, HEAD(0, 0, "0.1") "," HEAD(0, 0, "0.2")) "]}",
         "snapshot 1: layer 0 head 0 is listed twice"},
        {"{\"snapshots\": [" SNAP(0, HEAD(0, 0, "\"high\"")) "]}", "'snapshot 0: heads[0].induction' must be a number"},
        {"{\"snapshots\": [" SNAP(0, "{\"layer\": 0, \"head\": 0, \"-1\": 1, \"first\": 0}") "]}",
         "'snapshot 0: heads[0].induction' is missing"},
        {"{\"snapshots\": [{\"step\": 1.5, \"train_loss\": 3, \"heldout_loss\": 3, \"heads\": [" HEAD(0, 0, "0") "]}]}",
         "'snapshot 0: step' must be a whole number"},
        {"{\"snapshots\": [], \"snapshots\": []}", "appears twice"},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        attn_metrics m;
        attn_error err;
        write_metrics(BAD[i].text);
        assert_int_equal(attn_metrics_load(dir, &m, &err), ATTN_ERR_FORMAT);
        if (!strstr(err.msg, BAD[i].says) || !strstr(err.msg, "/checkpoints/metrics.json: ") || strchr(err.msg, '\n'))
            fail_msg("case %zu: %s", i, err.msg);
        assert_int_equal(m.n, 0);
        attn_metrics_free(&m);
    }
}

static void a_checkpoint_knows_its_model(void **state)
{
    (void)state;
    char step[700], base[700], other[700];
    long n;
    attn_error err;
    snprintf(step, sizeof step, "%s/checkpoints/step400", dir);
    mkdir(step, 0755);
    assert_int_equal(attn_model_base(step, base, sizeof base, &n, &err), ATTN_OK);
    assert_string_equal(base, dir);
    assert_int_equal(n, 400);
    strcat(step, "/");
    assert_int_equal(attn_model_base(step, base, sizeof base, &n, &err), ATTN_OK);
    assert_string_equal(base, dir);
    assert_int_equal(n, 400);
    assert_int_equal(attn_model_base(dir, base, sizeof base, &n, &err), ATTN_OK);
    assert_string_equal(base, dir);
    assert_int_equal(n, -1);
    /* a folder called step7 that is not in a checkpoints folder is a model of its own */
    snprintf(other, sizeof other, "%s/step7", dir);
    mkdir(other, 0755);
    assert_int_equal(attn_model_base(other, base, sizeof base, &n, &err), ATTN_OK);
    assert_string_equal(base, other);
    assert_int_equal(n, -1);
}

/* dir/checkpoints/NAME, with a config.json when snapshot says so. */
static void make_step(const char *name, bool snapshot)
{
    char path[800];
    snprintf(path, sizeof path, "%s/checkpoints/%s", dir, name);
    mkdir(path, 0755);
    if (!snapshot) return;
    strcat(path, "/config.json");
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

/* Listing the steps and looking one up follow one rule (issue 37, 24 and 13):
 * step<N>, N without a leading zero, holding config.json; past 64 of them each
 * is still found, and a missing one lists whole numbers. */
static void one_rule_lists_and_finds_a_step(void **state)
{
    (void)state;
    static const char *const NOT_STEPS[] = {"step025", "step00", "step+3", "step-1", "step 5", "step1x", "step",
                                            "step1234567890", "Step8", "step９"};
    char out[800], want[800];
    long steps[ATTN_MAX_STEPS];
    int n;
    attn_error err;
    make_step("step0", true);
    make_step("step7", true);
    make_step("step12", false); /* no config.json: not a snapshot */
    for (size_t i = 0; i < sizeof NOT_STEPS / sizeof *NOT_STEPS; i++) make_step(NOT_STEPS[i], true);
    assert_int_equal(attn_model_steps(dir, steps, ATTN_MAX_STEPS, &n, &err), ATTN_OK);
    assert_int_equal(n, 2);
    assert_true(steps[0] == 0 && steps[1] == 7);
    assert_int_equal(attn_model_checkpoint(dir, 7, out, sizeof out, &err), ATTN_OK);
    snprintf(want, sizeof want, "%s/checkpoints/step7", dir);
    assert_string_equal(out, want);
    for (long s = 25; s >= 3; s -= 22) { /* step025, step+3 */
        assert_int_equal(attn_model_checkpoint(dir, s, out, sizeof out, &err), ATTN_ERR_CONFIG);
        if (!strstr(err.msg, "(its steps: 0, 7)")) fail_msg("%s", err.msg);
    }
    assert_int_equal(attn_model_checkpoint(dir, 12, out, sizeof out, &err), ATTN_ERR_CONFIG);

    for (int s = 100; s < 200; s++) { /* 102 steps */
        char name[32];
        snprintf(name, sizeof name, "step%d", s);
        make_step(name, true);
    }
    assert_int_equal(attn_model_steps(dir, steps, ATTN_MAX_STEPS, &n, &err), ATTN_OK);
    assert_int_equal(n, ATTN_MAX_STEPS);
    assert_true(steps[0] == 0 && steps[1] == 7 && steps[n - 1] == 199); /* spread from the first to the last */
    for (int i = 1; i < n; i++) assert_true(steps[i] > steps[i - 1]);
    for (long s = 100; s < 200; s++) assert_int_equal(attn_model_checkpoint(dir, s, out, sizeof out, &err), ATTN_OK);
    assert_int_equal(attn_model_checkpoint(dir, 5, out, sizeof out, &err), ATTN_ERR_CONFIG);
    const char *list = strstr(err.msg, "(its 102 steps: 0, 7, 100, 101, ");
    if (!list || !strstr(list, ", …)") || strchr(err.msg, '\n')) fail_msg("%s", err.msg);
    char items[400];
    snprintf(items, sizeof items, "%s", strchr(list, ':') + 2);
    *strstr(items, ", …)") = '\0';
    for (char *p = strtok(items, ", "); p; p = strtok(NULL, ", ")) { /* whole numbers, never cut */
        long v = strtol(p, NULL, 10);
        if (v != 0 && v != 7 && (v < 100 || v > 199)) fail_msg("cut mid-number: %s", err.msg);
    }
    /* a long path shortens the list, never its closing "…)" (a clone at a long root) */
    char longer[800];
    snprintf(longer, sizeof longer, "%s-%0200d", dir, 0);
    assert_int_equal(symlink(dir, longer), 0);
    assert_int_equal(attn_model_checkpoint(longer, 5, out, sizeof out, &err), ATTN_ERR_CONFIG);
    list = strstr(err.msg, "(its 102 steps: 0, 7, ");
    size_t len = strlen(err.msg);
    if (!list || len < 6 || strcmp(err.msg + len - 6, ", …)") != 0) fail_msg("%s", err.msg);
    unlink(longer);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_every_number),
        cmocka_unit_test(a_broken_file_is_one_line_naming_it),
        cmocka_unit_test(a_checkpoint_knows_its_model),
        cmocka_unit_test(one_rule_lists_and_finds_a_step),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
