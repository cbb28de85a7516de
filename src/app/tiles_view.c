/* tiles_view.c — the FlashAttention view's numbers (tiles_view.h). */
#include "tiles_view.h"

#include <math.h>
#include <stdio.h>

#include "i18n.h"
#include "view.h"


bool app_tiles_ok(const app_state *app)
{
    const attn_trace *tr = &app->trace;
    return tr->cfg.tiles.q > 0 && tr->cfg.tiles.k > 0 && attn_trace_stage(tr, app->view.layer, ATTN_STAGE_TILE_MAX) &&
           attn_trace_stage(tr, app->view.layer, ATTN_STAGE_TILE_SUM);
}

bool app_tiles_skipped(const app_tiles *tv, int qi, int kj)
{
    int i0 = qi * tv->bq, rows = tv->s - i0 < tv->bq ? tv->s - i0 : tv->bq;
    return tv->causal_skip && kj * tv->bk > tv->P + i0 + rows - 1; /* as tiles.c's run_task */
}

bool app_tiles_step(app_state *app, int dir)
{
    if (!app_tiles_ok(app)) return false;
    int T = attn_config_key_tiles(&app->trace.cfg, app->trace.dims.t);
    if (T <= 0) return false;
    app->tile_step = ((app->tile_step + dir) % T + T) % T;
    return true;
}

/* Row i's partial output after key tile j: o = Σ_{keys < (j+1)·BK} e^(S − m)·v / ℓ,
 * its norm and first feature (NaN both while no key was visible). With a sink
 * logit X (finite), the last tile's ℓ gains e^(X − m), as tiles.c's finish_rows
 * adds it after the last tile: o is then the context. */
static void partial_output(const app_tiles *tv, const app_view_slice *S, const app_view_slice *V, int i, float X,
                           float *norm, float *first)
{
    double m = tv->m[i], l = tv->l[i], sq = 0.0, f0 = 0.0;
    int keys = (tv->step + 1) * tv->bk < tv->t ? (tv->step + 1) * tv->bk : tv->t;
    *norm = *first = NAN;
    if (!isfinite(m) || !(l > 0.0)) return;
    if (!isinf(X) && tv->step == tv->n_k - 1) l += exp((double)X - m);
    for (int c = 0; c < V->slice.cols; c++) {
        double o = 0.0;
        for (int k = 0; k < keys; k++) {
            float s = app_slice_at(&S->slice, i, k);
            if (s > -INFINITY) o += exp((double)s - m) * app_slice_at(&V->slice, k, c);
        }
        o /= l;
        if (c == 0) f0 = o;
        sq += o * o;
    }
    *norm = (float)sqrt(sq), *first = (float)f0;
}

/* The sink logit of head h: the config's one X, or with learned sinks per
 * head (gpt-oss) X_h as the trace's numbers give it: a visible key j of a row
 * i has w_ij = e^(s_ij) / Z and the sink e^(X_h) / Z, so
 * X_h = s_ij + ln(sink_weight_i) − ln(w_ij) (−∞ when no row tells it). */
static float sink_logit(const attn_trace *tr, const app_view_slice *S, const app_view_slice *W, int L, int b, int h)
{
    static const attn_stage_id SW[] = {ATTN_STAGE_SINK_WEIGHT};
    app_view_slice sw;
    if (!tr->arch.sinks) return tr->cfg.sink_logit;
    if (!app_view_first_of(tr, L, SW, 1, b, h, &sw)) return -INFINITY;
    for (int i = 0; i < S->slice.rows && i < W->slice.rows; i++) {
        float sink = app_slice_at(&sw.slice, h < sw.slice.rows ? h : 0, i); /* (b, h, s): a row a head */
        for (int j = 0; j < S->slice.cols && sink > 0.0f; j++) {
            float s = app_slice_at(&S->slice, i, j), w = app_slice_at(&W->slice, i, j);
            if (w > 0.0f && isfinite(s)) return (float)((double)s + log((double)sink) - log((double)w));
        }
    }
    return -INFINITY;
}

/* The largest |context − weights·v| over the head: the tiled against the plain output. */
static float max_difference(const app_view_slice *W, const app_view_slice *V, const app_view_slice *C)
{
    double worst = 0.0;
    for (int i = 0; i < C->slice.rows; i++)
        for (int c = 0; c < C->slice.cols && c < V->slice.cols; c++) {
            double o = 0.0;
            for (int k = 0; k < W->slice.cols; k++) o += (double)app_slice_at(&W->slice, i, k) * app_slice_at(&V->slice, k, c);
            double d = fabs(o - app_slice_at(&C->slice, i, c));
            if (!(d <= worst)) worst = d; /* a NaN stays */
        }
    return (float)worst;
}

int app_tiles_make(const app_state *app, app_tiles *out, char *err, size_t errsize)
{
    static const attn_stage_id MX[] = {ATTN_STAGE_TILE_MAX}, SM[] = {ATTN_STAGE_TILE_SUM};
    static const attn_stage_id S[] = {ATTN_STAGE_MASKED_SCORES, ATTN_STAGE_SCORES};
    /* the values the tiles read: mode mla's v_up (naive) or the latent c_kv itself (absorbed, whose
     * tiled output is context_latent); else the kv head's, cached or not */
    static const attn_stage_id V[] = {ATTN_STAGE_V_UP, ATTN_STAGE_C_KV, ATTN_STAGE_V_CACHE, ATTN_STAGE_V_HEADS};
    static const attn_stage_id W[] = {ATTN_STAGE_WEIGHTS_DROPOUT, ATTN_STAGE_WEIGHTS};
    static const attn_stage_id C[] = {ATTN_STAGE_CONTEXT_LATENT, ATTN_STAGE_CONTEXT};
    const attn_trace *tr = &app->trace;
    int L = app->view.layer, b = app->view.batch, h = app->view.head;
    app_view_slice mx, sm, sc, v, w, ctx;
    if (!app_tiles_ok(app) || !app_view_first_of(tr, L, MX, 1, b, h, &mx) || !app_view_first_of(tr, L, SM, 1, b, h, &sm) ||
        !app_view_first_of(tr, L, S, 2, b, h, &sc) || !app_view_first_of(tr, L, V, 4, b, h, &v) || !app_view_first_of(tr, L, W, 2, b, h, &w) ||
        !app_view_first_of(tr, L, C, 2, b, h, &ctx)) {
        snprintf(err, errsize, "%s", _("the FlashAttention view needs a trace with tiles (--tiles BQxBK): this one has none"));
        return -1;
    }
    const attn_config *c = &tr->cfg;
    app_tiles *tv = out;
    tv->s = sc.slice.rows, tv->t = sc.slice.cols, tv->P = tr->dims.P;
    tv->bq = c->tiles.q, tv->bk = c->tiles.k;
    tv->latent = attn_tensor_stage(ctx.tensor) == ATTN_STAGE_CONTEXT_LATENT;
    tv->n_q = (tv->s + tv->bq - 1) / tv->bq, tv->n_k = mx.slice.cols;
    if (tv->s > APP_TILES_MAX_ROWS || tv->s <= 0 || tv->n_k <= 0 || v.slice.rows != tv->t || ctx.slice.rows != tv->s) {
        /* TRANSLATORS: the FlashAttention view; %d: the most query rows it lists, then this trace's */
        snprintf(err, errsize, _("the FlashAttention view lists at most %d query rows (this trace has %d)"),
                 APP_TILES_MAX_ROWS, tv->s);
        return -1;
    }
    tv->step = app->tile_step < 0 ? 0 : app->tile_step >= tv->n_k ? tv->n_k - 1 : app->tile_step;
    tv->causal_skip = !tr->dims.cross && c->causal == ATTN_CAUSAL_ON && c->mask_value == -INFINITY;
    float X = tv->sink = sink_logit(tr, &sc, &w, L, b, h);
    for (int i = 0; i < tv->s; i++) {
        tv->m[i] = app_slice_at(&mx.slice, i, tv->step), tv->l[i] = app_slice_at(&sm.slice, i, tv->step);
        partial_output(tv, &sc, &v, i, X, &tv->norm[i], &tv->first[i]);
    }
    tv->bytes_plain = 4LL * tv->s * tv->t, tv->bytes_tile = 4LL * tv->bq * tv->bk;
    tv->max_diff = max_difference(&w, &v, &ctx);
    return 0;
}
