/* test_checkpoint.c — checkpoints split into shards (checkpoint.h): a tensor
 * in two shards refused, and an index's checks done by look-ups. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

#include "engine/formats/checkpoint.h"
#include "engine/formats/safetensors.h"
#include "model_tests_fixture.h"

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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tensor_in_two_shards),
        cmocka_unit_test(test_index_lookups_hashed),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
