/* fuzz_tokenizer.c — libFuzzer target: the bytes before the first NUL are a
 * tokenizer.json, the bytes after it a text. Loading must end in ATTN_OK or a
 * one-line error; an accepted tokenizer must encode any text (UTF-8 or not)
 * into ids it knows, and decode them, with no crash, leak or undefined
 * behaviour. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"

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
        if (attn_tokenizer_encode(t, text, true, &ids, &n, &err) == ATTN_OK) {
            char label[32];
            for (int i = 0; i < n; i++) {
                if (!attn_tokenizer_token(t, ids[i])) abort(); /* every id is a token */
                attn_tokenizer_label(t, ids[i], label, sizeof label);
                if (strlen(label) >= sizeof label) abort();
            }
            if (attn_tokenizer_decode(t, ids, n, false, &back, &err) == ATTN_OK) free(back);
            free(ids);
        }
        free(text);
    }
    attn_tokenizer_free(t);
    return 0;
}
