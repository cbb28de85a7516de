/* model_config_olmo2.c — config.json of an OLMo 2 folder (Olmo2Config), and
 * what OLMo 2 and SmolLM3 share: transformers v5's rope_parameters and the
 * keys neither runs.
 *
 * Olmo2Config's defaults, where they differ from LlamaConfig's: rms_norm_eps
 * 1e-5, eos_token_id 50279, no bos. Its attention RMS-normalises the whole
 * q projection (num_attention_heads · head_dim gains) and the whole k
 * projection (num_key_value_heads · head_dim) before the head split, and its
 * layers normalise each sublayer's output instead of its input (arch.h). The
 * tensors: no input_layernorm; post_attention_layernorm and
 * post_feedforward_layernorm (d) each; self_attn.q_norm (h·k), k_norm (g·k). */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "engine/base/json.h"

attn_status attn_model_config_rope_parameters(const cJSON *root, attn_model_config *c, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "rope_parameters");
    if (!v || cJSON_IsNull(v)) return ATTN_OK;
    if (!cJSON_IsObject(v)) {
        attn_json_wrong("rope_parameters", "null or an object", v, err);
        return attn_error_prefix(err, "config.json");
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(v, "rope_type");
    if (type && !cJSON_IsString(type)) {
        attn_json_wrong("rope_parameters.rope_type", "a string", type, err);
        return attn_error_prefix(err, "config.json");
    }
    /* gpt-oss's v5 config holds its YaRN here, beside rope_theta: the rope_scaling reader's fields */
    bool yarn = type && !strcmp(type->valuestring, "yarn") && c->arch.kind == ATTN_ARCH_GPT_OSS;
    if (type && strcmp(type->valuestring, "default") && !yarn)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_parameters.rope_type '%.30s' is not supported for "
                         "%s (only \"default\"%s)", type->valuestring, attn_arch_name(c->arch.kind),
                         c->arch.kind == ATTN_ARCH_GPT_OSS ? " and \"yarn\"" : "");
    double gain;
    attn_status st;
    if (yarn && (st = attn_model_config_rope_object(v, "rope_parameters", &c->arch.rope_scaling, &gain, err)))
        return st;
    for (const cJSON *e = v->child; e && !yarn; e = e->next)
        if (strcmp(e->string, "rope_type") && strcmp(e->string, "rope_theta"))
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_parameters.%.40s is not supported (only "
                             "rope_type \"default\" and rope_theta)", e->string);
    const cJSON *theta = cJSON_GetObjectItemCaseSensitive(v, "rope_theta");
    if (theta && !cJSON_IsNumber(theta)) {
        attn_json_wrong("rope_parameters.rope_theta", "a number", theta, err);
        return attn_error_prefix(err, "config.json");
    }
    if (theta) {
        c->theta = theta->valuedouble;
        if (!(c->theta > 1 && isfinite(c->theta)))
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'rope_parameters.rope_theta' must be a finite "
                             "number above 1, not %g", c->theta);
    }
    return ATTN_OK;
}

attn_status attn_model_config_refuse_common(const cJSON *root, const attn_model_config *c, attn_error *err)
{
    if (cJSON_GetObjectItemCaseSensitive(root, "quantization_config"))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: quantization_config: quantized %s checkpoints are not "
                         "supported; use F32, F16 or BF16 weights", attn_arch_name(c->arch.kind));
    const cJSON *drop = cJSON_GetObjectItemCaseSensitive(root, "attention_dropout");
    if (drop && !cJSON_IsNumber(drop)) {
        attn_json_wrong("attention_dropout", "a number", drop, err);
        return attn_error_prefix(err, "config.json");
    }
    return ATTN_OK;
}

attn_status attn_model_config_olmo2(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_status st;
    if ((st = attn_model_config_refuse_common(root, c, err))) return st;
    if (!cJSON_GetObjectItemCaseSensitive(root, "rms_norm_eps")) c->eps = 1e-5; /* Olmo2Config's */
    if (!cJSON_GetObjectItemCaseSensitive(root, "eos_token_id")) c->eos = 50279;
    if ((st = attn_model_config_rope_parameters(root, c, err))) return st;
    c->arch.qk_norm = true; /* q_norm and k_norm stages, over the whole projection: */
    c->arch.qk_norm_whole = true;
    c->arch.post_norms = true;
    return ATTN_OK;
}
