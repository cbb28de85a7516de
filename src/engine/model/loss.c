/* loss.c — next-token loss of a model's trace (loss.h). */
#include "loss.h"

#include <math.h>
#include <stdlib.h>

double attn_token_nll(const float *logits, int V, int target)
{
    /* log-sum-exp shifted by the largest logit: no exp overflows, and the
     * largest term is exp(0) = 1, so the sum is never 0 */
    double mx = logits[0], sum = 0;
    for (int v = 1; v < V; v++) mx = logits[v] > mx ? logits[v] : mx;
    for (int v = 0; v < V; v++) sum += exp((double)logits[v] - mx);
    return log(sum) - ((double)logits[target] - mx);
}

/* Adds −log p of each row of logits (rows, V) whose target is a token id to
 * *total, in row order, counting them in *n. */
static void nll_add(const float *logits, int rows, int V, const int *targets, double *total, int *n)
{
    for (int i = 0; i < rows; i++) {
        if (targets[i] < 0 || targets[i] >= V) continue;
        *total += attn_token_nll(logits + (size_t)i * V, V, targets[i]);
        (*n)++;
    }
}

double attn_mean_nll(const float *logits, int rows, int V, const int *targets, int *counted)
{
    double total = 0;
    int n = 0;
    nll_add(logits, rows, V, targets, &total, &n);
    if (counted) *counted = n;
    return n ? total / n : NAN;
}

double attn_trace_loss(const attn_trace *tr, int batch, int *counted)
{
    return attn_trace_loss_cancel(tr, batch, counted, NULL);
}

double attn_trace_loss_cancel(const attn_trace *tr, int batch, int *counted, const atomic_int *cancel)
{
    const attn_tensor *lg = attn_trace_stage(tr, -1, ATTN_STAGE_LOGITS);
    const attn_dims *d = &tr->dims;
    if (counted) *counted = 0;
    if (!lg || !tr->token_ids || batch < 0 || batch >= d->b || d->s < 1 || d->V < 1) return NAN;
    int *targets = malloc((size_t)d->s * sizeof *targets);
    if (!targets) return NAN;
    /* row i sits at position P + i and predicts the token at P + i + 1; a
     * pad (id −1) there, or a pad as the query itself, counts for nothing */
    const int *ids = tr->token_ids + (size_t)batch * d->L;
    for (int i = 0; i < d->s; i++) {
        int at = d->P + i;
        targets[i] = at + 1 < d->L && ids[at] >= 0 ? ids[at + 1] : -1;
    }
    /* the rows' logits filled a chunk at a time, each row's −log p summed in order */
    const float *rows = lg->data + (size_t)batch * d->s * d->V;
    double total = 0;
    int n = 0;
    for (int i0 = 0; i0 < d->s; i0 += ATTN_LOSS_CHUNK) {
        if (cancel && atomic_load(cancel)) {
            n = 0;
            break;
        }
        int end = d->s - i0 < ATTN_LOSS_CHUNK ? d->s : i0 + ATTN_LOSS_CHUNK;
        attn_tensor_fill(lg, (size_t)batch * d->s + (size_t)i0, (size_t)(end - i0));
        nll_add(rows + (size_t)i0 * d->V, end - i0, d->V, targets + i0, &total, &n);
    }
    free(targets);
    if (counted) *counted = n;
    return n ? total / n : NAN;
}
