/* gptoss.h — what a gpt-oss checkpoint (GptOssForCausalLM) changes in a
 * Llama layer, as HF's modelling runs it (config.json's keys and defaults:
 * model_config_gptoss.c).
 *
 * Attention, every layer (h query heads, g kv heads of k, b rows of s):
 *   q, k, v    = x · W_Qᵀ + b_Q, x · W_Kᵀ + b_K, x · W_Vᵀ + b_V   (attention_bias)
 *   RoPE       rotate-half: each head's first half against its second,
 *              pair m = features (m, m + k/2) turned by pos · ω'_m, with YaRN's
 *              ω'_m and cos, sin × A (rope_scaling; GptOssConfig's default:
 *              factor 32 from 4096 positions, truncate false, A = 0.1·ln 32 + 1):
 *              the shared attn_op_rope with arch.rope_scaling (trace/rope.c's ramp)
 *   scores     = q · kᵀ / √k; local layers (sliding_attention, 0, 2, 4, …)
 *                mask keys j ≤ i − W, so a query sees itself and W − 1 before it
 *   weights    = softmax([masked_scores, X_h]) with X_h's column dropped:
 *                X_h = self_attn.sinks[h], one learned logit per query head;
 *                sink_weight (b, h, s) = e^X_h / Z, each row sums to 1 − it
 *   out        = merged · W_Oᵀ + b_O
 *
 * MLP, every layer a mixture of E experts of width I (= intermediate_size),
 * for one token x (d), its post_attention_layernorm output:
 *   logits     = x · W_rᵀ + b_r                              (E)  mlp.router
 *   top        = the k = num_experts_per_tok largest logits
 *   w_e        = e^logit_e / Σ_{e' in top} e^logit_e'  for e in top, else 0
 *                                                           expert_weights (E)
 *   router_scores = softmax(logits) over all E (the picture's: the choice and
 *                the weights come from the logits as above)
 *   each chosen expert e, stored as HF stacks them, (in, out):
 *     gu       = x · GU_e + gub_e            GU (E, d, 2I), gub (E, 2I)   (2I)
 *     gate     = gu[0::2], up = gu[1::2]     even columns gate, odd up    (I) each
 *     gate     = min(gate, limit);  up = clamp(up, −limit, limit)   (swiglu_limit)
 *     act      = (up + 1) · gate · σ(α · gate)                 α = 1.702  (I)
 *     y_e      = act · D_e + db_e            D (E, I, d), db (E, d)         (d)
 *   mlp_out    = Σ_{e in top} w_e · y_e                                   (d)
 * Ties among the logits go to the lowest index (torch.topk leaves them
 * unspecified). */
#ifndef ATTN_GPTOSS_H
#define ATTN_GPTOSS_H

#include "engine/base/error.h"
#include "engine/model/model.h"
#include "engine/trace/config.h"

/* Layer l of m on x (rows, d) into out (rows, d); scores and weights
 * (rows, E) receive router_scores and expert_weights. */
attn_status attn_gptoss_moe_run(const attn_model *m, int l, const float *x, int rows, float *out, float *scores,
                                float *weights, attn_error *err);

/* run (a copy of the caller's settings) set to run m: its layers' windows
 * are their own, and the tiled attention does not take per-head sinks yet;
 * refuses what no trained model takes (attn_config_check_scores). */
attn_status attn_gptoss_run_config(const attn_model *m, attn_config *run, attn_error *err);

#endif
