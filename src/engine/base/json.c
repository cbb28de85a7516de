/* json.c — one reading rule for every JSON file, duplicate keys at any
 * depth, and a value's kind for messages. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *attn_json_kind(const cJSON *v)
{
    if (!v) return "nothing";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    if (cJSON_IsArray(v)) return "a list";
    if (cJSON_IsObject(v)) return "an object";
    return "an unknown value";
}

attn_status attn_json_wrong(const char *name, const char *want, const cJSON *v, attn_error *err)
{
    if (cJSON_IsString(v))
        return attn_fail(err, ATTN_ERR_FORMAT, "'%s' must be %s, not a string (\"%.30s\")", name, want, v->valuestring);
    return attn_fail(err, ATTN_ERR_FORMAT, "'%s' must be %s, not %s", name, want, attn_json_kind(v));
}

attn_status attn_json_bool(const cJSON *o, const char *key, const char *name, bool def, bool *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *out = def;
    if (!v) return ATTN_OK;
    if (!cJSON_IsBool(v)) return attn_json_wrong(name, "true or false", v, err);
    *out = cJSON_IsTrue(v);
    return ATTN_OK;
}

static int by_key(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The first key of object o given twice, by sorting its keys; NULL if none.
 * *nomem is set when the keys cannot be gathered. */
static const char *twice_in(const cJSON *o, int *nomem)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, o) n++;
    if (n < 2) return NULL;
    const char **keys = malloc((size_t)n * sizeof *keys);
    if (!keys) {
        *nomem = 1;
        return NULL;
    }
    int k = 0;
    cJSON_ArrayForEach(c, o) keys[k++] = c->string ? c->string : "";
    qsort(keys, (size_t)n, sizeof *keys, by_key);
    const char *found = NULL;
    for (int i = 1; i < n && !found; i++)
        if (!strcmp(keys[i - 1], keys[i])) found = keys[i];
    free(keys);
    return found;
}

/* Depth-first through v; where[0..used) names v ("" at the top). */
static attn_status walk(const cJSON *v, char *where, size_t size, size_t used, attn_error *err)
{
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return ATTN_OK;
    if (cJSON_IsObject(v)) {
        int nomem = 0;
        const char *key = twice_in(v, &nomem);
        if (nomem) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        if (key && used) return attn_fail(err, ATTN_ERR_FORMAT, "key '%.60s' appears twice in %s", key, where);
        if (key) return attn_fail(err, ATTN_ERR_FORMAT, "key '%.60s' appears twice", key);
    }
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, v) {
        if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
            int n = cJSON_IsObject(v) ? snprintf(where + used, size - used, "%s%.60s", used ? "." : "", c->string)
                                      : snprintf(where + used, size - used, "[%d]", i);
            size_t next = n < 0 || used + (size_t)n >= size ? size - 1 : used + (size_t)n; /* a long name: cut, it only names */
            attn_status st = walk(c, where, size, next, err);
            where[used] = '\0';
            if (st) return st;
        }
        i++;
    }
    return ATTN_OK;
}

attn_status attn_json_unique_keys(const cJSON *v, attn_error *err)
{
    char where[160] = "";
    return walk(v, where, sizeof where, 0, err);
}

static bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* The first string of text[0..end) (valid JSON: cJSON read it) that holds
 * U+0000, raw or as \u0000: its offset, or end. *key says whether that
 * string is an object's key (a ':' follows it). cJSON keeps strings as C
 * strings, so such a string would be cut at the NUL without a word. */
static size_t nul_in_string(const char *text, size_t end, bool *key)
{
    size_t found = end;
    bool in = false;
    for (size_t i = 0; i < end; i++) {
        char c = text[i];
        if (!in) {
            if (c == '"') in = true;
            continue;
        }
        if (c == '"') { /* the string ends: a key if a ':' comes next */
            in = false;
            if (found == end) continue;
            size_t j = i + 1;
            while (j < end && blank(text[j])) j++;
            *key = j < end && text[j] == ':';
            return found;
        }
        if (c == '\0' && found == end) found = i;
        if (c == '\\') {
            if (i + 5 < end && !memcmp(text + i + 1, "u0000", 5) && found == end) found = i;
            i++; /* the escaped character, a quote or a backslash among them */
        }
    }
    *key = false;
    return found; /* unreachable for valid JSON: every string ends */
}

attn_status attn_json_parse(const char *text, size_t len, cJSON **out, attn_error *err)
{
    const char *end = NULL;
    *out = NULL;
    /* not require_null_terminated: with a length, cJSON would then want a NUL
     * inside it; the bytes after the value are checked here instead */
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) { /* end: where cJSON stopped (cJSON_GetErrorPtr is one for all threads) */
        size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : 0;
        return attn_fail(err, ATTN_ERR_FORMAT, "not valid JSON (at byte %zu)", off);
    }
    size_t used = (size_t)(end - text), rest = used;
    while (rest < len && blank(text[rest])) rest++;
    attn_status st = ATTN_OK;
    bool key = false;
    size_t nul = nul_in_string(text, used, &key);
    if (rest < len) /* {"a":1}{"a":2}: which one did the writer mean? */
        st = attn_fail(err, ATTN_ERR_FORMAT, "data after the JSON value, at byte %zu of %zu", rest, len);
    else if (nul < used)
        st = attn_fail(err, ATTN_ERR_FORMAT, "a %s holds a NUL character (\\u0000) at byte %zu, where attnlab would "
                       "cut it", key ? "key" : "string", nul);
    else st = attn_json_unique_keys(root, err);
    if (st) cJSON_Delete(root);
    else *out = root;
    return st;
}
