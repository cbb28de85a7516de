/* test_derived.c — stages made from others when first read (derived.h): the
 * masked scores, left unwritten by the pass, equal scores (or capped scores)
 * plus the mask bit for bit once read, by any way a reader reaches them. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "engine/run/forward.h"
#include "engine/trace/arena.h"
#include "engine/trace/trace.h"

static void run(const char *const *kv, attn_arena *store, attn_trace *tr)
{
    attn_config c;
    attn_error err;
    attn_config_init(&c);
    for (int i = 0; kv[i]; i += 2)
        if (attn_config_set(&c, kv[i], kv[i + 1], &err)) fail_msg("set %s: %s", kv[i], err.msg);
    attn_inputs in = {.arena = store};
    if (attn_trace_run(&c, &in, tr, &err)) fail_msg("%s", err.msg);
    attn_config_free(&c);
}

/* kv run twice through store a, NaN written over its block between: what the
 * second run does not write still holds NaN. */
static void run_on_poison(const char *const *kv, attn_arena *a, attn_trace *tr)
{
    attn_arena_init(a);
    run(kv, a, tr);
    attn_trace_free(tr);
    memset(a->idle[0], 0xff, a->idle_bytes[0]);
    run(kv, a, tr);
}

/* masked_scores of tr's layer 0 reached by its index: not yet made */
static const attn_tensor *by_index(const attn_trace *tr)
{
    for (int i = 0; i < tr->n_tensors; i++)
        if (attn_tensor_stage(&tr->tensors[i]) == ATTN_STAGE_MASKED_SCORES) return &tr->tensors[i];
    fail_msg("no masked_scores");
    return NULL;
}

/* Every cell is pre + mask (mask broadcast over the heads), compared as bits. */
static void check_sum(const attn_trace *tr, const attn_tensor *ms, attn_stage_id pre_id)
{
    const attn_tensor *pre = attn_trace_stage(tr, 0, pre_id), *mask = attn_trace_stage(tr, 0, ATTN_STAGE_MASK);
    assert_non_null(pre);
    assert_non_null(mask);
    int b = (int)ms->shape[0], h = (int)ms->shape[1];
    size_t st = (size_t)ms->shape[2] * ms->shape[3];
    int minus_inf = 0;
    for (int bi = 0; bi < b; bi++)
        for (int j = 0; j < h; j++)
            for (size_t c = 0; c < st; c++) {
                float want = pre->data[((size_t)bi * h + j) * st + c] + mask->data[(size_t)bi * st + c];
                float got = ms->data[((size_t)bi * h + j) * st + c];
                if (memcmp(&want, &got, sizeof got)) fail_msg("cell %d,%d,%zu: %g, not %g", bi, j, c, got, want);
                minus_inf += isinf(got) && got < 0;
            }
    assert_true(minus_inf > 0); /* the causal mask's future */
}

/* The pass leaves the stage to its reader; a lookup makes it, from a block
 * that held NaN everywhere (a store's, reused), and the weights are the
 * softmax of those sums: each row sums to 1 and a masked cell is exactly 0. */
static void test_masked_scores_made_when_read(void **state)
{
    (void)state;
    static const char *const kv[] = {"seq", "7", "heads", "4", "kv_heads", "2", "batch", "2", NULL};
    attn_arena a;
    attn_trace tr;
    run_on_poison(kv, &a, &tr);
    const attn_tensor *ms = by_index(&tr);
    assert_non_null(ms->lazy);
    assert_true(ms->lazy->whole);
    assert_true(isnan(ms->data[0])); /* the poison: not written by the pass */
    assert_ptr_equal(attn_trace_stage(&tr, 0, ATTN_STAGE_MASKED_SCORES), ms);
    check_sum(&tr, ms, ATTN_STAGE_SCORES);
    const attn_tensor *w = attn_trace_stage(&tr, 0, ATTN_STAGE_WEIGHTS);
    for (size_t r = 0; r < w->count / (size_t)w->shape[3]; r++) {
        double sum = 0;
        for (int j = 0; j < w->shape[3]; j++) {
            float m = ms->data[r * (size_t)w->shape[3] + (size_t)j], x = w->data[r * (size_t)w->shape[3] + (size_t)j];
            if (isinf(m)) assert_true(x == 0.0f);
            sum += x;
        }
        assert_true(fabs(sum - 1.0) < 1e-5);
    }
    attn_trace_free(&tr);
    attn_arena_free(&a);
}

/* Each way a reader reaches it makes it: by name, by layer and name, by index
 * (attn_tensor_filled), a picture's rows (attn_trace_matrix_of). */
static void test_every_way_in(void **state)
{
    (void)state;
    static const char *const kv[] = {"seq", "6", "heads", "2", NULL};
    for (int way = 0; way < 4; way++) {
        attn_arena a;
        attn_trace tr;
        run_on_poison(kv, &a, &tr);
        const attn_tensor *ms = by_index(&tr);
        attn_matrix m;
        switch (way) {
        case 0: assert_ptr_equal(attn_trace_find(&tr, ms->name), ms); break;
        case 1: assert_ptr_equal(attn_trace_get(&tr, 0, "masked_scores"), ms); break;
        case 2: assert_ptr_equal(attn_tensor_filled(ms), ms); break;
        default: assert_int_equal(attn_trace_matrix_of(&tr, ms, 0, 1, &m), 0); break;
        }
        check_sum(&tr, ms, ATTN_STAGE_SCORES);
        attn_trace_free(&tr);
        attn_arena_free(&a);
    }
}

/* Gemma 2's soft-capping: the mask is added to the capped scores. ALiBi's bias
 * is summed in the stage's own room: there it is written by the pass. */
static void test_capped_and_alibi(void **state)
{
    (void)state;
    static const char *const capped[] = {"seq", "8", "heads", "2", "softcap", "3", NULL};
    static const char *const alibi[] = {"seq", "8", "heads", "2", "alibi", "true", NULL};
    attn_trace tr;
    run(capped, NULL, &tr);
    const attn_tensor *ms = by_index(&tr);
    assert_non_null(ms->lazy);
    check_sum(&tr, attn_tensor_filled(ms), ATTN_STAGE_CAPPED_SCORES);
    attn_trace_free(&tr);
    run(alibi, NULL, &tr);
    assert_null(by_index(&tr)->lazy);
    attn_trace_free(&tr);
}

typedef struct {
    const attn_trace *tr;
    const attn_tensor *seen;
} reader;

static void *read_it(void *arg)
{
    reader *r = arg;
    r->seen = attn_trace_stage(r->tr, 0, ATTN_STAGE_MASKED_SCORES);
    return NULL;
}

/* Two threads reading it at once (a file being saved beside the window) both
 * see it whole. */
static void test_two_readers(void **state)
{
    (void)state;
    static const char *const kv[] = {"seq", "64", "heads", "8", "d_model", "64", NULL};
    attn_trace tr;
    run(kv, NULL, &tr);
    reader r[2] = {{&tr, NULL}, {&tr, NULL}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, read_it, &r[i]), 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    assert_ptr_equal(r[0].seen, r[1].seen);
    check_sum(&tr, r[0].seen, ATTN_STAGE_SCORES);
    attn_trace_free(&tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_masked_scores_made_when_read),
        cmocka_unit_test(test_every_way_in),
        cmocka_unit_test(test_capped_and_alibi),
        cmocka_unit_test(test_two_readers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
