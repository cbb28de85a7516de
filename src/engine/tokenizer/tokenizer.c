/* tokenizer.c — reading tokenizer.json, and the encode / decode pipeline. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/base/utf8.h"
#include "engine/tokenizer/tokenizer_impl.h"
#include "tokenizer.h"

#define TOKENIZER_LIMIT (64u << 20)

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

/* The offset of the first byte of s[0..n) that is not well-formed UTF-8, or n. */
static size_t bad_utf8_at(const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = attn_utf8_decode(s + i, n - i, &cp);
        if (cp == ATTN_UTF8_REPLACEMENT && !(k == 3 && !memcmp(s + i, "\xEF\xBF\xBD", 3))) return i;
        i += k;
    }
    return n;
}

/* Places id → string, growing the table. what: "vocab entry", "added token".
 * A token is text: one that is not UTF-8 could match no text, and another
 * reader of the file refuses it, so it is refused here too. */
static attn_status assign(attn_tokenizer *t, const char *what, const char *s, double idv, bool special,
                          attn_error *err)
{
    size_t len = strlen(s), bad = bad_utf8_at(s, len);
    if (bad < len)
        return attn_fail(err, ATTN_ERR_FORMAT, "%s of id %g is not valid UTF-8 (byte 0x%02X at offset %zu of %zu)",
                         what, idv, (unsigned char)s[bad], bad, len);
    if (!(idv >= 0 && idv <= TOK_MAX_ID) || idv != (int)idv)
        return attn_fail(err, ATTN_ERR_FORMAT, "token '%.40s' has id %g, not a whole number from 0 to %d", s, idv,
                         TOK_MAX_ID);
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
    if (attn_tok_map_put(&t->ids, s, id)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
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
        if (attn_tok_map_get(&t->ids, a) < 0 || attn_tok_map_get(&t->ids, b) < 0 || attn_tok_map_get(&t->ids, key) < 0)
            return attn_fail(err, ATTN_ERR_FORMAT, "merge %d ('%.30s' + '%.30s') names a token not in the vocabulary",
                             rank + 1, a, b);
        key[na] = '\x1f';
        memcpy(key + na + 1, b, nb + 1);
        if (attn_tok_map_put(&t->merges, key, rank++)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
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
        if ((st = assign(t, "vocab entry", v->string, v->valuedouble, false, err))) return st;
    }
    /* options that change BPE: only their off values ("" or null; a dropout of 0) */
    static const char *const OFF[] = {"continuing_subword_prefix", "end_of_word_suffix", "dropout"};
    for (int i = 0; i < 3; i++) {
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(model, OFF[i]);
        if (o && !cJSON_IsNull(o) && !(cJSON_IsString(o) && !o->valuestring[0]) && !(cJSON_IsNumber(o) && o->valuedouble == 0))
            return attn_fail(err, ATTN_ERR_FORMAT, "model %s is not supported", OFF[i]);
    }
    /* a flag of another kind ("true") is refused: read as false it would tokenize otherwise */
    if ((st = attn_json_bool(model, "byte_fallback", "model.byte_fallback", false, &t->byte_fallback, err)) ||
        (st = attn_json_bool(model, "fuse_unk", "model.fuse_unk", false, &t->fuse_unk, err)) ||
        (st = attn_json_bool(model, "ignore_merges", "model.ignore_merges", false, &t->ignore_merges, err)))
        return st;
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    if (unk && !cJSON_IsNull(unk) && !cJSON_IsString(unk))
        return attn_json_wrong("model.unk_token", "a token or null", unk, err);
    if (cJSON_IsString(unk) && (t->unk = attn_tok_map_get(&t->ids, unk->valuestring)) < 0)
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
        size_t len = strlen(c->valuestring);
        if (len > TOK_MAX_ADDED) /* each is looked for at every character of a text */
            return attn_fail(err, ATTN_ERR_FORMAT, "added token '%.40s…' has %zu bytes, more than the %d an added "
                             "token may have", c->valuestring, len, TOK_MAX_ADDED);
        static const char *const FLAGS[] = {"single_word", "lstrip", "rstrip", "special"};
        bool on[4];
        for (int i = 0; i < 4; i++) {
            char name[48];
            snprintf(name, sizeof name, "added_tokens[%d].%s", t->n_added, FLAGS[i]);
            if ((st = attn_json_bool(a, FLAGS[i], name, false, &on[i], err))) return st;
            if (i < 3 && on[i])
                return attn_fail(err, ATTN_ERR_FORMAT, "added token '%.40s': %s is not supported", c->valuestring,
                                 FLAGS[i]);
        }
        if ((st = assign(t, "added token", c->valuestring, id->valuedouble, on[3], err))) return st;
        if (!(t->added[t->n_added].content = strdup(c->valuestring))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        t->added[t->n_added].len = len;
        t->added[t->n_added++].id = (int)id->valuedouble;
    }
    return ATTN_OK;
}

static attn_status read_json(attn_tokenizer *t, const cJSON *root, attn_error *err)
{
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    attn_status st;
    if (!cJSON_IsObject(root)) return attn_fail(err, ATTN_ERR_FORMAT, "not a JSON object");
    if (!cJSON_IsObject(model)) return attn_fail(err, ATTN_ERR_FORMAT, "has no model (not a tokenizer.json?)");
    if ((st = read_model(t, model, err)) ||
        (st = read_added(t, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), err)) ||
        (st = attn_tok_read_steps(t, root, err)))
        return st;
    return ATTN_OK;
}

/* In strcmp's order, so that the added tokens a text can start with are a
 * range, narrowed a byte at a time (tokenizer_encode.c); the same content
 * twice: the lower id first. */
static int by_content(const void *a, const void *b)
{
    const attn_tok_added *x = a, *y = b;
    int c = strcmp(x->content, y->content);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* The added tokens sorted, and byte fallback's "<0xXX>" tokens. */
static attn_status prepare(attn_tokenizer *t, attn_error *err)
{
    if (t->n_added) qsort(t->added, (size_t)t->n_added, sizeof *t->added, by_content);
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_id[b] = attn_tok_map_get(&t->ids, name);
    }
    for (int id = 0; id < t->n_vocab; id++) { /* labels typed back (a decoding step's token list) */
        char label[96];
        if (!t->vocab[id] || !strcmp(attn_tokenizer_label(t, id, label, sizeof label), t->vocab[id])) continue;
        if (attn_tok_map_get(&t->ids, label) < 0 && attn_tok_map_put(&t->labels, label, id))
            return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    return ATTN_OK;
}

/* How many values cJSON's tree of json[0..len) can have at most: each but
 * the first follows a ',', a '[' or a '{' outside a string. */
static size_t json_values(const char *json, size_t len)
{
    size_t n = 1;
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = json[i];
        if (in_string) {
            if (c == '\\') i++;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else {
            n += c == ',' || c == '[' || c == '{';
        }
    }
    return n;
}

attn_status attn_tokenizer_parse(const char *json, size_t len, const char *what, attn_tokenizer **out, attn_error *err)
{
    attn_tokenizer *t = calloc(1, sizeof *t);
    attn_status st;
    cJSON *root = NULL;
    *out = NULL;
    if (!t || !(t->name = strdup(what))) {
        free(t);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    t->unk = -1;
    size_t bad;
    /* a tree node costs cJSON some 80 bytes: 64 MiB of "[0,0,0,…" took 2.7 GB and 83 s */
    if (json_values(json, len) > TOK_MAX_VALUES)
        st = attn_fail(err, ATTN_ERR_FORMAT, "holds more than %d JSON values, the most a tokenizer.json may have",
                       TOK_MAX_VALUES);
    else if (!(st = attn_json_parse(json, len, &root, err)) && !(st = read_json(t, root, err)) &&
             (bad = bad_utf8_at(json, len)) < len) /* the tokens first, by id; then any other text */
        st = attn_fail(err, ATTN_ERR_FORMAT, "not valid UTF-8 (byte 0x%02X at offset %zu)", (unsigned char)json[bad],
                       bad);
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
    attn_tok_map_free(&t->ids);
    attn_tok_map_free(&t->labels);
    attn_tok_map_free(&t->merges);
    attn_tok_free_steps(t);
    free(t->name);
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

int attn_tokenizer_find(const attn_tokenizer *t, const char *token)
{
    int id = attn_tok_map_get(&t->ids, token);
    return id >= 0 ? id : attn_tok_map_get(&t->labels, token);
}
int attn_tokenizer_unk(const attn_tokenizer *t) { return t->unk; }
int attn_tokenizer_bos(const attn_tokenizer *t) { return t->n_prefix ? t->prefix[0] : -1; }
bool attn_tokenizer_is_special(const attn_tokenizer *t, int id) { return id >= 0 && id < t->n_vocab && t->special[id]; }
