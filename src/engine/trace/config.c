/* config.c — attn_config's defaults, copies and rules: checking a config and
 * deriving the sizes and token tables a run of it computes with. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/budget.h"
#include "engine/trace/settings.h"

void attn_config_free(attn_config *c)
{
    free(c->tokens);
    free(c->source_tokens);
    free(c->weights_path);
    free(c->input_path);
    free(c->model);
    free(c->text);
    c->tokens = c->source_tokens = c->weights_path = c->input_path = c->model = c->text = NULL;
}

static int dup_opt(char **dst, const char *src)
{
    *dst = NULL;
    if (src && !(*dst = strdup(src))) return -1;
    return 0;
}

attn_status attn_config_copy(attn_config *dst, const attn_config *src, attn_error *err)
{
    *dst = *src;
    /* no string may alias src's while a later copy can still fail */
    dst->tokens = dst->source_tokens = dst->weights_path = dst->input_path = dst->model = dst->text = NULL;
    if (dup_opt(&dst->tokens, src->tokens) || dup_opt(&dst->source_tokens, src->source_tokens) ||
        dup_opt(&dst->weights_path, src->weights_path) || dup_opt(&dst->input_path, src->input_path) ||
        dup_opt(&dst->model, src->model) || dup_opt(&dst->text, src->text)) {
        attn_config_free(dst);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory copying the configuration");
    }
    return ATTN_OK;
}

attn_status attn_config_decode(const attn_config *base, int step, attn_config *out, int *len, attn_error *err)
{
    attn_dims d;
    attn_tokens tk = {0}, src = {0};
    attn_status st = attn_config_resolve(base, &d, &tk, &src, err);
    if (st) return st;
    int longest = 0;
    for (int r = 0; r < tk.rows; r++) longest = tk.lengths[r] > longest ? tk.lengths[r] : longest;
    *len = longest;
    if (step > longest) step = longest;
    if (step < 1) step = 1;
    char *text = attn_tokens_text(&tk, step);
    attn_tokens_free(&tk);
    attn_tokens_free(&src);
    if (!text) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    if ((st = attn_config_copy(out, base, err))) {
        free(text);
        return st;
    }
    free(out->tokens);
    out->tokens = text;
    out->seq = 0;
    out->past = step - 1;
    return ATTN_OK;
}

const char *attn_mode_name(attn_mode m)
{
    switch (m) {
    case ATTN_MODE_MHA: return "mha";
    case ATTN_MODE_MQA: return "mqa";
    case ATTN_MODE_GQA: return "gqa";
    case ATTN_MODE_MLA: return "mla";
    default: return "auto";
    }
}

attn_stage_text attn_config_stage_text(const attn_config *c, bool model, bool cross)
{
    return (attn_stage_text){.model = model, .scale = c->scale, .causal = cross ? 0 : (int)c->causal,
                             .pad_mask = c->pad_mask, .cross = cross, .rope_half = c->rope_style == ATTN_ROPE_HALF,
                             .window = cross ? 0 : c->sliding_window, .past = c->past,
                             .alibi = c->alibi, .softcap = c->softcap > 0, .sink = !isinf(c->sink_logit),
                             .keep_first = cross || !c->sliding_window ? 0 : c->keep_first,
                             .mla = c->mode == ATTN_MODE_MLA, .rope = c->rope, .mla_absorb = c->mla_absorb,
                             .tiles = c->tiles.q > 0};
}

attn_stage_ctx attn_config_stage_ctx(const attn_config *c, const attn_dims *d)
{
    return (attn_stage_ctx){.dims = d, .rope = c->rope, .dropout = c->train && c->dropout > 0.0f,
                            .model = c->model != NULL, .qk_norm = c->qk_norm, .alibi = c->alibi,
                            .softcap = c->softcap > 0, .sink = !isinf(c->sink_logit),
                            .tiles = c->tiles.q > 0 && d->T > 0,
                            .qk_layers = c->qk_keep ? 1 : 0, .mla_absorb = c->mla_absorb};
}

attn_status attn_config_set(attn_config *c, const char *key, const char *v, attn_error *err)
{
    const attn_setting *row = attn_setting_find(key);
    if (row) return attn_setting_parse(c, row, v, err);
    const char *near = attn_setting_suggest(key, 0, NULL, 0);
    if (near) return attn_fail(err, ATTN_ERR_CONFIG, "unknown setting '%s' (did you mean '%s'?)", key, near);
    return attn_fail(err, ATTN_ERR_CONFIG, "unknown setting '%s'", key);
}

void attn_config_init(attn_config *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        if (row->def) attn_setting_parse(c, row, row->def, NULL); /* test_settings checks each */
    }
}

attn_config attn_config_as_run(const attn_config *c, const attn_dims *d)
{
    attn_config r = *c;
    r.tokens = r.source_tokens = r.weights_path = r.input_path = NULL; /* model and text: borrowed */
    r.seq = d->L;
    r.batch = d->b;
    r.d_model = d->d;
    r.heads = d->h;
    r.kv_heads = d->g;
    r.mode = d->mode;
    r.kv_rank = d->kv_rank;
    r.rope_dim = d->rope_dim;
    r.past = d->P;
    if (d->cross) r.causal = ATTN_CAUSAL_OFF;
    return r;
}
attn_budget attn_config_budget(const attn_config *c)
{
    if (c->max_bytes > 0) /* worked out by the caller from a budget: taken as it is */
        return (attn_budget){.bytes = c->max_bytes, .source = ATTN_BUDGET_CALLER, .ceiling = c->max_bytes,
                             .limit = INFINITY};
    /* --memory-gib is a ceiling of its own: under an address-space limit that
     * leaves less, the limit decides, and the refusal names it */
    return attn_budget_get(c->memory_gib > 0 ? c->memory_gib * (double)(1 << 30) : 0, true);
}

double attn_config_max_bytes(const attn_config *c)
{
    return attn_config_budget(c).bytes;
}

int attn_config_key_tiles(const attn_config *c, int t)
{
    return c->tiles.q > 0 && c->tiles.k > 0 ? (t + c->tiles.k - 1) / c->tiles.k : 0;
}

int attn_gqa_default_groups(int h)
{
    for (int g = 2; g < h; g++)
        if (h % g == 0) return g;
    return 0;
}

/* MLA's sizes: R (default 4·dₖ) and D (default dₖ/2, at least 1), D even
 * when RoPE turns its pairs. QK-norm has no heads of keys to act on. */
static attn_status resolve_mla(const attn_config *c, attn_dims *d, attn_error *err)
{
    d->kv_rank = c->kv_rank ? c->kv_rank : 4 * d->k;
    d->rope_dim = c->rope_dim ? c->rope_dim : d->k / 2 > 0 ? d->k / 2 : 1;
    if (c->rope && d->rope_dim % 2)
        return attn_fail(err, ATTN_ERR_CONFIG, "rope_dim: RoPE turns pairs of features, so mode mla's RoPE key needs "
                         "an even width (got %d)", d->rope_dim);
    if (c->qk_norm)
        return attn_fail(err, ATTN_ERR_CONFIG, "qk_norm: mode mla has no key heads to normalise (they are rebuilt "
                         "from the latent; DeepSeek normalises the latent instead)");
    if (c->source_tokens)
        return attn_fail(err, ATTN_ERR_CONFIG, "source_tokens: mode mla compresses a self-attention KV cache (its "
                         "latent and RoPE key are the sequence's own); cross-attention is not supported with it");
    return ATTN_OK;
}

static attn_status resolve_heads(const attn_config *c, attn_dims *d, attn_error *err)
{
    int h = c->heads, g = c->kv_heads;
    if (c->d_model % h)
        return attn_fail(err, ATTN_ERR_CONFIG, "heads (%d) must divide d_model (%d)", h, c->d_model);
    if (g > h)
        return attn_fail(err, ATTN_ERR_CONFIG, "kv_heads (%d) must not exceed heads (%d)", g, h);
    if (g && h % g)
        return attn_fail(err, ATTN_ERR_CONFIG, "kv_heads (%d) must divide heads (%d)", g, h);
    switch (c->mode) {
    case ATTN_MODE_AUTO:
        if (!g) g = h;
        break;
    case ATTN_MODE_MHA:
        if (!g) g = h;
        if (g != h)
            return attn_fail(err, ATTN_ERR_CONFIG, "mode mha needs kv_heads = heads (%d), got %d", h, g);
        break;
    case ATTN_MODE_MQA:
        if (!g) g = 1;
        if (g != 1) return attn_fail(err, ATTN_ERR_CONFIG, "mode mqa needs kv_heads = 1, got %d", g);
        break;
    case ATTN_MODE_GQA:
        if (!g) g = attn_gqa_default_groups(h);
        if (g <= 1 || g >= h)
            return attn_fail(err, ATTN_ERR_CONFIG,
                             "mode gqa needs 1 < kv_heads < heads, with kv_heads dividing heads "
                             "(heads %d, kv_heads %d)", h, c->kv_heads ? c->kv_heads : g);
        break;
    case ATTN_MODE_MLA: /* every head's key and value rebuilt from the one latent */
        if (g && g != h)
            return attn_fail(err, ATTN_ERR_CONFIG,
                             "kv_heads: mode mla rebuilds a key and a value for every query head from one latent; "
                             "there are no kv heads to share (got kv_heads %d with heads %d)", g, h);
        g = h;
        break;
    }
    d->h = h;
    d->g = g;
    d->d = c->d_model;
    d->k = c->d_model / h;
    d->mode = c->mode == ATTN_MODE_MLA ? ATTN_MODE_MLA : g == h ? ATTN_MODE_MHA : g == 1 ? ATTN_MODE_MQA : ATTN_MODE_GQA;
    if (d->mode == ATTN_MODE_MLA) return resolve_mla(c, d, err);
    if (c->rope && d->k % 2)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "rope needs an even head dim, but d_model / heads = %d / %d = %d",
                         c->d_model, h, d->k);
    return ATTN_OK;
}

/* Cross-attention's keys are the source sequence: what orders, windows or
 * caches the positions of one sequence has nothing to act on. */
static attn_status check_cross(const attn_config *c, attn_error *err)
{
    if (c->causal)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "causal: cross-attention has no causal mask (queries may read every source "
                         "token); use --no-causal");
    if (c->past)
        return attn_fail(err, ATTN_ERR_CONFIG, "past: the KV cache applies to self-attention, not cross-attention");
    if (c->sliding_window)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "sliding_window: a window over positions needs self-attention; cross-attention's keys "
                         "are the source sequence");
    if (c->rope)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "rope: queries and source keys live in different sequences; rope applies to "
                         "self-attention only");
    if (c->alibi)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "alibi: its bias grows with the distance |i − j| inside one sequence; cross-attention's "
                         "keys are another sequence");
    return ATTN_OK;
}

attn_status attn_config_check_scores(const attn_config *c, bool model, attn_error *err)
{
    const char *mla_only = c->kv_rank ? "kv_rank" : c->rope_dim ? "rope_dim" : c->mla_absorb ? "mla_absorb" : NULL;
    if (model && c->mode == ATTN_MODE_MLA)
        return attn_fail(err, ATTN_ERR_CONFIG, "mode mla: a trained model's attention is the one it was trained "
                         "with; multi-head latent attention is for one attention layer without --model");
    if (c->mode != ATTN_MODE_MLA && mla_only)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: belongs to multi-head latent attention; set --mode mla too",
                         mla_only);
    if (c->keep_first && !c->sliding_window)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "keep_first: keeps the first keys beside a sliding window; set --sliding-window W too");
    const char *fixed = !model ? NULL : c->alibi ? "alibi" : c->softcap > 0 ? "softcap" : c->qk_norm ? "qk_norm"
                      : !isinf(c->sink_logit) ? "sink_logit" : NULL;
    if (fixed)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "%s: a trained model's attention is the one it was trained with; this setting is for one "
                         "attention layer without --model", fixed);
    return ATTN_OK;
}

/* The target rows: given, synthetic (*synthetic: their tokens are made only
 * after the size check), or the built-in example. Sets the batch b and the
 * length L, past included; seq and batch, when given, must agree with tokens. */
static attn_status target_rows(const attn_config *c, attn_dims *d, attn_tokens *tokens, bool *synthetic,
                               attn_error *err)
{
    attn_status st;
    *synthetic = !c->tokens && (c->seq || c->batch);
    if (*synthetic) {
        d->b = c->batch ? c->batch : 1;
        d->L = c->seq ? c->seq : 8;
        return ATTN_OK;
    }
    if ((st = attn_tokens_parse(c->tokens ? c->tokens : ATTN_EXAMPLE_TOKENS, c->pad_side, "tokens", tokens, err)))
        return st;
    if (c->tokens && c->seq && c->seq != tokens->len)
        return attn_fail(err, ATTN_ERR_CONFIG, "seq (%d) contradicts tokens (longest row has %d tokens)", c->seq,
                         tokens->len);
    if (c->tokens && c->batch && c->batch != tokens->rows)
        return attn_fail(err, ATTN_ERR_CONFIG, "batch (%d) contradicts tokens (%d rows)", c->batch, tokens->rows);
    d->b = tokens->rows;
    d->L = tokens->len;
    return ATTN_OK;
}

/* The positions of a row of L: P already cached, s = L − P new queries, and the
 * keys they read: t in all, n of them new (cross-attention: the source rows,
 * parsed into source, all new). */
static attn_status positions(const attn_config *c, attn_dims *d, attn_tokens *source, attn_error *err)
{
    attn_status st;
    d->P = c->past;
    if (d->P >= d->L)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "past (%d) must be less than the sequence length (%d) so at least one query remains", d->P,
                         d->L);
    d->s = d->L - d->P;
    if (!d->cross) {
        d->t = d->L;
        d->n = d->s;
        d->T = attn_config_key_tiles(c, d->t);
        return ATTN_OK;
    }
    if ((st = attn_tokens_parse(c->source_tokens, c->pad_side, "source_tokens", source, err))) return st;
    if (source->rows != d->b)
        return attn_fail(err, ATTN_ERR_CONFIG, "source_tokens has %d rows but tokens has %d", source->rows, d->b);
    d->t = d->n = source->len;
    d->T = attn_config_key_tiles(c, d->t);
    return ATTN_OK;
}

/* Refuses a trace of c (resolved to d) that would not fit, before any of it is allocated. */
static attn_status check_size(const attn_config *c, const attn_dims *d, attn_error *err)
{
    attn_stage_ctx ctx = attn_config_stage_ctx(c, d);
    double need = attn_stages_bytes(&ctx, 1);
    attn_budget budget = attn_config_budget(c);
    if (need <= budget.bytes) return ATTN_OK;
    char size[32], bound[200];
    return attn_fail(err, ATTN_ERR_CONFIG, "this trace would need about %s, more than %s; reduce seq, batch, heads "
                     "or d_model", attn_budget_size(need, size, sizeof size),
                     attn_budget_text(&budget, bound, sizeof bound));
}

attn_status attn_config_resolve(const attn_config *c, attn_dims *d, attn_tokens *tokens,
                                attn_tokens *source, attn_error *err)
{
    attn_status st;
    bool synthetic;
    memset(d, 0, sizeof *d);
    memset(tokens, 0, sizeof *tokens);
    memset(source, 0, sizeof *source);

    if (c->d_model < 1 || c->heads < 1 || c->kv_heads < 0 || c->past < 0 || c->seq < 0 || c->batch < 0)
        return attn_fail(err, ATTN_ERR_CONFIG, "sizes must be positive");
    if ((st = resolve_heads(c, d, err))) return st;
    d->cross = c->source_tokens != NULL;
    if (d->cross && (st = check_cross(c, err))) return st;
    if ((st = attn_config_check_scores(c, false, err))) return st;

    if ((st = target_rows(c, d, tokens, &synthetic, err)) || (st = positions(c, d, source, err)) ||
        (st = check_size(c, d, err)) ||
        (synthetic && (st = attn_tokens_synthetic(d->b, d->L, c->seed, tokens, err)))) {
        attn_tokens_free(tokens);
        attn_tokens_free(source);
        return st;
    }
    return ATTN_OK;
}
