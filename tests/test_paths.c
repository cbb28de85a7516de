/* test_paths.c — paths formatted whole or not at all (paths.h): one that fits
 * kept, one byte more refused and named by its ends; a model folder whose
 * files' paths do not fit is refused, never read cut; a models' folder too
 * long is none. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "engine/base/paths.h"
#include "engine/base/utf8.h"
#include "engine/formats/safetensors.h"
#include "engine/model/model.h"
#include "model_tests_fixture.h"

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
    char found[PATH_MAX] = "x";
    assert_null(attn_model_root(found, sizeof found));
    assert_string_equal(found, "");
    assert_int_not_equal(attn_model_load("short", &m, &err), ATTN_OK);
    assert_non_null(strstr(err.msg, "the models' folder ($ATTNLAB_MODELS or the installed one) has a path longer than"));
    unsetenv("ATTNLAB_MODELS");
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_paths),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
