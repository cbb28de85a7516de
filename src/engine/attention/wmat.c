/* wmat.c — products with weights in their stored dtype, widened in registers. */
#include "wmat.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define WMAT_X86 1
#else
#define WMAT_X86 0
#endif

attn_wmat attn_wmat_view(const void *data, attn_st_dtype dtype, int rows, int cols)
{
    return (attn_wmat){data, dtype, rows, cols, (size_t)cols};
}

static const unsigned char *row_at(const attn_wmat *w, int r)
{
    return (const unsigned char *)w->data + (size_t)r * w->stride * (size_t)attn_st_dtype_size(w->dtype);
}

void attn_wmat_rows(const attn_wmat *w, int r0, int n, float *out)
{
    /* a prefill's panel (a million floats) shared by the threads: the sgemm after it is, too */
    #pragma omp parallel for schedule(static) if ((size_t)n * w->cols > 65536)
    for (int r = 0; r < n; r++) attn_st_widen(row_at(w, r0 + r), w->dtype, (size_t)w->cols, out + (size_t)r * w->cols);
}

/* How far ahead of its loads the BF16 row kernel of AVX-512 BW, one row at a
 * time (dot_avx512bw_bf16), asks for the weights, and so does the read bound
 * (attn_wmat_stream): one 4 KiB page, so the next page is always asked for
 * before the stream reaches it, where the hardware's prefetcher would stop.
 * TinyLlama's decoding step, in a state where the memory was slow (its
 * 2,069 MB read at 12–14 GB/s by the read as it was), variants alternated
 * step by step in one process, 16 steps each: 115–124 ms with warm_row;
 * 98–101 ms with every line asked for 4, 6 or 8 KiB ahead (no difference
 * between those; 108 ms at 4 KiB in an earlier run). */
enum { STREAM_AHEAD = 4096 };

/* The first kilobyte of row r of w (when w has a row r) asked into L2
 * ahead of its product: a decoding step reads rows one after another, and
 * the hardware's stream prefetcher stops at each 4 KiB page and learns the
 * next one again from a few misses, while the product's FMAs, waiting on
 * those loads, fill the core's queues and keep it from asking further ahead
 * (a plain read, with one add a load, runs far ahead by itself). Called as
 * row r − 1 starts: by the time it ends the next row's start is
 * in L2 and its stream is learnt. Used by every kernel but
 * dot_avx512bw_bf16, which asks for every line STREAM_AHEAD on instead
 * (measured in a slow state of the memory only; the figures here are from a
 * fast one, a plain read at 46 GB/s). TinyLlama's decoding products, weights
 * mapped in 4 KiB pages: 1.19–1.20× → 1.09–1.11× a plain read of the same
 * bytes, paired in one process (prefetching a whole row, or two rows ahead,
 * was slower, as was asking for each line 0.5–2 KiB ahead as dot8 does: one
 * thread, 1.16–1.49×, against 1.04–1.08× with this); mapped in 2 MiB pages
 * (the page cache's large folios), no change either way. */
static inline void warm_row(const attn_wmat *w, int r)
{
    enum { LINES = 16 };
    if (r >= w->rows) return;
    const char *at = (const char *)row_at(w, r);
    size_t bytes = (size_t)w->cols * attn_st_dtype_size(w->dtype); /* a short row: its own lines only */
    for (size_t l = 0; l < LINES && 64 * l < bytes; l++) __builtin_prefetch(at + 64 * l, 0, 2);
}

/* ---- one row of x · one row of W: x (n) · w (n, stored) ---- */

typedef float (*dot_fn)(const float *x, const void *w, int n);

/* Plain C: TILE weights widened to floats on the stack, then a dot product
 * the compiler vectorises for whatever the build targets. */
static float dot_c(const float *x, const void *w, int n, attn_st_dtype dt)
{
    enum { TILE = 256 };
    float buf[TILE], sum = 0.0f;
    const unsigned char *p = w;
    for (int i = 0; i < n; i += TILE) {
        int m = n - i < TILE ? n - i : TILE;
        attn_st_widen(p + (size_t)i * attn_st_dtype_size(dt), dt, (size_t)m, buf);
        float part = 0.0f;
        #pragma omp simd reduction(+ : part)
        for (int j = 0; j < m; j++) part += x[i + j] * buf[j];
        sum += part;
    }
    return sum;
}
static float dot_c_f32(const float *x, const void *w, int n) { return dot_c(x, w, n, ATTN_ST_F32); }
static float dot_c_f16(const float *x, const void *w, int n) { return dot_c(x, w, n, ATTN_ST_F16); }
static float dot_c_bf16(const float *x, const void *w, int n) { return dot_c(x, w, n, ATTN_ST_BF16); }

#if WMAT_X86
/* The last n % 8 (or % 16) products, after the vector loop: one weight at a time. */
static float dot_tail(const float *x, const void *w, int from, int n, attn_st_dtype dt)
{
    return from < n ? dot_c(x + from, (const unsigned char *)w + (size_t)from * attn_st_dtype_size(dt), n - from, dt)
                    : 0.0f;
}

/* AVX2: 8 weights per load, widened in a register: bfloat16 is a float's top
 * 16 bits (zero-extend to 32, shift left 16); a half goes through F16C's
 * vcvtph2ps. Four accumulators hide the FMA latency. */
#define AVX2 __attribute__((target("avx2,fma,f16c")))
static inline AVX2 __m256 load8_f32(const void *w, int i) { return _mm256_loadu_ps((const float *)w + i); }
static inline AVX2 __m256 load8_f16(const void *w, int i)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)w + i)));
}
static inline AVX2 __m256 load8_bf16(const void *w, int i)
{
    __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)w + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
static inline AVX2 float hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#define DOT_AVX2(name, load, dt)                                                                              \
    static AVX2 float name(const float *x, const void *w, int n)                                             \
    {                                                                                                         \
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                           \
        int i = 0;                                                                                            \
        for (; i + 32 <= n; i += 32) {                                                                        \
            a0 = _mm256_fmadd_ps(load(w, i), _mm256_loadu_ps(x + i), a0);                                     \
            a1 = _mm256_fmadd_ps(load(w, i + 8), _mm256_loadu_ps(x + i + 8), a1);                             \
            a2 = _mm256_fmadd_ps(load(w, i + 16), _mm256_loadu_ps(x + i + 16), a2);                           \
            a3 = _mm256_fmadd_ps(load(w, i + 24), _mm256_loadu_ps(x + i + 24), a3);                           \
        }                                                                                                     \
        for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(load(w, i), _mm256_loadu_ps(x + i), a0);              \
        return hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3))) + dot_tail(x, w, i, n, dt); \
    }
DOT_AVX2(dot_avx2_f32, load8_f32, ATTN_ST_F32)
DOT_AVX2(dot_avx2_f16, load8_f16, ATTN_ST_F16)
DOT_AVX2(dot_avx2_bf16, load8_bf16, ATTN_ST_BF16)

/* AVX-512F: the same, 16 weights per load. */
#define AVX512 __attribute__((target("avx512f")))
static inline AVX512 __m512 load16_f32(const void *w, int i) { return _mm512_loadu_ps((const float *)w + i); }
static inline AVX512 __m512 load16_f16(const void *w, int i)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)w + i)));
}
static inline AVX512 __m512 load16_bf16(const void *w, int i)
{
    __m256i h = _mm256_loadu_si256((const __m256i *)((const uint16_t *)w + i));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
#define DOT_AVX512(name, load, dt)                                                                         \
    static AVX512 float name(const float *x, const void *w, int n)                                        \
    {                                                                                                      \
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                        \
        int i = 0;                                                                                         \
        for (; i + 64 <= n; i += 64) {                                                                     \
            a0 = _mm512_fmadd_ps(load(w, i), _mm512_loadu_ps(x + i), a0);                                  \
            a1 = _mm512_fmadd_ps(load(w, i + 16), _mm512_loadu_ps(x + i + 16), a1);                        \
            a2 = _mm512_fmadd_ps(load(w, i + 32), _mm512_loadu_ps(x + i + 32), a2);                        \
            a3 = _mm512_fmadd_ps(load(w, i + 48), _mm512_loadu_ps(x + i + 48), a3);                        \
        }                                                                                                  \
        for (; i + 16 <= n; i += 16) a0 = _mm512_fmadd_ps(load(w, i), _mm512_loadu_ps(x + i), a0);         \
        __m512 s = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));                            \
        return _mm512_reduce_add_ps(s) + dot_tail(x, w, i, n, dt);                                         \
    }
DOT_AVX512(dot_avx512_f32, load16_f32, ATTN_ST_F32)
DOT_AVX512(dot_avx512_f16, load16_f16, ATTN_ST_F16)
DOT_AVX512(dot_avx512_bf16, load16_bf16, ATTN_ST_BF16)

/* AVX-512 with BW, bfloat16 only: 32 weights a 64-byte load, widened two
 * instructions for 32 instead of four. unpacklo_epi16(0, v) makes each
 * 32-bit lane a weight's 16 bits shifted up (a float), but of weights 0–3,
 * 8–11, 16–19, 24–27 of the 32 (the low quarter of each 128-bit lane), and
 * unpackhi the other 16: so x is laid out once in that order (bf16_order),
 * and a decoding step's product reads it for every row. The same products,
 * summed in another order: within a few ulps of dot_avx512_bf16's. Each
 * 64 bytes of weights are loaded once into a register for their two unpacks
 * (the asm barrier): gcc folds the load into both and reads them twice, and
 * those extra loads kept one core from running as far ahead of the memory.
 * TinyLlama's products on one thread (which reads at the rate one core can
 * ask for, as each of two does when the memory runs fast), paired in one
 * process: 1.16–1.18× → 1.04–1.06× a plain read of the same bytes (W_Q, W_O,
 * W_gate), the LM head 1.15 → 1.11×. */
#define AVX512BW __attribute__((target("avx512f,avx512bw")))
enum { ORDERED_MAX = ATTN_WMAT_ORDER_MAX }; /* the longest row laid out (32 KiB) */

static void bf16_order(const float *x, float *xp, int n)
{
    for (int i = 0; i + 32 <= n; i += 32)
        for (int half = 0; half < 2; half++)     /* unpacklo's 16, then unpackhi's */
            for (int lane = 0; lane < 4; lane++) /* the four 128-bit lanes */
                memcpy(xp + i + half * 16 + lane * 4, x + i + lane * 8 + half * 4, 4 * sizeof *xp);
}

static AVX512BW float dot_avx512bw_bf16(const float *xp, const float *x, const void *w, int n)
{
    const uint16_t *p = w;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    __m512i z = _mm512_setzero_si512();
    int i = 0;
    for (; i + 64 <= n; i += 64) { /* 128 bytes: two lines, each asked for STREAM_AHEAD on (the rows after, when packed) */
        uintptr_t ahead = (uintptr_t)(p + i) + STREAM_AHEAD; /* an address, maybe past w's end: never dereferenced */
        __builtin_prefetch((const void *)ahead, 0, 2);
        __builtin_prefetch((const void *)(ahead + 64), 0, 2);
        __m512i v0 = _mm512_loadu_si512(p + i), v1 = _mm512_loadu_si512(p + i + 32);
        __asm__("" : "+v"(v0), "+v"(v1)); /* each loaded once */
        a0 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v0)), _mm512_loadu_ps(xp + i), a0);
        a1 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v0)), _mm512_loadu_ps(xp + i + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v1)), _mm512_loadu_ps(xp + i + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v1)), _mm512_loadu_ps(xp + i + 48), a3);
    }
    for (; i + 32 <= n; i += 32) {
        __m512i v0 = _mm512_loadu_si512(p + i);
        __asm__("" : "+v"(v0));
        a0 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v0)), _mm512_loadu_ps(xp + i), a0);
        a1 = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v0)), _mm512_loadu_ps(xp + i + 16), a1);
    }
    __m512 s = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
    return _mm512_reduce_add_ps(s) + dot_tail(x, w, i, n, ATTN_ST_BF16); /* the last n % 32 in x's order */
}

/* Eight rows at once (w0 and the seven after it, stride weights apart),
 * each against x as dot_avx512bw_bf16 reads it: every load of x serves
 * eight rows, so a long row's x (TinyLlama's W_down: 5,632 floats, 22 KiB,
 * laid out), which the weights streaming through evict from L1, is read
 * from L2 an eighth as often; two accumulators a row (a row's sums as with
 * four rows at once, which this replaced, for the rows in groups of eight:
 * TinyLlama's 22 W_down paired in one process, 1.14× → 1.09–1.11× a plain
 * read of the same bytes). Each row's 32 weights are loaded once into a
 * register (the asm barrier): gcc would fold the load into both of its
 * unpacks and read it twice. Eight rows are eight streams, each crossing a
 * 4 KiB page every few microseconds, where the hardware's prefetcher
 * stops: so each row asks for its line 1 KiB on as it reads one, and near
 * its end for the start of the row eight on (the next group's).
 * TinyLlama's W_down on one thread, paired in one process: 1.29–1.32× →
 * 1.07–1.12× a plain read of the same bytes (other distances, 512 B to 2 KiB:
 * 1.11–1.29×; 1 KiB ahead within each row only, the next group's first
 * kilobyte warmed as the group starts: 1.16–1.19×). */
enum { AHEAD8 = 512 }; /* weights: 1 KiB of each row */
static AVX512BW void dot8_avx512bw_bf16(const float *xp, const float *x, const uint16_t *w0, size_t stride, int n,
                                        bool next, float *y)
{
    __m512 z0 = _mm512_setzero_ps();
    __m512 a[16] = {z0, z0, z0, z0, z0, z0, z0, z0, z0, z0, z0, z0, z0, z0, z0, z0};
    __m512i z = _mm512_setzero_si512();
    int i = 0;
#define ROW_BLOCK(r)                                                                                              \
    do {                                                                                                          \
        __m512i v = _mm512_loadu_si512(w0 + (r) * stride + i);                                                    \
        __asm__("" : "+v"(v));                                                                                    \
        a[2 * (r)] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v)), lo, a[2 * (r)]);          \
        a[2 * (r) + 1] = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v)), hi, a[2 * (r) + 1]);  \
    } while (0)
#define EIGHT_ROWS                                                              \
    do {                                                                        \
        __m512 lo = _mm512_loadu_ps(xp + i), hi = _mm512_loadu_ps(xp + i + 16); \
        ROW_BLOCK(0); ROW_BLOCK(1); ROW_BLOCK(2); ROW_BLOCK(3);                 \
        ROW_BLOCK(4); ROW_BLOCK(5); ROW_BLOCK(6); ROW_BLOCK(7);                 \
    } while (0)
    /* each row's line AHEAD8 weights on asked for as a line is read: in the
     * row, then in the row eight on (the next group's), if there is one */
    for (; i + AHEAD8 + 32 <= n; i += 32) {
        for (int r = 0; r < 8; r++) __builtin_prefetch(w0 + r * stride + i + AHEAD8, 0, 2);
        EIGHT_ROWS;
    }
    for (; next && i + 32 <= n; i += 32) {
        int at = i + AHEAD8 - n > 0 ? i + AHEAD8 - n : 0;
        for (int r = 8; r < 16; r++) __builtin_prefetch(w0 + r * stride + at, 0, 2);
        EIGHT_ROWS;
    }
    for (; i + 32 <= n; i += 32) EIGHT_ROWS;
#undef EIGHT_ROWS
#undef ROW_BLOCK
    /* unrolled, as every use of a[] is: with constant indices gcc keeps the
     * sixteen in registers (a loop here put them on the stack, zeroed by rep stos) */
#define ROW_SUM(r) \
    (y[r] = _mm512_reduce_add_ps(_mm512_add_ps(a[2 * (r)], a[2 * (r) + 1])) + dot_tail(x, w0 + (r) * stride, i, n, ATTN_ST_BF16))
    ROW_SUM(0), ROW_SUM(1), ROW_SUM(2), ROW_SUM(3), ROW_SUM(4), ROW_SUM(5), ROW_SUM(6), ROW_SUM(7);
#undef ROW_SUM
}

enum { LONG_ROW = 4096 }; /* a row whose x no longer stays in L1 beside the weights: eight at a time */

/* Rows [a, b) of BF16 matrix w times x (xp: x laid out by bf16_order) into
 * y[a..b) by dot_avx512bw_bf16, or for rows longer than LONG_ROW by
 * dot8_avx512bw_bf16, eight at a time (its sums in another order: within a
 * few ulps). Which rows go eight at a time is the matrix's alone (rows 8i ..
 * 8i + 7; the last rows % 8 one by one), not [a, b)'s: a group that [a, b)
 * cuts is computed whole and only its rows in [a, b) kept, so a row's number
 * is the same however the rows are shared out. */
static void rows_avx512bw_bf16(const attn_wmat *w, const float *xp, const float *x, float *y, int a, int b)
{
    int full = w->cols > LONG_ROW ? w->rows / 8 * 8 : 0; /* rows [0, full) go eight at a time */
    for (int g = a / 8 * 8; g < b && g < full; g += 8) {
        float eight[8];
        if (g + 8 == full) warm_row(w, full); /* the rows after the last group, one at a time, if any */
        dot8_avx512bw_bf16(xp, x, (const uint16_t *)row_at(w, g), w->stride, w->cols, g + 16 <= w->rows, eight);
        for (int r = g > a ? g : a; r < g + 8 && r < b; r++) y[r] = eight[r - g];
    }
    for (int r = a > full ? a : full; r < b; r++) y[r] = dot_avx512bw_bf16(xp, x, row_at(w, r), w->cols);
}
#endif

/* [kernel][dtype] */
static const dot_fn DOTS[ATTN_WMAT_KERNELS][3] = {
    {dot_c_f32, dot_c_f16, dot_c_bf16},
#if WMAT_X86
    {dot_avx2_f32, dot_avx2_f16, dot_avx2_bf16},
    {dot_avx512_f32, dot_avx512_f16, dot_avx512_bf16},
#endif
};
static const char *const NAMES[ATTN_WMAT_KERNELS] = {"plain C", "AVX2", "AVX-512"};

#if WMAT_X86
/* F16C (CPUID leaf 1, ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c". */
static bool has_f16c(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}
#endif

bool attn_wmat_has(attn_wmat_kernel k)
{
#if WMAT_X86
    __builtin_cpu_init();
    if (k == ATTN_WMAT_AVX2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
    if (k == ATTN_WMAT_AVX512) return __builtin_cpu_supports("avx512f");
#endif
    return k == ATTN_WMAT_C;
}

static atomic_int chosen = -1; /* the kernel in use; -1 until the first product */
#if WMAT_X86
static atomic_int ordered_bf16 = -1; /* with AVX-512: whether BW's bfloat16 kernel runs; -1 until asked */

/* Whether w's rows go through rows_avx512bw_bf16: BF16, the AVX-512 kernel, a CPU with BW. */
static bool use_ordered(const attn_wmat *w, attn_wmat_kernel k)
{
    if (w->dtype != ATTN_ST_BF16 || k != ATTN_WMAT_AVX512 || w->cols > ORDERED_MAX) return false;
    int bw = atomic_load(&ordered_bf16);
    if (bw < 0) {
        __builtin_cpu_init();
        atomic_store(&ordered_bf16, bw = __builtin_cpu_supports("avx512bw") ? 1 : 0);
    }
    return bw;
}
#endif

static const char *const KEYS[ATTN_WMAT_KERNELS] = {"c", "avx2", "avx512"};

/* $ATTNLAB_KERNEL's kernel when the CPU has it, else the widest it has. */
static attn_wmat_kernel kernel(void)
{
    int k = atomic_load(&chosen);
    if (k >= 0) return (attn_wmat_kernel)k;
    const char *want = getenv("ATTNLAB_KERNEL");
    k = ATTN_WMAT_KERNELS;
    for (int i = 0; want && i < ATTN_WMAT_KERNELS; i++)
        if (!strcmp(want, KEYS[i]) && attn_wmat_has((attn_wmat_kernel)i)) k = i;
    if (k == ATTN_WMAT_KERNELS)
        k = attn_wmat_has(ATTN_WMAT_AVX512) ? ATTN_WMAT_AVX512 : attn_wmat_has(ATTN_WMAT_AVX2) ? ATTN_WMAT_AVX2
                                                                                              : ATTN_WMAT_C;
    atomic_store(&chosen, k);
    return (attn_wmat_kernel)k;
}

bool attn_wmat_use(attn_wmat_kernel k)
{
    if (k < 0 || k >= ATTN_WMAT_KERNELS || !attn_wmat_has(k)) return false;
    atomic_store(&chosen, (int)k);
    return true;
}

const char *attn_wmat_kernel_name(void) { return NAMES[kernel()]; }

/* ---- products ---- */

/* float32, packed and float-aligned: ops.c's path, the reference tests' numbers. */
static bool plain_f32(const attn_wmat *w)
{
    return w->dtype == ATTN_ST_F32 && w->stride == (size_t)w->cols && (uintptr_t)w->data % sizeof(float) == 0;
}

/* Rows [j0, j1) of the n matrices stacked times x; xp is x laid out by
 * bf16_order, or NULL (then no matrix goes through the ordered kernel). */
static void part_rows(const attn_wmat *w, int n, const float *x, const float *xp, float *y, int j0, int j1)
{
    attn_wmat_kernel k = kernel();
    const dot_fn *dots = DOTS[k];
    for (int i = 0, at = 0; i < n && at < j1; at += w[i].rows, i++) {
        int a = j0 > at ? j0 - at : 0, b = j1 - at < w[i].rows ? j1 - at : w[i].rows; /* matrix i's rows [a, b) */
        if (a >= b) continue;
        if (plain_f32(&w[i])) /* ops.c's float32 dot, as attn_wmat_product_row takes it */
            attn_op_project_t(x, (const float *)w[i].data + (size_t)a * w[i].cols, y + at + a, 1, w[i].cols, b - a);
#if WMAT_X86
        else if (xp && use_ordered(&w[i], k))
            rows_avx512bw_bf16(&w[i], xp, x, y + at, a, b);
#endif
        else
            for (int r = a; r < b; r++) {
                warm_row(&w[i], r + 1);
                y[at + r] = dots[w[i].dtype](x, row_at(&w[i], r), w[i].cols);
            }
    }
    (void)xp;
}

void attn_wmat_x_set(attn_wmat_x *in, const attn_wmat *w, int n, const float *x)
{
    in->x = x;
    in->ordered = false;
#if WMAT_X86
    for (int i = 0; i < n && !in->ordered; i++) in->ordered = use_ordered(&w[i], kernel());
    if (in->ordered) bf16_order(x, in->xp, w[0].cols); /* the n matrices have the same cols */
#else
    (void)w, (void)n;
#endif
}

void attn_wmat_product_x(const attn_wmat *w, int n, const attn_wmat_x *in, float *y, int j0, int j1)
{
    part_rows(w, n, in->x, in->ordered ? in->xp : NULL, y, j0, j1);
}

void attn_wmat_product_part(const attn_wmat *w, int n, const float *x, float *y, int j0, int j1)
{
    attn_wmat_x in;
    attn_wmat_x_set(&in, w, n, x);
    attn_wmat_product_x(w, n, &in, y, j0, j1);
}

int attn_wmat_chunk_rows(const attn_wmat *w, int n, int threads)
{
    int total = 0;
    for (int i = 0; i < n; i++) total += w[i].rows;
    if (threads < 2 || total < 1) return total > 0 ? total : 1;
    /* 32 chunks a thread, or 1 MB of weights a chunk when that makes more
     * (a vocabulary's LM head), a multiple of 16 rows (a cache line of y) */
    size_t chunks = (size_t)32 * threads, by_bytes = attn_wmat_bytes(w, n) >> 20;
    chunks = by_bytes > chunks ? by_bytes : chunks;
    size_t rows = ((size_t)total + chunks - 1) / chunks;
    rows = (rows + 15) / 16 * 16;
    return rows < (size_t)total ? (int)rows : total;
}

void attn_wmat_product_row_claimed(const attn_wmat *w, int n, const float *x, float *y, attn_team_barrier *b)
{
#ifdef _OPENMP
    int threads = omp_get_num_threads();
#else
    int threads = 1;
#endif
    int total = 0, rows = attn_wmat_chunk_rows(w, n, threads);
    for (int i = 0; i < n; i++) total += w[i].rows;
    attn_wmat_x in;
    attn_wmat_x_set(&in, w, n, x);
    for (int c; (c = attn_team_claim_own(b, (total + rows - 1) / rows)) >= 0;) {
        int j0 = c * rows, j1 = j0 + rows < total ? j0 + rows : total;
        attn_wmat_product_x(w, n, &in, y, j0, j1);
    }
    attn_team_wait(b);
}

void attn_wmat_team_share(int total, int *j0, int *j1)
{
#ifdef _OPENMP
    int nt = omp_get_num_threads(), id = omp_get_thread_num();
#else
    int nt = 1, id = 0;
#endif
    *j0 = (int)((long long)total * id / nt);
    *j1 = (int)((long long)total * (id + 1) / nt);
}

void attn_wmat_product_row(const attn_wmat *w, int n, const float *x, float *y)
{
    int total = 0, cols = n ? w[0].cols : 0;
    bool f32 = true;
    for (int i = 0; i < n; i++) total += w[i].rows, f32 = f32 && plain_f32(&w[i]);
    if (f32) { /* today's float32 decode: each matrix through dot_rows */
        for (int i = 0, at = 0; i < n; at += w[i].rows, i++)
            attn_op_project_t(x, w[i].data, y + at, 1, cols, w[i].rows);
        return;
    }
    /* y[j] for the group's rows j, matrix i's rows after matrix i−1's, in one share a thread */
    #pragma omp parallel if ((size_t)total * cols > 65536)
    {
        int j0, j1;
        attn_wmat_team_share(total, &j0, &j1);
        attn_wmat_product_part(w, n, x, y, j0, j1);
    }
}

size_t attn_wmat_bytes(const attn_wmat *w, int n)
{
    size_t bytes = 0;
    for (int i = 0; i < n; i++) bytes += (size_t)w[i].rows * w[i].cols * attn_st_dtype_size(w[i].dtype);
    return bytes;
}

/* The bytes [p, p + len) as the 64-bit words at 8-aligned addresses they
 * fall in, a word's bytes outside [p, p + len) taken as 0, added up
 * (wrapping): the same total however the bytes are split between calls
 * (threads, rows) and whichever loop adds the whole words. To be the bound a
 * product cannot beat, the read must run as far ahead of the memory as the
 * products do: the widest loads the kernel in use has (a 16-byte load a
 * word pair, as the compiler vectorises plain C for x86-64, left a core
 * fewer lines in flight: TinyLlama's step weights in 149 ms against 106 with
 * 64-byte loads, in the slow state of STREAM_AHEAD's figures) and every line
 * asked for STREAM_AHEAD on, as dot_avx512bw_bf16 does (106 → 86 ms): as far
 * ahead as the products ask or further, so still a bound for each of them. */
static uint64_t words_c(const unsigned char *q, size_t words)
{
    uint64_t sum = 0;
    size_t i = 0, len = 8 * words;
    for (; i + 64 <= len; i += 64) { /* a line: eight words, added as the build's vectors allow */
        if (i + STREAM_AHEAD < len) __builtin_prefetch(q + i + STREAM_AHEAD, 0, 2);
        #pragma omp simd reduction(+ : sum)
        for (int j = 0; j < 8; j++) {
            uint64_t w;
            memcpy(&w, q + i + 8 * j, sizeof w);
            sum += w;
        }
    }
    for (; i < len; i += 8) { /* the last words of a line */
        uint64_t w;
        memcpy(&w, q + i, sizeof w);
        sum += w;
    }
    return sum;
}

#if WMAT_X86
static AVX2 uint64_t words_avx2(const unsigned char *q, size_t words)
{
    __m256i a = _mm256_setzero_si256(), b = a;
    size_t i = 0, len = 8 * words;
    for (; i + 64 <= len; i += 64) { /* a line: two 32-byte loads */
        if (i + STREAM_AHEAD < len) __builtin_prefetch(q + i + STREAM_AHEAD, 0, 2);
        a = _mm256_add_epi64(a, _mm256_loadu_si256((const __m256i *)(q + i)));
        b = _mm256_add_epi64(b, _mm256_loadu_si256((const __m256i *)(q + i + 32)));
    }
    uint64_t lanes[4], sum = 0;
    _mm256_storeu_si256((__m256i *)lanes, _mm256_add_epi64(a, b));
    for (int l = 0; l < 4; l++) sum += lanes[l];
    return sum + words_c(q + i, words - i / 8);
}

static AVX512 uint64_t words_avx512(const unsigned char *q, size_t words)
{
    __m512i a = _mm512_setzero_si512();
    size_t i = 0, len = 8 * words;
    for (; i + 64 <= len; i += 64) { /* a line a load */
        if (i + STREAM_AHEAD < len) __builtin_prefetch(q + i + STREAM_AHEAD, 0, 2);
        a = _mm512_add_epi64(a, _mm512_loadu_si512(q + i));
    }
    uint64_t lanes[8], sum = 0; /* added as unsigned: _mm512_reduce_add_epi64 adds signed, which may overflow */
    _mm512_storeu_si512(lanes, a);
    for (int l = 0; l < 8; l++) sum += lanes[l];
    return sum + words_c(q + i, words - i / 8);
}
#endif

static uint64_t sum_bytes(const unsigned char *p, size_t len)
{
    uint64_t sum = 0, v;
    size_t off = (uintptr_t)p % 8, head = off ? 8 - off : 0;
    head = head < len ? head : len;
    if (head) { /* the first word's bytes from p on, at their places in it */
        v = 0;
        memcpy((unsigned char *)&v + off, p, head);
        sum += v;
    }
    const unsigned char *q = p + head;
    size_t words = (len - head) / 8, rest = len - head - words * 8;
#if WMAT_X86
    attn_wmat_kernel k = kernel();
    sum += k == ATTN_WMAT_AVX512 ? words_avx512(q, words) : k == ATTN_WMAT_AVX2 ? words_avx2(q, words) : words_c(q, words);
#else
    sum += words_c(q, words);
#endif
    if (rest) { /* the last word's first bytes */
        v = 0;
        memcpy(&v, q + 8 * words, rest);
        sum += v;
    }
    return sum;
}

uint64_t attn_wmat_stream(const attn_wmat *w, int n)
{
    uint64_t sum = 0;
    /* one team for all n, as a decoding step is one parallel region; each
     * matrix's rows in the even shares its product gives the threads */
    #pragma omp parallel reduction(+ : sum) if (attn_wmat_bytes(w, n) > 65536)
    for (int i = 0; i < n; i++) {
        int a, b;
        attn_wmat_team_share(w[i].rows, &a, &b);
        size_t row = (size_t)w[i].cols * attn_st_dtype_size(w[i].dtype);
        if (w[i].stride == (size_t)w[i].cols) /* packed: the share is one run of bytes */
            sum += a < b ? sum_bytes(row_at(&w[i], a), (size_t)(b - a) * row) : 0;
        else
            for (int r = a; r < b; r++) sum += sum_bytes(row_at(&w[i], r), row);
    }
    return sum;
}

int attn_wmat_product(const attn_wmat *w, const float *x, int rows, float *y)
{
    return attn_wmat_product_blocks(w, x, rows, rows, y);
}

int attn_wmat_product_blocks(const attn_wmat *w, const float *x, int rows, int block, float *y)
{
    size_t cols = (size_t)w->cols, out = (size_t)w->rows;
    block = block < 1 ? 1 : block;
    if (plain_f32(w)) {
        for (int b0 = 0; b0 < rows; b0 += block)
            attn_op_project_t(x + b0 * cols, w->data, y + b0 * out, rows - b0 < block ? rows - b0 : block, w->cols, w->rows);
        return 0;
    }
    if (rows % block == 1) /* a last block of one row: the row kernels, as for a decoding step */
        attn_wmat_product_row(w, 1, x + (size_t)(rows - 1) * cols, y + (size_t)(rows - 1) * out);
    rows -= block == 1 ? 0 : rows % block == 1; /* the rest: blocks of two rows or more (or each row alone) */
    if (block == 1 || rows == 0) {
        for (int r = 0; r < rows; r++) attn_wmat_product_row(w, 1, x + r * cols, y + r * out);
        return 0;
    }
    /* a panel of nb rows of W widened (nb · cols floats, 4 MiB), multiplied by
     * sgemm, one block of x's rows at a time, into part (rows, nb), placed in
     * y's columns [r0, r0 + nb): the widening is paid once a panel */
    enum { PANEL_FLOATS = 1 << 20 };
    int nb = PANEL_FLOATS / (w->cols ? w->cols : 1);
    nb = nb < 1 ? 1 : nb > w->rows ? w->rows : nb;
    bool whole = nb == w->rows;
    float *panel = malloc((size_t)nb * cols * sizeof *panel);
    float *part = whole ? y : malloc((size_t)(rows ? rows : 1) * nb * sizeof *part);
    if (!panel || !part) {
        free(panel);
        if (part != y) free(part);
        return -1;
    }
    for (int r0 = 0; r0 < w->rows; r0 += nb) {
        int m = w->rows - r0 < nb ? w->rows - r0 : nb;
        attn_wmat_rows(w, r0, m, panel);
        for (int b0 = 0; b0 < rows; b0 += block)
            attn_op_project_t(x + b0 * cols, panel, part + (size_t)b0 * m, rows - b0 < block ? rows - b0 : block,
                              w->cols, m);
        if (whole) continue;
        #pragma omp parallel for schedule(static) if ((size_t)rows * m > 65536) /* y's pages first touched by both */
        for (int r = 0; r < rows; r++) memcpy(y + (size_t)r * out + r0, part + (size_t)r * m, (size_t)m * sizeof *y);
    }
    free(panel);
    if (!whole) free(part);
    return 0;
}

/* out (cols, rows) = wᵀ widened, a TILE × TILE block at a time: TILE rows'
 * runs of TILE weights widened on the stack, then written down out's
 * columns; the row blocks shared by the threads. No copy of the whole of w
 * in float32 on the way (a traced pass does this to four matrices a layer). */
int attn_wmat_transposed(const attn_wmat *w, float *out)
{
    enum { TILE = 32 };
    if (plain_f32(w)) {
        attn_op_transpose(w->data, out, w->rows, w->cols);
        return 0;
    }
    int rows = w->rows, cols = w->cols;
    #pragma omp parallel for schedule(static) if ((size_t)rows * cols > 65536)
    for (int r0 = 0; r0 < rows; r0 += TILE) {
        float tile[TILE][TILE];
        int r1 = r0 + TILE < rows ? r0 + TILE : rows;
        for (int c0 = 0; c0 < cols; c0 += TILE) {
            int c1 = c0 + TILE < cols ? c0 + TILE : cols;
            size_t at = (size_t)c0 * attn_st_dtype_size(w->dtype);
            for (int r = r0; r < r1; r++) attn_st_widen(row_at(w, r) + at, w->dtype, (size_t)(c1 - c0), tile[r - r0]);
            for (int c = c0; c < c1; c++)
                for (int r = r0; r < r1; r++) out[(size_t)c * rows + r] = tile[r - r0][c - c0];
        }
    }
    return 0;
}
