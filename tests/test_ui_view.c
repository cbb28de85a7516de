/* test_ui_view.c — which 2-D slice each stage shows, its scale, its labels,
 * and the hover explanations with their actual numbers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "trace_fixture.h"

/* The last number in s ("... = 0.58" → 0.58). */
static double last_number(const char *s)
{
    const char *p = strrchr(s, '=');
    assert_non_null(p);
    return strtod(p + 1, NULL);
}

static void slices_pick_batch_head_and_kv_head(void **state)
{
    (void)state;
    static const char *const kv[] = {"heads", "4", "kv_heads", "2", NULL};
    attn_trace tr;
    run(&tr, kv);
    const attn_tensor *s = attn_trace_find(&tr, "scores");
    app_view_slice v = make(&tr, "scores", 1, 2);
    assert_int_equal(v.slice.rows, 6);
    assert_int_equal(v.slice.cols, 6);
    assert_ptr_equal(v.slice.data, s->data + ((1 * 4 + 2) * 6) * 6);
    assert_int_equal(v.head, 2);
    assert_int_equal(v.kv_head, 1);
    assert_int_equal(v.row_axis, APP_AXIS_QUERY);
    assert_int_equal(v.col_axis, APP_AXIS_KEY);
    /* a kv-head tensor shows the kv head that query head 3 reads */
    const attn_tensor *kh = attn_trace_find(&tr, "k_heads");
    v = make(&tr, "k_heads", 0, 3);
    assert_int_equal(v.head_axis, 'g');
    assert_int_equal(v.kv_head, 1);
    assert_ptr_equal(v.slice.data, kh->data + 1 * 6 * 8);
    /* the mask has one copy for all heads */
    const attn_tensor *m = attn_trace_find(&tr, "mask");
    v = make(&tr, "mask", 1, 3);
    assert_int_equal(v.head_axis, '1');
    assert_ptr_equal(v.slice.data, m->data + 36);
    /* q: per-head column blocks, the current head's outlined; k: the kv head's */
    v = make(&tr, "q", 0, 3);
    assert_int_equal(v.block, 8);
    assert_int_equal(v.block_current, 3);
    v = make(&tr, "k", 0, 3);
    assert_int_equal(v.slice.cols, 16);
    assert_int_equal(v.block_current, 1);
    v = make(&tr, "w_o", 0, 2);
    assert_true(v.block_on_rows);
    assert_int_equal(v.block_current, 2);
    v = make(&tr, "x", 0, 2);
    assert_int_equal(v.block, 0);
    /* weights carry the mask, so the cells it zeroed are drawn masked */
    v = make(&tr, "weights", 1, 0);
    assert_ptr_equal(v.slice.mask, m->data + 36);
    v = make(&tr, "scores", 1, 0);
    assert_null(v.slice.mask); /* scores come before the mask */
    app_view_slice none;
    assert_int_equal(app_view_make(&tr, "k_cache", 0, 0, &none), -1);
    attn_trace_free(&tr);
}

static void labels_follow_the_axes(void **state)
{
    (void)state;
    static const char *const past[] = {"tokens", "a b c d e", "past", "2", NULL};
    static const char *const cross[] = {"tokens", "我 爱 AI", "source_tokens", "I love AI very much", "causal",
                                        "false", NULL};
    attn_trace tr;
    char buf[64];
    run(&tr, past);
    app_view_slice v = make(&tr, "scores", 0, 0);
    assert_int_equal(v.slice.rows, 3);
    assert_string_equal(app_view_row_label(&tr, &v, 0, buf, sizeof buf), "c"); /* query 0 sits at position P = 2 */
    assert_string_equal(app_view_col_label(&tr, &v, 0, buf, sizeof buf), "a");
    v = make(&tr, "x_past", 0, 0);
    assert_string_equal(app_view_row_label(&tr, &v, 1, buf, sizeof buf), "b");
    assert_string_equal(app_view_col_label(&tr, &v, 5, buf, sizeof buf), "c5");
    v = make(&tr, "k_heads", 0, 0); /* new keys: the query positions */
    assert_string_equal(app_view_row_label(&tr, &v, 0, buf, sizeof buf), "c");
    v = make(&tr, "w_q", 0, 0); /* x·W_Q: input features in the rows, output features in the columns */
    assert_string_equal(app_view_row_label(&tr, &v, 3, buf, sizeof buf), "m3");
    assert_string_equal(app_view_col_label(&tr, &v, 5, buf, sizeof buf), "c5");
    assert_int_equal(v.row_axis, APP_AXIS_INPUT);
    assert_int_equal(v.col_axis, APP_AXIS_OUTPUT);
    v = make(&tr, "w_k", 0, 0);
    assert_int_equal(v.col_axis, APP_AXIS_OUTPUT);
    attn_trace_free(&tr);

    run(&tr, cross);
    v = make(&tr, "weights", 0, 0);
    assert_int_equal(v.slice.rows, 3);
    assert_int_equal(v.slice.cols, 5);
    assert_string_equal(app_view_row_label(&tr, &v, 1, buf, sizeof buf), "爱");
    assert_string_equal(app_view_col_label(&tr, &v, 4, buf, sizeof buf), "much");
    v = make(&tr, "memory", 0, 0);
    assert_string_equal(app_view_row_label(&tr, &v, 2, buf, sizeof buf), "AI");
    attn_trace_free(&tr);
}

static void scales_suit_the_values(void **state)
{
    (void)state;
    static const char *const fill[] = {"mask_value", "-1e9", "pad_side", "left", NULL};
    attn_trace tr;
    run(&tr, fill);
    app_scale s = app_view_scale(attn_trace_find(&tr, "weights"));
    assert_int_equal(s.cmap, APP_CMAP_SEQUENTIAL);
    assert_float_equal(s.lo, 0.0f, 0);
    assert_float_equal(s.hi, 1.0f, 0);
    const attn_tensor *sc = attn_trace_find(&tr, "scores");
    float m = 0;
    for (size_t i = 0; i < sc->count; i++) m = fmaxf(m, fabsf(sc->data[i]));
    s = app_view_scale(sc);
    assert_int_equal(s.cmap, APP_CMAP_DIVERGING);
    assert_float_equal(s.hi, m, 0);
    assert_float_equal(s.lo, -m, 0);
    /* the −1e9 fill does not stretch the range of the masked scores */
    s = app_view_scale(attn_trace_find(&tr, "masked_scores"));
    assert_float_equal(s.hi, m, 0);
    s = app_view_scale(attn_trace_find(&tr, "mask"));
    assert_float_equal(s.hi, 1.0f, 0);
    attn_trace_free(&tr);
}

static void explanations_carry_the_numbers(void **state)
{
    (void)state;
    static const char *const kv[] = {"heads", "4", "kv_heads", "2", NULL};
    attn_trace tr;
    char buf[400];
    run(&tr, kv);
    app_view_slice v = make(&tr, "scores", 0, 2);
    app_view_explain(&tr, &v, 3, 1, buf, sizeof buf);
    assert_non_null(strstr(buf, "scores[h=2, i=3, j=1] = q₃·k₁ / √8 = "));
    assert_float_equal(last_number(buf), app_slice_at(&v.slice, 3, 1), 1e-3);
    /* dot / √8 printed in between agrees with the result */
    double dot = strtod(strstr(buf, "√8 = ") + strlen("√8 = "), NULL);
    assert_float_equal(dot / sqrt(8.0), app_slice_at(&v.slice, 3, 1), 2e-3);

    v = make(&tr, "mask", 0, 0);
    app_view_explain(&tr, &v, 3, 4, buf, sizeof buf);
    assert_string_equal(buf, "mask[i=3, j=4] = −∞: key 4 is in the future of query 3 (causal)");
    app_view_explain(&tr, &v, 3, 2, buf, sizeof buf);
    assert_string_equal(buf, "mask[i=3, j=2] = 0.000: query 3 may look at key 2");
    v = make(&tr, "mask", 1, 0); /* row 1: 我 爱 AI + 3 pads */
    app_view_explain(&tr, &v, 5, 4, buf, sizeof buf);
    assert_non_null(strstr(buf, "key 4 is <pad>"));

    v = make(&tr, "masked_scores", 0, 1);
    app_view_explain(&tr, &v, 0, 5, buf, sizeof buf);
    assert_non_null(strstr(buf, "masked_scores[h=1, i=0, j=5] = scores + mask = "));
    assert_non_null(strstr(buf, " + (−∞) = −∞"));

    v = make(&tr, "weights", 0, 1);
    app_view_explain(&tr, &v, 4, 2, buf, sizeof buf);
    assert_non_null(strstr(buf, "weights[h=1, i=4, j=2] = exp("));
    const char *p = strstr(buf, ") = ");
    assert_non_null(p);
    double e = strtod(p + 4, NULL), sum = strtod(strstr(p, " / ") + 3, NULL);
    assert_float_equal(e / sum, app_slice_at(&v.slice, 4, 2), 2e-3);
    assert_float_equal(last_number(buf), app_slice_at(&v.slice, 4, 2), 1e-3);

    v = make(&tr, "context", 1, 3);
    app_view_explain(&tr, &v, 2, 5, buf, sizeof buf);
    assert_non_null(strstr(buf, "Σⱼ weights[i=2, j]·v[j, c=5]"));
    assert_float_equal(last_number(buf), app_slice_at(&v.slice, 2, 5), 1e-3);

    v = make(&tr, "k_expanded", 0, 3);
    app_view_explain(&tr, &v, 0, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "of kv head 1 = 3 / (4/2)"));
    v = make(&tr, "q", 0, 0);
    app_view_explain(&tr, &v, 2, 17, buf, sizeof buf);
    assert_non_null(strstr(buf, "q[i=2, c=17] = x₂ · W_Q[:, 17] = "));
    assert_non_null(strstr(buf, "(query head 2)"));
    v = make(&tr, "merged", 0, 0);
    app_view_explain(&tr, &v, 1, 9, buf, sizeof buf);
    assert_non_null(strstr(buf, "context[h=1, i=1, c=1]"));
    v = make(&tr, "x", 0, 0);
    app_view_explain(&tr, &v, 4, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "embed(“猫”)[0]"));
    /* out of range: nothing, no crash */
    app_view_explain(&tr, &v, 99, 0, buf, sizeof buf);
    assert_string_equal(buf, "");
    /* a tiny buffer is cut, never overrun */
    char small[8];
    v = make(&tr, "scores", 0, 0);
    app_view_explain(&tr, &v, 1, 1, small, sizeof small);
    assert_true(strlen(small) < sizeof small);
    attn_trace_free(&tr);
}

static void fully_masked_rows_are_explained(void **state)
{
    (void)state;
    static const char *const kv[] = {"pad_side", "left", NULL};
    attn_trace tr;
    char buf[400];
    run(&tr, kv);
    assert_true(tr.n_masked > 0);
    app_view_slice v = make(&tr, "weights", 1, 0); /* left pads: queries 0-2 of row 1 see nothing */
    app_view_explain(&tr, &v, 0, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "has no key it may look at"));
    attn_trace_free(&tr);
}

static void rope_and_decode_explanations(void **state)
{
    (void)state;
    static const char *const kv[] = {"rope", "true", "past", "2", NULL};
    attn_trace tr;
    char buf[400];
    run(&tr, kv);
    app_view_slice v = make(&tr, "q_rope", 0, 0);
    app_view_explain(&tr, &v, 1, 3, buf, sizeof buf);
    assert_non_null(strstr(buf, "pair (2, 3) of q_heads rotated by 3·θ^(−2/8)"));
    v = make(&tr, "k_cache", 0, 0);
    app_view_explain(&tr, &v, 1, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "cached at an earlier step (position 1)"));
    app_view_explain(&tr, &v, 2, 0, buf, sizeof buf);
    assert_non_null(strstr(buf, "new this step (position 2)"));
    attn_trace_free(&tr);
}

static void numbers_in_cells(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(app_view_format(0.5812f, buf, sizeof buf), "0.58");
    assert_string_equal(app_view_format(-0.001f, buf, sizeof buf), "0.00");
    assert_string_equal(app_view_format(12.34f, buf, sizeof buf), "12.3");
    assert_string_equal(app_view_format(-123.4f, buf, sizeof buf), "-123");
    assert_string_equal(app_view_format(-1e9f, buf, sizeof buf), "-1e+09");
    assert_string_equal(app_view_format(-INFINITY, buf, sizeof buf), "−∞");
    assert_string_equal(app_view_format(NAN, buf, sizeof buf), "NaN");
}

static void kv_head_mapping(void **state)
{
    (void)state;
    attn_dims d = {0};
    d.h = 8;
    d.g = 2;
    for (int h = 0; h < 8; h++) assert_int_equal(app_view_kv_head(&d, h), h / 4);
    d.g = 8;
    for (int h = 0; h < 8; h++) assert_int_equal(app_view_kv_head(&d, h), h);
    d.g = 1;
    for (int h = 0; h < 8; h++) assert_int_equal(app_view_kv_head(&d, h), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slices_pick_batch_head_and_kv_head),
        cmocka_unit_test(labels_follow_the_axes),
        cmocka_unit_test(scales_suit_the_values),
        cmocka_unit_test(explanations_carry_the_numbers),
        cmocka_unit_test(fully_masked_rows_are_explained),
        cmocka_unit_test(rope_and_decode_explanations),
        cmocka_unit_test(numbers_in_cells),
        cmocka_unit_test(kv_head_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
