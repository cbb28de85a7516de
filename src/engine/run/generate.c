/* generate.c — autoregressive decoding over a cache of each layer's inputs. */
#include "generate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/rng.h"
#include "engine/model/model_run.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/trace/nonfinite.h"

attn_sampling attn_sampling_of(const attn_config *cfg)
{
    return (attn_sampling){cfg->temperature, cfg->top_k, cfg->seed, cfg->allow_unk};
}

/* Choosing the next token from one row of logits z (V).
 *
 * Ids without a token first: a checkpoint's LM head often has more rows than
 * its tokenizer has tokens (padded to a round size), and those rows were never
 * the answer in training, but they have logits, and a high temperature draws
 * them. They are left out as if absent: such an id could not be written.
 *
 * Then <unk>: it stands for every word the vocabulary left out (brown's
 * 4,096 words miss 13% of the running words), so after many contexts "some
 * rare word" is the most likely next token, and greedy decoding writes
 * <unk> <unk> <unk> ... It tells a reader nothing, so it is taken out of the
 * distribution before anything else: the others are renormalised,
 * p'(v) = p(v) / (1 − p(unk)), and their order is unchanged.
 *
 * Then, with T the temperature and the k largest logits kept:
 *   T = 0:  argmax_v z_v (greedy: the same text every time)
 *   T > 0:  p(v) = exp((z_v − z_max) / T) / Σ_w exp((z_w − z_max) / T)
 *           over the kept v (subtracting z_max changes nothing but keeps
 *           exp from overflowing), and the token where the running sum of
 *           p passes u ∈ [0, 1): inverse-CDF sampling. */
bool attn_may_choose(const attn_tokenizer *tok, int id, bool allow_unk)
{
    return !tok || (attn_tokenizer_token(tok, id) && (allow_unk || id != attn_tokenizer_unk(tok)));
}

/* <unk> when nothing else may be chosen (and it may be), else −1. */
static int only_unk(const attn_tokenizer *tok, int V)
{
    int unk = tok ? attn_tokenizer_unk(tok) : -1;
    return unk >= 0 && unk < V && attn_may_choose(tok, unk, true) ? unk : -1;
}

/* T = 0: the first id of the largest logit among those that may be chosen.
 * Whether an id may be is asked only of an id whose logit beats the best so
 * far (a few of a vocabulary of 262,144 ids), not of every one. */
static int greedy(const float *logits, int V, const attn_tokenizer *tok, bool allow_unk)
{
    int best = -1;
    for (int i = 0; i < V; i++)
        if ((best < 0 || logits[i] > logits[best]) && attn_may_choose(tok, i, allow_unk)) best = i;
    return best >= 0 ? best : only_unk(tok, V);
}

int attn_sample_logits(const float *logits, int V, const attn_tokenizer *tok, const attn_sampling *s, float u)
{
    if (s->temperature <= 0) return greedy(logits, V, tok, s->allow_unk);
    bool *ok = malloc((size_t)(V > 0 ? V : 1) * sizeof *ok); /* the ids the loops below may choose */
    int best = -1, n = 0;
    if (!ok) return -1;
    for (int i = 0; i < V; i++) {
        ok[i] = attn_may_choose(tok, i, s->allow_unk);
        n += ok[i];
        if (ok[i] && (best < 0 || logits[i] > logits[best])) best = i;
    }
    if (best < 0) { /* <unk> is the whole vocabulary: nothing else to say */
        free(ok);
        return only_unk(tok, V);
    }
    int k = s->top_k > 0 && s->top_k < n ? s->top_k : n;
    float cut = -INFINITY;
    if (k < n) { /* keep the k largest: a threshold at the k-th largest logit, by k passes of a max */
        float *sorted = malloc((size_t)n * sizeof *sorted);
        if (!sorted) {
            free(ok);
            return best;
        }
        for (int i = 0, m = 0; i < V; i++)
            if (ok[i]) sorted[m++] = logits[i];
        for (int j = 0; j < k; j++) {
            int at = j;
            for (int i = j + 1; i < n; i++)
                if (sorted[i] > sorted[at]) at = i;
            float t = sorted[j]; sorted[j] = sorted[at]; sorted[at] = t;
        }
        cut = sorted[k - 1];
        free(sorted);
    }
    double total = 0;
    for (int i = 0; i < V; i++)
        if (ok[i] && logits[i] >= cut) total += exp((logits[i] - logits[best]) / s->temperature);
    double acc = 0, target = u * total;
    int last = best;
    for (int i = 0; i < V; i++) {
        if (!ok[i] || logits[i] < cut) continue;
        acc += exp((logits[i] - logits[best]) / s->temperature);
        last = i;
        if (acc > target) break;
    }
    free(ok);
    return last;
}

/* The last position's logits of g->trace, into g->logits. */
static void keep_logits(attn_generator *g)
{
    const attn_dims *d = &g->trace.dims;
    const attn_tensor *lg = attn_trace_stage(&g->trace, -1, ATTN_STAGE_LOGITS);
    attn_tensor_fill(lg, (size_t)d->s - 1, 1);
    memcpy(g->logits, lg->data + (size_t)(d->s - 1) * d->V, (size_t)d->V * sizeof *g->logits);
}

/* The prompt as a traced pass: g.trace, its keys and values into the cache. */
static attn_status traced_prompt(attn_generator *g, attn_error *err)
{
    attn_status st = attn_model_trace_run(g->m, &g->cfg, NULL, &g->trace, err);
    if (st) return st;
    if (g->trace.tokens.rows != 1)
        return attn_fail(err, ATTN_ERR_CONFIG, "text: generation continues one text, not %d rows",
                         g->trace.tokens.rows);
    g->n = g->trace.tokens.len;
    if (!(g->ids = malloc((size_t)g->n * sizeof *g->ids))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    memcpy(g->ids, g->trace.token_ids, (size_t)g->n * sizeof *g->ids);
    if ((st = attn_kv_append(&g->cache, &g->trace, err))) return st;
    keep_logits(g);
    return ATTN_OK;
}

/* The prompt through attn_kv_prefill: nothing traced. */
static attn_status untraced_prompt(attn_generator *g, attn_error *err)
{
    attn_tokens tok;
    attn_status st = attn_model_tokenize(g->m, &g->cfg, &tok, &g->ids, err);
    if (st) return st;
    int rows = tok.rows;
    g->n = tok.len;
    attn_tokens_free(&tok);
    if (rows != 1) return attn_fail(err, ATTN_ERR_CONFIG, "text: generation continues one text, not %d rows", rows);
    return attn_kv_prefill(&g->cache, g->m, &g->run, g->ids, g->n, g->logits, err);
}

static attn_status start(attn_generator *g, const attn_model *m, const attn_config *cfg, bool traced,
                         attn_error *err)
{
    attn_status st;
    memset(g, 0, sizeof *g);
    g->m = m;
    g->trace_steps = traced;
    if ((st = attn_config_copy(&g->cfg, cfg, err))) return st;
    g->cfg.past = 0;
    if ((st = attn_model_run_config(m, &g->cfg, &g->run, err))) goto fail;
    traced = traced || (g->run.train && g->run.dropout > 0.0f);
    /* a traced step reads every position (x_past, k_cache); an untraced one
     * only what each layer's window shows, so local layers keep no more */
    if ((st = traced ? attn_kv_init(&g->cache, m, err) : attn_kv_init_windowed(&g->cache, m, &g->run, err)))
        goto fail;
    if (!(g->logits = malloc((size_t)m->cfg.vocab * sizeof *g->logits))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = traced ? traced_prompt(g, err) : untraced_prompt(g, err))) goto fail;
    return ATTN_OK;
fail:
    attn_generator_free(g);
    return st;
}

attn_status attn_generator_init(attn_generator *g, const attn_model *m, const attn_config *cfg, attn_error *err)
{
    return start(g, m, cfg, true, err);
}

attn_status attn_generator_init_untraced(attn_generator *g, const attn_model *m, const attn_config *cfg,
                                         attn_error *err)
{
    return start(g, m, cfg, false, err);
}

/* Token ids[n − 1] as a traced pass over the cache. */
static attn_status traced_step(attn_generator *g, attn_error *err)
{
    attn_trace next;
    attn_kv_cache *c = &g->cache;
    if (!c->keeps_x) /* trace_steps set on an untraced generator: its cache has no x_past to give */
        return attn_fail(err, ATTN_ERR_CONFIG, "this generator was made untraced: its steps cannot be traced");
    g->cfg.past = g->n - 1;
    attn_model_past past = {(const float *const *)c->x, (const float *const *)c->keys,
                            (const float *const *)c->values,
                            c->cap};
    attn_status st = attn_model_trace_ids(g->m, &g->cfg, g->ids, g->n, &past, &next, err);
    if (st) return st;
    if ((st = attn_kv_append(c, &next, err))) {
        attn_trace_free(&next);
        return st;
    }
    attn_trace_free(&g->trace);
    g->trace = next;
    keep_logits(g);
    return ATTN_OK;
}

/* The logits of g hold a NaN or an infinity: there is no distribution to
 * sample from (one NaN makes softmax's sum NaN, and every comparison with
 * NaN is false, so even the argmax would be arbitrary). Where it began is
 * found by tracing every position so far (a step over the KV cache traces
 * nothing) and looking for the first stage that holds one. */
static attn_status nonfinite_logits(attn_generator *g, attn_error *err)
{
    attn_trace tr;
    attn_nonfinite nf;
    attn_error why;
    char where[420];
    int past = g->cfg.past;
    g->cfg.past = 0;
    attn_status st = attn_model_trace_ids(g->m, &g->cfg, g->ids, g->n, NULL, &tr, &why);
    g->cfg.past = past;
    if (st) snprintf(where, sizeof where, "where they began could not be traced: %.300s", why.msg);
    else if (!attn_nonfinite_find(&tr, &nf)) snprintf(where, sizeof where, "a trace of the text holds none");
    else attn_nonfinite_text(&tr, &nf, where, sizeof where);
    if (!st) attn_trace_free(&tr);
    return attn_fail(err, ATTN_ERR_FORMAT, "%s: the next-token logits after %d tokens are not all numbers, so nothing "
                     "can be sampled: %s", g->m->name, g->n, where);
}

attn_status attn_generator_step(attn_generator *g, const attn_sampling *s, int *next, attn_error *err)
{
    int V = g->m->cfg.vocab;
    if (attn_nonfinite_scan(g->logits, (size_t)V, false) < (size_t)V) return nonfinite_logits(g, err);
    if (g->n >= g->m->cfg.max_pos)
        return attn_fail(err, ATTN_ERR_CONFIG, "the text has reached %s's %d positions", g->m->name,
                         g->m->cfg.max_pos);
    float u = attn_uniform(attn_hash64(s->seed ^ attn_hash_str("generate")), g->draws++);
    int id = attn_sample_logits(g->logits, g->m->cfg.vocab, g->m->tok, s, u);
    if (id < 0)
        return attn_fail(err, ATTN_ERR_NOMEM, "cannot choose the next token: out of memory, or %s's tokenizer has no "
                         "token among its %d ids", g->m->name, g->m->cfg.vocab);
    int *grown = realloc(g->ids, (size_t)(g->n + 1) * sizeof *grown);
    if (!grown) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    g->ids = grown;
    g->ids[g->n++] = id;
    attn_status st = g->trace_steps ? traced_step(g, err) : attn_kv_step(&g->cache, g->m, &g->run, id, g->logits, err);
    if (st) {
        g->n--;
        return st;
    }
    *next = id;
    return ATTN_OK;
}

void attn_generator_free(attn_generator *g)
{
    if (!g) return;
    attn_kv_free(&g->cache);
    free(g->logits);
    free(g->ids);
    attn_trace_free(&g->trace);
    attn_config_free(&g->cfg);
    attn_config_free(&g->run);
    memset(g, 0, sizeof *g);
}
