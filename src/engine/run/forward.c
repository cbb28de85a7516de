/* forward.c — running a trace: one attention layer, or a trained model.
 *
 * A single layer plans every stage's shape first (so an oversized config is
 * refused before any allocation), places all tensors in one arena, then runs
 * attention.h's layer on it. With cfg->model, model_run.h does the same for
 * every layer of the model. */
#include "forward.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/blas.h"
#include "engine/model/model_run.h"

/* The run on a model: the one given, or cfg->model loaded for it. */
static attn_status with_model(const attn_config *cfg, const attn_inputs *in, attn_trace *tr, double *bytes,
                              attn_error *err)
{
    attn_model own;
    const attn_model *m = in ? in->model : NULL;
    attn_status st;
    if (!m) {
        if ((st = attn_model_load_watched(cfg->model, &own, in ? in->progress : NULL, err))) return st;
        m = &own;
    }
    st = tr ? attn_model_trace_watched(m, cfg, NULL, in ? in->progress : NULL, in ? in->arena : NULL, tr, err)
            : attn_model_trace_estimate(m, cfg, bytes, err);
    if (m == &own) attn_model_free(&own);
    return st;
}

attn_status attn_trace_estimate(const attn_config *cfg, double *bytes, attn_error *err)
{
    if (cfg->model) return with_model(cfg, NULL, NULL, bytes, err);
    attn_dims d;
    attn_tokens tok, src;
    attn_status st = attn_config_resolve(cfg, &d, &tok, &src, err);
    attn_stage_ctx ctx = attn_config_stage_ctx(cfg, &d);
    if (bytes) *bytes = st == ATTN_OK || d.b ? attn_stages_bytes(&ctx, 1) : 0;
    if (st) return st;
    attn_tokens_free(&tok);
    attn_tokens_free(&src);
    return ATTN_OK;
}

/* Lays out every present stage in one arena. */
static attn_status allocate(attn_trace *tr, attn_error *err)
{
    int n;
    const attn_stage_info *st = attn_stages(&n);
    attn_stage_ctx ctx = attn_config_stage_ctx(&tr->cfg, &tr->dims);
    tr->tensors = calloc((size_t)n, sizeof *tr->tensors);
    if (!tr->tensors) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    tr->n_layers = 1;
    for (int i = 0; i < n; i++) {
        if (!attn_stage_present(&st[i], &ctx)) continue;
        attn_tensor *t = &tr->tensors[tr->n_tensors++];
        snprintf(t->name, sizeof t->name, "%s", st[i].name);
        t->layer = 0;
        t->info = &st[i];
        t->ndim = attn_stage_shape(&st[i], &tr->dims, t->shape);
        if (attn_stage_dims(&st[i], &tr->dims) != st[i].dims) t->dims = attn_stage_dims(&st[i], &tr->dims);
        t->count = 1;
        for (int j = 0; j < t->ndim; j++) t->count *= (size_t)t->shape[j];
    }
    return attn_trace_alloc_arena(tr, err);
}

attn_status attn_trace_run(const attn_config *cfg, const attn_inputs *inputs, attn_trace *tr, attn_error *err)
{
    attn_status st;
    memset(tr, 0, sizeof *tr);
    if (cfg->model) return with_model(cfg, inputs, tr, NULL, err);
    if ((st = attn_config_copy(&tr->cfg, cfg, err))) return st;
    tr->store = inputs ? inputs->arena : NULL;
    if ((st = attn_config_resolve(cfg, &tr->dims, &tr->tokens, &tr->source, err)) ||
        (st = allocate(tr, err)) ||
        (st = attn_attention_run(tr, 0, inputs, err))) {
        attn_trace_free(tr);
        return st;
    }
    return ATTN_OK;
}

void attn_inputs_from_trace(const attn_trace *tr, attn_inputs *in)
{
    const attn_tensor *t;
    memset(in, 0, sizeof *in);
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_Q))) in->w_q = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_K))) in->w_k = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_V))) in->w_v = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_O))) in->w_o = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_QN))) in->q_norm = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_KN))) in->k_norm = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_DKV))) in->w_dkv = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_UK))) in->w_uk = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_UV))) in->w_uv = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_W_KR))) in->w_kr = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_X))) in->x = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_X_PAST))) in->x_past = t->data;
    if ((t = attn_trace_stage(tr, 0, ATTN_STAGE_MEMORY))) in->memory = t->data;
}

const char *attn_forward_products(char *buf, size_t size) { return attn_blas_describe(buf, size); }

void attn_forward_choose_kernels(void) { (void)attn_blas_choose_core(); }
