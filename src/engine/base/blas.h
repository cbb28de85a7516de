/* blas.h — OpenBLAS, opened when the first matrix product needs it.
 *
 * OpenBLAS sets itself up in a constructor, code that runs as soon as the
 * library is loaded: it maps a 128 MiB work buffer for each thread it may use,
 * and when mmap and malloc both fail it tries again, forever, without a word.
 * Linked into attnlab, that ran before main, so under `ulimit -v 300000` even
 * `attnlab --help` hung, silently, before its first line (issue 21).
 *
 * So the library is not linked but opened with dlopen, the first time a
 * product is computed, and only when the address-space limit still leaves
 * room for it then: its code, its start-up buffers and one more for the
 * thread that calls it, and a buffer and a stack for each compute thread
 * beyond them. When the room is not there (or the library is not found), the
 * products run in the engine's own loops (ops.c): slower, the same numbers up
 * to rounding. The data comes first: the budget (budget.h) does not keep room
 * for a library not opened yet, so a trace may take what OpenBLAS would have,
 * and a larger limit never refuses what a smaller one allowed. A command that
 * never multiplies (--help, info, models, lessons) never opens it at all. */
#ifndef ATTN_BLAS_H
#define ATTN_BLAS_H

#include <stdbool.h>
#include <stddef.h>

/* C = alpha · A · op(B), row-major, op(B) = B or Bᵀ (trans_b): OpenBLAS's
 * sgemm. Returns false, computing nothing, when OpenBLAS is not to be used. */
bool attn_blas_sgemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                     int ldb, float *c, int ldc);

/* c = alpha · a · B for one row a (k), B (k × n) row-major: OpenBLAS's sgemv
 * on Bᵀ. Returns false, computing nothing, when OpenBLAS is not to be used. */
bool attn_blas_sgemv(int k, int n, float alpha, const float *b, int ldb, const float *a, float *c);

/* The address space a forward pass on `threads` compute threads will still
 * map for OpenBLAS once it is open: a buffer for each thread beyond those it
 * mapped at its start, and the caller's. 0 while it is not open (it opens
 * only where there is room then) and without it. */
double attn_blas_reserve(int threads);

/* The threads OpenBLAS starts with: OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or
 * OMP_NUM_THREADS, else every core (at most every core). */
int attn_blas_start_threads(void);

/* The threads a forward pass runs on: OpenMP's, else OpenBLAS's start. */
int attn_blas_compute_threads(void);

/* The stacks of `threads` compute threads beyond the caller: RLIMIT_STACK
 * each (glibc's 2 MiB default when unlimited). */
double attn_blas_thread_stacks(int threads);

/* OpenBLAS picks its kernels by the CPU's model number, from a table fixed
 * at its release: on an Intel model newer than the table it falls back to
 * Prescott's SSE3 kernels (Debian 12's 0.3.21 on an Emerald Rapids Xeon,
 * model 207: TinyLlama's untraced prefill of 512 tokens 28-37 s, against
 * 8.0 s with its AVX-512 ones). On Intel its kernels follow the CPU's
 * features: its AVX-512 cores (SkylakeX, CooperLake, SapphireRapids) share
 * SkylakeX's single-precision kernels, its AVX2 ones Haswell's.
 * attn_blas_core_for names that core (OPENBLAS_CORETYPE's value) for an
 * Intel CPU with those features, NULL for any other CPU, whose vendor's
 * table OpenBLAS keeps (with its fallback for a CPU it does not know).
 * attn_blas_choose_core sets OPENBLAS_CORETYPE to it, before the library is
 * opened, unless the user set one, and returns the core it set (NULL: none).
 * It changes the environment, so it is called before any thread starts
 * (main does). */
const char *attn_blas_core_for(bool intel, bool avx512, bool avx2);
const char *attn_blas_choose_core(void);

/* What the products run on, for `attnlab info`: "OpenBLAS (PATH), opened at
 * the first product", "OpenBLAS (PATH, 2 threads)", "the engine's own loops:
 * OpenBLAS needs about 335 MiB, more than the address-space limit leaves",
 * "the engine's own loops (built without OpenBLAS)". Returns buf. */
const char *attn_blas_describe(char *buf, size_t size);

#endif
