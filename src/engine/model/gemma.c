/* gemma.c — Gemma 2 and Gemma 3's changes to a Llama layer (gemma.h). */
#include "gemma.h"

#include <math.h>
#include <string.h>


void attn_gemma_layer_enter(const attn_model *m, int l, attn_config *run, attn_arch *arch,
                            attn_gemma_layer_set *saved)
{
    const attn_gemma_sizes *g = &m->cfg.gemma;
    bool local = m->cfg.arch.local[l];
    *saved = (attn_gemma_layer_set){run->sliding_window, run->rope_theta, arch->rope_scaling};
    run->sliding_window = local ? m->cfg.arch.local_window : 0;
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
    bool local = m->cfg.arch.local[l];
    out.sliding_window = local ? m->cfg.arch.local_window : 0;
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
                         "%d positions, global ones all)", m->name, m->cfg.arch.local_window);
    if (run->tiles.q)
        return attn_fail(err, ATTN_ERR_CONFIG, "tiles: the tiled attention does not apply Gemma's scale and soft-cap "
                         "yet; trace %s without --tiles", m->name);
    attn_status st = attn_config_check_scores(run, true, err);
    if (st) return st;
    run->softcap = cap;
    return ATTN_OK;
}
