/* paths.c — a data folder (the environment, an installed copy's share/attnlab,
 * or the tree's), and paths formatted whole or not at all. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "paths.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* Copies s into buf whole, or writes "" and returns -1. */
static int copy_whole(char *buf, size_t size, const char *s)
{
    size_t n = strlen(s);
    if (n >= size) {
        if (size) buf[0] = '\0';
        return -1;
    }
    memcpy(buf, s, n + 1);
    return 0;
}

/* <the executable's folder>/../share/attnlab/<sub>, or "" where /proc does not say. */
static void installed(const char *sub, char *buf, size_t size)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    buf[0] = '\0';
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    if (attn_path_format(buf, size, NULL, "%s/../share/attnlab/%s", exe, sub)) buf[0] = '\0';
}

const char *attn_data_dir(const char *env, const char *sub, const char *built, char *buf, size_t size)
{
    const char *v = env ? getenv(env) : NULL;
    if (v && *v) return copy_whole(buf, size, v) ? NULL : buf;
    installed(sub, buf, size);
    if (buf[0] && is_dir(buf)) {
        char *real = realpath(buf, NULL); /* PREFIX/share/attnlab/sub, without bin/.. */
        if (real && strlen(real) < size) strcpy(buf, real);
        free(real);
        return buf;
    }
    return copy_whole(buf, size, built) ? NULL : buf;
}

/* The path s (n bytes) as a message names it: whole when short, else its
 * first and last bytes around "…", cut between UTF-8 characters. */
static void shorten(const char *s, size_t n, char *out, size_t size)
{
    enum { HEAD = 64, TAIL = 96 };
    if (n <= HEAD + TAIL) {
        snprintf(out, size, "%s", s);
        return;
    }
    size_t head = HEAD, tail = n - TAIL;
    while (head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80) head--;
    while (tail < n && ((unsigned char)s[tail] & 0xC0) == 0x80) tail++;
    snprintf(out, size, "%.*s…%s", (int)head, s, s + tail);
}

attn_status attn_path_format(char *out, size_t size, attn_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < size) return ATTN_OK;
    if (size) out[0] = '\0';
    if (n < 0) return attn_fail(err, ATTN_ERR_IO, "cannot format a path");
    char *whole = malloc((size_t)n + 1), named[256];
    if (whole) {
        va_start(ap, fmt);
        vsnprintf(whole, (size_t)n + 1, fmt, ap);
        va_end(ap);
        shorten(whole, (size_t)n, named, sizeof named);
        free(whole);
    } else {
        snprintf(named, sizeof named, "a path");
    }
    return attn_fail(err, ATTN_ERR_IO, "%s: the path is %d bytes, longer than the %zu a path may have here", named, n,
                     size ? size - 1 : 0);
}
