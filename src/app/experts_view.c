/* experts_view.c — the token × expert view's numbers (experts_view.h). */
#include "experts_view.h"

#include <stdio.h>
#include <string.h>

#include "engine/formats/model_config.h"
#include "engine/model/model.h"
#include "engine/trace/explain.h"
#include "i18n.h"

static const attn_stage_id WEIGHTS[] = {ATTN_STAGE_EXPERT_WEIGHTS}, SCORES[] = {ATTN_STAGE_ROUTER_SCORES};

int app_experts_first_layer(const attn_trace *tr)
{
    for (int l = 0; l < tr->n_layers; l++)
        if (attn_trace_stage(tr, l, ATTN_STAGE_EXPERT_WEIGHTS)) return l;
    return -1;
}

app_experts_kind app_experts_kind_of(const app_state *app)
{
    if (attn_trace_stage(&app->trace, app->view.layer, ATTN_STAGE_EXPERT_WEIGHTS)) return APP_EXPERTS_ROUTED;
    return app_experts_first_layer(&app->trace) >= 0 ? APP_EXPERTS_DENSE : APP_EXPERTS_NONE;
}

int app_experts_rank(const app_slice *w, int i, int e)
{
    return attn_expert_rank(w->data + (ptrdiff_t)i * w->row_stride, w->cols, e, NULL); /* a row: E weights in a row */
}

/* num_experts_per_tok and n_shared_experts: the model's, else (a trace file)
 * its config.json's; false when it has none this build reads. */
static bool config_sizes(const app_state *app, int *top_k, int *shared)
{
    attn_model_config mc;
    attn_error ignore;
    const attn_trace *tr = &app->trace;
    if (app->model) mc = app->model->cfg;
    else if (!tr->model_config || attn_model_config_parse(tr->model_config, strlen(tr->model_config), &mc, &ignore))
        return false;
    if (mc.moe.top_k <= 0) return false;
    *top_k = mc.moe.top_k, *shared = mc.moe.shared;
    return true;
}

int app_experts_make(const app_state *app, app_experts *ex, char *err, size_t errsize)
{
    const attn_trace *tr = &app->trace;
    int L = app->view.layer, b = app->view.batch;
    memset(ex, 0, sizeof *ex);
    ex->layer = L;
    switch (app_experts_kind_of(app)) {
    case APP_EXPERTS_NONE:
        snprintf(err, errsize, "%s", _("the expert view (E) needs a mixture-of-experts model (DeepSeek-V2/V3, "
                                       "gpt-oss): this trace has no routed layer"));
        return -1;
    case APP_EXPERTS_DENSE:
        /* TRANSLATORS: the token × expert view on a dense layer; %d: the layer, then the first routed one */
        snprintf(err, errsize, _("layer %d is dense: one MLP for every token, no experts. The experts begin at "
                                 "layer %d (, and . step the layers)."),
                 L, app_experts_first_layer(tr));
        return -1;
    case APP_EXPERTS_ROUTED: break;
    }
    if (!app_view_first_of(tr, L, WEIGHTS, 1, b, 0, &ex->w) || ex->w.slice.cols <= 0 || ex->w.slice.rows <= 0 ||
        ex->w.slice.col_stride != 1) {
        snprintf(err, errsize, "%s", _("this layer's expert_weights has no cells"));
        return -1;
    }
    if (!app_view_first_of(tr, L, SCORES, 1, b, 0, &ex->score) || ex->score.slice.rows != ex->w.slice.rows ||
        ex->score.slice.cols != ex->w.slice.cols)
        memset(&ex->score, 0, sizeof ex->score);
    ex->s = ex->w.slice.rows, ex->E = ex->w.slice.cols;
    int most = 0;
    for (int i = 0; i < ex->s; i++) {
        int n = 0;
        for (int e = 0; e < ex->E; e++) {
            float x = app_slice_at(&ex->w.slice, i, e);
            if (x == 0.0f) continue;
            n++;
            if (e < APP_EXPERTS_MAX) ex->load[e]++;
            if (x > ex->wmax) ex->wmax = x;
        }
        if (n > most) most = n;
    }
    if (!config_sizes(app, &ex->top_k, &ex->shared)) ex->top_k = most, ex->shared = 0;
    return 0;
}
