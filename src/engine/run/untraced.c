/* untraced.c — one attention layer, untraced, by tiles (untraced.h).
 *
 * attention.c's steps on buffers of their own instead of a trace's stages,
 * with no (b, h, s, t) stage at all: x → q, k, v → heads → RoPE → the tiled
 * context (tiles.h, kv heads read where they are, no repeat_kv) → merged → out. */
#include "untraced.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/attention.h"
#include "engine/attention/ops.h"
#include "engine/attention/tiles.h"
#include "engine/base/budget.h"
#include "engine/base/rng.h"

/* The buffers of one pass, floats each; N_BUFS of them in one block. */
enum { X, WQ, WK, WV, WO, Q, K, V, QH, KH, VH, TMP, CTX, OUT, N_BUFS };

static void buf_sizes(const attn_dims *d, size_t n[N_BUFS])
{
    size_t bs = (size_t)d->b * d->s, hk = (size_t)d->h * d->k, gk = (size_t)d->g * d->k, dd = (size_t)d->d;
    const size_t each[N_BUFS] = {bs * dd, dd * hk, dd * gk, dd * gk, hk * dd, bs * hk, bs * gk,
                                 bs * gk, bs * hk, bs * gk, bs * gk, bs * hk, bs * hk, bs * dd};
    memcpy(n, each, sizeof each);
}

/* cfg resolved without the trace's size check (nothing of a trace is held),
 * and the settings this pass does not take refused. */
static attn_status resolve(const attn_config *cfg, attn_dims *d, attn_tokens *tok, attn_error *err)
{
    attn_tokens src;
    attn_config probe = *cfg; /* shallow: only max_bytes differs, nothing is freed */
    if (!cfg->tiles.q)
        return attn_fail(err, ATTN_ERR_CONFIG, "an untraced layer runs by tiles: set --tiles BQxBK (the plain path "
                         "holds every s × t weight)");
    const char *no = cfg->model ? "--model" : cfg->source_tokens ? "cross-attention" : cfg->past ? "--past"
                   : cfg->weights_path ? "--weights" : cfg->input_path ? "--input" : cfg->qk_norm ? "--qk-norm"
                   : cfg->mode == ATTN_MODE_MLA ? "--mode mla" : NULL;
    if (no)
        return attn_fail(err, ATTN_ERR_CONFIG, "the untraced tiled layer takes self-attention of tokens drawn from "
                         "the seed, not %s; trace it instead", no);
    probe.max_bytes = HUGE_VAL;
    attn_status st = attn_config_resolve(&probe, d, tok, &src, err);
    attn_tokens_free(&src);
    return st;
}

attn_status attn_untraced_estimate(const attn_config *cfg, double *bytes, attn_error *err)
{
    attn_dims d;
    attn_tokens tok;
    attn_status st = resolve(cfg, &d, &tok, err);
    if (st) return st;
    size_t n[N_BUFS];
    double floats = 0;
    buf_sizes(&d, n);
    for (int i = 0; i < N_BUFS; i++) floats += (double)n[i];
    /* + the pad mask (b, t) and each core's tiles: BQ × BK scores and their exps, 2 BQ × k outputs */
    double bq = cfg->tiles.q < d.s ? cfg->tiles.q : d.s, bk = cfg->tiles.k < d.t ? cfg->tiles.k : d.t;
    *bytes = floats * sizeof(float) + (double)d.b * d.t + attn_ops_cores() * (2 * bq * bk + 2 * bq * d.k) * sizeof(float);
    attn_tokens_free(&tok);
    return ATTN_OK;
}

/* x and the weights as attention.c's fill_inputs makes them from the seed. */
static void fill(const attn_config *c, const attn_dims *d, const attn_tokens *tok, float *b[N_BUFS], size_t n[N_BUFS])
{
    static const char *const NAMES[] = {"w_q", "w_k", "w_v", "w_o"};
    for (int r = 0; r < d->b; r++)
        for (int p = 0; p < d->s; p++)
            attn_embed_token(attn_tokens_at(tok, r, p), c->seed, b[X] + ((size_t)r * d->s + p) * d->d, d->d);
    for (int i = 0; i < 4; i++)
        attn_fill_normal(b[WQ + i], n[WQ + i], attn_hash64(attn_hash_str(NAMES[i]) ^ attn_hash64(c->seed)),
                         1.0f / sqrtf((float)d->d));
}

/* Steps 1, 2, 4, tiles, 11: q, k, v; heads; RoPE; the tiled context; merged; out. */
static attn_status compute(const attn_config *c, const attn_dims *d, const unsigned char *pad, float *b[N_BUFS],
                           attn_error *err)
{
    int bs = d->b * d->s, h = d->h, g = d->g, k = d->k;
    attn_op_project(b[X], b[WQ], b[Q], bs, d->d, h * k);
    attn_op_project(b[X], b[WK], b[K], bs, d->d, g * k);
    attn_op_project(b[X], b[WV], b[V], bs, d->d, g * k);
    attn_op_split_heads(b[Q], b[QH], d->b, d->s, h, k);
    attn_op_split_heads(b[K], b[KH], d->b, d->s, g, k);
    attn_op_split_heads(b[V], b[VH], d->b, d->s, g, k);
    float *qh = b[QH], *kh = b[KH];
    if (c->rope) { /* rotated into TMP and K (free once split) */
        attn_rope r = {c->rope_theta, c->rope_style, NULL, false};
        if (attn_op_rope(qh, b[TMP], d->b, h, d->s, k, 0, &r) || attn_op_rope(kh, b[K], d->b, g, d->s, k, 0, &r))
            return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for RoPE");
        qh = b[TMP], kh = b[K];
    }
    attn_tiled a = {.c = c, .d = d, .q = qh, .keys = kh, .values = b[VH], .kv_heads = g,
                    .kv_stride = (size_t)d->t * k, .key_pad = pad, .ctx = b[CTX],
                    .dropout_key = attn_dropout_key(c, "attention")};
    attn_status st = attn_tiled_attention(&a, err);
    if (st) return st;
    attn_op_merge_heads(b[CTX], b[Q], d->b, h, d->s, k); /* merged into q's buffer */
    attn_op_project(b[Q], b[WO], b[OUT], bs, h * k, d->d);
    if (c->train && c->dropout > 0.0f)
        attn_op_dropout(b[OUT], b[OUT], (size_t)bs * d->d, c->dropout, attn_dropout_key(c, "output"));
    return ATTN_OK;
}

attn_status attn_untraced_run(const attn_config *cfg, attn_untraced *out, attn_error *err)
{
    attn_tokens tok;
    attn_budget budget = attn_config_budget(cfg);
    memset(out, 0, sizeof *out);
    attn_status st = attn_untraced_estimate(cfg, &out->bytes, err);
    if (st) return st;
    if (out->bytes > budget.bytes) {
        char size[32], bound[200];
        return attn_fail(err, ATTN_ERR_CONFIG, "this untraced layer would need about %s, more than %s",
                         attn_budget_size(out->bytes, size, sizeof size), attn_budget_text(&budget, bound, sizeof bound));
    }
    if ((st = resolve(cfg, &out->dims, &tok, err))) return st;
    const attn_dims *d = &out->dims;
    size_t n[N_BUFS], total = 0;
    buf_sizes(d, n);
    for (int i = 0; i < N_BUFS; i++) total += n[i];
    float *block = malloc(total * sizeof *block), *b[N_BUFS];
    unsigned char *pad = malloc((size_t)d->b * d->t);
    if (!block || !pad) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the untraced layer");
    float *f = block;
    for (int i = 0; !st && i < N_BUFS; f += n[i], i++) b[i] = f;
    for (int r = 0; !st && r < d->b; r++)
        for (int j = 0; j < d->t; j++) pad[(size_t)r * d->t + j] = cfg->pad_mask && attn_tokens_is_pad(&tok, r, j);
    if (!st) {
        fill(cfg, d, &tok, b, n);
        st = compute(cfg, d, pad, b, err);
    }
    if (!st && !(out->out = malloc(n[OUT] * sizeof *out->out))) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    if (!st) memcpy(out->out, b[OUT], n[OUT] * sizeof *out->out);
    free(block);
    free(pad);
    attn_tokens_free(&tok);
    return st;
}
