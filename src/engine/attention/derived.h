/* derived.h — stages a trace makes from what it already holds the first
 * time they are read, instead of writing them in the pass.
 *
 * A model's traced pass at TinyLlama's shape and 512 tokens holds 4.95 GiB,
 * and on new memory writing it is most of the pass. A layer's masked scores
 * (32 MiB of it a layer, 0.69 GiB in all) are written once and read only when
 * someone looks at them, and they are a sum of two stages the trace keeps:
 *
 *   masked_scores[b,j,i,:] = pre[b,j,i,:] + mask[b,0,i,:]
 *
 * pre being scores (or Gemma 2's capped_scores). So the pass writes the sums
 * into the weights' room and takes the softmax there in place, and the stage
 * is made from the same two stages, by the same addition, the first time it
 * is read: the same bits as if written.
 *
 * Such a tensor's `lazy` is a whole-stage filler (attn_lazy.whole): looking
 * it up (attn_trace_stage, _get, _find) or asking for any of its rows makes
 * all of it, once; attn_tensor_filled does the same for a tensor reached by
 * its index. The trace owns its fillers (attn_trace.derived, released with
 * it). Thread-safe: a saved file's writer may fill beside the window.
 */
#ifndef ATTN_DERIVED_H
#define ATTN_DERIVED_H

#include "engine/base/error.h"
#include "engine/trace/trace.h"

/* t (b,h,s,t) of tr as pre (b,h,s,t) + mask (b,1,s,t), both stages of tr,
 * made when first read. ATTN_ERR_NOMEM, t untouched, when it cannot be. */
attn_status attn_derived_masked(attn_trace *tr, attn_tensor *t, const float *pre, const float *mask,
                                attn_error *err);

#endif
