/* config.h — what to compute: the attention configuration and its validation.
 *
 * attn_config holds what a user asked for (command-line flags, lesson keys,
 * GUI controls all go through attn_config_set). attn_config_resolve checks it
 * and derives the concrete sizes (attn_dims) and the padded token tables. */
#ifndef ATTN_CONFIG_H
#define ATTN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/base/budget.h"
#include "engine/base/error.h"
#include "engine/trace/stages.h"
#include "engine/trace/tokens.h"

/* The causal mask. REVERSED is a pitfall kept for teaching: a lower-triangular
 * mask (tril where triu was meant) hides the past and lets the future through. */
typedef enum { ATTN_CAUSAL_OFF = 0, ATTN_CAUSAL_ON = 1, ATTN_CAUSAL_REVERSED = 2 } attn_causal;

typedef struct {
    char *model;           /* a trained model's name or folder (model.h); NULL: one attention layer */
    char *text;            /* with a model: text its tokenizer reads, rows separated by '|' */
    double temperature;    /* generating with a model: 0 takes the most likely token, T > 0 samples */
    int top_k;             /* sampling among the k most likely tokens; 0: all */
    bool allow_unk;        /* generating: the model's <unk> may be chosen too (default: never) */
    char *tokens;          /* "你 是 猫 | 我 爱 AI"; NULL: built-in example or synthetic */
    char *source_tokens;   /* set: cross-attention over these source rows */
    int seq, batch;        /* 0: unset (taken from tokens, or synthetic defaults) */
    int d_model, heads;
    int kv_heads;          /* 0: chosen by mode */
    attn_mode mode;
    attn_causal causal;
    bool scale;            /* divide scores by √k (default); false shows softmax saturating */
    bool softmax_guard;    /* a row with every key masked gets weights 0 (default); false: the
                            * unguarded softmax's 0/0 = NaN, which then spreads to context and out */
    attn_pad_side pad_side;
    bool pad_mask;         /* mask <pad> keys (default); false shows what the mask prevents */
    int sliding_window;    /* W > 0: the query at position p reads only keys j with p − W < j (the
                            * last W with the causal mask, Mistral's), or |p − j| < W without it
                            * (Longformer's); 0: off */
    bool rope;
    double rope_theta;
    attn_rope_style rope_style; /* which features RoPE pairs: interleaved (default) or half (HF) */
    float mask_value;      /* -INFINITY or a finite negative number such as -1e9 */
    int past;              /* P: positions already in the KV cache */
    float dropout;         /* p in [0, 1); active only when train */
    bool train;
    uint64_t seed;
    char *weights_path;    /* safetensors with w_q, w_k, w_v, w_o; NULL: from seed */
    char *input_path;      /* safetensors with x [, x_past, memory]; NULL: from seed */
    double memory_gib;     /* trace size limit in GiB, the setting; 0: half the physical memory.
                            * An address-space limit (ulimit -v) that leaves less wins (budget.h) */
    double max_bytes;      /* a limit in bytes a caller worked out from a budget (tests, what the
                            * window has left): when set, it is the budget, taken as it is */
    int qk_keep;           /* a model's run: 0, every layer keeps its scores, mask, masked scores and
                            * weights; L + 1, only layer L does (a prompt too long for all of them) */
    int qk_prefer;         /* with qk_keep 0: the layer that keeps them when they fit for one layer only */
} attn_config;

#define ATTN_EXAMPLE_TOKENS "你 是 一 只 猫 娘 | 我 爱 AI"

/* Fills c with the defaults (the built-in example). Pair with attn_config_free. */
void attn_config_init(attn_config *c);
void attn_config_free(attn_config *c);
/* Deep copy; dst must not hold owned strings. */
attn_status attn_config_copy(attn_config *dst, const attn_config *src, attn_error *err);

/* ---- the settings table ----
 *
 * One row per setting. Everything that reads or writes a setting by name walks
 * this table: command-line flags and --help, lesson keys, trace metadata,
 * `attnlab info`, the window and the "did you mean" suggestions. A new setting
 * is a field in attn_config, a row in config.c's table, and the op that uses it. */

typedef enum {
    ATTN_SET_BOOL,   /* bool: true/false, on/off, yes/no, 1/0 */
    ATTN_SET_INT,    /* int from min to max (0 in the struct: unset) */
    ATTN_SET_U64,    /* uint64_t, 0 to 2^64-1 */
    ATTN_SET_FLOAT,  /* float that ok() accepts */
    ATTN_SET_DOUBLE, /* double that ok() accepts */
    ATTN_SET_ENUM,   /* an enum field: one of choices */
    ATTN_SET_TEXT    /* owned string (char *); "" sets NULL */
} attn_setting_type;

enum {
    ATTN_SETTING_LESSON = 1, /* may be set in a lesson (not file paths: a lesson must work wherever copied) */
    ATTN_SETTING_TRACE = 2,  /* recorded in trace metadata as its text (tokens go as JSON rows instead) */
    ATTN_SETTING_FILE = 4    /* a file path */
};

typedef struct {
    const char *name; /* "mha"; matched ignoring case */
    int value;        /* the enum value */
    bool hidden;      /* accepted and shown, but not offered in messages ("auto", "on") */
} attn_setting_choice;

/* What the compare view does with a setting: show the trace with the setting
 * at values[0] beside the one at values[1] (from any other value it goes to
 * values[0]). name is the lesson value and the --compare argument. */
typedef struct {
    const char *name;      /* "padding"; NULL: the compare view cannot toggle this setting */
    const char *label;     /* "padding mask" (ATTN_N_: the interface translates it) */
    const char *values[2]; /* the two values toggled between */
    bool self_only;        /* meaningless in cross-attention, whose keys are the source */
} attn_setting_compare;

/* A command-line flag that takes no value: `--no-scale` sets scale to "false". */
typedef struct {
    const char *flag, *value, *help;
} attn_setting_switch;

typedef struct {
    const char *name;        /* lesson key and metadata key; the flag is the name with '-' for '_' */
    attn_setting_type type;
    size_t offset;           /* offsetof(attn_config, field) */
    unsigned flags;          /* ATTN_SETTING_* */
    const char *def;         /* the default as text (attn_config_init); NULL: zero, i.e. unset */
    const char *help;        /* one line: what the setting does (--help of `--flag ARG`) */
    const char *arg;         /* `--flag ARG` takes a value named ARG in --help; NULL: switches only */
    attn_setting_switch sw[3]; /* flags without a value (unused: flag NULL) */
    long min, max;           /* INT: the range */
    bool (*ok)(double x);    /* FLOAT, DOUBLE: the rule ... */
    const char *rule;        /* ... in words: "%s: must be <rule> (got %s)"; TEXT: not only blanks */
    const attn_setting_choice *choices; /* ENUM: ended by {NULL} */
    const char *const *cycle; /* values the window steps through, ended by NULL; NULL: none */
    attn_setting_compare compare; /* what the compare view toggles, if anything */
    /* Status text for c's value ("rope on (theta 10000)"), "" for nothing worth
     * saying. NULL: "name value" when the value is not the default. */
    void (*describe)(const attn_config *c, char *buf, int size);
} attn_setting;

/* Rows in order (the order of --help and of `attnlab info`). */
int attn_setting_count(void);
const attn_setting *attn_setting_at(int i);

/* The row called name ('-' read as '_'), or NULL. */
const attn_setting *attn_setting_find(const char *name);

/* The name closest to `name` among the rows that have all of `flags` and
 * extra[0..n_extra), within two edits; NULL if none is that close. */
const char *attn_setting_suggest(const char *name, unsigned flags, const char *const *extra, int n_extra);

/* Levenshtein distance between a and b (99 for words over 40 bytes). */
int attn_edit_distance(const char *a, const char *b);

/* Sets row's field of c from text. Errors name the setting and the rule:
 * "heads: 'x' is not a whole number", "dropout: must be at least 0 and below 1 (got 2)". */
attn_status attn_setting_parse(attn_config *c, const attn_setting *row, const char *text, attn_error *err);

/* c's value as text that attn_setting_parse reads back to the same value
 * ("true", "-inf", "0.1", "" for an unset string), whole: a text setting
 * (model, text, tokens) returns its own string, which c owns, never a copy
 * cut to size; a number or a name is written into buf, which needs
 * ATTN_SETTING_VALUE_MAX bytes (they all fit: the longest is a double's 24). */
#define ATTN_SETTING_VALUE_MAX 40
const char *attn_setting_format(const attn_config *c, const attn_setting *row, char *buf, int size);

/* True if c's value is the row's default. */
bool attn_setting_is_default(const attn_config *c, const attn_setting *row);

/* The status text of c's value (see describe): "" when nothing is worth saying.
 * A text longer than buf is cut at a character boundary, never inside one. */
const char *attn_setting_describe(const attn_config *c, const attn_setting *row, char *buf, int size);

/* Steps c to the value after its current one in row->cycle (the first if the
 * current value is not in the list). ATTN_ERR_CONFIG for a row without a cycle. */
attn_status attn_setting_cycle(attn_config *c, const attn_setting *row, attn_error *err);

/* The settings the compare view can toggle, in table order: index i in
 * [0, attn_compare_count()) is what a view spec's `compare` holds. */
int attn_compare_count(void);
const attn_setting *attn_compare_at(int i);
/* The index of the toggle called name ("causal", "padding", ...), or -1. */
int attn_compare_find(const char *name);
/* Their names for a message: "causal, padding, fill or window". Returns buf. */
const char *attn_compare_names(char *buf, int size);
/* c with compare toggle i applied: the other one of its two values. */
attn_status attn_compare_apply(attn_config *c, int i, attn_error *err);

/* Sets one setting by name: attn_setting_find, then attn_setting_parse.
 * An unknown name: "unknown setting 'hedas' (did you mean 'heads'?)". */
attn_status attn_config_set(attn_config *c, const char *key, const char *value, attn_error *err);

/* What a resolved run of c computed: c with the sizes of d (seq, batch,
 * d_model, heads, kv_heads, mode, past) and the causal mask off for
 * cross-attention. Its strings are NULL except model and text, which borrow
 * c's: nothing to free. Trace metadata records these values. */
attn_config attn_config_as_run(const attn_config *c, const attn_dims *d);

/* Checks every rule and derives dims and the padded token tables (caller frees
 * them with attn_tokens_free; source is empty unless cross-attention). One rule
 * is size: a config whose trace would exceed max_bytes is refused here, with
 * its estimated size, before anything large is allocated. */
attn_status attn_config_resolve(const attn_config *c, attn_dims *dims, attn_tokens *tokens,
                                attn_tokens *source, attn_error *err);

/* KV-cache decoding, step `step` (1-based) of base: the first `step` tokens of
 * every row, all but the last already in the cache (past = step − 1). *len
 * receives the number of steps (the longest row); step is clamped to
 * [1, *len]. out is a new config (pair with attn_config_free). */
attn_status attn_config_decode(const attn_config *base, int step, attn_config *out, int *len, attn_error *err);

/* What one trace of c may take, and which bound decided it (budget.h):
 * max_bytes as it is when set; else the smaller of memory_gib (else half the
 * physical memory) and what the address-space limit leaves for a forward pass. */
attn_budget attn_config_budget(const attn_config *c);
/* attn_config_budget(c).bytes */
double attn_config_max_bytes(const attn_config *c);

/* What decides which stages a run of c (resolved to d) records. */
attn_stage_ctx attn_config_stage_ctx(const attn_config *c, const attn_dims *d);

/* The settings of c that a stage's on-screen text depends on (attn_stage_formula_in). */
attn_stage_text attn_config_stage_text(const attn_config *c, bool model, bool cross);

const char *attn_mode_name(attn_mode m);
/* kv heads that --mode gqa picks for h heads: the smallest divisor of h
 * strictly between 1 and h, or 0 if there is none (h prime or < 4). */
int attn_gqa_default_groups(int h);
/* "-inf" or e.g. "-1e+09" into buf. */
const char *attn_format_mask_value(float v, char *buf, int size);

#endif
