/* gptoss.c — gpt-oss's router and clamped SwiGLU experts (gptoss.h). */
#include "gptoss.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"

/* One token's route: logit (E) → score (E, the softmax of all E), weight
 * (E, the softmax of the top k, 0 elsewhere), pick (E, 1 for the top k). */
static void route(const attn_moe_sizes *e, const float *logit, float *score, float *weight, unsigned char *pick)
{
    const int E = e->experts;
    float mx = -INFINITY, sum = 0;
    memset(pick, 0, (size_t)E);
    for (int j = 0; j < e->top_k; j++) { /* the k largest logits, ties to the lowest index */
        int best = -1;
        for (int x = 0; x < E; x++)
            if (!pick[x] && (best < 0 || logit[x] > logit[best])) best = x;
        pick[best] = 1;
    }
    for (int x = 0; x < E; x++) mx = logit[x] > mx ? logit[x] : mx;
    for (int x = 0; x < E; x++) sum += score[x] = expf(logit[x] - mx);
    double top = 0; /* the chosen ones' share: softmax over the k alone, shifted by the same max */
    for (int x = 0; x < E; x++) top += pick[x] ? score[x] : 0.0;
    for (int x = 0; x < E; x++) {
        weight[x] = pick[x] ? (float)(score[x] / top) : 0.0f;
        score[x] /= sum;
    }
}

/* act (n, I) = (up + 1) · gate · σ(α · gate) of gu (n, 2I), gate = the even
 * columns clamped above at limit, up = the odd ones clamped to ±limit. */
static void clamped_swiglu(const float *gu, float *act, int n, int I, float limit, float alpha)
{
    for (size_t r = 0; r < (size_t)n; r++)
        for (int i = 0; i < I; i++) {
            float g = gu[r * 2 * I + 2 * i], u = gu[r * 2 * I + 2 * i + 1];
            g = g > limit ? limit : g;
            u = u > limit ? limit : u < -limit ? -limit : u;
            act[r * I + i] = (u + 1.0f) * g * attn_op_sigmoid(alpha * g);
        }
}

attn_status attn_gptoss_moe_run(const attn_model *m, int l, const float *x, int rows, float *out, float *scores,
                                float *weights, attn_error *err)
{
    const attn_model_layer *W = &m->layer[l];
    const attn_moe_sizes *e = &m->cfg.moe;
    const int E = e->experts, d = m->cfg.d, I = e->inter;
    size_t R = (size_t)rows;
    /* logits (rows, E); the widened GU_e (d, 2I) and D_e (I, d); the gathered rows xs (rows, d), their gu
     * (rows, 2I), act (rows, I), y (rows, d) and weights (rows) */
    size_t floats = R * E + (size_t)d * 2 * I + (size_t)I * d + R * d + R * 2 * I + R * I + R * d + R;
    float *logits = malloc(floats * sizeof *logits);
    unsigned char *pick = malloc(R * E);
    int *at = malloc(R * sizeof *at);
    int bad = !logits || !pick || !at || attn_wmat_product(&W->w_router, x, rows, logits);
    if (bad) goto out;
    float *gu_w = logits + R * E, *down_w = gu_w + (size_t)d * 2 * I, *xs = down_w + (size_t)I * d;
    float *gu = xs + R * d, *act = gu + R * 2 * I, *y = act + R * I, *ws = y + R * d;
    for (size_t r = 0; r < R; r++) {
        attn_op_add_bias(logits + r * E, W->router_bias, 1, E); /* logits = x · W_rᵀ + b_r */
        route(e, logits + r * E, scores + r * E, weights + r * E, pick + r * E);
    }
    memset(out, 0, R * d * sizeof *out);
    for (int ex = 0; ex < E; ex++) {
        int n = 0;
        for (size_t r = 0; r < R; r++)
            if (pick[r * E + ex]) {
                memcpy(xs + (size_t)n * d, x + r * d, (size_t)d * sizeof *xs);
                at[n] = (int)r, ws[n] = weights[r * E + ex];
                n++;
            }
        if (!n) continue;
        /* expert ex's matrices as stored, (in, out), widened: y = x · W */
        attn_wmat_rows(&W->experts[2 * ex], 0, d, gu_w);
        attn_wmat_rows(&W->experts[2 * ex + 1], 0, I, down_w);
        attn_op_project(xs, gu_w, gu, n, d, 2 * I);
        attn_op_add_bias(gu, W->gate_up_bias + (size_t)ex * 2 * I, (size_t)n, 2 * I);
        clamped_swiglu(gu, act, n, I, (float)e->limit, (float)e->alpha);
        attn_op_project(act, down_w, y, n, I, d);
        attn_op_add_bias(y, W->down_bias + (size_t)ex * d, (size_t)n, d);
        for (int j = 0; j < n; j++)
            for (int i = 0; i < d; i++) out[(size_t)at[j] * d + i] += ws[j] * y[(size_t)j * d + i];
    }
out:
    free(logits);
    free(pick);
    free(at);
    return bad ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's experts", l) : ATTN_OK;
}

attn_status attn_gptoss_run_config(const attn_model *m, attn_config *run, attn_error *err)
{
    if (run->sliding_window && m->cfg.arch.local_window)
        return attn_fail(err, ATTN_ERR_CONFIG, "sliding_window: %s's layers have their own windows (local layers "
                         "%d positions, global ones all)", m->name, m->cfg.arch.local_window);
    if (run->sliding_window)
        return attn_fail(err, ATTN_ERR_CONFIG, "sliding_window: every layer of %s sees the whole past (its "
                         "layer_types are all full_attention)", m->name);
    return attn_config_check_scores(run, true, err);
}
