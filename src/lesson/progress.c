/* progress.c — the progress file: changes merged into it under a lock (cJSON, fileio.h). */
#include "progress.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/base/paths.h"

#define PROGRESS_MAX_BYTES (16u << 20)
#define MSG_MAX 1200 /* one message (an engine error, attn_error.msg, and its context) */

/* Changes not yet in the file, replayed onto it by a save: first forget
 * every lesson (reset_all), then those in reset ({name: true}), then merge
 * changes ({name: entry}, the shape of "lessons"). */
typedef struct {
    bool reset_all;
    cJSON *reset;
    cJSON *changes;
} changeset;

struct lesson_progress {
    char *path;           /* as given: may be a symbolic link */
    cJSON *root;          /* what this instance shows: {"version": 1, "lessons": {...}} */
    cJSON *lessons;       /* root's "lessons" */
    changeset pending;    /* the changes since the last save (or the one under way began) */
    char unsaved[MSG_MAX]; /* non-empty: the file cannot be read, and why */
};

/* One save's changes, on their way to the file (a save's three parts below). */
struct lesson_progress_batch {
    char *path;
    changeset taken;      /* the changes it writes, taken from the instance */
    char unsaved[MSG_MAX]; /* the instance's memory-only reason, or the one write found */
    lesson_progress_status status;
    cJSON *disk;          /* the file as written: the changes merged into it */
    char msg[MSG_MAX];
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
    merge_entry(p->pending.changes, name, src);
}

/* The changes onto root, a copy of the file: resets first, then the rest. */
static void replay(const changeset *cs, cJSON *root)
{
    cJSON *lessons = lessons_of(root);
    const cJSON *c;
    if (cs->reset_all) clear(lessons);
    cJSON_ArrayForEach(c, cs->reset) cJSON_DeleteItemFromObjectCaseSensitive(lessons, c->string);
    cJSON_ArrayForEach(c, cs->changes) merge_entry(lessons, c->string, c);
}

static bool changeset_init(changeset *cs)
{
    cs->reset_all = false;
    cs->reset = cJSON_CreateObject();
    cs->changes = cJSON_CreateObject();
    return cs->reset && cs->changes;
}

static void changeset_free(changeset *cs)
{
    cJSON_Delete(cs->reset);
    cJSON_Delete(cs->changes);
    cs->reset = cs->changes = NULL;
}

/* A save that failed gives its changes back: older's go under newer's, so
 * that the next save writes what the two in a row would have. */
static void put_back(changeset *newer, changeset *older)
{
    const cJSON *c;
    if (newer->reset_all) return; /* forgotten since */
    newer->reset_all = older->reset_all;
    cJSON_ArrayForEach(c, newer->reset) cJSON_DeleteItemFromObjectCaseSensitive(older->changes, c->string);
    cJSON_ArrayForEach(c, newer->changes) merge_entry(older->changes, c->string, c);
    cJSON *merged = older->changes;
    older->changes = newer->changes;
    newer->changes = merged;
    cJSON_ArrayForEach(c, older->reset)
        if (!cJSON_GetObjectItemCaseSensitive(newer->reset, c->string)) cJSON_AddTrueToObject(newer->reset, c->string);
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
    cJSON *r = NULL;
    attn_json_parse(text, n, &r, &e); /* the one rule: a file it refuses is corrupt */
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
static lesson_progress_status read_locked(char *unsaved, const char *target, cJSON **root, char *msg, size_t size)
{
    lesson_progress_status st = LESSON_PROGRESS_OK;
    switch (load(target, root, unsaved, MSG_MAX)) {
    case LOAD_OK: return LESSON_PROGRESS_OK;
    case LOAD_MISSING: break;
    case LOAD_CORRUPT:
        if ((st = move_aside(target, msg, size)) == LESSON_PROGRESS_UNSAVED) {
            snprintf(unsaved, MSG_MAX, "%s", msg); /* it cannot be kept, so it is not replaced */
            return st;
        }
        break;
    case LOAD_UNREADABLE: snprintf(msg, size, "%s", unsaved); return LESSON_PROGRESS_UNSAVED;
    case LOAD_NOMEM: snprintf(msg, size, "out of memory"); return LESSON_PROGRESS_UNSAVED;
    }
    if (!(*root = new_root())) {
        snprintf(msg, size, "out of memory");
        return LESSON_PROGRESS_UNSAVED;
    }
    return st;
}

/* The lock file beside the real file: PATH.lock, waited for at most wait_ms.
 * *busy says whether another instance held it all that time. */
static int lock(const char *target, int wait_ms, char *msg, size_t size, bool *busy)
{
    char path[4200];
    attn_error e = {0};
    snprintf(path, sizeof path, "%s.lock", target);
    int fd = attn_file_lock(path, wait_ms, &e);
    *busy = fd < 0 && errno == EWOULDBLOCK;
    if (*busy)
        say(msg, size, "progress file %s is locked by another attnlab (waited %.1f s)", target, wait_ms / 1000.0);
    else if (fd < 0)
        snprintf(msg, size, "%s", e.msg);
    return fd;
}

lesson_progress *lesson_progress_open(const char *path, int wait_ms, char *err, size_t errsize)
{
    char msg[MSG_MAX] = "", target[4096];
    lesson_progress *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path)) || !changeset_init(&p->pending)) {
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
            bool busy;
            int fd = lock(target, wait_ms, msg, sizeof msg, &busy);
            if (fd >= 0) read_locked(p->unsaved, target, &p->root, msg, sizeof msg);
            else if (busy) msg[0] = '\0'; /* the first save moves it aside, once the lock is free */
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
    changeset_free(&p->pending);
    free(p->path);
    free(p);
}

const char *lesson_progress_unsaved(const lesson_progress *p)
{
    return p && p->unsaved[0] ? p->unsaved : NULL;
}

bool lesson_progress_pending(const lesson_progress *p)
{
    const changeset *c = &p->pending;
    return c->reset_all || c->reset->child || c->changes->child;
}

lesson_progress_batch *lesson_progress_begin(lesson_progress *p)
{
    lesson_progress_batch *b = calloc(1, sizeof *b);
    changeset fresh = {0};
    if (!b || !(b->path = strdup(p->path)) || !changeset_init(&fresh)) {
        changeset_free(&fresh);
        if (b) free(b->path);
        free(b);
        return NULL;
    }
    b->taken = p->pending;
    p->pending = fresh;
    snprintf(b->unsaved, sizeof b->unsaved, "%s", p->unsaved);
    b->status = LESSON_PROGRESS_UNSAVED;
    return b;
}

lesson_progress_status lesson_progress_write(lesson_progress_batch *b, int wait_ms)
{
    char target[4096];
    char *text = NULL;
    int fd = -1;
    bool busy;
    attn_error e = {0};
    char *msg = b->msg;
    size_t size = sizeof b->msg;
    lesson_progress_status st = LESSON_PROGRESS_UNSAVED;
    msg[0] = '\0';
    cJSON_Delete(b->disk);
    b->disk = NULL;
    if (b->unsaved[0]) {
        snprintf(msg, size, "%s", b->unsaved);
        goto out;
    }
    if (attn_file_resolve(b->path, target, sizeof target, &e) || attn_file_make_parents(target, &e)) {
        snprintf(msg, size, "%s", e.msg);
        goto out;
    }
    if ((fd = lock(target, wait_ms, msg, size, &busy)) < 0) {
        if (busy) st = LESSON_PROGRESS_BUSY;
        goto out;
    }
    if ((st = read_locked(b->unsaved, target, &b->disk, msg, size)) == LESSON_PROGRESS_UNSAVED) goto out;
    replay(&b->taken, b->disk);
    if (!(text = cJSON_Print(b->disk))) {
        st = LESSON_PROGRESS_UNSAVED;
        snprintf(msg, size, "out of memory");
        goto out;
    }
    size_t n = strlen(text);
    text[n] = '\n'; /* cJSON_Print's terminator becomes the last line's end */
    if (attn_file_write_atomic(target, text, n + 1, 0600, &e)) {
        char moved[MSG_MAX];
        snprintf(moved, sizeof moved, "%s", msg);
        say(msg, size, "%s%s%s", e.msg, moved[0] ? "; " : "", moved);
        st = LESSON_PROGRESS_UNSAVED;
    }
out:
    attn_file_unlock(fd);
    free(text);
    if (st < 0) {
        cJSON_Delete(b->disk);
        b->disk = NULL;
    }
    return b->status = st;
}

lesson_progress_status lesson_progress_end(lesson_progress *p, lesson_progress_batch *b, char *err, size_t errsize)
{
    lesson_progress_status st = b ? b->status : LESSON_PROGRESS_UNSAVED;
    if (err && errsize) snprintf(err, errsize, "%s", b ? b->msg : "out of memory");
    if (!b) return st;
    if (b->disk) { /* saved: show the merged file, with the changes made since on top */
        cJSON_Delete(p->root);
        p->root = b->disk;
        p->lessons = lessons_of(b->disk);
        b->disk = NULL;
        replay(&p->pending, p->root);
    } else { /* kept for the next save */
        put_back(&p->pending, &b->taken);
        if (b->unsaved[0]) snprintf(p->unsaved, sizeof p->unsaved, "%s", b->unsaved);
    }
    changeset_free(&b->taken);
    free(b->path);
    free(b);
    return st;
}

lesson_progress_status lesson_progress_save(lesson_progress *p, char *err, size_t errsize)
{
    lesson_progress_batch *b = lesson_progress_begin(p);
    if (b) lesson_progress_write(b, LESSON_PROGRESS_LOCK_MS);
    return lesson_progress_end(p, b, err, errsize);
}

/* ---- what the student did */

static const char *quiz_key(char *key, size_t size, int step, int quiz)
{
    snprintf(key, size, "%d.%d", step, quiz);
    return key;
}

/* The counts of the quizzes the lesson has now, and the first step with one not right. */
static void count_shape(const cJSON *quizzes, const lesson_shape *shape, lesson_record *r)
{
    char key[32];
    int total = 0;
    for (int s = 0; s < shape->n_steps; s++)
        for (int q = 0; q < shape->quizzes[s]; q++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(quizzes, quiz_key(key, sizeof key, s, q));
            total++;
            r->quizzes_tried += cJSON_IsBool(v);
            r->quizzes_right += cJSON_IsTrue(v);
            if (!cJSON_IsTrue(v) && r->first_open < 0) r->first_open = s;
        }
    r->reached_end = shape->n_steps > 0 && r->step >= shape->n_steps;
    r->finished = r->reached_end && r->quizzes_right == total;
}

lesson_record lesson_progress_get(const lesson_progress *p, const char *name, const lesson_shape *shape)
{
    lesson_record r = {.first_open = -1};
    const cJSON *q, *e = entry(p->lessons, name, false), *quizzes = cJSON_GetObjectItemCaseSensitive(e, "quizzes");
    r.step = e ? get_int(e, "step") : 0;
    r.steps = e ? get_int(e, "steps") : 0;
    if (shape) {
        count_shape(quizzes, shape, &r);
        return r;
    }
    r.reached_end = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "finished"));
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
    changeset *c = &p->pending;
    if (!name) {
        clear(p->lessons);
        clear(c->reset);
        clear(c->changes);
        c->reset_all = true;
        return;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(p->lessons, name);
    cJSON_DeleteItemFromObjectCaseSensitive(c->changes, name);
    if (!cJSON_GetObjectItemCaseSensitive(c->reset, name)) cJSON_AddTrueToObject(c->reset, name);
}
