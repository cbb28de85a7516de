/* test_fileio.c — inputs that cannot hang, outputs that cannot tear (fileio.h).
 *
 * A FIFO, a device and a folder are refused by name without blocking; a file
 * over the limit gives both sizes; an atomic write keeps the mode, follows
 * links, leaves no temporary file and never replaces what is not a regular
 * file; unique renames count up instead of overwriting. A file written in
 * pieces appears whole or not at all: its temporary is the writer's own, gets
 * the final mode, and is removed by a failed write, an abort, or a signal
 * that kills the writer. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/base/clock.h"
#include "engine/base/fileio.h"

static char dir[512];

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(dir, sizeof dir, "%s/fileio-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *in_dir(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
    return buf;
}

static void refused(const char *path, const char *cause, int err_no)
{
    attn_error e = {0};
    alarm(20); /* a hang fails the test instead of the whole run */
    int fd = attn_file_open_regular(path, O_RDONLY, &e);
    alarm(0);
    assert_int_equal(fd, -1);
    assert_int_equal(errno, err_no);
    if (!strstr(e.msg, cause) || strncmp(e.msg, path, strlen(path))) fail_msg("'%s' does not say '%s'", e.msg, cause);
}

static void inputs_are_regular_files(void **state)
{
    (void)state;
    char p[600];
    assert_int_equal(mkfifo(in_dir(p, sizeof p, "fifo"), 0600), 0);
    refused(p, "is a FIFO, not a regular file", EINVAL);
    refused("/dev/null", "is a character device, not a regular file", EINVAL);
    refused(dir, "is a directory, not a regular file", EISDIR);
    refused(in_dir(p, sizeof p, "missing"), "No such file or directory", ENOENT);

    /* a regular file, read whole; over the limit, both sizes */
    FILE *f = fopen(in_dir(p, sizeof p, "text"), "w");
    assert_non_null(f);
    fputs("hello, world", f);
    fclose(f);
    char *data;
    size_t n;
    attn_error e = {0};
    assert_int_equal(attn_file_read(p, 100, &data, &n, &e), ATTN_OK);
    assert_int_equal(n, 12);
    assert_string_equal(data, "hello, world");
    free(data);
    assert_int_equal(attn_file_read(p, 5, &data, &n, &e), ATTN_ERR_IO);
    assert_int_equal(errno, EFBIG);
    assert_null(data);
    assert_non_null(strstr(e.msg, "too large (12 bytes; the limit is 5)"));
}

static void output_refused(const char *out, const char *const *in, int n, const char *says)
{
    attn_error e = {0};
    assert_int_equal(attn_file_check_output(out, in, n, &e), ATTN_ERR_CONFIG);
    if (!strstr(e.msg, says)) fail_msg("'%s' does not say '%s'", e.msg, says);
}

/* An output is checked before anything is written: never a folder, a device, a
 * FIFO or one of the inputs, however it is spelled. */
static void outputs_never_destroy_inputs(void **state)
{
    (void)state;
    char in[600], link[600], other[600], fifo[600], spelled[700];
    FILE *f = fopen(in_dir(in, sizeof in, "in.safetensors"), "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink(in, in_dir(link, sizeof link, "link")), 0);
    assert_int_equal(mkfifo(in_dir(fifo, sizeof fifo, "fifo"), 0600), 0);
    snprintf(spelled, sizeof spelled, "%s/./in.safetensors", dir);
    const char *inputs[] = {NULL, "missing-input", in};
    output_refused(in, inputs, 3, "is the input");
    output_refused(link, inputs, 3, "is the input");
    output_refused(spelled, inputs, 3, "is the input");
    output_refused(dir, inputs, 3, "is a directory");
    output_refused(in_dir(other, sizeof other, "new/"), inputs, 3, "ends in '/'");
    output_refused(fifo, inputs, 3, "is a FIFO, not a regular file; not replaced");
    output_refused("/dev/null", inputs, 3, "is a character device");
    output_refused("", inputs, 3, "empty");
    attn_error e = {0};
    assert_int_equal(attn_file_check_output(in_dir(other, sizeof other, "out.safetensors"), inputs, 3, &e), ATTN_OK);
    assert_int_equal(attn_file_check_output(in, inputs, 2, &e), ATTN_OK); /* not one of these inputs */
}

/* An output inside a model folder the command reads is refused, however it
 * is reached (a link to the folder, a subfolder not made yet, a relative
 * spelling); a sibling folder whose name starts the same is not inside. */
static void outputs_stay_out_of_model_folders(void **state)
{
    (void)state;
    char model[600], sibling[600], link[600], p[900];
    attn_error e = {0};
    assert_int_equal(mkdir(in_dir(model, sizeof model, "m"), 0700), 0);
    assert_int_equal(mkdir(in_dir(sibling, sizeof sibling, "m2"), 0700), 0);
    assert_int_equal(symlink(model, in_dir(link, sizeof link, "m-link")), 0);
    const char *inside[] = {"model.safetensors", "config.json", "tokenizer.json", "new/deeper/x.png"};
    for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", model, inside[i]);
        assert_int_equal(attn_file_check_outside(p, model, &e), ATTN_ERR_CONFIG);
        assert_non_null(strstr(e.msg, "lies inside the model folder"));
        snprintf(p, sizeof p, "%s/%s", link, inside[i]);
        assert_int_equal(attn_file_check_outside(p, model, &e), ATTN_ERR_CONFIG);
    }
    snprintf(p, sizeof p, "%s/../m/config.json", sibling);
    assert_int_equal(attn_file_check_outside(p, model, &e), ATTN_ERR_CONFIG);
    assert_int_equal(attn_file_check_outside(p, link, &e), ATTN_ERR_CONFIG); /* the folder named by a link */
    snprintf(p, sizeof p, "%s/x.png", sibling);
    assert_int_equal(attn_file_check_outside(p, model, &e), ATTN_OK);
    assert_int_equal(attn_file_check_outside(in_dir(p, sizeof p, "x.png"), model, &e), ATTN_OK);
    assert_int_equal(attn_file_check_outside(p, in_dir(link, sizeof link, "no-such-folder"), &e), ATTN_OK);
}

static void atomic_writes(void **state)
{
    (void)state;
    char p[600], link[600], fifo[600];
    attn_error e = {0};
    in_dir(p, sizeof p, "out.txt");
    mode_t mask = umask(077);
    assert_int_equal(attn_file_write_atomic(p, "one", 3, 0644, &e), ATTN_OK);
    umask(mask);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 3);
    assert_int_equal(st.st_mode & 07777, 0600); /* a new file: the mode less the umask */
    assert_int_equal(chmod(p, 0604), 0);
    assert_int_equal(attn_file_write_atomic(p, "two!", 4, 0600, &e), ATTN_OK);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 4);
    assert_int_equal(st.st_mode & 07777, 0604); /* a replaced file keeps its mode */

    /* through a link: the target changes, the link stays */
    assert_int_equal(symlink("out.txt", in_dir(link, sizeof link, "link")), 0);
    assert_int_equal(attn_file_write_atomic(link, "three", 5, 0600, &e), ATTN_OK);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 5);

    /* never over a FIFO or a folder */
    assert_int_equal(mkfifo(in_dir(fifo, sizeof fifo, "fifo"), 0600), 0);
    assert_int_equal(attn_file_write_atomic(fifo, "x", 1, 0600, &e), ATTN_ERR_IO);
    assert_non_null(strstr(e.msg, "is a FIFO, not a regular file; not replaced"));
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(attn_file_write_atomic(dir, "x", 1, 0600, &e), ATTN_ERR_IO);
    assert_non_null(strstr(e.msg, "is a directory"));

    /* a link loop is named as one */
    char a[600], b[600];
    assert_int_equal(symlink("b", in_dir(a, sizeof a, "a")), 0);
    assert_int_equal(symlink("a", in_dir(b, sizeof b, "b")), 0);
    assert_int_equal(attn_file_write_atomic(a, "x", 1, 0600, &e), ATTN_ERR_IO);
    assert_non_null(strstr(e.msg, "Too many levels of symbolic links"));
}

static void unique_renames_never_overwrite(void **state)
{
    (void)state;
    char p[600], base[600], to[700];
    attn_error e = {0};
    in_dir(base, sizeof base, "x.bad");
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(in_dir(p, sizeof p, "x"), "w");
        assert_non_null(f);
        fprintf(f, "%d", i);
        fclose(f);
        assert_int_equal(attn_file_rename_unique(p, base, to, sizeof to, &e), ATTN_OK);
        char want[700];
        if (i) snprintf(want, sizeof want, "%s-%d", base, i);
        else snprintf(want, sizeof want, "%s", base);
        assert_string_equal(to, want);
        char *data;
        size_t n;
        assert_int_equal(attn_file_read(to, 10, &data, &n, &e), ATTN_OK);
        assert_int_equal(data[0], '0' + i);
        free(data);
    }
    assert_int_equal(attn_file_rename_unique(p, base, to, sizeof to, &e), ATTN_ERR_IO);
    assert_non_null(strstr(e.msg, "cannot move it aside: No such file or directory"));
}

static void locks_and_folders(void **state)
{
    (void)state;
    char p[600];
    attn_error e = {0};
    assert_int_equal(attn_file_make_parents(in_dir(p, sizeof p, "a/b/c/file"), &e), ATTN_OK);
    struct stat st;
    in_dir(p, sizeof p, "a/b/c");
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    int fd = attn_file_lock(in_dir(p, sizeof p, "a/lock"), 0, &e);
    assert_true(fd >= 0);
    /* held: another open file description waits only as long as it is told
     * (open-file-description locks conflict within one process too) */
    double t0 = attn_clock_ms();
    assert_int_equal(attn_file_lock(p, 300, &e), -1);
    double waited = attn_clock_ms() - t0;
    assert_int_equal(errno, EWOULDBLOCK);
    assert_non_null(strstr(e.msg, "locked by another process (waited 0.3 s)"));
    assert_true(waited >= 290 && waited < 2000);
    assert_int_equal(attn_file_lock(p, 0, &e), -1); /* 0: one try */
    assert_int_equal(errno, EWOULDBLOCK);
    attn_file_unlock(fd);
    fd = attn_file_lock(p, 0, &e); /* free again */
    assert_true(fd >= 0);
    attn_file_unlock(fd);
    assert_int_equal(attn_file_lock(dir, 100, &e), -1); /* a folder is no lock file */
    assert_null(strstr(e.msg, "locked"));
}

/* Names in the test's folder containing part. */
static int count_named(const char *part)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d));)
        n += strstr(de->d_name, part) != NULL;
    closedir(d);
    return n;
}

static void put(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void holds(const char *path, const char *text)
{
    char *data;
    size_t n;
    attn_error e = {0};
    assert_int_equal(attn_file_read(path, 1 << 20, &data, &n, &e), ATTN_OK);
    assert_string_equal(data, text);
    free(data);
}

static void streamed_writes(void **state)
{
    (void)state;
    char p[600], q[600];
    attn_error e = {0};
    attn_file_out o;
    put(in_dir(p, sizeof p, "big.bin"), "old", 0600);
    assert_int_equal(attn_file_out_begin(&o, p, 0644, &e), ATTN_OK);
    struct stat st;
    /* the writer's own new file, readable by no one else while it is written */
    assert_int_equal(lstat(o.tmp, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_nlink, 1);
    assert_int_equal(st.st_mode & 077, 0);
    assert_int_equal(count_named(".tmp-"), 1);
    for (int i = 0; i < 1000; i++) assert_int_equal(attn_file_out_write(&o, "0123456789", 10, &e), ATTN_OK);
    holds(p, "old"); /* nothing shows before the commit */
    assert_int_equal(attn_file_out_commit(&o, &e), ATTN_OK);
    attn_file_out_abort(&o); /* after a commit: nothing */
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 10000);
    assert_int_equal(st.st_mode & 07777, 0600); /* kept, not widened to 0644 */
    assert_int_equal(count_named(".tmp-"), 0);

    /* abandoned: the temporary goes, the file stays */
    assert_int_equal(attn_file_out_begin(&o, p, 0644, &e), ATTN_OK);
    assert_int_equal(attn_file_out_write(&o, "x", 1, &e), ATTN_OK);
    attn_file_out_abort(&o);
    attn_file_out_abort(&o);
    assert_int_equal(count_named(".tmp-"), 0);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_size, 10000);

    /* a new file under umask 077 */
    mode_t mask = umask(077);
    assert_int_equal(attn_file_out_begin(&o, in_dir(q, sizeof q, "new.bin"), 0644, &e), ATTN_OK);
    assert_int_equal(attn_file_out_commit(&o, &e), ATTN_OK);
    umask(mask);
    assert_int_equal(stat(q, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);

    /* with no temporary left, the signals' actions are the defaults again */
    struct sigaction sa;
    assert_int_equal(sigaction(SIGINT, NULL, &sa), 0);
    assert_true(sa.sa_handler == SIG_DFL);
}

/* A child writes half of path and waits; sig is sent to it. Returns its status. */
static int killed_mid_write(const char *path, int sig, void (*before)(void))
{
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        attn_file_out o;
        attn_error e;
        char c;
        if (before) before();
        if (attn_file_out_begin(&o, path, 0644, &e) || attn_file_out_write(&o, "half", 4, &e)) _exit(3);
        if (write(ready[1], "x", 1) != 1) _exit(4);
        if (read(go[0], &c, 1) != 1) _exit(5); /* the signal ends it here, unless it is ignored or handled */
        _exit(attn_file_out_write(&o, " and the rest", 13, &e) || attn_file_out_commit(&o, &e) ? 6 : 0);
    }
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    assert_int_equal(count_named(".tmp-"), 1);
    assert_int_equal(kill(pid, sig), 0);
    nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    assert_int_equal(write(go[1], "x", 1), 1); /* still alive: let it finish */
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    close(ready[0]), close(ready[1]), close(go[0]), close(go[1]);
    return status;
}

static volatile sig_atomic_t caught;
static void catch_it(int sig)
{
    caught = sig;
}
static void ignore_int(void)
{
    signal(SIGINT, SIG_IGN);
}
static void handle_term(void)
{
    struct sigaction sa = {.sa_handler = catch_it, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
}

static void signals_remove_temporaries(void **state)
{
    (void)state;
    char p[600];
    put(in_dir(p, sizeof p, "trace.bin"), "old", 0644);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++) {
        int status = killed_mid_write(p, sigs[i], NULL);
        /* it dies of the signal, as it would have, and leaves nothing behind */
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), sigs[i]);
        assert_int_equal(count_named(".tmp-"), 0);
        holds(p, "old");
    }
    /* an ignored signal (nohup, a background job) and a program's own
     * handler (SDL's) are left alone: the write goes on and completes */
    int status = killed_mid_write(p, SIGINT, ignore_int);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    holds(p, "half and the rest");
    put(p, "old", 0644);
    status = killed_mid_write(p, SIGTERM, handle_term);
    assert_true(WIFEXITED(status)); /* caught, its read restarted */
    assert_int_equal(WEXITSTATUS(status), 0);
    holds(p, "half and the rest");
    assert_int_equal(count_named(".tmp-"), 0);
}

/* A disk that fills (RLIMIT_FSIZE: writes past it fail with EFBIG): the
 * write is refused with the cause, the old file stays, no temporary is left. */
static void full_disk(void **state)
{
    (void)state;
    char p[600];
    put(in_dir(p, sizeof p, "full.bin"), "good", 0644);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static char big[1 << 16];
        attn_error e = {0};
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        if (setrlimit(RLIMIT_FSIZE, &rl)) _exit(2);
        if (attn_file_write_atomic(p, big, sizeof big, 0644, &e) != ATTN_ERR_IO) _exit(3);
        _exit(strstr(e.msg, "cannot write: File too large") ? 0 : 4);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    holds(p, "good");
    assert_int_equal(count_named(".tmp-"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(inputs_are_regular_files, setup, teardown),
        cmocka_unit_test_setup_teardown(outputs_never_destroy_inputs, setup, teardown),
        cmocka_unit_test_setup_teardown(outputs_stay_out_of_model_folders, setup, teardown),
        cmocka_unit_test_setup_teardown(atomic_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(unique_renames_never_overwrite, setup, teardown),
        cmocka_unit_test_setup_teardown(locks_and_folders, setup, teardown),
        cmocka_unit_test_setup_teardown(streamed_writes, setup, teardown),
        cmocka_unit_test_setup_teardown(signals_remove_temporaries, setup, teardown),
        cmocka_unit_test_setup_teardown(full_disk, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
