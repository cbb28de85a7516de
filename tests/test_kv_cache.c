/* test_kv_cache.c — the KV cache (kv_cache.h) and the untraced prefill
 * (prefill.c): the cache grows and refuses what is not its next positions;
 * untraced steps and prefills equal the traced pass under every setting that
 * changes one, for MHA, GQA and MQA, F32 and BF16, in chunks, and on the
 * shipped models; a windowed cache (Gemma's local layers, Mistral's window)
 * lets old rows go and still gives the full pass's logits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "engine/model/model_run.h"
#include "engine/run/generate.h"
#include "engine/run/kv_cache.h"
#include "model_tests_fixture.h"

/* Untraced steps (attn_kv_step) choose what traced steps choose, with the
 * same logits up to rounding, under each setting that changes a step: the
 * scale, the fill, a reversed mask, a window, dropout in training; with
 * float32 weights, and with BF16 ones at odd addresses (the step reads them
 * with wmat.c's row kernels, the traced pass widens panels for sgemm). */
static void test_untraced_steps(void **state)
{
    (void)state;
    static const char *const SETTINGS[][2] = {{NULL, NULL},          {"scale", "false"},
                                              {"mask_value", "-1e9"}, {"causal", "reversed"},
                                              {"sliding_window", "3"}, {"train", "true"},
                                              {"rope", "false"},       {"keep_first", "2"},
                                              {"tiles", "2x3"}};
    attn_model m;
    attn_error err;
    for (int bf16 = 0; bf16 < 2; bf16++) {
        make_model(model_dir("steps"), 3, 4, 2, false, NULL, NULL);
        if (bf16) model_to_bf16(model_dir("steps"), 1);
        assert_int_equal(attn_model_load(model_dir("steps"), &m, &err), ATTN_OK);
        assert_int_equal(m.layer[0].w_q.dtype, bf16 ? ATTN_ST_BF16 : ATTN_ST_F32);
        for (size_t s = 0; s < sizeof SETTINGS / sizeof *SETTINGS; s++) {
            attn_config c;
            attn_generator traced, fast;
            attn_config_init(&c);
            attn_config_set(&c, "text", "the cat", &err);
            if (SETTINGS[s][0]) assert_int_equal(attn_config_set(&c, SETTINGS[s][0], SETTINGS[s][1], &err), ATTN_OK);
            if (SETTINGS[s][0] && !strcmp(SETTINGS[s][0], "keep_first")) attn_config_set(&c, "sliding_window", "3", &err);
            assert_int_equal(attn_generator_init(&traced, &m, &c, &err), ATTN_OK);
            assert_int_equal(attn_generator_init(&fast, &m, &c, &err), ATTN_OK);
            fast.trace_steps = false;
            attn_sampling greedy = {.seed = 1};
            for (int step = 0; step < 10; step++) {
                int a, b;
                assert_int_equal(attn_generator_step(&traced, &greedy, &a, &err), ATTN_OK);
                assert_int_equal(attn_generator_step(&fast, &greedy, &b, &err), ATTN_OK);
                assert_int_equal(a, b);
                for (int v = 0; v < V; v++) assert_float_equal(fast.logits[v], traced.logits[v], 1e-4);
            }
            /* the cache holds the same keys, values and inputs both ways */
            const attn_kv_cache *x = &traced.cache, *y = &fast.cache;
            assert_int_equal(x->n, y->n);
            for (int l = 0; l < x->layers; l++)
                for (int j = 0; j < x->g; j++)
                    for (int e = 0; e < x->n * x->k; e++) {
                        size_t at = (size_t)j * x->cap * x->k + e, bt = (size_t)j * y->cap * y->k + e;
                        assert_float_equal(x->keys[l][at], y->keys[l][bt], 1e-4);
                        assert_float_equal(x->values[l][at], y->values[l][bt], 1e-4);
                    }
            assert_int_equal(fast.trace.dims.P, 0); /* untraced: the prompt's trace stays */
            attn_generator_free(&traced);
            attn_generator_free(&fast);
            attn_config_free(&c);
        }
        attn_model_free(&m);
    }
}

static double max_diff(const float *a, const float *b, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
    return worst;
}

/* Caches a and b hold the same first n positions, within tol. */
static void expect_same_cache(const attn_kv_cache *a, const attn_kv_cache *b, int n, double tol)
{
    assert_int_equal(a->n, n);
    assert_int_equal(b->n, n);
    for (int l = 0; l < a->layers; l++) {
        for (int e = 0; e < n * a->d; e++) assert_float_equal(a->x[l][e], b->x[l][e], tol);
        for (int j = 0; j < a->g; j++)
            for (int e = 0; e < n * a->k; e++) {
                size_t at = (size_t)j * a->cap * a->k + e, bt = (size_t)j * b->cap * b->k + e;
                assert_float_equal(a->keys[l][at], b->keys[l][bt], tol);
                assert_float_equal(a->values[l][at], b->values[l][bt], tol);
            }
    }
}

/* ids[0 .. n) through m with cfg's settings, traced (attn_model_trace_ids,
 * its keys and values appended to a cache) and untraced (attn_kv_prefill):
 * the last logits and the caches agree within tol (of the largest logit),
 * and so do `steps` untraced decoding steps after each. */
static void expect_prefill_matches(const attn_model *m, const attn_config *cfg, const int *ids, int n, int steps,
                                   double tol)
{
    attn_trace tr;
    attn_config run;
    attn_kv_cache a, b;
    attn_error err;
    int Vm = m->cfg.vocab;
    float *want = malloc((size_t)Vm * sizeof *want), *got = malloc((size_t)Vm * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    assert_int_equal(attn_model_trace_ids(m, cfg, ids, n, NULL, &tr, &err), ATTN_OK);
    const attn_tensor *lg = attn_trace_stage(&tr, -1, ATTN_STAGE_LOGITS);
    assert_int_equal(attn_tensor_fill(lg, (size_t)n - 1, 1), 0);
    memcpy(want, lg->data + (size_t)(n - 1) * Vm, (size_t)Vm * sizeof *want);
    assert_int_equal(attn_kv_init(&a, m, &err), ATTN_OK);
    assert_int_equal(attn_kv_append(&a, &tr, &err), ATTN_OK);
    assert_int_equal(attn_model_run_config(m, cfg, &run, &err), ATTN_OK);
    assert_int_equal(attn_kv_init(&b, m, &err), ATTN_OK);
    assert_int_equal(attn_kv_prefill(&b, m, &run, ids, n, got, &err), ATTN_OK);
    double sc = scale_of(want, Vm);
    for (int v = 0; v < Vm; v++) assert_float_equal(got[v], want[v], tol * sc);
    expect_same_cache(&a, &b, n, tol * scale_of(a.x[0], n * a.d) * 10);
    int *all = malloc((size_t)(n + steps) * sizeof *all);
    assert_non_null(all);
    memcpy(all, ids, (size_t)n * sizeof *all);
    for (int s = 0; s < steps && a.n < m->cfg.max_pos; s++) {
        int id = all[a.n] = (ids[n - 1] + 3 * s + 1) % Vm;
        assert_int_equal(attn_kv_step(&a, m, &tr.cfg, id, want, &err), ATTN_OK);
        assert_int_equal(attn_kv_step(&b, m, &run, id, got, &err), ATTN_OK);
        sc = scale_of(want, Vm);
        for (int v = 0; v < Vm; v++) assert_float_equal(got[v], want[v], tol * sc);
    }
    /* the layer inputs the steps kept are a full pass's over every token (under the causal mask:
     * without it a full pass's earlier positions read later ones, which a step had not seen yet) */
    attn_trace whole;
    if (cfg->causal == ATTN_CAUSAL_ON) {
        assert_int_equal(attn_model_trace_ids(m, cfg, all, b.n, NULL, &whole, &err), ATTN_OK);
        for (int l = 0; l < b.layers; l++) {
            const attn_tensor *x = attn_trace_stage(&whole, l, ATTN_STAGE_X);
            size_t nd = (size_t)b.n * b.d;
            double worst = max_diff(b.x[l], x->data, (int)nd);
            if (worst > tol * 10 * scale_of(x->data, (int)nd)) fail_msg("layer %d's inputs: |Δ| %.2e", l, worst);
        }
        attn_trace_free(&whole);
    }
    free(all);
    attn_kv_free(&a);
    attn_kv_free(&b);
    attn_config_free(&run);
    attn_trace_free(&tr);
    free(want);
    free(got);
}

/* The untraced prefill equals the traced pass: last logits, the cache it
 * leaves and the decoding after it, under each setting that changes a pass,
 * for MHA, GQA and MQA, F32 and BF16 weights at odd addresses; from 1 token
 * to the model's every position, in one call or two. */
static void test_untraced_prefill(void **state)
{
    (void)state;
    static const char *const SETTINGS[][2] = {{NULL, NULL},           {"scale", "false"},
                                              {"mask_value", "-1e9"},  {"causal", "reversed"},
                                              {"causal", "false"},     {"sliding_window", "3"},
                                              {"rope", "false"},       {"softmax_guard", "false"},
                                              {"keep_first", "2"},     {"tiles", "2x3"},
                                              {"tiles", "1x1"},        {"tiles", "64x64"}};
    static const int KV[] = {4, 2, 1};
    const int ids[16] = {1, 3, 4, 5, 6, 3, 7, 8, 9, 10, 11, 5, 4, 3, 6, 7};
    attn_model m;
    attn_error err;
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int g = 0; g < 3; g++) {
            make_model(model_dir("prefill"), 2, 4, KV[g], g == 1, NULL, NULL);
            if (bf16) model_to_bf16(model_dir("prefill"), 1);
            assert_int_equal(attn_model_load(model_dir("prefill"), &m, &err), ATTN_OK);
            for (size_t s = 0; s < sizeof SETTINGS / sizeof *SETTINGS; s++) {
                attn_config c;
                attn_config_init(&c);
                if (SETTINGS[s][0]) assert_int_equal(attn_config_set(&c, SETTINGS[s][0], SETTINGS[s][1], &err), ATTN_OK);
                if (SETTINGS[s][0] && !strcmp(SETTINGS[s][0], "keep_first")) attn_config_set(&c, "sliding_window", "3", &err);
                expect_prefill_matches(&m, &c, ids, 7, 5, 1e-5);
                attn_config_free(&c);
            }
            attn_config c;
            attn_config_init(&c);
            expect_prefill_matches(&m, &c, ids, 1, 3, 1e-5);  /* one token */
            expect_prefill_matches(&m, &c, ids, 16, 0, 1e-5); /* every position the model has */
            /* in two calls, the second over the first's cache: the same */
            attn_config run;
            attn_kv_cache one, two;
            float l1[V], l2[V];
            assert_int_equal(attn_model_run_config(&m, &c, &run, &err), ATTN_OK);
            assert_int_equal(attn_kv_init(&one, &m, &err), ATTN_OK);
            assert_int_equal(attn_kv_init(&two, &m, &err), ATTN_OK);
            assert_int_equal(attn_kv_prefill(&one, &m, &run, ids, 11, l1, &err), ATTN_OK);
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids, 4, l2, &err), ATTN_OK);
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids + 4, 7, l2, &err), ATTN_OK);
            for (int v = 0; v < V; v++) assert_float_equal(l1[v], l2[v], 1e-5 * scale_of(l1, V));
            expect_same_cache(&one, &two, 11, 1e-5);
            /* past the model's positions, an id outside its vocabulary, dropout in training: refused */
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids, 6, l2, &err), ATTN_ERR_CONFIG);
            assert_non_null(strstr(err.msg, "16 positions"));
            const int bad[] = {3, V};
            assert_int_equal(attn_kv_prefill(&two, &m, &run, bad, 2, l2, &err), ATTN_ERR_CONFIG);
            assert_non_null(strstr(err.msg, "outside"));
            assert_int_equal(two.n, 11); /* a refusal appends nothing */
            run.train = true;
            run.dropout = 0.5f;
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids, 2, l2, &err), ATTN_ERR_CONFIG);
            assert_non_null(strstr(err.msg, "dropout"));
            attn_kv_free(&one);
            attn_kv_free(&two);
            attn_config_free(&run);
            attn_config_free(&c);
            attn_model_free(&m);
        }
}

/* A prompt of 700 positions goes through in two chunks (512, then 188 over
 * the first's cache), each in blocks of queries: the same as one traced pass. */
static void test_untraced_prefill_chunks(void **state)
{
    (void)state;
    attn_model m;
    attn_config c;
    attn_error err;
    enum { N = 700 };
    int *ids = malloc(N * sizeof *ids);
    assert_non_null(ids);
    for (int i = 0; i < N; i++) ids[i] = 3 + (i * 7 + i / 5) % (V - 3);
    make_model(model_dir("long"), 2, 4, 2, false, NULL, NULL);
    config_with(model_dir("long"), "max_position_embeddings", "\"max_position_embeddings\": 1024");
    assert_int_equal(attn_model_load(model_dir("long"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    expect_prefill_matches(&m, &c, ids, N, 2, 2e-5);
    attn_config_set(&c, "sliding_window", "100", &err);
    expect_prefill_matches(&m, &c, ids, N, 2, 2e-5);
    attn_config_set(&c, "tiles", "64x48", &err); /* each chunk's queries tile by tile over the cache */
    expect_prefill_matches(&m, &c, ids, N, 2, 2e-5);
    attn_config_free(&c);
    attn_model_free(&m);
    free(ids);
}

/* The shipped models (F16; MHA, GQA and MQA; a prompt of 120 positions, so
 * MQA's attention takes it in two blocks of queries): the untraced prefill's
 * last logits and cache are the traced pass's. */
static void test_untraced_prefill_shipped(void **state)
{
    (void)state;
    static const char *const MODELS[] = {"brown", "tang", "tang-mha", "tang-mqa", "tang-nocausal"};
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
        attn_model m;
        attn_config c;
        attn_error err;
        int *ids, n;
        assert_int_equal(attn_model_load(MODELS[i], &m, &err), ATTN_OK);
        attn_config_init(&c);
        assert_non_null(m.example);
        char *text = malloc(strlen(m.example) * 40 + 1);
        assert_non_null(text);
        text[0] = '\0';
        for (int r = 0; r < 40; r++) strcat(text, m.example);
        attn_config_set(&c, "text", text, &err);
        free(text);
        /* a text longer than the model's positions, cut to 120 ids */
        assert_int_equal(attn_tokenizer_encode(m.tok, c.text, true, &ids, &n, &err), ATTN_OK);
        assert_true(n >= 120);
        expect_prefill_matches(&m, &c, ids, 120, 4, 2e-5);
        free(ids);
        attn_config_free(&c);
        attn_model_free(&m);
    }
}

/* Growing the cache keeps every head's rows; a trace that is not the next
 * positions of the cached row is refused. */
static void test_kv_cache_grows(void **state)
{
    (void)state;
    attn_model m;
    attn_config c;
    attn_error err;
    attn_trace tr;
    attn_kv_cache kc;
    make_model(model_dir("grow"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("grow"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat sat on the mat", &err);
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &tr, &err), ATTN_OK);
    assert_int_equal(attn_kv_init(&kc, &m, &err), ATTN_OK);
    assert_int_equal(attn_kv_append(&kc, &tr, &err), ATTN_OK);
    int n = kc.n;
    assert_int_equal(n, tr.dims.s);
    assert_int_equal(attn_kv_append(&kc, &tr, &err), ATTN_ERR_CONFIG); /* P = 0, but n positions are held */
    assert_non_null(strstr(err.msg, "not the next positions"));
    assert_int_equal(attn_kv_reserve(&kc, 1000, &err), ATTN_OK);
    assert_true(kc.cap >= 1000);
    for (int l = 0; l < kc.layers; l++) {
        const float *k, *v;
        attn_model_trace_kv(&tr, l, &k, &v);
        for (int j = 0; j < kc.g; j++) {
            assert_memory_equal(kc.keys[l] + (size_t)j * kc.cap * kc.k, k + (size_t)j * n * kc.k, n * kc.k * sizeof *k);
            assert_memory_equal(kc.values[l] + (size_t)j * kc.cap * kc.k, v + (size_t)j * n * kc.k, n * kc.k * sizeof *v);
        }
        assert_memory_equal(kc.x[l], attn_trace_stage(&tr, l, ATTN_STAGE_X)->data, (size_t)n * kc.d * sizeof(float));
    }
    float logits[V];
    assert_int_equal(attn_kv_step(&kc, &m, &tr.cfg, V, logits, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "outside"));
    assert_int_equal(attn_kv_step(&kc, &m, &tr.cfg, 3, logits, &err), ATTN_OK);
    assert_int_equal(kc.n, n + 1);
    attn_kv_free(&kc);
    attn_kv_free(&kc); /* twice is harmless */
    attn_trace_free(&tr);
    attn_config_free(&c);
    attn_model_free(&m);
}

/* The last position's logits of a full traced pass of ids[0 .. n), into out (V). */
static void full_logits(const attn_model *m, const attn_config *cfg, const int *ids, int n, float *out)
{
    attn_trace tr;
    attn_error err;
    assert_int_equal(attn_model_trace_ids(m, cfg, ids, n, NULL, &tr, &err), ATTN_OK);
    const attn_tensor *lg = attn_trace_stage(&tr, -1, ATTN_STAGE_LOGITS);
    assert_int_equal(attn_tensor_fill(lg, (size_t)n - 1, 1), 0);
    memcpy(out, lg->data + (size_t)(n - 1) * m->cfg.vocab, (size_t)m->cfg.vocab * sizeof *out);
    attn_trace_free(&tr);
}

/* A windowed cache (attn_kv_init_windowed) over model m with cfg: a prompt
 * of `prompt` ids prefilled (in two calls when split > 0), then one step a
 * token up to n; after each, the logits equal a full traced pass of the same
 * ids (every position, nothing let go) within tol, and the local layers hold
 * at most W + max(16, W/4) rows while the full ones hold all. Returns how
 * many positions were let go. */
static int expect_windowed_matches(const attn_model *m, const attn_config *cfg, const int *ids, int prompt, int split,
                                   int n, int W, double tol)
{
    attn_config run;
    attn_kv_cache c;
    attn_error err;
    float got[V], want[V];
    assert_int_equal(m->cfg.vocab, V);
    assert_int_equal(attn_model_run_config(m, cfg, &run, &err), ATTN_OK);
    assert_int_equal(attn_kv_init_windowed(&c, m, &run, &err), ATTN_OK);
    assert_int_equal(c.window, W);
    if (split > 0) assert_int_equal(attn_kv_prefill(&c, m, &run, ids, split, got, &err), ATTN_OK);
    assert_int_equal(attn_kv_prefill(&c, m, &run, ids + split, prompt - split, got, &err), ATTN_OK);
    full_logits(m, cfg, ids, prompt, want);
    assert_true(max_diff(got, want, V) <= tol * scale_of(want, V));
    for (int p = prompt; p < n; p++) {
        assert_int_equal(attn_kv_step(&c, m, &run, ids[p], got, &err), ATTN_OK);
        full_logits(m, cfg, ids, p + 1, want);
        double d = max_diff(got, want, V);
        if (d > tol * scale_of(want, V)) fail_msg("position %d (window %d, first kept %d): |Δlogits| %.2e", p, W, c.first, d);
    }
    /* an untraced cache keeps no layer inputs: no traced step reads them */
    assert_false(c.keeps_x);
    for (int l = 0; l < c.layers; l++) assert_null(c.x[l]);
    int slack = W / 4 > 16 ? W / 4 : 16, local = 0;
    for (int l = 0; l < c.layers; l++) local += attn_kv_windowed(&c, l);
    assert_true(local > 0);
    assert_int_equal(c.n, n);
    assert_true(c.cap >= n);
    assert_true(c.first > 0 && c.first <= n - W + 1);
    assert_true(c.local_cap <= W + slack || c.local_cap < 2 * (W - 1 + prompt)); /* a long prompt's chunk aside */
    int let_go = c.first;
    attn_kv_free(&c);
    attn_config_free(&run);
    return let_go;
}

/* Gemma's local layers, Mistral's window and a window set on a Llama model,
 * decoded over a cache whose windowed layers let their old rows go: the
 * logits are a full pass's at every position, far past the window; the
 * global layers keep every position. Then `generate`'s path: an untraced
 * generator (windowed cache) writes what a traced one (every position kept)
 * writes, with the same logits. */
static void test_windowed_cache(void **state)
{
    (void)state;
    enum { N = 60 };
    int ids[N];
    for (int i = 0; i < N; i++) ids[i] = 3 + (i * 5 + i / 3) % (V - 3);
    ids[0] = 1;
    attn_model m;
    attn_config c;
    attn_error err;
    /* Gemma 2: layers 0 and 2 local (window 3); Gemma 3: 0, 1 and 3, 4 local (window 4), 2 and 5 global */
    make_gemma(model_dir("g2win"), false, 3, 2, 1, 3, 64);
    make_gemma(model_dir("g3win"), true, 6, 4, 2, 4, 64);
    const char *const GEMMA[] = {model_dir("g2win"), model_dir("g3win")};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(attn_model_load(GEMMA[i], &m, &err), ATTN_OK);
        int W = m.cfg.arch.local_window;
        attn_config_init(&c);
        assert_true(expect_windowed_matches(&m, &c, ids, 6, 0, N, W, 1e-4) > W); /* rows were let go, again and again */
        expect_windowed_matches(&m, &c, ids, 30, 11, N, W, 1e-4);               /* a prompt longer than the window */
        attn_kv_cache all;
        attn_config run;
        assert_int_equal(attn_model_run_config(&m, &c, &run, &err), ATTN_OK);
        run.keep_first = 1; /* early keys stay visible: every row kept */
        assert_int_equal(attn_kv_init_windowed(&all, &m, &run, &err), ATTN_OK);
        assert_int_equal(all.window, 0);
        attn_kv_free(&all);
        attn_config_free(&run);
        /* generate's way (untraced, windowed) against the traced generator's (every position) */
        attn_generator fast, traced;
        attn_config_set(&c, "text", "the cat sat on the mat", &err);
        assert_int_equal(attn_generator_init_untraced(&fast, &m, &c, &err), ATTN_OK);
        assert_int_equal(attn_generator_init(&traced, &m, &c, &err), ATTN_OK);
        assert_int_equal(fast.cache.window, W);
        assert_int_equal(traced.cache.window, 0);
        attn_sampling greedy = {.seed = 1};
        for (int s = 0; fast.n < 40; s++) {
            int a, b;
            assert_int_equal(attn_generator_step(&fast, &greedy, &a, &err), ATTN_OK);
            assert_int_equal(attn_generator_step(&traced, &greedy, &b, &err), ATTN_OK);
            assert_int_equal(a, b);
            assert_true(max_diff(fast.logits, traced.logits, V) <= 1e-4 * scale_of(traced.logits, V));
        }
        assert_true(fast.cache.first > 0 && fast.cache.local_cap <= W + 16);
        assert_int_equal(traced.cache.first, 0);
        attn_generator_free(&fast);
        attn_generator_free(&traced);
        attn_config_free(&c);
        attn_model_free(&m);
    }
    /* Mistral: every layer local; a Llama model with --sliding-window: the same */
    make_model(model_dir("mistral"), 2, 4, 2, false, NULL, NULL);
    config_with(model_dir("mistral"), "max_position_embeddings", "\"max_position_embeddings\": 64");
    config_with(model_dir("mistral"), "architectures", "\"architectures\": [\"MistralForCausalLM\"], \"sliding_window\": 5");
    assert_int_equal(attn_model_load(model_dir("mistral"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    expect_windowed_matches(&m, &c, ids, 7, 3, N, 5, 1e-4);
    attn_config_free(&c);
    attn_model_free(&m);
    make_model(model_dir("llamawin"), 2, 4, 1, true, NULL, NULL);
    config_with(model_dir("llamawin"), "max_position_embeddings", "\"max_position_embeddings\": 64");
    assert_int_equal(attn_model_load(model_dir("llamawin"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "sliding_window", "2", &err);
    expect_windowed_matches(&m, &c, ids, 2, 0, N, 2, 1e-4);
    attn_config_set(&c, "tiles", "2x3", &err); /* the online softmax over the windowed rows */
    expect_windowed_matches(&m, &c, ids, 9, 4, N, 2, 1e-4);
    attn_config_set(&c, "causal", "reversed", &err); /* the window still hides every row let go */
    attn_config_set(&c, "tiles", "0", &err);
    expect_windowed_matches(&m, &c, ids, 9, 4, N, 2, 1e-4);
    attn_config_free(&c);
    attn_model_free(&m);
}

/* A prompt of 700 positions through a windowed cache (window 100): the
 * second chunk (188 positions) lets go of the rows the first one's last
 * 99 positions do not reach; the logits are the full pass's. */
static void test_windowed_prefill_chunks(void **state)
{
    (void)state;
    attn_model m;
    attn_config c;
    attn_error err;
    enum { N = 703 };
    int *ids = malloc(N * sizeof *ids);
    assert_non_null(ids);
    for (int i = 0; i < N; i++) ids[i] = 3 + (i * 7 + i / 5) % (V - 3);
    make_model(model_dir("longwin"), 2, 4, 2, false, NULL, NULL);
    config_with(model_dir("longwin"), "max_position_embeddings", "\"max_position_embeddings\": 1024");
    assert_int_equal(attn_model_load(model_dir("longwin"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "sliding_window", "100", &err);
    assert_true(expect_windowed_matches(&m, &c, ids, 700, 0, N, 100, 2e-5) >= 700 - 512 - 100);
    attn_config_free(&c);
    attn_model_free(&m);
    free(ids);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untraced_steps),
        cmocka_unit_test(test_kv_cache_grows),
        cmocka_unit_test(test_untraced_prefill),
        cmocka_unit_test(test_untraced_prefill_chunks),
        cmocka_unit_test(test_untraced_prefill_shipped),
        cmocka_unit_test(test_windowed_cache),
        cmocka_unit_test(test_windowed_prefill_chunks),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
