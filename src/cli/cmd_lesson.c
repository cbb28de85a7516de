/* cmd_lesson.c — attnlab lesson FILE, lesson --check FILE..., lessons. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/base/utf8.h"
#include "lesson/catalog.h"
#include "lesson/lesson.h"
#include "lesson/progress.h"
#include "lesson/state.h"

static void lesson_usage(void)
{
    printf("Usage: attnlab lesson [--lang en|zh] [--step N] [--present] FILE.md\n"
           "       attnlab lesson --check FILE.md...\n\n"
           "Opens a lesson in the visualizer: its steps in a panel beside the heatmaps,\n"
           "Space / Backspace for the next / previous step. --present: presenter mode\n"
           "(F5: fullscreen, large text and step titles, the toolbar when the mouse moves).\n\n"
           "--check parses every step and quiz, runs every step's configuration through\n"
           "the engine and prints each problem as FILE:LINE: message (exit 2 if any).\n"
           "The format is described in lessons/README.md.\n");
}

static void lessons_usage(void)
{
    printf("Usage: attnlab lessons [--lang en|zh] [--present]  open the lesson picker\n"
           "       attnlab lessons --list [--lang en|zh] print the course and your progress\n"
           "       attnlab lessons --reset-progress     forget every lesson's progress\n\n"
           "The language follows --lang, else the locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG).\n"
           "Progress is kept in $XDG_STATE_HOME/attnlab/progress.json\n"
           "(~/.local/state/attnlab/progress.json when XDG_STATE_HOME is not set).\n");
}

static int check_files(char **files, int n)
{
    int bad = 0, steps = 0, quizzes = 0;
    for (int i = 0; i < n; i++) {
        lesson ls;
        lesson_diags dg = {0};
        int rc = lesson_load(files[i], &ls, &dg);
        if (!rc) rc = lesson_check(&ls, &dg);
        else if (ls.n_steps) lesson_check(&ls, &dg); /* syntax problems: still report the rest */
        char buf[600];
        for (int k = 0; k < dg.n; k++) fprintf(stderr, "%s\n", lesson_diag_format(files[i], &dg.items[k], buf, sizeof buf));
        bad += dg.n;
        steps += ls.n_steps;
        quizzes += lesson_quiz_count(&ls);
        lesson_free(&ls);
        lesson_diags_free(&dg);
    }
    if (bad) {
        fprintf(stderr, "attnlab lesson --check: %d problem%s\n", bad, bad == 1 ? "" : "s");
        return CLI_EUSAGE;
    }
    printf("%d lesson%s, %d steps, %d quizzes: no problems\n", n, n == 1 ? "" : "s", steps, quizzes);
    return CLI_OK;
}

/* --lang value, checked; NULL on a bad one (message printed). */
static const char *lang_arg(const char *cmd, const char *v)
{
    if (v && (!strcmp(v, "en") || !strcmp(v, "zh"))) return v;
    fprintf(stderr, "attnlab %s: --lang: '%s' is not en or zh\n", cmd, v ? v : "");
    return NULL;
}

int cmd_lesson(int argc, char **argv)
{
    bool check = false, present = false;
    const char *lang = NULL;
    int step = 1;
    char **files = calloc((size_t)argc + 1, sizeof *files);
    int n = 0, ret = CLI_EUSAGE;
    if (!files) return CLI_EFILE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            lesson_usage();
            ret = CLI_OK;
            goto out;
        } else if (!strcmp(a, "--check")) {
            check = true;
        } else if (!strcmp(a, "--present")) {
            present = true;
        } else if (!strcmp(a, "--lang")) {
            if (!(lang = lang_arg("lesson", i + 1 < argc ? argv[++i] : NULL))) goto out;
        } else if (!strcmp(a, "--step")) {
            char *end;
            long v = i + 1 < argc ? strtol(argv[++i], &end, 10) : 0;
            if (v < 1 || v > 1000 || *end) {
                fprintf(stderr, "attnlab lesson: --step: '%s' is not a step number from 1\n", argv[i]);
                goto out;
            }
            step = (int)v;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "attnlab lesson: unknown option '%s' (see attnlab lesson --help)\n", a);
            goto out;
        } else {
            files[n++] = argv[i];
        }
    }
    if (check) {
        if (!n) {
            fprintf(stderr, "attnlab lesson --check: no files (attnlab lesson --check lessons/*/*.md)\n");
            goto out;
        }
        ret = check_files(files, n);
        goto out;
    }
    if (n != 1) {
        fprintf(stderr, "attnlab lesson: give one lesson file (or --check FILE...)\n");
        goto out;
    }
    cli_reserve_window();
    ret = sdl_lesson_window(files[0], step - 1, lang ? lang : lesson_lang_from_env(), present);
out:
    free(files);
    return ret;
}

static int list_course(const char *lang)
{
    char dir[PATH_MAX], err[512], path[PATH_MAX];
    lesson_catalog cat;
    if (lesson_catalog_load(&cat, lesson_catalog_dir(lang, dir, sizeof dir), err, sizeof err)) {
        fprintf(stderr, "attnlab lessons: %s\n", err);
        return CLI_EFILE;
    }
    lesson_progress *pg = NULL;
    if (lesson_progress_path(path, sizeof path))
        pg = lesson_progress_open(path, LESSON_PROGRESS_LOCK_MS, err, sizeof err);
    if (pg && err[0]) fprintf(stderr, "attnlab lessons: %s\n", err);
    for (int i = 0; i < cat.n; i++) {
        lesson_entry *e = &cat.items[i];
        lesson_shape shape = lesson_entry_shape(e);
        lesson_record r = pg ? lesson_progress_get(pg, e->name, &shape) : (lesson_record){0};
        /* a file's name and title reach the terminal: no escape sequence or line break of theirs */
        printf("%-26s %s\n", attn_utf8_one_line(e->name), attn_utf8_one_line(e->title));
        if (e->error) printf("    error: %s\n", attn_utf8_one_line(e->error));
        else if (r.finished) printf("    finished · quizzes %d/%d right\n", r.quizzes_right, e->n_quizzes);
        else if (r.reached_end) /* not finished: the quizzes are part of it */
            printf("    last step reached · quizzes %d/%d right: not finished\n", r.quizzes_right, e->n_quizzes);
        else if (r.step) printf("    step %d / %d · quizzes %d/%d right\n", r.step, e->n_steps, r.quizzes_right,
                                e->n_quizzes);
        else printf("    %d steps · %d quizzes · not started\n", e->n_steps, e->n_quizzes);
    }
    lesson_progress_close(pg);
    lesson_catalog_free(&cat);
    return CLI_OK;
}

static int reset_progress(void)
{
    char path[PATH_MAX], err[512];
    if (!lesson_progress_path(path, sizeof path)) {
        fprintf(stderr, "attnlab lessons: no progress file: neither XDG_STATE_HOME nor HOME is set, or the path is "
                "longer than %d bytes\n", PATH_MAX - 1);
        return CLI_EFILE;
    }
    /* a corrupt file is moved aside under the lock: by the save, if another instance holds it now,
     * so that the command waits for it once (LESSON_PROGRESS_LOCK_MS) at most */
    lesson_progress *pg = lesson_progress_open(path, 0, err, sizeof err);
    if (!pg) return fprintf(stderr, "attnlab lessons: out of memory\n"), CLI_EFILE;
    if (err[0] && !lesson_progress_unsaved(pg)) fprintf(stderr, "attnlab lessons: %s\n", err); /* moved aside */
    lesson_progress_reset(pg, NULL);
    lesson_progress_status st = lesson_progress_save(pg, err, sizeof err);
    lesson_progress_close(pg);
    if (st < 0) {
        fprintf(stderr, "attnlab lessons: progress not saved: %s%s\n", err,
                st == LESSON_PROGRESS_BUSY ? "; nothing was reset: try again once it has finished" : "");
        return CLI_EFILE;
    }
    if (st == LESSON_PROGRESS_MOVED) fprintf(stderr, "attnlab lessons: %s\n", err);
    printf("progress reset: %s\n", path);
    return CLI_OK;
}

int cmd_lessons(int argc, char **argv)
{
    const char *lang = NULL;
    bool list = false, reset = false, present = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return lessons_usage(), CLI_OK;
        if (!strcmp(a, "--list")) list = true;
        else if (!strcmp(a, "--reset-progress")) reset = true;
        else if (!strcmp(a, "--present")) present = true;
        else if (!strcmp(a, "--lang")) {
            if (!(lang = lang_arg("lessons", i + 1 < argc ? argv[++i] : NULL))) return CLI_EUSAGE;
        } else {
            fprintf(stderr, "attnlab lessons: unknown argument '%s' (see attnlab lessons --help)\n", a);
            return CLI_EUSAGE;
        }
    }
    if (!lang) lang = lesson_lang_from_env();
    if (reset) return reset_progress();
    if (list) return list_course(lang);
    cli_reserve_window();
    return sdl_lesson_window(NULL, 0, lang, present);
}
