/* test_loss.c — the next-token loss of a trace (loss.h): by hand on small
 * logits, far below float's range, and on a random model's trace against the
 * probabilities the trace itself records, pads and decode steps included. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "engine/model/loss.h"
#include "engine/run/forward.h"
#include "engine/trace/trace.h"

#include "model_fixture.h"

static char ROOT[256];

/* −log softmax([1, 2, 3])[t] by hand: log(e + e² + e³) − t-th logit. */
static void test_by_hand(void **state)
{
    (void)state;
    const float lg[3] = {1, 2, 3};
    double lse = log(exp(1.0) + exp(2.0) + exp(3.0)); /* 3.40760596 */
    assert_true(fabs(attn_token_nll(lg, 3, 0) - (lse - 1)) < 1e-12);
    assert_true(fabs(attn_token_nll(lg, 3, 2) - 0.40760596444) < 1e-9);
    /* a probability of e^-120, which float's softmax rounds to 0 (log 0 = ∞) */
    const float far[2] = {0, 120};
    assert_true(fabs(attn_token_nll(far, 2, 0) - 120.0) < 1e-9);
    assert_true(attn_token_nll(far, 2, 1) < 1e-40 + 1e-50);
    /* the mean skips rows without a target */
    const float rows[3 * 3] = {1, 2, 3, 0, 0, 0, 3, 2, 1};
    const int targets[3] = {2, -1, 2};
    int n = -1;
    double mean = attn_mean_nll(rows, 3, 3, targets, &n);
    assert_int_equal(n, 2);
    assert_true(fabs(mean - (0.40760596444 + 2.40760596444) / 2) < 1e-9);
    const int none[3] = {-1, -1, 3};
    assert_true(isnan(attn_mean_nll(rows, 3, 3, none, &n)));
    assert_int_equal(n, 0);
}

static void run(const char *text, const char *side, int past, attn_trace *tr)
{
    attn_config c;
    attn_error err;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/m", ROOT);
    attn_config_init(&c);
    assert_int_equal(attn_config_set(&c, "model", dir, &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "text", text, &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "pad_side", side, &err), ATTN_OK);
    c.past = past;
    if (attn_trace_run(&c, NULL, tr, &err)) fail_msg("%s: %s", text, err.msg);
    attn_config_free(&c);
}

/* The same mean from the trace's own probs (float): −log probs[i, next token]. */
static double from_probs(const attn_trace *tr, int b, const int *next, int n)
{
    const attn_tensor *p = attn_trace_find(tr, "probs");
    double sum = 0;
    attn_tensor_fill(p, (size_t)b * tr->dims.s, (size_t)n);
    for (int i = 0; i < n; i++) sum += -log(p->data[((size_t)b * tr->dims.s + i) * V + next[i]]);
    return sum / n;
}

static void test_trace(void **state)
{
    (void)state;
    char dir[300];
    snprintf(dir, sizeof dir, "%s/m", ROOT);
    make_model(dir, 2, 4, 2, true, NULL, NULL);
    attn_trace tr;
    int n;
    /* <s> the cat sat on the mat: 7 tokens, 6 with a next one */
    run("the cat sat on the mat", "right", 0, &tr);
    const int next[6] = {3, 4, 5, 6, 3, 7};
    double mean = attn_trace_loss(&tr, 0, &n);
    assert_int_equal(n, 6);
    assert_true(fabs(mean - from_probs(&tr, 0, next, 6)) < 1e-4);
    assert_true(mean > 0);
    attn_trace_free(&tr);
    /* two rows padded: the short row counts its own tokens only, on either side */
    for (int side = 0; side < 2; side++) {
        run("the cat sat on the mat | a dog ran", side ? "left" : "right", 0, &tr);
        double a = attn_trace_loss(&tr, 1, &n);
        assert_int_equal(n, 3); /* <s> a dog ran */
        attn_trace alone;
        run("a dog ran", "right", 0, &alone);
        int m;
        assert_true(fabs(a - attn_trace_loss(&alone, 0, &m)) < 1e-4);
        assert_int_equal(m, 3);
        attn_trace_free(&alone);
        attn_trace_free(&tr);
    }
    /* three positions cached: the rows computed now predict the rest */
    run("the cat sat on the mat", "right", 3, &tr);
    mean = attn_trace_loss(&tr, 0, &n);
    assert_int_equal(n, 3);
    assert_true(fabs(mean - from_probs(&tr, 0, next + 3, 3)) < 1e-4);
    assert_true(isnan(attn_trace_loss(&tr, 1, &n)));
    attn_trace_free(&tr);
    /* without a model: no logits, no loss */
    attn_config c;
    attn_error err;
    attn_config_init(&c);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    assert_true(isnan(attn_trace_loss(&tr, 0, &n)));
    assert_int_equal(n, 0);
    attn_trace_free(&tr);
    attn_config_free(&c);
}

/* The shipped models on the poem of lessons 12 and 13, causal mask on: the
 * numbers tests/hf_reference.py's PyTorch model (float64, written from the
 * Hugging Face modelling code, independently of attnlab) gives for the mean
 * −log softmax(logits)[next id] over the 24 characters after <s>. */
static void test_shipped_models(void **state)
{
    (void)state;
    static const struct { const char *model; double want; } cases[] = {{"tang", 3.8215}, {"tang-nocausal", 32.8822}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attn_config c;
        attn_error err;
        attn_trace tr;
        int n;
        attn_config_init(&c);
        assert_int_equal(attn_config_set(&c, "model", cases[i].model, &err), ATTN_OK);
        assert_int_equal(attn_config_set(&c, "text", "床前明月光，疑是地上霜。举头望明月，低头思故乡。", &err), ATTN_OK);
        if (attn_trace_run(&c, NULL, &tr, &err)) fail_msg("%s: %s", cases[i].model, err.msg);
        double loss = attn_trace_loss(&tr, 0, &n);
        assert_int_equal(n, 24);
        if (fabs(loss - cases[i].want) > 2e-3) fail_msg("%s: %.4f, the reference %.4f", cases[i].model, loss, cases[i].want);
        attn_trace_free(&tr);
        attn_config_free(&c);
    }
}

/* A text longer than a chunk of rows (ATTN_LOSS_CHUNK): the loss read a
 * chunk at a time is the one from the trace's probs, and a cancel stops it. */
static void test_chunks_and_cancel(void **state)
{
    (void)state;
    attn_config c;
    attn_error err;
    attn_trace tr;
    int n;
    attn_config_init(&c);
    assert_int_equal(attn_config_set(&c, "model", "tang", &err), ATTN_OK);
    const char *verse = "床前明月光，疑是地上霜。举头望明月，低头思故乡。";
    char text[1024] = "";
    for (int i = 0; i < 4; i++) strcat(text, verse); /* 96 characters after <s> */
    assert_int_equal(attn_config_set(&c, "text", text, &err), ATTN_OK);
    if (attn_trace_run(&c, NULL, &tr, &err)) fail_msg("%s", err.msg);
    int s = tr.dims.s;
    assert_true(s > ATTN_LOSS_CHUNK);
    int *next = malloc((size_t)s * sizeof *next);
    for (int i = 0; i + 1 < s; i++) next[i] = tr.token_ids[i + 1];
    const attn_tensor *p = attn_trace_find(&tr, "probs");
    attn_tensor_fill(p, 0, (size_t)s);
    double sum = 0;
    for (int i = 0; i + 1 < s; i++) sum += -log(p->data[(size_t)i * tr.dims.V + next[i]]);
    double loss = attn_trace_loss_cancel(&tr, 0, &n, NULL);
    assert_int_equal(n, s - 1);
    assert_true(fabs(loss - sum / (s - 1)) < 1e-4);
    assert_true(loss == attn_trace_loss(&tr, 0, &n));
    atomic_int cancel;
    atomic_init(&cancel, 1);
    assert_true(isnan(attn_trace_loss_cancel(&tr, 0, &n, &cancel)));
    assert_int_equal(n, 0);
    free(next);
    attn_trace_free(&tr);
    attn_config_free(&c);
}

int main(void)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(ROOT, sizeof ROOT, "%s/attnlab-loss-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(ROOT)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_trace),
        cmocka_unit_test(test_shipped_models),
        cmocka_unit_test(test_chunks_and_cancel),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ROOT);
    if (system(cmd)) rc = 1;
    return rc;
}
