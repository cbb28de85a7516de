/* wmat.h — a weight matrix read as the checkpoint stores it.
 *
 * A model's projections are y = x · Wᵀ with W (out, in), as nn.Linear keeps
 * it. A view (attn_wmat) points at W where it lies, usually inside the mapped
 * safetensors file, in its own dtype: F32, F16 or BF16. The products read each
 * weight as stored and widen it to float32 in registers, a tile at a time, so
 * a BF16 model streams 2 bytes per weight per token and is never copied to
 * float32 (which would read and write 4). Every widening is exact (every half
 * and bfloat16 is a float); only the order of the sums differs between the
 * kernels, so their results agree to float32 rounding of the sums.
 *
 * Kernels: plain C (a tile widened to a small float buffer, then a dot
 * product), AVX2 with FMA and F16C, and AVX-512F, chosen at the first product:
 * $ATTNLAB_KERNEL's (c, avx2 or avx512) when the CPU has it, else the widest
 * it has; attn_wmat_use forces one (tests compare them).
 * F32 packed matrices take ops.c's float32 path (attn_op_project_t), the one
 * the torch and numpy reference tests were set against. */
#ifndef ATTN_WMAT_H
#define ATTN_WMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/base/team.h"
#include "engine/formats/safetensors.h"

typedef struct {
    const void *data;    /* element (0, 0), little-endian, any alignment */
    attn_st_dtype dtype; /* as stored */
    int rows, cols;      /* (out, in): y = x · Wᵀ */
    size_t stride;       /* elements from one row's start to the next's: cols when packed */
} attn_wmat;

/* A packed view of n elements of dtype at data, (rows, cols). */
attn_wmat attn_wmat_view(const void *data, attn_st_dtype dtype, int rows, int cols);

typedef enum { ATTN_WMAT_C = 0, ATTN_WMAT_AVX2, ATTN_WMAT_AVX512, ATTN_WMAT_KERNELS } attn_wmat_kernel;

/* Whether this CPU (and this build) can run kernel k. */
bool attn_wmat_has(attn_wmat_kernel k);

/* Makes k the kernel of every later product; false, changing nothing, when
 * the CPU cannot run it. */
bool attn_wmat_use(attn_wmat_kernel k);

/* The kernel in use ("AVX-512", "AVX2", "plain C"), for `attnlab info`. */
const char *attn_wmat_kernel_name(void);

/* Rows [r0, r0 + n) of w widened into out (n, cols). */
void attn_wmat_rows(const attn_wmat *w, int r0, int n, float *out);

/* Wᵀ widened into out (cols, rows): the trace's (in, out) weight stages.
 * Returns 0 (it allocates nothing; -1 was out of memory). */
int attn_wmat_transposed(const attn_wmat *w, float *out);

/* y (rows, w.rows) = x (rows, w.cols) · Wᵀ. One row (a decoding step) reads
 * every row of W once, in order, the rows split between the cores. More rows
 * (a prompt) widen a panel of W's rows at a time into a float buffer and
 * multiply it with sgemm (ops.c), so the widening is paid once per panel,
 * not once per row of x. Returns 0, or -1 out of memory (for the panel). */
int attn_wmat_product(const attn_wmat *w, const float *x, int rows, float *y);

/* The same, x's rows taken `block` at a time (the last block shorter): each
 * block is its own product, widened panel by panel once for all blocks, so a
 * row's numbers depend on its block alone, not on how many blocks one call
 * computes (head.c's chunks). attn_wmat_product is one block of every row. */
int attn_wmat_product_blocks(const attn_wmat *w, const float *x, int rows, int block, float *y);

/* One row x against n matrices of the same cols, side by side in y
 * (Σ w[i].rows): y = x · [W_0; W_1; …]ᵀ, one parallel loop for the group
 * (q, k, v; or gate, up) instead of one per matrix. */
void attn_wmat_product_row(const attn_wmat *w, int n, const float *x, float *y);

/* Rows [j0, j1) of that product (y's elements j0 .. j1−1), on the calling
 * thread: the part of a product one thread of a team takes. */
void attn_wmat_product_part(const attn_wmat *w, int n, const float *x, float *y, int j0, int j1);

/* One row x laid out once for the products that read it: the AVX-512 BW
 * kernel for BF16 reads x in an order of its own (wmat.c), which
 * attn_wmat_product_part lays out on every call; a product split into many
 * chunks lays it out once a thread (attn_wmat_x_set) and passes it to each
 * chunk's attn_wmat_product_x. x itself is read too, and must stay. */
enum { ATTN_WMAT_ORDER_MAX = 8192 }; /* the longest row laid out: 32 KiB */
typedef struct {
    const float *x;
    bool ordered;                   /* xp holds x laid out (some matrix of the n takes it) */
    _Alignas(64) float xp[ATTN_WMAT_ORDER_MAX]; /* each 64-byte load of it within one cache line */
} attn_wmat_x;
void attn_wmat_x_set(attn_wmat_x *in, const attn_wmat *w, int n, const float *x);

/* attn_wmat_product_part with x laid out by attn_wmat_x_set (for the same n matrices). */
void attn_wmat_product_x(const attn_wmat *w, int n, const attn_wmat_x *in, float *y, int j0, int j1);

/* The rows one claim of a product of the n matrices takes when threads
 * share it by claims (attn_team_claim): about 32 chunks a thread, or 1 MB of
 * weights a chunk when that makes more; all of them for one thread. */
int attn_wmat_chunk_rows(const attn_wmat *w, int n, int threads);

/* attn_wmat_product_row inside a parallel region that every thread of the
 * team enters, so one region can hold a whole decoding step (kv_step.c)
 * instead of one region per product: the rows are claimed in chunks
 * (attn_wmat_chunk_rows), each thread's own share first and in order
 * (attn_team_claim_own), so a thread that starts late computes fewer of
 * them, then all wait at the team's barrier b (team.h). The numbers are the
 * same however the rows are shared: each element is one row's dot product,
 * whichever thread computes it. */
void attn_wmat_product_row_claimed(const attn_wmat *w, int n, const float *x, float *y, attn_team_barrier *b);

/* The bytes the n matrices take as stored (their rows, not the gaps between). */
size_t attn_wmat_bytes(const attn_wmat *w, int n);

/* Reads every stored byte of the n matrices once, split between the threads
 * as attn_wmat_product_row splits its rows, and does nothing with them but
 * add them up (as 64-bit words, wrapping; returned so nothing is skipped),
 * with the widest loads of the kernel in use, asking for each line 4 KiB
 * ahead (as the BF16 row kernel does; further than the others). Timed, it
 * is what one row's product cannot beat on this machine: memory's read
 * bound for these bytes (`attnlab bench --model M --generate N`). */
uint64_t attn_wmat_stream(const attn_wmat *w, int n);

/* The calling thread's share [*j0, *j1) of total items, split evenly in
 * order between the threads of the enclosing parallel region (all of them
 * outside one). */
void attn_wmat_team_share(int total, int *j0, int *j1);

#endif
