/* explain.h — one cell of a stage explained in one line, with its numbers.
 *
 *     scores[h=2, i=3, j=1] = q₃·k₁ / √8 = 2.31 / 2.83 = 0.82
 *     mask[i=0, j=3] = −∞: key 3 is in the future of query 0 (causal)
 *
 * The hover text of the visualizer. Each stage of the catalogue (stages.h)
 * has its own explanation, which reads the other tensors of the same layer
 * that the cell was computed from. The words are English msgids marked
 * ATTN_N_; the caller translates them through `translate` (the interface
 * passes gettext), so the engine stays free of any translation library. */
#ifndef ATTN_EXPLAIN_H
#define ATTN_EXPLAIN_H

#include <stddef.h>

#include "engine/trace/trace.h"

/* Returns the translation of msgid (or msgid itself). */
typedef const char *attn_translate_fn(const char *msgid);

/* Which cell of which picture: the 2-D slice attn_trace_matrix_of picks. */
typedef struct {
    const attn_trace *tr;
    const attn_tensor *t;          /* the stage shown: one of tr's tensors */
    int batch, head;               /* the batch row and query head asked for */
    int i, j;                      /* row and column of the picture */
    const char *row_label;         /* how the picture labels row i ("猫"): an embedding names its token; NULL: i */
    attn_translate_fn *translate;  /* NULL: English */
} attn_explain_cell;

/* Writes the explanation of cell c into buf (always terminated, cut to size)
 * and returns buf: "name[indices] = value" and how the value was computed. A
 * tensor outside the contract gets name[indices] = value; a cell outside
 * the picture gets "". */
const char *attn_explain(const attn_explain_cell *c, char *buf, size_t size);

/* Expert j's rank among the experts a token chose, from its row w of a
 * routed layer's expert_weights (E weights, 0 where not chosen): 1 the
 * heaviest, ties to the lower index; 0 when it did not choose j. *n (may be
 * NULL) receives how many it chose. */
int attn_expert_rank(const float *w, int E, int j, int *n);

#endif
