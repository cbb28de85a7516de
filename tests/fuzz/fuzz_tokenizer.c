/* fuzz_tokenizer.c — libFuzzer target: the bytes before the first NUL are a
 * tokenizer.json, the bytes after it a text. Loading must end in ATTN_OK or a
 * one-line error; an accepted tokenizer must encode any text (UTF-8 or not)
 * into ids it knows, and decode them, with no crash, leak or undefined
 * behaviour, or refuse in one line: a step past its limit (a normalizer,
 * pre-tokenizer or decoder that grows, a pattern that backtracks without end)
 * in one that names the file. The corpus and tokenizer.dict build such steps;
 * libFuzzer's -rss_limit_mb catches a step that would grow unbounded. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tokenizer/tokenizer.h"

/* A refusal: one non-empty line, and the file's (a FORMAT error) names it. */
static void check_refusal(attn_status st, const attn_error *err)
{
    if (!err->msg[0] || strchr(err->msg, '\n')) abort();
    if (st == ATTN_ERR_FORMAT && strncmp(err->msg, "fuzz: ", 6)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t json_len = nul ? (size_t)(nul - data) : size;
    attn_tokenizer *t;
    attn_error err;
    if (attn_tokenizer_parse((const char *)data, json_len, "fuzz", &t, &err) != ATTN_OK) {
        if (memchr(err.msg, '\n', strlen(err.msg)) || !err.msg[0]) abort(); /* one non-empty line */
        return 0;
    }
    size_t text_len = nul ? size - json_len - 1 : 0;
    char *text = malloc(text_len + 1);
    if (text) {
        memcpy(text, nul ? (const char *)nul + 1 : "", text_len);
        text[text_len] = '\0';
        int *ids, n;
        char *back;
        attn_status st = attn_tokenizer_encode(t, text, true, &ids, &n, &err);
        if (st == ATTN_OK) {
            char label[32];
            for (int i = 0; i < n; i++) {
                if (!attn_tokenizer_token(t, ids[i])) abort(); /* every id is a token */
                attn_tokenizer_label(t, ids[i], label, sizeof label);
                if (strlen(label) >= sizeof label) abort();
            }
            if ((st = attn_tokenizer_decode(t, ids, n, false, &back, &err)) == ATTN_OK) free(back);
            else check_refusal(st, &err);
            free(ids);
        } else {
            check_refusal(st, &err);
        }
        free(text);
    }
    attn_tokenizer_free(t);
    return 0;
}
