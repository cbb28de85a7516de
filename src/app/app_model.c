/* app_model.c — a trained model in the window: loaded once and kept, its
 * MHA / GQA / MQA variants, its next-token predictions, generation. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "engine/base/rng.h"
#include "engine/model/model.h"
#include "engine/run/generate.h"
#include "i18n.h"

int app_query_row(const app_state *app)
{
    const attn_trace *tr = &app->trace;
    const attn_dims *d = &tr->dims;
    if (app->view.row >= 0 && app->view.row < d->s) return app->view.row;
    int b = app->view.batch < d->b ? app->view.batch : 0;
    int last = tr->tokens.side == ATTN_PAD_LEFT || !tr->tokens.lengths ? d->L - 1 : tr->tokens.lengths[b] - 1;
    return last - d->P >= 0 ? last - d->P : d->s - 1;
}

int app_predictions(const app_state *app, const attn_trace *tr, int batch, int row, app_prediction *out, int k)
{
    const attn_tensor *probs = attn_trace_stage(tr, -1, ATTN_STAGE_PROBS);
    if (!probs || !app->model || batch >= tr->dims.b || row >= tr->dims.s) return 0;
    int V = tr->dims.V, n = 0;
    attn_tensor_fill(probs, (size_t)batch * tr->dims.s + row, 1);
    const float *p = probs->data + ((size_t)batch * tr->dims.s + row) * V;
    for (int v = 0; v < V; v++) { /* insertion into the k best so far, of the ids that are tokens */
        if ((n == k && !(p[v] > out[n - 1].p)) || !attn_tokenizer_token(app->model->tok, v)) continue;
        int at = n < k ? n++ : k - 1;
        while (at > 0 && p[v] > out[at - 1].p) {
            out[at] = out[at - 1];
            at--;
        }
        out[at].id = v;
        out[at].p = p[v];
        out[at].text[0] = '\0';
    }
    for (int i = 0; i < n; i++) /* labels only for the k kept */
        if (!*attn_tokenizer_label(app->model->tok, out[i].id, out[i].text, sizeof out[i].text))
            snprintf(out[i].text, sizeof out[i].text, "?");
    return n;
}

/* The model variant arg: its name, and the absorbed MLA off unless it has
 * latent attention (no other model has an absorbed form to show). */
static int to_variant(attn_config *next, const void *arg, attn_error *err)
{
    const attn_model_variant *v = arg;
    char *m = strdup(v->name);
    if (!m) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"), -1;
    free(next->model);
    next->model = m;
    if (strcmp(v->variant, "mla")) next->mla_absorb = false;
    return 0;
}

int app_next_variant(app_state *app)
{
    int at = -1, n = app->n_variants;
    const char *now = app_settings(app)->model; /* the one asked for last, maybe still computing */
    if (!app->model || !now) return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(app->variants[i].name, now)) at = i;
    if (n < 2 || at < 0) {
        app_status(app, false, _("%s has no MHA / GQA / MQA variants to switch to"), app_model_name(app));
        return -1;
    }
    const attn_model_variant *v = &app->variants[(at + 1) % n];
    char label[200];
    snprintf(label, sizeof label, _("model %s"), v->name); /* a page that has not downloaded it yet: first that */
    if (app_fetch_later(app, v->name, false, APP_ACT_MODE, 0, label)) return 0;
    if (app_edit_config_async(app, to_variant, v)) return -1;
    /* TRANSLATORS: a model variant; its held-out loss and the KV cache it needs per token in all its layers */
    app_status(app, false, _("%s: %d heads share %d K/V heads · held-out loss %.3f nats/token · KV cache %.0f B/token, all %d layers"),
               v->name, v->heads, v->kv_heads, v->heldout_loss, v->kv_bytes_per_token, v->layers);
    return 0;
}

/* A model on its example text, or (name NULL) the built-in example. */
static int switch_model(attn_config *next, const void *name, attn_error *err)
{
    char *m = NULL;
    if (name && !(m = strdup(name))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"), -1;
    free(next->model);
    free(next->text);
    free(next->tokens);
    free(next->source_tokens);
    next->model = m;
    next->text = next->tokens = next->source_tokens = NULL;
    next->mla_absorb = false; /* latent attention opens naive; the others have no absorbed form */
    /* a model opens as it was trained: tang-nocausal without the causal mask, the others with it */
    attn_error unread; /* the run that follows says why a model cannot be read */
    attn_model_as_trained(next, &unread);
    return 0;
}

int app_next_model(app_state *app)
{
    char **names = NULL;
    int n = 0;
    attn_error err;
    if (attn_model_list(&names, &n, &err)) {
        app_status(app, true, "%s", err.msg);
        return -1;
    }
    int rc = app_next_model_in(app, (const char *const *)names, n);
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

int app_next_model_in(app_state *app, const char *const *names, int n)
{
    /* the next after the newest one asked for: o pressed again while a model
     * is still being computed goes on from it, not from the one on screen */
    const char *now = app_settings(app)->model;
    int at = -1;
    attn_error err;
    for (int i = 0; i < n; i++)
        if (now && !strcmp(names[i], now)) at = i;
    const char *name = at + 1 < n ? names[at + 1] : NULL;
    int rc = -1;
    if (!name && !now) {
        char root[PATH_MAX];
        attn_model_root(root, sizeof root); /* "" when it does not fit */
        app_status(app, true, _("no trained models found in %s"), root);
    } else if (app->async) { /* the window: computed on the worker (the opening notice shows how far) */
        attn_config next;
        lesson_view v = app->view; /* the view moves to layer 0's weights once it is installed */
        v.layer = 0;
        v.decode_step = 0;
        v.row = -1;
        snprintf(v.stage, sizeof v.stage, "%s", attn_stage_get(ATTN_STAGE_WEIGHTS)->name);
        if (attn_config_copy(&next, app_settings(app), &err) || switch_model(&next, name, &err)) {
            attn_config_free(&next);
            app_status(app, true, "%s", err.msg);
        } else if (!(rc = app_show_async(app, &next, &v))) {
            if (app->model && name && !strcmp(app->model->name, name))
                app_status(app, false, _("%s: %s · o: the next model"), app->model->name,
                           app->model->summary ? app->model->summary : "");
            else if (!name)
                app_status(app, false, "%s", _("the built-in example: one attention layer with seeded random weights"));
        }
    } else {
        int step = app->view.decode_step;
        app->view.decode_step = 0;
        if ((rc = app_edit_config(app, switch_model, name))) {
            app->view.decode_step = step;
        } else {
            app->view.layer = 0;
            app_set_stage(app, attn_stage_get(ATTN_STAGE_WEIGHTS)->name);
            if (app->model)
                /* TRANSLATORS: a trained model opened with o: its name and its card's one-line summary */
                app_status(app, false, _("%s: %s · o: the next model"), app->model->name,
                           app->model->summary ? app->model->summary : "");
            else
                app_status(app, false, "%s", _("the built-in example: one attention layer with seeded random weights"));
        }
    }
    return rc;
}

static int set_tokens(attn_config *next, const void *arg, attn_error *err)
{
    char *t = strdup(arg);
    if (!t) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"), -1;
    free(next->tokens);
    free(next->text);
    next->tokens = t;
    next->text = NULL;
    return 0;
}

/* Whether token list `whole` is `part` or goes on from it ("<s> a b" of "<s> a b c"). */
static bool goes_on(const char *whole, const char *part)
{
    size_t n = strlen(part);
    return !strncmp(whole, part, n) && (whole[n] == '\0' || whole[n] == ' ');
}

int app_prompt_len(const app_state *app)
{
    const char *t = app->cfg.tokens, *p = app->gen.prompt;
    if (!t || !p || !app->gen.text || !goes_on(t, p) || !goes_on(app->gen.text, t)) return -1;
    int n = 1;
    for (; *p; p++) n += *p == ' ';
    return n;
}

/* Remembers what ] asked for: token list `text`, grown from `prompt` when
 * that starts a new generation (NULL: ] wrote what it grows from too). */
static void remember(app_state *app, const char *prompt, const char *text)
{
    char *t = strdup(text), *p = prompt ? strdup(prompt) : NULL;
    if (!t || (prompt && !p)) {
        free(t);
        free(p);
        return;
    }
    if (p) {
        free(app->gen.prompt);
        app->gen.prompt = p;
    }
    free(app->gen.text);
    app->gen.text = t;
}

/* The text of ids[0 .. n) as the tokenizer decodes it, without BOS and EOS
 * (NULL if out of memory or it cannot). */
static char *decoded(const attn_model *m, const int *ids, int n)
{
    int *kept = malloc((size_t)(n + 1) * sizeof *kept), k = 0;
    char *text = NULL;
    attn_error err;
    if (!kept) return NULL;
    for (int i = 0; i < n; i++)
        if (ids[i] != m->cfg.bos && ids[i] != m->cfg.eos && ids[i] != attn_tokenizer_bos(m->tok)) kept[k++] = ids[i];
    if (attn_tokenizer_decode(m->tok, kept, k, false, &text, &err)) text = NULL;
    free(kept);
    return text;
}

/* ] after the EOS: the text has ended. The next one starts from the BOS alone,
 * in a fresh context: the model was trained on one text per row, [BOS] text
 * [EOS], and never saw what follows an EOS (going on after it, its line
 * lengths and rhymes count from the wrong place). */
static int next_text(app_state *app)
{
    const attn_model *m = app->model;
    const attn_trace *tr = &app->trace;
    int bos = attn_tokenizer_bos(m->tok) >= 0 ? attn_tokenizer_bos(m->tok) : m->cfg.bos;
    char label[96];
    if (bos < 0 || !*attn_tokenizer_label(m->tok, bos, label, sizeof label)) {
        app_status(app, false, _("%s has no start-of-text token to begin a new text from: e edits the text"), m->name);
        return -1;
    }
    char *ended = decoded(m, tr->token_ids, tr->tokens.len);
    int rc = app_edit_config_step(app, set_tokens, label, 1);
    if (!rc) {
        remember(app, label, label);
        if (ended && strlen(ended) < 160)
            /* TRANSLATORS: ] after the end of a generated text: %s the start token (<s>), then the text that ended */
            app_status(app, false, _("a new text from %s alone, as each one began in training · ] writes it · the last one: %s"),
                       label, ended);
        else
            app_status(app, false, _("a new text from %s alone, as each one began in training · ] writes it"), label);
    }
    free(ended);
    return rc;
}

void app_generate_queued(app_state *app)
{
    if (app->gen.queued <= 0 || app->job) return;
    const attn_trace *tr = &app->trace;
    int n = tr->tokens.len, eos = app->model ? app->model->cfg.eos : -1;
    bool ended = eos >= 0 && n > 0 && tr->token_ids && tr->token_ids[n - 1] == eos;
    app->gen.queued = ended ? 0 : app->gen.queued - 1; /* the text's end stops them: ] again starts the next */
    if (!ended && app_generate(app)) app->gen.queued = 0;
}

int app_generate(app_state *app)
{
    const attn_trace *tr = &app->trace;
    const attn_tensor *lg = attn_trace_stage(tr, -1, ATTN_STAGE_LOGITS);
    if (!lg || !app->model || !tr->token_ids) return -1;
    if (app_busy(app, NULL, NULL, NULL)) { /* the next token is drawn from the logits being computed */
        if (app->gen.queued < APP_GEN_QUEUE_MAX) app->gen.queued++;
        /* TRANSLATORS: ] pressed while the last token is computed: how many more will be written */
        app_status(app, false, _("still computing: ] pressed %d more times, each writes a token once the last is in"),
                   app->gen.queued);
        return 0;
    }
    if (tr->dims.b != 1) {
        app_status(app, false, "%s", _("generation continues one text: remove the other batch rows"));
        return -1;
    }
    int n = tr->tokens.len, eos = app->model->cfg.eos; /* tokens so far: the last is the query shown */
    if (eos >= 0 && n > 0 && tr->token_ids[n - 1] == eos) { /* the text has ended */
        if (app->gen.end_said) return app->gen.end_said = false, next_text(app);
        app->gen.end_said = true; /* one press more replaces it: never by a press meant for a token */
        /* TRANSLATORS: ] at the end of a generated text (%s: its end token, </s>) */
        app_status(app, false, _("the text has ended (%s): ] again starts a new one and keeps this one on the status line"),
                   attn_tokens_at(&tr->tokens, 0, n - 1));
        return 0;
    }
    attn_sampling s = attn_sampling_of(&app->cfg);
    float u = attn_uniform(attn_hash64(s.seed ^ attn_hash_str("generate")), (uint64_t)tr->dims.L);
    size_t last = (size_t)(tr->dims.s - 1) * tr->dims.V;
    attn_tensor_fill(lg, (size_t)tr->dims.s - 1, 1); /* and probs' row: one head computes both */
    int id = attn_sample_logits(lg->data + last, tr->dims.V, app->model->tok, &s, u);
    if (id < 0) return -1;
    float p = attn_trace_stage(tr, -1, ATTN_STAGE_PROBS)->data[last + id];
    char label[96];
    const char *word = attn_tokenizer_label(app->model->tok, id, label, sizeof label);
    char *all = attn_tokens_text(&tr->tokens, 0);
    if (!all || !*word) {
        free(all);
        return -1;
    }
    size_t len = strlen(all) + strlen(word) + 2;
    char *text = malloc(len);
    if (text) snprintf(text, len, "%s %s", all, word);
    if (!text) {
        free(all);
        return -1;
    }
    bool going_on = app_prompt_len(app) >= 0; /* ] wrote the text shown: the same prompt */
    app->view.row = -1; /* the new query row: decode mode's only one */
    int rc = app_edit_config_step(app, set_tokens, text, n + 1); /* a long text: on the worker */
    if (!rc) remember(app, going_on ? NULL : all, text);
    free(all);
    free(text);
    if (!rc && id == eos)
        /* TRANSLATORS: the end-of-text token was generated (%s: its label, </s>) with probability p */
        app_status(app, false, _("generated “%s” (p = %.2f): the end of the text · ] starts the next one"), word, p);
    else if (!rc)
        /* TRANSLATORS: the token generated and its probability */
        app_status(app, false, _("generated “%s” (p = %.2f)"), word, p);
    return rc;
}
