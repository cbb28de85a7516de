/* config.h — what to compute: the attention configuration and its validation.
 *
 * attn_config holds what a user asked for (command-line flags, lesson keys,
 * GUI controls all go through attn_config_set). attn_config_resolve checks it
 * and derives the concrete sizes (attn_dims) and the padded token tables. */
#ifndef ATTN_CONFIG_H
#define ATTN_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "stages.h"
#include "tokens.h"

/* The causal mask. REVERSED is a pitfall kept for teaching: a lower-triangular
 * mask (tril where triu was meant) hides the past and lets the future through. */
typedef enum { ATTN_CAUSAL_OFF = 0, ATTN_CAUSAL_ON = 1, ATTN_CAUSAL_REVERSED = 2 } attn_causal;

typedef struct {
    char *tokens;          /* "你 是 猫 | 我 爱 AI"; NULL: built-in example or synthetic */
    char *source_tokens;   /* set: cross-attention over these source rows */
    int seq, batch;        /* 0: unset (taken from tokens, or synthetic defaults) */
    int d_model, heads;
    int kv_heads;          /* 0: chosen by mode */
    attn_mode mode;
    attn_causal causal;
    bool scale;            /* divide scores by √k (default); false shows softmax saturating */
    bool softmax_guard;    /* a row with every key masked gets weights 0 (default); false: the
                            * unguarded softmax's 0/0 = NaN, which then spreads to context and out */
    attn_pad_side pad_side;
    bool pad_mask;         /* mask <pad> keys (default); false shows what the mask prevents */
    bool rope;
    double rope_theta;
    float mask_value;      /* -INFINITY or a finite negative number such as -1e9 */
    int past;              /* P: positions already in the KV cache */
    float dropout;         /* p in [0, 1); active only when train */
    bool train;
    uint64_t seed;
    char *weights_path;    /* safetensors with w_q, w_k, w_v, w_o; NULL: from seed */
    char *input_path;      /* safetensors with x [, x_past, memory]; NULL: from seed */
    double max_bytes;      /* trace size limit; 0: half of physical memory */
} attn_config;

#define ATTN_EXAMPLE_TOKENS "你 是 一 只 猫 娘 | 我 爱 AI"

/* Fills c with the defaults (the built-in example). Pair with attn_config_free. */
void attn_config_init(attn_config *c);
void attn_config_free(attn_config *c);
/* Deep copy; dst must not hold owned strings. */
attn_status attn_config_copy(attn_config *dst, const attn_config *src, attn_error *err);

/* Sets one setting by name (tokens, source_tokens, seq, batch, d_model, heads,
 * kv_heads, mode, causal (true/false/reversed), scale, softmax_guard, pad_side, pad_mask, rope, rope_theta, mask_value, past,
 * dropout, train, seed, weights, input). '-' in key is read as '_'.
 * Errors name the key and the rule: "heads: 'x' is not a whole number". */
attn_status attn_config_set(attn_config *c, const char *key, const char *value, attn_error *err);

/* True if key names a setting attn_config_set knows. */
bool attn_config_has_key(const char *key);

/* Checks every rule and derives dims and the padded token tables (caller frees
 * them with attn_tokens_free; source is empty unless cross-attention). One rule
 * is size: a config whose trace would exceed max_bytes is refused here, with
 * its estimated size, before anything large is allocated. */
attn_status attn_config_resolve(const attn_config *c, attn_dims *dims, attn_tokens *tokens,
                                attn_tokens *source, attn_error *err);

/* KV-cache decoding, step `step` (1-based) of base: the first `step` tokens of
 * every row, all but the last already in the cache (past = step − 1). *len
 * receives the number of steps (the longest row); step is clamped to
 * [1, *len]. out is a new config (pair with attn_config_free). */
attn_status attn_config_decode(const attn_config *base, int step, attn_config *out, int *len, attn_error *err);

/* What decides which stages a run of c (resolved to d) records. */
attn_stage_ctx attn_config_stage_ctx(const attn_config *c, const attn_dims *d);

const char *attn_mode_name(attn_mode m);
/* kv heads that --mode gqa picks for h heads: the smallest divisor of h
 * strictly between 1 and h, or 0 if there is none (h prime or < 4). */
int attn_gqa_default_groups(int h);
/* "-inf" or e.g. "-1e+09" into buf. */
const char *attn_format_mask_value(float v, char *buf, int size);

#endif
