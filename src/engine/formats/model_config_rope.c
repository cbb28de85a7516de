/* model_config_rope.c — config.json's rope_scaling for the families that
 * share Llama's reading of it (Llama, Mistral, Qwen2/3, OLMo 2, SmolLM3,
 * DeepSeek-V2/V3; Gemma reads its own, model_config_gemma.c).
 *
 *   null or {"rope_type": "default"}   no scaling
 *   {"rope_type": "llama3", factor, low_freq_factor, high_freq_factor,
 *    original_max_position_embeddings}  Llama 3.1's wavelength bands
 *   {"rope_type": "yarn", factor, and optionally beta_fast (32), beta_slow
 *    (1), original_max_position_embeddings (max_position_embeddings),
 *    truncate (true), attention_factor, mscale, mscale_all_dim}
 *                                       YaRN (trace/rope.c teaches the ramp)
 * Older configs spell rope_type "type" (DeepSeek's do). gpt-oss reads the
 * same object from transformers v5's rope_parameters too (model_config_olmo2.c),
 * and its messages then name that key. The attention factor
 * is resolved here as transformers' _compute_yarn_parameters does:
 *   get_mscale(f, m) = 0.1·m·ln f + 1   (1 when f ≤ 1)
 *   A = attention_factor, if given; else get_mscale(factor, mscale) /
 *       get_mscale(factor, mscale_all_dim) when both are non-zero; else
 *       get_mscale(factor)
 * and DeepSeek's attention multiplies its softmax scale 1/√(dₖ + D) by
 * get_mscale(factor, mscale_all_dim)² whenever rope_scaling sets a non-zero
 * mscale_all_dim (modeling_deepseek_v3's DeepseekV3Attention; V2's since
 * transformers' fix of July 2026, and DeepSeek's own V2 code). For
 * DeepSeek-V2-Lite (factor 40, mscale = mscale_all_dim = 0.707) A is 1 and
 * the scores grow by (0.1·0.707·ln 40 + 1)² ≈ 1.59.
 * Every other type (linear, dynamic, longrope, ...) is refused, and so is a
 * field transformers would read differently or that would make no sense
 * (a missing or too small factor, beta_fast ≤ beta_slow, a string). */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/json.h"

/* OBJ.KEY (OBJ: rope_scaling, or v5's rope_parameters): a finite number in
 * [min, max] (whole if whole); def when absent or null (transformers reads
 * `get(key) or default`). */
static attn_status field(const cJSON *v, const char *obj, const char *key, double min, double max, bool whole,
                         double def, double *out, attn_error *err)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(v, key);
    char name[96];
    snprintf(name, sizeof name, "%s.%s", obj, key);
    *out = def;
    if (!x || cJSON_IsNull(x)) return ATTN_OK;
    if (!cJSON_IsNumber(x)) {
        attn_json_wrong(name, whole ? "a whole number" : "a number", x, err);
        return attn_error_prefix(err, "config.json");
    }
    double d = x->valuedouble;
    if (!isfinite(d) || d < min || d > max || (whole && d != floor(d)))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be %s from %g to %g, not %g", name,
                         whole ? "a whole number" : "a number", min, max, d);
    *out = d;
    return ATTN_OK;
}

static attn_status llama3(const cJSON *v, const char *obj, attn_rope_scaling *r, attn_error *err)
{
    double orig;
    attn_status st;
    if ((st = field(v, obj, "factor", 1, 1e6, false, NAN, &r->factor, err)) ||
        (st = field(v, obj, "low_freq_factor", 1e-9, 1e6, false, NAN, &r->low_freq_factor, err)) ||
        (st = field(v, obj, "high_freq_factor", 1e-9, 1e6, false, NAN, &r->high_freq_factor, err)) ||
        (st = field(v, obj, "original_max_position_embeddings", 1, 1e9, true, NAN, &orig, err)))
        return st;
    if (isnan(r->factor) || isnan(r->low_freq_factor) || !(r->high_freq_factor > r->low_freq_factor) || isnan(orig))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s llama3 needs factor ≥ 1, 0 < "
                         "low_freq_factor < high_freq_factor and a whole original_max_position_embeddings ≥ 1", obj);
    r->original_max_pos = (int)orig;
    return ATTN_OK;
}

/* 0.1·m·ln(factor) + 1: YaRN's attention factor for a "temperature" m. */
static double get_mscale(double factor, double m)
{
    return factor <= 1 ? 1.0 : 0.1 * m * log(factor) + 1.0;
}

static attn_status yarn(const cJSON *v, const char *obj, attn_rope_scaling *r, double *score_gain, attn_error *err)
{
    double orig, mscale, all_dim, given;
    attn_status st;
    if ((st = field(v, obj, "factor", 1, 1e6, false, NAN, &r->factor, err)) ||
        (st = field(v, obj, "beta_fast", 1e-9, 1e9, false, 32, &r->beta_fast, err)) ||
        (st = field(v, obj, "beta_slow", 1e-9, 1e9, false, 1, &r->beta_slow, err)) ||
        (st = field(v, obj, "original_max_position_embeddings", 1, 1e9, true, 0, &orig, err)) ||
        (st = field(v, obj, "mscale", 0, 1e6, false, 0, &mscale, err)) ||
        (st = field(v, obj, "mscale_all_dim", 0, 1e6, false, 0, &all_dim, err)) ||
        (st = field(v, obj, "attention_factor", 1e-9, 1e6, false, 0, &given, err)))
        return st;
    if (isnan(r->factor))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s yarn needs its factor (a number ≥ 1)", obj);
    if (!(r->beta_fast > r->beta_slow))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s.beta_fast (%g) must be above %s.beta_slow "
                         "(%g)", obj, r->beta_fast, obj, r->beta_slow);
    char name[96];
    snprintf(name, sizeof name, "%s.truncate", obj);
    if (attn_json_bool(v, "truncate", name, true, &r->truncate, err))
        return attn_error_prefix(err, "config.json");
    r->yarn = true;
    r->original_max_pos = (int)orig; /* 0: max_position_embeddings, once read (attn_model_config_parse) */
    r->attention = given > 0 ? given
                 : mscale > 0 && all_dim > 0 ? get_mscale(r->factor, mscale) / get_mscale(r->factor, all_dim)
                 : get_mscale(r->factor, 1);
    if (!(r->attention > 0 && isfinite(r->attention)))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s's mscale and mscale_all_dim give no positive "
                         "attention factor", obj);
    *score_gain = all_dim > 0 ? get_mscale(r->factor, all_dim) * get_mscale(r->factor, all_dim) : 0;
    return ATTN_OK;
}

attn_status attn_model_config_rope_object(const cJSON *v, const char *obj, attn_rope_scaling *r, double *score_gain,
                                          attn_error *err)
{
    memset(r, 0, sizeof *r);
    *score_gain = 0;
    if (!v || cJSON_IsNull(v)) return ATTN_OK;
    char name[96];
    if (!cJSON_IsObject(v)) {
        attn_json_wrong(obj, "null or an object", v, err);
        return attn_error_prefix(err, "config.json");
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "rope_type");
    snprintf(name, sizeof name, "%s.rope_type", obj);
    if (!t || cJSON_IsNull(t)) {
        t = cJSON_GetObjectItemCaseSensitive(v, "type");
        snprintf(name, sizeof name, "%s.type", obj);
    }
    if (!t || cJSON_IsNull(t))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s must be null or an object with a rope_type", obj);
    if (!cJSON_IsString(t)) {
        attn_json_wrong(name, "a string", t, err);
        return attn_error_prefix(err, "config.json");
    }
    if (!strcmp(t->valuestring, "default")) return ATTN_OK;
    if (!strcmp(t->valuestring, "llama3")) return llama3(v, obj, r, err);
    if (!strcmp(t->valuestring, "yarn")) return yarn(v, obj, r, score_gain, err);
    return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s type '%.30s' is not supported (supported: llama3, yarn)",
                     obj, t->valuestring);
}

attn_status attn_model_config_rope_scaling(const cJSON *root, attn_rope_scaling *r, double *score_gain,
                                           attn_error *err)
{
    return attn_model_config_rope_object(cJSON_GetObjectItemCaseSensitive(root, "rope_scaling"), "rope_scaling", r,
                                         score_gain, err);
}
