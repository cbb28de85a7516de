/* args.c — command-line flags: the settings table's flags and switches
 * (attn_setting_at) into attn_config, and the commands' own options. */
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/base/budget.h"
#include "engine/model/model.h"
#include "engine/trace/nonfinite.h"

/* The command options: everything that is not a setting (settings come from
 * the engine's table, attn_setting_at). Each has a handler that takes its
 * value into cli_args. */
typedef struct flag_use flag_use;

typedef struct {
    const char *flag; /* long option name */
    const char *arg;  /* argument name for help, NULL: no argument */
    const char *help;
    unsigned needs;   /* the CLI_OPT_* a command must accept for it to be given; 0: every command */
    int (*set)(const flag_use *u); /* CLI_OK, or CLI_EUSAGE after one line on stderr */
    long lo, hi;      /* set_count: the range of the count ... */
    size_t at;        /* ... and where it goes: offsetof(cli_args, ...) */
} flag_def;

/* One command option being taken: the command, the options it accepts, the
 * arguments being filled, the option's row and its value (NULL: a switch). */
struct flag_use {
    const char *cmd;
    unsigned opts;
    cli_args *a;
    const flag_def *f;
    const char *v;
};

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

/* "attnlab render: render does not take --present": flag is the option as given. */
static int not_here(const char *cmd, const char *flag)
{
    fprintf(stderr, "attnlab %s: %s does not take %s\n", cmd, cmd, flag);
    return CLI_EUSAGE;
}

/* ---- the handlers: one per command option ---- */

static int set_help(const flag_use *u)
{
    u->a->help = true;
    return CLI_OK;
}

static int set_present(const flag_use *u)
{
    u->a->present = true;
    return CLI_OK;
}

static int set_picker(const flag_use *u)
{
    u->a->pic.picker = true;
    return CLI_OK;
}

static int set_probs(const flag_use *u)
{
    u->a->probs = true;
    return CLI_OK;
}

static int set_output(const flag_use *u)
{
    u->a->output = u->v;
    return CLI_OK;
}

/* A whole number from f->lo to f->hi, into the int at f->at. */
static int set_count(const flag_use *u)
{
    int *out = (int *)(void *)((char *)u->a + u->f->at);
    return count_arg(u->cmd, u->f->flag, u->v, u->f->lo, u->f->hi, out) ? CLI_EUSAGE : CLI_OK;
}

/* The count is checked before whether the command takes --repeat at all. */
static int set_repeat(const flag_use *u)
{
    char *end;
    long r = strtol(u->v, &end, 10);
    if (end == u->v || *end || r < 1 || r > 10000) {
        fprintf(stderr, "attnlab %s: --repeat: '%s' is not a count from 1 to 10000\n", u->cmd, u->v);
        return CLI_EUSAGE;
    }
    u->a->repeat = (int)r;
    return u->opts & CLI_OPT_REPEAT ? CLI_OK : not_here(u->cmd, "--repeat");
}

/* --checkpoint N: the folder is found once every flag is read (open_checkpoint). */
static int set_checkpoint(const flag_use *u)
{
    int step;
    if (count_arg(u->cmd, u->f->flag, u->v, 0, 1000000000, &step)) return CLI_EUSAGE;
    u->a->checkpoint = step;
    return CLI_OK;
}

/* The picture's options (render, bench --frames); ranges that depend on the
 * trace (head, stage, batch row) are checked once it is computed. */

static int set_stage(const flag_use *u)
{
    app_picture *p = &u->a->pic;
    snprintf(p->view.stage, sizeof p->view.stage, "%s", u->v);
    return CLI_OK;
}

static int set_view(const flag_use *u)
{
    int m = name_arg(u->cmd, u->f->flag, u->v, lesson_view_names, LESSON_VIEW_COUNT,
                     "single, grid, compare, geometry, training, tiles or experts");
    if (m < 0) return CLI_EUSAGE;
    u->a->pic.view.mode = m;
    return CLI_OK;
}

static int set_compare(const flag_use *u)
{
    char names[160];
    int t = attn_compare_find(u->v);
    if (t < 0) {
        fprintf(stderr, "attnlab %s: --%s: '%s' is not %s\n", u->cmd, u->f->flag, u->v,
                attn_compare_names(names, sizeof names));
        return CLI_EUSAGE;
    }
    u->a->pic.view.compare = t;
    return CLI_OK;
}

static int set_lesson(const flag_use *u)
{
    u->a->pic.lesson = u->v;
    return CLI_OK;
}

static int set_lang(const flag_use *u)
{
    if (strcmp(u->v, "en") && strcmp(u->v, "zh")) {
        fprintf(stderr, "attnlab %s: --lang: '%s' is not en or zh\n", u->cmd, u->v);
        return CLI_EUSAGE;
    }
    u->a->pic.lang = u->v;
    return CLI_OK;
}

static int set_font_scale(const flag_use *u)
{
    char *end;
    double f = strtod(u->v, &end);
    if (end == u->v || *end || !(f >= 0.75 && f <= 3.0)) {
        fprintf(stderr, "attnlab %s: --font-scale: '%s' is not a number from 0.75 to 3\n", u->cmd, u->v);
        return CLI_EUSAGE;
    }
    u->a->pic.font_scale = (float)f;
    return CLI_OK;
}

static int set_scale(const flag_use *u)
{
    char *end;
    long s = strtol(u->v, &end, 10);
    if (end == u->v || *end || s < 1 || s > 4) {
        fprintf(stderr, "attnlab %s: --scale: '%s' is not a whole number from 1 to 4\n", u->cmd, u->v);
        return CLI_EUSAGE;
    }
    u->a->pic.scale = (int)s;
    return CLI_OK;
}

static int set_size(const flag_use *u)
{
    int w, h, n = 0;
    if (sscanf(u->v, "%dx%d%n", &w, &h, &n) != 2 || u->v[n] || w < 320 || h < 240 || w > 8192 || h > 8192) {
        fprintf(stderr, "attnlab %s: --size: '%s' is not WIDTHxHEIGHT from 320x240 to 8192x8192\n", u->cmd, u->v);
        return CLI_EUSAGE;
    }
    u->a->pic.width = w;
    u->a->pic.height = h;
    return CLI_OK;
}

#define PICTURE CLI_OPT_PICTURE
#define COUNT(lo_, hi_, field) .set = set_count, .lo = (lo_), .hi = (hi_), .at = offsetof(cli_args, field)

static const flag_def FLAGS[] = {
    {"output", "FILE", "output file (also -o)", CLI_OPT_OUTPUT, .set = set_output},
    {"stage", "NAME", "stage to show (render; default weights)", PICTURE, .set = set_stage},
    {"layer", "N", "layer to show, in a trace of several layers (render, the window, view; a model's in the window "
     "as soon as it is traced; default 0)", PICTURE | CLI_OPT_LAYER,
     COUNT(0, ATTN_MAX_LAYERS - 1, pic.view.layer)},
    {"head", "N", "query head to show (render; default 0)", PICTURE, COUNT(0, 1 << 20, pic.view.head)},
    {"batch-index", "I", "batch row to show (render; default 0)", PICTURE, COUNT(0, 1 << 20, pic.view.batch)},
    {"view", "VIEW", "single, grid (all heads), compare, geometry, training (a model saved during training: its curves), tiles (FlashAttention, with --tiles) or experts (a mixture-of-experts layer: tokens × experts) (render, bench)", PICTURE, .set = set_view},
    {"compare", "MASK", "compare view: toggle the causal, padding or fill (render)", PICTURE, .set = set_compare},
    {"row", "I", "show query row I's weights as a bar chart (render)", PICTURE, COUNT(0, 1 << 20, pic.view.row)},
    {"decode-step", "N", "KV-cache decode mode at token N; past a model's text it writes on, as ] does (render)",
     PICTURE, COUNT(1, 1 << 20, pic.view.decode_step)},
    {"tile", "N", "the FlashAttention view (--view tiles, with --tiles) at key tile N, from 1 as the view counts "
     "them: what ] pressed N - 1 times shows (render)", PICTURE, COUNT(1, 1 << 20, pic.tile)},
    {"size", "WxH", "picture size in pixels (render, bench; default 1280x800)", PICTURE, .set = set_size},
    {"font-scale", "F", "text size factor, 0.75 to 3 (render)", PICTURE, .set = set_font_scale},
    {"scale", "N", "pixels per point, 1 to 4: the same picture N times finer, for slides (render; default 1)",
     PICTURE, .set = set_scale},
    {"lesson", "FILE", "draw a lesson step: the lesson's panel and the view it sets (render)", PICTURE,
     .set = set_lesson},
    {"step", "N", "with --lesson: the step to draw, from 1 (render)", PICTURE, COUNT(1, 1000, pic.step)},
    {"lang", "LANG", "interface language, en or zh (render; default: the locale)", PICTURE, .set = set_lang},
    {"picker", NULL, "draw the lesson picker (render)", PICTURE, .set = set_picker},
    {"present", NULL, "presenter mode: fullscreen, large text, the toolbar when the mouse moves (F5)",
     CLI_OPT_PRESENT, .set = set_present},
    {"frames", "N", "bench: time N rendered frames instead of forward passes", CLI_OPT_FRAMES,
     COUNT(1, 100000, frames)},
    {"repeat", "N", "timed repetitions (bench)", 0 /* set_repeat checks it after the count */, .set = set_repeat},
    {"max-new", "N", "tokens to add (generate; default 24)", CLI_OPT_GENERATE, COUNT(0, 100000, max_new)},
    {"probs", NULL, "also list each new token with its id and the model's probability for it (generate)",
     CLI_OPT_GENERATE, .set = set_probs},
    {"generate", "N", "with --model: also time N steps of KV-cache decoding (bench)", CLI_OPT_BENCH_DECODE,
     COUNT(1, 100000, decode_steps)},
    {"checkpoint", "N", "with --model: the model as saved at training step N, DIR/checkpoints/stepN (attnlab models)",
     0, .set = set_checkpoint},
    {"help", NULL, "show this help (also -h)", 0, .set = set_help},
};
#define N_FLAGS ((int)(sizeof FLAGS / sizeof FLAGS[0]))
#undef COUNT
#undef PICTURE

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

void cli_open_as_trained(const char *cmd, cli_args *a)
{
    attn_error unread;
    if (!a->cfg.model || a->causal_given || attn_model_as_trained(&a->cfg, &unread) || a->cfg.causal) return;
    fprintf(stderr, "attnlab %s: note: ", cmd);
    cli_term_put(stderr, a->cfg.model);
    fprintf(stderr, " was trained without the causal mask and runs without it, as the window opens it "
            "(--causal runs it with the mask)\n");
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

/* a with its defaults, and room for every argument as a positional one. */
static int args_init(const char *cmd, int argc, cli_args *a)
{
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
    return CLI_OK;
}

/* getopt's table of all[0..n): option i returns 256 + i. */
static void long_options(const cli_opt *all, int n, struct option *longopts)
{
    for (int i = 0; i < n; i++) {
        int has_arg = takes_value(&all[i]) ? required_argument : no_argument;
        longopts[i] = (struct option){all[i].flag, has_arg, NULL, 256 + i};
    }
    longopts[n] = (struct option){0};
}

/* The message for an option getopt refused: bad is the argument as given. */
static int bad_option(const char *cmd, const char *bad, const cli_opt *all, int n)
{
    const char *near;
    if (optopt >= 256 && !takes_value(&all[optopt - 256])) /* "--rope=1": a switch given a value */
        fprintf(stderr, "attnlab %s: %.*s takes no value (see attnlab %s --help)\n", cmd, (int)strcspn(bad, "="), bad,
                cmd);
    else if (optopt == 'o' || optopt >= 256) /* a known option missing its value */
        fprintf(stderr, "attnlab %s: %s needs a value (see attnlab %s --help)\n", cmd, bad, cmd);
    else if (strncmp(bad, "--", 2) == 0 && (near = nearest(all, n, bad + 2)))
        fprintf(stderr, "attnlab %s: unknown option '%s' (did you mean '--%s'? see attnlab %s --help)\n", cmd, bad,
                near, cmd);
    else
        fprintf(stderr, "attnlab %s: unknown option '%s' (see attnlab %s --help)\n", cmd, bad, cmd);
    return CLI_EUSAGE;
}

/* A setting's flag (value v) or switch (its own value) into a->cfg. */
static int set_setting(const char *cmd, const cli_opt *o, const char *v, cli_args *a)
{
    attn_error err;
    if (o->value) v = o->value;
    if (o->row->type == ATTN_SET_TEXT && o->row->rule && !*v) { /* unsetting is for lessons */
        fprintf(stderr, "attnlab %s: --%s: must be %s (got an empty text)\n", cmd, o->flag, o->row->rule);
        return CLI_EUSAGE;
    }
    if (attn_setting_parse(&a->cfg, o->row, v, &err)) {
        fprintf(stderr, "attnlab %s: %s\n", cmd, err.msg);
        return CLI_EUSAGE;
    }
    a->causal_given |= !strcmp(o->row->name, "causal");
    return CLI_OK;
}

/* Takes option o with value v (optarg): a setting, or a command option
 * through its handler once the command is known to accept it. */
static int take_option(const char *cmd, unsigned opts, const cli_opt *o, const char *v, cli_args *a)
{
    if (o->row) return set_setting(cmd, o, v, a);
    const flag_def *f = &FLAGS[o->cmd];
    if (f->needs && !(opts & f->needs)) {
        char flag[40];
        snprintf(flag, sizeof flag, "--%s", f->flag);
        return not_here(cmd, flag);
    }
    return f->set(&(flag_use){cmd, opts, a, f, v});
}

int cli_parse(int argc, char **argv, const char *cmd, unsigned opts, cli_args *a)
{
    cli_opt all[MAX_OPTS];
    struct option longopts[MAX_OPTS + 1];
    if (args_init(cmd, argc, a)) return CLI_EUSAGE;
    int n = all_options(all);
    long_options(all, n, longopts);

    optind = 0; /* GNU: full reset, so parsing can be repeated */
    opterr = 0;
    int c, idx, rc = CLI_OK;
    /* leading '-': keep non-options in place and report them as code 1 */
    while (!rc && (c = getopt_long(argc, argv, "-o:h", longopts, &idx)) != -1) {
        if (c == 1) {
            a->positional[a->n_positional++] = optarg;
        } else if (c == 'o') {
            a->output = optarg;
            if (!(opts & CLI_OPT_OUTPUT)) rc = not_here(cmd, "-o");
        } else if (c == '?' || c == ':') {
            rc = bad_option(cmd, argv[optind - 1], all, n);
        } else {
            rc = take_option(cmd, opts, &all[c == 'h' ? n - 1 : c - 256], optarg, a); /* -h: --help, the last */
        }
    }
    if (rc) return rc;
    cli_note_model(cmd, a->cfg.model);
    return a->checkpoint >= 0 ? open_checkpoint(cmd, a) : CLI_OK;
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
