/* model_config_smollm3.c — config.json of a SmolLM3 folder (SmolLM3Config).
 *
 * Llama's layer, except that some layers leave q and k unrotated (NoPE):
 * no_rope_layers[l] = 1 turns layer l, 0 does not; a list at least
 * num_hidden_layers long. Without it (null or absent) transformers builds it
 * from no_rope_layer_interval N (4 when absent): layer l has RoPE unless
 * (l + 1) is a multiple of N, so every N-th layer is NoPE.
 *
 * SmolLM3Config's defaults where they differ from LlamaConfig's: 4 key/value
 * heads, rope_theta 2,000,000, max_position_embeddings 32768, tied
 * embeddings, bos 128000, eos 128001. A sliding window (use_sliding_window,
 * or "sliding_attention" in layer_types) is refused: this engine does not
 * run it per layer; max_window_layers, which SmolLM3's modelling never
 * reads, is ignored. */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "engine/base/json.h"

static attn_status wrong(const char *key, const char *want, const cJSON *v, attn_error *err)
{
    attn_json_wrong(key, want, v, err);
    return attn_error_prefix(err, "config.json");
}

/* no_rope_layers, or the interval it is derived from, into c->arch.nope_layer. */
static attn_status nope_layers(const cJSON *root, attn_model_config *c, attn_error *err)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "no_rope_layers");
    attn_arch *a = &c->arch;
    memset(a->nope_layer, 0, sizeof a->nope_layer);
    a->nope = true;
    if (list && !cJSON_IsNull(list)) {
        if (!cJSON_IsArray(list)) return wrong("no_rope_layers", "a list of 0 and 1 or null", list, err);
        int n = cJSON_GetArraySize(list), l = 0;
        if (n < c->layers)
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'no_rope_layers' has %d entries, fewer than the %d "
                             "layers", n, c->layers);
        for (const cJSON *e = list->child; e && l < c->layers; e = e->next, l++) {
            if (!cJSON_IsNumber(e) || (e->valuedouble != 0 && e->valuedouble != 1))
                return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'no_rope_layers[%d]' must be 1 (RoPE) or 0 "
                                 "(none)", l);
            if (e->valuedouble == 0) a->nope_layer[l / 8] |= (unsigned char)(1u << (l % 8));
        }
        return ATTN_OK;
    }
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(root, "no_rope_layer_interval");
    double every = 4;
    if (iv && !cJSON_IsNumber(iv)) return wrong("no_rope_layer_interval", "a whole number", iv, err);
    if (iv) every = iv->valuedouble;
    if (!(every >= 1 && every <= 1 << 20) || every != floor(every))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'no_rope_layer_interval' must be a whole number from 1, "
                         "not %g", every);
    for (int l = 0; l < c->layers; l++)
        if ((l + 1) % (int)every == 0) a->nope_layer[l / 8] |= (unsigned char)(1u << (l % 8));
    return ATTN_OK;
}

/* layer_types: absent, null, or every entry "full_attention". */
static attn_status layer_types(const cJSON *root, const attn_model_config *c, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (!v || cJSON_IsNull(v)) return ATTN_OK;
    if (!cJSON_IsArray(v)) return wrong("layer_types", "a list of layer types or null", v, err);
    int l = 0;
    for (const cJSON *e = v->child; e; e = e->next, l++) {
        if (!cJSON_IsString(e)) return wrong("layer_types[]", "a string", e, err);
        if (strcmp(e->valuestring, "full_attention"))
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: layer_types[%d] '%.30s' is not supported for %s "
                             "(only full_attention: no sliding window per layer here)", l, e->valuestring,
                             attn_arch_name(c->arch.kind));
    }
    if (l < c->layers)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'layer_types' has %d entries, fewer than the %d layers",
                         l, c->layers);
    return ATTN_OK;
}

attn_status attn_model_config_smollm3(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_status st;
    const cJSON *prf = cJSON_GetObjectItemCaseSensitive(root, "partial_rotary_factor");
    if ((st = attn_model_config_refuse_common(root, c, err))) return st;
    if (prf && (!cJSON_IsNumber(prf) || prf->valuedouble != 1.0))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: partial_rotary_factor other than 1 is not supported for "
                         "%s (RoPE turns every feature of a head here)", attn_arch_name(c->arch.kind));
    if ((st = layer_types(root, c, err)) || (st = nope_layers(root, c, err))) return st;
    /* SmolLM3Config's defaults where LlamaConfig's differ (num_key_value_heads: model_config.c) */
    if (!cJSON_GetObjectItemCaseSensitive(root, "rope_theta")) c->theta = 2000000.0;
    if (!cJSON_GetObjectItemCaseSensitive(root, "max_position_embeddings")) c->max_pos = 32768;
    if (!cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings")) c->tied = true;
    if (!cJSON_GetObjectItemCaseSensitive(root, "bos_token_id")) c->bos = 128000;
    if (!cJSON_GetObjectItemCaseSensitive(root, "eos_token_id")) c->eos = 128001;
    return attn_model_config_rope_parameters(root, c, err);
}
