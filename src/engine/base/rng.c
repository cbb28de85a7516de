/* rng.c — counter-based random numbers (splitmix64 + Box–Muller). */
#include "rng.h"

#include <math.h>

#define ATTN_TWO_PI 6.283185307179586476925

uint64_t attn_hash64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t attn_hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

float attn_uniform(uint64_t key, uint64_t index)
{
    /* top 24 bits -> exactly representable float in [0, 1) */
    return (float)(attn_hash64(key ^ attn_hash64(index)) >> 40) * (1.0f / 16777216.0f);
}

void attn_fill_normal(float *out, size_t n, uint64_t key, float std)
{
    for (size_t i = 0; i < n; i += 2) {
        uint64_t r = attn_hash64(key ^ attn_hash64(i));
        /* two 32-bit uniforms; u1 in (0, 1] so log() is finite */
        double u1 = ((double)(r >> 32) + 1.0) / 4294967296.0;
        double u2 = (double)(r & 0xffffffffu) / 4294967296.0;
        double rad = sqrt(-2.0 * log(u1));
        out[i] = (float)(rad * cos(ATTN_TWO_PI * u2)) * std;
        if (i + 1 < n)
            out[i + 1] = (float)(rad * sin(ATTN_TWO_PI * u2)) * std;
    }
}
