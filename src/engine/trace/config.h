/* config.h — what to compute: the attention configuration and its validation.
 *
 * attn_config (config_fields.h) holds what a user asked for: command-line
 * flags, lesson keys and GUI controls all set its fields by name, through the
 * settings vocabulary (settings.h). attn_config_resolve checks it and derives
 * the concrete sizes (attn_dims) and the padded token tables. */
#ifndef ATTN_CONFIG_H
#define ATTN_CONFIG_H

#include <stdbool.h>

#include "engine/base/budget.h"
#include "engine/base/error.h"
#include "engine/trace/config_fields.h"
#include "engine/trace/stages.h"
#include "engine/trace/tokens.h"
/* The settings vocabulary: whoever holds a config can set a field by name. */
#include "engine/trace/settings.h"

/* Fills c with the defaults (the built-in example). Pair with attn_config_free. */
void attn_config_init(attn_config *c);
void attn_config_free(attn_config *c);
/* Deep copy; dst must not hold owned strings. */
attn_status attn_config_copy(attn_config *dst, const attn_config *src, attn_error *err);

/* Sets one setting by name: attn_setting_find, then attn_setting_parse.
 * An unknown name: "unknown setting 'hedas' (did you mean 'heads'?)". */
attn_status attn_config_set(attn_config *c, const char *key, const char *value, attn_error *err);

/* What a resolved run of c computed: c with the sizes of d (seq, batch,
 * d_model, heads, kv_heads, mode, past) and the causal mask off for
 * cross-attention. Its strings are NULL except model and text, which borrow
 * c's: nothing to free. Trace metadata records these values. */
attn_config attn_config_as_run(const attn_config *c, const attn_dims *d);

/* Checks every rule and derives dims and the padded token tables (caller frees
 * them with attn_tokens_free; source is empty unless cross-attention). One rule
 * is size: a config whose trace would exceed max_bytes is refused here, with
 * its estimated size, before anything large is allocated. */
attn_status attn_config_resolve(const attn_config *c, attn_dims *dims, attn_tokens *tokens,
                                attn_tokens *source, attn_error *err);

/* The rules of the settings around the scores: keep_first needs a sliding
 * window; kv_rank, rope_dim and mla_absorb need mode mla; a trained model's
 * run (model) refuses mode mla, alibi, softcap, qk_norm and sink_logit,
 * which its checkpoint was not trained with. One line each. */
attn_status attn_config_check_scores(const attn_config *c, bool model, attn_error *err);

/* KV-cache decoding, step `step` (1-based) of base: the first `step` tokens of
 * every row, all but the last already in the cache (past = step − 1). *len
 * receives the number of steps (the longest row); step is clamped to
 * [1, *len]. out is a new config (pair with attn_config_free). */
attn_status attn_config_decode(const attn_config *base, int step, attn_config *out, int *len, attn_error *err);

/* What one trace of c may take, and which bound decided it (budget.h):
 * max_bytes as it is when set; else the smaller of memory_gib (else half the
 * physical memory) and what the address-space limit leaves for a forward pass. */
attn_budget attn_config_budget(const attn_config *c);
/* attn_config_budget(c).bytes */
double attn_config_max_bytes(const attn_config *c);

/* What decides which stages a run of c (resolved to d) records. */
attn_stage_ctx attn_config_stage_ctx(const attn_config *c, const attn_dims *d);

/* The settings of c that a stage's on-screen text depends on (attn_stage_formula_in). */
attn_stage_text attn_config_stage_text(const attn_config *c, bool model, bool cross);

/* With tiles BQ × BK: the key tiles ⌈t / BK⌉ a query row passes; 0 without tiles. */
int attn_config_key_tiles(const attn_config *c, int t);

const char *attn_mode_name(attn_mode m);
/* kv heads that --mode gqa picks for h heads: the smallest divisor of h
 * strictly between 1 and h, or 0 if there is none (h prime or < 4). */
int attn_gqa_default_groups(int h);

#endif
