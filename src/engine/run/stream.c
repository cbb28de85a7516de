/* stream.c — a long text over an evicting KV cache, positions re-numbered
 * inside it (stream.h). */
#include "stream.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"
#include "engine/model/loss.h"
#include "engine/run/kv_cache.h"

static const char *const NAMES[] = {"all", "window", "sink"};

int attn_stream_policy_parse(const char *name)
{
    for (int i = 0; i < 3; i++)
        if (name && !strcmp(name, NAMES[i])) return i;
    return -1;
}

const char *attn_stream_policy_name(attn_stream_policy p)
{
    return p >= 0 && p <= ATTN_STREAM_SINK ? NAMES[p] : "?";
}

int attn_stream_cache_size(const attn_stream_opts *o, int n)
{
    if (o->policy == ATTN_STREAM_ALL) return n;
    return o->window + (o->policy == ATTN_STREAM_SINK ? o->keep_first : 0);
}

attn_status attn_stream_check(const attn_model *m, const attn_stream_opts *o, attn_error *err)
{
    /* eviction turns each kept key back and forward by its new position, per kv head; a latent
     * cache's rows are [c_kv | k_pe], only the k_pe part of which is rotated */
    if ((m->cfg.arch.nope || m->cfg.arch.post_norms) && o->policy != ATTN_STREAM_ALL)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: the evicting cache (window, sink) re-rotates keys as a Llama "
                         "layer does, not %s's; use --policy all", m->name, attn_arch_name(m->cfg.arch.kind));
    if (m->cfg.arch.mla && o->policy != ATTN_STREAM_ALL)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: the evicting cache (window, sink) does not handle latent "
                         "attention's cache yet; use --policy all", m->name);
    /* Gemma's layers turn with two RoPE bases and mask with their own windows: re-numbering one cache is not theirs */
    if (m->cfg.arch.gemma && o->policy != ATTN_STREAM_ALL)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: the evicting cache (window, sink) does not handle Gemma's local "
                         "and global layers yet; use --policy all", m->name);
    /* gpt-oss's steps are traced passes over the whole cache (kv_latent.c), which evicts nothing */
    if (m->cfg.arch.sinks && o->policy != ATTN_STREAM_ALL)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: the evicting cache (window, sink) does not handle gpt-oss's "
                         "learned sinks and local layers yet; use --policy all", m->name);
    if (o->policy == ATTN_STREAM_ALL) return ATTN_OK;
    if (o->window < 1) return attn_fail(err, ATTN_ERR_CONFIG, "--window %d: the window keeps at least 1 position",
                                        o->window);
    if (o->policy == ATTN_STREAM_SINK && o->keep_first < 1)
        return attn_fail(err, ATTN_ERR_CONFIG, "--keep-first %d: sink keeps at least the first position",
                         o->keep_first);
    if (o->policy == ATTN_STREAM_SINK && o->keep_first >= o->window)
        return attn_fail(err, ATTN_ERR_CONFIG, "--keep-first %d must be below --window %d", o->keep_first,
                         o->window);
    int size = attn_stream_cache_size(o, 0);
    if (size > m->cfg.max_pos)
        return attn_fail(err, ATTN_ERR_CONFIG, "a cache of %d positions (%s) is beyond %s's context of %d positions",
                         size, NAMES[o->policy], m->name, m->cfg.max_pos);
    return ATTN_OK;
}

/* What the cache does not keep: each key before its rotation (layers arrays
 * of (g, cap, k), laid out as the cache's keys). */
typedef struct {
    float **raw;
    int layers;
} unrotated;

static void unrotated_free(unrotated *u)
{
    for (int l = 0; u->raw && l < u->layers; l++) free(u->raw[l]);
    free(u->raw);
}

static attn_status unrotated_init(unrotated *u, const attn_kv_cache *c, attn_error *err)
{
    u->layers = c->layers;
    bool ok = (u->raw = calloc((size_t)c->layers, sizeof *u->raw)) != NULL;
    for (int l = 0; ok && l < c->layers; l++)
        ok = (u->raw[l] = malloc((size_t)c->g * c->cap * c->k * sizeof(float))) != NULL;
    if (ok) return ATTN_OK;
    unrotated_free(u);
    return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the unrotated keys");
}

/* The key the last step put at slot pos, rotated back by pos into u. */
static int keep_unrotated(const attn_kv_cache *c, unrotated *u, const attn_rope *rope, int pos)
{
    for (int l = 0; l < c->layers; l++)
        for (int j = 0; j < c->g; j++) {
            size_t at = ((size_t)j * c->cap + pos) * c->k;
            if (!rope) memcpy(u->raw[l] + at, c->keys[l] + at, (size_t)c->k * sizeof(float));
            else if (attn_op_rope(c->keys[l] + at, u->raw[l] + at, 1, 1, 1, c->k, -pos, rope)) return -1;
        }
    return 0;
}

/* Removes slot `slot` of every (g, cap, k) head of a, moving the later ones down. */
static void drop_slot(float *a, const attn_kv_cache *c, int slot)
{
    for (int j = 0; j < c->g; j++) {
        float *h = a + (size_t)j * c->cap * c->k;
        memmove(h + (size_t)slot * c->k, h + (size_t)(slot + 1) * c->k, (size_t)(c->n - slot - 1) * c->k * sizeof *h);
    }
}

/* Evicts position `slot`: keys, values, inputs and unrotated keys move down
 * one slot, and the moved keys are rotated again at their new slots. */
static int evict(attn_kv_cache *c, unrotated *u, const attn_rope *rope, int slot)
{
    int moved = c->n - slot - 1;
    for (int l = 0; l < c->layers; l++) {
        drop_slot(c->keys[l], c, slot);
        drop_slot(c->values[l], c, slot);
        drop_slot(u->raw[l], c, slot);
        memmove(c->x[l] + (size_t)slot * c->d, c->x[l] + (size_t)(slot + 1) * c->d,
                (size_t)moved * c->d * sizeof(float));
        for (int j = 0; j < c->g; j++) {
            size_t at = ((size_t)j * c->cap + slot) * c->k;
            if (!rope) memcpy(c->keys[l] + at, u->raw[l] + at, (size_t)moved * c->k * sizeof(float));
            else if (moved && attn_op_rope(u->raw[l] + at, c->keys[l] + at, 1, 1, moved, c->k, slot, rope)) return -1;
        }
    }
    c->n--;
    return 0;
}

/* The loop of attn_stream_run over a cache with room for `size` positions. */
static attn_status stream(const attn_model *m, const attn_config *run, const attn_stream_opts *o, const int *ids,
                          int n, int size, double *loss, int *scored, attn_kv_cache *c, float *logits,
                          attn_error *err)
{
    unrotated u = {0};
    attn_rope rope_set = {run->rope_theta, run->rope_style, &m->cfg.arch.rope_scaling};
    const attn_rope *rope = run->rope ? &rope_set : NULL;
    int first = o->policy == ATTN_STREAM_SINK ? o->keep_first : 0;
    attn_status st = attn_kv_reserve(c, size, err);
    if (!st) st = unrotated_init(&u, c, err);
    for (int i = 0; !st && i < n - 1; i++) {
        loss[i] = NAN;
        if (o->policy == ATTN_STREAM_ALL && i >= m->cfg.max_pos) continue; /* past the context: not scored */
        if ((st = attn_kv_step(c, m, run, ids[i], logits, err))) break;
        loss[i] = attn_token_nll(logits, m->cfg.vocab, ids[i + 1]);
        ++*scored;
        if (o->policy == ATTN_STREAM_ALL) continue;
        if (keep_unrotated(c, &u, rope, c->n - 1) || (c->n == size && evict(c, &u, rope, first)))
            st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory for RoPE");
    }
    unrotated_free(&u);
    return st;
}

attn_status attn_stream_run(const attn_model *m, const attn_config *run, const attn_stream_opts *o, const int *ids,
                            int n, double *loss, int *scored, attn_error *err)
{
    *scored = 0;
    attn_status st = attn_stream_check(m, o, err);
    if (st) return st;
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->cfg.vocab)
            return attn_fail(err, ATTN_ERR_CONFIG, "token id %d is outside %s's vocabulary", ids[i], m->name);
    attn_config r = *run; /* a shallow copy, not freed: the policy is the only window */
    r.sliding_window = 0;
    r.keep_first = 0;
    int size = attn_stream_cache_size(o, n < m->cfg.max_pos ? n : m->cfg.max_pos);
    attn_kv_cache c;
    float *logits = malloc((size_t)m->cfg.vocab * sizeof *logits);
    if (!logits) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the logits");
    if (!(st = attn_kv_init(&c, m, err))) {
        st = stream(m, &r, o, ids, n, size < 1 ? 1 : size, loss, scored, &c, logits, err);
        attn_kv_free(&c);
    }
    free(logits);
    return st;
}
