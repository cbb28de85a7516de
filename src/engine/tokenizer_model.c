/* tokenizer_model.c — the vocabulary table, WordLevel and BPE. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h"
#include "tokenizer_impl.h"
#include "utf8.h"

/* ---- string → int ---- */

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int grow(tok_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    char **key = calloc(cap, sizeof *key);
    int *val = malloc(cap * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->key[i]) continue;
        size_t j = fnv(m->key[i]) & (cap - 1);
        while (key[j]) j = (j + 1) & (cap - 1);
        key[j] = m->key[i];
        val[j] = m->val[i];
    }
    free(m->key);
    free(m->val);
    m->key = key;
    m->val = val;
    m->cap = cap;
    return 0;
}

int tok_map_put(tok_map *m, const char *key, int val)
{
    if ((m->n + 1) * 2 > m->cap && grow(m)) return -1;
    size_t j = fnv(key) & (m->cap - 1);
    while (m->key[j]) {
        if (!strcmp(m->key[j], key)) return 0;
        j = (j + 1) & (m->cap - 1);
    }
    if (!(m->key[j] = strdup(key))) return -1;
    m->val[j] = val;
    m->n++;
    return 0;
}

int tok_map_get(const tok_map *m, const char *key)
{
    if (!m->cap) return -1;
    for (size_t j = fnv(key) & (m->cap - 1); m->key[j]; j = (j + 1) & (m->cap - 1))
        if (!strcmp(m->key[j], key)) return m->val[j];
    return -1;
}

void tok_map_free(tok_map *m)
{
    for (size_t i = 0; i < m->cap; i++) free(m->key[i]);
    free(m->key);
    free(m->val);
    memset(m, 0, sizeof *m);
}

int tok_ids_push(tok_ids *a, int id)
{
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 32;
        int *v = realloc(a->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = id;
    return 0;
}

/* ---- the models ---- */

/* A BPE symbol: a run of the word's bytes and the token it is. */
typedef struct {
    size_t start, len;
    int id;
} sym;

/* The rank of merging symbols a and b (−1: no such merge, or no token for
 * the pair). A symbol's text is its token's (an unknown character's is the
 * unk token's), so merges work on tokens, as Hugging Face's do on ids. */
static int rank_of(const attn_tokenizer *t, const sym *a, const sym *b, char *buf, size_t size)
{
    const char *la = t->vocab[a->id], *lb = t->vocab[b->id];
    size_t na = strlen(la), nb = strlen(lb);
    if (na + nb + 2 > size) return -1;
    memcpy(buf, la, na);
    buf[na] = '\x1f';
    memcpy(buf + na + 1, lb, nb + 1);
    int rank = tok_map_get(&t->merges, buf);
    if (rank < 0) return -1;
    /* the merged token must exist: keys "a\x1fb" of tokens holding \x1f could collide */
    memcpy(buf + na, lb, nb + 1);
    return tok_map_get(&t->ids, buf) >= 0 ? rank : -1;
}

/* BPE as Hugging Face's does it: the word's characters (an unknown one as
 * unk, several in a row fused if fuse_unk; dropped when there is no unk),
 * then the adjacent pair of lowest merge rank, leftmost on ties, merged until
 * no pair has a merge. */
static attn_status bpe(const attn_tokenizer *t, const char *s, size_t n, tok_ids *out, attn_error *err)
{
    char key[512];
    int whole;
    if (t->ignore_merges && n < sizeof key && (memcpy(key, s, n), key[n] = '\0', (whole = tok_map_get(&t->ids, key)) >= 0))
        return tok_ids_push(out, whole) ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory") : ATTN_OK;
    sym *w = malloc((n + 1) * sizeof *w);
    int k = 0;
    if (!w) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n;) {
        size_t next = attn_utf8_next(s, n, i);
        int id = -1;
        if (next - i < sizeof key) {
            memcpy(key, s + i, next - i);
            key[next - i] = '\0';
            id = tok_map_get(&t->ids, key);
        }
        if (id < 0) id = t->unk;
        if (id >= 0 && !(id == t->unk && t->fuse_unk && k && w[k - 1].id == t->unk))
            w[k++] = (sym){i, next - i, id};
        else if (id >= 0)
            w[k - 1].len = next - w[k - 1].start;
        i = next;
    }
    for (;;) {
        int best = -1, best_rank = 0;
        for (int i = 0; i + 1 < k; i++) {
            int r = rank_of(t, &w[i], &w[i + 1], key, sizeof key);
            if (r >= 0 && (best < 0 || r < best_rank)) best = i, best_rank = r;
        }
        if (best < 0) break;
        rank_of(t, &w[best], &w[best + 1], key, sizeof key); /* leaves the merged token in key */
        w[best] = (sym){w[best].start, w[best].len + w[best + 1].len, tok_map_get(&t->ids, key)};
        memmove(&w[best + 1], &w[best + 2], (size_t)(k - best - 2) * sizeof *w);
        k--;
    }
    attn_status st = ATTN_OK;
    for (int i = 0; i < k && !st; i++)
        if (tok_ids_push(out, w[i].id)) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    free(w);
    return st;
}

attn_status tok_model_word(const attn_tokenizer *t, const char *s, size_t n, tok_ids *out, attn_error *err)
{
    if (t->model == TOK_BPE) return bpe(t, s, n, out, err);
    char *word = strndup(s, n);
    if (!word) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    int id = tok_map_get(&t->ids, word);
    attn_status st = ATTN_OK;
    if (id < 0 && t->unk < 0)
        st = attn_fail(err, ATTN_ERR_CONFIG, "'%.40s' is not in the vocabulary, which has no unknown token", word);
    else if (tok_ids_push(out, id < 0 ? t->unk : id))
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    free(word);
    return st;
}
