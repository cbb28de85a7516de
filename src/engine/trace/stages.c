/* stages.c — the stage catalogue: names, shapes, texts and rules of every traced stage. */
#include "stages.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One row per stage, indexed by its id: id, name, dims, description, formula,
 * then when it is present and what is special about it. */
static const attn_stage_info STAGES[ATTN_STAGE_COUNT] = {
    {ATTN_STAGE_EMBEDDINGS, "embeddings", "b,s,d",
     ATTN_N_("each token's row of the embedding table: the residual stream starts here"),
     "embeddings = E[token_ids]",
     .rule = ATTN_PRESENT_MODEL, .roles = ATTN_ROLE_INPUT, .model_level = true},
    {ATTN_STAGE_RESID_IN, "resid_in", "b,s,d",
     ATTN_N_("the residual stream entering the layer"),
     ATTN_N_("resid_in = the previous layer's resid_out (embeddings in layer 0)"),
     .rule = ATTN_PRESENT_MODEL},
    {ATTN_STAGE_X, "x", "b,s,d",
     ATTN_N_("token embeddings at the query positions"),
     "x = embed(tokens[P:])",
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_INPUT,
     .model_desc = ATTN_N_("the attention's input: the residual stream, RMS-normalised"),
     .model_formula = "x = resid_in / √(mean(resid_in²) + ε) ⊙ g_attn"},
    {ATTN_STAGE_X_PAST, "x_past", "b,P,d",
     ATTN_N_("embeddings of the positions already in the KV cache"),
     "x_past = embed(tokens[:P])",
     .rule = ATTN_PRESENT_PAST, .roles = ATTN_ROLE_INPUT},
    {ATTN_STAGE_MEMORY, "memory", "b,t,d",
     ATTN_N_("encoder output that the queries read (cross-attention)"),
     ATTN_N_("memory = embed(source tokens)"),
     .rule = ATTN_PRESENT_CROSS, .roles = ATTN_ROLE_INPUT},
    {ATTN_STAGE_W_Q, "w_q", "d,h*k",
     ATTN_N_("query projection weights, (in, out)"),
     "W_Q",
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_WEIGHT, .blocks = ATTN_BLOCKS_HEAD_COLS, .mla_dims = "d,h*(k+D)"},
    {ATTN_STAGE_W_K, "w_k", "d,g*k",
     ATTN_N_("key projection weights: one d×k block per kv head"),
     "W_K",
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_WEIGHT, .blocks = ATTN_BLOCKS_KV_COLS, .not_mla = true},
    {ATTN_STAGE_W_V, "w_v", "d,g*k",
     ATTN_N_("value projection weights: one d×k block per kv head"),
     "W_V",
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_WEIGHT, .blocks = ATTN_BLOCKS_KV_COLS, .not_mla = true},
    {ATTN_STAGE_W_O, "w_o", "h*k,d",
     ATTN_N_("output projection weights, (in, out)"),
     "W_O",
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_WEIGHT, .blocks = ATTN_BLOCKS_HEAD_ROWS},
    {ATTN_STAGE_W_QN, "w_qn", "k",
     ATTN_N_("QK-norm: the gain of each query feature after the RMS normalisation"),
     "g_q",
     .rule = ATTN_PRESENT_QK_GAINS, .roles = ATTN_ROLE_WEIGHT, .not_mla = true},
    {ATTN_STAGE_W_KN, "w_kn", "k",
     ATTN_N_("QK-norm: the gain of each key feature after the RMS normalisation"),
     "g_k",
     .rule = ATTN_PRESENT_QK_GAINS, .roles = ATTN_ROLE_WEIGHT, .not_mla = true},
    {ATTN_STAGE_W_DKV, "w_dkv", "d,R",
     ATTN_N_("MLA: the down-projection of each token to its latent, what the cache keeps"),
     "W_DKV",
     .rule = ATTN_PRESENT_MLA, .roles = ATTN_ROLE_WEIGHT},
    {ATTN_STAGE_W_UK, "w_uk", "R,h*k",
     ATTN_N_("MLA: the up-projection of the latent to every head's key (the part without position)"),
     "W_UK",
     .rule = ATTN_PRESENT_MLA, .roles = ATTN_ROLE_WEIGHT, .blocks = ATTN_BLOCKS_HEAD_COLS},
    {ATTN_STAGE_W_UV, "w_uv", "R,h*k",
     ATTN_N_("MLA: the up-projection of the latent to every head's value"),
     "W_UV",
     .rule = ATTN_PRESENT_MLA, .roles = ATTN_ROLE_WEIGHT, .blocks = ATTN_BLOCKS_HEAD_COLS},
    {ATTN_STAGE_W_KR, "w_kr", "d,D",
     ATTN_N_("MLA: the projection to the decoupled RoPE key, one shared by every head"),
     "W_KR",
     .rule = ATTN_PRESENT_MLA, .roles = ATTN_ROLE_WEIGHT},
    {ATTN_STAGE_Q, "q", "b,s,h*k",
     ATTN_N_("queries: what each position is looking for"),
     "q = x · W_Q",
     .rule = ATTN_PRESENT_ALWAYS, .blocks = ATTN_BLOCKS_HEAD_COLS, .mla_dims = "b,s,h*(k+D)"},
    {ATTN_STAGE_K, "k", "b,n,g*k",
     ATTN_N_("keys of the new positions: what each position offers"),
     ATTN_N_("k = x · W_K   (memory · W_K in cross-attention)"),
     .rule = ATTN_PRESENT_ALWAYS, .blocks = ATTN_BLOCKS_KV_COLS, .not_mla = true},
    {ATTN_STAGE_V, "v", "b,n,g*k",
     ATTN_N_("values of the new positions: what each position passes on"),
     ATTN_N_("v = x · W_V   (memory · W_V in cross-attention)"),
     .rule = ATTN_PRESENT_ALWAYS, .blocks = ATTN_BLOCKS_KV_COLS, .not_mla = true},
    {ATTN_STAGE_Q_HEADS, "q_heads", "b,h,s,k",
     ATTN_N_("queries split into h heads of k features"),
     "q_heads[b,j,i,:] = q[b,i, j·k:(j+1)·k]",
     .rule = ATTN_PRESENT_ALWAYS, .not_mla = true},
    {ATTN_STAGE_K_HEADS, "k_heads", "b,g,n,k",
     ATTN_N_("keys split into g kv heads"),
     "k_heads[b,j,i,:] = k[b,i, j·k:(j+1)·k]",
     .rule = ATTN_PRESENT_ALWAYS, .not_mla = true},
    {ATTN_STAGE_V_HEADS, "v_heads", "b,g,n,k",
     ATTN_N_("values split into g kv heads"),
     "v_heads[b,j,i,:] = v[b,i, j·k:(j+1)·k]",
     .rule = ATTN_PRESENT_ALWAYS, .not_mla = true},
    {ATTN_STAGE_Q_NORM, "q_norm", "b,h,s,k",
     ATTN_N_("each query head RMS-normalised on its own k features (QK-norm, as Qwen3)"),
     "q_norm = q_heads / √(mean(q_heads²) + ε) ⊙ g_q",
     .rule = ATTN_PRESENT_QK_NORM, .not_mla = true},
    {ATTN_STAGE_K_NORM, "k_norm", "b,g,n,k",
     ATTN_N_("each key head RMS-normalised on its own k features (QK-norm, as Qwen3)"),
     "k_norm = k_heads / √(mean(k_heads²) + ε) ⊙ g_k",
     .rule = ATTN_PRESENT_QK_NORM, .not_mla = true},
    {ATTN_STAGE_Q_ROPE, "q_rope", "b,h,s,k",
     ATTN_N_("queries rotated by their position (RoPE)"),
     ATTN_N_("(q₂ₘ, q₂ₘ₊₁) rotated by pos·θ^(−2m/k)"),
     .rule = ATTN_PRESENT_ROPE,
     /* Hugging Face's rotate_half pairs feature m with m + k/2 */
     .model_formula = ATTN_N_("(qₘ, qₘ₊ₖ/₂) rotated by pos·θ^(−2m/k), m < k/2 (rotate_half)"), .not_mla = true},
    {ATTN_STAGE_K_ROPE, "k_rope", "b,g,n,k",
     ATTN_N_("keys rotated by their position (RoPE)"),
     ATTN_N_("(k₂ₘ, k₂ₘ₊₁) rotated by pos·θ^(−2m/k)"),
     .rule = ATTN_PRESENT_ROPE,
     .model_formula = ATTN_N_("(kₘ, kₘ₊ₖ/₂) rotated by pos·θ^(−2m/k), m < k/2 (rotate_half)"), .not_mla = true},
    {ATTN_STAGE_K_CACHE, "k_cache", "b,g,t,k",
     ATTN_N_("KV cache: the cached keys followed by the new ones"),
     "k_cache = [k_past ; k_new]",
     .rule = ATTN_PRESENT_PAST, .not_mla = true},
    {ATTN_STAGE_V_CACHE, "v_cache", "b,g,t,k",
     ATTN_N_("KV cache: the cached values followed by the new ones"),
     "v_cache = [v_past ; v_new]",
     .rule = ATTN_PRESENT_PAST, .not_mla = true},
    {ATTN_STAGE_Q_NOPE, "q_nope", "b,h,s,k",
     ATTN_N_("MLA: each query head's first dₖ features, matched with the keys rebuilt from the latent"),
     "q_nope[b,j,i,:] = q[b,i, j·(dₖ+D) : j·(dₖ+D)+dₖ]",
     .rule = ATTN_PRESENT_MLA},
    {ATTN_STAGE_Q_PE, "q_pe", "b,h,s,D",
     ATTN_N_("MLA: each query head's last D features, rotated (RoPE), matched with the shared k_pe"),
     ATTN_N_("q_pe[b,j,i,:] = RoPE(q[b,i, j·(dₖ+D)+dₖ : (j+1)·(dₖ+D)]) at position P + i"),
     .rule = ATTN_PRESENT_MLA},
    {ATTN_STAGE_C_KV, "c_kv", "b,t,R",
     ATTN_N_("MLA: the latent of every key position, the cached ones first: with k_pe, all the cache keeps"),
     "c_kv = [x_past ; x] · W_DKV",
     .rule = ATTN_PRESENT_MLA,
     /* DeepSeek's checkpoints normalise the latent (kv_a_layernorm) before caching it */
     .model_formula = "c_kv = RMSNorm([x_past ; x] · W_DKV) ⊙ g_kv"},
    {ATTN_STAGE_K_PE, "k_pe", "b,t,D",
     ATTN_N_("MLA: the decoupled RoPE key of every key position, one shared by every head"),
     ATTN_N_("k_pe = RoPE([x_past ; x] · W_KR) at positions 0 … t−1"),
     .rule = ATTN_PRESENT_MLA},
    {ATTN_STAGE_K_NOPE, "k_nope", "b,h,t,k",
     ATTN_N_("MLA: every head's keys rebuilt from the latent"),
     "k_nope[b,j] = c_kv · W_UK[:, j·dₖ:(j+1)·dₖ]",
     .rule = ATTN_PRESENT_MLA_NAIVE},
    {ATTN_STAGE_V_UP, "v_up", "b,h,t,k",
     ATTN_N_("MLA: every head's values rebuilt from the latent"),
     "v_up[b,j] = c_kv · W_UV[:, j·dₖ:(j+1)·dₖ]",
     .rule = ATTN_PRESENT_MLA_NAIVE},
    {ATTN_STAGE_Q_LATENT, "q_latent", "b,h,s,R",
     ATTN_N_("MLA, absorbed: each head's q_nope carried into the latent space by W_UK, to meet c_kv directly"),
     "q_latent[b,j] = q_nope[b,j] · W_UK[:, j·dₖ:(j+1)·dₖ]ᵀ",
     .rule = ATTN_PRESENT_MLA_ABSORB},
    {ATTN_STAGE_K_EXPANDED, "k_expanded", "b,h,t,k",
     ATTN_N_("keys repeated so that every query head has one (repeat_kv)"),
     "k_expanded[b,j] = K[b, j / (h/g)]",
     .rule = ATTN_PRESENT_ALWAYS, .not_mla = true},
    {ATTN_STAGE_V_EXPANDED, "v_expanded", "b,h,t,k",
     ATTN_N_("values repeated so that every query head has one (repeat_kv)"),
     "v_expanded[b,j] = V[b, j / (h/g)]",
     .rule = ATTN_PRESENT_ALWAYS, .not_mla = true},
    {ATTN_STAGE_SCORES, "scores", "b,h,s,t",
     ATTN_N_("scaled dot product of every query with every key"),
     "scores = q · kᵀ / √dₖ",
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_QUERY_KEY},
    {ATTN_STAGE_BIAS, "bias", "b,h,s,t",
     ATTN_N_("ALiBi: a penalty growing with the distance between query and key, a slope per head"),
     ATTN_N_("bias[h,i,j] = −m_h·|i − j|,  m_h = 2^(−8(h+1)/n) for n heads (BLOOM's slopes)"),
     .rule = ATTN_PRESENT_ALIBI, .roles = ATTN_ROLE_QUERY_KEY},
    {ATTN_STAGE_CAPPED_SCORES, "capped_scores", "b,h,s,t",
     ATTN_N_("scores soft-capped: squeezed smoothly into (−C, C)"),
     "capped_scores = C · tanh(scores / C)",
     .rule = ATTN_PRESENT_SOFTCAP, .roles = ATTN_ROLE_QUERY_KEY},
    {ATTN_STAGE_MASK, "mask", "b,1,s,t",
     ATTN_N_("additive mask: 0 where a query may look, the fill value where it may not"),
     ATTN_N_("mask[i,j] = fill if key j is in the future (causal) or <pad>, else 0"),
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_QUERY_KEY, .cmap = ATTN_CMAP_MASK, .masked = true},
    {ATTN_STAGE_MASKED_SCORES, "masked_scores", "b,h,s,t",
     ATTN_N_("scores plus the mask, broadcast over heads"),
     "masked_scores = scores + mask",
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_QUERY_KEY, .masked = true},
    {ATTN_STAGE_WEIGHTS, "weights", "b,h,s,t",
     ATTN_N_("attention weights: each query row sums to 1"),
     ATTN_N_("weights = softmax(masked_scores) along t"),
     .rule = ATTN_PRESENT_ALWAYS, .roles = ATTN_ROLE_QUERY_KEY, .cmap = ATTN_CMAP_SEQUENTIAL, .masked = true,
     .compare = true},
    {ATTN_STAGE_SINK_WEIGHT, "sink_weight", "b,h,s",
     ATTN_N_("the weight the sink logit took: what the keys' weights leave to 1"),
     ATTN_N_("sink_weight = e^X / (Σⱼ e^masked_scores[j] + e^X)"),
     .rule = ATTN_PRESENT_SINK, .cmap = ATTN_CMAP_SEQUENTIAL},
    {ATTN_STAGE_WEIGHTS_DROPOUT, "weights_dropout", "b,h,s,t",
     ATTN_N_("attention weights after dropout (training only)"),
     ATTN_N_("kept: weights / (1 − p), dropped: 0"),
     .rule = ATTN_PRESENT_DROPOUT, .roles = ATTN_ROLE_QUERY_KEY, .cmap = ATTN_CMAP_SEQUENTIAL, .masked = true,
     .compare = true},
    {ATTN_STAGE_TILE_MAX, "tile_max", "b,h,s,T",
     ATTN_N_("FlashAttention: each query row's running max m after each key tile (−∞ before any visible key)"),
     ATTN_N_("m′ = max(m, rowmax S_j),  S_j = the row's masked scores of key tile j, m starts at −∞"),
     .rule = ATTN_PRESENT_TILES},
    {ATTN_STAGE_TILE_SUM, "tile_sum", "b,h,s,T",
     ATTN_N_("FlashAttention: each query row's running sum ℓ of e^(S − m) after each key tile (0 before any visible key)"),
     ATTN_N_("ℓ′ = e^(m − m′)·ℓ + Σ e^(S_j − m′),  ℓ starts at 0"),
     .rule = ATTN_PRESENT_TILES},
    {ATTN_STAGE_CONTEXT_LATENT, "context_latent", "b,h,s,R",
     ATTN_N_("MLA, absorbed: per head, the weighted average of the latent rows, before W_UV"),
     "context_latent = weights · c_kv",
     .rule = ATTN_PRESENT_MLA_ABSORB},
    {ATTN_STAGE_CONTEXT, "context", "b,h,s,k",
     ATTN_N_("per head, the weighted average of the value rows"),
     "context = weights · v_expanded",
     .rule = ATTN_PRESENT_ALWAYS, .compare = true},
    {ATTN_STAGE_MERGED, "merged", "b,s,h*k",
     ATTN_N_("heads concatenated back side by side"),
     "merged[b,i, j·k:(j+1)·k] = context[b,j,i,:]",
     .rule = ATTN_PRESENT_ALWAYS, .blocks = ATTN_BLOCKS_HEAD_COLS},
    {ATTN_STAGE_OUT, "out", "b,s,d",
     ATTN_N_("the layer's output"),
     ATTN_N_("out = merged · W_O   (then dropout when training)"),
     .rule = ATTN_PRESENT_ALWAYS, /* no head blocks: W_O mixes every head into each column */
     .model_desc = ATTN_N_("the attention's output, added to the residual stream")},
    {ATTN_STAGE_RESID_MID, "resid_mid", "b,s,d",
     ATTN_N_("the residual stream after attention"),
     "resid_mid = resid_in + out",
     .rule = ATTN_PRESENT_MODEL},
    {ATTN_STAGE_MLP_NORM, "mlp_norm", "b,s,d",
     ATTN_N_("the MLP's input: the residual stream, RMS-normalised"),
     "mlp_norm = resid_mid / √(mean(resid_mid²) + ε) ⊙ g_mlp",
     .rule = ATTN_PRESENT_MODEL},
    /* a mixture-of-experts layer (DeepSeek, moe.h; gpt-oss, gptoss.h): E small MLPs, a few chosen per token */
    {ATTN_STAGE_ROUTER_SCORES, "router_scores", "b,s,E",
     ATTN_N_("the router: how well each routed expert suits each token"),
     ATTN_N_("router_scores = softmax(mlp_norm · W_rᵀ) along E (V2; gpt-oss: + b_r), sigmoid(mlp_norm · W_rᵀ) (V3)"),
     .rule = ATTN_PRESENT_MOE, .cmap = ATTN_CMAP_SEQUENTIAL},
    {ATTN_STAGE_EXPERT_WEIGHTS, "expert_weights", "b,s,E",
     ATTN_N_("the experts each token chose and their weights in its sum; 0 for the others"),
     ATTN_N_("expert_weights[e] = scale · router_scores[e] (V3: / Σ over the chosen if norm_topk_prob) for the top "
             "k experts of the kept groups, 0 elsewhere; gpt-oss: router_scores[e] / Σ over its top k"),
     /* compares itself: does the causal mask (or another toggle) change which experts a token picks? */
     .rule = ATTN_PRESENT_MOE, .cmap = ATTN_CMAP_SEQUENTIAL, .compare = true},
    {ATTN_STAGE_GATE, "gate", "b,s,f",
     ATTN_N_("the MLP's gate projection"),
     "gate = mlp_norm · W_gate",
     .rule = ATTN_PRESENT_MODEL, .dense_mlp = true},
    {ATTN_STAGE_UP, "up", "b,s,f",
     ATTN_N_("the MLP's up projection"),
     "up = mlp_norm · W_up",
     .rule = ATTN_PRESENT_MODEL, .dense_mlp = true},
    {ATTN_STAGE_ACT, "act", "b,s,f",
     ATTN_N_("SwiGLU: the gate, through SiLU, scales the up projection feature by feature"),
     "act = SiLU(gate) ⊙ up,  SiLU(z) = z / (1 + e^−z)",
     .rule = ATTN_PRESENT_MODEL, .dense_mlp = true},
    {ATTN_STAGE_MLP_OUT, "mlp_out", "b,s,d",
     ATTN_N_("the MLP's output, added to the residual stream"),
     ATTN_N_("mlp_out = act · W_down   (a mixture-of-experts layer: Σₑ expert_weights[e] · MLPₑ(mlp_norm) over "
             "the chosen experts, plus the shared experts' MLP(mlp_norm))"),
     .rule = ATTN_PRESENT_MODEL},
    {ATTN_STAGE_RESID_OUT, "resid_out", "b,s,d",
     ATTN_N_("the residual stream leaving the layer"),
     "resid_out = resid_mid + mlp_out",
     .rule = ATTN_PRESENT_MODEL},
    {ATTN_STAGE_FINAL_NORM, "final_norm", "b,s,d",
     ATTN_N_("the last layer's residual stream, RMS-normalised"),
     "final_norm = resid_out / √(mean(resid_out²) + ε) ⊙ g_final",
     .rule = ATTN_PRESENT_MODEL, .model_level = true},
    {ATTN_STAGE_LOGITS, "logits", "b,s,V",
     ATTN_N_("a score for every token of the vocabulary as the next token"),
     ATTN_N_("logits = final_norm · W_lmᵀ   (W_lm = E when tied)"),
     .rule = ATTN_PRESENT_MODEL, .model_level = true, .compare = true},
    {ATTN_STAGE_PROBS, "probs", "b,s,V",
     ATTN_N_("the next-token distribution at each position"),
     ATTN_N_("probs = softmax(logits) along V"),
     .rule = ATTN_PRESENT_MODEL, .model_level = true, .cmap = ATTN_CMAP_SEQUENTIAL, .compare = true},
};

const attn_stage_info *attn_stages(int *count)
{
    *count = ATTN_STAGE_COUNT;
    return STAGES;
}

const attn_stage_info *attn_stage_get(attn_stage_id id)
{
    return id >= 0 && id < ATTN_STAGE_COUNT ? &STAGES[id] : NULL;
}

int attn_stage_index(const char *name)
{
    for (int i = 0; i < ATTN_STAGE_COUNT; i++)
        if (strcmp(STAGES[i].name, name) == 0) return i;
    return -1;
}

const attn_stage_info *attn_stage_lookup(const char *name)
{
    return attn_stage_get((attn_stage_id)attn_stage_index(name));
}

attn_stage_id attn_stage_compare_view(attn_stage_id id)
{
    const attn_stage_info *in = attn_stage_get(id);
    return in && in->compare ? id : ATTN_STAGE_WEIGHTS;
}

bool attn_stage_present(const attn_stage_info *info, const attn_stage_ctx *ctx)
{
    bool mla = ctx->dims->mode == ATTN_MODE_MLA;
    if (info->not_mla && mla) return false;
    if (info->id == ATTN_STAGE_W_Q && mla && ctx->q_lora) return false; /* q = RMSNorm(x · W_QA) · W_QB */
    switch (info->rule) {
    case ATTN_PRESENT_MLA: return mla;
    case ATTN_PRESENT_MLA_NAIVE: return mla && !ctx->mla_absorb;
    case ATTN_PRESENT_MLA_ABSORB: return mla && ctx->mla_absorb;
    case ATTN_PRESENT_PAST: return ctx->dims->P > 0;
    case ATTN_PRESENT_CROSS: return ctx->dims->cross;
    case ATTN_PRESENT_ROPE: return ctx->rope;
    case ATTN_PRESENT_DROPOUT: return ctx->dropout;
    case ATTN_PRESENT_MODEL: return ctx->model;
    case ATTN_PRESENT_QK_NORM: return ctx->qk_norm;
    case ATTN_PRESENT_QK_GAINS: return ctx->qk_norm && !ctx->model;
    case ATTN_PRESENT_ALIBI: return ctx->alibi;
    case ATTN_PRESENT_SOFTCAP: return ctx->softcap;
    case ATTN_PRESENT_SINK: return ctx->sink;
    case ATTN_PRESENT_TILES: return ctx->tiles;
    case ATTN_PRESENT_MOE: return ctx->moe_layers > 0;
    default: return true;
    }
}

bool attn_stage_in_layer(const attn_stage_info *info, const attn_stage_ctx *ctx, int l, int n_layers)
{
    bool moe = ctx->moe_layers > 0 && l >= n_layers - ctx->moe_layers;
    if (info->rule == ATTN_PRESENT_MOE && !moe) return false;
    if (info->dense_mlp && moe) return false;
    return attn_stage_present(info, ctx);
}

const char *attn_stage_absent_why(const attn_stage_info *info)
{
    switch (info->rule) {
    case ATTN_PRESENT_PAST: return "it needs past > 0 or decode_step > 1";
    case ATTN_PRESENT_CROSS: return "it needs source_tokens";
    case ATTN_PRESENT_ROPE: return "it needs rope = true";
    case ATTN_PRESENT_DROPOUT: return "it needs train = true and dropout > 0";
    case ATTN_PRESENT_MODEL: return "it needs a trained model (--model)";
    case ATTN_PRESENT_QK_NORM: return "it needs qk_norm = true or a checkpoint with per-head q/k norms (Qwen3)";
    case ATTN_PRESENT_QK_GAINS: return "it needs qk_norm = true on one attention layer";
    case ATTN_PRESENT_ALIBI: return "it needs alibi = true";
    case ATTN_PRESENT_SOFTCAP: return "it needs softcap > 0";
    case ATTN_PRESENT_SINK: return "it needs a finite sink_logit";
    case ATTN_PRESENT_MLA: return "it needs mode = mla";
    case ATTN_PRESENT_MLA_NAIVE: return "it needs mode = mla without mla_absorb";
    case ATTN_PRESENT_MLA_ABSORB: return "it needs mode = mla with mla_absorb = true";
    case ATTN_PRESENT_TILES: return "it needs tiles BQxBK";
    case ATTN_PRESENT_MOE: return "it needs a model's mixture-of-experts layer (DeepSeek's, from first_k_dense_replace on)";
    default: return info->not_mla ? "mode mla has none: its keys and values come from the latent" : "";
    }
}

const char *attn_stage_desc(const attn_stage_info *info, bool model)
{
    return model && info->model_desc ? info->model_desc : info->desc;
}

const char *attn_stage_formula(const attn_stage_info *info, bool model)
{
    return model && info->model_formula ? info->model_formula : info->formula;
}

/* The mask's formula: which keys get the fill under c. */
static const char *mask_formula(const attn_stage_text *c)
{
    if (c->cross)
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if source key j is <pad>, else 0")
                           : ATTN_N_("mask[i,j] = 0: no key is masked");
    if (c->window > 0 && c->keep_first > 0 && c->causal == 1)
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if j > i (the future), N ≤ j ≤ i − W (outside the window, after the N kept first keys) or key j is <pad>, else 0")
                           : ATTN_N_("mask[i,j] = fill if j > i (the future) or N ≤ j ≤ i − W (outside the window, after the N kept first keys), else 0");
    if (c->window > 0 && c->keep_first > 0 && c->causal == 0)
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if j ≥ N and |i − j| ≥ W (outside the window, after the N kept first keys) or key j is <pad>, else 0")
                           : ATTN_N_("mask[i,j] = fill if j ≥ N and |i − j| ≥ W (outside the window, after the N kept first keys), else 0");
    if (c->window > 0 && c->causal == 1)
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if j > i (the future), j ≤ i − W (outside the window) or key j is <pad>, else 0")
                           : ATTN_N_("mask[i,j] = fill if j > i (the future) or j ≤ i − W (outside the window), else 0");
    if (c->window > 0 && c->causal == 0)
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if |i − j| ≥ W (outside the window) or key j is <pad>, else 0")
                           : ATTN_N_("mask[i,j] = fill if |i − j| ≥ W (outside the window), else 0");
    switch (c->causal) {
    case 0:
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if key j is <pad>, else 0")
                           : ATTN_N_("mask[i,j] = 0: no key is masked");
    case 2: /* the pitfall: tril where triu was meant */
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if key j is in the past (j < i: reversed) or <pad>, else 0")
                           : ATTN_N_("mask[i,j] = fill if key j is in the past (j < i: reversed), else 0");
    default:
        return c->pad_mask ? ATTN_N_("mask[i,j] = fill if key j is in the future (causal) or <pad>, else 0")
                           : ATTN_N_("mask[i,j] = fill if key j is in the future (causal), else 0");
    }
}

const char *attn_stage_desc_in(const attn_stage_info *info, const attn_stage_text *c)
{
    if (info->id == ATTN_STAGE_SCORES && !c->scale) return ATTN_N_("dot product of every query with every key, not scaled");
    if (info->id == ATTN_STAGE_ACT && c->gemma)
        return ATTN_N_("GeGLU: the gate, through GELU (its tanh approximation), scales the up projection feature by feature");
    if (info->id == ATTN_STAGE_WEIGHTS && c->sink)
        return ATTN_N_("attention weights: each query row sums to 1 − sink_weight");
    if (info->id == ATTN_STAGE_WEIGHTS && c->tiles)
        return ATTN_N_("attention weights, for the pictures: the tiled path never materialises them");
    if (info->id == ATTN_STAGE_CONTEXT && c->tiles && !c->mla_absorb)
        return ATTN_N_("per head, the weighted average of the value rows, computed tile by tile (FlashAttention)");
    if (info->id == ATTN_STAGE_CONTEXT_LATENT && c->tiles)
        return ATTN_N_("MLA, absorbed: per head, the weighted average of the latent rows, computed tile by tile "
                       "over the latent cache (FlashAttention), before W_UV");
    return attn_stage_desc(info, c->model);
}

/* MLA's scores: the part without position plus the RoPE part, naive or absorbed. */
static const char *mla_scores_formula(const attn_stage_text *c)
{
    if (c->mla_absorb)
        return c->scale ? ATTN_N_("scores = (q_latent · c_kvᵀ + q_pe · k_peᵀ) / √(dₖ + D)   (= q_nope · k_nopeᵀ + …)")
                        : ATTN_N_("scores = q_latent · c_kvᵀ + q_pe · k_peᵀ   (not divided by √(dₖ + D))");
    return c->scale ? ATTN_N_("scores = (q_nope · k_nopeᵀ + q_pe · k_peᵀ) / √(dₖ + D)")
                    : ATTN_N_("scores = q_nope · k_nopeᵀ + q_pe · k_peᵀ   (not divided by √(dₖ + D))");
}

/* OLMo 2's and SmolLM3's formulas where they differ from Llama's; NULL elsewhere.
 * Not marked for translation yet (assets/po has no entries for them). */
static const char *family_formula(const attn_stage_info *info, const attn_stage_text *c)
{
    switch (info->id) {
    case ATTN_STAGE_Q_NORM:
        return c->qk_norm_whole ? ATTN_N_("q_norm = split(q / √(mean over all h·k features of q² + ε) ⊙ g_q): OLMo 2 "
                                          "normalises the whole projection, every head together, then splits it")
                                : NULL;
    case ATTN_STAGE_K_NORM:
        return c->qk_norm_whole ? ATTN_N_("k_norm = split(k / √(mean over all g·k features of k² + ε) ⊙ g_k): OLMo 2 "
                                          "normalises the whole projection, every head together, then splits it")
                                : NULL;
    case ATTN_STAGE_Q_ROPE:
        if (!c->nope || c->layer_rope == 1) return NULL;
        return c->layer_rope == 0 ? ATTN_N_("q_rope = q_heads: this layer has no RoPE (SmolLM3's no_rope_layers 0: NoPE)")
                                  : ATTN_N_("(qₘ, qₘ₊ₖ/₂) rotated by pos·θ^(−2m/k) (rotate_half); in a NoPE layer "
                                            "(SmolLM3's no_rope_layers 0) q_rope = q_heads, not rotated");
    case ATTN_STAGE_K_ROPE:
        if (!c->nope || c->layer_rope == 1) return NULL;
        return c->layer_rope == 0 ? ATTN_N_("k_rope = k_heads: this layer has no RoPE (SmolLM3's no_rope_layers 0: NoPE)")
                                  : ATTN_N_("(kₘ, kₘ₊ₖ/₂) rotated by pos·θ^(−2m/k) (rotate_half); in a NoPE layer "
                                            "(SmolLM3's no_rope_layers 0) k_rope = k_heads, not rotated");
    case ATTN_STAGE_X: return c->post_norms ? ATTN_N_("x = resid_in: OLMo 2 has no norm before attention") : NULL;
    case ATTN_STAGE_RESID_MID:
        return c->post_norms ? "resid_mid = resid_in + RMSNorm(out) ⊙ g_post_attn" : NULL;
    case ATTN_STAGE_MLP_NORM:
        return c->post_norms ? ATTN_N_("mlp_norm = resid_mid: OLMo 2 has no norm before the MLP") : NULL;
    case ATTN_STAGE_RESID_OUT:
        return c->post_norms ? "resid_out = resid_mid + RMSNorm(mlp_out) ⊙ g_post_ff" : NULL;
    default: return NULL;
    }
}

const char *attn_stage_formula_in(const attn_stage_info *info, const attn_stage_text *c)
{
    const char *family = family_formula(info, c);
    if (family) return family;
    switch (info->id) {
    case ATTN_STAGE_X: /* the query positions: all of them, unless P are already in the cache */
        if (c->model) return info->model_formula;
        return c->past > 0 ? ATTN_N_("x = embed(tokens[P:]): the P positions already in the cache left out")
                           : "x = embed(tokens)";
    case ATTN_STAGE_SCORES:
        if (c->mla) return mla_scores_formula(c);
        if (c->gemma && c->scale) return "scores = q · kᵀ / √query_pre_attn_scalar";
        return c->scale ? info->formula : ATTN_N_("scores = q · kᵀ   (not divided by √dₖ)");
    /* Gemma (gemma.h): √d on the embeddings, GeGLU, the post-norms; gains 1 + w */
    case ATTN_STAGE_EMBEDDINGS: return c->gemma ? "embeddings = E[token_ids] · √d" : attn_stage_formula(info, c->model);
    case ATTN_STAGE_ACT:
        return c->gemma ? "act = GELU_tanh(gate) ⊙ up,  GELU_tanh(z) = ½z(1 + tanh(√(2/π)(z + 0.044715z³)))"
                        : attn_stage_formula(info, c->model);
    case ATTN_STAGE_RESID_MID:
        return c->gemma ? "resid_mid = resid_in + RMSNorm(out) ⊙ (1 + w_post_attn)" : attn_stage_formula(info, c->model);
    case ATTN_STAGE_RESID_OUT:
        return c->gemma ? "resid_out = resid_mid + RMSNorm(mlp_out) ⊙ (1 + w_post_ff)" : attn_stage_formula(info, c->model);
    case ATTN_STAGE_Q_PE:
        if (c->rope && c->rope_to_halves)
            return ATTN_N_("q_pe[b,j,i,:] = RoPE of the pairs (2m, 2m+1) of q's last D features of head j, written as halves (DeepSeek-V3's rope_interleave), at P + i");
        return c->rope ? info->formula : ATTN_N_("q_pe[b,j,i,:] = q[b,i, j·(dₖ+D)+dₖ : (j+1)·(dₖ+D)]   (rope off: not rotated)");
    case ATTN_STAGE_K_PE:
        if (c->rope && c->rope_to_halves)
            return ATTN_N_("k_pe = RoPE of the pairs (2m, 2m+1) of [x_past ; x] · W_KR, written as halves (DeepSeek-V3's rope_interleave), at 0 … t−1");
        return c->rope ? info->formula : ATTN_N_("k_pe = [x_past ; x] · W_KR   (rope off: not rotated)");
    case ATTN_STAGE_MASK: return mask_formula(c);
    case ATTN_STAGE_CAPPED_SCORES: return c->alibi ? "capped_scores = C · tanh((scores + bias) / C)" : info->formula;
    case ATTN_STAGE_MASKED_SCORES:
        if (c->softcap) return "masked_scores = capped_scores + mask";
        return c->alibi ? "masked_scores = scores + bias + mask" : info->formula;
    case ATTN_STAGE_CONTEXT:
        if (c->mla && c->mla_absorb)
            return ATTN_N_("context[b,j] = context_latent[b,j] · W_UV[:, j·dₖ:(j+1)·dₖ]   (W_UV after the weights)");
        if (c->mla && c->tiles)
            return ATTN_N_("context = O / ℓ,  O′ = e^(m − m′)·O + e^(S_j − m′)·v_up_j over key tiles j (ℓ + e^(X − m) "
                           "with a sink); weights never materialised");
        if (c->mla) return "context = weights · v_up";
        if (!c->tiles) return info->formula;
        return c->sink ? ATTN_N_("context = O / (ℓ + e^(X − m)),  O′ = e^(m − m′)·O + e^(S_j − m′)·V_j over key tiles j; weights never materialised")
                       : ATTN_N_("context = O / ℓ,  O′ = e^(m − m′)·O + e^(S_j − m′)·V_j over key tiles j; weights never materialised");
    case ATTN_STAGE_CONTEXT_LATENT:
        if (!c->tiles) return info->formula;
        return ATTN_N_("context_latent = O / ℓ,  O′ = e^(m − m′)·O + e^(S_j − m′)·c_kv_j over key tiles j: the "
                       "latent cache is the values (ℓ + e^(X − m) with a sink); weights never materialised");
    case ATTN_STAGE_WEIGHTS:
        return c->sink ? ATTN_N_("weights = softmax([masked_scores, X]) along t, the sink's column X dropped")
                       : info->formula;
    case ATTN_STAGE_Q:
        if (c->mla && c->q_lora) return "q = RMSNorm(x · W_QA) ⊙ g_qa · W_QB";
        return c->bias ? "q = x · W_Q + b_Q" : info->formula;
    case ATTN_STAGE_K: return c->bias ? "k = x · W_K + b_K" : info->formula;
    case ATTN_STAGE_V: return c->bias ? "v = x · W_V + b_V" : info->formula;
    case ATTN_STAGE_OUT: return c->o_bias ? "out = merged · W_O + b_O" : attn_stage_formula(info, c->model);
    case ATTN_STAGE_Q_ROPE:
        if (c->qk_norm) return ATTN_N_("(q_normₘ, q_normₘ₊ₖ/₂) rotated by pos·θ^(−2m/k), m < k/2 (rotate_half)");
        return c->rope_half || c->model ? info->model_formula : info->formula;
    case ATTN_STAGE_K_ROPE:
        if (c->qk_norm) return ATTN_N_("(k_normₘ, k_normₘ₊ₖ/₂) rotated by pos·θ^(−2m/k), m < k/2 (rotate_half)");
        return c->rope_half || c->model ? info->model_formula : info->formula;
    default: return attn_stage_formula(info, c->model);
    }
}

int attn_stage_axes(const char *dims, char names[][8], int max)
{
    int n = 0;
    for (const char *p = dims; *p && n < max;) {
        size_t len = strcspn(p, ",");
        snprintf(names[n++], 8, "%.*s", (int)(len < 7 ? len : 7), p);
        p += len;
        if (*p == ',') p++;
    }
    return n;
}

int attn_kv_head(const attn_dims *d, int head)
{
    if (d->g <= 0 || d->h <= 0) return 0;
    int per = d->h / d->g;
    return per > 0 ? head / per : 0;
}

double attn_kv_bytes_per_token(const attn_dims *dims, int layers, int value_bytes)
{
    double per_layer = dims->mode == ATTN_MODE_MLA ? (double)dims->kv_rank + dims->rope_dim
                                                   : 2.0 * dims->g * dims->k;
    return per_layer * layers * value_bytes;
}

void attn_alibi_slopes(int n, double *m)
{
    int p = 1; /* the closest power of two at or below n */
    while (p * 2 <= n) p *= 2;
    for (int i = 0; i < p && i < n; i++) m[i] = pow(2.0, -8.0 * (i + 1) / p);
    for (int i = 0; i < n - p; i++) m[p + i] = pow(2.0, -8.0 * (2 * i + 1) / (2.0 * p));
}

/* Value of one dimension name ("b", "g*k", "h*k", "h*(k+D)", "1") under dims. */
static int64_t dim_value(const char *name, size_t len, const attn_dims *d)
{
    if (len == 7 && !strncmp(name, "h*(k+D)", 7)) return (int64_t)d->h * (d->k + d->rope_dim);
    if (len == 3 && !strncmp(name, "g*k", 3)) return (int64_t)d->g * d->k;
    if (len == 3 && !strncmp(name, "h*k", 3)) return (int64_t)d->h * d->k;
    if (len != 1) return -1;
    switch (name[0]) {
    case 'b': return d->b;
    case 's': return d->s;
    case 't': return d->t;
    case 'n': return d->n;
    case 'P': return d->P;
    case 'd': return d->d;
    case 'h': return d->h;
    case 'g': return d->g;
    case 'k': return d->k;
    case 'f': return d->f;
    case 'V': return d->V;
    case 'R': return d->kv_rank;
    case 'D': return d->rope_dim;
    case 'T': return d->T;
    case 'E': return d->E;
    case '1': return 1;
    default: return -1;
    }
}

const char *attn_stage_dims(const attn_stage_info *info, const attn_dims *dims)
{
    return dims->mode == ATTN_MODE_MLA && info->mla_dims ? info->mla_dims : info->dims;
}

int attn_stage_shape(const attn_stage_info *info, const attn_dims *dims, int64_t shape[ATTN_MAX_NDIM])
{
    int nd = 0;
    for (const char *p = attn_stage_dims(info, dims); *p && nd < ATTN_MAX_NDIM;) {
        size_t len = strcspn(p, ",");
        shape[nd++] = dim_value(p, len, dims);
        p += len + (p[len] == ',');
    }
    return nd;
}

double attn_stages_bytes(const attn_stage_ctx *ctx, int n_layers)
{
    int n;
    const attn_stage_info *st = attn_stages(&n);
    double total = 0;
    for (int i = 0; i < n; i++) {
        if (!attn_stage_present(&st[i], ctx)) continue;
        int64_t shape[ATTN_MAX_NDIM];
        int nd = attn_stage_shape(&st[i], ctx->dims, shape);
        double count = 1;
        for (int j = 0; j < nd; j++) count *= (double)shape[j];
        int copies = st[i].model_level ? 1 : (st[i].roles & ATTN_ROLE_QUERY_KEY) && ctx->qk_layers ? ctx->qk_layers : n_layers;
        if (st[i].rule == ATTN_PRESENT_MOE) copies = ctx->moe_layers;
        else if (st[i].dense_mlp) copies = n_layers - ctx->moe_layers;
        total += (count + ATTN_TENSOR_ALIGN) * sizeof(float) * copies;
    }
    return total;
}
