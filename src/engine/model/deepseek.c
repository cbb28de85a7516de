/* deepseek.c — a DeepSeek-V2 or V3 checkpoint's latent attention, fed to mla.c (deepseek.h). */
#include "deepseek.h"

#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"

#define LATENT_NORM_EPS 1e-6 /* DeepseekV3RMSNorm's default: q_a_layernorm and kv_a_layernorm */

void attn_deepseek_free(attn_deepseek_layer *buf)
{
    free(buf->w_dkv);
    free(buf->w_kr);
    free(buf->w_uk);
    free(buf->w_uv);
    free(buf->q);
    memset(buf, 0, sizeof *buf);
}

/* W (rows, in) transposed to (in, rows), then its columns dealt out in runs:
 * columns [j·(a+b), j·(a+b)+a) of each of `groups` groups to a (in, groups·a),
 * the next b to b_out (in, groups·b). */
static int split_columns(const attn_wmat *w, int groups, int a, int b, float *a_out, float *b_out)
{
    int in = w->cols, width = groups * (a + b);
    float *t = malloc((size_t)in * width * sizeof *t);
    if (!t || attn_wmat_transposed(w, t)) {
        free(t);
        return -1;
    }
    for (int i = 0; i < in; i++)
        for (int j = 0; j < groups; j++) {
            const float *src = t + (size_t)i * width + (size_t)j * (a + b);
            memcpy(a_out + ((size_t)i * groups + j) * a, src, (size_t)a * sizeof *a_out);
            memcpy(b_out + ((size_t)i * groups + j) * b, src + a, (size_t)b * sizeof *b_out);
        }
    free(t);
    return 0;
}

attn_status attn_deepseek_inputs(const attn_model *m, int l, const float *x, int rows, attn_inputs *ai,
                                 attn_deepseek_layer *buf, attn_error *err)
{
    const attn_model_layer *W = &m->layer[l];
    const attn_mla_sizes *s = &m->cfg.mla;
    const int d = m->cfg.d, h = m->cfg.heads, R = s->kv_rank, D = s->rope_dim, k = s->nope_dim;
    memset(buf, 0, sizeof *buf);
    buf->w_dkv = malloc((size_t)d * R * sizeof(float));
    buf->w_kr = malloc((size_t)d * D * sizeof(float));
    buf->w_uk = malloc((size_t)R * h * k * sizeof(float));
    buf->w_uv = malloc((size_t)R * h * k * sizeof(float));
    bool ok = buf->w_dkv && buf->w_kr && buf->w_uk && buf->w_uv &&
              /* kv_a's rows: the latent's R, then the RoPE key's D (one group) */
              !split_columns(&W->w_kva, 1, R, D, buf->w_dkv, buf->w_kr) &&
              /* kv_b's rows: per head, k of key, then k of value */
              !split_columns(&W->w_kvb, h, k, s->v_dim, buf->w_uk, buf->w_uv);
    if (ok && s->q_rank) {
        /* the low-rank query: down to Q, normalised, up to every head's k + D */
        float *qa = malloc((size_t)rows * s->q_rank * sizeof *qa);
        ok = qa && (buf->q = malloc((size_t)rows * h * (k + D) * sizeof *buf->q)) &&
             !attn_wmat_product(&W->w_qa, x, rows, qa);
        if (ok) attn_op_rmsnorm(qa, W->qa_norm, qa, (size_t)rows, s->q_rank, LATENT_NORM_EPS);
        ok = ok && !attn_wmat_product(&W->w_qb, qa, rows, buf->q);
        free(qa);
    }
    if (!ok) {
        attn_deepseek_free(buf);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's latent attention", l);
    }
    ai->w_dkv = buf->w_dkv, ai->w_kr = buf->w_kr, ai->w_uk = buf->w_uk, ai->w_uv = buf->w_uv;
    ai->q_mla = buf->q;
    ai->kv_norm = W->kva_norm;
    ai->kv_eps = LATENT_NORM_EPS;
    return ATTN_OK;
}

attn_status attn_deepseek_run_config(const attn_model *m, attn_config *run, attn_error *err)
{
    const attn_mla_sizes *s = &m->cfg.mla;
    if (run->kv_rank && run->kv_rank != s->kv_rank)
        return attn_fail(err, ATTN_ERR_CONFIG, "kv_rank: %s's latent is its own, %d wide (config.json's "
                         "kv_lora_rank), not %d", m->name, s->kv_rank, run->kv_rank);
    if (run->rope_dim && run->rope_dim != s->rope_dim)
        return attn_fail(err, ATTN_ERR_CONFIG, "rope_dim: %s's RoPE key is its own, %d wide (config.json's "
                         "qk_rope_head_dim), not %d", m->name, s->rope_dim, run->rope_dim);
    /* what no trained model takes, asked as of a model of any other attention */
    bool absorb = run->mla_absorb;
    run->mode = ATTN_MODE_AUTO;
    run->kv_rank = run->rope_dim = 0;
    run->mla_absorb = false;
    attn_status st = attn_config_check_scores(run, true, err);
    run->mode = ATTN_MODE_MLA;
    run->kv_rank = s->kv_rank;
    run->rope_dim = s->rope_dim;
    run->mla_absorb = absorb;
    /* V2 turns (2m, 2m+1) in place; V3 the same pairs written out as halves
     * (mla.c regroups them, then rotate_half), or rotate_half itself */
    run->rope_style = m->cfg.arch.kind == ATTN_ARCH_DEEPSEEK_V2 ? ATTN_ROPE_INTERLEAVED : ATTN_ROPE_HALF;
    return st;
}
