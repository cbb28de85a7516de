/* tokenizer_steps.c — tokenizer.json's normalizer, pre_tokenizer,
 * post_processor and decoder: each component read into a step, any other
 * refused by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_impl.h"

/* GPT-2's regex, which ByteLevel splits with when use_regex is set. */
#define GPT2_PATTERN "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"

static const char *type_of(const cJSON *o)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

static attn_status unsupported(attn_error *err, const char *what, const char *type, const char *supported)
{
    return attn_fail(err, ATTN_ERR_FORMAT, "%s '%.40s' is not supported (supported: %s)", what, type, supported);
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static attn_status nomem(attn_error *err) { return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); }

/* A pattern object {"String": s} (taken literally) or {"Regex": r}, compiled. */
static attn_status pattern(const cJSON *o, const char *what, bool anchored, pcre2_code **re, attn_error *err)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "pattern");
    const char *lit = str(p, "String"), *rx = str(p, "Regex");
    if (!lit && !rx) return attn_fail(err, ATTN_ERR_FORMAT, "%s has no String or Regex pattern", what);
    if (lit && !*lit) return attn_fail(err, ATTN_ERR_FORMAT, "%s has an empty pattern", what);
    return attn_tok_compile(lit ? lit : rx, lit != NULL, anchored, what, re, err);
}

/* A string of the file that a step puts into the text: UTF-8, as the text
 * it joins (the patterns that read that text next rely on it). */
static attn_status text_of(const char *s, const char *what, char **out, attn_error *err)
{
    size_t n = strlen(s), bad = attn_utf8_invalid_at(s, n);
    if (bad < n) return attn_fail(err, ATTN_ERR_FORMAT, "%s is not valid UTF-8 (byte %zu)", what, bad);
    return (*out = strdup(s)) ? ATTN_OK : nomem(err);
}

static attn_status prepend_scheme(const cJSON *o, const char *what, attn_tok_prepend *out, attn_error *err)
{
    const char *s = str(o, "prepend_scheme");
    const cJSON *legacy = cJSON_GetObjectItemCaseSensitive(o, "add_prefix_space");
    if (!s) *out = legacy && !cJSON_IsTrue(legacy) ? TOK_PREPEND_NEVER : TOK_PREPEND_ALWAYS;
    else if (!strcmp(s, "always")) *out = TOK_PREPEND_ALWAYS;
    else if (!strcmp(s, "first")) *out = TOK_PREPEND_FIRST;
    else if (!strcmp(s, "never")) *out = TOK_PREPEND_NEVER;
    else return attn_fail(err, ATTN_ERR_FORMAT, "%s prepend_scheme '%.20s' is not always, first or never", what, s);
    return ATTN_OK;
}

/* A Sequence's list under key, each item read by fn. */
typedef attn_status (*step_reader)(attn_tokenizer *t, const cJSON *o, attn_error *err);
static attn_status sequence(attn_tokenizer *t, const cJSON *o, const char *key, const char *what, step_reader fn,
                            attn_error *err)
{
    const cJSON *steps = cJSON_GetObjectItemCaseSensitive(o, key), *s;
    attn_status st;
    if (!cJSON_IsArray(steps)) return attn_fail(err, ATTN_ERR_FORMAT, "%s Sequence has no list", what);
    cJSON_ArrayForEach(s, steps) if ((st = fn(t, s, err))) return st;
    return ATTN_OK;
}

/* ---- normalizer ---- */

static attn_status read_norm(attn_tokenizer *t, const cJSON *o, attn_error *err)
{
    const char *type = type_of(o);
    attn_status st = ATTN_OK;
    if (!strcmp(type, "Sequence")) return sequence(t, o, "normalizers", "normalizer", read_norm, err);
    if (t->n_norm == TOK_MAX_STEPS)
        return attn_fail(err, ATTN_ERR_FORMAT, "normalizer has more than %d steps", TOK_MAX_STEPS);
    attn_tok_norm *n = &t->norm[t->n_norm];
    if (!strcmp(type, "Lowercase")) *n = (attn_tok_norm){.kind = TOK_NORM_LOWERCASE, .type = "Lowercase"};
    else if (!strcmp(type, "NFC")) *n = (attn_tok_norm){.kind = TOK_NORM_NFC, .type = "NFC"};
    else if (!strcmp(type, "NFKC")) *n = (attn_tok_norm){.kind = TOK_NORM_NFKC, .type = "NFKC"};
    else if (!strcmp(type, "Prepend")) {
        const char *p = str(o, "prepend");
        if (!p) return attn_fail(err, ATTN_ERR_FORMAT, "normalizer Prepend has no prepend string");
        *n = (attn_tok_norm){.kind = TOK_NORM_PREPEND, .type = "Prepend"};
        st = text_of(p, "normalizer Prepend's prepend", &n->text, err);
    } else if (!strcmp(type, "Replace")) {
        const char *c = str(o, "content");
        if (!c) return attn_fail(err, ATTN_ERR_FORMAT, "normalizer Replace has no content");
        *n = (attn_tok_norm){.kind = TOK_NORM_REPLACE, .type = "Replace"};
        if (!(st = text_of(c, "normalizer Replace's content", &n->text, err)))
            st = pattern(o, "normalizer Replace", false, &n->re, err);
    } else {
        return unsupported(err, "normalizer", type, "Lowercase, NFC, NFKC, Prepend, Replace, Sequence");
    }
    t->n_norm++; /* owned from here, freed with the rest */
    return st;
}

/* ---- pre_tokenizer ---- */

static attn_status behavior(const cJSON *o, attn_tok_behavior *out, attn_error *err)
{
    static const char *const NAMES[] = {"Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const char *b = str(o, "behavior");
    for (int i = 0; b && i < 5; i++)
        if (!strcmp(b, NAMES[i])) {
            *out = (attn_tok_behavior)i;
            return ATTN_OK;
        }
    return attn_fail(err, ATTN_ERR_FORMAT, "pre_tokenizer Split behavior '%.30s' is not one of Isolated, Removed, "
                     "MergedWithPrevious, MergedWithNext, Contiguous", b ? b : "");
}

static attn_status read_pre(attn_tokenizer *t, const cJSON *o, attn_error *err)
{
    const char *type = type_of(o);
    attn_status st;
    if (!strcmp(type, "Sequence")) return sequence(t, o, "pretokenizers", "pre_tokenizer", read_pre, err);
    if (t->n_pre == TOK_MAX_STEPS)
        return attn_fail(err, ATTN_ERR_FORMAT, "pre_tokenizer has more than %d steps", TOK_MAX_STEPS);
    attn_tok_pre *p = &t->pre[t->n_pre];
    memset(p, 0, sizeof *p);
    if (!strcmp(type, "Whitespace")) { /* the words and the punctuation runs are the pieces */
        *p = (attn_tok_pre){.kind = TOK_PRE_SPLIT, .type = "Whitespace", .behavior = TOK_REMOVED, .invert = true};
        st = attn_tok_compile("\\w+|[^\\w\\s]+", false, true, "pre_tokenizer Whitespace", &p->re, err);
    } else if (!strcmp(type, "WhitespaceSplit")) {
        *p = (attn_tok_pre){.kind = TOK_PRE_SPLIT, .type = "WhitespaceSplit", .behavior = TOK_REMOVED};
        st = attn_tok_compile("\\s+", false, true, "pre_tokenizer WhitespaceSplit", &p->re, err);
    } else if (!strcmp(type, "Digits")) {
        /* HF's Digits splits at char::is_numeric, which is \p{N} (Nd, Nl, No:
         * "٣", "²" and "Ⅻ" too): each one a piece, or each run of them */
        const cJSON *each = cJSON_GetObjectItemCaseSensitive(o, "individual_digits");
        *p = (attn_tok_pre){.kind = TOK_PRE_SPLIT, .type = "Digits", .behavior = TOK_ISOLATED};
        st = attn_tok_compile(cJSON_IsTrue(each) ? "\\p{N}" : "\\p{N}+", false, true, "pre_tokenizer Digits", &p->re, err);
    } else if (!strcmp(type, "Split")) {
        *p = (attn_tok_pre){.kind = TOK_PRE_SPLIT, .type = "Split"};
        p->invert = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "invert"));
        if (!(st = behavior(o, &p->behavior, err))) st = pattern(o, "pre_tokenizer Split", true, &p->re, err);
    } else if (!strcmp(type, "ByteLevel")) {
        *p = (attn_tok_pre){.kind = TOK_PRE_BYTELEVEL, .type = "ByteLevel"};
        p->prefix_space = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "add_prefix_space"));
        const cJSON *use = cJSON_GetObjectItemCaseSensitive(o, "use_regex");
        st = use && !cJSON_IsTrue(use) ? ATTN_OK : attn_tok_compile(GPT2_PATTERN, false, true, "pre_tokenizer ByteLevel", &p->re, err);
        t->byte_level = true;
    } else if (!strcmp(type, "Metaspace")) {
        const char *r = str(o, "replacement");
        *p = (attn_tok_pre){.kind = TOK_PRE_METASPACE, .type = "Metaspace"};
        const cJSON *split = cJSON_GetObjectItemCaseSensitive(o, "split");
        if (!r || !*r) return attn_fail(err, ATTN_ERR_FORMAT, "pre_tokenizer Metaspace has no replacement");
        t->n_pre++; /* owned from here, freed with the rest */
        if ((st = text_of(r, "pre_tokenizer Metaspace's replacement", &p->replacement, err)) ||
            (st = prepend_scheme(o, "pre_tokenizer Metaspace", &p->prepend, err)))
            return st;
        return !split || cJSON_IsTrue(split) ? attn_tok_compile(r, true, true, "pre_tokenizer Metaspace", &p->re, err) : ATTN_OK;
    } else {
        return unsupported(err, "pre_tokenizer", type,
                           "ByteLevel, Digits, Metaspace, Split, Whitespace, WhitespaceSplit, Sequence");
    }
    t->n_pre++;
    return st;
}

/* ---- post_processor ---- */

/* TemplateProcessing's single template: special tokens around sequence A. */
static attn_status read_template(attn_tokenizer *t, const cJSON *post, attn_error *err)
{
    const cJSON *single = cJSON_GetObjectItemCaseSensitive(post, "single"), *piece;
    const cJSON *specials = cJSON_GetObjectItemCaseSensitive(post, "special_tokens");
    int n = cJSON_GetArraySize(single);
    bool after = false;
    if (t->prefix) return attn_fail(err, ATTN_ERR_FORMAT, "post_processor has two templates");
    t->prefix = calloc((size_t)n + 1, sizeof *t->prefix);
    t->suffix = calloc((size_t)n + 1, sizeof *t->suffix);
    if (!t->prefix || !t->suffix) return nomem(err);
    cJSON_ArrayForEach(piece, single) {
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(piece, "SpecialToken");
        if (cJSON_GetObjectItemCaseSensitive(piece, "Sequence")) { after = true; continue; }
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(sp, "id");
        const cJSON *entry = cJSON_IsString(name) ? cJSON_GetObjectItemCaseSensitive(specials, name->valuestring) : NULL;
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(entry, "ids");
        if (!cJSON_IsArray(ids) || cJSON_GetArraySize(ids) != 1 || !cJSON_IsNumber(ids->child) ||
            ids->child->valuedouble < 0 || ids->child->valuedouble >= t->n_vocab)
            return attn_fail(err, ATTN_ERR_FORMAT, "post_processor: a special token of the template has no id of one token");
        int id = (int)ids->child->valuedouble;
        if (!t->vocab[id]) /* an id inside the table that no token has */
            return attn_fail(err, ATTN_ERR_FORMAT, "post_processor: the template's special token '%.40s' has id %d, "
                             "which is no token of the vocabulary", name->valuestring, id);
        if (after) t->suffix[t->n_suffix++] = id;
        else t->prefix[t->n_prefix++] = id;
    }
    return ATTN_OK;
}

static attn_status read_post(attn_tokenizer *t, const cJSON *post, attn_error *err)
{
    const char *type = type_of(post);
    if (!strcmp(type, "Sequence")) return sequence(t, post, "processors", "post_processor", read_post, err);
    if (!strcmp(type, "TemplateProcessing")) return read_template(t, post, err);
    if (!strcmp(type, "ByteLevel")) return ATTN_OK; /* it only trims offsets, which attnlab does not report */
    return unsupported(err, "post_processor", type, "TemplateProcessing, ByteLevel, Sequence");
}

/* ---- decoder ---- */

static attn_status read_dec(attn_tokenizer *t, const cJSON *o, attn_error *err)
{
    const char *type = type_of(o);
    if (!strcmp(type, "Sequence")) return sequence(t, o, "decoders", "decoder", read_dec, err);
    if (t->n_dec == TOK_MAX_STEPS)
        return attn_fail(err, ATTN_ERR_FORMAT, "decoder has more than %d steps", TOK_MAX_STEPS);
    attn_tok_dec *d = &t->dec[t->n_dec];
    memset(d, 0, sizeof *d);
    if (!strcmp(type, "ByteLevel")) d->kind = TOK_DEC_BYTELEVEL;
    else if (!strcmp(type, "ByteFallback")) d->kind = TOK_DEC_BYTEFALLBACK;
    else if (!strcmp(type, "Fuse")) d->kind = TOK_DEC_FUSE;
    else if (!strcmp(type, "Strip")) {
        const char *c = str(o, "content");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "start"), *b = cJSON_GetObjectItemCaseSensitive(o, "stop");
        if (!c || strlen(c) != 1 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || a->valuedouble < 0 ||
            b->valuedouble < 0 || a->valuedouble > 1024 || b->valuedouble > 1024)
            return attn_fail(err, ATTN_ERR_FORMAT, "decoder Strip needs a one-byte content and counts start, stop");
        *d = (attn_tok_dec){.kind = TOK_DEC_STRIP, .strip = c[0], .start = (int)a->valuedouble, .stop = (int)b->valuedouble};
    } else if (!strcmp(type, "Replace")) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "pattern");
        const char *from = str(p, "String"), *to = str(o, "content");
        if (!from || !*from || !to)
            return attn_fail(err, ATTN_ERR_FORMAT, "decoder Replace needs a String pattern and a content");
        d->kind = TOK_DEC_REPLACE;
        if (!(d->from = strdup(from)) || !(d->to = strdup(to))) {
            t->n_dec++;
            return nomem(err);
        }
    } else if (!strcmp(type, "Metaspace")) {
        const char *r = str(o, "replacement");
        attn_status st;
        if (!r || !*r) return attn_fail(err, ATTN_ERR_FORMAT, "decoder Metaspace has no replacement");
        d->kind = TOK_DEC_METASPACE;
        if (!(d->from = strdup(r))) return nomem(err);
        t->n_dec++;
        return (st = prepend_scheme(o, "decoder Metaspace", &d->prepend, err)) ? st : ATTN_OK;
    } else {
        return unsupported(err, "decoder", type, "ByteLevel, ByteFallback, Fuse, Metaspace, Replace, Strip, Sequence");
    }
    t->n_dec++;
    return ATTN_OK;
}

attn_status attn_tok_read_steps(attn_tokenizer *t, const cJSON *root, attn_error *err)
{
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    const cJSON *post = cJSON_GetObjectItemCaseSensitive(root, "post_processor");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    attn_status st;
    if ((norm && !cJSON_IsNull(norm) && (st = read_norm(t, norm, err))) ||
        (pre && !cJSON_IsNull(pre) && (st = read_pre(t, pre, err))) ||
        (post && !cJSON_IsNull(post) && (st = read_post(t, post, err))) ||
        (dec && !cJSON_IsNull(dec) && (st = read_dec(t, dec, err))))
        return st;
    for (int i = 0; i < t->n_norm; i++)
        if (t->norm[i].kind == TOK_NORM_LOWERCASE && !t->lower &&
            !(t->lower = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0)))
            return attn_fail(err, ATTN_ERR_IO, "Lowercase needs the C.UTF-8 locale, which is missing");
    return ATTN_OK;
}

void attn_tok_free_steps(attn_tokenizer *t)
{
    for (int i = 0; i < t->n_norm; i++) {
        free(t->norm[i].text);
        pcre2_code_free(t->norm[i].re);
    }
    for (int i = 0; i < t->n_pre; i++) {
        pcre2_code_free(t->pre[i].re);
        free(t->pre[i].replacement);
    }
    for (int i = 0; i < t->n_dec; i++) {
        free(t->dec[i].from);
        free(t->dec[i].to);
    }
    if (t->lower) freelocale(t->lower);
    t->n_norm = t->n_pre = t->n_dec = 0;
}
