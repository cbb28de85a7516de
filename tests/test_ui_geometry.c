/* test_ui_geometry.c — the geometry view's numbers (geometry.h): exact in a
 * 2-D head, a PCA plane that is the best plane otherwise, the context as the
 * weighted sum of the projected values, and RoPE as a turn by the position. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "geometry.h"

#include "trace_fixture.h"

static app_slice slice(const attn_trace *tr, const char *stage, int b, int h)
{
    return make(tr, stage, b, h).slice;
}

/* dₖ = 2: the arrows are q and k themselves, and q·k/√2 is the score. */
static void two_dims_are_exact(void **state)
{
    (void)state;
    static const char *const kv[] = {"d_model", "2", "heads", "1", NULL};
    attn_trace tr;
    run(&tr, kv);
    draw_geom *g = malloc(sizeof *g);
    char err[240];
    assert_int_equal(draw_geom_build(&tr, 0, 1, 0, g, err, sizeof err), 0);
    assert_true(g->exact);
    assert_float_equal(g->qk_kept, 1, 1e-6);
    app_slice q = slice(&tr, "q_heads", 1, 0), k = slice(&tr, "k_heads", 1, 0), s = slice(&tr, "scores", 1, 0);
    for (int i = 0; i < g->s; i++) {
        assert_float_equal(g->q[i][0], app_slice_at(&q, i, 0), 1e-6);
        assert_float_equal(g->q[i][1], app_slice_at(&q, i, 1), 1e-6);
        for (int j = 0; j < g->t; j++) {
            float dot = g->q[i][0] * g->k[j][0] + g->q[i][1] * g->k[j][1];
            assert_float_equal(dot / sqrtf(2), app_slice_at(&s, i, j), 1e-5);
        }
    }
    for (int j = 0; j < g->t; j++) assert_float_equal(g->k[j][1], app_slice_at(&k, j, 1), 1e-6);
    assert_string_equal(g->q_label[0], "我"); /* batch row 1: 我 爱 AI */
    free(g);
    attn_trace_free(&tr);
}

/* The context arrow is Σⱼ wᵢⱼ vⱼ in the value plane: the engine's context, projected. */
static void context_is_the_weighted_sum(void **state)
{
    (void)state;
    static const char *const kv[] = {"heads", "4", "kv_heads", "2", NULL};
    attn_trace tr;
    run(&tr, kv);
    draw_geom *g = malloc(sizeof *g);
    char err[240];
    assert_int_equal(draw_geom_build(&tr, 0, 0, 3, g, err, sizeof err), 0);
    assert_false(g->exact);
    assert_int_equal(g->dk, 8);
    /* the value plane again, from the values head 3 reads (kv head 1) */
    app_slice v = slice(&tr, "v_heads", 0, 3), c = slice(&tr, "context", 0, 3);
    float xv[6 * 8], axes[2][512];
    for (int j = 0; j < 6; j++)
        for (int f = 0; f < 8; f++) xv[j * 8 + f] = app_slice_at(&v, j, f);
    assert_float_equal(draw_geom_axes(xv, 6, 8, 8, axes), g->v_kept, 1e-6);
    for (int i = 0; i < g->s; i++) {
        double u = 0, w = 0, sum = 0;
        for (int f = 0; f < 8; f++) u += axes[0][f] * app_slice_at(&c, i, f), w += axes[1][f] * app_slice_at(&c, i, f);
        assert_float_equal(g->ctx[i][0], u, 1e-5);
        assert_float_equal(g->ctx[i][1], w, 1e-5);
        for (int j = 0; j < g->t; j++) sum += g->w[i][j];
        assert_float_equal(sum, 1, 1e-5);
    }
    free(g);
    attn_trace_free(&tr);
}

/* The PCA plane: orthonormal axes that are eigenvectors of Σ x xᵀ, keeping
 * all of vectors that lie in a plane, and no less than any other plane. */
static void pca_finds_the_best_plane(void **state)
{
    (void)state;
    enum { N = 40, D = 16 };
    static float x[N * D];
    float axes[2][512];
    unsigned seed = 7;
    /* vectors in the plane of two fixed directions, so the plane keeps all of them */
    float e1[D], e2[D];
    for (int f = 0; f < D; f++) e1[f] = (f % 3) - 1.0f, e2[f] = f < D / 2 ? 0.5f : -0.25f;
    for (int r = 0; r < N; r++) {
        float a = (float)(rand_r(&seed) % 1000) / 250 - 2, b = (float)(rand_r(&seed) % 1000) / 500 - 1;
        for (int f = 0; f < D; f++) x[r * D + f] = a * e1[f] + b * e2[f];
    }
    assert_float_equal(draw_geom_axes(x, N, D, D, axes), 1, 1e-4);
    /* noise in every direction: the plane keeps less, and more than random planes */
    for (int i = 0; i < N * D; i++) x[i] += (float)(rand_r(&seed) % 1000) / 2000 - 0.25f;
    float kept = draw_geom_axes(x, N, D, D, axes);
    assert_true(kept < 1 && kept > 0.5f);
    double total = 0, dot = 0, n0 = 0, n1 = 0;
    for (int i = 0; i < N * D; i++) total += (double)x[i] * x[i];
    for (int f = 0; f < D; f++) dot += axes[0][f] * axes[1][f], n0 += axes[0][f] * axes[0][f], n1 += axes[1][f] * axes[1][f];
    assert_float_equal(dot, 0, 1e-5);
    assert_float_equal(n0, 1, 1e-5);
    assert_float_equal(n1, 1, 1e-5);
    for (int trial = 0; trial < 200; trial++) {
        float a[D], b[D];
        double na = 0, ab = 0, nb = 0, k = 0;
        for (int f = 0; f < D; f++) a[f] = (float)(rand_r(&seed) % 1000) - 500, b[f] = (float)(rand_r(&seed) % 1000) - 500;
        for (int f = 0; f < D; f++) na += a[f] * a[f];
        for (int f = 0; f < D; f++) a[f] /= (float)sqrt(na), ab += a[f] * b[f];
        for (int f = 0; f < D; f++) b[f] -= (float)ab * a[f], nb += b[f] * b[f];
        for (int f = 0; f < D; f++) b[f] /= (float)sqrt(nb);
        for (int r = 0; r < N; r++) {
            double u = 0, w = 0;
            for (int f = 0; f < D; f++) u += a[f] * x[r * D + f], w += b[f] * x[r * D + f];
            k += u * u + w * w;
        }
        assert_true(k / total <= kept + 1e-5);
    }
}

/* RoPE in a 2-D head turns each q and k by its position, in radians (θ₀ = 1), keeping its length. */
static void rope_turns_by_the_position(void **state)
{
    (void)state;
    static const char *const kv[] = {"d_model", "2", "heads", "1", "rope", "true", NULL};
    attn_trace tr;
    run(&tr, kv);
    draw_geom *g = malloc(sizeof *g);
    char err[240];
    assert_int_equal(draw_geom_build(&tr, 0, 0, 0, g, err, sizeof err), 0);
    assert_true(g->rope && g->exact);
    for (int i = 0; i < g->s; i++) {
        float a0 = atan2f(g->q0[i][1], g->q0[i][0]), a1 = atan2f(g->q[i][1], g->q[i][0]);
        assert_float_equal(remainderf(a1 - a0 - (float)i, 6.2831853f), 0, 1e-4);
        assert_float_equal(hypotf(g->q[i][0], g->q[i][1]), hypotf(g->q0[i][0], g->q0[i][1]), 1e-5);
    }
    free(g);
    attn_trace_free(&tr);
}

static void refusals_name_the_reason(void **state)
{
    (void)state;
    static const char *const kv[] = {"seq", "120", NULL};
    attn_trace tr;
    run(&tr, kv);
    draw_geom *g = malloc(sizeof *g);
    char err[240];
    assert_int_equal(draw_geom_build(&tr, 0, 0, 0, g, err, sizeof err), -1);
    assert_non_null(strstr(err, "at most 96 tokens"));
    assert_int_equal(draw_geom_build(&tr, 5, 0, 0, g, err, sizeof err), -1); /* no such layer */
    assert_non_null(strstr(err, "lacks"));
    free(g);
    attn_trace_free(&tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_dims_are_exact),
        cmocka_unit_test(context_is_the_weighted_sum),
        cmocka_unit_test(pca_finds_the_best_plane),
        cmocka_unit_test(rope_turns_by_the_position),
        cmocka_unit_test(refusals_name_the_reason),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
