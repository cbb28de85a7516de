/* derived.c — a layer's masked scores made from its scores and mask when first read. */
#include "derived.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "engine/attention/ops.h"

/* One layer's masked_scores (b,h,s,t): out = pre + mask, made once. */
typedef struct {
    attn_lazy lazy; /* first: what the tensor points to */
    pthread_mutex_t *lock; /* the set's */
    atomic_int done;
    const float *pre, *mask;
    float *out;
    int b, h, s, t;
} derived_stage;

/* A trace's fillers, released with the trace. */
typedef struct {
    attn_lazy owner; /* first: the trace's `derived`; only its release is used */
    pthread_mutex_t lock;
    derived_stage **stage;
    int n, cap;
} derived_set;

/* The sum by attn_op_apply_mask itself, the function whose sums the pass's
 * softmax read: the same bits. */
static int fill(attn_lazy *self, size_t row0, size_t n)
{
    derived_stage *d = (derived_stage *)self;
    (void)row0, (void)n; /* whole: every row at once */
    if (atomic_load_explicit(&d->done, memory_order_acquire)) return 0;
    pthread_mutex_lock(d->lock);
    if (!atomic_load_explicit(&d->done, memory_order_relaxed)) {
        attn_op_apply_mask(d->pre, d->mask, d->out, d->b, d->h, d->s, d->t);
        atomic_store_explicit(&d->done, 1, memory_order_release);
    }
    pthread_mutex_unlock(d->lock);
    return 0;
}

static void release_set(attn_lazy *self)
{
    derived_set *d = (derived_set *)self;
    for (int i = 0; i < d->n; i++) free(d->stage[i]);
    free(d->stage);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* tr's set, made if it has none; NULL out of memory. */
static derived_set *set_of(attn_trace *tr)
{
    if (tr->derived) return (derived_set *)tr->derived;
    derived_set *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->owner = (attn_lazy){NULL, release_set, false};
    pthread_mutex_init(&d->lock, NULL);
    tr->derived = &d->owner;
    return d;
}

attn_status attn_derived_masked(attn_trace *tr, attn_tensor *t, const float *pre, const float *mask,
                                attn_error *err)
{
    derived_set *d = set_of(tr);
    if (d && d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        derived_stage **grown = realloc(d->stage, (size_t)cap * sizeof *grown);
        if (grown) d->stage = grown, d->cap = cap;
    }
    derived_stage *s = d && d->n < d->cap ? calloc(1, sizeof *s) : NULL;
    if (!s) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    *s = (derived_stage){.lazy = {fill, NULL, true}, .lock = &d->lock, .pre = pre, .mask = mask, .out = t->data,
                         .b = (int)t->shape[0], .h = (int)t->shape[1], .s = (int)t->shape[2], .t = (int)t->shape[3]};
    atomic_init(&s->done, 0);
    d->stage[d->n++] = s;
    t->lazy = &s->lazy;
    return ATTN_OK;
}
