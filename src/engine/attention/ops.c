/* ops.c — the numerical stages. Matrix products go through one gemm: OpenBLAS
 * when it can be used (blas.h: built with it, found, and within the
 * address-space limit), else plain C loops; one row against the rows of a
 * matrix is always the loop dot_rows.
 * Element-wise loops are spread over cores with OpenMP when the build has it;
 * without, its pragmas are ignored and the loops run on one core. */
#include "ops.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine/base/blas.h"
#include "engine/base/rng.h"
#include "engine/trace/rope.h"

int attn_ops_cores(void)
{
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    return 1;
#endif
}

int attn_ops_threads(int n)
{
#ifdef _OPENMP
    int was = omp_get_max_threads();
    if (n > 0) omp_set_num_threads(n);
    return was;
#else
    (void)n;
    return 1;
#endif
}

/* Function multiversioning: one build for AVX2 and one for the baseline ISA,
 * picked at load time. WebAssembly has no such thing (its SIMD is -msimd128,
 * fixed at build time), so the web build has the one function. */
#ifdef __EMSCRIPTEN__
#define ATTN_CLONES_AVX2
#else
#define ATTN_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#endif

/* a · b over kk floats. Built for AVX2 and for the baseline ISA, picked at
 * load time. */
ATTN_CLONES_AVX2
static float dot(const float *restrict a, const float *restrict b, int kk)
{
    float sum = 0.0f;
    #pragma omp simd reduction(+ : sum)
    for (int p = 0; p < kk; p++) sum += a[p] * b[p];
    return sum;
}

/* c[j] = alpha · a · (row j of B), j < n: one row against every row of B, a
 * decoding step's x · Wᵀ or one query against its keys. Each row of B is read
 * once, in order, the rows split between cores: on the 2-core test machine
 * this streamed SmolLM2-135M's 538 MB of weights at 46–47 GB/s where OpenBLAS
 * 0.3.21's sgemv reached 35–42 (medians of 30 passes, two runs). */
static void dot_rows(int n, int kk, float alpha, const float *restrict a, const float *restrict b, int ldb,
                     float *restrict c)
{
    #pragma omp parallel for schedule(static) if ((size_t)n * kk > 65536)
    for (int j = 0; j < n; j++) c[j] = alpha * dot(a, b + (size_t)j * ldb, kk);
}

/* c = alpha · a · B, a (kk), B (kk × n): the rows of B weighted by a and
 * summed, one query's context from its weights and values. On one core: it
 * is for products too small to be worth waking other threads for. */
static void axpy_rows(int n, int kk, float alpha, const float *restrict a, const float *restrict b, int ldb,
                      float *restrict c)
{
    for (int j = 0; j < n; j++) c[j] = 0.0f;
    for (int p = 0; p < kk; p++) {
        const float *bp = b + (size_t)p * ldb;
        float ap = alpha * a[p];
        #pragma omp simd
        for (int j = 0; j < n; j++) c[j] += ap * bp[j];
    }
}

/* The loops' tile of C: GEMM_MR rows × GEMM_NR columns held in registers
 * while p runs over kk. Each step broadcasts A's MR numbers at column p
 * against NR numbers of B's row p: MR·NR multiply-adds for MR + NR loads,
 * where a row at a time (axpy_rows) loads and stores C for every one (the
 * micro-kernel of BLIS and OpenBLAS, in plain C that the compiler unrolls
 * and vectorises: 128-bit SIMD in the web page's wasm). */
#define GEMM_MR 4
#define GEMM_NR 16

/* C (mr × nr, at most the tile) = alpha · A (mr × kk) · B (kk × nr), sums over p in order. */
static void gemm_tile(int mr, int nr, int kk, float alpha, const float *restrict a, int lda, const float *restrict b,
                      int ldb, float *restrict c, int ldc)
{
    float acc[GEMM_MR][GEMM_NR] = {{0}};
    if (mr == GEMM_MR && nr == GEMM_NR) { /* fixed bounds: fully unrolled, acc in registers */
        for (int p = 0; p < kk; p++) {
            const float *bp = b + (size_t)p * ldb;
            for (int r = 0; r < GEMM_MR; r++) {
                float ar = a[(size_t)r * lda + p];
                for (int q = 0; q < GEMM_NR; q++) acc[r][q] += ar * bp[q];
            }
        }
    } else { /* the edges */
        for (int p = 0; p < kk; p++) {
            const float *bp = b + (size_t)p * ldb;
            for (int r = 0; r < mr; r++) {
                float ar = a[(size_t)r * lda + p];
                for (int q = 0; q < nr; q++) acc[r][q] += ar * bp[q];
            }
        }
    }
    for (int r = 0; r < mr; r++)
        for (int q = 0; q < nr; q++) c[(size_t)r * ldc + q] = alpha * acc[r][q];
}

/* C = alpha · A · op(B) by tiles, a column panel of GEMM_NR at a time (the
 * panels split between cores). With trans_b, B is given as Bᵀ (n × kk) and
 * each panel is first copied to kk × GEMM_NR, so that every tile reads rows:
 * GEMM_NR · kk floats a core, never a copy of all of B. False when a panel's
 * memory could not be had (C is then incomplete). */
static bool gemm_tiles(bool trans_b, int m, int n, int kk, float alpha, const float *restrict a, int lda,
                       const float *restrict b, int ldb, float *restrict c, int ldc)
{
    int tiles_n = (n + GEMM_NR - 1) / GEMM_NR;
    bool ok = true;
    #pragma omp parallel if ((size_t)m * n * kk > 65536)
    {
        float *panel = trans_b ? malloc((size_t)kk * GEMM_NR * sizeof *panel) : NULL;
        #pragma omp for schedule(static)
        for (int jt = 0; jt < tiles_n; jt++) {
            int j = jt * GEMM_NR, nr = n - j < GEMM_NR ? n - j : GEMM_NR;
            const float *bj = b + j;
            int ld = ldb;
            if (trans_b) {
                if (!panel) {
                    #pragma omp atomic write
                    ok = false;
                    continue;
                }
                for (int q = 0; q < nr; q++) { /* row j + q of Bᵀ, read in order, is column q of the panel */
                    const float *bq = b + (size_t)(j + q) * ldb;
                    for (int p = 0; p < kk; p++) panel[(size_t)p * GEMM_NR + q] = bq[p];
                }
                bj = panel;
                ld = GEMM_NR;
            }
            for (int i = 0; i < m; i += GEMM_MR)
                gemm_tile(m - i < GEMM_MR ? m - i : GEMM_MR, nr, kk, alpha, a + (size_t)i * lda, lda, bj, ld,
                          c + (size_t)i * ldc + j, ldc);
        }
        free(panel);
    }
    return ok;
}

/* C = alpha · A · op(B), row-major, with op(B) = B (trans_b false) or Bᵀ:
 *   A (m × kk), op(B) (kk × n), C (m × n); lda, ldb, ldc are row strides.
 * By tiles (above) once A has rows enough for one; else loop orders that
 * only walk rows (contiguous memory), so the inner loop vectorises and every
 * cache line read is used whole. */
static void gemm_loop(bool trans_b, int m, int n, int kk, float alpha, const float *restrict a, int lda,
                      const float *restrict b, int ldb, float *restrict c, int ldc)
{
    if (m >= GEMM_MR && gemm_tiles(trans_b, m, n, kk, alpha, a, lda, b, ldb, c, ldc)) return;
    #pragma omp parallel for if ((size_t)m * n * kk > 65536)
    for (int i = 0; i < m; i++) {
        const float *ai = a + (size_t)i * lda;
        float *ci = c + (size_t)i * ldc;
        if (trans_b) /* C[i, j] = alpha · (row i of A) · (row j of B) */
            for (int j = 0; j < n; j++) ci[j] = alpha * dot(ai, b + (size_t)j * ldb, kk);
        else /* row i of C = Σ_p alpha·A[i, p] · (row p of B) */
            axpy_rows(n, kk, alpha, ai, b, ldb, ci);
    }
}

/* C = alpha · A · op(B) as above: one row against rows of B in dot_rows, a
 * small single row through B in axpy_rows; with BLAS, a larger single row as
 * its matrix-vector product (which reads B once instead of packing it first)
 * and the rest as sgemm; without, the loops. */
static void gemm(bool trans_b, int m, int n, int kk, float alpha, const float *restrict a, int lda,
                 const float *restrict b, int ldb, float *restrict c, int ldc)
{
    if (m == 1 && trans_b) {
        dot_rows(n, kk, alpha, a, b, ldb, c);
        return;
    }
    if (m == 1 && (size_t)n * kk <= 65536) {
        axpy_rows(n, kk, alpha, a, b, ldb, c);
        return;
    }
    if (m == 1 ? attn_blas_sgemv(kk, n, alpha, b, ldb, a, c)
               : attn_blas_sgemm(trans_b, m, n, kk, alpha, a, lda, b, ldb, c, ldc))
        return;
    gemm_loop(trans_b, m, n, kk, alpha, a, lda, b, ldb, c, ldc);
}

void attn_op_project(const float *x, const float *w, float *y, int rows, int in, int out)
{
    /* (rows × in) · (in × out): y[r, o] = Σ_i x[r, i] w[i, o] */
    gemm(false, rows, out, in, 1.0f, x, in, w, out, y, out);
}

void attn_op_project_t(const float *x, const float *w, float *y, int rows, int in, int out)
{
    gemm(true, rows, out, in, 1.0f, x, in, w, in, y, out);
}

void attn_op_transpose(const float *x, float *y, int rows, int cols)
{
    enum { TILE = 32 };
    #pragma omp parallel for if ((size_t)rows * cols > 65536)
    for (int r0 = 0; r0 < rows; r0 += TILE)
        for (int c0 = 0; c0 < cols; c0 += TILE) {
            int r1 = r0 + TILE < rows ? r0 + TILE : rows, c1 = c0 + TILE < cols ? c0 + TILE : cols;
            for (int c = c0; c < c1; c++)
                for (int r = r0; r < r1; r++) y[(size_t)c * rows + r] = x[(size_t)r * cols + c];
        }
}

/* One row of attn_op_rmsnorm: Σ x² in double (each square exact), as eight
 * running sums (x[8i + j] into sum j) added in a fixed order at the end:
 * the same total on every build (AVX2, the baseline ISA, WebAssembly),
 * where one running sum made each add wait for the last (2,048 of them at
 * TinyLlama's width, twice a layer in a decoding step). */
ATTN_CLONES_AVX2
static void rmsnorm_row(const float *xr, const float *gain, float *yr, int n, double eps)
{
    double part[8] = {0};
    int i = 0;
    for (; i + 8 <= n; i += 8)
        for (int j = 0; j < 8; j++) part[j] += (double)xr[i + j] * xr[i + j];
    for (int j = 0; i < n; i++, j++) part[j] += (double)xr[i] * xr[i];
    double sq = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    float inv = (float)(1.0 / sqrt(sq / n + eps));
    for (i = 0; i < n; i++) yr[i] = gain[i] * (xr[i] * inv);
}

void attn_op_rmsnorm(const float *x, const float *gain, float *y, size_t rows, int n, double eps)
{
    /* each row alone (y may be x): a prefill's rows shared by the threads */
    #pragma omp parallel for schedule(static) if (rows * (size_t)n > 65536)
    for (size_t r = 0; r < rows; r++) rmsnorm_row(x + r * n, gain, y + r * n, n, eps);
}

void attn_op_add_bias(float *y, const float *bias, size_t rows, int n)
{
    for (size_t r = 0; r < rows; r++)
        for (int j = 0; j < n; j++) y[r * n + j] += bias[j];
}

void attn_op_add(const float *a, const float *b, float *y, size_t n)
{
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) y[i] = a[i] + b[i];
}

void attn_op_split_heads(const float *x, float *y, int b, int n, int heads, int k)
{
    /* a reshape (b, n, heads, k) then a transpose of axes 1 and 2 */
    #pragma omp parallel for collapse(2) if ((size_t)b * n * heads * k > 65536)
    for (int bi = 0; bi < b; bi++)
        for (int j = 0; j < heads; j++)
            for (int i = 0; i < n; i++)
                memcpy(y + (((size_t)bi * heads + j) * n + i) * k,
                       x + ((size_t)bi * n + i) * heads * k + (size_t)j * k, (size_t)k * sizeof *y);
}

int attn_op_rope_table(int n, int k, int pos0, const attn_rope *r, float *cs)
{
    int half = k / 2;
    double *omega = malloc((size_t)(half ? half : 1) * sizeof *omega);
    if (!omega) return -1;
    double A = attn_rope_freqs(r->theta, r->scaling, k, omega);
    if (r->undo) A = 1.0 / A;
    /* a prefill's n positions: 2 · n · k/2 sines and cosines in double, shared by the threads */
    #pragma omp parallel for schedule(static) if ((size_t)n * half > 4096)
    for (int i = 0; i < n; i++)
        for (int m = 0; m < half; m++) {
            double angle = (double)(pos0 + i) * omega[m];
            cs[((size_t)i * half + m) * 2] = (float)(A * cos(angle));
            cs[((size_t)i * half + m) * 2 + 1] = (float)(A * sin(angle));
        }
    free(omega);
    return 0;
}

void attn_op_rope_apply(const float *x, float *y, int b, int heads, int n, int k, const float *cs,
                        attn_rope_style style)
{
    int half = k / 2;
    size_t rows = (size_t)b * heads * n;
    #pragma omp parallel for if (rows * k > 65536)
    for (size_t row = 0; row < rows; row++) {
        const float *xr = x + row * k, *c = cs + (row % n) * half * 2;
        float *yr = y + row * k;
        for (int m = 0; m < half; m++) {
            int a = style == ATTN_ROPE_HALF ? m : 2 * m, bb = style == ATTN_ROPE_HALF ? m + half : 2 * m + 1;
            float x0 = xr[a], x1 = xr[bb], co = c[2 * m], si = c[2 * m + 1];
            yr[a] = x0 * co - x1 * si;
            yr[bb] = x0 * si + x1 * co;
        }
    }
}

int attn_op_rope(const float *x, float *y, int b, int heads, int n, int k, int pos0, const attn_rope *r)
{
    /* cos/sin table for every (position, pair), computed in double: (n, k/2) */
    float *cs = malloc((size_t)n * (k / 2) * 2 * sizeof *cs + sizeof *cs);
    if (!cs || attn_op_rope_table(n, k, pos0, r, cs)) {
        free(cs);
        return -1;
    }
    attn_op_rope_apply(x, y, b, heads, n, k, cs, r->style);
    free(cs);
    return 0;
}

void attn_op_concat_cache(const float *past, const float *now, float *y, int b, int g, int P, int n, int k)
{
    size_t pk = (size_t)P * k, nk = (size_t)n * k;
    for (size_t r = 0; r < (size_t)b * g; r++) {
        memcpy(y + r * (pk + nk), past + r * pk, pk * sizeof *y);
        memcpy(y + r * (pk + nk) + pk, now + r * nk, nk * sizeof *y);
    }
}

void attn_op_repeat_kv(const float *kv, float *y, int b, int g, int h, int t, int k)
{
    int rep = h / g; /* query heads per kv head */
    size_t head = (size_t)t * k;
    #pragma omp parallel for collapse(2) if ((size_t)b * h * head > 65536)
    for (int bi = 0; bi < b; bi++)
        for (int j = 0; j < h; j++)
            memcpy(y + ((size_t)bi * h + j) * head, kv + ((size_t)bi * g + j / rep) * head,
                   head * sizeof *y);
}

void attn_op_scores(const float *q, const float *kx, float *scores, int b, int h, int s, int t, int k,
                    float scale)
{
    /* per (batch, head): (s × k) · (t × k)ᵀ times scale -> (s × t) */
    for (size_t bh = 0; bh < (size_t)b * h; bh++)
        gemm(true, s, t, k, scale, q + bh * s * k, k, kx + bh * t * k, k, scores + bh * s * t, t);
}

void attn_op_build_mask(float *mask, const attn_config *c, const attn_dims *d, const unsigned char *key_pad)
{
    int b = d->b, s = d->s, t = d->t;
    float fill = c->mask_value;
    #pragma omp parallel for collapse(2) if ((size_t)b * s * t > 65536)
    for (int bi = 0; bi < b; bi++)
        for (int i = 0; i < s; i++) {
            float *row = mask + ((size_t)bi * s + i) * t;
            for (int j = 0; j < t; j++)
                row[j] = (attn_op_mask_hidden(c, d, i, j) || key_pad[(size_t)bi * t + j]) ? fill : 0.0f;
        }
}

void attn_op_alibi_bias(float *bias, const double *m, int b, int h, int s, int t, int P)
{
    #pragma omp parallel for collapse(2) if ((size_t)b * h * s * t > 65536)
    for (int bi = 0; bi < b; bi++)
        for (int j = 0; j < h; j++)
            for (int i = 0; i < s; i++) {
                float *row = bias + (((size_t)bi * h + j) * s + i) * t;
                for (int key = 0; key < t; key++) row[key] = (float)(-m[j] * abs(P + i - key));
            }
}

void attn_op_softcap(const float *x, float *y, size_t n, float cap)
{
    #pragma omp parallel for if (n > 65536)
    for (size_t i = 0; i < n; i++) y[i] = cap * tanhf(x[i] / cap);
}

void attn_op_apply_mask(const float *scores, const float *mask, float *masked, int b, int h, int s, int t)
{
    size_t st = (size_t)s * t;
    #pragma omp parallel for collapse(2) if ((size_t)b * h * st > 65536)
    for (int bi = 0; bi < b; bi++)
        for (int j = 0; j < h; j++) {
            const float *sc = scores + ((size_t)bi * h + j) * st, *m = mask + (size_t)bi * st;
            float *out = masked + ((size_t)bi * h + j) * st;
            for (size_t c = 0; c < st; c++) out[c] = sc[c] + m[c];
        }
}

/* e^v for v <= 0, in a form compilers vectorise (Cephes' expf: range reduction
 * v = n·ln2 + r with |r| <= ln2/2, a degree-6 polynomial for e^r, then 2^n
 * built in the exponent bits); relative error below 1e-7 (measured 8e-8). Below -87.3 the
 * result underflows, and it is exactly 0, so masked (-inf) cells stay 0; a NaN
 * (−∞ − −∞ in a row with no visible key) comes out as NaN. */
static inline __attribute__((always_inline)) float exp_nonpos(float v)
{
    const float lo = -87.3f;
    float x = v >= lo ? v : lo; /* a NaN too, so that n below stays a small integer */
    /* n = round(x / ln 2): adding 1.5·2^23 rounds to an integer in float arithmetic */
    float fn = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    int n = (int)fn;
    x = x - fn * 0.693359375f + fn * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * x + 1.3981999507e-3f;
    p = p * x + 8.3334519073e-3f;
    p = p * x + 4.1665795894e-2f;
    p = p * x + 1.6666665459e-1f;
    p = p * x + 5.0000001201e-1f;
    p = p * x * x + x + 1.0f;
    int32_t bits = (n + 127) << 23; /* 2^n as IEEE bits */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return v >= lo ? p * scale : v < lo ? 0.0f : v; /* NaN in, NaN out (the unguarded softmax) */
}

/* y[j] = e^(x[j] - mx); returns Σ y. Built for AVX2 and for the baseline ISA,
 * picked at load time. */
ATTN_CLONES_AVX2
static float exp_row(const float *restrict x, float *restrict y, int t, float mx)
{
    for (int j = 0; j < t; j++) y[j] = exp_nonpos(x[j] - mx);
    float sum = 0.0f;
    #pragma omp simd reduction(+ : sum)
    for (int j = 0; j < t; j++) sum += y[j];
    return sum;
}

float attn_op_row_max(const float *restrict x, int n, float start)
{
    float mx = start;
    #pragma omp simd reduction(max : mx)
    for (int j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx; /* a NaN is skipped */
    if (mx > -FLT_MAX) return mx;
    /* −∞ everywhere, or −FLT_MAX itself (torch.finfo(float32).min as a mask's
     * fill): only which one is in doubt, and a plain "any above −∞" says */
    bool any = start > -INFINITY;
    for (int j = 0; j < n; j++) any |= x[j] > -INFINITY;
    return any ? -FLT_MAX : -INFINITY;
}

float attn_op_exp_shifted(const float *x, float *y, int t, float mx)
{
    return exp_row(x, y, t, mx);
}

/* σ(z) = 1 / (1 + e^(−z)), with e = e^(−|z|) from exp_nonpos (never above
 * 1): 1 / (1 + e) for z ≥ 0 and e / (1 + e) below, so no e^(−z) overflows
 * for very negative z. NaN in, NaN out. */
static inline __attribute__((always_inline)) float sigmoid(float z)
{
    float e = exp_nonpos(-fabsf(z));
    return (z >= 0.0f ? 1.0f : e) / (1.0f + e);
}

float attn_op_sigmoid(float z) { return sigmoid(z); }

/* act = SiLU(g) · up, SiLU(g) = g · σ(g). One vectorised e^x an element
 * (sigmoid) instead of a call to libm's expf (a thread's 2,816 of
 * TinyLlama's 5,632 features: 9.3 → 2.8 µs). Within a few float ulps of
 * g / (1 + expf(−g)) · up; a NaN comes out NaN, g = −∞ gives −∞ · 0 = NaN
 * as −∞ / (1 + e^∞) does, and g = +∞ gives +∞ · up. */
ATTN_CLONES_AVX2
static void swiglu(const float *gate, const float *up, float *act, size_t n)
{
    #pragma omp simd
    for (size_t i = 0; i < n; i++) act[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

void attn_op_swiglu(const float *gate, const float *up, float *act, size_t n)
{
    /* a long vector (the traced pass's rows, a mixture of experts') shared
     * by the threads, a block at a time */
    enum { BLOCK = 4096 };
    size_t blocks = (n + BLOCK - 1) / BLOCK;
    #pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t b = 0; b < blocks; b++) {
        size_t at = b * BLOCK;
        swiglu(gate + at, up + at, act + at, n - at < BLOCK ? n - at : BLOCK);
    }
}

/* act = GELU_tanh(g) · up, GELU_tanh(g) = ½·g·(1 + tanh(u)), u = √(2/π)·(g + 0.044715·g³).
 * ½·(1 + tanh(u)) is exactly σ(2u) = 1 / (1 + e^(−2u)) (sigmoid: e = e^(−2|u|), and 1 / (1 + e)
 * for u ≥ 0, e / (1 + e) below). One vectorised e^x an element instead of libm's tanhf (a call,
 * and e^x inside it: a sixth of a Gemma prefill), and no 1 + tanh(u) cancelling for very negative u. A NaN comes out NaN; g = −∞ gives
 * −∞ · 0 = NaN, as ½·g·(1 + tanh(u)) does. */
ATTN_CLONES_AVX2
static void geglu(const float *gate, const float *up, float *act, size_t n)
{
    const float c = 0.7978845608028654f; /* √(2/π) */
    #pragma omp simd
    for (size_t i = 0; i < n; i++) {
        float g = gate[i], u = c * (g + 0.044715f * g * g * g);
        act[i] = g * sigmoid(2.0f * u) * up[i]; /* 2u exact: the same e and branch as with u */
    }
}

/* The clones on a static function, as the others: clang 14 left an exported
 * target_clones function without its symbol (test-noblas's link failed). */
void attn_op_geglu(const float *gate, const float *up, float *act, size_t n)
{
    geglu(gate, up, act, n);
}

/* Whether every key of mask row m (t) is hidden with −∞. */
static bool row_fully_masked(const float *m, int t)
{
    for (int j = 0; j < t; j++)
        if (m[j] != -INFINITY) return false;
    return t > 0;
}

/* Both softmaxes: sink NULL and X = −∞ for the plain one; Xh (h), when
 * given, each head's own sink logit in place of X. */
static void softmax_rows(const float *x, const float *mask, float *y, float *sink, int b, int h, int s, int t,
                         bool guard, float X0, const float *Xh)
{
    size_t rows = (size_t)b * h * s;
    #pragma omp parallel for if (rows * t > 16384)
    for (size_t r = 0; r < rows; r++) {
        const float *xr = x + r * t;
        float *yr = y + r * t;
        float X = Xh ? Xh[r / (size_t)s % (size_t)h] : X0; /* row r is (bi, head, i) */
        float mx = attn_op_row_max(xr, t, X); /* the sink's logit is one more cell of the row */
        if (mx == -INFINITY) { /* so X = −∞: no sink */
            if (sink) sink[r] = 0.0f;
            /* nothing finite to attend to: row r = (bi, head, i) reads mask row (bi, i) */
            size_t bi = r / ((size_t)h * s), i = r % (size_t)s;
            bool masked = mask && row_fully_masked(mask + (bi * s + i) * t, t);
            if (masked && guard) memset(yr, 0, (size_t)t * sizeof *yr); /* every key masked: weights 0 */
            else for (int j = 0; j < t; j++) yr[j] = NAN; /* exp(-inf - -inf) / Σ, or a NaN score: NaN */
            continue;
        }
        float e_sink = exp_nonpos(X - mx); /* 0 for X = −∞ */
        float inv = 1.0f / (exp_row(xr, yr, t, mx) + e_sink); /* a NaN cell makes the sum, and so the row, NaN */
        #pragma omp simd
        for (int j = 0; j < t; j++) yr[j] *= inv;
        if (sink) sink[r] = isnan(inv) ? NAN : e_sink * inv;
    }
}

void attn_op_softmax(const float *x, const float *mask, float *y, int b, int h, int s, int t, bool guard)
{
    softmax_rows(x, mask, y, NULL, b, h, s, t, guard, -INFINITY, NULL);
}

void attn_op_softmax_sink(const float *x, const float *mask, float *y, float *sink, int b, int h, int s, int t,
                          bool guard, float X)
{
    softmax_rows(x, mask, y, sink, b, h, s, t, guard, X, NULL);
}

void attn_op_softmax_sinks(const float *x, const float *mask, float *y, float *sink, int b, int h, int s, int t,
                           bool guard, const float *X)
{
    softmax_rows(x, mask, y, sink, b, h, s, t, guard, -INFINITY, X);
}

void attn_op_dropout(const float *x, float *y, size_t n, float p, uint64_t key)
{
    float keep_scale = 1.0f / (1.0f - p);
    #pragma omp parallel for if (n > 65536)
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] * (attn_uniform(key, i) < p ? 0.0f : keep_scale); /* x·mask/(1-p): a NaN stays NaN */
}

void attn_op_weighted_sum(const float *w, const float *v, float *ctx, int b, int h, int s, int t, int k)
{
    /* per (batch, head): (s × t) · (t × k) -> (s × k), each row a weighted average of value rows */
    for (size_t bh = 0; bh < (size_t)b * h; bh++)
        gemm(false, s, k, t, 1.0f, w + bh * s * t, t, v + bh * t * k, k, ctx + bh * s * k, k);
}

void attn_op_merge_heads(const float *ctx, float *y, int b, int h, int s, int k)
{
    #pragma omp parallel for collapse(2) if ((size_t)b * s * h * k > 65536)
    for (int bi = 0; bi < b; bi++)
        for (int i = 0; i < s; i++)
            for (int j = 0; j < h; j++)
                memcpy(y + ((size_t)bi * s + i) * h * k + (size_t)j * k,
                       ctx + (((size_t)bi * h + j) * s + i) * k, (size_t)k * sizeof *y);
}
