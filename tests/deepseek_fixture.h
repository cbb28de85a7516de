/* deepseek_fixture.h — a small random DeepseekV3ForCausalLM folder with a
 * mixture of experts, in HF's names (as tests/test_cli_deepseek.py's
 * shapes()): d = 8, 2 heads of latent attention (R = 4, RoPE key 2, nope 3,
 * v 3), layer 0 dense and layer 1 routing each token to its top 2 of 4
 * experts (2 groups, 1 kept) plus 1 shared expert; F32 weights, model_fixture.h's
 * tokenizer. Include model_fixture.h first; static, once per program. */
#ifndef TEST_DEEPSEEK_FIXTURE_H
#define TEST_DEEPSEEK_FIXTURE_H

#include "model_fixture.h"

enum { DS_E = 4, DS_TOP = 2, DS_I = 4, DS_R = 4, DS_ROPE = 2, DS_NOPE = 3, DS_V = 3, DS_H = 2 };

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
    int64_t shapes[MAXT][2];
    int n = 0;
#define ADD(r, c, ...) do { snprintf(names[n], 72, __VA_ARGS__); shapes[n][0] = (r); shapes[n][1] = (c); n++; } while (0)
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
    attn_st_tensor t[MAXT];
    float *data[MAXT];
    for (int i = 0; i < n; i++) {
        size_t count = (size_t)shapes[i][0] * (size_t)(shapes[i][1] ? shapes[i][1] : 1);
        data[i] = malloc(count * sizeof(float));
        attn_fill_normal(data[i], count, attn_hash64((uint64_t)i * 131 + 7), shapes[i][1] ? 0.5f : 0.1f);
        if (!shapes[i][1] && !strstr(names[i], "bias"))
            for (size_t e = 0; e < count; e++) data[i][e] += 1.0f; /* norm gains near 1 */
        t[i] = (attn_st_tensor){names[i], shapes[i][1] ? 2 : 1, shapes[i], data[i]};
    }
    char path[1100];
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    assert_int_equal(attn_st_write(path, t, n, NULL, 0, &err), ATTN_OK);
    for (int i = 0; i < n; i++) free(data[i]);
}

#endif
