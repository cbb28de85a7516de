/* state.c — a step's configuration and view, and the checks of `--check`. */
#include "state.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/base/paths.h"
#include "engine/model/model.h"
#include "engine/model/model_run.h"
#include "engine/run/forward.h"
#include "engine/trace/nonfinite.h"
#include "engine/trace/stages.h"
#include "quiz.h"

const char *const lesson_view_names[LESSON_VIEW_COUNT] = {"single", "grid", "compare", "geometry", "training", "tiles",
                                                              "experts"};
const char *const lesson_panels_names[LESSON_PANELS_COUNT] = {"auto", "shown", "hidden", "side"};

lesson_view lesson_view_default(void)
{
    lesson_view v = {.row = -1};
    snprintf(v.stage, sizeof v.stage, "%s", attn_stage_get(ATTN_STAGE_WEIGHTS)->name);
    return v;
}

enum { L_STAGE, L_HEAD, L_BATCH, L_VIEW, L_COMPARE, L_ROW, L_DECODE, L_HL, L_LAYER, L_TILE };

static bool parse_index(const char *v, int *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    while (*end == ' ') end++;
    if (end == v || *end || errno || n < 0 || n > 1000000) return false;
    *out = (int)n;
    return true;
}

static int pick(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcasecmp(v, names[i])) return i;
    return -1;
}

/* "row 2", "col 0", "cells 1,0 2,0", "none" */
static int parse_highlight(const char *v, lesson_marks *mk, char *why, size_t size)
{
    char word[16];
    int used = 0;
    if (sscanf(v, "%15s %n", word, &used) < 1) {
        snprintf(why, size, "is empty: use 'row N', 'col N', 'cells i,j …' or 'none'");
        return -1;
    }
    const char *rest = v + used;
    if (!strcasecmp(word, "none")) {
        mk->hl = LESSON_HL_NONE;
        return *rest ? (snprintf(why, size, "'none' takes nothing after it"), -1) : 0;
    }
    if (!strcasecmp(word, "row") || !strcasecmp(word, "col") || !strcasecmp(word, "column")) {
        if (!parse_index(rest, &mk->hl_index)) {
            snprintf(why, size, "'%s' needs one index from 0, got '%.30s'", word, rest);
            return -1;
        }
        mk->hl = strcasecmp(word, "row") ? LESSON_HL_COL : LESSON_HL_ROW;
        return 0;
    }
    if (!strcasecmp(word, "cells") || !strcasecmp(word, "cell")) {
        int n = 0;
        const char *p = rest;
        while (*p) {
            int i, j, len = 0;
            if (sscanf(p, " %d , %d %n", &i, &j, &len) < 2 || len == 0 || i < 0 || j < 0) {
                snprintf(why, size, "cells are 'row,col' pairs from 0 separated by spaces, got '%.30s'", p);
                return -1;
            }
            if (n == LESSON_MAX_HL) {
                snprintf(why, size, "at most %d cells", LESSON_MAX_HL);
                return -1;
            }
            mk->hl_cells[n][0] = i;
            mk->hl_cells[n][1] = j;
            n++;
            p += len;
        }
        if (!n) {
            snprintf(why, size, "'cells' needs at least one 'row,col' pair");
            return -1;
        }
        mk->n_hl_cells = n;
        mk->hl = LESSON_HL_CELLS;
        return 0;
    }
    snprintf(why, size, "'%.20s' is not row, col, cells or none", word);
    return -1;
}

static int apply_view(const lesson_setting *s, lesson_view *view, lesson_marks *mk, lesson_diags *dg)
{
    const char *k = s->key, *v = s->value;
    char why[160] = "";
    int n;
    if (!strcmp(k, "stage")) {
        if (attn_stage_index(v) < 0) return lesson_diag_add(dg, s->line, "stage: unknown stage '%.40s'", v), -1;
        snprintf(view->stage, sizeof view->stage, "%s", v);
        mk->line[L_STAGE] = s->line;
    } else if (!strcmp(k, "layer")) {
        if (!parse_index(v, &n))
            return lesson_diag_add(dg, s->line, "layer: '%.40s' is not a whole number from 0", v), -1;
        view->layer = n;
        mk->line[L_LAYER] = s->line;
    } else if (!strcmp(k, "head") || !strcmp(k, "batch_row")) {
        if (!parse_index(v, &n))
            return lesson_diag_add(dg, s->line, "%s: '%.40s' is not a whole number from 0", k, v), -1;
        if (k[0] == 'h') view->head = n, mk->line[L_HEAD] = s->line;
        else view->batch = n, mk->line[L_BATCH] = s->line;
    } else if (!strcmp(k, "view")) {
        if ((n = pick(v, lesson_view_names, LESSON_VIEW_COUNT)) < 0)
            return lesson_diag_add(dg, s->line, "view: '%.40s' is not single, grid, compare, geometry, training, tiles or experts", v), -1;
        view->mode = n;
        mk->line[L_VIEW] = s->line;
    } else if (!strcmp(k, "panels")) {
        if ((n = pick(v, lesson_panels_names, LESSON_PANELS_COUNT)) < 0)
            return lesson_diag_add(dg, s->line, "panels: '%.40s' is not auto, shown, hidden or side", v), -1;
        view->panels = n;
    } else if (!strcmp(k, "compare")) {
        char names[160];
        if ((n = attn_compare_find(v)) < 0)
            return lesson_diag_add(dg, s->line, "compare: '%.40s' is not %s", v, attn_compare_names(names, sizeof names)), -1;
        view->compare = n;
        mk->line[L_COMPARE] = s->line;
    } else if (!strcmp(k, "row")) {
        if (!strcasecmp(v, "none")) view->row = -1;
        else if (parse_index(v, &n)) view->row = n;
        else return lesson_diag_add(dg, s->line, "row: '%.40s' is not a query row from 0 or none", v), -1;
        mk->line[L_ROW] = s->line;
    } else if (!strcmp(k, "decode_step")) {
        if (!strcasecmp(v, "off")) view->decode_step = 0;
        else if (parse_index(v, &n)) view->decode_step = n;
        else return lesson_diag_add(dg, s->line, "decode_step: '%.40s' is not a step from 1 or off", v), -1;
        mk->line[L_DECODE] = s->line;
    } else if (!strcmp(k, "tile")) { /* counted from 1, as the view's caption counts key tiles */
        if (!parse_index(v, &n) || n < 1)
            return lesson_diag_add(dg, s->line, "tile: '%.40s' is not a key tile from 1", v), -1;
        view->tile = n - 1;
        mk->line[L_TILE] = s->line;
    } else if (!strcmp(k, "highlight")) {
        if (parse_highlight(v, mk, why, sizeof why))
            return lesson_diag_add(dg, s->line, "highlight: %s", why), -1;
        mk->line[L_HL] = s->line;
    }
    return 0;
}

/* checkpoint = N | final: the model set so far as saved at training step N
 * (M/checkpoints/stepN, attn_model_checkpoint), or as training ended (M). */
static int apply_checkpoint(const lesson_setting *s, attn_config *cfg, lesson_diags *dg)
{
    char base[PATH_MAX], dir[PATH_MAX];
    long step = -1;
    int n = 0;
    attn_error err;
    if (!cfg->model)
        return lesson_diag_add(dg, s->line, "checkpoint: set 'model = NAME' first (a model trained with checkpoints)"), -1;
    if (strcasecmp(s->value, "final") && !parse_index(s->value, &n))
        return lesson_diag_add(dg, s->line, "checkpoint: '%.40s' is not a training step from 0 or final", s->value), -1;
    if (attn_model_base(cfg->model, base, sizeof base, &step, &err) ||
        (strcasecmp(s->value, "final") ? attn_model_checkpoint(base, n, dir, sizeof dir, &err)
                                       : attn_path_format(dir, sizeof dir, &err, "%s", base)) ||
        attn_config_set(cfg, "model", dir, &err))
        return lesson_diag_add(dg, s->line, "%s", err.msg), -1;
    return 0;
}

/* A step's settings over the state so far. mk->config_line follows the last
 * config (not view) setting; work, when not NULL, counts the settings. */
static int apply(const lesson_step *st, attn_config *cfg, lesson_view *view, lesson_marks *mk, lesson_diags *dg,
                 lesson_check_work *work)
{
    mk->hl = LESSON_HL_NONE; /* a highlight belongs to its own step */
    mk->line[L_HL] = 0;
    for (int i = 0; i < st->n_settings; i++) {
        const lesson_setting *s = &st->settings[i];
        if (work) work->settings++;
        if (lesson_is_view_key(s->key)) {
            if (apply_view(s, view, mk, dg)) return -1;
            continue;
        }
        attn_error err;
        mk->config_line = s->line;
        if (!strcmp(s->key, "checkpoint")) {
            if (apply_checkpoint(s, cfg, dg)) return -1;
            continue;
        }
        if (attn_config_set(cfg, s->key, s->value, &err)) {
            lesson_diag_add(dg, s->line, "%s", err.msg);
            return -1;
        }
    }
    return 0;
}

/* The default state, then the introduction's settings. */
static int state_start(const lesson *ls, attn_config *cfg, lesson_view *view, lesson_marks *mk, lesson_diags *dg,
                       lesson_check_work *work)
{
    attn_config_init(cfg);
    *view = lesson_view_default();
    *mk = (lesson_marks){0};
    return apply(&ls->intro, cfg, view, mk, dg, work);
}

int lesson_step_state(const lesson *ls, int step, attn_config *cfg, lesson_view *view, lesson_marks *marks,
                      lesson_diags *dg)
{
    lesson_marks scratch;
    lesson_marks *mk = marks ? marks : &scratch;
    if (state_start(ls, cfg, view, mk, dg, NULL)) return -1;
    if (step < 0 || step >= ls->n_steps) return lesson_diag_add(dg, 0, "no step %d", step + 1), -1;
    for (int i = 0; i <= step; i++)
        if (apply(&ls->steps[i], cfg, view, mk, dg, NULL)) return -1;
    return 0;
}

/* The line to blame for a problem of the whole step's configuration: the
 * last config setting up to it, else its heading. */
static int config_line(const lesson *ls, int step, const lesson_marks *mk)
{
    return mk->config_line ? mk->config_line : ls->steps[step].line;
}

static int check_quizzes(const lesson *ls, int step, const attn_trace *tr, const lesson_view *view,
                         lesson_diags *dg)
{
    const lesson_step *st = &ls->steps[step];
    int bad = 0;
    for (int q = 0; q < st->n_quizzes; q++) {
        const lesson_quiz *qz = &st->quizzes[q];
        if (qz->kind != LESSON_QUIZ_CELLS) continue;
        const char *stage = qz->stage[0] ? qz->stage : view->stage;
        if (view->mode != LESSON_VIEW_SINGLE) {
            lesson_diag_add(dg, qz->line, "a cell quiz needs view = single (the step shows %s)",
                            view->mode == LESSON_VIEW_GRID      ? "the grid" :
                            view->mode == LESSON_VIEW_GEOMETRY ? "the geometry view" :
                            view->mode == LESSON_VIEW_TRAINING ? "the training curves" :
                            view->mode == LESSON_VIEW_TILES    ? "the FlashAttention view" :
                            view->mode == LESSON_VIEW_EXPERTS  ? "the expert view" :
                                                                 "the compare view");
            bad = -1;
            continue;
        }
        if (attn_stage_index(stage) != attn_stage_index(view->stage)) {
            lesson_diag_add(dg, qz->line, "the cell quiz is on stage %s but the step shows %s", stage, view->stage);
            bad = -1;
            continue;
        }
        char why[160];
        int rows = 0, cols = 0;
        int n = lesson_quiz_cells(qz, tr, stage, view->layer, view->batch, view->head, NULL, &rows, &cols, why, sizeof why);
        if (n >= 0 && (qz->rows[1] > rows || qz->cols[1] > cols)) {
            bool r = qz->rows[1] > rows;
            lesson_diag_add(dg, r ? qz->rows_line : qz->cols_line, "%s: %d..%d is outside %s's %d %s (0..%d)",
                            r ? "rows" : "cols", r ? qz->rows[0] : qz->cols[0], (r ? qz->rows[1] : qz->cols[1]) - 1, stage,
                            r ? rows : cols, r ? "rows" : "columns", (r ? rows : cols) - 1);
            bad = -1;
            continue;
        }
        if (n < 0) {
            lesson_diag_add(dg, qz->line, "%s", why);
            bad = -1;
        } else if (n == 0) {
            lesson_diag_add(dg, qz->line, "quiz has no right answer for this step's configuration (click = %s on %s, "
                                          "head %d, batch row %d)",
                            lesson_cell_rule_name(qz->rule), stage, view->head, view->batch);
            bad = -1;
        }
    }
    return bad;
}

/* The config a step runs: its settings, or in decode mode the first
 * decode_step tokens with the rest in the KV cache. 0, or -1 after a message. */
static int config_to_run(const lesson *ls, int step, const attn_config *cfg, const lesson_view *view,
                         const lesson_marks *mk, attn_config *run, lesson_diags *dg)
{
    attn_error err;
    int line = config_line(ls, step, mk);
    if (view->decode_step <= 0) {
        if (!attn_config_copy(run, cfg, &err)) return 0;
        return lesson_diag_add(dg, 0, "%s", err.msg), -1;
    }
    if (cfg->source_tokens)
        return lesson_diag_add(dg, mk->line[L_DECODE], "decode_step: decoding is for self-attention (source_tokens is set)"), -1;
    int len = 0;
    if (cfg->model) { /* a model's decoding steps through its own tokens */
        attn_model m;
        attn_status st = attn_model_load(cfg->model, &m, &err);
        if (!st) {
            st = attn_model_decode(&m, cfg, view->decode_step, run, &len, &err);
            attn_model_free(&m);
        }
        if (st) return lesson_diag_add(dg, line, "%s", err.msg), -1;
    } else if (attn_config_decode(cfg, view->decode_step, run, &len, &err)) /* the config itself is invalid */
        return lesson_diag_add(dg, line, "%s", err.msg), -1;
    if (view->decode_step > len)
        lesson_diag_add(dg, mk->line[L_DECODE], "decode_step: %d is past the last token (the longest row has %d)",
                        view->decode_step, len);
    else if (cfg->past)
        lesson_diag_add(dg, mk->line[L_DECODE], "decode_step: decoding sets past itself; remove past = %d", cfg->past);
    else
        return 0;
    attn_config_free(run);
    return -1;
}

/* Layer, stage, head, batch row and compare toggle against the trace; the
 * stage becomes its full name in a trace of several layers. Returns 1 if bad. */
static int check_view(const lesson *ls, int step, const attn_trace *tr, lesson_view *view, const lesson_marks *mk,
                      lesson_diags *dg)
{
    const attn_dims *d = &tr->dims;
    int bad = 0;
    if (view->layer >= tr->n_layers) {
        lesson_diag_add(dg, mk->line[L_LAYER], "layer: %d is out of range (this step's trace has %d layer%s)",
                        view->layer, tr->n_layers, tr->n_layers == 1 ? "" : "s");
        bad = 1;
    } else if (tr->n_layers > 1) { /* the stage of that layer: "layers.2.weights" */
        char full[ATTN_MAX_NAME];
        snprintf(view->stage, sizeof view->stage, "%s",
                 attn_tensor_name(view->layer, tr->n_layers, view->stage, full, sizeof full));
    }
    if (!bad && !attn_trace_find(tr, view->stage)) {
        const attn_stage_info *in = attn_stage_lookup(view->stage);
        const char *why = in ? attn_stage_absent_why(in) : "";
        lesson_diag_add(dg, mk->line[L_STAGE] ? mk->line[L_STAGE] : ls->steps[step].line,
                        "stage: this step's configuration does not produce %s%s%s%s", view->stage, *why ? " (" : "",
                        why, *why ? ")" : "");
        bad = 1;
    }
    if (view->head >= d->h)
        bad = 1, lesson_diag_add(dg, mk->line[L_HEAD], "head: %d is out of range (heads = %d)", view->head, d->h);
    if (view->batch >= d->b)
        bad = 1, lesson_diag_add(dg, mk->line[L_BATCH], "batch_row: %d is out of range (batch rows = %d)",
                                 view->batch, d->b);
    const attn_setting *toggled = attn_compare_at(view->compare);
    if (view->mode == LESSON_VIEW_COMPARE && d->cross && toggled->compare.self_only)
        bad = 1, lesson_diag_add(dg, mk->line[L_VIEW], "view = compare: cross-attention has no %s to compare",
                                 toggled->compare.label);
    if (view->mode == LESSON_VIEW_TILES && !attn_trace_stage(tr, view->layer, ATTN_STAGE_TILE_MAX))
        bad = 1, lesson_diag_add(dg, mk->line[L_VIEW], "view = tiles: this step's configuration has no tiles (tiles = BQxBK)");
    else if (view->tile > 0 && view->tile >= d->T)
        bad = 1, lesson_diag_add(dg, mk->line[L_TILE], "tile: %d is past the last key tile (this step's trace has %d)",
                                 view->tile + 1, d->T);
    return bad;
}

/* The bar-chart row and the highlight inside the picture. Returns 1 if bad. */
static int check_picture(const attn_trace *tr, const lesson_view *view, const lesson_marks *mk, lesson_diags *dg)
{
    attn_matrix m;
    int bad = 0, hl_line = mk->line[L_HL];
    attn_trace_matrix(tr, view->stage, view->batch, view->head, &m);
    if (view->row >= m.rows)
        bad = 1, lesson_diag_add(dg, mk->line[L_ROW], "row: %d is outside %s's %d rows", view->row, view->stage, m.rows);
    if (mk->hl == LESSON_HL_ROW && mk->hl_index >= m.rows)
        bad = 1, lesson_diag_add(dg, hl_line, "highlight: row %d is outside %s's %d rows", mk->hl_index,
                                 view->stage, m.rows);
    if (mk->hl == LESSON_HL_COL && mk->hl_index >= m.cols)
        bad = 1, lesson_diag_add(dg, hl_line, "highlight: column %d is outside %s's %d columns", mk->hl_index,
                                 view->stage, m.cols);
    for (int i = 0; mk->hl == LESSON_HL_CELLS && i < mk->n_hl_cells; i++)
        if (mk->hl_cells[i][0] >= m.rows || mk->hl_cells[i][1] >= m.cols) {
            lesson_diag_add(dg, hl_line, "highlight: cell %d,%d is outside %s's %d × %d", mk->hl_cells[i][0],
                            mk->hl_cells[i][1], view->stage, m.rows, m.cols);
            return 1;
        }
    return bad;
}

/* The trace of step `step` from its state (cfg, view and mk built through
 * it): its configuration through the engine, in decode mode its first
 * decode_step tokens. 0, or -1 after a message (*tr is then empty). */
static int run_trace(const lesson *ls, int step, const attn_config *cfg, const lesson_view *view,
                     const lesson_marks *mk, attn_trace *tr, lesson_diags *dg)
{
    attn_config run;
    attn_error err;
    int rc = 0;
    *tr = (attn_trace){0};
    if (config_to_run(ls, step, cfg, view, mk, &run, dg)) return -1;
    if (attn_trace_run(&run, NULL, tr, &err)) {
        lesson_diag_add(dg, config_line(ls, step, mk), "%s", err.msg);
        rc = -1;
    }
    attn_config_free(&run);
    return rc;
}

/* Step `step`'s view, picture and quizzes against its trace. 0 or -1. */
static int check_step(const lesson *ls, int step, const attn_trace *tr, lesson_view view, const lesson_marks *mk,
                      lesson_diags *dg)
{
    if (check_view(ls, step, tr, &view, mk, dg)) return -1;
    int bad = check_picture(tr, &view, mk, dg);
    return check_quizzes(ls, step, tr, &view, dg) || bad ? -1 : 0; /* both say what is wrong */
}

int lesson_step_run(const lesson *ls, int step, attn_trace *out, lesson_diags *dg)
{
    attn_config cfg;
    lesson_view view;
    lesson_marks mk;
    attn_trace tr = {0};
    int ret = -1;
    if (out) *out = (attn_trace){0};
    if (!lesson_step_state(ls, step, &cfg, &view, &mk, dg) && !run_trace(ls, step, &cfg, &view, &mk, &tr, dg) &&
        !check_step(ls, step, &tr, view, &mk, dg)) {
        ret = 0;
        if (out) *out = tr, tr = (attn_trace){0};
    }
    attn_trace_free(&tr);
    attn_config_free(&cfg);
    return ret;
}

/* ---- measured numbers */

typedef struct lesson_measure_ref {
    const lesson_measure *m;
    int target; /* the step it measures on */
} measure_ref;

/* By step, and in a step the measures on its own configuration first, then
 * those of each compare toggle together. */
static int by_target(const void *a, const void *b)
{
    const measure_ref *x = a, *y = b;
    if (x->target != y->target) return (x->target > y->target) - (x->target < y->target);
    return (x->m->toggle > y->m->toggle) - (x->m->toggle < y->m->toggle);
}

/* Step `step`'s trace, from its state (cfg, view, mk), with the compare
 * view's toggle `toggle` applied to its configuration: what the compare
 * view's second pane shows. 0, or -1 after a message at `line`. */
static int step_run_toggled(const lesson *ls, int step, const attn_config *cfg, const lesson_view *view,
                            const lesson_marks *mk, int toggle, int line, attn_trace *out, lesson_diags *dg)
{
    attn_config run;
    lesson_diags quiet = {0};
    attn_error err;
    int ret = -1;
    *out = (attn_trace){0};
    if (!config_to_run(ls, step, cfg, view, mk, &run, &quiet)) { /* else the step's own run said why */
        if (attn_compare_apply(&run, toggle, &err) || attn_trace_run(&run, NULL, out, &err))
            lesson_diag_add(dg, line, "toggle=%s: %s", attn_compare_at(toggle)->compare.name, err.msg);
        else
            ret = 0;
        attn_config_free(&run);
    }
    lesson_diags_free(&quiet);
    return ret;
}

/* Every measure of the lesson with the step it is measured on, in step
 * order; NULL with *n = 0 when there are none. -1 when out of memory. The
 * introduction's, shown with step 1, measure on step 1. */
static int measure_refs(const lesson *ls, measure_ref **out, int *n)
{
    int total = ls->intro.n_measures;
    for (int i = 0; i < ls->n_steps; i++) total += ls->steps[i].n_measures;
    *out = NULL;
    *n = 0;
    if (!total) return 0;
    measure_ref *r = malloc((size_t)total * sizeof *r);
    if (!r) return -1;
    for (int i = -1; i < ls->n_steps; i++) {
        const lesson_step *st = i < 0 ? &ls->intro : &ls->steps[i];
        for (int k = 0; k < st->n_measures; k++) {
            const lesson_measure *m = &st->measures[k];
            r[(*n)++] = (measure_ref){m, m->step >= 0 ? m->step : i < 0 ? 0 : i};
        }
    }
    qsort(r, (size_t)*n, sizeof *r, by_target);
    *out = r;
    return 0;
}

/* The measures r[0..n) on step `step`'s trace tr, its state cfg and view.
 * Returns 1 if any is wrong. */
static int check_measures(int step, const attn_trace *tr, const attn_config *cfg, const lesson_view *view,
                          const measure_ref *r, int n, lesson_measure_files *files, lesson_diags *dg)
{
    int bad = 0;
    char dir[4096];
    attn_error err;
    const char *model_dir = cfg->model && !attn_model_find(cfg->model, dir, sizeof dir, &err) ? dir : NULL;
    for (int i = 0; i < n; i++) {
        const lesson_measure *m = r[i].m;
        double v = 0;
        char why[300];
        if (lesson_measure_eval(m, tr, view->layer, view->head, view->batch, view->stage, model_dir, files, &v,
                                why, sizeof why)) {
            lesson_diag_add(dg, m->line, "{{… | %s}}: %s", m->spec, why);
            bad = 1;
        } else if (!lesson_measure_agrees(m, v)) {
            /* a NaN: where the step's trace first holds one says why */
            char where[300] = "";
            attn_nonfinite nf;
            if (!isfinite(v) && attn_nonfinite_find(tr, &nf)) {
                where[0] = ' ', where[1] = '(';
                attn_nonfinite_text(tr, &nf, where + 2, sizeof where - 3);
                strcat(where, ")");
            }
            lesson_diag_add(dg, m->line, "{{… | %s}}: the text shows %g but step %d%s%s measures %.6g%s", m->spec,
                            m->shown, step + 1, m->toggle >= 0 ? " toggled: " : "",
                            m->toggle >= 0 ? attn_compare_at(m->toggle)->compare.name : "", v, where);
            bad = 1;
        }
    }
    return bad;
}

/* The measures r[0..n) of step `step` (all measured on it): those on its own
 * trace, then each toggle's on a trace of its own; the files they read kept in
 * files. Returns 1 if any is wrong. */
static int step_measures(const lesson *ls, int step, const attn_trace *tr, const attn_config *cfg,
                         const lesson_view *view, const lesson_marks *mk, const measure_ref *r, int n,
                         lesson_measure_files *files, lesson_diags *dg)
{
    int own = 0, bad = 0;
    while (own < n && r[own].m->toggle < 0) own++;
    if (own && check_measures(step, tr, cfg, view, r, own, files, dg)) bad = 1;
    for (int k = own, end; k < n; k = end) {
        for (end = k; end < n && r[end].m->toggle == r[k].m->toggle; end++) {}
        attn_trace t2;
        if (step_run_toggled(ls, step, cfg, view, mk, r[k].m->toggle, r[k].m->line, &t2, dg) ||
            check_measures(step, &t2, cfg, view, r + k, end - k, files, dg))
            bad = 1;
        attn_trace_free(&t2);
    }
    return bad;
}

/* ---- the whole lesson, a step at a time
 *
 * One state carried from step to step, each step's settings applied once
 * (building every step's state again from step 1, lesson_step_state's way,
 * made --check quadratic: 20,000 steps took 43 s); and one trace for the steps
 * that change only the view, as most do: the engine runs again when a step
 * sets the configuration or the decode step. */

void lesson_checker_init(lesson_checker *c, const lesson *ls, lesson_check_work *work, lesson_diags *dg)
{
    *c = (lesson_checker){.ls = ls, .work = work};
    if (!ls->n_steps) {
        c->broken = true; /* nothing to check, and nothing wrong */
        return;
    }
    if (measure_refs(ls, &c->refs, &c->n_refs)) {
        lesson_diag_add(dg, 0, "out of memory");
        c->broken = c->bad = true;
        return;
    }
    c->started = true;
    /* a setting that fails fails every step from it on, with the same problem: said once */
    c->broken = c->bad = state_start(ls, &c->cfg, &c->view, &c->mk, dg, work) != 0;
}

bool lesson_checker_step(lesson_checker *c, lesson_diags *dg)
{
    const lesson *ls = c->ls;
    if (c->broken || c->next >= ls->n_steps) return false;
    int i = c->next++;
    if (apply(&ls->steps[i], &c->cfg, &c->view, &c->mk, dg, c->work)) {
        c->bad = c->broken = true;
        return false;
    }
    bool config = false; /* the step sets the configuration */
    for (int k = 0; k < ls->steps[i].n_settings; k++) config |= !lesson_is_view_key(ls->steps[i].settings[k].key);
    if (!c->have || config || c->view.decode_step != c->decode_step) {
        attn_trace_free(&c->tr);
        c->failed = run_trace(ls, i, &c->cfg, &c->view, &c->mk, &c->tr, dg) != 0;
        c->have = true;
        c->decode_step = c->view.decode_step;
        if (c->work) c->work->runs++;
    }
    /* a run that failed fails the steps that share it, with the problem said once */
    if (c->failed || check_step(ls, i, &c->tr, c->view, &c->mk, dg)) c->bad = true; /* on to the next step */
    int first = c->at; /* the numbers its prose measures, and any other step's measured on it */
    while (c->at < c->n_refs && c->refs[c->at].target == i) c->at++;
    if (!c->failed && c->at > first &&
        step_measures(ls, i, &c->tr, &c->cfg, &c->view, &c->mk, c->refs + first, c->at - first, &c->files, dg))
        c->bad = true;
    return c->next < ls->n_steps;
}

void lesson_checker_stop(lesson_checker *c) { c->broken = c->bad = true; }

int lesson_checker_end(lesson_checker *c, lesson_diags *dg)
{
    const lesson *ls = c->ls;
    while (lesson_checker_step(c, dg)) {} /* the steps not yet checked */
    for (; !c->broken && c->at < c->n_refs; c->at++) { /* step= past the last step */
        if (c->refs[c->at].target < ls->n_steps) continue;
        lesson_diag_add(dg, c->refs[c->at].m->line, "{{… | %s}}: step %d: the lesson has %d steps",
                        c->refs[c->at].m->spec, c->refs[c->at].target + 1, ls->n_steps);
        c->bad = true;
    }
    free(c->refs);
    if (c->work) c->work->tokenizer_loads += c->files.tokenizer_loads, c->work->card_loads += c->files.card_loads;
    lesson_measure_files_free(&c->files);
    attn_trace_free(&c->tr);
    if (c->started) attn_config_free(&c->cfg);
    bool bad = c->bad;
    *c = (lesson_checker){0};
    return bad ? -1 : 0;
}

int lesson_check_counted(const lesson *ls, lesson_diags *dg, lesson_check_work *work)
{
    lesson_checker c;
    lesson_checker_init(&c, ls, work, dg);
    return lesson_checker_end(&c, dg);
}

int lesson_check(const lesson *ls, lesson_diags *dg)
{
    return lesson_check_counted(ls, dg, NULL);
}
