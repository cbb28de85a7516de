/* test_model_run.c — a model's traced forward pass (model_run.h): its stages,
 * padding and a past against the full pass, one layer of attention weights
 * kept under a limit, settings and texts refused, the model's example.txt
 * checked as --text is. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/model/model_run.h"
#include "engine/run/forward.h"
#include "model_tests_fixture.h"

static void test_trace_stages(void **state)
{
    (void)state;
    attn_trace tr;
    make_model(model_dir("mqa"), 3, 4, 1, false, NULL, NULL);
    run_text(model_dir("mqa"), "the cat sat on the zebra", "right", 0, true, &tr);
    assert_int_equal(tr.n_layers, 3);
    assert_int_equal(tr.dims.s, 7); /* <s> first; zebra is <unk> */
    assert_string_equal(attn_tokens_at(&tr.tokens, 0, 0), "<s>");
    assert_string_equal(attn_tokens_at(&tr.tokens, 0, 6), "<unk>");
    assert_int_equal(tr.token_ids[6], 0);
    static const char *const NAMES[] = {"embeddings", "layers.0.resid_in", "layers.0.x", "layers.1.q_rope",
                                        "layers.2.weights", "layers.2.mlp_norm", "layers.2.act",
                                        "layers.2.resid_out", "final_norm", "logits", "probs"};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!attn_trace_find(&tr, NAMES[i])) fail_msg("no tensor %s", NAMES[i]);
    assert_string_equal(tr.tensors[0].name, "embeddings");
    assert_string_equal(tr.tensors[tr.n_tensors - 1].name, "probs");
    const attn_tensor *probs = attn_trace_find(&tr, "probs"), *w = attn_trace_find(&tr, "layers.1.weights");
    assert_int_equal(probs->shape[2], V);
    assert_int_equal(attn_tensor_fill_all(probs), 0);
    for (int i = 0; i < 7; i++) {
        double sum = 0;
        for (int v = 0; v < V; v++) sum += probs->data[i * V + v];
        assert_true(fabs(sum - 1) < 1e-5);
        for (int j = i + 1; j < 7; j++) assert_true(attn_tensor_at4(w, 0, 2, i, j) == 0.0f); /* causal */
    }
    /* layer 1's input is layer 0's output */
    const attn_tensor *a = attn_trace_find(&tr, "layers.0.resid_out"), *b = attn_trace_find(&tr, "layers.1.resid_in");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    attn_trace_free(&tr);
}

/* A row padded on either side predicts exactly as alone (RoPE scores depend
 * on i − j only); a past of P (the cache) equals the full pass. */
static void test_padding_and_cache(void **state)
{
    (void)state;
    attn_trace alone, both, cached;
    make_model(model_dir("pad"), 2, 4, 2, true, NULL, NULL);
    run_text(model_dir("pad"), "a dog ran", "right", 0, true, &alone);
    for (int side = 0; side < 2; side++) {
        run_text(model_dir("pad"), "the cat sat on the mat|a dog ran", side ? "left" : "right", 0, true, &both);
        const attn_tensor *la = attn_trace_find(&alone, "logits"), *lb = attn_trace_find(&both, "logits");
        attn_tensor_fill_all(la), attn_tensor_fill_all(lb);
        int L = both.dims.L, n = alone.dims.L, off = side ? L - n : 0;
        for (int i = 0; i < n; i++)
            for (int v = 0; v < V; v++)
                assert_true(fabsf(la->data[i * V + v] - lb->data[((size_t)L + off + i) * V + v]) < 1e-4f);
        attn_trace_free(&both);
    }
    run_text(model_dir("pad"), "a dog ran", "right", 2, true, &cached);
    const attn_tensor *lc = attn_trace_find(&cached, "logits"), *la = attn_trace_find(&alone, "logits");
    attn_tensor_fill_all(lc);
    assert_int_equal(cached.dims.s, 2);
    for (int i = 0; i < 2; i++)
        for (int v = 0; v < V; v++) assert_true(fabsf(lc->data[i * V + v] - la->data[(2 + i) * V + v]) < 1e-4f);
    attn_trace_free(&cached);
    attn_trace_free(&alone);
}

/* A prompt too long for every layer's attention weights keeps one layer's
 * (layer 0 by default, another on request) and computes the rest in a
 * scratch buffer: the numbers are those of the full trace. */
static void test_one_layer_of_weights(void **state)
{
    (void)state;
    attn_model m;
    attn_config c;
    attn_error err;
    attn_trace full, lean, other;
    make_model(model_dir("lean"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("lean"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat sat on the mat the cat", &err);
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &full, &err), ATTN_OK);
    double all, one;
    c.model = strdup(model_dir("lean"));
    assert_int_equal(attn_trace_estimate(&c, &all, &err), ATTN_OK);
    c.qk_keep = 1;
    assert_int_equal(attn_trace_estimate(&c, &one, &err), ATTN_OK);
    assert_true(one < all);
    /* a limit between the two: layer 0 keeps its weights, layer 1 does not */
    c.qk_keep = 0;
    c.max_bytes = (one + all) / 2;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &lean, &err), ATTN_OK);
    assert_int_equal(lean.cfg.qk_keep, 1);
    assert_non_null(attn_trace_find(&lean, "layers.0.weights"));
    assert_null(attn_trace_find(&lean, "layers.1.weights"));
    assert_null(attn_trace_find(&lean, "layers.1.scores"));
    assert_non_null(attn_trace_find(&lean, "layers.1.context"));
    const attn_tensor *a = attn_trace_find(&full, "logits"), *b = attn_trace_find(&lean, "logits");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    a = attn_trace_find(&full, "layers.0.weights"), b = attn_trace_find(&lean, "layers.0.weights");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    assert_true(attn_model_trace_full_bytes(&lean) > c.max_bytes);
    /* the same limit, layer 1 preferred: it keeps its weights instead */
    attn_trace preferred;
    c.qk_prefer = 1;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &preferred, &err), ATTN_OK);
    assert_int_equal(preferred.cfg.qk_keep, 2);
    assert_null(attn_trace_find(&preferred, "layers.0.weights"));
    assert_non_null(attn_trace_find(&preferred, "layers.1.weights"));
    attn_trace_free(&preferred);
    c.qk_prefer = 0;
    /* layer 1's on request */
    c.qk_keep = 2;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &other, &err), ATTN_OK);
    assert_null(attn_trace_find(&other, "layers.0.weights"));
    a = attn_trace_find(&full, "layers.1.weights"), b = attn_trace_find(&other, "layers.1.weights");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    assert_int_equal(other.n_masked, full.n_masked);
    attn_trace_free(&other);
    /* below even one layer's: refused, with the size */
    c.qk_keep = 0;
    c.max_bytes = one / 2;
    attn_status st = attn_model_trace_run(&m, &c, NULL, &other, &err);
    assert_int_equal(st, ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "even with one layer's attention weights"));
    c.max_bytes = 0;
    c.qk_keep = 3;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &other, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "layer 2 asked for, of a model of 2 layers"));
    attn_trace_free(&full);
    attn_trace_free(&lean);
    attn_config_free(&c);
    attn_model_free(&m);
}

static void test_config_errors(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr;
    attn_error err;
    make_model(model_dir("cfg"), 1, 2, 2, true, NULL, NULL);
    static const struct { const char *key, *value, *msg; } cases[] = {
        {"source_tokens", "a b", "cross-attention needs one attention layer"},
        {"past", "9", "past (9) must be less than the 3 tokens"},
        {"text", "the cat | ", "text: row 2 is empty"},
        {"text", "|||", "text: row 1 is empty"}, /* four rows from three bars: len/2 + 2 held three (issue 37) */
        {"text", "the||||||||", "text: row 2 is empty"}, /* nine rows in 11 bytes: room was made for 7 */
        {"text", "the the the the the the the the the the the the the the the the", "more than cfg's 16 positions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attn_config_init(&c);
        attn_config_set(&c, "model", model_dir("cfg"), &err);
        attn_config_set(&c, "text", "the cat", &err);
        assert_int_equal(attn_config_set(&c, cases[i].key, cases[i].value, &err), ATTN_OK);
        if (attn_trace_run(&c, NULL, &tr, &err) == ATTN_OK) fail_msg("%s = %s ran", cases[i].key, cases[i].value);
        if (!strstr(err.msg, cases[i].msg)) fail_msg("'%s' does not contain '%s'", err.msg, cases[i].msg);
        attn_config_free(&c);
    }
}

/* A model's example.txt is the text of a run without --text, and is checked
 * as --text is (issue 37): invalid UTF-8 is refused, not read as <unk>, and
 * bars split it into rows the same way, "|||" into four empty ones. */
static void test_example_checked(void **state)
{
    (void)state;
    static const struct { const char *example, *msg; } CASES[] = {
        {"the \xff cat", "example.txt: not valid UTF-8 at byte offset 4 (0xFF)"},
        {"|||", "example.txt: row 1 is empty"},
        {"the|||cat", "example.txt: row 2 is empty"},
    };
    attn_config c;
    attn_trace tr;
    attn_error err;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        make_model(model_dir("example"), 1, 2, 2, true, NULL, NULL);
        write_text(model_dir("example"), "example.txt", CASES[i].example);
        attn_config_init(&c);
        assert_int_equal(attn_config_set(&c, "model", model_dir("example"), &err), ATTN_OK);
        if (attn_trace_run(&c, NULL, &tr, &err) == ATTN_OK) fail_msg("example '%s' ran", CASES[i].example);
        if (!strstr(err.msg, CASES[i].msg)) fail_msg("'%s' does not contain '%s'", err.msg, CASES[i].msg);
        attn_config_free(&c);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_stages),
        cmocka_unit_test(test_padding_and_cache),
        cmocka_unit_test(test_one_layer_of_weights),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_example_checked),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
