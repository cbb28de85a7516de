/* args.c — command-line flags → attn_config, through attn_config_set. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

typedef struct {
    const char *flag; /* long option name */
    const char *key;  /* attn_config key, or NULL for a command option */
    const char *fixed; /* value for flags without an argument ("true"/"false") */
    const char *arg;  /* argument name for help, NULL: no argument */
    const char *help;
} flag_def;

static const flag_def FLAGS[] = {
    {"tokens", "tokens", NULL, "TEXT", "tokens separated by spaces, rows by '|' (\"我 爱 AI | I love AI\")"},
    {"source-tokens", "source_tokens", NULL, "TEXT", "cross-attention: keys and values from these source rows"},
    {"seq", "seq", NULL, "N", "synthetic rows of N tokens when no --tokens (total, past included)"},
    {"batch", "batch", NULL, "B", "number of synthetic rows"},
    {"d-model", "d_model", NULL, "D", "model width d (default 32)"},
    {"heads", "heads", NULL, "H", "query heads h; must divide d (default 4)"},
    {"kv-heads", "kv_heads", NULL, "G", "key/value heads g; must divide h"},
    {"mode", "mode", NULL, "MODE", "mha (g = h), mqa (g = 1) or gqa (1 < g < h)"},
    {"causal", "causal", "true", NULL, "mask future keys (default)"},
    {"no-causal", "causal", "false", NULL, "no causal mask"},
    {"reversed-causal", "causal", "reversed", NULL, "pitfall: mask the past instead of the future (tril for triu)"},
    {"no-scale", "scale", "false", NULL, "pitfall: scores without the 1/√dₖ scaling"},
    {"no-softmax-guard", "softmax_guard", "false", NULL, "pitfall: a row with every key masked becomes NaN, not 0"},
    {"pad-side", "pad_side", NULL, "SIDE", "pad shorter rows on the right (default) or left"},
    {"pad-mask", "pad_mask", "true", NULL, "mask <pad> keys (default)"},
    {"no-pad-mask", "pad_mask", "false", NULL, "let queries attend to <pad> keys (to see what the mask prevents)"},
    {"rope", "rope", "true", NULL, "rotary position embedding on q and k"},
    {"no-rope", "rope", "false", NULL, "no RoPE (default)"},
    {"rope-theta", "rope_theta", NULL, "F", "RoPE base (default 10000)"},
    {"mask-value", "mask_value", NULL, "V", "fill for masked scores: -inf (default) or e.g. -1e9"},
    {"past", "past", NULL, "P", "KV cache: the first P positions are already cached"},
    {"dropout", "dropout", NULL, "P", "dropout probability for training (default 0.1)"},
    {"train", "train", "true", NULL, "training mode: apply dropout"},
    {"eval", "train", "false", NULL, "evaluation mode (default): no dropout"},
    {"seed", "seed", NULL, "N", "seed for weights, embeddings and dropout (default 42)"},
    {"weights", "weights", NULL, "FILE", "load w_q, w_k, w_v, w_o from a safetensors file"},
    {"input", "input", NULL, "FILE", "load x (and x_past, memory) from a safetensors file"},
    {"output", NULL, NULL, "FILE", "output file (also -o)"},
    {"stage", NULL, NULL, "NAME", "stage to show (render; default weights)"},
    {"head", NULL, NULL, "N", "query head to show (render; default 0)"},
    {"batch-index", NULL, NULL, "I", "batch row to show (render; default 0)"},
    {"view", NULL, NULL, "VIEW", "single, grid (all heads) or compare (render, bench)"},
    {"compare", NULL, NULL, "MASK", "compare view: toggle the causal, padding or fill (render)"},
    {"row", NULL, NULL, "I", "show query row I's weights as a bar chart (render)"},
    {"decode-step", NULL, NULL, "N", "KV-cache decode mode at token N (render)"},
    {"size", NULL, NULL, "WxH", "picture size in pixels (render, bench; default 1280x800)"},
    {"font-scale", NULL, NULL, "F", "text size factor, 0.75 to 3 (render)"},
    {"lesson", NULL, NULL, "FILE", "draw a lesson step: the lesson's panel and the view it sets (render)"},
    {"step", NULL, NULL, "N", "with --lesson: the step to draw, from 1 (render)"},
    {"lang", NULL, NULL, "LANG", "interface language, en or zh (render; default: the locale)"},
    {"picker", NULL, NULL, NULL, "draw the lesson picker (render)"},
    {"frames", NULL, NULL, "N", "bench: time N rendered frames instead of forward passes"},
    {"repeat", NULL, NULL, "N", "timed repetitions (bench)"},
    {"help", NULL, NULL, NULL, "show this help (also -h)"},
};
#define N_FLAGS ((int)(sizeof FLAGS / sizeof FLAGS[0]))

void cli_print_config_help(void)
{
    printf("Configuration:\n");
    for (int i = 0; i < N_FLAGS; i++) {
        if (!FLAGS[i].key) continue;
        char left[40];
        snprintf(left, sizeof left, "--%s%s%s", FLAGS[i].flag, FLAGS[i].arg ? " " : "",
                 FLAGS[i].arg ? FLAGS[i].arg : "");
        printf("  %-24s %s\n", left, FLAGS[i].help);
    }
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
    ui_picture *p = &a->pic;
    if (!strcmp(flag, "stage")) snprintf(p->view.stage, sizeof p->view.stage, "%s", v);
    else if (!strcmp(flag, "view")) {
        int m = name_arg(cmd, flag, v, lesson_view_names, LESSON_VIEW_COUNT, "single, grid or compare");
        if (m < 0) return -1;
        p->view.mode = m;
    } else if (!strcmp(flag, "compare")) {
        int t = name_arg(cmd, flag, v, lesson_compare_names, LESSON_COMPARE_COUNT, "causal, padding or fill");
        if (t < 0) return -1;
        p->view.compare = t;
    } else if (!strcmp(flag, "head")) return count_arg(cmd, flag, v, 0, 1 << 20, &p->view.head);
    else if (!strcmp(flag, "batch-index")) return count_arg(cmd, flag, v, 0, 1 << 20, &p->view.batch);
    else if (!strcmp(flag, "row")) return count_arg(cmd, flag, v, 0, 1 << 20, &p->view.row);
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

int cli_parse(int argc, char **argv, const char *cmd, unsigned opts, cli_args *a)
{
    struct option longopts[N_FLAGS + 1];
    attn_error err;
    memset(a, 0, sizeof *a);
    attn_config_init(&a->cfg);
    ui_picture_init(&a->pic);
    a->positional = calloc((size_t)argc + 1, sizeof *a->positional);
    if (!a->positional) {
        fprintf(stderr, "attnlab %s: out of memory\n", cmd);
        return CLI_EUSAGE;
    }
    for (int i = 0; i < N_FLAGS; i++)
        longopts[i] = (struct option){FLAGS[i].flag, FLAGS[i].arg ? required_argument : no_argument, NULL, 256 + i};
    longopts[N_FLAGS] = (struct option){0};

    optind = 0; /* GNU: full reset, so parsing can be repeated */
    opterr = 0;
    int c, idx;
    const char *bad_flag = "";
    char flagbuf[40];
    /* leading '-': keep non-options in place and report them as code 1 */
    while ((c = getopt_long(argc, argv, "-o:h", longopts, &idx)) != -1) {
        if (c == 1) { a->positional[a->n_positional++] = optarg; continue; }
        if (c == 'h') c = 256 + N_FLAGS - 1;
        if (c == 'o') {
            a->output = optarg;
            if (!(opts & CLI_OPT_OUTPUT)) { bad_flag = "-o"; goto not_here; }
            continue;
        }
        if (c == '?' || c == ':') {
            const char *bad = argv[optind - 1];
            if (optopt >= 256 && !FLAGS[optopt - 256].arg) /* "--rope=1": a switch given a value */
                fprintf(stderr, "attnlab %s: %.*s takes no value (see attnlab %s --help)\n", cmd,
                        (int)strcspn(bad, "="), bad, cmd);
            else if (optopt == 'o' || optopt >= 256) /* a known option missing its value */
                fprintf(stderr, "attnlab %s: %s needs a value (see attnlab %s --help)\n", cmd, bad, cmd);
            else
                fprintf(stderr, "attnlab %s: unknown option '%s' (see attnlab %s --help)\n", cmd, bad, cmd);
            return CLI_EUSAGE;
        }
        const flag_def *f = &FLAGS[c - 256];
        if (f->key) {
            if (attn_config_set(&a->cfg, f->key, f->fixed ? f->fixed : optarg, &err)) {
                fprintf(stderr, "attnlab %s: %s\n", cmd, err.msg);
                return CLI_EUSAGE;
            }
        } else if (!strcmp(f->flag, "help")) {
            a->help = true;
        } else if (!strcmp(f->flag, "picker")) {
            if (!(opts & CLI_OPT_PICTURE)) { bad_flag = "--picker"; goto not_here; }
            a->pic.picker = true;
        } else if (!strcmp(f->flag, "output")) {
            a->output = optarg;
            if (!(opts & CLI_OPT_OUTPUT)) { bad_flag = "--output"; goto not_here; }
        } else if (f->arg && !f->key && strcmp(f->flag, "repeat") && strcmp(f->flag, "output")) {
            if (!strcmp(f->flag, "frames") ? !(opts & CLI_OPT_FRAMES) : !(opts & CLI_OPT_PICTURE)) {
                snprintf(flagbuf, sizeof flagbuf, "--%s", f->flag);
                bad_flag = flagbuf;
                goto not_here;
            }
            if (picture_option(cmd, f->flag, optarg, a)) return CLI_EUSAGE;
        } else if (!strcmp(f->flag, "repeat")) {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (end == optarg || *end || n < 1 || n > 10000) {
                fprintf(stderr, "attnlab %s: --repeat: '%s' is not a count from 1 to 10000\n", cmd, optarg);
                return CLI_EUSAGE;
            }
            a->repeat = (int)n;
            if (!(opts & CLI_OPT_REPEAT)) { bad_flag = "--repeat"; goto not_here; }
        }
    }
    return CLI_OK;
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
    return -1;
}
