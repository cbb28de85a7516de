/* mla.h — multi-head latent attention (DeepSeek-V2/V3) in one traced layer.
 *
 * What the KV cache keeps per token is a latent c_kv of R values and one
 * RoPE key k_pe of D values, shared by every head, instead of a key and a
 * value per kv head (2·g·dₖ). Every head's key and value are rebuilt from
 * the latent by up-projections (naive), or the up-projections are folded
 * into the query and applied after the weights (absorbed, as inference
 * kernels do): the same output. The single layer has no latent norm
 * (DeepSeek's kv_norm); mla.c's banner has the formulas.
 *
 * attention.c calls these in place of its own steps when
 * tr->dims.mode is ATTN_MODE_MLA; the steps between the scores and the
 * weights (bias, cap, mask, softmax, sink, dropout) are the usual ones. */
#ifndef ATTN_MLA_H
#define ATTN_MLA_H

#include "engine/base/error.h"
#include "engine/trace/trace.h"

/* What a layer's caller may give MLA beyond its weights (attention.h's
 * attn_inputs carries them). */
typedef struct {
    const float *ckv_past, *kpe_past; /* the cache as stored: c_kv (b, P, R), k_pe (b, P, D), rotated;
                                       * NULL: computed again from x_past */
    int stride;                       /* floats between cached rows (a cache of [c_kv | k_pe]: R + D);
                                       * 0: R and D */
    const float *q;                   /* a checkpoint's own q (b, s, h·(k+D)) (DeepSeek's low-rank one);
                                       * NULL: x · W_Q */
    const float *kv_norm;             /* a checkpoint's latent RMSNorm gains (R), or NULL */
    double kv_eps;                    /* their ε */
} attn_mla_given;

/* Steps 1–6: q, q_nope, q_pe, c_kv, k_pe, then k_nope and v_up (naive) or
 * q_latent (absorbed), into layer `layer` of tr, whose weights and inputs
 * are filled; the cache, the query and the latent's norm as given. */
attn_status attn_mla_project(attn_trace *tr, int layer, const attn_mla_given *in, attn_error *err);

/* Step 7: scores (b,h,s,t) = (nope part + RoPE part) · scale, where scale is
 * 1/√(dₖ + D), or 1 with scale = false. */
attn_status attn_mla_scores(attn_trace *tr, int layer, float *scores, attn_error *err);

/* Step 11: context (b,h,s,k) from the weights w (b,h,s,t): w · v_up (naive),
 * or context_latent = w · c_kv, then · W_UV per head (absorbed). */
attn_status attn_mla_context(attn_trace *tr, int layer, const float *w, attn_error *err);

/* Step 11's last part, absorbed: context[b,j] = context_latent[b,j] · W_UV[:, j]
 * per head, from the context_latent already there (the tiled path's,
 * tiles.h); naive: nothing to do. */
attn_status attn_mla_up_project(attn_trace *tr, int layer, attn_error *err);

#endif
