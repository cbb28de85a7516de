/* test_mla.c — multi-head latent attention (src/engine/attention/mla.c):
 * the absorbed computation equals the naive one on random configurations
 * mixed with the other settings, and decoding over the latent cache alone
 * (c_kv and k_pe, x_past blanked) equals the full pass. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/base/rng.h"
#include "engine/run/forward.h"

/* Runs the config of NULL-terminated key/value pairs, with one more pair set after them. */
static void run(attn_trace *tr, const attn_inputs *in, const char *const *kv, const char *key, const char *value)
{
    attn_config c;
    attn_error err = {0};
    attn_config_init(&c);
    for (int i = 0; kv[i]; i += 2)
        if (attn_config_set(&c, kv[i], kv[i + 1], &err)) fail_msg("set %s: %s", kv[i], err.msg);
    if (key && attn_config_set(&c, key, value, &err)) fail_msg("set %s: %s", key, err.msg);
    if (attn_trace_run(&c, in, tr, &err)) fail_msg("run: %s", err.msg);
    attn_config_free(&c);
}

static const attn_tensor *get(const attn_trace *tr, const char *name)
{
    const attn_tensor *t = attn_trace_find(tr, name);
    if (!t) fail_msg("trace has no '%s'", name);
    return t;
}

/* Largest |a − b| / max(1, |b|) over a stage of two traces (equal cells, −∞ too, count 0). */
static double rel_diff(const attn_trace *a, const attn_trace *b, const char *name)
{
    const attn_tensor *x = get(a, name), *y = get(b, name);
    assert_int_equal(x->count, y->count);
    double worst = 0;
    for (size_t i = 0; i < x->count; i++) {
        if (x->data[i] == y->data[i]) continue;
        double d = fabs((double)x->data[i] - y->data[i]) / fmax(1.0, fabs((double)y->data[i]));
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

/* A pseudo-random number below n, from the state s. */
static unsigned below(uint64_t *s, unsigned n)
{
    *s = attn_hash64(*s + 0x9E3779B97F4A7C15ull);
    return (unsigned)(*s % n);
}

/* One random configuration of MLA with the other settings, as key/value pairs in kv (texts in text). */
static void random_config(uint64_t *rng, const char *kv[64], char text[16][32])
{
    int n = 0, nt = 0;
#define SET(k, ...) (snprintf(text[nt], 32, __VA_ARGS__), kv[n++] = (k), kv[n++] = text[nt++])
    static const int HEADS[] = {1, 2, 3, 4, 8}, K[] = {2, 4, 6, 8};
    int h = HEADS[below(rng, 5)], k = K[below(rng, 4)];
    bool rope = below(rng, 3) != 0;
    SET("mode", "mla");
    SET("heads", "%d", h);
    SET("d_model", "%d", h * k);
    SET("kv_rank", "%d", 1 + (int)below(rng, 24));
    SET("rope_dim", "%d", 2 * (1 + (int)below(rng, 4)) - (rope ? 0 : (int)below(rng, 2)));
    SET("rope", "%s", rope ? "true" : "false");
    SET("seed", "%d", (int)below(rng, 1000));
    SET("tokens", "%s", below(rng, 2) ? "a b c d e f g | h i j" : "p q r s t u v w x");
    SET("causal", "%s", below(rng, 4) ? "true" : "false");
    SET("past", "%d", (int)below(rng, 3));
    if (below(rng, 3) == 0) SET("sliding_window", "%d", 2 + (int)below(rng, 3));
    if (n && !strcmp(kv[n - 2], "sliding_window") && below(rng, 2)) SET("keep_first", "1");
    if (below(rng, 3) == 0) SET("alibi", "true");
    if (below(rng, 3) == 0) SET("softcap", "%g", 0.5 + below(rng, 5));
    if (below(rng, 3) == 0) SET("sink_logit", "%g", -1.0 + below(rng, 3));
    if (below(rng, 4) == 0) SET("train", "true");
    if (below(rng, 5) == 0) SET("scale", "false");
#undef SET
    kv[n] = NULL;
}

static void test_absorbed_equals_naive(void **state)
{
    (void)state;
    static const char *const STAGES[] = {"scores", "masked_scores", "weights", "context", "out"};
    uint64_t rng = 20260;
    double worst[5] = {0};
    for (int r = 0; r < 40; r++) {
        const char *kv[64];
        char text[16][32];
        random_config(&rng, kv, text);
        attn_trace naive, absorbed;
        run(&naive, NULL, kv, "mla_absorb", "false");
        run(&absorbed, NULL, kv, "mla_absorb", "true");
        /* the same latent cache, and each path's own stages only */
        assert_true(rel_diff(&naive, &absorbed, "c_kv") == 0 && rel_diff(&naive, &absorbed, "k_pe") == 0);
        assert_null(attn_trace_find(&absorbed, "k_nope"));
        assert_null(attn_trace_find(&naive, "q_latent"));
        get(&absorbed, "context_latent");
        for (int s = 0; s < 5; s++) {
            double d = rel_diff(&absorbed, &naive, STAGES[s]);
            if (d > worst[s]) worst[s] = d;
            if (!(d < 2e-5)) fail_msg("config %d: %s differs by %g", r, STAGES[s], d);
        }
        attn_trace_free(&naive);
        attn_trace_free(&absorbed);
    }
    print_message("absorbed vs naive, largest relative difference in 40 configurations: scores %.2g, "
                  "masked_scores %.2g, weights %.2g, context %.2g, out %.2g\n",
                  worst[0], worst[1], worst[2], worst[3], worst[4]);
}

/* Decoding one token at a time, each step given only the previous step's
 * c_kv and k_pe (x_past blanked to zeros, so nothing else could serve), gives
 * the full pass's rows. */
static void decode_equals_full(const char *absorb)
{
    const char *const base[] = {"mode", "mla", "rope", "true", "kv_rank", "6", "rope_dim", "4", "alibi", "true",
                                "tokens", "a b c d e f g", "mla_absorb", absorb, NULL};
    static const char *const PREFIX[] = {"a", "a b", "a b c", "a b c d", "a b c d e", "a b c d e f", "a b c d e f g"};
    attn_trace full, prev = {0};
    run(&full, NULL, base, NULL, NULL);
    const attn_tensor *fo = get(&full, "out");
    int d = full.dims.d;
    float *zeros = calloc((size_t)7 * d, sizeof *zeros);
    assert_non_null(zeros);
    for (int p = 0; p < 7; p++) {
        char past[8];
        snprintf(past, sizeof past, "%d", p);
        const char *kv[] = {"mode", "mla", "rope", "true", "kv_rank", "6", "rope_dim", "4", "alibi", "true",
                            "mla_absorb", absorb, "tokens", PREFIX[p], NULL};
        attn_inputs in = {0};
        if (p) {
            in.x_past = zeros;
            in.ckv_past = get(&prev, "c_kv")->data; /* (1, p, R): the previous step's whole cache */
            in.kpe_past = get(&prev, "k_pe")->data;
        }
        attn_trace step;
        run(&step, &in, kv, "past", past);
        const attn_tensor *so = get(&step, "out");
        for (int c = 0; c < d; c++)
            if (fabsf(so->data[c] - fo->data[(size_t)p * d + c]) > 1e-5f * fmaxf(1.0f, fabsf(fo->data[(size_t)p * d + c])))
                fail_msg("step %d (%s): out[%d] %.9g, full pass %.9g", p, absorb, c, so->data[c], fo->data[(size_t)p * d + c]);
        if (p) attn_trace_free(&prev);
        prev = step;
    }
    attn_trace_free(&prev);
    attn_trace_free(&full);
    free(zeros);
}

static void test_decode_over_the_latent_cache_equals_the_full_pass(void **state)
{
    (void)state;
    decode_equals_full("false");
    decode_equals_full("true");
}

/* The KV bytes a token: R + D a layer for MLA, 2·g·dₖ for the others. */
static void test_kv_bytes(void **state)
{
    (void)state;
    attn_trace tr;
    run(&tr, NULL, (const char *const[]){"mode", "mla", "kv_rank", "12", "rope_dim", "4", NULL}, NULL, NULL);
    assert_true(attn_kv_bytes_per_token(&tr.dims, 1, 4) == (12 + 4) * 4);
    assert_true(attn_kv_bytes_per_token(&tr.dims, 27, 2) == (12 + 4) * 27 * 2);
    attn_trace_free(&tr);
    run(&tr, NULL, (const char *const[]){"kv_heads", "2", NULL}, NULL, NULL);
    assert_true(attn_kv_bytes_per_token(&tr.dims, 1, 4) == 2 * 2 * 8 * 4);
    attn_trace_free(&tr);
    /* DeepSeek-V2-Lite: 27 layers, R 512, D 64, BF16: 31,104 B a token */
    attn_dims lite = {.mode = ATTN_MODE_MLA, .kv_rank = 512, .rope_dim = 64};
    assert_true(attn_kv_bytes_per_token(&lite, 27, 2) == 31104);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_absorbed_equals_naive),
        cmocka_unit_test(test_decode_over_the_latent_cache_equals_the_full_pass),
        cmocka_unit_test(test_kv_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
