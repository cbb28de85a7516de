/* generate.c — autoregressive decoding over a cache of each layer's inputs. */
#include "generate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_run.h"
#include "rng.h"

int attn_sample_logits(const float *logits, int V, const attn_sampling *s, float u)
{
    int best = 0;
    for (int i = 1; i < V; i++)
        if (logits[i] > logits[best]) best = i;
    if (s->temperature <= 0) return best;
    /* keep the k largest: a threshold at the k-th largest logit */
    int k = s->top_k > 0 && s->top_k < V ? s->top_k : V;
    float *sorted = malloc((size_t)V * sizeof *sorted);
    if (!sorted) return best;
    memcpy(sorted, logits, (size_t)V * sizeof *sorted);
    float cut = -INFINITY;
    if (k < V) { /* partial selection: k passes of a max */
        for (int j = 0; j < k; j++) {
            int at = j;
            for (int i = j + 1; i < V; i++)
                if (sorted[i] > sorted[at]) at = i;
            float t = sorted[j]; sorted[j] = sorted[at]; sorted[at] = t;
        }
        cut = sorted[k - 1];
    }
    free(sorted);
    double total = 0;
    for (int i = 0; i < V; i++)
        if (logits[i] >= cut) total += exp((logits[i] - logits[best]) / s->temperature);
    double acc = 0, target = u * total;
    int last = best;
    for (int i = 0; i < V; i++) {
        if (logits[i] < cut) continue;
        acc += exp((logits[i] - logits[best]) / s->temperature);
        last = i;
        if (acc > target) return i;
    }
    return last;
}

/* Appends the last trace's x rows (its s new positions) to each layer's cache. */
static attn_status remember(attn_generator *g, attn_error *err)
{
    const attn_dims *d = &g->trace.dims;
    int need = g->n;
    if (need > g->cap) {
        int cap = need * 2;
        for (int l = 0; l < g->m->cfg.layers; l++) {
            float *grown = realloc(g->x[l], (size_t)cap * d->d * sizeof *grown);
            if (!grown) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the cache");
            g->x[l] = grown;
        }
        g->cap = cap;
    }
    size_t kv = (size_t)d->g * d->t * d->k; /* the whole cache after this pass: (1, g, t, k) */
    for (int l = 0; l < g->m->cfg.layers; l++) {
        const attn_tensor *x = attn_trace_stage(&g->trace, l, ATTN_STAGE_X);
        const float *k, *v;
        memcpy(g->x[l] + (size_t)d->P * d->d, x->data, (size_t)d->s * d->d * sizeof(float));
        attn_model_trace_kv(&g->trace, l, &k, &v);
        float *gk = realloc(g->k[l], kv * sizeof *gk);
        if (gk) g->k[l] = gk;
        float *gv = realloc(g->v[l], kv * sizeof *gv);
        if (gv) g->v[l] = gv;
        if (!gk || !gv) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the cache");
        memcpy(g->k[l], k, kv * sizeof *gk);
        memcpy(g->v[l], v, kv * sizeof *gv);
    }
    return ATTN_OK;
}

attn_status attn_generator_init(attn_generator *g, const attn_model *m, const attn_config *cfg, attn_error *err)
{
    attn_status st;
    memset(g, 0, sizeof *g);
    g->m = m;
    if ((st = attn_config_copy(&g->cfg, cfg, err))) return st;
    g->cfg.past = 0;
    if (!(g->x = calloc((size_t)m->cfg.layers, sizeof *g->x)) || !(g->k = calloc((size_t)m->cfg.layers, sizeof *g->k)) ||
        !(g->v = calloc((size_t)m->cfg.layers, sizeof *g->v))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = attn_model_trace_run(m, &g->cfg, NULL, &g->trace, err))) goto fail;
    if (g->trace.tokens.rows != 1) {
        st = attn_fail(err, ATTN_ERR_CONFIG, "text: generation continues one text, not %d rows", g->trace.tokens.rows);
        goto fail;
    }
    g->n = g->trace.tokens.len; /* remember() sizes the cache */
    if (!(g->ids = malloc((size_t)g->n * sizeof *g->ids))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto fail;
    }
    memcpy(g->ids, g->trace.token_ids, (size_t)g->n * sizeof *g->ids);
    if ((st = remember(g, err))) goto fail;
    return ATTN_OK;
fail:
    attn_generator_free(g);
    return st;
}

attn_status attn_generator_step(attn_generator *g, const attn_sampling *s, int *next, attn_error *err)
{
    const attn_dims *d = &g->trace.dims;
    const attn_tensor *lg = attn_trace_stage(&g->trace, -1, ATTN_STAGE_LOGITS);
    if (g->n >= g->m->cfg.max_pos)
        return attn_fail(err, ATTN_ERR_CONFIG, "the text has reached %s's %d positions", g->m->name,
                         g->m->cfg.max_pos);
    float u = attn_uniform(attn_hash64(s->seed ^ attn_hash_str("generate")), g->draws++);
    int id = attn_sample_logits(lg->data + (size_t)(d->s - 1) * d->V, d->V, s, u);
    int *grown = realloc(g->ids, (size_t)(g->n + 1) * sizeof *grown);
    if (!grown) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    g->ids = grown;
    g->ids[g->n++] = id;
    attn_trace next_tr;
    g->cfg.past = g->n - 1;
    attn_model_past past = {(const float *const *)g->x, (const float *const *)g->k, (const float *const *)g->v};
    attn_status st = attn_model_trace_ids(g->m, &g->cfg, g->ids, g->n, &past, &next_tr, err);
    if (st) {
        g->n--;
        return st;
    }
    attn_trace_free(&g->trace);
    g->trace = next_tr;
    if ((st = remember(g, err))) return st;
    *next = id;
    return ATTN_OK;
}

void attn_generator_free(attn_generator *g)
{
    if (!g) return;
    for (int l = 0; g->m && l < g->m->cfg.layers; l++) {
        if (g->x) free(g->x[l]);
        if (g->k) free(g->k[l]);
        if (g->v) free(g->v[l]);
    }
    free(g->x);
    free(g->k);
    free(g->v);
    free(g->ids);
    attn_trace_free(&g->trace);
    attn_config_free(&g->cfg);
    memset(g, 0, sizeof *g);
}
