/* arena.c — a store of trace arenas: blocks lent, given back, lent again. */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "arena.h"

#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

/* 64-byte aligned; a block of 8 MiB or more is 2 MiB aligned, a whole number
 * of 2 MiB, and asks for transparent huge pages. */
static void *block_alloc(size_t bytes, size_t *size)
{
    if (bytes < 4 * HUGE_PAGE) {
        *size = (bytes + 63) / 64 * 64;
        return aligned_alloc(64, *size ? *size : 64);
    }
    void *p = NULL;
    *size = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    if (posix_memalign(&p, HUGE_PAGE, *size)) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, *size, MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
    return p;
}

void attn_arena_init(attn_arena *a)
{
    *a = (attn_arena){0};
    pthread_mutex_init(&a->lock, NULL);
}

void attn_arena_free(attn_arena *a)
{
    if (!a) return;
    for (int i = 0; i < a->n_idle; i++) free(a->idle[i]);
    pthread_mutex_destroy(&a->lock);
    *a = (attn_arena){0};
}

/* Idle block i leaves the store (the last one takes its place). */
static void *unidle(attn_arena *a, int i)
{
    void *p = a->idle[i];
    a->idle[i] = a->idle[a->n_idle - 1];
    a->idle_bytes[i] = a->idle_bytes[a->n_idle - 1];
    a->n_idle--;
    return p;
}

void *attn_arena_take(attn_arena *a, size_t bytes, size_t *size)
{
    if (!a) return block_alloc(bytes, size);
    pthread_mutex_lock(&a->lock);
    int best = -1; /* the smallest idle block that holds bytes and is at most twice that */
    for (int i = 0; i < a->n_idle; i++)
        if (a->idle_bytes[i] >= bytes && a->idle_bytes[i] / 2 <= bytes &&
            (best < 0 || a->idle_bytes[i] < a->idle_bytes[best]))
            best = i;
    void *p = NULL;
    if (best >= 0) {
        *size = a->idle_bytes[best];
        p = unidle(a, best);
        a->lends++;
    } else {
        while (a->n_idle) free(unidle(a, 0)); /* what the store holds never stands in a trace's way */
        if ((p = block_alloc(bytes, size))) a->maps++;
    }
    pthread_mutex_unlock(&a->lock);
    return p;
}

void attn_arena_give(attn_arena *a, void *block, size_t size)
{
    if (!block) return;
    if (!a) {
        free(block);
        return;
    }
    pthread_mutex_lock(&a->lock);
    if (a->n_idle == ATTN_ARENA_IDLE) { /* full: the smallest of the idle ones and this one goes */
        int small = 0;
        for (int i = 1; i < a->n_idle; i++)
            if (a->idle_bytes[i] < a->idle_bytes[small]) small = i;
        if (a->idle_bytes[small] < size) {
            free(unidle(a, small));
        } else {
            free(block);
            block = NULL;
        }
    }
    if (block) {
        a->idle[a->n_idle] = block;
        a->idle_bytes[a->n_idle++] = size;
    }
    pthread_mutex_unlock(&a->lock);
}

double attn_arena_idle(attn_arena *a)
{
    if (!a) return 0;
    double total = 0;
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < a->n_idle; i++) total += (double)a->idle_bytes[i];
    pthread_mutex_unlock(&a->lock);
    return total;
}

attn_budget attn_arena_budget(attn_arena *a, attn_budget b)
{
    if (!a || b.source != ATTN_BUDGET_ULIMIT) return b;
    b.mapped -= attn_arena_idle(a);
    b.bytes = fmin(fmax(b.limit - b.mapped - b.reserve, 0), fmax(b.ceiling - b.held, 0));
    return b;
    return b;
}
