/* cmd_stream.c — `attnlab stream --model NAME`: a long text read one token
 * at a time over a KV cache that evicts (everything kept, the last W, or the
 * first N beside the last W, positions re-numbered inside the cache as
 * StreamingLLM does; engine/run/stream.h), the loss at each position, its
 * means, and a CSV of it for a plot. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/base/fileio.h"
#include "engine/model/model.h"
#include "engine/model/model_run.h"
#include "engine/run/stream.h"
#include "engine/tokenizer/tokenizer.h"

static void usage(void)
{
    printf("Usage: attnlab stream --model NAME|DIR [--policy all,window,sink] [--window W] [--keep-first N]\n"
           "                      [--text-file FILE | --text TEXT] [--one-text] [--csv FILE]\n\n"
           "Reads a long text with a trained model one token at a time over a KV cache\n"
           "that keeps, by policy (one or more, separated by commas; all three by default):\n"
           "  all     every position: positions as in the text, up to the model's context\n"
           "          (max_position_embeddings); the positions after it are not scored\n"
           "  window  the last W positions, the new one included (default W = 64)\n"
           "  sink    the first N positions (default 4) beside the last W\n"
           "As in StreamingLLM, a key's RoPE position is its slot in the cache, not its\n"
           "place in the text: window and sink never go past position N + W − 1 and read\n"
           "any length. Prints each policy's mean loss (nats per token: −log p of the\n"
           "next token) over the text, after the cache first fills (position N + W on),\n"
           "and there up to the model's context, where everything kept is still read.\n"
           "The text: by default the model's held-out sample (heldout_ids.json), its\n"
           "texts one after the other; --text-file FILE, each non-empty line one text;\n"
           "--text TEXT, one text of any length. Each text is <s> ... </s> as in training\n"
           "(--text: <s> only, as a trace reads it); --one-text joins them into one, as\n"
           "StreamingLLM reads a book: the first <s> kept, every later <s> and </s> dropped.\n"
           "--csv FILE: one row per prediction: the position, the next token's id and\n"
           "each policy's loss there (empty where it was not scored).\n");
}

typedef struct {
    const char *model, *text, *text_file, *csv;
    bool policy[3];
    int window, keep_first;
    bool help, one_text;
} stream_args;

/* "all,window,sink" into a->policy; -1 after one line on stderr. */
static int parse_policies(const char *v, stream_args *a)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", v);
    memset(a->policy, 0, sizeof a->policy);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        int i = attn_stream_policy_parse(p);
        if (i < 0) {
            fprintf(stderr, "attnlab stream: --policy: '%s' is not all, window or sink\n", p);
            return -1;
        }
        a->policy[i] = true;
    }
    if (a->policy[0] || a->policy[1] || a->policy[2]) return 0;
    fprintf(stderr, "attnlab stream: --policy: '%s' names no policy (all, window, sink)\n", v);
    return -1;
}

static int parse_int(const char *flag, const char *v, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < -1000000000L || n > 1000000000L) {
        fprintf(stderr, "attnlab stream: %s: '%s' is not a whole number\n", flag, v);
        return -1;
    }
    *out = (int)n;
    return 0;
}

/* One option and its value (NULL: none left): 1 when the value was taken,
 * 0 when not (a switch), -1 after one line on stderr. */
static int parse_one(stream_args *a, const char *f, const char *v)
{
    const char **str = !strcmp(f, "--model") ? &a->model : !strcmp(f, "--text") ? &a->text
                     : !strcmp(f, "--text-file") ? &a->text_file : !strcmp(f, "--csv") ? &a->csv : NULL;
    if (!strcmp(f, "--help") || !strcmp(f, "-h")) return a->help = true, 0;
    if (!strcmp(f, "--one-text")) return a->one_text = true, 0;
    if (!str && strcmp(f, "--policy") && strcmp(f, "--window") && strcmp(f, "--keep-first")) {
        fprintf(stderr, "attnlab stream: unknown option '%s' (attnlab stream --help)\n", f);
        return -1;
    }
    if (!v) {
        fprintf(stderr, "attnlab stream: %s needs a value\n", f);
        return -1;
    }
    if (str) return *str = v, 1;
    if (!strcmp(f, "--policy")) return parse_policies(v, a) ? -1 : 1;
    return parse_int(f, v, !strcmp(f, "--window") ? &a->window : &a->keep_first) ? -1 : 1;
}

static int parse_args(int argc, char **argv, stream_args *a)
{
    *a = (stream_args){.policy = {true, true, true}, .window = 64, .keep_first = 4};
    for (int i = 1; i < argc; i++) {
        char flag[64];
        const char *eq = strchr(argv[i], '='), *v = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
        snprintf(flag, sizeof flag, "%.*s", eq ? (int)(eq - argv[i]) : (int)strlen(argv[i]), argv[i]);
        int took = parse_one(a, flag, v);
        if (took < 0) return CLI_EUSAGE;
        if (took && !eq) i++;
    }
    if (a->help) return CLI_OK;
    if (!a->model) {
        fprintf(stderr, "attnlab stream: no model: use --model NAME (attnlab models lists them)\n");
        return CLI_EUSAGE;
    }
    if (a->text && a->text_file) {
        fprintf(stderr, "attnlab stream: --text and --text-file: give one text\n");
        return CLI_EUSAGE;
    }
    return CLI_OK;
}

/* The text's token ids: --text (BOS first), --text-file's lines, or
 * the model's held-out sample; *what says which. */
static attn_status load_text(const stream_args *a, const attn_model *m, int **ids, int *n, char *what, size_t size,
                             attn_error *err)
{
    int texts = 0;
    attn_status st;
    if (a->text) { /* one text of any length, '|' included: not split into rows as a trace's */
        if ((st = attn_tokenizer_encode(m->tok, a->text, true, ids, n, err))) return st;
        snprintf(what, size, "--text");
        return ATTN_OK;
    }
    if (!a->text_file) {
        st = attn_stream_heldout(m, ids, n, &texts, err);
        if (!st) snprintf(what, size, "%d texts of %s's held-out sample (heldout_ids.json)", texts, m->name);
        return st;
    }
    char *data;
    size_t len;
    if ((st = attn_file_read(a->text_file, (size_t)64 << 20, &data, &len, err))) return st;
    st = attn_stream_lines(m, data, ids, n, &texts, err);
    free(data);
    if (!st) snprintf(what, size, "%d texts, the lines of %s", texts, a->text_file);
    return st;
}

/* Refuses what cannot be measured, before anything runs: each policy's W and
 * N, and a text too short for any prediction to follow an eviction. */
static attn_status check_policies(const stream_args *a, const attn_model *m, int n, attn_error *err)
{
    if (n < 2) return attn_fail(err, ATTN_ERR_CONFIG, "the text is %d token%s: nothing to predict", n,
                                n == 1 ? "" : "s");
    for (int p = 0; p < 3; p++) {
        attn_stream_opts o = {(attn_stream_policy)p, a->window, p == ATTN_STREAM_SINK ? a->keep_first : 0};
        if (!a->policy[p]) continue;
        attn_status st = attn_stream_check(m, &o, err);
        if (st) return st;
        int size = attn_stream_cache_size(&o, n);
        if (p != ATTN_STREAM_ALL && n - 1 <= size) /* the token read at i ≥ size is the first after an eviction */
            return attn_fail(err, ATTN_ERR_CONFIG, "the text's %d tokens fit %s's cache of %d positions: no "
                             "prediction would follow an eviction (a longer text, or a smaller --window)", n,
                             attn_stream_policy_name((attn_stream_policy)p), size);
    }
    return ATTN_OK;
}

/* The mean of loss[from .. to) over its numbers; *count receives how many. */
static double mean_of(const double *loss, int from, int to, int *count)
{
    double sum = 0;
    *count = 0;
    for (int i = from; i < to; i++)
        if (!isnan(loss[i])) sum += loss[i], ++*count;
    return *count ? sum / *count : NAN;
}

static void print_mean(const double *loss, int from, int to)
{
    int count;
    double mean = from < to ? mean_of(loss, from, to, &count) : NAN;
    if (isnan(mean)) printf("  %22s", "—");
    else printf("  %13.4f (%6d)", mean, count);
}

/* The table: each policy's cache and means over the whole text, after the
 * cache first fills (fill), and from there to the model's context. */
static void print_means(const stream_args *a, const attn_model *m, double *const *loss, int n, int fill)
{
    int ctx = m->cfg.max_pos < n - 1 ? m->cfg.max_pos : n - 1;
    char from[32], within[32];
    snprintf(from, sizeof from, "from %d", fill);
    if (fill < ctx) snprintf(within, sizeof within, "%d..%d", fill, ctx - 1);
    else snprintf(within, sizeof within, "%d..%d: none", fill, ctx - 1);
    printf("\nmean loss, nats per token (positions counted), over every position, after the caches first\n"
           "fill (%s), and there within the model's context (%s):\n", from, within);
    printf("%-8s %6s  %22s  %22s  %22s\n", "policy", "cache", "every position", from, within);
    for (int p = 0; p < 3; p++) {
        if (!a->policy[p]) continue;
        attn_stream_opts o = {(attn_stream_policy)p, a->window, p == ATTN_STREAM_SINK ? a->keep_first : 0};
        char cache[32];
        if (p == ATTN_STREAM_ALL) snprintf(cache, sizeof cache, "all");
        else snprintf(cache, sizeof cache, "%d", attn_stream_cache_size(&o, n));
        printf("%-8s %6s", attn_stream_policy_name((attn_stream_policy)p), cache);
        print_mean(loss[p], 0, n - 1);
        print_mean(loss[p], fill, n - 1);
        print_mean(loss[p], fill, ctx);
        printf("\n");
    }
}

/* position,next,all,window,sink: one line per prediction, the policies run;
 * a cell left empty where the policy scored nothing. Through the one atomic
 * writer: a failure leaves the file as it was. */
static attn_status write_csv(const stream_args *a, double *const *loss, const int *ids, int n, attn_error *err)
{
    attn_file_out o;
    char line[256];
    int len = snprintf(line, sizeof line, "position,next");
    for (int p = 0; p < 3; p++)
        if (a->policy[p]) len += snprintf(line + len, sizeof line - len, ",%s", attn_stream_policy_name(p));
    len += snprintf(line + len, sizeof line - len, "\n");
    attn_status st = attn_file_out_begin(&o, a->csv, 0644, err);
    if (!st) st = attn_file_out_write(&o, line, (size_t)len, err);
    for (int i = 0; i < n - 1 && !st; i++) {
        len = snprintf(line, sizeof line, "%d,%d", i, ids[i + 1]);
        for (int p = 0; p < 3; p++)
            if (a->policy[p]) len += isnan(loss[p][i]) ? snprintf(line + len, sizeof line - len, ",")
                                                       : snprintf(line + len, sizeof line - len, ",%.6f", loss[p][i]);
        len += snprintf(line + len, sizeof line - len, "\n");
        st = attn_file_out_write(&o, line, (size_t)len, err);
    }
    if (!st) st = attn_file_out_commit(&o, err);
    attn_file_out_abort(&o);
    return st;
}

/* Each policy asked for over the text, its losses into loss[p] (n − 1). */
static attn_status run_policies(const stream_args *a, const attn_model *m, const attn_config *run, const int *ids,
                                int n, double **loss, attn_error *err)
{
    for (int p = 0; p < 3; p++) {
        if (!a->policy[p]) continue;
        attn_stream_opts o = {(attn_stream_policy)p, a->window, p == ATTN_STREAM_SINK ? a->keep_first : 0};
        int scored;
        if (!(loss[p] = malloc((size_t)(n - 1) * sizeof **loss)))
            return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for %d losses", n - 1);
        attn_status st = attn_stream_run(m, run, &o, ids, n, loss[p], &scored, err);
        if (st) return st;
        if (p == ATTN_STREAM_ALL && scored < n - 1) {
            attn_error note;
            attn_fail(&note, ATTN_OK, "note: all keeps every position in the text's numbering and stops at %s's "
                      "context of %d positions: positions %d..%d are not scored by it", m->name, m->cfg.max_pos,
                      scored, n - 2);
            fprintf(stderr, "attnlab stream: %s\n", note.msg);
        }
    }
    return ATTN_OK;
}

static attn_status stream(const stream_args *a, const attn_config *cfg, attn_error *err)
{
    attn_model m;
    attn_config run;
    int *ids = NULL, n = 0;
    double *loss[3] = {NULL, NULL, NULL};
    char what[512];
    attn_status st = attn_model_load(cfg->model, &m, err);
    if (st) return st;
    if ((st = attn_model_run_config(&m, cfg, &run, err))) goto out_model;
    if (!(st = load_text(a, &m, &ids, &n, what, sizeof what, err)) && a->one_text) {
        attn_stream_join(&m, ids, &n);
        snprintf(what + strlen(what), sizeof what - strlen(what), ", joined into one text (--one-text)");
    }
    if (!st) st = check_policies(a, &m, n, err);
    if (!st) {
        printf("%s: %d tokens, %d predictions: ", m.name, n, n - 1);
        cli_term_put(stdout, what); /* a file's name: no escape sequence of its own reaches the terminal */
        printf("\n");
        printf("context %d positions; window W = %d, keep-first N = %d; RoPE positions re-numbered in the cache\n",
               m.cfg.max_pos, a->window, a->keep_first);
        fflush(stdout);
        st = run_policies(a, &m, &run, ids, n, loss, err);
    }
    int fill = a->policy[ATTN_STREAM_SINK] ? a->window + a->keep_first : a->window;
    if (!st) print_means(a, &m, loss, n, fill);
    if (!st && a->csv) st = write_csv(a, loss, ids, n, err);
    for (int p = 0; p < 3; p++) free(loss[p]);
    free(ids);
    attn_config_free(&run);
out_model:
    attn_model_free(&m);
    return st;
}

int cmd_stream(int argc, char **argv)
{
    stream_args a;
    cli_args ca;
    attn_error err;
    int rc = parse_args(argc, argv, &a);
    if (rc || a.help) {
        if (a.help) usage();
        return rc;
    }
    memset(&ca, 0, sizeof ca);
    attn_config_init(&ca.cfg);
    char *inputs[1] = {(char *)a.text_file};
    ca.output = a.csv, ca.positional = a.text_file ? inputs : NULL, ca.n_positional = a.text_file ? 1 : 0;
    if (attn_config_set(&ca.cfg, "model", a.model, &err) || (a.text && attn_config_set(&ca.cfg, "text", a.text, &err))) {
        fprintf(stderr, "attnlab stream: %s\n", err.msg);
        rc = CLI_EUSAGE;
    } else if (!(rc = cli_guard_output("stream", &ca))) {
        cli_note_model("stream", a.model);
        cli_open_as_trained("stream", &ca);
        attn_status st = stream(&a, &ca.cfg, &err);
        if (st) fprintf(stderr, "attnlab stream: %s\n", err.msg);
        rc = cli_exit_code(st);
    }
    ca.positional = NULL;
    cli_args_free(&ca);
    return rc;
}
