/* nonfinite.h — where a trace's NaN (or infinity) first appears.
 *
 * IEEE floats carry their failures along: 0/0, ∞ − ∞ and 0 · ∞ give NaN,
 * and every sum, product or softmax that reads a NaN gives NaN again. A NaN
 * weight therefore turns its layer's queries NaN, then the scores, the
 * weights, the residual stream and finally every logit, and by the end of a
 * forward pass nothing says where it came from. The first stage that holds
 * one does: walking the stages in the order they were computed, the first
 * NaN or ±∞ found is where the trouble began (a NaN weight, an input, an
 * overflow), and everything after it is its consequence.
 *
 * Two non-finite values are there by design and are not reported:
 *   - −∞ in mask and masked_scores: the mask's fill, "this key is hidden";
 *     and in tile_max, the online softmax's running max before a row has
 *     met a visible key (tiles.h: m starts at −∞);
 *   - NaN rows of weights (and what follows them) when softmax_guard is off
 *     and the row is fully masked: the unguarded softmax's 0/0, the pitfall
 *     a lesson shows on purpose (ops.h, attn_op_softmax). */
#ifndef ATTN_NONFINITE_H
#define ATTN_NONFINITE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/trace/trace.h"

typedef struct {
    const attn_tensor *tensor; /* the first tensor holding one, in computing order; NULL: none */
    size_t index;              /* the flat (row-major) index of its first such cell */
    float value;               /* NaN, +∞ or −∞ */
    bool expected;             /* the unguarded softmax's NaN rows: no warning is due */
} attn_nonfinite;

/* Finds the first NaN or infinity of tr (see above) into *out. Returns true
 * when one was found that the data put there (out->expected false): a warning
 * is due. Reads every value up to it: a trace file's pages are read. */
bool attn_nonfinite_find(const attn_trace *tr, attn_nonfinite *out);

/* "NaN first appears in layer 0's scores (layers.0.scores), at [0, 1, 2, 3]",
 * "+inf first appears in embeddings, at [0, 3, 17]". Returns buf. */
const char *attn_nonfinite_text(const attn_trace *tr, const attn_nonfinite *nf, char *buf, size_t size);

/* "NaN", "+inf" or "-inf": nf's value. */
const char *attn_nonfinite_kind(const attn_nonfinite *nf);

/* "[0, 1, 2, 3]": nf's cell, one index per axis. Returns buf. */
const char *attn_nonfinite_index_text(const attn_nonfinite *nf, char *buf, size_t size);

/* The flat index of the first value of x (n) that is NaN or ±∞ (−∞ skipped
 * when fill_ok), or n when there is none. */
size_t attn_nonfinite_scan(const float *x, size_t n, bool fill_ok);

#endif
