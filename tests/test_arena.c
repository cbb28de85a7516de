/* test_arena.c — a store of trace arenas: blocks lent again, never stale numbers, budgets. */
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "engine/base/budget.h"
#include "engine/run/forward.h"
#include "engine/trace/arena.h"
#include "model_fixture.h"

static char ROOT[256];

/* The rules: a block is lent to a need of at least half of it; when none
 * fits the idle ones are released first; at most ATTN_ARENA_IDLE stay idle. */
static void test_take_give(void **state)
{
    (void)state;
    attn_arena a;
    size_t size, small;
    attn_arena_init(&a);
    void *p = attn_arena_take(&a, 1000, &size);
    assert_non_null(p);
    assert_true(size >= 1000 && (uintptr_t)p % 64 == 0);
    attn_arena_give(&a, p, size);
    assert_int_equal(a.n_idle, 1);
    assert_true(attn_arena_idle(&a) == (double)size);
    void *q = attn_arena_take(&a, 900, &small);
    assert_ptr_equal(q, p); /* 900 fills more than half of it */
    assert_int_equal(a.maps, 1);
    assert_int_equal(a.lends, 1);
    attn_arena_give(&a, q, small);
    q = attn_arena_take(&a, 100, &small); /* too small for it: it is released, a new one made */
    assert_int_equal(a.maps, 2);
    assert_int_equal(a.n_idle, 0);
    attn_arena_give(&a, q, small);
    /* a large block is 2 MiB aligned */
    void *big = attn_arena_take(&a, (size_t)9 << 20, &size);
    assert_non_null(big);
    assert_int_equal((uintptr_t)big % ((size_t)2 << 20), 0);
    assert_int_equal(size, (size_t)10 << 20);
    attn_arena_give(&a, big, size);
    /* full: the smallest goes */
    size_t sizes[ATTN_ARENA_IDLE + 1];
    void *blocks[ATTN_ARENA_IDLE + 1];
    for (int i = 0; i <= ATTN_ARENA_IDLE; i++) blocks[i] = attn_arena_take(NULL, 4096 * (i + 1), &sizes[i]);
    attn_arena_free(&a);
    attn_arena_init(&a);
    for (int i = 0; i <= ATTN_ARENA_IDLE; i++) attn_arena_give(&a, blocks[i], sizes[i]);
    assert_int_equal(a.n_idle, ATTN_ARENA_IDLE);
    for (int i = 0; i < a.n_idle; i++) assert_true(a.idle_bytes[i] > sizes[0]);
    attn_arena_free(&a);
    p = attn_arena_take(NULL, 10, &size); /* no store: plain memory */
    attn_arena_give(NULL, p, size);
}

/* Idle blocks are mapped, so the address-space limit's room left them out;
 * they are released before any new block, so a budget counts them back. */
static void test_budget(void **state)
{
    (void)state;
    attn_arena a;
    size_t size;
    attn_arena_init(&a);
    void *p = attn_arena_take(&a, 1024, &size);
    attn_arena_give(&a, p, size);
    attn_budget b = {.bytes = 4e5, .source = ATTN_BUDGET_ULIMIT, .ceiling = 1e9, .limit = 1e6, .mapped = 5e5,
                     .reserve = 1e5};
    attn_budget got = attn_arena_budget(&a, b);
    assert_true(got.bytes == 4e5 + 1024 && got.mapped == 5e5 - 1024);
    b.ceiling = 400500;
    assert_true(attn_arena_budget(&a, b).bytes == 400500);
    b.source = ATTN_BUDGET_RAM; /* a ceiling of its own: idle blocks are not part of it */
    assert_true(attn_arena_budget(&a, b).bytes == 4e5);
    assert_true(attn_arena_budget(NULL, b).bytes == 4e5);
    attn_arena_free(&a);
}

/* Every tensor of a equals b's, bit for bit. */
static void same_bits(const attn_trace *a, const attn_trace *b)
{
    assert_int_equal(a->n_tensors, b->n_tensors);
    for (int i = 0; i < a->n_tensors; i++) {
        assert_string_equal(a->tensors[i].name, b->tensors[i].name);
        assert_int_equal(a->tensors[i].count, b->tensors[i].count);
        /* by index: a derived stage (masked_scores) made first, as a lookup would */
        if (memcmp(attn_tensor_filled(&a->tensors[i])->data, attn_tensor_filled(&b->tensors[i])->data,
                   a->tensors[i].count * sizeof(float)))
            fail_msg("%s differs", a->tensors[i].name);
    }
}

/* cfg run twice through one store, toggled between (the window's mask chip):
 * the second run allocates no block, and its numbers are those of a fresh
 * run although its block held poison. */
static void check_reuse(attn_config *c)
{
    attn_arena a;
    attn_error err;
    attn_trace tr, fresh;
    attn_arena_init(&a);
    attn_inputs in = {.arena = &a};
    if (attn_trace_run(c, &in, &tr, &err)) fail_msg("%s", err.msg);
    assert_int_equal(a.maps, 1);
    assert_ptr_equal(tr.store, &a);
    float *block = tr.arena;
    attn_trace_free(&tr);
    assert_int_equal(a.n_idle, 1);
    memset(a.idle[0], 0xff, a.idle_bytes[0]); /* NaN everywhere: nothing may be read before it is written */
    c->causal = !c->causal;
    if (attn_trace_run(c, &in, &tr, &err)) fail_msg("%s", err.msg);
    assert_int_equal(a.maps, 1);
    assert_int_equal(a.lends, 1);
    assert_ptr_equal(tr.arena, block);
    if (attn_trace_run(c, NULL, &fresh, &err)) fail_msg("%s", err.msg);
    assert_null(fresh.store);
    same_bits(&tr, &fresh);
    attn_trace_free(&fresh);
    attn_trace_free(&tr);
    attn_arena_free(&a);
}

/* The default ceiling follows what the machine has free (issue 36): nine
 * tenths of MemAvailable plus what this process holds; a meminfo without it
 * (or none) leaves half the RAM to decide. */
static void test_free_memory(void **state)
{
    (void)state;
    char path[] = "/tmp/attnlab-meminfo-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    2000000 kB\n", f);
    fclose(f);
    double free_now = attn_budget_free_memory(path);
    double want = 0.9 * 2000000.0 * 1024.0;
    assert_true(free_now >= want && free_now < want + 4.0 * 1024 * 1024 * 1024); /* plus this process's resident pages */
    f = fopen(path, "w");
    fputs("MemTotal:       16000000 kB\nMemFree:         1000000 kB\n", f);
    fclose(f);
    assert_true(isinf(attn_budget_free_memory(path)));
    assert_true(isinf(attn_budget_free_memory("/nonexistent/meminfo")));
    unlink(path);
    /* the default: the smaller of half the RAM and what is free, and says which */
    attn_budget b = attn_budget_get(0, false);
    double free_here = attn_budget_free_memory("/proc/meminfo");
    assert_true(b.source == ATTN_BUDGET_FREE || b.source == ATTN_BUDGET_RAM || b.source == ATTN_BUDGET_ULIMIT);
    assert_true(b.ceiling <= attn_budget_half_ram());
    if (b.source == ATTN_BUDGET_FREE) assert_true(b.half_ram == attn_budget_half_ram() && b.ceiling < b.half_ram);
    if (free_here < attn_budget_half_ram() * 0.99) assert_true(b.ceiling < attn_budget_half_ram());
    char text[200];
    attn_budget_text(&b, text, sizeof text);
    assert_non_null(strstr(text, b.source == ATTN_BUDGET_FREE ? "the memory this machine has free" : "the"));
    /* --memory-gib decides alone */
    b = attn_budget_get(3.0 * 1024 * 1024 * 1024, false);
    assert_true(b.ceiling == 3.0 * 1024 * 1024 * 1024);
}

static void test_reuse_layer(void **state)
{
    (void)state;
    attn_config c;
    attn_error err;
    attn_config_init(&c);
    assert_int_equal(attn_config_set(&c, "tokens", "the cat sat on the mat | a dog ran", &err),
                     ATTN_OK);
    c.pad_mask = true;
    check_reuse(&c);
    attn_config_free(&c);
}

static void test_reuse_model(void **state)
{
    (void)state;
    char dir[300];
    attn_config c;
    attn_error err;
    snprintf(dir, sizeof dir, "%s/m", ROOT);
    make_model(dir, 2, 4, 2, true, NULL, NULL);
    attn_config_init(&c);
    assert_int_equal(attn_config_set(&c, "model", dir, &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "text", "the cat sat on the mat .|a dog ran", &err), ATTN_OK);
    c.pad_mask = true;
    check_reuse(&c);
    attn_config_free(&c);
}

/* An oversized trace is refused before the store allocates anything. */
static void test_refused_first(void **state)
{
    (void)state;
    char dir[300];
    attn_config c;
    attn_error err;
    attn_trace tr;
    attn_arena a;
    snprintf(dir, sizeof dir, "%s/r", ROOT);
    make_model(dir, 2, 4, 2, true, NULL, NULL);
    attn_arena_init(&a);
    for (int model = 0; model < 2; model++) {
        attn_config_init(&c);
        if (model) assert_int_equal(attn_config_set(&c, "model", dir, &err), ATTN_OK);
        c.max_bytes = 1000;
        assert_int_equal(attn_trace_run(&c, &(attn_inputs){.arena = &a}, &tr, &err), ATTN_ERR_CONFIG);
        assert_non_null(strstr(err.msg, "would need about"));
        assert_int_equal(a.maps, 0);
        attn_config_free(&c);
    }
    attn_arena_free(&a);
}

int main(void)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(ROOT, sizeof ROOT, "%s/attnlab-arena-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(ROOT)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_give),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_free_memory),
        cmocka_unit_test(test_reuse_layer),
        cmocka_unit_test(test_reuse_model),
        cmocka_unit_test(test_refused_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
