/* gemma.c — Gemma 2 and Gemma 3's changes to a Llama layer (gemma.h). */
#include "gemma.h"

#include <math.h>
#include <string.h>

#include "engine/formats/safetensors.h"

/* x as a value of dtype holds it: BF16 and F16 round to nearest even. */
static float round_to(double x, attn_st_dtype dtype)
{
    float f = (float)x;
    if (dtype == ATTN_ST_BF16) {
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
        memcpy(&f, &u, sizeof f);
    } else if (dtype == ATTN_ST_F16) {
        /* √d for d < 2^20 is a normal half: keep 11 significant bits */
        int e;
        double m = frexp(x, &e); /* x = m · 2^e, m in [0.5, 1) */
        f = (float)ldexp(nearbyint(ldexp(m, 11)), e - 11);
    }
    return f;
}

static void plus_one(float *w, int n)
{
    if (!w) return;
    for (int i = 0; i < n; i++) w[i] += 1.0f;
}

void attn_gemma_prepare(attn_model *m)
{
    const attn_model_config *c = &m->cfg;
    for (int l = 0; l < c->layers; l++) {
        attn_model_layer *L = &m->layer[l];
        float *d_sized[] = {L->attn_norm, L->attn_post_norm, L->mlp_norm, L->mlp_post_norm};
        for (int i = 0; i < 4; i++) plus_one(d_sized[i], c->d);
        plus_one(L->q_norm, c->head_dim);
        plus_one(L->k_norm, c->head_dim);
    }
    plus_one(m->norm, c->d);
    /* transformers: embeddings * tensor(hidden_size ** 0.5, dtype=the weights') */
    m->embed_scale = round_to(sqrt((double)c->d), m->embed.dtype);
}

int attn_gemma_layer_window(const attn_model_config *c, int l)
{
    return c->gemma.local[l] ? c->gemma.window : 0;
}

void attn_gemma_layer_enter(const attn_model *m, int l, attn_config *run, attn_arch *arch,
                            attn_gemma_layer_set *saved)
{
    const attn_gemma_sizes *g = &m->cfg.gemma;
    bool local = g->local[l];
    *saved = (attn_gemma_layer_set){run->sliding_window, run->rope_theta, arch->rope_scaling};
    run->sliding_window = local ? g->window : 0;
    run->rope_theta = local ? g->local_theta : m->cfg.theta;
    /* Gemma 3's local layers turn unscaled; Gemma 2 has one RoPE for all */
    bool scaled = !local || m->cfg.arch.kind == ATTN_ARCH_GEMMA2;
    memset(&arch->rope_scaling, 0, sizeof arch->rope_scaling);
    if (scaled) arch->rope_scaling = g->global_scaling;
}

void attn_gemma_layer_restore(attn_config *run, attn_arch *arch, const attn_gemma_layer_set *saved)
{
    run->sliding_window = saved->sliding_window;
    run->rope_theta = saved->rope_theta;
    arch->rope_scaling = saved->scaling;
}

attn_config attn_gemma_layer_run(const attn_model *m, int l, const attn_config *run,
                                 const attn_rope_scaling **scaling)
{
    attn_config out = *run;
    *scaling = &m->cfg.arch.rope_scaling;
    if (!m->cfg.arch.gemma) return out;
    const attn_gemma_sizes *g = &m->cfg.gemma;
    bool local = g->local[l];
    out.sliding_window = local ? g->window : 0;
    out.rope_theta = local ? g->local_theta : m->cfg.theta;
    static const attn_rope_scaling none = {0};
    *scaling = !local || m->cfg.arch.kind == ATTN_ARCH_GEMMA2 ? &g->global_scaling : &none;
    return out;
}

attn_status attn_gemma_run_config(const attn_model *m, attn_config *run, attn_error *err)
{
    double cap = m->cfg.gemma.attn_softcap;
    if (run->softcap > 0 && fabs(run->softcap - cap) <= 1e-9 * cap) run->softcap = 0; /* the model's own, kept */
    if (run->sliding_window)
        return attn_fail(err, ATTN_ERR_CONFIG, "sliding_window: %s's layers have their own windows (local layers "
                         "%d positions, global ones all)", m->name, m->cfg.gemma.window);
    if (run->tiles.q)
        return attn_fail(err, ATTN_ERR_CONFIG, "tiles: the tiled attention does not apply Gemma's scale and soft-cap "
                         "yet; trace %s without --tiles", m->name);
    attn_status st = attn_config_check_scores(run, true, err);
    if (st) return st;
    run->softcap = cap;
    return ATTN_OK;
}
