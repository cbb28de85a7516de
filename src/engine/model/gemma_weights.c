/* gemma_weights.c — Gemma's stored gains and embedding scale (gemma_weights.h). */
#include "gemma_weights.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

void attn_gemma_gain(float *w, int n)
{
    for (int i = 0; w && i < n; i++) w[i] += 1.0f;
}

float attn_gemma_embed_scale(int d, attn_st_dtype dtype)
{
    double x = sqrt((double)d);
    float f = (float)x;
    if (dtype == ATTN_ST_BF16) { /* the upper 16 bits of the float, rounded to nearest even */
        uint32_t u;
        memcpy(&u, &f, sizeof u);
        u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
        memcpy(&f, &u, sizeof f);
    } else if (dtype == ATTN_ST_F16) { /* 11 significant bits: √d of any d here is a normal half */
        int e;
        double m = frexp(x, &e); /* x = m · 2^e, m in [0.5, 1) */
        f = (float)ldexp(nearbyint(ldexp(m, 11)), e - 11);
    }
    return f;
}
