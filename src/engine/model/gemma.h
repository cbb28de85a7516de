/* gemma.h — what a Gemma 2 or Gemma 3 (text) checkpoint changes in a Llama
 * layer, for model_run.c (config.json's numbers: model_config.h's
 * attn_gemma_sizes; the keys and defaults: model_config_gemma.c).
 *
 * Every layer l (shapes for b rows of s positions, width d, MLP width f):
 *   embeddings = E[token] · √d              √d rounded to the weights' dtype
 *   x          = RMSNorm(resid_in) ⊙ (1 + w_in)                        (b, s, d)
 *   out        = attention(x)                                         (b, s, d)
 *                scores = q·kᵀ · query_pre_attn_scalar^(−½)
 *                capped = C·tanh(scores / C)    (Gemma 2: C = 50)
 *                local layers: mask keys j ≤ i − W (the window W)
 *                Gemma 3: q_norm, k_norm per head with (1 + w), before RoPE;
 *                RoPE base rope_local_base_freq on local layers, rope_theta
 *                (scaled by rope_scaling) on global ones
 *   resid_mid  = resid_in + RMSNorm(out) ⊙ (1 + w_post_attn)
 *   mlp_norm   = RMSNorm(resid_mid) ⊙ (1 + w_pre_ff)
 *   act        = GELU_tanh(mlp_norm · W_gateᵀ) ⊙ (mlp_norm · W_upᵀ)        (b, s, f)
 *   mlp_out    = act · W_downᵀ                                           (b, s, d)
 *   resid_out  = resid_mid + RMSNorm(mlp_out) ⊙ (1 + w_post_ff)
 * then final_norm = RMSNorm(resid_out) ⊙ (1 + w), logits = final_norm · Eᵀ,
 * capped C·tanh(logits / C) when final_logit_softcapping is set (Gemma 2: 30).
 *
 * RMSNorm runs in float32 with gains 1 + w: the (1 + w) is added once, at
 * load, to every norm's stored w (gemma_weights.h; transformers computes it
 * in float32 as well), so the ops see ordinary gains. */
#ifndef ATTN_GEMMA_H
#define ATTN_GEMMA_H

#include "engine/model/model.h"
#include "engine/trace/config.h"

/* What a layer sets in the run's settings and the trace's arch. */
typedef struct {
    int sliding_window;
    double rope_theta;
    attn_rope_scaling scaling;
} attn_gemma_layer_set;

/* Sets run and arch for layer l of m (its window, its RoPE base and
 * scaling), saving what was there into saved; attn_gemma_layer_restore
 * puts it back. */
void attn_gemma_layer_enter(const attn_model *m, int l, attn_config *run, attn_arch *arch,
                            attn_gemma_layer_set *saved);
void attn_gemma_layer_restore(attn_config *run, attn_arch *arch, const attn_gemma_layer_set *saved);

/* run (a copy of the caller's settings) set to run m: the model's
 * attention soft-cap as the softcap setting. Refuses what no trained model
 * takes (attn_config_check_scores), a softcap other than the model's among
 * them. */
attn_status attn_gemma_run_config(const attn_model *m, attn_config *run, attn_error *err);

/* The settings layer l of m runs with, for the untraced passes (kv_step.c,
 * prefill.c): *run itself, or for Gemma a shallow copy (nothing to free)
 * with the layer's window and RoPE base; *scaling receives the layer's RoPE
 * scaling (the model's, or for a Gemma 3 local layer none). */
attn_config attn_gemma_layer_run(const attn_model *m, int l, const attn_config *run,
                                 const attn_rope_scaling **scaling);

#endif
