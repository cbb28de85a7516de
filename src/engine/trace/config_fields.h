/* config_fields.h — attn_config: what a user asked for, one field per setting.
 *
 * Only the struct: the vocabulary that reads and writes its fields by name
 * (settings.h) and the rules that check and resolve it (config.h) both
 * build on it, so it stands on its own, below both of them. */
#ifndef ATTN_CONFIG_FIELDS_H
#define ATTN_CONFIG_FIELDS_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/trace/stages.h"
#include "engine/trace/tokens.h"

/* The causal mask. REVERSED is a pitfall kept for teaching: a lower-triangular
 * mask (tril where triu was meant) hides the past and lets the future through. */
typedef enum { ATTN_CAUSAL_OFF = 0, ATTN_CAUSAL_ON = 1, ATTN_CAUSAL_REVERSED = 2 } attn_causal;

/* FlashAttention's tiles: BQ query rows by BK keys at a time (0 × 0: off). */
typedef struct {
    int q, k;
} attn_tiles;

typedef struct {
    char *model;           /* a trained model's name or folder (model.h); NULL: one attention layer */
    char *text;            /* with a model: text its tokenizer reads, rows separated by '|' */
    double temperature;    /* generating with a model: 0 takes the most likely token, T > 0 samples */
    int top_k;             /* sampling among the k most likely tokens; 0: all */
    bool allow_unk;        /* generating: the model's <unk> may be chosen too (default: never) */
    char *tokens;          /* "你 是 猫 | 我 爱 AI"; NULL: built-in example or synthetic */
    char *source_tokens;   /* set: cross-attention over these source rows */
    int seq, batch;        /* 0: unset (taken from tokens, or synthetic defaults) */
    int d_model, heads;
    int kv_heads;          /* 0: chosen by mode */
    attn_mode mode;
    int kv_rank;           /* mode mla: R, the latent's width, what the cache keeps with the RoPE key;
                            * 0: 4·dₖ, as DeepSeek-V2 (512 = 4 × 128) */
    int rope_dim;          /* mode mla: D, the decoupled RoPE key's width, shared by every head;
                            * 0: dₖ/2, as DeepSeek-V2 (64 of 128) */
    bool mla_absorb;       /* mode mla: W_UK folded into the query and W_UV applied after the weights,
                            * attention over the latent itself (inference kernels); false: naive */
    attn_causal causal;
    bool scale;            /* divide scores by √k (default); false shows softmax saturating */
    bool softmax_guard;    /* a row with every key masked gets weights 0 (default); false: the
                            * unguarded softmax's 0/0 = NaN, which then spreads to context and out */
    attn_pad_side pad_side;
    bool pad_mask;         /* mask <pad> keys (default); false shows what the mask prevents */
    int sliding_window;    /* W > 0: the query at position p reads only keys j with p − W < j (the
                            * last W with the causal mask, Mistral's), or |p − j| < W without it
                            * (Longformer's); 0: off */
    int keep_first;        /* N > 0 with a sliding window: keys 0 … N−1 stay visible beside the window
                            * (StreamingLLM's attention sinks); 0: off */
    bool alibi;            /* ALiBi: bias −m_h·|i − j| on the scaled scores, BLOOM's slopes m_h */
    double softcap;        /* C > 0: scores ← C·tanh(scores / C) after the bias, before the mask
                            * (Gemma 2's logit soft-capping); 0: off */
    bool qk_norm;          /* one layer: RMSNorm of each q and k head over its k features, gains
                            * w_qn, w_kn (Qwen3, Gemma 3), before RoPE */
    float sink_logit;      /* X: one more logit per row and head enters the softmax and is dropped
                            * after it (gpt-oss's learned sinks); -inf: off (e^−∞ = 0, no sink) */
    attn_tiles tiles;      /* BQ × BK > 0: the context computed tile by tile with the online softmax
                            * (FlashAttention), never holding a row of weights; 0 × 0: off */
    bool rope;
    double rope_theta;
    attn_rope_style rope_style; /* which features RoPE pairs: interleaved (default) or half (HF) */
    float mask_value;      /* -INFINITY or a finite negative number such as -1e9 */
    int past;              /* P: positions already in the KV cache */
    float dropout;         /* p in [0, 1); active only when train */
    bool train;
    uint64_t seed;
    char *weights_path;    /* safetensors with w_q, w_k, w_v, w_o; NULL: from seed */
    char *input_path;      /* safetensors with x [, x_past, memory]; NULL: from seed */
    double memory_gib;     /* trace size limit in GiB, the setting; 0: half the physical memory.
                            * An address-space limit (ulimit -v) that leaves less wins (budget.h) */
    double max_bytes;      /* a limit in bytes a caller worked out from a budget (tests, what the
                            * window has left): when set, it is the budget, taken as it is */
    int qk_keep;           /* a model's run: 0, every layer keeps its scores, mask, masked scores and
                            * weights; L + 1, only layer L does (a prompt too long for all of them) */
    int qk_prefer;         /* with qk_keep 0: the layer that keeps them when they fit for one layer only */
} attn_config;

#define ATTN_EXAMPLE_TOKENS "你 是 一 只 猫 娘 | 我 爱 AI"

#endif
