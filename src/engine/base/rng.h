/* rng.h — deterministic, counter-based random numbers.
 *
 * Everything random in attnlab (default embeddings and weights, dropout masks)
 * is a pure function of (seed, stream, index), so results do not depend on
 * thread scheduling or on the order in which cells are computed. */
#ifndef ATTN_RNG_H
#define ATTN_RNG_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64 finaliser: a strong 64-bit mixing function. */
uint64_t attn_hash64(uint64_t x);

/* FNV-1a hash of a byte string, used to name streams ("w_q", a token's text). */
uint64_t attn_hash_str(const char *s);

/* Uniform float in [0, 1) for cell `index` of stream `key`. */
float attn_uniform(uint64_t key, uint64_t index);

/* Fills out[0..n) with N(0, std^2) samples of stream `key` (Box–Muller). */
void attn_fill_normal(float *out, size_t n, uint64_t key, float std);

#endif
