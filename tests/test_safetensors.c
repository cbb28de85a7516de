/* test_safetensors.c — trace files (safetensors.h, trace_io.h): round trip,
 * a model's trace saved and read back with its settings whole, files from
 * other programs, and malformed or hostile files answered with a clear error. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "engine/base/mapping.h"
#include "engine/base/utf8.h"
#include "engine/formats/safetensors.h"
#include "engine/formats/trace_io.h"
#include "engine/run/forward.h"
#include "engine/trace/explain.h"
#include "layers_fixture.h"
#include "model_tests_fixture.h"

static char path_buf[512];

static const char *tmp_path(const char *name)
{
    const char *dir = getenv("ATTNLAB_TEST_TMP");
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir ? dir : "/tmp", name);
    return path_buf;
}

/* Writes an 8-byte length (header_len, or the real length if UINT64_MAX),
 * the header text, then data_len bytes of data. */
static const char *write_raw(const char *name, const char *header, uint64_t header_len, size_t data_len)
{
    const char *p = tmp_path(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    uint64_t n = header_len == UINT64_MAX ? strlen(header) : header_len;
    for (int i = 0; i < 8; i++) fputc((int)((n >> (8 * i)) & 0xff), f);
    fwrite(header, 1, strlen(header), f);
    for (size_t i = 0; i < data_len; i++) fputc(0, f);
    fclose(f);
    return p;
}

static void test_round_trip(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr, back;
    attn_error err;
    attn_config_init(&c);
    attn_config_set(&c, "pad_side", "left", &err);
    attn_config_set(&c, "rope", "on", &err);
    attn_config_set(&c, "past", "2", &err);
    attn_config_set(&c, "heads", "4", &err);
    attn_config_set(&c, "kv_heads", "2", &err);
    attn_config_set(&c, "train", "true", &err);
    attn_config_set(&c, "mask_value", "-1e9", &err);
    attn_config_set(&c, "softmax_guard", "false", &err);
    attn_config_set(&c, "scale", "false", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    const char *p = tmp_path("roundtrip.safetensors");
    if (attn_trace_save(&tr, p, &err)) fail_msg("%s", err.msg);
    if (attn_trace_load(p, &back, &err)) fail_msg("%s", err.msg);

    assert_int_equal(back.n_tensors, tr.n_tensors);
    assert_memory_equal(&back.dims, &tr.dims, sizeof tr.dims);
    for (int i = 0; i < tr.n_tensors; i++) {
        assert_string_equal(back.tensors[i].name, tr.tensors[i].name);
        assert_ptr_equal(back.tensors[i].info, tr.tensors[i].info);
        assert_int_equal(back.tensors[i].count, tr.tensors[i].count);
        assert_memory_equal(back.tensors[i].data, tr.tensors[i].data, tr.tensors[i].count * sizeof(float));
    }
    assert_int_equal(back.tokens.rows, 2);
    assert_string_equal(attn_tokens_at(&back.tokens, 1, 0), "<pad>");
    assert_string_equal(attn_tokens_at(&back.tokens, 0, 0), "你");
    assert_int_equal(back.tokens.lengths[1], 3);
    assert_string_equal(back.cfg.tokens, "你 是 一 只 猫 娘 | 我 爱 AI");
    assert_true(back.cfg.rope && back.cfg.train && back.cfg.pad_side == ATTN_PAD_LEFT);
    assert_true(back.cfg.mask_value == -1e9f);
    assert_false(back.cfg.softmax_guard);
    assert_false(back.cfg.scale);
    assert_int_equal(back.n_masked, tr.n_masked);
    assert_memory_equal(back.masked_rows, tr.masked_rows, (size_t)tr.n_masked * 2 * sizeof(int));
    attn_trace_free(&back);
    attn_trace_free(&tr);
    attn_config_free(&c);
    unlink(p);
}

/* A file written by another program with contract names but no metadata. */
static void test_foreign_file_without_metadata(void **state)
{
    (void)state;
    float scores[2 * 3 * 3] = {0}, mask[3 * 3], weights[2 * 3 * 3] = {0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            mask[i * 3 + j] = j > i ? -INFINITY : 0.0f;
            for (int h = 0; h < 2; h++) weights[(h * 3 + i) * 3 + j] = j > i ? 0.0f : 1.0f / (float)(i + 1);
        }
    int64_t s4[] = {1, 2, 3, 3}, m4[] = {1, 1, 3, 3}, other[] = {5};
    float extra[5] = {1, 2, 3, 4, 5};
    attn_st_tensor ts[] = {{"scores", 4, s4, scores}, {"mask", 4, m4, mask}, {"weights", 4, s4, weights},
                           {"my_probe", 1, other, extra}};
    attn_error err;
    const char *p = tmp_path("foreign.safetensors");
    assert_int_equal(attn_st_write(p, ts, 4, NULL, 0, &err), ATTN_OK);
    attn_trace tr;
    if (attn_trace_load(p, &tr, &err)) fail_msg("%s", err.msg);
    assert_int_equal(tr.dims.b, 1);
    assert_int_equal(tr.dims.h, 2);
    assert_int_equal(tr.dims.s, 3);
    assert_int_equal(tr.dims.t, 3);
    assert_int_equal(tr.n_tensors, 4);
    assert_string_equal(tr.tensors[3].name, "my_probe");
    assert_null(tr.tensors[3].info);
    assert_int_equal(tr.tokens.rows, 0);
    assert_int_equal(tr.n_masked, 0);
    attn_trace_free(&tr);
    unlink(p);
}

static void expect_error(const char *p, attn_status want, const char *msg)
{
    attn_trace tr;
    attn_error err = {0};
    attn_status st = attn_trace_load(p, &tr, &err);
    if (st != want) fail_msg("%s: status %d (want %d): %s", msg, st, want, err.msg);
    if (!strstr(err.msg, msg)) fail_msg("'%s' does not contain '%s'", err.msg, msg);
    assert_null(strchr(err.msg, '\n'));
}

static void test_malformed_files(void **state)
{
    (void)state;
    static const struct {
        const char *header;
        uint64_t len; /* UINT64_MAX: the header's own length */
        size_t data;
        const char *msg;
    } cases[] = {
        {"", 0, 0, "header: not valid JSON"},
        {"{\"x\":", UINT64_MAX, 0, "header: not valid JSON"},
        {"not json at all", UINT64_MAX, 0, "header: not valid JSON"},
        {"[1,2,3]", UINT64_MAX, 0, "header is not a JSON object"},
        {"{}", 1000, 0, "runs past the end"},
        {"{}", 0xffffffffffffffffULL - 1, 0, "larger than the"},
        {"{\"x\":{\"dtype\":\"I8\",\"shape\":[4],\"data_offsets\":[0,4]}}", UINT64_MAX, 4, "dtype I8; attnlab reads F32, F16"},
        {"{\"x\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,4]}}", UINT64_MAX, 4, "shape needs"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", UINT64_MAX, 8, "shape needs"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", UINT64_MAX, 4, "beyond the 4 data bytes"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
         "\"y\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", UINT64_MAX, 12, "overlap"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", UINT64_MAX, 8, "leave a gap"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", UINT64_MAX, 12, "data section has 12 bytes"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", UINT64_MAX, 4, "not a whole number"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", UINT64_MAX, 4, "not a whole number"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", UINT64_MAX, 4,
         "shape needs too many"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", UINT64_MAX, 4,
         "9 dimensions"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", UINT64_MAX, 8, "invalid data_offsets"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1]}}", UINT64_MAX, 4, "needs dtype, shape and data_offsets"},
        {"{\"x\":3}", UINT64_MAX, 0, "not a JSON object"},
        {"{\"__metadata__\":{\"a\":3}}", UINT64_MAX, 0, "value 'a' is not a string"},
        {"{\"__metadata__\":{\"format\":\"other/9\"}}", UINT64_MAX, 0, "format 'other/9'"},
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
         "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", UINT64_MAX, 8, "appears twice"},
        /* a key given twice inside an entry or the metadata (issue 21): which one holds? */
        {"{\"foo\":{\"dtype\":\"F32\",\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,4]}}", UINT64_MAX, 4,
         "header: key 'dtype' appears twice in foo"},
        {"{\"__metadata__\":{\"heads\":\"2\",\"heads\":\"8\"}}", UINT64_MAX, 0,
         "header: key 'heads' appears twice in __metadata__"},
        /* one JSON rule for every file (issue 37): nothing after the value
         * but blanks, and no NUL in a string, where cJSON would cut it */
        {"{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}{\"x\":1}", UINT64_MAX, 4,
         "header: data after the JSON value, at byte 54 of 61"},
        {"{\"x\\u0000 renamed\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", UINT64_MAX, 4,
         "header: a key holds a NUL character (\\u0000) at byte 3"},
        {"{\"__metadata__\":{\"model\":\"tang\\u0000/../x\"}}", UINT64_MAX, 0,
         "header: a string holds a NUL character (\\u0000) at byte 30"},
        {"{\"__metadata__\":{\"tokens\":\"[[\\\"a\\\",\\\"b\\\",\\\"c\\\"]] [[1]]\"},"
         "\"scores\":{\"dtype\":\"F32\",\"shape\":[1,2,3,3],\"data_offsets\":[0,72]}}", UINT64_MAX, 72,
         "metadata 'tokens': data after the JSON value"},
        /* contract names whose shapes disagree */
        {"{\"scores\":{\"dtype\":\"F32\",\"shape\":[1,2,3,3],\"data_offsets\":[0,72]},"
         "\"weights\":{\"dtype\":\"F32\",\"shape\":[1,4,3,3],\"data_offsets\":[72,216]}}", UINT64_MAX, 216,
         "has h=4 but 'scores' has h=2"},
        {"{\"mask\":{\"dtype\":\"F32\",\"shape\":[1,2,3,3],\"data_offsets\":[0,72]}}", UINT64_MAX, 72,
         "does not fit (b,1,s,t)"},
        {"{\"scores\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]}}", UINT64_MAX, 24, "2 dimensions"},
        {"{\"__metadata__\":{\"heads\":\"8\"},"
         "\"scores\":{\"dtype\":\"F32\",\"shape\":[1,2,3,3],\"data_offsets\":[0,72]}}", UINT64_MAX, 72,
         "metadata says heads = 8 but the tensors say 2"},
        {"{\"__metadata__\":{\"tokens\":\"[[\\\"a\\\"]]\"},"
         "\"scores\":{\"dtype\":\"F32\",\"shape\":[1,2,3,3],\"data_offsets\":[0,72]}}", UINT64_MAX, 72,
         "row 1 does not have 3 tokens"},
        {"{\"__metadata__\":{\"fully_masked_rows\":\"[[0,9]]\"},"
         "\"scores\":{\"dtype\":\"F32\",\"shape\":[1,2,3,3],\"data_offsets\":[0,72]}}", UINT64_MAX, 72,
         "out-of-range entry"},
        {"{\"__metadata__\":{\"causal\":\"perhaps\"}}", UINT64_MAX, 0, "metadata: causal: 'perhaps'"},
        /* found by the fuzzer: a newline in a name must not split the message */
        {"{\"_\n\n_m\":{\"dtype\":\"F32\"}}", UINT64_MAX, 0, "tensor name '_  _m' is not printable UTF-8"},
        {"{\"__metadata__\":{\"causal\":\"a\\nb\"}}", UINT64_MAX, 0, "metadata: causal: 'a b'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *p = write_raw("bad.safetensors", cases[i].header, cases[i].len, cases[i].data);
        expect_error(p, ATTN_ERR_FORMAT, cases[i].msg);
        unlink(p);
    }
}

/* Sizes a header declares whose products or sums overflow (issue 21): each
 * is refused in words, or read right; none is computed in an int that wraps
 * (UBSan reports any that is). */
static void test_sizes_that_overflow(void **state)
{
    (void)state;
    static const struct {
        const char *header, *msg;
    } refused[] = {
        /* no data, but the last two sizes multiply to 2^80 (outside the contract,
         * where no stage's size check applies) */
        {"{\"extra\":{\"dtype\":\"F32\",\"shape\":[0,1099511627776,1099511627776],\"data_offsets\":[0,0]}}",
         "shape needs too many bytes"},
        {"{\"extra\":{\"dtype\":\"F16\",\"shape\":[4294967296,4294967296,0],\"data_offsets\":[0,0]}}",
         "shape needs too many bytes"},
        /* a size no view can take as an int, outside the contract too */
        {"{\"extra\":{\"dtype\":\"F32\",\"shape\":[2147483648,0],\"data_offsets\":[0,0]}}",
         "implausible size 2147483648"},
        /* s + past = 2^31 */
        {"{\"__metadata__\":{\"past\":\"1073741824\"},"
         "\"weights\":{\"dtype\":\"F32\",\"shape\":[1,1,1073741824,0],\"data_offsets\":[0,0]}}",
         "s = 1073741824 queries after past = 1073741824, is too long"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const char *p = write_raw("overflow.safetensors", refused[i].header, UINT64_MAX, 0);
        expect_error(p, ATTN_ERR_FORMAT, refused[i].msg);
        unlink(p);
    }
    /* b · s = 65536 · 65536 = 2^32 rows, of no keys: fully_masked_rows' bound
     * was b * s in an int, which wrapped to 0 and refused this good entry */
    const char *p = write_raw("overflow.safetensors",
                              "{\"__metadata__\":{\"fully_masked_rows\":\"[[65535,65535]]\"},"
                              "\"weights\":{\"dtype\":\"F32\",\"shape\":[65536,1,65536,0],\"data_offsets\":[0,0]}}",
                              UINT64_MAX, 0);
    attn_trace tr;
    attn_error err;
    if (attn_trace_load(p, &tr, &err)) fail_msg("%s", err.msg);
    assert_int_equal(tr.dims.b, 65536);
    assert_int_equal(tr.dims.s, 65536);
    assert_int_equal(tr.n_masked, 1);
    assert_int_equal(tr.masked_rows[0], 65535);
    assert_int_equal(tr.masked_rows[1], 65535);
    attn_trace_free(&tr);
    unlink(p);
}

/* Runs fn in a child whose stderr comes back in out; returns its wait status. */
static int in_child(void (*fn)(const char *), const char *arg, char *out, size_t size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        fn(arg);
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < size && (r = read(fds[0], out + n, size - 1 - n)) > 0) n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* Loads a mapped trace, cuts the file to 4096 bytes, reads its last tensor. */
static void read_after_cut(const char *path)
{
    attn_trace tr;
    attn_error err;
    attn_mapping_guard("attnlab test", &err);
    if (attn_trace_load(path, &tr, &err) || !tr.map) _exit(3);
    if (truncate(path, 4096)) _exit(4);
    volatile float sum = 0;
    const attn_tensor *t = &tr.tensors[tr.n_tensors - 1];
    for (size_t i = 0; i < t->count; i++) sum += t->data[i];
    _exit(5); /* not reached: the pages past 4096 are gone */
}

static void bus_error_elsewhere(const char *unused)
{
    attn_error err;
    (void)unused;
    attn_mapping_guard("attnlab test", &err);
    raise(SIGBUS);
}

/* A mapped file cut short under the reader (issue 21): with the guard, one
 * line naming the file and exit 1, not death by SIGBUS; any other SIGBUS
 * keeps its default action; every mapping closed is forgotten. */
static void test_file_cut_while_mapped(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr;
    attn_error err;
    char msg[1024];
    attn_config_init(&c);
    attn_config_set(&c, "seq", "64", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    char p[512];
    snprintf(p, sizeof p, "%s", tmp_path("cut.safetensors"));
    if (attn_trace_save(&tr, p, &err)) fail_msg("%s", err.msg);
    attn_trace_free(&tr);
    attn_config_free(&c);

    int before = attn_mapping_count();
    attn_trace back;
    if (attn_trace_load(p, &back, &err)) fail_msg("%s", err.msg);
    assert_non_null(back.map);
    assert_string_equal(attn_mapping_path(back.tensors[0].data), p);
    assert_int_equal(attn_mapping_count(), before + 1);
    attn_trace_free(&back);
    assert_int_equal(attn_mapping_count(), before);

    int status = in_child(read_after_cut, p, msg, sizeof msg);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 1)
        fail_msg("want exit 1, got %s %d; stderr: %s", WIFEXITED(status) ? "exit" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), msg);
    char want[700];
    snprintf(want, sizeof want, "attnlab test: %s: the file became shorter while attnlab was reading it", p);
    if (strncmp(msg, want, strlen(want)) || strchr(msg, '\n') != msg + strlen(msg) - 1)
        fail_msg("stderr: '%s'", msg);
    status = in_child(bus_error_elsewhere, NULL, msg, sizeof msg);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
    assert_string_equal(msg, "");
    unlink(p);
}

/* A foreign trace of one mask (1, 1, 2, 2) whose second query row is fully
 * masked, as F32 or F16. */
static const char *write_mask(const char *name, bool half)
{
    const char *p = tmp_path(name);
    char header[160];
    snprintf(header, sizeof header, "{\"mask\":{\"dtype\":\"%s\",\"shape\":[1,1,2,2],\"data_offsets\":[0,%d]}}",
             half ? "F16" : "F32", half ? 8 : 16);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    uint64_t n = strlen(header);
    for (int i = 0; i < 8; i++) fputc((int)((n >> (8 * i)) & 0xff), f);
    fwrite(header, 1, n, f);
    static const unsigned char f16[8] = {0, 0, 0x00, 0xfc, 0x00, 0xfc, 0x00, 0xfc}; /* 0, -inf, -inf, -inf */
    static const unsigned char f32[16] = {0, 0, 0, 0, 0, 0, 0x80, 0xff, 0, 0, 0x80, 0xff, 0, 0, 0x80, 0xff};
    fwrite(half ? f16 : f32, 1, half ? 8 : 16, f);
    fclose(f);
    return p;
}

/* Loading within a budget, describing, borrowing (issue 21, finding 4): an
 * F16 file's widening is refused over the budget before any is allocated;
 * described, nothing is widened but the masked rows are found; a borrowed
 * trace shares the data and frees none of it. */
static void test_load_budget_describe_borrow(void **state)
{
    (void)state;
    attn_trace tr, d, b;
    attn_error err;
    for (int half = 0; half < 2; half++) {
        char p[512];
        snprintf(p, sizeof p, "%s", write_mask("mask.safetensors", half));
        if (attn_trace_describe(p, &d, &err)) fail_msg("%s", err.msg);
        assert_true(d.described);
        assert_int_equal(d.widened, half);
        assert_null(d.tensors[0].data);
        assert_null(d.map);
        assert_int_equal(d.n_masked, 1); /* read from the file: row (0, 1) */
        assert_int_equal(d.masked_rows[0], 0);
        assert_int_equal(d.masked_rows[1], 1);
        attn_trace_free(&d);

        attn_budget tight = {.bytes = 8, .source = ATTN_BUDGET_SETTING, .ceiling = 8};
        attn_status st = attn_trace_load_within(p, &tight, &tr, &err);
        if (half) {
            assert_int_equal(st, ATTN_ERR_NOMEM);
            assert_non_null(strstr(err.msg, "mask.safetensors: as float32 its F16 tensors would take about"));
            assert_non_null(strstr(err.msg, "more than the 8 bytes limit (--memory-gib)"));
        } else {
            assert_int_equal(st, ATTN_OK); /* mapped in place: nothing to widen */
            assert_non_null(tr.map);
            attn_trace_free(&tr);
        }
        if (attn_trace_load(p, &tr, &err)) fail_msg("%s", err.msg);
        assert_int_equal(tr.widened, half);
        assert_true(tr.tensors[0].data[0] == 0.0f && isinf(tr.tensors[0].data[3]));
        assert_int_equal(tr.n_masked, 1);
        if (attn_trace_borrow(&tr, &b, &err)) fail_msg("%s", err.msg);
        assert_ptr_equal(b.tensors[0].data, tr.tensors[0].data);
        assert_null(b.arena);
        assert_null(b.map);
        assert_int_equal(b.n_masked, 1);
        attn_trace_free(&b); /* frees no data: tr's is still there */
        assert_true(isinf(tr.tensors[0].data[3]));
        attn_trace_free(&tr);
        unlink(p);
    }
}

/* F16 and BF16 widen to float32 exactly: normal, negative, subnormal, ∞. */
static void test_half_dtypes(void **state)
{
    (void)state;
    static const char hdr[] = "{\"h\":{\"dtype\":\"F16\",\"shape\":[5],\"data_offsets\":[0,10]},"
                              "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[10,14]}}";
    static const uint16_t vals[7] = {0x3c00, 0xc000, 0x0001, 0x7c00, 0x3555, 0x3f80, 0xc0a0};
    unsigned char buf[8 + sizeof hdr + 14];
    uint64_t n = sizeof hdr - 1;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(n >> (8 * i));
    memcpy(buf + 8, hdr, n);
    for (int i = 0; i < 7; i++) {
        buf[8 + n + 2 * i] = (unsigned char)(vals[i] & 0xff);
        buf[8 + n + 2 * i + 1] = (unsigned char)(vals[i] >> 8);
    }
    attn_st_file f = {0};
    attn_error err = {0};
    assert_int_equal(attn_st_parse(buf, 8 + n + 14, &f, &err), ATTN_OK);
    const attn_st_entry *h = attn_st_find(&f, "h"), *b = attn_st_find(&f, "b");
    assert_int_equal(h->dtype, ATTN_ST_F16);
    assert_int_equal(attn_st_count(h), 5);
    float out[5];
    attn_st_copy_f32(&f, h, out);
    assert_true(out[0] == 1.0f && out[1] == -2.0f && out[2] == ldexpf(1.0f, -24) && isinf(out[3]));
    assert_true(out[4] == 0.333251953125f);
    attn_st_copy_f32(&f, b, out);
    assert_true(out[0] == 1.0f && out[1] == -5.0f);
    assert_string_equal(attn_st_dtype_name(b->dtype), "BF16");
    attn_st_free(&f);
}

static void test_truncated_files(void **state)
{
    (void)state;
    attn_trace tr;
    attn_error err;
    attn_config c;
    attn_config_init(&c);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    const char *p = tmp_path("whole.safetensors");
    assert_int_equal(attn_trace_save(&tr, p, &err), ATTN_OK);
    attn_trace_free(&tr);
    attn_config_free(&c);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)size);
    assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    /* every prefix of a valid file is refused cleanly, from disk and from memory */
    long cuts[] = {0, 3, 7, 8, 9, 100, size / 2, size - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        const char *q = tmp_path("cut.safetensors");
        FILE *g = fopen(q, "wb");
        fwrite(buf, 1, (size_t)cuts[i], g);
        fclose(g);
        attn_error e2 = {0};
        attn_status st = attn_trace_load(q, &tr, &e2);
        assert_int_equal(st, ATTN_ERR_FORMAT);
        assert_non_null(strstr(e2.msg, "cut.safetensors: "));
        attn_st_file sf;
        assert_int_equal(attn_st_parse(buf, (size_t)cuts[i], &sf, &e2), ATTN_ERR_FORMAT);
        unlink(q);
    }
    attn_st_file sf;
    assert_int_equal(attn_st_parse(buf, (size_t)size, &sf, &err), ATTN_OK);
    assert_non_null(attn_st_find(&sf, "weights"));
    assert_string_equal(attn_st_meta(&sf, "format"), "attnlab-trace/1");
    attn_st_free(&sf);
    free(buf);
    unlink(p);
}

static void test_missing_and_unwritable(void **state)
{
    (void)state;
    attn_trace tr;
    attn_error err;
    expect_error("/nonexistent/dir/x.safetensors", ATTN_ERR_IO, "x.safetensors: No such file or directory");
    expect_error("/", ATTN_ERR_IO, "not a regular file");
    attn_config c;
    attn_config_init(&c);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    assert_int_equal(attn_trace_save(&tr, "/nonexistent/dir/x.safetensors", &err), ATTN_ERR_IO);
    assert_non_null(strstr(err.msg, "cannot write"));
    attn_trace_free(&tr);
    attn_config_free(&c);
}

/* --weights / --input files are checked against the config's shapes. */
static void test_weights_and_input_files(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr, again;
    attn_error err;
    attn_config_init(&c);
    attn_config_set(&c, "heads", "4", &err);
    attn_config_set(&c, "kv_heads", "2", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    const char *names[] = {"w_q", "w_k", "w_v", "w_o"};
    attn_st_tensor ts[4];
    for (int i = 0; i < 4; i++) {
        const attn_tensor *t = attn_trace_find(&tr, names[i]);
        ts[i] = (attn_st_tensor){t->name, t->ndim, t->shape, t->data};
    }
    char wpath[512];
    snprintf(wpath, sizeof wpath, "%s", tmp_path("w.safetensors"));
    assert_int_equal(attn_st_write(wpath, ts, 4, NULL, 0, &err), ATTN_OK);
    const attn_tensor *x = attn_trace_find(&tr, "x");
    attn_st_tensor xt = {"x", x->ndim, x->shape, x->data};
    char xpath[512];
    snprintf(xpath, sizeof xpath, "%s", tmp_path("x.safetensors"));
    assert_int_equal(attn_st_write(xpath, &xt, 1, NULL, 0, &err), ATTN_OK);

    /* loading them back under another seed reproduces the trace exactly */
    attn_config_set(&c, "weights", wpath, &err);
    attn_config_set(&c, "input", xpath, &err);
    attn_config_set(&c, "seed", "999", &err);
    if (attn_trace_run(&c, NULL, &again, &err)) fail_msg("%s", err.msg);
    const attn_tensor *o1 = attn_trace_find(&tr, "out"), *o2 = attn_trace_find(&again, "out");
    assert_memory_equal(o1->data, o2->data, o1->count * sizeof(float));
    attn_trace_free(&again);

    /* with another kv_heads, w_k no longer fits */
    attn_config_set(&c, "kv_heads", "4", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &again, &err), ATTN_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "'w_k' has shape (32, 16) but this config needs (d=32, g*k=32)"));
    /* x_past present but no past configured, and x missing */
    attn_config_set(&c, "kv_heads", "2", &err);
    attn_config_set(&c, "input", wpath, &err);
    assert_int_equal(attn_trace_run(&c, NULL, &again, &err), ATTN_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "has no tensor 'x'"));
    attn_trace_free(&tr);
    attn_config_free(&c);
    unlink(wpath);
    unlink(xpath);
}

/* ---- layers ---- */

static void test_three_layers_round_trip(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr, src, back;
    attn_error err;
    attn_config_init(&c);
    attn_config_set(&c, "past", "2", &err);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    assert_int_equal(attn_trace_run(&c, NULL, &src, &err), ATTN_OK);
    assert_int_equal(tr.n_layers, 1);
    make_layers(&tr, &src, 3);
    const char *p = tmp_path("layers.safetensors");
    if (attn_trace_save(&tr, p, &err)) fail_msg("%s", err.msg);
    if (attn_trace_load(p, &back, &err)) fail_msg("%s", err.msg);

    assert_int_equal(back.n_layers, 3);
    assert_int_equal(back.n_tensors, 3 * src.n_tensors);
    assert_memory_equal(&back.dims, &src.dims, sizeof src.dims);
    for (int i = 0; i < back.n_tensors; i++) {
        assert_string_equal(back.tensors[i].name, tr.tensors[i].name);
        assert_int_equal(back.tensors[i].layer, i / src.n_tensors);
        assert_ptr_equal(back.tensors[i].info, src.tensors[i % src.n_tensors].info);
        assert_memory_equal(back.tensors[i].data, tr.tensors[i].data, tr.tensors[i].count * sizeof(float));
    }
    /* lookups by (layer, stage): layer 2 is three times layer 0 */
    const attn_tensor *w2 = attn_trace_stage(&back, 2, ATTN_STAGE_WEIGHTS), *w0 = attn_trace_find(&src, "weights");
    assert_string_equal(w2->name, "layers.2.weights");
    assert_ptr_equal(attn_trace_get(&back, 2, "weights"), w2);
    assert_ptr_equal(attn_trace_find(&back, "layers.2.weights"), w2);
    assert_true(w2->data[1] == 3.0f * w0->data[1]);
    assert_null(attn_trace_find(&back, "weights"));
    assert_null(attn_trace_stage(&back, 3, ATTN_STAGE_WEIGHTS));
    assert_null(attn_trace_stage(&back, -1, ATTN_STAGE_WEIGHTS));
    assert_int_equal(back.n_masked, src.n_masked);

    /* a cell is explained from its own layer's tensors */
    char buf[256], want[256];
    attn_explain_cell cell = {&back, attn_trace_stage(&back, 2, ATTN_STAGE_MASKED_SCORES), 0, 1, 0, 0, NULL, NULL};
    attn_explain(&cell, buf, sizeof buf);
    snprintf(want, sizeof want, "masked_scores[h=1, i=0, j=0] = scores + mask = %.3f",
             3.0 * attn_tensor_at4(attn_trace_find(&src, "scores"), 0, 1, 0, 0));
    assert_memory_equal(buf, want, strlen(want));

    /* the metadata counts the layers and lists each stage once */
    attn_st_file f;
    assert_int_equal(attn_st_read(p, &f, &err), ATTN_OK);
    assert_string_equal(attn_st_meta(&f, "layers"), "3");
    int listed = 0;
    for (const char *q = attn_st_meta(&f, "stages"); (q = strstr(q, "\"name\"")); q++) listed++;
    assert_int_equal(listed, src.n_tensors);
    attn_st_free(&f);

    attn_trace_free(&back);
    attn_trace_free(&tr);
    attn_trace_free(&src);
    attn_config_free(&c);
    unlink(p);
}

/* A single-layer file names its tensors plainly, records layers = 1, and
 * loads as layer 0; so does one that spells layer 0 out. */
static void test_single_layer_names(void **state)
{
    (void)state;
    attn_config c;
    attn_trace tr, back;
    attn_error err;
    attn_config_init(&c);
    assert_int_equal(attn_trace_run(&c, NULL, &tr, &err), ATTN_OK);
    const char *p = tmp_path("one_layer.safetensors");
    if (attn_trace_save(&tr, p, &err)) fail_msg("%s", err.msg);
    attn_st_file f;
    assert_int_equal(attn_st_read(p, &f, &err), ATTN_OK);
    assert_string_equal(attn_st_meta(&f, "layers"), "1");
    assert_non_null(attn_st_find(&f, "weights"));
    attn_st_free(&f);
    if (attn_trace_load(p, &back, &err)) fail_msg("%s", err.msg);
    assert_int_equal(back.n_layers, 1);
    assert_ptr_equal(attn_trace_stage(&back, 0, ATTN_STAGE_WEIGHTS), attn_trace_find(&back, "weights"));
    attn_trace_free(&back);

    float w[1 * 4 * 6 * 6] = {0};
    int64_t s4[] = {1, 4, 6, 6}, one[] = {2};
    float probe[2] = {0};
    attn_st_tensor ts[] = {{"layers.0.weights", 4, s4, w}, {"probe", 1, one, probe}};
    assert_int_equal(attn_st_write(p, ts, 2, NULL, 0, &err), ATTN_OK);
    if (attn_trace_load(p, &back, &err)) fail_msg("%s", err.msg);
    assert_int_equal(back.n_layers, 1);
    assert_int_equal(back.tensors[0].layer, 0);
    assert_ptr_equal(attn_trace_get(&back, 0, "weights"), &back.tensors[0]);
    assert_int_equal(back.tensors[1].layer, -1); /* outside any layer */
    assert_ptr_equal(attn_trace_get(&back, -1, "probe"), &back.tensors[1]);
    attn_trace_free(&back);
    attn_trace_free(&tr);
    attn_config_free(&c);
    unlink(p);
}

static void test_malformed_layer_names(void **state)
{
    (void)state;
    float w[1 * 2 * 3 * 3] = {0};
    int64_t s4[] = {1, 2, 3, 3};
    static const char *three[] = {"layers", "3"}, *zero[] = {"layers", "0"}, *word[] = {"layers", "many"};
    static const char *many[] = {"layers", "256"}, *two[] = {"layers", "2"}, *cross[] = {"attention", "cross"},
                      *sideways[] = {"attention", "sideways"};
    const struct {
        const char *a, *b;    /* tensor names (b may be NULL) */
        const char **meta;    /* key, value or NULL */
        const char *msg;
    } cases[] = {
        {"layers.x.weights", NULL, NULL, "tensor 'layers.x.weights' is not named layers.N.<stage>"},
        {"layers.-1.q", NULL, NULL, "tensor 'layers.-1.q' is not named layers.N.<stage>"},
        {"layers.01.weights", NULL, NULL, "is not named layers.N.<stage>"},
        {"layers.2", NULL, NULL, "is not named layers.N.<stage>"},
        {"layers.99999.weights", NULL, NULL, "(N a layer from 0 to 4095)"},
        /* the metadata's count is the tensors' own (issue 37: 256 beside 4 layers showed "layer 100 / 256") */
        {"layers.3.weights", NULL, three, "metadata says layers = 3 but the tensors have 4"},
        {"layers.0.weights", "layers.3.weights", many, "metadata says layers = 256 but the tensors have 4"},
        {"layers.0.weights", "layers.2.weights", NULL, "no tensor belongs to layer 1 of the 3 the tensors name"},
        {"extra", NULL, two, "metadata says layers = 2 but no tensor belongs to a layer"},
        /* cross-attention attends to a memory, which the trace must hold */
        {"weights", NULL, cross, "metadata says attention = cross but the trace has no memory tensor"},
        {"weights", NULL, sideways, "metadata 'attention' = 'sideways' is not self or cross"},
        {"layers.1.weights", "weights", NULL, "tensor 'weights' has no layer, but the trace has 2 (name it layers.N.weights)"},
        {"weights", "layers.0.weights", NULL, "tensors 'weights' and 'layers.0.weights' are both layer 0's weights"},
        {"weights", NULL, zero, "metadata 'layers' = '0' is not a count from 1 to 4096"},
        {"weights", NULL, word, "metadata 'layers' = 'many' is not a size"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attn_st_tensor ts[] = {{cases[i].a, 4, s4, w}, {cases[i].b, 4, s4, w}};
        attn_error err;
        const char *p = tmp_path("bad_layers.safetensors");
        assert_int_equal(attn_st_write(p, ts, cases[i].b ? 2 : 1, cases[i].meta, cases[i].meta ? 1 : 0, &err), ATTN_OK);
        expect_error(p, ATTN_ERR_FORMAT, cases[i].msg);
        unlink(p);
    }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_foreign_file_without_metadata),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_sizes_that_overflow),
        cmocka_unit_test(test_file_cut_while_mapped),
        cmocka_unit_test(test_load_budget_describe_borrow),
        cmocka_unit_test(test_truncated_files),
        cmocka_unit_test(test_half_dtypes),
        cmocka_unit_test(test_missing_and_unwritable),
        cmocka_unit_test(test_weights_and_input_files),
        cmocka_unit_test(test_three_layers_round_trip),
        cmocka_unit_test(test_single_layer_names),
        cmocka_unit_test(test_malformed_layer_names),
        cmocka_unit_test(test_save_and_load),
        cmocka_unit_test(test_long_settings_recorded_whole),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
