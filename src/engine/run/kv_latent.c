/* kv_latent.c — latent attention's decoding over its cache (kv_cache.h).
 *
 * The cache keeps, per layer and position, only the normalised latent c_kv
 * (R) and the rotated RoPE key k_pe (D), [c_kv | k_pe]: DeepSeek-V3's
 * 512 + 64 values a token a layer instead of 2 · 128 heads · 128. A step
 * runs the new tokens as a traced pass whose past is that cache
 * (model_run.h's attn_model_past): mla.c reads the cached rows where a full
 * pass would compute them, so the step's numbers are the full pass's.
 * gpt-oss's cache (keys and values, as a Llama's) is run the same way: its
 * learned sinks, o's bias and experts are the traced layer's (gptoss.h). */
#include "kv_cache.h"

#include <stdlib.h>
#include <string.h>

#include "engine/model/model_run.h"

attn_status attn_kv_latent_pass(attn_kv_cache *c, const attn_model *m, const attn_config *run, const int *ids, int n,
                                float *logits, attn_error *err)
{
    int P = c->n, total = P + n;
    if (n < 1) return attn_fail(err, ATTN_ERR_CONFIG, "no tokens to run");
    /* the cached positions' ids are not kept: only their cache is read, so any id stands for them */
    int *all = calloc((size_t)total, sizeof *all);
    attn_config cfg = {0};
    if (!all) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    memcpy(all + P, ids, (size_t)n * sizeof *all);
    attn_status st = attn_config_copy(&cfg, run, err);
    if (st) {
        free(all);
        return st;
    }
    cfg.past = P;
    /* a latent cache's keys are [c_kv | k_pe]; gpt-oss's are keys and values with room to grow */
    attn_model_past past = {(const float *const *)c->x, (const float *const *)c->keys,
                            c->latent ? NULL : (const float *const *)c->values, c->latent ? 0 : c->cap};
    attn_trace tr;
    st = attn_model_trace_ids(m, &cfg, all, total, P ? &past : NULL, &tr, err);
    free(all);
    attn_config_free(&cfg);
    if (st) return st;
    const attn_tensor *lg = attn_trace_stage(&tr, -1, ATTN_STAGE_LOGITS);
    attn_tensor_fill(lg, (size_t)n - 1, 1);
    memcpy(logits, lg->data + (size_t)(n - 1) * tr.dims.V, (size_t)tr.dims.V * sizeof *logits);
    st = attn_kv_append(c, &tr, err);
    attn_trace_free(&tr);
    return st;
}
