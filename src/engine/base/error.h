/* error.h — status codes and one-line error messages for the engine.
 *
 * Every fallible engine function returns an attn_status and, on failure,
 * writes a single human-readable line into an attn_error the caller owns.
 * The library never prints, aborts or exits; callers decide what to do. */
#ifndef ATTN_ERROR_H
#define ATTN_ERROR_H

typedef enum {
    ATTN_OK = 0,
    ATTN_ERR_CONFIG,   /* the configuration or a value in it is invalid */
    ATTN_ERR_IO,       /* a file could not be opened, read or written */
    ATTN_ERR_FORMAT,   /* a file was read but its contents are malformed */
    ATTN_ERR_NOMEM,    /* an allocation failed or would be too large */
    ATTN_ERR_CANCELLED /* the caller asked the run to stop (attn_progress) */
} attn_status;

typedef struct {
    attn_status status;
    char msg[1024]; /* room for a message that names a long path and still says all of its reason */
} attn_error;

/* Records a printf-style message in err (may be NULL) and returns status.
 * The result is always one line of valid UTF-8: control characters (and
 * U+2028/U+2029) become '?', a character cut short by a '%.40s' or by the end
 * of msg is dropped, any other ill-formed byte becomes '?'. */
attn_status attn_fail(attn_error *err, attn_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes err->msg with "prefix: " (e.g. a file name) and returns err->status.
 * What no longer fits is cut; the result is one line of valid UTF-8 as above. */
attn_status attn_error_prefix(attn_error *err, const char *prefix);

#endif
