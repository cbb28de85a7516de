/* model_tests_fixture.h — what the engine's model tests share (test_model,
 * test_model_config, test_checkpoint, test_paths, test_json, test_head,
 * test_model_run, test_kv_cache, test_generate, test_safetensors): ROOT, a
 * fresh folder for their model folders, made and removed by make_root and
 * remove_root (the group's set-up and tear-down); a folder in it by name; a
 * load expected to fail; a run of a text; and the edits the tests make to a
 * folder's files. Includes model_fixture.h (make_model). Static: include it
 * once per program, after cmocka.h. */
#ifndef TEST_MODEL_TESTS_FIXTURE_H
#define TEST_MODEL_TESTS_FIXTURE_H

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "engine/base/fileio.h"
#include "engine/base/paths.h"
#include "engine/formats/safetensors.h"
#include "engine/model/model.h"
#include "engine/run/forward.h"
#include "model_fixture.h"

static char ROOT[256];

/* cmocka group set-up: ROOT, a new folder under $ATTNLAB_TEST_TMP (or /tmp). */
static inline int make_root(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(ROOT, sizeof ROOT, "%s/attnlab-model-XXXXXX", tmp ? tmp : "/tmp");
    return mkdtemp(ROOT) ? 0 : -1;
}

/* cmocka group tear-down: ROOT removed with everything in it. */
static inline int remove_root(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", ROOT);
    return system(cmd) ? -1 : 0;
}

/* ROOT/name: the last four asked for stay valid. */
static inline const char *model_dir(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", ROOT, name);
    return p;
}

/* Loading dir fails with one line that contains msg. */
static inline void expect_load_error(const char *dir, const char *msg)
{
    attn_model m;
    attn_error err = {0};
    if (attn_model_load(dir, &m, &err) == ATTN_OK) fail_msg("%s loaded; expected '%s'", dir, msg);
    if (!strstr(err.msg, msg)) fail_msg("'%s' does not contain '%s'", err.msg, msg);
    assert_null(strchr(err.msg, '\n'));
}

/* Copies file from dir to dir2/file2; the paths may be PATH_MAX long. */
static inline void copy_file(const char *dir, const char *file, const char *dir2, const char *file2)
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

/* dir's config.json as make_model wrote it, without key, then `extra` appended
 * ("\"key\": value", or "" for none) . */
static inline void config_with(const char *dir, const char *key, const char *extra)
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

static inline void run_text(const char *dir, const char *text, const char *pad_side, int past, bool pad_mask,
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

/* Sets elements [at, at + n) of tensor `name` (F32) in dir's model.safetensors to v. */
static inline void poke_weights(const char *dir, const char *name, size_t at, size_t n, float v)
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

/* The largest |x| of n floats, at least 1: the scale of a tolerance. */
static inline double scale_of(const float *x, int n)
{
    double mx = 1.0;
    for (int i = 0; i < n; i++) mx = fabs(x[i]) > mx ? fabs(x[i]) : mx;
    return mx;
}

/* dir/file with every `from` in it replaced by `to` (the header of a
 * safetensors file too: its length is rewritten, the data is unchanged). */
static inline void replace_in(const char *dir, const char *file, const char *from, const char *to)
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

#endif
