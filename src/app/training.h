/* training.h — a model's training checkpoints as the window moves through
 * them: the model folder they belong to, its steps (attn_model_steps) and
 * "final", the folder itself, and checkpoints/metrics.json (train_metrics.h)
 * for the training panel. No SDL.
 *
 * Positions 0 .. n−1 are the saved steps in order; position n is the final
 * model. The settings' model names the position shown: M for final,
 * M/checkpoints/step<N> for a step. */
#ifndef APP_TRAINING_H
#define APP_TRAINING_H

#include <limits.h>
#include <stdbool.h>

#include "engine/base/error.h"
#include "engine/model/model.h"
#include "engine/model/train_metrics.h"

typedef struct {
    char base[PATH_MAX];       /* the model folder whose checkpoints these are; "" when none */
    long steps[ATTN_MAX_STEPS];/* (n) the saved steps, increasing */
    int n;                     /* 0: the model has no checkpoints (nothing of this is shown) */
    bool final;                /* base holds the model as training ended (position n); false while
                                * it trains, when only the checkpoints are written */
    attn_metrics metrics;      /* metrics.json; metrics.n = 0 when absent or unreadable */
    char problem[sizeof(((attn_error *)0)->msg)]; /* why metrics.json could not be read, one line; "" */
} app_training;

/* Reads the checkpoints of the model that `model` names (a folder or a
 * shipped name; NULL: none, *t then empty): steps and metrics. A broken
 * metrics.json is not a failure: t->problem says it and the metrics are
 * empty. Returns 0, or -1 with err set when the model cannot be found.
 * Pair with app_training_free (safe on a zeroed struct). */
int app_training_read(const char *model, app_training *t, attn_error *err);
void app_training_free(app_training *t);

/* The position that model (a folder or shipped name) is among t's, or -1
 * when it is none of them. */
int app_training_position(const app_training *t, const char *model);

/* The folder of position at (0 .. n; n only with final) into out; 0, or -1 with err set. */
int app_training_path(const app_training *t, int at, char *out, size_t size, attn_error *err);

/* The step of position at; final: the last saved step (the same weights
 * when train_model.py saved them), -1 when there are none. */
long app_training_step(const app_training *t, int at);

/* The metrics snapshot of position at, or -1 when metrics.json has none for it. */
int app_training_snapshot(const app_training *t, int at);

#endif
