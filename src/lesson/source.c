/* source.c — where a lesson's quoted figure was measured (source.h), from
 * lessons/sources.tsv as CMake compiled it in. */
#include "source.h"

#include <stdio.h>
#include <string.h>

#include "engine/base/utf8.h"

typedef struct {
    const char *on, *what, *en, *zh, *keys; /* the table's columns; words separated by |, keys by spaces */
} source_row;

static const source_row SOURCES[] = {
#include <lesson_sources.h> /* made in the build folder from lessons/sources.tsv (CMakeLists.txt) */
};

#define N_SOURCES ((int)(sizeof SOURCES / sizeof SOURCES[0]))

static const source_row *row_of(const char *on)
{
    for (int i = 0; i < N_SOURCES; i++)
        if (!strcmp(SOURCES[i].on, on)) return &SOURCES[i];
    return NULL;
}

bool lesson_source_known(const char *on) { return row_of(on) != NULL; }

const char *lesson_source_names(char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_SOURCES && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", i ? ", " : "", SOURCES[i].on);
    return buf;
}

/* Whether card key `key` matches pattern p[0..n): part by part, `*` any one part. */
static bool key_matches(const char *key, const char *p, size_t n)
{
    const char *end = p + n;
    while (p < end && *key) {
        size_t pl = strcspn(p, ".");
        pl = p + pl > end ? (size_t)(end - p) : pl;
        size_t kl = strcspn(key, ".");
        if (!(pl == 1 && *p == '*') && (pl != kl || memcmp(p, key, kl))) return false;
        p += pl + (p + pl < end);
        key += kl + (key[kl] == '.');
    }
    return p >= end && !*key;
}

const char *lesson_source_of_key(const char *key)
{
    for (int i = 0; i < N_SOURCES; i++)
        for (const char *k = SOURCES[i].keys; k && *k;) {
            size_t n = strcspn(k, " ");
            if (n && key_matches(key, k, n)) return SOURCES[i].on;
            k += n + (k[n] == ' ');
        }
    return NULL;
}

const char *lesson_source_lang(const char *path)
{
    const char *end = path ? strrchr(path, '/') : NULL;
    if (!end || end - path < 2) return NULL;
    const char *dir = end - 2;
    if (dir > path && dir[-1] != '/') return NULL;
    return !strncmp(dir, "en", 2) ? "en" : !strncmp(dir, "zh", 2) ? "zh" : NULL;
}

/* s[0..n) holds word w[0..wn): English without regard to case (ASCII), Chinese as written. */
static bool holds(const char *s, size_t n, const char *w, size_t wn)
{
    for (size_t i = 0; wn && i + wn <= n; i++) {
        size_t k = 0;
        while (k < wn && (s[i + k] == w[k] || ((unsigned char)w[k] < 128 && (s[i + k] | 32) == (w[k] | 32) &&
                                              ((w[k] | 32) >= 'a' && (w[k] | 32) <= 'z'))))
            k++;
        if (k == wn) return true;
    }
    return false;
}

/* Whether text[0..n) holds one of the words (separated by |) of list; a list "-" holds nothing. */
static bool names(const char *list, const char *text, size_t n)
{
    for (const char *w = list; w && *w && strcmp(list, "-");) {
        size_t wn = strcspn(w, "|");
        if (holds(text, n, w, wn)) return true;
        w += wn + (w[wn] == '|');
    }
    return false;
}

/* The sentence of text around [at, at + len): from after the sentence end
 * before it to the end of the one after it (". ", "! ", "? " or the end of
 * the text; 。！？ in Chinese). */
static void sentence(const char *text, size_t at, size_t *a, size_t *b)
{
    size_t n = strlen(text);
    static const char *const FULL[] = {"\xE3\x80\x82", "\xEF\xBC\x81", "\xEF\xBC\x9F"}; /* 。！？ */
    *a = 0;
    *b = n;
    for (size_t i = 0; i < n; i++) {
        bool end = (text[i] == '.' || text[i] == '!' || text[i] == '?') && (i + 1 == n || text[i + 1] == ' ');
        size_t len = 1;
        for (int k = 0; k < 3 && !end; k++)
            if (!strncmp(text + i, FULL[k], 3)) end = true, len = 3;
        if (!end) continue;
        if (i < at) *a = i + len;
        else {
            *b = i + len;
            return;
        }
    }
}

int lesson_source_check(const char *on, const char *spec, const char *text, size_t at, const char *before,
                        const char *lang, char *why, size_t size)
{
    const source_row *r = on ? row_of(on) : NULL;
    if (!r || (!strcmp(r->en, "-") && !strcmp(r->zh, "-"))) return 0; /* no word needed (or refused already) */
    size_t a, b;
    sentence(text, at, &a, &b);
    bool en = !lang || !strcmp(lang, "en"), zh = !lang || !strcmp(lang, "zh");
    for (int k = 0; k < 2; k++) {
        const char *s = k ? before : text + a;
        size_t n = k ? (before ? strlen(before) : 0) : b - a;
        if ((en && names(r->en, s, n)) || (zh && names(r->zh, s, n))) return 0;
    }
    spec = spec ? spec : "";
    size_t sn = strlen(spec) > 60 ? attn_utf8_prev(spec, 61) : strlen(spec); /* cut where a character starts */
    snprintf(why, size, "{{… | %.*s%s}}: measured on %s, which the sentence%s does not say (%s%s%s: lessons/sources.tsv)",
             (int)sn, spec, sn < strlen(spec) ? "…" : "", r->what, before ? " or the paragraph before it" : "",
             en ? r->en : "", en && zh ? " | " : "", zh ? r->zh : "");
    return -1;
}
