/* font_file.c — font files mapped once, counted by the faces that use them. */
#include "font_file.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/base/mapping.h"

#define MAX_FILES 16 /* a Latin face, a CJK one and fallbacks: past it, faces read their file by path */

typedef struct {
    char *path; /* NULL: a free slot */
    void *addr;
    size_t size;
    int users;
} font_file;

/* Like font.c's library counts: fonts are opened and closed on one thread. */
static font_file files[MAX_FILES];

static font_file *find(const char *path)
{
    for (int i = 0; i < MAX_FILES; i++)
        if (files[i].path && strcmp(files[i].path, path) == 0)
            return &files[i];
    return NULL;
}

static int map_file(font_file *ff, const char *path)
{
    attn_error err;
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int ok = -1;

    if (fd < 0)
        return -1;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && (ff->path = strdup(path)) != NULL) {
        ff->size = (size_t)st.st_size;
        if (attn_mapping_open(fd, ff->size, path, &ff->addr, &err) == ATTN_OK) {
            ff->users = 1;
            ok = 0;
        } else {
            free(ff->path);
            ff->path = NULL;
        }
    }
    close(fd);
    return ok;
}

int sdl_font_file_acquire(const char *path, const void **data, size_t *size)
{
    font_file *ff = find(path);

    if (!ff) {
        for (int i = 0; i < MAX_FILES && !ff; i++)
            if (!files[i].path)
                ff = &files[i];
        if (!ff || map_file(ff, path) != 0)
            return -1;
    } else {
        ff->users++;
    }
    *data = ff->addr;
    *size = ff->size;
    return 0;
}

void sdl_font_file_release(const char *path)
{
    font_file *ff = find(path);

    if (!ff || --ff->users > 0)
        return;
    attn_mapping_close(ff->addr, ff->size);
    free(ff->path);
    *ff = (font_file){0};
}
