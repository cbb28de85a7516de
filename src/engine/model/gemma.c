/* gemma.c — Gemma 2 and Gemma 3's changes to a Llama layer (gemma.h). */
#include "gemma.h"

#include <math.h>
#include <string.h>


void attn_gemma_layer_enter(const attn_model *m, int l, attn_config *run, attn_arch *arch,
                            attn_gemma_layer_set *saved)
{
    const attn_rope_scaling *scaling;
    *saved = (attn_gemma_layer_set){run->sliding_window, run->rope_theta, arch->rope_scaling};
    run->sliding_window = m->cfg.arch.local[l] ? m->cfg.arch.local_window : 0;
    /* a local layer's own base; Gemma 3's local layers turn unscaled, Gemma 2 has one RoPE for all */
    run->rope_theta = attn_arch_layer_theta(&m->cfg.arch, l, m->cfg.theta, &scaling);
    arch->rope_scaling = *scaling;
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
    out.sliding_window = m->cfg.arch.local[l] ? m->cfg.arch.local_window : 0;
    out.rope_theta = attn_arch_layer_theta(&m->cfg.arch, l, m->cfg.theta, scaling);
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
