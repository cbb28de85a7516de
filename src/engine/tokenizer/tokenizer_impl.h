/* tokenizer_impl.h — what the tokenizer's files share: the inside of struct
 * attn_tokenizer (tokenizer.h). tokenizer.c reads the file's vocabulary,
 * merges and added tokens; tokenizer_steps.c its normalizer, pre-tokenizer,
 * post-processor and decoder; tokenizer_encode.c and tokenizer_decode.c run
 * the pipeline each way; tokenizer_model.c is the vocabulary map and BPE;
 * tokenizer_regex.c runs the file's patterns under PCRE2's limits. */
#ifndef ATTN_TOKENIZER_IMPL_H
#define ATTN_TOKENIZER_IMPL_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <cjson/cJSON.h>
#include <locale.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/base/error.h"

/* A string → int table (open addressing, FNV-1a): the vocabulary, the merge ranks. */
typedef struct {
    char **key;     /* cap slots, NULL: empty */
    uint64_t *hash; /* each key's hash: a probe compares it before the strings, a growth reuses it */
    int *val;
    size_t cap, n;
} attn_tok_map;

int attn_tok_map_put(attn_tok_map *m, const char *key, int val); /* 0, or -1 out of memory; a key present keeps its first value */
int attn_tok_map_get(const attn_tok_map *m, const char *key); /* -1 if absent */
void attn_tok_map_free(attn_tok_map *m);

/* Limits on what a file may ask for (tokenizer.h lists them all). */
enum {
    TOK_MAX_STEPS = 8,            /* normalizer, pre-tokenizer, decoder steps, each */
    TOK_MAX_PATTERN = 8192,       /* bytes of a pattern */
    TOK_MAX_ADDED = 256,          /* bytes of an added token */
    TOK_MAX_VALUES = 1 << 22,     /* JSON values in the file: what cJSON's tree of it costs (so as many tokens, merges) */
    TOK_MAX_ID = (1 << 22) - 1,   /* the largest token id */
    TOK_GROWTH = 16,              /* a step makes at most TOK_GROWTH × its input + TOK_GROWTH_PLUS bytes, */
    TOK_GROWTH_PLUS = 1024,
    TOK_MAX_STEP_BYTES = 4 << 20, /* and never more than this */
    TOK_MATCH_BASE = 100000,      /* PCRE2's match and depth limits: TOK_MATCH_BASE + */
    TOK_MATCH_PER_BYTE = 10,      /* TOK_MATCH_PER_BYTE × the bytes left to search */
    TOK_HEAP_LIMIT = 8 << 20,     /* bytes of backtracking frames (the interpreter) */
    TOK_JIT_STACK = 1 << 20,      /* bytes of the JIT's stack (the same frames take a tenth there) */
    TOK_WINDOW = 16,              /* bytes a try at one start first looks at (tokenizer_regex.c) */
    TOK_SCAN_BASE = 1 << 20,      /* bytes a split's searches may read in all: TOK_SCAN_BASE + */
    TOK_SCAN_PER_BYTE = 32,       /* TOK_SCAN_PER_BYTE × the bytes of the text split */
};

/* A normalizer step (Sequence's are flattened). */
typedef enum { TOK_NORM_LOWERCASE, TOK_NORM_NFC, TOK_NORM_NFKC, TOK_NORM_PREPEND, TOK_NORM_REPLACE } attn_tok_norm_kind;
typedef struct {
    attn_tok_norm_kind kind;
    const char *type; /* its name in the file, for messages ("Replace") */
    char *text;      /* Prepend's prefix; Replace's content */
    pcre2_code *re;  /* Replace's pattern (a String one compiled as a literal) */
} attn_tok_norm;

/* How Split treats what its pattern matches (HF's SplitDelimiterBehavior). */
typedef enum { TOK_ISOLATED, TOK_REMOVED, TOK_MERGED_PREVIOUS, TOK_MERGED_NEXT, TOK_CONTIGUOUS } attn_tok_behavior;

/* A pre-tokenizer step. Whitespace, WhitespaceSplit and Digits are Splits. */
typedef enum { TOK_PRE_SPLIT, TOK_PRE_BYTELEVEL, TOK_PRE_METASPACE } attn_tok_pre_kind;
typedef enum { TOK_PREPEND_NEVER, TOK_PREPEND_FIRST, TOK_PREPEND_ALWAYS } attn_tok_prepend;
typedef struct {
    attn_tok_pre_kind kind;
    const char *type;      /* its name in the file, for messages ("Whitespace") */
    pcre2_code *re;        /* Split's pattern; ByteLevel's regex (NULL: use_regex false); Metaspace's
                              replacement, to split before (NULL: split false) */
    attn_tok_behavior behavior; /* Split */
    bool invert;           /* Split: the pieces are the matches, the rest is the delimiter */
    bool prefix_space;     /* ByteLevel add_prefix_space */
    char *replacement;     /* Metaspace: "▁" */
    attn_tok_prepend prepend; /* Metaspace prepend_scheme */
} attn_tok_pre;

/* A decoder step (Sequence's are flattened); none at all joins with spaces. */
typedef enum { TOK_DEC_BYTELEVEL, TOK_DEC_REPLACE, TOK_DEC_BYTEFALLBACK, TOK_DEC_FUSE, TOK_DEC_STRIP,
               TOK_DEC_METASPACE } attn_tok_dec_kind;
typedef struct {
    attn_tok_dec_kind kind;
    char *from, *to;      /* Replace: a String pattern and its content; Metaspace: replacement */
    char strip;           /* Strip's character */
    int start, stop;      /* Strip: how many to remove at each end */
    attn_tok_prepend prepend; /* Metaspace */
} attn_tok_dec;

typedef enum { TOK_WORDLEVEL, TOK_BPE } attn_tok_model;

typedef struct {
    char *content;
    size_t len;           /* strlen(content), at most TOK_MAX_ADDED */
    int id;
} attn_tok_added;

struct attn_tokenizer {
    char *name;           /* the file, first in every message about it */
    char **vocab;         /* (n_vocab) id → string; NULL: unassigned */
    bool *special;        /* (n_vocab) */
    int n_vocab;
    attn_tok_map ids;     /* the model's vocabulary and the added tokens: string → id */
    attn_tok_map labels;  /* attn_tokenizer_label → id, for the labels that differ from their token */
    attn_tok_added *added; /* matched in the raw text before anything else; sorted by content (strcmp) */
    int n_added;
    attn_tok_norm norm[TOK_MAX_STEPS];
    int n_norm;
    attn_tok_pre pre[TOK_MAX_STEPS];
    int n_pre;
    attn_tok_dec dec[TOK_MAX_STEPS];
    int n_dec;
    locale_t lower;       /* C.UTF-8, for Lowercase */
    attn_tok_model model;
    int unk;              /* −1: none */
    bool fuse_unk, ignore_merges, byte_fallback;
    attn_tok_map merges;  /* "left\x1fright" → rank */
    int *prefix, n_prefix; /* TemplateProcessing single: ids before and after the sequence */
    int *suffix, n_suffix;
    bool byte_level;      /* a ByteLevel pre-tokenizer: tokens spell bytes in GPT-2's alphabet */
    int byte_id[256];     /* byte fallback: the id of "<0xXX>", −1 if absent */
};

/* ---- patterns (tokenizer_regex.c) ---- */

/* Compiles a pattern of the file (literal: a String one), and for the JIT
 * where there is one; what starts the message ("normalizer Replace").
 * anchored: for attn_tok_match, which tries the starts one by one (PCRE2's
 * JIT takes an anchored pattern, not an anchored match); attn_tok_replace
 * needs it unanchored. */
attn_status attn_tok_compile(const char *pattern, bool literal, bool anchored, const char *what, pcre2_code **re,
                             attn_error *err);

/* What one encode matches with: the limits, the JIT's stack (one per
 * encode, so two threads never share one), room for a match's bounds. */
typedef struct {
    pcre2_match_context *ctx;
    pcre2_jit_stack *stack;
    pcre2_match_data *md;
    size_t read, most; /* bytes this text's searches have read, and may */
} attn_tok_matcher;
attn_status attn_tok_matcher_init(attn_tok_matcher *m, attn_error *err);
void attn_tok_matcher_free(attn_tok_matcher *m);

/* The first match of re in s[0..n) at or after at: *found, and its bounds
 * [*a, *b). A limit met is an error (the pattern's), never "no match". The
 * searches of one text (from at = 0 on) read at most TOK_SCAN_BASE +
 * TOK_SCAN_PER_BYTE × n bytes in all; a pattern that would read more (one
 * that looks to the end of the text from every match) is an error too. */
attn_status attn_tok_match(attn_tok_matcher *m, const pcre2_code *re, const char *s, size_t n, size_t at, size_t *a, size_t *b,
                           bool *found, attn_error *err);

/* s with every match of re replaced by with (literally): *out (caller
 * frees) of *len bytes, or *over (and *out NULL) when that is more than
 * `most` bytes. */
attn_status attn_tok_replace(attn_tok_matcher *m, const pcre2_code *re, const char *s, const char *with, size_t most,
                             char **out, size_t *len, bool *over, attn_error *err);

/* ---- the pipeline ---- */

/* Reads the normalizer, pre_tokenizer, post_processor and decoder of root
 * (tokenizer_steps.c); frees what they hold. */
attn_status attn_tok_read_steps(struct attn_tokenizer *t, const cJSON *root, attn_error *err);
void attn_tok_free_steps(struct attn_tokenizer *t);

/* GPT-2's byte-level alphabet: the code point that spells byte b, and the
 * byte a code point spells (−1 for one outside the alphabet). */
uint32_t attn_tok_byte_char(unsigned char b);
int attn_tok_char_byte(uint32_t cp);

/* A growing list of ids. */
typedef struct {
    int *v;
    int n, cap;
} attn_tok_ids;
int attn_tok_ids_push(attn_tok_ids *a, int id);

/* What a normalizer, pre-tokenizer or decoder step given `in` bytes may
 * make (TOK_GROWTH...), and the error of one that would make more: the file,
 * kind ("normalizer"), step (from 0) and type in front (tokenizer_encode.c). */
size_t attn_tok_step_most(size_t in);
attn_status attn_tok_too_big(const struct attn_tokenizer *t, const char *kind, int step, const char *type, size_t in,
                             attn_error *err);

/* Appends the model's ids for one pre-tokenized word s[0..n) (tokenizer_model.c). */
attn_status attn_tok_model_word(const struct attn_tokenizer *t, const char *s, size_t n, attn_tok_ids *out, attn_error *err);

#endif
