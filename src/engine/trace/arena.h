/* arena.h — memory for traces' tensors, kept between recomputations.
 *
 * A trace holds all its tensors in one block (trace.h's arena). Freshly
 * mapped, every page of it is zeroed by the kernel the first time it is
 * written: for a model's traced pass that is gigabytes (a SmolLM2-135M trace
 * of 512 tokens holds about 2 GiB), and the zeroing took a quarter to a third
 * of the pass. A toggle in the window recomputes a trace of the same shape,
 * so a store keeps the blocks of freed traces and lends them again:
 *
 *     attn_arena store;  attn_arena_init(&store);          the caller owns it
 *     attn_inputs in = {.arena = &store, ...};
 *     attn_trace_run(cfg, &in, &tr, &err);                 tr borrows a block
 *     attn_trace_free(&tr);                                the block goes back, still mapped
 *     attn_trace_run(cfg, &in, &tr, &err);                 same shape: no new block
 *     attn_trace_free(&tr);  attn_arena_free(&store);      traces first, then the store
 *
 * A block is lent to a trace whose arena needs at least half of it, so a
 * shorter text reuses a longer one's block but a tiny trace does not hold a
 * huge one. When no idle block fits, the idle ones are released before a new
 * one is mapped: what the store holds idle never stands in the way of a
 * trace, and a budget may count it as available (attn_arena_budget).
 *
 * Large blocks are 2 MiB aligned and ask for transparent huge pages
 * (madvise(MADV_HUGEPAGE)): a few hundred faults instead of hundreds of
 * thousands where the system gives them, harmless where it does not.
 *
 * Thread-safe: the window's worker takes blocks while the main thread frees
 * the trace it replaces. */
#ifndef ATTN_ARENA_H
#define ATTN_ARENA_H

#include <pthread.h>
#include <stddef.h>

#include "engine/base/budget.h"

#define ATTN_ARENA_IDLE 4 /* idle blocks kept: the trace shown, its compare trace, and the job's two */

typedef struct {
    pthread_mutex_t lock;
    void *idle[ATTN_ARENA_IDLE];        /* blocks no trace uses, still mapped */
    size_t idle_bytes[ATTN_ARENA_IDLE]; /* their sizes */
    int n_idle;
    long maps;  /* blocks allocated over the store's life: a recomputation that reuses one adds none */
    long lends; /* blocks lent again instead of allocated */
} attn_arena;

void attn_arena_init(attn_arena *a);

/* Releases the idle blocks. Every trace that borrowed from a must be freed first. */
void attn_arena_free(attn_arena *a);

/* A block of at least `bytes`, 64-byte aligned (2 MiB for large ones); its
 * size in *size. a NULL: a fresh block, as without a store. NULL when out of
 * memory. */
void *attn_arena_take(attn_arena *a, size_t bytes, size_t *size);

/* Gives back a block from attn_arena_take (size as it gave); a NULL: frees it. */
void attn_arena_give(attn_arena *a, void *block, size_t size);

/* Bytes of the idle blocks: mapped, but released before any new block. */
double attn_arena_idle(attn_arena *a);

/* b with a's idle blocks counted as available where the address-space limit
 * decided it (they are mapped, so the limit's room left them out); a NULL or
 * another bound: b unchanged. */
attn_budget attn_arena_budget(attn_arena *a, attn_budget b);

#endif
