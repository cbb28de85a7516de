/* catalog.c — listing the course folder. */
#include "catalog.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/paths.h"

#ifndef ATTNLAB_LESSONS_DIR
#define ATTNLAB_LESSONS_DIR "lessons"
#endif

const char *lesson_lang_from_env(void)
{
    static const char *const VARS[] = {"LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"};
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0]; i++) {
        const char *v = getenv(VARS[i]);
        if (v && *v) return strncmp(v, "zh", 2) ? "en" : "zh";
    }
    return "en";
}

const char *lesson_catalog_dir(const char *lang, char *buf, size_t size)
{
    char root[PATH_MAX];
    if (!attn_data_dir("ATTNLAB_LESSONS", "lessons", ATTNLAB_LESSONS_DIR, root, sizeof root) ||
        attn_path_format(buf, size, NULL, "%s/%s", root, lang))
        return NULL;
    return buf;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const lesson_entry *)a)->name, ((const lesson_entry *)b)->name);
}

static bool is_lesson(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".md") && strcmp(name, "README.md") && name[0] != '.';
}

void lesson_entry_free(lesson_entry *e)
{
    free(e->path);
    free(e->name);
    free(e->title);
    free(e->summary);
    free(e->quizzes);
    free(e->error);
    *e = (lesson_entry){0};
}

void lesson_catalog_free(lesson_catalog *c)
{
    for (int i = 0; i < c->n; i++) lesson_entry_free(&c->items[i]);
    free(c->items);
    free(c->dir);
    *c = (lesson_catalog){0};
}

lesson_shape lesson_entry_shape(const lesson_entry *e)
{
    return (lesson_shape){e->quizzes ? e->n_steps : 0, e->quizzes};
}

/* Entry `name` of folder dir, its lesson parsed (not checked): title, summary,
 * steps and quizzes, or the first problem. Returns 0, or -1 out of memory
 * (*e then holds what it got, for lesson_entry_free). */
static int fill_entry(lesson_entry *e, const char *dir, const char *name)
{
    *e = (lesson_entry){0};
    size_t n = strlen(dir) + strlen(name) + 2;
    if (!(e->path = malloc(n)) || !(e->name = strdup(name))) return -1;
    snprintf(e->path, n, "%s/%s", dir, name);
    lesson ls;
    lesson_diags dg = {0};
    int rc = lesson_load(e->path, &ls, &dg);
    e->title = strdup(ls.title && *ls.title ? ls.title : name);
    e->summary = strdup(ls.summary ? ls.summary : "");
    e->n_steps = ls.n_steps;
    e->n_quizzes = lesson_quiz_count(&ls);
    e->quizzes = lesson_step_quizzes(&ls);
    if (rc && dg.n) {
        char buf[512];
        e->error = strdup(lesson_diag_format(e->path, &dg.items[0], buf, sizeof buf));
    } else if (rc) {
        e->error = strdup("cannot be read");
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);
    return e->title && e->summary && e->quizzes && (!rc || e->error) ? 0 : -1;
}

static int add_entry(lesson_catalog *c, const char *name)
{
    lesson_entry *items = realloc(c->items, (size_t)(c->n + 1) * sizeof *items);
    if (!items) return -1;
    c->items = items;
    return fill_entry(&c->items[c->n++], c->dir, name);
}

int lesson_catalog_next(const char *path, lesson_entry *next)
{
    char dir[PATH_MAX], best[NAME_MAX + 1] = "";
    const char *slash = strrchr(path, '/'), *name = slash ? slash + 1 : path;
    *next = (lesson_entry){0};
    if (snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".") >= (int)sizeof dir)
        return -1;
    DIR *d = opendir(slash == path ? "/" : dir);
    if (!d) return -1;
    for (struct dirent *de; (de = readdir(d));) /* the first name after this one */
        if (is_lesson(de->d_name) && strcmp(de->d_name, name) > 0 && (!best[0] || strcmp(de->d_name, best) < 0) &&
            strlen(de->d_name) < sizeof best)
            memcpy(best, de->d_name, strlen(de->d_name) + 1);
    closedir(d);
    if (!best[0]) return 1;
    if (!fill_entry(next, slash == path ? "" : dir, best)) return 0;
    lesson_entry_free(next);
    return -1;
}

int lesson_catalog_load(lesson_catalog *c, const char *dir, char *err, size_t errsize)
{
    *c = (lesson_catalog){0};
    if (!dir) {
        snprintf(err, errsize, "the lessons' folder ($ATTNLAB_LESSONS or the installed one) has a path longer than "
                 "the %d bytes a path may have", PATH_MAX - 1);
        return -1;
    }
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errsize, "%s: %s", dir, strerror(errno));
        return -1;
    }
    int ret = -1;
    if (!(c->dir = strdup(dir))) goto oom;
    for (struct dirent *de; (de = readdir(d));)
        if (is_lesson(de->d_name) && add_entry(c, de->d_name)) goto oom;
    qsort(c->items, (size_t)c->n, sizeof *c->items, by_name);
    ret = 0;
    goto out;
oom:
    snprintf(err, errsize, "out of memory");
    lesson_catalog_free(c);
out:
    closedir(d);
    return ret;
}
