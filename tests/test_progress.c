/* test_progress.c — the progress file never loses a student's work.
 *
 * Two instances merge instead of overwriting each other (furthest step,
 * latest answer, resets); two processes and several threads saving and
 * resetting for a few seconds lose nothing and never leave a torn file; a
 * file that cannot be read (a folder, a FIFO, mode 000) is never replaced
 * and each says why; a corrupt file is moved aside to a new name every time;
 * a symbolic link stays a link and its target is updated; a lock another
 * process keeps is waited for a few seconds, never for ever, and the changes
 * a save could not write are kept for the next one. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "engine/base/fileio.h"
#include "lock_holder.h"
#include "progress.h"

#define STRESS_SECONDS 3.0
#define PROCESSES 2
#define THREADS 3 /* writers per process */

typedef struct {
    char dir[512];
    char path[600]; /* dir/progress.json */
} fixture;

static int make_dir(fixture *f, const char *parent)
{
    snprintf(f->dir, sizeof f->dir, "%s/progress-XXXXXX", parent);
    if (!mkdtemp(f->dir)) return -1;
    chmod(f->dir, 0755); /* the mode 000 case reads it as another user */
    snprintf(f->path, sizeof f->path, "%s/progress.json", f->dir);
    return 0;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    if (!f || make_dir(f, tmp && *tmp ? tmp : "/tmp")) return -1;
    *state = f;
    return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    fixture *f = *state;
    nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

static char *read_text(const char *path)
{
    char *text = NULL;
    size_t n;
    attn_error e;
    assert_int_equal(attn_file_read(path, 1 << 24, &text, &n, &e), ATTN_OK);
    return text;
}

/* Files in dir whose name contains part. */
static int count_named(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));) n += strstr(de->d_name, part) != NULL;
    if (d) closedir(d);
    return n;
}

static lesson_progress *open_ok(const char *path)
{
    char err[600];
    lesson_progress *p = lesson_progress_open(path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    assert_non_null(p);
    if (err[0]) fail_msg("open said: %s", err);
    assert_null(lesson_progress_unsaved(p));
    return p;
}

static void save_ok(lesson_progress *p)
{
    char err[600];
    lesson_progress_status st = lesson_progress_save(p, err, sizeof err);
    if (st != LESSON_PROGRESS_OK) fail_msg("save said (%d): %s", st, err);
}

/* ---- what finished means */

/* Issue 32: a lesson is finished when its last step was reached and every
 * quiz of it was last answered right, counted on the lesson as it is now (its
 * shape): Next clicked through it only reaches the end. An answer to a quiz
 * the lesson no longer has is not counted; one it gained is still to answer. */
static void finished_needs_every_quiz(void **state)
{
    fixture *f = *state;
    static const int QUIZZES[] = {0, 2, 0, 1}; /* 4 steps: two quizzes on step 2, one on step 4 */
    const lesson_shape shape = {4, QUIZZES};
    lesson_progress *p = open_ok(f->path);
    lesson_record r = lesson_progress_get(p, "04.md", &shape);
    assert_false(r.reached_end || r.finished);
    assert_int_equal(r.first_open, 1);
    for (int s = 0; s < 4; s++) lesson_progress_visit(p, "04.md", s, 4);
    r = lesson_progress_get(p, "04.md", &shape);
    assert_true(r.reached_end);
    assert_false(r.finished); /* clicked through */
    assert_int_equal(r.quizzes_right, 0);
    assert_int_equal(r.first_open, 1);
    lesson_progress_quiz(p, "04.md", 1, 0, true);
    lesson_progress_quiz(p, "04.md", 1, 1, false);
    lesson_progress_quiz(p, "04.md", 3, 0, true);
    lesson_progress_quiz(p, "04.md", 2, 5, true); /* a quiz the lesson does not have */
    r = lesson_progress_get(p, "04.md", &shape);
    assert_false(r.finished);
    assert_int_equal(r.quizzes_right, 2);
    assert_int_equal(r.quizzes_tried, 3);
    assert_int_equal(r.first_open, 1);
    lesson_progress_quiz(p, "04.md", 1, 1, true); /* tried again, right */
    save_ok(p);
    lesson_progress_close(p);
    p = open_ok(f->path); /* as saved */
    r = lesson_progress_get(p, "04.md", &shape);
    assert_true(r.finished);
    assert_int_equal(r.quizzes_right, 3);
    assert_int_equal(r.first_open, -1);
    static const int MORE[] = {0, 2, 0, 1, 1}; /* the lesson gained a step with a quiz */
    r = lesson_progress_get(p, "04.md", &(lesson_shape){5, MORE});
    assert_false(r.reached_end || r.finished);
    r = lesson_progress_get(p, "04.md", NULL); /* without the lesson: as the file says, never finished */
    assert_true(r.reached_end);
    assert_false(r.finished);
    assert_int_equal(r.quizzes_right, 4);
    lesson_progress_close(p);
}

/* ---- two instances merge */

/* The run's lost update: two windows on different lessons each saved their
 * whole copy, and lesson 04 went from step 4 back to step 1. */
static void furthest_step_wins(void **state)
{
    fixture *f = *state;
    lesson_progress *a = open_ok(f->path), *b = open_ok(f->path);
    lesson_progress_visit(a, "04.md", 3, 9);
    save_ok(a);
    lesson_progress_visit(b, "05.md", 0, 7);
    save_ok(b);
    assert_int_equal(lesson_progress_get(b, "04.md", NULL).step, 4); /* b now shows a's work */
    lesson_progress_visit(b, "04.md", 0, 9);                  /* b, behind, opens 04 at step 1 */
    save_ok(b);
    lesson_progress_close(a);
    lesson_progress_close(b);

    lesson_progress *c = open_ok(f->path);
    assert_int_equal(lesson_progress_get(c, "04.md", NULL).step, 4);
    assert_int_equal(lesson_progress_get(c, "04.md", NULL).steps, 9);
    assert_int_equal(lesson_progress_get(c, "05.md", NULL).step, 1);
    lesson_progress_visit(c, "05.md", 6, 7);
    save_ok(c);
    assert_true(lesson_progress_get(c, "05.md", NULL).reached_end);
    lesson_progress_close(c);
    assert_int_equal(count_named(f->dir, ".tmp-"), 0);
}

static void latest_answer_wins(void **state)
{
    fixture *f = *state;
    lesson_progress *a = open_ok(f->path), *b = open_ok(f->path);
    lesson_progress_quiz(a, "04.md", 2, 0, false);
    lesson_progress_quiz(a, "04.md", 3, 0, true);
    save_ok(a);
    lesson_progress_quiz(b, "04.md", 2, 0, true);
    save_ok(b);
    assert_int_equal(lesson_progress_quiz_result(b, "04.md", 3, 0), 1); /* a's other answer kept */
    lesson_progress_quiz(a, "04.md", 3, 0, false);
    save_ok(a);
    assert_int_equal(lesson_progress_quiz_result(a, "04.md", 2, 0), 1); /* b's later answer over a's */
    lesson_progress_close(a);
    lesson_progress_close(b);

    lesson_progress *c = open_ok(f->path);
    assert_int_equal(lesson_progress_quiz_result(c, "04.md", 2, 0), 1);
    assert_int_equal(lesson_progress_quiz_result(c, "04.md", 3, 0), 0);
    lesson_record r = lesson_progress_get(c, "04.md", NULL);
    assert_int_equal(r.quizzes_tried, 2);
    assert_int_equal(r.quizzes_right, 1);
    lesson_progress_close(c);
}

/* A reset forgets what others saved before it (what the student meant), and
 * what comes after it survives. */
static void reset_merges(void **state)
{
    fixture *f = *state;
    lesson_progress *a = open_ok(f->path), *b = open_ok(f->path);
    lesson_progress_visit(b, "04.md", 4, 9);
    lesson_progress_quiz(b, "04.md", 1, 0, true);
    save_ok(b);
    lesson_progress_visit(a, "01.md", 2, 9);
    lesson_progress_reset(a, NULL); /* everything: b's 04 too, which a never saw */
    lesson_progress_visit(a, "02.md", 1, 9);
    save_ok(a);
    assert_int_equal(lesson_progress_get(a, "04.md", NULL).step, 0);
    assert_int_equal(lesson_progress_get(a, "01.md", NULL).step, 0);
    assert_int_equal(lesson_progress_get(a, "02.md", NULL).step, 2);
    lesson_progress_visit(b, "03.md", 0, 9); /* after the reset: kept */
    save_ok(b);
    assert_int_equal(lesson_progress_get(b, "04.md", NULL).step, 0);
    assert_int_equal(lesson_progress_quiz_result(b, "04.md", 1, 0), -1);

    /* one lesson: b forgets 03, which a saves again later */
    lesson_progress_visit(a, "03.md", 5, 9);
    save_ok(a);
    lesson_progress_reset(b, "03.md");
    save_ok(b);
    assert_int_equal(lesson_progress_get(b, "03.md", NULL).step, 0);
    assert_int_equal(lesson_progress_get(b, "02.md", NULL).step, 2);
    lesson_progress_visit(a, "03.md", 1, 9);
    save_ok(a);
    lesson_progress_close(a);
    lesson_progress_close(b);

    lesson_progress *c = open_ok(f->path);
    assert_int_equal(lesson_progress_get(c, "02.md", NULL).step, 2);
    assert_int_equal(lesson_progress_get(c, "03.md", NULL).step, 2);
    assert_int_equal(lesson_progress_get(c, "04.md", NULL).step, 0);
    lesson_progress_close(c);
}

/* ---- many writers at once */

typedef struct {
    const char *path;
    char name[64], scratch[64];
    int id;
    double until;
    /* results: what the file must say at the end */
    int steps;          /* furthest step visited (1-based) */
    int answer;         /* the last answer to quiz 0.0 */
    bool scratch_kept;  /* the scratch lesson was last visited, not reset */
    int saves, busy, errors; /* busy: saves that gave up waiting for the lock, their changes kept */
    char error[600];
} writer;

static void writer_error(writer *w, const char *what, const char *msg)
{
    if (!w->errors++) snprintf(w->error, sizeof w->error, "%s: %s: %.400s", w->name, what, msg);
}

/* A save that may find the lock held too long (BUSY): its changes are kept,
 * and the next save writes them. Returns whether it wrote or kept them. */
static bool save_or_keep(writer *w, lesson_progress *p)
{
    char err[600];
    lesson_progress_status st = lesson_progress_save(p, err, sizeof err);
    if (st == LESSON_PROGRESS_BUSY) {
        w->busy++;
        if (!lesson_progress_pending(p)) writer_error(w, "busy save", "its changes were not kept");
        return true;
    }
    if (st != LESSON_PROGRESS_OK) writer_error(w, "save", err);
    else w->saves++;
    return st == LESSON_PROGRESS_OK;
}

/* Before an instance closes: saved until nothing is left (as the window's
 * app_player_finish does once). */
static void save_all(writer *w, lesson_progress *p)
{
    while (lesson_progress_pending(p) && save_or_keep(w, p))
        ;
}

/* One student's instance, saving after every change; now and then it closes
 * and opens again, like a new window. Resets the shared lesson and its own
 * scratch lesson as it goes. Under this much contention a save may give up
 * waiting for the lock; nothing it was asked to keep may be lost. */
static void *write_loop(void *arg)
{
    writer *w = arg;
    char err[600];
    lesson_progress *p = NULL;
    for (int k = 0; now() < w->until || k < 8; k++) {
        if (!p || k % 4 == 3) {
            if (p) save_all(w, p);
            lesson_progress_close(p);
            p = lesson_progress_open(w->path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
            if (!p) return writer_error(w, "open", "out of memory"), NULL;
            if (err[0]) writer_error(w, "open", err);
        }
        lesson_progress_visit(p, w->name, k, 1 << 19);
        lesson_progress_quiz(p, w->name, 0, 0, k % 2);
        lesson_progress_quiz(p, "shared.md", 0, w->id, k % 3 == 0);
        if (k % 3 == 0) lesson_progress_visit(p, w->scratch, k % 7, 9);
        if (k % 3 == 1) lesson_progress_reset(p, w->scratch);
        if (k % 5 == 4) lesson_progress_reset(p, "shared.md");
        if (!save_or_keep(w, p)) continue;
        w->steps = k + 1;
        w->answer = k % 2;
        if (k % 3 != 2) w->scratch_kept = k % 3 == 0;
    }
    save_all(w, p);
    lesson_progress_close(p);
    return NULL;
}

typedef struct {
    const char *path;
    double until;
    int reads, torn;
    char first[200];
} reader;

/* Reads the file over and over: each read is a whole progress file. */
static void *read_loop(void *arg)
{
    reader *r = arg;
    while (now() < r->until) {
        char *text;
        size_t n;
        attn_error e;
        if (attn_file_read(r->path, 1 << 24, &text, &n, &e)) {
            if (errno != ENOENT && !r->torn++) snprintf(r->first, sizeof r->first, "%.150s", e.msg);
            continue;
        }
        cJSON *root = cJSON_ParseWithLength(text, n);
        if (!cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "lessons")) && !r->torn++)
            snprintf(r->first, sizeof r->first, "%.150s", text);
        cJSON_Delete(root);
        free(text);
        r->reads++;
    }
    return NULL;
}

/* This process's writers, started together and joined. */
static void run_writers(writer *ws, const char *path, int proc, double until)
{
    pthread_t th[THREADS];
    bool started[THREADS];
    for (int t = 0; t < THREADS; t++) {
        writer *w = &ws[t];
        memset(w, 0, sizeof *w);
        w->path = path;
        w->id = proc * THREADS + t;
        w->until = until;
        snprintf(w->name, sizeof w->name, "writer-%d.md", w->id);
        snprintf(w->scratch, sizeof w->scratch, "scratch-%d.md", w->id);
        started[t] = !pthread_create(&th[t], NULL, write_loop, w);
        if (!started[t]) writer_error(w, "start", "cannot start a thread");
    }
    for (int t = 0; t < THREADS; t++)
        if (started[t]) pthread_join(th[t], NULL);
}

static void concurrent_saves_lose_nothing(void **state)
{
    fixture *f = *state;
    double until = now() + STRESS_SECONDS;
    writer ws[PROCESSES][THREADS];
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) { /* the second process: its writers' results go back through the pipe */
        close(fds[0]);
        run_writers(ws[1], f->path, 1, until);
        ssize_t put = write(fds[1], ws[1], sizeof ws[1]);
        _exit(put == (ssize_t)sizeof ws[1] ? 0 : 1);
    }
    close(fds[1]);
    reader rd = {.path = f->path, .until = until};
    pthread_t rt;
    assert_int_equal(pthread_create(&rt, NULL, read_loop, &rd), 0);
    run_writers(ws[0], f->path, 0, until);
    pthread_join(rt, NULL);
    size_t got = 0;
    for (ssize_t n; got < sizeof ws[1] && (n = read(fds[0], (char *)ws[1] + got, sizeof ws[1] - got)) > 0;)
        got += (size_t)n;
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(got, sizeof ws[1]);

    lesson_progress *p = open_ok(f->path);
    int saves = 0, busy = 0;
    for (int i = 0; i < PROCESSES; i++)
        for (int t = 0; t < THREADS; t++) {
            writer *w = &ws[i][t];
            w->path = f->path;
            if (w->errors) fail_msg("%d errors, the first: %s", w->errors, w->error);
            lesson_record r = lesson_progress_get(p, w->name, NULL);
            if (r.step != w->steps) fail_msg("%s: step %d in the file, %d saved", w->name, r.step, w->steps);
            assert_int_equal(lesson_progress_quiz_result(p, w->name, 0, 0), w->answer);
            assert_int_equal(lesson_progress_get(p, w->scratch, NULL).step > 0, w->scratch_kept);
            saves += w->saves;
            busy += w->busy;
        }
    lesson_progress_close(p);
    if (rd.torn) fail_msg("%d of %d reads were not a whole progress file: %s", rd.torn, rd.reads, rd.first);
    print_message("%d saves by %d writers in %d processes (%d gave up waiting for the lock, their changes kept), "
                  "%d whole reads\n", saves, PROCESSES * THREADS, PROCESSES, busy, rd.reads);
    assert_true(rd.reads > 0);
    assert_int_equal(count_named(f->dir, ".tmp-"), 0);
    assert_int_equal(count_named(f->dir, ".bad-"), 0);
}

/* ---- files that cannot be read are never replaced */

/* The store kept in memory, the file untouched, and every message naming the cause. */
static void unsaved_in_memory(const char *path, const char *cause)
{
    char err[600];
    lesson_progress *p = lesson_progress_open(path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    assert_non_null(p);
    if (!strstr(err, cause)) fail_msg("open said '%s', not '%s'", err, cause);
    assert_non_null(lesson_progress_unsaved(p));
    assert_non_null(strstr(lesson_progress_unsaved(p), path));
    lesson_progress_visit(p, "04.md", 3, 9);
    lesson_progress_reset(p, "05.md");
    assert_int_equal(lesson_progress_save(p, err, sizeof err), LESSON_PROGRESS_UNSAVED);
    if (!strstr(err, cause)) fail_msg("save said '%s', not '%s'", err, cause);
    assert_int_equal(lesson_progress_get(p, "04.md", NULL).step, 4); /* the session goes on in memory */
    assert_int_equal(lesson_progress_save(p, err, sizeof err), LESSON_PROGRESS_UNSAVED);
    lesson_progress_close(p);
}

static void a_folder_is_not_replaced(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkdir(f->path, 0700), 0);
    unsaved_in_memory(f->path, "is a directory, not a regular file");
    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}

static void a_fifo_neither_hangs_nor_is_replaced(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkfifo(f->path, 0600), 0);
    alarm(20); /* a hang fails the test instead of the whole run */
    unsaved_in_memory(f->path, "is a FIFO, not a regular file");
    alarm(0);
    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

static const char OLD[] = "{\"version\": 1, \"lessons\": {\"04.md\": {\"step\": 7, \"steps\": 9}}}\n";

/* Mode 000. Root reads any file, so as root the check runs in a child that
 * becomes nobody first. */
static void an_unreadable_file_is_not_replaced(void **state)
{
    fixture *f = *state;
    write_text(f->path, OLD);
    assert_int_equal(chmod(f->path, 0), 0);
    if (geteuid() != 0) {
        unsaved_in_memory(f->path, "Permission denied");
    } else {
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            if (setgid(65534) || setuid(65534)) _exit(3);
            char err[600];
            lesson_progress *p = lesson_progress_open(f->path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
            if (!p || !strstr(err, "Permission denied") || !lesson_progress_unsaved(p)) _exit(4);
            lesson_progress_visit(p, "04.md", 0, 9);
            if (lesson_progress_save(p, err, sizeof err) != LESSON_PROGRESS_UNSAVED) _exit(5);
            if (!strstr(err, "Permission denied") || !strstr(err, f->path)) _exit(6);
            if (lesson_progress_get(p, "04.md", NULL).step != 1) _exit(7);
            lesson_progress_close(p);
            _exit(0);
        }
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        assert_true(WIFEXITED(status));
        if (WEXITSTATUS(status) == 3) fail_msg("cannot become nobody (65534) to test mode 000 as root");
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(chmod(f->path, 0600), 0);
    char *text = read_text(f->path);
    assert_string_equal(text, OLD);
    free(text);
}

/* ---- a corrupt file is moved aside, each time to a new name */

/* The name the message says the file was moved to. */
static void moved_to(const char *msg, char *out, size_t size)
{
    const char *to = strstr(msg, "; moved to "), *end = to ? strstr(to, " and starting afresh") : NULL;
    if (!end) fail_msg("no 'moved to' in: %s", msg);
    to += strlen("; moved to ");
    snprintf(out, size, "%.*s", (int)(end - to), to);
}

static void corrupt_files_are_moved_aside(void **state)
{
    fixture *f = *state;
    char err[600], first[700], second[700], base[700];
    write_text(f->path, "{ not json");
    lesson_progress *p = lesson_progress_open(f->path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    assert_non_null(p);
    assert_null(lesson_progress_unsaved(p));
    assert_non_null(strstr(err, "not a progress file"));
    moved_to(err, first, sizeof first);
    snprintf(base, sizeof base, "%s.bad-", f->path);
    assert_memory_equal(first, base, strlen(base));
    /* progress.json.bad-YYYYMMDD-HHMMSS */
    assert_true(strlen(first) >= strlen(base) + 15 && first[strlen(base) + 8] == '-');
    char *text = read_text(first);
    assert_string_equal(text, "{ not json");
    free(text);
    assert_int_equal(access(f->path, F_OK), -1);

    /* corrupt again, found by a save this time, within the same second:
     * a second name, the first file kept */
    lesson_progress_visit(p, "04.md", 2, 9);
    write_text(f->path, "[1, 2]");
    assert_int_equal(lesson_progress_save(p, err, sizeof err), LESSON_PROGRESS_MOVED);
    moved_to(err, second, sizeof second);
    assert_string_not_equal(first, second);
    text = read_text(second);
    assert_string_equal(text, "[1, 2]");
    free(text);
    text = read_text(first);
    assert_string_equal(text, "{ not json");
    free(text);
    assert_int_equal(count_named(f->dir, ".bad-"), 2);
    lesson_progress_close(p);

    p = open_ok(f->path); /* the save wrote a good file */
    assert_int_equal(lesson_progress_get(p, "04.md", NULL).step, 3);
    lesson_progress_close(p);

    /* valid JSON that is not a progress file, found at open */
    write_text(f->path, "{\"version\": 1, \"lessons\": 3}");
    p = lesson_progress_open(f->path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    moved_to(err, second, sizeof second);
    lesson_progress_close(p);
    assert_int_equal(count_named(f->dir, ".bad-"), 3);

    /* the one JSON rule (json.h): a progress file with a second object after
     * it, or a key given twice, is not read as its first part */
    const char *const broken[] = {"{\"version\": 1, \"lessons\": {}}{\"version\": 1, \"lessons\": {}}",
                                  "{\"version\": 1, \"lessons\": {}, \"lessons\": {}}"};
    for (int i = 0; i < 2; i++) {
        write_text(f->path, broken[i]);
        p = lesson_progress_open(f->path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
        assert_non_null(strstr(err, "not a progress file"));
        lesson_progress_close(p);
        assert_int_equal(count_named(f->dir, ".bad-"), 4 + i);
    }
}

/* ---- symbolic links */

static void a_symlink_stays_a_link(void **state)
{
    fixture *f = *state;
    char real_dir[700], real[800], link[900];
    snprintf(real_dir, sizeof real_dir, "%s/elsewhere", f->dir);
    snprintf(real, sizeof real, "%s/mine.json", real_dir);
    assert_int_equal(mkdir(real_dir, 0700), 0);
    write_text(real, OLD);
    assert_int_equal(symlink("elsewhere/mine.json", f->path), 0); /* relative, from the link's folder */

    lesson_progress *p = open_ok(f->path);
    assert_int_equal(lesson_progress_get(p, "04.md", NULL).step, 7);
    lesson_progress_visit(p, "05.md", 1, 9);
    save_ok(p);
    lesson_progress_close(p);

    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    ssize_t n = readlink(f->path, link, sizeof link - 1);
    assert_true(n > 0);
    link[n] = '\0';
    assert_string_equal(link, "elsewhere/mine.json");
    p = open_ok(real);
    assert_int_equal(lesson_progress_get(p, "04.md", NULL).step, 7);
    assert_int_equal(lesson_progress_get(p, "05.md", NULL).step, 2);
    lesson_progress_close(p);
    assert_int_equal(count_named(real_dir, ".tmp-"), 0);
    assert_int_equal(count_named(real_dir, "mine.json.lock"), 1); /* the lock beside the real file */

    /* a link to a file not made yet: the file is made where it points */
    assert_int_equal(remove(real), 0);
    p = open_ok(f->path);
    lesson_progress_visit(p, "06.md", 0, 9);
    save_ok(p);
    lesson_progress_close(p);
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(stat(real, &st), 0);
    assert_true(S_ISREG(st.st_mode));
}

/* ---- another instance keeps the lock: a few seconds' wait, never for ever */

static void assert_locked_message(const char *err, const char *path, double seconds)
{
    char want[800];
    snprintf(want, sizeof want, "progress file %s is locked by another attnlab (waited %.1f s)", path, seconds);
    assert_string_equal(err, want);
}

typedef struct {
    lesson_progress_batch *b;
    int wait_ms;
    lesson_progress_status st;
} write_job;

static void *write_thread(void *arg)
{
    write_job *j = arg;
    j->st = lesson_progress_write(j->b, j->wait_ms);
    return NULL;
}

/* The lock held by a stopped attnlab: reset-progress waited for
 * ever. Now a save waits LESSON_PROGRESS_LOCK_MS, says which file is locked,
 * and keeps every change for the next save, which writes them once the lock
 * is free. */
static void a_held_lock_is_waited_for_a_few_seconds(void **state)
{
    fixture *f = *state;
    char err[600];
    write_text(f->path, OLD);
    int release;
    pid_t child = hold_lock(f->path, &release);
    lesson_progress *p = open_ok(f->path); /* a whole file: reading it takes no lock */
    lesson_progress_visit(p, "05.md", 2, 9);
    double t0 = now();
    assert_int_equal(lesson_progress_save(p, err, sizeof err), LESSON_PROGRESS_BUSY);
    double waited = now() - t0;
    assert_true(waited > LESSON_PROGRESS_LOCK_MS / 1e3 - 0.05 && waited < LESSON_PROGRESS_LOCK_MS / 1e3 + 2);
    assert_locked_message(err, f->path, LESSON_PROGRESS_LOCK_MS / 1e3);
    assert_true(lesson_progress_pending(p));
    assert_int_equal(lesson_progress_get(p, "05.md", NULL).step, 3); /* still shown */
    char *text = read_text(f->path);
    assert_string_equal(text, OLD); /* and the file untouched */
    free(text);

    /* the window's way: the file's part on another thread, this one going on */
    write_job j = {.b = lesson_progress_begin(p), .wait_ms = 200};
    assert_non_null(j.b);
    assert_false(lesson_progress_pending(p));
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, write_thread, &j), 0);
    lesson_progress_quiz(p, "05.md", 2, 0, true);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(j.st, LESSON_PROGRESS_BUSY);
    assert_int_equal(lesson_progress_end(p, j.b, err, sizeof err), LESSON_PROGRESS_BUSY);
    assert_locked_message(err, f->path, 0.2);
    assert_true(lesson_progress_pending(p));

    let_go(child, release);
    save_ok(p);
    assert_false(lesson_progress_pending(p));
    lesson_progress_close(p);
    p = open_ok(f->path);
    assert_int_equal(lesson_progress_get(p, "04.md", NULL).step, 7);
    assert_int_equal(lesson_progress_get(p, "05.md", NULL).step, 3);
    assert_int_equal(lesson_progress_quiz_result(p, "05.md", 2, 0), 1);
    lesson_progress_close(p);
}

/* A save that did not write gives its changes back under those made while
 * it ran; one that wrote shows the file with them on top: what two saves in
 * a row would have written, either way. */
static void a_save_in_parts_loses_nothing(void **state)
{
    fixture *f = *state;
    char err[600];
    write_text(f->path, OLD);
    int release;
    pid_t child = hold_lock(f->path, &release);
    lesson_progress *p = open_ok(f->path), *q;
    lesson_progress_visit(p, "a.md", 4, 9);
    lesson_progress_quiz(p, "a.md", 0, 0, false);
    lesson_progress_visit(p, "x.md", 1, 9);
    lesson_progress_quiz(p, "y.md", 0, 0, true);
    lesson_progress_batch *b = lesson_progress_begin(p);
    lesson_progress_reset(p, "x.md");           /* after the visit: x is forgotten */
    lesson_progress_quiz(p, "a.md", 0, 0, true); /* the later answer wins */
    lesson_progress_visit(p, "a.md", 0, 9);      /* the furthest step stays */
    assert_int_equal(lesson_progress_write(b, 0), LESSON_PROGRESS_BUSY);
    assert_int_equal(lesson_progress_end(p, b, err, sizeof err), LESSON_PROGRESS_BUSY);
    let_go(child, release);
    save_ok(p);
    lesson_progress_close(p);
    q = open_ok(f->path);
    assert_int_equal(lesson_progress_get(q, "04.md", NULL).step, 7);
    assert_int_equal(lesson_progress_get(q, "a.md", NULL).step, 5);
    assert_int_equal(lesson_progress_quiz_result(q, "a.md", 0, 0), 1);
    assert_int_equal(lesson_progress_get(q, "x.md", NULL).step, 0);
    assert_int_equal(lesson_progress_quiz_result(q, "y.md", 0, 0), 1);
    lesson_progress_close(q);

    /* forgetting everything while a save fails: what it carried is forgotten too */
    child = hold_lock(f->path, &release);
    p = open_ok(f->path);
    lesson_progress_visit(p, "b.md", 2, 9);
    b = lesson_progress_begin(p);
    lesson_progress_reset(p, NULL);
    lesson_progress_visit(p, "c.md", 0, 9);
    assert_int_equal(lesson_progress_write(b, 0), LESSON_PROGRESS_BUSY);
    lesson_progress_end(p, b, err, sizeof err);
    let_go(child, release);
    save_ok(p);
    lesson_progress_close(p);
    q = open_ok(f->path);
    assert_int_equal(lesson_progress_get(q, "04.md", NULL).step, 0);
    assert_int_equal(lesson_progress_get(q, "b.md", NULL).step, 0);
    assert_int_equal(lesson_progress_get(q, "c.md", NULL).step, 1);
    lesson_progress_close(q);

    /* a save that writes while changes come: they are shown at once, and the next save writes them */
    p = open_ok(f->path);
    lesson_progress_visit(p, "d.md", 1, 9);
    b = lesson_progress_begin(p);
    lesson_progress_visit(p, "e.md", 2, 9);
    assert_int_equal(lesson_progress_write(b, 1000), LESSON_PROGRESS_OK);
    assert_int_equal(lesson_progress_end(p, b, err, sizeof err), LESSON_PROGRESS_OK);
    assert_int_equal(lesson_progress_get(p, "d.md", NULL).step, 2);
    assert_int_equal(lesson_progress_get(p, "e.md", NULL).step, 3);
    assert_true(lesson_progress_pending(p));
    q = open_ok(f->path);
    assert_int_equal(lesson_progress_get(q, "d.md", NULL).step, 2);
    assert_int_equal(lesson_progress_get(q, "e.md", NULL).step, 0);
    lesson_progress_close(q);
    save_ok(p);
    lesson_progress_close(p);
    q = open_ok(f->path);
    assert_int_equal(lesson_progress_get(q, "e.md", NULL).step, 3);
    lesson_progress_close(q);
}

/* A corrupt file is moved aside under the lock: opened while another
 * instance holds it, the move waits for the first save instead of the open. */
static void a_corrupt_file_behind_a_held_lock(void **state)
{
    fixture *f = *state;
    char err[600];
    write_text(f->path, "{not json");
    int release;
    pid_t child = hold_lock(f->path, &release);
    double t0 = now();
    lesson_progress *p = lesson_progress_open(f->path, 0, err, sizeof err);
    assert_true(now() - t0 < 1.0);
    assert_non_null(p);
    assert_string_equal(err, "");
    assert_null(lesson_progress_unsaved(p));
    lesson_progress_visit(p, "a.md", 0, 9);
    let_go(child, release);
    assert_int_equal(lesson_progress_save(p, err, sizeof err), LESSON_PROGRESS_MOVED);
    assert_non_null(strstr(err, "not a progress file; moved to "));
    lesson_progress_close(p);
    assert_int_equal(count_named(f->dir, ".bad-"), 1);
    p = open_ok(f->path);
    assert_int_equal(lesson_progress_get(p, "a.md", NULL).step, 1);
    lesson_progress_close(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(finished_needs_every_quiz, setup, teardown),
        cmocka_unit_test_setup_teardown(furthest_step_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(latest_answer_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(reset_merges, setup, teardown),
        cmocka_unit_test_setup_teardown(concurrent_saves_lose_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(a_folder_is_not_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(a_fifo_neither_hangs_nor_is_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(an_unreadable_file_is_not_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(corrupt_files_are_moved_aside, setup, teardown),
        cmocka_unit_test_setup_teardown(a_symlink_stays_a_link, setup, teardown),
        cmocka_unit_test_setup_teardown(a_held_lock_is_waited_for_a_few_seconds, setup, teardown),
        cmocka_unit_test_setup_teardown(a_save_in_parts_loses_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(a_corrupt_file_behind_a_held_lock, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
