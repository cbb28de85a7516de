/* app_edit.c — the token editor: a one-line UTF-8 text field per sentence. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "engine/base/utf8.h"
#include "i18n.h"

/* A model's text: as typed, else the model's example, else (after generating)
 * the trace's tokens decoded, rows joined by " | ", without the BOS. */
static char *model_text(const app_state *app)
{
    const attn_trace *tr = &app->trace;
    if (app->cfg.text) return strdup(app->cfg.text);
    if (!app->cfg.tokens && app->model->example) return strdup(app->model->example);
    if (!tr->token_ids) return attn_tokens_text(&tr->tokens, 0);
    char *out = calloc(1, 1);
    int bos = attn_tokenizer_bos(app->model->tok);
    for (int r = 0; out && r < tr->tokens.rows; r++) {
        int *ids = malloc((size_t)tr->tokens.len * sizeof *ids), n = 0;
        char *row = NULL, *joined;
        attn_error err;
        for (int p = 0; ids && p < tr->tokens.len; p++) {
            int id = tr->token_ids[(size_t)r * tr->tokens.len + p];
            if (id >= 0 && id != bos) ids[n++] = id;
        }
        if (ids && !attn_tokenizer_decode(app->model->tok, ids, n, false, &row, &err) &&
            (joined = malloc(strlen(out) + strlen(row) + 4))) {
            sprintf(joined, "%s%s%s", out, r ? " | " : "", row);
            free(out);
            out = joined;
        }
        free(row);
        free(ids);
    }
    return out;
}

void app_edit_start(app_state *app, int field)
{
    app_token_editor *e = &app->edit;
    char *text = app->model ? model_text(app)
                 : app->cfg.tokens ? strdup(app->cfg.tokens) : attn_tokens_text(&app->trace.tokens, 0);
    if (app_decoding(app) && !app->model) { /* the whole sentence, not the decoded prefix */
        free(text);
        attn_dims d;
        attn_tokens tk = {0}, src = {0};
        attn_error err;
        text = NULL;
        if (!attn_config_resolve(&app->cfg, &d, &tk, &src, &err)) text = attn_tokens_text(&tk, 0);
        attn_tokens_free(&tk);
        attn_tokens_free(&src);
    }
    snprintf(e->text[0], APP_EDIT_MAX, "%s", text ? text : "");
    free(text);
    /* field 1: cross-attention on the user's own sentence asks for a new source */
    snprintf(e->text[1], APP_EDIT_MAX, "%s", field == 0 && app->cfg.source_tokens ? app->cfg.source_tokens : "");
    e->field = field;
    e->cursor = (int)strlen(e->text[field]);
    e->compose[0] = '\0';
    e->open = true;
    app->dirty = true;
}

/* The editor's sentences into the settings: an empty source ends cross-attention. */
static int set_tokens(attn_config *next, const void *arg, attn_error *err)
{
    const app_token_editor *e = arg;
    if (attn_config_set(next, "tokens", e->text[0], err) ||
        (e->text[1][0] && attn_config_set(next, "source_tokens", e->text[1], err)))
        return -1;
    if (next->source_tokens && !e->text[1][0]) {
        free(next->source_tokens);
        next->source_tokens = NULL;
        next->causal = ATTN_CAUSAL_ON;
    }
    if (next->source_tokens) {
        next->causal = ATTN_CAUSAL_OFF;
        next->rope = false;
    }
    next->seq = next->batch = 0;
    return 0;
}

/* A model's text goes through its tokenizer: an unknown character becomes its
 * unknown token, shown as such. */
static int set_text(attn_config *next, const void *arg, attn_error *err)
{
    const app_token_editor *e = arg;
    if (attn_config_set(next, "text", e->text[0], err)) return -1;
    free(next->tokens);
    next->tokens = NULL;
    return 0;
}

static void apply_edit(app_state *app)
{
    /* on the worker when the window has one: a long text does not freeze it */
    if (app->model) {
        if (app_edit_config_async(app, set_text, &app->edit) == 0) {
            app_edit_stop(app);
            if (app->job) app_status(app, false, _("text: %s"), app->edit.text[0]);
            else /* TRANSLATORS: the text a model's tokenizer read, and into how many tokens */
                app_status(app, false, _("text: %s (%d tokens)"), app->edit.text[0], app->trace.dims.L);
        }
        return;
    }
    if (app_edit_config_async(app, set_tokens, &app->edit) == 0) {
        app_edit_stop(app);
        app_status(app, false, _("tokens: %s"), app->edit.text[0]);
    }
}

void app_edit_insert(app_state *app, const char *text)
{
    app_token_editor *e = &app->edit;
    char *s = e->text[e->field];
    size_t len = strlen(s), add = strlen(text);
    if (len + add >= APP_EDIT_MAX) {
        app_status(app, true, _("tokens: the text field holds at most %d bytes"), APP_EDIT_MAX - 1);
        return;
    }
    memmove(s + e->cursor + add, s + e->cursor, len - (size_t)e->cursor + 1);
    memcpy(s + e->cursor, text, add);
    e->cursor += (int)add;
}

bool app_edit_key(app_state *app, int key, int mods)
{
    app_token_editor *e = &app->edit;
    char *s = e->text[e->field];
    bool ctrl = (mods & APP_MOD_CTRL) != 0;
    if (e->compose[0]) return false; /* the IME owns the keys while composing */
    switch (key) {
    case APP_KEY_ESCAPE: app_edit_stop(app); app_status(app, false, "%s", _("edit cancelled")); return true;
    case APP_KEY_RETURN: apply_edit(app); return true;
    case APP_KEY_BACKSPACE: {
        int p = (int)attn_utf8_prev(s, (size_t)e->cursor);
        memmove(s + p, s + e->cursor, strlen(s) - (size_t)e->cursor + 1);
        e->cursor = p;
        return true;
    }
    case APP_KEY_DELETE: {
        int p = (int)attn_utf8_next(s, strlen(s), (size_t)e->cursor);
        memmove(s + e->cursor, s + p, strlen(s) - (size_t)p + 1);
        return true;
    }
    case APP_KEY_LEFT: e->cursor = (int)attn_utf8_prev(s, (size_t)e->cursor); return true;
    case APP_KEY_RIGHT: e->cursor = (int)attn_utf8_next(s, strlen(s), (size_t)e->cursor); return true;
    case APP_KEY_HOME: e->cursor = 0; return true;
    case APP_KEY_END: e->cursor = (int)strlen(s); return true;
    case APP_KEY_TAB:
        if (app->cfg.source_tokens || e->field == 1 || e->text[1][0]) {
            e->field = !e->field;
            e->cursor = (int)strlen(e->text[e->field]);
        }
        return true;
    case 'u':
        if (!ctrl) return false;
        s[0] = '\0';
        e->cursor = 0;
        return true;
    case 'v':
        if (!ctrl) return false;
        app->req.paste = true; /* the window answers with app_paste */
        return true;
    default: return false;
    }
}
