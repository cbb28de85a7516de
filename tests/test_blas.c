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
#include <strings.h>

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

/* OpenBLAS's name for a core: "SkylakeX" for SKYLAKEX (a build for every
 * CPU), the build's own target for one built for a single CPU. */
static bool names_core(const char *said, const char *core)
{
    for (const char *p = said; *p; p++)
        if (!strncasecmp(p, core, strlen(core))) return true;
    return false;
}

static void test_opened_kernels(void **state)
{
    (void)state;
    unsetenv("OPENBLAS_CORETYPE");
    const char *core = attn_blas_choose_core(); /* before the library is opened, as main does */
    char buf[512];
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 2, 1, 0, 3}, c[4] = {0};
    if (!attn_blas_sgemm(false, 2, 2, 3, 1.0f, a, 3, b, 2, c, 2)) {
        assert_null(strstr(attn_blas_describe(buf, sizeof buf), "OpenBLAS ("));
        skip(); /* built without OpenBLAS, or not found: nothing opened to check */
    }
    /* (1 2 3; 4 5 6) · (1 0; 2 1; 0 3) */
    assert_true(c[0] == 5 && c[1] == 11 && c[2] == 14 && c[3] == 23);
    const char *said = attn_blas_describe(buf, sizeof buf);
    assert_non_null(strstr(said, "OpenBLAS ("));
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_is("intel") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        assert_non_null(core); /* an Intel CPU with AVX2: attnlab names the core */
#endif
    if (!core) skip(); /* another CPU: OpenBLAS's own choice, nothing of attnlab's to check */
    assert_string_equal(getenv("OPENBLAS_CORETYPE"), core);
    if (!strstr(said, " kernels)")) skip(); /* a library that does not name its kernels */
    if (!names_core(said, core)) fail_msg("attnlab named %s; the library opened with %s", core, said);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_for),
        cmocka_unit_test(test_opened_kernels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
