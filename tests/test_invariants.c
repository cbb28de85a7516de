/* test_invariants.c — properties the engine must hold whatever the numbers:
 * softmax rows, exact zeros under the mask, GQA/MQA = MHA with repeated K/V
 * weights, KV cache = full causal pass, RoPE relativity, padding isolation,
 * dropout modes. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/attention/ops.h"
#include "engine/run/forward.h"
#include "engine/trace/nonfinite.h"

/* Runs the config given as NULL-terminated key/value pairs. */
static void run(attn_trace *tr, const attn_inputs *in, const char *const *kv)
{
    attn_config c;
    attn_error err = {0};
    attn_config_init(&c);
    for (int i = 0; kv[i]; i += 2)
        if (attn_config_set(&c, kv[i], kv[i + 1], &err)) fail_msg("set %s: %s", kv[i], err.msg);
    if (attn_trace_run(&c, in, tr, &err)) fail_msg("run: %s", err.msg);
    attn_config_free(&c);
}

static const attn_tensor *get(const attn_trace *tr, const char *name)
{
    const attn_tensor *t = attn_trace_find(tr, name);
    if (!t) fail_msg("trace has no '%s'", name);
    return t;
}

static bool row_fully_masked(const attn_trace *tr, int b, int i)
{
    for (int k = 0; k < tr->n_masked; k++)
        if (tr->masked_rows[2 * k] == b && tr->masked_rows[2 * k + 1] == i) return true;
    return false;
}

static void assert_close(float a, float b, float tol, const char *what)
{
    if (a != b && !(fabsf(a - b) <= tol * fmaxf(1.0f, fabsf(b)))) /* equal: −∞ and −∞ too */ fail_msg("%s: %.9g vs %.9g", what, a, b);
}

/* Softmax rows sum to 1, fully masked rows to 0; masked cells are exactly 0.
 * With a sink logit a row sums to 1 − sink_weight, and a fully masked row
 * gives the sink everything: weights 0, sink_weight exactly 1. */
static void check_rows(const attn_trace *tr)
{
    const attn_dims *d = &tr->dims;
    const attn_tensor *w = get(tr, "weights"), *m = get(tr, "mask"), *sink = attn_trace_find(tr, "sink_weight");
    for (int b = 0; b < d->b; b++)
        for (int h = 0; h < d->h; h++)
            for (int i = 0; i < d->s; i++) {
                double sum = 0;
                bool full = row_fully_masked(tr, b, i);
                float p_sink = sink ? sink->data[((size_t)b * d->h + h) * d->s + i] : 0.0f;
                if (sink && full) assert_true(p_sink == 1.0f);
                if (sink) assert_true(p_sink >= 0.0f && p_sink <= 1.0f);
                for (int j = 0; j < d->t; j++) {
                    float v = attn_tensor_at4(w, b, h, i, j);
                    assert_false(isnan(v));
                    if (attn_tensor_at4(m, b, 0, i, j) != 0.0f && (!full || isinf(tr->cfg.mask_value)))
                        assert_true(v == 0.0f);
                    sum += v;
                }
                float want = full && isinf(tr->cfg.mask_value) && !sink ? 0.0f : 1.0f - p_sink;
                assert_close((float)sum, want, 1e-5f, "row sum");
            }
}

static void test_rows_sum_to_one(void **state)
{
    (void)state;
    const char *const configs[][12] = {
        {NULL},
        {"pad_side", "left", NULL},
        {"pad_side", "left", "mask_value", "-1e9", NULL},
        {"causal", "false", "heads", "8", "kv_heads", "2", NULL},
        {"rope", "true", "past", "2", "pad_side", "left", NULL},
        {"tokens", "I love AI | a b", "source_tokens", "我 爱 | 人 工 智 能", "causal", "false", NULL},
        {"seq", "33", "batch", "3", "d_model", "64", "heads", "4", "mode", "mqa", NULL},
        {"alibi", "true", "softcap", "2", "pad_side", "left", NULL},
        {"sink_logit", "1.5", "pad_side", "left", NULL},
        {"sink_logit", "-2", "pad_side", "left", "softmax_guard", "false", "qk_norm", "true", NULL},
        {"sink_logit", "0", "pad_side", "left", "mask_value", "-1e9", "alibi", "true", NULL},
        {"sliding_window", "2", "keep_first", "1", "sink_logit", "3", "rope", "true", "past", "2", NULL},
        {"tokens", "I love AI | a b", "source_tokens", "我 爱 | 人 工 智 能", "causal", "false", "sink_logit", "1", NULL},
    };
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        attn_trace tr;
        run(&tr, NULL, configs[c]);
        check_rows(&tr);
        attn_trace_free(&tr);
    }
}

/* Left padding + causal: the leading pad queries of a short row see only pad
 * keys. With -inf they get all-zero weights (no NaN) and are listed; with a
 * finite fill the arithmetic gives a uniform row. */
static void test_fully_masked_rows(void **state)
{
    (void)state;
    attn_trace tr;
    run(&tr, NULL, (const char *const[]){"pad_side", "left", NULL});
    /* row 1 "我 爱 AI" is padded by 3 on the left: queries 0..2 see only pads */
    assert_int_equal(tr.n_masked, 3);
    for (int i = 0; i < 3; i++) assert_true(row_fully_masked(&tr, 1, i));
    const attn_tensor *w = get(&tr, "weights");
    for (int h = 0; h < tr.dims.h; h++)
        for (int j = 0; j < tr.dims.t; j++) assert_true(attn_tensor_at4(w, 1, h, 0, j) == 0.0f);
    attn_trace_free(&tr);

    run(&tr, NULL, (const char *const[]){"pad_side", "left", "mask_value", "-1e9", NULL});
    assert_int_equal(tr.n_masked, 3);
    w = get(&tr, "weights");
    /* every cell of query 1's row is -1e9 (pads and future alike), so the
     * softmax spreads 1/6 over all six keys, future ones included */
    for (int j = 0; j < 6; j++) assert_close(attn_tensor_at4(w, 1, 0, 1, j), 1.0f / 6, 1e-6f, "uniform");
    attn_trace_free(&tr);
}

/* softmax_guard = false: a fully masked row is NaN in weights, and its NaN
 * spreads to that query's context, merged and out rows and nowhere else;
 * every other cell is bit-identical to the guarded run. */
static void test_unguarded_softmax_spreads_nan(void **state)
{
    (void)state;
    static const char *const SAME[] = {"q", "k", "v", "scores", "mask", "masked_scores"};
    static const char *const ROWS[] = {"weights", "weights_dropout", "context", "merged", "out"};
    const char *const configs[][12] = {
        {"pad_side", "left", NULL},
        {"causal", "reversed", "heads", "2", NULL},
        {"pad_side", "left", "train", "true", "dropout", "0.4", "kv_heads", "1", NULL},
        {"pad_side", "left", "mask_value", "-1e9", NULL}, /* finite fill: no NaN at all */
    };
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        const char *kv[16];
        int n = 0;
        while (configs[c][n]) kv[n] = configs[c][n], n++;
        attn_trace guarded, bare;
        kv[n] = NULL;
        run(&guarded, NULL, kv);
        kv[n] = "softmax_guard", kv[n + 1] = "false", kv[n + 2] = NULL;
        run(&bare, NULL, kv);
        bool finite_fill = !isinf(bare.cfg.mask_value);
        assert_true(bare.n_masked > 0);
        for (size_t k = 0; k < sizeof SAME / sizeof SAME[0]; k++) {
            const attn_tensor *a = get(&guarded, SAME[k]), *b = get(&bare, SAME[k]);
            assert_memory_equal(a->data, b->data, a->count * sizeof *a->data);
        }
        int n_nan = 0;
        for (size_t k = 0; k < sizeof ROWS / sizeof ROWS[0]; k++) {
            const attn_tensor *a = attn_trace_find(&guarded, ROWS[k]), *b = attn_trace_find(&bare, ROWS[k]);
            if (!a) continue;
            /* (b, h, s, x) or (b, s, x): the query index is the second-to-last axis */
            size_t inner = (size_t)a->shape[a->ndim - 1], s = (size_t)a->shape[a->ndim - 2];
            size_t per_b = a->count / (size_t)a->shape[0];
            for (size_t e = 0; e < a->count; e++) {
                int bi = (int)(e / per_b), i = (int)(e / inner % s);
                bool nan_row = !finite_fill && row_fully_masked(&bare, bi, i);
                if (nan_row) {
                    if (!isnan(b->data[e])) fail_msg("%s[%zu] (row %d,%d) is %g, not NaN", ROWS[k], e, bi, i, b->data[e]);
                    n_nan++;
                } else if (memcmp(&a->data[e], &b->data[e], sizeof(float))) {
                    fail_msg("%s[%zu] differs: %g guarded, %g unguarded", ROWS[k], e, a->data[e], b->data[e]);
                }
            }
        }
        assert_true(finite_fill ? n_nan == 0 : n_nan > 0);
        attn_trace_free(&guarded);
        attn_trace_free(&bare);
    }
}

/* The softmax guard zeroes a row only when the mask hides every key of it.
 * One op, rows as (b=1, h=2, s=4, t=3), the mask (1,1,4,3) shared by both heads:
 *   row 0: keys visible, scores all NaN           -> NaN (the guard hid it as 0)
 *   row 1: keys visible, scores all -inf          -> NaN (0/0 from the data)
 *   row 2: one NaN among finite scores           -> NaN
 *   row 3: every key masked, scores finite + -inf -> 0 guarded, NaN unguarded */
static void test_softmax_guard_asks_the_mask(void **state)
{
    (void)state;
    const float inf = INFINITY, nan = NAN;
    const float mask[4 * 3] = {0, 0, 0, 0, 0, 0, 0, -inf, 0, -inf, -inf, -inf};
    const float scores[4 * 3] = {nan, nan, nan, -inf, -inf, -inf, 1, nan, 2, 3, 1, 2};
    float x[2 * 12], y[2 * 12];
    for (int h = 0; h < 2; h++)
        for (int c = 0; c < 12; c++) x[h * 12 + c] = scores[c] + mask[c];
    for (int guard = 0; guard < 2; guard++) {
        attn_op_softmax(x, mask, y, 1, 2, 4, 3, guard);
        for (int h = 0; h < 2; h++)
            for (int c = 0; c < 12; c++) {
                float v = y[h * 12 + c];
                bool zero = guard && c / 3 == 3;
                if (zero ? v != 0.0f : !isnan(v)) fail_msg("guard %d, head %d, row %d, key %d: %g", guard, h, c / 3, c % 3, v);
            }
    }
    /* no mask at all (a model's logits): a row of -inf is NaN, guard or not */
    float logits[3] = {-inf, -inf, -inf}, probs[3];
    attn_op_softmax(logits, NULL, probs, 1, 1, 1, 3, true);
    for (int j = 0; j < 3; j++) assert_true(isnan(probs[j]));
}

/* A NaN weight (here W_Q[0, 0], read by every query's feature 0, so head 0's
 * every score) shows as NaN in head 0's weights, except in the rows the mask
 * truly hides, which the guard still zeroes (lesson 05 relies on them); the
 * fully masked rows are the mask's three, not head 0's NaN rows; and the
 * trace says where the NaN began. */
static void test_nan_weights_are_not_masked_rows(void **state)
{
    (void)state;
    attn_trace clean, tr;
    const char *const kv[] = {"pad_side", "left", NULL};
    run(&clean, NULL, kv);
    const attn_tensor *wq = get(&clean, "w_q");
    float *poisoned = malloc(wq->count * sizeof *poisoned);
    assert_non_null(poisoned);
    memcpy(poisoned, wq->data, wq->count * sizeof *poisoned);
    poisoned[0] = NAN;
    attn_inputs in = {.w_q = poisoned};
    run(&tr, &in, kv);
    assert_int_equal(tr.n_masked, 3);
    for (int i = 0; i < 3; i++) assert_true(row_fully_masked(&tr, 1, i));
    const attn_dims *d = &tr.dims;
    const attn_tensor *w = get(&tr, "weights");
    int nan_rows = 0;
    for (int b = 0; b < d->b; b++)
        for (int h = 0; h < d->h; h++)
            for (int i = 0; i < d->s; i++) {
                double sum = 0;
                int nans = 0;
                for (int j = 0; j < d->t; j++) {
                    float v = attn_tensor_at4(w, b, h, i, j);
                    nans += isnan(v);
                    sum += isnan(v) ? 0 : v;
                }
                if (row_fully_masked(&tr, b, i)) {
                    if (nans || sum != 0) fail_msg("masked row (%d, %d) of head %d: %d NaN, sum %g", b, i, h, nans, sum);
                } else if (h == 0) {
                    if (nans != d->t) fail_msg("head 0, row (%d, %d): %d of %d NaN", b, i, nans, d->t);
                    nan_rows++;
                } else {
                    assert_int_equal(nans, 0);
                    assert_close((float)sum, 1.0f, 1e-5f, "row sum");
                }
            }
    assert_int_equal(nan_rows, d->b * d->s - 3);
    attn_nonfinite nf;
    char text[200];
    assert_true(attn_nonfinite_find(&tr, &nf));
    assert_string_equal(attn_nonfinite_text(&tr, &nf, text, sizeof text), "NaN first appears in w_q, at [0, 0]");
    assert_false(attn_nonfinite_find(&clean, &nf));
    assert_null(nf.tensor);
    free(poisoned);
    attn_trace_free(&tr);
    attn_trace_free(&clean);
}

/* Where NaN or ±inf first appears, in computing order: an input's +inf
 * before everything; −inf is the mask's fill and no finding in mask or
 * masked_scores; the unguarded softmax's NaN rows are the pitfall, expected,
 * not a warning, unless the data put a NaN there first. */
static void test_nonfinite_first_appearance(void **state)
{
    (void)state;
    attn_trace tr, clean;
    attn_nonfinite nf;
    char text[200];
    run(&clean, NULL, (const char *const[]){"seq", "4", NULL});
    assert_false(attn_nonfinite_find(&clean, &nf)); /* causal: −inf in mask and masked_scores */
    assert_true(isinf(attn_tensor_at4(get(&clean, "masked_scores"), 0, 0, 0, 3)));
    const attn_tensor *x = get(&clean, "x");
    float *xs = malloc(x->count * sizeof *xs);
    assert_non_null(xs);
    memcpy(xs, x->data, x->count * sizeof *xs);
    xs[2 * clean.dims.d + 5] = INFINITY; /* position 2, feature 5 */
    run(&tr, &(attn_inputs){.x = xs}, (const char *const[]){"seq", "4", NULL});
    assert_true(attn_nonfinite_find(&tr, &nf));
    assert_string_equal(attn_nonfinite_text(&tr, &nf, text, sizeof text), "+inf first appears in x, at [0, 2, 5]");
    attn_trace_free(&tr);
    free(xs);
    attn_trace_free(&clean);

    run(&tr, NULL, (const char *const[]){"pad_side", "left", "softmax_guard", "false", NULL});
    assert_false(attn_nonfinite_find(&tr, &nf));
    assert_true(nf.expected);
    assert_int_equal(attn_tensor_stage(nf.tensor), ATTN_STAGE_WEIGHTS);
    assert_true(isnan(nf.value));
    attn_trace_free(&tr);
}

static void test_causal_upper_triangle_is_zero(void **state)
{
    (void)state;
    for (int causal = 0; causal < 2; causal++) {
        attn_trace tr;
        run(&tr, NULL, (const char *const[]){"seq", "12", "batch", "2", "causal", causal ? "true" : "false", NULL});
        const attn_tensor *w = get(&tr, "weights"), *m = get(&tr, "mask");
        int zeros = 0;
        for (int b = 0; b < 2; b++)
            for (int h = 0; h < tr.dims.h; h++)
                for (int i = 0; i < 12; i++)
                    for (int j = i + 1; j < 12; j++) {
                        zeros += attn_tensor_at4(w, b, h, i, j) == 0.0f;
                        assert_true(causal ? isinf(attn_tensor_at4(m, b, 0, i, j)) : attn_tensor_at4(m, b, 0, i, j) == 0.0f);
                    }
        assert_int_equal(zeros, causal ? 2 * tr.dims.h * 66 : 0);
        attn_trace_free(&tr);
    }
}

/* GQA/MQA with g kv heads equals MHA whose K/V weights repeat each group's
 * d×k block h/g times (block j of the MHA weights = block j/(h/g)). */
static void test_gqa_equals_mha_with_repeated_kv_weights(void **state)
{
    (void)state;
    static const char *const kvs[] = {"2", "4", "1"};
    for (size_t c = 0; c < 3; c++) {
        attn_trace gq, mha;
        run(&gq, NULL, (const char *const[]){"heads", "8", "kv_heads", kvs[c], "d_model", "64", "rope", "true",
                                             "pad_side", "left", NULL});
        const int d = 64, h = 8, g = gq.dims.g, k = 8, rep = h / g;
        float *wk = malloc(sizeof(float) * d * h * k), *wv = malloc(sizeof(float) * d * h * k);
        const float *gk = get(&gq, "w_k")->data, *gv = get(&gq, "w_v")->data;
        for (int r = 0; r < d; r++)
            for (int j = 0; j < h; j++)
                for (int c2 = 0; c2 < k; c2++) {
                    wk[(r * h + j) * k + c2] = gk[(r * g + j / rep) * k + c2];
                    wv[(r * h + j) * k + c2] = gv[(r * g + j / rep) * k + c2];
                }
        attn_inputs in = {.w_q = get(&gq, "w_q")->data, .w_k = wk, .w_v = wv, .w_o = get(&gq, "w_o")->data,
                          .x = get(&gq, "x")->data};
        run(&mha, &in, (const char *const[]){"heads", "8", "d_model", "64", "rope", "true", "pad_side", "left", NULL});
        assert_int_equal(mha.dims.mode, ATTN_MODE_MHA);
        static const char *const same[] = {"k_expanded", "v_expanded", "scores", "weights", "context", "out"};
        for (int s = 0; s < 6; s++) {
            const attn_tensor *a = get(&gq, same[s]), *b = get(&mha, same[s]);
            assert_int_equal(a->count, b->count);
            for (size_t i = 0; i < a->count; i++) assert_close(a->data[i], b->data[i], 1e-5f, same[s]);
        }
        free(wk);
        free(wv);
        attn_trace_free(&gq);
        attn_trace_free(&mha);
    }
}

/* Query head j reads kv head j / (h/g). */
static void test_repeat_kv_mapping(void **state)
{
    (void)state;
    attn_trace tr;
    run(&tr, NULL, (const char *const[]){"heads", "8", "kv_heads", "2", NULL});
    const attn_tensor *kh = get(&tr, "k_heads"), *ke = get(&tr, "k_expanded");
    for (int j = 0; j < 8; j++)
        for (int i = 0; i < tr.dims.t; i++)
            for (int c = 0; c < tr.dims.k; c++)
                assert_true(attn_tensor_at4(ke, 1, j, i, c) == attn_tensor_at4(kh, 1, j / 4, i, c));
    attn_trace_free(&tr);
}

/* With past P, the s - P new query rows reproduce the last rows of the full pass. */
static void test_kv_cache_equals_full_pass(void **state)
{
    (void)state;
    static const char *const ropes[] = {"false", "true"};
    static const char *const pasts[] = {"1", "3", "5"};
    static const char *const windows[] = {"0", "2"}; /* a sliding window reads absolute positions too */
    for (int r = 0; r < 2; r++)
        for (int p = 0; p < 3; p++)
        for (int w = 0; w < 2; w++) {
            attn_trace full, cached;
            const char *const base[] = {"heads", "4", "kv_heads", "2", "rope", ropes[r], "pad_side", "left",
                                        "sliding_window", windows[w], NULL};
            run(&full, NULL, base);
            run(&cached, NULL, (const char *const[]){"heads", "4", "kv_heads", "2", "rope", ropes[r], "pad_side",
                                                     "left", "sliding_window", windows[w], "past", pasts[p], NULL});
            const int P = atoi(pasts[p]), s = cached.dims.s;
            assert_int_equal(s, full.dims.s - P);
            assert_int_equal(cached.dims.t, full.dims.t);
            const attn_tensor *kc = get(&cached, "k_cache");
            const attn_tensor *kf = get(&full, r ? "k_rope" : "k_heads");
            for (size_t i = 0; i < kc->count; i++) assert_close(kc->data[i], kf->data[i], 1e-5f, "k_cache");
            static const char *const rows[] = {"scores", "weights", "context"};
            for (int n = 0; n < 3; n++) {
                const attn_tensor *a = get(&cached, rows[n]), *b = get(&full, rows[n]);
                int64_t last = a->shape[3];
                for (int bb = 0; bb < 2; bb++)
                    for (int h = 0; h < 4; h++)
                        for (int i = 0; i < s; i++)
                            for (int j = 0; j < last; j++)
                                assert_close(attn_tensor_at4(a, bb, h, i, j), attn_tensor_at4(b, bb, h, P + i, j), 1e-5f,
                                             rows[n]);
            }
            const attn_tensor *oa = get(&cached, "out"), *ob = get(&full, "out");
            for (int bb = 0; bb < 2; bb++)
                for (int i = 0; i < s; i++)
                    for (int c = 0; c < full.dims.d; c++)
                        assert_close(oa->data[((size_t)bb * s + i) * full.dims.d + c],
                                     ob->data[((size_t)bb * full.dims.s + P + i) * full.dims.d + c], 1e-5f, "out");
            attn_trace_free(&full);
            attn_trace_free(&cached);
        }
}

/* A sliding window of W hides key j from the query at position p when
 * j <= p − W, and without the causal mask also when j >= p + W; rows still sum
 * to 1, and a window as long as the sequence changes nothing. */
static void test_sliding_window_band(void **state)
{
    (void)state;
    static const char *const causals[] = {"true", "false"};
    static const char *const windows[] = {"1", "2", "3", "6"};
    for (int cz = 0; cz < 2; cz++)
        for (int w = 0; w < 4; w++) {
            attn_trace tr, plain;
            run(&tr, NULL, (const char *const[]){"causal", causals[cz], "sliding_window", windows[w], NULL});
            run(&plain, NULL, (const char *const[]){"causal", causals[cz], NULL});
            check_rows(&tr);
            const attn_dims *d = &tr.dims;
            const attn_tensor *m = get(&tr, "mask"), *m0 = get(&plain, "mask");
            const int W = atoi(windows[w]);
            for (int b = 0; b < d->b; b++)
                for (int i = 0; i < d->s; i++)
                    for (int j = 0; j < d->t; j++) {
                        bool far = j <= i - W || (cz == 1 && j >= i + W);
                        bool hidden = far || attn_tensor_at4(m0, b, 0, i, j) != 0.0f;
                        if ((attn_tensor_at4(m, b, 0, i, j) != 0.0f) != hidden)
                            fail_msg("causal %s, window %d: mask[%d, %d, %d] should be %s", causals[cz], W, b, i, j,
                                     hidden ? "masked" : "open");
                    }
            if (W >= d->t) {
                const attn_tensor *a = get(&tr, "weights"), *p = get(&plain, "weights");
                assert_memory_equal(a->data, p->data, a->count * sizeof(float));
            }
            attn_trace_free(&tr);
            attn_trace_free(&plain);
        }
}

/* With RoPE, a score depends on the query and key contents and their offset
 * only: a repeated token gives a Toeplitz score matrix, and shifting a
 * sentence right leaves its scores unchanged. */
static void test_rope_scores_depend_on_relative_position(void **state)
{
    (void)state;
    attn_trace tr, shifted;
    run(&tr, NULL, (const char *const[]){"tokens", "猫 猫 猫 猫 猫 猫 猫", "rope", "true", "causal", "false", NULL});
    const attn_tensor *sc = get(&tr, "scores");
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 7; i++)
            for (int j = 0; j < 7; j++)
                if (i > 0 && j > 0)
                    assert_close(attn_tensor_at4(sc, 0, h, i, j), attn_tensor_at4(sc, 0, h, i - 1, j - 1), 1e-4f,
                                 "toeplitz");
    /* and it is not trivially constant: offsets 0 and 3 differ */
    assert_true(fabsf(attn_tensor_at4(sc, 0, 0, 3, 3) - attn_tensor_at4(sc, 0, 0, 3, 0)) > 1e-3f);
    attn_trace_free(&tr);

    run(&tr, NULL, (const char *const[]){"tokens", "我 爱 AI 和 猫", "rope", "true", "causal", "false", NULL});
    run(&shifted, NULL,
        (const char *const[]){"tokens", "x y z 我 爱 AI 和 猫", "rope", "true", "causal", "false", NULL});
    const attn_tensor *a = get(&tr, "scores"), *b = get(&shifted, "scores");
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 5; i++)
            for (int j = 0; j < 5; j++)
                assert_close(attn_tensor_at4(a, 0, h, i, j), attn_tensor_at4(b, 0, h, i + 3, j + 3), 1e-4f, "shift");
    attn_trace_free(&tr);
    attn_trace_free(&shifted);
}

/* Interleaved and half RoPE are one rotation under a permutation of each head's
 * features: W_Q, W_K columns (2m, 2m+1) of the interleaved run become columns
 * (m, m + k/2) of the half run, and every score is the same. */
static void test_rope_styles_agree_under_permutation(void **state)
{
    (void)state;
    attn_trace a, b;
    static const char *const kv[] = {"tokens", "我 爱 AI 和 猫 猫", "rope", "true", "heads", "4", "kv_heads", "2", NULL};
    run(&a, NULL, kv);
    const attn_tensor *wq = get(&a, "w_q"), *wk = get(&a, "w_k");
    int d = (int)wq->shape[0], k = a.dims.k;
    float *pq = malloc(wq->count * sizeof *pq), *pk = malloc(wk->count * sizeof *pk);
    for (int r = 0; r < d; r++)
        for (int c = 0; c < (int)wq->shape[1]; c++) {
            int head = c / k, f = c % k, m = f / 2, to = head * k + (f % 2 ? m + k / 2 : m);
            pq[(size_t)r * wq->shape[1] + to] = wq->data[(size_t)r * wq->shape[1] + c];
            if (c < (int)wk->shape[1]) pk[(size_t)r * wk->shape[1] + to] = wk->data[(size_t)r * wk->shape[1] + c];
        }
    attn_inputs in;
    attn_inputs_from_trace(&a, &in);
    in.w_q = pq;
    in.w_k = pk;
    run(&b, &in, (const char *const[]){"tokens", "我 爱 AI 和 猫 猫", "rope", "true", "heads", "4", "kv_heads", "2",
                                       "rope_style", "half", NULL});
    const attn_tensor *sa = get(&a, "scores"), *sb = get(&b, "scores");
    for (size_t i = 0; i < sa->count; i++) assert_close(sa->data[i], sb->data[i], 1e-4f, "scores");
    free(pq);
    free(pk);
    attn_trace_free(&a);
    attn_trace_free(&b);
}

/* Whatever a pad position's embedding holds, valid queries' weights on valid
 * keys do not change (and pad keys get weight 0). */
static void test_padding_isolated(void **state)
{
    (void)state;
    static const char *const sides[] = {"right", "left"};
    for (int sd = 0; sd < 2; sd++) {
        attn_trace a, b;
        const char *const kv[] = {"pad_side", sides[sd], "causal", "false", NULL};
        run(&a, NULL, kv);
        const attn_tensor *x = get(&a, "x");
        float *x2 = malloc(x->count * sizeof(float));
        memcpy(x2, x->data, x->count * sizeof(float));
        const attn_dims *d = &a.dims;
        for (int p = 0; p < d->L; p++)
            if (attn_tokens_is_pad(&a.tokens, 1, p))
                for (int c = 0; c < d->d; c++) x2[((size_t)1 * d->s + p) * d->d + c] = 10.0f * sinf((float)(p * 7 + c));
        attn_inputs in = {.x = x2};
        run(&b, &in, kv);
        const attn_tensor *wa = get(&a, "weights"), *wb = get(&b, "weights");
        int compared = 0;
        for (int h = 0; h < d->h; h++)
            for (int i = 0; i < d->s; i++)
                for (int j = 0; j < d->t; j++) {
                    bool qpad = attn_tokens_is_pad(&a.tokens, 1, i), kpad = attn_tokens_is_pad(&a.tokens, 1, j);
                    if (kpad) assert_true(attn_tensor_at4(wb, 1, h, i, j) == 0.0f);
                    if (qpad || kpad) continue;
                    assert_close(attn_tensor_at4(wa, 1, h, i, j), attn_tensor_at4(wb, 1, h, i, j), 1e-6f, "pad");
                    compared++;
                }
        assert_int_equal(compared, d->h * 3 * 3);
        free(x2);
        attn_trace_free(&a);
        attn_trace_free(&b);
    }
}

static void assert_same_tensor(const attn_trace *a, const attn_trace *b, const char *name)
{
    const attn_tensor *x = get(a, name), *y = get(b, name);
    assert_int_equal(x->count, y->count);
    assert_memory_equal(x->data, y->data, x->count * sizeof(float));
}

static void test_dropout_modes(void **state)
{
    (void)state;
    attn_trace eval_p, eval_0, train_0, train_p, train_p2, train_seed;
    run(&eval_p, NULL, (const char *const[]){"dropout", "0.5", NULL});
    run(&eval_0, NULL, (const char *const[]){"dropout", "0", NULL});
    run(&train_0, NULL, (const char *const[]){"dropout", "0", "train", "true", NULL});
    /* eval ignores p; training with p = 0 equals eval */
    assert_same_tensor(&eval_p, &eval_0, "out");
    assert_same_tensor(&train_0, &eval_0, "out");
    assert_null(attn_trace_find(&eval_p, "weights_dropout"));
    assert_null(attn_trace_find(&train_0, "weights_dropout"));

    run(&train_p, NULL, (const char *const[]){"dropout", "0.25", "train", "true", "seq", "64", NULL});
    run(&train_p2, NULL, (const char *const[]){"dropout", "0.25", "train", "true", "seq", "64", NULL});
    run(&train_seed, NULL, (const char *const[]){"dropout", "0.25", "train", "true", "seq", "64", "seed", "7", NULL});
    assert_same_tensor(&train_p, &train_p2, "weights_dropout"); /* deterministic given the seed */
    assert_same_tensor(&train_p, &train_p2, "out");
    const attn_tensor *w = get(&train_p, "weights"), *wd = get(&train_p, "weights_dropout");
    size_t dropped = 0, live = 0;
    for (size_t i = 0; i < w->count; i++) {
        if (w->data[i] == 0.0f) continue;
        live++;
        if (wd->data[i] == 0.0f) dropped++;
        else assert_close(wd->data[i], w->data[i] / 0.75f, 1e-6f, "kept weight scaled by 1/(1-p)");
    }
    double rate = (double)dropped / (double)live;
    assert_true(rate > 0.2 && rate < 0.3);
    /* a different seed drops different cells */
    const attn_tensor *wd7 = get(&train_seed, "weights_dropout");
    size_t differ = 0;
    for (size_t i = 0; i < wd7->count; i++) differ += (wd7->data[i] == 0.0f) != (wd->data[i] == 0.0f);
    assert_true(differ > 0);
    attn_trace_free(&eval_p);
    attn_trace_free(&eval_0);
    attn_trace_free(&train_0);
    attn_trace_free(&train_p);
    attn_trace_free(&train_p2);
    attn_trace_free(&train_seed);
}

/* A token's embedding depends only on (text, seed): repeated tokens share rows. */
static void test_embeddings_by_token(void **state)
{
    (void)state;
    attn_trace tr;
    run(&tr, NULL, (const char *const[]){"tokens", "猫 是 猫 | 猫", NULL});
    const attn_tensor *x = get(&tr, "x");
    const int d = tr.dims.d;
    assert_memory_equal(x->data, x->data + 2 * d, d * sizeof(float));
    assert_memory_equal(x->data, x->data + 3 * d, d * sizeof(float));
    assert_memory_not_equal(x->data, x->data + d, d * sizeof(float));
    attn_trace_free(&tr);
}

/* ---- the settings around the scores (issue 33) ---- */

/* BLOOM's build_alibi_tensor slopes, as it prints them for 8, 12 and 16 heads. */
static void test_alibi_slopes_are_bloom_s(void **state)
{
    (void)state;
    static const double s8[] = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625};
    static const double s12[] = {0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
                                 0.70710678118654757, 0.35355339059327379, 0.17677669529663687, 0.088388347648318433};
    static const double s16[] = {0.70710678118654757, 0.5, 0.35355339059327379, 0.25, 0.17677669529663687, 0.125,
                                 0.088388347648318433, 0.0625, 0.044194173824159216, 0.03125, 0.022097086912079608,
                                 0.015625, 0.011048543456039804, 0.0078125, 0.005524271728019902, 0.00390625};
    const double *want[] = {s8, s12, s16};
    const int n[] = {8, 12, 16};
    double m[16];
    for (int c = 0; c < 3; c++) {
        attn_alibi_slopes(n[c], m);
        for (int h = 0; h < n[c]; h++)
            if (fabs(m[h] - want[c][h]) > 1e-15) fail_msg("n = %d, head %d: %.17g, BLOOM %.17g", n[c], h, m[h], want[c][h]);
    }
    attn_alibi_slopes(1, m); /* one head: 2^−8 */
    assert_true(m[0] == 0.00390625);
}

/* bias[h,i,j] = −m_h·|P + i − j|: Toeplitz in (i, j), 0 on the diagonal, the
 * same in every batch row; soft-capped scores stay within (−C, C) and keep
 * their order. */
static void test_alibi_bias_and_softcap_values(void **state)
{
    (void)state;
    attn_trace tr;
    run(&tr, NULL, (const char *const[]){"alibi", "true", "softcap", "0.5", "causal", "false", "past", "2",
                                         "heads", "8", "d_model", "64", "scale", "false", NULL});
    const attn_dims *d = &tr.dims;
    const attn_tensor *bias = get(&tr, "bias"), *sc = get(&tr, "scores"), *cap = get(&tr, "capped_scores");
    double m[8];
    attn_alibi_slopes(8, m);
    for (int b = 0; b < d->b; b++)
        for (int h = 0; h < d->h; h++)
            for (int i = 0; i < d->s; i++)
                for (int j = 0; j < d->t; j++) {
                    float v = attn_tensor_at4(bias, b, h, i, j);
                    assert_true(v == (float)(-m[h] * abs(d->P + i - j)));
                    float c = attn_tensor_at4(cap, b, h, i, j), x = attn_tensor_at4(sc, b, h, i, j) + v;
                    assert_true(fabsf(c) <= 0.5f);
                    if (fabsf(x) < 4.0f) assert_true(fabsf(c) < 0.5f);
                    assert_true((c > 0) == (x > 0) || x == 0);
                    assert_close(c, 0.5f * tanhf(x / 0.5f), 1e-6f, "capped");
                }
    attn_trace_free(&tr);
}

/* Keys 0 … N−1 stay open beside the window, and only the window spares
 * them: the causal and pad masks still hide them. */
static void test_keep_first_beside_the_window(void **state)
{
    (void)state;
    for (int cz = 0; cz < 2; cz++) {
        attn_trace tr, plain;
        const char *causal = cz ? "false" : "true";
        run(&tr, NULL, (const char *const[]){"sliding_window", "2", "keep_first", "2", "causal", causal, "seq", "9",
                                             NULL});
        run(&plain, NULL, (const char *const[]){"sliding_window", "2", "causal", causal, "seq", "9", NULL});
        const attn_tensor *m = get(&tr, "mask"), *m0 = get(&plain, "mask");
        for (int i = 0; i < tr.dims.s; i++)
            for (int j = 0; j < tr.dims.t; j++) {
                bool open = attn_tensor_at4(m, 0, 0, i, j) == 0.0f, open0 = attn_tensor_at4(m0, 0, 0, i, j) == 0.0f;
                bool want = j < 2 ? (cz || j <= i) : open0;
                if (open != want) fail_msg("causal %s: mask[%d, %d] should be %s", causal, i, j, want ? "open" : "masked");
            }
        check_rows(&tr);
        attn_trace_free(&tr);
        attn_trace_free(&plain);
    }
}

/* Each new setting, with RoPE, GQA and left pads: a run with past P gives
 * the last rows of the full pass, for every stage of one cell per (query,
 * key), the sink's weights, the normalised keys and the output. */
static void test_kv_cache_equals_full_pass_with_each_setting(void **state)
{
    (void)state;
    static const char *const extra[][8] = {
        {"alibi", "true", NULL}, {"softcap", "1.5", NULL}, {"qk_norm", "true", NULL}, {"sink_logit", "0.7", NULL},
        {"sliding_window", "2", "keep_first", "1", NULL},
        {"alibi", "true", "softcap", "3", "sink_logit", "-1", NULL},
    };
    static const char *const rows[] = {"scores", "bias", "capped_scores", "masked_scores", "weights", "context"};
    for (size_t e = 0; e < sizeof extra / sizeof extra[0]; e++)
        for (int P = 1; P <= 4; P += 3) {
            const char *kv[24] = {"heads", "4", "kv_heads", "2", "rope", "true", "pad_side", "left", NULL};
            int n = 8;
            for (int x = 0; extra[e][x]; x++) kv[n++] = extra[e][x];
            attn_trace full, cached;
            run(&full, NULL, kv);
            char past[8];
            snprintf(past, sizeof past, "%d", P);
            kv[n++] = "past", kv[n++] = past, kv[n] = NULL;
            run(&cached, NULL, kv);
            const int s = cached.dims.s;
            for (int r = 0; r < 6; r++) {
                const attn_tensor *a = attn_trace_find(&cached, rows[r]), *b = attn_trace_find(&full, rows[r]);
                assert_int_equal(a != NULL, b != NULL);
                for (int bb = 0; a && bb < 2; bb++)
                    for (int h = 0; h < 4; h++)
                        for (int i = 0; i < s; i++)
                            for (int j = 0; j < cached.dims.t; j++)
                                assert_close(attn_tensor_at4(a, bb, h, i, j), attn_tensor_at4(b, bb, h, P + i, j), 1e-5f,
                                             rows[r]);
            }
            const attn_tensor *sa = attn_trace_find(&cached, "sink_weight"), *sb = attn_trace_find(&full, "sink_weight");
            for (int bh = 0; sa && bh < 2 * 4; bh++)
                for (int i = 0; i < s; i++)
                    assert_close(sa->data[(size_t)bh * s + i], sb->data[(size_t)bh * full.dims.s + P + i], 1e-6f, "sink");
            const attn_tensor *oa = get(&cached, "out"), *ob = get(&full, "out");
            for (int bb = 0; bb < 2; bb++)
                for (int i = 0; i < s * full.dims.d; i++)
                    assert_close(oa->data[(size_t)bb * s * full.dims.d + i],
                                 ob->data[((size_t)bb * full.dims.s + P) * full.dims.d + i], 1e-5f, "out");
            check_rows(&cached);
            attn_trace_free(&full);
            attn_trace_free(&cached);
        }
}

/* GQA and MQA equal MHA with repeated K/V weights under the new settings
 * too: ALiBi's slopes are the query heads', and QK-norm's gains are shared by
 * every head (so the repeated heads are normalised alike). */
static void test_gqa_equals_mha_with_each_setting(void **state)
{
    (void)state;
    static const char *const kvs[] = {"2", "1"};
    for (int c = 0; c < 2; c++) {
        const char *base[] = {"heads", "8", "d_model", "64", "rope", "true", "pad_side", "left", "alibi", "true",
                              "softcap", "2", "qk_norm", "true", "sink_logit", "0.3", "kv_heads", kvs[c], NULL};
        attn_trace gq, mha;
        run(&gq, NULL, base);
        const int d = 64, h = 8, g = gq.dims.g, k = 8, rep = h / g;
        float *wk = malloc(sizeof(float) * d * h * k), *wv = malloc(sizeof(float) * d * h * k);
        const float *gk = get(&gq, "w_k")->data, *gv = get(&gq, "w_v")->data;
        for (int r = 0; r < d; r++)
            for (int j = 0; j < h; j++)
                for (int c2 = 0; c2 < k; c2++) {
                    wk[(r * h + j) * k + c2] = gk[(r * g + j / rep) * k + c2];
                    wv[(r * h + j) * k + c2] = gv[(r * g + j / rep) * k + c2];
                }
        attn_inputs in = {.w_q = get(&gq, "w_q")->data, .w_k = wk, .w_v = wv, .w_o = get(&gq, "w_o")->data,
                          .q_norm = get(&gq, "w_qn")->data, .k_norm = get(&gq, "w_kn")->data, .x = get(&gq, "x")->data};
        base[16] = NULL; /* no kv_heads: MHA */
        run(&mha, &in, base);
        assert_int_equal(mha.dims.mode, ATTN_MODE_MHA);
        static const char *const same[] = {"k_expanded", "bias", "capped_scores", "weights", "sink_weight", "out"};
        for (int s = 0; s < 6; s++) {
            const attn_tensor *a = get(&gq, same[s]), *b = get(&mha, same[s]);
            assert_int_equal(a->count, b->count);
            for (size_t i = 0; i < a->count; i++) assert_close(a->data[i], b->data[i], 1e-5f, same[s]);
        }
        free(wk);
        free(wv);
        attn_trace_free(&gq);
        attn_trace_free(&mha);
    }
}

/* QK-norm: every head of q_norm and k_norm has mean square ≈ mean(g²)·(1 − ε
 * terms) when the gains are 1; with the trace's gains, q_norm / g is a unit
 * RMS vector. The gains come from the seed, near 1, and a --weights file or
 * the caller may give them. */
static void test_qk_norm_heads_have_unit_rms(void **state)
{
    (void)state;
    attn_trace tr;
    run(&tr, NULL, (const char *const[]){"qk_norm", "true", "kv_heads", "2", NULL});
    const attn_tensor *qn = get(&tr, "q_norm"), *kn = get(&tr, "k_norm");
    const float *gq = get(&tr, "w_qn")->data, *gk = get(&tr, "w_kn")->data;
    const int k = tr.dims.k;
    for (int c = 0; c < k; c++) assert_true(fabsf(gq[c] - 1.0f) < 0.6f && gq[c] != gk[c]);
    const attn_tensor *ts[] = {qn, kn};
    const float *gs[] = {gq, gk};
    for (int w = 0; w < 2; w++)
        for (size_t r = 0; r < ts[w]->count / k; r++) {
            double sq = 0;
            for (int c = 0; c < k; c++) {
                double v = ts[w]->data[r * k + c] / gs[w][c];
                sq += v * v;
            }
            assert_close((float)(sq / k), 1.0f, 1e-4f, "rms");
        }
    attn_trace_free(&tr);
}

/* SwiGLU's act = g / (1 + e^(−g)) · up, from a vectorised e^x: within a few
 * ulps of the formula in double for g from −100 to 100 (below −87.3, where
 * the e^g it takes underflows to 0, the act is 0 instead of a float under
 * 3e-35); NaN in, NaN out, −∞ → NaN, +∞ → +∞ · up, as the formula gives;
 * in place (act = gate, as the prefill calls it) the same; the same numbers
 * whether a long vector goes in blocks on the threads or one by one. */
static void test_swiglu_against_its_formula(void **state)
{
    (void)state;
    enum { N = 20001 };
    static float g[N], up[N], act[N];
    for (int i = 0; i < N; i++) g[i] = -100.0f + 0.01f * (float)i, up[i] = 0.5f + (float)(i % 7) * 0.25f;
    attn_op_swiglu(g, up, act, N);
    for (int i = 0; i < N; i++) {
        double want = (double)g[i] / (1.0 + exp(-(double)g[i])) * up[i];
        if (!(fabs(act[i] - want) <= 4e-7 * fabs(want) + 3e-35)) /* |g| e^g · up < 3e-35 there */
            fail_msg("swiglu(%.9g) = %.9g, want %.9g", g[i], act[i], want);
    }
    static float in_place[N];
    memcpy(in_place, g, sizeof g);
    attn_op_swiglu(in_place, up, in_place, N);
    assert_memory_equal(in_place, act, sizeof act);
    float odd[] = {NAN, -INFINITY, INFINITY, 0.0f, -0.0f}, two[] = {2, 2, 2, 2, 2}, out[5];
    attn_op_swiglu(odd, two, out, 5);
    assert_true(isnan(out[0]) && isnan(out[1]));
    assert_true(out[2] == INFINITY && out[3] == 0.0f && out[4] == 0.0f && signbit(out[4]));
    enum { LONG = 4096 * 17 + 5 }; /* over 65,536: in blocks, on the threads */
    float *lg = malloc(LONG * sizeof *lg), *lu = malloc(LONG * sizeof *lu), *la = malloc(LONG * sizeof *la);
    assert_non_null(lg), assert_non_null(lu), assert_non_null(la);
    for (int i = 0; i < LONG; i++) lg[i] = (float)((i * 37) % 2001 - 1000) / 100.0f;
    for (int i = 0; i < LONG; i++) lu[i] = (float)(i % 5) - 2.0f;
    attn_op_swiglu(lg, lu, la, LONG);
    for (int i = 0; i < LONG; i++) {
        float one;
        attn_op_swiglu(lg + i, lu + i, &one, 1);
        assert_memory_equal(&one, la + i, sizeof one);
    }
    free(lg), free(lu), free(la);
}

/* RMSNorm: y = x / √(mean(x²) + eps) ⊙ gain within a float ulp or two of
 * the formula in double, for widths that are and are not multiples of the
 * eight running sums; in place the same as out of place. */
static void test_rmsnorm_against_its_formula(void **state)
{
    (void)state;
    static const int widths[] = {1, 3, 8, 64, 2051};
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        int n = widths[w];
        float *x = malloc((size_t)2 * n * sizeof *x), *gain = malloc((size_t)n * sizeof *gain);
        float *y = malloc((size_t)2 * n * sizeof *y);
        assert_non_null(x), assert_non_null(gain), assert_non_null(y);
        for (int i = 0; i < 2 * n; i++) x[i] = (float)((i * 53) % 199 - 99) / 7.0f;
        for (int i = 0; i < n; i++) gain[i] = 0.5f + (float)(i % 11) / 10.0f;
        attn_op_rmsnorm(x, gain, y, 2, n, 1e-5);
        for (int r = 0; r < 2; r++) {
            double sq = 0;
            for (int i = 0; i < n; i++) sq += (double)x[r * n + i] * x[r * n + i];
            double inv = 1.0 / sqrt(sq / n + 1e-5);
            for (int i = 0; i < n; i++)
                assert_close(y[r * n + i], (float)(gain[i] * (x[r * n + i] * inv)), 3e-7f, "rmsnorm");
        }
        attn_op_rmsnorm(x, gain, x, 2, n, 1e-5); /* y = x */
        assert_memory_equal(x, y, (size_t)2 * n * sizeof *x);
        free(x), free(gain), free(y);
    }
}

/* The softmax's row max: −∞ only when the row and its start are all −∞, the
 * fill −FLT_MAX (torch.finfo(float32).min) kept as itself, NaNs skipped, and a
 * left-padded row of a batch given weights 0, not NaN, whatever the compiler's
 * reduction starts its lanes at (clang and emcc at −FLT_MAX: lesson 5's NaN on the web page). */
static void test_row_max(void **state)
{
    (void)state;
    float inf[37], fmin[37], mixed[37];
    for (int j = 0; j < 37; j++) inf[j] = -INFINITY, fmin[j] = -FLT_MAX, mixed[j] = j == 29 ? 2.5f : -INFINITY;
    assert_true(attn_op_row_max(inf, 37, -INFINITY) == -INFINITY);
    assert_true(attn_op_row_max(inf, 0, -INFINITY) == -INFINITY);
    assert_true(attn_op_row_max(fmin, 37, -INFINITY) == -FLT_MAX);
    assert_true(attn_op_row_max(inf, 37, -FLT_MAX) == -FLT_MAX);
    assert_true(attn_op_row_max(inf, 37, 1.0f) == 1.0f); /* a sink's logit */
    assert_true(attn_op_row_max(mixed, 37, -INFINITY) == 2.5f);
    mixed[3] = NAN;
    assert_true(attn_op_row_max(mixed, 37, -INFINITY) == 2.5f);
    attn_trace tr;
    run(&tr, NULL, (const char *const[]){"pad_side", "left", "tokens", "a b c d e f g|h", NULL});
    const attn_tensor *w = attn_trace_find(&tr, "weights");
    for (size_t i = 0; i < w->count; i++) assert_false(isnan(w->data[i]));
    attn_trace_free(&tr);
}

/* attn_op_softmax_sink row by row: X = −∞ is the plain softmax bit for bit
 * with a sink of 0; a row of −∞ gives the sink 1 and its keys 0, guarded or
 * not; a NaN score makes the row and its sink NaN; a finite row and X give
 * e^(x − M) / Z with the sink's share e^(X − M) / Z. */
static void test_softmax_with_a_sink(void **state)
{
    (void)state;
    const float inf = INFINITY;
    const float x[4][3] = {{0.5f, -1.0f, 2.0f}, {-inf, -inf, -inf}, {1.0f, NAN, 0.0f}, {-30.0f, -31.0f, -inf}};
    const float m[4][3] = {{0, 0, 0}, {-inf, -inf, -inf}, {0, 0, 0}, {0, 0, -inf}};
    float y[4][3], plain[4][3], sink[4];
    for (int guard = 0; guard < 2; guard++) {
        attn_op_softmax_sink(&x[0][0], &m[0][0], &y[0][0], sink, 1, 1, 4, 3, guard, -inf);
        attn_op_softmax(&x[0][0], &m[0][0], &plain[0][0], 1, 1, 4, 3, guard);
        assert_memory_equal(y[0], plain[0], sizeof y[0]);
        assert_true(sink[0] == 0.0f);
        attn_op_softmax_sink(&x[0][0], &m[0][0], &y[0][0], sink, 1, 1, 4, 3, guard, 1.0f);
        double z = exp(0.5 - 2.0) + exp(-1.0 - 2.0) + 1.0 + exp(1.0 - 2.0);
        assert_close(y[0][0], (float)(exp(-1.5) / z), 1e-6f, "y");
        assert_close(sink[0], (float)(exp(-1.0) / z), 1e-6f, "sink");
        assert_true(sink[1] == 1.0f && y[1][0] == 0.0f && y[1][1] == 0.0f && y[1][2] == 0.0f);
        assert_true(isnan(sink[2]) && isnan(y[2][0]) && isnan(y[2][1]));
        /* scores far below the sink: the sink takes nearly all, the keys keep their ratio e^1 */
        assert_close(sink[3], 1.0f, 1e-6f, "sink ≈ 1");
        assert_close(y[3][0] / y[3][1], expf(1.0f), 1e-5f, "ratio");
        assert_true(y[3][2] == 0.0f);
    }
}

/* attn_op_softmax_sinks (gpt-oss's learned sinks, one X_h per head): each
 * head's rows are attn_op_softmax_sink's with that head's X, bit for bit,
 * in every batch row; X_h = −∞ is that head's plain softmax. */
static void test_softmax_with_a_sink_per_head(void **state)
{
    (void)state;
    enum { B = 2, H = 3, S = 2, T = 3 };
    const float X[H] = {0.5f, -INFINITY, 3.0f};
    float x[B * H * S * T], m[B * S * T] = {0}, y[B * H * S * T], one[S * T], sink[B * H * S], one_sink[S];
    for (int i = 0; i < B * H * S * T; i++) x[i] = sinf(1.7f * (float)i);
    m[T - 1] = m[S * T + T - 1] = -INFINITY; /* row 0 of each batch row hides its last key */
    attn_op_softmax_sinks(x, m, y, sink, B, H, S, T, true, X);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const size_t at = ((size_t)b * H + h) * S;
            attn_op_softmax_sink(x + at * T, m + (size_t)b * S * T, one, one_sink, 1, 1, S, T, true, X[h]);
            assert_memory_equal(y + at * T, one, sizeof one);
            assert_memory_equal(sink + at, one_sink, sizeof one_sink);
            if (h == 1) assert_true(sink[at] == 0.0f && sink[at + 1] == 0.0f);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_sum_to_one),
        cmocka_unit_test(test_row_max),
        cmocka_unit_test(test_swiglu_against_its_formula),
        cmocka_unit_test(test_rmsnorm_against_its_formula),
        cmocka_unit_test(test_fully_masked_rows),
        cmocka_unit_test(test_unguarded_softmax_spreads_nan),
        cmocka_unit_test(test_softmax_guard_asks_the_mask),
        cmocka_unit_test(test_nan_weights_are_not_masked_rows),
        cmocka_unit_test(test_nonfinite_first_appearance),
        cmocka_unit_test(test_causal_upper_triangle_is_zero),
        cmocka_unit_test(test_gqa_equals_mha_with_repeated_kv_weights),
        cmocka_unit_test(test_repeat_kv_mapping),
        cmocka_unit_test(test_kv_cache_equals_full_pass),
        cmocka_unit_test(test_sliding_window_band),
        cmocka_unit_test(test_rope_scores_depend_on_relative_position),
        cmocka_unit_test(test_rope_styles_agree_under_permutation),
        cmocka_unit_test(test_padding_isolated),
        cmocka_unit_test(test_dropout_modes),
        cmocka_unit_test(test_embeddings_by_token),
        cmocka_unit_test(test_alibi_slopes_are_bloom_s),
        cmocka_unit_test(test_alibi_bias_and_softcap_values),
        cmocka_unit_test(test_keep_first_beside_the_window),
        cmocka_unit_test(test_kv_cache_equals_full_pass_with_each_setting),
        cmocka_unit_test(test_gqa_equals_mha_with_each_setting),
        cmocka_unit_test(test_qk_norm_heads_have_unit_rms),
        cmocka_unit_test(test_softmax_with_a_sink),
        cmocka_unit_test(test_softmax_with_a_sink_per_head),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
