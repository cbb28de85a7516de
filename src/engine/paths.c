/* paths.c — a data folder: the environment, an installed copy's share/attnlab, or the tree's. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "paths.h"

#include <limits.h>
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
    int w = snprintf(buf, size, "%s/../share/attnlab/%s", exe, sub);
    if (w < 0 || (size_t)w >= size) buf[0] = '\0';
}

const char *attn_data_dir(const char *env, const char *sub, const char *built, char *buf, size_t size)
{
    const char *v = env ? getenv(env) : NULL;
    if (v && *v) {
        snprintf(buf, size, "%s", v);
        return buf;
    }
    installed(sub, buf, size);
    if (buf[0] && is_dir(buf)) {
        char *real = realpath(buf, NULL); /* PREFIX/share/attnlab/sub, without bin/.. */
        if (real && strlen(real) < size) strcpy(buf, real);
        free(real);
        return buf;
    }
    snprintf(buf, size, "%s", built);
    return buf;
}
