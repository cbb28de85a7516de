/* model_config.c — config.json of a Hugging Face decoder checkpoint. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

static const struct {
    attn_arch_kind kind;
    const char *arch;       /* "architectures": [...] */
    const char *model_type; /* the same, when architectures is absent */
} ARCHS[] = {
    {ATTN_ARCH_LLAMA, "LlamaForCausalLM", "llama"},
    {ATTN_ARCH_MISTRAL, "MistralForCausalLM", "mistral"},
    {ATTN_ARCH_QWEN2, "Qwen2ForCausalLM", "qwen2"},
    {ATTN_ARCH_QWEN3, "Qwen3ForCausalLM", "qwen3"},
};
#define N_ARCHS (sizeof ARCHS / sizeof ARCHS[0])
#define SUPPORTED "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM"

const char *attn_arch_name(attn_arch_kind kind)
{
    for (size_t i = 0; i < N_ARCHS; i++)
        if (ARCHS[i].kind == kind) return ARCHS[i].arch;
    return "";
}

static attn_status json_int(const cJSON *root, const char *key, int min, int max, int *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' is missing", key);
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble || v->valuedouble < min ||
        v->valuedouble > max)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be a whole number from %d to %d", key, min, max);
    *out = (int)v->valuedouble;
    return ATTN_OK;
}

/* An optional whole number: def when absent or null. */
static attn_status json_int_opt(const cJSON *root, const char *key, int min, int max, int def, int *out,
                                attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v || cJSON_IsNull(v)) {
        *out = def;
        return ATTN_OK;
    }
    return json_int(root, key, min, max, out, err);
}

static double json_num(const cJSON *root, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* A token id, or the first of a list of them (Llama 3's eos_token_id). */
static int json_token(const cJSON *root, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (cJSON_IsArray(v)) v = cJSON_GetArrayItem(v, 0);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < (1 << 22) ? (int)v->valuedouble : -1;
}

static attn_status find_arch(const cJSON *root, attn_model_config *c, attn_error *err)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    const cJSON *first = cJSON_IsArray(arch) ? cJSON_GetArrayItem(arch, 0) : NULL;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    for (size_t i = 0; i < N_ARCHS; i++)
        if (cJSON_IsString(first) ? !strcmp(first->valuestring, ARCHS[i].arch)
                                  : cJSON_IsString(type) && !strcmp(type->valuestring, ARCHS[i].model_type)) {
            c->arch.kind = ARCHS[i].kind;
            return ATTN_OK;
        }
    if (cJSON_IsString(first))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: architecture '%.60s' is not supported (supported: "
                         SUPPORTED ")", first->valuestring);
    if (cJSON_IsString(type))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: model_type '%.60s' is not supported (supported: "
                         SUPPORTED ")", type->valuestring);
    return attn_fail(err, ATTN_ERR_FORMAT, "config.json: names no architecture (expected \"architectures\": "
                     "[\"LlamaForCausalLM\"] or another of " SUPPORTED ")");
}

/* rope_scaling: null, or Llama 3's {"rope_type": "llama3", ...}. */
static attn_status rope_scaling(const cJSON *root, attn_rope_scaling *r, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    memset(r, 0, sizeof *r);
    if (!v || cJSON_IsNull(v)) return ATTN_OK;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(v, "rope_type");
    if (!type) type = cJSON_GetObjectItemCaseSensitive(v, "type");
    if (!cJSON_IsObject(v) || !cJSON_IsString(type))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_scaling must be null or an object with a rope_type");
    if (!strcmp(type->valuestring, "default")) return ATTN_OK;
    if (strcmp(type->valuestring, "llama3"))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_scaling type '%.30s' is not supported (supported: "
                         "llama3)", type->valuestring);
    r->factor = json_num(v, "factor", NAN);
    r->low_freq_factor = json_num(v, "low_freq_factor", NAN);
    r->high_freq_factor = json_num(v, "high_freq_factor", NAN);
    double orig = json_num(v, "original_max_position_embeddings", NAN);
    if (!(r->factor >= 1 && r->factor < 1e6) || !(r->low_freq_factor > 0) ||
        !(r->high_freq_factor > r->low_freq_factor && r->high_freq_factor < 1e6) || !(orig >= 1 && orig < 1e9))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_scaling llama3 needs factor ≥ 1, 0 < "
                         "low_freq_factor < high_freq_factor and original_max_position_embeddings ≥ 1");
    r->original_max_pos = (int)orig;
    return ATTN_OK;
}

/* What each architecture adds, and the options this engine does not compute. */
static attn_status arch_options(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_arch *a = &c->arch;
    const cJSON *v;
    attn_status st;
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "mlp_bias")))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: mlp_bias = true is not supported");
    /* Qwen2 always has q, k, v biases; Llama's attention_bias would add one to o too */
    a->qkv_bias = a->kind == ATTN_ARCH_QWEN2;
    if (a->kind != ATTN_ARCH_QWEN2 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "attention_bias")))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: attention_bias = true is not supported for %s",
                         attn_arch_name(a->kind));
    a->qk_norm = a->kind == ATTN_ARCH_QWEN3;
    c->sliding_window = 0;
    if (a->kind == ATTN_ARCH_MISTRAL) {
        if ((st = json_int_opt(root, "sliding_window", 1, 1 << 30, 0, &c->sliding_window, err))) return st;
    } else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "use_sliding_window"))) {
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: use_sliding_window = true is not supported for %s "
                         "(its window applies to some layers only)", attn_arch_name(a->kind));
    }
    if ((st = rope_scaling(root, &a->rope_scaling, err))) return st;
    v = cJSON_GetObjectItemCaseSensitive(root, "hidden_act");
    if (v && (!cJSON_IsString(v) || strcmp(v->valuestring, "silu") != 0))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: hidden_act '%.30s' is not supported (only silu)",
                         cJSON_IsString(v) ? v->valuestring : "?");
    return ATTN_OK;
}

static attn_status sizes(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_status st;
    if ((st = json_int(root, "vocab_size", 1, 1 << 22, &c->vocab, err)) ||
        (st = json_int(root, "hidden_size", 2, 1 << 16, &c->d, err)) ||
        (st = json_int(root, "num_hidden_layers", 1, ATTN_MODEL_MAX_LAYERS, &c->layers, err)) ||
        (st = json_int(root, "num_attention_heads", 1, 1024, &c->heads, err)) ||
        (st = json_int(root, "intermediate_size", 1, 1 << 20, &c->ffn, err)) ||
        (st = json_int_opt(root, "num_key_value_heads", 1, c->heads, c->heads, &c->kv_heads, err)))
        return st;
    /* Qwen3's head_dim defaults to 128 (its config class's default); the others' to d / h */
    int def = c->arch.kind == ATTN_ARCH_QWEN3 ? 128 : c->d / c->heads;
    if (c->arch.kind == ATTN_ARCH_QWEN2) c->head_dim = def;
    else if ((st = json_int_opt(root, "head_dim", 2, 1 << 12, def, &c->head_dim, err))) return st;
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(root, "head_dim");
    bool derived = c->arch.kind == ATTN_ARCH_QWEN2 || ((!given || cJSON_IsNull(given)) && c->arch.kind != ATTN_ARCH_QWEN3);
    if ((derived && c->d % c->heads) || c->heads % c->kv_heads || c->head_dim % 2 ||
        c->head_dim < 2)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: hidden_size %d, %d heads of %d and %d K/V heads do not "
                         "fit (the head dim must be even, K/V heads must divide heads)",
                         c->d, c->heads, c->head_dim, c->kv_heads);
    return ATTN_OK;
}

attn_status attn_model_config_parse(const char *text, size_t len, attn_model_config *c, attn_error *err)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    attn_status st;
    memset(c, 0, sizeof *c);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: not a JSON object");
    }
    if ((st = find_arch(root, c, err)) || (st = arch_options(root, c, err)) || (st = sizes(root, c, err))) goto out;
    c->max_pos = (int)fmin(json_num(root, "max_position_embeddings", 2048), 1 << 30);
    c->eps = json_num(root, "rms_norm_eps", 1e-6);
    c->theta = json_num(root, "rope_theta", 10000.0);
    c->tied = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings"));
    /* attnlab's own key: a model trained without the causal mask runs without it unless asked */
    c->causal = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(root, "attnlab_causal"));
    c->bos = json_token(root, "bos_token_id");
    c->eos = json_token(root, "eos_token_id");
    if (!(c->eps > 0 && c->eps < 1) || !(c->theta > 1))
        st = attn_fail(err, ATTN_ERR_FORMAT, "config.json: rms_norm_eps must be in (0, 1) and rope_theta above 1");
    else if (c->max_pos < 1)
        st = attn_fail(err, ATTN_ERR_FORMAT, "config.json: max_position_embeddings must be positive");
out:
    cJSON_Delete(root);
    return st;
}
