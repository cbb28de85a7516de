/* guard.c — before any work, a command's output (-o FILE) is checked against
 * every file the command reads, so that writing it can never replace one:
 *   - the files named on the command line: --weights, --input, --lesson, the
 *     trace `render FILE` draws (the same file, through any link or spelling);
 *   - the model folder, and for a training checkpoint (--checkpoint N, or
 *     --model M/checkpoints/stepN) the model M it belongs to, with all its
 *     checkpoints: nothing inside M is written;
 *   - with --lesson, every model the lesson opens (its `model =` settings, the
 *     models its measures read), each with its checkpoints;
 *   - with --picker, the lessons folders it lists;
 *   - always, the folder of the progress file (progress.json, its lock and
 *     the copies moved aside), which the lesson views read and write.
 * A refused output is one line and exit 2. Also here: the note said when a
 * model's bare name is also a folder here (the name means the shipped one). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "engine/base/fileio.h"
#include "engine/model/model.h"
#include "lesson/catalog.h"
#include "lesson/lesson.h"
#include "lesson/progress.h"

/* out is not inside folder dir; the message says "OUT: lies inside <what>
 * DIR<why>; write it elsewhere". A folder that does not exist holds nothing. */
static attn_status outside(const char *out, const char *dir, const char *what, const char *why, attn_error *err)
{
    attn_status st = attn_file_check_outside(out, dir, err);
    if (st && strstr(err->msg, ": lies inside the model folder ")) /* its words, for a folder of another kind */
        return attn_fail(err, st, "%s: lies inside %s %s%s; write it elsewhere", out, what, dir, why);
    return st;
}

/* out is not inside the model `name` opens, nor inside the model folder that
 * model is a checkpoint of. A model that cannot be found is left for the
 * command to report. */
static attn_status outside_model(const char *out, const char *name, attn_error *err)
{
    char base[PATH_MAX];
    long step;
    attn_error ignore;
    if (!name || !*name || attn_model_base(name, base, sizeof base, &step, &ignore)) return ATTN_OK;
    return attn_file_check_outside(out, base, err);
}

/* The models a lesson's settings (`model = …`) and measures (model=NAME) name,
 * in every step: the folders its steps open. A `checkpoint =` setting opens a
 * folder of the model set before it, which that model's check covers. */
static attn_status outside_lesson_models(const char *out, const char *path, attn_error *err)
{
    lesson ls;
    lesson_diags dg = {0};
    attn_status st = ATTN_OK;
    const char *last = ""; /* a model named again and again is checked once in a row */
    lesson_load(path, &ls, &dg); /* a lesson with problems is filled as far as it got; render reports them */
    for (int i = -1; i < ls.n_steps && !st; i++) {
        const lesson_step *s = i < 0 ? &ls.intro : &ls.steps[i];
        for (int j = 0; j < s->n_settings && !st; j++)
            if (!strcmp(s->settings[j].key, "model") && strcmp(s->settings[j].value, last))
                st = outside_model(out, last = s->settings[j].value, err);
        for (int j = 0; j < s->n_measures && !st; j++)
            if (s->measures[j].model[0] && strcmp(s->measures[j].model, last))
                st = outside_model(out, last = s->measures[j].model, err);
    }
    lesson_free(&ls);
    lesson_diags_free(&dg);
    return st;
}

/* The picker's lessons: the catalog of each interface language. */
static attn_status outside_lessons(const char *out, attn_error *err)
{
    static const char *const LANGS[] = {"en", "zh"};
    char dir[PATH_MAX];
    attn_status st = ATTN_OK;
    for (int i = 0; i < 2 && !st; i++)
        if (lesson_catalog_dir(LANGS[i], dir, sizeof dir)) st = outside(out, dir, "the lessons folder", " that --picker lists", err);
    return st;
}

/* The progress file's folder: progress.json, PATH.lock, PATH.bad-… */
static attn_status outside_progress(const char *out, attn_error *err)
{
    char path[PATH_MAX];
    if (!lesson_progress_path(path, sizeof path)) return ATTN_OK;
    char *slash = strrchr(path, '/');
    if (!slash || slash == path) return ATTN_OK;
    *slash = '\0';
    return outside(out, path, "the progress folder", ", where the lessons' progress is kept", err);
}

int cli_guard_output(const char *cmd, const cli_args *a)
{
    if (!a->output) return CLI_OK;
    const char *inputs[8] = {a->cfg.weights_path, a->cfg.input_path, a->pic.lesson};
    int n = 3;
    for (int i = 0; i < a->n_positional && n < 8; i++) inputs[n++] = a->positional[i];
    attn_error err;
    attn_status st = attn_file_check_output(a->output, inputs, n, &err); /* never a folder, a device, an input */
    if (!st) st = outside_model(a->output, a->cfg.model, &err);
    if (!st && a->pic.lesson) st = outside_lesson_models(a->output, a->pic.lesson, &err);
    if (!st && a->pic.picker) st = outside_lessons(a->output, &err);
    if (!st) st = outside_progress(a->output, &err);
    if (!st) return CLI_OK;
    fprintf(stderr, "attnlab %s: %s\n", cmd, err.msg);
    return CLI_EUSAGE;
}

void cli_note_model(const char *cmd, const char *name)
{
    char dir[PATH_MAX];
    struct stat here, shipped;
    attn_error ignore;
    if (!attn_model_is_bare(name) || stat(name, &here) || !S_ISDIR(here.st_mode) ||
        attn_model_find(name, dir, sizeof dir, &ignore) || stat(dir, &shipped) ||
        (here.st_dev == shipped.st_dev && here.st_ino == shipped.st_ino))
        return;
    fprintf(stderr, "attnlab %s: note: --model %s is the shipped model (%s); for the folder %s here, give "
            "--model ./%s\n", cmd, name, dir, name, name);
}
