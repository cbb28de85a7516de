/* kv_cache.c — the KV cache (kv_cache.h); the untraced decoding step over it is kv_step.c. */
#include "kv_cache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/model_run.h"

attn_status attn_kv_init(attn_kv_cache *c, const attn_model *m, attn_error *err)
{
    memset(c, 0, sizeof *c);
    c->layers = m->cfg.layers;
    c->g = m->cfg.kv_heads;
    c->k = m->cfg.head_dim;
    c->d = m->cfg.d;
    c->keeps_x = true;
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
    if (st) return st;
    c->keeps_x = c->latent || a->sinks;
    /* keep_first keeps keys before the window visible; dropout in training draws over the traced pass's cells;
     * a model that decodes through the traced layer (gpt-oss's learned sinks: attn_kv_latent_pass) reads its
     * past as every row from position 0 at one stride, so its cache keeps every position */
    if (c->latent || m->cfg.arch.sinks || W <= 0 || run->keep_first > 0 || (run->train && run->dropout > 0.0f))
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
    free(c->step);
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
             (!c->keeps_x || (fresh[3 * l + 2] = malloc((size_t)room * c->d * sizeof(float))));
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
        /* letting rows go into a room of exactly W (a prompt of W tokens
         * fills one) would let one go, and copy every local layer, at every
         * token: the room grows to W + W/4 then, once */
        if (first > c->first && local_cap < limit && rows <= limit) local_cap = limit;
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
        if (c->keeps_x) memcpy(c->x[l] + (size_t)c->n * c->d, x->data, (size_t)D->s * c->d * sizeof(float));
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
        if (c->keeps_x) memcpy(c->x[l] + (size_t)(c->n - f) * c->d, x->data, (size_t)D->s * c->d * sizeof(float));
        for (int j = 0; j < c->g; j++) {
            size_t to = ((size_t)j * room + c->n - f) * c->k, from = ((size_t)j * rows + D->P) * c->k;
            memcpy(c->keys[l] + to, k + from, (size_t)D->s * c->k * sizeof(float));
            memcpy(c->values[l] + to, v + from, (size_t)D->s * c->k * sizeof(float));
        }
    }
    c->n += D->s;
    return ATTN_OK;
}
