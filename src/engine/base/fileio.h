/* fileio.h — opening inputs that cannot hang, writing outputs that cannot tear.
 *
 * Reading: attn_file_open_regular opens with O_NONBLOCK, so neither a FIFO
 * with no writer nor a device can block the open, then asks fstat what it
 * opened and refuses anything but a regular file, naming what it found
 * ("is a FIFO, not a regular file").
 *
 * Writing: one writer for every output, attn_file_out (attn_file_write_atomic
 * is it in one call), never leaves half a file behind:
 *
 *     PATH.tmp-XXXXXX  (O_EXCL, a random name beside PATH)  write, fsync
 *       → rename over PATH → fsync the folder          (the rename is durable)
 *
 * A reader sees the old file or the new one, never a mix; two writers never
 * share a temporary file, and a link planted at a temporary's name is never
 * followed (O_EXCL fails on it and another name is drawn). A symbolic link at
 * PATH is followed: the link's final target is what gets replaced, in the
 * target's folder, and the link stays a link. A replaced file keeps its mode
 * (and, where the process may, its owner); a new one gets mode & ~umask.
 *
 * While a temporary exists, SIGINT, SIGTERM and SIGHUP remove it before the
 * process dies of the signal as it would have (their handler is installed
 * only over the default action, and only while temporaries are live: a
 * program's own handler, or an ignored signal, is left alone).
 *
 * Every function returns a status and, on failure, one line in err naming the
 * file and the real cause. No function prints or exits. */
#ifndef ATTN_FILEIO_H
#define ATTN_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

#include "engine/base/error.h"

/* Opens path with flags (O_RDONLY, or O_RDWR) plus O_NONBLOCK and O_CLOEXEC,
 * and keeps it only if it is a regular file (blocking mode restored). Returns
 * the descriptor, or -1 with err set and errno telling why: ENOENT when there
 * is no such file, EISDIR for a folder, EINVAL for a FIFO, device or socket,
 * or what open(2) said. */
int attn_file_open_regular(const char *path, int flags, attn_error *err);

/* Reads a whole regular file (opened as above) of at most limit bytes into
 * *data, NUL-terminated, which the caller frees. errno as above; EFBIG when
 * it is larger than limit (the message gives both sizes). */
attn_status attn_file_read(const char *path, size_t limit, char **data, size_t *size, attn_error *err);

/* Follows symbolic links at path (up to 40; relative ones from the link's
 * folder) into out: the file that is really read and written. The last one
 * need not exist. */
attn_status attn_file_resolve(const char *path, char *out, size_t size, attn_error *err);

/* An output being written: begin, write any number of times, then commit
 * (or abort). A failed write or commit removes the temporary; abort after
 * either, or after commit, does nothing, so a caller may always call it on
 * its way out. */
typedef struct attn_file_out {
    int fd;             /* the temporary, or -1 once finished */
    int slot;           /* its place among the temporaries a signal removes, or -1 */
    mode_t mode;        /* the mode the file gets */
    uid_t uid;          /* a replaced file's owner (uid -1: a new file) */
    gid_t gid;
    char target[4096];  /* the file replaced, its links followed */
    char tmp[4200];
} attn_file_out;

/* Creates the temporary for path (refusing, as below, a target that is not
 * a regular file). mode is for a new file, before the umask. */
attn_status attn_file_out_begin(attn_file_out *o, const char *path, mode_t mode, attn_error *err);
attn_status attn_file_out_write(attn_file_out *o, const void *data, size_t size, attn_error *err);
/* Gives the mode, syncs, renames over the target and syncs the folder. */
attn_status attn_file_out_commit(attn_file_out *o, attn_error *err);
void attn_file_out_abort(attn_file_out *o);

/* Replaces the file at path (after attn_file_resolve) with size bytes of data
 * through attn_file_out. Refuses to replace anything that is not a regular
 * file. */
attn_status attn_file_write_atomic(const char *path, const void *data, size_t size, mode_t mode,
                                   attn_error *err);

/* Checks, before anything is computed or written, that path can receive a
 * command's output: not empty, not ending in '/', not a folder, not an
 * existing file of another kind (a device, a FIFO), and not the same file
 * (device and inode, so also through a link or another spelling) as any of
 * the n inputs (NULL entries and missing files are skipped). */
attn_status attn_file_check_output(const char *path, const char *const *inputs, int n, attn_error *err);

/* Checks that path, once its links are followed, does not lie inside the
 * folder dir (a model folder a command reads): its config, tokenizer,
 * weights and any file beside them stay as they are. A folder that does not
 * exist holds nothing: ATTN_OK. */
attn_status attn_file_check_outside(const char *path, const char *dir, attn_error *err);

/* Renames from to the first free name of to_base, to_base-1, to_base-2 …
 * (never over an existing file) and puts the name used in to. */
attn_status attn_file_rename_unique(const char *from, const char *to_base, char *to, size_t size,
                                    attn_error *err);

/* Creates path's folder and its parents (mode 0700 for new ones). */
attn_status attn_file_make_parents(const char *path, attn_error *err);

/* Takes an exclusive advisory lock on the lock file path (created if need
 * be), waiting for it at most wait_ms milliseconds (0: one try). fcntl
 * open-file-description locks: other processes and other threads of this one
 * each wait their turn (on a kernel without them, a process lock, which
 * threads share). Returns a descriptor to give to attn_file_unlock, or -1
 * with err set; errno is EWOULDBLOCK when the lock was still held at the end
 * of the wait. Nothing waits for ever: a process that keeps the lock (stopped,
 * or hung on a network file system) holds up no other. */
int attn_file_lock(const char *path, int wait_ms, attn_error *err);
void attn_file_unlock(int fd);

#endif
