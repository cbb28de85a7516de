/* attention.c — one layer of masked multi-head attention, every stage traced.
 *
 * The stages of ops.h in order, each writing its own tensor of the layer;
 * the inputs (x, weights, x_past, memory) come from the caller, the config's
 * files, or the seed. */
#include "attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/derived.h"
#include "engine/attention/mla.h"
#include "engine/attention/ops.h"
#include "engine/attention/tiles.h"
#include "engine/attention/wmat.h"
#include "engine/base/clock.h"
#include "engine/base/rng.h"
#include "engine/formats/safetensors.h"

/* The data of stage id in the layer being computed. */
#define T(tr, id) stage_data(tr, layer, id)
static float *stage_data(attn_trace *tr, int layer, attn_stage_id id)
{
    const attn_tensor *t = attn_trace_slot(tr, layer, id);
    return t ? t->data : NULL;
}

void attn_embed_token(const char *token, uint64_t seed, float *out, int d)
{
    attn_fill_normal(out, (size_t)d, attn_hash64(attn_hash_str(token) ^ attn_hash64(seed)), 1.0f);
}

/* Embeds positions [from, from+count) of every row of tok into out (b, count, d). */
static void embed_rows(const attn_tokens *tok, int from, int count, uint64_t seed, int d, float *out)
{
    for (int r = 0; r < tok->rows; r++)
        for (int p = 0; p < count; p++)
            attn_embed_token(attn_tokens_at(tok, r, from + p), seed, out + ((size_t)r * count + p) * d, d);
}

/* Copies tensor `name` of a safetensors file into dst after checking its shape. */
static attn_status take_from_file(const attn_st_file *f, const char *path, const char *name,
                                  const attn_tensor *want, float *dst, attn_error *err)
{
    const attn_st_entry *e = attn_st_find(f, name);
    char shp[96];
    if (!e) return attn_fail(err, ATTN_ERR_FORMAT, "%s: has no tensor '%s'", path, name);
    bool same = e->ndim == want->ndim;
    for (int i = 0; same && i < e->ndim; i++) same = e->shape[i] == want->shape[i];
    if (!same) {
        attn_tensor got = {.ndim = e->ndim}; /* no stage info: printed as plain sizes */
        char gshp[96];
        memcpy(got.shape, e->shape, sizeof got.shape);
        return attn_fail(err, ATTN_ERR_FORMAT, "%s: '%s' has shape %s but this config needs %s", path, name,
                         attn_tensor_shape_str(&got, gshp, sizeof gshp), attn_tensor_shape_str(want, shp, sizeof shp));
    }
    attn_st_copy_f32(f, e, dst);
    return ATTN_OK;
}

static attn_status fill_inputs(attn_trace *tr, int layer, const attn_inputs *in, attn_error *err)
{
    static const attn_stage_id WEIGHTS[] = {ATTN_STAGE_W_Q, ATTN_STAGE_W_K, ATTN_STAGE_W_V, ATTN_STAGE_W_O,
                                            ATTN_STAGE_W_QN, ATTN_STAGE_W_KN, ATTN_STAGE_W_DKV, ATTN_STAGE_W_UK,
                                            ATTN_STAGE_W_UV, ATTN_STAGE_W_KR};
    static const attn_stage_id INPUTS[] = {ATTN_STAGE_X, ATTN_STAGE_X_PAST, ATTN_STAGE_MEMORY};
    const attn_config *c = &tr->cfg;
    const attn_dims *D = &tr->dims;
    const float *given_w[] = {in->w_q, in->w_k, in->w_v, in->w_o, in->q_norm, in->k_norm,
                              in->w_dkv, in->w_uk, in->w_uv, in->w_kr};
    const float *given_x[] = {in->x, in->x_past, in->memory};
    attn_st_file wf = {0}, xf = {0};
    attn_status st = ATTN_OK;

    if (c->weights_path && (st = attn_st_read(c->weights_path, &wf, err))) goto out;
    if (c->input_path && (st = attn_st_read(c->input_path, &xf, err))) goto out;

    /* a weight's seed is its contract name hashed with the config's seed; the
     * QK-norm gains (only with qk_norm) are 1 + N(0, 0.1²), gains near 1; a
     * matrix N(0, 1/in), in its rows: d, or MLA's latent width R for W_UK, W_UV */
    for (int i = 0; i < 10; i++) {
        bool gain = i == 4 || i == 5;
        const attn_tensor *t = attn_trace_slot(tr, layer, WEIGHTS[i]);
        if (!t) continue;
        const char *name = t->info->name;
        if (i < 4 && in->w_stored[i]) {
            if (attn_wmat_transposed(in->w_stored[i], t->data)) {
                st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory widening %s", name);
                goto out;
            }
        } else if (given_w[i]) memcpy(t->data, given_w[i], t->count * sizeof(float));
        else if (c->weights_path) { if ((st = take_from_file(&wf, c->weights_path, name, t, t->data, err))) goto out; }
        else attn_fill_normal(t->data, t->count, attn_hash64(attn_hash_str(name) ^ attn_hash64(c->seed)),
                              gain ? 0.1f : 1.0f / sqrtf((float)(i < 4 ? D->d : t->shape[0])));
        for (size_t j = 0; gain && !given_w[i] && !c->weights_path && j < t->count; j++) t->data[j] += 1.0f;
    }
    for (int i = 0; i < 3; i++) {
        const attn_tensor *t = attn_trace_stage(tr, layer, INPUTS[i]);
        const char *name = attn_stage_get(INPUTS[i])->name;
        if (!t) {
            if (c->input_path && attn_st_find(&xf, name)) {
                st = attn_fail(err, ATTN_ERR_CONFIG, "%s: has '%s' but this config %s", c->input_path, name,
                               i == 1 ? "has no past (set --past)" : "is not cross-attention (set --source-tokens)");
                goto out;
            }
            continue;
        }
        if (given_x[i]) memcpy(t->data, given_x[i], t->count * sizeof(float));
        else if (c->input_path) { if ((st = take_from_file(&xf, c->input_path, name, t, t->data, err))) goto out; }
        else if (i == 0) embed_rows(&tr->tokens, D->P, D->s, c->seed, D->d, t->data);
        else if (i == 1) embed_rows(&tr->tokens, 0, D->P, c->seed, D->d, t->data);
        else embed_rows(&tr->source, 0, D->t, c->seed, D->d, t->data);
    }
out:
    attn_st_free(&wf);
    attn_st_free(&xf);
    return st;
}

/* Keys and values of the cached positions, as a cache would hold them:
 * x_past · W_K split into g heads, rotated at positions 0..P-1 if RoPE. */
/* Whether layer is the first whose mask the trace keeps: where the fully
 * masked rows are read (every layer's mask is the same). */
static bool first_mask(const attn_trace *tr, int layer)
{
    if (!attn_trace_stage(tr, layer, ATTN_STAGE_MASK)) return false;
    for (int l = 0; l < layer; l++)
        if (attn_trace_stage(tr, l, ATTN_STAGE_MASK)) return false;
    return true;
}

/* The RoPE of tr: its settings and its model's scaling. */
static attn_rope rope_of(const attn_trace *tr)
{
    return (attn_rope){tr->cfg.rope_theta, tr->cfg.rope_style, &tr->arch.rope_scaling, false};
}

/* QK-norm's gains and ε: a checkpoint's (in, its arch has qk_norm), or one
 * layer's w_qn, w_kn with ε = 1e-6 (qk_norm = true). False: no QK-norm. */
#define ATTN_QK_NORM_EPS 1e-6
static bool qk_gains(attn_trace *tr, int layer, const attn_inputs *in, const float **qn, const float **kn,
                     double *eps)
{
    if (tr->arch.qk_norm) {
        *qn = in->q_norm, *kn = in->k_norm, *eps = in->qk_eps;
        return true;
    }
    *qn = T(tr, ATTN_STAGE_W_QN), *kn = T(tr, ATTN_STAGE_W_KN), *eps = ATTN_QK_NORM_EPS;
    return tr->cfg.qk_norm && *qn && *kn;
}

/* Keys and values of the cached positions, as a cache would hold them:
 * x_past · W_K (+ b_K) split into g heads, normalised per head if the model
 * does, rotated at positions 0..P-1 if RoPE. */
static attn_status past_kv(attn_trace *tr, int layer, const attn_inputs *in, float *k_past, float *v_past,
                           attn_error *err)
{
    const attn_dims *D = &tr->dims;
    size_t n = (size_t)D->b * D->P * D->g * D->k;
    if (in->k_past && in->v_past) { /* a real cache: what was stored is used as it is */
        size_t stride = in->past_stride > 0 && D->b == 1 ? (size_t)in->past_stride : (size_t)D->P;
        size_t rows = (size_t)D->P * D->k;
        for (size_t j = 0; j < (size_t)D->b * D->g; j++) {
            memcpy(k_past + j * rows, in->k_past + j * stride * D->k, rows * sizeof *k_past);
            memcpy(v_past + j * rows, in->v_past + j * stride * D->k, rows * sizeof *v_past);
        }
        return ATTN_OK;
    }
    float *tmp = malloc(n * sizeof *tmp), *tmp2 = malloc(n * sizeof *tmp2);
    attn_status st = ATTN_OK;
    if (!tmp || !tmp2) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the KV cache"); goto out; }
    const float *xp = T(tr, ATTN_STAGE_X_PAST);
    size_t rows = (size_t)D->b * D->P;
    attn_op_project(xp, T(tr, ATTN_STAGE_W_K), tmp, (int)rows, D->d, D->g * D->k);
    if (tr->arch.qkv_bias) attn_op_add_bias(tmp, in->b_k, rows, D->g * D->k);
    const float *qn, *kn;
    double eps;
    bool norm = qk_gains(tr, layer, in, &qn, &kn, &eps);
    if (norm && tr->arch.qk_norm_whole) attn_op_rmsnorm(tmp, kn, tmp, rows, D->g * D->k, eps); /* OLMo 2 */
    attn_op_split_heads(tmp, k_past, D->b, D->P, D->g, D->k);
    if (norm && !tr->arch.qk_norm_whole) {
        attn_op_rmsnorm(k_past, kn, tmp2, n / D->k, D->k, eps);
        memcpy(k_past, tmp2, n * sizeof *tmp2);
    }
    if (tr->cfg.rope && attn_arch_layer_rope(&tr->arch, layer)) {
        attn_rope r = rope_of(tr);
        if (attn_op_rope(k_past, tmp2, D->b, D->g, D->P, D->k, 0, &r)) {
            st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory for RoPE");
            goto out;
        }
        memcpy(k_past, tmp2, n * sizeof *tmp2);
    }
    attn_op_project(xp, T(tr, ATTN_STAGE_W_V), tmp, (int)rows, D->d, D->g * D->k);
    if (tr->arch.qkv_bias) attn_op_add_bias(tmp, in->b_v, rows, D->g * D->k);
    attn_op_split_heads(tmp, v_past, D->b, D->P, D->g, D->k);
out:
    free(tmp);
    free(tmp2);
    return st;
}

/* OLMo 2's QK-norm: one root mean square over each position's whole q
 * projection (h·k features, every head together) and one over its k (g·k),
 * before the split; the result split into heads as q_norm (b,h,s,k) and
 * k_norm (b,g,n,k):
 *   q_norm = split(q / √(mean over h·k of q² + ε) ⊙ g_q),  g_q (h·k)
 * Per head instead (Qwen3's), each head would get its own scale. */
static attn_status whole_qk_norm(attn_trace *tr, int layer, const float *qn, const float *kn, double eps,
                                 attn_error *err)
{
    const attn_dims *D = &tr->dims;
    size_t qs = (size_t)D->b * D->s * D->h * D->k, ks = (size_t)D->b * D->n * D->g * D->k;
    float *tmp = malloc((qs > ks ? qs : ks) * sizeof *tmp);
    if (!tmp) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's q/k norm", layer);
    attn_op_rmsnorm(T(tr, ATTN_STAGE_Q), qn, tmp, (size_t)D->b * D->s, D->h * D->k, eps);
    attn_op_split_heads(tmp, T(tr, ATTN_STAGE_Q_NORM), D->b, D->s, D->h, D->k);
    attn_op_rmsnorm(T(tr, ATTN_STAGE_K), kn, tmp, (size_t)D->b * D->n, D->g * D->k, eps);
    attn_op_split_heads(tmp, T(tr, ATTN_STAGE_K_NORM), D->b, D->n, D->g, D->k);
    free(tmp);
    return ATTN_OK;
}

/* Step 4: q_rope and k_rope from the queries qh (b,h,s,k) and new keys kh
 * (b,g,n,k), turned at positions P, P+1, ...; a layer a SmolLM3 checkpoint
 * leaves without RoPE (NoPE, no_rope_layers 0) keeps them as they are:
 * q_rope = qh, k_rope = kh. Returns -1 out of memory. */
static int rope_layer(attn_trace *tr, int layer, const float *qh, const float *kh)
{
    const attn_dims *D = &tr->dims;
    if (!attn_arch_layer_rope(&tr->arch, layer)) {
        memcpy(T(tr, ATTN_STAGE_Q_ROPE), qh, (size_t)D->b * D->h * D->s * D->k * sizeof *qh);
        memcpy(T(tr, ATTN_STAGE_K_ROPE), kh, (size_t)D->b * D->g * D->n * D->k * sizeof *kh);
        return 0;
    }
    attn_rope r = rope_of(tr);
    return attn_op_rope(qh, T(tr, ATTN_STAGE_Q_ROPE), D->b, D->h, D->s, D->k, D->P, &r) ||
                   attn_op_rope(kh, T(tr, ATTN_STAGE_K_ROPE), D->b, D->g, D->n, D->k, D->P, &r)
               ? -1
               : 0;
}

/* Steps 1–6: the layer's queries, and its keys and values as every query
 * head reads them. *q_out receives the queries ready for the scores (b,h,s,k). */
static attn_status queries_keys_values(attn_trace *tr, int layer, const attn_inputs *in, const float **q_out,
                                       attn_error *err)
{
    const attn_config *c = &tr->cfg;
    const attn_dims *D = &tr->dims;
    const int b = D->b, s = D->s, t = D->t, n = D->n, d = D->d, h = D->h, g = D->g, k = D->k, P = D->P;
    attn_status st = ATTN_OK;
    float *k_past = NULL, *v_past = NULL;

    /* 1. project: q = x·W_Q (b,s,h·k); k, v = src·W_K, src·W_V (b,n,g·k), src = x or
     *    memory; each + its bias in a Qwen2 checkpoint */
    const float *src = D->cross ? T(tr, ATTN_STAGE_MEMORY) : T(tr, ATTN_STAGE_X);
    attn_op_project(T(tr, ATTN_STAGE_X), T(tr, ATTN_STAGE_W_Q), T(tr, ATTN_STAGE_Q), b * s, d, h * k);
    attn_op_project(src, T(tr, ATTN_STAGE_W_K), T(tr, ATTN_STAGE_K), b * n, d, g * k);
    attn_op_project(src, T(tr, ATTN_STAGE_W_V), T(tr, ATTN_STAGE_V), b * n, d, g * k);
    if (tr->arch.qkv_bias) {
        attn_op_add_bias(T(tr, ATTN_STAGE_Q), in->b_q, (size_t)b * s, h * k);
        attn_op_add_bias(T(tr, ATTN_STAGE_K), in->b_k, (size_t)b * n, g * k);
        attn_op_add_bias(T(tr, ATTN_STAGE_V), in->b_v, (size_t)b * n, g * k);
    }

    /* 2. split heads: (b,s,h·k) -> (b,h,s,k); (b,n,g·k) -> (b,g,n,k) */
    attn_op_split_heads(T(tr, ATTN_STAGE_Q), T(tr, ATTN_STAGE_Q_HEADS), b, s, h, k);
    attn_op_split_heads(T(tr, ATTN_STAGE_K), T(tr, ATTN_STAGE_K_HEADS), b, n, g, k);
    attn_op_split_heads(T(tr, ATTN_STAGE_V), T(tr, ATTN_STAGE_V_HEADS), b, n, g, k);

    /* 3. QK-norm (Qwen3, Gemma 3): RMSNorm over each head's k features, q and k,
     *    with gains g_q, g_k (k): q_norm = q_heads / √(mean(q_heads²) + ε) ⊙ g_q;
     *    OLMo 2's over each position's whole projection instead (whole_qk_norm) */
    float *qh = T(tr, ATTN_STAGE_Q_HEADS), *kh = T(tr, ATTN_STAGE_K_HEADS), *vh = T(tr, ATTN_STAGE_V_HEADS);
    const float *qn, *kn;
    double eps;
    if (qk_gains(tr, layer, in, &qn, &kn, &eps)) {
        if (tr->arch.qk_norm_whole) {
            if ((st = whole_qk_norm(tr, layer, qn, kn, eps, err))) return st;
        } else {
            attn_op_rmsnorm(qh, qn, T(tr, ATTN_STAGE_Q_NORM), (size_t)b * h * s, k, eps);
            attn_op_rmsnorm(kh, kn, T(tr, ATTN_STAGE_K_NORM), (size_t)b * g * n, k, eps);
        }
        qh = T(tr, ATTN_STAGE_Q_NORM);
        kh = T(tr, ATTN_STAGE_K_NORM);
    }

    /* 4. RoPE on queries and new keys, at absolute positions P, P+1, ... */
    if (c->rope) {
        if (rope_layer(tr, layer, qh, kh)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for RoPE");
        qh = T(tr, ATTN_STAGE_Q_ROPE);
        kh = T(tr, ATTN_STAGE_K_ROPE);
    }

    /* 5. KV cache: cached positions first, then the new ones: (b,g,t,k) */
    if (P > 0) {
        size_t np = (size_t)b * g * P * k;
        k_past = malloc(np * sizeof *k_past);
        v_past = malloc(np * sizeof *v_past);
        if (!k_past || !v_past) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the KV cache"); goto out; }
        if ((st = past_kv(tr, layer, in, k_past, v_past, err))) goto out;
        attn_op_concat_cache(k_past, kh, T(tr, ATTN_STAGE_K_CACHE), b, g, P, n, k);
        attn_op_concat_cache(v_past, vh, T(tr, ATTN_STAGE_V_CACHE), b, g, P, n, k);
        kh = T(tr, ATTN_STAGE_K_CACHE);
        vh = T(tr, ATTN_STAGE_V_CACHE);
    }

    /* 6. repeat_kv: (b,g,t,k) -> (b,h,t,k) */
    attn_op_repeat_kv(kh, T(tr, ATTN_STAGE_K_EXPANDED), b, g, h, t, k);
    attn_op_repeat_kv(vh, T(tr, ATTN_STAGE_V_EXPANDED), b, g, h, t, k);
    *q_out = qh;
out:
    free(k_past);
    free(v_past);
    return st;
}

/* Step 7½, between the scores and the mask: what a model adds to the scaled
 * scores sc (b,h,s,t) before the mask, into pre (the masked scores' buffer):
 *   ALiBi:        bias[h,i,j] = −m_h·|i − j|, positions counted from the
 *                 sequence's start (the cached past included); pre = sc + bias
 *   soft-capping: capped_scores = C·tanh(pre / C), in (−C, C); pre = capped
 * Returns what the mask is to be added to: sc itself when neither is set. */
static const float *before_mask(attn_trace *tr, int layer, const float *sc, float *pre, attn_error *err,
                                attn_status *st)
{
    const attn_config *c = &tr->cfg;
    const attn_dims *D = &tr->dims;
    size_t bhst = (size_t)D->b * D->h * D->s * D->t;
    const float *cur = sc;
    *st = ATTN_OK;
    if (c->alibi) {
        float *bias = T(tr, ATTN_STAGE_BIAS);
        double *m = malloc((size_t)D->h * sizeof *m);
        if (!bias || !m) {
            free(m);
            *st = attn_fail(err, ATTN_ERR_NOMEM, "layer %d: no room for the ALiBi bias", layer);
            return NULL;
        }
        attn_alibi_slopes(D->h, m);
        attn_op_alibi_bias(bias, m, D->b, D->h, D->s, D->t, D->P);
        free(m);
        attn_op_add(sc, bias, pre, bhst);
        cur = pre;
    }
    if (c->softcap > 0) {
        float *capped = T(tr, ATTN_STAGE_CAPPED_SCORES);
        if (!capped) {
            *st = attn_fail(err, ATTN_ERR_CONFIG, "layer %d keeps no capped scores", layer);
            return NULL;
        }
        attn_op_softcap(cur, capped, bhst, (float)c->softcap);
        cur = capped;
    }
    return cur;
}

/* Steps 7–10, one cell per (query, key): scores, mask, masked scores,
 * weights and dropout. A layer that does not keep them (a model's long
 * prompt: attn_config.qk_keep) computes them in in->qk_scratch: scores and
 * masked scores in one (b,h,s,t) buffer, the weights in a second, dropout
 * back into the first, the mask after them. *w_out receives what the values
 * are weighted with. */
static attn_status query_key(attn_trace *tr, int layer, const attn_inputs *in, const float *qh, const float **w_out,
                             attn_error *err)
{
    const attn_config *c = &tr->cfg;
    const attn_dims *D = &tr->dims;
    const int b = D->b, s = D->s, t = D->t, h = D->h, k = D->k;
    size_t bhst = (size_t)b * h * s * t;
    float *qk_a = in->qk_scratch, *qk_b = qk_a ? qk_a + bhst : NULL, *qk_mask = qk_a ? qk_b + bhst : NULL;
    float *sc = T(tr, ATTN_STAGE_SCORES) ? T(tr, ATTN_STAGE_SCORES) : qk_a;
    float *mask = T(tr, ATTN_STAGE_MASK) ? T(tr, ATTN_STAGE_MASK) : qk_mask;
    float *msc = T(tr, ATTN_STAGE_MASKED_SCORES) ? T(tr, ATTN_STAGE_MASKED_SCORES) : qk_a;
    float *wts = T(tr, ATTN_STAGE_WEIGHTS) ? T(tr, ATTN_STAGE_WEIGHTS) : qk_b;
    if (!sc || !mask || !msc || !wts)
        return attn_fail(err, ATTN_ERR_CONFIG, "layer %d keeps no attention weights and has no room to compute them",
                         layer);

    if ((c->alibi || c->softcap > 0 || !isinf(c->sink_logit)) && qk_a)
        return attn_fail(err, ATTN_ERR_CONFIG, "layer %d: alibi, softcap and sink_logit need the trace's own "
                         "query-key stages", layer);

    /* 7. scores = q·kᵀ/√k (b,h,s,t); without the 1/√k (scale = false) their spread
     *    grows like √k and softmax saturates towards one-hot rows (mode mla: mla.h).
     *    Gemma scales by query_pre_attn_scalar^(−½) instead (arch.query_scale) */
    attn_status st;
    if (D->mode == ATTN_MODE_MLA) { if ((st = attn_mla_scores(tr, layer, sc, err))) return st; }
    else attn_op_scores(qh, T(tr, ATTN_STAGE_K_EXPANDED), sc, b, h, s, t, k, !c->scale ? 1.0f
                        : tr->arch.query_scale > 0 ? (float)tr->arch.query_scale /* Gemma's */
                                                   : 1.0f / sqrtf((float)k));

    /* 8. mask (b,1,s,t): causal future and <pad> keys get the fill value */
    const attn_tokens *keys = D->cross ? &tr->source : &tr->tokens;
    unsigned char *key_pad = malloc((size_t)b * t);
    if (!key_pad) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int bi = 0; bi < b; bi++)
        for (int j = 0; j < t; j++) key_pad[(size_t)bi * t + j] = c->pad_mask && attn_tokens_is_pad(keys, bi, j);
    attn_op_build_mask(mask, c, D, key_pad);
    free(key_pad);
    if (first_mask(tr, layer) && (st = attn_trace_find_masked_rows(tr, err))) return st;
    const float *pre = before_mask(tr, layer, sc, msc, err, &st);
    if (!pre) return st;

    /* 9. masked_scores = scores + mask; weights = softmax along t. A row whose
     *    keys the mask hides all (-inf) gets zeros, or NaN with softmax_guard =
     *    false. The guard asks the mask, not the scores: a row whose scores are
     *    NaN (NaN weights upstream) has a NaN max too, and hiding it as zeros
     *    would make a broken head look like one that attends to nothing. It
     *    stays NaN, and attn_trace_find_nonfinite names where it began.
     *    With a sink logit X the softmax has one more cell per row, X, dropped
     *    after it: sink_weight (b,h,s) = e^X / Z, and the row sums to 1 − that.
     *    gpt-oss learns one X_h per head (in->sinks): head h's rows take X_h.
     *    A trace with room for derived stages (derived.h) does not write the
     *    masked scores: their sums go into the weights' room, the softmax runs
     *    there in place, and the stage is the same sum once someone reads it. */
    attn_tensor *ms = attn_trace_slot(tr, layer, ATTN_STAGE_MASKED_SCORES);
    if (ms && ms->data == msc && pre != msc && wts != qk_b) { /* both stages kept, and no ALiBi sum in msc */
        if ((st = attn_derived_masked(tr, ms, pre, mask, err))) return st;
        msc = wts;
    }
    attn_op_apply_mask(pre, mask, msc, b, h, s, t);
    if (tr->arch.sinks) attn_op_softmax_sinks(msc, mask, wts, T(tr, ATTN_STAGE_SINK_WEIGHT), b, h, s, t,
                                              c->softmax_guard, in->sinks);
    else if (isinf(c->sink_logit)) attn_op_softmax(msc, mask, wts, b, h, s, t, c->softmax_guard);
    else attn_op_softmax_sink(msc, mask, wts, T(tr, ATTN_STAGE_SINK_WEIGHT), b, h, s, t, c->softmax_guard,
                              c->sink_logit);

    /* 10. dropout on the weights (training only) */
    *w_out = wts;
    if (c->train && c->dropout > 0.0f) {
        float *dropped = T(tr, ATTN_STAGE_WEIGHTS_DROPOUT) ? T(tr, ATTN_STAGE_WEIGHTS_DROPOUT) : qk_a;
        attn_op_dropout(wts, dropped, bhst, c->dropout, attn_dropout_key(c, "attention"));
        *w_out = dropped;
    }
    return ATTN_OK;
}

uint64_t attn_dropout_key(const attn_config *c, const char *where)
{
    char name[32];
    snprintf(name, sizeof name, "dropout_%s", where);
    return attn_hash64(attn_hash_str(name) ^ attn_hash64(c->seed));
}

void attn_progress_init(attn_progress *p)
{
    atomic_init(&p->cancel, 0);
    atomic_init(&p->layer, 0);
    atomic_init(&p->stage, 0);
    atomic_init(&p->phase, ATTN_PHASE_NONE);
    atomic_init(&p->layers, 0);
    atomic_init(&p->layers_done, 0);
    atomic_init(&p->bytes_done, 0);
    atomic_init(&p->bytes_total, 0);
    atomic_init(&p->phase_ms, (long long)attn_clock_ms());
}

double attn_progress_at_stage(int layer, int stage, int layers)
{
    int part = stage >= ATTN_STAGE_CONTEXT ? 2 : stage >= ATTN_STAGE_SCORES ? 1 : 0;
    if (stage == ATTN_STAGE_RESID_IN) part = 0;
    return layers > 0 ? (layer + part / 3.0) / layers : 0;
}

double attn_progress_fraction(const attn_progress *p, double *left_ms)
{
    double f = 0;
    int phase = atomic_load(&p->phase);
    if (phase == ATTN_PHASE_READING) {
        double total = (double)atomic_load(&p->bytes_total);
        if (total > 0) f = (double)atomic_load(&p->bytes_done) / total;
    } else if (phase == ATTN_PHASE_TRACING) {
        int layers = atomic_load(&p->layers), layer = atomic_load(&p->layer), done = atomic_load(&p->layers_done);
        if (layers > 0) f = done > layer ? (double)done / layers : attn_progress_at_stage(layer, atomic_load(&p->stage), layers);
    }
    double in_phase = attn_clock_ms() - (double)atomic_load(&p->phase_ms);
    if (left_ms) *left_ms = f > 0.02 && f < 1 && in_phase > 500 ? in_phase * (1 - f) / f : -1;
    return f;
}

bool attn_progress_phase(attn_progress *p, attn_phase phase)
{
    if (!p) return false;
    if (atomic_exchange(&p->phase, (int)phase) != (int)phase) atomic_store(&p->phase_ms, (long long)attn_clock_ms());
    return atomic_load(&p->cancel) != 0;
}

bool attn_progress_at(attn_progress *p, int layer, attn_stage_id stage)
{
    if (!p) return false;
    atomic_store(&p->layer, layer);
    atomic_store(&p->stage, (int)stage);
    return atomic_load(&p->cancel) != 0;
}

static attn_status cancelled(attn_error *err)
{
    return attn_fail(err, ATTN_ERR_CANCELLED, "cancelled");
}

static attn_status forward(attn_trace *tr, int layer, const attn_inputs *in, attn_error *err)
{
    const attn_config *c = &tr->cfg;
    const attn_dims *D = &tr->dims;
    const int b = D->b, s = D->s, t = D->t, d = D->d, h = D->h, k = D->k;
    const float *qh = NULL, *w = NULL;
    attn_status st;
    /* a watcher may stop the run before each of the three parts */
    bool mla = D->mode == ATTN_MODE_MLA; /* its own steps 1–6 and 11 (mla.h) */
    if (attn_progress_at(in->progress, layer, ATTN_STAGE_Q)) return cancelled(err);
    attn_mla_given given = {in->ckv_past, in->kpe_past, in->latent_stride, in->q_mla, in->kv_norm, in->kv_eps};
    if ((st = mla ? attn_mla_project(tr, layer, &given, err) : queries_keys_values(tr, layer, in, &qh, err))) return st;
    if (attn_progress_at(in->progress, layer, ATTN_STAGE_SCORES)) return cancelled(err);
    if ((st = query_key(tr, layer, in, qh, &w, err))) return st;
    if (attn_progress_at(in->progress, layer, ATTN_STAGE_CONTEXT)) return cancelled(err);

    /* 11. context = weights·v (b,h,s,k), or with tiles from q, k, v tile by tile
     *     (tiles.h: the weights above are then only for the pictures), or mode
     *     mla's (mla.h); merge heads (b,s,h·k); out = merged·W_O (b,s,d) */
    if (c->tiles.q) { /* mode mla absorbed: the latent context, tile by tile over c_kv, then W_UV */
        if ((st = attn_tiles_layer(tr, layer, qh, attn_dropout_key(c, "attention"), tr->arch.sinks ? in->sinks : NULL,
                                   err)))
            return st;
        if (mla && (st = attn_mla_up_project(tr, layer, err))) return st;
    } else if (mla) {
        if ((st = attn_mla_context(tr, layer, w, err))) return st;
    } else {
        attn_op_weighted_sum(w, T(tr, ATTN_STAGE_V_EXPANDED), T(tr, ATTN_STAGE_CONTEXT), b, h, s, t, k);
    }
    attn_op_merge_heads(T(tr, ATTN_STAGE_CONTEXT), T(tr, ATTN_STAGE_MERGED), b, h, s, k);
    attn_op_project(T(tr, ATTN_STAGE_MERGED), T(tr, ATTN_STAGE_W_O), T(tr, ATTN_STAGE_OUT), b * s, h * k, d);
    if (tr->arch.o_bias) attn_op_add_bias(T(tr, ATTN_STAGE_OUT), in->b_o, (size_t)b * s, d);
    if (c->train && c->dropout > 0.0f)
        attn_op_dropout(T(tr, ATTN_STAGE_OUT), T(tr, ATTN_STAGE_OUT), (size_t)b * s * d, c->dropout,
                        attn_dropout_key(c, "output"));
    return ATTN_OK;
}

attn_status attn_attention_run(attn_trace *tr, int layer, const attn_inputs *in, attn_error *err)
{
    attn_inputs none = {0};
    if (!in) in = &none;
    if ((tr->arch.qkv_bias && (!in->b_q || !in->b_k || !in->b_v)) || (tr->arch.o_bias && !in->b_o) ||
        (tr->arch.sinks && !in->sinks) || (tr->arch.qk_norm && (!in->q_norm || !in->k_norm)))
        return attn_fail(err, ATTN_ERR_CONFIG, "layer %d: the architecture's biases, sinks or q/k norms were not "
                         "given", layer);
    attn_status st = fill_inputs(tr, layer, in, err);
    return st ? st : forward(tr, layer, in, err);
}
