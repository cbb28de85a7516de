/* test_blas.c — OpenBLAS's kernels named by the CPU's features (blas.h): the
 * core an Intel CPU's features call for, and the library opened with it: a
 * product right, and kernels that fit the CPU (Debian 12's OpenBLAS took an
 * Emerald Rapids Xeon for a Prescott, SSE3 only, until attnlab named the
 * core). On the build without BLAS the products fall back (false). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/base/blas.h"

static void test_core_for(void **state)
{
    (void)state;
    assert_string_equal(attn_blas_core_for(true, true, true), "SKYLAKEX");
    assert_string_equal(attn_blas_core_for(true, false, true), "HASWELL");
    assert_null(attn_blas_core_for(true, false, false));  /* an older Intel: OpenBLAS's own choice */
    assert_null(attn_blas_core_for(false, true, true));   /* AMD and the rest: OpenBLAS's own choice */
    assert_null(attn_blas_core_for(false, false, true));
}

static void test_opened_kernels(void **state)
{
    (void)state;
    unsetenv("OPENBLAS_CORETYPE");
    attn_blas_choose_core(); /* before the library is opened, as main does */
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 2, 1, 0, 3}, c[4] = {0};
    if (!attn_blas_sgemm(false, 2, 2, 3, 1.0f, a, 3, b, 2, c, 2)) {
        char buf[512];
        assert_null(strstr(attn_blas_describe(buf, sizeof buf), "OpenBLAS ("));
        skip(); /* built without OpenBLAS, or not found: nothing opened to check */
    }
    /* (1 2 3; 4 5 6) · (1 0; 2 1; 0 3) */
    assert_true(c[0] == 5 && c[1] == 11 && c[2] == 14 && c[3] == 23);
    char buf[512];
    const char *said = attn_blas_describe(buf, sizeof buf);
    assert_non_null(strstr(said, "OpenBLAS ("));
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    const char *core = attn_blas_core_for(
        __builtin_cpu_is("intel"),
        __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"),
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
    if (core && !strcmp(core, "SKYLAKEX") && !strstr(said, "SkylakeX kernels"))
        fail_msg("an AVX-512 Intel CPU, OpenBLAS named %s", said);
    if (core && !strcmp(core, "HASWELL") && !strstr(said, "Haswell kernels"))
        fail_msg("an AVX2 Intel CPU, OpenBLAS named %s", said);
    if (__builtin_cpu_supports("avx2") && strstr(said, "Prescott"))
        fail_msg("an AVX2 CPU with OpenBLAS's SSE3 kernels: %s", said);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_for),
        cmocka_unit_test(test_opened_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
