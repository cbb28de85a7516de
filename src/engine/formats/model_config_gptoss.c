/* model_config_gptoss.c — config.json of a gpt-oss folder (GptOssConfig).
 *
 * GptOssConfig's defaults where a key is absent: head_dim 64 (null:
 * hidden_size / num_attention_heads), num_key_value_heads 8 (null: the
 * heads), num_local_experts 128 (HF also takes num_experts for it),
 * num_experts_per_tok 4, sliding_window 128, attention_bias true,
 * swiglu_limit 7.0, swiglu_alpha 1.702 (applied as given, as the newest
 * GptOssConfig documents them; transformers' modelling up to 4.57 applies
 * 7.0 and 1.702 whatever the config says), tie_word_embeddings false;
 * rms_norm_eps 1e-5, rope_theta 150000 and max_position_embeddings 131072
 * are read in model_config.c, with rope_scaling (absent: GptOssConfig's
 * YaRN, factor 32 from 4096, there) and v5's rope_parameters (olmo2.c).
 *
 * Which layers are local (sliding_attention: keys j ≤ i − W masked) and
 * which global (full_attention): layer_types when given, else HF's
 * pattern, layer l local when (l + 1) is odd: 0, 2, 4, … local.
 *
 * Every layer's MLP is a mixture of experts of width intermediate_size
 * (gptoss.h). Not read because HF's modelling never reads them:
 * router_aux_loss_coef, output_router_logits (training's auxiliary loss),
 * hidden_act (the experts' activation is fixed), attention_dropout
 * (training only), initializer_range. Refused, naming the key: a quantized
 * checkpoint (MXFP4's *_blocks and *_scales are not read), a
 * partial_rotary_factor other than 1, a sliding window of null with local
 * layers, an attention type other than the two. */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/json.h"

/* Which layers are local: layer_types, else (l + 1) odd. */
static attn_status layer_kinds(const cJSON *root, attn_model_config *c, attn_error *err)
{
    bool given;
    attn_status st = attn_model_config_layer_types(root, c, &given, err);
    if (st || given) return st;
    for (int l = 0; l < c->layers; l++) c->arch.local[l] = (l + 1) % 2 != 0;
    return ATTN_OK;
}

/* What this engine does not run, each refused naming its key; before any
 * other key, so that the published folders (MXFP4 experts) hear of their
 * weights first. */
attn_status attn_model_config_gptoss_refuse(const cJSON *root, attn_error *err)
{
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "quantization_config");
    if (q && !cJSON_IsNull(q)) {
        const cJSON *how = cJSON_IsObject(q) ? cJSON_GetObjectItemCaseSensitive(q, "quant_method") : NULL;
        if (cJSON_IsString(how) && !strcmp(how->valuestring, "mxfp4"))
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: quantization_config: MXFP4 experts (*_blocks, "
                             "*_scales) are not read; use a BF16, F16 or F32 copy of the weights");
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: quantization_config: quantized checkpoints are not "
                         "supported; use F32, F16 or BF16 weights");
    }
    const cJSON *prf = cJSON_GetObjectItemCaseSensitive(root, "partial_rotary_factor");
    if (prf && !(cJSON_IsNumber(prf) && prf->valuedouble == 1.0))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: partial_rotary_factor other than 1 is not supported for "
                         "GptOssForCausalLM (RoPE turns every feature of a head here)");
    return ATTN_OK;
}

/* head_dim and the K/V heads, with GptOssConfig's defaults. */
static attn_status heads(const cJSON *root, attn_model_config *c, attn_error *err)
{
    const cJSON *hd = cJSON_GetObjectItemCaseSensitive(root, "head_dim");
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(root, "num_key_value_heads");
    double x;
    attn_status st;
    if (hd && cJSON_IsNull(hd)) {
        if (c->d % c->heads)
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: head_dim is null and hidden_size %d is not a multiple "
                             "of the %d heads", c->d, c->heads);
        c->head_dim = c->d / c->heads;
    } else {
        if ((st = attn_model_config_number(root, "head_dim", 2, 1 << 12, true, 64, false, &x, err))) return st;
        c->head_dim = (int)x;
    }
    if (!kv) { /* absent: 8 (null: the heads, as model_config.c read it) */
        if (c->heads < 8)
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: num_key_value_heads is absent, so 8 (GptOssConfig's "
                             "default), more than the %d heads", c->heads);
        c->kv_heads = 8;
    }
    if (c->head_dim % 2 || c->heads % c->kv_heads)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %d heads of %d and %d K/V heads do not fit (the head dim "
                         "must be even, K/V heads must divide heads)", c->heads, c->head_dim, c->kv_heads);
    return ATTN_OK;
}

/* The experts: how many, how many a token takes, their clamped SwiGLU. */
static attn_status experts(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_moe_sizes *e = &c->moe;
    const char *key = cJSON_GetObjectItemCaseSensitive(root, "num_local_experts") ||
                              !cJSON_GetObjectItemCaseSensitive(root, "num_experts")
                          ? "num_local_experts"
                          : "num_experts"; /* GptOssConfig's attribute_map: the same number */
    double n, k;
    attn_status st;
    memset(e, 0, sizeof *e);
    if ((st = attn_model_config_number(root, key, 1, 4096, true, 128, false, &n, err)) ||
        (st = attn_model_config_number(root, "num_experts_per_tok", 1, n, true, 4, false, &k, err)) ||
        (st = attn_model_config_number(root, "swiglu_limit", 1e-6, 1e9, false, 7.0, false, &e->limit, err)) ||
        (st = attn_model_config_number(root, "swiglu_alpha", 1e-6, 1e6, false, 1.702, false, &e->alpha, err)))
        return st;
    if (k > n) /* attn_model_config_number above was given the bound, but say it plainly when absent gives 4 */
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: num_experts_per_tok %g is more than the %g experts", k, n);
    e->experts = (int)n;
    e->top_k = (int)k;
    e->inter = c->ffn;
    e->method = ATTN_ROUTE_TOPK_SOFTMAX;
    e->scale = 1.0;
    c->arch.experts = e->experts;
    c->arch.moe_from = 0;
    return ATTN_OK;
}

attn_status attn_model_config_gptoss(const cJSON *root, attn_model_config *c, attn_error *err)
{
    bool bias;
    double window = 0;
    attn_status st;
    if ((st = heads(root, c, err)) || (st = experts(root, c, err)) ||
        (st = layer_kinds(root, c, err)))
        return st;
    if ((st = attn_json_bool(root, "attention_bias", "attention_bias", true, &bias, err)))
        return attn_error_prefix(err, "config.json");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "sliding_window");
    bool any_local = false;
    for (int l = 0; l < c->layers; l++) any_local = any_local || c->arch.local[l];
    if (w && cJSON_IsNull(w) && any_local)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: sliding_window is null but layer_types has "
                         "sliding_attention layers, whose window it is");
    if (!(w && cJSON_IsNull(w)) &&
        (st = attn_model_config_number(root, "sliding_window", 1, 1 << 30, true, 128, false, &window, err)))
        return st;
    c->arch.local_window = any_local ? (int)window : 0;
    c->arch.qkv_bias = bias;
    c->arch.o_bias = bias;
    c->arch.sinks = true;
    return ATTN_OK;
}
