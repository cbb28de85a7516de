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
    ATTN_ARCH_QWEN3     /* Qwen3ForCausalLM */
} attn_arch_kind;

/* rope_scaling {"rope_type": "llama3", ...}; factor 0: no scaling. */
typedef struct {
    double factor;           /* how much slower the slow pairs turn */
    double low_freq_factor;  /* low */
    double high_freq_factor; /* high */
    int original_max_pos;    /* L: the context the model was first trained on */
} attn_rope_scaling;

typedef struct {
    attn_arch_kind kind;
    bool qkv_bias;                  /* q, k, v projections have biases (Qwen2) */
    bool qk_norm;                   /* per-head RMSNorm on q and k (Qwen3) */
    attn_rope_scaling rope_scaling;
} attn_arch;

#endif
