/* app_model.c — a trained model in the window: loaded once and kept, its
 * MHA / GQA / MQA variants, its next-token predictions, generation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "generate.h"
#include "i18n.h"
#include "model.h"
#include "rng.h"

int ui_app_model_sync(ui_app *app, const char *name, attn_error *err)
{
    if (name && app->model && app->model_key && !strcmp(app->model_key, name)) return 0;
    attn_model *m = NULL;
    char *key = NULL;
    if (name) {
        if (!(m = malloc(sizeof *m)) || !(key = strdup(name))) {
            free(m);
            attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
            return -1;
        }
        if (attn_model_load(name, m, err)) {
            free(m);
            free(key);
            return -1;
        }
    }
    if (app->model) attn_model_free(app->model);
    free(app->model);
    free(app->model_key);
    app->model = m;
    app->model_key = key;
    app->n_variants = 0;
    if (m && attn_model_variants(m, app->variants, &app->n_variants, err)) app->n_variants = 0;
    return 0;
}

int ui_app_query_row(const ui_app *app)
{
    const attn_trace *tr = &app->trace;
    const attn_dims *d = &tr->dims;
    if (app->view.row >= 0 && app->view.row < d->s) return app->view.row;
    int b = app->view.batch < d->b ? app->view.batch : 0;
    int last = tr->tokens.side == ATTN_PAD_LEFT || !tr->tokens.lengths ? d->L - 1 : tr->tokens.lengths[b] - 1;
    return last - d->P >= 0 ? last - d->P : d->s - 1;
}

int ui_app_predictions(const ui_app *app, const attn_trace *tr, int batch, int row, ui_prediction *out, int k)
{
    const attn_tensor *probs = attn_trace_stage(tr, -1, ATTN_STAGE_PROBS);
    if (!probs || !app->model || batch >= tr->dims.b || row >= tr->dims.s) return 0;
    int V = tr->dims.V, n = 0;
    const float *p = probs->data + ((size_t)batch * tr->dims.s + row) * V;
    for (int v = 0; v < V; v++) { /* insertion into the k best so far */
        if (n == k && !(p[v] > out[n - 1].p)) continue;
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

int ui_app_next_variant(ui_app *app)
{
    int at = -1, n = app->n_variants;
    if (!app->model) return -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(app->variants[i].name, app->model->name)) at = i;
    if (n < 2 || at < 0) {
        ui_app_status(app, false, _("%s has no MHA / GQA / MQA variants to switch to"), app->model->name);
        return -1;
    }
    const attn_model_variant *v = &app->variants[(at + 1) % n];
    if (ui_app_set(app, "model", v->name)) return -1;
    /* TRANSLATORS: a model variant; its held-out loss and the KV cache it needs per token */
    ui_app_status(app, false, _("%s: %d heads share %d K/V heads · held-out loss %.3f nats/token · KV cache %.0f bytes/token"),
                  v->name, v->heads, v->kv_heads, v->heldout_loss, v->kv_bytes_per_token);
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
    return 0;
}

int ui_app_next_model(ui_app *app)
{
    char **names = NULL;
    int n = 0, at = -1;
    attn_error err;
    if (attn_model_list(&names, &n, &err)) {
        ui_app_status(app, true, "%s", err.msg);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (app->cfg.model && !strcmp(names[i], app->cfg.model)) at = i;
    const char *name = at + 1 < n ? names[at + 1] : NULL;
    int rc = -1;
    if (!name && !app->cfg.model) {
        ui_app_status(app, true, _("no trained models found in %s"), attn_model_root());
    } else if (app->async) { /* the window: computed on the worker (the opening notice shows how far) */
        attn_config next;
        lesson_view v = app->view; /* the view moves to layer 0's weights once it is installed */
        v.layer = 0;
        v.decode_step = 0;
        v.row = -1;
        snprintf(v.stage, sizeof v.stage, "%s", attn_stage_get(ATTN_STAGE_WEIGHTS)->name);
        if (attn_config_copy(&next, ui_app_settings(app), &err) || switch_model(&next, name, &err)) {
            attn_config_free(&next);
            ui_app_status(app, true, "%s", err.msg);
        } else if (!(rc = ui_app_show_async(app, &next, &v))) {
            if (app->model && name && !strcmp(app->model->name, name))
                ui_app_status(app, false, _("%s: %s · o: the next model"), app->model->name,
                              app->model->summary ? app->model->summary : "");
            else if (!name)
                ui_app_status(app, false, "%s", _("the built-in example: one attention layer with seeded random weights"));
        }
    } else {
        int step = app->view.decode_step;
        app->view.decode_step = 0;
        if ((rc = ui_app_edit_config(app, switch_model, name))) {
            app->view.decode_step = step;
        } else {
            app->view.layer = 0;
            ui_app_set_stage(app, attn_stage_get(ATTN_STAGE_WEIGHTS)->name);
            if (app->model)
                /* TRANSLATORS: a trained model opened with o: its name and its card's one-line summary */
                ui_app_status(app, false, _("%s: %s · o: the next model"), app->model->name,
                              app->model->summary ? app->model->summary : "");
            else
                ui_app_status(app, false, "%s", _("the built-in example: one attention layer with seeded random weights"));
        }
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
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

int ui_app_generate(ui_app *app)
{
    const attn_trace *tr = &app->trace;
    const attn_tensor *lg = attn_trace_stage(tr, -1, ATTN_STAGE_LOGITS);
    if (!lg || !app->model) return -1;
    if (ui_app_busy(app, NULL, NULL, NULL)) { /* the next token is drawn from the logits shown */
        ui_app_status(app, false, "%s", _("still computing: ] again once the last token is in"));
        return -1;
    }
    if (tr->dims.b != 1) {
        ui_app_status(app, false, "%s", _("generation continues one text: remove the other batch rows"));
        return -1;
    }
    attn_sampling s = {app->cfg.temperature, app->cfg.top_k, app->cfg.seed};
    float u = attn_uniform(attn_hash64(s.seed ^ attn_hash_str("generate")), (uint64_t)tr->dims.L);
    size_t last = (size_t)(tr->dims.s - 1) * tr->dims.V;
    int id = attn_sample_logits(lg->data + last, tr->dims.V, &s, u);
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
    free(all);
    if (!text) return -1;
    int rc = ui_app_edit_config_step(app, set_tokens, text, app->view.decode_step + 1); /* a long text: on the worker */
    free(text);
    /* TRANSLATORS: the token generated and its probability */
    if (!rc) ui_app_status(app, false, _("generated “%s” (p = %.2f)"), word, p);
    return rc;
}
