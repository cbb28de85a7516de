/* training.c — a model's training checkpoints in the window (training.h). */
#include "training.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/base/paths.h"

int app_training_read(const char *model, app_training *t, attn_error *err)
{
    long step;
    memset(t, 0, sizeof *t);
    if (!model) return 0;
    if (attn_model_base(model, t->base, sizeof t->base, &step, err) ||
        attn_model_steps(t->base, t->steps, ATTN_MAX_STEPS, &t->n, err)) {
        memset(t, 0, sizeof *t);
        return -1;
    }
    if (!t->n) return 0;
    char cfg[PATH_MAX];
    struct stat sb;
    t->final = !attn_path_format(cfg, sizeof cfg, NULL, "%s/config.json", t->base) && stat(cfg, &sb) == 0;
    attn_error why;
    if (attn_metrics_load(t->base, &t->metrics, &why)) snprintf(t->problem, sizeof t->problem, "%s", why.msg);
    return 0;
}

void app_training_free(app_training *t)
{
    attn_metrics_free(&t->metrics);
    memset(t, 0, sizeof *t);
}

int app_training_position(const app_training *t, const char *model)
{
    char base[PATH_MAX];
    long step;
    if (!t->n || !model || attn_model_base(model, base, sizeof base, &step, NULL) || strcmp(base, t->base)) return -1;
    if (step < 0) return t->n;
    for (int i = 0; i < t->n; i++)
        if (t->steps[i] == step) return i;
    return -1;
}

int app_training_path(const app_training *t, int at, char *out, size_t size, attn_error *err)
{
    if (at < 0 || at > t->n || (at == t->n && !t->final))
        return attn_fail(err, ATTN_ERR_CONFIG, "no training position %d", at), -1;
    if (at == t->n) return attn_path_format(out, size, err, "%s", t->base) ? -1 : 0;
    return attn_model_checkpoint(t->base, t->steps[at], out, size, err) ? -1 : 0;
}

long app_training_step(const app_training *t, int at)
{
    if (at >= 0 && at < t->n) return t->steps[at];
    return t->n ? t->steps[t->n - 1] : -1;
}

int app_training_snapshot(const app_training *t, int at)
{
    long step = app_training_step(t, at);
    return step < 0 ? -1 : attn_metrics_find(&t->metrics, step);
}
