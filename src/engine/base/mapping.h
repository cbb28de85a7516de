/* mapping.h — files mapped into memory, and what a file cut short does to them.
 *
 * attnlab maps trace files and model weights instead of reading them, so a
 * file costs only the pages read. A mapping keeps the size the file had when
 * it was mapped. When another program then truncates the file, the pages past
 * its new end are gone, and reading one raises SIGBUS, whose default action
 * kills the process ("Bus error", exit status 135) with nothing said:
 *
 *     attnlab view t.safetensors   … truncate -s 4096 t.safetensors …   key → SIGBUS
 *
 * So every mapping attnlab makes goes through attn_mapping_open, which records
 * its address range and its file's path in a fixed table that a signal handler
 * may read (no lock, no allocation: only atomic loads). A program that calls
 * attn_mapping_guard once at start then ends such a fault with one line naming
 * the file and exit status 1, a bad file's:
 *
 *     attnlab view: t.safetensors: the file became shorter while attnlab was reading it (truncated or rewritten in place); stopped
 *
 * The library never installs the handler itself and never exits: the program
 * decides (main.c does, for every command). A SIGBUS outside every recorded
 * mapping keeps its default action. */
#ifndef ATTN_MAPPING_H
#define ATTN_MAPPING_H

#include <stddef.h>

#include "engine/base/error.h"

#define ATTN_MAPPING_MAX 4096 /* mappings open at once: a model's shards (at most 1024) and a few traces */

/* Maps size (> 0) bytes of the open file fd privately: readable, and writable
 * into the process's own copy of a page (the file never changes), and records
 * it under path (copied). Errors name path: ATTN_ERR_IO when mmap fails,
 * ATTN_ERR_NOMEM when the table is full. */
attn_status attn_mapping_open(int fd, size_t size, const char *path, void **addr, attn_error *err);

/* The same for size bytes from offset (a multiple of the page size). */
attn_status attn_mapping_open_at(int fd, size_t offset, size_t size, const char *path, void **addr, attn_error *err);

/* Forgets and unmaps a mapping attn_mapping_open made (nothing for NULL). */
void attn_mapping_close(void *addr, size_t size);

/* The path of the recorded mapping that holds addr, or NULL. Safe in a signal handler. */
const char *attn_mapping_path(const void *addr);

/* Mappings recorded now (for tests: each open is closed). */
int attn_mapping_count(void);

/* Installs the SIGBUS handler described above; who starts its line
 * ("attnlab view"; copied, at most 63 bytes). */
attn_status attn_mapping_guard(const char *who, attn_error *err);

#endif
