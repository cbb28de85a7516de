/* config.c — defaults, key/value settings and validation of attn_config. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MAX_D_MODEL 16384
#define MAX_HEADS 256

void attn_config_init(attn_config *c)
{
    memset(c, 0, sizeof *c);
    c->d_model = 32;
    c->heads = 4;
    c->causal = ATTN_CAUSAL_ON;
    c->scale = true;
    c->softmax_guard = true;
    c->pad_side = ATTN_PAD_RIGHT;
    c->pad_mask = true;
    c->rope_theta = 10000.0;
    c->mask_value = -INFINITY;
    c->dropout = 0.1f;
    c->seed = 42;
}

void attn_config_free(attn_config *c)
{
    free(c->tokens);
    free(c->source_tokens);
    free(c->weights_path);
    free(c->input_path);
    c->tokens = c->source_tokens = c->weights_path = c->input_path = NULL;
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
    dst->tokens = dst->source_tokens = dst->weights_path = dst->input_path = NULL;
    if (dup_opt(&dst->tokens, src->tokens) || dup_opt(&dst->source_tokens, src->source_tokens) ||
        dup_opt(&dst->weights_path, src->weights_path) || dup_opt(&dst->input_path, src->input_path)) {
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
    default: return "auto";
    }
}

attn_stage_ctx attn_config_stage_ctx(const attn_config *c, const attn_dims *d)
{
    return (attn_stage_ctx){d, c->rope, c->train && c->dropout > 0.0f};
}

const char *attn_format_mask_value(float v, char *buf, int size)
{
    if (isinf(v)) snprintf(buf, (size_t)size, "%s", v < 0 ? "-inf" : "inf");
    else snprintf(buf, (size_t)size, "%.9g", (double)v);
    return buf;
}

/* ---- value parsers: each names the key in its message ---- */

static attn_status parse_int(const char *key, const char *v, long min, long max, int *out,
                             attn_error *err)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || isspace((unsigned char)*v))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is not a whole number", key, v);
    if (x < min || x > max)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: %ld is out of range (%ld to %ld)", key, x, min, max);
    *out = (int)x;
    return ATTN_OK;
}

static attn_status parse_double(const char *key, const char *v, double *out, attn_error *err)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || *end != '\0' || isspace((unsigned char)*v))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is not a number", key, v);
    if (isnan(x) || errno == ERANGE)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is not a usable number", key, v);
    *out = x;
    return ATTN_OK;
}

static attn_status parse_bool(const char *key, const char *v, bool *out, attn_error *err)
{
    static const char *const yes[] = {"true", "on", "yes", "1"}, *const no[] = {"false", "off", "no", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcasecmp(v, yes[i]) == 0) { *out = true; return ATTN_OK; }
        if (strcasecmp(v, no[i]) == 0) { *out = false; return ATTN_OK; }
    }
    return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is not true or false", key, v);
}

static attn_status set_str(char **dst, const char *v, attn_error *err)
{
    char *copy = NULL;
    if (v && *v && !(copy = strdup(v)))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    free(*dst);
    *dst = copy;
    return ATTN_OK;
}

static const char *const KEYS[] = {
    "tokens", "source_tokens", "seq", "batch", "d_model", "heads", "kv_heads", "mode",
    "causal", "scale", "softmax_guard", "pad_side", "pad_mask", "rope", "rope_theta", "mask_value", "past", "dropout", "train",
    "seed", "weights", "input",
};

static void normalise_key(const char *key, char *buf, size_t size)
{
    size_t i = 0;
    for (; key[i] && i + 1 < size; i++) buf[i] = key[i] == '-' ? '_' : key[i];
    buf[i] = '\0';
}

bool attn_config_has_key(const char *key)
{
    char k[32];
    normalise_key(key, k, sizeof k);
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++)
        if (strcmp(k, KEYS[i]) == 0) return true;
    return false;
}

attn_status attn_config_set(attn_config *c, const char *key_in, const char *v, attn_error *err)
{
    char key[32];
    normalise_key(key_in, key, sizeof key);
    if (!v) v = "";

    if (!strcmp(key, "tokens")) return set_str(&c->tokens, v, err);
    if (!strcmp(key, "source_tokens")) return set_str(&c->source_tokens, v, err);
    if (!strcmp(key, "weights")) return set_str(&c->weights_path, v, err);
    if (!strcmp(key, "input")) return set_str(&c->input_path, v, err);
    if (!strcmp(key, "seq")) return parse_int(key, v, 1, ATTN_MAX_SEQ, &c->seq, err);
    if (!strcmp(key, "batch")) return parse_int(key, v, 1, ATTN_MAX_ROWS, &c->batch, err);
    if (!strcmp(key, "d_model")) return parse_int(key, v, 1, MAX_D_MODEL, &c->d_model, err);
    if (!strcmp(key, "heads")) return parse_int(key, v, 1, MAX_HEADS, &c->heads, err);
    if (!strcmp(key, "kv_heads")) return parse_int(key, v, 1, MAX_HEADS, &c->kv_heads, err);
    if (!strcmp(key, "past")) return parse_int(key, v, 0, ATTN_MAX_SEQ, &c->past, err);
    if (!strcmp(key, "causal")) {
        bool on;
        if (strcasecmp(v, "reversed") == 0) return c->causal = ATTN_CAUSAL_REVERSED, ATTN_OK;
        if (parse_bool(key, v, &on, err))
            return attn_fail(err, ATTN_ERR_CONFIG, "causal: '%s' is not true, false or reversed", v);
        c->causal = on ? ATTN_CAUSAL_ON : ATTN_CAUSAL_OFF;
        return ATTN_OK;
    }
    if (!strcmp(key, "scale")) return parse_bool(key, v, &c->scale, err);
    if (!strcmp(key, "softmax_guard")) return parse_bool(key, v, &c->softmax_guard, err);
    if (!strcmp(key, "pad_mask")) return parse_bool(key, v, &c->pad_mask, err);
    if (!strcmp(key, "rope")) return parse_bool(key, v, &c->rope, err);
    if (!strcmp(key, "train")) return parse_bool(key, v, &c->train, err);
    if (!strcmp(key, "mode")) {
        static const attn_mode modes[] = {ATTN_MODE_AUTO, ATTN_MODE_MHA, ATTN_MODE_MQA, ATTN_MODE_GQA};
        for (int i = 0; i < 4; i++)
            if (strcasecmp(v, attn_mode_name(modes[i])) == 0) { c->mode = modes[i]; return ATTN_OK; }
        return attn_fail(err, ATTN_ERR_CONFIG, "mode: '%s' is not mha, mqa or gqa", v);
    }
    if (!strcmp(key, "pad_side")) {
        if (!strcasecmp(v, "right")) c->pad_side = ATTN_PAD_RIGHT;
        else if (!strcasecmp(v, "left")) c->pad_side = ATTN_PAD_LEFT;
        else return attn_fail(err, ATTN_ERR_CONFIG, "pad_side: '%s' is not right or left", v);
        return ATTN_OK;
    }
    if (!strcmp(key, "rope_theta")) {
        double x;
        if (parse_double(key, v, &x, err)) return err->status;
        if (!(x > 1.0) || isinf(x))
            return attn_fail(err, ATTN_ERR_CONFIG, "rope_theta: must be a finite number above 1 (got %s)", v);
        c->rope_theta = x;
        return ATTN_OK;
    }
    if (!strcmp(key, "mask_value")) {
        double x;
        if (!strcasecmp(v, "-inf") || !strcasecmp(v, "-infinity")) { c->mask_value = -INFINITY; return ATTN_OK; }
        if (parse_double(key, v, &x, err)) return err->status;
        if (!(x < 0) || isinf(x) || x < -3.0e38)
            return attn_fail(err, ATTN_ERR_CONFIG,
                             "mask_value: must be -inf or a finite negative number such as -1e9 (got %s)", v);
        c->mask_value = (float)x;
        return ATTN_OK;
    }
    if (!strcmp(key, "dropout")) {
        double x;
        if (parse_double(key, v, &x, err)) return err->status;
        if (!(x >= 0.0 && x < 1.0))
            return attn_fail(err, ATTN_ERR_CONFIG, "dropout: must be at least 0 and below 1 (got %s)", v);
        c->dropout = (float)x;
        return ATTN_OK;
    }
    if (!strcmp(key, "seed")) {
        char *end;
        errno = 0;
        unsigned long long x = strtoull(v, &end, 10);
        if (end == v || *end || errno == ERANGE || !isdigit((unsigned char)*v))
            return attn_fail(err, ATTN_ERR_CONFIG, "seed: '%s' is not a whole number from 0 to 2^64-1", v);
        c->seed = x;
        return ATTN_OK;
    }
    return attn_fail(err, ATTN_ERR_CONFIG, "unknown setting '%s'", key_in);
}

/* Half the physical memory: the default ceiling for one trace. */
static double default_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 4.0 * (1 << 30);
    return (double)pages * (double)page / 2.0;
}

int attn_gqa_default_groups(int h)
{
    for (int g = 2; g < h; g++)
        if (h % g == 0) return g;
    return 0;
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
    }
    d->h = h;
    d->g = g;
    d->d = c->d_model;
    d->k = c->d_model / h;
    d->mode = g == h ? ATTN_MODE_MHA : g == 1 ? ATTN_MODE_MQA : ATTN_MODE_GQA;
    if (c->rope && d->k % 2)
        return attn_fail(err, ATTN_ERR_CONFIG,
                         "rope needs an even head dim, but d_model / heads = %d / %d = %d",
                         c->d_model, h, d->k);
    return ATTN_OK;
}

attn_status attn_config_resolve(const attn_config *c, attn_dims *d, attn_tokens *tokens,
                                attn_tokens *source, attn_error *err)
{
    attn_status st;
    memset(d, 0, sizeof *d);
    memset(tokens, 0, sizeof *tokens);
    memset(source, 0, sizeof *source);

    if (c->d_model < 1 || c->heads < 1 || c->kv_heads < 0 || c->past < 0 || c->seq < 0 || c->batch < 0)
        return attn_fail(err, ATTN_ERR_CONFIG, "sizes must be positive");
    if ((st = resolve_heads(c, d, err))) return st;

    d->cross = c->source_tokens != NULL;
    if (d->cross) {
        if (c->causal)
            return attn_fail(err, ATTN_ERR_CONFIG,
                             "causal: cross-attention has no causal mask (queries may read every source "
                             "token); use --no-causal");
        if (c->past)
            return attn_fail(err, ATTN_ERR_CONFIG, "past: the KV cache applies to self-attention, not cross-attention");
        if (c->rope)
            return attn_fail(err, ATTN_ERR_CONFIG,
                             "rope: queries and source keys live in different sequences; rope applies to "
                             "self-attention only");
    }

    /* the target rows: given, synthetic (built only after the size check), or the built-in example */
    bool synthetic = !c->tokens && (c->seq || c->batch);
    if (synthetic) {
        d->b = c->batch ? c->batch : 1;
        d->L = c->seq ? c->seq : 8;
    } else {
        if ((st = attn_tokens_parse(c->tokens ? c->tokens : ATTN_EXAMPLE_TOKENS, c->pad_side, "tokens", tokens,
                                    err)))
            return st;
        if (c->tokens && c->seq && c->seq != tokens->len) {
            st = attn_fail(err, ATTN_ERR_CONFIG, "seq (%d) contradicts tokens (longest row has %d tokens)",
                           c->seq, tokens->len);
            goto fail;
        }
        if (c->tokens && c->batch && c->batch != tokens->rows) {
            st = attn_fail(err, ATTN_ERR_CONFIG, "batch (%d) contradicts tokens (%d rows)", c->batch,
                           tokens->rows);
            goto fail;
        }
        d->b = tokens->rows;
        d->L = tokens->len;
    }
    d->P = c->past;
    if (d->P >= d->L) {
        st = attn_fail(err, ATTN_ERR_CONFIG,
                       "past (%d) must be less than the sequence length (%d) so at least one query remains",
                       d->P, d->L);
        goto fail;
    }
    d->s = d->L - d->P;

    if (d->cross) {
        if ((st = attn_tokens_parse(c->source_tokens, c->pad_side, "source_tokens", source, err))) goto fail;
        if (source->rows != d->b) {
            st = attn_fail(err, ATTN_ERR_CONFIG, "source_tokens has %d rows but tokens has %d",
                           source->rows, d->b);
            goto fail;
        }
        d->t = d->n = source->len;
    } else {
        d->t = d->L;
        d->n = d->s;
    }

    /* refuse a trace that would not fit before allocating any of it */
    attn_stage_ctx ctx = attn_config_stage_ctx(c, d);
    double need = attn_stages_bytes(&ctx), limit = c->max_bytes > 0 ? c->max_bytes : default_limit();
    if (need > limit) {
        st = attn_fail(err, ATTN_ERR_CONFIG,
                       "this trace would need about %.1f GiB, more than the %.1f GiB limit; "
                       "reduce seq, batch, heads or d_model", need / (1 << 30), limit / (1 << 30));
        goto fail;
    }
    if (synthetic && (st = attn_tokens_synthetic(d->b, d->L, c->seed, tokens, err))) goto fail;
    return ATTN_OK;
fail:
    attn_tokens_free(tokens);
    attn_tokens_free(source);
    return st;
}
