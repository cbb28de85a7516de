/* loss.h — how well a model's trace predicts its own text: the mean
 * next-token negative log-likelihood (the loss a language model is trained
 * and evaluated on), in nats per token.
 *
 * Row i of the logits (b, s, V) is the model's guess for the token after
 * position P + i; its loss is −log softmax(logitsᵢ)[idᵢ₊₁], the surprise at
 * the token that actually follows. Averaged over the rows that have a next
 * token, it is the number a model card calls held-out loss when the text is
 * held-out text; here it is measured on the text shown, under the settings
 * the trace was run with (a causal mask switched off or on changes it). */
#ifndef ATTN_LOSS_H
#define ATTN_LOSS_H

#include <stdatomic.h>

#include "engine/trace/trace.h"

/* −log softmax(logits)[target] over V logits, computed in double as
 * log Σⱼ exp(logitⱼ − max) − (logit_target − max), so a probability far below
 * float's smallest (the cheater's 1e-14) still gives its true size. */
double attn_token_nll(const float *logits, int V, int target);

/* The mean of attn_token_nll over the rows of logits (rows, V) whose target
 * (targets[i]) is a token id in [0, V); a negative target (a pad, no next
 * token) is skipped. *counted receives how many rows counted; with none the
 * result is NAN. */
double attn_mean_nll(const float *logits, int rows, int V, const int *targets, int *counted);

/* The loss of batch row `batch` of a model's trace: row i of its logits
 * predicts token_ids[batch, P + i + 1] when that position holds a real token
 * of the text (not a pad, not past the end). NAN with *counted = 0 when the
 * trace has no logits or no row with a next token (a decode step at the end
 * of the text). counted may be NULL. */
double attn_trace_loss(const attn_trace *tr, int batch, int *counted);

/* The same, a chunk of rows at a time: the logits are filled (head.h) and
 * read ATTN_LOSS_CHUNK rows at once, and once *cancel is set (when cancel is
 * not NULL) it stops between chunks, returning NAN with *counted = 0. For a
 * long text on a large vocabulary the rows' logits take seconds to compute. */
#define ATTN_LOSS_CHUNK 64
double attn_trace_loss_cancel(const attn_trace *tr, int batch, int *counted, const atomic_int *cancel);

#endif
