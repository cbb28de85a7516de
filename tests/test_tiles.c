/* test_tiles.c — FlashAttention's tiles (tiles.h): the tiled context equals
 * the plain one within float rounding on random configurations (every setting
 * around the scores, masks, GQA/MQA, padding, the cache, cross-attention,
 * dropout; tiles of 1 × 1, that do not divide the sequence, larger than it),
 * multi-head latent attention naive and absorbed included,
 * tile_max and tile_sum are the running max and sum of the masked scores,
 * and every shipped model gives the same logits with and without tiles. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/model/model.h"
#include "engine/model/model_run.h"
#include "engine/run/forward.h"
#include "engine/run/kv_cache.h"
#include "engine/run/untraced.h"

/* A small deterministic generator (xorshift64*), so a failure names its case. */
static uint64_t rnd_state;
static int rnd(int n)
{
    rnd_state ^= rnd_state >> 12, rnd_state ^= rnd_state << 25, rnd_state ^= rnd_state >> 27;
    return (int)((rnd_state * 0x2545F4914F6CDD1DULL >> 33) % (uint64_t)n);
}

/* Rows of random words of random lengths: shorter rows are padded. */
static void random_rows(char *buf, size_t size, int rows, int longest)
{
    static const char *const WORDS[] = {"a", "b", "c", "d", "e", "f", "g"};
    size_t at = 0;
    buf[0] = '\0';
    for (int r = 0; r < rows; r++) {
        int len = r == 0 ? longest : 1 + rnd(longest);
        for (int i = 0; i < len; i++) at += (size_t)snprintf(buf + at, size - at, "%s ", WORDS[rnd(7)]);
        if (r + 1 < rows) at += (size_t)snprintf(buf + at, size - at, "| ");
    }
}

/* One random configuration into c (tiles not set); *desc names it. */
static void random_config(attn_config *c, char *desc, size_t size)
{
    static char rows[512], src[512];
    static const int HEADS[][2] = {{1, 1}, {2, 1}, {2, 2}, {4, 1}, {4, 2}, {4, 4}};
    attn_error err;
    const int *hg = HEADS[rnd(6)];
    int k = 2 << rnd(3), L = 1 + rnd(19), b = 1 + rnd(3);
    bool cross = rnd(6) == 0, pads = rnd(3) == 0;
    attn_config_init(c);
    c->heads = hg[0], c->kv_heads = hg[1], c->d_model = hg[0] * k, c->seed = (uint64_t)rnd(1000);
    c->scale = rnd(5) != 0, c->softmax_guard = rnd(3) != 0, c->mask_value = rnd(4) ? -INFINITY : -1e9f;
    c->causal = cross ? ATTN_CAUSAL_OFF : (attn_causal)(rnd(5) < 3 ? 1 : rnd(2) ? 0 : 2);
    c->alibi = !cross && rnd(4) == 0, c->softcap = rnd(4) == 0 ? 0.5 + rnd(5) : 0;
    c->sink_logit = rnd(4) == 0 ? (float)(rnd(7) - 3) : -INFINITY;
    c->train = rnd(6) == 0, c->dropout = 0.3f;
    c->pad_side = rnd(2) ? ATTN_PAD_LEFT : ATTN_PAD_RIGHT, c->pad_mask = rnd(6) != 0;
    if (pads || cross) {
        random_rows(rows, sizeof rows, b, L);
        if (attn_config_set(c, "tokens", rows, &err)) fail_msg("tokens: %s", err.msg);
    } else {
        c->seq = L, c->batch = b;
    }
    if (cross) {
        random_rows(src, sizeof src, b, 1 + rnd(15));
        if (attn_config_set(c, "source_tokens", src, &err)) fail_msg("source: %s", err.msg);
    } else {
        c->rope = rnd(2) && k % 2 == 0, c->past = L > 1 && rnd(3) == 0 ? rnd(L - 1) : 0;
        c->sliding_window = rnd(3) == 0 ? 1 + rnd(5) : 0, c->keep_first = c->sliding_window && rnd(2) ? rnd(3) : 0;
    }
    snprintf(desc, size, "h %d g %d k %d L %d b %d cross %d causal %d fill %g alibi %d cap %g sink %g guard %d "
             "past %d window %d keep %d train %d pad_mask %d", hg[0], hg[1], k, L, b, cross, c->causal,
             (double)c->mask_value, c->alibi, c->softcap, (double)c->sink_logit, c->softmax_guard, c->past,
             c->sliding_window, c->keep_first, c->train, c->pad_mask);
}

/* Equal within tol relative to the tensors' scale, NaN where NaN. */
static void expect_close(const attn_tensor *a, const attn_tensor *b, double tol, const char *what, const char *desc)
{
    assert_int_equal(a->count, b->count);
    double scale = 1.0;
    for (size_t i = 0; i < b->count; i++)
        if (isfinite(b->data[i]) && fabs(b->data[i]) > scale) scale = fabs(b->data[i]);
    for (size_t i = 0; i < a->count; i++) {
        float x = a->data[i], y = b->data[i];
        if (isnan(x) != isnan(y) || (!isnan(x) && fabs((double)x - y) > tol * scale))
            fail_msg("%s[%zu]: tiled %.9g, plain %.9g (%s)", what, i, (double)x, (double)y, desc);
    }
}

/* tile_max and tile_sum from the plain path's masked scores, independently:
 * after key tile jt, m = the max of the row's cells before (jt + 1)·BK (NaN
 * skipped; −∞ when none is finite above −∞) and ℓ = Σ e^(cell − m) over
 * them (0 while m is −∞). */
static void expect_running(const attn_trace *tiled, const attn_trace *plain, const char *desc)
{
    const attn_dims *d = &tiled->dims;
    const attn_tensor *ms = attn_trace_find(plain, "masked_scores"), *tm = attn_trace_find(tiled, "tile_max"),
                      *ts = attn_trace_find(tiled, "tile_sum");
    assert_non_null(tm);
    assert_non_null(ts);
    int BK = tiled->cfg.tiles.k, T = d->T;
    assert_int_equal(T, (d->t + BK - 1) / BK);
    for (size_t row = 0; row < (size_t)d->b * d->h * d->s; row++) {
        const float *x = ms->data + row * d->t;
        for (int jt = 0; jt < T; jt++) {
            int end = (jt + 1) * BK < d->t ? (jt + 1) * BK : d->t;
            double m = -INFINITY, l = 0;
            for (int j = 0; j < end; j++) m = x[j] > m ? x[j] : m;
            for (int j = 0; j < end && m > -INFINITY; j++) l += exp((double)x[j] - m);
            float gm = tm->data[row * T + jt], gl = ts->data[row * T + jt];
            if (isnan(l)) continue; /* a NaN score: the row is NaN either way */
            if (!(gm == m || fabs(gm - m) <= 1e-5 * fmax(1.0, fabs(m))) || fabs(gl - l) > 1e-5 * fmax(1.0, l))
                fail_msg("row %zu tile %d: m %.9g ℓ %.9g, expected %.9g %.9g (%s)", row, jt, (double)gm,
                         (double)gl, m, l, desc);
        }
    }
}

/* Many random configurations, each with random tiles (1 × 1, not dividing,
 * larger than the sequence): context and out as the plain path's. */
/* Runs c plain, then by tiles (their sizes drawn from case n and the trace's
 * s and t, and added to desc), and checks what both paths compute: context
 * and out within 2e-6, the weights exactly, the running max and sum. Returns
 * the largest finite |tiled − plain| of out; the caller frees both traces. */
static double tiled_against_plain(attn_config *c, int n, char *desc, size_t size, attn_trace *plain, attn_trace *tiled)
{
    attn_error err;
    if (attn_trace_run(c, NULL, plain, &err)) fail_msg("plain: %s (%s)", err.msg, desc);
    int s = plain->dims.s, t = plain->dims.t;
    c->tiles.q = n % 10 == 0 ? 1 : 1 + rnd(s + 3);
    c->tiles.k = n % 10 == 0 ? 1 : 1 + rnd(t + 3);
    size_t at = strlen(desc);
    snprintf(desc + at, size - at, " tiles %dx%d (case %d)", c->tiles.q, c->tiles.k, n);
    if (attn_trace_run(c, NULL, tiled, &err)) fail_msg("tiled: %s (%s)", err.msg, desc);
    expect_close(attn_trace_find(tiled, "context"), attn_trace_find(plain, "context"), 2e-6, "context", desc);
    expect_close(attn_trace_find(tiled, "out"), attn_trace_find(plain, "out"), 2e-6, "out", desc);
    expect_close(attn_trace_find(tiled, "weights"), attn_trace_find(plain, "weights"), 0, "weights", desc);
    expect_running(tiled, plain, desc);
    const attn_tensor *a = attn_trace_find(tiled, "out"), *b = attn_trace_find(plain, "out");
    double worst = 0;
    for (size_t i = 0; i < a->count; i++)
        if (isfinite(a->data[i])) worst = fmax(worst, fabs((double)a->data[i] - b->data[i]));
    return worst;
}

static void test_tiled_equals_plain(void **state)
{
    (void)state;
    rnd_state = 0x9E3779B97F4A7C15ULL;
    double worst = 0;
    for (int n = 0; n < 300; n++) {
        attn_config c;
        attn_trace plain, tiled;
        char desc[512];
        random_config(&c, desc, sizeof desc);
        worst = fmax(worst, tiled_against_plain(&c, n, desc, sizeof desc, &plain, &tiled));
        attn_trace_free(&plain);
        attn_trace_free(&tiled);
        attn_config_free(&c);
    }
    print_message("largest |tiled − plain| of out over 300 configurations: %.3g\n", worst);
}

/* One random configuration of mode mla (tiles not set): R, D, naive or
 * absorbed, with the settings around the scores, masks, padding, the cache
 * and dropout (not cross-attention or QK-norm, which mode mla refuses). */
static void random_mla_config(attn_config *c, char *desc, size_t size)
{
    static char rows[512];
    attn_error err;
    int h = 1 << rnd(4), k = 2 << rnd(3), L = 1 + rnd(14), b = 1 + rnd(3);
    attn_config_init(c);
    c->mode = ATTN_MODE_MLA, c->heads = h, c->d_model = h * k, c->seed = (uint64_t)rnd(1000);
    c->kv_rank = 1 + rnd(24), c->rope = rnd(3) != 0, c->rope_dim = c->rope ? 2 + 2 * rnd(3) : 1 + rnd(5);
    c->mla_absorb = rnd(2);
    c->scale = rnd(5) != 0, c->softmax_guard = rnd(3) != 0, c->mask_value = rnd(4) ? -INFINITY : -1e9f;
    c->causal = (attn_causal)(rnd(5) < 3 ? 1 : rnd(2) ? 0 : 2);
    c->alibi = rnd(4) == 0, c->softcap = rnd(4) == 0 ? 0.5 + rnd(5) : 0;
    c->sink_logit = rnd(4) == 0 ? (float)(rnd(7) - 3) : -INFINITY;
    c->train = rnd(6) == 0, c->dropout = 0.3f;
    c->pad_side = rnd(2) ? ATTN_PAD_LEFT : ATTN_PAD_RIGHT, c->pad_mask = rnd(6) != 0;
    if (rnd(3) == 0) {
        random_rows(rows, sizeof rows, b, L);
        if (attn_config_set(c, "tokens", rows, &err)) fail_msg("tokens: %s", err.msg);
    } else {
        c->seq = L, c->batch = b;
    }
    c->past = L > 1 && rnd(3) == 0 ? rnd(L - 1) : 0;
    c->sliding_window = rnd(3) == 0 ? 1 + rnd(5) : 0, c->keep_first = c->sliding_window && rnd(2) ? rnd(3) : 0;
    snprintf(desc, size, "mla h %d k %d R %d D %d absorb %d rope %d L %d b %d causal %d fill %g alibi %d cap %g "
             "sink %g guard %d past %d window %d keep %d train %d pad_mask %d scale %d", h, k, c->kv_rank,
             c->rope_dim, c->mla_absorb, c->rope, L, b, c->causal, (double)c->mask_value, c->alibi, c->softcap,
             (double)c->sink_logit, c->softmax_guard, c->past, c->sliding_window, c->keep_first, c->train,
             c->pad_mask, c->scale);
}

/* Multi-head latent attention by tiles, naive (over each head's rebuilt keys
 * and values) and absorbed (over the latent cache): context, context_latent
 * and out as the plain path's, tile_max and tile_sum its running max and sum,
 * and the absorbed tiled out as the naive plain one. */
static void test_mla_tiled_equals_plain(void **state)
{
    (void)state;
    rnd_state = 0x2545F4914F6CDD1DULL;
    double worst = 0;
    int absorbed = 0;
    for (int n = 0; n < 200; n++) {
        attn_config c;
        attn_trace plain, tiled, naive;
        attn_error err;
        char desc[512];
        random_mla_config(&c, desc, sizeof desc);
        worst = fmax(worst, tiled_against_plain(&c, n, desc, sizeof desc, &plain, &tiled));
        if (c.mla_absorb) {
            absorbed++;
            assert_null(attn_trace_find(&tiled, "k_nope")); /* nothing per head kept per key */
            expect_close(attn_trace_find(&tiled, "context_latent"), attn_trace_find(&plain, "context_latent"), 2e-6,
                         "context_latent", desc);
            c.mla_absorb = false, c.tiles = (attn_tiles){0, 0};
            if (attn_trace_run(&c, NULL, &naive, &err)) fail_msg("naive: %s (%s)", err.msg, desc);
            expect_close(attn_trace_find(&tiled, "out"), attn_trace_find(&naive, "out"), 2e-5, "out (naive)", desc);
            attn_trace_free(&naive);
        }
        attn_trace_free(&plain);
        attn_trace_free(&tiled);
        attn_config_free(&c);
    }
    assert_true(absorbed > 50 && absorbed < 150);
    print_message("mla: largest |tiled − plain| of out over 200 configurations (%d absorbed): %.3g\n", absorbed, worst);
}

/* Before any visible key m is −∞ and ℓ 0; under the causal mask, query 0's
 * later tiles are skipped and keep the first tile's m and ℓ. A fully masked
 * row: context 0 with the guard, NaN without, 0 with a sink. */
static void test_running_values(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr;
    attn_error err;
    attn_config_init(&c);
    c.seq = 6, c.heads = 1, c.d_model = 4;
    assert_int_equal(attn_config_set(&c, "tiles", "1x2", &err), ATTN_OK);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    const attn_tensor *tm = attn_trace_find(&tr, "tile_max"), *ts = attn_trace_find(&tr, "tile_sum");
    assert_int_equal(tm->shape[3], 3);
    assert_true(isfinite(tm->data[0]));                /* query 0, keys 0–1: key 0 visible */
    assert_true(tm->data[1] == tm->data[0] && ts->data[2] == ts->data[0]); /* skipped: unchanged */
    attn_trace_free(&tr);
    /* reversed: query 5 sees only key 5, in the last tile */
    c.causal = ATTN_CAUSAL_REVERSED;
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    tm = attn_trace_find(&tr, "tile_max"), ts = attn_trace_find(&tr, "tile_sum");
    assert_true(tm->data[5 * 3] == -INFINITY && ts->data[5 * 3 + 1] == 0.0f && isfinite(tm->data[5 * 3 + 2]));
    attn_trace_free(&tr);
    attn_config_free(&c);
    /* left padding under the causal mask: row 1's query 0 is <pad> and sees only itself, masked */
    for (int mode = 0; mode < 3; mode++) {
        attn_trace plain;
        attn_config_init(&c);
        c.heads = 2, c.d_model = 4, c.pad_side = ATTN_PAD_LEFT, c.softmax_guard = mode != 1;
        if (mode == 2) c.sink_logit = 1.0f;
        assert_int_equal(attn_config_set(&c, "tokens", "a b | c", &err), ATTN_OK);
        assert_int_equal(attn_trace_run(&c, NULL, &plain, &err), ATTN_OK);
        assert_int_equal(attn_config_set(&c, "tiles", "1x1", &err), ATTN_OK);
        assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
        const attn_tensor *ctx = attn_trace_find(&tr, "context");
        const float *row = ctx->data + ((size_t)1 * 2 + 0) * 2 * 2; /* b 1, head 0, query 0 */
        for (int f = 0; f < 2; f++) assert_true(mode == 1 ? isnan(row[f]) : row[f] == 0.0f);
        expect_close(ctx, attn_trace_find(&plain, "context"), 2e-6, "context", "fully masked");
        attn_trace_free(&tr);
        attn_trace_free(&plain);
        attn_config_free(&c);
    }
}

/* The untraced tiled layer (untraced.h) gives the traced one's out, with
 * GQA, RoPE, ALiBi, a window, padding and a sink; it refuses what it does
 * not take (no tiles, a past, cross-attention) in one line. */
static void test_untraced_layer(void **state)
{
    (void)state;
    static const char *const CASES[][12] = {
        {"seq", "37", "heads", "4", "kv_heads", "2", "d_model", "16", "rope", "true", "tiles", "8x5"},
        {"tokens", "a b c d e f | g h", "alibi", "true", "sliding_window", "3", "keep_first", "1", "tiles", "3x4"},
        {"seq", "20", "batch", "2", "sink_logit", "0.5", "softcap", "2", "causal", "false", "tiles", "64x64"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        attn_config c;
        attn_error err;
        attn_trace tr;
        attn_untraced u;
        attn_config_init(&c);
        for (int j = 0; j < 12 && CASES[i][j]; j += 2)
            if (attn_config_set(&c, CASES[i][j], CASES[i][j + 1], &err)) fail_msg("%s: %s", CASES[i][j], err.msg);
        assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
        if (attn_untraced_run(&c, &u, &err)) fail_msg("untraced: %s", err.msg);
        const attn_tensor *out = attn_trace_find(&tr, "out");
        for (size_t e = 0; e < out->count; e++) assert_float_equal(u.out[e], out->data[e], 1e-5);
        free(u.out);
        attn_trace_free(&tr);
        attn_config_free(&c);
    }
    attn_config c;
    attn_error err;
    attn_untraced u;
    attn_config_init(&c);
    c.seq = 8;
    assert_int_equal(attn_untraced_run(&c, &u, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "--tiles"));
    c.tiles = (attn_tiles){4, 4}, c.past = 2;
    assert_int_equal(attn_untraced_run(&c, &u, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "--past"));
    /* at scale it holds (b, s, ·) activations, no s × t: 16,384 positions of
     * d = 256 in under 300 MiB (the traced plain layer: 1 GiB a head a stage) */
    double bytes = 0;
    c.past = 0, c.seq = 16384, c.d_model = 256, c.tiles = (attn_tiles){128, 128};
    assert_int_equal(attn_untraced_estimate(&c, &bytes, &err), ATTN_OK);
    assert_true(bytes < 300.0 * 1024 * 1024);
    c.seq = 4096, c.d_model = 32, c.tiles = (attn_tiles){4, 4}, c.max_bytes = 1e6;
    assert_int_equal(attn_untraced_run(&c, &u, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "would need about"));
    attn_config_free(&c);
}

/* The KV cache with tiles: the prompt's first n − 3 tokens through the
 * untraced prefill, then 3 decoding steps, all tiled: the last logits are the
 * plain full pass's (plain, one row) at its last position. */
static void expect_decode(const attn_model *m, const attn_config *tiled_cfg, const attn_trace *plain)
{
    attn_config run;
    attn_kv_cache kc;
    attn_error err;
    int n = plain->dims.s, V = m->cfg.vocab;
    float *logits = malloc((size_t)V * sizeof *logits);
    assert_non_null(logits);
    assert_true(n > 4);
    assert_int_equal(attn_model_run_config(m, tiled_cfg, &run, &err), ATTN_OK);
    assert_int_equal(attn_kv_init(&kc, m, &err), ATTN_OK);
    assert_int_equal(attn_kv_prefill(&kc, m, &run, plain->token_ids, n - 3, logits, &err), ATTN_OK);
    for (int i = n - 3; i < n; i++) assert_int_equal(attn_kv_step(&kc, m, &run, plain->token_ids[i], logits, &err), ATTN_OK);
    const attn_tensor *lg = attn_trace_stage(plain, -1, ATTN_STAGE_LOGITS);
    double scale = 1.0;
    for (int v = 0; v < V; v++) scale = fmax(scale, fabs(lg->data[(size_t)(n - 1) * V + v]));
    for (int v = 0; v < V; v++)
        if (fabs(logits[v] - lg->data[(size_t)(n - 1) * V + v]) > 2e-5 * scale)
            fail_msg("%s: decoded logit %d %.9g, full pass %.9g", m->name, v, (double)logits[v],
                     (double)lg->data[(size_t)(n - 1) * V + v]);
    attn_kv_free(&kc);
    attn_config_free(&run);
    free(logits);
}

/* Every shipped model: a traced pass with tiles gives the plain one's logits. */
static void test_shipped_models(void **state)
{
    (void)state;
    static const char *const MODELS[] = {"brown", "brown-induction", "tang", "tang-mha", "tang-mqa", "tang-mla",
                                          "tang-nocausal"};
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
        attn_model m;
        attn_error err;
        attn_trace plain, tiled;
        attn_config c;
        assert_int_equal(attn_model_load(MODELS[i], &m, &err), ATTN_OK);
        attn_config_init(&c);
        char text[4096] = "";
        const char *ex = m.example ? m.example : "the cat sat on the mat and looked at the dog. ";
        for (int r = 0; r < 4 && strlen(text) + strlen(ex) < sizeof text; r++) strcat(text, ex);
        assert_int_equal(attn_config_set(&c, "text", text, &err), ATTN_OK);
        if (attn_model_trace_run(&m, &c, NULL, &plain, &err)) fail_msg("%s: %s", MODELS[i], err.msg);
        assert_int_equal(attn_config_set(&c, "tiles", "16x8", &err), ATTN_OK);
        if (attn_model_trace_run(&m, &c, NULL, &tiled, &err)) fail_msg("%s tiled: %s", MODELS[i], err.msg);
        const attn_tensor *a = attn_trace_stage(&tiled, -1, ATTN_STAGE_LOGITS),
                          *b = attn_trace_stage(&plain, -1, ATTN_STAGE_LOGITS);
        assert_int_equal(attn_tensor_fill(a, 0, (size_t)tiled.dims.b * tiled.dims.s), 0);
        assert_int_equal(attn_tensor_fill(b, 0, (size_t)plain.dims.b * plain.dims.s), 0);
        expect_close(a, b, 2e-5, "logits", MODELS[i]);
        assert_non_null(attn_trace_stage(&tiled, 0, ATTN_STAGE_TILE_MAX));
        if (m.cfg.arch.mla) { /* latent attention absorbed: the tiles run over the latent cache itself */
            attn_trace absorbed;
            assert_int_equal(attn_config_set(&c, "mla_absorb", "true", &err), ATTN_OK);
            if (attn_model_trace_run(&m, &c, NULL, &absorbed, &err)) fail_msg("%s absorbed: %s", MODELS[i], err.msg);
            const attn_tensor *z = attn_trace_stage(&absorbed, -1, ATTN_STAGE_LOGITS);
            assert_int_equal(attn_tensor_fill(z, 0, (size_t)absorbed.dims.b * absorbed.dims.s), 0);
            expect_close(z, b, 2e-5, "logits (absorbed, tiled)", MODELS[i]);
            attn_trace_free(&absorbed);
            assert_int_equal(attn_config_set(&c, "mla_absorb", "false", &err), ATTN_OK);
        }
        expect_decode(&m, &c, &plain);
        attn_trace_free(&plain);
        attn_trace_free(&tiled);
        attn_config_free(&c);
        attn_model_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiled_equals_plain),
        cmocka_unit_test(test_mla_tiled_equals_plain),
        cmocka_unit_test(test_running_values),
        cmocka_unit_test(test_untraced_layer),
        cmocka_unit_test(test_shipped_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
