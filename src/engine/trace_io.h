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

#include "error.h"
#include "trace.h"

#define ATTN_TRACE_FORMAT "attnlab-trace/1"

attn_status attn_trace_save(const attn_trace *tr, const char *path, attn_error *err);

/* Reads path into *tr (caller frees with attn_trace_free). A file without
 * attnlab metadata loads with what its tensors tell; tokens are then empty
 * (tr->tokens.rows == 0). */
attn_status attn_trace_load(const char *path, attn_trace *tr, attn_error *err);

/* The same from a whole file held in memory (buf[0..size)). */
attn_status attn_trace_parse(const unsigned char *buf, size_t size, attn_trace *tr, attn_error *err);

#endif
