/* derived.h — stages a trace computes from its other stages the first time
 * they are read.
 *
 * A model's traced pass keeps masked_scores (b,h,s,t) for every layer: at
 * TinyLlama's shape and 512 tokens that is 32 MiB a layer, 0.7 GiB in all,
 * one seventh of the trace, written once and read only when someone looks
 * at it. It is a sum of two stages the trace keeps anyway,
 *
 *     masked_scores[b,j,i,:] = pre[b,j,i,:] + mask[b,0,i,:]
 *
 * pre being scores (or capped_scores, Gemma 2's soft-capped ones), so the
 * pass writes the sums into the weights' room and takes the softmax there in
 * place, and the stage is made from the same two stages, by the same
 * addition, the first time it is looked up: the same bits as if written.
 *
 * Such a tensor's `lazy` is a whole-stage filler (attn_lazy.whole): looking
 * the tensor up (attn_trace_stage, _get, _find) or asking for any of its
 * rows fills all of it, once; attn_tensor_filled does the same for a tensor
 * reached by its index. The trace owns its fillers (attn_trace.derived,
 * released with it); thread-safe, as a saved file's writer may fill beside
 * the window.
 */
#ifndef ATTN_DERIVED_H
#define ATTN_DERIVED_H

#include "engine/base/error.h"
#include "engine/trace/trace.h"

/* Layer `layer`'s masked_scores t (b,h,s,t) of tr as pre (b,h,s,t) + mask
 * (b,1,s,t), both stages of tr, made when first read; tr's fillers made
 * first if it has none. ATTN_ERR_NOMEM, t untouched, when they cannot be. */
attn_status attn_derived_masked(attn_trace *tr, int layer, attn_tensor *t, const float *pre, const float *mask,
                                attn_error *err);

#endif
