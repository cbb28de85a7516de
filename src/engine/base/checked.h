/* checked.h — size arithmetic that says when it overflows.
 *
 * A file's header declares sizes: a shape [65536, 1, 65536, 0] holds no data
 * at all, yet b · s = 2^32 does not fit an int. Signed overflow is undefined
 * behaviour in C and unsigned overflow wraps silently, so a reader that
 * multiplies or adds sizes a file gave uses these instead: each returns false,
 * and leaves *out alone, when the exact result does not fit its type.
 *
 *     int64_t rows;
 *     if (!attn_mul_i64(b, s, &rows)) return attn_fail(err, ATTN_ERR_FORMAT, "...too large");
 */
#ifndef ATTN_CHECKED_H
#define ATTN_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline bool attn_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return false;
    *out = r;
    return true;
}

static inline bool attn_mul_size(size_t a, size_t b, size_t *out)
{
    size_t r;
    if (__builtin_mul_overflow(a, b, &r)) return false;
    *out = r;
    return true;
}

static inline bool attn_mul_i64(int64_t a, int64_t b, int64_t *out)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return false;
    *out = r;
    return true;
}

static inline bool attn_add_int(int a, int b, int *out)
{
    int r;
    if (__builtin_add_overflow(a, b, &r)) return false;
    *out = r;
    return true;
}

#endif
