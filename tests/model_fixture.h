/* model_fixture.h — small random Llama (and Gemma 2/3) folders for tests: config.json,
 * model.safetensors (F32, HF names), a WordLevel tokenizer.json and, for the
 * window's variant switch, eval.json; one saved during training (checkpoints
 * and metrics.json). Static: include it once per program. */
#ifndef TEST_MODEL_FIXTURE_H
#define TEST_MODEL_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/base/rng.h"
#include "engine/formats/safetensors.h"

static const char TOKENIZER[] =
    "{\"version\":\"1.0\",\"added_tokens\":["
    "{\"id\":0,\"content\":\"<unk>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":1,\"content\":\"<s>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true},"
    "{\"id\":2,\"content\":\"</s>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false,\"normalized\":false,\"special\":true}],"
    "\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"WhitespaceSplit\"},"
    "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\",\"type_id\":0}},"
    "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"pair\":[{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},"
    "{\"Sequence\":{\"id\":\"B\",\"type_id\":1}}],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\",\"ids\":[1],\"tokens\":[\"<s>\"]}}},"
    "\"decoder\":null,\"model\":{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"<s>\":1,"
    "\"</s>\":2,\"the\":3,\"cat\":4,\"sat\":5,\"on\":6,\"mat\":7,\".\":8,\"a\":9,\"dog\":10,\"ran\":11}}}";
enum { V = 12, D = 8, F = 12 };

static inline void write_text(const char *dir, const char *file, const char *text)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A random Llama folder of `layers` layers, h heads, g K/V heads, F32 weights.
 * skip: a tensor left out; bad_shape: a tensor given one row too many. */
static void make_model(const char *dir, int layers, int h, int g, bool tied, const char *skip,
                       const char *bad_shape)
{
    char cfg[1024];
    mkdir(dir, 0755);
    snprintf(cfg, sizeof cfg,
             "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":%d,\"num_hidden_layers\":%d,"
             "\"num_attention_heads\":%d,\"num_key_value_heads\":%d,\"intermediate_size\":%d,\"rms_norm_eps\":1e-5,"
             "\"rope_theta\":100.0,\"vocab_size\":%d,\"max_position_embeddings\":16,\"tie_word_embeddings\":%s,"
             "\"bos_token_id\":1,\"eos_token_id\":2}",
             D, layers, h, g, F, V, tied ? "true" : "false");
    write_text(dir, "config.json", cfg);
    write_text(dir, "tokenizer.json", TOKENIZER);
    static const char *const LAYER[] = {"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                        "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj",
                                        "mlp.up_proj", "mlp.down_proj"};
    int kv = g * (D / h);
    const int64_t rows[] = {D, D, kv, kv, D, D, F, F, D}, cols[] = {0, D, D, D, D, 0, D, D, F};
    enum { MAXT = 64 };
    char names[MAXT][64];
    int64_t shapes[MAXT][2];
    attn_st_tensor t[MAXT];
    float *data[MAXT];
    int n = 0;
#define ADD(r, c, ...) do { snprintf(names[n], 64, __VA_ARGS__); shapes[n][0] = (r); shapes[n][1] = (c); n++; } while (0)
    ADD(V, D, "model.embed_tokens.weight");
    for (int l = 0; l < layers; l++)
        for (int i = 0; i < 9; i++) ADD(rows[i], cols[i], "model.layers.%d.%s.weight", l, LAYER[i]);
    ADD(D, 0, "model.norm.weight");
    if (!tied) ADD(V, D, "lm_head.weight");
#undef ADD
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (skip && !strcmp(names[i], skip)) continue;
        if (bad_shape && !strcmp(names[i], bad_shape)) shapes[i][0]++;
        size_t count = (size_t)shapes[i][0] * (size_t)(shapes[i][1] ? shapes[i][1] : 1);
        data[m] = malloc(count * sizeof(float));
        attn_fill_normal(data[m], count, attn_hash64((uint64_t)i * 77 + 5), shapes[i][1] ? 0.5f : 0.1f);
        if (!shapes[i][1])
            for (size_t e = 0; e < count; e++) data[m][e] += 1.0f; /* norm gains near 1 */
        t[m] = (attn_st_tensor){names[i], shapes[i][1] ? 2 : 1, shapes[i], data[m]};
        m++;
    }
    char path[1100];
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    assert_int_equal(attn_st_write(path, t, m, NULL, 0, &err), ATTN_OK);
    for (int i = 0; i < m; i++) free(data[i]);
}

/* A random Gemma 2 (or, g3, Gemma 3 text) folder: `layers` layers of h heads
 * of 4 features, g kv heads, local layers of window W (Gemma 2 alternates,
 * Gemma 3 two local then one global), tied F32 weights, max_pos positions. */
static inline void make_gemma(const char *dir, bool g3, int layers, int h, int g, int W, int max_pos)
{
    enum { K = 4, MAXT = 128 };
    char cfg[1024];
    mkdir(dir, 0755);
    snprintf(cfg, sizeof cfg,
             "{\"architectures\":[\"%s\"],\"model_type\":\"%s\",\"hidden_size\":%d,\"num_hidden_layers\":%d,"
             "\"num_attention_heads\":%d,\"num_key_value_heads\":%d,\"head_dim\":%d,\"intermediate_size\":%d,"
             "\"rms_norm_eps\":1e-6,\"rope_theta\":100.0,\"vocab_size\":%d,\"max_position_embeddings\":%d,"
             "\"tie_word_embeddings\":true,\"hidden_activation\":\"gelu_pytorch_tanh\",\"bos_token_id\":1,"
             "\"eos_token_id\":2,\"sliding_window\":%d,\"query_pre_attn_scalar\":%d%s}",
             g3 ? "Gemma3ForCausalLM" : "Gemma2ForCausalLM", g3 ? "gemma3_text" : "gemma2", D, layers, h, g, K, F, V,
             max_pos, W, K, g3 ? ",\"rope_local_base_freq\":10.0,\"sliding_window_pattern\":3" : "");
    write_text(dir, "config.json", cfg);
    write_text(dir, "tokenizer.json", TOKENIZER);
    static const char *const NORMS[] = {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                                        "post_feedforward_layernorm"};
    char names[MAXT][64];
    int64_t shapes[MAXT][2];
    attn_st_tensor t[MAXT];
    float *data[MAXT];
    int n = 0;
#define ADD(r, c, ...) do { snprintf(names[n], 64, __VA_ARGS__); shapes[n][0] = (r); shapes[n][1] = (c); n++; } while (0)
    ADD(V, D, "model.embed_tokens.weight");
    for (int l = 0; l < layers; l++) {
        for (int i = 0; i < 4; i++) ADD(D, 0, "model.layers.%d.%s.weight", l, NORMS[i]);
        ADD(h * K, D, "model.layers.%d.self_attn.q_proj.weight", l);
        ADD(g * K, D, "model.layers.%d.self_attn.k_proj.weight", l);
        ADD(g * K, D, "model.layers.%d.self_attn.v_proj.weight", l);
        ADD(D, h * K, "model.layers.%d.self_attn.o_proj.weight", l);
        if (g3) {
            ADD(K, 0, "model.layers.%d.self_attn.q_norm.weight", l);
            ADD(K, 0, "model.layers.%d.self_attn.k_norm.weight", l);
        }
        ADD(F, D, "model.layers.%d.mlp.gate_proj.weight", l);
        ADD(F, D, "model.layers.%d.mlp.up_proj.weight", l);
        ADD(D, F, "model.layers.%d.mlp.down_proj.weight", l);
    }
    ADD(D, 0, "model.norm.weight");
#undef ADD
    for (int i = 0; i < n; i++) {
        size_t count = (size_t)shapes[i][0] * (size_t)(shapes[i][1] ? shapes[i][1] : 1);
        data[i] = malloc(count * sizeof(float));
        /* larger q and k than usual: the scores, and so the window, matter */
        attn_fill_normal(data[i], count, attn_hash64((uint64_t)i * 91 + 7), shapes[i][1] ? 0.9f : 0.2f);
        t[i] = (attn_st_tensor){names[i], shapes[i][1] ? 2 : 1, shapes[i], data[i]};
    }
    char path[1100];
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    assert_int_equal(attn_st_write(path, t, n, NULL, 0, &err), ATTN_OK);
    for (int i = 0; i < n; i++) free(data[i]);
}

/* Rewrites dir's model.safetensors in BF16 (each float rounded to nearest
 * even), header padded to 8 bytes as Hugging Face's writer does, plus `shift`
 * spaces more: shift 1 puts every tensor at an odd byte address. */
static inline void model_to_bf16(const char *dir, int shift)
{
    char path[1100], head[16384], entry[256];
    attn_st_file f;
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    assert_int_equal(attn_st_read(path, &f, &err), ATTN_OK);
    size_t off = 0, len = 0;
    len += (size_t)snprintf(head, sizeof head, "{");
    for (int i = 0; i < f.n; i++) {
        const attn_st_entry *e = &f.entries[i];
        size_t n = attn_st_count(e);
        char shape[64] = "";
        for (int j = 0; j < e->ndim; j++)
            snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "%s%lld", j ? "," : "", (long long)e->shape[j]);
        snprintf(entry, sizeof entry, "%s\"%s\":{\"dtype\":\"BF16\",\"shape\":[%s],\"data_offsets\":[%zu,%zu]}",
                 i ? "," : "", e->name, shape, off, off + 2 * n);
        assert_true(len + strlen(entry) + 2 < sizeof head);
        len += (size_t)snprintf(head + len, sizeof head - len, "%s", entry);
        off += 2 * n;
    }
    len += (size_t)snprintf(head + len, sizeof head - len, "}");
    while ((8 + len) % 8) head[len++] = ' ';
    for (int i = 0; i < shift; i++) head[len++] = ' ';
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)((uint64_t)len >> (8 * i));
    fwrite(le, 1, 8, out);
    fwrite(head, 1, len, out);
    for (int i = 0; i < f.n; i++) {
        size_t n = attn_st_count(&f.entries[i]);
        float *v = malloc(n * sizeof *v);
        attn_st_copy_f32(&f, &f.entries[i], v);
        for (size_t j = 0; j < n; j++) {
            uint32_t u;
            memcpy(&u, &v[j], 4);
            u += 0x7fff + ((u >> 16) & 1); /* round to nearest even (the weights are finite) */
            unsigned char b[2] = {(unsigned char)(u >> 16), (unsigned char)(u >> 24)};
            fwrite(b, 1, 2, out);
        }
        free(v);
    }
    fclose(out);
    attn_st_free(&f);
}

/* eval.json as the training script writes it (the fields the window reads). */
static inline void write_eval(const char *dir, const char *variant, double heldout)
{
    char text[256];
    snprintf(text, sizeof text, "{\"variant\": \"%s\", \"lang\": \"en\", \"heldout_loss\": %g, \"train_loss\": %g}",
             variant, heldout, heldout - 0.1);
    write_text(dir, "eval.json", text);
}

/* A model saved during training: ROOT/ck with checkpoints/step0 (its weights
 * rounded to BF16: another model) and step25, and a metrics.json of two
 * snapshots whose every number is distinct. */
static inline void make_checkpointed(char *dir, size_t size, const char *metrics)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char root[512], sub[700];
    snprintf(root, sizeof root, "%s/ck-XXXXXX", tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(root));
    snprintf(dir, size, "%s/ck", root);
    make_model(dir, 2, 4, 2, true, NULL, NULL);
    snprintf(sub, sizeof sub, "%s/checkpoints", dir);
    mkdir(sub, 0755);
    for (int step = 0; step <= 25; step += 25) {
        snprintf(sub, sizeof sub, "%s/checkpoints/step%d", dir, step);
        make_model(sub, 2, 4, 2, true, NULL, NULL);
        if (!step) model_to_bf16(sub, 0);
    }
    snprintf(sub, sizeof sub, "%s/checkpoints", dir);
    if (metrics) {
        write_text(sub, "metrics.json", metrics);
        return;
    }
    char json[8192];
    int n = snprintf(json, sizeof json, "{\"induction\": {\"seed\": 0}, \"snapshots\": [");
    for (int s = 0; s < 2; s++) {
        n += snprintf(json + n, sizeof json - (size_t)n, "%s{\"step\": %d, \"train_loss\": %.2f, \"heldout_loss\": %.2f, "
                      "\"heads\": [", s ? ", " : "", 25 * s, 3.0 - s, 3.1 - s);
        for (int l = 0; l < 2; l++)
            for (int h = 0; h < 4; h++)
                n += snprintf(json + n, sizeof json - (size_t)n, "%s{\"layer\": %d, \"head\": %d, \"induction\": 0.%d%d%d1, "
                              "\"-1\": 0.%d%d%d2, \"first\": 0.%d%d%d3, \"-2\": 0}", l + h ? ", " : "", l, h, s, l, h, s,
                              l, h, s, l, h);
        n += snprintf(json + n, sizeof json - (size_t)n, "]}");
    }
    snprintf(json + n, sizeof json - (size_t)n, "]}");
    write_text(sub, "metrics.json", json);
}

#endif
