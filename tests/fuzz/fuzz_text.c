/* fuzz_text.c — libFuzzer target: the input is a model's text, as --text
 * gives it (checked by the setting, then split into '|' rows, "\|" a bar)
 * and as a folder's example.txt gives it (unchecked bytes). Either must
 * become token rows or a one-line refusal, with no crash, overflow or leak:
 * issue 37's '|||' wrote past the rows split_rows had made room for. The
 * model is the shipped tang, loaded once. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/model/model_run.h"

static attn_model g_model;
static int g_loaded;

static void check_refusal(const attn_error *err)
{
    if (!err->msg[0] || strchr(err->msg, '\n')) abort(); /* one non-empty line */
}

/* The rows of text, from cfg: a table and ids, or a refusal. */
static void tokenize(const attn_config *cfg)
{
    attn_tokens tok;
    int *ids = NULL;
    attn_error err;
    if (attn_model_tokenize(&g_model, cfg, &tok, &ids, &err) == ATTN_OK) {
        if (tok.rows < 1) abort();
        attn_tokens_free(&tok);
        free(ids);
    } else {
        check_refusal(&err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    attn_error err;
    if (!g_loaded) {
        if (attn_model_load(ATTNLAB_FUZZ_MODEL, &g_model, &err)) abort();
        g_loaded = 1;
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    attn_config cfg;
    attn_config_init(&cfg);
    if (attn_config_set(&cfg, "text", text, &err) == ATTN_OK) tokenize(&cfg); /* --text, a lesson's text = */
    else check_refusal(&err);
    attn_config_free(&cfg);
    attn_config_init(&cfg); /* no --text: the folder's example.txt, its first line as read */
    char *example = g_model.example;
    text[strcspn(text, "\r\n")] = '\0';
    g_model.example = text;
    tokenize(&cfg);
    g_model.example = example;
    attn_config_free(&cfg);
    free(text);
    return 0;
}
