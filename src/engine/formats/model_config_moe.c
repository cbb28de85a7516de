/* model_config_moe.c — the mixture-of-experts keys of a DeepSeek-V2 or V3
 * config.json, with transformers' defaults when absent:
 *
 *   key                    DeepseekV2Config   DeepseekV3Config
 *   n_routed_experts       64                 256
 *   num_experts_per_tok    None (refused)     8
 *   n_shared_experts       2                  1
 *   moe_intermediate_size  1407               2048
 *   routed_scaling_factor  1.0                2.5
 *   norm_topk_prob         false              true
 *   topk_method            "greedy"           (not read by HF: sigmoid, noaux_tc)
 *   n_group, topk_group    None, None         8, 4
 *
 * Where HF's ports and DeepSeek's own modelling code differ, this engine
 * follows HF's (docs/models.md says each):
 *   - V2's router never reads norm_topk_prob: its k weights are the softmax
 *     probabilities times routed_scaling_factor, normalised or not.
 *   - V3's router fills the groups it drops with 0.0 (DeepSeek's: −∞), so an
 *     expert of a dropped group can still be chosen when the kept ones'
 *     biased scores are negative.
 *   - moe_layer_freq is not read by HF (every layer from first_k_dense_replace
 *     on is a MoE layer): a value other than 1, where DeepSeek's code would
 *     leave some of those layers dense, is refused rather than run as HF would.
 * And what HF cannot run is refused: V2's num_experts_per_tok or
 * n_shared_experts null, another topk_method; V3's scoring_func or topk_method
 * other than DeepSeek-V3's own (sigmoid, noaux_tc), which HF ignores. */
#include "model_config.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/base/json.h"

/* key: a whole number from min to max, def when absent; null refused with why. */
static attn_status whole(const cJSON *root, const char *key, int min, int max, int def, const char *null_why,
                         int *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = def;
    if (!v) {
        if (def >= min) return ATTN_OK;
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' is missing: %s", key, null_why);
    }
    if (cJSON_IsNull(v)) return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' is null: %s", key, null_why);
    double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    if (!isfinite(x) || x != floor(x) || x < min || x > max)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be a whole number from %d to %d, not %s", key,
                         min, max, cJSON_IsNumber(v) ? "that" : attn_json_kind(v));
    *out = (int)x;
    return ATTN_OK;
}

/* A text key that, when present, must be one of the two words given (b may be NULL). */
static attn_status word(const cJSON *root, const char *key, const char *a, const char *b, const char *why,
                        const char **out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = NULL;
    if (!v || cJSON_IsNull(v)) return ATTN_OK;
    if (cJSON_IsString(v) && (!strcmp(v->valuestring, a) || (b && !strcmp(v->valuestring, b)))) {
        *out = v->valuestring;
        return ATTN_OK;
    }
    return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s %s%.30s%s is not supported (%s)", key,
                     cJSON_IsString(v) ? "'" : "", cJSON_IsString(v) ? v->valuestring : attn_json_kind(v),
                     cJSON_IsString(v) ? "'" : "", why);
}

/* The router's method and its groups. */
static attn_status routing(const cJSON *root, attn_model_config *c, bool v3, attn_error *err)
{
    attn_moe_sizes *e = &c->moe;
    const char *method, *scoring;
    attn_status st;
    if (v3) {
        if ((st = word(root, "scoring_func", "sigmoid", NULL, "DeepSeek-V3 scores experts with a sigmoid, and HF's "
                       "DeepseekV3 runs that whatever this says", &scoring, err)) ||
            (st = word(root, "topk_method", "noaux_tc", NULL, "DeepSeek-V3 chooses with noaux_tc, and HF's DeepseekV3 "
                       "runs that whatever this says", &method, err)))
            return st;
        e->method = ATTN_ROUTE_SIGMOID_GROUPS;
    } else {
        if ((st = word(root, "scoring_func", "softmax", NULL, "HF's DeepseekV2 always scores with a softmax", &scoring,
                       err)) ||
            (st = word(root, "topk_method", "greedy", "group_limited_greedy", "HF's DeepseekV2 runs greedy and "
                       "group_limited_greedy only", &method, err)))
            return st;
        e->method = method && !strcmp(method, "group_limited_greedy") ? ATTN_ROUTE_GROUP_LIMITED : ATTN_ROUTE_GREEDY;
    }
    if (e->method == ATTN_ROUTE_GREEDY) return ATTN_OK; /* n_group and topk_group unread */
    const char *why = "the group-limited router needs it";
    if ((st = whole(root, "n_group", 1, e->experts, v3 ? 8 : -1, why, &e->groups, err)) ||
        (st = whole(root, "topk_group", 1, e->groups, v3 ? 4 : -1, why, &e->topk_group, err)))
        return st;
    int per = e->experts / e->groups;
    if (e->experts % e->groups)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: n_group %d does not divide n_routed_experts %d",
                         e->groups, e->experts);
    if (v3 && per < 2) /* a group's score is the sum of its two best */
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: n_group %d leaves groups of %d expert; DeepSeek-V3's "
                         "router scores a group by its two best", e->groups, per);
    if (e->top_k > e->topk_group * per) /* HF would then pick among the masked 0.0s, in no defined order */
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: num_experts_per_tok %d is more than the %d experts of "
                         "topk_group %d groups", e->top_k, e->topk_group * per, e->topk_group);
    return ATTN_OK;
}

attn_status attn_model_config_moe(const cJSON *root, attn_model_config *c, int dense, attn_error *err)
{
    attn_moe_sizes *e = &c->moe;
    bool v3 = c->arch.kind == ATTN_ARCH_DEEPSEEK_V3;
    int freq;
    attn_status st;
    memset(e, 0, sizeof *e);
    e->first = dense;
    if ((st = whole(root, "n_routed_experts", 1, 4096, v3 ? 256 : 64, "a MoE layer needs its experts", &e->experts,
                    err)) ||
        (st = whole(root, "num_experts_per_tok", 1, e->experts, v3 ? 8 : -1, "HF's router takes the top "
                    "num_experts_per_tok experts", &e->top_k, err)) ||
        (st = whole(root, "n_shared_experts", 0, 64, v3 ? 1 : 2, v3 ? "HF's DeepseekV3MoE sizes its shared MLP by it"
                    : "HF's DeepseekV2Moe then has no shared_experts, and its forward fails", &e->shared, err)) ||
        (st = whole(root, "moe_intermediate_size", 1, 1 << 20, v3 ? 2048 : 1407, "each expert's MLP width",
                    &e->inter, err)) ||
        (st = whole(root, "moe_layer_freq", 1, 1 << 20, 1, "a whole number", &freq, err)))
        return st;
    if (freq != 1)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: moe_layer_freq %d is not supported: HF's DeepSeek "
                         "ignores it (every layer from first_k_dense_replace on is MoE) while DeepSeek's code keeps "
                         "layers dense between; only 1 runs here", freq);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "routed_scaling_factor");
    e->scale = v3 ? 2.5 : 1.0;
    if (f && !(cJSON_IsNumber(f) && isfinite(f->valuedouble) && f->valuedouble > 0))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: 'routed_scaling_factor' must be a number above 0");
    if (f) e->scale = f->valuedouble;
    if ((st = attn_json_bool(root, "norm_topk_prob", "norm_topk_prob", v3, &e->norm_topk, err)))
        return attn_error_prefix(err, "config.json");
    if (!v3) e->norm_topk = false; /* HF's DeepseekV2 router never reads it */
    if ((st = routing(root, c, v3, err))) return st;
    c->arch.experts = e->experts;
    c->arch.moe_from = dense;
    return ATTN_OK;
}
