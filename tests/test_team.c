/* test_team.c — the decoding step's barrier: every round complete before any
 * thread goes on, whether the threads waiting spin or sleep. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "engine/base/team.h"
#ifdef _OPENMP
#include <omp.h>
#endif

enum { ROUNDS = 3000, MAXT = 4 };

/* Each round every thread writes its slot, waits, reads every slot (all must
 * hold this round), waits again. slow: one thread in 8 rounds sleeps 0.2 ms
 * before it arrives, longer than any spin, so that the others sleep too. */
static int rounds_hold(int threads, int slow)
{
    attn_team_barrier b = {0};
    volatile int slot[MAXT] = {0};
    int bad = 0;
#ifdef _OPENMP
    #pragma omp parallel num_threads(threads) reduction(+ : bad)
#endif
    {
#ifdef _OPENMP
        int id = omp_get_thread_num(), n = omp_get_num_threads();
#else
        int id = 0, n = 1;
#endif
        for (int r = 1; r <= ROUNDS; r++) {
            if (slow && id == r % n && r % 8 == 0) nanosleep(&(struct timespec){0, 200000}, NULL);
            slot[id] = r;
            attn_team_wait(&b);
            for (int t = 0; t < n; t++) bad += slot[t] != r;
            attn_team_wait(&b);
        }
    }
    return bad;
}

static void every_round_is_whole(void **state)
{
    (void)state;
    for (int threads = 1; threads <= MAXT; threads++) {
        assert_int_equal(rounds_hold(threads, 0), 0);
        assert_int_equal(rounds_hold(threads, 1), 0);
    }
}

typedef int (*claim_fn)(attn_team_barrier *b, int chunks);

/* Chunk c of `chunks` was claimed by thread id of n after `last` (its
 * previous claim in the round, −1 for none) by attn_team_claim_own: a wrong
 * order counts 1. A thread's own share (id·chunks/n ..) is taken from its
 * front in order, first; the others' from their backs, each in descending
 * order. */
static int own_order_bad(int c, int last, int id, int n, int chunks)
{
    int lo = (int)((long long)chunks * id / n), hi = (int)((long long)chunks * (id + 1) / n);
    bool mine = c >= lo && c < hi, last_mine = last >= lo && last < hi;
    if (mine) return last < 0 ? c != lo : !last_mine || c != last + 1;
    if (last < 0 || last_mine) return 0; /* the first taken from another share */
    int s = 0, t = 0; /* the shares of c and of last */
    while ((long long)chunks * (s + 1) / n <= c) s++;
    while ((long long)chunks * (t + 1) / n <= last) t++;
    return s == t && c >= last;
}

/* Claims: in every round each of its chunks goes to exactly one thread,
 * however many threads there are and however many chunks each round has
 * (none, fewer than the threads, many), with or without a slow thread; by
 * attn_team_claim_own, each thread's in the order it promises. */
static int claims_hold(claim_fn claim, int threads, int slow)
{
    enum { CLAIM_ROUNDS = 2000, MAXC = 64 };
    attn_team_barrier b = {0};
    atomic_int taken[MAXC];
    int bad = 0;
#ifdef _OPENMP
    #pragma omp parallel num_threads(threads) reduction(+ : bad)
#endif
    {
#ifdef _OPENMP
        int id = omp_get_thread_num(), n = omp_get_num_threads();
#else
        int id = 0, n = 1;
#endif
        for (int r = 1; r <= CLAIM_ROUNDS; r++) {
            int chunks = r % 7 == 0 ? 0 : r % 5 == 0 ? 1 : r % MAXC;
            if (id == 0)
                for (int c = 0; c < MAXC; c++) atomic_store(&taken[c], 0);
            attn_team_wait(&b);
            if (slow && id == r % threads && r % 16 == 0) nanosleep(&(struct timespec){0, 200000}, NULL);
            for (int c, last = -1; (c = claim(&b, chunks)) >= 0; last = c) {
                bad += c >= chunks || atomic_fetch_add(&taken[c], 1);
                if (claim == attn_team_claim_own) bad += own_order_bad(c, last, id, n, chunks);
            }
            attn_team_wait(&b);
            for (int c = 0; c < MAXC; c++) bad += atomic_load(&taken[c]) != (c < chunks);
            attn_team_wait(&b);
        }
    }
    return bad;
}

static void every_chunk_once(void **state)
{
    (void)state;
    static const claim_fn CLAIMS[] = {attn_team_claim, attn_team_claim_own};
    for (int k = 0; k < 2; k++)
        for (int threads = 1; threads <= MAXT; threads++) {
            assert_int_equal(claims_hold(CLAIMS[k], threads, 0), 0);
            assert_int_equal(claims_hold(CLAIMS[k], threads, 1), 0);
        }
}

/* Outside a parallel region (one thread) a wait returns at once, and the
 * caller is the team's first. */
static void alone_it_returns(void **state)
{
    (void)state;
    attn_team_barrier b = {0};
    for (int i = 0; i < 10; i++) attn_team_wait(&b);
    assert_true(attn_team_first());
    int firsts = 0;
#ifdef _OPENMP
    #pragma omp parallel num_threads(3) reduction(+ : firsts)
#endif
    firsts += attn_team_first();
    assert_int_equal(firsts, 1);
}

int main(void)
{
    alarm(120); /* a barrier that lets no one through fails the test, not the run */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_round_is_whole),
        cmocka_unit_test(every_chunk_once),
        cmocka_unit_test(alone_it_returns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
