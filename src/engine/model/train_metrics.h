/* train_metrics.h — how a model's heads formed: DIR/checkpoints/metrics.json,
 * which scripts/train_model.py --checkpoints writes (scripts/train/metrics.py),
 * read into plain arrays for the window's training panel.
 *
 *     {"induction": {...}, "snapshots": [
 *        {"step": 0, "train_loss": 3.74, "heldout_loss": 3.74, "icl_drop": -0.01, ...,
 *         "heads": [{"layer": 0, "head": 0, "induction": 0.02, "-1": 0.18, "first": 0.18, ...}, ...]},
 *        ...]}
 *
 * One snapshot per saved step, in training order. Per head, a weight is a
 * mean over queries i of W[i, j] for one key j: "-1" the previous token
 * (j = i − 1), "first" the <s> every row opens with (j = 0); "induction" the
 * mean weight from the second copy of a repeated random sequence onto the
 * token after the first occurrence (Olsson et al. 2022). All lie in [0, 1]. */
#ifndef ATTN_TRAIN_METRICS_H
#define ATTN_TRAIN_METRICS_H

#include "engine/base/error.h"

/* The per-head measures kept, in the order the window cycles through them. */
typedef enum { ATTN_METRIC_PREV, ATTN_METRIC_INDUCTION, ATTN_METRIC_FIRST, ATTN_METRIC_COUNT } attn_metric;

/* The key of metric m in metrics.json ("-1", "induction", "first"). */
const char *attn_metric_key(attn_metric m);

typedef struct {
    int n;                 /* snapshots */
    int layers, heads;     /* the same in every snapshot */
    long *step;            /* (n) training step, increasing */
    double *train_loss;    /* (n) nats per token on the fixed training sample */
    double *heldout_loss;  /* (n) the same on held-out text */
    double *icl_drop;      /* (n) on the induction test's random words said twice: the second copy's loss
                            * minus the first's, nats per token (Olsson et al.'s in-context learning score);
                            * NaN where the file has none */
    double *head[ATTN_METRIC_COUNT]; /* each (n, layers, heads): head[m][(s · layers + l) · heads + h] */
} attn_metrics;

/* Reads model folder dir's checkpoints/metrics.json. Without the file, ATTN_OK
 * with m->n = 0. A file that is not as above: ATTN_ERR_FORMAT (or IO, NOMEM),
 * one line starting with the file's path and naming what is wrong, m->n = 0.
 * Pair with attn_metrics_free (safe on a zeroed struct). */
attn_status attn_metrics_load(const char *dir, attn_metrics *m, attn_error *err);
void attn_metrics_free(attn_metrics *m);

/* Metric k of head (layer, head) at snapshot s. */
static inline double attn_metrics_head(const attn_metrics *m, attn_metric k, int s, int layer, int head)
{
    return m->head[k][((long)s * m->layers + layer) * m->heads + head];
}

/* The snapshot taken at step, or -1. */
int attn_metrics_find(const attn_metrics *m, long step);

#endif
