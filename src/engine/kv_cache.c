/* kv_cache.c — the KV cache and the untraced decoding step over it. */
#include "kv_cache.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "model_run.h"
#include "ops.h"

attn_status attn_kv_init(attn_kv_cache *c, const attn_model *m, attn_error *err)
{
    memset(c, 0, sizeof *c);
    c->layers = m->cfg.layers;
    c->g = m->cfg.kv_heads;
    c->k = m->cfg.head_dim;
    c->d = m->cfg.d;
    if (!(c->x = calloc((size_t)c->layers, sizeof *c->x)) ||
        !(c->keys = calloc((size_t)c->layers, sizeof *c->keys)) ||
        !(c->values = calloc((size_t)c->layers, sizeof *c->values))) {
        attn_kv_free(c);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the KV cache");
    }
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

/* Moves the first n positions of each head of a (g, cap, k) array into to,
 * laid out with room for cap positions per head. */
static void move_heads(const attn_kv_cache *c, const float *from, float *to, int cap)
{
    for (int j = 0; from && j < c->g; j++)
        memcpy(to + (size_t)j * cap * c->k, from + (size_t)j * c->cap * c->k, (size_t)c->n * c->k * sizeof *to);
}

/* Every new array is allocated before any old one is let go, so a failure
 * leaves the cache as it was. */
attn_status attn_kv_reserve(attn_kv_cache *c, int n, attn_error *err)
{
    if (n <= c->cap) return ATTN_OK;
    int cap = c->cap ? c->cap : 16;
    while (cap < n) cap *= 2;
    size_t kv = (size_t)c->g * cap * c->k;
    float **fresh = calloc((size_t)3 * c->layers, sizeof *fresh);
    bool ok = fresh != NULL;
    for (int i = 0; ok && i < 3 * c->layers; i++)
        ok = (fresh[i] = malloc((i % 3 == 2 ? (size_t)cap * c->d : kv) * sizeof(float))) != NULL;
    if (!ok) {
        for (int i = 0; fresh && i < 3 * c->layers; i++) free(fresh[i]);
        free(fresh);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a KV cache of %d positions", cap);
    }
    for (int l = 0; l < c->layers; l++) {
        move_heads(c, c->keys[l], fresh[3 * l], cap);
        move_heads(c, c->values[l], fresh[3 * l + 1], cap);
        if (c->x[l]) memcpy(fresh[3 * l + 2], c->x[l], (size_t)c->n * c->d * sizeof(float));
        free(c->keys[l]);
        free(c->values[l]);
        free(c->x[l]);
        c->keys[l] = fresh[3 * l];
        c->values[l] = fresh[3 * l + 1];
        c->x[l] = fresh[3 * l + 2];
    }
    free(fresh);
    c->cap = cap;
    return ATTN_OK;
}

attn_status attn_kv_append(attn_kv_cache *c, const attn_trace *tr, attn_error *err)
{
    const attn_dims *D = &tr->dims;
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
        memcpy(c->x[l] + (size_t)c->n * c->d, x->data, (size_t)D->s * c->d * sizeof(float));
        for (int j = 0; j < c->g; j++) {
            size_t to = ((size_t)j * c->cap + c->n) * c->k, from = ((size_t)j * rows + D->P) * c->k;
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
    float *qkv, *q, *kn, *vn, *tmp;        /* (h·k + 2·g·k): q (h·k), kn (g·k), vn (g·k) in it; (h·k) */
    float *scores, *masked, *weights, *dropped; /* (h, t) each: (1, h, 1, t) */
    float *mask;                           /* (t) */
    unsigned char *key_pad;                /* (t), all 0: one row has no pads */
    float *ctx, *out, *mid, *norm2, *mlp;  /* (h·k) (d) (d) (d) (d) */
    float *gate, *up, *act;                /* (2f): gate (f), up (f) in it; (f) */
    float *block;
} row_bufs;

static bool row_alloc(row_bufs *r, const attn_model *m, int t)
{
    const attn_model_config *c = &m->cfg;
    size_t hk = (size_t)c->heads * c->head_dim, gk = (size_t)c->kv_heads * c->head_dim, ht = (size_t)c->heads * t;
    size_t total = 6 * (size_t)c->d + 3 * hk + 2 * gk + 4 * ht + t + 3 * (size_t)c->ffn;
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
    r->tmp = p, p += hk;
    r->ctx = p, p += hk;
    r->scores = p, p += ht;
    r->masked = p, p += ht;
    r->weights = p, p += ht;
    r->dropped = p, p += ht;
    r->mask = p, p += t;
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

/* Steps 1–4 of attention.c on the one row: q (h·k) and the new key and value
 * (g·k), projected, + bias, normalised per head, rotated at position pos. */
static int project_row(const attn_model *m, const attn_config *run, const attn_model_layer *W, row_bufs *r, int pos)
{
    const attn_model_config *c = &m->cfg;
    int h = c->heads, g = c->kv_heads, k = c->head_dim;
    /* W_Q, W_K, W_V stacked are one ((h + 2g)·k, d) matrix: one product
     * gives q, kn and vn side by side */
    const attn_wmat qkv[] = {W->w_q, W->w_k, W->w_v};
    attn_wmat_product_row(qkv, 3, r->x, r->qkv);
    if (c->arch.qkv_bias) {
        attn_op_add_bias(r->q, W->b_q, 1, h * k);
        attn_op_add_bias(r->kn, W->b_k, 1, g * k);
        attn_op_add_bias(r->vn, W->b_v, 1, g * k);
    }
    /* one position: (1, 1, h·k) split into heads is (1, h, 1, k), the same floats */
    if (c->arch.qk_norm) {
        attn_op_rmsnorm(r->q, W->q_norm, r->tmp, (size_t)h, k, c->eps);
        memcpy(r->q, r->tmp, (size_t)h * k * sizeof *r->q);
        attn_op_rmsnorm(r->kn, W->k_norm, r->tmp, (size_t)g, k, c->eps);
        memcpy(r->kn, r->tmp, (size_t)g * k * sizeof *r->kn);
    }
    if (run->rope) {
        attn_rope rope = {run->rope_theta, run->rope_style, &c->arch.rope_scaling};
        if (attn_op_rope(r->q, r->tmp, 1, h, 1, k, pos, &rope)) return -1;
        memcpy(r->q, r->tmp, (size_t)h * k * sizeof *r->q);
        if (attn_op_rope(r->kn, r->tmp, 1, g, 1, k, pos, &rope)) return -1;
        memcpy(r->kn, r->tmp, (size_t)g * k * sizeof *r->kn);
    }
    return 0;
}

/* Steps 7–11: the query row against the t cached keys of layer l, each query
 * head reading its kv head's rows where they are (no k_expanded), into
 * r->out (d). */
static void attend_row(const attn_kv_cache *kc, const attn_model *m, const attn_config *run,
                       const attn_model_layer *W, row_bufs *r, int l, int t)
{
    const attn_model_config *c = &m->cfg;
    int h = c->heads, k = c->head_dim, per = c->heads / c->kv_heads;
    #pragma omp parallel for if ((size_t)h * t * k > 65536)
    for (int j = 0; j < h; j++) /* scores[j] = q_j · K_{j/per}ᵀ · scale  (t) */
        attn_op_scores(r->q + (size_t)j * k, kc->keys[l] + (size_t)(j / per) * kc->cap * k, r->scores + (size_t)j * t,
                       1, 1, 1, t, k, run->scale ? 1.0f / sqrtf((float)k) : 1.0f);
    attn_dims one = {.b = 1, .s = 1, .t = t, .n = 1, .P = t - 1};
    attn_op_build_mask(r->mask, run, &one, r->key_pad);
    attn_op_apply_mask(r->scores, r->mask, r->masked, 1, h, 1, t);
    attn_op_softmax(r->masked, r->mask, r->weights, 1, h, 1, t, run->softmax_guard);
    const float *w = r->weights;
    if (run->train && run->dropout > 0.0f) {
        attn_op_dropout(r->weights, r->dropped, (size_t)h * t, run->dropout,
                        attn_dropout_key(run, "attention"));
        w = r->dropped;
    }
    #pragma omp parallel for if ((size_t)h * t * k > 65536)
    for (int j = 0; j < h; j++) /* ctx[j] = w_j · V_{j/per}  (k); merged (h·k) is the same floats */
        attn_op_weighted_sum(w + (size_t)j * t, kc->values[l] + (size_t)(j / per) * kc->cap * k, r->ctx + (size_t)j * k,
                             1, 1, 1, t, k);
    attn_wmat_product_row(&W->w_o, 1, r->ctx, r->out);
    if (run->train && run->dropout > 0.0f)
        attn_op_dropout(r->out, r->out, (size_t)c->d, run->dropout,
                        attn_dropout_key(run, "output"));
}

attn_status attn_kv_step(attn_kv_cache *c, const attn_model *m, const attn_config *run, int id, float *logits,
                         attn_error *err)
{
    const attn_model_config *mc = &m->cfg;
    if (id < 0 || id >= mc->vocab)
        return attn_fail(err, ATTN_ERR_CONFIG, "token id %d is outside %s's vocabulary", id, m->name);
    attn_status st = attn_kv_reserve(c, c->n + 1, err);
    if (st) return st;
    int pos = c->n, t = pos + 1, d = mc->d;
    row_bufs r;
    if (!row_alloc(&r, m, t)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a decoding step");
    attn_model_embed_row(m, id, r.resid);
    for (int l = 0; l < mc->layers; l++) {
        const attn_model_layer W = m->layer[l];
        attn_op_rmsnorm(r.resid, W.attn_norm, r.x, 1, d, mc->eps);
        memcpy(c->x[l] + (size_t)pos * d, r.x, (size_t)d * sizeof *r.x);
        if (project_row(m, run, &W, &r, pos)) {
            row_free(&r);
            return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for RoPE");
        }
        for (int j = 0; j < mc->kv_heads; j++) { /* 5. the new position joins the cache */
            size_t at = ((size_t)j * c->cap + pos) * c->k;
            memcpy(c->keys[l] + at, r.kn + (size_t)j * c->k, (size_t)c->k * sizeof(float));
            memcpy(c->values[l] + at, r.vn + (size_t)j * c->k, (size_t)c->k * sizeof(float));
        }
        attend_row(c, m, run, &W, &r, l, t);
        attn_op_add(r.resid, r.out, r.mid, (size_t)d);
        attn_op_rmsnorm(r.mid, W.mlp_norm, r.norm2, 1, d, mc->eps);
        const attn_wmat gate_up[] = {W.w_gate, W.w_up}; /* stacked: gate, up side by side */
        attn_wmat_product_row(gate_up, 2, r.norm2, r.gate);
        attn_op_swiglu(r.gate, r.up, r.act, (size_t)mc->ffn);
        attn_wmat_product_row(&W.w_down, 1, r.act, r.mlp);
        attn_op_add(r.mid, r.mlp, r.resid, (size_t)d);
    }
    c->n = t;
    attn_op_rmsnorm(r.resid, m->norm, r.norm2, 1, d, mc->eps);
    int bad = attn_model_logits(m, r.norm2, logits, 1);
    row_free(&r);
    return bad ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the LM head") : ATTN_OK;
}
