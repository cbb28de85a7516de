/* settings.h — the settings vocabulary: every field of attn_config by name.
 *
 * A setting is a row of one table (settings.c): its name, type, range, default,
 * help line, switches, the values the window cycles through and what the
 * compare view toggles. Parsing, formatting, cycling and comparing a setting
 * all go through its row, so the command line, lessons, trace metadata and the
 * window read and write a config the same way. Checking a whole config and
 * deriving its sizes is config.h's. */
#ifndef ATTN_SETTINGS_H
#define ATTN_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/base/error.h"
#include "engine/trace/config_fields.h"

/* ---- the settings table ----
 *
 * One row per setting. Everything that reads or writes a setting by name walks
 * this table: command-line flags and --help, lesson keys, trace metadata,
 * `attnlab info`, the window and the "did you mean" suggestions. A new setting
 * is a field in attn_config, a row in settings.c's table, and the op that uses it. */

typedef enum {
    ATTN_SET_BOOL,   /* bool: true/false, on/off, yes/no, 1/0 */
    ATTN_SET_INT,    /* int from min to max (0 in the struct: unset) */
    ATTN_SET_U64,    /* uint64_t, 0 to 2^64-1 */
    ATTN_SET_FLOAT,  /* float that ok() accepts */
    ATTN_SET_DOUBLE, /* double that ok() accepts */
    ATTN_SET_ENUM,   /* an enum field: one of choices */
    ATTN_SET_TEXT,   /* owned string (char *); "" sets NULL */
    ATTN_SET_TILES   /* attn_tiles: "BQxBK" (each 1 to max), or "0" for off */
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

/* A mask fill as attn_setting_format writes it: "-inf" or e.g. "-1e+09" into buf. */
const char *attn_format_mask_value(float v, char *buf, int size);

#endif
