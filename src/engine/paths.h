/* paths.h — where attnlab's data folders are: the trained models, the lessons
 * and the interface's translations.
 *
 * The same binary works from the build tree and from an installed copy
 * (`cmake --install`, which puts the executable in PREFIX/bin and the data in
 * PREFIX/share/attnlab): a data folder is
 *   1. the environment variable's value, if set and not empty;
 *   2. else <the executable's folder>/../share/attnlab/<sub>, if that is a folder;
 *   3. else the source or build tree's folder compiled in.
 */
#ifndef ATTN_PATHS_H
#define ATTN_PATHS_H

#include <stddef.h>

/* Writes the folder to buf (size bytes) and returns buf. env: a variable's
 * name (e.g. "ATTNLAB_MODELS"), sub: the folder's name under share/attnlab,
 * built: the compiled-in fallback. */
const char *attn_data_dir(const char *env, const char *sub, const char *built, char *buf, size_t size);

#endif
