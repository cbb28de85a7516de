/* test_ui_heatmap.c — colour maps, heatmap geometry and painting (no SDL).
 *
 * The painted pixels are checked against the contract of heatmap.h: cells
 * tile the picture, masked cells are hatch only, map cells are one uniform
 * colour, NaN is a checkerboard, gaps appear only when they fit, and the
 * reserved colours never come out of a map. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "colormap.h"
#include "heatmap.h"
#include "paint.h"

#define SENTINEL 0x12345678u

static int red(uint32_t c) { return (int)(c >> 16 & 0xFF); }
static int green(uint32_t c) { return (int)(c >> 8 & 0xFF); }
static int blue(uint32_t c) { return (int)(c & 0xFF); }

static int is_hatch(uint32_t c) { return c == APP_HATCH_LIGHT || c == APP_HATCH_DARK; }

static double rgb_distance(uint32_t a, uint32_t b)
{
    double dr = red(a) - red(b), dg = green(a) - green(b), db = blue(a) - blue(b);
    return sqrt(dr * dr + dg * dg + db * db);
}

/* CIE L* from relative luminance. */
static double lightness(double y)
{
    double f = y > 216.0 / 24389.0 ? cbrt(y) : (24389.0 / 27.0 * y + 16.0) / 116.0;
    return 116.0 * f - 16.0;
}

static double lin(int c8)
{
    double c = c8 / 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

/* CIE76 colour difference (sRGB, D65). */
static double delta_e(uint32_t a, uint32_t b)
{
    double lab[2][3];
    uint32_t c[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        double r = lin(red(c[k])), g = lin(green(c[k])), bl = lin(blue(c[k]));
        double xyz[3] = {(0.4124 * r + 0.3576 * g + 0.1805 * bl) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * bl,
                         (0.0193 * r + 0.1192 * g + 0.9505 * bl) / 1.08883};
        double f[3];
        for (int t = 0; t < 3; t++)
            f[t] = xyz[t] > 216.0 / 24389.0 ? cbrt(xyz[t]) : (24389.0 / 27.0 * xyz[t] + 16.0) / 116.0;
        lab[k][0] = 116.0 * f[1] - 16.0;
        lab[k][1] = 500.0 * (f[0] - f[1]);
        lab[k][2] = 200.0 * (f[1] - f[2]);
    }
    double d0 = lab[0][0] - lab[1][0], d1 = lab[0][1] - lab[1][1], d2 = lab[0][2] - lab[1][2];
    return sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

/* A picture buffer with a sentinel border: pitch and height exceed w and h. */
typedef struct {
    uint32_t *px;
    int w, h, pitch, alloc_h;
} pic;

static pic pic_new(int w, int h)
{
    pic p = {NULL, w, h, (w > 0 ? w : 0) + 7, (h > 0 ? h : 0) + 3};
    p.px = malloc((size_t)p.pitch * (size_t)p.alloc_h * sizeof *p.px);
    assert_non_null(p.px);
    for (int k = 0; k < p.pitch * p.alloc_h; k++)
        p.px[k] = SENTINEL;
    return p;
}

static uint32_t pic_at(const pic *p, int x, int y) { return p->px[y * p->pitch + x]; }

/* Every pixel outside [0,w)×[0,h) still holds the sentinel. */
static void assert_border_untouched(const pic *p)
{
    for (int y = 0; y < p->alloc_h; y++)
        for (int x = 0; x < p->pitch; x++)
            if (x >= p->w || y >= p->h)
                assert_int_equal(pic_at(p, x, y), SENTINEL);
}

static void paint(const app_slice *s, const app_scale *sc, pic *p, int gap)
{
    paint_heatmap(s, sc, p->px, p->pitch, p->w, p->h, gap);
    assert_border_untouched(p);
}

/* ---- colour maps ---- */

static void test_viridis_endpoints(void **state)
{
    (void)state;
    uint32_t lo = app_cmap_argb(APP_CMAP_SEQUENTIAL, 0.0f), hi = app_cmap_argb(APP_CMAP_SEQUENTIAL, 1.0f);
    assert_true(rgb_distance(lo, 0xFF440154u) <= 1.0);
    assert_true(rgb_distance(hi, 0xFFFDE725u) <= 1.0);
    assert_int_equal(lo >> 24, 0xFF);
    assert_int_equal(app_cmap_argb(APP_CMAP_SEQUENTIAL, -3.0f), lo);
    assert_int_equal(app_cmap_argb(APP_CMAP_SEQUENTIAL, NAN), lo);
    assert_int_equal(app_cmap_argb(APP_CMAP_SEQUENTIAL, 7.0f), hi);
}

/* The exact matplotlib viridis rises strictly in luminance; rounded to 8 bits
 * it dips by < 0.0003 at four of its 255 steps, so: strict over every 4th
 * entry, and no step down larger than that rounding. */
static void test_viridis_luminance_rises(void **state)
{
    (void)state;
    float prev = -1.0f, prev4 = -1.0f;
    for (int k = 0; k < 256; k++) {
        float y = app_argb_luminance(app_cmap_argb(APP_CMAP_SEQUENTIAL, (float)k / 255.0f));
        assert_true(y > prev - 0.0005f);
        if (k % 4 == 0 || k == 255) {
            assert_true(y > prev4);
            prev4 = y;
        }
        prev = y;
    }
}

static void test_diverging_centre_and_ends(void **state)
{
    (void)state;
    uint32_t c = app_cmap_argb(APP_CMAP_DIVERGING, 0.5f);
    assert_int_equal(red(c), green(c));
    assert_int_equal(green(c), blue(c));
    assert_true(red(c) > 160); /* light, not a dark grey */

    uint32_t b = app_cmap_argb(APP_CMAP_DIVERGING, 0.0f), r = app_cmap_argb(APP_CMAP_DIVERGING, 1.0f);
    assert_true(blue(b) > red(b) + 80 && blue(b) > green(b) + 80);
    assert_true(red(r) > blue(r) + 80 && red(r) > green(r) + 80);

    /* both arms darken away from the centre at the same rate (CIE L*) */
    for (int k = 0; k <= 500; k++) {
        float d = (float)k / 1000.0f;
        double l1 = lightness(app_argb_luminance(app_cmap_argb(APP_CMAP_DIVERGING, 0.5f - d)));
        double l2 = lightness(app_argb_luminance(app_cmap_argb(APP_CMAP_DIVERGING, 0.5f + d)));
        assert_true(fabs(l1 - l2) < 1.5);
        assert_true(l1 <= lightness(app_argb_luminance(c)) + 0.5);
    }
}

static void test_luminance(void **state)
{
    (void)state;
    assert_true(fabsf(app_argb_luminance(0xFFFFFFFFu) - 1.0f) < 1e-5f);
    assert_true(fabsf(app_argb_luminance(0xFF000000u)) < 1e-6f);
    assert_true(fabsf(app_argb_luminance(0xFF00FF00u) - 0.7152f) < 1e-4f);
    assert_true(fabsf(app_argb_luminance(0xFF0000FFu) - 0.0722f) < 1e-4f);
    /* sRGB mid grey 0x80 is about 21.6 % luminance, not 50 % */
    assert_true(fabsf(app_argb_luminance(0xFF808080u) - 0.2159f) < 1e-3f);
    /* alpha is ignored */
    assert_true(app_argb_luminance(0x00FFFFFFu) == app_argb_luminance(0xFFFFFFFFu));
}

static void test_group_palette(void **state)
{
    (void)state;
    const uint32_t okabe_ito[7] = {0xFFE69F00u, 0xFF56B4E9u, 0xFF009E73u, 0xFFF0E442u,
                                   0xFF0072B2u, 0xFFD55E00u, 0xFFCC79A7u};
    for (int i = 0; i < 7; i++)
        assert_int_equal(app_group_argb(i), okabe_ito[i]);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(app_group_argb(i + 8), app_group_argb(i));
        assert_int_equal(app_group_argb(i + 800), app_group_argb(i));
        for (int k = 0; k < i; k++)
            assert_int_not_equal(app_group_argb(i), app_group_argb(k));
    }
    uint32_t grey = app_group_argb(7); /* not black: it must show on the dark background */
    assert_true(red(grey) == green(grey) && green(grey) == blue(grey) && app_argb_luminance(grey) > 0.2f);
    assert_int_equal(app_group_argb(-1), app_group_argb(0));
    assert_int_equal(app_group_argb(-9), app_group_argb(0));
}

static const uint32_t reserved[] = {APP_HATCH_LIGHT, APP_HATCH_DARK, APP_NAN_A, APP_NAN_B, APP_GAP};
enum { NRESERVED = sizeof reserved / sizeof reserved[0], SWEEP = 100000 };

static void test_reserved_never_in_maps(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++)
        for (int k = -10; k <= SWEEP + 10; k++) {
            uint32_t c = app_cmap_argb((app_cmap)m, (float)k / SWEEP);
            for (int r = 0; r < NRESERVED; r++)
                assert_int_not_equal(c, reserved[r]);
        }
}

/* Thresholds: RGB distance 50 is about a fifth of the channel range, and CIE
 * ΔE 20 is roughly ten just-noticeable differences: the hatch greys and NaN
 * colours can't pass for a value even before their pattern is seen. The
 * nearest map colour to the hatch is coolwarm's grey centre (#DDDDDD) and its
 * neighbours, which is why the hatch greys are mid greys. */
static void test_reserved_far_from_maps(void **state)
{
    (void)state;
    double min_rgb[NRESERVED], min_de[NRESERVED];
    for (int r = 0; r < NRESERVED; r++)
        min_rgb[r] = min_de[r] = 1e9;
    uint32_t last = 0;
    for (int m = 0; m < 2; m++)
        for (int k = 0; k <= SWEEP; k++) {
            uint32_t c = app_cmap_argb((app_cmap)m, (float)k / SWEEP);
            if (c == last)
                continue;
            last = c;
            for (int r = 0; r < NRESERVED; r++) {
                min_rgb[r] = fmin(min_rgb[r], rgb_distance(c, reserved[r]));
                min_de[r] = fmin(min_de[r], delta_e(c, reserved[r]));
            }
        }
    for (int r = 0; r < NRESERVED; r++) {
        print_message("  reserved %08X: min RGB distance %.1f, min dE76 %.1f\n", (unsigned)reserved[r], min_rgb[r],
                      min_de[r]);
        assert_true(min_rgb[r] >= 50.0);
        if (r < 2) /* hatch greys */
            assert_true(min_de[r] >= 20.0);
    }
    /* the two stripes differ clearly from each other */
    assert_true(delta_e(APP_HATCH_LIGHT, APP_HATCH_DARK) >= 25.0);
}

static void test_heat_color(void **state)
{
    (void)state;
    app_scale seq = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f}, div = {APP_CMAP_DIVERGING, -2.0f, 2.0f};
    assert_int_equal(app_heat_color(&seq, 0.0f), app_cmap_argb(APP_CMAP_SEQUENTIAL, 0.0f));
    assert_int_equal(app_heat_color(&seq, 1.0f), app_cmap_argb(APP_CMAP_SEQUENTIAL, 1.0f));
    assert_int_equal(app_heat_color(&seq, -5.0f), app_cmap_argb(APP_CMAP_SEQUENTIAL, 0.0f));
    assert_int_equal(app_heat_color(&seq, 5.0f), app_cmap_argb(APP_CMAP_SEQUENTIAL, 1.0f));
    assert_int_equal(app_heat_color(&seq, INFINITY), app_cmap_argb(APP_CMAP_SEQUENTIAL, 1.0f));
    assert_int_equal(app_heat_color(&div, 0.0f), app_cmap_argb(APP_CMAP_DIVERGING, 0.5f));
    assert_int_equal(app_heat_color(&div, -2.0f), app_cmap_argb(APP_CMAP_DIVERGING, 0.0f));
    assert_int_equal(app_heat_color(&div, 2.0f), app_cmap_argb(APP_CMAP_DIVERGING, 1.0f));
    assert_int_equal(app_heat_color(&div, INFINITY), app_cmap_argb(APP_CMAP_DIVERGING, 1.0f));
    /* in between, the colour tracks u = (v - lo) / (hi - lo) */
    for (int k = 0; k <= 100; k++) {
        float u = (float)k / 100.0f;
        double d = rgb_distance(app_heat_color(&div, -2.0f + 4.0f * u), app_cmap_argb(APP_CMAP_DIVERGING, u));
        assert_true(d <= 8.0);
    }
    /* an empty range: diverging centre, sequential top, never a division by zero */
    app_scale flat_d = {APP_CMAP_DIVERGING, 0.3f, 0.3f}, flat_s = {APP_CMAP_SEQUENTIAL, 0.3f, 0.3f};
    app_scale back_s = {APP_CMAP_SEQUENTIAL, 1.0f, -1.0f};
    for (float v = -2.0f; v <= 2.0f; v += 0.25f) {
        assert_int_equal(app_heat_color(&flat_d, v), app_cmap_argb(APP_CMAP_DIVERGING, 0.5f));
        assert_int_equal(app_heat_color(&flat_s, v), app_cmap_argb(APP_CMAP_SEQUENTIAL, 1.0f));
        assert_int_equal(app_heat_color(&back_s, v), app_cmap_argb(APP_CMAP_SEQUENTIAL, 1.0f));
    }
    assert_int_equal(app_heat_color(&flat_d, INFINITY), app_cmap_argb(APP_CMAP_DIVERGING, 1.0f));
}

/* ---- geometry ---- */

static const int sizes[][4] = { /* w, h, rows, cols */
    {300, 300, 6, 6}, {301, 299, 7, 5}, {37, 41, 6, 6}, {100, 60, 3, 7}, {10, 10, 10, 10}, {13, 9, 4, 3},
    {256, 256, 256, 256}, {300, 300, 256, 256}, {5, 3, 16, 16}, {7, 50, 20, 3}, {1, 1, 1, 1}, {1, 1, 9, 9},
    {17, 23, 1, 1}, {1000, 700, 64, 64}, {33, 33, 32, 64},
};

static void test_geometry_tiles_and_inverts(void **state)
{
    (void)state;
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        int w = sizes[t][0], h = sizes[t][1], rows = sizes[t][2], cols = sizes[t][3];
        int *owner = calloc((size_t)w * (size_t)h, sizeof *owner);
        assert_non_null(owner);
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++) {
                int x, y, cw, ch;
                app_heat_cell_rect(w, h, rows, cols, i, j, &x, &y, &cw, &ch);
                assert_true(cw >= 0 && ch >= 0 && x >= 0 && y >= 0 && x + cw <= w && y + ch <= h);
                assert_int_equal(x, j * w / cols);
                assert_int_equal(y, i * h / rows);
                assert_int_equal(x + cw, (j + 1) * w / cols);
                assert_int_equal(y + ch, (i + 1) * h / rows);
                if (w >= cols)
                    assert_true(cw == w / cols || cw == w / cols + 1);
                if (h >= rows)
                    assert_true(ch == h / rows || ch == h / rows + 1);
                for (int yy = y; yy < y + ch; yy++)
                    for (int xx = x; xx < x + cw; xx++) {
                        owner[yy * w + xx]++;
                        int ci = -1, cj = -1;
                        assert_int_equal(app_heat_cell_at(w, h, rows, cols, xx, yy, &ci, &cj), 0);
                        assert_int_equal(ci, i);
                        assert_int_equal(cj, j);
                    }
            }
        for (int k = 0; k < w * h; k++)
            assert_int_equal(owner[k], 1);
        free(owner);

        int i, j;
        assert_int_equal(app_heat_cell_at(w, h, rows, cols, -1, 0, &i, &j), -1);
        assert_int_equal(app_heat_cell_at(w, h, rows, cols, 0, -1, &i, &j), -1);
        assert_int_equal(app_heat_cell_at(w, h, rows, cols, w, 0, &i, &j), -1);
        assert_int_equal(app_heat_cell_at(w, h, rows, cols, 0, h, &i, &j), -1);
        assert_int_equal(app_heat_cell_at(w, h, rows, cols, w + 100, h + 100, &i, &j), -1);
        assert_int_equal(app_heat_cell_at(w, h, 0, cols, 0, 0, &i, &j), -1);
        assert_int_equal(app_heat_cell_at(w, h, rows, -1, 0, 0, &i, &j), -1);
    }
    assert_int_equal(app_heat_cell_at(0, 0, 1, 1, 0, 0, NULL, NULL), -1);
}

/* ---- painting ---- */

/* 6×6 causal pattern: finite on and below the diagonal, −∞ above. */
static void causal(float *d, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            d[i * n + j] = j > i ? -INFINITY : (float)(i * n + j) / (float)(n * n);
}

/* Checks every cell of a painted slice against heatmap.h; gap is the gap in force. */
static void check_cells(const pic *p, const app_slice *s, const app_scale *sc, int gap)
{
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) {
            int x0, y0, cw, ch;
            app_heat_cell_rect(p->w, p->h, s->rows, s->cols, i, j, &x0, &y0, &cw, &ch);
            float v = app_slice_at(s, i, j);
            int seen_dark = 0, seen_light = 0, seen_a = 0, seen_b = 0;
            for (int y = y0; y < y0 + ch; y++)
                for (int x = x0; x < x0 + cw; x++) {
                    uint32_t c = pic_at(p, x, y);
                    if (x >= x0 + cw - gap || y >= y0 + ch - gap) {
                        assert_int_equal(c, APP_GAP);
                    } else if (v == -INFINITY) {
                        assert_true(is_hatch(c));
                        /* stripes tied to the picture, not the cell */
                        assert_int_equal(c, (x + y) % 8 < 3 ? APP_HATCH_DARK : APP_HATCH_LIGHT);
                        seen_dark |= c == APP_HATCH_DARK;
                        seen_light |= c == APP_HATCH_LIGHT;
                    } else if (isnan(v)) {
                        assert_int_equal(c, (x / 4 + y / 4) % 2 ? APP_NAN_B : APP_NAN_A);
                        seen_a |= c == APP_NAN_A;
                        seen_b |= c == APP_NAN_B;
                    } else {
                        assert_false(is_hatch(c));
                        assert_int_equal(c, app_heat_color(sc, v));
                    }
                }
            if (v == -INFINITY && cw - gap >= 6 && ch - gap >= 6)
                assert_true(seen_dark && seen_light);
            if (isnan(v) && cw - gap >= 8 && ch - gap >= 8)
                assert_true(seen_a && seen_b);
        }
}

static int count(const pic *p, uint32_t c)
{
    int n = 0;
    for (int y = 0; y < p->h; y++)
        for (int x = 0; x < p->w; x++)
            n += pic_at(p, x, y) == c;
    return n;
}

static void test_paint_causal(void **state)
{
    (void)state;
    float d[36];
    causal(d, 6);
    app_slice s = {d, 6, 6, 6, 1, NULL, 0, 0};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    pic p = pic_new(300, 300);
    paint(&s, &sc, &p, 1);
    check_cells(&p, &s, &sc, 1);
    assert_int_equal(count(&p, APP_GAP), 300 * 300 - 49 * 49 * 36);
    /* below the diagonal the cells differ, so the map really was used */
    assert_int_not_equal(pic_at(&p, 10, 60), pic_at(&p, 10, 260));
    assert_int_equal(count(&p, SENTINEL), 0);
    free(p.px);
}

/* A slice mask hatches the cells it masks whatever their value (the zeroed
 * weights), and leaves the others to the map; a transposed mask is read
 * through its own strides. */
static void test_paint_slice_mask(void **state)
{
    (void)state;
    float w[12], m[12];
    for (int k = 0; k < 12; k++) w[k] = 0.0f;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) m[j * 3 + i] = j > i ? -INFINITY : 0.0f; /* stored (4, 3): transposed */
    app_slice s = {w, 3, 4, 4, 1, m, 1, 3};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    pic p = pic_new(40, 30);
    paint(&s, &sc, &p, 0);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            int x, y, cw, ch, hatch = 0, map = 0;
            app_heat_cell_rect(40, 30, 3, 4, i, j, &x, &y, &cw, &ch);
            for (int yy = y; yy < y + ch; yy++)
                for (int xx = x; xx < x + cw; xx++) {
                    uint32_t c = pic_at(&p, xx, yy);
                    hatch += is_hatch(c);
                    map += c == app_heat_color(&sc, 0.0f);
                }
            if (j > i) assert_int_equal(hatch, cw * ch);
            else assert_int_equal(map, cw * ch);
        }
    free(p.px);
}

/* An unguarded softmax's NaN row lies under the mask: NaN wins over the
 * hatch, so the row shows as NaN, not as masked. */
static void test_paint_nan_under_mask(void **state)
{
    (void)state;
    float w[6] = {NAN, NAN, NAN, 0.0f, 1.0f, 0.0f}, m[6] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, 0.0f, -INFINITY};
    app_slice s = {w, 2, 3, 3, 1, m, 3, 1};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    pic p = pic_new(48, 32);
    paint(&s, &sc, &p, 0);
    for (int j = 0; j < 3; j++) {
        int x, y, cw, ch, nan = 0, hatch = 0;
        app_heat_cell_rect(48, 32, 2, 3, 0, j, &x, &y, &cw, &ch);
        for (int yy = y; yy < y + ch; yy++)
            for (int xx = x; xx < x + cw; xx++) nan += pic_at(&p, xx, yy) == APP_NAN_A || pic_at(&p, xx, yy) == APP_NAN_B;
        assert_int_equal(nan, cw * ch);
        app_heat_cell_rect(48, 32, 2, 3, 1, j, &x, &y, &cw, &ch);
        for (int yy = y; yy < y + ch; yy++)
            for (int xx = x; xx < x + cw; xx++) hatch += is_hatch(pic_at(&p, xx, yy));
        assert_int_equal(hatch, j == 1 ? 0 : cw * ch);
    }
    free(p.px);
}

/* 6-pixel cells, with and without a gap, still show both hatch colours. */
static void test_paint_small_cells_show_stripes(void **state)
{
    (void)state;
    float d[36];
    causal(d, 6);
    app_slice s = {d, 6, 6, 6, 1, NULL, 0, 0};
    app_scale sc = {APP_CMAP_DIVERGING, -1.0f, 1.0f};
    for (int gap = 0; gap <= 1; gap++) {
        pic p = pic_new(36, 36);
        paint(&s, &sc, &p, gap);
        check_cells(&p, &s, &sc, gap);
        for (int i = 0; i < 6; i++)
            for (int j = i + 1; j < 6; j++) {
                int dark = 0, light = 0;
                for (int y = 6 * i; y < 6 * i + 6 - gap; y++)
                    for (int x = 6 * j; x < 6 * j + 6 - gap; x++) {
                        dark |= pic_at(&p, x, y) == APP_HATCH_DARK;
                        light |= pic_at(&p, x, y) == APP_HATCH_LIGHT;
                    }
                assert_true(dark && light);
            }
        free(p.px);
    }
}

static void test_paint_nan_checkerboard(void **state)
{
    (void)state;
    float d[6] = {0.1f, NAN, -INFINITY, 0.5f, INFINITY, NAN};
    app_slice s = {d, 2, 3, 3, 1, NULL, 0, 0};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    pic p = pic_new(61, 43);
    paint(&s, &sc, &p, 2);
    check_cells(&p, &s, &sc, 2);
    assert_true(count(&p, APP_NAN_A) > 0 && count(&p, APP_NAN_B) > 0);
    assert_int_equal(pic_at(&p, 30, 30), app_cmap_argb(APP_CMAP_SEQUENTIAL, 1.0f)); /* +∞: top of the map */
    free(p.px);
}

static void test_paint_gap_only_when_it_fits(void **state)
{
    (void)state;
    float d[36];
    causal(d, 6);
    app_slice s = {d, 6, 6, 6, 1, NULL, 0, 0};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    const int cases[][4] = { /* w, h, gap, expect gap pixels */
        {300, 300, 1, 1}, {300, 300, 0, 0}, {30, 30, 1, 0}, {36, 36, 1, 1}, {36, 35, 1, 0},
        {41, 38, 1, 1},   {48, 48, 2, 1},   {47, 48, 2, 0}, {300, 300, -3, 0}, {300, 300, 30, 0},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        pic p = pic_new(cases[t][0], cases[t][1]);
        paint(&s, &sc, &p, cases[t][2]);
        int gaps = count(&p, APP_GAP);
        if (cases[t][3]) {
            assert_true(gaps > 0);
            check_cells(&p, &s, &sc, cases[t][2]);
        } else {
            assert_int_equal(gaps, 0);
            check_cells(&p, &s, &sc, 0);
        }
        assert_int_equal(count(&p, SENTINEL), 0);
        free(p.px);
    }
}

/* Taller than its cells (4,096 query rows of a long prompt in 64 pixels): a
 * pixel row shows the largest value of the rows it stands for, so a single
 * strong cell anywhere stays visible, in the right column; masked cells do not count. */
static void test_paint_max_pools_tall_columns(void **state)
{
    (void)state;
    enum { R = 4096, C = 8, H = 64 };
    float *d = calloc((size_t)R * C, sizeof *d), *m = calloc((size_t)R * C, sizeof *m);
    assert_non_null(d);
    assert_non_null(m);
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    for (int peak = 0; peak < R; peak += 251) {
        int col = peak % C;
        memset(d, 0, (size_t)R * C * sizeof *d);
        memset(m, 0, (size_t)R * C * sizeof *m);
        d[(size_t)peak * C + col] = 1.0f;
        d[(size_t)peak * C + (col + 4) % C] = 1.0f; /* the same peak in another column, masked */
        m[(size_t)peak * C + (col + 4) % C] = -INFINITY;
        app_slice s = {d, R, C, C, 1, m, C, 1};
        pic p = pic_new(C * 4, H);
        paint(&s, &sc, &p, 0);
        int hot = 0, where = -1;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < C * 4; x += 4)
                if (pic_at(&p, x, y) == app_heat_color(&sc, 1.0f)) hot++, where = x / 4;
        if (hot != 1 || where != col) fail_msg("peak at row %d: %d pixels show it, in column %d (want 1 in %d)", peak, hot, where, col);
        free(p.px);
    }
    free(d);
    free(m);
}

/* Narrower than its cells (3,072 vocabulary columns in 40 pixels): a pixel
 * column shows the largest value among the cells it stands for, so a lone
 * peak is never dropped; masked cells do not count. */
static void test_paint_max_pools_wide_rows(void **state)
{
    (void)state;
    enum { C = 3072, W = 40 };
    float *d = calloc(2 * C, sizeof *d), *m = calloc(2 * C, sizeof *m);
    assert_non_null(d);
    assert_non_null(m);
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    for (int peak = 0; peak < C; peak += 97) {
        memset(d, 0, 2 * C * sizeof *d);
        d[peak] = 1.0f;       /* row 0: one peak */
        d[C + peak] = 1.0f;   /* row 1: the same peak, masked */
        memset(m, 0, 2 * C * sizeof *m);
        m[C + peak] = -INFINITY;
        app_slice s = {d, 2, C, C, 1, m, C, 1};
        pic p = pic_new(W, 10);
        paint(&s, &sc, &p, 0);
        int hot = 0, hot1 = 0;
        for (int x = 0; x < W; x++) {
            hot += pic_at(&p, x, 0) == app_heat_color(&sc, 1.0f);
            hot1 += pic_at(&p, x, 9) == app_heat_color(&sc, 1.0f);
        }
        if (hot != 1) fail_msg("peak at column %d: %d pixel columns show it (want 1)", peak, hot);
        assert_int_equal(hot1, 0);
        free(p.px);
    }
    free(d);
    free(m);
}

static void test_paint_strided(void **state)
{
    (void)state;
    float d[20];
    for (int k = 0; k < 20; k++)
        d[k] = (float)k / 19.0f * 2.0f - 1.0f;
    d[7] = -INFINITY;
    app_slice s = {d, 5, 4, 1, 5, NULL, 0, 0};
    app_scale sc = {APP_CMAP_DIVERGING, -1.0f, 1.0f};
    pic p = pic_new(43, 57);
    paint(&s, &sc, &p, 0);
    check_cells(&p, &s, &sc, 0);
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++) {
            int x, y, cw, ch;
            app_heat_cell_rect(43, 57, 5, 4, i, j, &x, &y, &cw, &ch);
            uint32_t c = pic_at(&p, x, y + 1);
            if (j * 5 + i == 7)
                assert_true(is_hatch(c));
            else
                assert_int_equal(c, app_heat_color(&sc, d[j * 5 + i]));
        }
    /* a negative stride reads a flipped view */
    app_slice f = {d + 15, 4, 5, -5, 1, NULL, 0, 0};
    pic q = pic_new(50, 40);
    paint(&f, &sc, &q, 0);
    check_cells(&q, &f, &sc, 0);
    assert_int_equal(pic_at(&q, 0, 0), app_heat_color(&sc, d[15]));
    free(p.px);
    free(q.px);
}

/* Fewer pixels than cells: every pixel shows the cell app_heat_cell_at names. */
static void test_paint_tiny(void **state)
{
    (void)state;
    enum { N = 256 };
    float *d = malloc(N * N * sizeof *d);
    assert_non_null(d);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            d[i * N + j] = j > i ? -INFINITY : (float)((i * 7 + j * 13) % 97) / 96.0f;
    d[3 * N + 1] = NAN;
    app_slice s = {d, N, N, N, 1, NULL, 0, 0};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 1.0f};
    const int dims[][2] = {{50, 30}, {1, 1}, {255, 3}, {3, 255}, {7, 300}};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        pic p = pic_new(dims[t][0], dims[t][1]);
        paint(&s, &sc, &p, 1);
        for (int y = 0; y < p.h; y++)
            for (int x = 0; x < p.w; x++) {
                int i, j;
                assert_int_equal(app_heat_cell_at(p.w, p.h, N, N, x, y, &i, &j), 0);
                uint32_t c = pic_at(&p, x, y);
                float v = d[i * N + j];
                if (v == -INFINITY)
                    assert_true(is_hatch(c));
                else if (isnan(v))
                    assert_true(c == APP_NAN_A || c == APP_NAN_B);
                else { /* the largest finite value since the previous pixel column's cell and row's */
                    int pi = -1, pj = -1, ignore;
                    if (x > 0) app_heat_cell_at(p.w, p.h, N, N, x - 1, y, &ignore, &pj);
                    if (y > 0) app_heat_cell_at(p.w, p.h, N, N, x, y - 1, &pi, &ignore);
                    if (pi == i) pi = i - 1; /* a cell taller than a pixel: its own row only */
                    for (int ii = pi + 1; ii <= i; ii++)
                        for (int jj = pj + 1; jj <= j; jj++)
                            if (isfinite(d[ii * N + jj]) && d[ii * N + jj] > v) v = d[ii * N + jj];
                    if (c != app_heat_color(&sc, v))
                        fail_msg("%dx%d picture, pixel (%d, %d), cell (%d, %d) from (%d, %d): %08x, want %08x", p.w, p.h,
                                 x, y, i, j, pi + 1, pj + 1, c, app_heat_color(&sc, v));
                }
            }
        free(p.px);
    }
    free(d);
}

static void test_paint_nothing_on_empty_sizes(void **state)
{
    (void)state;
    float d[4] = {0.0f, 1.0f, 2.0f, 3.0f};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0.0f, 3.0f};
    const int cases[][4] = {{0, 2, 2, 2}, {2, 0, 2, 2}, {-5, 2, 2, 2}, {2, 2, 0, 2}, {2, 2, 2, 0}, {2, 2, -1, -1}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        app_slice s = {d, cases[t][2], cases[t][3], 2, 1, NULL, 0, 0};
        pic p = pic_new(8, 8); /* the buffer is real; only the call's sizes are empty */
        paint_heatmap(&s, &sc, p.px, p.pitch, cases[t][0], cases[t][1], 1);
        assert_int_equal(count(&p, SENTINEL), 8 * 8);
        free(p.px);
    }
    app_slice s = {d, 2, 2, 2, 1, NULL, 0, 0};
    pic p = pic_new(8, 8);
    paint_heatmap(&s, &sc, p.px, 7, 8, 8, 0); /* a pitch shorter than a row */
    paint_heatmap(NULL, &sc, p.px, p.pitch, 8, 8, 0);
    paint_heatmap(&s, NULL, p.px, p.pitch, 8, 8, 0);
    paint_heatmap(&s, &sc, NULL, p.pitch, 8, 8, 0);
    assert_int_equal(count(&p, SENTINEL), 8 * 8);
    free(p.px);
}

static void test_paint_flat_range(void **state)
{
    (void)state;
    float d[9] = {0.3f, 0.3f, -INFINITY, 0.3f, 0.3f, 0.3f, 5.0f, -7.0f, 0.3f};
    app_slice s = {d, 3, 3, 3, 1, NULL, 0, 0};
    for (int m = 0; m < 2; m++) {
        app_scale sc = {(app_cmap)m, 0.3f, 0.3f};
        uint32_t expect = app_cmap_argb((app_cmap)m, m == APP_CMAP_DIVERGING ? 0.5f : 1.0f);
        pic p = pic_new(30, 30);
        paint(&s, &sc, &p, 0);
        check_cells(&p, &s, &sc, 0);
        assert_int_equal(pic_at(&p, 0, 0), expect);
        assert_int_equal(pic_at(&p, 25, 25), expect);
        assert_int_equal(pic_at(&p, 5, 25), expect);
        free(p.px);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Not a pass/fail timing: prints how long a grid frame and a single view take;
 * fails only if a paint leaves a pixel unpainted or strays outside. */
static void test_paint_speed(void **state)
{
    (void)state;
    enum { N = 256, HEADS = 16, FRAMES = 100 };
    float *d = malloc(N * N * sizeof *d);
    assert_non_null(d);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            d[i * N + j] = j > i ? -INFINITY : sinf((float)(i * N + j));
    app_slice s = {d, N, N, N, 1, NULL, 0, 0};
    app_scale sc = {APP_CMAP_DIVERGING, -1.0f, 1.0f};
    pic grid = pic_new(300, 300), single = pic_new(1000, 700);

    double grid_ms = 1e9, single_ms = 1e9; /* best of FRAMES: the least disturbed by other processes */
    for (int f = 0; f < FRAMES; f++) {
        double t0 = now_ms();
        for (int head = 0; head < HEADS; head++)
            paint_heatmap(&s, &sc, grid.px, grid.pitch, grid.w, grid.h, 1);
        double t1 = now_ms();
        paint_heatmap(&s, &sc, single.px, single.pitch, single.w, single.h, 1);
        double t2 = now_ms();
        grid_ms = fmin(grid_ms, t1 - t0);
        single_ms = fmin(single_ms, t2 - t1);
    }
    print_message("  16 heads of %dx%d cells at 300x300 px: %.3f ms per frame (%.2f ms/Mpx)\n", N, N, grid_ms,
                  grid_ms / (HEADS * 0.09));
    print_message("  one %dx%d slice at 1000x700 px: %.3f ms (%.2f ms/Mpx)\n", N, N, single_ms, single_ms / 0.7);

    assert_int_equal(count(&grid, SENTINEL), 0);
    assert_int_equal(count(&single, SENTINEL), 0);
    assert_border_untouched(&grid);
    free(grid.px);
    free(single.px);
    free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_viridis_endpoints),
        cmocka_unit_test(test_viridis_luminance_rises),
        cmocka_unit_test(test_diverging_centre_and_ends),
        cmocka_unit_test(test_luminance),
        cmocka_unit_test(test_group_palette),
        cmocka_unit_test(test_reserved_never_in_maps),
        cmocka_unit_test(test_reserved_far_from_maps),
        cmocka_unit_test(test_heat_color),
        cmocka_unit_test(test_geometry_tiles_and_inverts),
        cmocka_unit_test(test_paint_causal),
        cmocka_unit_test(test_paint_small_cells_show_stripes),
        cmocka_unit_test(test_paint_nan_checkerboard),
        cmocka_unit_test(test_paint_gap_only_when_it_fits),
        cmocka_unit_test(test_paint_strided),
        cmocka_unit_test(test_paint_max_pools_wide_rows),
        cmocka_unit_test(test_paint_max_pools_tall_columns),
        cmocka_unit_test(test_paint_tiny),
        cmocka_unit_test(test_paint_nothing_on_empty_sizes),
        cmocka_unit_test(test_paint_flat_range),
        cmocka_unit_test(test_paint_slice_mask),
        cmocka_unit_test(test_paint_nan_under_mask),
        cmocka_unit_test(test_paint_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
