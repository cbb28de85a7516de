/* trace_io.h — traces as safetensors files (format "attnlab-trace/1").
 *
 * attn_trace_save writes every tensor in pipeline order with the configuration
 * in __metadata__ (string values; lists as JSON). attn_trace_load reads a file
 * written by attnlab or by any program following the same contract: sizes are
 * taken from the tensor shapes, checked against each other and against the
 * metadata, and every contract tensor must have its contract shape. */
#ifndef ATTN_TRACE_IO_H
#define ATTN_TRACE_IO_H

#include <stddef.h>

#include "engine/base/budget.h"
#include "engine/base/error.h"
#include "engine/trace/trace.h"

#define ATTN_TRACE_FORMAT "attnlab-trace/1"

attn_status attn_trace_save(const attn_trace *tr, const char *path, attn_error *err);

/* Reads path into *tr (caller frees with attn_trace_free). A file without
 * attnlab metadata loads with what its tensors tell; tokens are then empty
 * (tr->tokens.rows == 0).
 *
 * The file is mapped: aligned float32 tensors on a little-endian host are
 * used where they lie, costing only the pages read. Others (F16, BF16) are
 * widened into an arena of float32, twice the file's size in memory; a file
 * whose arena would exceed budget is refused before any of it is allocated
 * (ATTN_ERR_NOMEM, naming the size and the bound). attn_trace_load's budget
 * is attn_budget_get(0, false): half the physical memory, or less when
 * `ulimit -v` leaves less. */
attn_status attn_trace_load(const char *path, attn_trace *tr, attn_error *err);
attn_status attn_trace_load_within(const char *path, const attn_budget *budget, attn_trace *tr, attn_error *err);

/* Reads what path declares (sizes, settings, tokens, fully masked rows,
 * tr->widened) without keeping or widening any tensor's data: every data is
 * NULL and tr->described is set. A file of any size costs its header and, when
 * the metadata does not list the masked rows, one row of its mask at a time. */
attn_status attn_trace_describe(const char *path, attn_trace *tr, attn_error *err);

/* The same from a whole file held in memory (buf[0..size)). */
attn_status attn_trace_parse(const unsigned char *buf, size_t size, attn_trace *tr, attn_error *err);

#endif
