/* tokenizer_impl.h — what tokenizer.c (the file), tokenizer_encode.c (the
 * pipeline) and tokenizer_model.c (the vocabulary, WordLevel, BPE) share:
 * the inside of struct attn_tokenizer (tokenizer.h). */
#ifndef ATTN_TOKENIZER_IMPL_H
#define ATTN_TOKENIZER_IMPL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <locale.h>
#include <pcre2.h>

#include "error.h"

/* A string → int table (open addressing, FNV-1a): the vocabulary, the merge ranks. */
typedef struct {
    char **key; /* cap slots, NULL: empty */
    int *val;
    size_t cap, n;
} tok_map;

int tok_map_put(tok_map *m, const char *key, int val); /* 0, or -1 out of memory; a key present keeps its first value */
int tok_map_get(const tok_map *m, const char *key);    /* -1 if absent */
void tok_map_free(tok_map *m);

enum { TOK_MAX_STEPS = 8 };
typedef enum { TOK_NORM_LOWERCASE } tok_norm;
typedef enum { TOK_PRE_WHITESPACE, TOK_PRE_WHITESPACE_SPLIT } tok_pre;
typedef enum { TOK_WORDLEVEL, TOK_BPE } tok_model;

typedef struct {
    char *content;
    int id;
} tok_added;

struct attn_tokenizer {
    char **vocab;         /* (n_vocab) id → string; NULL: unassigned */
    bool *special;        /* (n_vocab) */
    int n_vocab;
    tok_map ids;          /* the model's vocabulary and the added tokens: string → id */
    tok_added *added;     /* matched in the raw text before anything else, longest first */
    int n_added;
    tok_norm norm[TOK_MAX_STEPS];
    int n_norm;
    tok_pre pre[TOK_MAX_STEPS];
    int n_pre;
    pcre2_code *word_re;  /* Whitespace: \w+|[^\w\s]+ */
    pcre2_code *split_re; /* WhitespaceSplit: \S+ */
    locale_t lower;       /* C.UTF-8, for Lowercase */
    tok_model model;
    int unk;              /* −1: none */
    bool fuse_unk, ignore_merges;
    tok_map merges;       /* "left\x1fright" → rank */
    int *prefix, n_prefix; /* TemplateProcessing single: ids before and after the sequence */
    int *suffix, n_suffix;
    bool fuse;            /* decoder Fuse; else tokens are joined with spaces */
};

/* A growing list of ids. */
typedef struct {
    int *v;
    int n, cap;
} tok_ids;
int tok_ids_push(tok_ids *a, int id);

/* Appends the model's ids for one pre-tokenized word s[0..n) (tokenizer_model.c). */
attn_status tok_model_word(const struct attn_tokenizer *t, const char *s, size_t n, tok_ids *out, attn_error *err);

#endif
