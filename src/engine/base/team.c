/* team.c — a barrier that spins, then sleeps (team.h). */
#define _GNU_SOURCE /* syscall */
#include "team.h"

#include <limits.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__linux__) && defined(_OPENMP)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#define TEAM_FUTEX 1
#endif

#include "engine/base/clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TEAM_RELAX() _mm_pause()
#else
#define TEAM_RELAX() ((void)0)
#endif

/* How long a thread spins before it sleeps, in ms: at most SPIN_CAP; under
 * SPIN_LOW it is as good as not spinning, and every PROBE-th wait then spins
 * SPIN_CAP once, to find out whether spinning pays again. The clock is read
 * every 64 turns of the loop. */
#define SPIN_CAP 0.05
#define SPIN_LOW 0.005
enum { PROBE = 128 };

int attn_team_first(void)
{
#ifdef _OPENMP
    return omp_get_thread_num() == 0;
#else
    return 1;
#endif
}

#ifdef TEAM_FUTEX
static _Thread_local double spin_ms = SPIN_CAP;
static _Thread_local unsigned waits;

static void futex_wait(atomic_uint *addr, unsigned seen)
{
    /* returns at once when *addr is no longer seen; spurious wake-ups are
     * fine: the caller looks again */
    syscall(SYS_futex, (unsigned *)addr, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}

static void futex_wake_all(atomic_uint *addr)
{
    syscall(SYS_futex, (unsigned *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#endif

int attn_team_claim(attn_team_barrier *b, int chunks)
{
    /* the round cannot change while this thread is in it: it ends when every thread has arrived at the wait */
    unsigned round = atomic_load(&b->round);
    int c = atomic_fetch_add(&b->next[round % 2], 1);
    return c < chunks ? c : -1;
}

/* Chunk lo + f of [lo, hi) from the front (back = 0) or hi − 1 − k from the
 * back, where *taken holds f (low 32 bits) and k (high 32); −1 when f + k has
 * reached hi − lo. */
static int take(_Atomic(unsigned long long) *taken, int lo, int hi, int back)
{
    unsigned long long t = atomic_load(taken);
    for (;;) {
        int f = (int)(t & 0xFFFFFFFFu), k = (int)(t >> 32);
        if (lo + f >= hi - k) return -1;
        unsigned long long want = back ? t + (1ull << 32) : t + 1;
        if (atomic_compare_exchange_weak(taken, &t, want)) return back ? hi - 1 - k : lo + f;
    }
}

int attn_team_claim_own(attn_team_barrier *b, int chunks)
{
#ifdef _OPENMP
    int n = omp_get_num_threads(), me = omp_get_thread_num();
#else
    int n = 1, me = 0;
#endif
    if (n > ATTN_TEAM_OWN_MAX) return attn_team_claim(b, chunks);
    attn_team_line *taken = b->taken[atomic_load(&b->round) % 2];
    for (int i = 0; i < n; i++) { /* its own share, then the next thread's, and so on round */
        int t = (me + i) % n, c = take(&taken[t].n, (int)((long long)chunks * t / n),
                                       (int)((long long)chunks * (t + 1) / n), i > 0);
        if (c >= 0) return c;
    }
    return -1;
}

/* The next round begins: its chunks' counters (the round before last's) zeroed first. */
static void next_round(attn_team_barrier *b, unsigned round)
{
    atomic_store(&b->next[(round + 1) % 2], 0);
    for (int t = 0; t < ATTN_TEAM_OWN_MAX; t++) atomic_store(&b->taken[(round + 1) % 2][t].n, 0);
    atomic_fetch_add(&b->round, 1);
}

void attn_team_wait(attn_team_barrier *b)
{
#ifdef _OPENMP
    unsigned n = (unsigned)omp_get_num_threads();
#else
    unsigned n = 1;
#endif
    if (n < 2) { /* no one to wait for: the round ends (a new one for attn_team_claim) */
        next_round(b, atomic_load(&b->round));
        return;
    }
#ifdef _OPENMP
#ifdef TEAM_FUTEX
    /* seq_cst throughout: the round read before arriving is this round's; the
     * last to arrive sees everyone's writes (each arrival's release sequence
     * runs on through the later arrivals) and publishes them with the round;
     * and of a sleeper counting itself and the last thread opening the round,
     * one sees the other */
    unsigned round = atomic_load(&b->round);
    if (atomic_fetch_add(&b->arrived, 1) + 1 == n) { /* the last: the next round begins */
        atomic_store(&b->arrived, 0);
        next_round(b, round);
        if (atomic_load(&b->sleepers)) futex_wake_all(&b->round);
        return;
    }
    double t0 = attn_clock_ms(), budget = spin_ms < SPIN_LOW && !(++waits % PROBE) ? SPIN_CAP : spin_ms;
    for (unsigned i = 1;; i++) {
        if (atomic_load(&b->round) != round) { /* came while spinning: spin longer next time */
            spin_ms = 2 * budget + SPIN_LOW < SPIN_CAP ? 2 * budget + SPIN_LOW : SPIN_CAP;
            return;
        }
        TEAM_RELAX();
        if (!(i % 64) && attn_clock_ms() - t0 > budget) break;
    }
    /* the spin did not pay (the thread waited for was most likely descheduled):
     * a quarter of it next time */
    spin_ms = budget / 4;
    atomic_fetch_add(&b->sleepers, 1);
    while (atomic_load(&b->round) == round) futex_wait(&b->round, round);
    atomic_fetch_sub(&b->sleepers, 1);
#else /* OpenMP without futexes: its barrier, then the round ended by thread 0 */
    #pragma omp barrier
    if (omp_get_thread_num() == 0) next_round(b, atomic_load(&b->round));
    #pragma omp barrier
#endif
#endif
}
