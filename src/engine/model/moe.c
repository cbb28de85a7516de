/* moe.c — a DeepSeek mixture-of-experts layer: the router's choice, then the
 * chosen experts and the shared one (moe.h has the formulas). */
#include "moe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"

/* The n highest of v (E), each marked in pick; ties to the lowest index. */
static void top_n(const float *v, int E, int n, unsigned char *pick)
{
    memset(pick, 0, (size_t)E);
    for (int j = 0; j < n; j++) {
        int best = -1;
        for (int e = 0; e < E; e++)
            if (!pick[e] && (best < 0 || v[e] > v[best])) best = e;
        pick[best] = 1;
    }
}

/* choice (E) with every expert outside the topk_group best of n_group groups
 * set to 0.0, HF's fill. A group's rank: V2 its best choice, V3 the sum of
 * its two best. g (n_group) and keep (n_group) are scratch. */
static void limit_groups(const attn_moe_sizes *e, float *choice, float *g, unsigned char *keep)
{
    int per = e->experts / e->groups;
    for (int j = 0; j < e->groups; j++) {
        const float *c = choice + (size_t)j * per;
        float a = -INFINITY, b = -INFINITY; /* the best and the second best */
        for (int i = 0; i < per; i++) {
            if (c[i] > a) b = a, a = c[i];
            else if (c[i] > b) b = c[i];
        }
        g[j] = e->method == ATTN_ROUTE_SIGMOID_GROUPS ? a + b : a;
    }
    top_n(g, e->groups, e->topk_group, keep);
    for (int j = 0; j < e->groups; j++)
        if (!keep[j]) memset(choice + (size_t)j * per, 0, (size_t)per * sizeof *choice); /* 0.0, not −∞ */
}

/* One token's route: logits (E) into its scores and dense weights (E); pick
 * marks the chosen. scratch: 2·E floats and E + n_group bytes. */
static void route(const attn_moe_sizes *e, const float *bias, const float *logit, float *score, float *weight,
                  unsigned char *pick, float *scratch, unsigned char *keep)
{
    const int E = e->experts;
    float *choice = scratch, *g = scratch + E;
    bool v3 = e->method == ATTN_ROUTE_SIGMOID_GROUPS;
    if (v3) {
        for (int x = 0; x < E; x++) score[x] = attn_op_sigmoid(logit[x]);
    } else { /* softmax over the experts */
        float mx = -INFINITY, sum = 0;
        for (int x = 0; x < E; x++) mx = logit[x] > mx ? logit[x] : mx;
        for (int x = 0; x < E; x++) sum += score[x] = expf(logit[x] - mx);
        for (int x = 0; x < E; x++) score[x] /= sum;
    }
    for (int x = 0; x < E; x++) choice[x] = score[x] + (bias ? bias[x] : 0.0f);
    if (e->method != ATTN_ROUTE_GREEDY) limit_groups(e, choice, g, keep);
    top_n(choice, E, e->top_k, pick);
    double total = 0;
    for (int x = 0; x < E; x++) total += pick[x] ? score[x] : 0.0;
    for (int x = 0; x < E; x++) {
        /* V3 weighs by the unbiased score; V2 by the choice it took (the score, in a kept group) */
        double w = !pick[x] ? 0.0 : v3 ? score[x] : choice[x];
        if (v3 && e->norm_topk) w /= total + 1e-20;
        weight[x] = (float)(w * e->scale);
    }
}

/* y (n, d) += rows of SwiGLU(x) through gate, up (I, d), down (d, I), each
 * row scaled by w (n; NULL: 1). buf: 3·n·I + n·d floats. */
static int swiglu_add(const attn_wmat *gate, const attn_wmat *up, const attn_wmat *down, const float *x, int n,
                      const float *w, float *y, int d, float *buf)
{
    size_t I = (size_t)gate->rows;
    float *gt = buf, *u = gt + n * I, *o = u + n * I;
    if (attn_wmat_product(gate, x, n, gt) || attn_wmat_product(up, x, n, u)) return -1;
    attn_op_swiglu(gt, u, gt, (size_t)n * I);
    if (attn_wmat_product(down, gt, n, o)) return -1;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < d; i++) y[(size_t)r * d + i] += (w ? w[r] : 1.0f) * o[(size_t)r * d + i];
    return 0;
}

/* Floats experts() needs for rows tokens: the gathered rows and their
 * outputs (2·rows·d), their weights (rows), swiglu_add's buffer (the widest
 * MLP, the shared one or an expert), and the row indices (rows ints, as floats). */
static size_t experts_floats(const attn_moe_sizes *e, int d, int rows)
{
    size_t I = (size_t)(e->shared > 1 ? e->shared : 1) * e->inter;
    return (size_t)rows * (2 * (size_t)d + 1 + 3 * I + d + 1);
}

/* out (rows, d) = for each expert, the rows that chose it gathered, run,
 * weighted and added back to their rows; then every row's shared MLP. */
static int experts(const attn_model_layer *W, const attn_moe_sizes *e, int d, const float *x, int rows,
                   const unsigned char *pick, const float *weights, float *out, float *buf)
{
    const int E = e->experts;
    float *xs = buf, *ys = xs + (size_t)rows * d, *ws = ys + (size_t)rows * d, *work = ws + rows;
    size_t I = (size_t)(e->shared > 1 ? e->shared : 1) * e->inter;
    int *at = (int *)(void *)(work + (size_t)rows * (3 * I + d));
    memset(out, 0, (size_t)rows * d * sizeof *out);
    for (int ex = 0; ex < E; ex++) {
        int n = 0;
        for (int r = 0; r < rows; r++)
            if (pick[(size_t)r * E + ex]) {
                memcpy(xs + (size_t)n * d, x + (size_t)r * d, (size_t)d * sizeof *xs);
                at[n] = r, ws[n] = weights[(size_t)r * E + ex];
                n++;
            }
        if (!n) continue;
        memset(ys, 0, (size_t)n * d * sizeof *ys);
        const attn_wmat *g = &W->experts[3 * ex];
        if (swiglu_add(g, g + 1, g + 2, xs, n, ws, ys, d, work)) return -1;
        for (int j = 0; j < n; j++) attn_op_add(out + (size_t)at[j] * d, ys + (size_t)j * d, out + (size_t)at[j] * d, d);
    }
    if (e->shared && swiglu_add(&W->w_sh_gate, &W->w_sh_up, &W->w_sh_down, x, rows, NULL, out, d, work)) return -1;
    return 0;
}

attn_status attn_moe_run(const attn_model *m, int l, const float *x, int rows, float *out, float *scores,
                         float *weights, attn_error *err)
{
    const attn_model_layer *W = &m->layer[l];
    const attn_moe_sizes *e = &m->cfg.moe;
    const int E = e->experts, d = m->cfg.d;
    float *logits = malloc(((size_t)rows * E + 2 * (size_t)E + experts_floats(e, d, rows)) * sizeof *logits);
    unsigned char *pick = malloc((size_t)rows * E + E + e->groups + 1);
    int bad = !logits || !pick || attn_wmat_product(&W->w_router, x, rows, logits); /* logits = x · W_rᵀ */
    for (int r = 0; !bad && r < rows; r++)
        route(e, W->router_bias, logits + (size_t)r * E, scores + (size_t)r * E, weights + (size_t)r * E,
              pick + (size_t)r * E, logits + (size_t)rows * E, pick + (size_t)rows * E);
    if (!bad) bad = experts(W, e, d, x, rows, pick, weights, out, logits + (size_t)rows * E + 2 * E);
    free(logits);
    free(pick);
    return bad ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's experts", l) : ATTN_OK;
}
