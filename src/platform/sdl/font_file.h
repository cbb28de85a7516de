/* font_file.h — font files mapped once and shared by every face open on them.
 *
 * SDL_ttf opening a face by path reads it through stdio: each glyph FreeType
 * loads is a seek and a read, and every font size opens the file again. A face
 * opened on a mapping reads memory instead, and one mapping serves all sizes. */
#ifndef SDL_FONT_FILE_H
#define SDL_FONT_FILE_H

#include <stddef.h>

/* The whole file at path, mapped read-only (the first call maps it, the others
 * count a user). 0 and *data, *size set, or -1 (cannot be opened or mapped, or
 * the table of files is full): the caller opens the file by its path instead. */
int sdl_font_file_acquire(const char *path, const void **data, size_t *size);

/* One user fewer of path; the last one unmaps it. */
void sdl_font_file_release(const char *path);

#endif
