/* progress.c — the progress file, read and written with cJSON. */
#include "progress.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "lesson.h"

struct lesson_progress {
    char *path;
    cJSON *root;   /* {"version": 1, "lessons": {...}} */
    cJSON *lessons;
};

const char *lesson_progress_path(char *buf, size_t size)
{
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (state && *state) snprintf(buf, size, "%s/attnlab/progress.json", state);
    else if (home && *home) snprintf(buf, size, "%s/.local/state/attnlab/progress.json", home);
    else return NULL;
    return buf;
}

static bool fresh(lesson_progress *p)
{
    cJSON_Delete(p->root);
    p->root = cJSON_CreateObject();
    p->lessons = p->root ? cJSON_AddObjectToObject(p->root, "lessons") : NULL;
    return p->lessons && cJSON_AddNumberToObject(p->root, "version", 1);
}

lesson_progress *lesson_progress_open(const char *path, char *err, size_t errsize)
{
    if (err && errsize) err[0] = '\0';
    lesson_progress *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path))) {
        free(p);
        return NULL;
    }
    size_t n = 0;
    char *text = lesson_read_file(path, 1u << 24, &n);
    if (text) {
        p->root = cJSON_ParseWithLength(text, n);
        p->lessons = cJSON_GetObjectItemCaseSensitive(p->root, "lessons");
        free(text);
        if (!cJSON_IsObject(p->root) || !cJSON_IsObject(p->lessons)) {
            /* keep the student's file for inspection rather than overwrite it */
            char bad[4200];
            snprintf(bad, sizeof bad, "%s.bad", path);
            rename(path, bad);
            if (err) snprintf(err, errsize, "%s: not a progress file; moved to %s and starting afresh", path, bad);
            cJSON_Delete(p->root);
            p->root = NULL;
        }
    }
    if (!p->root && !fresh(p)) {
        lesson_progress_close(p);
        return NULL;
    }
    return p;
}

void lesson_progress_close(lesson_progress *p)
{
    if (!p) return;
    cJSON_Delete(p->root);
    free(p->path);
    free(p);
}

static cJSON *entry(lesson_progress *p, const char *name, bool create)
{
    cJSON *e = cJSON_GetObjectItemCaseSensitive(p->lessons, name);
    if (cJSON_IsObject(e) || !create) return cJSON_IsObject(e) ? e : NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(p->lessons, name);
    return cJSON_AddObjectToObject(p->lessons, name);
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

lesson_record lesson_progress_get(const lesson_progress *p, const char *name)
{
    lesson_record r = {0};
    cJSON *e = entry((lesson_progress *)p, name, false);
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
    cJSON *e = entry(p, name, true);
    if (!e) return;
    if (step + 1 > get_int(e, "step")) set_num(e, "step", step + 1);
    set_num(e, "steps", n_steps);
    if (step + 1 >= n_steps) set_bool(e, "finished", true);
    else if (!cJSON_GetObjectItemCaseSensitive(e, "finished")) set_bool(e, "finished", false);
}

void lesson_progress_quiz(lesson_progress *p, const char *name, int step, int quiz, bool right)
{
    cJSON *e = entry(p, name, true);
    if (!e) return;
    cJSON *qs = cJSON_GetObjectItemCaseSensitive(e, "quizzes");
    if (!cJSON_IsObject(qs)) {
        cJSON_DeleteItemFromObjectCaseSensitive(e, "quizzes");
        if (!(qs = cJSON_AddObjectToObject(e, "quizzes"))) return;
    }
    char key[32];
    snprintf(key, sizeof key, "%d.%d", step, quiz);
    set_bool(qs, key, right);
}

int lesson_progress_quiz_result(const lesson_progress *p, const char *name, int step, int quiz)
{
    cJSON *e = entry((lesson_progress *)p, name, false);
    char key[32];
    snprintf(key, sizeof key, "%d.%d", step, quiz);
    const cJSON *v = e ? cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "quizzes"), key) : NULL;
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

void lesson_progress_reset(lesson_progress *p, const char *name)
{
    if (name) cJSON_DeleteItemFromObjectCaseSensitive(p->lessons, name);
    else fresh(p);
}

/* mkdir -p of path's directory */
static int make_dirs(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    for (char *s = dir + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(dir, 0700) && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(dir, 0700) && errno != EEXIST ? -1 : 0;
}

int lesson_progress_save(lesson_progress *p, char *err, size_t errsize)
{
    char tmp[4200];
    char *text = cJSON_Print(p->root);
    if (!text) return snprintf(err, errsize, "out of memory"), -1;
    snprintf(tmp, sizeof tmp, "%s.tmp", p->path);
    int ret = -1;
    FILE *f = NULL;
    if (make_dirs(p->path)) {
        snprintf(err, errsize, "%s: cannot create its folder: %s", p->path, strerror(errno));
        goto out;
    }
    if (!(f = fopen(tmp, "wb"))) {
        snprintf(err, errsize, "%s: %s", tmp, strerror(errno));
        goto out;
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n && fputc('\n', f) != EOF;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, p->path)) {
        snprintf(err, errsize, "%s: %s", p->path, strerror(errno ? errno : EIO));
        remove(tmp);
        goto out;
    }
    ret = 0;
out:
    free(text);
    return ret;
}
