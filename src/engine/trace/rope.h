/* rope.h — RoPE's frequencies under a model's rope_scaling. */
#ifndef ATTN_ROPE_H
#define ATTN_ROPE_H

#include "engine/trace/arch.h"

/* ω_m of every pair m < k/2 into omega (k/2), for base theta and scaling
 * (NULL, or factor 0 and linear 0: none; Llama 3's bands, YaRN's ramp,
 * Gemma's linear: rope.c); returns the attention factor A that multiplies cos
 * and sin (YaRN's; 1 without it). k is the width RoPE turns: the head dim, or
 * DeepSeek's qk_rope_head_dim. */
double attn_rope_freqs(double theta, const attn_rope_scaling *scaling, int k, double *omega);

#endif
