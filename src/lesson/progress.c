/* progress.c — the progress file: changes merged into it under a lock (cJSON, fileio.h). */
#include "progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "paths.h"

#define PROGRESS_MAX_BYTES (16u << 20)
#define MSG_MAX 600 /* one message */

struct lesson_progress {
    char *path;           /* as given: may be a symbolic link */
    cJSON *root;          /* what this instance shows: {"version": 1, "lessons": {...}} */
    cJSON *lessons;       /* root's "lessons" */
    /* the changes since the last save, replayed onto the file by the next one */
    bool reset_all;       /* first forget every lesson, */
    cJSON *reset;         /* then these ({name: true}), */
    cJSON *changes;       /* then merge these ({name: entry}, the shape of "lessons") */
    char unsaved[MSG_MAX]; /* non-empty: the file cannot be read, and why */
};

const char *lesson_progress_path(char *buf, size_t size)
{
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    attn_status st;
    if (state && *state) st = attn_path_format(buf, size, NULL, "%s/attnlab/progress.json", state);
    else if (home && *home) st = attn_path_format(buf, size, NULL, "%s/.local/state/attnlab/progress.json", home);
    else return NULL;
    return st ? NULL : buf;
}

/* A message, cut to what fits. */
__attribute__((format(printf, 3, 4))) static void say(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* ---- entries: one lesson's record, and merging one into another */

static cJSON *new_root(void)
{
    cJSON *root = cJSON_CreateObject();
    if (!root || !cJSON_AddNumberToObject(root, "version", 1) || !cJSON_AddObjectToObject(root, "lessons")) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

static cJSON *lessons_of(cJSON *root)
{
    cJSON *l = cJSON_GetObjectItemCaseSensitive(root, "lessons");
    return cJSON_IsObject(root) && cJSON_IsObject(l) ? l : NULL;
}

static void clear(cJSON *object)
{
    while (object && object->child) cJSON_Delete(cJSON_DetachItemViaPointer(object, object->child));
}

static cJSON *entry(cJSON *lessons, const char *name, bool create)
{
    cJSON *e = cJSON_GetObjectItemCaseSensitive(lessons, name);
    if (cJSON_IsObject(e) || !create) return cJSON_IsObject(e) ? e : NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(lessons, name);
    return cJSON_AddObjectToObject(lessons, name);
}

static int get_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 1e6 ? (int)v->valuedouble : 0;
}

static void set_num(cJSON *o, const char *key, double v)
{
    cJSON *old = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(old)) cJSON_SetNumberValue(old, v);
    else {
        cJSON_DeleteItemFromObjectCaseSensitive(o, key);
        cJSON_AddNumberToObject(o, key, v);
    }
}

static void set_bool(cJSON *o, const char *key, bool v)
{
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    cJSON_AddBoolToObject(o, key, v);
}

/* Merges src into lessons[name]: the furthest step, src's step count,
 * finished if either is, and src's quiz answers over the older ones. */
static void merge_entry(cJSON *lessons, const char *name, const cJSON *src)
{
    cJSON *e = entry(lessons, name, true);
    if (!e) return;
    int step = get_int(src, "step");
    if (step > get_int(e, "step")) set_num(e, "step", step);
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(src, "steps");
    if (cJSON_IsNumber(steps)) set_num(e, "steps", steps->valuedouble);
    const cJSON *fin = cJSON_GetObjectItemCaseSensitive(src, "finished");
    if (cJSON_IsBool(fin))
        set_bool(e, "finished", cJSON_IsTrue(fin) || cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "finished")));
    const cJSON *q, *answers = cJSON_GetObjectItemCaseSensitive(src, "quizzes");
    if (!cJSON_IsObject(answers) || !answers->child) return;
    cJSON *qs = cJSON_GetObjectItemCaseSensitive(e, "quizzes");
    if (!cJSON_IsObject(qs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(e, "quizzes");
        if (!(qs = cJSON_AddObjectToObject(e, "quizzes"))) return;
    }
    cJSON_ArrayForEach(q, answers)
        if (cJSON_IsBool(q)) set_bool(qs, q->string, cJSON_IsTrue(q));
}

/* A change: shown here at once, and kept for the next save. */
static void change(lesson_progress *p, const char *name, const cJSON *src)
{
    merge_entry(p->lessons, name, src);
    merge_entry(p->changes, name, src);
}

/* The changes onto root, a copy of the file: resets first, then the rest. */
static void replay(const lesson_progress *p, cJSON *root)
{
    cJSON *lessons = lessons_of(root);
    const cJSON *c;
    if (p->reset_all) clear(lessons);
    cJSON_ArrayForEach(c, p->reset) cJSON_DeleteItemFromObjectCaseSensitive(lessons, c->string);
    cJSON_ArrayForEach(c, p->changes) merge_entry(lessons, c->string, c);
}

/* ---- the file */

typedef enum { LOAD_OK, LOAD_MISSING, LOAD_CORRUPT, LOAD_UNREADABLE, LOAD_NOMEM } load_result;

/* The file at target, parsed into *root (set only for LOAD_OK); why it
 * cannot be read into why. */
static load_result load(const char *target, cJSON **root, char *why, size_t size)
{
    *root = NULL;
    char *text;
    size_t n;
    attn_error e = {0};
    if (attn_file_read(target, PROGRESS_MAX_BYTES, &text, &n, &e)) {
        if (errno == ENOENT) return LOAD_MISSING;
        if (errno == ENOMEM) return LOAD_NOMEM;
        snprintf(why, size, "%s", e.msg);
        return LOAD_UNREADABLE;
    }
    cJSON *r = cJSON_ParseWithLength(text, n);
    free(text);
    if (!lessons_of(r)) {
        cJSON_Delete(r);
        return LOAD_CORRUPT;
    }
    *root = r;
    return LOAD_OK;
}

/* Moves the corrupt file at target to target.bad-YYYYMMDD-HHMMSS (or -1, -2 …). */
static lesson_progress_status move_aside(const char *target, char *msg, size_t size)
{
    char stamp[32], base[4200], to[4300];
    time_t now = time(NULL);
    struct tm tm;
    if (!localtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm))
        snprintf(stamp, sizeof stamp, "0");
    snprintf(base, sizeof base, "%s.bad-%s", target, stamp);
    attn_error e = {0};
    if (attn_file_rename_unique(target, base, to, sizeof to, &e)) {
        say(msg, size, "%s (it is not a progress file)", e.msg);
        return LESSON_PROGRESS_UNSAVED;
    }
    say(msg, size, "%s: not a progress file; moved to %s and starting afresh", target, to);
    return LESSON_PROGRESS_MOVED;
}

/* The file as it is now, read under the lock (or a fresh one when there is
 * none), a corrupt file moved aside first. A file that cannot be read puts
 * the store in memory-only mode. *root is set unless UNSAVED. */
static lesson_progress_status read_locked(lesson_progress *p, const char *target, cJSON **root, char *msg,
                                          size_t size)
{
    lesson_progress_status st = LESSON_PROGRESS_OK;
    switch (load(target, root, p->unsaved, sizeof p->unsaved)) {
    case LOAD_OK: return LESSON_PROGRESS_OK;
    case LOAD_MISSING: break;
    case LOAD_CORRUPT:
        if ((st = move_aside(target, msg, size)) == LESSON_PROGRESS_UNSAVED) {
            snprintf(p->unsaved, sizeof p->unsaved, "%s", msg); /* it cannot be kept, so it is not replaced */
            return st;
        }
        break;
    case LOAD_UNREADABLE: snprintf(msg, size, "%s", p->unsaved); return LESSON_PROGRESS_UNSAVED;
    case LOAD_NOMEM: snprintf(msg, size, "out of memory"); return LESSON_PROGRESS_UNSAVED;
    }
    if (!(*root = new_root())) {
        snprintf(msg, size, "out of memory");
        return LESSON_PROGRESS_UNSAVED;
    }
    return st;
}

/* The lock file beside the real file: PATH.lock. */
static int lock(const char *target, char *msg, size_t size)
{
    char path[4200];
    attn_error e = {0};
    snprintf(path, sizeof path, "%s.lock", target);
    int fd = attn_file_lock(path, &e);
    if (fd < 0) snprintf(msg, size, "%s", e.msg);
    return fd;
}

lesson_progress *lesson_progress_open(const char *path, char *err, size_t errsize)
{
    char msg[MSG_MAX] = "", target[4096];
    lesson_progress *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path)) || !(p->reset = cJSON_CreateObject()) ||
        !(p->changes = cJSON_CreateObject())) {
        lesson_progress_close(p);
        return NULL;
    }
    attn_error e = {0};
    if (attn_file_resolve(path, target, sizeof target, &e)) {
        snprintf(p->unsaved, sizeof p->unsaved, "%s", e.msg);
        snprintf(msg, sizeof msg, "%s", e.msg);
    } else {
        load_result r = load(target, &p->root, p->unsaved, sizeof p->unsaved);
        if (r == LOAD_UNREADABLE) snprintf(msg, sizeof msg, "%s", p->unsaved);
        if (r == LOAD_CORRUPT) { /* moved aside under the lock, if it still is corrupt then */
            int fd = lock(target, msg, sizeof msg);
            if (fd >= 0) read_locked(p, target, &p->root, msg, sizeof msg);
            else snprintf(p->unsaved, sizeof p->unsaved, "%s", msg);
            attn_file_unlock(fd);
        }
    }
    if (err && errsize) snprintf(err, errsize, "%s", msg);
    if (!p->root) p->root = new_root();
    if (!(p->lessons = lessons_of(p->root))) {
        lesson_progress_close(p);
        return NULL;
    }
    return p;
}

void lesson_progress_close(lesson_progress *p)
{
    if (!p) return;
    cJSON_Delete(p->root);
    cJSON_Delete(p->reset);
    cJSON_Delete(p->changes);
    free(p->path);
    free(p);
}

const char *lesson_progress_unsaved(const lesson_progress *p)
{
    return p && p->unsaved[0] ? p->unsaved : NULL;
}

lesson_progress_status lesson_progress_save(lesson_progress *p, char *err, size_t errsize)
{
    char msg[MSG_MAX] = "", target[4096];
    lesson_progress_status st = LESSON_PROGRESS_UNSAVED;
    cJSON *disk = NULL;
    char *text = NULL;
    int fd = -1;
    attn_error e = {0};
    if (p->unsaved[0]) {
        snprintf(msg, sizeof msg, "%s", p->unsaved);
        goto out;
    }
    if (attn_file_resolve(p->path, target, sizeof target, &e) || attn_file_make_parents(target, &e)) {
        snprintf(msg, sizeof msg, "%s", e.msg);
        goto out;
    }
    if ((fd = lock(target, msg, sizeof msg)) < 0) goto out;
    if ((st = read_locked(p, target, &disk, msg, sizeof msg)) == LESSON_PROGRESS_UNSAVED) goto out;
    replay(p, disk);
    if (!(text = cJSON_Print(disk))) {
        st = LESSON_PROGRESS_UNSAVED;
        snprintf(msg, sizeof msg, "out of memory");
        goto out;
    }
    size_t n = strlen(text);
    text[n] = '\n'; /* cJSON_Print's terminator becomes the last line's end */
    if (attn_file_write_atomic(target, text, n + 1, 0600, &e)) {
        char moved[MSG_MAX];
        snprintf(moved, sizeof moved, "%s", msg);
        say(msg, sizeof msg, "%s%s%s", e.msg, moved[0] ? "; " : "", moved);
        st = LESSON_PROGRESS_UNSAVED;
        goto out;
    }
    /* saved: show the merged file, and start a new list of changes */
    cJSON_Delete(p->root);
    p->root = disk;
    p->lessons = lessons_of(disk);
    disk = NULL;
    p->reset_all = false;
    clear(p->reset);
    clear(p->changes);
out:
    attn_file_unlock(fd);
    free(text);
    cJSON_Delete(disk);
    if (err && errsize) snprintf(err, errsize, "%s", msg);
    return st;
}

/* ---- what the student did */

lesson_record lesson_progress_get(const lesson_progress *p, const char *name)
{
    lesson_record r = {0};
    cJSON *e = entry(p->lessons, name, false);
    if (!e) return r;
    r.step = get_int(e, "step");
    r.steps = get_int(e, "steps");
    r.finished = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "finished"));
    const cJSON *q, *quizzes = cJSON_GetObjectItemCaseSensitive(e, "quizzes");
    cJSON_ArrayForEach(q, quizzes) {
        if (!cJSON_IsBool(q)) continue;
        r.quizzes_tried++;
        r.quizzes_right += cJSON_IsTrue(q);
    }
    return r;
}

void lesson_progress_visit(lesson_progress *p, const char *name, int step, int n_steps)
{
    cJSON *v = cJSON_CreateObject();
    if (v && cJSON_AddNumberToObject(v, "step", step + 1) && cJSON_AddNumberToObject(v, "steps", n_steps) &&
        cJSON_AddBoolToObject(v, "finished", step + 1 >= n_steps))
        change(p, name, v);
    cJSON_Delete(v);
}

static const char *quiz_key(char *key, size_t size, int step, int quiz)
{
    snprintf(key, size, "%d.%d", step, quiz);
    return key;
}

void lesson_progress_quiz(lesson_progress *p, const char *name, int step, int quiz, bool right)
{
    char key[32];
    cJSON *v = cJSON_CreateObject(), *qs = v ? cJSON_AddObjectToObject(v, "quizzes") : NULL;
    if (qs && cJSON_AddBoolToObject(qs, quiz_key(key, sizeof key, step, quiz), right)) change(p, name, v);
    cJSON_Delete(v);
}

int lesson_progress_quiz_result(const lesson_progress *p, const char *name, int step, int quiz)
{
    char key[32];
    cJSON *e = entry(p->lessons, name, false);
    const cJSON *v = e ? cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "quizzes"),
                                                          quiz_key(key, sizeof key, step, quiz))
                       : NULL;
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

void lesson_progress_reset(lesson_progress *p, const char *name)
{
    if (!name) {
        clear(p->lessons);
        clear(p->reset);
        clear(p->changes);
        p->reset_all = true;
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(p->lessons, name);
    cJSON_DeleteItemFromObjectCaseSensitive(p->changes, name);
    if (!cJSON_GetObjectItemCaseSensitive(p->reset, name)) cJSON_AddTrueToObject(p->reset, name);
}
