/* tiles.h — FlashAttention: a layer's context tile by tile, with the online
 * softmax, never holding a row of attention weights.
 *
 * For each query row i (one head) the keys go by in tiles j of BK keys, and
 * the row keeps three things: a running max m, a running sum ℓ and a partial
 * output O (k). With S_j the row's masked scores in tile j (the scores, + the
 * ALiBi bias, soft-capped, + the mask: what the plain path's softmax reads):
 *
 *     m′ = max(m, rowmax S_j)
 *     ℓ′ = e^(m − m′)·ℓ + Σ e^(S_j − m′)
 *     O′ = e^(m − m′)·O + e^(S_j − m′)·V_j
 *
 * from m = −∞, ℓ = 0, O = 0; at the end context = O / ℓ. The factor
 * e^(m − m′) rescales what was summed against the old max to the new one, so
 * the result is the plain softmax(S)·V exactly, up to float rounding, for
 * every tile size. A tile whose keys are all masked (−∞) changes nothing;
 * under the causal mask with a fill of −∞ the tiles wholly in the future of
 * a query tile are not computed at all.
 *
 * BQ query rows go together (one BQ × BK product of scores and one BQ × k of
 * values a tile), so what one (batch row, head, query tile) holds is a
 * BQ × BK tile of scores and BQ × k of output: never s × t.
 *
 * The rest of the plain path's semantics, kept:
 *   sink logit X:   one more term e^(X − m) in ℓ at the end (m′ = max(m, X)),
 *                   with no value: each row sums to 1 − p_sink
 *   fully masked:   a row none of whose keys the mask lets through ends with
 *                   ℓ = 0: context 0 with the softmax guard, NaN without (or
 *                   0 with a sink, which takes everything)
 *   dropout:        a tile drops the cells attn_op_dropout drops (its mask is
 *                   a pure function of the seed and the cell's index in
 *                   (b, h, s, t)), from O only: ℓ sums what the softmax
 *                   normalises, before dropout, as FlashAttention does
 *
 * Mode mla (multi-head latent attention, mla.h) runs the same loop on its own
 * keys: S_j = (q_nope·k_nope_jᵀ + q_pe·k_pe_jᵀ) / √(dₖ + D), with k_pe one key
 * for every head. Naive, the keys and values are the heads' rebuilt k_nope and
 * v_up; absorbed, the query is q_latent and both the keys and the values are
 * the latent cache c_kv itself, one for every head (as FlashMLA reads its
 * cache): O and the context are then latent, R wide (context_latent), and
 * W_UV comes after. */
#ifndef ATTN_TILES_H
#define ATTN_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "engine/base/error.h"
#include "engine/trace/config.h"
#include "engine/trace/trace.h"

typedef struct {
    const attn_config *c;   /* tiles, scale, every mask setting and fill, alibi, softcap, sink, guard, dropout */
    const attn_dims *d;     /* b, h, s, t, k, P, cross */
    const float *q;         /* (b, h, s, k): queries ready for the scores (normalised, rotated) */
    const float *keys;      /* kv head j of batch row bi: t rows of k at (bi·kv_heads + j)·kv_stride */
    const float *values;    /* the same layout */
    int kv_heads;           /* query head hh reads kv head hh / (h / kv_heads): GQA, MQA, or h */
    size_t kv_stride;       /* floats between kv heads' first rows: t·k, or a cache's cap·k */
    const unsigned char *key_pad; /* (b, t): 1 for a key the pad mask hides; NULL: none */
    float *ctx;             /* (b, h, s, k): out */
    float *tile_max;        /* (b, h, s, T), T = ⌈t / BK⌉: m after each key tile; NULL: not kept */
    float *tile_sum;        /* (b, h, s, T): ℓ after each key tile; NULL: not kept */
    uint64_t dropout_key;   /* training with dropout: attn_dropout_key(c, "attention") (attention.h) */
    const float *sinks;     /* (h): each query head's learned sink logit X_h (gpt-oss), in place of
                             * c->sink_logit; NULL: c's, one for every head */
    /* mode mla (mla.h); all 0 / NULL otherwise */
    int qk_dim;             /* features of q and of the keys: 0 is d->k; absorbed, the latent's R */
    int v_dim;              /* features of the values and of ctx: 0 is d->k; absorbed, R */
    size_t v_stride;        /* floats between the values' kv heads: 0 is kv_stride */
    const float *q_pe;      /* (b, h, s, pe_dim): the RoPE part of each query head; NULL: none */
    const float *k_pe;      /* (b, t, pe_dim): its key, one for every head */
    int pe_dim;             /* D: a score is (q·k + q_pe·k_pe) / √(d->k + D) */
    double score_gain;      /* that score times it (DeepSeek's YaRN mscale², arch.h's mla_score_gain); 0: 1 */
} attn_tiled;

/* The context of a by tiles of c->tiles (BQ × BK). ATTN_ERR_NOMEM when a
 * tile's scratch could not be had. */
attn_status attn_tiled_attention(const attn_tiled *a, attn_error *err);

/* A traced layer's context by tiles, from its queries qh (b, h, s, k) and its
 * k_expanded, v_expanded, into its context stage, with tile_max and tile_sum
 * when the trace keeps them; dropout_key and sinks (NULL: none per head) as in
 * attn_tiled. Mode mla (qh not
 * read): from q_nope, q_pe, k_nope, k_pe, v_up into context (naive), or from
 * q_latent, q_pe, c_kv, k_pe into context_latent (absorbed: attn_mla_up_project
 * makes the context from it). */
attn_status attn_tiles_layer(attn_trace *tr, int layer, const float *qh, uint64_t dropout_key, const float *sinks,
                             attn_error *err);

#endif
