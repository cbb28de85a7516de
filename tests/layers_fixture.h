/* layers_fixture.h — a trace of several layers for tests, made from a
 * single-layer run: layer l holds the run's tensors times (l + 1), named
 * layers.l.<stage>. Static: include it once per test program. */
#ifndef TEST_LAYERS_FIXTURE_H
#define TEST_LAYERS_FIXTURE_H

#include <stdlib.h>

#include "engine/trace/trace.h"

static void make_layers(attn_trace *tr, const attn_trace *src, int n)
{
    free(tr->tensors);
    free(tr->arena);
    tr->arena = NULL;
    tr->tensors = calloc((size_t)(n * src->n_tensors), sizeof *tr->tensors);
    assert_non_null(tr->tensors);
    tr->n_tensors = 0;
    tr->n_layers = n;
    for (int l = 0; l < n; l++)
        for (int i = 0; i < src->n_tensors; i++) {
            attn_tensor *t = &tr->tensors[tr->n_tensors++];
            *t = src->tensors[i];
            t->layer = l;
            attn_tensor_name(l, n, src->tensors[i].info->name, t->name, sizeof t->name);
        }
    attn_error err;
    assert_int_equal(attn_trace_alloc_arena(tr, &err), ATTN_OK);
    for (int k = 0; k < tr->n_tensors; k++) {
        const attn_tensor *from = &src->tensors[k % src->n_tensors];
        for (size_t e = 0; e < from->count; e++) tr->tensors[k].data[e] = from->data[e] * (float)(k / src->n_tensors + 1);
    }
}

#endif
