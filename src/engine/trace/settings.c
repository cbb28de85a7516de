/* settings.c — the settings table and what reads and writes a config by it:
 * parsing a value, formatting it back, the default, the status text, the
 * window's cycle and the compare view's toggles. */
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "engine/base/utf8.h"

#define MAX_D_MODEL 16384
#define MAX_HEADS 256

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

/* "BQxBK" (x or ×), each from 1 to max; "0" or "off": 0 × 0 */
static attn_status parse_tiles(const char *key, const char *v, long max, attn_tiles *out, attn_error *err)
{
    if (!strcmp(v, "0") || !strcasecmp(v, "off")) {
        *out = (attn_tiles){0, 0};
        return ATTN_OK;
    }
    char *end, *end2 = "";
    errno = 0;
    long q = strtol(v, &end, 10), k = -1;
    size_t sep = !strncmp(end, "x", 1) || !strncmp(end, "X", 1) ? 1 : !strncmp(end, "×", strlen("×")) ? strlen("×") : 0;
    if (end != v && sep && isdigit((unsigned char)end[sep])) k = strtol(end + sep, &end2, 10);
    if (k < 0 || *end2 || errno == ERANGE || !isdigit((unsigned char)*v))
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is not BQxBK (query rows x keys of a tile, e.g. 64x64) "
                         "or 0", key, v);
    if (q < 1 || q > max || k < 1 || k > max)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: %ldx%ld is out of range (each from 1 to %ld)", key, q, k, max);
    *out = (attn_tiles){(int)q, (int)k};
    return ATTN_OK;
}

/* ---- the settings table ---- */

static bool theta_ok(double x) { return x > 1.0 && !isinf(x); }
static bool dropout_ok(double x) { return x >= 0.0 && x < 1.0; }
static bool temperature_ok(double x) { return x >= 0.0 && x <= 100.0; }
static bool gib_ok(double x) { return x >= 0.0 && x <= 1.0e6; }
static bool softcap_ok(double x) { return x == 0.0 || (x >= 1e-3 && x <= 1e6); }
/* -inf (no sink), or a finite logit a float holds well: e^X is taken against the scores' */
static bool sink_ok(double x) { return x == -INFINITY || (x >= -1e4 && x <= 1e4); }
/* -inf, or a negative number a float holds */
static bool mask_ok(double x) { return x == -INFINITY || (x < 0 && x >= -3.0e38); }

/* Status texts for `attnlab info`: c is what ran (attn_config_as_run). */
static void say_nothing(const attn_config *c, char *buf, int size) /* the sizes line shows it */
{
    (void)c;
    snprintf(buf, (size_t)size, "%s", "");
}
static void say_causal(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "causal %s", !c->causal ? "off" : c->causal == ATTN_CAUSAL_REVERSED ? "REVERSED" : "on");
}
static void say_scale(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "%s", c->scale ? "" : "scale off (no 1/√dₖ)");
}
static void say_guard(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "%s", c->softmax_guard ? "" : "softmax guard off");
}
static void say_padding(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "padding %s", c->pad_side == ATTN_PAD_LEFT ? "left" : "right");
}
static void say_pad_mask(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "%s", c->pad_mask ? "" : "pad mask off");
}
static void say_rope(const attn_config *c, char *buf, int size)
{
    if (c->rope)
        snprintf(buf, (size_t)size, "rope on (theta %g%s)", c->rope_theta,
                 c->rope_style == ATTN_ROPE_HALF ? ", half pairs" : "");
    else snprintf(buf, (size_t)size, "rope off");
}
static void say_mask(const attn_config *c, char *buf, int size)
{
    char mv[32];
    snprintf(buf, (size_t)size, "mask %s", attn_format_mask_value(c->mask_value, mv, sizeof mv));
}
static void say_window(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "sliding window %d", c->sliding_window);
}
static void say_keep_first(const attn_config *c, char *buf, int size)
{
    if (c->keep_first) snprintf(buf, (size_t)size, "kept first %d", c->keep_first);
    else snprintf(buf, (size_t)size, "%s", "");
}
static void say_alibi(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "%s", c->alibi ? "ALiBi on" : "");
}
static void say_softcap(const attn_config *c, char *buf, int size)
{
    if (c->softcap > 0) snprintf(buf, (size_t)size, "softcap %g", c->softcap);
    else snprintf(buf, (size_t)size, "%s", "");
}
static void say_qk_norm(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "%s", c->qk_norm ? "qk-norm on" : "");
}
static void say_sink(const attn_config *c, char *buf, int size)
{
    if (isinf(c->sink_logit)) snprintf(buf, (size_t)size, "%s", "");
    else snprintf(buf, (size_t)size, "sink logit %g", (double)c->sink_logit);
}
static void say_mla(const attn_config *c, char *buf, int size)
{
    if (c->mode != ATTN_MODE_MLA) snprintf(buf, (size_t)size, "%s", "");
    else snprintf(buf, (size_t)size, "latent %d + RoPE key %d a token (%s)", c->kv_rank, c->rope_dim,
                  c->mla_absorb ? "absorbed" : "naive");
}
static void say_tiles(const attn_config *c, char *buf, int size)
{
    if (c->tiles.q) snprintf(buf, (size_t)size, "tiles %dx%d (online softmax)", c->tiles.q, c->tiles.k);
    else snprintf(buf, (size_t)size, "%s", "");
}
static void say_past(const attn_config *c, char *buf, int size) { snprintf(buf, (size_t)size, "past %d", c->past); }
static void say_dropout(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "dropout %g (%s)", (double)c->dropout, c->train ? "training" : "eval, inactive");
}
static void say_seed(const attn_config *c, char *buf, int size)
{
    snprintf(buf, (size_t)size, "seed %llu", (unsigned long long)c->seed);
}

static const attn_setting_choice MODES[] = {
    {"mha", ATTN_MODE_MHA, false}, {"mqa", ATTN_MODE_MQA, false}, {"gqa", ATTN_MODE_GQA, false},
    {"mla", ATTN_MODE_MLA, false}, {"auto", ATTN_MODE_AUTO, true}, {NULL, 0, false}};
static const attn_setting_choice CAUSAL[] = {
    {"true", ATTN_CAUSAL_ON, false}, {"false", ATTN_CAUSAL_OFF, false}, {"reversed", ATTN_CAUSAL_REVERSED, false},
    {"on", ATTN_CAUSAL_ON, true}, {"off", ATTN_CAUSAL_OFF, true}, {"yes", ATTN_CAUSAL_ON, true},
    {"no", ATTN_CAUSAL_OFF, true}, {"1", ATTN_CAUSAL_ON, true}, {"0", ATTN_CAUSAL_OFF, true}, {NULL, 0, false}};
static const attn_setting_choice PAD_SIDES[] = {
    {"right", ATTN_PAD_RIGHT, false}, {"left", ATTN_PAD_LEFT, false}, {NULL, 0, false}};

static const attn_setting_choice ROPE_STYLES[] = {
    {"interleaved", ATTN_ROPE_INTERLEAVED, false}, {"half", ATTN_ROPE_HALF, false}, {NULL, 0, false}};
static const char *const ON_OFF[] = {"true", "false", NULL};   /* from reversed: on */
static const char *const OFF_ON[] = {"false", "true", NULL};
static const char *const FILLS[] = {"-inf", "-1e9", NULL};
static const char *const WINDOWS[] = {"0", "2", "3", "4", NULL};
static const char *const KEEP_FIRST[] = {"0", "1", "2", NULL};
static const char *const SOFTCAPS[] = {"0", "5", "1", NULL};
static const char *const SINKS[] = {"-inf", "0", "2", NULL};

#define FIELD(f) offsetof(attn_config, f)
#define LESSON ATTN_SETTING_LESSON
#define TRACE ATTN_SETTING_TRACE

static const attn_setting SETTINGS[] = {
    {.name = "model", .type = ATTN_SET_TEXT, .offset = FIELD(model), .flags = LESSON | TRACE, .arg = "NAME|DIR",
     .help = "a trained model: a shipped one by name (tang, brown; `attnlab models`) or a Hugging Face Llama folder (a "
             "folder here named like a shipped model: ./NAME)"},
    {.name = "text", .type = ATTN_SET_TEXT, .offset = FIELD(text), .flags = LESSON | TRACE, .arg = "TEXT",
     .help = "with --model: text to tokenize; '|' separates batch rows, '\\|' is a bar, '\\\\' a backslash",
     .rule = "some text"},
    {.name = "temperature", .type = ATTN_SET_DOUBLE, .offset = FIELD(temperature), .flags = LESSON, .def = "0",
     .arg = "T", .help = "generating: 0 takes the most likely token (default), T > 0 samples from softmax(logits / T)",
     .ok = temperature_ok, .rule = "a number from 0 to 100"},
    {.name = "memory_gib", .type = ATTN_SET_DOUBLE, .offset = FIELD(memory_gib), .flags = 0, .arg = "GIB",
     .def = "0", .help = "memory one trace may take, in GiB (default 0: half the physical memory, or what the machine "
                         "has free when that is less; less if `ulimit -v` leaves less); a model's prompt too long for every layer's attention weights keeps one layer's",
     .ok = gib_ok, .rule = "a number of GiB (0: half the physical memory)"},
    {.name = "top_k", .type = ATTN_SET_INT, .offset = FIELD(top_k), .flags = LESSON, .arg = "K",
     .help = "generating: sample among the K most likely tokens (default: all)", .min = 1, .max = 1 << 22},
    {.name = "allow_unk", .type = ATTN_SET_BOOL, .offset = FIELD(allow_unk), .flags = LESSON, .def = "false",
     .help = "generating: the model's <unk> may be chosen (by default it never is: it stands for any word left out)",
     .sw = {{"allow-unk", "true", "generating: let the model's <unk> be chosen (by default it never is)"}}},
    {.name = "tokens", .type = ATTN_SET_TEXT, .offset = FIELD(tokens), .flags = LESSON, .arg = "TEXT",
     .help = "tokens separated by spaces, rows by '|' (\"我 爱 AI | I love AI\")", .rule = "one or more tokens"},
    {.name = "source_tokens", .type = ATTN_SET_TEXT, .offset = FIELD(source_tokens), .flags = LESSON, .arg = "TEXT",
     .help = "cross-attention: keys and values from these source rows", .rule = "one or more tokens"},
    {.name = "seq", .type = ATTN_SET_INT, .offset = FIELD(seq), .flags = LESSON | TRACE, .arg = "N",
     .help = "synthetic rows of N tokens when no --tokens (total, past included)", .min = 1, .max = ATTN_MAX_SEQ,
     .describe = say_nothing},
    {.name = "batch", .type = ATTN_SET_INT, .offset = FIELD(batch), .flags = LESSON | TRACE, .arg = "B",
     .help = "number of synthetic rows", .min = 1, .max = ATTN_MAX_ROWS, .describe = say_nothing},
    {.name = "d_model", .type = ATTN_SET_INT, .offset = FIELD(d_model), .flags = LESSON | TRACE, .def = "32",
     .arg = "D", .help = "model width d (default 32)", .min = 1, .max = MAX_D_MODEL, .describe = say_nothing},
    {.name = "heads", .type = ATTN_SET_INT, .offset = FIELD(heads), .flags = LESSON | TRACE, .def = "4", .arg = "H",
     .help = "query heads h; must divide d (default 4)", .min = 1, .max = MAX_HEADS, .describe = say_nothing},
    {.name = "kv_heads", .type = ATTN_SET_INT, .offset = FIELD(kv_heads), .flags = LESSON | TRACE, .arg = "G",
     .help = "key/value heads g; must divide h", .min = 1, .max = MAX_HEADS, .describe = say_nothing},
    {.name = "mode", .type = ATTN_SET_ENUM, .offset = FIELD(mode), .flags = LESSON | TRACE, .def = "auto",
     .arg = "MODE",
     .help = "mha (g = h), mqa (g = 1), gqa (1 < g < h), or mla: multi-head latent attention (DeepSeek-V2/V3), "
             "a cache of a latent and one RoPE key a token",
     .choices = MODES, .describe = say_nothing},
    {.name = "kv_rank", .type = ATTN_SET_INT, .offset = FIELD(kv_rank), .flags = LESSON | TRACE, .def = "0",
     .arg = "R", .help = "mode mla: the latent's width R, what the cache keeps per token besides the RoPE key "
                         "(default 0: 4·dₖ, as DeepSeek-V2)", .min = 0, .max = MAX_D_MODEL, .describe = say_mla},
    {.name = "rope_dim", .type = ATTN_SET_INT, .offset = FIELD(rope_dim), .flags = LESSON | TRACE, .def = "0",
     .arg = "D", .help = "mode mla: the width D of the decoupled RoPE key shared by every head, and of each query "
                         "head's RoPE part (default 0: dₖ/2, as DeepSeek-V2)", .min = 0, .max = MAX_D_MODEL,
     .describe = say_nothing /* with kv_rank */},
    {.name = "causal", .type = ATTN_SET_ENUM, .offset = FIELD(causal), .flags = LESSON | TRACE, .def = "true",
     .help = "the causal mask: true (default), false or reversed",
     .sw = {{"causal", "true", "mask future keys (default)"},
            {"no-causal", "false", "no causal mask"},
            {"reversed-causal", "reversed", "pitfall: mask the past instead of the future (tril for triu)"}},
     .choices = CAUSAL, .cycle = ON_OFF, .describe = say_causal,
     /* TRANSLATORS: what the compare view toggles; also in "%s toggled" */
     .compare = {"causal", ATTN_N_("causal mask"), {"true", "false"}, .self_only = true}},
    {.name = "scale", .type = ATTN_SET_BOOL, .offset = FIELD(scale), .flags = LESSON | TRACE, .def = "true",
     .help = "divide the scores by √dₖ (default)",
     .sw = {{"no-scale", "false", "pitfall: scores without the 1/√dₖ scaling"}}, .describe = say_scale},
    {.name = "softmax_guard", .type = ATTN_SET_BOOL, .offset = FIELD(softmax_guard), .flags = LESSON | TRACE,
     .def = "true", .help = "a row with every key masked gets weights 0 (default)",
     .sw = {{"no-softmax-guard", "false", "pitfall: a row with every key masked becomes NaN, not 0"}},
     .describe = say_guard},
    {.name = "pad_side", .type = ATTN_SET_ENUM, .offset = FIELD(pad_side), .flags = LESSON | TRACE, .def = "right",
     .arg = "SIDE", .help = "pad shorter rows on the right (default) or left", .choices = PAD_SIDES,
     .describe = say_padding},
    {.name = "pad_mask", .type = ATTN_SET_BOOL, .offset = FIELD(pad_mask), .flags = LESSON | TRACE, .def = "true",
     .help = "mask <pad> keys (default)",
     .sw = {{"pad-mask", "true", "mask <pad> keys (default)"},
            {"no-pad-mask", "false", "let queries attend to <pad> keys (to see what the mask prevents)"}},
     .describe = say_pad_mask, .compare = {"padding", ATTN_N_("padding mask"), {"true", "false"}, .self_only = false}},
    {.name = "rope", .type = ATTN_SET_BOOL, .offset = FIELD(rope), .flags = LESSON | TRACE, .def = "false",
     .help = "rotary position embedding on q and k",
     .sw = {{"rope", "true", "rotary position embedding on q and k"}, {"no-rope", "false", "no RoPE (default)"}},
     .cycle = OFF_ON, .describe = say_rope},
    {.name = "rope_theta", .type = ATTN_SET_DOUBLE, .offset = FIELD(rope_theta), .flags = LESSON | TRACE,
     .def = "10000", .arg = "F", .help = "RoPE base (default 10000)", .ok = theta_ok,
     .rule = "a finite number above 1", .describe = say_nothing /* with rope */},
    {.name = "rope_style", .type = ATTN_SET_ENUM, .offset = FIELD(rope_style), .flags = LESSON | TRACE,
     .def = "interleaved", .arg = "STYLE",
     .help = "RoPE pairs: interleaved (2m, 2m+1), as Meta's llama (default), or half (m, m+k/2), as Hugging Face",
     .choices = ROPE_STYLES, .describe = say_nothing /* with rope */},
    {.name = "mask_value", .type = ATTN_SET_FLOAT, .offset = FIELD(mask_value), .flags = LESSON | TRACE,
     .def = "-inf", .arg = "V", .help = "fill for masked scores: -inf (default) or e.g. -1e9", .ok = mask_ok,
     .rule = "-inf or a finite negative number such as -1e9", .cycle = FILLS, .describe = say_mask,
     .compare = {"fill", ATTN_N_("fill value"), {"-inf", "-1e9"}, .self_only = false}},
    {.name = "sliding_window", .type = ATTN_SET_INT, .offset = FIELD(sliding_window), .flags = LESSON | TRACE,
     .def = "0", .arg = "W", .help = "each query reads only the W nearest keys (the last W with the causal mask); 0: off",
     .min = 0, .max = ATTN_MAX_SEQ, .cycle = WINDOWS, .describe = say_window,
     .compare = {"window", ATTN_N_("sliding window"), {"0", "3"}, .self_only = true}},
    {.name = "keep_first", .type = ATTN_SET_INT, .offset = FIELD(keep_first), .flags = LESSON | TRACE, .def = "0",
     .arg = "N", .help = "with --sliding-window: keys 0 … N−1 stay visible beside the window (StreamingLLM); 0: off",
     .min = 0, .max = ATTN_MAX_SEQ, .cycle = KEEP_FIRST, .describe = say_keep_first,
     .compare = {"keep_first", ATTN_N_("kept first keys"), {"0", "1"}, .self_only = true}},
    {.name = "alibi", .type = ATTN_SET_BOOL, .offset = FIELD(alibi), .flags = LESSON | TRACE, .def = "false",
     .help = "ALiBi: add −m_h·|i − j| to the scaled scores, BLOOM's slope m_h per head",
     .sw = {{"alibi", "true", "ALiBi: add −m_h·|i − j| to the scaled scores (BLOOM's slopes)"},
            {"no-alibi", "false", "no ALiBi bias (default)"}},
     .cycle = OFF_ON, .describe = say_alibi, .compare = {"alibi", ATTN_N_("ALiBi"), {"false", "true"}, .self_only = false}},
    {.name = "softcap", .type = ATTN_SET_DOUBLE, .offset = FIELD(softcap), .flags = LESSON | TRACE, .def = "0",
     .arg = "C", .help = "soft-capping: scores ← C·tanh(scores / C) before the mask (Gemma 2); 0: off",
     .ok = softcap_ok, .rule = "0 (off) or a number from 0.001 to 1e6", .cycle = SOFTCAPS, .describe = say_softcap,
     .compare = {"softcap", ATTN_N_("soft-capping"), {"0", "1"}, .self_only = false}},
    {.name = "qk_norm", .type = ATTN_SET_BOOL, .offset = FIELD(qk_norm), .flags = LESSON | TRACE, .def = "false",
     .help = "QK-norm: RMS-normalise each q and k head over its dₖ features, gains w_qn, w_kn, before RoPE",
     .sw = {{"qk-norm", "true", "QK-norm: RMS-normalise each q and k head, before RoPE (Qwen3, Gemma 3)"},
            {"no-qk-norm", "false", "no QK-norm (default)"}},
     .cycle = OFF_ON, .describe = say_qk_norm,
     .compare = {"qk_norm", ATTN_N_("QK-norm"), {"false", "true"}, .self_only = false}},
    {.name = "sink_logit", .type = ATTN_SET_FLOAT, .offset = FIELD(sink_logit), .flags = LESSON | TRACE,
     .def = "-inf", .arg = "X",
     .help = "a learned sink: one more logit X in every row's softmax, dropped after it (gpt-oss); -inf: off",
     .ok = sink_ok, .rule = "-inf (off) or a number from -1e4 to 1e4", .cycle = SINKS, .describe = say_sink,
     .compare = {"sink", ATTN_N_("sink logit"), {"-inf", "0"}, .self_only = false}},
    /* after the compare toggles of issue 33, so that the compare view's first (and default) toggle stays causal */
    {.name = "mla_absorb", .type = ATTN_SET_BOOL, .offset = FIELD(mla_absorb), .flags = LESSON | TRACE,
     .def = "false", .help = "mode mla: compute as inference kernels do, W_UK folded into the query and W_UV "
                             "after the weights (the same output)",
     .sw = {{"mla-absorb", "true", "mode mla: W_UK folded into the query, W_UV after the weights (the same output)"},
            {"mla-naive", "false", "mode mla: keys and values rebuilt from the latent per head (default)"}},
     .cycle = OFF_ON, .describe = say_nothing /* with kv_rank */,
     .compare = {"mla_absorb", ATTN_N_("absorbed MLA"), {"false", "true"}, .self_only = false}},
    {.name = "tiles", .type = ATTN_SET_TILES, .offset = FIELD(tiles), .flags = LESSON | TRACE, .def = "0",
     .arg = "BQxBK",
     .help = "FlashAttention: the context tile by tile, BQ queries by BK keys, with the online softmax; 0: off",
     .max = ATTN_MAX_SEQ, .describe = say_tiles},
    {.name = "past", .type = ATTN_SET_INT, .offset = FIELD(past), .flags = LESSON | TRACE, .arg = "P",
     .help = "KV cache: the first P positions are already cached", .min = 0, .max = ATTN_MAX_SEQ,
     .describe = say_past},
    {.name = "dropout", .type = ATTN_SET_FLOAT, .offset = FIELD(dropout), .flags = LESSON | TRACE, .def = "0.1",
     .arg = "P", .help = "dropout probability for training (default 0.1)", .ok = dropout_ok,
     .rule = "at least 0 and below 1", .describe = say_dropout},
    {.name = "train", .type = ATTN_SET_BOOL, .offset = FIELD(train), .flags = LESSON | TRACE, .def = "false",
     .help = "training mode: apply dropout",
     .sw = {{"train", "true", "training mode: apply dropout"}, {"eval", "false", "evaluation mode (default): no dropout"}},
     .cycle = OFF_ON, .describe = say_nothing /* with dropout */},
    {.name = "seed", .type = ATTN_SET_U64, .offset = FIELD(seed), .flags = LESSON | TRACE, .def = "42", .arg = "N",
     .help = "seed for weights, embeddings and dropout (default 42)", .describe = say_seed},
    {.name = "weights", .type = ATTN_SET_TEXT, .offset = FIELD(weights_path), .flags = ATTN_SETTING_FILE,
     .arg = "FILE", .help = "load w_q, w_k, w_v, w_o (and w_qn, w_kn with --qk-norm; w_q, w_dkv, w_uk, w_uv, w_kr, w_o "
                            "with --mode mla) from a safetensors file"},
    {.name = "input", .type = ATTN_SET_TEXT, .offset = FIELD(input_path), .flags = ATTN_SETTING_FILE,
     .arg = "FILE", .help = "load x (and x_past, memory) from a safetensors file"},
};
#define N_SETTINGS ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

int attn_setting_count(void) { return N_SETTINGS; }

const attn_setting *attn_setting_at(int i) { return i >= 0 && i < N_SETTINGS ? &SETTINGS[i] : NULL; }

const attn_setting *attn_setting_find(const char *name)
{
    char k[32];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof k; i++) k[i] = name[i] == '-' ? '_' : name[i];
    if (name[i]) return NULL; /* longer than any name */
    k[i] = '\0';
    for (int r = 0; r < N_SETTINGS; r++)
        if (!strcmp(k, SETTINGS[r].name)) return &SETTINGS[r];
    return NULL;
}

int attn_edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 40 || lb > 40) return 99;
    int row[41];
    for (int j = 0; j <= lb; j++) row[j] = j;
    for (int i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j];
            int v = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < v) v = row[j] + 1;
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            row[j] = v;
            diag = up;
        }
    }
    return row[lb];
}

const char *attn_setting_suggest(const char *name, unsigned flags, const char *const *extra, int n_extra)
{
    const char *best = NULL;
    int bd = 3;
    for (int i = 0; i < N_SETTINGS + n_extra; i++) {
        if (i < N_SETTINGS && (SETTINGS[i].flags & flags) != flags) continue;
        const char *k = i < N_SETTINGS ? SETTINGS[i].name : extra[i - N_SETTINGS];
        int d = attn_edit_distance(name, k);
        if (d < bd) bd = d, best = k;
    }
    return best;
}

/* The row's field in c. Enum fields are read and written as int. */
_Static_assert(sizeof(attn_mode) == sizeof(int) && sizeof(attn_causal) == sizeof(int) &&
               sizeof(attn_pad_side) == sizeof(int), "enum settings are stored as int");
static void *field(const attn_config *c, const attn_setting *row)
{
    return (char *)(uintptr_t)c + row->offset;
}

attn_status attn_setting_parse(attn_config *c, const attn_setting *row, const char *v, attn_error *err)
{
    void *f = field(c, row);
    const char *key = row->name;
    attn_status st;
    double x = 0;
    if (!v) v = "";
    switch (row->type) {
    case ATTN_SET_BOOL: return parse_bool(key, v, f, err);
    case ATTN_SET_INT: return parse_int(key, v, row->min, row->max, f, err);
    case ATTN_SET_TILES: return parse_tiles(key, v, row->max, f, err);
    case ATTN_SET_U64: {
        char *end;
        errno = 0;
        unsigned long long u = strtoull(v, &end, 10);
        if (end == v || *end || errno == ERANGE || !isdigit((unsigned char)*v))
            return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is not a whole number from 0 to 2^64-1", key, v);
        *(uint64_t *)f = u;
        return ATTN_OK;
    }
    case ATTN_SET_FLOAT:
    case ATTN_SET_DOUBLE:
        if ((st = parse_double(key, v, &x, err))) return st;
        if (!row->ok(x)) return attn_fail(err, ATTN_ERR_CONFIG, "%s: must be %s (got %s)", key, row->rule, v);
        if (row->type == ATTN_SET_FLOAT) *(float *)f = (float)x;
        else *(double *)f = x;
        return ATTN_OK;
    case ATTN_SET_ENUM: {
        for (const attn_setting_choice *ch = row->choices; ch->name; ch++)
            if (!strcasecmp(v, ch->name)) { *(int *)f = ch->value; return ATTN_OK; }
        char list[160] = "";
        int n = 0, shown = 0;
        for (const attn_setting_choice *ch = row->choices; ch->name; ch++) shown += !ch->hidden;
        for (const attn_setting_choice *ch = row->choices; ch->name; ch++) {
            if (ch->hidden) continue;
            n++;
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", n == 1 ? "" : n == shown ? " or " : ", ", ch->name);
        }
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: '%s' is not %s", key, v, list);
    }
    case ATTN_SET_TEXT: {
        /* "" unsets it (a lesson's `text =`); blanks are a mistake. A text (a
         * row with a rule; the others are paths) is UTF-8: a tokenizer would
         * read a stray byte as U+FFFD, then <unk>, without a word */
        size_t n = strlen(v), bad = row->rule ? attn_utf8_invalid_at(v, n) : n;
        if (bad < n)
            return attn_fail(err, ATTN_ERR_CONFIG, "%s: not valid UTF-8 at byte offset %zu (0x%02X)", key, bad,
                             (unsigned char)v[bad]);
        if (row->rule && *v && !v[strspn(v, " \t\r\n")])
            return attn_fail(err, ATTN_ERR_CONFIG, "%s: must be %s (got only blanks)", key, row->rule);
        return set_str(f, v, err);
    }
    }
    return attn_fail(err, ATTN_ERR_CONFIG, "%s: unknown kind of setting", key);
}

/* The shortest %g form, of 6 digits or more, that reads back as the same value
 * ("0.1", not "0.100000001"; "10000", not "1e+04"). */
static const char *shortest(double v, bool single, char *buf, int size)
{
    if (isinf(v)) {
        snprintf(buf, (size_t)size, "%s", v < 0 ? "-inf" : "inf");
        return buf;
    }
    for (int digits = 6; digits <= 17; digits++) {
        snprintf(buf, (size_t)size, "%.*g", digits, v);
        if (single ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v) break;
    }
    return buf;
}

const char *attn_setting_format(const attn_config *c, const attn_setting *row, char *buf, int size)
{
    const void *f = field(c, row);
    switch (row->type) {
    case ATTN_SET_BOOL: snprintf(buf, (size_t)size, "%s", *(const bool *)f ? "true" : "false"); break;
    case ATTN_SET_INT: snprintf(buf, (size_t)size, "%d", *(const int *)f); break;
    case ATTN_SET_TILES: {
        const attn_tiles *tl = f;
        if (tl->q) snprintf(buf, (size_t)size, "%dx%d", tl->q, tl->k);
        else snprintf(buf, (size_t)size, "0");
        break;
    }
    case ATTN_SET_U64: snprintf(buf, (size_t)size, "%llu", (unsigned long long)*(const uint64_t *)f); break;
    case ATTN_SET_FLOAT: shortest(*(const float *)f, true, buf, size); break;
    case ATTN_SET_DOUBLE: shortest(*(const double *)f, false, buf, size); break;
    case ATTN_SET_ENUM:
        snprintf(buf, (size_t)size, "%d", *(const int *)f);
        for (const attn_setting_choice *ch = row->choices; ch->name; ch++)
            if (ch->value == *(const int *)f) { snprintf(buf, (size_t)size, "%s", ch->name); break; }
        break;
    case ATTN_SET_TEXT: return *(char *const *)f ? *(char *const *)f : ""; /* whole, never cut to buf */
    }
    return buf;
}

/* True if c's value of row reads as text (a copy of c parses it; strings compare as text). */
static bool holds(const attn_config *c, const attn_setting *row, const char *text)
{
    char nbuf[ATTN_SETTING_VALUE_MAX], then[ATTN_SETTING_VALUE_MAX];
    const char *now = attn_setting_format(c, row, nbuf, sizeof nbuf);
    if (row->type == ATTN_SET_TEXT) return strcmp(now, text ? text : "") == 0;
    attn_config tmp = *c; /* no string of tmp is touched */
    return attn_setting_parse(&tmp, row, text, NULL) == ATTN_OK &&
           strcmp(now, attn_setting_format(&tmp, row, then, sizeof then)) == 0;
}

bool attn_setting_is_default(const attn_config *c, const attn_setting *row)
{
    if (row->def) return holds(c, row, row->def);
    attn_config zero;
    memset(&zero, 0, sizeof zero);
    char now[ATTN_SETTING_VALUE_MAX], z[ATTN_SETTING_VALUE_MAX];
    return strcmp(attn_setting_format(c, row, now, sizeof now), attn_setting_format(&zero, row, z, sizeof z)) == 0;
}

const char *attn_setting_describe(const attn_config *c, const attn_setting *row, char *buf, int size)
{
    if (row->describe) {
        row->describe(c, buf, size);
    } else if (attn_setting_is_default(c, row)) {
        snprintf(buf, (size_t)size, "%s", "");
    } else {
        char v[ATTN_SETTING_VALUE_MAX];
        int n = snprintf(buf, (size_t)size, "%s %s", row->name, attn_setting_format(c, row, v, sizeof v));
        if (size > 0 && n >= size) { /* a long text, cut: where its last whole character ends */
            size_t end = (size_t)size - 1, last = attn_utf8_prev(buf, end);
            if (!attn_utf8_valid(buf + last, end - last)) buf[last] = '\0';
        }
    }
    return buf;
}

attn_status attn_setting_cycle(attn_config *c, const attn_setting *row, attn_error *err)
{
    if (!row->cycle || !row->cycle[0]) return attn_fail(err, ATTN_ERR_CONFIG, "%s: nothing to cycle through", row->name);
    int next = 0;
    for (int i = 0; row->cycle[i]; i++)
        if (holds(c, row, row->cycle[i])) next = row->cycle[i + 1] ? i + 1 : 0;
    return attn_setting_parse(c, row, row->cycle[next], err);
}

int attn_compare_count(void)
{
    int n = 0;
    for (int i = 0; i < N_SETTINGS; i++) n += SETTINGS[i].compare.name != NULL;
    return n;
}

const attn_setting *attn_compare_at(int k)
{
    for (int i = 0; i < N_SETTINGS; i++)
        if (SETTINGS[i].compare.name && k-- == 0) return &SETTINGS[i];
    return NULL;
}

int attn_compare_find(const char *name)
{
    const attn_setting *row;
    for (int k = 0; (row = attn_compare_at(k)); k++)
        if (!strcmp(row->compare.name, name)) return k;
    return -1;
}

const char *attn_compare_names(char *buf, int size)
{
    int n = attn_compare_count(), len = 0;
    buf[0] = '\0';
    for (int k = 0; k < n && len < size; k++)
        len += snprintf(buf + len, (size_t)(size - len), "%s%s", k == 0 ? "" : k == n - 1 ? " or " : ", ",
                        attn_compare_at(k)->compare.name);
    return buf;
}

attn_status attn_compare_apply(attn_config *c, int i, attn_error *err)
{
    const attn_setting *row = attn_compare_at(i);
    if (!row) return attn_fail(err, ATTN_ERR_CONFIG, "compare: no toggle %d", i);
    const char *const *v = row->compare.values;
    return attn_setting_parse(c, row, holds(c, row, v[0]) ? v[1] : v[0], err);
}

const char *attn_format_mask_value(float v, char *buf, int size)
{
    return shortest(v, true, buf, size);
}
