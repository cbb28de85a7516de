/* test_head.c — the lazy LM head (head.h): logits and probs computed for the
 * rows read, in chunks, with the bits of the eager product and of a trace
 * file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "engine/formats/trace_io.h"
#include "engine/model/head.h"
#include "engine/model/model.h"
#include "model_tests_fixture.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lazy_head_rows),
    };
    return cmocka_run_group_tests(tests, make_root, remove_root);
}
