/* test_team.c — the decoding step's barrier: every round complete before any
 * thread goes on, whether the threads waiting spin or sleep. */
#include <setjmp.h>
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
        cmocka_unit_test(alone_it_returns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
