/* test_model_config.c — a model folder's config.json (formats/model_config.h,
 * through attn_model_peek and attn_model_load): attnlab_causal, and every key
 * read for one kind only (and eval.json's, read beside it by model.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/attention/ops.h"
#include "engine/trace/rope.h"
#include "engine/formats/model_config.h"
#include "engine/model/gemma_weights.h"
#include "engine/model/model.h"
#include "model_tests_fixture.h"

/* How a model was trained: attnlab_causal false in config.json says without
 * the causal mask (tang-nocausal); absent, with it. Read without the weights. */
static void test_trained_causal(void **state)
{
    (void)state;
    attn_model_config c;
    attn_error err;
    make_model(model_dir("cheat"), 1, 2, 2, true, NULL, NULL);
    assert_int_equal(attn_model_peek(model_dir("cheat"), &c, &err), ATTN_OK);
    assert_true(c.causal);
    assert_int_equal(c.layers, 1);
    char path[600], *text;
    snprintf(path, sizeof path, "%s/config.json", model_dir("cheat"));
    FILE *f = fopen(path, "r+");
    assert_non_null(f);
    text = calloc(4096, 1);
    assert_true(fread(text, 1, 4095, f) > 0);
    *strrchr(text, '}') = '\0';
    rewind(f);
    fprintf(f, "%s,\"attnlab_causal\":false}", text);
    fclose(f);
    free(text);
    assert_int_equal(attn_model_peek(model_dir("cheat"), &c, &err), ATTN_OK);
    assert_false(c.causal);
    assert_int_not_equal(attn_model_peek("no-such-model", &c, &err), ATTN_OK);
}

/* Every key config.json is read for has one kind (issue 21): a value of
 * another kind, out of range or given twice is refused, naming the key and
 * the kind wanted, never replaced by the default; the same for eval.json. */
static void test_config_kinds(void **state)
{
    (void)state;
    static const struct { const char *key, *given, *msg; } CASES[] = {
        {"rope_theta", "\"rope_theta\": \"10000\"", "config.json: 'rope_theta' must be a number, not a string (\"10000\")"},
        {"rope_theta", "\"rope_theta\": null", "'rope_theta' must be a number, not null"},
        {"rope_theta", "\"rope_theta\": 0.5", "'rope_theta' must be a finite number above 1, not 0.5"},
        {"max_position_embeddings", "\"max_position_embeddings\": \"x\"",
         "'max_position_embeddings' must be a number, not a string (\"x\")"},
        {"max_position_embeddings", "\"max_position_embeddings\": 0", "'max_position_embeddings' must be a whole number from 1, not 0"},
        {"max_position_embeddings", "\"max_position_embeddings\": 16.5", "must be a whole number from 1, not 16.5"},
        {"rms_norm_eps", "\"rms_norm_eps\": \"1e-5\"", "'rms_norm_eps' must be a number, not a string (\"1e-5\")"},
        {"rms_norm_eps", "\"rms_norm_eps\": -1e-5", "'rms_norm_eps' must be a number in (0, 1), not -1e-05"},
        {"tie_word_embeddings", "\"tie_word_embeddings\": \"true\"",
         "'tie_word_embeddings' must be true or false, not a string (\"true\")"},
        {"tie_word_embeddings", "\"tie_word_embeddings\": 1", "'tie_word_embeddings' must be true or false, not a number"},
        {"attnlab_causal", "\"attnlab_causal\": \"false\"", "'attnlab_causal' must be true or false, not a string"},
        {"mlp_bias", "\"mlp_bias\": \"false\"", "'mlp_bias' must be true or false, not a string"},
        {"attention_bias", "\"attention_bias\": null", "'attention_bias' must be true or false, not null"},
        {"use_sliding_window", "\"use_sliding_window\": []", "'use_sliding_window' must be true or false, not a list"},
        {"hidden_size", "\"hidden_size\": \"8\"", "'hidden_size' must be a whole number, not a string (\"8\")"},
        {"num_hidden_layers", "\"num_hidden_layers\": 0", "'num_hidden_layers' must be a whole number from 1 to 256, not 0"},
        {"intermediate_size", "\"intermediate_size\": -12", "'intermediate_size' must be a whole number from 1 to"},
        {"vocab_size", "\"vocab_size\": 12.5", "'vocab_size' must be a whole number from 1 to 4194304, not 12.5"},
        {"num_key_value_heads", "\"num_key_value_heads\": \"2\"", "'num_key_value_heads' must be a whole number, not a string"},
        {"head_dim", "\"head_dim\": true", "'head_dim' must be a whole number, not a boolean"},
        {"bos_token_id", "\"bos_token_id\": \"1\"", "'bos_token_id' must be a token id (a whole number from 0), a list of "
         "them or null, not a string (\"1\")"},
        {"eos_token_id", "\"eos_token_id\": [2, \"x\"]", "'eos_token_id' must be a token id"},
        {"eos_token_id", "\"eos_token_id\": -1", "'eos_token_id' must be a token id (a whole number from 0), a list of them "
         "or null, not -1"},
        {"architectures", "\"architectures\": \"LlamaForCausalLM\"",
         "'architectures' must be a list of names or null, not a string"},
        {"architectures", "\"architectures\": [7]", "'architectures[0]' must be a name (a string), not a number"},
        {"model_type", "\"model_type\": 7", "'model_type' must be a string, not a number"},
        {"hidden_act", "\"hidden_act\": 1", "'hidden_act' must be a string, not a number"},
        {"rope_scaling", "\"rope_scaling\": \"llama3\"", "'rope_scaling' must be null or an object, not a string"},
        {"rope_scaling", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": \"8\", \"low_freq_factor\": 1, "
         "\"high_freq_factor\": 4, \"original_max_position_embeddings\": 8}",
         "'rope_scaling.factor' must be a number, not a string (\"8\")"},
        {"rope_scaling", "\"rope_scaling\": {\"rope_type\": 3}", "'rope_scaling.rope_type' must be a string, not a number"},
        {"rope_theta", "\"rope_theta\": 100, \"rope_theta\": 500000", "config.json: key 'rope_theta' appears twice"},
        {"rope_scaling", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"rope_type\": \"default\"}",
         "config.json: key 'rope_type' appears twice in rope_scaling"},
        {"eos_token_id", "\"eos_token_id\": [{\"a\": 1, \"a\": 2}]", "key 'a' appears twice in eos_token_id[0]"},
    };
    const char *dir = model_dir("kinds");
    attn_model m;
    attn_error err;
    for (size_t i = 0; i < sizeof CASES / sizeof *CASES; i++) {
        make_model(dir, 1, 2, 2, true, NULL, NULL);
        config_with(dir, CASES[i].key, CASES[i].given);
        expect_load_error(dir, CASES[i].msg);
    }
    /* what transformers reads as None, null is here too; a list of EOS ids is read by its first */
    make_model(dir, 1, 2, 2, true, NULL, NULL);
    config_with(dir, "eos_token_id", "\"eos_token_id\": [2, 3]");
    config_with(dir, "num_key_value_heads", "\"num_key_value_heads\": null");
    config_with(dir, "bos_token_id", "\"bos_token_id\": null, \"head_dim\": null, \"rope_scaling\": null");
    config_with(dir, "architectures", "\"architectures\": null, \"model_type\": \"llama\"");
    if (attn_model_load(dir, &m, &err)) fail_msg("%s", err.msg);
    assert_int_equal(m.cfg.eos, 2);
    assert_int_equal(m.cfg.bos, -1);
    assert_int_equal(m.cfg.kv_heads, 2);
    attn_model_free(&m);
    /* eval.json, when there is one */
    make_model(dir, 1, 2, 2, true, NULL, NULL);
    write_text(dir, "eval.json", "{\"variant\": \"gqa\", \"heldout_loss\": \"4.1\"}");
    expect_load_error(dir, "eval.json: 'heldout_loss' must be a number, not a string");
    write_text(dir, "eval.json", "{\"variant\": \"gqa\", \"lang\": \"en\", \"lang\": \"zh\"}");
    expect_load_error(dir, "eval.json: key 'lang' appears twice");
    write_text(dir, "eval.json", "{\"variant\": [\"gqa\"]}");
    expect_load_error(dir, "eval.json: 'variant' must be a string of at most 15 bytes, not a list");
    write_eval(dir, "mqa", 3.5);
    assert_int_equal(attn_model_load(dir, &m, &err), ATTN_OK);
    assert_string_equal(m.variant, "mqa");
    assert_true(m.heldout_loss == 3.5);
    attn_model_free(&m);
}

/* OLMo 2's and SmolLM3's config.json (model_config_olmo2.c, model_config_smollm3.c):
 * each config class's defaults where a key is absent, the architecture's flags,
 * and SmolLM3's layers without RoPE from its list or its interval. */
static void test_olmo2_smollm3(void **state)
{
    (void)state;
    attn_model_config c;
    attn_error err;
    const char *olmo = "{\"architectures\": [\"Olmo2ForCausalLM\"], \"hidden_size\": 16, \"num_hidden_layers\": 2, "
                       "\"num_attention_heads\": 4, \"intermediate_size\": 8, \"vocab_size\": 10}";
    assert_int_equal(attn_model_config_parse(olmo, strlen(olmo), &c, &err), ATTN_OK);
    assert_int_equal(c.arch.kind, ATTN_ARCH_OLMO2);
    assert_true(c.arch.qk_norm && c.arch.qk_norm_whole && c.arch.post_norms && !c.arch.nope);
    assert_true(c.eps == 1e-5 && c.theta == 10000.0 && !c.tied && c.kv_heads == 4 && c.eos == 50279 && c.bos == -1);
    const char *smol = "{\"model_type\": \"smollm3\", \"hidden_size\": 16, \"num_hidden_layers\": 9, "
                       "\"num_attention_heads\": 8, \"intermediate_size\": 8, \"vocab_size\": 10}";
    assert_int_equal(attn_model_config_parse(smol, strlen(smol), &c, &err), ATTN_OK);
    assert_int_equal(c.arch.kind, ATTN_ARCH_SMOLLM3);
    assert_true(c.kv_heads == 4 && c.theta == 2000000.0 && c.tied && c.max_pos == 32768 && c.eps == 1e-6);
    assert_true(!c.arch.qk_norm && !c.arch.post_norms && c.arch.nope);
    for (int l = 0; l < 9; l++) assert_int_equal(attn_arch_layer_rope(&c.arch, l), (l + 1) % 4 != 0); /* 3, 7 */
    const char *list = "{\"model_type\": \"smollm3\", \"hidden_size\": 16, \"num_hidden_layers\": 3, "
                       "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"intermediate_size\": 8, "
                       "\"vocab_size\": 10, \"no_rope_layers\": [0, 1, 0, 1], \"rope_parameters\": "
                       "{\"rope_type\": \"default\", \"rope_theta\": 123.0}}";
    assert_int_equal(attn_model_config_parse(list, strlen(list), &c, &err), ATTN_OK);
    assert_true(!attn_arch_layer_rope(&c.arch, 0) && attn_arch_layer_rope(&c.arch, 1) &&
                !attn_arch_layer_rope(&c.arch, 2) && c.theta == 123.0 && c.kv_heads == 2);
}

/* DeepSeek's mixture of experts: DeepseekV3Config's and DeepseekV2Config's
 * defaults where a key is absent (V3: 256 experts, top 8, 1 shared, 2048
 * features, scale 2.5, norm, 8 groups keep 4, dense layers 0-2; V2: 64, 2
 * shared, 1407, scale 1.0, greedy, every layer MoE), V2's norm_topk_prob
 * never read (HF's router), and the MoE layers from first_k_dense_replace on. */
static void test_deepseek_moe(void **state)
{
    (void)state;
    attn_model_config c;
    attn_error err;
    const char *v3 = "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 16, \"num_hidden_layers\": 5, "
                     "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 10}";
    assert_int_equal(attn_model_config_parse(v3, strlen(v3), &c, &err), ATTN_OK);
    assert_true(c.moe.experts == 256 && c.moe.top_k == 8 && c.moe.shared == 1 && c.moe.inter == 2048);
    assert_true(c.moe.scale == 2.5 && c.moe.norm_topk && c.moe.groups == 8 && c.moe.topk_group == 4);
    assert_int_equal(c.moe.method, ATTN_ROUTE_SIGMOID_GROUPS);
    assert_true(c.arch.experts == 256 && c.arch.moe_from == 3);
    for (int l = 0; l < 5; l++) assert_int_equal(attn_arch_layer_moe(&c.arch, l), l >= 3);
    const char *v2 = "{\"model_type\": \"deepseek_v2\", \"hidden_size\": 16, \"num_hidden_layers\": 2, "
                     "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 10, "
                     "\"num_experts_per_tok\": 6, \"norm_topk_prob\": true}";
    assert_int_equal(attn_model_config_parse(v2, strlen(v2), &c, &err), ATTN_OK);
    assert_true(c.moe.experts == 64 && c.moe.top_k == 6 && c.moe.shared == 2 && c.moe.inter == 1407);
    assert_true(c.moe.scale == 1.0 && !c.moe.norm_topk && c.moe.method == ATTN_ROUTE_GREEDY); /* HF never reads it */
    assert_true(attn_arch_layer_moe(&c.arch, 0) && c.arch.moe_from == 0);
    const char *dense = "{\"model_type\": \"deepseek_v3\", \"hidden_size\": 16, \"num_hidden_layers\": 3, "
                        "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 10}";
    assert_int_equal(attn_model_config_parse(dense, strlen(dense), &c, &err), ATTN_OK);
    assert_true(c.arch.experts == 0 && !attn_arch_layer_moe(&c.arch, 2)); /* every layer dense: no MoE keys read */
}

/* Gemma 2 and Gemma 3 text (model_config_gemma.c): transformers' defaults
 * where keys are absent, which layers are local, the two RoPE settings, and
 * √d rounded to the weights' dtype as torch.tensor(d ** 0.5, dtype) does. */
static void test_gemma_config(void **state)
{
    (void)state;
    attn_model_config c;
    attn_error err;
    const char *g2 = "{\"architectures\": [\"Gemma2ForCausalLM\"], \"hidden_size\": 8, \"num_hidden_layers\": 5, "
                     "\"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"intermediate_size\": 12, "
                     "\"vocab_size\": 11}";
    assert_int_equal(attn_model_config_parse(g2, strlen(g2), &c, &err), ATTN_OK);
    assert_true(c.arch.gemma && !c.arch.qk_norm && c.tied);
    assert_int_equal(c.head_dim, 256);
    assert_int_equal(c.max_pos, 8192);
    assert_int_equal(c.bos, 2);
    assert_int_equal(c.eos, 1);
    assert_int_equal(c.arch.local_window, 4096);
    assert_true(c.gemma.attn_softcap == 50 && c.gemma.final_softcap == 30);
    assert_true(fabs(c.arch.query_scale - 1.0 / 16) < 1e-12);
    assert_true(c.theta == 10000 && c.arch.local_theta == 10000);
    for (int l = 0; l < 5; l++) assert_int_equal(c.arch.local[l], l % 2 == 0); /* layers 0, 2, 4 slide */
    const char *g3 = "{\"model_type\": \"gemma3_text\", \"hidden_size\": 8, \"num_hidden_layers\": 13, "
                     "\"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"intermediate_size\": 12, "
                     "\"vocab_size\": 11, \"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 8.0}}";
    assert_int_equal(attn_model_config_parse(g3, strlen(g3), &c, &err), ATTN_OK);
    assert_true(c.arch.gemma && c.arch.qk_norm);
    assert_int_equal(c.max_pos, 131072);
    assert_true(c.gemma.attn_softcap == 0 && c.gemma.final_softcap == 0);
    assert_true(c.theta == 1e6 && c.arch.local_theta == 10000 && c.arch.global_scaling.linear == 8);
    for (int l = 0; l < 13; l++) assert_int_equal(c.arch.local[l], (l + 1) % 6 != 0); /* 5 and 11 global */
    /* √640 (gemma-3-270m) and √3584 (gemma-2-9b) in each dtype */
    assert_true(attn_gemma_embed_scale(640, ATTN_ST_BF16) == 25.25f);
    assert_true(attn_gemma_embed_scale(640, ATTN_ST_F16) == 25.296875f);
    assert_true(attn_gemma_embed_scale(640, ATTN_ST_F32) == (float)sqrt(640.0));
    assert_true(attn_gemma_embed_scale(3584, ATTN_ST_BF16) == 59.75f);
    assert_true(attn_gemma_embed_scale(3584, ATTN_ST_F16) == 59.875f);
}

/* gpt-oss (model_config_gptoss.c): GptOssConfig's defaults where keys are
 * absent (8 kv heads, head_dim 64, 128 experts, top 4, window 128, limit 7,
 * alpha 1.702, biases on, ε 1e-5, θ 150000, 131072 positions, untied), the
 * default layer pattern (0, 2, 4 slide), rope_scaling null as plain RoPE,
 * its absence as GptOssConfig's default YaRN (factor 32 from 4096, betas 32
 * and 1, truncate false, A = 0.1·ln 32 + 1), the same YaRN from v5's
 * rope_parameters, and MXFP4 named. */
static void test_gptoss_config(void **state)
{
    (void)state;
    attn_model_config c;
    attn_error err;
    const char *oss = "{\"architectures\": [\"GptOssForCausalLM\"], \"hidden_size\": 16, \"num_hidden_layers\": 5, "
                      "\"num_attention_heads\": 8, \"intermediate_size\": 12, \"vocab_size\": 11, "
                      "\"rope_scaling\": null}";
    assert_int_equal(attn_model_config_parse(oss, strlen(oss), &c, &err), ATTN_OK);
    assert_true(c.kv_heads == 8 && c.head_dim == 64 && c.moe.experts == 128 && c.moe.top_k == 4 && c.moe.inter == 12);
    assert_true(c.moe.method == ATTN_ROUTE_TOPK_SOFTMAX && c.moe.limit == 7.0 && c.moe.alpha == 1.702);
    assert_true(c.arch.qkv_bias && c.arch.o_bias && c.arch.sinks && !c.tied && c.arch.local_window == 128);
    assert_true(c.eps == 1e-5 && c.theta == 150000 && c.max_pos == 131072 && c.arch.rope_scaling.factor == 0);
    assert_true(c.arch.experts == 128 && c.arch.moe_from == 0 && attn_arch_layer_moe(&c.arch, 4));
    for (int l = 0; l < 5; l++) assert_int_equal(c.arch.local[l], l % 2 == 0);
    const char *yarn = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 16, \"num_hidden_layers\": 2, "
                       "\"num_attention_heads\": 8, \"intermediate_size\": 12, \"vocab_size\": 11}";
    assert_int_equal(attn_model_config_parse(yarn, strlen(yarn), &c, &err), ATTN_OK);
    const attn_rope_scaling *r = &c.arch.rope_scaling;
    assert_true(r->yarn && r->factor == 32 && r->beta_fast == 32 && r->beta_slow == 1 && !r->truncate);
    assert_true(r->original_max_pos == 4096 && fabs(r->attention - (0.1 * log(32.0) + 1)) < 1e-12);
    assert_true(c.theta == 150000 && c.arch.mla_score_gain == 0);
    const char *v5 = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 16, \"num_hidden_layers\": 2, "
                     "\"num_attention_heads\": 8, \"intermediate_size\": 12, \"vocab_size\": 11, "
                     "\"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 8, \"rope_theta\": 1000, "
                     "\"truncate\": false}}";
    assert_int_equal(attn_model_config_parse(v5, strlen(v5), &c, &err), ATTN_OK);
    assert_true(r->yarn && r->factor == 8 && !r->truncate && c.theta == 1000);
    assert_int_equal(r->original_max_pos, 131072); /* max_position_embeddings, GptOssConfig's */
    const char *mx = "{\"model_type\": \"gpt_oss\", \"hidden_size\": 16, \"num_hidden_layers\": 2, "
                     "\"num_attention_heads\": 8, \"intermediate_size\": 12, \"vocab_size\": 11, "
                     "\"rope_scaling\": null, \"quantization_config\": {\"quant_method\": \"mxfp4\"}}";
    assert_int_equal(attn_model_config_parse(mx, strlen(mx), &c, &err), ATTN_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "MXFP4"));
}

/* YaRN (model_config_rope.c, ops.c): the fields and their defaults, the
 * attention factor, DeepSeek's softmax mscale², each pair's frequency as
 * transformers computes it (k = 8, θ = 100, from 128 positions: the ramp
 * from pair 0 to pair 3, each ω_m = 100^(−m/4) · (1 − r + r/4), r = m/3),
 * and a key rotated, then turned back (stream.c's eviction), equal to itself. */
static void test_yarn(void **state)
{
    (void)state;
    attn_model_config c;
    attn_error err;
    const char *q = "{\"model_type\": \"qwen3\", \"hidden_size\": 16, \"num_hidden_layers\": 1, "
                    "\"num_attention_heads\": 2, \"head_dim\": 8, \"intermediate_size\": 8, \"vocab_size\": 10, "
                    "\"rope_theta\": 100, \"max_position_embeddings\": 128, "
                    "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 4}}";
    assert_int_equal(attn_model_config_parse(q, strlen(q), &c, &err), ATTN_OK);
    const attn_rope_scaling *r = &c.arch.rope_scaling;
    assert_true(r->yarn && r->factor == 4 && r->beta_fast == 32 && r->beta_slow == 1 && r->truncate);
    assert_int_equal(r->original_max_pos, 128); /* max_position_embeddings when absent */
    assert_true(fabs(r->attention - (0.1 * log(4.0) + 1)) < 1e-12 && c.arch.mla_score_gain == 0);
    double omega[4];
    attn_rope rope = {100, ATTN_ROPE_HALF, r, false};
    assert_true(fabs(attn_rope_freqs(rope.theta, rope.scaling, 8, omega) - r->attention) < 1e-12);
    for (int m = 0; m < 4; m++)
        assert_true(fabs(omega[m] - pow(100, -m / 4.0) * (1 - m / 3.0 + m / 12.0)) < 1e-12);
    float x[8] = {1, -2, 0.5f, 3, -1, 2, 0.25f, -0.75f}, y[8], back[8];
    assert_int_equal(attn_op_rope(x, y, 1, 1, 1, 8, 37, &rope), 0);
    rope.undo = true;
    assert_int_equal(attn_op_rope(y, back, 1, 1, 1, 8, -37, &rope), 0);
    double moved = 0;
    for (int i = 0; i < 8; i++) {
        assert_true(fabs(back[i] - x[i]) < 1e-5);
        moved += fabs(y[i] - x[i]);
    }
    assert_true(moved > 0.1); /* turned (and scaled) in between */
    /* DeepSeek-V2-Lite's: A = 1 (mscale = mscale_all_dim), the scores × (0.1 · 0.707 · ln 40 + 1)² */
    const char *ds = "{\"model_type\": \"deepseek_v2\", \"hidden_size\": 16, \"num_hidden_layers\": 1, "
                     "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 10, "
                     "\"q_lora_rank\": null, \"first_k_dense_replace\": 1, "
                     "\"rope_scaling\": {\"type\": \"yarn\", \"factor\": 40, "
                     "\"original_max_position_embeddings\": 4096, \"beta_fast\": 32, \"beta_slow\": 1, "
                     "\"mscale\": 0.707, \"mscale_all_dim\": 0.707}}";
    assert_int_equal(attn_model_config_parse(ds, strlen(ds), &c, &err), ATTN_OK);
    double m = 0.1 * 0.707 * log(40.0) + 1;
    assert_true(c.arch.rope_scaling.attention == 1 && fabs(c.arch.mla_score_gain - m * m) < 1e-12);
    assert_int_equal(c.arch.rope_scaling.original_max_pos, 4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trained_causal),
        cmocka_unit_test(test_config_kinds),
        cmocka_unit_test(test_olmo2_smollm3),
        cmocka_unit_test(test_deepseek_moe),
        cmocka_unit_test(test_gemma_config),
        cmocka_unit_test(test_gptoss_config),
        cmocka_unit_test(test_yarn),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
