/* tokens.h — token rows: parsing "a b c | d e", padding.
 *
 * A token table is b rows of L token strings (row-major), where L is the
 * longest row; shorter rows are filled with ATTN_PAD_TOKEN on the padding
 * side. lengths[r] counts the real tokens of row r. */
#ifndef ATTN_TOKENS_H
#define ATTN_TOKENS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/base/error.h"

#define ATTN_PAD_TOKEN "<pad>"
#define ATTN_MAX_TOKEN_BYTES 64
#define ATTN_MAX_ROWS 1024
#define ATTN_MAX_SEQ 65536

typedef enum { ATTN_PAD_RIGHT = 0, ATTN_PAD_LEFT = 1 } attn_pad_side;

typedef struct {
    int rows;        /* b */
    int len;         /* L: padded length of every row */
    char **tok;      /* (b, L) owned strings; pads are "<pad>" */
    int *lengths;    /* (b) number of real tokens per row */
    attn_pad_side side;
} attn_tokens;

/* Parses `text` ("你 是 猫 | 我 爱 AI"): whitespace (ASCII or U+3000) separates
 * tokens, '|' separates rows. Fills *out (caller frees with attn_tokens_free). */
attn_status attn_tokens_parse(const char *text, attn_pad_side side, const char *what,
                              attn_tokens *out, attn_error *err);

/* Builds b rows of L tokens picked from a small word list by (seed, row, pos). */
attn_status attn_tokens_synthetic(int rows, int len, unsigned long long seed,
                                  attn_tokens *out, attn_error *err);

/* Builds a table from already padded rows tok[b*L] with the given lengths. */
attn_status attn_tokens_from_table(int rows, int len, const char *const *tok,
                                   const int *lengths, attn_pad_side side,
                                   attn_tokens *out, attn_error *err);

/* True when position `pos` of row `row` is padding. */
bool attn_tokens_is_pad(const attn_tokens *t, int row, int pos);

/* True when any row is shorter than the table: it holds a <pad>. */
bool attn_tokens_padded(const attn_tokens *t);

const char *attn_tokens_at(const attn_tokens *t, int row, int pos);

void attn_tokens_free(attn_tokens *t);

/* The table as text ("我 爱 AI | 你 好"), pads left out, each row cut to its
 * first n real tokens (n <= 0: all). Caller frees; NULL when out of memory. */
char *attn_tokens_text(const attn_tokens *tk, int n);

#endif
