/* test_stream.c — a long text over an evicting KV cache (run/stream.h): with
 * room for the whole text every policy is the plain pass (the traced one's
 * loss, position by position the same as everything kept); with eviction in a
 * one-layer model, whose keys and values depend on nothing but their token
 * and slot, the window's and the sink's losses are those of a fresh pass over
 * the tokens they keep, numbered from 0 (the re-numbering of StreamingLLM);
 * the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/model/loss.h"
#include "engine/model/model_run.h"
#include "engine/run/stream.h"
#include "model_tests_fixture.h"

enum { N_IDS = 14 };
static const int IDS[N_IDS] = {1, 5, 7, 3, 9, 11, 4, 6, 8, 10, 5, 7, 3, 2};

static void load(const char *name, int layers, attn_model *m, attn_config *run)
{
    attn_error err;
    attn_config c;
    make_model(model_dir(name), layers, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir(name), m, &err), ATTN_OK);
    attn_config_init(&c);
    assert_int_equal(attn_model_run_config(m, &c, run, &err), ATTN_OK);
    attn_config_free(&c);
}

/* N + W ≥ the text: nothing evicted, every policy equals everything kept,
 * whose mean is the traced full pass's loss. */
static void test_room_for_all(void **state)
{
    (void)state;
    attn_model m;
    attn_config run;
    attn_error err;
    attn_trace tr;
    double all[N_IDS], kept[N_IDS];
    int scored, counted;
    load("all", 2, &m, &run);
    attn_stream_opts o_all = {ATTN_STREAM_ALL, 0, 0};
    assert_int_equal(attn_stream_run(&m, &run, &o_all, IDS, N_IDS, all, &scored, &err), ATTN_OK);
    assert_int_equal(scored, N_IDS - 1);
    double sum = 0;
    for (int i = 0; i < N_IDS - 1; i++) sum += all[i];
    assert_int_equal(attn_model_trace_ids(&m, &run, IDS, N_IDS, NULL, &tr, &err), ATTN_OK);
    double traced = attn_trace_loss(&tr, 0, &counted);
    assert_int_equal(counted, N_IDS - 1);
    assert_float_equal(sum / (N_IDS - 1), traced, 1e-5);
    attn_trace_free(&tr);
    const attn_stream_opts fits[] = {{ATTN_STREAM_SINK, 11, 3}, {ATTN_STREAM_SINK, 12, 1}, {ATTN_STREAM_WINDOW, 14, 0}};
    for (size_t f = 0; f < sizeof fits / sizeof *fits; f++) {
        assert_int_equal(attn_stream_run(&m, &run, &fits[f], IDS, N_IDS, kept, &scored, &err), ATTN_OK);
        for (int i = 0; i < N_IDS - 1; i++) assert_float_equal(kept[i], all[i], 1e-6);
    }
    attn_config_free(&run);
    attn_model_free(&m);
}

/* In one layer a key is its token at its slot: the window's loss at i is a
 * fresh pass's over ids[i − W + 1 .. i] (positions 0 .. W − 1), the sink's
 * over ids[0 .. N − 1] then those; both differ from everything kept once
 * something is evicted. */
static void test_renumbered(void **state)
{
    (void)state;
    attn_model m;
    attn_config run;
    attn_error err;
    double loss[N_IDS], fresh[N_IDS];
    int scored, sub[N_IDS], differ = 0;
    load("one", 1, &m, &run);
    for (int first = 0; first <= 2; first += 2) {
        int W = 5;
        attn_stream_opts o = {first ? ATTN_STREAM_SINK : ATTN_STREAM_WINDOW, W, first};
        attn_stream_opts o_all = {ATTN_STREAM_ALL, 0, 0};
        assert_int_equal(attn_stream_run(&m, &run, &o, IDS, N_IDS, loss, &scored, &err), ATTN_OK);
        for (int i = first + W; i < N_IDS - 1; i++) { /* the cache has evicted before reading token i */
            int n = 0;
            for (int j = 0; j < first; j++) sub[n++] = IDS[j];
            for (int j = i - W + 1; j <= i + 1; j++) sub[n++] = IDS[j];
            assert_int_equal(attn_stream_run(&m, &run, &o_all, sub, n, fresh, &scored, &err), ATTN_OK);
            assert_float_equal(loss[i], fresh[n - 2], 1e-5);
        }
        double all[N_IDS];
        assert_int_equal(attn_stream_run(&m, &run, &o_all, IDS, N_IDS, all, &scored, &err), ATTN_OK);
        for (int i = first + W; i < N_IDS - 1; i++) differ += fabs(all[i] - loss[i]) > 1e-4;
    }
    assert_true(differ > 0);
    attn_config_free(&run);
    attn_model_free(&m);
}

/* W < 1, N < 1 with sink, N ≥ W, N + W past the context (16), an id outside
 * the vocabulary: ATTN_ERR_CONFIG; everything kept past the context: the
 * positions after it not scored. */
static void test_refusals(void **state)
{
    (void)state;
    attn_model m;
    attn_config run;
    attn_error err;
    double loss[40];
    int scored, ids[40];
    load("refuse", 1, &m, &run);
    const attn_stream_opts bad[] = {{ATTN_STREAM_WINDOW, 0, 0}, {ATTN_STREAM_SINK, 4, 0}, {ATTN_STREAM_SINK, 4, 4},
                                    {ATTN_STREAM_SINK, 14, 3}, {ATTN_STREAM_WINDOW, 17, 0}};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        assert_int_equal(attn_stream_run(&m, &run, &bad[b], IDS, N_IDS, loss, &scored, &err), ATTN_ERR_CONFIG);
    int wrong[] = {1, 5, V};
    attn_stream_opts all = {ATTN_STREAM_ALL, 0, 0};
    assert_int_equal(attn_stream_run(&m, &run, &all, wrong, 3, loss, &scored, &err), ATTN_ERR_CONFIG);
    for (int i = 0; i < 40; i++) ids[i] = 3 + i % 8;
    assert_int_equal(attn_stream_run(&m, &run, &all, ids, 40, loss, &scored, &err), ATTN_OK);
    assert_int_equal(scored, 16);
    assert_true(!isnan(loss[15]) && isnan(loss[16]) && isnan(loss[38]));
    attn_stream_opts sink = {ATTN_STREAM_SINK, 12, 4};
    assert_int_equal(attn_stream_run(&m, &run, &sink, ids, 40, loss, &scored, &err), ATTN_OK);
    assert_int_equal(scored, 39);
    attn_config_free(&run);
    attn_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_room_for_all),
        cmocka_unit_test(test_renumbered),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
