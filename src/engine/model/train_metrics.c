/* train_metrics.c — checkpoints/metrics.json read into arrays (train_metrics.h). */
#include "train_metrics.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/base/paths.h"

#define METRICS_LIMIT (64u << 20)

static const char *const KEYS[ATTN_METRIC_COUNT] = {"-1", "induction", "first"};

const char *attn_metric_key(attn_metric m)
{
    return m >= 0 && m < ATTN_METRIC_COUNT ? KEYS[m] : "";
}

void attn_metrics_free(attn_metrics *m)
{
    free(m->step);
    free(m->train_loss);
    free(m->heldout_loss);
    free(m->icl_drop);
    for (int k = 0; k < ATTN_METRIC_COUNT; k++) free(m->head[k]);
    memset(m, 0, sizeof *m);
}

int attn_metrics_find(const attn_metrics *m, long step)
{
    for (int s = 0; s < m->n; s++)
        if (m->step[s] == step) return s;
    return -1;
}

/* o[key] as a finite number into *out; name says where, for the message. */
static attn_status number(const cJSON *o, const char *key, const char *name, double *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char what[96];
    snprintf(what, sizeof what, "%s%s", name, key);
    if (!v) return attn_fail(err, ATTN_ERR_FORMAT, "'%s' is missing", what);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return attn_json_wrong(what, "a number", v, err);
    *out = v->valuedouble;
    return ATTN_OK;
}

/* A whole number in lo .. hi. */
static attn_status whole(const cJSON *o, const char *key, const char *name, long lo, long hi, long *out, attn_error *err)
{
    double v = 0;
    attn_status st = number(o, key, name, &v, err);
    if (st) return st;
    if (v != floor(v) || v < (double)lo || v > (double)hi)
        return attn_fail(err, ATTN_ERR_FORMAT, "'%s%s' must be a whole number from %ld to %ld, not %g", name, key, lo,
                         hi, v);
    *out = (long)v;
    return ATTN_OK;
}

/* The layers × heads grid, from the first snapshot's heads: the largest layer and head named. */
static attn_status grid(const cJSON *heads, int *layers, int *nh, attn_error *err)
{
    long l = 0, h = 0, ml = -1, mh = -1;
    const cJSON *e;
    char name[48];
    int i = 0;
    cJSON_ArrayForEach(e, heads) {
        snprintf(name, sizeof name, "snapshot 0: heads[%d].", i++);
        attn_status st;
        if ((st = whole(e, "layer", name, 0, 4095, &l, err)) || (st = whole(e, "head", name, 0, 4095, &h, err))) return st;
        if (l > ml) ml = l;
        if (h > mh) mh = h;
    }
    if (ml < 0) return attn_fail(err, ATTN_ERR_FORMAT, "snapshot 0: 'heads' is empty");
    *layers = (int)ml + 1;
    *nh = (int)mh + 1;
    if ((long)*layers * *nh != cJSON_GetArraySize(heads))
        return attn_fail(err, ATTN_ERR_FORMAT, "snapshot 0: %d heads listed, not one per layer and head (%d × %d)",
                         cJSON_GetArraySize(heads), *layers, *nh);
    return ATTN_OK;
}

/* Snapshot s's heads into m: every (layer, head) once, each with every metric. */
static attn_status read_heads(const cJSON *heads, int s, attn_metrics *m, attn_error *err)
{
    char name[64];
    int n = m->layers * m->heads, i = 0;
    if (!cJSON_IsArray(heads) || cJSON_GetArraySize(heads) != n)
        return attn_fail(err, ATTN_ERR_FORMAT, "snapshot %d: 'heads' must list %d heads (%d layers × %d), as snapshot 0",
                         s, n, m->layers, m->heads);
    const cJSON *e;
    cJSON_ArrayForEach(e, heads) {
        long l = 0, h = 0;
        attn_status st;
        snprintf(name, sizeof name, "snapshot %d: heads[%d].", s, i++);
        if ((st = whole(e, "layer", name, 0, m->layers - 1, &l, err)) ||
            (st = whole(e, "head", name, 0, m->heads - 1, &h, err)))
            return st;
        size_t at = ((size_t)s * m->layers + (size_t)l) * m->heads + (size_t)h;
        if (!isnan(m->head[0][at]))
            return attn_fail(err, ATTN_ERR_FORMAT, "snapshot %d: layer %ld head %ld is listed twice", s, l, h);
        for (int k = 0; k < ATTN_METRIC_COUNT; k++)
            if ((st = number(e, KEYS[k], name, &m->head[k][at], err))) return st;
    }
    return ATTN_OK;
}

static attn_status read_snapshots(const cJSON *root, attn_metrics *m, attn_error *err)
{
    const cJSON *snaps = cJSON_GetObjectItemCaseSensitive(root, "snapshots");
    attn_status st;
    if (!cJSON_IsArray(snaps)) return attn_json_wrong("snapshots", "a list", snaps, err);
    int n = cJSON_GetArraySize(snaps);
    if (n < 1) return attn_fail(err, ATTN_ERR_FORMAT, "'snapshots' is empty");
    const cJSON *heads0 = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(snaps, 0), "heads");
    if (!cJSON_IsArray(heads0)) return attn_json_wrong("snapshot 0: heads", "a list", heads0, err);
    if ((st = grid(heads0, &m->layers, &m->heads, err))) return st;
    size_t cells = (size_t)n * m->layers * m->heads;
    m->step = malloc((size_t)n * sizeof *m->step);
    m->train_loss = malloc((size_t)n * sizeof(double));
    m->heldout_loss = malloc((size_t)n * sizeof(double));
    m->icl_drop = malloc((size_t)n * sizeof(double));
    for (int k = 0; k < ATTN_METRIC_COUNT; k++) m->head[k] = malloc(cells * sizeof(double));
    if (!m->step || !m->train_loss || !m->heldout_loss || !m->icl_drop || !m->head[0] || !m->head[1] || !m->head[2])
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < cells; i++) m->head[0][i] = NAN; /* marks a head not yet read */
    const cJSON *e;
    int s = 0;
    cJSON_ArrayForEach(e, snaps) {
        char name[32];
        snprintf(name, sizeof name, "snapshot %d: ", s);
        if (!cJSON_IsObject(e)) return attn_json_wrong(name, "an object", e, err);
        if ((st = whole(e, "step", name, 0, LONG_MAX / 2, &m->step[s], err)) ||
            (st = number(e, "train_loss", name, &m->train_loss[s], err)) ||
            (st = number(e, "heldout_loss", name, &m->heldout_loss[s], err)))
            return st;
        m->icl_drop[s] = NAN; /* optional: files written before it was measured have none */
        if (cJSON_GetObjectItemCaseSensitive(e, "icl_drop") && (st = number(e, "icl_drop", name, &m->icl_drop[s], err)))
            return st;
        if (s > 0 && m->step[s] <= m->step[s - 1])
            return attn_fail(err, ATTN_ERR_FORMAT, "snapshot %d: step %ld does not follow step %ld", s, m->step[s],
                             m->step[s - 1]);
        if ((st = read_heads(cJSON_GetObjectItemCaseSensitive(e, "heads"), s, m, err))) return st;
        m->n = ++s;
    }
    return ATTN_OK;
}

attn_status attn_metrics_load(const char *dir, attn_metrics *m, attn_error *err)
{
    char path[PATH_MAX], *text = NULL;
    size_t size;
    attn_status st;
    memset(m, 0, sizeof *m);
    if ((st = attn_path_format(path, sizeof path, err, "%s/checkpoints/metrics.json", dir))) return st;
    if ((st = attn_file_read(path, METRICS_LIMIT, &text, &size, err))) return errno == ENOENT ? ATTN_OK : st;
    cJSON *root = NULL;
    if (!(st = attn_json_parse(text, size, &root, err)))
        st = cJSON_IsObject(root) ? read_snapshots(root, m, err) : attn_fail(err, ATTN_ERR_FORMAT, "not a JSON object");
    cJSON_Delete(root);
    free(text);
    if (st) {
        attn_metrics_free(m);
        if (!strstr(err->msg, path)) attn_error_prefix(err, path);
    }
    return st;
}
