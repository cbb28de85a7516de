/* kv_cache.c — the KV cache and the untraced decoding step over it. */
#include "kv_cache.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/attention.h"
#include "engine/attention/ops.h"
#include "engine/attention/tiles.h"
#include "engine/model/gemma.h"
#include "engine/model/model_run.h"

attn_status attn_kv_init(attn_kv_cache *c, const attn_model *m, attn_error *err)
{
    memset(c, 0, sizeof *c);
    c->layers = m->cfg.layers;
    c->g = m->cfg.kv_heads;
    c->k = m->cfg.head_dim;
    c->d = m->cfg.d;
    if (m->cfg.arch.mla) { /* one "head" of R + D: the latent and the RoPE key */
        c->latent = true;
        c->g = 1;
        c->k = m->cfg.mla.kv_rank + m->cfg.mla.rope_dim;
    }
    if (!(c->x = calloc((size_t)c->layers, sizeof *c->x)) ||
        !(c->keys = calloc((size_t)c->layers, sizeof *c->keys)) ||
        !(c->values = calloc((size_t)c->layers, sizeof *c->values))) {
        attn_kv_free(c);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the KV cache");
    }
    return ATTN_OK;
}

attn_status attn_kv_init_windowed(attn_kv_cache *c, const attn_model *m, const attn_config *run, attn_error *err)
{
    attn_status st = attn_kv_init(c, m, err);
    const attn_arch *a = &m->cfg.arch;
    int W = a->local_window > 0 ? a->local_window : run->sliding_window;
    /* keep_first keeps keys before the window visible; dropout in training draws over the traced pass's cells;
     * a model that decodes through the traced layer (gpt-oss's learned sinks: attn_kv_latent_pass) reads its
     * past as every row from position 0 at one stride, so its cache keeps every position */
    if (st || c->latent || m->cfg.arch.sinks || W <= 0 || run->keep_first > 0 || (run->train && run->dropout > 0.0f))
        return st;
    for (int l = 0; l < c->layers && l < ATTN_ARCH_MAX_LAYERS; l++) c->local[l] = a->local_window > 0 ? a->local[l] : 1;
    c->window = W;
    return ATTN_OK;
}

void attn_kv_free(attn_kv_cache *c)
{
    if (!c) return;
    for (int l = 0; l < c->layers; l++) {
        if (c->x) free(c->x[l]);
        if (c->keys) free(c->keys[l]);
        if (c->values) free(c->values[l]);
    }
    free(c->x);
    free(c->keys);
    free(c->values);
    memset(c, 0, sizeof *c);
}

/* Moves `rows` rows of each head of a (g, from_room, k) array, from row
 * `drop` on, into to, laid out with room for to_room rows per head. */
static void move_heads(const attn_kv_cache *c, const float *from, int from_room, int drop, int rows, float *to,
                       int to_room)
{
    for (int j = 0; from && j < c->g; j++)
        memcpy(to + (size_t)j * to_room * c->k, from + ((size_t)j * from_room + drop) * c->k,
               (size_t)rows * c->k * sizeof *to);
}

/* Gives the full layers room for cap positions and the local ones of a
 * windowed cache room for local_cap rows from position first on (the rows
 * before it let go). Every new array is allocated before any old one is
 * let go, so a failure leaves the cache as it was. */
static attn_status regrow(attn_kv_cache *c, int cap, int local_cap, int first, attn_error *err)
{
    float **fresh = calloc((size_t)3 * c->layers, sizeof *fresh);
    bool ok = fresh != NULL;
    for (int l = 0; ok && l < c->layers; l++) {
        bool local = attn_kv_windowed(c, l);
        int room = local ? local_cap : cap;
        if (room == attn_kv_room(c, l) && (!local || first == c->first)) continue; /* as it is */
        size_t kv = (size_t)c->g * room * c->k;
        ok = (fresh[3 * l] = malloc(kv * sizeof(float))) &&
             (fresh[3 * l + 1] = malloc((c->latent ? 1 : kv) * sizeof(float))) &&
             (fresh[3 * l + 2] = malloc((size_t)room * c->d * sizeof(float)));
    }
    if (!ok) {
        for (int i = 0; fresh && i < 3 * c->layers; i++) free(fresh[i]);
        free(fresh);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a KV cache of %d positions", cap);
    }
    for (int l = 0; l < c->layers; l++) {
        if (!fresh[3 * l]) continue;
        bool local = attn_kv_windowed(c, l);
        int room = local ? local_cap : cap, old = attn_kv_room(c, l);
        int drop = local ? first - c->first : 0, rows = c->n - attn_kv_first(c, l) - drop;
        move_heads(c, c->keys[l], old, drop, rows, fresh[3 * l], room);
        if (!c->latent) move_heads(c, c->values[l], old, drop, rows, fresh[3 * l + 1], room);
        if (c->x[l]) memcpy(fresh[3 * l + 2], c->x[l] + (size_t)drop * c->d, (size_t)rows * c->d * sizeof(float));
        free(c->keys[l]);
        free(c->values[l]);
        free(c->x[l]);
        c->keys[l] = fresh[3 * l];
        c->values[l] = fresh[3 * l + 1];
        c->x[l] = fresh[3 * l + 2];
    }
    free(fresh);
    c->cap = cap;
    c->local_cap = local_cap;
    c->first = first;
    return ATTN_OK;
}

/* Full layers: room doubles, so appending a position copies nothing held.
 * Local layers of a windowed cache: when positions first .. n−1 no longer
 * fit, the rows no query from c->n on reads (below c->n − W + 1) are let go
 * and room is made for the rest; a local layer then has room for about
 * W + W/4 rows, so that it lets rows go once every W/4 tokens or so. */
attn_status attn_kv_reserve(attn_kv_cache *c, int n, attn_error *err)
{
    int cap = c->cap, local_cap = c->local_cap, first = c->first;
    if (n > cap) {
        cap = cap ? cap : 16;
        while (cap < n) cap *= 2;
    }
    if (c->window && n - first > local_cap) {
        if (c->n - c->window + 1 > first) first = c->n - c->window + 1;
        int rows = n - first, slack = c->window / 4 > 16 ? c->window / 4 : 16, limit = c->window + slack;
        if (rows > local_cap) {
            local_cap = local_cap ? local_cap : 16;
            while (local_cap < rows) local_cap *= 2;
            if (local_cap > limit && rows <= limit) local_cap = limit;
        }
    }
    if (cap == c->cap && local_cap == c->local_cap && first == c->first) return ATTN_OK;
    return regrow(c, cap, local_cap, first, err);
}

/* A latent cache's append: each new position's c_kv and k_pe rows, which a
 * trace holds for every key position (b, t, ·), the cached ones first. */
static attn_status append_latent(attn_kv_cache *c, const attn_trace *tr, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    const int R = D->kv_rank, E = D->rope_dim;
    if (D->b != 1 || D->P != c->n || D->mode != ATTN_MODE_MLA || R + E != c->k || D->d != c->d ||
        tr->n_layers != c->layers)
        return attn_fail(err, ATTN_ERR_CONFIG, "the latent cache holds %d positions of one row; this trace is not "
                         "the next positions of that row", c->n);
    attn_status st = attn_kv_reserve(c, c->n + D->s, err);
    if (st) return st;
    for (int l = 0; l < c->layers; l++) {
        const attn_tensor *x = attn_trace_stage(tr, l, ATTN_STAGE_X), *ckv = attn_trace_stage(tr, l, ATTN_STAGE_C_KV),
                          *kpe = attn_trace_stage(tr, l, ATTN_STAGE_K_PE);
        if (!x || !ckv || !kpe) return attn_fail(err, ATTN_ERR_CONFIG, "layer %d of the trace keeps no latent", l);
        memcpy(c->x[l] + (size_t)c->n * c->d, x->data, (size_t)D->s * c->d * sizeof(float));
        for (int i = 0; i < D->s; i++) {
            float *row = c->keys[l] + (size_t)(c->n + i) * c->k;
            memcpy(row, ckv->data + (size_t)(D->P + i) * R, (size_t)R * sizeof *row);
            memcpy(row + R, kpe->data + (size_t)(D->P + i) * E, (size_t)E * sizeof *row);
        }
    }
    c->n += D->s;
    return ATTN_OK;
}

attn_status attn_kv_append(attn_kv_cache *c, const attn_trace *tr, attn_error *err)
{
    const attn_dims *D = &tr->dims;
    if (c->latent) return append_latent(c, tr, err);
    if (D->b != 1 || D->P != c->n || D->g != c->g || D->k != c->k || D->d != c->d || tr->n_layers != c->layers)
        return attn_fail(err, ATTN_ERR_CONFIG, "the KV cache holds %d positions of one row; this trace is not the "
                         "next positions of that row", c->n);
    attn_status st = attn_kv_reserve(c, c->n + D->s, err);
    if (st) return st;
    /* a trace with a past holds the whole cache (g, t, k), the new positions
     * last; one without holds only its own (g, s, k) */
    int rows = D->P ? D->t : D->s;
    for (int l = 0; l < c->layers; l++) {
        const attn_tensor *x = attn_trace_stage(tr, l, ATTN_STAGE_X);
        const float *k, *v;
        attn_model_trace_kv(tr, l, &k, &v);
        if (!x || !k || !v) return attn_fail(err, ATTN_ERR_CONFIG, "layer %d of the trace keeps no keys or values", l);
        int f = attn_kv_first(c, l), room = attn_kv_room(c, l);
        memcpy(c->x[l] + (size_t)(c->n - f) * c->d, x->data, (size_t)D->s * c->d * sizeof(float));
        for (int j = 0; j < c->g; j++) {
            size_t to = ((size_t)j * room + c->n - f) * c->k, from = ((size_t)j * rows + D->P) * c->k;
            memcpy(c->keys[l] + to, k + from, (size_t)D->s * c->k * sizeof(float));
            memcpy(c->values[l] + to, v + from, (size_t)D->s * c->k * sizeof(float));
        }
    }
    c->n += D->s;
    return ATTN_OK;
}

/* One row's activations; t is the number of keys (positions so far + 1). */
typedef struct {
    float *resid, *x;                      /* (d) each */
    float *qkv, *q, *kn, *vn;              /* (h·k + 2·g·k): q (h·k), kn (g·k), vn (g·k) in it */
    float *scores, *masked, *weights, *dropped; /* (h, t) each: (1, h, 1, t) */
    float *mask, *mask_local;              /* (t) each: a global layer's, a local (Gemma) one's */
    unsigned char *key_pad;                /* (t), all 0: one row has no pads */
    float *ctx, *out, *mid, *norm2, *mlp;  /* (h·k) (d) (d) (d) (d) */
    float *gate, *up, *act;                /* (2f): gate (f), up (f) in it; (f) */
    float *block;
    attn_team_barrier bar;                 /* where the step's threads meet (team.h) */
} row_bufs;

static bool row_alloc(row_bufs *r, const attn_model *m, int t)
{
    const attn_model_config *c = &m->cfg;
    size_t hk = (size_t)c->heads * c->head_dim, gk = (size_t)c->kv_heads * c->head_dim, ht = (size_t)c->heads * t;
    size_t total = 6 * (size_t)c->d + 2 * hk + 2 * gk + 4 * ht + 2 * (size_t)t + 3 * (size_t)c->ffn;
    memset(r, 0, sizeof *r);
    float *p = r->block = calloc(total, sizeof *p);
    if (!p || !(r->key_pad = calloc((size_t)t, 1))) {
        free(r->block);
        return false;
    }
    float **d_sized[] = {&r->resid, &r->x, &r->out, &r->mid, &r->norm2, &r->mlp};
    for (int i = 0; i < 6; i++, p += c->d) *d_sized[i] = p;
    r->qkv = r->q = p, p += hk;
    r->kn = p, p += gk;
    r->vn = p, p += gk;
    r->ctx = p, p += hk;
    r->scores = p, p += ht;
    r->masked = p, p += ht;
    r->weights = p, p += ht;
    r->dropped = p, p += ht;
    r->mask = p, p += t;
    r->mask_local = p, p += t;
    r->gate = p, p += c->ffn;
    r->up = p, p += c->ffn;
    r->act = p;
    return true;
}

static void row_free(row_bufs *r)
{
    free(r->block);
    free(r->key_pad);
}

/* Steps 3–5 of attention.c for kv head j and its query heads, on one
 * thread: q's and the new key's bias, norm and rotation at position pos
 * (heads j·per .. j·per + per − 1 of q, head j of kn), then the key and
 * value into the cache. Every op is the one a whole-row call makes, on a
 * slice of heads: the same numbers. run is the layer's settings (its window
 * and RoPE base), scaling its RoPE scaling (gemma.h). */
static int prepare_group(attn_kv_cache *kc, const attn_model *m, const attn_config *run,
                         const attn_rope_scaling *scaling, const attn_model_layer *W, row_bufs *r, int l, int pos, int j)
{
    const attn_model_config *c = &m->cfg;
    int k = c->head_dim, per = c->heads / c->kv_heads;
    float *q = r->q + (size_t)j * per * k, *kn = r->kn + (size_t)j * k, *vn = r->vn + (size_t)j * k;
    if (c->arch.qkv_bias) {
        attn_op_add_bias(q, W->b_q + (size_t)j * per * k, 1, per * k);
        attn_op_add_bias(kn, W->b_k + (size_t)j * k, 1, k);
        attn_op_add_bias(vn, W->b_v + (size_t)j * k, 1, k);
    }
    /* one position: (1, 1, h·k) split into heads is (1, h, 1, k), the same floats
     * (OLMo 2's norm over the whole projection: layer_team, before the heads part);
     * the norm and the rotation in place */
    if (c->arch.qk_norm && !c->arch.qk_norm_whole) {
        attn_op_rmsnorm(q, W->q_norm, q, (size_t)per, k, c->eps);
        attn_op_rmsnorm(kn, W->k_norm, kn, 1, k, c->eps);
    }
    if (run->rope && attn_arch_layer_rope(&c->arch, l)) { /* not in a SmolLM3 NoPE layer */
        attn_rope rope = {run->rope_theta, run->rope_style, scaling, false};
        if (attn_op_rope(q, q, 1, per, 1, k, pos, &rope) || attn_op_rope(kn, kn, 1, 1, 1, k, pos, &rope)) return -1;
    }
    /* 5. the key and value join the cache: a windowed local layer's row of position pos is pos − f,
     * f its oldest kept position, in a room of its own */
    int f = attn_kv_first(kc, l), room = attn_kv_room(kc, l);
    memcpy(kc->keys[l] + ((size_t)j * room + pos - f) * k, kn, (size_t)k * sizeof *kn);
    memcpy(kc->values[l] + ((size_t)j * room + pos - f) * k, vn, (size_t)k * sizeof *vn);
    return 0;
}

/* Steps 6–11 for query head i against its kv head i / per's cached keys,
 * positions f .. pos (tl of them; f > 0 in a windowed local layer): scores,
 * soft-cap (Gemma), mask, softmax, and (without dropout) its context row (k). */
static int attend_head(const attn_kv_cache *kc, const attn_model *m, const attn_config *run, row_bufs *r, int l,
                       int pos, int i)
{
    const attn_model_config *c = &m->cfg;
    int k = c->head_dim, j = i / (c->heads / c->kv_heads), t = pos + 1;
    int f = attn_kv_first(kc, l), room = attn_kv_room(kc, l), tl = t - f;
    const float *keys = kc->keys[l] + (size_t)j * room * k, *values = kc->values[l] + (size_t)j * room * k;
    bool drop = run->train && run->dropout > 0.0f;
    size_t at = (size_t)i * t;
    /* with tiles (and no dropout, whose cells are drawn over the whole (h, t)
     * row of weights): ctx[i] by the online softmax, key tile by key tile */
    if (run->tiles.q && !drop) {
        attn_dims one = {.b = 1, .h = 1, .s = 1, .t = tl, .n = 1, .k = k, .P = tl - 1};
        attn_tiled a = {.c = run, .d = &one, .q = r->q + (size_t)i * k, .keys = keys, .values = values,
                        .kv_heads = 1, .kv_stride = (size_t)room * k, .ctx = r->ctx + (size_t)i * k};
        return attn_tiled_attention(&a, NULL) ? -1 : 0;
    }
    /* scores[i] = q_i · K_jᵀ · scale (tl), capped C·tanh(·/C) (Gemma), masked, softmaxed: weights[i] */
    const float *mask = attn_kv_windowed(kc, l) || (c->arch.gemma && c->arch.local[l]) ? r->mask_local : r->mask;
    attn_op_scores(r->q + (size_t)i * k, keys, r->scores + at, 1, 1, 1, tl, k,
                   !run->scale ? 1.0f : c->arch.query_scale > 0 ? (float)c->arch.query_scale : 1.0f / sqrtf((float)k));
    if (run->softcap > 0) attn_op_softcap(r->scores + at, r->scores + at, (size_t)tl, (float)run->softcap);
    attn_op_apply_mask(r->scores + at, mask, r->masked + at, 1, 1, 1, tl);
    attn_op_softmax(r->masked + at, mask, r->weights + at, 1, 1, 1, tl, run->softmax_guard);
    /* ctx[i] = weights_i · V_j (k); merged (h·k) is the same floats */
    if (!drop) attn_op_weighted_sum(r->weights + at, values, r->ctx + (size_t)i * k, 1, 1, 1, tl, k);
    return 0;
}

/* The attention of one layer by the team: kv heads split between the threads
 * for their queries' and keys' norms and rotations and the cache, then query
 * heads split for the scores and contexts (so that a model with fewer kv
 * heads than threads, Gemma-3-270M's one, still keeps every thread busy),
 * then, with dropout, the dropped weights' context. Ends at a barrier; *bad
 * set when RoPE or a tile ran out of memory. */
static void attend_team(attn_kv_cache *kc, const attn_model *m, const attn_config *base, const attn_model_layer *W,
                        row_bufs *r, int l, int pos, int *bad)
{
    const attn_model_config *c = &m->cfg;
    int h = c->heads, k = c->head_dim, per = c->heads / c->kv_heads, t = pos + 1, j0, j1, i0, i1;
    const attn_rope_scaling *scaling;
    attn_config layer_run = attn_gemma_layer_run(m, l, base, &scaling), *run = &layer_run;
    attn_wmat_team_share(c->kv_heads, &j0, &j1);
    for (int j = j0; j < j1; j++)
        if (prepare_group(kc, m, run, scaling, W, r, l, pos, j)) {
            #pragma omp atomic write
            *bad = 1;
        }
    attn_team_wait(&r->bar);
    attn_wmat_team_share(h, &i0, &i1);
    for (int i = i0; i < i1; i++)
        if (attend_head(kc, m, run, r, l, pos, i)) {
            #pragma omp atomic write
            *bad = 1;
        }
    attn_team_wait(&r->bar);
    if (!(run->train && run->dropout > 0.0f)) return;
    if (attn_team_first())
        attn_op_dropout(r->weights, r->dropped, (size_t)h * t, run->dropout, attn_dropout_key(run, "attention"));
    attn_team_wait(&r->bar);
    attn_wmat_team_share(h, &i0, &i1);
    for (int i = i0; i < i1; i++)
        attn_op_weighted_sum(r->dropped + (size_t)i * t, kc->values[l] + (size_t)(i / per) * attn_kv_room(kc, l) * k,
                             r->ctx + (size_t)i * k, 1, 1, 1, t, k);
    attn_team_wait(&r->bar);
}

/* act = SiLU(x · W_gateᵀ) ⊙ (x · W_upᵀ), or Gemma's GELU_tanh for SiLU,
 * each thread its share of the f features (gate, up and act alike), then a
 * barrier. */
static void mlp_team(const attn_model_layer *W, row_bufs *r, int f, bool gelu)
{
    int i0, i1;
    attn_wmat_team_share(f, &i0, &i1);
    attn_wmat_product_part(&W->w_gate, 1, r->norm2, r->gate, i0, i1);
    attn_wmat_product_part(&W->w_up, 1, r->norm2, r->up, i0, i1);
    if (gelu) attn_op_geglu(r->gate + i0, r->up + i0, r->act + i0, (size_t)(i1 - i0));
    else attn_op_swiglu(r->gate + i0, r->up + i0, r->act + i0, (size_t)(i1 - i0));
    attn_team_wait(&r->bar);
}

/* resid → x = RMSNorm(resid) ⊙ g_attn of layer l (OLMo 2: resid itself), kept in the cache's x. */
static void layer_input(attn_kv_cache *c, const attn_model *m, row_bufs *r, int l, int pos)
{
    if (m->cfg.arch.post_norms) memcpy(r->x, r->resid, (size_t)m->cfg.d * sizeof *r->x);
    else attn_op_rmsnorm(r->resid, m->layer[l].attn_norm, r->x, 1, m->cfg.d, m->cfg.eps);
    memcpy(c->x[l] + (size_t)(pos - attn_kv_first(c, l)) * m->cfg.d, r->x, (size_t)m->cfg.d * sizeof *r->x);
}

/* Layer l of a decoding step, by every thread of the team (or one): eight
 * barriers, no parallel region of its own. On return r->resid is its output
 * and r->x the next layer's input. Gemma (gemma.h) normalises the
 * attention's and the MLP's outputs before each joins the residual. */
static void layer_team(attn_kv_cache *c, const attn_model *m, const attn_config *run, int l, row_bufs *r, int pos,
                       int *bad)
{
    const attn_model_config *mc = &m->cfg;
    const attn_model_layer *W = &m->layer[l];
    size_t d = (size_t)mc->d;
    /* W_Q, W_K, W_V stacked are one ((h + 2g)·k, d) matrix: one product
     * gives q, kn and vn side by side */
    const attn_wmat qkv[] = {W->w_q, W->w_k, W->w_v};
    attn_wmat_product_row_team(qkv, 3, r->x, r->qkv, &r->bar);
    if (mc->arch.qk_norm_whole) { /* OLMo 2: one RMS over all of q's h·k features, one over k's g·k */
        if (attn_team_first()) {
            attn_op_rmsnorm(r->q, W->q_norm, r->q, 1, mc->heads * mc->head_dim, mc->eps);
            attn_op_rmsnorm(r->kn, W->k_norm, r->kn, 1, mc->kv_heads * mc->head_dim, mc->eps);
        }
        attn_team_wait(&r->bar);
    }
    attend_team(c, m, run, W, r, l, pos, bad);
    attn_wmat_product_row_team(&W->w_o, 1, r->ctx, r->out, &r->bar);
    bool post = mc->arch.post_norms; /* OLMo 2: each sublayer's output normalised, no pre-norm */
    if (attn_team_first()) {
        if (run->train && run->dropout > 0.0f)
            attn_op_dropout(r->out, r->out, d, run->dropout, attn_dropout_key(run, "output"));
        bool after = post || mc->arch.gemma; /* OLMo 2's and Gemma's norm after the sublayer */
        if (after) attn_op_rmsnorm(r->out, W->post_attn_norm, r->out, 1, (int)d, mc->eps);
        attn_op_add(r->resid, r->out, r->mid, d);
        if (post) memcpy(r->norm2, r->mid, d * sizeof *r->norm2);
        else attn_op_rmsnorm(r->mid, W->mlp_norm, r->norm2, 1, (int)d, mc->eps);
    }
    attn_team_wait(&r->bar);
    mlp_team(W, r, mc->ffn, mc->arch.gemma);
    attn_wmat_product_row_team(&W->w_down, 1, r->act, r->mlp, &r->bar);
    if (attn_team_first()) {
        if (post || mc->arch.gemma) attn_op_rmsnorm(r->mlp, W->post_ff_norm, r->mlp, 1, (int)d, mc->eps);
        attn_op_add(r->mid, r->mlp, r->resid, d);
        if (l + 1 < mc->layers) layer_input(c, m, r, l + 1, pos);
        else attn_op_rmsnorm(r->resid, m->norm, r->norm2, 1, (int)d, mc->eps); /* the final norm */
    }
    attn_team_wait(&r->bar);
}

attn_status attn_kv_step(attn_kv_cache *c, const attn_model *m, const attn_config *run, int id, float *logits,
                         attn_error *err)
{
    const attn_model_config *mc = &m->cfg;
    if (id < 0 || id >= mc->vocab)
        return attn_fail(err, ATTN_ERR_CONFIG, "token id %d is outside %s's vocabulary", id, m->name);
    if (c->latent || mc->arch.sinks) return attn_kv_latent_pass(c, m, run, &id, 1, logits, err); /* gpt-oss too */
    attn_status st = attn_kv_reserve(c, c->n + 1, err);
    if (st) return st;
    int pos = c->n, t = pos + 1, bad = 0;
    row_bufs r;
    if (!row_alloc(&r, m, t)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a decoding step");
    attn_dims one = {.b = 1, .s = 1, .t = t, .n = 1, .P = t - 1};
    attn_op_build_mask(r.mask, run, &one, r.key_pad); /* the same in every layer, or every global one */
    if (mc->arch.gemma || c->window) { /* and every local one's: the window */
        attn_config local = *run;
        attn_dims rows = one; /* a windowed cache's local layers: positions first .. pos, t − first keys */
        if (mc->arch.gemma) local.sliding_window = mc->arch.local_window;
        if (c->window) rows.t = t - c->first, rows.P = rows.t - 1;
        attn_op_build_mask(r.mask_local, &local, &rows, r.key_pad);
    }
    attn_model_embed_row(m, id, r.resid);
    layer_input(c, m, &r, 0, pos);
    /* one parallel region for the whole step: every layer's products and
     * heads are shared out inside it (about 200 regions a token before) */
    #pragma omp parallel if ((size_t)mc->d * mc->ffn > 65536)
    {
        for (int l = 0; l < mc->layers; l++) layer_team(c, m, run, l, &r, pos, &bad);
        attn_wmat_product_row_team(&m->lm_head, 1, r.norm2, logits, &r.bar); /* logits = final_norm · W_lmᵀ */
    }
    if (mc->gemma.final_softcap > 0) /* Gemma 2: logits = C·tanh(logits / C) */
        attn_op_softcap(logits, logits, (size_t)mc->vocab, (float)mc->gemma.final_softcap);
    c->n = t;
    row_free(&r);
    return bad ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory for RoPE or a tile") : ATTN_OK;
}
