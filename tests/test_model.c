/* test_model.c — model folders (model.h): a small random Llama folder loaded,
 * its weights read in place and in a decoding step's order, by path and by
 * name; folders refused with one line (no config, a foreign architecture,
 * missing, misshapen or extra tensors, a bad tokenizer), weights that are not
 * numbers, a tied model's saved head of another shape, and the shipped
 * models' folder looked up and listed by two threads at once. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/formats/checkpoint.h"
#include "engine/model/model_run.h"
#include "model_tests_fixture.h"

static void test_load(void **state)
{
    (void)state;
    attn_model m;
    attn_error err;
    make_model(model_dir("gqa"), 2, 4, 2, true, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("gqa"), &m, &err), ATTN_OK);
    assert_int_equal(m.cfg.layers, 2);
    assert_int_equal(m.cfg.kv_heads, 2);
    assert_ptr_equal(m.lm_head.data, m.embed.data);
    assert_string_equal(m.name, "gqa");
    /* matrices stay (out, in), read in place in their dtype; a trace shows
     * w_q as (in, out): w_q[i, o] = q_proj[o, i] */
    attn_st_file f;
    char path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", model_dir("gqa"));
    assert_int_equal(attn_st_read(path, &f, &err), ATTN_OK);
    const attn_st_entry *e = attn_st_find(&f, "model.layers.1.self_attn.q_proj.weight");
    float *q = malloc(D * D * sizeof *q);
    attn_st_copy_f32(&f, e, q);
    assert_memory_equal(m.layer[1].w_q.data, q, D * D * sizeof *q);
    const attn_model_layer *L = &m.layer[1];
    int kv = 2 * (D / 4);
    assert_int_equal(L->w_q.dtype, ATTN_ST_F32);
    assert_true(L->w_k.rows == kv && L->w_k.cols == D && L->w_k.stride == (size_t)D);
    assert_true(L->w_up.rows == F && L->w_up.cols == D && L->w_down.rows == D && L->w_down.cols == F);
    /* in place: the view points into the mapped file, not a copy */
    const attn_st_file *mapped;
    const attn_st_entry *me = attn_ckpt_find(&m.ckpt, "model.layers.1.self_attn.q_proj.weight", &mapped);
    assert_ptr_equal(L->w_q.data, mapped->data + me->begin);
    /* what a decoding step reads, in its order: 7 matrices a layer, then the LM head */
    attn_wmat step[16], sentinel = {.rows = -7};
    assert_int_equal(attn_model_step_matrices(&m, NULL, 0), 15);
    step[3] = sentinel;
    assert_int_equal(attn_model_step_matrices(&m, step, 3), 15);
    assert_int_equal(step[3].rows, -7); /* no more than asked */
    assert_int_equal(attn_model_step_matrices(&m, step, 16), 15);
    assert_ptr_equal(step[7].data, L->w_q.data);
    assert_ptr_equal(step[13].data, L->w_down.data);
    assert_ptr_equal(step[14].data, m.lm_head.data);
    size_t want = 0;
    for (int l = 0; l < 2; l++) {
        static const char *const names[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                            "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"};
        for (int i = 0; i < 7; i++) {
            char name[96];
            snprintf(name, sizeof name, "model.layers.%d.%s.weight", l, names[i]);
            const attn_st_entry *t = attn_st_find(&f, name);
            want += t->end - t->begin;
        }
    }
    const attn_st_entry *emb = attn_st_find(&f, "model.embed_tokens.weight");
    want += emb->end - emb->begin;
    assert_int_equal(attn_wmat_bytes(step, 15), want);
    attn_config c;
    attn_trace tr;
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &tr, &err), ATTN_OK);
    const attn_tensor *wq = attn_trace_find(&tr, "layers.1.w_q");
    for (int i = 0; i < D; i++)
        for (int o = 0; o < D; o++) assert_true(wq->data[i * D + o] == q[o * D + i]);
    attn_trace_free(&tr);
    attn_config_free(&c);
    free(q);
    attn_st_free(&f);
    attn_model_free(&m);
    /* by name, under ATTNLAB_MODELS */
    setenv("ATTNLAB_MODELS", ROOT, 1);
    assert_int_equal(attn_model_load("gqa", &m, &err), ATTN_OK);
    attn_model_free(&m);
    unsetenv("ATTNLAB_MODELS");
}

static void test_bad_folders(void **state)
{
    (void)state;
    expect_load_error(model_dir("absent"), "no such folder or shipped model");
    make_model(model_dir("nocfg"), 1, 2, 2, true, NULL, NULL);
    char p[512];
    snprintf(p, sizeof p, "%s/config.json", model_dir("nocfg"));
    unlink(p);
    expect_load_error(model_dir("nocfg"), "config.json");
    make_model(model_dir("gpt2"), 1, 2, 2, true, NULL, NULL);
    write_text(model_dir("gpt2"), "config.json", "{\"architectures\":[\"GPT2LMHeadModel\"],\"hidden_size\":8}");
    expect_load_error(model_dir("gpt2"), "architecture 'GPT2LMHeadModel' is not supported (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, Gemma2ForCausalLM, Gemma3ForCausalLM, Olmo2ForCausalLM, SmolLM3ForCausalLM, GptOssForCausalLM)");
    write_text(model_dir("gpt2"), "config.json", "[1, 2");
    expect_load_error(model_dir("gpt2"), "config.json: not valid JSON");
    write_text(model_dir("gpt2"), "config.json", "[1, 2]");
    expect_load_error(model_dir("gpt2"), "config.json: not a JSON object");
    write_text(model_dir("gpt2"), "config.json", "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":1,"
               "\"num_attention_heads\":3,\"intermediate_size\":4,\"vocab_size\":12}");
    expect_load_error(model_dir("gpt2"), "do not fit");
    write_text(model_dir("gpt2"), "config.json", "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":1}");
    expect_load_error(model_dir("gpt2"), "'vocab_size' is missing");
    make_model(model_dir("skip"), 2, 2, 1, true, "model.norm.weight", NULL);
    expect_load_error(model_dir("skip"), "tensor 'model.norm.weight' is missing");
    make_model(model_dir("shape"), 2, 2, 1, true, NULL, "model.layers.1.self_attn.k_proj.weight");
    expect_load_error(model_dir("shape"), "'model.layers.1.self_attn.k_proj.weight' has shape (5, 8) but config.json needs (4, 8)");
    /* the config says 1 layer, the weights have 2 */
    make_model(model_dir("disagree"), 2, 2, 2, false, NULL, NULL);
    char cfg[600];
    snprintf(cfg, sizeof cfg, "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":8,\"num_hidden_layers\":1,"
             "\"num_attention_heads\":2,\"num_key_value_heads\":2,\"intermediate_size\":12,\"vocab_size\":12}");
    write_text(model_dir("disagree"), "config.json", cfg);
    expect_load_error(model_dir("disagree"), "unexpected tensor 'model.layers.1.");
    /* a truncated weights file, a foreign dtype, a tokenizer that is not one */
    make_model(model_dir("trunc"), 1, 2, 2, true, NULL, NULL);
    snprintf(p, sizeof p, "%s/model.safetensors", model_dir("trunc"));
    assert_int_equal(truncate(p, 200), 0);
    expect_load_error(model_dir("trunc"), "model.safetensors");
    {
        static const char hdr[] = "{\"x\":{\"dtype\":\"I8\",\"shape\":[1],\"data_offsets\":[0,1]}}";
        unsigned char len[8] = {sizeof hdr - 1};
        FILE *f = fopen(p, "wb");
        assert_non_null(f);
        fwrite(len, 1, 8, f);
        fwrite(hdr, 1, sizeof hdr - 1, f);
        fputc('x', f);
        fclose(f);
    }
    expect_load_error(model_dir("trunc"), "dtype");
    make_model(model_dir("tok"), 1, 2, 2, true, NULL, NULL);
    write_text(model_dir("tok"), "tokenizer.json", "{\"this\": \"is not a tokenizer\"}");
    expect_load_error(model_dir("tok"), "tokenizer.json");
}

/* A NaN or an infinity in any weight a model reads refuses the model, naming
 * the file, the tensor and the element; both when every weight is widened at
 * load and when they stay in the file (read one layer at a time). */
static void test_weights_must_be_numbers(void **state)
{
    (void)state;
    static const struct {
        const char *tensor;
        size_t at;
        float v;
        const char *msg;
    } cases[] = {
        {"model.layers.1.self_attn.q_proj.weight", 1 * D + 3, NAN,
         "model.safetensors: tensor 'model.layers.1.self_attn.q_proj.weight' holds NaN at [1, 3]"},
        {"model.embed_tokens.weight", 2 * D + 5, INFINITY, "tensor 'model.embed_tokens.weight' holds +inf at [2, 5]"},
        {"model.norm.weight", 4, -INFINITY, "tensor 'model.norm.weight' holds -inf at [4]"},
        {"model.layers.0.mlp.down_proj.weight", 7 * F + 11, NAN, "'model.layers.0.mlp.down_proj.weight' holds NaN at [7, 11]"},
        {"lm_head.weight", 0, INFINITY, "tensor 'lm_head.weight' holds +inf at [0, 0]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        make_model(model_dir("nan"), 2, 2, 1, false, NULL, NULL);
        poke_weights(model_dir("nan"), cases[i].tensor, cases[i].at, 1, cases[i].v);
        expect_load_error(model_dir("nan"), cases[i].msg);
    }
}

/* With tied embeddings the head is the embedding; a saved lm_head.weight is
 * a copy, never read, but one of another shape is not this model's (issue
 * 37: a (3, 5) head beside a (24, 16) embedding was accepted). */
static void test_tied_head_shape(void **state)
{
    (void)state;
    const char *dir = model_dir("tiedhead");
    attn_model m;
    attn_error err;
    make_model(dir, 1, 2, 2, false, NULL, NULL); /* a head (V, D), then the config says tied */
    replace_in(dir, "config.json", "\"tie_word_embeddings\":false", "\"tie_word_embeddings\":true");
    if (attn_model_load(dir, &m, &err)) fail_msg("a tied model with its head saved: %s", err.msg);
    attn_model_free(&m);
    make_model(dir, 1, 2, 2, false, NULL, "lm_head.weight"); /* (V + 1, D) */
    replace_in(dir, "config.json", "\"tie_word_embeddings\":false", "\"tie_word_embeddings\":true");
    expect_load_error(dir, "model.safetensors: 'lm_head.weight' has shape (13, 8) but config.json needs (12, 8)");
}

/* The shipped models' folder looked up on one thread while another lists
 * it, as the window does (o lists the models on a worker while the main
 * thread reads the model shown's checkpoints): each listing has every model,
 * every time. The folder was once one static buffer that each lookup wrote
 * again, the installed folder's path first: a listing meanwhile read that
 * path, and missed a model or all of them. */
static atomic_bool stop_finding;
static atomic_long finds, misses;

static void *find_often(void *arg)
{
    char out[4096];
    attn_error err;
    (void)arg;
    while (!atomic_load(&stop_finding)) {
        if (attn_model_find("tang", out, sizeof out, &err)) atomic_fetch_add(&misses, 1);
        atomic_fetch_add(&finds, 1);
    }
    return NULL;
}

static void test_root_shared(void **state)
{
    (void)state;
    char **names;
    int n0, n;
    attn_error err;
    unsetenv("ATTNLAB_MODELS"); /* the compiled-in folder, found after the installed one is looked for */
    assert_int_equal(attn_model_list(&names, &n0, &err), ATTN_OK);
    for (int i = 0; i < n0; i++) free(names[i]);
    free(names);
    assert_true(n0 >= 2); /* the shipped models */
    pthread_t t;
    atomic_store(&stop_finding, false);
    assert_int_equal(pthread_create(&t, NULL, find_often, NULL), 0);
    int short_lists = 0;
    while (atomic_load(&finds) == 0) sched_yield(); /* the two overlap: on a busy machine the finder may start late */
    for (int round = 0; round < 400 || (atomic_load(&finds) < 400 && round < 100000); round++) {
        assert_int_equal(attn_model_list(&names, &n, &err), ATTN_OK);
        short_lists += n != n0;
        for (int i = 0; i < n; i++) free(names[i]);
        free(names);
    }
    atomic_store(&stop_finding, true);
    pthread_join(t, NULL);
    assert_true(atomic_load(&finds) >= 400);
    assert_int_equal(short_lists, 0);
    assert_int_equal(atomic_load(&misses), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_bad_folders),
        cmocka_unit_test(test_weights_must_be_numbers),
        cmocka_unit_test(test_tied_head_shape),
        cmocka_unit_test(test_root_shared),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
