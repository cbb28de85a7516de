/* tokenizer.c — reading tokenizer.json, and the encode / decode pipeline. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "fileio.h"
#include "tokenizer.h"
#include "tokenizer_impl.h"
#include "utf8.h"

#define TOKENIZER_LIMIT (64u << 20)
#define MAX_VOCAB (1 << 22)

/* ---- reading the file ---- */

static const char *type_of(const cJSON *o)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

static attn_status unsupported(attn_error *err, const char *what, const char *type, const char *supported)
{
    return attn_fail(err, ATTN_ERR_FORMAT, "%s '%.40s' is not supported (supported: %s)", what, type, supported);
}

/* Places id → string, growing the table. */
static attn_status assign(attn_tokenizer *t, const char *s, double idv, bool special, attn_error *err)
{
    if (!(idv >= 0 && idv < MAX_VOCAB) || idv != (int)idv)
        return attn_fail(err, ATTN_ERR_FORMAT, "token '%.40s' has id %g, not a whole number from 0 to %d", s, idv,
                         MAX_VOCAB - 1);
    int id = (int)idv;
    if (id >= t->n_vocab) {
        int n = id + 1 > 2 * t->n_vocab ? id + 1 : 2 * t->n_vocab;
        char **v = realloc(t->vocab, (size_t)n * sizeof *v);
        if (v) t->vocab = v;
        bool *sp = realloc(t->special, (size_t)n * sizeof *sp);
        if (sp) t->special = sp;
        if (!v || !sp) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        memset(v + t->n_vocab, 0, (size_t)(n - t->n_vocab) * sizeof *v);
        memset(sp + t->n_vocab, 0, (size_t)(n - t->n_vocab) * sizeof *sp);
        t->n_vocab = n;
    }
    if (t->vocab[id] && strcmp(t->vocab[id], s))
        return attn_fail(err, ATTN_ERR_FORMAT, "id %d is both '%.40s' and '%.40s'", id, t->vocab[id], s);
    if (!t->vocab[id] && !(t->vocab[id] = strdup(s))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    t->special[id] |= special;
    if (tok_map_put(&t->ids, s, id)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    return ATTN_OK;
}

static attn_status read_merges(attn_tokenizer *t, const cJSON *merges, attn_error *err)
{
    const cJSON *m;
    int rank = 0;
    char key[520];
    cJSON_ArrayForEach(m, merges) {
        const char *a, *b;
        char pair[520];
        if (cJSON_IsString(m)) { /* "a b" */
            snprintf(pair, sizeof pair, "%s", m->valuestring);
            char *sp = strchr(pair, ' ');
            if (!sp || strchr(sp + 1, ' '))
                return attn_fail(err, ATTN_ERR_FORMAT, "merge %d ('%.40s') is not two tokens", rank + 1, m->valuestring);
            *sp = '\0';
            a = pair, b = sp + 1;
        } else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 && cJSON_IsString(m->child) &&
                   cJSON_IsString(m->child->next)) { /* ["a", "b"] */
            a = m->child->valuestring, b = m->child->next->valuestring;
        } else {
            return attn_fail(err, ATTN_ERR_FORMAT, "merge %d is neither \"a b\" nor [\"a\", \"b\"]", rank + 1);
        }
        if (strlen(a) + strlen(b) + 2 > sizeof key)
            return attn_fail(err, ATTN_ERR_FORMAT, "merge %d is longer than %zu bytes", rank + 1, sizeof key - 2);
        size_t na = strlen(a), nb = strlen(b);
        memcpy(key, a, na);
        memcpy(key + na, b, nb + 1);
        if (tok_map_get(&t->ids, a) < 0 || tok_map_get(&t->ids, b) < 0 || tok_map_get(&t->ids, key) < 0)
            return attn_fail(err, ATTN_ERR_FORMAT, "merge %d ('%.30s' + '%.30s') names a token not in the vocabulary",
                             rank + 1, a, b);
        key[na] = '\x1f';
        memcpy(key + na + 1, b, nb + 1);
        if (tok_map_put(&t->merges, key, rank++)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    return ATTN_OK;
}

static attn_status read_model(attn_tokenizer *t, const cJSON *model, attn_error *err)
{
    const char *type = type_of(model);
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab"), *v;
    attn_status st;
    if (!strcmp(type, "WordLevel")) t->model = TOK_WORDLEVEL;
    else if (!strcmp(type, "BPE")) t->model = TOK_BPE;
    else return unsupported(err, "model", type, "WordLevel, BPE");
    if (!cJSON_IsObject(vocab)) return attn_fail(err, ATTN_ERR_FORMAT, "model has no vocab object");
    cJSON_ArrayForEach(v, vocab) {
        if (!cJSON_IsNumber(v)) return attn_fail(err, ATTN_ERR_FORMAT, "vocab entry '%.40s' is not a number", v->string);
        if ((st = assign(t, v->string, v->valuedouble, false, err))) return st;
    }
    static const char *const OFF[] = {"continuing_subword_prefix", "end_of_word_suffix", "dropout"};
    for (int i = 0; i < 3; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(model, OFF[i]);
        if (o && !cJSON_IsNull(o)) return attn_fail(err, ATTN_ERR_FORMAT, "model %s is not supported", OFF[i]);
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "byte_fallback")))
        return attn_fail(err, ATTN_ERR_FORMAT, "model byte_fallback is not supported");
    t->fuse_unk = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "fuse_unk"));
    t->ignore_merges = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(model, "ignore_merges"));
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    if (cJSON_IsString(unk) && (t->unk = tok_map_get(&t->ids, unk->valuestring)) < 0)
        return attn_fail(err, ATTN_ERR_FORMAT, "unk_token '%.40s' is not in the vocabulary", unk->valuestring);
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (t->model == TOK_BPE && merges && !cJSON_IsArray(merges))
        return attn_fail(err, ATTN_ERR_FORMAT, "model merges is not a list");
    return t->model == TOK_BPE && merges ? read_merges(t, merges, err) : ATTN_OK;
}

static attn_status read_added(attn_tokenizer *t, const cJSON *added, attn_error *err)
{
    const cJSON *a;
    attn_status st;
    if (!added || cJSON_IsNull(added)) return ATTN_OK;
    if (!cJSON_IsArray(added)) return attn_fail(err, ATTN_ERR_FORMAT, "added_tokens is not a list");
    if (!(t->added = calloc((size_t)cJSON_GetArraySize(added) + 1, sizeof *t->added)))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    cJSON_ArrayForEach(a, added) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(a, "content"), *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        if (!cJSON_IsString(c) || !cJSON_IsNumber(id) || !c->valuestring[0])
            return attn_fail(err, ATTN_ERR_FORMAT, "an added token needs a content and an id");
        static const char *const FLAGS[] = {"single_word", "lstrip", "rstrip"};
        for (int i = 0; i < 3; i++)
            if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, FLAGS[i])))
                return attn_fail(err, ATTN_ERR_FORMAT, "added token '%.40s': %s is not supported", c->valuestring,
                                 FLAGS[i]);
        if ((st = assign(t, c->valuestring, id->valuedouble, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "special")), err)))
            return st;
        if (!(t->added[t->n_added].content = strdup(c->valuestring))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        t->added[t->n_added++].id = (int)id->valuedouble;
    }
    return ATTN_OK;
}

/* One step of a normalizer or pre-tokenizer, or a Sequence of them. */
static attn_status read_steps(attn_tokenizer *t, const cJSON *o, bool pre, attn_error *err)
{
    const char *type = type_of(o), *what = pre ? "pre_tokenizer" : "normalizer";
    if (!strcmp(type, "Sequence")) {
        const cJSON *steps = cJSON_GetObjectItemCaseSensitive(o, pre ? "pretokenizers" : "normalizers"), *s;
        attn_status st;
        if (!cJSON_IsArray(steps)) return attn_fail(err, ATTN_ERR_FORMAT, "%s Sequence has no list", what);
        cJSON_ArrayForEach(s, steps) if ((st = read_steps(t, s, pre, err))) return st;
        return ATTN_OK;
    }
    if ((pre ? t->n_pre : t->n_norm) == TOK_MAX_STEPS) return attn_fail(err, ATTN_ERR_FORMAT, "%s has too many steps", what);
    if (!pre && !strcmp(type, "Lowercase")) t->norm[t->n_norm++] = TOK_NORM_LOWERCASE;
    else if (pre && !strcmp(type, "Whitespace")) t->pre[t->n_pre++] = TOK_PRE_WHITESPACE;
    else if (pre && !strcmp(type, "WhitespaceSplit")) t->pre[t->n_pre++] = TOK_PRE_WHITESPACE_SPLIT;
    else return unsupported(err, what, type, pre ? "Whitespace, WhitespaceSplit, Sequence" : "Lowercase, Sequence");
    return ATTN_OK;
}

/* TemplateProcessing's single template: special tokens around sequence A. */
static attn_status read_post(attn_tokenizer *t, const cJSON *post, attn_error *err)
{
    if (!post || cJSON_IsNull(post)) return ATTN_OK;
    if (strcmp(type_of(post), "TemplateProcessing")) return unsupported(err, "post_processor", type_of(post), "TemplateProcessing");
    const cJSON *single = cJSON_GetObjectItemCaseSensitive(post, "single"), *piece;
    const cJSON *specials = cJSON_GetObjectItemCaseSensitive(post, "special_tokens");
    int n = cJSON_GetArraySize(single);
    bool after = false;
    t->prefix = calloc((size_t)n + 1, sizeof *t->prefix);
    t->suffix = calloc((size_t)n + 1, sizeof *t->suffix);
    if (!t->prefix || !t->suffix) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
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
        if (after) t->suffix[t->n_suffix++] = id;
        else t->prefix[t->n_prefix++] = id;
    }
    return ATTN_OK;
}

static attn_status read_decoder(attn_tokenizer *t, const cJSON *dec, attn_error *err)
{
    if (!dec || cJSON_IsNull(dec)) return ATTN_OK;
    if (strcmp(type_of(dec), "Fuse")) return unsupported(err, "decoder", type_of(dec), "Fuse");
    t->fuse = true;
    return ATTN_OK;
}

static attn_status read_json(attn_tokenizer *t, const cJSON *root, attn_error *err)
{
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *norm = cJSON_GetObjectItemCaseSensitive(root, "normalizer");
    const cJSON *pre = cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer");
    attn_status st;
    if (!cJSON_IsObject(root)) return attn_fail(err, ATTN_ERR_FORMAT, "not a JSON object");
    if (!cJSON_IsObject(model)) return attn_fail(err, ATTN_ERR_FORMAT, "has no model (not a tokenizer.json?)");
    if ((st = read_model(t, model, err)) ||
        (st = read_added(t, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), err)) ||
        (norm && !cJSON_IsNull(norm) && (st = read_steps(t, norm, false, err))) ||
        (pre && !cJSON_IsNull(pre) && (st = read_steps(t, pre, true, err))) ||
        (st = read_post(t, cJSON_GetObjectItemCaseSensitive(root, "post_processor"), err)) ||
        (st = read_decoder(t, cJSON_GetObjectItemCaseSensitive(root, "decoder"), err)))
        return st;
    return ATTN_OK;
}

static int longest_first(const void *a, const void *b)
{
    const tok_added *x = a, *y = b;
    size_t nx = strlen(x->content), ny = strlen(y->content);
    return (ny > nx) - (ny < nx);
}

/* The compiled patterns and the locale the steps need. */
static attn_status prepare(attn_tokenizer *t, attn_error *err)
{
    int code;
    PCRE2_SIZE at;
    t->word_re = pcre2_compile((PCRE2_SPTR) "\\w+|[^\\w\\s]+", PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code, &at, NULL);
    t->split_re = pcre2_compile((PCRE2_SPTR) "\\S+", PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP, &code, &at, NULL);
    if (!t->word_re || !t->split_re) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory compiling a pattern");
    if (t->n_norm && !(t->lower = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0)))
        return attn_fail(err, ATTN_ERR_IO, "Lowercase needs the C.UTF-8 locale, which is missing");
    if (t->n_added) qsort(t->added, (size_t)t->n_added, sizeof *t->added, longest_first);
    return ATTN_OK;
}

attn_status attn_tokenizer_parse(const char *json, size_t len, const char *what, attn_tokenizer **out, attn_error *err)
{
    attn_tokenizer *t = calloc(1, sizeof *t);
    attn_status st;
    *out = NULL;
    if (!t) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    t->unk = -1;
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) st = attn_fail(err, ATTN_ERR_FORMAT, "not valid JSON");
    else st = read_json(t, root, err);
    cJSON_Delete(root);
    if (!st) st = prepare(t, err);
    if (st) {
        attn_error_prefix(err, what);
        attn_tokenizer_free(t);
        return st;
    }
    *out = t;
    return ATTN_OK;
}

attn_status attn_tokenizer_load(const char *path, attn_tokenizer **out, attn_error *err)
{
    char *text;
    size_t size;
    attn_status st = attn_file_read(path, TOKENIZER_LIMIT, &text, &size, err);
    *out = NULL;
    if (st) return st;
    st = attn_tokenizer_parse(text, size, path, out, err);
    free(text);
    return st;
}

void attn_tokenizer_free(attn_tokenizer *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_vocab; i++) free(t->vocab[i]);
    for (int i = 0; i < t->n_added; i++) free(t->added[i].content);
    free(t->vocab);
    free(t->special);
    free(t->added);
    free(t->prefix);
    free(t->suffix);
    tok_map_free(&t->ids);
    tok_map_free(&t->merges);
    pcre2_code_free(t->word_re);
    pcre2_code_free(t->split_re);
    if (t->lower) freelocale(t->lower);
    free(t);
}

/* ---- questions ---- */

int attn_tokenizer_vocab_size(const attn_tokenizer *t)
{
    int n = t->n_vocab;
    while (n > 0 && !t->vocab[n - 1]) n--;
    return n;
}

const char *attn_tokenizer_token(const attn_tokenizer *t, int id)
{
    return id >= 0 && id < t->n_vocab ? t->vocab[id] : NULL;
}

int attn_tokenizer_find(const attn_tokenizer *t, const char *token) { return tok_map_get(&t->ids, token); }
int attn_tokenizer_unk(const attn_tokenizer *t) { return t->unk; }
int attn_tokenizer_bos(const attn_tokenizer *t) { return t->n_prefix ? t->prefix[0] : -1; }
bool attn_tokenizer_is_special(const attn_tokenizer *t, int id) { return id >= 0 && id < t->n_vocab && t->special[id]; }
