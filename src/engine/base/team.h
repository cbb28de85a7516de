/* team.h — the threads of one parallel region meeting at a barrier, spinning
 * a while before they sleep, each learning how long a spin pays.
 *
 * A decoding step is one OpenMP parallel region (kv_step.c), and its threads
 * meet after every product: five times a layer, about 110 times a token.
 * libgomp's barrier, under the passive wait policy attnlab runs with (main.c),
 * sleeps at once, and each sleep costs a wake-up: on a virtual machine tens of
 * µs. Alone on the 2-core test machine SmolLM2-135M decoded at 11.4 ms/token
 * so, and at 8.4 with libgomp spinning; but beside one competing process the
 * spinning took 28 ms/token where sleeping took 12.5, its spins burning the
 * core that the thread it waits for, or the other process, needed.
 *
 * attn_team_wait spins for a time of the calling thread's own, then sleeps
 * (a futex). A wait that ends while spinning doubles that time (and a little
 * more, so that it grows from nothing), up to 0.05 ms; one that has to sleep
 * quarters it. Alone, the thread waited for comes
 * within the spin and no one sleeps. Beside a competitor it is often
 * descheduled for a whole time slice, and a spin for it only keeps a core
 * from the threads that need one: the spins shrink to nothing, a passive wait,
 * and then one wait in 128 spins in full to see whether spinning pays again.
 *
 * Between two waits the threads either take fixed shares of the work
 * (attn_wmat_team_share) or claim chunks of it one at a time
 * (attn_team_claim, attn_team_claim_own), which keeps every thread busy to
 * the end of the round when one of them starts late. */
#ifndef ATTN_TEAM_H
#define ATTN_TEAM_H

#include <stdatomic.h>

enum { ATTN_TEAM_OWN_MAX = 16 }; /* attn_team_claim_own's teams: larger ones claim as attn_team_claim */

/* A counter alone on its cache line. */
typedef struct {
    _Alignas(64) _Atomic(unsigned long long) n;
} attn_team_line;

/* One barrier for the threads of a parallel region: zeroed before the region,
 * then used by all of them for as many rounds as they like. */
typedef struct {
    atomic_uint arrived; /* threads at the barrier in this round */
    atomic_uint round;   /* rounds completed; a sleeping thread waits for it to change */
    atomic_int sleepers; /* threads asleep or going to sleep (one of the round before may
                          * not have counted itself out yet: a wake-up too many, harmless) */
    atomic_int next[2];  /* the next unclaimed chunk of the round's work (attn_team_claim):
                          * round r's is next[r % 2]; the other is zeroed as round r ends */
    /* attn_team_claim_own: thread t's share, the chunks taken from its front
     * (low 32 bits) and from its back (high 32), [r % 2][t].n for round r;
     * each on a cache line of its own (and apart from round and arrived):
     * sharing one, every claim moved the line from the other thread's core
     * (TinyLlama's decoding step, paired in one process: 0.6 ms a step of
     * 54–73 ms faster apart) */
    attn_team_line taken[2][ATTN_TEAM_OWN_MAX];
} attn_team_barrier;

/* Waits until every thread of the enclosing parallel region has called it for
 * this round; what each wrote before is then visible to all. Outside a parallel
 * region, or with one thread, returns at once. */
void attn_team_wait(attn_team_barrier *b);

/* Work shared by claims instead of fixed shares: the index of the next
 * unclaimed chunk of this round's work (0 .. chunks − 1, each handed out
 * once, to whichever thread asks first), or −1 when every chunk is taken.
 * A thread claims until −1, then waits at b: a thread that came late (woken
 * late, or descheduled for another process) takes fewer chunks, instead of
 * the whole team waiting for its fixed share. Every thread of one round
 * must claim the same chunks (the same work split the same way); a round's
 * chunks start again from 0 after each attn_team_wait. */
int attn_team_claim(attn_team_barrier *b, int chunks);
/* attn_team_claim for work read from memory in order (a product's rows):
 * thread t of n claims the chunks of its own fixed share (t·chunks/n ..
 * (t+1)·chunks/n − 1) first, in order from the front, so that each thread
 * reads one run of memory, as with fixed shares; then it takes what is left
 * of the other shares from their backs, one chunk at a time. A thread that
 * came late still finds its share's front taken by the others only at the
 * end. The hardware's prefetcher follows one run a core: with chunks handed
 * out in turn, each thread's reads jumped from chunk to chunk. */
int attn_team_claim_own(attn_team_barrier *b, int chunks);

/* Whether the calling thread is the team's first (thread 0; outside a region,
 * always): the one that does a step's serial work between two waits. */
int attn_team_first(void);

#endif
