/* paths.h — where attnlab's data folders are (the trained models, the lessons
 * and the interface's translations), and joining paths without cutting them.
 *
 * The same binary works from the build tree and from an installed copy
 * (`cmake --install`, which puts the executable in PREFIX/bin and the data in
 * PREFIX/share/attnlab): a data folder is
 *   1. the environment variable's value, if set and not empty;
 *   2. else <the executable's folder>/../share/attnlab/<sub>, if that is a folder;
 *   3. else the source or build tree's folder compiled in.
 *
 * A path is never cut to fit its buffer: "DIR/model.safetensors" cut at 4,095
 * bytes can read "DIR/model.safet", which is another file. Every path built
 * from parts goes through attn_path_format, which refuses instead. */
#ifndef ATTN_PATHS_H
#define ATTN_PATHS_H

#include <stddef.h>

#include "engine/base/error.h"

/* Writes the folder to buf (size bytes) and returns buf. env: a variable's
 * name (e.g. "ATTNLAB_MODELS"), sub: the folder's name under share/attnlab,
 * built: the compiled-in fallback. A folder whose path does not fit in size
 * bytes is no folder: buf is "" and the result NULL. */
const char *attn_data_dir(const char *env, const char *sub, const char *built, char *buf, size_t size);

/* Formats a path into out (size bytes) as snprintf does. When the whole path
 * does not fit: out is "", the result ATTN_ERR_IO, and err names the path
 * (its beginning and end, when long) and its length. */
attn_status attn_path_format(char *out, size_t size, attn_error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
