/* safetensors.h — reading safetensors files (F32, F16, BF16) and writing them (F32).
 *
 * Layout: u64 little-endian header length N, N bytes of JSON
 *   {"name": {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, ...,
 *    "__metadata__": {"key": "string value", ...}}
 * then the raw little-endian tensor bytes; offsets are relative to the byte
 * after the header. The reader trusts nothing: every length, offset, shape
 * and type is checked before any data is read or any large buffer allocated. */
#ifndef ATTN_SAFETENSORS_H
#define ATTN_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/base/error.h"

#define ATTN_ST_MAX_HEADER (100u << 20) /* the limit the reference implementation uses */
#define ATTN_ST_MAX_TENSORS 4096
#define ATTN_ST_MAX_NAME 64 /* bytes of a tensor name, its NUL included */
#define ATTN_ST_MAX_NDIM 8  /* axes a tensor may have */

/* Element types read; every one is converted to float32 when copied out. */
typedef enum { ATTN_ST_F32 = 0, ATTN_ST_F16, ATTN_ST_BF16 } attn_st_dtype;

typedef struct {
    char name[ATTN_ST_MAX_NAME];
    attn_st_dtype dtype;
    int ndim;
    int64_t shape[ATTN_ST_MAX_NDIM];
    size_t begin, end; /* byte range in the data section */
} attn_st_entry;

typedef struct {
    attn_st_entry *entries; /* n, sorted by begin offset */
    int n;
    char **meta;            /* n_meta (key, value) pairs: meta[2i], meta[2i+1] */
    int n_meta;
    unsigned char *data;    /* the data section */
    size_t data_size;
    void *map;              /* attn_st_map's read-only mapping of the whole file, else NULL */
    size_t map_size;
} attn_st_file;

/* Reads and validates path. Pair with attn_st_free (safe on a zeroed struct).
 * Errors are ATTN_ERR_IO (cannot read) or ATTN_ERR_FORMAT, prefixed by path. */
attn_status attn_st_read(const char *path, attn_st_file *f, attn_error *err);

/* The same without reading the data: the file is mapped (private: writing a
 * page makes the process's own copy; the file never changes) and data points
 * into the mapping, so a file of any size costs only the pages read, but its
 * whole size in address space: a file larger than what `ulimit -v` leaves is
 * refused (ATTN_ERR_NOMEM, naming both sizes) before it is mapped. */
attn_status attn_st_map(const char *path, attn_st_file *f, attn_error *err);

/* The same from a buffer in memory (buf[0..size) is the whole file). */
attn_status attn_st_parse(const unsigned char *buf, size_t size, attn_st_file *f, attn_error *err);

void attn_st_free(attn_st_file *f);

/* "F32", "F16" or "BF16"; bytes per element of a dtype. */
const char *attn_st_dtype_name(attn_st_dtype t);
int attn_st_dtype_size(attn_st_dtype t);

/* Elements of an entry (its byte span over its element size). */
size_t attn_st_count(const attn_st_entry *e);

const attn_st_entry *attn_st_find(const attn_st_file *f, const char *name);
const char *attn_st_meta(const attn_st_file *f, const char *key);

/* Copies an entry's little-endian data into dst as float32 (count floats):
 * F16 and BF16 widen exactly (every half and bfloat16 is a float). */
void attn_st_copy_f32(const attn_st_file *f, const attn_st_entry *e, float *dst);

/* n little-endian elements of dtype at from (any alignment) as float32. */
void attn_st_widen(const void *from, attn_st_dtype dtype, size_t n, float *dst);

/* Elements [first, first + n) of an entry only (the caller keeps them in range). */
void attn_st_copy_f32_range(const attn_st_file *f, const attn_st_entry *e, size_t first, size_t n, float *dst);

/* A mapped file's pages of elements [first, first + n) of entry e, read and
 * no longer needed (widened elsewhere), are let go: they stop counting in the
 * process's memory and are read from the file again if touched. Only whole
 * pages inside the range; nothing for a file read into memory. */
void attn_st_release(const attn_st_file *f, const attn_st_entry *e, size_t first, size_t n);
/* The index of the entry's first element that is NaN or ±∞, or its count
 * when every one is a number: one pass over the stored bits (all exponent
 * bits set, in F32, F16 or BF16), nothing widened. */
size_t attn_st_find_nonfinite(const attn_st_file *f, const attn_st_entry *e);

typedef struct {
    const char *name;
    int ndim;
    const int64_t *shape;
    const float *data;
} attn_st_tensor;

/* Writes n tensors (in the given order, contiguous) and n_meta key/value
 * string pairs to path. Writes to a temporary file and renames it into place,
 * so a failed write never leaves a truncated file behind. */
attn_status attn_st_write(const char *path, const attn_st_tensor *t, int n,
                          const char *const *meta, int n_meta, attn_error *err);

#endif
