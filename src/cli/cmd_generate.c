/* cmd_generate.c — `attnlab generate --model NAME --text TEXT` and `attnlab models` */
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/base/utf8.h"
#include "engine/model/model.h"
#include "engine/run/generate.h"

static void usage(void)
{
    printf("Usage: attnlab generate --model NAME|DIR --text TEXT [--max-new N] [--temperature T] [--top-k K]\n"
           "                        [--seed S] [--allow-unk] [--probs] [mask settings]\n\n"
           "Continues TEXT with a trained model, one token at a time over a KV cache, and\n"
           "prints the continuation; with --probs, first one line per new token: its\n"
           "label, its id and the probability the model gave it (softmax of the logits).\n"
           "Temperature 0 (the default) takes the most likely token;\n"
           "above 0 it samples, reproducibly for a given --seed. The mask settings apply:\n"
           "--no-causal shows what a model trained with the causal mask does without it;\n"
           "a model trained without it (tang-nocausal) runs without it unless --causal.\n"
           "The model's unknown token (<unk>, any word its vocabulary left out) is never\n"
           "chosen unless --allow-unk; generation stops after the model's end-of-text\n"
           "token (</s>), where each text of its training data ended, after N tokens, or\n"
           "at the model's context (its max_position_embeddings): then what was generated\n"
           "is printed, a line on stderr says the context is full, and the exit status is 0;\n"
           "a TEXT that fills the context leaves no room for a token: exit 2.\n\n");
    cli_print_config_help();
}

/* Prints the text of ids[from .. n) as the tokenizer decodes it, without the
 * BOS and EOS but with any unknown token shown (<unk>), not dropped. */
static attn_status print_ids(const attn_model *m, const int *ids, int from, int n, attn_error *err)
{
    char *text;
    int *kept = malloc((size_t)(n - from + 1) * sizeof *kept), k = 0;
    if (!kept) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = from; i < n; i++)
        if (ids[i] != m->cfg.bos && ids[i] != m->cfg.eos && ids[i] != attn_tokenizer_bos(m->tok)) kept[k++] = ids[i];
    attn_status st = attn_tokenizer_decode(m->tok, kept, k, false, &text, err);
    free(kept);
    if (st) return st;
    printf("%s", text);
    fflush(stdout);
    free(text);
    return ATTN_OK;
}

/* softmax(logits)[id] over V logits. */
static double probability(const float *logits, int V, int id)
{
    double mx = logits[0], sum = 0;
    for (int v = 1; v < V; v++) mx = logits[v] > mx ? logits[v] : mx;
    for (int v = 0; v < V; v++) sum += exp(logits[v] - mx);
    return exp(logits[id] - mx) / sum;
}

/* Continues the text up to max_new tokens, its EOS or the model's context.
 * Stopped by the context after at least one new token, it prints what was
 * generated all the same, then one line on stderr saying so: not an error. */
static attn_status generate(const cli_args *a, attn_error *err)
{
    bool full = false;
    attn_model m;
    attn_generator g;
    attn_sampling s = attn_sampling_of(&a->cfg);
    cli_progress shown; /* reading the weights: seconds for a big checkpoint */
    attn_status st = attn_model_load_watched(a->cfg.model, &m, cli_progress_start(&shown, "generate", ""), err);
    cli_progress_stop(&shown);
    if (st) return st;
    if ((st = attn_generator_init_untraced(&g, &m, &a->cfg, err))) goto out; /* only the text is wanted */
    int prompt = g.n, V = m.cfg.vocab;
    if (a->max_new > 0 && prompt >= m.cfg.max_pos) {
        st = attn_fail(err, ATTN_ERR_CONFIG, "text: %d tokens fill %s's %d positions, leaving none to generate",
                       prompt, m.name, m.cfg.max_pos);
        goto out_gen;
    }
    float *before = a->probs ? malloc((size_t)V * sizeof *before) : NULL;
    if (a->probs && !before) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = 0; i < a->max_new && !st; i++) {
        int id;
        char label[128];
        if (g.n >= m.cfg.max_pos) { /* the context is full: no position left for another token */
            full = true;
            break;
        }
        if (before) memcpy(before, g.logits, (size_t)V * sizeof *before);
        if ((st = attn_generator_step(&g, &s, &id, err))) break;
        if (before)
            printf("%s\t%d\t%.6g\n", attn_tokenizer_label(m.tok, id, label, sizeof label), id,
                   probability(before, V, id));
        if (id == m.cfg.eos) break; /* the end of the text: the model was never trained past it */
    }
    free(before);
    if (!st) st = print_ids(&m, g.ids, 0, prompt, err);
    if (!st) printf(" → ");
    if (!st) st = print_ids(&m, g.ids, prompt, g.n, err);
    if (!st) printf("\n");
    if (!st && full) {
        attn_error note; /* formatted as the engine's messages are: one line, whatever the model's name */
        attn_fail(&note, ATTN_OK, "stopped after %d of %d new tokens: the text fills %s's context of %d positions",
                  g.n - prompt, a->max_new, m.name, m.cfg.max_pos);
        fflush(stdout);
        fprintf(stderr, "attnlab generate: %s\n", note.msg);
    }
out_gen:
    attn_generator_free(&g);
out:
    attn_model_free(&m);
    return st;
}

int cmd_generate(int argc, char **argv)
{
    cli_args a;
    attn_error err;
    int rc = cli_start(argc, argv, "generate", CLI_OPT_GENERATE, 0, usage, &a);
    if (rc >= 0) goto out;
    rc = CLI_OK;
    if (!a.cfg.model) {
        fprintf(stderr, "attnlab generate: no model: use --model NAME (attnlab models lists them)\n");
        rc = CLI_EUSAGE;
        goto out;
    }
    cli_open_as_trained("generate", &a);
    attn_status st = generate(&a, &err);
    if (st) {
        fprintf(stderr, "attnlab generate: %s\n", err.msg);
        rc = cli_exit_code(st);
    }
out:
    cli_args_free(&a);
    return rc;
}

static void models_usage(void)
{
    char root[PATH_MAX];
    attn_model_root(root, sizeof root); /* "" when it does not fit */
    printf("Usage: attnlab models\n\nLists the trained models shipped with attnlab (in %s;\n"
           "ATTNLAB_MODELS names another folder), with their cards' summaries and, for a model\n"
           "saved during training, the steps --checkpoint N opens.\n", root);
}

/* "                 checkpoints at steps 0, 25, 50 (--checkpoint N)" for a model that has them. */
static void print_steps(const char *name)
{
    long steps[ATTN_MAX_STEPS];
    int n;
    attn_error err;
    if (attn_model_steps(name, steps, ATTN_MAX_STEPS, &n, &err) || !n) return;
    printf("%-16s checkpoints at steps", "");
    for (int i = 0; i < n; i++) printf("%s %ld", i ? "," : "", steps[i]);
    printf(" (--checkpoint N)\n");
}

int cmd_models(int argc, char **argv)
{
    cli_args a;
    attn_error err;
    char **names, root[PATH_MAX];
    int n, rc = cli_start(argc, argv, "models", 0, 0, models_usage, &a);
    if (rc >= 0) goto out;
    rc = CLI_OK;
    if (attn_model_list(&names, &n, &err)) {
        fprintf(stderr, "attnlab models: %s\n", err.msg);
        rc = CLI_EFILE;
        goto out;
    }
    attn_model_root(root, sizeof root);
    if (!n) printf("no models in %s\n", root);
    for (int i = 0; i < n; i++) {
        attn_model m;
        char shown[256]; /* a folder's name (NAME_MAX bytes) and card reach the terminal: no escape
                          * sequence or line break of theirs */
        snprintf(shown, sizeof shown, "%s", names[i]);
        attn_utf8_one_line(shown);
        if (attn_model_load(names[i], &m, &err)) {
            printf("%-16s (cannot be read: %s)\n", shown, attn_utf8_one_line(err.msg));
            rc = CLI_EFILE;
        } else {
            printf("%-16s %s\n", shown, m.summary ? attn_utf8_one_line(m.summary) : "");
            attn_model_free(&m);
            print_steps(names[i]);
        }
        free(names[i]);
    }
    free(names);
    if (n) printf("(in %s; ATTNLAB_MODELS names another folder)\n", root);
out:
    cli_args_free(&a);
    return rc;
}
