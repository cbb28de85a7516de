/* fileio.c — safe opening of inputs, atomic replacement of outputs, locks. */
#define _GNU_SOURCE /* F_OFD_SETLK, renameat2 */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/base/clock.h"

#define MAX_LINKS 40

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

static attn_status fail_errno(attn_error *err, const char *path, const char *what, int e)
{
    attn_fail(err, e == ENOMEM ? ATTN_ERR_NOMEM : ATTN_ERR_IO, "%s: %s%s%s", path, what, *what ? ": " : "",
              strerror(e));
    errno = e;
    return err ? err->status : ATTN_ERR_IO;
}

int attn_file_open_regular(const char *path, int flags, attn_error *err)
{
    int fd;
    do fd = open(path, flags | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        fail_errno(err, path, errno == ENOENT ? "" : "cannot open", errno);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        fail_errno(err, path, "cannot stat", e);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        attn_fail(err, ATTN_ERR_IO, "%s: is %s, not a regular file", path, kind_of(st.st_mode));
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

attn_status attn_file_read(const char *path, size_t limit, char **data, size_t *size, attn_error *err)
{
    *data = NULL;
    *size = 0;
    int fd = attn_file_open_regular(path, O_RDONLY, err);
    if (fd < 0) return err ? err->status : ATTN_ERR_IO;
    struct stat st;
    attn_status rc = ATTN_ERR_IO;
    char *buf = NULL;
    if (fstat(fd, &st)) {
        fail_errno(err, path, "cannot stat", errno);
        goto out;
    }
    if ((unsigned long long)st.st_size > limit) {
        attn_fail(err, ATTN_ERR_IO, "%s: too large (%lld bytes; the limit is %zu)", path, (long long)st.st_size,
                  limit);
        errno = EFBIG;
        goto out;
    }
    /* the size may change under us: read until end of file, within the limit */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    if (!(buf = malloc(cap))) {
        rc = fail_errno(err, path, "", ENOMEM);
        goto out;
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > limit) {
                attn_fail(err, ATTN_ERR_IO, "%s: too large (more than %zu bytes)", path, limit);
                errno = EFBIG;
                goto out;
            }
            char *b = realloc(buf, cap * 2);
            if (!b) {
                rc = fail_errno(err, path, "", ENOMEM);
                goto out;
            }
            buf = b;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            rc = fail_errno(err, path, "cannot read", errno);
            goto out;
        }
        if (!got) break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    buf = NULL;
    rc = ATTN_OK;
out:;
    int e = errno; /* what the caller reads, past the clean-up */
    free(buf);
    close(fd);
    errno = e;
    return rc;
}

static size_t dir_len(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) : 0;
}

attn_status attn_file_resolve(const char *path, char *out, size_t size, attn_error *err)
{
    char cur[4096], link[4096], next[8192];
    if ((size_t)snprintf(cur, sizeof cur, "%s", path) >= sizeof cur) return fail_errno(err, path, "", ENAMETOOLONG);
    for (int hops = 0; hops <= MAX_LINKS; hops++) {
        struct stat st;
        if (lstat(cur, &st) || !S_ISLNK(st.st_mode)) {
            /* not a link, or nothing there (yet): this is the file */
            if ((size_t)snprintf(out, size, "%s", cur) >= size) return fail_errno(err, path, "", ENAMETOOLONG);
            return ATTN_OK;
        }
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) return fail_errno(err, cur, "cannot read the link", errno);
        link[n] = '\0';
        size_t d = dir_len(cur);
        if (link[0] == '/' || (d == 0 && cur[0] != '/')) snprintf(next, sizeof next, "%s", link);
        else snprintf(next, sizeof next, "%.*s/%s", (int)d, cur, link);
        if (strlen(next) >= sizeof cur) return fail_errno(err, path, "", ENAMETOOLONG);
        memcpy(cur, next, strlen(next) + 1);
    }
    return fail_errno(err, path, "", ELOOP);
}

/* The process's umask, read without changing it (umask(2) would race with
 * other threads creating files). */
static mode_t current_umask(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        unsigned m;
        if (sscanf(line, "Umask: %o", &m) == 1) {
            mask = (mode_t)m;
            break;
        }
    }
    if (f) fclose(f);
    return mask;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* fsync of a folder makes a rename in it durable; some file systems cannot
 * (EINVAL), which is not an error of ours. */
static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd) && errno != EINVAL && errno != EROFS ? -1 : 0;
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* ---- the temporaries a signal removes ----
 * live[] is read by the handler, so it holds only lock-free atomic pointers
 * (to the writers' own tmp names); the rest changes under live_lock. */
#define MAX_LIVE 32
static const int CLEANED[] = {SIGINT, SIGTERM, SIGHUP};
#define N_CLEANED (int)(sizeof CLEANED / sizeof *CLEANED)
static const char *_Atomic live[MAX_LIVE];
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static int n_live;
static bool ours[N_CLEANED];

/* only async-signal-safe calls: unlink, sigaction, raise */
static void remove_live(int sig)
{
    int e = errno;
    for (int i = 0; i < MAX_LIVE; i++) {
        const char *tmp = atomic_load(&live[i]);
        if (tmp) unlink(tmp);
    }
    /* then the death the signal would have brought: delivered on return,
     * the signal being blocked while its handler runs */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    errno = e;
}

/* The first live temporary installs the handler where the action is the
 * default; the last one puts the default back. */
static void watch_signals(bool on)
{
    for (int i = 0; i < N_CLEANED; i++) {
        struct sigaction now, sa;
        if (sigaction(CLEANED[i], NULL, &now)) continue;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        if (on && !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL) {
            sa.sa_handler = remove_live;
            ours[i] = !sigaction(CLEANED[i], &sa, NULL);
        } else if (!on && ours[i]) {
            ours[i] = false;
            if (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == remove_live) {
                sa.sa_handler = SIG_DFL;
                sigaction(CLEANED[i], &sa, NULL);
            }
        }
    }
}

static int live_add(const char *tmp)
{
    int slot = -1;
    pthread_mutex_lock(&live_lock);
    for (int i = 0; i < MAX_LIVE && slot < 0; i++)
        if (!atomic_load(&live[i])) slot = i;
    if (slot >= 0) {
        atomic_store(&live[slot], tmp);
        if (n_live++ == 0) watch_signals(true);
    }
    pthread_mutex_unlock(&live_lock);
    return slot; /* -1: more writers than slots; this one goes unwatched */
}

static void live_remove(int slot)
{
    if (slot < 0) return;
    pthread_mutex_lock(&live_lock);
    atomic_store(&live[slot], NULL);
    if (--n_live == 0) watch_signals(false);
    pthread_mutex_unlock(&live_lock);
}

/* ---- the writer ---- */

/* Finishes o after a failure: the temporary removed, err naming the cause. */
static attn_status out_fail(attn_file_out *o, const char *what, int e, attn_error *err)
{
    if (o->fd >= 0) close(o->fd);
    o->fd = -1;
    unlink(o->tmp);
    live_remove(o->slot);
    o->slot = -1;
    return fail_errno(err, o->target, what, e);
}

/* n random letters and digits into out, NUL-terminated: a temporary's name
 * no other process can guess. 0, or -1 with errno. */
static int random_name(char *out, int n)
{
    static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    unsigned char bytes[32];
    if (n > (int)sizeof bytes || getentropy(bytes, (size_t)n)) return -1;
    for (int i = 0; i < n; i++) out[i] = ALNUM[bytes[i] % (sizeof ALNUM - 1)];
    out[n] = '\0';
    return 0;
}

attn_status attn_file_out_begin(attn_file_out *o, const char *path, mode_t mode, attn_error *err)
{
    o->fd = o->slot = -1;
    o->uid = (uid_t)-1;
    o->gid = (gid_t)-1;
    o->tmp[0] = '\0';
    attn_status rc = attn_file_resolve(path, o->target, sizeof o->target, err);
    if (rc) return rc;
    struct stat st;
    if (!lstat(o->target, &st)) {
        if (!S_ISREG(st.st_mode))
            return attn_fail(err, ATTN_ERR_IO, "%s: is %s, not a regular file; not replaced", o->target,
                             kind_of(st.st_mode));
        o->mode = st.st_mode & 07777;
        if (st.st_uid != geteuid() || st.st_gid != getegid()) o->uid = st.st_uid, o->gid = st.st_gid;
    } else {
        o->mode = mode & ~current_umask();
    }
    /* beside the target; its name cut so that the suffix fits NAME_MAX */
    size_t d = dir_len(o->target), base = strlen(o->target) - d;
    int n = snprintf(o->tmp, sizeof o->tmp, "%.*s%.*s.tmp-", (int)d, o->target, (int)(base < 200 ? base : 200),
                     o->target + d);
    /* The name is drawn, then registered (which puts the signal handler in
     * place), and only then created: a signal, which any of the process's
     * threads may take, never finds a temporary its handler does not know.
     * O_EXCL | O_NOFOLLOW: a file or link already there is another name's turn. */
    for (int tries = 0; tries < 100; tries++) {
        if (random_name(o->tmp + n, 12)) return fail_errno(err, o->target, "cannot write", errno);
        o->slot = live_add(o->tmp);
        o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (o->fd >= 0) return ATTN_OK;
        int e = errno;
        live_remove(o->slot);
        o->slot = -1;
        if (e != EEXIST) return fail_errno(err, o->target, "cannot write", e);
    }
    return fail_errno(err, o->target, "cannot write (100 temporary names taken)", EEXIST);
}

attn_status attn_file_out_write(attn_file_out *o, const void *data, size_t size, attn_error *err)
{
    if (o->fd < 0) return fail_errno(err, o->target, "cannot write", EBADF);
    if (write_all(o->fd, data, size)) return out_fail(o, "cannot write", errno, err);
    return ATTN_OK;
}

attn_status attn_file_out_commit(attn_file_out *o, attn_error *err)
{
    if (o->fd < 0) return fail_errno(err, o->target, "cannot write", EBADF);
    char dir[4096];
    size_t d = dir_len(o->target);
    if (d == 0) snprintf(dir, sizeof dir, "%s", o->target[0] == '/' ? "/" : ".");
    else snprintf(dir, sizeof dir, "%.*s", (int)d, o->target);
    /* the owner first (a change of owner clears the set-id bits); one the
     * process may not give is no error: the mode is still kept */
    if (o->uid != (uid_t)-1 && fchown(o->fd, o->uid, o->gid)) errno = 0;
    if (fchmod(o->fd, o->mode)) return out_fail(o, "cannot set the mode", errno, err);
    if (fsync(o->fd)) return out_fail(o, "cannot sync", errno, err);
    int fd = o->fd;
    o->fd = -1;
    if (close(fd)) return out_fail(o, "cannot close", errno, err);
    if (rename(o->tmp, o->target)) return out_fail(o, "cannot rename the temporary file over it", errno, err);
    live_remove(o->slot);
    o->slot = -1;
    if (sync_dir(dir)) return fail_errno(err, dir, "cannot sync the folder", errno);
    return ATTN_OK;
}

void attn_file_out_abort(attn_file_out *o)
{
    if (o->fd < 0) return;
    close(o->fd);
    o->fd = -1;
    unlink(o->tmp);
    live_remove(o->slot);
    o->slot = -1;
}

attn_status attn_file_write_atomic(const char *path, const void *data, size_t size, mode_t mode,
                                   attn_error *err)
{
    attn_file_out o;
    attn_status rc = attn_file_out_begin(&o, path, mode, err);
    if (!rc) rc = attn_file_out_write(&o, data, size, err);
    if (!rc) rc = attn_file_out_commit(&o, err);
    return rc;
}

attn_status attn_file_check_output(const char *path, const char *const *inputs, int n, attn_error *err)
{
    size_t len = strlen(path);
    struct stat out, in;
    if (!len) return attn_fail(err, ATTN_ERR_CONFIG, "the output file name is empty");
    if (path[len - 1] == '/')
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: ends in '/', which names a folder: give the file to write", path);
    if (stat(path, &out)) return ATTN_OK; /* a new file */
    if (S_ISDIR(out.st_mode))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: is a directory: give the file to write in it", path);
    if (!S_ISREG(out.st_mode))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: is %s, not a regular file; not replaced", path,
                         kind_of(out.st_mode));
    for (int i = 0; i < n; i++)
        if (inputs[i] && !stat(inputs[i], &in) && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
            return attn_fail(err, ATTN_ERR_CONFIG, "%s: is the input %s itself: write to another file", path,
                             inputs[i]);
    return ATTN_OK;
}

/* path with the links of its nearest existing folder resolved (realpath),
 * the part below it kept as written, into out: where path would be created. */
static int real_parent(const char *path, char *out, size_t size)
{
    char dir[4096], real[PATH_MAX];
    int n = snprintf(dir, sizeof dir, "%s", path);
    if (n < 0 || (size_t)n >= sizeof dir) return -1;
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) { /* relative, and nothing of it exists: from the current folder */
            if (!realpath(".", real)) return -1;
            n = snprintf(out, size, "%s/%s", real, path);
            break;
        }
        *slash = '\0';
        if (realpath(dir[0] ? dir : "/", real)) {
            n = snprintf(out, size, "%s/%s", strcmp(real, "/") ? real : "", path + (slash - dir) + 1);
            break;
        }
    }
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

attn_status attn_file_check_outside(const char *path, const char *dir, attn_error *err)
{
    char resolved[4096], out[4096 + 256], inside[PATH_MAX];
    if (!dir || !realpath(dir, inside)) return ATTN_OK;
    if (attn_file_resolve(path, resolved, sizeof resolved, err)) return err->status;
    if (real_parent(resolved, out, sizeof out)) return attn_fail(err, ATTN_ERR_CONFIG, "%s: path too long", path);
    size_t n = strlen(inside);
    if (!strncmp(out, inside, n) && (out[n] == '/' || out[n] == '\0'))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: lies inside the model folder %s that this command reads; write it elsewhere",
                         path, dir);
    return ATTN_OK;
}

/* rename without replacing: renameat2's RENAME_NOREPLACE, else a hard link
 * (which fails on an existing name) and unlink of the old one. */
static int rename_noreplace(const char *from, const char *to)
{
#ifdef RENAME_NOREPLACE
    if (!renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE)) return 0;
    if (errno != EINVAL && errno != ENOSYS) return -1;
#endif
    if (link(from, to)) return -1;
    return unlink(from);
}

attn_status attn_file_rename_unique(const char *from, const char *to_base, char *to, size_t size,
                                    attn_error *err)
{
    for (int i = 0; i < 10000; i++) {
        int n = i ? snprintf(to, size, "%s-%d", to_base, i) : snprintf(to, size, "%s", to_base);
        if (n < 0 || (size_t)n >= size) return fail_errno(err, to_base, "", ENAMETOOLONG);
        if (!rename_noreplace(from, to)) return ATTN_OK;
        if (errno != EEXIST) return fail_errno(err, from, "cannot move it aside", errno);
    }
    return fail_errno(err, from, "cannot move it aside", EEXIST);
}

attn_status attn_file_make_parents(const char *path, attn_error *err)
{
    char dir[4096];
    size_t d = dir_len(path);
    if (d == 0) return ATTN_OK;
    if (d >= sizeof dir) return fail_errno(err, path, "", ENAMETOOLONG);
    memcpy(dir, path, d);
    dir[d] = '\0';
    for (char *s = dir + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(dir, 0700) && errno != EEXIST) return fail_errno(err, dir, "cannot create the folder", errno);
        *s = '/';
    }
    if (mkdir(dir, 0700) && errno != EEXIST) return fail_errno(err, dir, "cannot create the folder", errno);
    return ATTN_OK;
}

/* One try at fd's lock: 0, or -1 with errno (EAGAIN or EACCES: held elsewhere). */
static int try_lock(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    int rc;
#ifdef F_OFD_SETLK
    do rc = fcntl(fd, F_OFD_SETLK, &fl);
    while (rc && errno == EINTR);
    if (!rc || errno != EINVAL) return rc;
    fl.l_pid = 0;
#endif
    /* no open-file-description locks: a process lock (threads share it) */
    do rc = fcntl(fd, F_SETLK, &fl);
    while (rc && errno == EINTR);
    return rc;
}

int attn_file_lock(const char *path, int wait_ms, attn_error *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
    if (fd < 0) {
        fail_errno(err, path, "cannot create the lock file", errno);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st)) st.st_mode = 0;
    if (!S_ISREG(st.st_mode)) {
        attn_fail(err, ATTN_ERR_IO, "%s: the lock file is %s", path, kind_of(st.st_mode));
        close(fd);
        return -1;
    }
    /* tried every millisecond until the deadline: no backoff, which would let
     * those who came later take the lock first, again and again */
    double until = attn_clock_ms() + (wait_ms > 0 ? wait_ms : 0);
    int rc;
    while ((rc = try_lock(fd)) && (errno == EAGAIN || errno == EACCES) && attn_clock_ms() < until)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (rc) {
        int e = errno == EACCES ? EAGAIN : errno;
        close(fd);
        if (e == EAGAIN)
            attn_fail(err, ATTN_ERR_IO, "%s: locked by another process (waited %.1f s)", path,
                      (wait_ms > 0 ? wait_ms : 0) / 1000.0);
        else
            fail_errno(err, path, "cannot lock", e);
        errno = e == EAGAIN ? EWOULDBLOCK : e;
        return -1;
    }
    return fd;
}

void attn_file_unlock(int fd)
{
    if (fd >= 0) close(fd); /* closing the descriptor releases its lock */
}
