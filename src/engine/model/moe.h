/* moe.h — a DeepSeek-V2 or V3 mixture-of-experts layer, as HF's modelling runs it.
 *
 * In place of one dense MLP, a MoE layer (every layer from
 * first_k_dense_replace on) has E small SwiGLU MLPs, the routed experts, of
 * width I = moe_intermediate_size, a router W_r (E, d) and S shared experts
 * (one MLP of width S·I that every token goes through). For each token x (d):
 *
 *   logits  = x · W_rᵀ                                         (E)
 *   V2      score = softmax(logits)             router_scores  (E)
 *           choice = score; "group_limited_greedy": the E experts in n_group
 *           groups, a group's rank its best score, all but the topk_group best
 *           groups set to 0.0
 *           top  = the k = num_experts_per_tok experts of highest choice
 *           w_e  = score_e · routed_scaling_factor   (HF never reads norm_topk_prob in V2)
 *   V3      score = sigmoid(logits)                 router_scores  (E)
 *           choice = score + e_score_correction_bias (the bias steers the choice only)
 *           a group's rank is the sum of its two best choices; all but the
 *           topk_group best groups set to 0.0 (HF's fill: DeepSeek's own is −∞)
 *           top  = the k experts of highest choice
 *           w_e  = score_e / (Σ_top score + 1e-20) if norm_topk_prob, else score_e;
 *                  then · routed_scaling_factor
 *   expert_weights[e] = w_e for e in top, 0 for the others   (E)
 *   out = Σ_{e in top} w_e · (SiLU(x · G_eᵀ) ⊙ (x · U_eᵀ)) · D_eᵀ
 *         + (SiLU(x · G_sᵀ) ⊙ (x · U_sᵀ)) · D_sᵀ                 (d)
 *
 * Ties in a top-k (only 0.0 fills can tie in practice) go to the lowest
 * index; torch.topk leaves their order unspecified. */
#ifndef ATTN_MOE_H
#define ATTN_MOE_H

#include "engine/base/error.h"
#include "engine/model/model.h"

/* Layer l of m (attn_arch_layer_moe) on x (rows, d) into out (rows, d).
 * scores and weights (rows, E) receive the router's scores and each expert's
 * weight in the sum, 0 where the token did not choose it. */
attn_status attn_moe_run(const attn_model *m, int l, const float *x, int rows, float *out, float *scores,
                         float *weights, attn_error *err);

#endif
