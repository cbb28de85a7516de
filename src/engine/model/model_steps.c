/* model_steps.c — a model's training checkpoints: the folders
 * DIR/checkpoints/step<N>/ that scripts/train_model.py --checkpoints saves,
 * each a complete model folder (model.h), N the training step. */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/base/paths.h"
#include "engine/model/model.h"

/* "step400" -> 400; -1 for any other name. One spelling a step: no sign, no
 * leading zero ("step025" is no step), so that listing a folder and looking
 * a step up (which formats "step%ld") always agree. */
static long step_of(const char *name)
{
    const char *d = name + 4;
    if (strncmp(name, "step", 4) || !*d || strlen(d) > 9 || (d[0] == '0' && d[1])) return -1;
    long v = 0;
    for (const char *p = d; *p; p++) {
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

/* Whether ck/<entry> is a snapshot: a step's name and a config.json in it. */
static long snapshot_step(const char *ck, const char *entry)
{
    char path[PATH_MAX];
    struct stat sb;
    long s = step_of(entry);
    if (s < 0 || attn_path_format(path, sizeof path, NULL, "%s/%s/config.json", ck, entry) || stat(path, &sb) != 0)
        return -1;
    return s;
}

/* Every step of model folder dir, sorted, into *steps (malloc'd, or NULL
 * when none; the caller frees it). */
static attn_status all_steps(const char *dir, long **steps, int *n, attn_error *err)
{
    char ck[PATH_MAX];
    attn_status st;
    int cap = 0;
    *steps = NULL;
    *n = 0;
    if ((st = attn_path_format(ck, sizeof ck, err, "%s/checkpoints", dir))) return st;
    DIR *d = opendir(ck);
    if (!d) return ATTN_OK; /* no checkpoints: a model as trained, nothing more */
    for (struct dirent *e; (e = readdir(d));) {
        long s = snapshot_step(ck, e->d_name);
        if (s < 0) continue;
        if (*n == cap) {
            long *grown = cap < (1 << 20) ? realloc(*steps, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *grown) : NULL;
            if (!grown) {
                closedir(d);
                free(*steps);
                *steps = NULL;
                *n = 0;
                return attn_fail(err, ATTN_ERR_NOMEM, "out of memory listing %s", ck);
            }
            *steps = grown;
        }
        (*steps)[(*n)++] = s;
    }
    closedir(d);
    if (*n) qsort(*steps, (size_t)*n, sizeof **steps, by_step);
    return ATTN_OK;
}

attn_status attn_model_steps(const char *name, long *steps, int max, int *n, attn_error *err)
{
    char dir[PATH_MAX];
    long *all;
    int total;
    attn_status st;
    *n = 0;
    if ((st = attn_model_find(name, dir, sizeof dir, err)) || (st = all_steps(dir, &all, &total, err))) return st;
    if (max < 1) max = 0;
    *n = total < max ? total : max;
    /* more than max: max of them spread evenly, the first and the last among them */
    for (int i = 0; i < *n; i++)
        steps[i] = all[*n < 2 || total <= max ? i : (int)((long long)i * (total - 1) / (*n - 1))];
    free(all);
    return ATTN_OK;
}

/* "0, 25, 50" into list (size bytes): whole numbers only; when they do not
 * all fit, as many as do, then "…". Returns whether all fit. */
static bool list_steps(const long *steps, int n, char *list, size_t size)
{
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < n; i++) {
        char one[32];
        int k = snprintf(one, sizeof one, "%s%ld", i ? ", " : "", steps[i]);
        if (len + (size_t)k + sizeof ", …" > size) {
            snprintf(list + len, size - len, "%s…", i ? ", " : "");
            return false;
        }
        memcpy(list + len, one, (size_t)k + 1);
        len += (size_t)k;
    }
    return true;
}

attn_status attn_model_checkpoint(const char *name, long step, char *out, size_t size, attn_error *err)
{
    char dir[PATH_MAX], ck[PATH_MAX], entry[32], list[200];
    long *steps;
    int n;
    attn_status st;
    if ((st = attn_model_find(name, dir, sizeof dir, err)) ||
        (st = attn_path_format(ck, sizeof ck, err, "%s/checkpoints", dir)))
        return st;
    snprintf(entry, sizeof entry, "step%ld", step);
    if (step >= 0 && snapshot_step(ck, entry) == step) /* the listing's own test, whatever their number */
        return attn_path_format(out, size, err, "%s/%s", ck, entry);
    if ((st = all_steps(dir, &steps, &n, err))) return st;
    /* the list gets what the message leaves after the name, so a long path
     * shortens the list (still ending "…)") rather than cutting its end off */
    int around = snprintf(NULL, 0, "checkpoint: model '%s' has no step %ld (its %d steps: )", name, step, n);
    size_t room = sizeof err->msg > (size_t)around + sizeof "…" ? sizeof err->msg - (size_t)around : sizeof "…";
    bool whole = list_steps(steps, n, list, room < sizeof list ? room : sizeof list);
    free(steps);
    if (!n)
        return attn_fail(err, ATTN_ERR_CONFIG, "checkpoint: model '%s' has no training checkpoints (no %s/checkpoints/"
                         "step<N>/)", name, dir);
    if (whole) return attn_fail(err, ATTN_ERR_CONFIG, "checkpoint: model '%s' has no step %ld (its steps: %s)", name, step, list);
    return attn_fail(err, ATTN_ERR_CONFIG, "checkpoint: model '%s' has no step %ld (its %d steps: %s)", name, step, n,
                     list);
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
