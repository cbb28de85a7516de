/* deepseek.h — a DeepSeek-V2 or V3 checkpoint's latent attention, fed to mla.c.
 *
 * HF stores the layer's attention as five matrices; mla.c reads four (in, out)
 * weights and the query. From a layer's checkpoint (model.h's MLA fields;
 * Q = q_lora_rank, R = kv_lora_rank, D = qk_rope_head_dim, k = qk_nope_head_dim
 * = v_head_dim, h heads):
 *   kv_a_proj_with_mqa (R+D, d)  → W_DKV (d, R): its first R rows, transposed
 *                                  W_KR  (d, D): its last D rows, transposed
 *   kv_b_proj (h·2k, R)          → W_UK (R, h·k): each head's first k rows
 *                                  W_UV (R, h·k): each head's last k rows
 *   q_proj (h·(k+D), d)          → W_Q (d, h·(k+D)), each head's k nope then D rope columns
 *   or q_a_proj, q_a_layernorm, q_b_proj: q = RMSNorm(x · W_QAᵀ) ⊙ g_qa · W_QBᵀ
 *                                  (rows, h·(k+D)), computed here: no W_Q
 *   kv_a_layernorm (R)           → the latent's gains (attn_inputs.kv_norm)
 *   o_proj (d, h·k)              → W_O (h·k, d), as for Llama (w_stored[3])
 * Both of DeepSeek's latent norms use ε = 1e-6 whatever rms_norm_eps says:
 * transformers builds them with DeepseekV3RMSNorm's default. */
#ifndef ATTN_DEEPSEEK_H
#define ATTN_DEEPSEEK_H

#include "engine/attention/attention.h"
#include "engine/model/model.h"
#include "engine/trace/config.h"

/* The widened weights and the query of one layer's run. */
typedef struct {
    float *w_dkv, *w_kr, *w_uk, *w_uv; /* (d, R), (d, D), (R, h·k), (R, h·k) */
    float *q;                          /* (rows, h·(k+D)) with q_lora, else NULL */
} attn_deepseek_layer;

/* Layer l's weights of m (an arch.mla model) into ai, for x (rows, d): the
 * matrices widened into buf (free with attn_deepseek_free), the query computed
 * with q_lora, the latent's norm. */
attn_status attn_deepseek_inputs(const attn_model *m, int l, const float *x, int rows, attn_inputs *ai,
                                 attn_deepseek_layer *buf, attn_error *err);
void attn_deepseek_free(attn_deepseek_layer *buf);

/* run (a copy of the caller's settings) set to run m's latent attention:
 * mode mla with m's R and D, RoPE as m turns it (V2 interleaved, V3 rotate
 * half), mla_absorb as asked. Refuses what does not fit a trained latent
 * attention (another kv_rank or rope_dim, tiles) and what no trained model
 * takes (attn_config_check_scores). */
attn_status attn_deepseek_run_config(const attn_model *m, attn_config *run, attn_error *err);

#endif
