/* moe_fixture.h — small random folders of the routed families, in HF's
 * names, F32 weights, model_fixture.h's tokenizer; static, once per program:
 * - make_deepseek_moe: DeepseekV3ForCausalLM (tests/test_cli_deepseek.py's
 *   shapes()): d = 8, 2 heads of latent attention (R = 4, RoPE key 2, nope 3,
 *   v 3), layer 0 dense and layer 1 routing each token to its top 2 of 4
 *   experts (2 groups, 1 kept) plus 1 shared expert;
 * - make_gptoss: GptOssForCausalLM (tests/test_cli_gptoss.py's shapes()): 2
 *   layers (the first local, window 3), 2 heads on 1 kv head with a sink
 *   each, every layer routing each token to its top 2 of 8 experts, none
 *   shared. */
#ifndef TEST_MOE_FIXTURE_H
#define TEST_MOE_FIXTURE_H

#include "model_fixture.h"

enum { DS_E = 4, DS_TOP = 2, DS_I = 4, DS_R = 4, DS_ROPE = 2, DS_NOPE = 3, DS_V = 3, DS_H = 2 };
enum { GO_E = 8, GO_TOP = 2, GO_I = 4, GO_H = 2, GO_K = 6 };

/* Writes n tensors named names[i] of shapes[i] (ndim[i] axes) to dir/model.safetensors: random
 * N(0, 0.5) for matrices, N(0, 0.1) for vectors (plus 1 for a norm's gains). */
static void write_random(const char *dir, int n, char names[][72], int64_t shapes[][3], const int *ndim)
{
    attn_st_tensor *t = calloc((size_t)n, sizeof *t);
    float **data = calloc((size_t)n, sizeof *data);
    for (int i = 0; i < n; i++) {
        size_t count = 1;
        for (int a = 0; a < ndim[i]; a++) count *= (size_t)shapes[i][a];
        data[i] = malloc(count * sizeof(float));
        attn_fill_normal(data[i], count, attn_hash64((uint64_t)i * 131 + 7), ndim[i] > 1 ? 0.5f : 0.1f);
        if (ndim[i] == 1 && strstr(names[i], "norm"))
            for (size_t e = 0; e < count; e++) data[i][e] += 1.0f; /* norm gains near 1 */
        t[i] = (attn_st_tensor){names[i], ndim[i], shapes[i], data[i]};
    }
    char path[1100];
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    assert_int_equal(attn_st_write(path, t, n, NULL, 0, &err), ATTN_OK);
    for (int i = 0; i < n; i++) free(data[i]);
    free(data);
    free(t);
}

static void make_gptoss(const char *dir)
{
    char cfg[1400];
    mkdir(dir, 0755);
    snprintf(cfg, sizeof cfg,
             "{\"architectures\":[\"GptOssForCausalLM\"],\"model_type\":\"gpt_oss\",\"hidden_size\":%d,"
             "\"num_hidden_layers\":2,\"num_attention_heads\":%d,\"num_key_value_heads\":1,\"head_dim\":%d,"
             "\"intermediate_size\":%d,\"num_local_experts\":%d,\"num_experts_per_tok\":%d,\"vocab_size\":%d,"
             "\"max_position_embeddings\":16,\"rms_norm_eps\":1e-5,\"rope_theta\":100.0,\"rope_scaling\":null,"
             "\"sliding_window\":3,\"attention_bias\":true,\"swiglu_limit\":7.0,\"tie_word_embeddings\":false,"
             "\"bos_token_id\":1,\"eos_token_id\":2}",
             D, GO_H, GO_K, GO_I, GO_E, GO_TOP, V);
    write_text(dir, "config.json", cfg);
    write_text(dir, "tokenizer.json", TOKENIZER);
    enum { MAXT = 64 };
    char names[MAXT][72];
    int64_t shapes[MAXT][3];
    int ndim[MAXT], n = 0;
#define ADD(nd, a, b, c, ...) \
    do { snprintf(names[n], 72, __VA_ARGS__); shapes[n][0] = (a), shapes[n][1] = (b), shapes[n][2] = (c); ndim[n++] = (nd); } while (0)
    ADD(2, V, D, 0, "model.embed_tokens.weight");
    ADD(1, D, 0, 0, "model.norm.weight");
    ADD(2, V, D, 0, "lm_head.weight");
    for (int l = 0; l < 2; l++) {
        ADD(1, D, 0, 0, "model.layers.%d.input_layernorm.weight", l);
        ADD(1, D, 0, 0, "model.layers.%d.post_attention_layernorm.weight", l);
        ADD(2, GO_H * GO_K, D, 0, "model.layers.%d.self_attn.q_proj.weight", l);
        ADD(1, GO_H * GO_K, 0, 0, "model.layers.%d.self_attn.q_proj.bias", l);
        ADD(2, GO_K, D, 0, "model.layers.%d.self_attn.k_proj.weight", l);
        ADD(1, GO_K, 0, 0, "model.layers.%d.self_attn.k_proj.bias", l);
        ADD(2, GO_K, D, 0, "model.layers.%d.self_attn.v_proj.weight", l);
        ADD(1, GO_K, 0, 0, "model.layers.%d.self_attn.v_proj.bias", l);
        ADD(2, D, GO_H * GO_K, 0, "model.layers.%d.self_attn.o_proj.weight", l);
        ADD(1, D, 0, 0, "model.layers.%d.self_attn.o_proj.bias", l);
        ADD(1, GO_H, 0, 0, "model.layers.%d.self_attn.sinks", l);
        ADD(2, GO_E, D, 0, "model.layers.%d.mlp.router.weight", l);
        ADD(1, GO_E, 0, 0, "model.layers.%d.mlp.router.bias", l);
        ADD(3, GO_E, D, 2 * GO_I, "model.layers.%d.mlp.experts.gate_up_proj", l);
        ADD(2, GO_E, 2 * GO_I, 0, "model.layers.%d.mlp.experts.gate_up_proj_bias", l);
        ADD(3, GO_E, GO_I, D, "model.layers.%d.mlp.experts.down_proj", l);
        ADD(2, GO_E, D, 0, "model.layers.%d.mlp.experts.down_proj_bias", l);
    }
#undef ADD
    write_random(dir, n, names, shapes, ndim);
}

static void make_deepseek_moe(const char *dir)
{
    char cfg[1400];
    mkdir(dir, 0755);
    snprintf(cfg, sizeof cfg,
             "{\"architectures\":[\"DeepseekV3ForCausalLM\"],\"model_type\":\"deepseek_v3\",\"hidden_size\":%d,"
             "\"num_hidden_layers\":2,\"num_attention_heads\":%d,\"num_key_value_heads\":%d,\"intermediate_size\":%d,"
             "\"vocab_size\":%d,\"max_position_embeddings\":16,\"rms_norm_eps\":1e-6,\"rope_theta\":100.0,"
             "\"tie_word_embeddings\":true,\"hidden_act\":\"silu\",\"bos_token_id\":1,\"eos_token_id\":2,"
             "\"q_lora_rank\":null,\"kv_lora_rank\":%d,\"qk_rope_head_dim\":%d,\"qk_nope_head_dim\":%d,\"v_head_dim\":%d,"
             "\"rope_interleave\":true,\"first_k_dense_replace\":1,\"n_routed_experts\":%d,\"num_experts_per_tok\":%d,"
             "\"n_shared_experts\":1,\"moe_intermediate_size\":%d,\"n_group\":2,\"topk_group\":1}",
             D, DS_H, DS_H, F, V, DS_R, DS_ROPE, DS_NOPE, DS_V, DS_E, DS_TOP, DS_I);
    write_text(dir, "config.json", cfg);
    write_text(dir, "tokenizer.json", TOKENIZER);
    enum { MAXT = 64 };
    char names[MAXT][72];
    int64_t shapes[MAXT][3];
    int ndim[MAXT], n = 0;
#define ADD(r, c, ...) \
    do { snprintf(names[n], 72, __VA_ARGS__); shapes[n][0] = (r), shapes[n][1] = (c), shapes[n][2] = 0; ndim[n++] = (c) ? 2 : 1; } while (0)
    ADD(V, D, "model.embed_tokens.weight");
    ADD(D, 0, "model.norm.weight");
    for (int l = 0; l < 2; l++) {
        ADD(D, 0, "model.layers.%d.input_layernorm.weight", l);
        ADD(D, 0, "model.layers.%d.post_attention_layernorm.weight", l);
        ADD(DS_H * (DS_NOPE + DS_ROPE), D, "model.layers.%d.self_attn.q_proj.weight", l);
        ADD(DS_R + DS_ROPE, D, "model.layers.%d.self_attn.kv_a_proj_with_mqa.weight", l);
        ADD(DS_R, 0, "model.layers.%d.self_attn.kv_a_layernorm.weight", l);
        ADD(DS_H * (DS_NOPE + DS_V), DS_R, "model.layers.%d.self_attn.kv_b_proj.weight", l);
        ADD(D, DS_H * DS_V, "model.layers.%d.self_attn.o_proj.weight", l);
        if (l == 0) { /* dense */
            ADD(F, D, "model.layers.0.mlp.gate_proj.weight");
            ADD(F, D, "model.layers.0.mlp.up_proj.weight");
            ADD(D, F, "model.layers.0.mlp.down_proj.weight");
            continue;
        }
        ADD(DS_E, D, "model.layers.1.mlp.gate.weight");
        ADD(DS_E, 0, "model.layers.1.mlp.gate.e_score_correction_bias");
        for (int e = 0; e < DS_E; e++) {
            ADD(DS_I, D, "model.layers.1.mlp.experts.%d.gate_proj.weight", e);
            ADD(DS_I, D, "model.layers.1.mlp.experts.%d.up_proj.weight", e);
            ADD(D, DS_I, "model.layers.1.mlp.experts.%d.down_proj.weight", e);
        }
        ADD(DS_I, D, "model.layers.1.mlp.shared_experts.gate_proj.weight");
        ADD(DS_I, D, "model.layers.1.mlp.shared_experts.up_proj.weight");
        ADD(D, DS_I, "model.layers.1.mlp.shared_experts.down_proj.weight");
    }
#undef ADD
    write_random(dir, n, names, shapes, ndim);
}

#endif
