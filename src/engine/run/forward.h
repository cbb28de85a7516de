/* forward.h — run a trace: one layer of masked multi-head attention
 * (attention.h), or a trained model's every layer when cfg->model is set
 * (model_run.h), recording every stage. */
#ifndef ATTN_FORWARD_H
#define ATTN_FORWARD_H

#include "engine/attention/attention.h"
#include "engine/base/error.h"
#include "engine/trace/config.h"
#include "engine/trace/trace.h"

/* Inputs taken from an existing trace (its weights, x, x_past, memory), so a
 * rerun with other mask settings computes on exactly the same numbers. The
 * pointers borrow tr's arena: keep tr alive while they are used. */
void attn_inputs_from_trace(const attn_trace *tr, attn_inputs *in);

/* Validates cfg and estimates the trace's size in bytes without allocating it. */
attn_status attn_trace_estimate(const attn_config *cfg, double *bytes, attn_error *err);

/* Runs the forward pass into *out (caller frees with attn_trace_free).
 * inputs may be NULL. A config whose trace would exceed its budget
 * (attn_config_budget: --memory-gib or half the physical memory, less when
 * `ulimit -v` leaves less) is refused before any allocation. */
attn_status attn_trace_run(const attn_config *cfg, const attn_inputs *inputs, attn_trace *out,
                           attn_error *err);

/* What the matrix products run on, for `attnlab info` (OpenBLAS and where it
 * was found, or the engine's own loops and why): base/blas.h's answer. */
const char *attn_forward_products(char *buf, size_t size);

/* OpenBLAS's kernels named by an Intel CPU's features, whether or not its
 * own table knows the model (base/blas.h's attn_blas_choose_core): it sets
 * OPENBLAS_CORETYPE, so a program calls it first, before any thread starts. */
void attn_forward_choose_kernels(void);

#endif
