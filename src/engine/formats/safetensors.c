/* safetensors.c — a defensive safetensors reader and an atomic writer. */
#define _DEFAULT_SOURCE /* madvise, MADV_DONTNEED */
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/base/budget.h"
#include "engine/base/checked.h"
#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/base/mapping.h"
#include "engine/base/utf8.h"

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

static uint64_t read_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

void attn_st_free(attn_st_file *f)
{
    if (!f) return;
    for (int i = 0; i < 2 * f->n_meta; i++) free(f->meta[i]);
    free(f->meta);
    free(f->entries);
    if (f->map) attn_mapping_close(f->map, f->map_size);
    else free(f->data);
    memset(f, 0, sizeof *f);
}

const attn_st_entry *attn_st_find(const attn_st_file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->entries[i].name, name) == 0) return &f->entries[i];
    return NULL;
}

const char *attn_st_meta(const attn_st_file *f, const char *key)
{
    for (int i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta[2 * i], key) == 0) return f->meta[2 * i + 1];
    return NULL;
}

static const struct { const char *name; int size; } DTYPES[] = {{"F32", 4}, {"F16", 2}, {"BF16", 2}};

const char *attn_st_dtype_name(attn_st_dtype t) { return DTYPES[t].name; }
int attn_st_dtype_size(attn_st_dtype t) { return DTYPES[t].size; }
size_t attn_st_count(const attn_st_entry *e) { return (e->end - e->begin) / (size_t)DTYPES[e->dtype].size; }

/* IEEE half → float: sign, 5-bit exponent (bias 15), 10-bit fraction;
 * subnormals are fraction · 2^−24, exponent 31 is ∞ or NaN. */
static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, frac = h & 0x3ff, u;
    float f;
    if (exp == 0) {
        f = ldexpf((float)frac, -24);
        return sign ? -f : f;
    }
    if (exp == 31) u = sign | 0x7f800000u | frac << 13;
    else u = sign | (exp + 112) << 23 | frac << 13; /* rebias: 127 − 15 = 112 */
    memcpy(&f, &u, 4);
    return f;
}

void attn_st_widen(const void *from, attn_st_dtype dtype, size_t n, float *dst)
{
    const unsigned char *src = from;
    if (dtype == ATTN_ST_F32 && host_is_little_endian()) {
        memcpy(dst, src, n * 4);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        if (dtype == ATTN_ST_F32) {
            u = (uint32_t)src[4 * i] | (uint32_t)src[4 * i + 1] << 8 | (uint32_t)src[4 * i + 2] << 16 |
                (uint32_t)src[4 * i + 3] << 24;
            memcpy(&dst[i], &u, 4);
            continue;
        }
        uint16_t h = (uint16_t)(src[2 * i] | src[2 * i + 1] << 8);
        if (dtype == ATTN_ST_F16) {
            dst[i] = half_to_float(h);
        } else { /* bfloat16 is the top half of a float */
            u = (uint32_t)h << 16;
            memcpy(&dst[i], &u, 4);
        }
    }
}

void attn_st_copy_f32_range(const attn_st_file *f, const attn_st_entry *e, size_t first, size_t n, float *dst)
{
    attn_st_widen(f->data + e->begin + first * (size_t)attn_st_dtype_size(e->dtype), e->dtype, n, dst);
}

void attn_st_release(const attn_st_file *f, const attn_st_entry *e, size_t first, size_t n)
{
    if (!f->map) return;
    /* whole pages inside the range only: a page it shares with a neighbour stays */
    size_t size = (size_t)attn_st_dtype_size(e->dtype);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), from = (uintptr_t)(f->data + e->begin + first * size),
              to = from + n * size;
    from = (from + page - 1) / page * page;
    to = to / page * page;
#ifdef MADV_DONTNEED /* glibc's posix_madvise ignores POSIX_MADV_DONTNEED; a hint either way */
    if (to > from) madvise((void *)from, to - from, MADV_DONTNEED);
#endif
}

void attn_st_copy_f32(const attn_st_file *f, const attn_st_entry *e, float *dst)
{
    attn_st_copy_f32_range(f, e, 0, attn_st_count(e), dst);
}

/* The largest byte count or offset a header may give (a JSON number is exact up to it). */
#define ST_MAX_BYTES 9007199254740992.0
/* Element i of little-endian data of `size` bytes an element, as bits. */
static inline uint32_t bits_at(const unsigned char *p, size_t i, int size)
{
    p += i * (size_t)size;
    return size == 4 ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
                     : (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

/* Whether any of elements [from, to) has every bit of ex set: loads of the
 * host's own order when it is little-endian, which vectorise. */
static bool any_exponent_full(const unsigned char *src, size_t from, size_t to, int size, uint32_t ex)
{
    unsigned bad = 0;
    if (!host_is_little_endian()) {
        for (size_t i = from; i < to; i++) bad |= (bits_at(src, i, size) & ex) == ex;
    } else if (size == 4) {
        #pragma omp simd reduction(| : bad)
        for (size_t i = from; i < to; i++) {
            uint32_t u;
            memcpy(&u, src + 4 * i, 4);
            bad |= (u & ex) == ex;
        }
    } else {
        uint16_t ex16 = (uint16_t)ex;
        #pragma omp simd reduction(| : bad)
        for (size_t i = from; i < to; i++) {
            uint16_t u;
            memcpy(&u, src + 2 * i, 2);
            bad |= (uint16_t)(u & ex16) == ex16;
        }
    }
    return bad != 0;
}

size_t attn_st_find_nonfinite(const attn_st_file *f, const attn_st_entry *e)
{
    /* NaN and ±∞ are the values whose exponent bits are all set */
    static const uint32_t EXPONENT[] = {[ATTN_ST_F32] = 0x7f800000u, [ATTN_ST_F16] = 0x7c00u,
                                        [ATTN_ST_BF16] = 0x7f80u};
    enum { BLOCK = 16384 }; /* a branch-free pass over each block, then the exact element */
    const uint32_t ex = EXPONENT[e->dtype];
    const int size = attn_st_dtype_size(e->dtype);
    const unsigned char *src = f->data + e->begin;
    size_t n = attn_st_count(e);
    for (size_t at = 0; at < n; at += BLOCK) {
        size_t end = n - at < BLOCK ? n : at + BLOCK;
        if (!any_exponent_full(src, at, end, size, ex)) continue;
        for (size_t i = at; i < end; i++)
            if ((bits_at(src, i, size) & ex) == ex) return i;
    }
    return n;
}

/* A JSON number that is a whole number in [0, 2^53]. */
static bool json_uint(const cJSON *j, uint64_t *out)
{
    if (!cJSON_IsNumber(j)) return false;
    double v = j->valuedouble;
    if (!(v >= 0 && v <= ST_MAX_BYTES) || floor(v) != v) return false;
    *out = (uint64_t)v;
    return true;
}

static bool printable_name(const char *s)
{
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) return false;
    return attn_utf8_valid(s, strlen(s));
}

static int by_begin(const void *a, const void *b)
{
    const attn_st_entry *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

static attn_status parse_entry(const cJSON *item, attn_st_entry *e, attn_error *err)
{
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.40s' is not a JSON object", name);
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dtype) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs))
        return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.40s' needs dtype, shape and data_offsets", name);
    int dt = 0;
    while (dt < 3 && strcmp(dtype->valuestring, DTYPES[dt].name) != 0) dt++;
    if (dt == 3)
        return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.40s' has dtype %.16s; attnlab reads F32, F16 and BF16",
                         name, dtype->valuestring);
    e->dtype = (attn_st_dtype)dt;
    int nd = cJSON_GetArraySize(shape);
    if (nd > ATTN_ST_MAX_NDIM)
        return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.40s' has %d dimensions (at most %d)", name, nd,
                         ATTN_ST_MAX_NDIM);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->ndim = nd;
    /* the elements, and the product of the sizes other than 0: a shape such as
     * [0, 2^40, 2^40] holds nothing, but whoever multiplies its last two sizes
     * overflows. Both must fit in 2^53 bytes, so no product of any of its
     * sizes overflows an int64_t later. */
    uint64_t count = 1, nonzero = (uint64_t)DTYPES[dt].size;
    bool overflow = false;
    for (int i = 0; i < nd; i++) {
        uint64_t v;
        if (!json_uint(cJSON_GetArrayItem(shape, i), &v))
            return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.40s' has a shape entry that is not a whole number",
                             name);
        e->shape[i] = (int64_t)v;
        if (!attn_mul_u64(count, v, &count) || (v && !attn_mul_u64(nonzero, v, &nonzero)) || nonzero > ST_MAX_BYTES)
            overflow = true;
    }
    uint64_t b0, b1;
    if (cJSON_GetArraySize(offs) != 2 || !json_uint(cJSON_GetArrayItem(offs, 0), &b0) ||
        !json_uint(cJSON_GetArrayItem(offs, 1), &b1) || b1 < b0)
        return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.40s' has invalid data_offsets", name);
    if (overflow || count * (uint64_t)DTYPES[dt].size != b1 - b0)
        return attn_fail(err, ATTN_ERR_FORMAT,
                         "tensor '%.40s': its shape needs %s bytes but data_offsets span %llu", name,
                         overflow ? "too many" : "a different number of", (unsigned long long)(b1 - b0));
    e->begin = (size_t)b0;
    e->end = (size_t)b1;
    return ATTN_OK;
}

static attn_status parse_meta(const cJSON *meta, attn_st_file *f, attn_error *err)
{
    if (!cJSON_IsObject(meta)) return attn_fail(err, ATTN_ERR_FORMAT, "__metadata__ is not a JSON object");
    int n = cJSON_GetArraySize(meta);
    f->meta = calloc((size_t)(n ? n : 1) * 2, sizeof *f->meta);
    if (!f->meta) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    const cJSON *kv;
    cJSON_ArrayForEach(kv, meta) {
        if (!cJSON_IsString(kv))
            return attn_fail(err, ATTN_ERR_FORMAT, "__metadata__ value '%.40s' is not a string", kv->string);
        f->meta[2 * f->n_meta] = strdup(kv->string);
        f->meta[2 * f->n_meta + 1] = strdup(kv->valuestring);
        f->n_meta++;
        if (!f->meta[2 * f->n_meta - 2] || !f->meta[2 * f->n_meta - 1])
            return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    return ATTN_OK;
}

/* Parses and checks the JSON header against a data section of data_size bytes. */
static attn_status parse_header(const char *json, size_t len, uint64_t data_size, attn_st_file *f,
                                attn_error *err)
{
    attn_status st = ATTN_OK;
    /* The format says UTF-8, and attn_st_write never writes anything else; but
     * attnlab before issue 21 cut long text settings inside a character, and
     * those traces still open: names are checked below, metadata values are
     * read as far as they are well formed (trace_io.c's load_config), and printed escaped. */
    cJSON *root = NULL;
    if ((st = attn_json_parse(json, len, &root, err))) /* trailing data, a NUL in a name, a key twice (json.h) */
        return attn_error_prefix(err, "header");
    if (!cJSON_IsObject(root)) {
        st = attn_fail(err, ATTN_ERR_FORMAT, "header is not a JSON object");
        goto out;
    }
    int n = cJSON_GetArraySize(root);
    if (n > ATTN_ST_MAX_TENSORS + 1) {
        st = attn_fail(err, ATTN_ERR_FORMAT, "header lists %d entries (at most %d)", n, ATTN_ST_MAX_TENSORS);
        goto out;
    }
    f->entries = calloc((size_t)(n ? n : 1), sizeof *f->entries);
    if (!f->entries) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); goto out; }
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (!item->string || !*item->string || strlen(item->string) >= ATTN_ST_MAX_NAME) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "a tensor name is empty or longer than %d bytes", ATTN_ST_MAX_NAME - 1);
            goto out;
        }
        if (!printable_name(item->string)) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "tensor name '%s' is not printable UTF-8", item->string);
            goto out;
        }
        if (strcmp(item->string, "__metadata__") == 0) {
            if (f->meta) { st = attn_fail(err, ATTN_ERR_FORMAT, "__metadata__ appears twice"); goto out; }
            if ((st = parse_meta(item, f, err))) goto out;
            continue;
        }
        /* a name given twice was refused with the JSON (attn_json_parse) */
        if ((st = parse_entry(item, &f->entries[f->n], err))) goto out;
        f->n++;
    }
    /* data_offsets must tile the data section exactly: in range, no overlap, no gap */
    qsort(f->entries, (size_t)f->n, sizeof *f->entries, by_begin);
    uint64_t pos = 0;
    for (int i = 0; i < f->n; i++) {
        const attn_st_entry *e = &f->entries[i];
        if (e->end > data_size) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "tensor '%s' data_offsets [%zu, %zu] lie beyond the %llu data bytes",
                           e->name, e->begin, e->end, (unsigned long long)data_size);
            goto out;
        }
        if (e->begin != pos) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "tensor '%s' data_offsets [%zu, %zu] %s the previous tensor",
                           e->name, e->begin, e->end, e->begin < pos ? "overlap" : "leave a gap after");
            goto out;
        }
        pos = e->end;
    }
    if (pos != data_size)
        st = attn_fail(err, ATTN_ERR_FORMAT, "the data section has %llu bytes but the tensors cover %llu",
                       (unsigned long long)data_size, (unsigned long long)pos);
out:
    cJSON_Delete(root);
    return st;
}

static attn_status check_prefix(uint64_t header_len, uint64_t file_size, attn_error *err)
{
    if (file_size < 8)
        return attn_fail(err, ATTN_ERR_FORMAT, "too short to be safetensors (%llu bytes)",
                         (unsigned long long)file_size);
    if (header_len > ATTN_ST_MAX_HEADER)
        return attn_fail(err, ATTN_ERR_FORMAT, "header length %llu is larger than the %u-byte limit",
                         (unsigned long long)header_len, ATTN_ST_MAX_HEADER);
    if (header_len > file_size - 8)
        return attn_fail(err, ATTN_ERR_FORMAT, "header length %llu runs past the end of the %llu-byte file",
                         (unsigned long long)header_len, (unsigned long long)file_size);
    return ATTN_OK;
}

attn_status attn_st_parse(const unsigned char *buf, size_t size, attn_st_file *f, attn_error *err)
{
    attn_status st;
    memset(f, 0, sizeof *f);
    uint64_t n = size >= 8 ? read_le64(buf) : 0;
    if ((st = check_prefix(n, size, err))) return st;
    if ((st = parse_header((const char *)buf + 8, (size_t)n, size - 8 - n, f, err))) goto fail;
    f->data_size = size - 8 - (size_t)n;
    f->data = malloc(f->data_size ? f->data_size : 1);
    if (!f->data) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); goto fail; }
    memcpy(f->data, buf + 8 + n, f->data_size);
    return ATTN_OK;
fail:
    attn_st_free(f);
    return st;
}

attn_status attn_st_read(const char *path, attn_st_file *f, attn_error *err)
{
    attn_status st = ATTN_OK;
    char *json = NULL;
    unsigned char prefix[8];
    struct stat sb;
    memset(f, 0, sizeof *f);
    int fd = attn_file_open_regular(path, O_RDONLY, err); /* never blocks on a FIFO */
    if (fd < 0) return err ? err->status : ATTN_ERR_IO;
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        close(fd);
        return attn_fail(err, ATTN_ERR_NOMEM, "%s: out of memory", path);
    }
    if (fstat(fd, &sb)) {
        st = attn_fail(err, ATTN_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        goto out;
    }
    uint64_t size = (uint64_t)sb.st_size;
    if (size >= 8 && fread(prefix, 1, 8, fp) != 8) {
        st = attn_fail(err, ATTN_ERR_IO, "%s: read error", path);
        goto out;
    }
    uint64_t n = size >= 8 ? read_le64(prefix) : 0;
    if ((st = check_prefix(n, size, err))) goto prefix;
    json = malloc(n ? n : 1);
    if (!json) { st = attn_fail(err, ATTN_ERR_NOMEM, "%s: out of memory", path); goto out; }
    if (fread(json, 1, n, fp) != n) { st = attn_fail(err, ATTN_ERR_IO, "%s: read error", path); goto out; }
    if ((st = parse_header(json, n, size - 8 - n, f, err))) goto prefix;
    f->data_size = (size_t)(size - 8 - n);
    f->data = malloc(f->data_size ? f->data_size : 1);
    if (!f->data) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "%s: out of memory for %zu bytes", path, f->data_size);
        goto out;
    }
    if (fread(f->data, 1, f->data_size, fp) != f->data_size)
        st = attn_fail(err, ATTN_ERR_IO, "%s: read error", path);
    goto out;
prefix:
    attn_error_prefix(err, path);
out:
    free(json);
    fclose(fp);
    if (st) attn_st_free(f);
    return st;
}

/* The header is UTF-8 JSON: a text that is not UTF-8 (a folder name in
 * another encoding) cannot be written whole, so nothing is written. */
static attn_status check_utf8(const char *path, const attn_st_tensor *t, int n, const char *const *meta,
                              int n_meta, attn_error *err)
{
    for (int i = 0; i < 2 * n_meta; i++)
        if (!attn_utf8_valid(meta[i], strlen(meta[i])))
            return attn_fail(err, ATTN_ERR_CONFIG, "%s: cannot write: %s '%.40s' is not valid UTF-8, which a "
                             "safetensors header must be", path, i % 2 ? "the metadata value of" : "the metadata key",
                             i % 2 ? meta[i - 1] : "(not shown)");
    for (int i = 0; i < n; i++)
        if (!attn_utf8_valid(t[i].name, strlen(t[i].name)))
            return attn_fail(err, ATTN_ERR_CONFIG, "%s: cannot write: a tensor name is not valid UTF-8", path);
    return ATTN_OK;
}

/* Adds t's entry to the header root: its dtype, shape and data_offsets
 * [*pos, *pos + its bytes), and moves *pos past its bytes. */
static attn_status header_entry(cJSON *root, const char *path, const attn_st_tensor *t, uint64_t *pos,
                                attn_error *err)
{
    uint64_t count = 4; /* bytes */
    for (int j = 0; j < t->ndim; j++)
        if (t->shape[j] < 0 || !attn_mul_u64(count, (uint64_t)t->shape[j], &count))
            return attn_fail(err, ATTN_ERR_CONFIG, "%s: cannot write: tensor '%s' has an impossible shape", path,
                             t->name);
    cJSON *e = cJSON_AddObjectToObject(root, t->name);
    cJSON *shape = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
    cJSON *offs = e ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
    if (!e || !shape || !offs || !cJSON_AddStringToObject(e, "dtype", "F32"))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int j = 0; j < t->ndim; j++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[j]));
    cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)*pos));
    cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(*pos + count)));
    *pos += count;
    return ATTN_OK;
}

/* The header's JSON into *json (the caller frees it): the metadata's n_meta
 * key/value pairs under "__metadata__", then one entry per tensor, their
 * data laid end to end in order. */
static attn_status header_json(const char *path, const attn_st_tensor *t, int n, const char *const *meta,
                               int n_meta, char **json, attn_error *err)
{
    attn_status st = ATTN_OK;
    cJSON *root = cJSON_CreateObject();
    if (!root) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    if (n_meta > 0) {
        cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
        for (int i = 0; m && i < n_meta; i++)
            if (!cJSON_AddStringToObject(m, meta[2 * i], meta[2 * i + 1])) m = NULL;
        if (!m) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    uint64_t pos = 0;
    for (int i = 0; !st && i < n; i++) st = header_entry(root, path, &t[i], &pos, err);
    if (!st && !(*json = cJSON_PrintUnformatted(root))) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    cJSON_Delete(root);
    return st;
}

/* The file's first bytes into *head (the caller frees it), *size of them: the
 * header's length as a little-endian u64, then the JSON padded with spaces so
 * the data starts 8-byte aligned, as the reference writer does. */
static attn_status header_bytes(const char *json, unsigned char **head, size_t *size, attn_error *err)
{
    size_t len = strlen(json), padded = (len + 7) / 8 * 8;
    if (!(*head = malloc(8 + padded))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = 0; i < 8; i++) (*head)[i] = (unsigned char)((uint64_t)padded >> (8 * i));
    memcpy(*head + 8, json, len);
    memset(*head + 8 + len, ' ', padded - len);
    *size = 8 + padded;
    return ATTN_OK;
}

/* Writes t's data as little-endian F32: as it is on a little-endian host,
 * else byte-swapped through a small buffer. */
static attn_status write_data(attn_file_out *o, const attn_st_tensor *t, attn_error *err)
{
    size_t count = 1; /* fits: its bytes did, in the header */
    for (int j = 0; j < t->ndim; j++) count *= (size_t)t->shape[j];
    if (host_is_little_endian()) return attn_file_out_write(o, t->data, count * sizeof(float), err);
    attn_status st = ATTN_OK;
    unsigned char b[4096];
    for (size_t c = 0; !st && c < count; c += sizeof b / 4) {
        size_t m = count - c < sizeof b / 4 ? count - c : sizeof b / 4;
        for (size_t k = 0; k < m; k++) {
            uint32_t u;
            memcpy(&u, &t->data[c + k], 4);
            for (int byte = 0; byte < 4; byte++) b[4 * k + byte] = (unsigned char)(u >> (8 * byte));
        }
        st = attn_file_out_write(o, b, 4 * m, err);
    }
    return st;
}

attn_status attn_st_write(const char *path, const attn_st_tensor *t, int n, const char *const *meta, int n_meta,
                          attn_error *err)
{
    attn_status st;
    char *json = NULL, target[4096];
    unsigned char *head = NULL;
    size_t head_size = 0;
    if ((st = check_utf8(path, t, n, meta, n_meta, err))) return st;
    /* a symbolic link is followed: the file it names is replaced, the link stays */
    if ((st = attn_file_resolve(path, target, sizeof target, err))) return st;
    path = target;
    if ((st = header_json(path, t, n, meta, n_meta, &json, err)) || (st = header_bytes(json, &head, &head_size, err)))
        goto out;
    /* 0644: a trace is an ordinary document (less the umask; a replaced file keeps its mode) */
    attn_file_out o;
    if ((st = attn_file_out_begin(&o, path, 0644, err)) || (st = attn_file_out_write(&o, head, head_size, err)))
        goto out;
    for (int i = 0; !st && i < n; i++) st = write_data(&o, &t[i], err);
    if (!st) st = attn_file_out_commit(&o, err);
    if (st) attn_file_out_abort(&o);
out:
    free(head);
    free(json);
    return st;
}

attn_status attn_st_map(const char *path, attn_st_file *f, attn_error *err)
{
    attn_status st = ATTN_OK;
    struct stat sb;
    memset(f, 0, sizeof *f);
    int fd = attn_file_open_regular(path, O_RDONLY, err);
    if (fd < 0) return err ? err->status : ATTN_ERR_IO;
    if (fstat(fd, &sb)) {
        st = attn_fail(err, ATTN_ERR_IO, "%s: cannot stat: %s", path, strerror(errno));
        close(fd);
        return st;
    }
    uint64_t size = (uint64_t)sb.st_size;
    /* a mapping takes address space: under `ulimit -v`, refuse a file that would
     * not fit, with its size, rather than let the mmap (or a later malloc) fail */
    attn_budget room = attn_budget_get(INFINITY, false);
    if ((double)size > room.bytes) {
        char need[32], bound[200];
        st = attn_fail(err, ATTN_ERR_NOMEM, "%s: mapping this file would take about %s, more than %s", path,
                       attn_budget_size((double)size, need, sizeof need), attn_budget_text(&room, bound, sizeof bound));
        close(fd);
        return st;
    }
    if (size >= 8) {
        /* private and writable: a page written is the process's own copy, the
         * file never changes; recorded, so a file cut short under it is named
         * (mapping.h) rather than killing the process with SIGBUS */
        if ((st = attn_mapping_open(fd, (size_t)size, path, &f->map, err))) {
            close(fd);
            return st;
        }
        f->map_size = (size_t)size;
    }
    close(fd); /* the mapping stays valid */
    const unsigned char *buf = f->map;
    uint64_t n = size >= 8 ? read_le64(buf) : 0;
    if (!(st = check_prefix(n, size, err)) && !(st = parse_header((const char *)buf + 8, n, size - 8 - n, f, err))) {
        f->data = (unsigned char *)buf + 8 + n;
        f->data_size = (size_t)(size - 8 - n);
        return ATTN_OK;
    }
    attn_error_prefix(err, path);
    attn_st_free(f);
    return st;
}
