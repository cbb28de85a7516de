/* prefill.c — a prompt through the model over the KV cache, nothing traced.
 *
 * What a deployed model does before it writes its first token: n prompt
 * tokens, at positions P .. P+n−1 after the P the cache holds, go through
 * every layer together, so each projection is one matrix-matrix product
 * (sgemm on the weights as stored, wmat.h) instead of n matrix-vector ones.
 * Per layer (n rows, width d, h query heads and g kv heads of k, MLP f):
 *   x         = RMSNorm(resid) ⊙ g_attn              (n, d)    → cache x
 *   q, kn, vn = x · W_Qᵀ, x · W_Kᵀ, x · W_Vᵀ          (n, h·k), (n, g·k) ×2
 *   (+ bias, RMSNorm per head or OLMo 2's over the whole projection, RoPE at
 *   positions P + i unless a SmolLM3 layer has none: as the traced pass;
 *   OLMo 2's norms after each sublayer instead of before it: model_run.c)
 *   kn, vn split into heads                          (g, n, k) → cache rows P..
 *   ctx       = softmax(q·Kᵀ·scale + mask) · V        (n, h·k)  over t = P + n keys
 *   resid     = resid + ctx · W_Oᵀ
 *   resid     = resid + (SiLU(x2 · W_gateᵀ) ⊙ (x2 · W_upᵀ)) · W_downᵀ,
 *               x2 = RMSNorm(resid) ⊙ g_mlp
 * and only the last row goes through the final norm and the LM head. Gemma
 * (gemma.h) changes the numbers, not the steps: its scale and soft-cap on the
 * scores, each layer's window and RoPE base, its post-norms and GeGLU. A
 * longer prompt goes through in chunks of CHUNK positions, each over the
 * cache the ones before it filled: the same numbers, memory for one chunk.
 *
 * Attention takes a block of query positions and one kv head j at a time:
 * the block's rows of the `per` query heads sharing kv head j are one
 * (per·b, k) matrix, so its scores against the t cached keys of head j are
 * one product, and its context one more. The block's mask is built once
 * (attn_op_build_mask, every mask setting) and shared by the g kv heads.
 * Under the causal mask with a fill of −∞, keys after the block's last
 * position are left out: their weights are exactly 0 (e^−∞), so the sums are
 * the same, and the work is about half of the whole square. */
#include "engine/run/kv_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"
#include "engine/attention/tiles.h"
#include "engine/attention/wmat.h"
#include "engine/base/budget.h"
#include "engine/model/gemma.h"

enum {
    BLOCK_ROWS = 256, /* query rows (heads × positions) in one attention product */
    CHUNK = 512       /* prompt positions through the layers at once: bounds the activations */
};

/* The activations of one chunk of n positions, over t keys. */
typedef struct {
    float *resid, *x, *out, *norm2;   /* (n, d) each; out is also the MLP's output */
    float *q, *kn, *vn;               /* (n, h·k), (n, g·k), (n, g·k): the projections, position-major */
    float *qh, *kh, *tmp;             /* (h, n, k), (g, n, k), (h, n, k): head-major, and scratch for norm and RoPE */
    float *ctx;                       /* (n, h·k): every head's context, merged */
    float *gate, *up;                 /* (n, f) each; act replaces gate */
    float *qb, *sc, *cb, *mask;       /* a block: (per·b, k), (per·b, t), (per·b, k), (b, t) */
    unsigned char *key_pad;           /* (t), all 0: one row has no pads */
    float *block;
} prefill_bufs;

static int block_positions(const attn_model_config *c)
{
    int per = c->heads / c->kv_heads, b = BLOCK_ROWS / per;
    return b < 1 ? 1 : b;
}

enum { N_BUFS = 17 };

/* The floats of each buffer of prefill_bufs for a chunk of n rows over t keys. */
static void bufs_sizes(const attn_model_config *c, int n, int t, size_t sizes[N_BUFS])
{
    size_t d = (size_t)c->d, hk = (size_t)c->heads * c->head_dim, gk = (size_t)c->kv_heads * c->head_dim;
    size_t per = (size_t)(c->heads / c->kv_heads), b = (size_t)block_positions(c), k = (size_t)c->head_dim;
    size_t r = (size_t)n, f = (size_t)c->ffn;
    const size_t each[N_BUFS] = {r * d,  r * d,  r * d,  r * d,       r * hk,       r * gk,      r * gk, r * hk, r * gk,
                                 r * hk, r * hk, r * f,  r * f,       per * b * k,  per * b * t, per * b * k, b * t};
    memcpy(sizes, each, sizeof each);
}

static bool bufs_alloc(prefill_bufs *p, const attn_model_config *c, int n, int t, bool tiled)
{
    size_t sizes[N_BUFS], total = 0;
    float **at[N_BUFS] = {&p->resid, &p->x,   &p->out,  &p->norm2, &p->q,  &p->kn, &p->vn, &p->qh,  &p->kh,
                          &p->tmp,   &p->ctx, &p->gate, &p->up,    &p->qb, &p->sc, &p->cb, &p->mask};
    bufs_sizes(c, n, t, sizes);
    if (tiled) sizes[13] = sizes[14] = sizes[15] = sizes[16] = 0; /* no block: tiles.c holds its own tiles */
    for (int i = 0; i < N_BUFS; i++) total += sizes[i];
    memset(p, 0, sizeof *p);
    if (!(p->block = malloc(total * sizeof(float))) || !(p->key_pad = calloc((size_t)t, 1))) {
        free(p->block);
        return false;
    }
    float *f = p->block;
    for (int i = 0; i < N_BUFS; f += sizes[i], i++) *at[i] = f;
    return true;
}

/* Bytes a prefill of n positions after the cache's takes: one chunk's
 * activations, and the cache's new arrays when it must grow (the old ones
 * are mapped already). */
static double prefill_bytes(const attn_kv_cache *c, const attn_model_config *mc, int n, bool tiled)
{
    size_t sizes[N_BUFS], floats = 0;
    int t = c->n + n, cap = c->cap ? c->cap : 16;
    bufs_sizes(mc, n < CHUNK ? n : CHUNK, t, sizes);
    if (tiled) sizes[13] = sizes[14] = sizes[15] = sizes[16] = 0;
    for (int i = 0; i < N_BUFS; i++) floats += sizes[i];
    while (cap < t) cap *= 2;
    /* a windowed cache's local layers: about W rows and a chunk's, however long the prompt */
    int local = 0;
    for (int l = 0; l < c->layers; l++) local += attn_kv_windowed(c, l);
    double local_rows = fmin(cap, 2.0 * (c->window + (n < CHUNK ? n : CHUNK)));
    double cache = ((t > c->cap ? (double)(c->layers - local) * cap : 0) + local * local_rows) *
                   (2.0 * c->g * c->k + c->d);
    return ((double)floats + cache) * sizeof(float) + t;
}

static void bufs_free(prefill_bufs *p)
{
    free(p->block);
    free(p->key_pad);
}

/* q, kn, vn (position-major) → qh (h, n, k) and kh (g, n, k), each with its
 * bias, per-head RMSNorm and RoPE at positions P.., the steps and order of
 * attention.c; kh and the values then join the cache at rows P .. P+n−1.
 * run is the layer's settings, scaling its RoPE scaling (gemma.h). */
static int queries_keys(attn_kv_cache *c, const attn_model *m, const attn_config *run,
                        const attn_rope_scaling *scaling, const attn_model_layer *W, prefill_bufs *p, int l, int n)
{
    const attn_model_config *mc = &m->cfg;
    int h = mc->heads, g = mc->kv_heads, k = mc->head_dim, P = c->n;
    if (mc->arch.qkv_bias) {
        attn_op_add_bias(p->q, W->b_q, (size_t)n, h * k);
        attn_op_add_bias(p->kn, W->b_k, (size_t)n, g * k);
        attn_op_add_bias(p->vn, W->b_v, (size_t)n, g * k);
    }
    if (mc->arch.qk_norm_whole) { /* OLMo 2: each position's whole projection, before the split */
        attn_op_rmsnorm(p->q, W->q_norm, p->q, (size_t)n, h * k, mc->eps);
        attn_op_rmsnorm(p->kn, W->k_norm, p->kn, (size_t)n, g * k, mc->eps);
    }
    attn_op_split_heads(p->q, p->qh, 1, n, h, k);
    attn_op_split_heads(p->kn, p->kh, 1, n, g, k);
    /* the norm and the rotation in place: each reads a row's (or a pair's) values before writing them */
    if (mc->arch.qk_norm && !mc->arch.qk_norm_whole) {
        attn_op_rmsnorm(p->qh, W->q_norm, p->qh, (size_t)h * n, k, mc->eps);
        attn_op_rmsnorm(p->kh, W->k_norm, p->kh, (size_t)g * n, k, mc->eps);
    }
    if (run->rope && attn_arch_layer_rope(&mc->arch, l)) { /* not in a SmolLM3 NoPE layer */
        attn_rope rope = {run->rope_theta, run->rope_style, scaling, false};
        if (attn_op_rope(p->qh, p->qh, 1, h, n, k, P, &rope) || attn_op_rope(p->kh, p->kh, 1, g, n, k, P, &rope))
            return -1;
    }
    attn_op_split_heads(p->vn, p->tmp, 1, n, g, k); /* values: (g, n, k) */
    int f = attn_kv_first(c, l), room = attn_kv_room(c, l); /* a windowed local layer's row 0 is position f */
    for (int j = 0; j < g; j++) {
        size_t to = ((size_t)j * room + P - f) * k, from = (size_t)j * n * k;
        memcpy(c->keys[l] + to, p->kh + from, (size_t)n * k * sizeof(float));
        memcpy(c->values[l] + to, p->tmp + from, (size_t)n * k * sizeof(float));
    }
    return 0;
}

/* Query positions [i0, i1) (b of them) against kv head j's first t rows of
 * cached keys (a windowed local layer's rows start at its oldest position): its per query heads' rows gathered into qb (per·b, k), row p·b + i
 * for head j·per + p, then
 *   sc  = qb · K_jᵀ · scale         (per·b, t)
 *   sc  = C·tanh(sc / C)            with a soft-cap C (Gemma)
 *   sc  = softmax(sc + mask)        row by row, the mask (b, t) shared by the heads
 *   cb  = sc · V_j                  (per·b, k)
 * scattered into ctx (n, h·k). */
static void attend_block(const attn_kv_cache *c, const attn_model *m, const attn_config *run, prefill_bufs *p,
                         int l, int j, int i0, int i1, int t, int n)
{
    int h = m->cfg.heads, k = m->cfg.head_dim, per = h / m->cfg.kv_heads, b = i1 - i0;
    int room = attn_kv_room(c, l);
    const float *keys = c->keys[l] + (size_t)j * room * k, *values = c->values[l] + (size_t)j * room * k;
    for (int q = 0; q < per; q++)
        memcpy(p->qb + (size_t)q * b * k, p->qh + ((size_t)(j * per + q) * n + i0) * k, (size_t)b * k * sizeof(float));
    float scale = !run->scale ? 1.0f : m->cfg.arch.query_scale > 0 ? (float)m->cfg.arch.query_scale
                                                                    : 1.0f / sqrtf((float)k);
    attn_op_scores(p->qb, keys, p->sc, 1, 1, per * b, t, k, scale);
    if (run->softcap > 0) attn_op_softcap(p->sc, p->sc, (size_t)per * b * t, (float)run->softcap);
    attn_op_apply_mask(p->sc, p->mask, p->sc, 1, per, b, t);
    attn_op_softmax(p->sc, p->mask, p->sc, 1, per, b, t, run->softmax_guard);
    attn_op_weighted_sum(p->sc, values, p->cb, 1, 1, per * b, t, k);
    for (int q = 0; q < per; q++)
        for (int i = 0; i < b; i++)
            memcpy(p->ctx + (size_t)(i0 + i) * h * k + (size_t)(j * per + q) * k, p->cb + ((size_t)q * b + i) * k,
                   (size_t)k * sizeof(float));
}

/* With tiles: every query position of the chunk against the cache by the
 * online softmax (tiles.h), a BQ × BK tile of scores at a time, kv heads read
 * where the cache holds them; the context (h, n, k) in tmp, then merged. */
static int attend_tiled(const attn_kv_cache *c, const attn_model *m, const attn_config *run, prefill_bufs *p, int l,
                        int n)
{
    int h = m->cfg.heads, k = m->cfg.head_dim, f = attn_kv_first(c, l);
    attn_dims dims = {.b = 1, .h = h, .g = m->cfg.kv_heads, .s = n, .t = c->n + n - f, .n = n, .k = k, .P = c->n - f};
    attn_tiled a = {.c = run, .d = &dims, .q = p->qh, .keys = c->keys[l], .values = c->values[l],
                    .kv_heads = m->cfg.kv_heads, .kv_stride = (size_t)attn_kv_room(c, l) * k, .ctx = p->tmp};
    if (attn_tiled_attention(&a, NULL)) return -1;
    attn_op_merge_heads(p->tmp, p->ctx, 1, h, n, k);
    return 0;
}

/* Every query position against the cache, block by block. A windowed local
 * layer holds positions f.. only: its key j is position f + j, and the mask
 * is built for positions counted from f (the window and the causal mask
 * depend only on i − j, and keep_first is 0 in such a cache). */
static int attend(const attn_kv_cache *c, const attn_model *m, const attn_config *run, prefill_bufs *p, int l,
                  int n)
{
    if (run->tiles.q) return attend_tiled(c, m, run, p, l, n);
    int P = c->n, T = P + n, bp = block_positions(&m->cfg), f = attn_kv_first(c, l);
    /* the keys no query of the block may read are exactly 0 only under the causal mask with −∞ */
    bool cut = run->causal == ATTN_CAUSAL_ON && isinf(run->mask_value) && run->mask_value < 0;
    for (int i0 = 0; i0 < n; i0 += bp) {
        int i1 = i0 + bp < n ? i0 + bp : n, t = (cut ? P + i1 : T) - f;
        attn_dims dims = {.b = 1, .s = i1 - i0, .t = t, .n = i1 - i0, .P = P + i0 - f};
        attn_op_build_mask(p->mask, run, &dims, p->key_pad);
        for (int j = 0; j < m->cfg.kv_heads; j++) attend_block(c, m, run, p, l, j, i0, i1, t, n);
    }
    return 0;
}

/* act = SiLU(gate) ⊙ up into gate (n, f), or Gemma's GELU_tanh for SiLU,
 * the rows shared between the threads: one e^x per element. */
static void glu_rows(float *gate, const float *up, int n, int f, bool gelu)
{
    #pragma omp parallel for schedule(static) if ((size_t)n * f > 65536)
    for (int i = 0; i < n; i++) {
        float *gi = gate + (size_t)i * f;
        if (gelu) attn_op_geglu(gi, up + (size_t)i * f, gi, (size_t)f);
        else attn_op_swiglu(gi, up + (size_t)i * f, gi, (size_t)f);
    }
}

/* Layer l on the n rows of p->resid; its input x joins the cache. */
static attn_status layer(attn_kv_cache *c, const attn_model *m, const attn_config *base, prefill_bufs *p, int l,
                         int n, attn_error *err)
{
    const attn_model_config *mc = &m->cfg;
    const attn_model_layer *W = &m->layer[l];
    size_t rows = (size_t)n, nd = rows * mc->d;
    const attn_rope_scaling *scaling;
    attn_config layer_run = attn_gemma_layer_run(m, l, base, &scaling), *run = &layer_run;
    bool gemma = mc->arch.gemma;
    bool post = mc->arch.post_norms; /* OLMo 2: no pre-norms; each sublayer's output normalised */
    if (post) memcpy(p->x, p->resid, nd * sizeof *p->x);
    else attn_op_rmsnorm(p->resid, W->attn_norm, p->x, rows, mc->d, mc->eps);
    if (c->keeps_x) memcpy(c->x[l] + (size_t)(c->n - attn_kv_first(c, l)) * mc->d, p->x, nd * sizeof *p->x);
    if (attn_wmat_product(&W->w_q, p->x, n, p->q) || attn_wmat_product(&W->w_k, p->x, n, p->kn) ||
        attn_wmat_product(&W->w_v, p->x, n, p->vn) || queries_keys(c, m, run, scaling, W, p, l, n) ||
        attend(c, m, run, p, l, n) || attn_wmat_product(&W->w_o, p->ctx, n, p->out))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's attention", l);
    if (post || gemma) attn_op_rmsnorm(p->out, W->post_attn_norm, p->out, rows, mc->d, mc->eps);
    attn_op_add(p->resid, p->out, p->resid, nd);                      /* resid_mid */
    if (post) memcpy(p->norm2, p->resid, nd * sizeof *p->norm2);
    else attn_op_rmsnorm(p->resid, W->mlp_norm, p->norm2, rows, mc->d, mc->eps);
    if (attn_wmat_product(&W->w_gate, p->norm2, n, p->gate) || attn_wmat_product(&W->w_up, p->norm2, n, p->up))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's MLP", l);
    glu_rows(p->gate, p->up, n, mc->ffn, gemma);
    if (attn_wmat_product(&W->w_down, p->gate, n, p->out))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's MLP", l);
    if (post || gemma) attn_op_rmsnorm(p->out, W->post_ff_norm, p->out, rows, mc->d, mc->eps);
    attn_op_add(p->resid, p->out, p->resid, nd);                      /* resid_out */
    return ATTN_OK;
}

/* One chunk: ids[0 .. n) at positions c->n.., appended to the cache. */
static attn_status chunk(attn_kv_cache *c, const attn_model *m, const attn_config *run, prefill_bufs *p,
                         const int *ids, int n, attn_error *err)
{
    attn_status st = attn_kv_reserve(c, c->n + n, err); /* a windowed cache lets go of what this chunk cannot read */
    if (st) return st;
    for (int i = 0; i < n; i++) attn_model_embed_row(m, ids[i], p->resid + (size_t)i * m->cfg.d);
    for (int l = 0; !st && l < m->cfg.layers; l++) st = layer(c, m, run, p, l, n, err);
    if (!st) c->n += n;
    return st;
}

attn_status attn_kv_prefill(attn_kv_cache *c, const attn_model *m, const attn_config *run, const int *ids, int n,
                            float *logits, attn_error *err)
{
    const attn_model_config *mc = &m->cfg;
    if (c->latent || m->cfg.arch.sinks) return attn_kv_latent_pass(c, m, run, ids, n, logits, err);
    if (n < 1) return attn_fail(err, ATTN_ERR_CONFIG, "no tokens to run");
    if (c->n + n > mc->max_pos)
        return attn_fail(err, ATTN_ERR_CONFIG, "text: %d tokens, more than %s's %d positions", c->n + n, m->name,
                         mc->max_pos);
    if (run->train && run->dropout > 0.0f)
        return attn_fail(err, ATTN_ERR_CONFIG, "dropout in training draws from the traced pass's cells: trace the "
                         "prompt instead");
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= mc->vocab)
            return attn_fail(err, ATTN_ERR_CONFIG, "token id %d is outside %s's vocabulary", ids[i], m->name);
    attn_budget budget = attn_config_budget(run);
    double need = prefill_bytes(c, mc, n, run->tiles.q > 0);
    if (need > budget.bytes) {
        char size[32], bound[200];
        return attn_fail(err, ATTN_ERR_CONFIG, "this prefill of %d tokens would need about %s (the KV cache and one "
                         "chunk's activations): more than %s; use a shorter text", n,
                         attn_budget_size(need, size, sizeof size), attn_budget_text(&budget, bound, sizeof bound));
    }
    int first = c->n, rows = n < CHUNK ? n : CHUNK;
    /* the whole prompt's room at once; a windowed cache's chunk by chunk */
    attn_status st = c->window ? ATTN_OK : attn_kv_reserve(c, c->n + n, err);
    if (st) return st;
    prefill_bufs p;
    if (!bufs_alloc(&p, mc, rows, c->n + n, run->tiles.q > 0))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a prefill of %d tokens", rows);
    for (int i0 = 0; !st && i0 < n; i0 += rows) st = chunk(c, m, run, &p, ids + i0, n - i0 < rows ? n - i0 : rows, err);
    if (!st) {
        /* logits = RMSNorm(last row) ⊙ g · W_lmᵀ: the next token's, nobody reads the others */
        int last = (n - 1) % rows;
        attn_op_rmsnorm(p.resid + (size_t)last * mc->d, m->norm, p.norm2, 1, mc->d, mc->eps);
        attn_wmat_product_row(&m->lm_head, 1, p.norm2, logits);
        if (mc->gemma.final_softcap > 0) /* Gemma 2: logits = C·tanh(logits / C) */
            attn_op_softcap(logits, logits, (size_t)mc->vocab, (float)mc->gemma.final_softcap);
    } else {
        c->n = first; /* a failure appends nothing */
    }
    bufs_free(&p);
    return st;
}
