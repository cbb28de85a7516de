/* test_config.c — configuration: settings, validation messages, tokens, size limits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/run/forward.h"
#include "engine/trace/config.h"

/* Builds a default config, applies NULL-terminated key/value pairs, then
 * resolves. Returns the first failure. */
static attn_status apply(const char *const *kv, attn_dims *d, attn_error *err)
{
    attn_config c;
    attn_tokens tok, src;
    attn_status st = ATTN_OK;
    attn_config_init(&c);
    for (int i = 0; kv[i] && !st; i += 2) st = attn_config_set(&c, kv[i], kv[i + 1], err);
    if (!st && !(st = attn_config_resolve(&c, d, &tok, &src, err))) {
        attn_tokens_free(&tok);
        attn_tokens_free(&src);
    }
    attn_config_free(&c);
    return st;
}

static void test_defaults_resolve_to_example(void **state)
{
    (void)state;
    attn_config c;
    attn_dims d;
    attn_tokens tok, src;
    attn_error err;
    attn_config_init(&c);
    assert_int_equal(attn_config_resolve(&c, &d, &tok, &src, &err), ATTN_OK);
    assert_int_equal(d.b, 2);
    assert_int_equal(d.L, 6);
    assert_int_equal(d.s, 6);
    assert_int_equal(d.t, 6);
    assert_int_equal(d.h, 4);
    assert_int_equal(d.g, 4);
    assert_int_equal(d.k, 8);
    assert_int_equal(d.mode, ATTN_MODE_MHA);
    assert_false(d.cross);
    assert_string_equal(attn_tokens_at(&tok, 0, 0), "你");
    assert_string_equal(attn_tokens_at(&tok, 1, 2), "AI");
    assert_string_equal(attn_tokens_at(&tok, 1, 3), ATTN_PAD_TOKEN);
    assert_int_equal(tok.lengths[1], 3);
    assert_true(attn_tokens_is_pad(&tok, 1, 5));
    assert_false(attn_tokens_is_pad(&tok, 0, 5));
    attn_tokens_free(&tok);
    attn_tokens_free(&src);
    attn_config_free(&c);
}

static void test_modes_resolve(void **state)
{
    (void)state;
    static const struct {
        const char *kv[8];
        int g;
        attn_mode mode;
    } cases[] = {
        {{"heads", "8", NULL}, 8, ATTN_MODE_MHA},
        {{"heads", "8", "mode", "mqa", NULL}, 1, ATTN_MODE_MQA},
        {{"heads", "8", "mode", "gqa", NULL}, 2, ATTN_MODE_GQA},
        {{"heads", "8", "kv_heads", "4", NULL}, 4, ATTN_MODE_GQA},
        {{"heads", "8", "kv_heads", "1", NULL}, 1, ATTN_MODE_MQA},
        {{"heads", "8", "kv_heads", "8", "mode", "mha", NULL}, 8, ATTN_MODE_MHA},
        {{"heads", "8", "kv_heads", "2", "mode", "GQA", NULL}, 2, ATTN_MODE_GQA},
        {{"d-model", "36", "heads", "9", "mode", "gqa", NULL}, 3, ATTN_MODE_GQA},
        {{"heads", "1", NULL}, 1, ATTN_MODE_MHA},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attn_dims d;
        attn_error err = {0};
        if (apply(cases[i].kv, &d, &err)) fail_msg("case %zu: %s", i, err.msg);
        assert_int_equal(d.g, cases[i].g);
        assert_int_equal(d.mode, cases[i].mode);
    }
}

/* Every invalid config is refused with a message naming the field and the rule. */
static void test_invalid_configs(void **state)
{
    (void)state;
    static const struct {
        const char *kv[10];
        const char *msg;
    } cases[] = {
        {{"heads", "8", "kv_heads", "3", NULL}, "kv_heads (3) must divide heads (8)"},
        {{"heads", "4", "kv_heads", "8", NULL}, "kv_heads (8) must not exceed heads (4)"},
        {{"heads", "5", NULL}, "heads (5) must divide d_model (32)"},
        {{"heads", "abc", NULL}, "heads: 'abc' is not a whole number"},
        {{"heads", "0", NULL}, "heads: 0 is out of range"},
        {{"heads", "8", "mode", "mqa", "kv_heads", "2", NULL}, "mode mqa needs kv_heads = 1, got 2"},
        {{"heads", "8", "mode", "mha", "kv_heads", "2", NULL}, "mode mha needs kv_heads = heads (8), got 2"},
        {{"heads", "8", "mode", "gqa", "kv_heads", "8", NULL}, "mode gqa needs 1 < kv_heads < heads"},
        {{"heads", "2", "mode", "gqa", NULL}, "mode gqa needs 1 < kv_heads < heads"},
        {{"mode", "flash", NULL}, "mode: 'flash' is not mha, mqa, gqa or mla"},
        {{"d_model", "30", "heads", "6", "rope", "true", NULL}, "rope needs an even head dim"},
        {{"rope_theta", "0", NULL}, "rope_theta: must be a finite number above 1"},
        {{"mask_value", "5", NULL}, "mask_value: must be -inf or a finite negative number"},
        {{"mask_value", "nan", NULL}, "mask_value: 'nan' is not a usable number"},
        {{"mask_value", "inf", NULL}, "mask_value: must be -inf"},
        {{"dropout", "1", NULL}, "dropout: must be at least 0 and below 1"},
        {{"dropout", "-0.1", NULL}, "dropout: must be at least 0 and below 1"},
        {{"past", "6", NULL}, "past (6) must be less than the sequence length (6)"},
        {{"past", "-1", NULL}, "past: -1 is out of range"},
        {{"pad_side", "middle", NULL}, "pad_side: 'middle' is not right or left"},
        {{"causal", "maybe", NULL}, "causal: 'maybe' is not true, false or reversed"},
        {{"seed", "-3", NULL}, "seed: '-3' is not a whole number"},
        {{"seq", "100000", NULL}, "seq: 100000 is out of range"},
        {{"tokens", "a b | c", "seq", "4", NULL}, "seq (4) contradicts tokens (longest row has 2 tokens)"},
        {{"tokens", "a b | c", "batch", "3", NULL}, "batch (3) contradicts tokens (2 rows)"},
        {{"tokens", "a b | | c", NULL}, "tokens: row 2 has no tokens"},
        {{"tokens", " \t", NULL}, "tokens: must be one or more tokens (got only blanks)"},
        {{"text", " ", NULL}, "text: must be some text"},
        {{"source_tokens", "  ", NULL}, "source_tokens: must be one or more tokens"},
        {{"tokens", "a <pad> b", NULL}, "'<pad>' is reserved"},
        {{"tokens", "a \xff b", NULL}, "tokens: not valid UTF-8"},
        {{"tokens", "a \xc0\xaf b", NULL}, "tokens: not valid UTF-8"},
        {{"tokens", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL}, "longer than 64 bytes"},
        {{"source_tokens", "I love AI", NULL}, "cross-attention has no causal mask"},
        {{"source_tokens", "I love AI", "causal", "false", "past", "1", NULL}, "KV cache applies to self-attention"},
        {{"source_tokens", "I love AI", "causal", "false", "rope", "on", NULL}, "rope applies to self-attention only"},
        {{"source_tokens", "I love AI", "causal", "false", NULL}, "source_tokens has 1 rows but tokens has 2"},
        {{"frobnicate", "1", NULL}, "unknown setting 'frobnicate'"},
        {{"softmax_guard", "sometimes", NULL}, "softmax_guard: 'sometimes'"},
        /* multi-head latent attention: what it has no use for, one line each */
        {{"kv_rank", "8", NULL}, "kv_rank: belongs to multi-head latent attention; set --mode mla too"},
        {{"mla_absorb", "true", NULL}, "mla_absorb: belongs to multi-head latent attention"},
        {{"mode", "mla", "kv_heads", "2", NULL}, "kv_heads: mode mla rebuilds a key and a value for every query head"},
        {{"mode", "mla", "qk_norm", "true", NULL}, "qk_norm: mode mla has no key heads to normalise"},
        {{"mode", "mla", "rope", "true", "rope_dim", "3", NULL}, "rope_dim: RoPE turns pairs of features"},
        {{"mode", "mla", "source_tokens", "I love", "causal", "false", NULL}, "cross-attention is not supported"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attn_dims d;
        attn_error err = {0};
        attn_status st = apply(cases[i].kv, &d, &err);
        if (st != ATTN_ERR_CONFIG) fail_msg("case %zu (%s): status %d, message '%s'", i, cases[i].msg, st, err.msg);
        if (!strstr(err.msg, cases[i].msg)) fail_msg("case %zu: '%s' does not contain '%s'", i, err.msg, cases[i].msg);
        assert_null(strchr(err.msg, '\n'));
    }
}

static void test_tokens_parse(void **state)
{
    (void)state;
    attn_tokens t;
    attn_error err;
    /* ASCII and ideographic spaces both separate; '|' separates rows; left padding */
    assert_int_equal(attn_tokens_parse(" 你\u3000是  猫 |我 ", ATTN_PAD_LEFT, "tokens", &t, &err), ATTN_OK);
    assert_int_equal(t.rows, 2);
    assert_int_equal(t.len, 3);
    assert_int_equal(t.lengths[0], 3);
    assert_int_equal(t.lengths[1], 1);
    assert_string_equal(attn_tokens_at(&t, 0, 1), "是");
    assert_string_equal(attn_tokens_at(&t, 1, 0), ATTN_PAD_TOKEN);
    assert_string_equal(attn_tokens_at(&t, 1, 2), "我");
    assert_true(attn_tokens_is_pad(&t, 1, 1));
    assert_false(attn_tokens_is_pad(&t, 1, 2));
    attn_tokens_free(&t);
    assert_int_equal(attn_tokens_parse("   ", ATTN_PAD_RIGHT, "tokens", &t, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "no tokens"));
    assert_int_equal(attn_tokens_parse("a b |", ATTN_PAD_RIGHT, "tokens", &t, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "row 2 has no tokens"));
}

static void test_oversized_config_refused_before_allocation(void **state)
{
    (void)state;
    attn_config c;
    attn_error err;
    double bytes = 0;
    attn_config_init(&c);
    assert_int_equal(attn_config_set(&c, "seq", "65536", &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "batch", "1024", &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "heads", "256", &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "d_model", "16384", &err), ATTN_OK);
    assert_int_equal(attn_trace_estimate(&c, &bytes, &err), ATTN_ERR_CONFIG);
    assert_true(bytes > 1e15); /* petabytes: never attempted */
    assert_non_null(strstr(err.msg, "this trace would need about"));
    attn_trace tr;
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_ERR_CONFIG);

    /* an explicit limit applies too */
    attn_config_free(&c);
    attn_config_init(&c);
    c.max_bytes = 1000;
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_ERR_CONFIG);
    c.max_bytes = 0;
    assert_int_equal(attn_trace_estimate(&c, &bytes, &err), ATTN_OK);
    assert_true(bytes > 1000 && bytes < 1e6);
    attn_config_free(&c);
}

static void test_mask_value_forms(void **state)
{
    (void)state;
    attn_config c;
    attn_error err;
    char buf[32];
    attn_config_init(&c);
    assert_true(isinf(c.mask_value) && c.mask_value < 0);
    assert_int_equal(attn_config_set(&c, "mask-value", "-1e9", &err), ATTN_OK);
    assert_true(c.mask_value == -1e9f);
    assert_string_equal(attn_format_mask_value(c.mask_value, buf, sizeof buf), "-1e+09");
    assert_int_equal(attn_config_set(&c, "mask_value", "-inf", &err), ATTN_OK);
    assert_string_equal(attn_format_mask_value(c.mask_value, buf, sizeof buf), "-inf");
    assert_non_null(attn_setting_find("kv-heads"));
    assert_null(attn_setting_find("kv-head"));
    attn_config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_resolve_to_example),
        cmocka_unit_test(test_modes_resolve),
        cmocka_unit_test(test_invalid_configs),
        cmocka_unit_test(test_tokens_parse),
        cmocka_unit_test(test_oversized_config_refused_before_allocation),
        cmocka_unit_test(test_mask_value_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
