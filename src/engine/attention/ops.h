/* ops.h — the numerical stages of masked multi-head attention, one function each.
 *
 * Every function is pure: it reads its inputs and writes a caller-owned output
 * of the documented shape (row-major, contiguous). Shapes use the trace's names:
 * b batch, s queries, t keys, n new keys, d d_model, h heads, g kv heads, k head dim.
 * forward.c chains these into the traced pipeline. */
#ifndef ATTN_OPS_H
#define ATTN_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/trace/arch.h"
#include "engine/trace/config.h"

/* The cores, and how many threads the stages started from the calling thread
 * use: n > 0 sets it (OpenMP's per-thread setting, which OpenBLAS's OpenMP
 * build follows too), and the count before is returned. The window's worker
 * leaves one core to drawing this way. Without OpenMP: 1, and nothing is set. */
int attn_ops_cores(void);
int attn_ops_threads(int n);

/* y = x @ w : (rows, in) @ (in, out) -> (rows, out). Weights are (in, out). */
void attn_op_project(const float *x, const float *w, float *y, int rows, int in, int out);

/* y = x @ wᵀ : (rows, in) @ (out, in)ᵀ -> (rows, out); the LM head reads the
 * embedding table E (V, d) this way: logits = final_norm · Eᵀ. */
void attn_op_project_t(const float *x, const float *w, float *y, int rows, int in, int out);

/* y = xᵀ : (rows, cols) -> (cols, rows), in tiles that stay in cache: a
 * checkpoint's (out, in) matrix into the trace's (in, out). */
void attn_op_transpose(const float *x, float *y, int rows, int cols);

/* y[r, :] += bias, for each of rows rows of n: Qwen2's q, k, v biases. */
void attn_op_add_bias(float *y, const float *bias, size_t rows, int n);

/* RMSNorm, as Llama: y = x / √(mean(x²) + eps) ⊙ gain, per row of n.
 * No mean is subtracted (unlike LayerNorm), and no bias. x, y: (rows, n); y may be x. */
void attn_op_rmsnorm(const float *x, const float *gain, float *y, size_t rows, int n, double eps);

/* The logistic σ(z) = 1 / (1 + e^−z), as SwiGLU and GeGLU take it (never
 * an overflow: e^−|z| only); NaN in, NaN out. DeepSeek-V3's router scores
 * and gpt-oss's clamped SwiGLU call it too. */
float attn_op_sigmoid(float z);

/* SwiGLU's product: act = SiLU(gate) ⊙ up, SiLU(z) = z · σ(z) = z / (1 + e^−z). (n) */
void attn_op_swiglu(const float *gate, const float *up, float *act, size_t n);
/* Gemma's GeGLU: act = GELU(gate) ⊙ up with GELU's tanh approximation
 * (transformers' gelu_pytorch_tanh): GELU(g) ≈ ½·g·(1 + tanh(√(2/π)·(g + 0.044715·g³))) */
void attn_op_geglu(const float *gate, const float *up, float *act, size_t n);

/* y = a + b, element by element: the residual stream's additions. (n) */
void attn_op_add(const float *a, const float *b, float *y, size_t n);

/* Split the feature axis into heads:
 * (b, n, heads*k) -> (b, heads, n, k),  y[b,j,i,:] = x[b,i, j*k:(j+1)*k] */
void attn_op_split_heads(const float *x, float *y, int b, int n, int heads, int k);

/* Rotary position embedding: pair m of position pos turns by
 * angle = pos * ω_m, ω_m = theta^(-2m/k), m = 0 .. k/2-1 (stretched by
 * Llama 3's or YaRN's rope_scaling when given: arch.h, trace/rope.c). The pair is (a, b) =
 *   interleaved (Meta's llama, llama2.c):   features (2m, 2m+1)
 *   half (Hugging Face's rotate_half):      features (m, m + k/2)
 * and y[a] = A·(x[a] cos(angle) - x[b] sin(angle)), y[b] = A·(x[a] sin(angle) + x[b] cos(angle)),
 * A the scaling's attention factor (YaRN's; 1 for the others).
 * The two are the same rotation of q·k under a permutation of W_Q's and W_K's columns. */
typedef struct {
    double theta;
    attn_rope_style style;
    const attn_rope_scaling *scaling; /* NULL or factor 0: none */
    bool undo; /* turn a rotated key back (with pos0 = −its position): y = R(angle)·x / A */
} attn_rope;


/* x, y: (b, heads, n, k); row i has position pos0 + i; y may be x.
 * Returns 0, or -1 if its (n, k/2) cos/sin table could not be allocated. */
int attn_op_rope(const float *x, float *y, int b, int heads, int n, int k, int pos0, const attn_rope *r);

/* attn_op_rope in two halves, for a table used more than once (a decoding
 * step's every head and layer at one position): the table of positions
 * pos0 .. pos0 + n − 1, (n, k/2) pairs (cos, sin) · A, 2 · n · (k/2) floats
 * into cs (returns −1 out of memory for ω), then x turned by it. */
int attn_op_rope_table(int n, int k, int pos0, const attn_rope *r, float *cs);
void attn_op_rope_apply(const float *x, float *y, int b, int heads, int n, int k, const float *cs,
                        attn_rope_style style);

/* KV cache: append the new positions after the cached ones along the position axis:
 * past (b, g, P, k) ++ now (b, g, n, k) -> (b, g, P+n, k) */
void attn_op_concat_cache(const float *past, const float *now, float *y, int b, int g, int P, int n, int k);

/* repeat_kv: (b, g, t, k) -> (b, h, t, k); query head j reads kv head j / (h/g). */
void attn_op_repeat_kv(const float *kv, float *y, int b, int g, int h, int t, int k);

/* scores = q kᵀ · scale : (b, h, s, k) · (b, h, t, k)ᵀ -> (b, h, s, t); scale is 1/√k
 * (or 1 to show what the scaling prevents) */
void attn_op_scores(const float *q, const float *kx, float *scores, int b, int h, int s, int t, int k,
                    float scale);

/* ALiBi's bias (b, h, s, t): bias[b,j,i,key] = −m[j]·|(P + i) − key|, query i
 * at absolute position P + i, key at its own position; m (h) from attn_alibi_slopes (stages.h). */
void attn_op_alibi_bias(float *bias, const double *m, int b, int h, int s, int t, int P);

/* Soft-capping: y = C·tanh(x / C), element by element (n): about x while
 * |x| ≪ C, never beyond ±C. */
void attn_op_softcap(const float *x, float *y, size_t n, float cap);

/* Additive mask (b, 1, s, t): 0 where query i may read key j, `fill` where not.
 * Query i sits at absolute position P + i; key j at position j.
 * Masked if key j is in the future (causal ON: j > P + i) or key_pad[b, j] (a
 * <pad> key, for every query). The REVERSED pitfall masks the past (j < P + i).
 * A sliding window W > 0 also masks keys too far away: j <= P + i − W, and
 * without the causal mask j >= P + i + W too (a window on both sides);
 * with keep_first N the keys j < N stay out of that (StreamingLLM's kept
 * first tokens: only the window spares them, never the causal or pad mask).
 * Cross-attention has no causal mask: its keys are the source. Every mask
 * setting of c is read here, so a new kind of mask is a change to this op.
 * Sizes from d; key_pad is (b, t); the fill is c->mask_value. */
void attn_op_build_mask(float *mask, const attn_config *c, const attn_dims *d, const unsigned char *key_pad);

/* Whether the causal mask or the window (not the pads) hides key j from
 * query i (at position P + i): the rule attn_op_build_mask applies to every
 * cell, and the tiled path (tiles.h) to the cells of one tile. */
static inline bool attn_op_mask_hidden(const attn_config *c, const attn_dims *d, int i, int j)
{
    attn_causal causal = d->cross ? ATTN_CAUSAL_OFF : c->causal;
    int p = d->P + i, W = c->sliding_window;
    bool hidden = causal == ATTN_CAUSAL_ON ? j > p : causal == ATTN_CAUSAL_REVERSED ? j < p : false;
    if (W > 0 && j >= c->keep_first && (j <= p - W || (causal != ATTN_CAUSAL_ON && j >= p + W))) hidden = true;
    return hidden;
}

/* masked = scores + mask, the mask broadcast over heads: (b,h,s,t) + (b,1,s,t) */
void attn_op_apply_mask(const float *scores, const float *mask, float *masked, int b, int h, int s, int t);

/* Row softmax over the last axis of x (b,h,s,t), max-subtracted for stability:
 *   w[j] = exp(x[j] - max x) / Σ exp(x[j'] - max x)
 * mask (b,1,s,t) is the mask x was built with (broadcast over heads), or NULL
 * for rows no mask touched (a model's logits: b = h = 1, s rows, t = V).
 *
 * A row is fully masked when every key of its mask row is −∞: the query has
 * nothing to attend to, no probability mass to share. With guard it becomes
 * all zeros; without, it is what the formula gives there (and what
 * torch.softmax returns): max x = -inf, x[j] - max x = -inf - -inf = NaN, so
 * every weight is NaN.
 *
 * Only the mask decides that. A row whose max is −∞ or NaN for another reason
 * (its scores are NaN, or −∞, because the weights or inputs were) is not one
 * the guard is for: it follows the formula and comes out NaN, as any row
 * holding a NaN does (one NaN makes the sum NaN), so the NaN shows where it
 * came from instead of passing for a row of zeros. A finite fill (-1e9) never
 * makes a row fully masked: its row is spread evenly over the masked keys. */
void attn_op_softmax(const float *x, const float *mask, float *y, int b, int h, int s, int t, bool guard);

/* The softmax above with a sink: one more logit X in every row, dropped after
 * the softmax (gpt-oss). With M = max(max x, X):
 *   y[j] = e^(x[j] − M) / Z,  sink[r] = e^(X − M) / Z,  Z = Σ e^(x[j] − M) + e^(X − M)
 * so each row of y sums to 1 − sink[r]. sink is (b, h, s). A row whose keys
 * are all masked (−∞) has M = X: every weight 0 and the sink 1, with or
 * without the guard, as torch.softmax over the row with X appended gives.
 * A NaN score still makes the row NaN. X = −∞ is the plain softmax, sink 0. */
void attn_op_softmax_sink(const float *x, const float *mask, float *y, float *sink, int b, int h, int s, int t,
                          bool guard, float X);
/* The same with one X per head: X (h), head hh's rows (bi, hh, ·) taking
 * X[hh] (gpt-oss's learned sinks, self_attn.sinks). */
void attn_op_softmax_sinks(const float *x, const float *mask, float *y, float *sink, int b, int h, int s, int t,
                           bool guard, const float *X);

/* y[j] = e^(x[j] − mx) for x[j] ≤ mx, the softmax's vectorised exp (−∞ gives
 * exactly 0, NaN stays NaN); returns Σ y. x, y: (t). The tiled path's. */
float attn_op_exp_shifted(const float *x, float *y, int t, float mx);

/* max(start, x[0], …, x[n − 1]), NaNs skipped: −∞ exactly when start and
 * every x[j] are −∞ (a row with no visible key), which the softmaxes test.
 * Its loop is an OpenMP simd max reduction, whose lanes start at the type's
 * least value: −FLT_MAX as the specification says (clang, and emcc for the
 * web page; gcc starts them at −∞). A row of −∞ then came out −FLT_MAX and
 * its softmax 0/0 = NaN (lesson 5's left-padded rows on the page): a result
 * at or below −FLT_MAX is settled by a second, plain look. */
float attn_op_row_max(const float *x, int n, float start);

/* Inverted dropout: y = x / (1 - p) where kept, x·0 where dropped (0, or NaN
 * for a NaN cell, as PyTorch's x·mask/(1-p) gives). Cell i is dropped iff
 * uniform(key, i) < p, so the mask is a pure function of (key, i). */
void attn_op_dropout(const float *x, float *y, size_t n, float p, uint64_t key);

/* context = weights @ v : (b, h, s, t) @ (b, h, t, k) -> (b, h, s, k) */
void attn_op_weighted_sum(const float *w, const float *v, float *ctx, int b, int h, int s, int t, int k);

/* Concatenate heads back: (b, h, s, k) -> (b, s, h*k),  y[b,i, j*k:(j+1)*k] = ctx[b,j,i,:] */
void attn_op_merge_heads(const float *ctx, float *y, int b, int h, int s, int k);

#endif
