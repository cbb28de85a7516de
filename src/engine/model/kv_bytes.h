/* kv_bytes.h — what a model's KV cache keeps per token, counted from a
 * loaded model (kv_bytes.c): what `attnlab info` and the window's side panel
 * print for a checkpoint. The shipped models' cards are counted again in
 * Python (scripts/train/card.py), and the panel's synthetic MHA/GQA/MQA/MLA
 * comparison by stages.h's attn_kv_bytes_per_token; check_models.py compares
 * info's figure with each reference's own count and the cards'.
 *
 * A layer caches, for each token it may still read:
 *   K and V       2 · g · k values (g kv heads of k: MHA g = h, GQA, MQA g = 1)
 *   latent (MLA)  R + D values (kv_lora_rank + qk_rope_head_dim), whatever h
 * A full layer reads every earlier position, so its cache grows by that much
 * a token for as long as the text. A local (sliding-window) layer reads only
 * its last W positions, so a cache that lets older rows go holds at most
 * W of them: it grows like a full layer for the first W tokens, then stays.
 *   Gemma 2        local layers alternate with global ones (0, 2, 4 … local)
 *   Gemma 3        layer_types, or five local then one global
 *   Mistral        every layer has the window (config's sliding_window)
 *   SmolLM3        a NoPE layer turns nothing but caches K and V all the same
 *   OLMo 2, Llama  every layer full
 *   DeepSeek       every layer full, the latent instead of K and V
 * A new family with local layers sets arch.local[] and arch.local_window
 * (as model_config_gemma.c does) and is counted here with no change. */
#ifndef ATTN_KV_BYTES_H
#define ATTN_KV_BYTES_H

#include "engine/formats/model_config.h"

typedef struct {
    double per_layer;    /* one layer, one token: 2·g·k or R + D values, × the value's bytes */
    int layers;          /* all of them */
    int full_layers;     /* layers that keep every position */
    int local_layers;    /* layers that read only their last `window` positions */
    int window;          /* W (0: no local layer) */
    double full;         /* bytes a token of the full layers: per_layer · full_layers */
    double local;        /* bytes a token of the local layers, for their first W tokens: per_layer · local_layers */
    double local_cap;    /* the most the local layers hold: local · W */
} attn_kv_bytes;

/* The KV cache of a model of config c at value_bytes a value (4: float32,
 * 2: BF16). */
attn_kv_bytes attn_kv_bytes_of(const attn_model_config *c, int value_bytes);

/* Bytes a cache that keeps only what each layer reads holds after n tokens:
 * full · n + local · min(n, W). */
double attn_kv_bytes_at(const attn_kv_bytes *b, double n);

#endif
