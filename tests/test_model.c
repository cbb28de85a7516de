/* test_model.c — model folders (model.h), the model's traced forward pass
 * (model_run.h) and generation over the KV cache (generate.h), on small random
 * Llama folders written here. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "engine/base/fileio.h"
#include "engine/base/paths.h"
#include "engine/base/rng.h"
#include "engine/base/utf8.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/safetensors.h"
#include "engine/formats/trace_io.h"
#include "engine/model/head.h"
#include "engine/model/model_run.h"
#include "engine/run/forward.h"
#include "engine/run/generate.h"
#include "engine/run/kv_cache.h"
static char ROOT[256];

#include "model_fixture.h"


static const char *model_dir(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", ROOT, name);
    return p;
}

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

static void expect_load_error(const char *dir, const char *msg)
{
    attn_model m;
    attn_error err = {0};
    if (attn_model_load(dir, &m, &err) == ATTN_OK) fail_msg("%s loaded; expected '%s'", dir, msg);
    if (!strstr(err.msg, msg)) fail_msg("'%s' does not contain '%s'", err.msg, msg);
    assert_null(strchr(err.msg, '\n'));
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
    expect_load_error(model_dir("gpt2"), "architecture 'GPT2LMHeadModel' is not supported (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM)");
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

/* Copies file from dir to dir2/file2; the paths may be PATH_MAX long. */
static void copy_file(const char *dir, const char *file, const char *dir2, const char *file2)
{
    char from[PATH_MAX], to[PATH_MAX], *data;
    size_t n;
    attn_error err;
    assert_int_equal(attn_path_format(from, sizeof from, &err, "%s/%s", dir, file), ATTN_OK);
    assert_int_equal(attn_path_format(to, sizeof to, &err, "%s/%s", dir2, file2), ATTN_OK);
    assert_int_equal(attn_file_read(from, 1u << 26, &data, &n, &err), ATTN_OK);
    FILE *f = fopen(to, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
    free(data);
}

/* An index that puts every tensor of the fixture's model.safetensors in shard. */
static void write_index(const char *from_dir, const char *dir, const char *file, const char *shard)
{
    char path[PATH_MAX], *text = calloc(1, 1 << 16);
    attn_st_file f;
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", from_dir);
    assert_int_equal(attn_st_read(path, &f, &err), ATTN_OK);
    size_t n = (size_t)snprintf(text, 1 << 16, "{\"weight_map\": {");
    for (int i = 0; i < f.n; i++)
        n += (size_t)snprintf(text + n, (1 << 16) - n, "%s\"%s\": \"%s\"", i ? ", " : "", f.entries[i].name, shard);
    snprintf(text + n, (1 << 16) - n, "}}");
    attn_st_free(&f);
    assert_int_equal(attn_path_format(path, sizeof path, &err, "%s/%s", dir, file), ATTN_OK);
    FILE *o = fopen(path, "w");
    assert_non_null(o);
    fputs(text, o);
    fclose(o);
    free(text);
}

/* PAD71: 71 bytes to put before a folder so that its path has another length. */
#define PAD71 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

/* msg names path cut around one "…", then says rest: it is "HEAD…TAIL" + rest,
 * HEAD a start of path and TAIL an end of it, each at least 32 bytes, shorter
 * than path together, and valid UTF-8. */
static void expect_cut_path(const char *msg, const char *path, const char *rest)
{
    const char *dots = strstr(msg, "…"), *end = strstr(msg, rest);
    size_t len = strlen(path);
    if (!dots || !end || strcmp(end, rest) != 0 || strstr(dots + 1, "…")) fail_msg("%s", msg);
    size_t head = (size_t)(dots - msg), tail = (size_t)(end - (dots + strlen("…")));
    if (head < 32 || tail < 32 || head + tail >= len || strncmp(msg, path, head) != 0 ||
        strncmp(dots + strlen("…"), path + len - tail, tail) != 0 || !attn_utf8_valid(msg, strlen(msg)))
        fail_msg("%s", msg);
}

/* A path is formatted whole or not at all (paths.h): one that fits exactly is
 * kept; one byte more is refused, named by its ends, and never used cut. A
 * model folder whose path is 4,083 bytes keeps config.json (4,095 with it),
 * but model.safetensors.index.json and tokenizer.json do not fit: cut to the
 * 4,095 bytes a path may have they read model.safet and tokenizer.j, here
 * decoys that work (an index of shard w.st, a tokenizer), so a cut path would
 * load a model from them. The load is refused, naming the path. */
static void test_long_paths(void **state)
{
    (void)state;
    char buf[8], deep[PATH_MAX];
    attn_error err = {0};
    assert_int_equal(attn_path_format(buf, sizeof buf, &err, "%s/%s", "abc", "def"), ATTN_OK);
    assert_string_equal(buf, "abc/def");
    assert_int_equal(attn_path_format(buf, sizeof buf, &err, "%s/%s", "abc", "defg"), ATTN_ERR_IO);
    assert_string_equal(buf, "");
    assert_string_equal(err.msg, "abc/defg: the path is 8 bytes, longer than the 7 a path may have here");

    const char *src = model_dir("short");
    make_model(src, 1, 2, 2, true, NULL, NULL);
    /* the decoys work where they are named so */
    const char *decoy = model_dir("decoy");
    mkdir(decoy, 0755);
    copy_file(src, "config.json", decoy, "config.json");
    copy_file(src, "model.safetensors", decoy, "w.st");
    copy_file(src, "tokenizer.json", decoy, "tokenizer.json");
    write_index(src, decoy, "model.safetensors.index.json", "w.st");
    attn_model m;
    assert_int_equal(attn_model_load(decoy, &m, &err), ATTN_OK);
    attn_model_free(&m);

    /* The folder under pads of 0..71 bytes, so the "…" of the cut lands at
     * every place around "/deep/", whatever the length of ROOT (the test must
     * pass wherever the repository is cloned): the message is checked by its
     * parts, not by where the cut falls. */
    enum { LEN = 4083 };
    for (int pad = 0; pad < 72; pad++) {
        size_t n = (size_t)snprintf(deep, sizeof deep, "%s/p%02d%.*s", ROOT, pad, pad, PAD71);
        assert_int_equal(mkdir(deep, 0755), 0);
        n += (size_t)snprintf(deep + n, sizeof deep - n, "/deep");
        assert_int_equal(mkdir(deep, 0755), 0);
        while (n < LEN) { /* folders of up to 200 bytes, none left empty */
            size_t rest = LEN - n - 1, seg = rest <= 200 ? rest : rest - 201 < 2 ? 150 : 200;
            deep[n++] = '/';
            memset(deep + n, 'd', seg);
            n += seg;
            deep[n] = '\0';
            assert_int_equal(mkdir(deep, 0755), 0);
        }
        assert_int_equal(strlen(deep), LEN);
        copy_file(src, "config.json", deep, "config.json");
        copy_file(src, "model.safetensors", deep, "w.st");
        copy_file(src, "tokenizer.json", deep, "tokenizer.j");
        write_index(src, deep, "model.safet", "w.st");
        attn_model_config c;
        assert_int_equal(attn_model_peek(deep, &c, &err), ATTN_OK); /* config.json fits */
        assert_int_not_equal(attn_model_load(deep, &m, &err), ATTN_OK);
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/model.safetensors.index.json", deep);
        expect_cut_path(err.msg, path, ": the path is 4112 bytes, longer than the 4095 a path may have here");
    }

    /* a models' folder whose path does not fit is none: not a cut one */
    char *root = malloc(5000);
    memset(root, 'r', 4999);
    memcpy(root, ROOT, strlen(ROOT));
    root[strlen(ROOT)] = '/';
    root[4999] = '\0';
    setenv("ATTNLAB_MODELS", root, 1);
    assert_string_equal(attn_model_root(), "");
    assert_int_not_equal(attn_model_load("short", &m, &err), ATTN_OK);
    assert_non_null(strstr(err.msg, "the models' folder ($ATTNLAB_MODELS or the installed one) has a path longer than"));
    unsetenv("ATTNLAB_MODELS");
    free(root);
}

/* Writes the tensors of src_dir's model.safetensors that keep() picks to dir/file. */
static void write_shard(const char *src_dir, const char *dir, const char *file, bool (*keep)(const char *))
{
    char path[PATH_MAX];
    attn_st_file f;
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", src_dir);
    assert_int_equal(attn_st_read(path, &f, &err), ATTN_OK);
    attn_st_tensor t[64];
    float *data[64];
    int n = 0;
    for (int i = 0; i < f.n; i++) {
        if (!keep(f.entries[i].name)) continue;
        data[n] = malloc(attn_st_count(&f.entries[i]) * sizeof(float));
        attn_st_copy_f32(&f, &f.entries[i], data[n]);
        t[n] = (attn_st_tensor){f.entries[i].name, f.entries[i].ndim, f.entries[i].shape, data[n]};
        n++;
    }
    snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_int_equal(attn_st_write(path, t, n, NULL, 0, &err), ATTN_OK);
    for (int i = 0; i < n; i++) free(data[i]);
    attn_st_free(&f);
}

static bool in_layers(const char *name) { return !strncmp(name, "model.layers.", 13); }
static bool outside_layers(const char *name) { return !in_layers(name); }
static bool layers_and_norm(const char *name) { return in_layers(name) || !strcmp(name, "model.norm.weight"); }

/* An index of the fixture's tensors: the layers in b.safetensors, the rest in
 * a.safetensors, then `extra` (more "name": "shard" pairs, or ""). */
static void write_split_index(const char *src_dir, const char *dir, const char *extra)
{
    char path[PATH_MAX], *text = calloc(1, 1 << 16);
    attn_st_file f;
    attn_error err;
    snprintf(path, sizeof path, "%s/model.safetensors", src_dir);
    assert_int_equal(attn_st_read(path, &f, &err), ATTN_OK);
    size_t n = (size_t)snprintf(text, 1 << 16, "{\"weight_map\": {");
    for (int i = 0; i < f.n; i++)
        n += (size_t)snprintf(text + n, (1 << 16) - n, "%s\"%s\": \"%s\"", i ? ", " : "", f.entries[i].name,
                              in_layers(f.entries[i].name) ? "b.safetensors" : "a.safetensors");
    snprintf(text + n, (1 << 16) - n, "%s}}", extra);
    attn_st_free(&f);
    write_text(dir, "model.safetensors.index.json", text);
    free(text);
}

/* A tensor is in one shard only (issue 21): a second copy, whether the index
 * lists it there too (a key given twice) or not, is refused naming both
 * shards; the index listing a tensor twice in one shard is refused too. */
static void test_tensor_in_two_shards(void **state)
{
    (void)state;
    const char *src = model_dir("whole"), *dir = model_dir("sharded");
    attn_model m;
    attn_error err;
    make_model(src, 2, 2, 1, true, NULL, NULL);
    mkdir(dir, 0755);
    copy_file(src, "config.json", dir, "config.json");
    copy_file(src, "tokenizer.json", dir, "tokenizer.json");
    write_shard(src, dir, "a.safetensors", outside_layers);
    write_shard(src, dir, "b.safetensors", in_layers);
    write_split_index(src, dir, "");
    assert_int_equal(attn_model_load(dir, &m, &err), ATTN_OK); /* split once: fine */
    attn_model_free(&m);
    write_shard(src, dir, "b.safetensors", layers_and_norm); /* model.norm.weight in both */
    write_split_index(src, dir, ", \"model.norm.weight\": \"b.safetensors\"");
    /* the index gives the key twice: refused with its JSON (json.h), before the shards are read */
    expect_load_error(dir, "sharded: model.safetensors.index.json: key 'model.norm.weight' appears twice in weight_map");
    write_split_index(src, dir, "");
    expect_load_error(dir, "tensor 'model.norm.weight' is in two shards, a.safetensors and b.safetensors");
    write_shard(src, dir, "b.safetensors", in_layers);
    write_split_index(src, dir, ", \"model.norm.weight\": \"a.safetensors\"");
    expect_load_error(dir, "model.safetensors.index.json: key 'model.norm.weight' appears twice in weight_map");
}

/* dir's config.json as make_model wrote it, without key, then `extra` appended
 * ("\"key\": value", or "" for none) . */
static void config_with(const char *dir, const char *key, const char *extra)
{
    char path[PATH_MAX], *text, out[2048];
    size_t n;
    attn_error err;
    snprintf(path, sizeof path, "%s/config.json", dir);
    assert_int_equal(attn_file_read(path, 1 << 16, &text, &n, &err), ATTN_OK);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON_DeleteItemFromObjectCaseSensitive(root, key);
    char *base = cJSON_PrintUnformatted(root);
    *strrchr(base, '}') = '\0';
    snprintf(out, sizeof out, "%s%s%s}", base, *extra ? ", " : "", extra);
    free(base);
    cJSON_Delete(root);
    write_text(dir, "config.json", out);
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

static void run_text(const char *dir, const char *text, const char *pad_side, int past, bool pad_mask,
                     attn_trace *tr)
{
    attn_config c;
    attn_error err;
    attn_config_init(&c);
    assert_int_equal(attn_config_set(&c, "model", dir, &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "text", text, &err), ATTN_OK);
    assert_int_equal(attn_config_set(&c, "pad_side", pad_side, &err), ATTN_OK);
    c.past = past;
    c.pad_mask = pad_mask;
    if (attn_trace_run(&c, NULL, tr, &err)) fail_msg("%s: %s", text, err.msg);
    attn_config_free(&c);
}

static void test_trace_stages(void **state)
{
    (void)state;
    attn_trace tr;
    make_model(model_dir("mqa"), 3, 4, 1, false, NULL, NULL);
    run_text(model_dir("mqa"), "the cat sat on the zebra", "right", 0, true, &tr);
    assert_int_equal(tr.n_layers, 3);
    assert_int_equal(tr.dims.s, 7); /* <s> first; zebra is <unk> */
    assert_string_equal(attn_tokens_at(&tr.tokens, 0, 0), "<s>");
    assert_string_equal(attn_tokens_at(&tr.tokens, 0, 6), "<unk>");
    assert_int_equal(tr.token_ids[6], 0);
    static const char *const NAMES[] = {"embeddings", "layers.0.resid_in", "layers.0.x", "layers.1.q_rope",
                                        "layers.2.weights", "layers.2.mlp_norm", "layers.2.act",
                                        "layers.2.resid_out", "final_norm", "logits", "probs"};
    for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
        if (!attn_trace_find(&tr, NAMES[i])) fail_msg("no tensor %s", NAMES[i]);
    assert_string_equal(tr.tensors[0].name, "embeddings");
    assert_string_equal(tr.tensors[tr.n_tensors - 1].name, "probs");
    const attn_tensor *probs = attn_trace_find(&tr, "probs"), *w = attn_trace_find(&tr, "layers.1.weights");
    assert_int_equal(probs->shape[2], V);
    assert_int_equal(attn_tensor_fill_all(probs), 0);
    for (int i = 0; i < 7; i++) {
        double sum = 0;
        for (int v = 0; v < V; v++) sum += probs->data[i * V + v];
        assert_true(fabs(sum - 1) < 1e-5);
        for (int j = i + 1; j < 7; j++) assert_true(attn_tensor_at4(w, 0, 2, i, j) == 0.0f); /* causal */
    }
    /* layer 1's input is layer 0's output */
    const attn_tensor *a = attn_trace_find(&tr, "layers.0.resid_out"), *b = attn_trace_find(&tr, "layers.1.resid_in");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    attn_trace_free(&tr);
}

/* A row padded on either side predicts exactly as alone (RoPE scores depend
 * on i − j only); a past of P (the cache) equals the full pass. */
static void test_padding_and_cache(void **state)
{
    (void)state;
    attn_trace alone, both, cached;
    make_model(model_dir("pad"), 2, 4, 2, true, NULL, NULL);
    run_text(model_dir("pad"), "a dog ran", "right", 0, true, &alone);
    for (int side = 0; side < 2; side++) {
        run_text(model_dir("pad"), "the cat sat on the mat|a dog ran", side ? "left" : "right", 0, true, &both);
        const attn_tensor *la = attn_trace_find(&alone, "logits"), *lb = attn_trace_find(&both, "logits");
        attn_tensor_fill_all(la), attn_tensor_fill_all(lb);
        int L = both.dims.L, n = alone.dims.L, off = side ? L - n : 0;
        for (int i = 0; i < n; i++)
            for (int v = 0; v < V; v++)
                assert_true(fabsf(la->data[i * V + v] - lb->data[((size_t)L + off + i) * V + v]) < 1e-4f);
        attn_trace_free(&both);
    }
    run_text(model_dir("pad"), "a dog ran", "right", 2, true, &cached);
    const attn_tensor *lc = attn_trace_find(&cached, "logits"), *la = attn_trace_find(&alone, "logits");
    attn_tensor_fill_all(lc);
    assert_int_equal(cached.dims.s, 2);
    for (int i = 0; i < 2; i++)
        for (int v = 0; v < V; v++) assert_true(fabsf(lc->data[i * V + v] - la->data[(2 + i) * V + v]) < 1e-4f);
    attn_trace_free(&cached);
    attn_trace_free(&alone);
}

/* logits and probs are computed for the rows read, in chunks of
 * ATTN_HEAD_CHUNK: before a read a row holds zeros; a row read alone has the
 * bits it has when every row is read, the bits of one product over every
 * row (the head before it was lazy), and the bits a trace file stores. The
 * trace outlives its model (attn_trace_run loads and frees it). */
static void test_lazy_head_rows(void **state)
{
    (void)state;
    attn_trace one, all, loaded;
    attn_model m;
    attn_error err;
    make_model(model_dir("lazy"), 2, 4, 2, true, NULL, NULL);
    const char *text = "the cat sat on the mat|a dog ran on the mat|the mat sat|a cat ran|the dog sat on a cat";
    run_text(model_dir("lazy"), text, "right", 0, true, &one);
    run_text(model_dir("lazy"), text, "right", 0, true, &all);
    size_t rows = (size_t)one.dims.b * one.dims.s, pick = rows - 1, row = (size_t)V * sizeof(float);
    assert_true(rows > ATTN_HEAD_CHUNK); /* two chunks, the second short */
    const attn_tensor *lo = attn_trace_find(&one, "logits"), *po = attn_trace_find(&one, "probs");
    const attn_tensor *la = attn_trace_find(&all, "logits"), *pa = attn_trace_find(&all, "probs");
    for (size_t v = 0; v < (size_t)V; v++) assert_true(lo->data[pick * V + v] == 0.0f && lo->data[v] == 0.0f);
    assert_int_equal(attn_tensor_fill(po, pick, 1), 0); /* probs' row fills logits' row too */
    for (size_t v = 0; v < (size_t)V; v++) assert_true(lo->data[v] == 0.0f); /* the first chunk: not read */
    assert_int_equal(attn_tensor_fill_all(la), 0);
    assert_memory_equal(lo->data + pick * V, la->data + pick * V, row);
    assert_memory_equal(po->data + pick * V, pa->data + pick * V, row);
    /* the eager product over every row: logits = final_norm · W_lmᵀ */
    assert_int_equal(attn_model_load(model_dir("lazy"), &m, &err), ATTN_OK);
    float *eager = malloc(rows * row);
    assert_non_null(eager);
    assert_int_equal(attn_model_logits(&m, attn_trace_find(&all, "final_norm")->data, eager, rows), 0);
    assert_memory_equal(eager, la->data, rows * row);
    free(eager);
    attn_model_free(&m);
    /* a trace file stores every row, the same bits */
    char path[600];
    snprintf(path, sizeof path, "%s/lazy.safetensors", ROOT);
    assert_int_equal(attn_trace_save(&one, path, &err), ATTN_OK);
    assert_int_equal(attn_trace_load(path, &loaded, &err), ATTN_OK);
    assert_memory_equal(attn_trace_find(&loaded, "logits")->data, la->data, rows * row);
    assert_memory_equal(attn_trace_find(&loaded, "probs")->data, pa->data, rows * row);
    attn_trace_free(&loaded);
    attn_trace_free(&one);
    attn_trace_free(&all);
}

/* The most likely next token after the last position, <unk> (id 0 in the
 * fixture's vocabulary) left out as generation leaves it out. */
static int argmax_last(const attn_trace *tr)
{
    const attn_tensor *lg = attn_trace_find(tr, "logits");
    attn_tensor_fill(lg, (size_t)tr->dims.s - 1, 1);
    const float *row = lg->data + (size_t)(tr->dims.s - 1) * V;
    int best = 1;
    for (int v = 2; v < V; v++)
        if (row[v] > row[best]) best = v;
    return best;
}
/* Sets elements [at, at + n) of tensor `name` (F32) in dir's model.safetensors to v. */
static void poke_weights(const char *dir, const char *name, size_t at, size_t n, float v)
{
    char path[600];
    attn_st_file f;
    attn_error err;
    struct stat sb;
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    assert_int_equal(attn_st_read(path, &f, &err), ATTN_OK);
    const attn_st_entry *e = attn_st_find(&f, name);
    assert_non_null(e);
    assert_true(at + n <= attn_st_count(e));
    assert_int_equal(stat(path, &sb), 0);
    long off = (long)((size_t)sb.st_size - f.data_size + e->begin + at * sizeof v); /* the data section ends the file */
    attn_st_free(&f);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, off, SEEK_SET), 0);
    for (size_t i = 0; i < n; i++) assert_int_equal(fwrite(&v, sizeof v, 1, fp), 1);
    fclose(fp);
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

/* Weights that are numbers but whose products overflow: W_down all 3e38 makes
 * layer 0's mlp_out ±inf (and ∞ − ∞ = NaN), and every logit NaN. Generating
 * refuses to sample from them and names where the first one appeared, over
 * the KV cache as well as with traced steps. */
static void test_generate_refuses_nan_logits(void **state)
{
    (void)state;
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    int id;
    make_model(model_dir("overflow"), 2, 2, 1, true, NULL, NULL);
    poke_weights(model_dir("overflow"), "model.layers.0.mlp.down_proj.weight", 0, (size_t)D * F, 3e38f);
    assert_int_equal(attn_model_load(model_dir("overflow"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    for (int traced = 0; traced < 2; traced++) {
        assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
        g.trace_steps = traced;
        assert_int_equal(attn_generator_step(&g, &(attn_sampling){.seed = 1}, &id, &err), ATTN_ERR_FORMAT);
        if (!strstr(err.msg, "overflow: the next-token logits after 3 tokens are not all numbers") ||
            !strstr(err.msg, "first appears in layer 0's mlp_out (layers.0.mlp_out)"))
            fail_msg("%s", err.msg);
        assert_int_equal(g.n, 3); /* nothing was appended */
        attn_generator_free(&g);
    }
    attn_config_free(&c);
    attn_model_free(&m);
}

/* Greedy steps over the cache pick what full passes pick, and each step's
 * trace has one query row over every earlier position. */
static void test_generate_equals_full_passes(void **state)
{
    (void)state;
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    make_model(model_dir("gen"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("gen"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
    attn_sampling greedy = {.seed = 1};
    for (int step = 0; step < 8; step++) {
        attn_trace full;
        assert_int_equal(attn_model_trace_ids(&m, &c, g.ids, g.n, NULL, &full, &err), ATTN_OK);
        int want = argmax_last(&full), got;
        attn_trace_free(&full);
        assert_int_equal(attn_generator_step(&g, &greedy, &got, &err), ATTN_OK);
        assert_int_equal(got, want);
        assert_int_equal(g.trace.dims.s, 1);
        assert_int_equal(g.trace.dims.P, g.n - 1);
        assert_non_null(attn_trace_find(&g.trace, "layers.1.k_cache"));
    }
    /* the model's 16 positions end it with a message */
    int id;
    attn_status st = ATTN_OK;
    while (!st) st = attn_generator_step(&g, &greedy, &id, &err);
    assert_int_equal(g.n, 16);
    assert_non_null(strstr(err.msg, "16 positions"));
    attn_generator_free(&g);
    /* sampling: the same seed, the same draws */
    attn_sampling warm = {.temperature = 1.0, .top_k = 3, .seed = 7};
    float logits[V];
    for (int v = 0; v < V; v++) logits[v] = (float)v * 0.1f;
    for (float u = 0; u < 1; u += 0.05f) {
        int a = attn_sample_logits(logits, V, NULL, &warm, u);
        assert_true(a >= V - 3); /* top-3 only */
        assert_int_equal(a, attn_sample_logits(logits, V, NULL, &warm, u));
    }
    assert_int_equal(attn_sample_logits(logits, V, NULL, &(attn_sampling){0}, 0.5f), V - 1);
    attn_config_free(&c);
    attn_model_free(&m);
}

/* A WordLevel tokenizer whose tokens are "t<id>" for the n ids given; unk:
 * the unknown token's id, or −1 for none. */
static attn_tokenizer *tokenizer_of(const int *ids, int n, int unk)
{
    char json[2048];
    size_t k = (size_t)snprintf(json, sizeof json, "{\"model\":{\"type\":\"WordLevel\",");
    if (unk >= 0) k += (size_t)snprintf(json + k, sizeof json - k, "\"unk_token\":\"t%d\",", unk);
    k += (size_t)snprintf(json + k, sizeof json - k, "\"vocab\":{");
    for (int i = 0; i < n; i++) k += (size_t)snprintf(json + k, sizeof json - k, "%s\"t%d\":%d", i ? "," : "", ids[i], ids[i]);
    snprintf(json + k, sizeof json - k, "}}}");
    attn_tokenizer *t;
    attn_error err;
    if (attn_tokenizer_parse(json, strlen(json), "t.json", &t, &err)) fail_msg("%s", err.msg);
    return t;
}

static const int EVERY_ID[V] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

/* <unk> is never chosen, even where it is the most likely token: not by
 * greedy decoding, not among the top k, not drawn at any temperature; the
 * others keep their order. allow_unk lets it back in. The generator leaves
 * out its model's own unknown token. */
static void test_sampling_never_unk(void **state)
{
    (void)state;
    enum { UNK = 4 };
    float logits[V];
    for (int v = 0; v < V; v++) logits[v] = (float)v * 0.1f;
    logits[UNK] = 5.0f; /* p(unk) ≈ 0.99 */
    attn_tokenizer *tok = tokenizer_of(EVERY_ID, V, UNK), *none = tokenizer_of(EVERY_ID, V, -1);
    attn_tokenizer *alone = tokenizer_of(EVERY_ID, 1, 0);
    const attn_sampling greedy = {0}, top1 = {1.0, 1, 3, false}, warm = {1.0, 0, 3, false}, hot = {100.0, 3, 3, false};
    assert_int_equal(attn_sample_logits(logits, V, tok, &greedy, 0.5f), V - 1);
    for (float u = 0; u < 1; u += 0.01f) {
        assert_int_equal(attn_sample_logits(logits, V, tok, &top1, u), V - 1);
        int w = attn_sample_logits(logits, V, tok, &warm, u), h = attn_sample_logits(logits, V, tok, &hot, u);
        assert_true(w != UNK && w >= 0 && w < V);
        assert_true(h >= V - 3); /* the top 3 without <unk>: V−3 .. V−1 */
    }
    /* asked for, it is back: the argmax, and drawn nearly always */
    attn_sampling with = greedy;
    with.allow_unk = true;
    assert_int_equal(attn_sample_logits(logits, V, tok, &with, 0.5f), UNK);
    with = warm;
    with.allow_unk = true;
    assert_int_equal(attn_sample_logits(logits, V, tok, &with, 0.5f), UNK);
    /* no unknown token: nothing is left out */
    assert_int_equal(attn_sample_logits(logits, V, none, &greedy, 0.5f), UNK);
    assert_int_equal(attn_sample_logits(logits, V, NULL, &greedy, 0.5f), UNK);
    /* a vocabulary of <unk> alone: it is all there is */
    assert_int_equal(attn_sample_logits(logits + UNK, 1, alone, &greedy, 0.5f), 0);
    attn_tokenizer_free(tok);
    attn_tokenizer_free(none);
    attn_tokenizer_free(alone);

    /* the generator reads its model's unknown token: id 0 in the fixture */
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    make_model(model_dir("unk"), 1, 2, 1, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("unk"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
    for (int step = 0; step < 6; step++) {
        for (int v = 0; v < V; v++) g.logits[v] = v == 0 ? 50.0f : (float)v; /* <unk> far ahead */
        int id;
        assert_int_equal(attn_generator_step(&g, &greedy, &id, &err), ATTN_OK);
        assert_int_equal(id, V - 1);
    }
    attn_generator_free(&g);
    assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
    for (int v = 0; v < V; v++) g.logits[v] = v == 0 ? 50.0f : (float)v;
    int id;
    assert_int_equal(attn_generator_step(&g, &(attn_sampling){.allow_unk = true}, &id, &err), ATTN_OK);
    assert_int_equal(id, 0);
    attn_generator_free(&g);
    attn_config_free(&c);
    attn_model_free(&m);
}

/* A checkpoint's vocab_size may be larger than its tokenizer (DeepSeek-V3:
 * 129,280 vs 128,815): the ids beyond, or between, have logits but no token.
 * They are never chosen, however heavy their logits, at any temperature or
 * top k (issue 21), and decoding skips them as tokenizers' decode does. */
static void test_ids_without_tokens(void **state)
{
    (void)state;
    static const int SOME[] = {0, 1, 2, 3, 4, 6, 7, 8}; /* no 5, none from 9 */
    attn_tokenizer *tok = tokenizer_of(SOME, 8, 0);
    float logits[V];
    for (int v = 0; v < V; v++) logits[v] = v == 5 || v >= 9 ? 50.0f : (float)v * 0.1f;
    const attn_sampling greedy = {0}, top3 = {1.0, 3, 1, false}, hot = {100.0, 0, 1, false}, all = {100.0, 0, 1, true};
    assert_int_equal(attn_sample_logits(logits, V, tok, &greedy, 0.5f), 8);
    int seen[V] = {0};
    for (float u = 0; u < 1; u += 0.01f) {
        int a = attn_sample_logits(logits, V, tok, &top3, u), b = attn_sample_logits(logits, V, tok, &hot, u);
        int c = attn_sample_logits(logits, V, tok, &all, u);
        assert_true(a >= 6 && a <= 8);                  /* the top 3 tokens: 6, 7, 8 */
        assert_true(b >= 1 && b <= 8 && b != 5);        /* no hole, no <unk> */
        assert_true(c >= 0 && c <= 8 && c != 5);        /* <unk> back in, still no hole */
        seen[b]++;
    }
    assert_true(seen[1] && seen[8]); /* at T = 100 the draws spread over every token */
    attn_tokenizer_free(tok);

    /* a model of 12 rows of logits whose tokenizer has 9 tokens (ids 0 .. 8) */
    const char *dir = model_dir("holes");
    attn_model m;
    attn_generator g;
    attn_config c;
    attn_error err;
    make_model(dir, 1, 2, 1, false, NULL, NULL);
    char text[sizeof TOKENIZER];
    memcpy(text, TOKENIZER, sizeof TOKENIZER);
    char *cut = strstr(text, ",\"a\":9");
    strcpy(cut, "}}}");
    write_text(dir, "tokenizer.json", text);
    assert_int_equal(attn_model_load(dir, &m, &err), ATTN_OK);
    assert_int_equal(attn_tokenizer_vocab_size(m.tok), 9);
    assert_int_equal(m.cfg.vocab, V);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat", &err);
    for (int t = 0; t < 2; t++) {
        assert_int_equal(attn_generator_init(&g, &m, &c, &err), ATTN_OK);
        g.trace_steps = t == 1;
        for (int step = 0; step < 12; step++) {
            for (int v = 9; v < V; v++) g.logits[v] = 80.0f; /* far ahead */
            int id;
            assert_int_equal(attn_generator_step(&g, t ? &greedy : &hot, &id, &err), ATTN_OK);
            assert_true(id >= 1 && id <= 8);
        }
        char *out;
        g.ids[g.n - 1] = 10; /* an id that is no token: skipped */
        assert_int_equal(attn_tokenizer_decode(m.tok, g.ids, g.n, true, &out, &err), ATTN_OK);
        assert_non_null(strstr(out, "the cat"));
        free(out);
        attn_generator_free(&g);
    }
    attn_config_free(&c);
    attn_model_free(&m);
}

/* Untraced steps (attn_kv_step) choose what traced steps choose, with the
 * same logits up to rounding, under each setting that changes a step: the
 * scale, the fill, a reversed mask, a window, dropout in training; with
 * float32 weights, and with BF16 ones at odd addresses (the step reads them
 * with wmat.c's row kernels, the traced pass widens panels for sgemm). */
static void test_untraced_steps(void **state)
{
    (void)state;
    static const char *const SETTINGS[][2] = {{NULL, NULL},          {"scale", "false"},
                                              {"mask_value", "-1e9"}, {"causal", "reversed"},
                                              {"sliding_window", "3"}, {"train", "true"},
                                              {"rope", "false"}};
    attn_model m;
    attn_error err;
    for (int bf16 = 0; bf16 < 2; bf16++) {
        make_model(model_dir("steps"), 3, 4, 2, false, NULL, NULL);
        if (bf16) model_to_bf16(model_dir("steps"), 1);
        assert_int_equal(attn_model_load(model_dir("steps"), &m, &err), ATTN_OK);
        assert_int_equal(m.layer[0].w_q.dtype, bf16 ? ATTN_ST_BF16 : ATTN_ST_F32);
        for (size_t s = 0; s < sizeof SETTINGS / sizeof *SETTINGS; s++) {
            attn_config c;
            attn_generator traced, fast;
            attn_config_init(&c);
            attn_config_set(&c, "text", "the cat", &err);
            if (SETTINGS[s][0]) assert_int_equal(attn_config_set(&c, SETTINGS[s][0], SETTINGS[s][1], &err), ATTN_OK);
            assert_int_equal(attn_generator_init(&traced, &m, &c, &err), ATTN_OK);
            assert_int_equal(attn_generator_init(&fast, &m, &c, &err), ATTN_OK);
            fast.trace_steps = false;
            attn_sampling greedy = {.seed = 1};
            for (int step = 0; step < 10; step++) {
                int a, b;
                assert_int_equal(attn_generator_step(&traced, &greedy, &a, &err), ATTN_OK);
                assert_int_equal(attn_generator_step(&fast, &greedy, &b, &err), ATTN_OK);
                assert_int_equal(a, b);
                for (int v = 0; v < V; v++) assert_float_equal(fast.logits[v], traced.logits[v], 1e-4);
            }
            /* the cache holds the same keys, values and inputs both ways */
            const attn_kv_cache *x = &traced.cache, *y = &fast.cache;
            assert_int_equal(x->n, y->n);
            for (int l = 0; l < x->layers; l++)
                for (int j = 0; j < x->g; j++)
                    for (int e = 0; e < x->n * x->k; e++) {
                        size_t at = (size_t)j * x->cap * x->k + e, bt = (size_t)j * y->cap * y->k + e;
                        assert_float_equal(x->keys[l][at], y->keys[l][bt], 1e-4);
                        assert_float_equal(x->values[l][at], y->values[l][bt], 1e-4);
                    }
            assert_int_equal(fast.trace.dims.P, 0); /* untraced: the prompt's trace stays */
            attn_generator_free(&traced);
            attn_generator_free(&fast);
            attn_config_free(&c);
        }
        attn_model_free(&m);
    }
}

/* The largest |x| of n floats, at least 1: the scale of a tolerance. */
static double scale_of(const float *x, int n)
{
    double mx = 1.0;
    for (int i = 0; i < n; i++) mx = fabs(x[i]) > mx ? fabs(x[i]) : mx;
    return mx;
}

/* Caches a and b hold the same first n positions, within tol. */
static void expect_same_cache(const attn_kv_cache *a, const attn_kv_cache *b, int n, double tol)
{
    assert_int_equal(a->n, n);
    assert_int_equal(b->n, n);
    for (int l = 0; l < a->layers; l++) {
        for (int e = 0; e < n * a->d; e++) assert_float_equal(a->x[l][e], b->x[l][e], tol);
        for (int j = 0; j < a->g; j++)
            for (int e = 0; e < n * a->k; e++) {
                size_t at = (size_t)j * a->cap * a->k + e, bt = (size_t)j * b->cap * b->k + e;
                assert_float_equal(a->keys[l][at], b->keys[l][bt], tol);
                assert_float_equal(a->values[l][at], b->values[l][bt], tol);
            }
    }
}

/* ids[0 .. n) through m with cfg's settings, traced (attn_model_trace_ids,
 * its keys and values appended to a cache) and untraced (attn_kv_prefill):
 * the last logits and the caches agree within tol (of the largest logit),
 * and so do `steps` untraced decoding steps after each. */
static void expect_prefill_matches(const attn_model *m, const attn_config *cfg, const int *ids, int n, int steps,
                                   double tol)
{
    attn_trace tr;
    attn_config run;
    attn_kv_cache a, b;
    attn_error err;
    int Vm = m->cfg.vocab;
    float *want = malloc((size_t)Vm * sizeof *want), *got = malloc((size_t)Vm * sizeof *got);
    assert_non_null(want);
    assert_non_null(got);
    assert_int_equal(attn_model_trace_ids(m, cfg, ids, n, NULL, &tr, &err), ATTN_OK);
    const attn_tensor *lg = attn_trace_stage(&tr, -1, ATTN_STAGE_LOGITS);
    assert_int_equal(attn_tensor_fill(lg, (size_t)n - 1, 1), 0);
    memcpy(want, lg->data + (size_t)(n - 1) * Vm, (size_t)Vm * sizeof *want);
    assert_int_equal(attn_kv_init(&a, m, &err), ATTN_OK);
    assert_int_equal(attn_kv_append(&a, &tr, &err), ATTN_OK);
    assert_int_equal(attn_model_run_config(m, cfg, &run, &err), ATTN_OK);
    assert_int_equal(attn_kv_init(&b, m, &err), ATTN_OK);
    assert_int_equal(attn_kv_prefill(&b, m, &run, ids, n, got, &err), ATTN_OK);
    double sc = scale_of(want, Vm);
    for (int v = 0; v < Vm; v++) assert_float_equal(got[v], want[v], tol * sc);
    expect_same_cache(&a, &b, n, tol * scale_of(a.x[0], n * a.d) * 10);
    for (int s = 0; s < steps && a.n < m->cfg.max_pos; s++) {
        int id = (ids[n - 1] + 3 * s + 1) % Vm;
        assert_int_equal(attn_kv_step(&a, m, &tr.cfg, id, want, &err), ATTN_OK);
        assert_int_equal(attn_kv_step(&b, m, &run, id, got, &err), ATTN_OK);
        sc = scale_of(want, Vm);
        for (int v = 0; v < Vm; v++) assert_float_equal(got[v], want[v], tol * sc);
    }
    attn_kv_free(&a);
    attn_kv_free(&b);
    attn_config_free(&run);
    attn_trace_free(&tr);
    free(want);
    free(got);
}

/* The untraced prefill equals the traced pass: last logits, the cache it
 * leaves and the decoding after it, under each setting that changes a pass,
 * for MHA, GQA and MQA, F32 and BF16 weights at odd addresses; from 1 token
 * to the model's every position, in one call or two. */
static void test_untraced_prefill(void **state)
{
    (void)state;
    static const char *const SETTINGS[][2] = {{NULL, NULL},           {"scale", "false"},
                                              {"mask_value", "-1e9"},  {"causal", "reversed"},
                                              {"causal", "false"},     {"sliding_window", "3"},
                                              {"rope", "false"},       {"softmax_guard", "false"}};
    static const int KV[] = {4, 2, 1};
    const int ids[16] = {1, 3, 4, 5, 6, 3, 7, 8, 9, 10, 11, 5, 4, 3, 6, 7};
    attn_model m;
    attn_error err;
    for (int bf16 = 0; bf16 < 2; bf16++)
        for (int g = 0; g < 3; g++) {
            make_model(model_dir("prefill"), 2, 4, KV[g], g == 1, NULL, NULL);
            if (bf16) model_to_bf16(model_dir("prefill"), 1);
            assert_int_equal(attn_model_load(model_dir("prefill"), &m, &err), ATTN_OK);
            for (size_t s = 0; s < sizeof SETTINGS / sizeof *SETTINGS; s++) {
                attn_config c;
                attn_config_init(&c);
                if (SETTINGS[s][0]) assert_int_equal(attn_config_set(&c, SETTINGS[s][0], SETTINGS[s][1], &err), ATTN_OK);
                expect_prefill_matches(&m, &c, ids, 7, 5, 1e-5);
                attn_config_free(&c);
            }
            attn_config c;
            attn_config_init(&c);
            expect_prefill_matches(&m, &c, ids, 1, 3, 1e-5);  /* one token */
            expect_prefill_matches(&m, &c, ids, 16, 0, 1e-5); /* every position the model has */
            /* in two calls, the second over the first's cache: the same */
            attn_config run;
            attn_kv_cache one, two;
            float l1[V], l2[V];
            assert_int_equal(attn_model_run_config(&m, &c, &run, &err), ATTN_OK);
            assert_int_equal(attn_kv_init(&one, &m, &err), ATTN_OK);
            assert_int_equal(attn_kv_init(&two, &m, &err), ATTN_OK);
            assert_int_equal(attn_kv_prefill(&one, &m, &run, ids, 11, l1, &err), ATTN_OK);
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids, 4, l2, &err), ATTN_OK);
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids + 4, 7, l2, &err), ATTN_OK);
            for (int v = 0; v < V; v++) assert_float_equal(l1[v], l2[v], 1e-5 * scale_of(l1, V));
            expect_same_cache(&one, &two, 11, 1e-5);
            /* past the model's positions, an id outside its vocabulary, dropout in training: refused */
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids, 6, l2, &err), ATTN_ERR_CONFIG);
            assert_non_null(strstr(err.msg, "16 positions"));
            const int bad[] = {3, V};
            assert_int_equal(attn_kv_prefill(&two, &m, &run, bad, 2, l2, &err), ATTN_ERR_CONFIG);
            assert_non_null(strstr(err.msg, "outside"));
            assert_int_equal(two.n, 11); /* a refusal appends nothing */
            run.train = true;
            run.dropout = 0.5f;
            assert_int_equal(attn_kv_prefill(&two, &m, &run, ids, 2, l2, &err), ATTN_ERR_CONFIG);
            assert_non_null(strstr(err.msg, "dropout"));
            attn_kv_free(&one);
            attn_kv_free(&two);
            attn_config_free(&run);
            attn_config_free(&c);
            attn_model_free(&m);
        }
}

/* A prompt of 700 positions goes through in two chunks (512, then 188 over
 * the first's cache), each in blocks of queries: the same as one traced pass. */
static void test_untraced_prefill_chunks(void **state)
{
    (void)state;
    attn_model m;
    attn_config c;
    attn_error err;
    enum { N = 700 };
    int *ids = malloc(N * sizeof *ids);
    assert_non_null(ids);
    for (int i = 0; i < N; i++) ids[i] = 3 + (i * 7 + i / 5) % (V - 3);
    make_model(model_dir("long"), 2, 4, 2, false, NULL, NULL);
    config_with(model_dir("long"), "max_position_embeddings", "\"max_position_embeddings\": 1024");
    assert_int_equal(attn_model_load(model_dir("long"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    expect_prefill_matches(&m, &c, ids, N, 2, 2e-5);
    attn_config_set(&c, "sliding_window", "100", &err);
    expect_prefill_matches(&m, &c, ids, N, 2, 2e-5);
    attn_config_free(&c);
    attn_model_free(&m);
    free(ids);
}

/* A generator with nothing traced writes what one with its prompt traced
 * writes; with dropout in training it traces the prompt. */
static void test_untraced_generator(void **state)
{
    (void)state;
    attn_model m;
    attn_error err;
    make_model(model_dir("ungen"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("ungen"), &m, &err), ATTN_OK);
    for (int train = 0; train < 2; train++) {
        attn_config c;
        attn_generator traced, fast;
        attn_config_init(&c);
        attn_config_set(&c, "text", "the cat sat on", &err);
        if (train) {
            attn_config_set(&c, "train", "true", &err);
            attn_config_set(&c, "dropout", "0.3", &err);
        }
        assert_int_equal(attn_generator_init(&traced, &m, &c, &err), ATTN_OK);
        assert_int_equal(attn_generator_init_untraced(&fast, &m, &c, &err), ATTN_OK);
        traced.trace_steps = false;
        assert_false(fast.trace_steps);
        assert_int_equal(fast.n, traced.n);
        assert_memory_equal(fast.ids, traced.ids, (size_t)fast.n * sizeof *fast.ids);
        assert_int_equal(fast.trace.n_tensors > 0, train); /* traced only for dropout */
        for (int step = 0; step < 8; step++) {
            int a, b;
            for (int v = 0; v < V; v++) assert_float_equal(fast.logits[v], traced.logits[v], 1e-5 * scale_of(traced.logits, V));
            assert_int_equal(attn_generator_step(&traced, &(attn_sampling){.seed = 1}, &a, &err), ATTN_OK);
            assert_int_equal(attn_generator_step(&fast, &(attn_sampling){.seed = 1}, &b, &err), ATTN_OK);
            assert_int_equal(a, b);
        }
        attn_generator_free(&traced);
        attn_generator_free(&fast);
        attn_config_free(&c);
    }
    attn_config c;
    attn_generator g;
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat|a dog", &err);
    assert_int_equal(attn_generator_init_untraced(&g, &m, &c, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "one text"));
    attn_config_free(&c);
    attn_model_free(&m);
}

/* The shipped models (F16; MHA, GQA and MQA; a prompt of 120 positions, so
 * MQA's attention takes it in two blocks of queries): the untraced prefill's
 * last logits and cache are the traced pass's. */
static void test_untraced_prefill_shipped(void **state)
{
    (void)state;
    static const char *const MODELS[] = {"brown", "tang", "tang-mha", "tang-mqa", "tang-nocausal"};
    for (size_t i = 0; i < sizeof MODELS / sizeof *MODELS; i++) {
        attn_model m;
        attn_config c;
        attn_error err;
        int *ids, n;
        assert_int_equal(attn_model_load(MODELS[i], &m, &err), ATTN_OK);
        attn_config_init(&c);
        assert_non_null(m.example);
        char *text = malloc(strlen(m.example) * 40 + 1);
        assert_non_null(text);
        text[0] = '\0';
        for (int r = 0; r < 40; r++) strcat(text, m.example);
        attn_config_set(&c, "text", text, &err);
        free(text);
        /* a text longer than the model's positions, cut to 120 ids */
        assert_int_equal(attn_tokenizer_encode(m.tok, c.text, true, &ids, &n, &err), ATTN_OK);
        assert_true(n >= 120);
        expect_prefill_matches(&m, &c, ids, 120, 4, 2e-5);
        free(ids);
        attn_config_free(&c);
        attn_model_free(&m);
    }
}

/* Growing the cache keeps every head's rows; a trace that is not the next
 * positions of the cached row is refused. */
static void test_kv_cache_grows(void **state)
{
    (void)state;
    attn_model m;
    attn_config c;
    attn_error err;
    attn_trace tr;
    attn_kv_cache kc;
    make_model(model_dir("grow"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("grow"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat sat on the mat", &err);
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &tr, &err), ATTN_OK);
    assert_int_equal(attn_kv_init(&kc, &m, &err), ATTN_OK);
    assert_int_equal(attn_kv_append(&kc, &tr, &err), ATTN_OK);
    int n = kc.n;
    assert_int_equal(n, tr.dims.s);
    assert_int_equal(attn_kv_append(&kc, &tr, &err), ATTN_ERR_CONFIG); /* P = 0, but n positions are held */
    assert_non_null(strstr(err.msg, "not the next positions"));
    assert_int_equal(attn_kv_reserve(&kc, 1000, &err), ATTN_OK);
    assert_true(kc.cap >= 1000);
    for (int l = 0; l < kc.layers; l++) {
        const float *k, *v;
        attn_model_trace_kv(&tr, l, &k, &v);
        for (int j = 0; j < kc.g; j++) {
            assert_memory_equal(kc.keys[l] + (size_t)j * kc.cap * kc.k, k + (size_t)j * n * kc.k, n * kc.k * sizeof *k);
            assert_memory_equal(kc.values[l] + (size_t)j * kc.cap * kc.k, v + (size_t)j * n * kc.k, n * kc.k * sizeof *v);
        }
        assert_memory_equal(kc.x[l], attn_trace_stage(&tr, l, ATTN_STAGE_X)->data, (size_t)n * kc.d * sizeof(float));
    }
    float logits[V];
    assert_int_equal(attn_kv_step(&kc, &m, &tr.cfg, V, logits, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "outside"));
    assert_int_equal(attn_kv_step(&kc, &m, &tr.cfg, 3, logits, &err), ATTN_OK);
    assert_int_equal(kc.n, n + 1);
    attn_kv_free(&kc);
    attn_kv_free(&kc); /* twice is harmless */
    attn_trace_free(&tr);
    attn_config_free(&c);
    attn_model_free(&m);
}

/* A prompt too long for every layer's attention weights keeps one layer's
 * (layer 0 by default, another on request) and computes the rest in a
 * scratch buffer: the numbers are those of the full trace. */
static void test_one_layer_of_weights(void **state)
{
    (void)state;
    attn_model m;
    attn_config c;
    attn_error err;
    attn_trace full, lean, other;
    make_model(model_dir("lean"), 2, 4, 2, false, NULL, NULL);
    assert_int_equal(attn_model_load(model_dir("lean"), &m, &err), ATTN_OK);
    attn_config_init(&c);
    attn_config_set(&c, "text", "the cat sat on the mat the cat", &err);
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &full, &err), ATTN_OK);
    double all, one;
    c.model = strdup(model_dir("lean"));
    assert_int_equal(attn_trace_estimate(&c, &all, &err), ATTN_OK);
    c.qk_keep = 1;
    assert_int_equal(attn_trace_estimate(&c, &one, &err), ATTN_OK);
    assert_true(one < all);
    /* a limit between the two: layer 0 keeps its weights, layer 1 does not */
    c.qk_keep = 0;
    c.max_bytes = (one + all) / 2;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &lean, &err), ATTN_OK);
    assert_int_equal(lean.cfg.qk_keep, 1);
    assert_non_null(attn_trace_find(&lean, "layers.0.weights"));
    assert_null(attn_trace_find(&lean, "layers.1.weights"));
    assert_null(attn_trace_find(&lean, "layers.1.scores"));
    assert_non_null(attn_trace_find(&lean, "layers.1.context"));
    const attn_tensor *a = attn_trace_find(&full, "logits"), *b = attn_trace_find(&lean, "logits");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    a = attn_trace_find(&full, "layers.0.weights"), b = attn_trace_find(&lean, "layers.0.weights");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    assert_true(attn_model_trace_full_bytes(&lean) > c.max_bytes);
    /* the same limit, layer 1 preferred: it keeps its weights instead */
    attn_trace preferred;
    c.qk_prefer = 1;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &preferred, &err), ATTN_OK);
    assert_int_equal(preferred.cfg.qk_keep, 2);
    assert_null(attn_trace_find(&preferred, "layers.0.weights"));
    assert_non_null(attn_trace_find(&preferred, "layers.1.weights"));
    attn_trace_free(&preferred);
    c.qk_prefer = 0;
    /* layer 1's on request */
    c.qk_keep = 2;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &other, &err), ATTN_OK);
    assert_null(attn_trace_find(&other, "layers.0.weights"));
    a = attn_trace_find(&full, "layers.1.weights"), b = attn_trace_find(&other, "layers.1.weights");
    assert_memory_equal(a->data, b->data, a->count * sizeof(float));
    assert_int_equal(other.n_masked, full.n_masked);
    attn_trace_free(&other);
    /* below even one layer's: refused, with the size */
    c.qk_keep = 0;
    c.max_bytes = one / 2;
    attn_status st = attn_model_trace_run(&m, &c, NULL, &other, &err);
    assert_int_equal(st, ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "even with one layer's attention weights"));
    c.max_bytes = 0;
    c.qk_keep = 3;
    assert_int_equal(attn_model_trace_run(&m, &c, NULL, &other, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "layer 2 asked for, of a model of 2 layers"));
    attn_trace_free(&full);
    attn_trace_free(&lean);
    attn_config_free(&c);
    attn_model_free(&m);
}

static void test_save_and_load(void **state)
{
    (void)state;
    attn_trace tr, back;
    attn_error err;
    char path[512];
    make_model(model_dir("io"), 2, 2, 1, true, NULL, NULL);
    run_text(model_dir("io"), "the cat|a dog ran", "left", 0, true, &tr);
    snprintf(path, sizeof path, "%s/io.safetensors", ROOT);
    assert_int_equal(attn_trace_save(&tr, path, &err), ATTN_OK);
    if (attn_trace_load(path, &back, &err)) fail_msg("load: %s", err.msg);
    assert_int_equal(back.n_tensors, tr.n_tensors);
    assert_int_equal(back.n_layers, 2);
    assert_int_equal(back.dims.V, V);
    assert_true(attn_trace_is_model(&back));
    for (int i = 0; i < tr.n_tensors; i++) {
        assert_string_equal(back.tensors[i].name, tr.tensors[i].name);
        assert_int_equal(back.tensors[i].layer, tr.tensors[i].layer);
    }
    assert_memory_equal(back.token_ids, tr.token_ids, (size_t)tr.dims.b * tr.dims.L * sizeof(int));
    assert_string_equal(back.model_config, tr.model_config);
    assert_string_equal(back.cfg.model, model_dir("io"));
    assert_string_equal(back.cfg.text, "the cat|a dog ran");
    attn_trace_free(&back);
    attn_trace_free(&tr);
}

/* Every setting is recorded whole (issue 21): a text and a model folder far
 * over 64 bytes, Chinese, so a cut would fall inside a character and leave
 * a header that is not UTF-8. */
static void test_long_settings_recorded_whole(void **state)
{
    (void)state;
    const char *text = "the cat 春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。 sat|a dog ran 独在异乡为异客，每逢佳节倍思亲。";
    const char *dir = model_dir("io-一个名字很长很长很长的模型文件夹-一个名字很长很长很长的模型文件夹");
    attn_trace tr, back;
    attn_error err;
    char path[512];
    make_model(dir, 1, 2, 1, true, NULL, NULL);
    run_text(dir, text, "right", 0, true, &tr);
    snprintf(path, sizeof path, "%s/long.safetensors", ROOT);
    assert_int_equal(attn_trace_save(&tr, path, &err), ATTN_OK);
    attn_st_file f;
    if (attn_st_read(path, &f, &err)) fail_msg("read: %s", err.msg);
    assert_string_equal(attn_st_meta(&f, "text"), text);
    assert_string_equal(attn_st_meta(&f, "model"), dir);
    attn_st_free(&f);
    FILE *fp = fopen(path, "rb"); /* the header as bytes: UTF-8 throughout */
    unsigned char len[8];
    assert_non_null(fp);
    assert_int_equal(fread(len, 1, 8, fp), 8);
    size_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | len[i];
    char *header = malloc(n);
    assert_non_null(header);
    assert_int_equal(fread(header, 1, n, fp), n);
    fclose(fp);
    assert_true(attn_utf8_valid(header, n));
    free(header);
    if (attn_trace_load(path, &back, &err)) fail_msg("load: %s", err.msg);
    assert_string_equal(back.cfg.text, text);
    assert_string_equal(back.cfg.model, dir);
    attn_trace_free(&back);
    attn_trace_free(&tr);
}

static void test_config_errors(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr;
    attn_error err;
    make_model(model_dir("cfg"), 1, 2, 2, true, NULL, NULL);
    static const struct { const char *key, *value, *msg; } cases[] = {
        {"source_tokens", "a b", "cross-attention needs one attention layer"},
        {"past", "9", "past (9) must be less than the 3 tokens"},
        {"text", "the cat | ", "text: row 2 is empty"},
        {"text", "|||", "text: row 1 is empty"}, /* four rows from three bars: len/2 + 2 held three (issue 37) */
        {"text", "the||||||||", "text: row 2 is empty"}, /* nine rows in 11 bytes: room was made for 7 */
        {"text", "the the the the the the the the the the the the the the the the", "more than cfg's 16 positions"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attn_config_init(&c);
        attn_config_set(&c, "model", model_dir("cfg"), &err);
        attn_config_set(&c, "text", "the cat", &err);
        assert_int_equal(attn_config_set(&c, cases[i].key, cases[i].value, &err), ATTN_OK);
        if (attn_trace_run(&c, NULL, &tr, &err) == ATTN_OK) fail_msg("%s = %s ran", cases[i].key, cases[i].value);
        if (!strstr(err.msg, cases[i].msg)) fail_msg("'%s' does not contain '%s'", err.msg, cases[i].msg);
        attn_config_free(&c);
    }
}

/* A model's example.txt is the text of a run without --text, and is checked
 * as --text is (issue 37): invalid UTF-8 is refused, not read as <unk>, and
 * bars split it into rows the same way, "|||" into four empty ones. */
static void test_example_checked(void **state)
{
    (void)state;
    static const struct { const char *example, *msg; } CASES[] = {
        {"the \xff cat", "example.txt: not valid UTF-8 at byte offset 4 (0xFF)"},
        {"|||", "example.txt: row 1 is empty"},
        {"the|||cat", "example.txt: row 2 is empty"},
    };
    attn_config c;
    attn_trace tr;
    attn_error err;
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        make_model(model_dir("example"), 1, 2, 2, true, NULL, NULL);
        write_text(model_dir("example"), "example.txt", CASES[i].example);
        attn_config_init(&c);
        assert_int_equal(attn_config_set(&c, "model", model_dir("example"), &err), ATTN_OK);
        if (attn_trace_run(&c, NULL, &tr, &err) == ATTN_OK) fail_msg("example '%s' ran", CASES[i].example);
        if (!strstr(err.msg, CASES[i].msg)) fail_msg("'%s' does not contain '%s'", err.msg, CASES[i].msg);
        attn_config_free(&c);
    }
}

/* dir/file with every `from` in it replaced by `to` (the header of a
 * safetensors file too: its length is rewritten, the data is unchanged). */
static void replace_in(const char *dir, const char *file, const char *from, const char *to)
{
    char path[PATH_MAX], *text, *out;
    size_t n;
    attn_error err;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    assert_int_equal(attn_file_read(path, 1u << 26, &text, &n, &err), ATTN_OK);
    bool st = strstr(file, ".safetensors") != NULL;
    size_t head = 0, skip = st ? 8 : 0;
    for (int i = 7; st && i >= 0; i--) head = head << 8 | (unsigned char)text[i];
    size_t end = st ? 8 + head : n, fl = strlen(from), tl = strlen(to), o = 0;
    assert_non_null(out = malloc(n + 64 * (tl + 1)));
    o = skip;
    for (size_t i = skip; i < end;) {
        if (i + fl <= end && !memcmp(text + i, from, fl)) {
            memcpy(out + o, to, tl);
            o += tl;
            i += fl;
        } else out[o++] = text[i++];
    }
    for (int i = 0; st && i < 8; i++) out[i] = (char)((o - 8) >> (8 * i) & 0xff);
    memcpy(out + o, text + end, n - end);
    o += n - end;
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(out, 1, o, f), o);
    fclose(f);
    free(text);
    free(out);
}

/* One JSON rule for every file a model folder holds (issue 37): data after
 * the value (two concatenated objects), a key that holds a NUL (cJSON cut
 * "model.norm.weight\u0000 renamed" to "model.norm.weight", a tensor the
 * model wants) and a key given twice are refused, naming the file. */
static void test_one_json_rule(void **state)
{
    (void)state;
    const char *dir = model_dir("rule");
    static const struct { const char *file, *from, *to, *msg; } CASES[] = {
        {"config.json", "\"eos_token_id\":2}", "\"eos_token_id\":2}\n{\"num_hidden_layers\":9}",
         "config.json: data after the JSON value"},
        {"config.json", "\"hidden_size\":", "\"hidden\\u0000_size\":", "config.json: a key holds a NUL character"},
        {"tokenizer.json", "\"decoder\":null,", "\"decoder\":null,\"decoder\":null,", "key 'decoder' appears twice"},
        {"tokenizer.json", "\"ran\":11}}}", "\"ran\":11}}} {}", "tokenizer.json: data after the JSON value"},
        {"model.safetensors", "\"model.norm.weight\"", "\"model.norm.weight\\u0000 renamed\"",
         "model.safetensors: header: a key holds a NUL character (\\u0000)"},
        {"model.safetensors", "}}", "}}{\"x\":1}", "model.safetensors: header: data after the JSON value"},
        {"eval.json", "}", "}{}", "eval.json: data after the JSON value"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        make_model(dir, 1, 2, 2, true, NULL, NULL);
        if (!strcmp(CASES[i].file, "eval.json")) write_text(dir, "eval.json", "{\"variant\": \"base\"}");
        replace_in(dir, CASES[i].file, CASES[i].from, CASES[i].to);
        expect_load_error(dir, CASES[i].msg);
    }
    /* blanks after the value are no data: HF pads a safetensors header with spaces */
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/eval.json", dir);
    unlink(path);
    make_model(dir, 1, 2, 2, true, NULL, NULL);
    replace_in(dir, "config.json", "\"eos_token_id\":2}", "\"eos_token_id\":2}\n \t\r\n");
    attn_model m;
    attn_error err;
    if (attn_model_load(dir, &m, &err)) fail_msg("%s", err.msg);
    attn_model_free(&m);
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

/* Writes shard k of an index test: n one-float tensors "s<k>.t<i>". */
static void write_many(const char *dir, int k, int n)
{
    char (*names)[24] = malloc((size_t)n * sizeof *names), path[PATH_MAX];
    attn_st_tensor *t = malloc((size_t)n * sizeof *t);
    static const int64_t one[1] = {1};
    static const float zero = 0;
    attn_error err;
    assert_true(names && t);
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "s%02d.t%04d", k, i);
        t[i] = (attn_st_tensor){names[i], 1, one, &zero};
    }
    snprintf(path, sizeof path, "%s/s%02d.safetensors", dir, k);
    assert_int_equal(attn_st_write(path, t, n, NULL, 0, &err), ATTN_OK);
    free(names);
    free(t);
}

/* An index's checks are look-ups in a table (issue 37): 16 shards of 4,096
 * tensors, the last of them one the index does not list, took each tensor a
 * walk through the whole weight_map (2^32 comparisons, past a minute at 64
 * shards); now the load is refused, naming that tensor, in well under a
 * second. The same index listing every tensor opens. */
static void test_index_lookups_hashed(void **state)
{
    (void)state;
    enum { SHARDS = 16, EACH = ATTN_ST_MAX_TENSORS };
    const char *dir = model_dir("wide");
    size_t cap = (size_t)SHARDS * EACH * 40 + 64, n = 0;
    char *index = malloc(cap);
    assert_non_null(index);
    mkdir(dir, 0755);
    for (int k = 0; k < SHARDS; k++) write_many(dir, k, EACH);
    n += (size_t)snprintf(index + n, cap - n, "{\"weight_map\": {");
    for (int k = 0; k < SHARDS; k++)
        for (int i = 0; i < EACH; i++)
            n += (size_t)snprintf(index + n, cap - n, "%s\"s%02d.t%04d\": \"s%02d.safetensors\"", k || i ? ", " : "",
                                  k, i, k);
    snprintf(index + n, cap - n, "}}");
    write_text(dir, "model.safetensors.index.json", index);
    attn_ckpt c;
    attn_error err;
    if (attn_ckpt_open(dir, &c, &err)) fail_msg("every tensor listed: %s", err.msg);
    attn_ckpt_free(&c);
    /* the last tensor of the last shard unlisted: index[n - 2 .. n) closed the map */
    char *cut = strrchr(index, ',');
    snprintf(cut, cap - (size_t)(cut - index), "}}");
    write_text(dir, "model.safetensors.index.json", index);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(attn_ckpt_open(dir, &c, &err), ATTN_ERR_FORMAT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    char want[128];
    snprintf(want, sizeof want, "s%02d.safetensors holds 's%02d.t%04d', which model.safetensors.index.json does not "
             "list there", SHARDS - 1, SHARDS - 1, EACH - 1);
    if (!strstr(err.msg, want)) fail_msg("'%s' does not contain '%s'", err.msg, want);
    if (took > 3.0) fail_msg("refusing the index took %.1f s: a look-up walks the tensors", took);
    free(index);
}

int main(void)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(ROOT, sizeof ROOT, "%s/attnlab-model-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(ROOT)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_trained_causal),
        cmocka_unit_test(test_bad_folders),
        cmocka_unit_test(test_long_paths),
        cmocka_unit_test(test_tensor_in_two_shards),
        cmocka_unit_test(test_config_kinds),
        cmocka_unit_test(test_weights_must_be_numbers),
        cmocka_unit_test(test_generate_refuses_nan_logits),
        cmocka_unit_test(test_trace_stages),
        cmocka_unit_test(test_padding_and_cache),
        cmocka_unit_test(test_lazy_head_rows),
        cmocka_unit_test(test_generate_equals_full_passes),
        cmocka_unit_test(test_sampling_never_unk),
        cmocka_unit_test(test_ids_without_tokens),
        cmocka_unit_test(test_untraced_steps),
        cmocka_unit_test(test_kv_cache_grows),
        cmocka_unit_test(test_untraced_prefill),
        cmocka_unit_test(test_untraced_prefill_chunks),
        cmocka_unit_test(test_untraced_generator),
        cmocka_unit_test(test_untraced_prefill_shipped),
        cmocka_unit_test(test_one_layer_of_weights),
        cmocka_unit_test(test_save_and_load),
        cmocka_unit_test(test_long_settings_recorded_whole),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_example_checked),
        cmocka_unit_test(test_one_json_rule),
        cmocka_unit_test(test_tied_head_shape),
        cmocka_unit_test(test_index_lookups_hashed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ROOT);
    if (system(cmd)) return 1;
    return rc;
}
