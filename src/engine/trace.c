/* trace.c — ownership, iteration and shape helpers for attn_trace. */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void attn_trace_free(attn_trace *tr)
{
    if (!tr) return;
    attn_config_free(&tr->cfg);
    attn_tokens_free(&tr->tokens);
    attn_tokens_free(&tr->source);
    free(tr->tensors);
    free(tr->arena);
    free(tr->masked_rows);
    memset(tr, 0, sizeof *tr);
}

const attn_tensor *attn_trace_next(const attn_trace *tr, const attn_tensor *prev)
{
    const attn_tensor *next = prev ? prev + 1 : tr->tensors;
    return next && next < tr->tensors + tr->n_tensors ? next : NULL;
}

const attn_tensor *attn_trace_find(const attn_trace *tr, const char *name)
{
    for (int i = 0; i < tr->n_tensors; i++)
        if (strcmp(tr->tensors[i].name, name) == 0) return &tr->tensors[i];
    return NULL;
}

/* Value of one dimension name ("b", "g*k", "1") under dims. */
static int64_t dim_value(const char *name, size_t len, const attn_dims *d)
{
    if (len == 3 && !strncmp(name, "g*k", 3)) return (int64_t)d->g * d->k;
    if (len != 1) return -1;
    switch (name[0]) {
    case 'b': return d->b;
    case 's': return d->s;
    case 't': return d->t;
    case 'n': return d->n;
    case 'P': return d->P;
    case 'd': return d->d;
    case 'h': return d->h;
    case 'g': return d->g;
    case 'k': return d->k;
    case '1': return 1;
    default: return -1;
    }
}

int attn_stage_shape(const attn_stage_info *info, const attn_dims *dims, int64_t shape[ATTN_MAX_NDIM])
{
    int nd = 0;
    for (const char *p = info->dims; *p && nd < ATTN_MAX_NDIM;) {
        size_t len = strcspn(p, ",");
        shape[nd++] = dim_value(p, len, dims);
        p += len + (p[len] == ',');
    }
    return nd;
}

const char *attn_tensor_shape_str(const attn_tensor *t, char *buf, size_t size)
{
    size_t used = 0;
    const char *p = t->info ? t->info->dims : NULL;
    used += (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < t->ndim && used < size; i++) {
        if (p) {
            size_t len = strcspn(p, ",");
            if (len == 1 && p[0] == '1')
                used += (size_t)snprintf(buf + used, size - used, "%s1", i ? ", " : "");
            else
                used += (size_t)snprintf(buf + used, size - used, "%s%.*s=%lld", i ? ", " : "", (int)len, p,
                                         (long long)t->shape[i]);
            p += len + (p[len] == ',');
        } else {
            used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        }
    }
    if (used < size) snprintf(buf + used, size - used, ")");
    return buf;
}
