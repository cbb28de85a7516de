/* model_config_mla.c — config.json of a DeepSeek-V2 or V3 folder: the sizes
 * of multi-head latent attention, with transformers' defaults when absent
 * (DeepseekV3Config: kv_lora_rank 512, q_lora_rank 1536, qk_rope_head_dim 64,
 * qk_nope_head_dim 128, v_head_dim 128, first_k_dense_replace 3,
 * rope_interleave true, max_position_embeddings 4096, bos 0, eos 1;
 * DeepseekV2Config the same sizes, first_k_dense_replace 0,
 * max_position_embeddings 2048, bos 1, eos 2).
 *
 * A layer l ≥ first_k_dense_replace is a mixture of experts in both (V2 and
 * V3 build DeepseekV*MoE there): its keys are model_config_moe.c's. Anything
 * else it would run differently from transformers (a quantized checkpoint,
 * biases) is refused; rope_scaling (DeepSeek's YaRN, with its softmax
 * scale's mscale²) is read as the other families' (model_config_rope.c). */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/json.h"

/* key: a whole number from min to max; def when absent, or when null and
 * null_means (q_lora_rank: null is "no low-rank query", 0 here). */
static attn_status whole(const cJSON *root, const char *key, int min, int max, int def, bool null_means, int *out,
                         attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = def;
    if (!v || (null_means && cJSON_IsNull(v))) {
        if (v) *out = 0;
        return ATTN_OK;
    }
    if (!cJSON_IsNumber(v)) {
        attn_json_wrong(key, null_means ? "a whole number or null" : "a whole number", v, err);
        return attn_error_prefix(err, "config.json");
    }
    double x = v->valuedouble;
    if (!isfinite(x) || x != floor(x) || x < min || x > max)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be a whole number from %d to %d, not %g", key,
                         min, max, x);
    *out = (int)x;
    return ATTN_OK;
}

/* The experts (model_config_moe.c), and what this engine does not run:
 * quantized weights. (rope_scaling, YaRN's included, is model_config_rope.c's.) */
static attn_status unsupported(const cJSON *root, attn_model_config *c, attn_error *err)
{
    int dense;
    attn_status st = whole(root, "first_k_dense_replace", 0, 1 << 20, c->arch.kind == ATTN_ARCH_DEEPSEEK_V2 ? 0 : 3,
                           false, &dense, err);
    if (st) return st;
    if (dense < c->layers && (st = attn_model_config_moe(root, c, dense, err))) return st;
    if (cJSON_GetObjectItemCaseSensitive(root, "quantization_config"))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: quantization_config: quantized checkpoints (FP8 "
                         "blocks and their scales) are not supported; use F32, F16 or BF16 weights");
    return ATTN_OK;
}

attn_status attn_model_config_mla(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_mla_sizes *m = &c->mla;
    bool v3 = c->arch.kind == ATTN_ARCH_DEEPSEEK_V3, interleave = true;
    int kv = c->heads;
    attn_status st;
    if ((st = whole(root, "kv_lora_rank", 1, 1 << 16, 512, false, &m->kv_rank, err)) ||
        (st = whole(root, "q_lora_rank", 1, 1 << 16, 1536, true, &m->q_rank, err)) ||
        (st = whole(root, "qk_rope_head_dim", 2, 1 << 12, 64, false, &m->rope_dim, err)) ||
        (st = whole(root, "qk_nope_head_dim", 1, 1 << 12, 128, false, &m->nope_dim, err)) ||
        (st = whole(root, "v_head_dim", 1, 1 << 12, 128, false, &m->v_dim, err)) ||
        (st = whole(root, "num_key_value_heads", 1, 1024, c->heads, true, &kv, err)) ||
        (st = unsupported(root, c, err)))
        return st;
    if (m->rope_dim % 2)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'qk_rope_head_dim' must be even (RoPE turns pairs of "
                         "features), not %d", m->rope_dim);
    if (m->v_dim != m->nope_dim)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: v_head_dim %d differs from qk_nope_head_dim %d, which "
                         "this engine does not run yet (its heads have one width for keys and values)",
                         m->v_dim, m->nope_dim);
    if (kv && kv != c->heads)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: num_key_value_heads %d must equal num_attention_heads %d "
                         "in latent attention (every head's key and value come from the latent)", kv, c->heads);
    if (v3 && (st = attn_json_bool(root, "rope_interleave", "rope_interleave", true, &interleave, err)))
        return attn_error_prefix(err, "config.json");
    c->arch.mla = true;
    c->arch.q_lora = m->q_rank > 0;
    c->arch.rope_to_halves = v3 && interleave;
    c->head_dim = m->nope_dim;
    c->kv_heads = c->heads;
    return ATTN_OK;
}
