/* test_generate.c — generation (generate.h): greedy steps equal full passes,
 * sampling never picks <unk> or an id without a token, logits that are not
 * numbers refused, and a generator with nothing traced writes what a traced
 * one writes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/model/model_run.h"
#include "engine/run/generate.h"
#include "engine/tokenizer/tokenizer.h"
#include "model_tests_fixture.h"

/* The most likely next token after the last position, <unk> (id 0 in the
 * fixture's vocabulary) left out as generation leaves it out. */
static int argmax_last(const attn_trace *tr)
{
    const attn_tensor *lg = attn_trace_find(tr, "logits");
    attn_tensor_fill(lg, (size_t)tr->dims.s - 1, 1);
    const float *row = lg->data + (size_t)(tr->dims.s - 1) * V;
    int best = 1;
    for (int v = 2; v < V; v++)
        if (row[v] > row[best]) best = v;
    return best;
}

/* Weights that are numbers but whose products overflow: W_down all 3e38 makes
 * layer 0's mlp_out ±inf (and ∞ − ∞ = NaN), and every logit NaN. Generating
 * refuses to sample from them and names where the first one appeared, over
 * the KV cache as well as with traced steps. */
static void test_generate_refuses_nan_logits(void **state)
{
    (void)state;
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    int id;
    make_model(model_dir("overflow"), 2, 2, 1, true, NULL, NULL);
    poke_weights(model_dir("overflow"), "model.layers.0.mlp.down_proj.weight", 0, (size_t)D * F, 3e38f);
    assert_int_equal(attn_model_load(model_dir("overflow"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    for (int traced = 0; traced < 2; traced++) {
        assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
        g.trace_steps = traced;
        assert_int_equal(attn_generator_step(&g, &(attn_sampling){.seed = 1}, &id, &err), ATTN_ERR_FORMAT);
        if (!strstr(err.msg, "overflow: the next-token logits after 3 tokens are not all numbers") ||
            !strstr(err.msg, "first appears in layer 0's mlp_out (layers.0.mlp_out)"))
            fail_msg("%s", err.msg);
        assert_int_equal(g.n, 3); /* nothing was appended */
        attn_generator_free(&g);
    }
    attn_config_free(&c);
    attn_model_free(&m);
}

/* Greedy steps over the cache pick what full passes pick, and each step's
 * trace has one query row over every earlier position. */
static void test_generate_equals_full_passes(void **state)
{
    (void)state;
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    make_model(model_dir("gen"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("gen"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
    attn_sampling greedy = {.seed = 1};
    for (int step = 0; step < 8; step++) {
        attn_trace full;
        assert_int_equal(attn_model_trace_ids(&m, &c, g.ids, g.n, NULL, &full, &err), ATTN_OK);
        int want = argmax_last(&full), got;
        attn_trace_free(&full);
        assert_int_equal(attn_generator_step(&g, &greedy, &got, &err), ATTN_OK);
        assert_int_equal(got, want);
        assert_int_equal(g.trace.dims.s, 1);
        assert_int_equal(g.trace.dims.P, g.n - 1);
        assert_non_null(attn_trace_find(&g.trace, "layers.1.k_cache"));
    }
    /* the model's 16 positions end it with a message */
    int id;
    attn_status st = ATTN_OK;
    while (!st) st = attn_generator_step(&g, &greedy, &id, &err);
    assert_int_equal(g.n, 16);
    assert_non_null(strstr(err.msg, "16 positions"));
    attn_generator_free(&g);
    /* sampling: the same seed, the same draws */
    attn_sampling warm = {.temperature = 1.0, .top_k = 3, .seed = 7};
    float logits[V];
    for (int v = 0; v < V; v++) logits[v] = (float)v * 0.1f;
    for (float u = 0; u < 1; u += 0.05f) {
        int a = attn_sample_logits(logits, V, NULL, &warm, u);
        assert_true(a >= V - 3); /* top-3 only */
        assert_int_equal(a, attn_sample_logits(logits, V, NULL, &warm, u));
    }
    assert_int_equal(attn_sample_logits(logits, V, NULL, &(attn_sampling){0}, 0.5f), V - 1);
    attn_config_free(&c);
    attn_model_free(&m);
}

/* A WordLevel tokenizer whose tokens are "t<id>" for the n ids given; unk:
 * the unknown token's id, or −1 for none. */
static attn_tokenizer *tokenizer_of(const int *ids, int n, int unk)
{
    char json[2048];
    size_t k = (size_t)snprintf(json, sizeof json, "{\"model\":{\"type\":\"WordLevel\",");
    if (unk >= 0) k += (size_t)snprintf(json + k, sizeof json - k, "\"unk_token\":\"t%d\",", unk);
    k += (size_t)snprintf(json + k, sizeof json - k, "\"vocab\":{");
    for (int i = 0; i < n; i++) k += (size_t)snprintf(json + k, sizeof json - k, "%s\"t%d\":%d", i ? "," : "", ids[i], ids[i]);
    snprintf(json + k, sizeof json - k, "}}}");
    attn_tokenizer *t;
    attn_error err;
    if (attn_tokenizer_parse(json, strlen(json), "t.json", &t, &err)) fail_msg("%s", err.msg);
    return t;
}

static const int EVERY_ID[V] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

/* <unk> is never chosen, even where it is the most likely token: not by
 * greedy decoding, not among the top k, not drawn at any temperature; the
 * others keep their order. allow_unk lets it back in. The generator leaves
 * out its model's own unknown token. */
static void test_sampling_never_unk(void **state)
{
    (void)state;
    enum { UNK = 4 };
    float logits[V];
    for (int v = 0; v < V; v++) logits[v] = (float)v * 0.1f;
    logits[UNK] = 5.0f; /* p(unk) ≈ 0.99 */
    attn_tokenizer *tok = tokenizer_of(EVERY_ID, V, UNK), *none = tokenizer_of(EVERY_ID, V, -1);
    attn_tokenizer *alone = tokenizer_of(EVERY_ID, 1, 0);
    const attn_sampling greedy = {0}, top1 = {1.0, 1, 3, false}, warm = {1.0, 0, 3, false}, hot = {100.0, 3, 3, false};
    assert_int_equal(attn_sample_logits(logits, V, tok, &greedy, 0.5f), V - 1);
    for (float u = 0; u < 1; u += 0.01f) {
        assert_int_equal(attn_sample_logits(logits, V, tok, &top1, u), V - 1);
        int w = attn_sample_logits(logits, V, tok, &warm, u), h = attn_sample_logits(logits, V, tok, &hot, u);
        assert_true(w != UNK && w >= 0 && w < V);
        assert_true(h >= V - 3); /* the top 3 without <unk>: V−3 .. V−1 */
    }
    /* asked for, it is back: the argmax, and drawn nearly always */
    attn_sampling with = greedy;
    with.allow_unk = true;
    assert_int_equal(attn_sample_logits(logits, V, tok, &with, 0.5f), UNK);
    with = warm;
    with.allow_unk = true;
    assert_int_equal(attn_sample_logits(logits, V, tok, &with, 0.5f), UNK);
    /* no unknown token: nothing is left out */
    assert_int_equal(attn_sample_logits(logits, V, none, &greedy, 0.5f), UNK);
    assert_int_equal(attn_sample_logits(logits, V, NULL, &greedy, 0.5f), UNK);
    /* a vocabulary of <unk> alone: it is all there is */
    assert_int_equal(attn_sample_logits(logits + UNK, 1, alone, &greedy, 0.5f), 0);
    attn_tokenizer_free(tok);
    attn_tokenizer_free(none);
    attn_tokenizer_free(alone);

    /* the generator reads its model's unknown token: id 0 in the fixture */
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    make_model(model_dir("unk"), 1, 2, 1, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("unk"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
    for (int step = 0; step < 6; step++) {
        for (int v = 0; v < V; v++) g.logits[v] = v == 0 ? 50.0f : (float)v; /* <unk> far ahead */
        int id;
        assert_int_equal(attn_generator_step(&g, &greedy, &id, &err), ATTN_OK);
        assert_int_equal(id, V - 1);
    }
    attn_generator_free(&g);
    assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
    for (int v = 0; v < V; v++) g.logits[v] = v == 0 ? 50.0f : (float)v;
    int id;
    assert_int_equal(attn_generator_step(&g, &(attn_sampling){.allow_unk = true}, &id, &err), ATTN_OK);
    assert_int_equal(id, 0);
    attn_generator_free(&g);
    attn_config_free(&c);
    attn_model_free(&m);
}

/* A checkpoint's vocab_size may be larger than its tokenizer (DeepSeek-V3:
 * 129,280 vs 128,815): the ids beyond, or between, have logits but no token.
 * They are never chosen, however heavy their logits, at any temperature or
 * top k (issue 21), and decoding skips them as tokenizers' decode does. */
static void test_ids_without_tokens(void **state)
{
    (void)state;
    static const int SOME[] = {0, 1, 2, 3, 4, 6, 7, 8}; /* no 5, none from 9 */
    attn_tokenizer *tok = tokenizer_of(SOME, 8, 0);
    float logits[V];
    for (int v = 0; v < V; v++) logits[v] = v == 5 || v >= 9 ? 50.0f : (float)v * 0.1f;
    const attn_sampling greedy = {0}, top3 = {1.0, 3, 1, false}, hot = {100.0, 0, 1, false}, all = {100.0, 0, 1, true};
    assert_int_equal(attn_sample_logits(logits, V, tok, &greedy, 0.5f), 8);
    int seen[V] = {0};
    for (float u = 0; u < 1; u += 0.01f) {
        int a = attn_sample_logits(logits, V, tok, &top3, u), b = attn_sample_logits(logits, V, tok, &hot, u);
        int c = attn_sample_logits(logits, V, tok, &all, u);
        assert_true(a >= 6 && a <= 8);                  /* the top 3 tokens: 6, 7, 8 */
        assert_true(b >= 1 && b <= 8 && b != 5);        /* no hole, no <unk> */
        assert_true(c >= 0 && c <= 8 && c != 5);        /* <unk> back in, still no hole */
        seen[b]++;
    }
    assert_true(seen[1] && seen[8]); /* at T = 100 the draws spread over every token */
    attn_tokenizer_free(tok);

    /* a model of 12 rows of logits whose tokenizer has 9 tokens (ids 0 .. 8) */
    const char *dir = model_dir("holes");
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    make_model(dir, 1, 2, 1, false, NULL, NULL);
    char text[sizeof TOKENIZER];
    memcpy(text, TOKENIZER, sizeof TOKENIZER);
    char *cut = strstr(text, ",\"a\":9");
    strcpy(cut, "}}}");
    write_text(dir, "tokenizer.json", text);
    assert_int_equal(attn_model_load(dir, &m, &err), ATTN_OK);
    assert_int_equal(attn_tokenizer_vocab_size(m.tok), 9);
    assert_int_equal(m.cfg.vocab, V);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    for (int t = 0; t < 2; t++) {
        assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
        g.trace_steps = t == 1;
        for (int step = 0; step < 12; step++) {
            for (int v = 9; v < V; v++) g.logits[v] = 80.0f; /* far ahead */
            int id;
            assert_int_equal(attn_generator_step(&g, t ? &greedy : &hot, &id, &err), ATTN_OK);
            assert_true(id >= 1 && id <= 8);
        }
        char *out;
        g.ids[g.n - 1] = 10; /* an id that is no token: skipped */
        assert_int_equal(attn_tokenizer_decode(m.tok, g.ids, g.n, true, &out, &err), ATTN_OK);
        assert_non_null(strstr(out, "the cat"));
        free(out);
        attn_generator_free(&g);
    }
    attn_config_free(&c);
    attn_model_free(&m);
}

/* A generator with nothing traced writes what one with its prompt traced
 * writes; with dropout in training it traces the prompt. */
static void test_untraced_generator(void **state)
{
    (void)state;
    attn_model m;
    attn_error err;
    make_model(model_dir("ungen"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("ungen"), &m, &err), ATTN_OK);
    for (int train = 0; train < 2; train++) {
        attn_config c;
        attn_generator traced, fast;
        attn_config_init(&c);
        attn_config_set(&c, "text", "the cat sat on", &err);
        if (train) {
            attn_config_set(&c, "train", "true", &err);
            attn_config_set(&c, "dropout", "0.3", &err);
        }
        assert_int_equal(attn_generator_init(&traced, &m, &c, &err), ATTN_OK);
        assert_int_equal(attn_generator_init_untraced(&fast, &m, &c, &err), ATTN_OK);
        traced.trace_steps = false;
        assert_false(fast.trace_steps);
        assert_int_equal(fast.n, traced.n);
        assert_memory_equal(fast.ids, traced.ids, (size_t)fast.n * sizeof *fast.ids);
        assert_int_equal(fast.trace.n_tensors > 0, train); /* traced only for dropout */
        for (int step = 0; step < 8; step++) {
            int a, b;
            for (int v = 0; v < V; v++) assert_float_equal(fast.logits[v], traced.logits[v], 1e-5 * scale_of(traced.logits, V));
            assert_int_equal(attn_generator_step(&traced, &(attn_sampling){.seed = 1}, &a, &err), ATTN_OK);
            assert_int_equal(attn_generator_step(&fast, &(attn_sampling){.seed = 1}, &b, &err), ATTN_OK);
            assert_int_equal(a, b);
        }
        if (!train) { /* its cache keeps no layer inputs, which a traced step would read */
            int id, n = fast.n;
            fast.trace_steps = true;
            assert_int_equal(attn_generator_step(&fast, &(attn_sampling){.seed = 1}, &id, &err), ATTN_ERR_CONFIG);
            assert_non_null(strstr(err.msg, "made untraced"));
            assert_int_equal(fast.n, n); /* nothing appended */
        }
        attn_generator_free(&traced);
        attn_generator_free(&fast);
        attn_config_free(&c);
    }
    attn_config c;
    attn_generator g;
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat|a dog", &err);
    assert_int_equal(attn_generator_init_untraced(&g, &m, &c, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "one text"));
    attn_config_free(&c);
    attn_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generate_refuses_nan_logits),
        cmocka_unit_test(test_generate_equals_full_passes),
        cmocka_unit_test(test_sampling_never_unk),
        cmocka_unit_test(test_ids_without_tokens),
        cmocka_unit_test(test_untraced_generator),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
