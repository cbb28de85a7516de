/* model_config_mla.h — config.json's keys of DeepSeek-V2 and V3 (multi-head
 * latent attention), read for model_config.c. Private to the formats folder. */
#ifndef ATTN_MODEL_CONFIG_MLA_H
#define ATTN_MODEL_CONFIG_MLA_H

#include <cjson/cJSON.h>

#include "model_config.h"

/* The latent attention's sizes, RoPE convention and what this engine cannot
 * run (mixture-of-experts layers, rope_scaling, quantization), into c, whose
 * vocab, d, layers, heads and ffn are read already. Sets head_dim to
 * qk_nope_head_dim and kv_heads to heads. Errors start "config.json: ". */
attn_status attn_model_config_mla(const cJSON *root, attn_model_config *c, attn_error *err);

#endif
