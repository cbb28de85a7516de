/* test_wmat.c — products with F16 and BF16 weights read in place, against float32.
 *
 * The rounding accepted: the weights are rounded to the dtype once (to
 * nearest even) when the test makes them. Against float32 products of those
 * same rounded weights, summed in double, a product may differ only by the
 * order of its float32 sums: 1e-5 · Σ|x·w| (float32's ε is 2^-24 ≈ 6e-8;
 * 1000 terms summed in blocks stay well inside). Against the exact float32
 * weights it may differ by the dtype's rounding of each weight: BF16 keeps 8
 * significant bits (relative error ≤ 2^-9 per weight), F16 11 (≤ 2^-12),
 * so 2^-8 and 2^-11 · Σ|x·w| bound it with room. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine/attention/wmat.h"
#include "engine/base/rng.h"

/* f rounded to bfloat16, to nearest even (f finite). */
static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

/* f rounded to IEEE half, to nearest even, by hand (clang 14, which builds
 * the portable test-noblas, has no _Float16 on x86-64; this agreed with gcc's
 * _Float16 on 20 million random floats): exponent rebiased 127 → 15, the
 * 23-bit mantissa cut to 10 (or shifted into a subnormal), ties to even. */
static uint16_t to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, e = (x >> 23) & 0xff, m = x & 0x7fffff;
    if (e == 0xff) return (uint16_t)(sign | 0x7c00 | (m ? 0x200 : 0)); /* ±inf, NaN */
    int E = (int)e - 127 + 15;
    if (E >= 31) return (uint16_t)(sign | 0x7c00); /* past 65504: ±inf */
    if (E <= 0) {                                  /* a subnormal half, or 0 */
        if (E < -10) return (uint16_t)sign;
        m |= 0x800000;
        int shift = 14 - E;
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)E << 10) | (m >> 13), rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) h++; /* a carry moves into the exponent, as it should */
    return (uint16_t)h;
}

/* A (rows, cols) matrix in dtype dt starting `shift` elements into its buffer
 * (an odd shift: rows at odd element addresses), rows `pad` elements apart
 * beyond cols; exact holds the float32 weights it was made from and rounded
 * the weights as stored, widened. */
typedef struct {
    void *buf;
    attn_wmat w;
    float *exact, *rounded; /* (rows, cols) */
} made;

static made make(attn_st_dtype dt, int rows, int cols, int shift, int pad, uint64_t seed)
{
    made m;
    size_t size = (size_t)attn_st_dtype_size(dt), stride = (size_t)cols + (size_t)pad, n = (size_t)rows * cols;
    m.buf = calloc((size_t)rows * stride + (size_t)shift + 1, size);
    m.exact = malloc(n * sizeof *m.exact);
    m.rounded = malloc(n * sizeof *m.rounded);
    assert_true(m.buf && m.exact && m.rounded);
    attn_fill_normal(m.exact, n, seed, 1.0f);
    unsigned char *base = (unsigned char *)m.buf + (size_t)shift * size;
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            unsigned char *at = base + ((size_t)r * stride + c) * size;
            float f = m.exact[(size_t)r * cols + c];
            uint16_t h = dt == ATTN_ST_BF16 ? to_bf16(f) : to_f16(f);
            if (dt == ATTN_ST_F32) memcpy(at, &f, 4);
            else memcpy(at, &h, 2);
            attn_st_widen(at, dt, 1, &m.rounded[(size_t)r * cols + c]);
        }
    m.w = (attn_wmat){base, dt, rows, cols, stride};
    return m;
}

static void unmake(made *m)
{
    free(m->buf);
    free(m->exact);
    free(m->rounded);
}

/* y (xr, rows) against x · Wᵀ summed in double from both weight sets. */
static void check(const made *m, const float *x, int xr, const float *y)
{
    const attn_wmat *w = &m->w;
    double eps = w->dtype == ATTN_ST_BF16 ? ldexp(1, -8) : w->dtype == ATTN_ST_F16 ? ldexp(1, -11) : 1e-6;
    for (int i = 0; i < xr; i++)
        for (int j = 0; j < w->rows; j++) {
            double same = 0, exact = 0, mag = 0, mag_exact = 0;
            for (int c = 0; c < w->cols; c++) {
                double xv = x[(size_t)i * w->cols + c];
                same += xv * m->rounded[(size_t)j * w->cols + c];
                exact += xv * m->exact[(size_t)j * w->cols + c];
                mag += fabs(xv * m->rounded[(size_t)j * w->cols + c]);
                mag_exact += fabs(xv * m->exact[(size_t)j * w->cols + c]);
            }
            double got = y[(size_t)i * w->rows + j];
            if (fabs(got - same) > 1e-5 * mag + 1e-30 || fabs(got - exact) > eps * mag_exact + 1e-30)
                fail_msg("%s (%d, %d) row %d col %d: %.9g, want %.9g (rounded weights) and %.9g (exact)",
                         attn_st_dtype_name(w->dtype), w->rows, w->cols, i, j, got, same, exact);
        }
}

/* Every kernel this CPU has, every dtype, odd shapes, tails, odd row starts
 * and padded rows: one row (the decoding path) and 3 or 17 (the panel path). */
static void test_kernels_match_float32(void **state)
{
    (void)state;
    static const int ROWS[] = {1, 3, 17}, COLS[] = {1, 7, 31, 33, 1000, 5000}, XR[] = {1, 3, 17};
    static const attn_st_dtype DT[] = {ATTN_ST_BF16, ATTN_ST_F16, ATTN_ST_F32};
    int tried = 0;
    for (int k = 0; k < ATTN_WMAT_KERNELS; k++) {
        if (!attn_wmat_use((attn_wmat_kernel)k)) continue;
        tried++;
        for (size_t d = 0; d < 3; d++)
            for (size_t r = 0; r < 3; r++)
                for (size_t c = 0; c < sizeof COLS / sizeof *COLS; c++)
                    for (int shift = 0; shift < 2; shift++) {
                        /* float32 with a pad: not packed, so the kernels read it too */
                        made m = make(DT[d], ROWS[r], COLS[c], shift, DT[d] == ATTN_ST_F32 ? 1 : shift,
                                      (uint64_t)(k * 1000 + d * 100 + r * 10 + c));
                        for (size_t x = 0; x < 3; x++) {
                            float *xs = malloc((size_t)XR[x] * COLS[c] * sizeof *xs);
                            float *y = malloc((size_t)XR[x] * ROWS[r] * sizeof *y);
                            attn_fill_normal(xs, (size_t)XR[x] * COLS[c], 99 + x, 1.0f);
                            assert_int_equal(attn_wmat_product(&m.w, xs, XR[x], y), 0);
                            check(&m, xs, XR[x], y);
                            free(xs);
                            free(y);
                        }
                        unmake(&m);
                    }
    }
    assert_true(tried >= 1);
    assert_true(attn_wmat_has(ATTN_WMAT_C));
    assert_false(attn_wmat_use(ATTN_WMAT_KERNELS));
}

/* A matrix larger than one panel (4 MiB of floats): the panels' columns land
 * in the right places of y. */
static void test_panels(void **state)
{
    (void)state;
    made m = make(ATTN_ST_BF16, 1100, 1000, 1, 0, 7);
    float x[3 * 1000], *y = malloc((size_t)3 * 1100 * sizeof *y);
    attn_fill_normal(x, 3 * 1000, 8, 1.0f);
    assert_int_equal(attn_wmat_product(&m.w, x, 3, y), 0);
    check(&m, x, 3, y);
    free(y);
    unmake(&m);
}

/* Two matrices of different dtypes side by side: y = x · [A; B]ᵀ. */
static void test_group(void **state)
{
    (void)state;
    for (int k = 0; k < ATTN_WMAT_KERNELS; k++) {
        if (!attn_wmat_use((attn_wmat_kernel)k)) continue;
        made a = make(ATTN_ST_BF16, 17, 33, 1, 0, 1), b = make(ATTN_ST_F16, 3, 33, 0, 2, 2);
        float x[33], y[20];
        attn_fill_normal(x, 33, 3, 1.0f);
        attn_wmat group[] = {a.w, b.w};
        attn_wmat_product_row(group, 2, x, y);
        check(&a, x, 1, y);
        check(&b, x, 1, y + 17);
        unmake(&a);
        unmake(&b);
    }
}

/* Rows taken in blocks (head.c's chunks, two panels here): each block has the
 * bits it has when computed alone, a last block of one row too (the row
 * kernels); and a group's product in parts (a team's shares) has the bits of
 * the whole. BF16, and float32 packed (ops.c's path). */
static void test_blocks_and_parts(void **state)
{
    (void)state;
    enum { ROWS = 1100, COLS = 1000, XR = 9, BLOCK = 4 };
    static const attn_st_dtype DT[] = {ATTN_ST_BF16, ATTN_ST_F32};
    float *x = malloc((size_t)XR * COLS * sizeof *x), *all = malloc((size_t)XR * ROWS * sizeof *all);
    float *one = malloc((size_t)BLOCK * ROWS * sizeof *one);
    assert_true(x && all && one);
    attn_fill_normal(x, (size_t)XR * COLS, 5, 1.0f);
    for (int d = 0; d < 2; d++) {
        made m = make(DT[d], ROWS, COLS, 0, 0, 11);
        assert_int_equal(attn_wmat_product_blocks(&m.w, x, XR, BLOCK, all), 0);
        check(&m, x, XR, all);
        for (int b0 = 0; b0 < XR; b0 += BLOCK) {
            int n = XR - b0 < BLOCK ? XR - b0 : BLOCK; /* 4, 4, then 1 */
            assert_int_equal(attn_wmat_product_blocks(&m.w, x + (size_t)b0 * COLS, n, BLOCK, one), 0);
            assert_memory_equal(one, all + (size_t)b0 * ROWS, (size_t)n * ROWS * sizeof *one);
        }
        attn_wmat_product_row(&m.w, 1, x, one);
        attn_wmat_product_part(&m.w, 1, x, one + ROWS, 0, 700);
        attn_wmat_product_part(&m.w, 1, x, one + ROWS, 700, ROWS);
        assert_memory_equal(one, one + ROWS, (size_t)ROWS * sizeof *one);
        unmake(&m);
    }
    free(x);
    free(all);
    free(one);
}

/* A product shared out by claimed chunks inside a parallel region
 * (attn_wmat_product_row_claimed) has the bits of the product in one call,
 * on 1 to 4 threads, and in two parts cut inside a group: rows of 640 (one
 * at a time) and of 5,000 (eight at a time with the AVX-512 BW kernel: a
 * group is the matrix's, not the chunk's), BF16 at an odd address with
 * gaps, and float32. */
static void test_claimed(void **state)
{
    (void)state;
    static const int COLS[] = {640, 5000};
    for (int c = 0; c < 2; c++)
        for (int d = 0; d < 2; d++) {
            made m = make(d ? ATTN_ST_F32 : ATTN_ST_BF16, 1003, COLS[c], 1 - d, 3 * (1 - d), 21);
            float *x = malloc((size_t)COLS[c] * sizeof *x), *want = malloc(1003 * sizeof *want);
            float *got = malloc(1003 * sizeof *got);
            assert_true(x && want && got);
            attn_fill_normal(x, (size_t)COLS[c], 22, 1.0f);
            attn_wmat_product_row(&m.w, 1, x, want);
            check(&m, x, 1, want);
            /* rows [0, 701) and [701, 1003): a cut inside a group of eight */
            attn_wmat_product_part(&m.w, 1, x, got, 0, 701);
            attn_wmat_product_part(&m.w, 1, x, got, 701, 1003);
            assert_memory_equal(got, want, 1003 * sizeof *got);
            for (int threads = 1; threads <= 4; threads++) {
                attn_team_barrier b = {0};
                memset(got, 0, 1003 * sizeof *got);
#ifdef _OPENMP
                #pragma omp parallel num_threads(threads)
#endif
                for (int round = 0; round < 3; round++) attn_wmat_product_row_claimed(&m.w, 1, x, got, &b);
                assert_memory_equal(got, want, 1003 * sizeof *got);
            }
            free(x);
            free(want);
            free(got);
            unmake(&m);
        }
}

/* Rows and the transposed copy (the trace's (in, out) weights) widen exactly. */
static void test_rows_and_transposed(void **state)
{
    (void)state;
    made m = make(ATTN_ST_BF16, 5, 7, 1, 3, 4);
    float rows[2 * 7], t[7 * 5];
    attn_wmat_rows(&m.w, 2, 2, rows);
    assert_memory_equal(rows, m.rounded + 2 * 7, sizeof rows);
    assert_int_equal(attn_wmat_transposed(&m.w, t), 0);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < 7; c++) assert_true(t[c * 5 + r] == m.rounded[r * 7 + c]);
    unmake(&m);
}

/* What `bench` times as decode's read bound reads every stored byte once and
 * no byte between rows: BF16 rows at odd addresses with gaps, beside packed
 * float32; a byte changed inside changes the sum, a gap's does not, the
 * threads' shares add up to one thread's, and every kernel's loads add the
 * same words. */
static void test_stream(void **state)
{
    (void)state;
    made a = make(ATTN_ST_BF16, 1001, 77, 1, 3, 4), b = make(ATTN_ST_F32, 5, 77, 0, 0, 5);
    attn_wmat group[] = {a.w, b.w};
    assert_int_equal(attn_wmat_bytes(group, 2), 1001 * 77 * 2 + 5 * 77 * 4);
    uint64_t s0 = attn_wmat_stream(group, 2);
    unsigned char *base = (unsigned char *)a.w.data, *fb = (unsigned char *)b.w.data;
    size_t row = 77 * 2, stride = 80 * 2;
    unsigned char *inside[] = {base, base + 1, base + 500 * stride + 77, base + 1000 * stride + row - 1, fb,
                               fb + 5 * 77 * 4 - 1};
    for (size_t i = 0; i < sizeof inside / sizeof *inside; i++) {
        (*inside[i])++;
        assert_true(attn_wmat_stream(group, 2) != s0);
        (*inside[i])--;
    }
    unsigned char *outside[] = {base - 1, base + row, base + 999 * stride + row + 5};
    for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) {
        (*outside[i])++;
        assert_true(attn_wmat_stream(group, 2) == s0);
        (*outside[i])--;
    }
    /* runs at each of the 8 offsets from a word's start, of 0 to 24 bytes (a
     * first word cut at both ends, or no whole word) and of 9,000 (the wide
     * loops, their asking ahead and the words after the last whole line),
     * against the words added up byte by byte: byte at address A is bits
     * 8·(A mod 8) up of its word */
    enum { LONG = 9000 };
    unsigned char *buf = malloc(LONG + 64); /* malloc: at least 8-aligned */
    assert_non_null(buf);
    for (int i = 0; i < LONG + 64; i++) buf[i] = (unsigned char)(i * 131 + 7);
    for (int k = 0; k < ATTN_WMAT_KERNELS; k++) { /* each kernel's read (its own loads) adds the same words */
        if (!attn_wmat_use((attn_wmat_kernel)k)) continue;
        assert_true(attn_wmat_stream(group, 2) == s0);
        for (int off = 0; off < 8; off++)
            for (int len = 0; len <= LONG; len = len < 24 ? len + 2 : len == 24 ? LONG : LONG + 1) {
                attn_wmat run = attn_wmat_view(buf + off, ATTN_ST_BF16, 1, len / 2);
                uint64_t want = 0;
                for (int i = 0; i < len; i++) want += (uint64_t)buf[off + i] << (8 * ((uintptr_t)(buf + off + i) % 8));
                if (attn_wmat_stream(&run, 1) != want) fail_msg("kernel %d, offset %d, %d bytes", k, off, len);
            }
    }
    free(buf);
    uint64_t one = 0; /* one matrix at a time adds up to the group */
    for (int i = 0; i < 2; i++) one += attn_wmat_stream(&group[i], 1);
    assert_true(one == s0);
#ifdef _OPENMP
    int was = omp_get_max_threads();
    omp_set_num_threads(1);
    assert_true(attn_wmat_stream(group, 2) == s0);
    omp_set_num_threads(3);
    assert_true(attn_wmat_stream(group, 2) == s0);
    omp_set_num_threads(was);
#endif
    unmake(&a);
    unmake(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernels_match_float32),
        cmocka_unit_test(test_panels),
        cmocka_unit_test(test_group),
        cmocka_unit_test(test_blocks_and_parts),
        cmocka_unit_test(test_claimed),
        cmocka_unit_test(test_rows_and_transposed),
        cmocka_unit_test(test_stream),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
