/* model_config.c — config.json of a Hugging Face decoder checkpoint.
 *
 * Every key read has one kind, checked: a value of another kind is refused
 * with the key, the kind wanted and the kind found, never replaced by the
 * default ("rope_theta": "10000" is a string, and a model run with the
 * default θ instead would be another model). A key given twice is refused
 * too (json.h). Absent keys take transformers' defaults; null stands for
 * absent only where transformers reads None (architectures,
 * num_key_value_heads, head_dim, sliding_window, rope_scaling, the token ids).
 * rope_scaling is model_config_rope.c's. */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/json.h"

static const struct {
    attn_arch_kind kind;
    const char *arch;       /* "architectures": [...] */
    const char *model_type; /* the same, when architectures is absent */
} ARCHS[] = {
    {ATTN_ARCH_LLAMA, "LlamaForCausalLM", "llama"},
    {ATTN_ARCH_MISTRAL, "MistralForCausalLM", "mistral"},
    {ATTN_ARCH_QWEN2, "Qwen2ForCausalLM", "qwen2"},
    {ATTN_ARCH_QWEN3, "Qwen3ForCausalLM", "qwen3"},
    {ATTN_ARCH_DEEPSEEK_V2, "DeepseekV2ForCausalLM", "deepseek_v2"},
    {ATTN_ARCH_DEEPSEEK_V3, "DeepseekV3ForCausalLM", "deepseek_v3"},
    {ATTN_ARCH_GEMMA2, "Gemma2ForCausalLM", "gemma2"},
    {ATTN_ARCH_GEMMA3, "Gemma3ForCausalLM", "gemma3_text"},
    {ATTN_ARCH_OLMO2, "Olmo2ForCausalLM", "olmo2"},
    {ATTN_ARCH_SMOLLM3, "SmolLM3ForCausalLM", "smollm3"},
    {ATTN_ARCH_GPT_OSS, "GptOssForCausalLM", "gpt_oss"},
};
#define N_ARCHS (sizeof ARCHS / sizeof ARCHS[0])
#define SUPPORTED "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, " \
                  "DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, " \
                  "Olmo2ForCausalLM, SmolLM3ForCausalLM, GptOssForCausalLM"

const char *attn_arch_name(attn_arch_kind kind)
{
    for (size_t i = 0; i < N_ARCHS; i++)
        if (ARCHS[i].kind == kind) return ARCHS[i].arch;
    return "";
}

/* ---- one key of one kind ---- */

/* "config.json: 'KEY' must be WANT, not KIND", with a string's text quoted. */
static attn_status wrong_kind(const char *key, const char *want, const cJSON *v, attn_error *err)
{
    attn_json_wrong(key, want, v, err);
    return attn_error_prefix(err, "config.json");
}

static bool is_whole(const cJSON *v)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble == floor(v->valuedouble);
}

/* A whole number from min to max that must be there. */
static attn_status json_int(const cJSON *root, const char *key, int min, int max, int *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' is missing", key);
    if (!cJSON_IsNumber(v)) return wrong_kind(key, "a whole number", v, err);
    if (!is_whole(v) || v->valuedouble < min || v->valuedouble > max)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be a whole number from %d to %d, not %g", key,
                         min, max, v->valuedouble);
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

/* An optional number (name: how a message calls it): def when absent. */
static attn_status json_real(const cJSON *root, const char *key, const char *name, double def, double *out,
                             attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        *out = def;
        return ATTN_OK;
    }
    if (!cJSON_IsNumber(v)) return wrong_kind(name, "a number", v, err);
    *out = v->valuedouble;
    return ATTN_OK;
}

/* An optional true or false: def when absent. */
static attn_status json_bool(const cJSON *root, const char *key, bool def, bool *out, attn_error *err)
{
    attn_status st = attn_json_bool(root, key, key, def, out, err);
    return st ? attn_error_prefix(err, "config.json") : ATTN_OK;
}

/* An optional text: NULL when absent. */
static attn_status json_text(const cJSON *root, const char *key, const char *name, const char **out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = NULL;
    if (!v) return ATTN_OK;
    if (!cJSON_IsString(v)) return wrong_kind(name, "a string", v, err);
    *out = v->valuestring;
    return ATTN_OK;
}

/* A token id, or the first of a list of them (Llama 3's eos_token_id); −1
 * when absent, null or an empty list. */
static attn_status json_token(const cJSON *root, const char *key, int *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    const char *want = "a token id (a whole number from 0), a list of them or null";
    *out = -1;
    if (!v || cJSON_IsNull(v)) return ATTN_OK;
    if (!cJSON_IsNumber(v) && !cJSON_IsArray(v)) return wrong_kind(key, want, v, err);
    bool list = cJSON_IsArray(v);
    for (const cJSON *e = list ? v->child : v; e; e = list ? e->next : NULL) {
        if (!cJSON_IsNumber(e)) return wrong_kind(key, want, e, err);
        if (!is_whole(e) || e->valuedouble < 0 || e->valuedouble >= (1 << 22))
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be %s, not %g", key, want, e->valuedouble);
    }
    const cJSON *first = list ? v->child : v;
    *out = first ? (int)first->valuedouble : -1;
    return ATTN_OK;
}

/* ---- readers the family files share (model_config.h) ---- */

attn_status attn_model_config_number(const cJSON *root, const char *key, double min, double max, bool whole,
                                     double def, bool null_def, double *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = def;
    if (!v || (null_def && cJSON_IsNull(v))) return ATTN_OK;
    if (!cJSON_IsNumber(v)) {
        attn_json_wrong(key, whole ? "a whole number" : null_def ? "a number or null" : "a number", v, err);
        return attn_error_prefix(err, "config.json");
    }
    double x = v->valuedouble;
    if (!isfinite(x) || (whole && x != floor(x)) || x < min || x > max)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be %s from %g to %g, not %g", key,
                         whole ? "a whole number" : "a number", min, max, x);
    *out = x;
    return ATTN_OK;
}

attn_status attn_model_config_layer_types(const cJSON *root, attn_model_config *c, bool *given, attn_error *err)
{
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    *given = types && !cJSON_IsNull(types);
    if (!*given) return ATTN_OK;
    if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != c->layers)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'layer_types' must be a list of %d attention types (one "
                         "a layer)", c->layers);
    int l = 0;
    for (const cJSON *e = types->child; e; e = e->next, l++) {
        bool local = cJSON_IsString(e) && !strcmp(e->valuestring, "sliding_attention");
        if (!local && !(cJSON_IsString(e) && !strcmp(e->valuestring, "full_attention")))
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: layer_types[%d] '%.40s' is not an attention type this "
                             "engine runs (sliding_attention, full_attention)", l,
                             cJSON_IsString(e) ? e->valuestring : "(not a string)");
        c->arch.local[l] = local;
    }
    return ATTN_OK;
}

/* ---- the architecture ---- */

static attn_status find_arch(const cJSON *root, attn_model_config *c, attn_error *err)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    const char *type;
    attn_status st;
    if (arch && !cJSON_IsNull(arch) && !cJSON_IsArray(arch))
        return wrong_kind("architectures", "a list of names or null", arch, err);
    const cJSON *first = cJSON_IsArray(arch) ? arch->child : NULL;
    if (first && !cJSON_IsString(first)) return wrong_kind("architectures[0]", "a name (a string)", first, err);
    if ((st = json_text(root, "model_type", "model_type", &type, err))) return st;
    for (size_t i = 0; i < N_ARCHS; i++)
        if (first ? !strcmp(first->valuestring, ARCHS[i].arch) : type && !strcmp(type, ARCHS[i].model_type)) {
            c->arch.kind = ARCHS[i].kind;
            return ATTN_OK;
        }
    if (first)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: architecture '%.60s' is not supported (supported: "
                         SUPPORTED ")", first->valuestring);
    if (type)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: model_type '%.60s' is not supported (supported: "
                         SUPPORTED ")", type);
    return attn_fail(err, ATTN_ERR_FORMAT, "config.json: names no architecture (expected \"architectures\": "
                     "[\"LlamaForCausalLM\"] or another of " SUPPORTED ")");
}

/* gpt-oss's RoPE: rope_scaling as every family's (above), or transformers
 * v5's rope_parameters (read after rope_theta: attn_model_config_rope_parameters).
 * Neither given, GptOssConfig fills in its default, YaRN (configuration_gpt_oss.py):
 *   {"rope_type": "yarn", "factor": 32, "beta_fast": 32, "beta_slow": 1,
 *    "original_max_position_embeddings": 4096, "truncate": false}
 * read here through the same reader, so the attention factor is
 * 0.1·ln 32 + 1 ≈ 1.347 on cos and sin alike (GptOssRotaryEmbedding
 * multiplies both by it; q·k grows by its square). null is plain RoPE. */
static attn_status gptoss_rope(const cJSON *root, attn_model_config *c, attn_error *err)
{
    static const char GPTOSS_DEFAULT[] = "{\"rope_type\": \"yarn\", \"factor\": 32.0, \"beta_fast\": 32.0, "
                                         "\"beta_slow\": 1.0, \"original_max_position_embeddings\": 4096, "
                                         "\"truncate\": false}";
    const cJSON *v5 = cJSON_GetObjectItemCaseSensitive(root, "rope_parameters");
    double gain;
    if (v5 && !cJSON_IsNull(v5)) return ATTN_OK;
    if (cJSON_GetObjectItemCaseSensitive(root, "rope_scaling"))
        return attn_model_config_rope_scaling(root, &c->arch.rope_scaling, &gain, err);
    cJSON *def = cJSON_Parse(GPTOSS_DEFAULT);
    if (!def) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory reading config.json");
    attn_status st = attn_model_config_rope_object(def, "GptOssConfig's default rope_scaling", &c->arch.rope_scaling,
                                                   &gain, err);
    cJSON_Delete(def);
    return st;
}

/* What each architecture adds, and the options this engine does not compute. */
static attn_status arch_options(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_arch *a = &c->arch;
    const char *act;
    if (a->kind == ATTN_ARCH_GEMMA2 || a->kind == ATTN_ARCH_GEMMA3) return ATTN_OK; /* model_config_gemma.c */
    if (a->kind == ATTN_ARCH_GPT_OSS) { /* the rest: model_config_gptoss.c */
        attn_status st = attn_model_config_gptoss_refuse(root, err);
        return st ? st : gptoss_rope(root, c, err);
    }
    bool mlp_bias, attention_bias, use_window;
    attn_status st;
    if ((st = json_bool(root, "mlp_bias", false, &mlp_bias, err)) ||
        (st = json_bool(root, "attention_bias", false, &attention_bias, err)) ||
        (st = json_bool(root, "use_sliding_window", false, &use_window, err)))
        return st;
    if (mlp_bias) return attn_fail(err, ATTN_ERR_FORMAT, "config.json: mlp_bias = true is not supported");
    /* Qwen2 always has q, k, v biases; Llama's attention_bias would add one to o too */
    a->qkv_bias = a->kind == ATTN_ARCH_QWEN2;
    if (a->kind != ATTN_ARCH_QWEN2 && attention_bias)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: attention_bias = true is not supported for %s",
                         attn_arch_name(a->kind));
    a->qk_norm = a->kind == ATTN_ARCH_QWEN3;
    c->sliding_window = 0;
    if (a->kind == ATTN_ARCH_MISTRAL) {
        if ((st = json_int_opt(root, "sliding_window", 1, 1 << 30, 0, &c->sliding_window, err))) return st;
    } else if (use_window) {
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: use_sliding_window = true is not supported for %s "
                         "(its window applies to some layers only)", attn_arch_name(a->kind));
    }
    bool mla = a->kind == ATTN_ARCH_DEEPSEEK_V2 || a->kind == ATTN_ARCH_DEEPSEEK_V3;
    double gain;
    if ((st = attn_model_config_rope_scaling(root, &a->rope_scaling, &gain, err))) return st;
    a->mla_score_gain = mla ? gain : 0; /* DeepSeek's softmax scale × mscale² (model_config_rope.c) */
    if ((st = json_text(root, "hidden_act", "hidden_act", &act, err))) return st;
    if (act && strcmp(act, "silu"))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: hidden_act '%.30s' is not supported (only silu)", act);
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
        /* SmolLM3Config's num_key_value_heads is 4 when absent, the others' num_attention_heads */
        (st = json_int_opt(root, "num_key_value_heads", 1, c->heads, c->arch.kind == ATTN_ARCH_SMOLLM3 ? 4 : c->heads,
                           &c->kv_heads, err)))
        return st;
    if (c->arch.kind == ATTN_ARCH_DEEPSEEK_V2 || c->arch.kind == ATTN_ARCH_DEEPSEEK_V3)
        return attn_model_config_mla(root, c, err); /* its heads are sized by their own keys */
    if (c->arch.kind == ATTN_ARCH_GEMMA2 || c->arch.kind == ATTN_ARCH_GEMMA3)
        return attn_model_config_gemma(root, c, err);
    if (c->arch.kind == ATTN_ARCH_GPT_OSS) return attn_model_config_gptoss(root, c, err);
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

/* max_position_embeddings (2048 when absent, as LlamaConfig's; a larger
 * context than 2^30 positions is held at 2^30, more than any text here),
 * rms_norm_eps, rope_theta and the flags. */
static attn_status numbers(const cJSON *root, attn_model_config *c, attn_error *err)
{
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(root, "max_position_embeddings");
    /* DeepseekV3Config's context is 4096 when absent; the others' 2048 */
    attn_arch_kind kind = c->arch.kind;
    bool oss = kind == ATTN_ARCH_GPT_OSS; /* GptOssConfig: 131072 positions, ε 1e-5, θ 150000 */
    double max_pos = kind == ATTN_ARCH_DEEPSEEK_V3 ? 4096 : kind == ATTN_ARCH_GEMMA2 ? 8192
                   : kind == ATTN_ARCH_GEMMA3 || oss ? 131072 : 2048;
    attn_status st;
    if ((st = json_real(root, "max_position_embeddings", "max_position_embeddings", max_pos, &max_pos, err)) ||
        (st = json_real(root, "rms_norm_eps", "rms_norm_eps", oss ? 1e-5 : 1e-6, &c->eps, err)) ||
        (st = json_real(root, "rope_theta", "rope_theta", kind == ATTN_ARCH_GEMMA3 ? 1e6 : oss ? 150000.0 : 10000.0,
                        &c->theta, err)) ||
        (st = json_bool(root, "tie_word_embeddings", c->arch.gemma, &c->tied, err)) ||
        /* attnlab's own key: a model trained without the causal mask runs without it unless asked */
        (st = json_bool(root, "attnlab_causal", true, &c->causal, err)) ||
        (st = json_token(root, "bos_token_id", &c->bos, err)) || (st = json_token(root, "eos_token_id", &c->eos, err)))
        return st;
    if (c->arch.mla && !cJSON_GetObjectItemCaseSensitive(root, "bos_token_id")) /* DeepSeek's configs' defaults */
        c->bos = c->arch.kind == ATTN_ARCH_DEEPSEEK_V3 ? 0 : 1;
    if (c->arch.mla && !cJSON_GetObjectItemCaseSensitive(root, "eos_token_id"))
        c->eos = c->arch.kind == ATTN_ARCH_DEEPSEEK_V3 ? 1 : 2;
    if (c->arch.gemma && !cJSON_GetObjectItemCaseSensitive(root, "bos_token_id")) c->bos = 2; /* Gemma's defaults */
    if (c->arch.gemma && !cJSON_GetObjectItemCaseSensitive(root, "eos_token_id")) c->eos = 1;
    if (c->arch.gemma && isnan(c->arch.local_theta)) c->arch.local_theta = c->theta; /* Gemma 2: one base */
    if (mp && (!is_whole(mp) || max_pos < 1))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'max_position_embeddings' must be a whole number from 1, "
                         "not %g", max_pos);
    c->max_pos = (int)fmin(max_pos, 1 << 30);
    if (!(c->eps > 0 && c->eps < 1))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'rms_norm_eps' must be a number in (0, 1), not %g", c->eps);
    if (!(c->theta > 1 && isfinite(c->theta)))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'rope_theta' must be a finite number above 1, not %g",
                         c->theta);
    return ATTN_OK;
}

attn_status attn_model_config_parse(const char *text, size_t len, attn_model_config *c, attn_error *err)
{
    cJSON *root = NULL;
    attn_status st;
    memset(c, 0, sizeof *c);
    if ((st = attn_json_parse(text, len, &root, err))) {
        attn_error_prefix(err, "config.json");
        return st;
    }
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: not a JSON object");
    }
    if (!(st = find_arch(root, c, err)) && !(st = arch_options(root, c, err)) && !(st = sizes(root, c, err)))
        st = numbers(root, c, err);
    if (!st && c->arch.kind == ATTN_ARCH_OLMO2) st = attn_model_config_olmo2(root, c, err);
    if (!st && c->arch.kind == ATTN_ARCH_SMOLLM3) st = attn_model_config_smollm3(root, c, err);
    if (!st && c->arch.kind == ATTN_ARCH_GPT_OSS) st = attn_model_config_rope_parameters(root, c, err);
    /* YaRN without original_max_position_embeddings counts its turns over max_position_embeddings */
    if (!st && c->arch.rope_scaling.yarn && !c->arch.rope_scaling.original_max_pos)
        c->arch.rope_scaling.original_max_pos = c->max_pos;
    if (!st && c->arch.global_scaling.yarn && !c->arch.global_scaling.original_max_pos)
        c->arch.global_scaling.original_max_pos = c->max_pos;
    cJSON_Delete(root);
    return st;
}
