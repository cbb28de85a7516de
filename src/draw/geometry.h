/* geometry.h — the query–key geometry view's numbers: one head's queries,
 * keys and values as arrows in a plane. No SDL.
 *
 * A score is a dot product, q·k = ‖q‖ ‖k‖ cos θ: long arrows pointing the
 * same way score high. When the head dimension dₖ is 2 the plane is the
 * head's own space and the picture is exact. Otherwise the arrows are
 * projected on the plane of the two largest principal axes of the vectors
 * themselves (an uncentred PCA: the plane through the origin that keeps the
 * most of Σ‖x‖²), so angles and lengths are approximate and `kept` says how
 * much of the vectors the plane holds. The projection is linear, so the
 * context, Σⱼ wᵢⱼ vⱼ, is exactly the weighted sum of the projected value
 * arrows. */
#ifndef DRAW_GEOMETRY_H
#define DRAW_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/trace/trace.h"

#define DRAW_GEOM_MAX 96 /* queries or keys drawn at most: more arrows than that do not read */

typedef struct {
    int s, t;          /* queries (rows of the weights) and keys (columns) */
    int dk;            /* the head dimension */
    bool exact;        /* dk == 2: no projection */
    bool rope;         /* q and k are after RoPE; q0 and k0 before it */
    float qk_kept;     /* share of Σ‖x‖² over q and k the plane keeps (1 when exact) */
    float v_kept;      /* the same for v */
    float q[DRAW_GEOM_MAX][2], k[DRAW_GEOM_MAX][2]; /* in the query–key plane */
    float q0[DRAW_GEOM_MAX][2], k0[DRAW_GEOM_MAX][2]; /* before RoPE (when rope) */
    float v[DRAW_GEOM_MAX][2];                    /* in the value plane */
    float ctx[DRAW_GEOM_MAX][2];                  /* context of each query, value plane */
    float w[DRAW_GEOM_MAX][DRAW_GEOM_MAX];        /* (s, t): the weights the context used */
    char q_label[DRAW_GEOM_MAX][24], k_label[DRAW_GEOM_MAX][24];
} draw_geom;

/* Fills g for one head (a query head; its kv head for k and v) and batch row
 * of layer `layer` of tr. Returns 0, or -1 with a one-line reason in err (no
 * q/k/v in the trace, more than DRAW_GEOM_MAX tokens). */
int draw_geom_build(const attn_trace *tr, int layer, int batch, int head, draw_geom *g, char *err, size_t errsize);

/* The top two principal axes of n vectors of dimension d (rows of x, row
 * stride ld), uncentred: axes (2, d) orthonormal, largest first. Returns the
 * share of Σ‖x‖² their plane keeps (1 for d ≤ 2, when the axes are the unit
 * vectors). d at most 512. */
float draw_geom_axes(const float *x, int n, int d, ptrdiff_t ld, float axes[2][512]);

#endif
