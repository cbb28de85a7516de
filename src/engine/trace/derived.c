/* derived.c — a trace's stages made from its others when first read. */
#include "derived.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>


/* One stage: out = pre + mask, mask broadcast over the heads. */
typedef struct {
    attn_lazy lazy; /* first: what the tensor points to */
    pthread_mutex_t *lock; /* the trace's */
    atomic_int done;
    const float *pre, *mask;
    float *out;
    int b, h, s, t;
} derived_stage;

/* A trace's fillers: one a layer, released with the trace. */
typedef struct {
    attn_lazy owner; /* first: the trace's `derived`; only its release is used */
    pthread_mutex_t lock;
    int n;
    derived_stage stage[];
} derived_set;

/* out[b,j,i,:] = pre[b,j,i,:] + mask[b,0,i,:]: attn_op_apply_mask's sum, which the
 * pass's softmax read */
static void add_mask(const derived_stage *d)
{
    size_t st = (size_t)d->s * d->t;
    #pragma omp parallel for collapse(2) if ((size_t)d->b * d->h * st > 65536)
    for (int bi = 0; bi < d->b; bi++)
        for (int j = 0; j < d->h; j++) {
            const float *p = d->pre + ((size_t)bi * d->h + j) * st, *m = d->mask + (size_t)bi * st;
            float *o = d->out + ((size_t)bi * d->h + j) * st;
            for (size_t c = 0; c < st; c++) o[c] = p[c] + m[c];
        }
}

static int fill(attn_lazy *self, size_t row0, size_t n)
{
    derived_stage *d = (derived_stage *)self;
    (void)row0, (void)n; /* whole: every row at once */
    if (atomic_load_explicit(&d->done, memory_order_acquire)) return 0;
    pthread_mutex_lock(d->lock);
    if (!atomic_load_explicit(&d->done, memory_order_relaxed)) {
        add_mask(d);
        atomic_store_explicit(&d->done, 1, memory_order_release);
    }
    pthread_mutex_unlock(d->lock);
    return 0;
}

static void release_stage(attn_lazy *self)
{
    (void)self; /* the set frees them all */
}

static void release_set(attn_lazy *self)
{
    derived_set *d = (derived_set *)self;
    pthread_mutex_destroy(&d->lock);
    free(d);
}

/* tr's set, made for its layers (the tensors' largest layer index + 1) if it has none. */
static derived_set *set_of(attn_trace *tr, attn_error *err)
{
    if (tr->derived) return (derived_set *)tr->derived;
    int n = 1;
    for (int i = 0; i < tr->n_tensors; i++)
        if (tr->tensors[i].layer >= n) n = tr->tensors[i].layer + 1;
    derived_set *d = calloc(1, sizeof *d + (size_t)n * sizeof d->stage[0]);
    if (!d) {
        attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        return NULL;
    }
    d->owner = (attn_lazy){NULL, release_set, false};
    pthread_mutex_init(&d->lock, NULL);
    d->n = n;
    tr->derived = &d->owner;
    return d;
}

attn_status attn_derived_masked(attn_trace *tr, int layer, attn_tensor *t, const float *pre, const float *mask,
                                attn_error *err)
{
    derived_set *d = set_of(tr, err);
    if (!d) return ATTN_ERR_NOMEM;
    if (layer < 0 || layer >= d->n) return attn_fail(err, ATTN_ERR_CONFIG, "layer %d has no derived stages", layer);
    derived_stage *s = &d->stage[layer];
    s->lazy = (attn_lazy){fill, release_stage, true};
    s->lock = &d->lock;
    atomic_init(&s->done, 0);
    s->pre = pre, s->mask = mask, s->out = t->data;
    s->b = (int)t->shape[0], s->h = (int)t->shape[1], s->s = (int)t->shape[2], s->t = (int)t->shape[3];
    t->lazy = &s->lazy;
    return ATTN_OK;
}
