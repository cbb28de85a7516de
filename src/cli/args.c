/* args.c — command-line flags: the settings table's flags and switches
 * (attn_setting_at) into attn_config, and the commands' own options. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/base/budget.h"
#include "engine/model/model.h"
#include "engine/trace/nonfinite.h"

/* The command options: everything that is not a setting (settings come from
 * the engine's table, attn_setting_at). */
typedef struct {
    const char *flag; /* long option name */
    const char *arg;  /* argument name for help, NULL: no argument */
    const char *help;
} flag_def;

static const flag_def FLAGS[] = {
    {"output", "FILE", "output file (also -o)"},
    {"stage", "NAME", "stage to show (render; default weights)"},
    {"layer", "N", "layer to show, in a trace of several layers (render; default 0)"},
    {"head", "N", "query head to show (render; default 0)"},
    {"batch-index", "I", "batch row to show (render; default 0)"},
    {"view", "VIEW", "single, grid (all heads), compare or geometry (render, bench)"},
    {"compare", "MASK", "compare view: toggle the causal, padding or fill (render)"},
    {"row", "I", "show query row I's weights as a bar chart (render)"},
    {"decode-step", "N", "KV-cache decode mode at token N; past a model's text it writes on, as ] does (render)"},
    {"size", "WxH", "picture size in pixels (render, bench; default 1280x800)"},
    {"font-scale", "F", "text size factor, 0.75 to 3 (render)"},
    {"scale", "N", "pixels per point, 1 to 4: the same picture N times finer, for slides (render; default 1)"},
    {"lesson", "FILE", "draw a lesson step: the lesson's panel and the view it sets (render)"},
    {"step", "N", "with --lesson: the step to draw, from 1 (render)"},
    {"lang", "LANG", "interface language, en or zh (render; default: the locale)"},
    {"picker", NULL, "draw the lesson picker (render)"},
    {"present", NULL, "presenter mode: fullscreen, large text, the toolbar when the mouse moves (F5)"},
    {"frames", "N", "bench: time N rendered frames instead of forward passes"},
    {"repeat", "N", "timed repetitions (bench)"},
    {"max-new", "N", "tokens to add (generate; default 24)"},
    {"probs", NULL, "also list each new token with its id and the model's probability for it (generate)"},
    {"generate", "N", "with --model: also time N steps of KV-cache decoding (bench)"},
    {"checkpoint", "N", "with --model: the model as saved at training step N, DIR/checkpoints/stepN (attnlab models)"},
    {"help", NULL, "show this help (also -h)"},
};
#define N_FLAGS ((int)(sizeof FLAGS / sizeof FLAGS[0]))

/* One getopt option: a setting's `--flag VALUE`, one of its switches, or a
 * command option. */
typedef struct {
    char flag[32];
    const attn_setting *row; /* NULL: the command option FLAGS[cmd] */
    const char *value;       /* a switch's value; NULL: the option takes one */
    int cmd;
} cli_opt;

enum { MAX_OPTS = 160 };

/* "d-model": the row's name with '-' for '_'. */
static void flag_of(const attn_setting *row, char *buf, size_t size)
{
    size_t i = 0;
    for (; row->name[i] && i + 1 < size; i++) buf[i] = row->name[i] == '_' ? '-' : row->name[i];
    buf[i] = '\0';
}

/* Every option in --help order: each setting's flag and switches, then the
 * command options (--help last). */
static int all_options(cli_opt *o)
{
    int n = 0;
    for (int i = 0; i < attn_setting_count() && n + 4 <= MAX_OPTS - N_FLAGS; i++) {
        const attn_setting *row = attn_setting_at(i);
        if (row->arg) {
            o[n] = (cli_opt){.row = row};
            flag_of(row, o[n++].flag, sizeof o->flag);
        }
        for (int k = 0; k < 3 && row->sw[k].flag; k++) {
            o[n] = (cli_opt){.row = row, .value = row->sw[k].value};
            snprintf(o[n++].flag, sizeof o->flag, "%s", row->sw[k].flag);
        }
    }
    for (int i = 0; i < N_FLAGS; i++) {
        o[n] = (cli_opt){.cmd = i};
        snprintf(o[n++].flag, sizeof o->flag, "%s", FLAGS[i].flag);
    }
    return n;
}

static bool takes_value(const cli_opt *o)
{
    return o->row ? o->value == NULL : FLAGS[o->cmd].arg != NULL;
}

/* The option closest to the unknown "--word[=value]", within two edits, or NULL. */
static const char *nearest(const cli_opt *o, int n, const char *word)
{
    char w[32];
    snprintf(w, sizeof w, "%.*s", (int)strcspn(word, "="), word);
    const char *best = NULL;
    int bd = 3;
    for (int i = 0; i < n; i++) {
        int d = attn_edit_distance(w, o[i].flag);
        if (d < bd) bd = d, best = o[i].flag;
    }
    return best;
}

static int checkpoint_flag(void)
{
    int i = 0;
    while (strcmp(FLAGS[i].flag, "checkpoint")) i++;
    return i;
}

void cli_print_config_help(void)
{
    printf("Configuration:\n");
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        char flag[32], left[48];
        if (row->arg) {
            flag_of(row, flag, sizeof flag);
            snprintf(left, sizeof left, "--%s %s", flag, row->arg);
            printf("  %-24s %s\n", left, row->help);
        }
        for (int k = 0; k < 3 && row->sw[k].flag; k++) {
            snprintf(left, sizeof left, "--%s", row->sw[k].flag);
            printf("  %-24s %s\n", left, row->sw[k].help);
        }
        if (!strcmp(row->name, "model")) /* not a setting: it picks the folder --model opens */
            printf("  %-24s %s\n", "--checkpoint N", FLAGS[checkpoint_flag()].help);
    }
}

void cli_warn_nonfinite(const char *cmd, const attn_trace *tr)
{
    attn_nonfinite nf;
    char text[300];
    if (attn_nonfinite_find(tr, &nf))
        fprintf(stderr, "attnlab %s: warning: %s; every stage computed from it can hold it too\n", cmd,
                attn_nonfinite_text(tr, &nf, text, sizeof text));
}

int cli_exit_code(attn_status st)
{
    switch (st) {
    case ATTN_OK: return CLI_OK;
    case ATTN_ERR_CONFIG: return CLI_EUSAGE;
    default: return CLI_EFILE;
    }
}

static int count_arg(const char *cmd, const char *flag, const char *v, long lo, long hi, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < lo || n > hi) {
        fprintf(stderr, "attnlab %s: --%s: '%s' is not a whole number from %ld to %ld\n", cmd, flag, v, lo, hi);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* The index of v among names, or -1 after saying "'v' is not <list>". */
static int name_arg(const char *cmd, const char *flag, const char *v, const char *const *names, int n,
                    const char *list)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) return i;
    fprintf(stderr, "attnlab %s: --%s: '%s' is not %s\n", cmd, flag, v, list);
    return -1;
}

/* The options of `render` and `bench --frames`; ranges that depend on the
 * trace (head, stage, batch row) are checked once it is computed. */
static int picture_option(const char *cmd, const char *flag, const char *v, cli_args *a)
{
    app_picture *p = &a->pic;
    if (!strcmp(flag, "stage")) snprintf(p->view.stage, sizeof p->view.stage, "%s", v);
    else if (!strcmp(flag, "view")) {
        int m = name_arg(cmd, flag, v, lesson_view_names, LESSON_VIEW_COUNT, "single, grid, compare or geometry");
        if (m < 0) return -1;
        p->view.mode = m;
    } else if (!strcmp(flag, "compare")) {
        char names[160];
        int t = attn_compare_find(v);
        if (t < 0) {
            fprintf(stderr, "attnlab %s: --%s: '%s' is not %s\n", cmd, flag, v, attn_compare_names(names, sizeof names));
            return -1;
        }
        p->view.compare = t;
    } else if (!strcmp(flag, "head")) return count_arg(cmd, flag, v, 0, 1 << 20, &p->view.head);
    else if (!strcmp(flag, "batch-index")) return count_arg(cmd, flag, v, 0, 1 << 20, &p->view.batch);
    else if (!strcmp(flag, "row")) return count_arg(cmd, flag, v, 0, 1 << 20, &p->view.row);
    else if (!strcmp(flag, "layer")) return count_arg(cmd, flag, v, 0, ATTN_MAX_LAYERS - 1, &p->view.layer);
    else if (!strcmp(flag, "decode-step")) return count_arg(cmd, flag, v, 1, 1 << 20, &p->view.decode_step);
    else if (!strcmp(flag, "lesson")) p->lesson = v;
    else if (!strcmp(flag, "step")) return count_arg(cmd, flag, v, 1, 1000, &p->step);
    else if (!strcmp(flag, "lang")) {
        if (strcmp(v, "en") && strcmp(v, "zh")) {
            fprintf(stderr, "attnlab %s: --lang: '%s' is not en or zh\n", cmd, v);
            return -1;
        }
        p->lang = v;
    } else if (!strcmp(flag, "frames")) return count_arg(cmd, flag, v, 1, 100000, &a->frames);
    else if (!strcmp(flag, "font-scale")) {
        char *end;
        double f = strtod(v, &end);
        if (end == v || *end || !(f >= 0.75 && f <= 3.0)) {
            fprintf(stderr, "attnlab %s: --font-scale: '%s' is not a number from 0.75 to 3\n", cmd, v);
            return -1;
        }
        p->font_scale = (float)f;
    } else if (!strcmp(flag, "scale")) {
        char *end;
        long s = strtol(v, &end, 10);
        if (end == v || *end || s < 1 || s > 4) {
            fprintf(stderr, "attnlab %s: --scale: '%s' is not a whole number from 1 to 4\n", cmd, v);
            return -1;
        }
        p->scale = (int)s;
    } else if (!strcmp(flag, "size")) {
        int w, h, n = 0;
        if (sscanf(v, "%dx%d%n", &w, &h, &n) != 2 || v[n] || w < 320 || h < 240 || w > 8192 || h > 8192) {
            fprintf(stderr, "attnlab %s: --size: '%s' is not WIDTHxHEIGHT from 320x240 to 8192x8192\n", cmd, v);
            return -1;
        }
        p->width = w;
        p->height = h;
    }
    return 0;
}

void cli_open_as_trained(cli_args *a)
{
    attn_model_config mc;
    attn_error ignore;
    if (a->cfg.model && !a->causal_given && !attn_model_peek(a->cfg.model, &mc, &ignore) && !mc.causal)
        a->cfg.causal = ATTN_CAUSAL_OFF;
}

/* --checkpoint N: --model becomes its folder DIR/checkpoints/stepN. */
static int open_checkpoint(const char *cmd, cli_args *a)
{
    char dir[4096];
    attn_error err;
    if (!a->cfg.model) {
        fprintf(stderr, "attnlab %s: --checkpoint needs --model NAME|DIR (a model trained with checkpoints)\n", cmd);
        return CLI_EUSAGE;
    }
    if (attn_model_checkpoint(a->cfg.model, a->checkpoint, dir, sizeof dir, &err) ||
        attn_config_set(&a->cfg, "model", dir, &err)) {
        fprintf(stderr, "attnlab %s: %s\n", cmd, err.msg);
        return CLI_EUSAGE;
    }
    return CLI_OK;
}

int cli_parse(int argc, char **argv, const char *cmd, unsigned opts, cli_args *a)
{
    cli_opt all[MAX_OPTS];
    struct option longopts[MAX_OPTS + 1];
    attn_error err;
    memset(a, 0, sizeof *a);
    attn_config_init(&a->cfg);
    app_picture_init(&a->pic);
    a->max_new = 24;
    a->checkpoint = -1;
    a->positional = calloc((size_t)argc + 1, sizeof *a->positional);
    if (!a->positional) {
        fprintf(stderr, "attnlab %s: out of memory\n", cmd);
        return CLI_EUSAGE;
    }
    int n = all_options(all);
    for (int i = 0; i < n; i++)
        longopts[i] = (struct option){all[i].flag, takes_value(&all[i]) ? required_argument : no_argument, NULL, 256 + i};
    longopts[n] = (struct option){0};

    optind = 0; /* GNU: full reset, so parsing can be repeated */
    opterr = 0;
    int c, idx;
    const char *bad_flag = "", *near;
    char flagbuf[40];
    /* leading '-': keep non-options in place and report them as code 1 */
    while ((c = getopt_long(argc, argv, "-o:h", longopts, &idx)) != -1) {
        if (c == 1) { a->positional[a->n_positional++] = optarg; continue; }
        if (c == 'h') c = 256 + n - 1; /* --help */
        if (c == 'o') {
            a->output = optarg;
            if (!(opts & CLI_OPT_OUTPUT)) { bad_flag = "-o"; goto not_here; }
            continue;
        }
        if (c == '?' || c == ':') {
            const char *bad = argv[optind - 1];
            if (optopt >= 256 && !takes_value(&all[optopt - 256])) /* "--rope=1": a switch given a value */
                fprintf(stderr, "attnlab %s: %.*s takes no value (see attnlab %s --help)\n", cmd,
                        (int)strcspn(bad, "="), bad, cmd);
            else if (optopt == 'o' || optopt >= 256) /* a known option missing its value */
                fprintf(stderr, "attnlab %s: %s needs a value (see attnlab %s --help)\n", cmd, bad, cmd);
            else if (strncmp(bad, "--", 2) == 0 && (near = nearest(all, n, bad + 2)))
                fprintf(stderr, "attnlab %s: unknown option '%s' (did you mean '--%s'? see attnlab %s --help)\n", cmd,
                        bad, near, cmd);
            else
                fprintf(stderr, "attnlab %s: unknown option '%s' (see attnlab %s --help)\n", cmd, bad, cmd);
            return CLI_EUSAGE;
        }
        const cli_opt *o = &all[c - 256];
        if (o->row) {
            const char *v = o->value ? o->value : optarg;
            if (o->row->type == ATTN_SET_TEXT && o->row->rule && !*v) { /* unsetting is for lessons */
                fprintf(stderr, "attnlab %s: --%s: must be %s (got an empty text)\n", cmd, o->flag, o->row->rule);
                return CLI_EUSAGE;
            }
            if (attn_setting_parse(&a->cfg, o->row, v, &err)) {
                fprintf(stderr, "attnlab %s: %s\n", cmd, err.msg);
                return CLI_EUSAGE;
            }
            a->causal_given |= !strcmp(o->row->name, "causal");
            continue;
        }
        const flag_def *f = &FLAGS[o->cmd];
        if (!strcmp(f->flag, "help")) {
            a->help = true;
        } else if (!strcmp(f->flag, "present")) {
            if (!(opts & CLI_OPT_PRESENT)) { bad_flag = "--present"; goto not_here; }
            a->present = true;
        } else if (!strcmp(f->flag, "picker")) {
            if (!(opts & CLI_OPT_PICTURE)) { bad_flag = "--picker"; goto not_here; }
            a->pic.picker = true;
        } else if (!strcmp(f->flag, "output")) {
            a->output = optarg;
            if (!(opts & CLI_OPT_OUTPUT)) { bad_flag = "--output"; goto not_here; }
        } else if (!strcmp(f->flag, "repeat")) {
            char *end;
            long r = strtol(optarg, &end, 10);
            if (end == optarg || *end || r < 1 || r > 10000) {
                fprintf(stderr, "attnlab %s: --repeat: '%s' is not a count from 1 to 10000\n", cmd, optarg);
                return CLI_EUSAGE;
            }
            a->repeat = (int)r;
            if (!(opts & CLI_OPT_REPEAT)) { bad_flag = "--repeat"; goto not_here; }
        } else if (!strcmp(f->flag, "max-new")) {
            if (!(opts & CLI_OPT_GENERATE)) { bad_flag = "--max-new"; goto not_here; }
            if (count_arg(cmd, f->flag, optarg, 0, 100000, &a->max_new)) return CLI_EUSAGE;
        } else if (!strcmp(f->flag, "probs")) {
            if (!(opts & CLI_OPT_GENERATE)) { bad_flag = "--probs"; goto not_here; }
            a->probs = true;
        } else if (!strcmp(f->flag, "checkpoint")) {
            int step;
            if (count_arg(cmd, f->flag, optarg, 0, 1000000000, &step)) return CLI_EUSAGE;
            a->checkpoint = step;
        } else if (!strcmp(f->flag, "generate")) {
            if (!(opts & CLI_OPT_BENCH_DECODE)) { bad_flag = "--generate"; goto not_here; }
            if (count_arg(cmd, f->flag, optarg, 1, 100000, &a->decode_steps)) return CLI_EUSAGE;
        } else {
            if (!strcmp(f->flag, "frames") ? !(opts & CLI_OPT_FRAMES) : !(opts & CLI_OPT_PICTURE)) {
                snprintf(flagbuf, sizeof flagbuf, "--%s", f->flag);
                bad_flag = flagbuf;
                goto not_here;
            }
            if (picture_option(cmd, f->flag, optarg, a)) return CLI_EUSAGE;
        }
    }
    cli_note_model(cmd, a->cfg.model);
    return a->checkpoint >= 0 ? open_checkpoint(cmd, a) : CLI_OK;
not_here:
    fprintf(stderr, "attnlab %s: %s does not take %s\n", cmd, cmd, bad_flag);
    return CLI_EUSAGE;
}

void cli_args_free(cli_args *a)
{
    attn_config_free(&a->cfg);
    free(a->positional);
    a->positional = NULL;
}

int cli_start(int argc, char **argv, const char *cmd, unsigned opts, int max_positional, void (*usage)(void),
              cli_args *a)
{
    int rc = cli_parse(argc, argv, cmd, opts, a);
    if (rc) return rc;
    if (a->help) {
        usage();
        return CLI_OK;
    }
    if (a->n_positional > max_positional) {
        fprintf(stderr, "attnlab %s: unexpected argument '%s'\n", cmd, a->positional[max_positional]);
        return CLI_EUSAGE;
    }
    return cli_guard_output(cmd, a) ? CLI_EUSAGE : -1; /* before any work: guard.c */
}

/* Measured under Xvfb with Mesa's software GL (llvmpipe), 2 cores: the window
 * maps 620 MiB more than `trace` once it shows a trace, and 83 MiB more while a
 * change recomputes. Most of it is per thread (a stack and a 64 MiB malloc
 * arena each): with LP_NUM_THREADS 1, 2 and 8 it was 476, 620 and 1356 MiB,
 * 374 MiB + 123 MiB a llvmpipe thread, and llvmpipe starts one a core. A GPU's
 * driver maps other amounts. Checked again with the window used (the lesson
 * and model pickers, the grid; their list readers and the job thread): a
 * 590 MiB trace shown peaked 694 MiB above the trace, 2 cores. */
void cli_reserve_window(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    cores = cores < 1 ? 1 : cores > 32 ? 32 : cores; /* llvmpipe's most */
    attn_budget_reserve((512.0 + 128.0 * (double)cores) * (1 << 20));
}

/* Measured: `render` maps about 12 bytes a pixel of the picture (the frame,
 * its copy read back, the PNG's rows): 140 MiB at 4000 × 3000, 552 MiB at 8000 × 6000,
 * 3.0 GiB at 16384 × 16384. Counted as 16, against the address-space limit and
 * against the ceiling (--memory-gib, or half the physical memory) with the traces. */
int cli_reserve_picture(const app_picture *p, const attn_config *cfg, const char *cmd)
{
    double scale = p->scale > 0 ? p->scale : 1, w = (p->width > 0 ? p->width : 1280) * scale,
           h = (p->height > 0 ? p->height : 800) * scale, need = 16.0 * w * h;
    attn_budget b = attn_budget_get(cfg->memory_gib > 0 ? cfg->memory_gib * (double)(1 << 30) : 0, false);
    if (need > b.ceiling) { /* the picture alone: no trace could be drawn in it */
        char n[32], bound[200];
        fprintf(stderr, "attnlab %s: a %.0f × %.0f picture needs about %s, more than %s; use a smaller --size or "
                "--scale\n", cmd, w, h, attn_budget_size(need, n, sizeof n), attn_budget_text(&b, bound, sizeof bound));
        return CLI_EUSAGE;
    }
    attn_budget_hold(need, "the picture");
    return CLI_OK;
}
