/* arch.h — what a checkpoint's architecture adds to the attention layer.
 *
 * The Llama family differ from one another inside attention in three ways:
 *
 *   Qwen2    q = x · W_Q + b_Q, and the same for k and v (biases)
 *   Qwen3    q_norm = RMSNorm over each head's k features ⊙ g_q, and the
 *            same for keys, after the head split and before RoPE
 *   Llama 3  RoPE's slow frequencies are stretched (rope_scaling "llama3"):
 *            with wavelength λ = 2π/ω of pair m's frequency ω = θ^(−2m/k),
 *              λ < L/high          ω stays          (fast: local order)
 *              λ > L/low           ω / factor       (slow: long range)
 *              otherwise           (1 − a)·ω/factor + a·ω,
 *                                  a = (L/λ − low) / (high − low)
 *            where L is original_max_position_embeddings.
 *   YaRN     (rope_scaling "yarn": DeepSeek-V2/V3, Qwen's long contexts) the
 *            same idea counted in turns: a pair that turns more than
 *            beta_fast times over L keeps ω, one that turns fewer than
 *            beta_slow times gets ω / factor, a linear ramp between; and
 *            cos, sin are multiplied by an attention factor (trace/rope.c)
 *
 * DeepSeek-V2 and V3 replace the attention itself with multi-head latent
 * attention (mla.h; the layer's sizes are model_config.h's attn_mla_sizes):
 *   q        = x · W_Q, or with q_lora_rank Q: RMSNorm(x · W_QA) ⊙ g_qa · W_QB
 *   c_kv     = RMSNorm(x · W_DKV) ⊙ g_kv     the latent (kv_a_layernorm)
 *   RoPE     V2 turns pairs (2m, 2m+1) in place (interleaved); V3 with
 *            rope_interleave (its default) turns the same pairs but writes
 *            them out as halves (evens first, then odds, then rotate_half);
 *            V3 without it is rotate_half.
 * and from layer first_k_dense_replace on their MLP is a mixture of experts
 * (moe.h): a router picks a few of E small MLPs for each token.
 *
 * Gemma 2 and Gemma 3 (gemma.h) keep Llama's attention and change its numbers:
 *   scores   = q·kᵀ · query_pre_attn_scalar^(−½) instead of 1/√k
 *   capped   = C·tanh(scores / C) before the mask (attn_logit_softcapping)
 *   layers   alternate a sliding window W (local) and the whole past (global);
 *            Gemma 3 turns a local layer's RoPE with its own base
 *   Gemma 3  per-head q and k norms before RoPE, as Qwen3's
 *   RoPE     rope_scaling "linear" divides every frequency by its factor
 *            (Gemma 3's global layers): ω = θ^(−2m/k) / factor
 * OLMo 2 and SmolLM3 keep Llama's attention and change where it is normalised
 * or turned:
 *   OLMo 2   q_norm = RMSNorm over the WHOLE projection q (h·k features, one
 *            root mean square for all heads of a position) ⊙ g_q, and k's over
 *            its g·k, before the head split and RoPE; and no norm before
 *            attention or the MLP: each sublayer's output is normalised
 *            before it joins the residual stream (post_attention_layernorm,
 *            post_feedforward_layernorm):
 *              resid_mid = resid_in + RMSNorm(attention(resid_in)) ⊙ g_post_attn
 *              resid_out = resid_mid + RMSNorm(MLP(resid_mid)) ⊙ g_post_ff
 *   SmolLM3  no_rope_layers[l] = 0: layer l turns nothing (NoPE): its q_rope
 *            and k_rope are q_heads and k_heads as they are.
 *
 * gpt-oss (gptoss.h) keeps Llama's attention with biases on q, k, v and o,
 * and adds one learned logit per query head, its sink:
 *   weights  = softmax([masked_scores, X_h]) with the sink's column dropped:
 *              each row sums to 1 − sink_weight (what the sink took)
 *   layers   alternate a sliding window W (local, from layer 0) and the
 *            whole past (global), Gemma 2's pattern
 * and every layer's MLP is a mixture of experts (gptoss.h: top k of the
 * router's logits, clamped SwiGLU experts with biases).
 *
 * Mistral's sliding window is a mask setting (config.h's sliding_window).
 * A trace keeps its model's attn_arch so that a reader can say which of
 * these it computed. This header includes nothing of the engine. */
#ifndef ATTN_ARCH_H
#define ATTN_ARCH_H

#include <stdbool.h>

typedef enum {
    ATTN_ARCH_NONE = 0, /* a single attention layer, no checkpoint */
    ATTN_ARCH_LLAMA,    /* LlamaForCausalLM */
    ATTN_ARCH_MISTRAL,  /* MistralForCausalLM */
    ATTN_ARCH_QWEN2,    /* Qwen2ForCausalLM */
    ATTN_ARCH_QWEN3,    /* Qwen3ForCausalLM */
    ATTN_ARCH_DEEPSEEK_V2, /* DeepseekV2ForCausalLM: latent attention; experts from first_k_dense_replace on */
    ATTN_ARCH_DEEPSEEK_V3, /* DeepseekV3ForCausalLM: the same, V3's router */
    ATTN_ARCH_GEMMA2,      /* Gemma2ForCausalLM */
    ATTN_ARCH_GEMMA3,      /* Gemma3ForCausalLM (the text model, gemma3_text) */
    ATTN_ARCH_OLMO2,    /* Olmo2ForCausalLM */
    ATTN_ARCH_SMOLLM3,  /* SmolLM3ForCausalLM */
    ATTN_ARCH_GPT_OSS   /* GptOssForCausalLM: learned sinks, biases, local and global layers, experts */
} attn_arch_kind;

#define ATTN_ARCH_MAX_LAYERS 256 /* model_config.h's ATTN_MODEL_MAX_LAYERS */

/* rope_scaling {"rope_type": "llama3" or "yarn", ...}; factor 0: no scaling
 * (rope.h's attn_rope_freqs turns it into each pair's frequency). */
typedef struct {
    double factor;           /* how much slower the slow pairs turn */
    double low_freq_factor;  /* llama3: low */
    double high_freq_factor; /* llama3: high */
    int original_max_pos;    /* L: the context the model was first trained on */
    double linear;           /* rope_type "linear": every ω divided by it; 0: none */
    bool yarn;               /* rope_type "yarn" (rope.c: the ramp), else llama3 when factor > 0 */
    double beta_fast;        /* yarn: a pair that turns more than beta_fast times in L keeps ω */
    double beta_slow;        /* yarn: one that turns fewer than beta_slow times gets ω / factor */
    bool truncate;           /* yarn: the ramp's ends floored and ceiled to whole pairs (gpt-oss: false) */
    double attention;        /* yarn: cos and sin are multiplied by it (attention_factor, or from mscale) */
} attn_rope_scaling;

typedef struct {
    attn_arch_kind kind;
    bool qkv_bias;                  /* q, k, v projections have biases (Qwen2) */
    bool qk_norm;                   /* per-head RMSNorm on q and k (Qwen3) */
    attn_rope_scaling rope_scaling;
    bool mla;                       /* multi-head latent attention (DeepSeek) */
    double mla_score_gain;          /* MLA's scores: 1/√(dₖ + D) times this (DeepSeek's YaRN: mscale², from
                                     * rope_scaling's mscale_all_dim); 0: 1 */
    bool q_lora;                    /* MLA's query through a low-rank W_QA, norm, W_QB: no W_Q */
    bool rope_to_halves;            /* MLA's RoPE pairs (2m, 2m+1) written out as halves (V3's rope_interleave) */
    bool gemma;                     /* Gemma 2/3: (1 + w) norms, post-norms, GeGLU, scaled embeddings (gemma.h) */
    double query_scale;             /* the scores' factor (Gemma: query_pre_attn_scalar^−½); 0: 1/√k */
    int local_window;               /* Gemma's and gpt-oss's local layers' sliding_window W; 0: none */
    unsigned char local[ATTN_ARCH_MAX_LAYERS]; /* local[l]: layer l masks keys j ≤ i − W (sliding_attention) */
    double local_theta;             /* Gemma: a local layer's RoPE base (Gemma 3's rope_local_base_freq; Gemma 2:
                                     * rope_theta); 0: none (attn_arch_layer_theta) */
    attn_rope_scaling global_scaling; /* Gemma: rope_scaling on the global layers (Gemma 3: linear; Gemma 2: all
                                       * layers); its rope_scaling above stays none */
    bool qk_norm_whole;             /* q and k RMS-normalised over the whole projection, before the split (OLMo 2) */
    bool post_norms;                /* sublayer outputs normalised before the residual add, no pre-norms (OLMo 2) */
    bool nope;                      /* some layers turn nothing (SmolLM3): nope_layer below */
    unsigned char nope_layer[ATTN_ARCH_MAX_LAYERS / 8]; /* bit l set: layer l has no RoPE */
    int experts;                    /* E: routed experts of a mixture-of-experts layer (DeepSeek); 0: none */
    int moe_from;                   /* the first such layer (first_k_dense_replace): every layer from it on
                                     * routes each token to its experts instead of one dense MLP */
    bool o_bias;                    /* o = merged · W_O + b_O (gpt-oss's attention_bias) */
    bool sinks;                     /* one learned sink logit per query head (gpt-oss's self_attn.sinks) */
} attn_arch;

/* Whether layer l of a model of architecture a rotates q and k (RoPE on). */
static inline bool attn_arch_layer_rope(const attn_arch *a, int l)
{
    return !(a->nope && l >= 0 && l < ATTN_ARCH_MAX_LAYERS && (a->nope_layer[l / 8] >> (l % 8)) & 1);
}

/* The RoPE base layer l of a model of architecture a turns with, theta being
 * its rope_theta, and into *scaling that layer's rope_scaling. Gemma's layers
 * differ: a local one turns with local_theta (Gemma 3: unscaled, Gemma 2: the
 * global scaling), a global one with theta and global_scaling. The others:
 * theta and rope_scaling on every layer. */
static inline double attn_arch_layer_theta(const attn_arch *a, int l, double theta, const attn_rope_scaling **scaling)
{
    static const attn_rope_scaling none = {0};
    *scaling = &a->rope_scaling;
    if (!a->gemma) return theta;
    bool local = l >= 0 && l < ATTN_ARCH_MAX_LAYERS && a->local[l];
    *scaling = !local || a->kind == ATTN_ARCH_GEMMA2 ? &a->global_scaling : &none;
    return local && a->local_theta > 0 ? a->local_theta : theta;
}

/* Whether layer l of a model of architecture a is a mixture of experts (moe.h). */
static inline bool attn_arch_layer_moe(const attn_arch *a, int l)
{
    return a->experts > 0 && l >= a->moe_from;
}

#endif
