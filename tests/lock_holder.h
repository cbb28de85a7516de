/* lock_holder.h — another attnlab that keeps the progress file locked: a
 * child process holding PATH.lock (attn_file_lock) until let go. Shared by
 * test_progress.c and test_ui_lesson.c (static functions: include it once per
 * test program, after cmocka.h). */
#ifndef TEST_LOCK_HOLDER_H
#define TEST_LOCK_HOLDER_H

#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/base/fileio.h"

/* Forks a child that takes the lock of the progress file at path and keeps
 * it until let_go (or this process ends); it holds it when this returns.
 * *release is what let_go closes. */
static pid_t hold_lock(const char *path, int *release)
{
    char lock_path[1200];
    int ready[2], go[2];
    snprintf(lock_path, sizeof lock_path, "%s.lock", path);
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        attn_error e;
        char c;
        close(ready[0]);
        close(go[1]);
        int fd = attn_file_lock(lock_path, 0, &e);
        c = fd >= 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1) _exit(3);
        if (read(go[0], &c, 1) < 0) _exit(4); /* until the pipe closes */
        _exit(fd >= 0 ? 0 : 2);
    }
    close(ready[1]);
    close(go[0]);
    char c = 0;
    assert_int_equal(read(ready[0], &c, 1), 1);
    assert_int_equal(c, 'y');
    close(ready[0]);
    *release = go[1];
    return child;
}

/* The child lets the lock go and ends. */
static void let_go(pid_t child, int release)
{
    int status;
    close(release); /* the child's read ends, and its lock with it */
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#endif
