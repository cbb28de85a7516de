/* model_steps.c — a model's training checkpoints: the folders
 * DIR/checkpoints/step<N>/ that scripts/train_model.py --checkpoints saves,
 * each a complete model folder (model.h), N the training step. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model.h"
#include "paths.h"

/* "step400" -> 400; -1 for any other name. */
static long step_of(const char *name)
{
    if (strncmp(name, "step", 4) || !name[4] || strlen(name + 4) > 9) return -1;
    long v = 0;
    for (const char *p = name + 4; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        v = v * 10 + (*p - '0');
    }
    return v;
}

static int by_step(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

attn_status attn_model_steps(const char *name, long *steps, int max, int *n, attn_error *err)
{
    char dir[PATH_MAX], ck[PATH_MAX];
    attn_status st;
    *n = 0;
    if ((st = attn_model_find(name, dir, sizeof dir, err)) ||
        (st = attn_path_format(ck, sizeof ck, err, "%s/checkpoints", dir)))
        return st;
    DIR *d = opendir(ck);
    if (!d) return ATTN_OK; /* no checkpoints: a model as trained, nothing more */
    for (struct dirent *e; (e = readdir(d)) && *n < max;) {
        char path[PATH_MAX];
        struct stat sb;
        long s = step_of(e->d_name);
        if (s < 0 || attn_path_format(path, sizeof path, NULL, "%s/%s/config.json", ck, e->d_name) ||
            stat(path, &sb) != 0)
            continue;
        steps[(*n)++] = s;
    }
    closedir(d);
    qsort(steps, (size_t)*n, sizeof *steps, by_step);
    return ATTN_OK;
}

attn_status attn_model_checkpoint(const char *name, long step, char *out, size_t size, attn_error *err)
{
    long steps[ATTN_MAX_STEPS];
    int n;
    char dir[PATH_MAX], list[256] = "";
    attn_status st;
    if ((st = attn_model_find(name, dir, sizeof dir, err)) || (st = attn_model_steps(dir, steps, ATTN_MAX_STEPS, &n, err)))
        return st;
    for (int i = 0; i < n; i++) {
        if (steps[i] == step) return attn_path_format(out, size, err, "%s/checkpoints/step%ld", dir, step);
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%ld", i ? ", " : "", steps[i]);
    }
    if (!n)
        return attn_fail(err, ATTN_ERR_CONFIG, "checkpoint: model '%s' has no training checkpoints (no %s/checkpoints/"
                         "step<N>/)", name, dir);
    return attn_fail(err, ATTN_ERR_CONFIG, "checkpoint: model '%s' has no step %ld (its steps: %s)", name, step, list);
}

attn_status attn_model_base(const char *name, char *base, size_t size, long *step, attn_error *err)
{
    char dir[PATH_MAX];
    attn_status st;
    *step = -1;
    if ((st = attn_model_find(name, dir, sizeof dir, err))) return st;
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
    char *last = strrchr(dir, '/');
    long s = last ? step_of(last + 1) : -1;
    if (s >= 0) {
        *last = '\0';
        char *ck = strrchr(dir, '/');
        if (ck && ck > dir && !strcmp(ck + 1, "checkpoints")) {
            *ck = '\0';
            *step = s;
            return attn_path_format(base, size, err, "%s", dir);
        }
        *last = '/';
    }
    return attn_path_format(base, size, err, "%s", dir);
}
