/* measure.c — a number in the prose, measured again (measure.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "measure.h"

#include <cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/base/utf8.h"
#include "engine/model/loss.h"
#include "engine/model/model.h"
#include "engine/model/model_run.h"
#include "engine/run/stream.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/trace/config.h"
#include "source.h"

#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

static const char *const KINDS[] = {"weight", "prob", "rank", "loss", "card", "count",
                                    "sum",    "bytes", "stream", "max", "min"};
static const char *const WHATS[] = {"tokens",  "chars",   "letters", "punct",    "cells",   "masked",   "visible",
                                    "dropped", "peaks",   "layers",  "heads",    "kv_heads", "skipped", "key_tiles",
                                    "kv_bytes"};
static const char *const BYTES_WHATS[] = {"scores", "tile", "kv", "cache"};
/* count what=kv_bytes mode=: the attention modes whose cache it can count */
static const char *const MODES[] = {"mha", "gqa", "mqa", "mla"};

static bool one_of(const char *v, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i])) return true;
    return false;
}

void lesson_measure_free(lesson_measure *m)
{
    free(m->spec);
    m->spec = NULL;
}

/* ---- the number shown */

/* "0.81", "4", "1,836", "−0.3", "55%": the value and half a unit of its last
 * digit. False when s is not one number. */
static bool read_shown(const char *s, size_t n, double *v, double *half)
{
    char buf[64];
    size_t j = 0;
    int decimals = -1;
    bool percent = false, digit = false;
    size_t i = 0;
    if (n >= 3 && !memcmp(s, "\xE2\x88\x92", 3)) buf[j++] = '-', i = 3; /* U+2212 minus */
    else if (n && (s[0] == '-' || s[0] == '+')) buf[j++] = s[0], i = 1;
    for (; i < n && j + 1 < sizeof buf; i++) {
        char c = s[i];
        if (isdigit((unsigned char)c)) {
            buf[j++] = c, digit = true;
            if (decimals >= 0) decimals++;
        } else if (c == ',' && digit && decimals < 0 && i + 3 < n + 1) {
            continue; /* thousands */
        } else if (c == '.' && decimals < 0 && digit) {
            buf[j++] = c, decimals = 0;
        } else if (c == '%' && i + 1 == n && digit) {
            percent = true;
        } else {
            return false;
        }
    }
    if (!digit || i < n) return false;
    buf[j] = '\0';
    *v = strtod(buf, NULL);
    *half = 0.5 * pow(10.0, -(decimals < 0 ? 0 : decimals));
    if (percent) *v /= 100, *half /= 100;
    return true;
}

/* ---- quoting what the lesson wrote */

/* A message quotes the lesson's own text (a value, a key, a token, a card key)
 * by its first QUOTE_MAX bytes at most, cut where a character starts and
 * marked "…" when cut: a long argument never crowds out the reason that
 * follows it, nor ends the message inside a character. Written "'" QUOTE "'"
 * with QUOTED(s), or QUOTED_N(s, n) for text that is not zero-terminated. */
#define QUOTE_MAX 40
#define QUOTE "%.*s%s"
#define QUOTED_N(s, n) quote_len((s), (n)), (s), quote_len((s), (n)) < (int)(n) ? "…" : ""
#define QUOTED(s) QUOTED_N((s), strlen(s))

static int quote_len(const char *s, size_t n)
{
    /* cut where the character holding byte QUOTE_MAX starts */
    return n <= QUOTE_MAX ? (int)n : (int)attn_utf8_prev(s, QUOTE_MAX + 1);
}

/* ---- the spec */

static int set_int(const char *key, const char *v, int *out, char *why, size_t size)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (!*v || *end || x < 0 || x > 1 << 20) {
        snprintf(why, size, "%s: '" QUOTE "' is not a count from 0", key, QUOTED(v));
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int set_str(char *dst, size_t cap, const char *key, const char *v, char *why, size_t size)
{
    if (strlen(v) >= cap) {
        snprintf(why, size, "%s: '" QUOTE "' is longer than %zu bytes", key, QUOTED(v), cap - 1);
        return -1;
    }
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

static int set_key(lesson_measure *m, const char *k, const char *v, char *why, size_t size)
{
    if (!strcmp(k, "layer")) return set_int(k, v, &m->layer, why, size);
    if (!strcmp(k, "head")) {
        if (!strcmp(v, "all")) return m->head = LESSON_MEASURE_ALL_HEADS, 0;
        return set_int(k, v, &m->head, why, size);
    }
    if (!strcmp(k, "toggle")) {
        char names[128];
        if ((m->toggle = attn_compare_find(v)) >= 0) return 0;
        return snprintf(why, size, "toggle: '" QUOTE "' is not one of %s", QUOTED(v),
                        attn_compare_names(names, sizeof names)), -1;
    }
    if (!strcmp(k, "model")) return set_str(m->model, sizeof m->model, k, v, why, size);
    if (!strcmp(k, "batch")) return set_int(k, v, &m->batch, why, size);
    if (!strcmp(k, "step")) {
        if (set_int(k, v, &m->step, why, size)) return -1;
        if (m->step < 1) return snprintf(why, size, "step: steps count from 1"), -1;
        m->step--;
        return 0;
    }
    if (!strcmp(k, "stage")) return set_str(m->stage, sizeof m->stage, k, v, why, size);
    if (!strcmp(k, "row")) return set_str(m->row, sizeof m->row, k, v, why, size);
    if (!strcmp(k, "col")) return set_str(m->col, sizeof m->col, k, v, why, size);
    if (!strcmp(k, "at")) return set_str(m->at, sizeof m->at, k, v, why, size);
    if (!strcmp(k, "token")) return set_str(m->token, sizeof m->token, k, v, why, size);
    if (!strcmp(k, "key")) return set_str(m->key, sizeof m->key, k, v, why, size);
    if (!strcmp(k, "policy")) {
        if (attn_stream_policy_parse(v) >= 0) return set_str(m->policy, sizeof m->policy, k, v, why, size);
        return snprintf(why, size, "policy: '" QUOTE "' is not all, window or sink", QUOTED(v)), -1;
    }
    if (!strcmp(k, "window")) return set_int(k, v, &m->window, why, size);
    if (!strcmp(k, "keep_first")) return set_int(k, v, &m->keep_first, why, size);
    if (!strcmp(k, "tokens")) return set_int(k, v, &m->tokens, why, size);
    if (!strcmp(k, "one_text")) {
        if (strcmp(v, "true") && strcmp(v, "false"))
            return snprintf(why, size, "one_text: '" QUOTE "' is not true or false", QUOTED(v)), -1;
        return m->one_text = !strcmp(v, "true"), 0;
    }
    if (!strcmp(k, "what")) {
        if (m->kind == LESSON_MEASURE_BYTES) {
            if (one_of(v, BYTES_WHATS, COUNT(BYTES_WHATS))) return set_str(m->what, sizeof m->what, k, v, why, size);
            return snprintf(why, size, "what: '" QUOTE "' is not one of scores, tile, kv, cache", QUOTED(v)), -1;
        }
        if (one_of(v, WHATS, COUNT(WHATS))) return set_str(m->what, sizeof m->what, k, v, why, size);
        return snprintf(why, size,
                        "what: '" QUOTE "' is not one of tokens, chars, letters, punct, cells, masked, visible, "
                        "dropped, peaks, layers, heads, kv_heads, skipped, key_tiles, kv_bytes",
                        QUOTED(v)), -1;
    }
    if (!strcmp(k, "mode")) {
        for (int i = 0; i < COUNT(MODES); i++)
            if (!strcmp(v, MODES[i])) return set_str(m->mode, sizeof m->mode, k, v, why, size);
        return snprintf(why, size, "mode: '" QUOTE "' is not one of mha, gqa, mqa, mla", QUOTED(v)), -1;
    }
    if (!strcmp(k, "on")) {
        char names[96];
        if (lesson_source_known(v)) return set_str(m->on, sizeof m->on, k, v, why, size);
        return snprintf(why, size, "on: '" QUOTE "' is not one of %s (lessons/sources.tsv)", QUOTED(v),
                        lesson_source_names(names, sizeof names)), -1;
    }
    snprintf(why, size, "unknown measure key '" QUOTE "'", QUOTED(k));
    return -1;
}

/* Where the figure was measured: a card figure names its key's source
 * (lessons/sources.tsv), weight from the card is on the held-out sample, any
 * other is the step's own text. */
static int check_source(const lesson_measure *m, char *why, size_t size)
{
    if (m->kind == LESSON_MEASURE_CARD) {
        const char *src = lesson_source_of_key(m->key);
        if (!src)
            return snprintf(why, size, "card key=" QUOTE ": lessons/sources.tsv does not say where it was measured: add "
                            "it to a row", QUOTED(m->key)), -1;
        if (!m->on[0])
            return snprintf(why, size, "card key=" QUOTE ": say where it was measured: on=%s", QUOTED(m->key), src), -1;
        if (strcmp(m->on, src))
            return snprintf(why, size, "card key=" QUOTE " is measured on=%s, not on=%s (lessons/sources.tsv)",
                            QUOTED(m->key), src, m->on), -1;
        return 0;
    }
    if (m->kind == LESSON_MEASURE_STREAM && strcmp(m->on, "heldout"))
        return snprintf(why, size, "stream reads the model's held-out sample: say so with on=heldout"), -1;
    if (m->kind == LESSON_MEASURE_WEIGHT && m->on[0] && strcmp(m->on, "text") && strcmp(m->on, "heldout"))
        return snprintf(why, size, "weight on=%s: the model card's means are on=heldout, the step's own on=text",
                        m->on), -1;
    if (m->kind != LESSON_MEASURE_WEIGHT && m->kind != LESSON_MEASURE_STREAM && m->on[0] && strcmp(m->on, "text"))
        return snprintf(why, size, "%s on=%s: it measures the step's own text (on=text); a figure of the model "
                        "card is card key=... on=...", KINDS[m->kind], m->on), -1;
    return 0;
}

/* What each kind needs, once every key is read. */
static int check_needs(const lesson_measure *m, char *why, size_t size)
{
    bool heldout = !strcmp(m->on, "heldout");
    if (check_source(m, why, size)) return -1;
    if (m->head == LESSON_MEASURE_ALL_HEADS && m->kind != LESSON_MEASURE_COUNT && m->kind != LESSON_MEASURE_MAX &&
        m->kind != LESSON_MEASURE_MIN)
        return snprintf(why, size, "head=all is for count, max and min (the cells of every head together)"), -1;
    if (m->mode[0] && !(m->kind == LESSON_MEASURE_COUNT && !strcmp(m->what, "kv_bytes")))
        return snprintf(why, size, "mode= is for count what=kv_bytes (the cache that mode would keep)"), -1;
    if (m->model[0] && m->kind != LESSON_MEASURE_CARD && m->kind != LESSON_MEASURE_STREAM &&
        !(m->kind == LESSON_MEASURE_WEIGHT && heldout))
        return snprintf(why, size, "model= names the card that card and weight on=heldout read, or the model "
                                   "stream reads; other measures measure the step's own model"), -1;
    bool streams = m->policy[0] || m->window || m->keep_first || m->tokens || m->one_text;
    if (streams != (m->kind == LESSON_MEASURE_STREAM))
        return snprintf(why, size, "policy=, window=, keep_first=, tokens= and one_text= are stream's, and "
                                   "stream takes policy="), -1;
    switch (m->kind) {
    case LESSON_MEASURE_WEIGHT:
        if (heldout && (!m->at[0] || m->row[0] || m->col[0]))
            return snprintf(why, size, "weight on=heldout takes at= (a key of the card's means), not row= or col="), -1;
        if (!heldout && !m->at[0] && !(m->row[0] && m->col[0]))
            return snprintf(why, size, "weight needs row= and col= (one cell) or at= (a mean over rows)"), -1;
        if (!heldout && m->at[0] && m->col[0])
            return snprintf(why, size, "weight takes at= or col=, not both"), -1;
        return 0;
    case LESSON_MEASURE_PROB:
    case LESSON_MEASURE_RANK:
        if (!m->token[0] || !m->row[0]) return snprintf(why, size, "%s needs token= and row=", KINDS[m->kind]), -1;
        return 0;
    case LESSON_MEASURE_CARD:
        if (!m->key[0]) return snprintf(why, size, "card needs key= (a number of the model's card.json)"), -1;
        return 0;
    case LESSON_MEASURE_COUNT:
        if (!m->what[0]) return snprintf(why, size, "count needs what="), -1;
        if (!strcmp(m->what, "peaks") != (m->at[0] != '\0'))
            return snprintf(why, size, "count what=peaks takes at= (the offset the rows peak at), and only it does"), -1;
        return 0;
    case LESSON_MEASURE_SUM:
        if (!m->row[0] == !m->col[0]) return snprintf(why, size, "sum needs row= (a row) or col= (a column), not both"), -1;
        return 0;
    case LESSON_MEASURE_BYTES:
        if (!m->what[0]) return snprintf(why, size, "bytes needs what= (scores, tile, kv or cache)"), -1;
        return 0;
    case LESSON_MEASURE_STREAM:
        if (!m->policy[0]) return snprintf(why, size, "stream needs policy= (all, window or sink)"), -1;
        if (!strcmp(m->policy, "all") != !m->window)
            return snprintf(why, size, "stream policy=%s %s window= (the recent positions kept)", m->policy,
                            m->window ? "takes no" : "needs"), -1;
        if (!strcmp(m->policy, "sink") != !!m->keep_first)
            return snprintf(why, size, "stream policy=%s %s keep_first= (the first positions kept)", m->policy,
                            m->keep_first ? "takes no" : "needs"), -1;
        return 0;
    case LESSON_MEASURE_LOSS:
    case LESSON_MEASURE_MAX:
    case LESSON_MEASURE_MIN: return 0;
    }
    return 0;
}

int lesson_measure_parse(const char *s, size_t n, int line, lesson_measure *m, char *why, size_t size)
{
    *m = (lesson_measure){.line = line, .layer = -1, .head = -1, .batch = -1, .step = -1, .toggle = -1};
    const char *bar = memchr(s, '|', n);
    if (!bar) return snprintf(why, size, "a measure is {{NUMBER | WHAT key=value ...}}: no '|'"), -1;
    const char *a = s, *b = bar;
    while (a < b && isspace((unsigned char)*a)) a++;
    while (b > a && isspace((unsigned char)b[-1])) b--;
    if (!read_shown(a, (size_t)(b - a), &m->shown, &m->half_unit))
        return snprintf(why, size, "'" QUOTE "' is not a number (a measure shows one number)",
                        QUOTED_N(a, (size_t)(b - a))), -1;
    size_t rest = n - (size_t)(bar + 1 - s);
    char *spec = malloc(rest + 1);
    if (!spec) return snprintf(why, size, "out of memory"), -1;
    memcpy(spec, bar + 1, rest);
    spec[rest] = '\0';
    char *copy = strdup(spec), *save = NULL;
    if (!copy) return free(spec), snprintf(why, size, "out of memory"), -1;
    int ret = 0;
    char *w = strtok_r(copy, " \t\n", &save);
    int kind = -1;
    for (int i = 0; w && i < COUNT(KINDS); i++)
        if (!strcmp(w, KINDS[i])) kind = i;
    if (kind < 0) {
        w = w ? w : "";
        snprintf(why, size, "'" QUOTE "' is not a measure (weight, prob, rank, loss, card, count, sum, bytes, "
                 "stream, max, min)", QUOTED(w));
        ret = -1;
    }
    m->kind = (lesson_measure_kind)(kind < 0 ? 0 : kind);
    for (char *kv = ret ? NULL : strtok_r(NULL, " \t\n", &save); kv; kv = strtok_r(NULL, " \t\n", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) {
            snprintf(why, size, "'" QUOTE "' is not key=value", QUOTED(kv));
            ret = -1;
            break;
        }
        *eq = '\0';
        if ((ret = set_key(m, kv, eq + 1, why, size))) break;
    }
    if (!ret) ret = check_needs(m, why, size);
    free(copy);
    while (*spec && isspace((unsigned char)*spec)) memmove(spec, spec + 1, strlen(spec));
    m->spec = spec;
    if (ret) lesson_measure_free(m);
    return ret;
}

const char *lesson_measure_source(const lesson_measure *m)
{
    if (m->kind == LESSON_MEASURE_CARD) return lesson_source_of_key(m->key);
    if (m->kind == LESSON_MEASURE_STREAM) return "heldout";
    return m->kind == LESSON_MEASURE_WEIGHT && !strcmp(m->on, "heldout") ? "heldout" : "text";
}

bool lesson_measure_agrees(const lesson_measure *m, double value)
{
    /* the shown number may be the measurement rounded either way at a tie */
    return isfinite(value) && fabs(value - m->shown) <= m->half_unit * (1 + 1e-9) + 1e-12;
}

/* ---- measuring */

/* Row or column `v` of a picture whose labels are tokens[row][first ...]:
 * an index, or the first position holding that token. -1 with why. */
static int locate(const char *v, const attn_tokens *tk, int row, int first, int count, const char *what,
                  char *why, size_t size)
{
    char *end;
    long x = strtol(v, &end, 10);
    if (*v && !*end) {
        if (x >= 0 && x < count) return (int)x;
        snprintf(why, size, "%s %ld is outside the picture's %d %ss", what, x, count, what);
        return -1;
    }
    for (int i = 0; i < count; i++) {
        const char *t = tk && tk->tok ? attn_tokens_at(tk, row, first + i) : NULL;
        if (t && !strcmp(t, v)) return i;
    }
    snprintf(why, size, "no %s holds the token '" QUOTE "'", what, QUOTED(v));
    return -1;
}

/* ---- the files measures read, each once per check */

struct lesson_measure_file {
    char *path;          /* as resolved (realpath), so that "tang" and "./tang/" are one file */
    bool is_card;        /* read as a card (else as a tokenizer): one file may be asked for as both */
    attn_tokenizer *tok; /* a tokenizer.json, read */
    cJSON *card;         /* a card.json, parsed */
    char *why;           /* why it could not be read; NULL when it was */
};

static void file_clear(struct lesson_measure_file *f)
{
    free(f->path);
    attn_tokenizer_free(f->tok);
    cJSON_Delete(f->card);
    free(f->why);
    *f = (struct lesson_measure_file){0};
}

void lesson_measure_files_free(lesson_measure_files *fs)
{
    for (int i = 0; i < fs->n; i++) file_clear(&fs->items[i]);
    free(fs->items);
    *fs = (lesson_measure_files){0};
}

/* The file at path, kept or read now (a card as JSON, else a tokenizer):
 * its tokenizer or card, or NULL with why. */
static const struct lesson_measure_file *file_get(lesson_measure_files *fs, const char *path, bool card, char *why,
                                                  size_t size)
{
    char *real = realpath(path, NULL);
    const char *key = real ? real : path;
    for (int i = 0; i < fs->n; i++) {
        const struct lesson_measure_file *f = &fs->items[i];
        if (!f->path || f->is_card != card || strcmp(f->path, key)) continue; /* an empty place, or another file */
        free(real);
        if (f->why) snprintf(why, size, "%s", f->why);
        return f->why ? NULL : f;
    }
    if (!fs->items && !(fs->items = calloc(LESSON_MEASURE_FILES, sizeof *fs->items))) {
        free(real);
        return snprintf(why, size, "out of memory"), NULL;
    }
    struct lesson_measure_file *f;
    if (fs->n < LESSON_MEASURE_FILES) f = &fs->items[fs->n++];
    else f = &fs->items[fs->next], fs->next = (fs->next + 1) % LESSON_MEASURE_FILES;
    file_clear(f); /* the oldest, when every place is taken */
    f->path = real ? real : strdup(path);
    if (!f->path) return snprintf(why, size, "out of memory"), NULL; /* an empty place, skipped */
    f->is_card = card;
    attn_error err;
    char *text = NULL;
    size_t n = 0;
    if (card) {
        fs->card_loads++;
        if (attn_file_read(path, 1 << 24, &text, &n, &err)) snprintf(why, size, "%s", err.msg);
        else if (attn_json_parse(text, n, &f->card, &err)) snprintf(why, size, "%s: %s", path, err.msg);
        free(text);
    } else {
        fs->tokenizer_loads++;
        if (attn_tokenizer_load(path, &f->tok, &err)) snprintf(why, size, "%s", err.msg);
    }
    if (card ? f->card != NULL : f->tok != NULL) return f;
    f->why = strdup(why); /* the next measure of this file says the same, without reading it again */
    if (!f->why) file_clear(f); /* out of memory: an empty place, the file read again next time */
    return NULL;
}

/* The card of the model in model_dir; a training checkpoint's
 * (M/checkpoints/stepN) is its model's, M/card.json. */
static const cJSON *read_card(const char *model_dir, lesson_measure_files *fs, char *why, size_t size)
{
    if (!model_dir) return snprintf(why, size, "the step has no model, so no model card"), NULL;
    char base[4096], path[4200];
    long step;
    attn_error err;
    if (attn_model_base(model_dir, base, sizeof base, &step, &err)) return snprintf(why, size, "%s", err.msg), NULL;
    snprintf(path, sizeof path, "%s/card.json", base);
    const struct lesson_measure_file *f = file_get(fs, path, true, why, size);
    return f ? f->card : NULL;
}

/* card's number at a key such as "heldout_loss", "config.vocab_size" or
 * "training.curve.0.heldout_loss" (an index from 0 into a list). */
static const cJSON *card_at(const cJSON *card, const char *key)
{
    char part[64];
    const cJSON *x = card;
    for (const char *p = key; x && *p;) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof part) return NULL;
        memcpy(part, p, n);
        part[n] = '\0';
        if (cJSON_IsArray(x)) {
            char *end;
            long i = strtol(part, &end, 10);
            x = n && !*end && i >= 0 && i < cJSON_GetArraySize(x) ? cJSON_GetArrayItem(x, (int)i) : NULL;
        } else {
            x = cJSON_GetObjectItemCaseSensitive(x, part);
        }
        p += n + (p[n] == '.');
    }
    return x;
}

static int card_number(const lesson_measure *m, const char *model_dir, lesson_measure_files *fs, double *value,
                       char *why, size_t size)
{
    char dir[4096];
    attn_error err;
    if (m->model[0]) { /* another model's card than the step's */
        if (attn_model_find(m->model, dir, sizeof dir, &err)) return snprintf(why, size, "model: %s", err.msg), -1;
        model_dir = dir;
    }
    const cJSON *card = read_card(model_dir, fs, why, size);
    if (!card) return -1;
    int ret = -1;
    if (m->kind == LESSON_MEASURE_CARD) {
        const cJSON *x = card_at(card, m->key);
        if (cJSON_IsNumber(x)) *value = x->valuedouble, ret = 0;
        else snprintf(why, size, "the model card has no number '" QUOTE "'", QUOTED(m->key));
    } else {
        const cJSON *h;
        cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(card, "heads"))
        {
            const cJSON *l = cJSON_GetObjectItemCaseSensitive(h, "layer"), *k = cJSON_GetObjectItemCaseSensitive(h, "head");
            if (!cJSON_IsNumber(l) || !cJSON_IsNumber(k) || l->valueint != m->layer || k->valueint != m->head) continue;
            const char *at = !strcmp(m->at, "self") ? "0" : m->at;
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(h, "mean"), at);
            if (cJSON_IsNumber(x)) *value = x->valuedouble, ret = 0;
            else snprintf(why, size, "the model card has no mean '" QUOTE "' for layer %d head %d", QUOTED(m->at), m->layer,
                          m->head);
            break;
        }
        if (ret && !why[0]) snprintf(why, size, "the model card has no layer %d head %d", m->layer, m->head);
    }
    return ret;
}

/* The offset `at` names: a number, self (0) or first (*first set). */
static int read_at(const char *at, long *off, bool *first, char *why, size_t size)
{
    *first = !strcmp(at, "first");
    *off = 0;
    if (*first || !strcmp(at, "self")) return 0;
    char *end;
    *off = strtol(at, &end, 10);
    if (!*at || *end) return snprintf(why, size, "at: '" QUOTE "' is not an offset, self or first", QUOTED(at)), -1;
    return 0;
}

/* Whether query row i has a choice: more than one key the mask keeps. mask is
 * the step's mask for the picture measured, or NULL when the trace has none
 * (nothing is masked: every row of more than one key has a choice). Under the
 * causal mask that is every row but the first query's, which sees only
 * itself and puts all its weight there. */
static bool has_choice(const attn_matrix *mask, int cols, int i)
{
    if (!mask) return cols > 1;
    int kept = 0;
    for (int j = 0; j < mask->cols && kept < 2; j++) kept += !(mask->data[(size_t)i * (size_t)mask->cols + (size_t)j] < 0);
    return kept > 1;
}

/* The mean over query rows i of the key at i + offset (or key 0 with first),
 * over the rows that have a choice (has_choice) and that key, as the model
 * cards count (scripts/train/metrics.py: every query but the first): a key the
 * mask removes counts, with its weight 0. */
static int mean_at(const attn_matrix *mx, const attn_matrix *mask, const char *at, int row0, int past, double *value,
                   char *why, size_t size)
{
    bool first;
    long off;
    if (read_at(at, &off, &first, why, size)) return -1;
    double sum = 0;
    int n = 0;
    for (int i = row0; i < mx->rows; i++) {
        long j = first ? 0 : past + i + off; /* a query's own key is at its position, past included */
        if (j < 0 || j >= mx->cols || !has_choice(mask, mx->cols, i)) continue;
        sum += mx->data[(size_t)i * (size_t)mx->cols + (size_t)j];
        n++;
    }
    if (!n) return snprintf(why, size, "no query row with a choice of keys has a key at " QUOTE, QUOTED(at)), -1;
    *value = sum / n;
    return 0;
}

/* The step's mask of the layer, when it matches the picture mx (queries × keys), else NULL. */
static const attn_matrix *mask_of(const attn_trace *tr, const lesson_measure *m, const attn_matrix *mx,
                                  attn_matrix *out)
{
    const attn_tensor *t = attn_trace_stage(tr, m->layer >= 0 ? m->layer : 0, ATTN_STAGE_MASK);
    if (!t || attn_trace_matrix_of(tr, t, m->batch, m->head < 0 ? 0 : m->head, out)) return NULL;
    return out->rows == mx->rows && out->cols == mx->cols ? out : NULL;
}

/* One head's cells of the layer that the mask removes (masked: the mask holds
 * its fill there, −∞ or a negative number), keeps (visible) or that dropout
 * zeroed (dropped: 0 in weights_dropout where weights is not). */
static int count_cells(const char *w, const attn_trace *tr, int layer, int batch, int head, double *n, char *why,
                       size_t size)
{
    bool dropped = !strcmp(w, "dropped");
    attn_matrix a, b = {0};
    const attn_tensor *t = attn_trace_stage(tr, layer, dropped ? ATTN_STAGE_WEIGHTS_DROPOUT : ATTN_STAGE_MASK);
    if (!t || attn_trace_matrix_of(tr, t, batch, head, &a))
        return snprintf(why, size, "the step's trace has no %s", dropped ? "weights_dropout (train = true, dropout > 0)" : "mask"), -1;
    if (dropped && attn_trace_matrix_of(tr, attn_trace_stage(tr, layer, ATTN_STAGE_WEIGHTS), batch, head, &b))
        return snprintf(why, size, "the step's trace has no weights"), -1;
    for (size_t i = 0; i < (size_t)a.rows * (size_t)a.cols; i++)
        *n += dropped ? a.data[i] == 0 && b.data[i] != 0 : (a.data[i] < 0) == !strcmp(w, "masked");
    return 0;
}

/* With tiles: the BQ × BK tiles the causal mask (fill −∞) hides from their
 * whole query tile, which the tiled path skips (as tiles.c and the
 * FlashAttention view count them); -1 without tiles. */
static int skipped_tiles(const attn_trace *tr, double *n)
{
    const attn_dims *d = &tr->dims;
    const attn_config *c = &tr->cfg;
    if (c->tiles.q <= 0 || c->tiles.k <= 0) return -1;
    *n = 0;
    if (d->cross || c->causal != ATTN_CAUSAL_ON || c->mask_value != -INFINITY) return 0;
    for (int i0 = 0; i0 < d->s; i0 += c->tiles.q) {
        int last = d->P + (i0 + c->tiles.q < d->s ? i0 + c->tiles.q : d->s) - 1; /* the tile's last query position */
        for (int j0 = 0; j0 < d->t; j0 += c->tiles.k) *n += j0 > last;
    }
    return 0;
}

/* Float32 bytes: one head's s × t scores, one BQ × BK tile, one K/V head's
 * keys and values for the t keys, or the whole KV cache of t positions. */
static int bytes(const lesson_measure *m, const attn_trace *tr, double *value, char *why, size_t size)
{
    const attn_dims *d = &tr->dims;
    const char *w = m->what;
    if (!strcmp(w, "scores")) *value = 4.0 * d->s * d->t;
    else if (!strcmp(w, "tile")) {
        if (tr->cfg.tiles.q <= 0 || tr->cfg.tiles.k <= 0)
            return snprintf(why, size, "the step's configuration has no tiles (tiles = BQxBK)"), -1;
        *value = 4.0 * tr->cfg.tiles.q * tr->cfg.tiles.k;
    } else if (d->mode == ATTN_MODE_MLA) {
        return snprintf(why, size, "bytes what=%s: MLA's cache is its latent, not keys and values", w), -1;
    } else {
        *value = 2.0 * 4.0 * d->t * d->k * (!strcmp(w, "cache") ? (double)d->g * tr->n_layers : 1.0);
    }
    return 0;
}

/* The KV cache's bytes per token, every layer, float32, as model cards count
 * (kv_bytes_per_token): the step's own configuration, or with mode= the same
 * heads in that mode, as the decode panel lists them: MHA g = h, GQA the
 * step's g or else the panel's (the smallest divisor of h above 1), MQA
 * g = 1, MLA the latent and the RoPE key (R + D: the step's, an MLA step). */
static int kv_bytes(const char *mode, const attn_trace *tr, double *value, char *why, size_t size)
{
    attn_dims d = tr->dims;
    if (!strcmp(mode, "mla") && d.mode != ATTN_MODE_MLA)
        return snprintf(why, size, "count what=kv_bytes mode=mla needs an MLA step (its kv_rank and rope_dim)"), -1;
    if (mode[0] && strcmp(mode, "mla")) {
        int g = !strcmp(mode, "mha")   ? d.h
                : !strcmp(mode, "mqa") ? 1
                : d.mode == ATTN_MODE_GQA ? d.g : attn_gqa_default_groups(d.h);
        if (g <= 0) return snprintf(why, size, "count what=kv_bytes mode=gqa: %d heads have no groups", d.h), -1;
        d.mode = ATTN_MODE_MHA, d.g = g;
    }
    *value = attn_kv_bytes_per_token(&d, tr->n_layers, 4);
    return 0;
}

static int count(const lesson_measure *m, const attn_trace *tr, const attn_matrix *mx, int batch, double *value,
                 char *why, size_t size)
{
    const attn_dims *d = &tr->dims;
    const char *w = m->what;
    bool all = m->head == LESSON_MEASURE_ALL_HEADS;
    if (!strcmp(w, "layers")) *value = tr->n_layers;
    else if (!strcmp(w, "heads")) *value = d->h;
    else if (!strcmp(w, "kv_heads")) *value = d->g;
    else if (!strcmp(w, "kv_bytes")) return kv_bytes(m->mode, tr, value, why, size);
    else if (!strcmp(w, "tokens")) *value = tr->tokens.lengths ? tr->tokens.lengths[batch] : d->L;
    else if (!strcmp(w, "cells")) *value = (double)mx->rows * mx->cols * (all ? d->h : 1);
    else if (!strcmp(w, "chars") || !strcmp(w, "letters") || !strcmp(w, "punct")) {
        /* the text's characters, special tokens aside: all, or only letters
         * and digits (静夜思's 20), or only punctuation (its 4) */
        double n = 0;
        int len = tr->tokens.lengths ? tr->tokens.lengths[batch] : d->L;
        for (int i = 0; i < len; i++) {
            const char *t = attn_tokens_at(&tr->tokens, batch, i);
            if (!t || (t[0] == '<' && t[strlen(t) - 1] == '>')) continue;
            for (size_t p = 0, tl = strlen(t); p < tl; p = attn_utf8_next(t, tl, p)) {
                uint32_t cp;
                attn_utf8_decode(t + p, tl - p, &cp);
                int cat = utf8proc_category((utf8proc_int32_t)cp);
                bool punct = cat >= UTF8PROC_CATEGORY_PC && cat <= UTF8PROC_CATEGORY_PO;
                bool letter = cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_NO;
                n += w[0] == 'c' || (w[0] == 'p' ? punct : letter);
            }
        }
        *value = n;
    } else if (!strcmp(w, "key_tiles")) { /* ⌈t / BK⌉: the key tiles a query row passes */
        if (!d->T) return snprintf(why, size, "the step's configuration has no tiles (tiles = BQxBK)"), -1;
        *value = d->T;
    } else if (!strcmp(w, "skipped")) {
        if (skipped_tiles(tr, value)) return snprintf(why, size, "the step's configuration has no tiles (tiles = BQxBK)"), -1;
    } else if (!strcmp(w, "peaks")) { /* the query rows whose largest value is the key at the offset */
        bool first;
        long off;
        if (read_at(m->at, &off, &first, why, size)) return -1;
        double n = 0;
        for (int i = 0; i < mx->rows; i++) {
            const float *r = mx->data + (size_t)i * (size_t)mx->cols;
            int best = 0;
            for (int j = 1; j < mx->cols; j++) best = r[j] > r[best] ? j : best;
            n += best == (first ? 0 : tr->dims.P + i + off);
        }
        *value = n;
    } else { /* masked, visible, dropped: cells of the layer's picture, one head or all */
        int layer = m->layer >= 0 ? m->layer : 0;
        *value = 0;
        for (int h = all ? 0 : m->head, end = all ? d->h : m->head + 1; h < end; h++)
            if (count_cells(w, tr, layer, batch, h, value, why, size)) return -1;
    }
    return 0;
}

/* A row or a column of mx added up. */
static int sum_line(const lesson_measure *m, const attn_trace *tr, const attn_matrix *mx, int batch, double *value,
                    char *why, size_t size)
{
    bool row = m->row[0];
    int at = row ? locate(m->row, &tr->tokens, batch, tr->dims.P, mx->rows, "row", why, size)
                 : locate(m->col, tr->dims.cross ? &tr->source : &tr->tokens, batch, 0, mx->cols, "column", why, size);
    if (at < 0) return -1;
    double sum = 0;
    for (int i = 0, n = row ? mx->cols : mx->rows; i < n; i++)
        sum += mx->data[row ? (size_t)at * (size_t)mx->cols + (size_t)i : (size_t)i * (size_t)mx->cols + (size_t)at];
    *value = sum;
    return 0;
}

/* max, min: the largest or smallest finite value of one head's picture
 * (head=all: of every head's), so that the cells a mask sets to −∞ are left
 * out: the range of the scores a step shows. */
static int extreme(const lesson_measure *m, const attn_trace *tr, const char *name, double *value, char *why,
                   size_t size)
{
    bool all = m->head == LESSON_MEASURE_ALL_HEADS, max = m->kind == LESSON_MEASURE_MAX, any = false;
    for (int h = all ? 0 : m->head, end = all ? tr->dims.h : m->head + 1; h < end; h++) {
        attn_matrix mx;
        if (attn_trace_matrix(tr, name, m->batch, h, &mx)) return snprintf(why, size, "the step's trace has no %s", name), -1;
        for (size_t i = 0; i < (size_t)mx.rows * (size_t)mx.cols; i++) {
            double x = mx.data[i];
            if (isfinite(x) && (!any || (max ? x > *value : x < *value))) *value = x, any = true;
        }
    }
    if (!any) return snprintf(why, size, "%s has no finite value to measure", name), -1;
    return 0;
}

/* loss row=R: −log p of the token that follows row R, what that position adds
 * to the loss. */
static int row_loss(const lesson_measure *m, const attn_trace *tr, double *value, char *why, size_t size)
{
    const attn_dims *d = &tr->dims;
    const attn_tensor *lg = attn_trace_stage(tr, -1, ATTN_STAGE_LOGITS);
    if (!lg || !tr->token_ids) return snprintf(why, size, "the step's trace has no logits (no model)"), -1;
    int r = locate(m->row, &tr->tokens, m->batch, d->P, d->s, "row", why, size);
    if (r < 0) return -1;
    const int *ids = tr->token_ids + (size_t)m->batch * (size_t)d->L;
    int at = d->P + r;
    if (at + 1 >= d->L || ids[at] < 0 || ids[at + 1] < 0)
        return snprintf(why, size, "row %d has no next token in the text", r), -1;
    size_t row = (size_t)m->batch * (size_t)d->s + (size_t)r;
    attn_tensor_fill(lg, row, 1);
    *value = attn_token_nll(lg->data + row * (size_t)d->V, d->V, ids[at + 1]);
    return 0;
}

/* The batch row, head and layer m reads, against tr: each one of tr's, or
 * -1 with why. (The trace's tables are read at them unchecked: the tokens'
 * lengths and strings, the token ids, the logits' rows.) */
static int check_ranges(const lesson_measure *m, const attn_trace *tr, char *why, size_t size)
{
    const attn_dims *d = &tr->dims;
    int rows = tr->tokens.tok && tr->tokens.rows < d->b ? tr->tokens.rows : d->b;
    if (m->batch < 0 || m->batch >= rows)
        return snprintf(why, size, "batch %d is outside the trace's %d batch row%s", m->batch, rows,
                        rows == 1 ? "" : "s"), -1;
    if (m->head != LESSON_MEASURE_ALL_HEADS && (m->head < 0 || m->head >= d->h))
        return snprintf(why, size, "head %d is outside the trace's %d head%s", m->head, d->h,
                        d->h == 1 ? "" : "s"), -1;
    if (m->layer < 0 || m->layer >= tr->n_layers)
        return snprintf(why, size, "layer %d is outside the trace's %d layer%s", m->layer, tr->n_layers,
                        tr->n_layers == 1 ? "" : "s"), -1;
    return 0;
}

/* prob and rank: the id of m's token in the tokenizer of model_dir, or -1 with why. */
static int token_id(const lesson_measure *m, const char *model_dir, lesson_measure_files *fs, char *why, size_t size)
{
    char path[4096];
    if (!model_dir) return snprintf(why, size, "%s needs a model", KINDS[m->kind]), -1;
    if (snprintf(path, sizeof path, "%s/tokenizer.json", model_dir) >= (int)sizeof path)
        return snprintf(why, size, "the model's folder path is too long"), -1;
    const struct lesson_measure_file *f = file_get(fs, path, false, why, size);
    if (!f) return -1;
    int id = attn_tokenizer_find(f->tok, m->token);
    if (id < 0) snprintf(why, size, "the model has no token '" QUOTE "'", QUOTED(m->token));
    return id;
}

/* stream: m's model (the step's, or model=) reads its held-out sample (one
 * text with one_text, its first `tokens` only with tokens=) over m's cache;
 * the mean loss over the positions the policy scores. */
static int stream_mean(const lesson_measure *m, const char *model_dir, double *value, char *why, size_t size)
{
    char dir[4096];
    attn_error err;
    if (m->model[0] && attn_model_find(m->model, dir, sizeof dir, &err)) return snprintf(why, size, "model: %s", err.msg), -1;
    if (m->model[0]) model_dir = dir;
    if (!model_dir) return snprintf(why, size, "stream needs a model (the step's, or model=)"), -1;
    attn_model md;
    attn_config cfg, run = {0};
    int *ids = NULL, n = 0, texts, scored = 0;
    double *loss = NULL;
    attn_stream_opts o = {(attn_stream_policy)attn_stream_policy_parse(m->policy), m->window, m->keep_first};
    if (attn_model_load(model_dir, &md, &err)) return snprintf(why, size, "%s", err.msg), -1;
    attn_config_init(&cfg);
    attn_status st = attn_config_set(&cfg, "model", model_dir, &err);
    if (!st) st = attn_model_run_config(&md, &cfg, &run, &err);
    if (!st) st = attn_stream_heldout(&md, &ids, &n, &texts, &err);
    if (!st && m->one_text) attn_stream_join(&md, ids, &n);
    if (!st && m->tokens && m->tokens < n) n = m->tokens;
    if (!st && n < 2) st = attn_fail(&err, ATTN_ERR_CONFIG, "the text is %d token%s: nothing to predict", n,
                                     n == 1 ? "" : "s");
    if (!st && !(loss = malloc((size_t)(n - 1) * sizeof *loss))) st = attn_fail(&err, ATTN_ERR_NOMEM, "out of memory");
    if (!st) st = attn_stream_run(&md, &run, &o, ids, n, loss, &scored, &err);
    double sum = 0;
    for (int i = 0; !st && i < n - 1; i++) sum += isnan(loss[i]) ? 0 : loss[i];
    if (st) snprintf(why, size, "%s", err.msg);
    else *value = sum / scored;
    free(loss);
    free(ids);
    attn_config_free(&run);
    attn_config_free(&cfg);
    attn_model_free(&md);
    return st ? -1 : 0;
}

static int eval(const lesson_measure *m, const attn_trace *tr, const char *stage, const char *model_dir,
                lesson_measure_files *fs, double *value, char *why, size_t size)
{
    if (m->kind == LESSON_MEASURE_CARD || (m->kind == LESSON_MEASURE_WEIGHT && !strcmp(m->on, "heldout")))
        return card_number(m, model_dir, fs, value, why, size); /* the card's layer and head, not the trace's */
    if (m->kind == LESSON_MEASURE_STREAM) return stream_mean(m, model_dir, value, why, size); /* no trace read */
    if (check_ranges(m, tr, why, size)) return -1;
    if (m->kind == LESSON_MEASURE_LOSS && m->row[0]) return row_loss(m, tr, value, why, size);
    if (m->kind == LESSON_MEASURE_BYTES) return bytes(m, tr, value, why, size);
    if (m->kind == LESSON_MEASURE_LOSS) {
        int counted = 0;
        *value = attn_trace_loss(tr, m->batch, &counted);
        if (!counted) return snprintf(why, size, "the step's trace has no loss (no model, or no next token)"), -1;
        return 0;
    }
    /* the picture the measure reads: stage of the layer */
    const char *base = m->kind == LESSON_MEASURE_PROB || m->kind == LESSON_MEASURE_RANK ? "probs"
                       : m->stage[0]                                                   ? m->stage
                                                                                       : stage;
    const char *rest = base;
    attn_tensor_name_layer(base, &rest); /* the step's stage may come as "layers.2.weights" */
    char full[ATTN_MAX_NAME];
    const attn_stage_info *in = attn_stage_lookup(rest);
    bool layered = in && !(m->kind == LESSON_MEASURE_PROB || m->kind == LESSON_MEASURE_RANK) &&
                   attn_trace_find(tr, attn_tensor_name(m->layer, tr->n_layers, rest, full, sizeof full));
    const char *name = layered ? full : rest;
    attn_matrix mx = {0};
    if (attn_trace_matrix(tr, name, m->batch, m->head < 0 ? 0 : m->head, &mx))
        return snprintf(why, size, "the step's trace has no %s", name), -1;
    if (m->kind == LESSON_MEASURE_COUNT) return count(m, tr, &mx, m->batch, value, why, size);
    if (m->kind == LESSON_MEASURE_MAX || m->kind == LESSON_MEASURE_MIN) return extreme(m, tr, name, value, why, size);
    if (m->kind == LESSON_MEASURE_SUM) return sum_line(m, tr, &mx, m->batch, value, why, size);
    const attn_dims *d = &tr->dims;
    int past = d->P;
    int r = 0;
    if (m->row[0] && (r = locate(m->row, &tr->tokens, m->batch, past, mx.rows, "row", why, size)) < 0) return -1;
    if (m->kind == LESSON_MEASURE_WEIGHT) {
        attn_matrix mk;
        if (m->at[0]) return mean_at(&mx, mask_of(tr, m, &mx, &mk), m->at, m->row[0] ? r : 0, past, value, why, size);
        const attn_tokens *keys = d->cross ? &tr->source : &tr->tokens;
        int c = locate(m->col, keys, m->batch, 0, mx.cols, "column", why, size);
        if (c < 0) return -1;
        *value = mx.data[(size_t)r * (size_t)mx.cols + (size_t)c];
        return 0;
    }
    /* prob and rank: the token's column is its id */
    int id = token_id(m, model_dir, fs, why, size);
    if (id < 0) return -1;
    if (id >= mx.cols) return snprintf(why, size, "the model has no token '" QUOTE "'", QUOTED(m->token)), -1;
    const float *row = mx.data + (size_t)r * (size_t)mx.cols;
    if (m->kind == LESSON_MEASURE_PROB) {
        *value = row[id];
    } else {
        int above = 0;
        for (int j = 0; j < mx.cols; j++) above += row[j] > row[id];
        *value = above + 1;
    }
    return 0;
}

int lesson_measure_eval(const lesson_measure *m, const attn_trace *tr, int layer, int head, int batch,
                        const char *stage, const char *model_dir, lesson_measure_files *files, double *value,
                        char *why, size_t size)
{
    why[0] = '\0';
    lesson_measure mm = *m;
    if (mm.layer < 0) mm.layer = layer;
    if (mm.head == -1) mm.head = head;
    if (mm.batch < 0) mm.batch = batch;
    lesson_measure_files own = {0};
    int ret = eval(&mm, tr, stage, model_dir, files ? files : &own, value, why, size);
    lesson_measure_files_free(&own);
    return ret;
}
