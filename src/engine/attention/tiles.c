/* tiles.c — FlashAttention's tiles and online softmax (tiles.h).
 *
 * One task is a (batch row, head, query tile): BQ query rows against every key
 * tile in turn. The tasks are shared between the cores; each holds its own
 * scratch, a BQ × BK tile of scores and BQ × k of output, never s × t. */
#include "tiles.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"
#include "engine/base/rng.h"

/* What one task holds: a tile of scores (BQ × BK, then e^(S − m′) in place),
 * its product with the values and the running output (BQ × k each), and per
 * row m, ℓ and whether the mask let any key through. */
typedef struct {
    float *S, *P, *PV, *O, *m, *l, *alpha;
    unsigned char *seen;
    void *block;
} tile_scratch;

static bool scratch_alloc(tile_scratch *w, int bq, int bk, int k)
{
    size_t floats = 2 * (size_t)bq * bk + 2 * (size_t)bq * k + 3 * (size_t)bq;
    w->block = malloc(floats * sizeof(float) + (size_t)bq);
    if (!w->block) return false;
    w->S = w->block;
    w->P = w->S + (size_t)bq * bk;
    w->PV = w->P + (size_t)bq * bk;
    w->O = w->PV + (size_t)bq * k;
    w->m = w->O + (size_t)bq * k;
    w->l = w->m + bq;
    w->alpha = w->l + bq;
    w->seen = (unsigned char *)(w->alpha + bq);
    return true;
}

/* The kv head a task's query head reads, counted over the batch rows. */
static size_t kv_head(const attn_tiled *a, int bi, int hh)
{
    int per = a->d->h / a->kv_heads;
    return (size_t)bi * a->kv_heads + hh / per;
}

/* S (rows × cols) = the masked scores of queries i0.. against keys j0.., as
 * the plain path computes each cell: q·kᵀ·scale (+ q_pe·k_peᵀ·scale in mode
 * mla), + ALiBi's −m_h·|i − j|, C·tanh(· / C), + the mask (0 or the fill).
 * seen[r] is set for a row whose mask lets a key of the tile through. */
static void tile_scores(const attn_tiled *a, tile_scratch *w, int bi, int hh, int i0, int rows, int j0, int cols,
                        double slope)
{
    const attn_config *c = a->c;
    const attn_dims *d = a->d;
    int e = a->qk_dim, D = a->pe_dim;
    float scale = !c->scale ? 1.0f : a->score_gain > 0 ? (float)(a->score_gain / sqrt((double)(d->k + D)))
                                                         : 1.0f / sqrtf((float)(d->k + D));
    const float *q = a->q + (((size_t)bi * d->h + hh) * d->s + i0) * e;
    const float *keys = a->keys + kv_head(a, bi, hh) * a->kv_stride + (size_t)j0 * e;
    attn_op_scores(q, keys, w->S, 1, 1, rows, cols, e, scale);
    if (a->q_pe) { /* + the RoPE part, against the one k_pe of every head (P is free until tile_update) */
        const float *qp = a->q_pe + (((size_t)bi * d->h + hh) * d->s + i0) * D;
        attn_op_scores(qp, a->k_pe + ((size_t)bi * d->t + j0) * D, w->P, 1, 1, rows, cols, D, scale);
        for (size_t n = 0; n < (size_t)rows * cols; n++) w->S[n] += w->P[n];
    }
    const unsigned char *pad = a->key_pad ? a->key_pad + (size_t)bi * d->t : NULL;
    float cap = (float)c->softcap, fill = c->mask_value;
    for (int r = 0; r < rows; r++) {
        float *row = w->S + (size_t)r * cols;
        int i = i0 + r;
        for (int cc = 0; cc < cols; cc++) {
            int j = j0 + cc;
            float x = row[cc];
            if (c->alibi) x = x + (float)(-slope * abs(d->P + i - j));
            if (c->softcap > 0) x = cap * tanhf(x / cap);
            float mv = attn_op_mask_hidden(c, d, i, j) || (pad && pad[j]) ? fill : 0.0f;
            if (mv != -INFINITY) w->seen[r] = 1;
            row[cc] = x + mv;
        }
    }
}

/* The online update of every row of the tile, S (rows × cols) in hand:
 *   m′ = max(m, rowmax S);  P = e^(S − m′);  α = e^(m − m′)
 *   ℓ′ = α·ℓ + Σ P;  O′ = α·O + P'·V_j
 * P' is P with dropout's cells dropped (training), P itself otherwise. A row
 * with m′ = −∞ (no visible key yet) is left as it was (its P is 0). */
static void tile_update(const attn_tiled *a, tile_scratch *w, int bi, int hh, int i0, int rows, int j0, int cols)
{
    const attn_config *c = a->c;
    const attn_dims *d = a->d;
    int k = a->v_dim;
    bool drop = c->train && c->dropout > 0.0f;
    uint64_t key = a->dropout_key;
    float keep = drop ? 1.0f / (1.0f - c->dropout) : 1.0f, *alpha = w->alpha;
    for (int r = 0; r < rows; r++) {
        const float *row = w->S + (size_t)r * cols;
        float *p = w->P + (size_t)r * cols, mx = attn_op_row_max(row, cols, w->m[r]); /* NaNs skipped, as the plain max */
        if (mx == -INFINITY) { /* nothing visible yet: the tile changes nothing */
            memset(p, 0, (size_t)cols * sizeof *p);
            alpha[r] = 1.0f;
            continue;
        }
        alpha[r] = expf(w->m[r] - mx); /* e^(−∞) = 0 for the first visible tile */
        w->l[r] = alpha[r] * w->l[r] + attn_op_exp_shifted(row, p, cols, mx);
        w->m[r] = mx;
        if (drop) {
            size_t cell = (((size_t)bi * d->h + hh) * d->s + i0 + r) * d->t + j0;
            for (int cc = 0; cc < cols; cc++) p[cc] *= attn_uniform(key, cell + cc) < c->dropout ? 0.0f : keep;
        }
    }
    const float *values = a->values + kv_head(a, bi, hh) * a->v_stride + (size_t)j0 * k;
    attn_op_weighted_sum(w->P, values, w->PV, 1, 1, rows, cols, k);
    for (int r = 0; r < rows; r++)
        for (int f = 0; f < k; f++) w->O[(size_t)r * k + f] = alpha[r] * w->O[(size_t)r * k + f] + w->PV[(size_t)r * k + f];
}

/* context = O / ℓ for the task's rows, after the sink's term (head hh's X_h
 * with per-head sinks, else the config's one X): with X finite,
 * m′ = max(m, X), ℓ′ = e^(m − m′)·ℓ + e^(X − m′), O′ = e^(m − m′)·O (the sink
 * has no value). ℓ = 0 is a row with no visible key: 0 with the guard when
 * its mask hid every key, else NaN (0/0, as the plain softmax). */
static void finish_rows(const attn_tiled *a, tile_scratch *w, int bi, int hh, int i0, int rows)
{
    const attn_config *c = a->c;
    const attn_dims *d = a->d;
    int k = a->v_dim;
    float X = a->sinks ? a->sinks[hh] : c->sink_logit;
    for (int r = 0; r < rows; r++) {
        float *o = w->O + (size_t)r * k, l = w->l[r], m = w->m[r];
        float *out = a->ctx + (((size_t)bi * d->h + hh) * d->s + i0 + r) * k;
        if (!isinf(X)) {
            float mf = m > X ? m : X, alpha = expf(m - mf);
            l = alpha * l + expf(X - mf);
            for (int f = 0; f < k; f++) o[f] *= alpha;
        }
        if (l == 0.0f) {
            float v = c->softmax_guard && !w->seen[r] ? 0.0f : NAN;
            for (int f = 0; f < k; f++) out[f] = v;
            continue;
        }
        for (int f = 0; f < k; f++) out[f] = o[f] / l;
    }
}

/* One task: query tile qt of head hh of batch row bi against every key tile. */
static void run_task(const attn_tiled *a, tile_scratch *w, int bi, int hh, int qt, const double *slopes)
{
    const attn_config *c = a->c;
    const attn_dims *d = a->d;
    int bq = c->tiles.q, bk = c->tiles.k, T = attn_config_key_tiles(c, d->t);
    int i0 = qt * bq, rows = d->s - i0 < bq ? d->s - i0 : bq;
    /* the causal mask with −∞ hides a key tile from the whole query tile when
     * its first key is after the tile's last query position, P + i0 + rows − 1 */
    bool causal = !d->cross && c->causal == ATTN_CAUSAL_ON && c->mask_value == -INFINITY;
    for (int r = 0; r < rows; r++) w->m[r] = -INFINITY, w->l[r] = 0.0f, w->seen[r] = 0;
    memset(w->O, 0, (size_t)rows * a->v_dim * sizeof *w->O);
    for (int jt = 0; jt < T; jt++) {
        int j0 = jt * bk, cols = d->t - j0 < bk ? d->t - j0 : bk;
        if (!(causal && j0 > d->P + i0 + rows - 1)) {
            tile_scores(a, w, bi, hh, i0, rows, j0, cols, slopes ? slopes[hh] : 0.0);
            tile_update(a, w, bi, hh, i0, rows, j0, cols);
        }
        for (int r = 0; r < rows && a->tile_max; r++) {
            size_t at = (((size_t)bi * d->h + hh) * d->s + i0 + r) * T + jt;
            a->tile_max[at] = w->m[r];
            a->tile_sum[at] = w->l[r];
        }
    }
    finish_rows(a, w, bi, hh, i0, rows);
}

attn_status attn_tiled_attention(const attn_tiled *given, attn_error *err)
{
    const attn_config *c = given->c;
    const attn_dims *d = given->d;
    if (c->tiles.q < 1 || c->tiles.k < 1) return attn_fail(err, ATTN_ERR_CONFIG, "tiles: no tile size set");
    attn_tiled r = *given, *a = &r; /* the widths not given: a head's dₖ */
    if (!r.qk_dim) r.qk_dim = d->k;
    if (!r.v_dim) r.v_dim = d->k;
    if (!r.v_stride) r.v_stride = r.kv_stride;
    if (!r.q_pe || !r.k_pe) r.q_pe = r.k_pe = NULL, r.pe_dim = 0;
    int qtiles = (d->s + c->tiles.q - 1) / c->tiles.q;
    long tasks = (long)d->b * d->h * qtiles;
    double *slopes = c->alibi ? malloc((size_t)d->h * sizeof *slopes) : NULL;
    bool failed = c->alibi && !slopes;
    if (slopes) attn_alibi_slopes(d->h, slopes);
    #pragma omp parallel if (tasks > 1 && (double)d->s * d->t * d->k * d->h * d->b > 65536.0)
    {
        tile_scratch w = {0};
        /* a tile larger than the sequence holds only what the sequence has */
        bool ok = !failed && scratch_alloc(&w, c->tiles.q < d->s ? c->tiles.q : d->s,
                                           c->tiles.k < d->t ? c->tiles.k : d->t, a->v_dim);
        if (!ok) {
            #pragma omp atomic write
            failed = true;
        }
        #pragma omp for schedule(dynamic)
        for (long task = 0; task < tasks; task++)
            if (ok) run_task(a, &w, (int)(task / ((long)d->h * qtiles)), (int)(task / qtiles % d->h),
                             (int)(task % qtiles), slopes);
        if (ok) free(w.block);
    }
    free(slopes);
    return failed ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a %dx%d tile", c->tiles.q, c->tiles.k)
                  : ATTN_OK;
}

/* Where mode mla's tiles read and write (mla.h): naive, each head's q_nope
 * against its rebuilt k_nope, v_up, into context; absorbed, q_latent against
 * the latent c_kv, which is also the values, one for every head, into
 * context_latent. The RoPE part (q_pe, k_pe) the same either way. */
static bool mla_sources(attn_trace *tr, int layer, attn_tiled *a)
{
    const attn_dims *d = &tr->dims;
    bool absorb = tr->cfg.mla_absorb;
    const attn_tensor *q = attn_trace_stage(tr, layer, absorb ? ATTN_STAGE_Q_LATENT : ATTN_STAGE_Q_NOPE),
                      *keys = attn_trace_stage(tr, layer, absorb ? ATTN_STAGE_C_KV : ATTN_STAGE_K_NOPE),
                      *values = attn_trace_stage(tr, layer, absorb ? ATTN_STAGE_C_KV : ATTN_STAGE_V_UP),
                      *ctx = attn_trace_stage(tr, layer, absorb ? ATTN_STAGE_CONTEXT_LATENT : ATTN_STAGE_CONTEXT),
                      *q_pe = attn_trace_stage(tr, layer, ATTN_STAGE_Q_PE),
                      *k_pe = attn_trace_stage(tr, layer, ATTN_STAGE_K_PE);
    if (!q || !keys || !values || !ctx || !q_pe || !k_pe) return false;
    int e = absorb ? d->kv_rank : d->k;
    a->q = q->data, a->keys = keys->data, a->values = values->data, a->ctx = ctx->data;
    a->kv_heads = absorb ? 1 : d->h;
    a->kv_stride = (size_t)d->t * e;
    a->qk_dim = a->v_dim = e;
    a->q_pe = q_pe->data, a->k_pe = k_pe->data, a->pe_dim = d->rope_dim;
    a->score_gain = tr->arch.mla_score_gain;
    return true;
}

attn_status attn_tiles_layer(attn_trace *tr, int layer, const float *qh, uint64_t dropout_key, const float *sinks,
                             attn_error *err)
{
    const attn_dims *d = &tr->dims;
    const attn_tensor *ke = attn_trace_stage(tr, layer, ATTN_STAGE_K_EXPANDED),
                      *ve = attn_trace_stage(tr, layer, ATTN_STAGE_V_EXPANDED),
                      *ctx = attn_trace_stage(tr, layer, ATTN_STAGE_CONTEXT),
                      *mx = attn_trace_stage(tr, layer, ATTN_STAGE_TILE_MAX),
                      *sum = attn_trace_stage(tr, layer, ATTN_STAGE_TILE_SUM);
    attn_tiled a = {.c = &tr->cfg, .d = d, .tile_max = mx ? mx->data : NULL, .tile_sum = mx && sum ? sum->data : NULL,
                    .dropout_key = dropout_key, .sinks = sinks};
    if (d->mode == ATTN_MODE_MLA) {
        if (!mla_sources(tr, layer, &a))
            return attn_fail(err, ATTN_ERR_CONFIG, "layer %d keeps no latent keys or context", layer);
    } else {
        if (!ke || !ve || !ctx) return attn_fail(err, ATTN_ERR_CONFIG, "layer %d keeps no keys or context", layer);
        a.q = qh, a.keys = ke->data, a.values = ve->data, a.ctx = ctx->data;
        a.kv_heads = d->h, a.kv_stride = (size_t)d->t * d->k;
    }
    /* the pad mask's keys, as query_key's mask reads them: the source's in cross-attention */
    const attn_tokens *keys = d->cross ? &tr->source : &tr->tokens;
    unsigned char *pad = malloc((size_t)d->b * d->t);
    if (!pad) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int bi = 0; bi < d->b; bi++)
        for (int j = 0; j < d->t; j++) pad[(size_t)bi * d->t + j] = tr->cfg.pad_mask && attn_tokens_is_pad(keys, bi, j);
    a.key_pad = pad;
    attn_status st = attn_tiled_attention(&a, err);
    free(pad);
    return st;
}
