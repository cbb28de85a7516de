/* tokenizer_impl.h — what the tokenizer's files share: the inside of struct
 * attn_tokenizer (tokenizer.h). tokenizer.c reads the file's vocabulary,
 * merges and added tokens; tokenizer_steps.c its normalizer, pre-tokenizer,
 * post-processor and decoder; tokenizer_encode.c and tokenizer_decode.c run
 * the pipeline each way; tokenizer_model.c is the vocabulary map and BPE. */
#ifndef ATTN_TOKENIZER_IMPL_H
#define ATTN_TOKENIZER_IMPL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <cjson/cJSON.h>
#include <locale.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdint.h>

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

/* A normalizer step (Sequence's are flattened). */
typedef enum { TOK_NORM_LOWERCASE, TOK_NORM_NFC, TOK_NORM_NFKC, TOK_NORM_PREPEND, TOK_NORM_REPLACE } tok_norm_kind;
typedef struct {
    tok_norm_kind kind;
    char *text;      /* Prepend's prefix; Replace's content */
    pcre2_code *re;  /* Replace's pattern (a String one compiled as a literal) */
} tok_norm;

/* How Split treats what its pattern matches (HF's SplitDelimiterBehavior). */
typedef enum { TOK_ISOLATED, TOK_REMOVED, TOK_MERGED_PREVIOUS, TOK_MERGED_NEXT, TOK_CONTIGUOUS } tok_behavior;

/* A pre-tokenizer step. Whitespace and WhitespaceSplit are Splits. */
typedef enum { TOK_PRE_SPLIT, TOK_PRE_BYTELEVEL, TOK_PRE_METASPACE } tok_pre_kind;
typedef enum { TOK_PREPEND_NEVER, TOK_PREPEND_FIRST, TOK_PREPEND_ALWAYS } tok_prepend;
typedef struct {
    tok_pre_kind kind;
    pcre2_code *re;        /* Split's pattern; ByteLevel's regex (NULL: use_regex false) */
    tok_behavior behavior; /* Split */
    bool invert;           /* Split: the pieces are the matches, the rest is the delimiter */
    bool prefix_space;     /* ByteLevel add_prefix_space */
    char *replacement;     /* Metaspace: "▁" */
    tok_prepend prepend;   /* Metaspace prepend_scheme */
    bool split;            /* Metaspace: split before each replacement */
} tok_pre;

/* A decoder step (Sequence's are flattened); none at all joins with spaces. */
typedef enum { TOK_DEC_BYTELEVEL, TOK_DEC_REPLACE, TOK_DEC_BYTEFALLBACK, TOK_DEC_FUSE, TOK_DEC_STRIP,
               TOK_DEC_METASPACE } tok_dec_kind;
typedef struct {
    tok_dec_kind kind;
    char *from, *to;      /* Replace: a String pattern and its content; Metaspace: replacement */
    char strip;           /* Strip's character */
    int start, stop;      /* Strip: how many to remove at each end */
    tok_prepend prepend;  /* Metaspace */
} tok_dec;

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
    tok_map labels;       /* attn_tokenizer_label → id, for the labels that differ from their token */
    tok_added *added;     /* matched in the raw text before anything else, longest first */
    int n_added;
    tok_norm norm[TOK_MAX_STEPS];
    int n_norm;
    tok_pre pre[TOK_MAX_STEPS];
    int n_pre;
    tok_dec dec[TOK_MAX_STEPS];
    int n_dec;
    locale_t lower;       /* C.UTF-8, for Lowercase */
    tok_model model;
    int unk;              /* −1: none */
    bool fuse_unk, ignore_merges, byte_fallback;
    tok_map merges;       /* "left\x1fright" → rank */
    int *prefix, n_prefix; /* TemplateProcessing single: ids before and after the sequence */
    int *suffix, n_suffix;
    bool byte_level;      /* a ByteLevel pre-tokenizer: tokens spell bytes in GPT-2's alphabet */
    int byte_id[256];     /* byte fallback: the id of "<0xXX>", −1 if absent */
};

/* Reads the normalizer, pre_tokenizer, post_processor and decoder of root
 * (tokenizer_steps.c); frees what they hold. */
attn_status tok_read_steps(struct attn_tokenizer *t, const cJSON *root, attn_error *err);
void tok_free_steps(struct attn_tokenizer *t);

/* GPT-2's byte-level alphabet: the code point that spells byte b, and the
 * byte a code point spells (−1 for one outside the alphabet). */
uint32_t tok_byte_char(unsigned char b);
int tok_char_byte(uint32_t cp);

/* A growing list of ids. */
typedef struct {
    int *v;
    int n, cap;
} tok_ids;
int tok_ids_push(tok_ids *a, int id);

/* Appends the model's ids for one pre-tokenized word s[0..n) (tokenizer_model.c). */
attn_status tok_model_word(const struct attn_tokenizer *t, const char *s, size_t n, tok_ids *out, attn_error *err);

#endif
