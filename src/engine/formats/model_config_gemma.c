/* model_config_gemma.c — config.json of a Gemma 2 or Gemma 3 (text) folder:
 * the numbers that make a Gemma layer differ from a Llama one, with
 * transformers' defaults when absent (Gemma2Config: head_dim 256,
 * query_pre_attn_scalar 256, sliding_window 4096, attn_logit_softcapping 50,
 * final_logit_softcapping 30, rope_theta 10000; Gemma3TextConfig: the same
 * head_dim, scalar and window, no soft-capping, rope_theta 1,000,000,
 * rope_local_base_freq 10000, sliding_window_pattern 6).
 *
 * Which layers are local (sliding_attention) and which global
 * (full_attention): layer_types when given, else the pattern transformers
 * derives: Gemma 2 layer l is local when l is even ((l + 1) % 2 ≠ 0); Gemma 3
 * when (l + 1) % sliding_window_pattern ≠ 0 (five local, one global).
 *
 * RoPE: Gemma 2 turns every layer with rope_theta (and its rope_scaling);
 * Gemma 3 a global layer with rope_theta and rope_scaling ("linear", factor
 * 8 in gemma-3-4b and up; or "yarn"), a local one with rope_local_base_freq
 * unscaled.
 *
 * Refused, in one line naming the key: anything the engine would run
 * differently (a rope_scaling type other than linear and yarn, another activation,
 * biases, bidirectional attention, a quantized checkpoint, transformers 5's
 * rope_parameters, an attention type it does not know). */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/json.h"

/* rope_scaling: null, "default", "linear" with its factor, or "yarn" (read as
 * the other families read it, model_config_rope.c); the rest refused. */
static attn_status scaling(const cJSON *root, attn_rope_scaling *r, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    memset(r, 0, sizeof *r);
    if (!v || cJSON_IsNull(v)) return ATTN_OK;
    const cJSON *t = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "rope_type") : NULL;
    if (cJSON_IsObject(v) && !t) t = cJSON_GetObjectItemCaseSensitive(v, "type");
    if (!cJSON_IsString(t))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_scaling must be null or an object with a rope_type");
    if (!strcmp(t->valuestring, "default")) return ATTN_OK;
    double gain; /* DeepSeek's alone */
    if (!strcmp(t->valuestring, "yarn")) return attn_model_config_rope_scaling(root, r, &gain, err);
    if (strcmp(t->valuestring, "linear"))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_scaling type '%.30s' is not supported for Gemma "
                         "(supported: linear, yarn, default)", t->valuestring);
    attn_status st = attn_model_config_number(v, "factor", 1, 1e6, false, NAN, false, &r->linear, err);
    if (st) return st;
    if (isnan(r->linear))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_scaling linear needs its factor");
    return ATTN_OK;
}

/* Which layers are local: layer_types, else the architecture's pattern. */
static attn_status layer_kinds(const cJSON *root, attn_model_config *c, attn_error *err)
{
    bool given;
    attn_status st = attn_model_config_layer_types(root, c, &given, err);
    if (st || given) return st;
    double pattern = 2;
    if (c->arch.kind == ATTN_ARCH_GEMMA3 &&
        (st = attn_model_config_number(root, "sliding_window_pattern", 1, 1 << 20, true, 6, false, &pattern, err)))
        return st;
    for (int l = 0; l < c->layers; l++) c->arch.local[l] = (l + 1) % (int)pattern != 0;
    return ATTN_OK;
}

/* What this engine does not run. */
static attn_status unsupported(const cJSON *root, const attn_model_config *c, attn_error *err)
{
    static const char *const FLAGS[] = {"attention_bias", "mlp_bias", "use_bidirectional_attention"};
    const char *arch = c->arch.kind == ATTN_ARCH_GEMMA2 ? "Gemma 2" : "Gemma 3";
    for (int i = 0; i < 3; i++) {
        bool on;
        if (attn_json_bool(root, FLAGS[i], FLAGS[i], false, &on, err)) return attn_error_prefix(err, "config.json");
        if (on) return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s = true is not supported for %s", FLAGS[i], arch);
    }
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "hidden_activation");
    if (act && !cJSON_IsNull(act) && !(cJSON_IsString(act) && !strcmp(act->valuestring, "gelu_pytorch_tanh")))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: hidden_activation '%.30s' is not supported for %s "
                         "(only gelu_pytorch_tanh, GELU's tanh approximation)",
                         cJSON_IsString(act) ? act->valuestring : "(not a string)", arch);
    if (cJSON_GetObjectItemCaseSensitive(root, "quantization_config"))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: quantization_config: quantized checkpoints are not "
                         "supported; use F32, F16 or BF16 weights");
    if (cJSON_GetObjectItemCaseSensitive(root, "rope_parameters"))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_parameters (transformers 5's RoPE layout) is not "
                         "read yet; give rope_theta, rope_scaling and rope_local_base_freq");
    return ATTN_OK;
}

attn_status attn_model_config_gemma(const cJSON *root, attn_model_config *c, attn_error *err)
{
    attn_gemma_sizes *g = &c->gemma;
    bool g3 = c->arch.kind == ATTN_ARCH_GEMMA3;
    double head_dim, scalar, window, theta_local;
    attn_status st;
    if ((st = unsupported(root, c, err)) ||
        (st = attn_model_config_number(root, "head_dim", 2, 1 << 12, true, 256, true, &head_dim, err)) ||
        (st = attn_model_config_number(root, "query_pre_attn_scalar", 1e-6, 1e9, false, 256, false, &scalar, err)) ||
        (st = attn_model_config_number(root, "sliding_window", 1, 1 << 30, true, 4096, false, &window, err)) ||
        (st = attn_model_config_number(root, "attn_logit_softcapping", 1e-6, 1e9, false, g3 ? 0 : 50, true,
                                       &g->attn_softcap, err)) ||
        (st = attn_model_config_number(root, "final_logit_softcapping", 1e-6, 1e9, false, g3 ? 0 : 30, true,
                                       &g->final_softcap, err)) ||
        (st = layer_kinds(root, c, err)) || (st = scaling(root, &c->arch.global_scaling, err)))
        return st;
    theta_local = NAN;
    if (g3 && (st = attn_model_config_number(root, "rope_local_base_freq", 1.0000001, 1e30, false, 10000, false,
                                             &theta_local, err)))
        return st;
    c->arch.local_theta = theta_local; /* Gemma 2: rope_theta, once numbers() has read it (NAN till then) */
    c->head_dim = (int)head_dim;
    g->query_scale = 1.0 / sqrt(scalar);
    c->arch.local_window = (int)window;
    if (c->head_dim % 2 || c->heads % c->kv_heads)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %d heads of %d and %d K/V heads do not fit (the head "
                         "dim must be even, K/V heads must divide heads)", c->heads, c->head_dim, c->kv_heads);
    c->arch.gemma = true;
    c->arch.qk_norm = g3;
    c->arch.query_scale = g->query_scale;
    return ATTN_OK;
}
