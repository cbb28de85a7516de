/* untraced.h — one attention layer with nothing traced, by FlashAttention's
 * tiles: what a long sequence costs when no s × t matrix is held.
 *
 * The same numbers as a traced pass of the same config with the same tiles
 * (its x embedded from the tokens and its weights drawn from the seed as
 * attention.c draws them), but only the (b, s, ·) activations and the
 * weights are held: x, q, k, v, their heads, the context, merged and out.
 * The attention itself is tiles.h's, a BQ × BK tile of scores per core. */
#ifndef ATTN_UNTRACED_H
#define ATTN_UNTRACED_H

#include "engine/base/error.h"
#include "engine/trace/config.h"

typedef struct {
    attn_dims dims;    /* the resolved sizes */
    float *out;        /* (b, s, d): the layer's output; free() it */
    double bytes;      /* what the pass held at most, estimated before it began */
} attn_untraced;

/* Bytes an untraced tiled pass of cfg holds, or ATTN_ERR_CONFIG with one line
 * when cfg is not one it runs: it needs tiles, and takes self-attention of
 * synthetic or given tokens without a past, --weights, --input or QK-norm. */
attn_status attn_untraced_estimate(const attn_config *cfg, double *bytes, attn_error *err);

/* Runs it into *out; refused up front, in one line, over cfg's budget. */
attn_status attn_untraced_run(const attn_config *cfg, attn_untraced *out, attn_error *err);

#endif
