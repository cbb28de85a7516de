/* mla.c — multi-head latent attention (DeepSeek-V2/V3) in one traced layer.
 *
 * Sizes: b batch rows, s queries, t keys (P cached, then the s new ones),
 * d d_model, h heads, k = dₖ = d/h, R the latent's width (kv_rank), D the
 * RoPE key's width (rope_dim). W_X[:, j] below is head j's block of dₖ
 * columns of W_X.
 *
 *   q        = x · W_Q                              (b, s, h·(k+D))
 *   q_nope   = each head's first k features        (b, h, s, k)
 *   q_pe     = RoPE(each head's last D features)   (b, h, s, D)   at positions P + i
 *   c_kv     = [x_past ; x] · W_DKV                 (b, t, R)      the cache
 *   k_pe     = RoPE([x_past ; x] · W_KR)            (b, t, D)      the cache, one for every head
 * naive (DeepSeek's attn_impl "naive"): keys and values rebuilt per head
 *   k_nope   = c_kv · W_UK[:, j]                     (b, h, t, k)
 *   v_up     = c_kv · W_UV[:, j]                     (b, h, t, k)
 *   scores   = (q_nope · k_nopeᵀ + q_pe · k_peᵀ) / √(k + D)
 *   context  = weights · v_up
 * absorbed ("absorb"): matrix products reassociated, nothing per head kept per key
 *   q_nope · k_nopeᵀ = q_nope · (c_kv · W_UK[:, j])ᵀ = (q_nope · W_UK[:, j]ᵀ) · c_kvᵀ
 *   q_latent = q_nope · W_UK[:, j]ᵀ                  (b, h, s, R)
 *   scores   = (q_latent · c_kvᵀ + q_pe · k_peᵀ) / √(k + D)
 *   weights · v_up = weights · (c_kv · W_UV[:, j]) = (weights · c_kv) · W_UV[:, j]
 *   context_latent = weights · c_kv                  (b, h, s, R)
 *   context  = context_latent · W_UV[:, j]           (b, h, s, k)
 * RoPE cannot go through W_UK (its rotation depends on the key's position,
 * which a product folded into the query cannot know): that is why the
 * position lives in the separate, small k_pe. Without rope the pe parts
 * are not rotated (they still add D features to every score).
 *
 * A DeepSeek checkpoint (model_run.c, arch.h) adds three things:
 *   c_kv     = RMSNorm([x_past ; x] · W_DKV) ⊙ g_kv   (kv_a_layernorm, in->kv_norm)
 *   q        = RMSNorm(x · W_QA) ⊙ g_qa · W_QB        with q_lora_rank (in->q, no W_Q)
 *   RoPE's pairs (2m, 2m+1), written out as halves    V3's rope_interleave: the D
 *            features regrouped evens then odds, then rotate_half (arch.rope_to_halves) */
#include "mla.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"

static float *stage(attn_trace *tr, int layer, attn_stage_id id)
{
    const attn_tensor *t = attn_trace_stage(tr, layer, id);
    return t ? t->data : NULL;
}

static attn_status no_room(attn_error *err)
{
    return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for multi-head latent attention");
}

/* Head j's block of W (rows, h·k): columns j·k … (j+1)·k − 1, into out (rows, k). */
static void head_block(const float *w, int rows, int h, int k, int j, float *out)
{
    for (int r = 0; r < rows; r++) memcpy(out + (size_t)r * k, w + (size_t)r * h * k + (size_t)j * k, k * sizeof *out);
}

/* Every key position's rows of x_all · W (b, t, out): the P cached ones from
 * x_past (b, P, d), then the s new ones from x (b, s, d). */
static void project_positions(const float *x_past, const float *x, const float *w, float *y, const attn_dims *D,
                              int out)
{
    for (int r = 0; r < D->b; r++) {
        float *row = y + (size_t)r * D->t * out;
        if (D->P) attn_op_project(x_past + (size_t)r * D->P * D->d, w, row, D->P, D->d, out);
        attn_op_project(x + (size_t)r * D->s * D->d, w, row + (size_t)D->P * out, D->s, D->d, out);
    }
}

/* The cached rows of c_kv or k_pe (b, t, n) replaced by a real cache's (b, P, n),
 * whose rows are stride floats apart (0: n). */
static void use_cache(float *y, const float *past, const attn_dims *D, int n, int stride)
{
    size_t step = stride > 0 ? (size_t)stride : (size_t)n;
    for (int r = 0; past && r < D->b; r++)
        for (int p = 0; p < D->P; p++)
            memcpy(y + ((size_t)r * D->t + p) * n, past + ((size_t)r * D->P + p) * step, (size_t)n * sizeof *y);
}

/* V3's rope_interleave: each row of e features regrouped, evens first then
 * odds (x₀ x₂ … x₁ x₃ …), so that rotate_half then turns the pairs (2m, 2m+1). */
static int to_halves(float *x, size_t rows, int e)
{
    float *tmp = malloc((size_t)e * sizeof *tmp);
    if (!tmp) return -1;
    for (size_t r = 0; r < rows; r++) {
        float *row = x + r * e;
        for (int m = 0; m < e / 2; m++) tmp[m] = row[2 * m], tmp[e / 2 + m] = row[2 * m + 1];
        memcpy(row, tmp, (size_t)e * sizeof *row);
    }
    free(tmp);
    return 0;
}

/* q_nope and q_pe from q (b, s, h·(k+D)); q_pe rotated at P + i if rope. */
static attn_status split_query(attn_trace *tr, int layer, const attn_rope *rope, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    const int b = D->b, s = D->s, h = D->h, k = D->k, e = D->rope_dim, w = k + e;
    const float *q = stage(tr, layer, ATTN_STAGE_Q);
    float *nope = stage(tr, layer, ATTN_STAGE_Q_NOPE), *pe = stage(tr, layer, ATTN_STAGE_Q_PE);
    float *raw = rope ? malloc((size_t)b * h * s * e * sizeof *raw) : pe;
    if (!raw) return no_room(err);
    for (int r = 0; r < b; r++)
        for (int j = 0; j < h; j++)
            for (int i = 0; i < s; i++) {
                const float *src = q + ((size_t)r * s + i) * h * w + (size_t)j * w;
                size_t row = ((size_t)r * h + j) * s + i;
                memcpy(nope + row * k, src, (size_t)k * sizeof *nope);
                memcpy(raw + row * e, src + k, (size_t)e * sizeof *raw);
            }
    int bad = rope && tr->arch.rope_to_halves ? to_halves(raw, (size_t)b * h * s, e) : 0;
    if (!bad && rope) bad = attn_op_rope(raw, pe, b, h, s, e, D->P, rope);
    if (rope) free(raw);
    return bad ? no_room(err) : ATTN_OK;
}

/* c_kv and k_pe over every key position, the cached ones first. */
static attn_status latent_cache(attn_trace *tr, int layer, const attn_mla_given *in, const attn_rope *rope,
                                attn_error *err)
{
    const attn_dims *D = &tr->dims;
    const float *x = stage(tr, layer, ATTN_STAGE_X), *xp = stage(tr, layer, ATTN_STAGE_X_PAST);
    float *ckv = stage(tr, layer, ATTN_STAGE_C_KV), *kpe = stage(tr, layer, ATTN_STAGE_K_PE);
    project_positions(xp, x, stage(tr, layer, ATTN_STAGE_W_DKV), ckv, D, D->kv_rank);
    /* a checkpoint's latent is RMS-normalised over its R features before it is cached */
    if (in->kv_norm) attn_op_rmsnorm(ckv, in->kv_norm, ckv, (size_t)D->b * D->t, D->kv_rank, in->kv_eps);
    if (D->P) use_cache(ckv, in->ckv_past, D, D->kv_rank, in->stride);
    if (!rope) project_positions(xp, x, stage(tr, layer, ATTN_STAGE_W_KR), kpe, D, D->rope_dim);
    else {
        /* rotated as one head (b, 1, t, D) at positions 0 … t−1 */
        float *raw = malloc((size_t)D->b * D->t * D->rope_dim * sizeof *raw);
        if (!raw) return no_room(err);
        project_positions(xp, x, stage(tr, layer, ATTN_STAGE_W_KR), raw, D, D->rope_dim);
        int bad = tr->arch.rope_to_halves ? to_halves(raw, (size_t)D->b * D->t, D->rope_dim) : 0;
        if (!bad) bad = attn_op_rope(raw, kpe, D->b, 1, D->t, D->rope_dim, 0, rope);
        free(raw);
        if (bad) return no_room(err);
    }
    if (D->P) use_cache(kpe, in->kpe_past, D, D->rope_dim, in->stride);
    return ATTN_OK;
}

/* Naive: k_nope and v_up (b, h, t, k) = c_kv · W_UK, c_kv · W_UV, split into heads. */
static attn_status rebuild_keys_values(attn_trace *tr, int layer, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    const int rows = D->b * D->t, hk = D->h * D->k;
    float *tmp = malloc((size_t)rows * hk * sizeof *tmp);
    if (!tmp) return no_room(err);
    const float *ckv = stage(tr, layer, ATTN_STAGE_C_KV);
    attn_op_project(ckv, stage(tr, layer, ATTN_STAGE_W_UK), tmp, rows, D->kv_rank, hk);
    attn_op_split_heads(tmp, stage(tr, layer, ATTN_STAGE_K_NOPE), D->b, D->t, D->h, D->k);
    attn_op_project(ckv, stage(tr, layer, ATTN_STAGE_W_UV), tmp, rows, D->kv_rank, hk);
    attn_op_split_heads(tmp, stage(tr, layer, ATTN_STAGE_V_UP), D->b, D->t, D->h, D->k);
    free(tmp);
    return ATTN_OK;
}

/* Absorbed: q_latent[b,j] (s, R) = q_nope[b,j] (s, k) · W_UK[:, j]ᵀ (k, R). */
static attn_status absorb_query(attn_trace *tr, int layer, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    const int R = D->kv_rank, k = D->k, s = D->s;
    float *wj = malloc((size_t)R * k * sizeof *wj);
    if (!wj) return no_room(err);
    const float *nope = stage(tr, layer, ATTN_STAGE_Q_NOPE);
    float *lat = stage(tr, layer, ATTN_STAGE_Q_LATENT);
    for (int j = 0; j < D->h; j++) {
        head_block(stage(tr, layer, ATTN_STAGE_W_UK), R, D->h, k, j, wj); /* (R, k): y = x · wjᵀ */
        for (int r = 0; r < D->b; r++) {
            size_t at = (size_t)r * D->h + j;
            attn_op_project_t(nope + at * s * k, wj, lat + at * s * R, s, k, R);
        }
    }
    free(wj);
    return ATTN_OK;
}

attn_status attn_mla_project(attn_trace *tr, int layer, const attn_mla_given *in, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    attn_rope r = {tr->cfg.rope_theta, tr->cfg.rope_style, &tr->arch.rope_scaling, false};
    const attn_rope *rope = tr->cfg.rope ? &r : NULL;
    const int qw = D->h * (D->k + D->rope_dim);
    attn_status st;
    /* 1. q = x · W_Q (b, s, h·(k+D)), or the checkpoint's low-rank one; 2. each
     *    head split into its nope and pe parts */
    if (in->q) memcpy(stage(tr, layer, ATTN_STAGE_Q), in->q, (size_t)D->b * D->s * qw * sizeof(float));
    else attn_op_project(stage(tr, layer, ATTN_STAGE_X), stage(tr, layer, ATTN_STAGE_W_Q),
                         stage(tr, layer, ATTN_STAGE_Q), D->b * D->s, D->d, qw);
    if ((st = split_query(tr, layer, rope, err))) return st;
    /* 3. the cache: the latent and the RoPE key of every position */
    if ((st = latent_cache(tr, layer, in, rope, err))) return st;
    /* 4. the keys as the scores read them: rebuilt per head, or the query carried to the latent */
    return tr->cfg.mla_absorb ? absorb_query(tr, layer, err) : rebuild_keys_values(tr, layer, err);
}

/* out[b,j] (s, t) (+)= q[b,j] (s, e) · keys[b]ᵀ (e, t) · scale: keys shared by
 * every head j (c_kv, k_pe), or each head's own when per_head (k_nope). */
static attn_status add_scores(const float *q, const float *keys, bool per_head, float *out, const attn_dims *D, int e,
                              float scale, bool add, attn_error *err)
{
    const int s = D->s, t = D->t;
    float *tmp = malloc((size_t)s * t * sizeof *tmp);
    if (!tmp) return no_room(err);
    for (int r = 0; r < D->b; r++)
        for (int j = 0; j < D->h; j++) {
            size_t at = (size_t)r * D->h + j;
            attn_op_project_t(q + at * s * e, keys + (per_head ? at : (size_t)r) * t * e, tmp, s, e, t);
            float *o = out + at * s * t;
            for (size_t c = 0; c < (size_t)s * t; c++) o[c] = (add ? o[c] : 0.0f) + tmp[c] * scale;
        }
    free(tmp);
    return ATTN_OK;
}

attn_status attn_mla_scores(attn_trace *tr, int layer, float *scores, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    /* a query head has k + D features: its dot products spread like √(k + D);
     * DeepSeek with YaRN multiplies that by mscale² (arch.h's mla_score_gain,
     * model_config_rope.c) */
    double gain = tr->arch.mla_score_gain;
    float scale = !tr->cfg.scale ? 1.0f : gain > 0 ? (float)(gain / sqrt((double)(D->k + D->rope_dim)))
                                                   : 1.0f / sqrtf((float)(D->k + D->rope_dim));
    attn_status st;
    if (tr->cfg.mla_absorb)
        st = add_scores(stage(tr, layer, ATTN_STAGE_Q_LATENT), stage(tr, layer, ATTN_STAGE_C_KV), false, scores, D,
                        D->kv_rank, scale, false, err);
    else
        st = add_scores(stage(tr, layer, ATTN_STAGE_Q_NOPE), stage(tr, layer, ATTN_STAGE_K_NOPE), true, scores, D,
                        D->k, scale, false, err);
    if (st) return st;
    return add_scores(stage(tr, layer, ATTN_STAGE_Q_PE), stage(tr, layer, ATTN_STAGE_K_PE), false, scores, D,
                      D->rope_dim, scale, true, err);
}

attn_status attn_mla_up_project(attn_trace *tr, int layer, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    const int R = D->kv_rank, k = D->k, s = D->s;
    if (!tr->cfg.mla_absorb) return ATTN_OK;
    float *wj = malloc((size_t)R * k * sizeof *wj);
    if (!wj) return no_room(err);
    const float *lat = stage(tr, layer, ATTN_STAGE_CONTEXT_LATENT);
    float *ctx = stage(tr, layer, ATTN_STAGE_CONTEXT);
    for (int j = 0; j < D->h; j++) {
        head_block(stage(tr, layer, ATTN_STAGE_W_UV), R, D->h, k, j, wj); /* (R, k) */
        for (int r = 0; r < D->b; r++) {
            size_t at = (size_t)r * D->h + j;
            attn_op_project(lat + at * s * R, wj, ctx + at * s * k, s, R, k);
        }
    }
    free(wj);
    return ATTN_OK;
}

attn_status attn_mla_context(attn_trace *tr, int layer, const float *w, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    const int R = D->kv_rank, s = D->s, t = D->t;
    if (!tr->cfg.mla_absorb) {
        attn_op_weighted_sum(w, stage(tr, layer, ATTN_STAGE_V_UP), stage(tr, layer, ATTN_STAGE_CONTEXT), D->b, D->h,
                             D->s, D->t, D->k);
        return ATTN_OK;
    }
    /* absorbed: context_latent[b,j] = w[b,j] · c_kv[b] (s, R), then · W_UV[:, j] */
    const float *ckv = stage(tr, layer, ATTN_STAGE_C_KV);
    float *lat = stage(tr, layer, ATTN_STAGE_CONTEXT_LATENT);
    for (int r = 0; r < D->b; r++)
        for (int j = 0; j < D->h; j++) {
            size_t at = (size_t)r * D->h + j;
            attn_op_project(w + at * s * t, ckv + (size_t)r * t * R, lat + at * s * R, s, t, R);
        }
    return attn_mla_up_project(tr, layer, err);
}
