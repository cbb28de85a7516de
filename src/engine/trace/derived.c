/* derived.c — a trace's stages made from what it holds when first read. */
#include "derived.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
    const float *pre, *mask;
    int b, h, s, t;
} masked_sum;

/* One stage: made by make(ctx, out) once (add_mask over sum, the only kind so far). */
typedef struct {
    attn_lazy lazy; /* first: what the tensor points to */
    pthread_mutex_t *lock; /* the set's */
    atomic_int done;
    int (*make)(void *ctx, float *out);
    void *ctx;
    float *out;
    masked_sum sum; /* ctx of a masked_scores stage */
} derived_stage;

/* A trace's fillers, released with the trace. */
typedef struct {
    attn_lazy owner; /* first: the trace's `derived`; only its release is used */
    pthread_mutex_t lock;
    derived_stage **stage;
    int n, cap;
} derived_set;

/* out[b,j,i,:] = pre[b,j,i,:] + mask[b,0,i,:]: attn_op_apply_mask's sum, which
 * the pass's softmax read */
static int add_mask(void *ctx, float *out)
{
    const masked_sum *d = ctx;
    size_t st = (size_t)d->s * d->t;
    #pragma omp parallel for collapse(2) if ((size_t)d->b * d->h * st > 65536)
    for (int bi = 0; bi < d->b; bi++)
        for (int j = 0; j < d->h; j++) {
            const float *p = d->pre + ((size_t)bi * d->h + j) * st, *m = d->mask + (size_t)bi * st;
            float *o = out + ((size_t)bi * d->h + j) * st;
            for (size_t c = 0; c < st; c++) o[c] = p[c] + m[c];
        }
    return 0;
}

static int fill(attn_lazy *self, size_t row0, size_t n)
{
    derived_stage *d = (derived_stage *)self;
    int rc = 0;
    (void)row0, (void)n; /* whole: every row at once */
    if (atomic_load_explicit(&d->done, memory_order_acquire)) return 0;
    pthread_mutex_lock(d->lock);
    if (!atomic_load_explicit(&d->done, memory_order_relaxed)) {
        rc = d->make(d->ctx, d->out);
        atomic_store_explicit(&d->done, 1, memory_order_release); /* out of memory: it reads 0, as logits do */
    }
    pthread_mutex_unlock(d->lock);
    return rc;
}

static void release_stage(attn_lazy *self)
{
    (void)self; /* the set frees them all */
}

static void release_set(attn_lazy *self)
{
    derived_set *d = (derived_set *)self;
    for (int i = 0; i < d->n; i++) {
        free(d->stage[i]);
    }
    free(d->stage);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* tr's set, made if it has none. */
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

/* A new stage of tr's set for t, not yet its lazy; NULL out of memory. */
static derived_stage *new_stage(attn_trace *tr, attn_tensor *t)
{
    derived_set *d = set_of(tr);
    if (!d) return NULL;
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        derived_stage **grown = realloc(d->stage, (size_t)cap * sizeof *grown);
        if (!grown) return NULL;
        d->stage = grown, d->cap = cap;
    }
    derived_stage *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->lazy = (attn_lazy){fill, release_stage, true};
    s->lock = &d->lock;
    atomic_init(&s->done, 0);
    s->out = t->data;
    d->stage[d->n++] = s;
    return s;
}

attn_status attn_derived_masked(attn_trace *tr, attn_tensor *t, const float *pre, const float *mask,
                                attn_error *err)
{
    derived_stage *s = new_stage(tr, t);
    if (!s) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    s->sum = (masked_sum){pre, mask, (int)t->shape[0], (int)t->shape[1], (int)t->shape[2], (int)t->shape[3]};
    s->make = add_mask, s->ctx = &s->sum;
    t->lazy = &s->lazy;
    return ATTN_OK;
}
