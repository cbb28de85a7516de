/* test_ui_font.c — fonts through fontconfig, glyph fallback, measuring,
 * bad UTF-8 and the texture cache, drawn with SDL's software renderer on an
 * offscreen surface and read back pixel by pixel. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <SDL.h>
#include <SDL_ttf.h>
#include <fontconfig/fontconfig.h>

#include "font.h"

#define W 512
#define H 96
#define PX 16

typedef struct {
    SDL_Surface *surface;
    SDL_Renderer *r;
    sdl_font *f;
    uint32_t pixels[W * H];
} fixture;

static const SDL_Color white = {255, 255, 255, 255};

static int setup_renderer(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    if (!fx || SDL_Init(SDL_INIT_VIDEO) != 0)
        return -1;
    fx->surface = SDL_CreateRGBSurfaceWithFormat(0, W, H, 32, SDL_PIXELFORMAT_ARGB8888);
    if (!fx->surface || !(fx->r = SDL_CreateSoftwareRenderer(fx->surface)))
        return -1;
    *state = fx;
    return 0;
}

static int setup(void **state)
{
    char err[256];
    fixture *fx;

    if (setup_renderer(state) != 0)
        return -1;
    fx = *state;
    if (sdl_font_open(fx->r, PX, &fx->f, err, sizeof err) != 0) {
        print_error("sdl_font_open: %s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    sdl_font_close(fx->f);
    SDL_DestroyRenderer(fx->r);
    SDL_FreeSurface(fx->surface);
    free(fx);
    SDL_Quit();
    return 0;
}

typedef struct {
    int count; /* pixels with ink */
    int x0, y0, x1, y1; /* ink bounding box, inclusive */
} ink;

/* Clears to black, draws text in white at (4, 4), reads the pixels back. */
static ink draw_ink(fixture *fx, const char *text, int *drawn)
{
    ink k = {0, W, H, -1, -1};

    SDL_SetRenderDrawColor(fx->r, 0, 0, 0, 255);
    SDL_RenderClear(fx->r);
    int w = sdl_font_draw(fx->f, text, 4, 4, white);
    if (drawn)
        *drawn = w;
    SDL_RenderPresent(fx->r);
    assert_int_equal(SDL_RenderReadPixels(fx->r, NULL, SDL_PIXELFORMAT_ARGB8888, fx->pixels,
                                          W * 4),
                     0);
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            if (((fx->pixels[y * W + x] >> 16) & 0xFF) <= 96)
                continue;
            k.count++;
            if (x < k.x0) k.x0 = x;
            if (x > k.x1) k.x1 = x;
            if (y < k.y0) k.y0 = y;
            if (y > k.y1) k.y1 = y;
        }
    }
    return k;
}

static int width_of(sdl_font *f, const char *s)
{
    int w = -1, h = -1;
    sdl_font_measure(f, s, &w, &h);
    return w;
}

/* 1. the strings the lessons use have a glyph for every code point */
static void no_missing_glyphs(void **state)
{
    fixture *fx = *state;
    const char *texts[] = {
        "你 是 一 只 猫 娘",
        "我 爱 AI",
        "scores[h=2, i=3, j=1] = q₃·k₁ / √16",
        "−∞",
        "Σ = 1.000",
        "−∞ √ · ₀₁₂₃ ᵀ Σ ≤ ← → ↑ ↓ ✓ ✗ ▶ ◀",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        int n = sdl_font_missing_glyphs(fx->f, texts[i]);
        if (n != 0)
            print_error("%d missing in \"%s\"\n", n, texts[i]);
        assert_int_equal(n, 0);
    }
}

/* 2. two Chinese characters draw as two different shapes, not one box; a
 * code point no font has is counted */
static void cjk_glyphs_differ(void **state)
{
    fixture *fx = *state;
    static uint8_t a[W * H];

    ink ni = draw_ink(fx, "你", NULL);
    assert_true(ni.count > 20);
    for (int i = 0; i < W * H; i++)
        a[i] = ((fx->pixels[i] >> 16) & 0xFF) > 96;
    ink nn = draw_ink(fx, "娘", NULL);
    assert_true(nn.count > 20);
    int differ = 0;
    for (int i = 0; i < W * H; i++)
        differ += a[i] != (((fx->pixels[i] >> 16) & 0xFF) > 96);
    assert_true(differ > 20);

    int faces = sdl_font_face_count(fx->f);
    assert_int_equal(sdl_font_missing_glyphs(fx->f, "\xf4\x8f\xbf\xbd"), 1); /* U+10FFFD */
    assert_int_equal(sdl_font_missing_glyphs(fx->f, "a\xf4\x8f\xbf\xbd" "b\xf4\x8f\xbf\xbd"), 2);
    assert_int_equal(sdl_font_face_count(fx->f), faces);
    int w;
    draw_ink(fx, "\xf4\x8f\xbf\xbd", &w); /* the Latin face's box, no crash */
    assert_true(w > 0);
}

/* 3. Chinese comes from the CJK face, on the Latin baseline */
static void cjk_face_is_used(void **state)
{
    fixture *fx = *state;
    int found = 0;

    assert_true(sdl_font_face_count(fx->f) >= 2);
    assert_string_equal(sdl_font_face_path(fx->f, 0), "DejaVuSans.ttf");
    for (int i = 0; i < sdl_font_face_count(fx->f); i++)
        found |= strstr(sdl_font_face_path(fx->f, i), "wqy") != NULL;
    assert_true(found);
    assert_null(sdl_font_face_path(fx->f, -1));
    assert_null(sdl_font_face_path(fx->f, sdl_font_face_count(fx->f)));

    ink ni = draw_ink(fx, "你", NULL);
    assert_true(ni.x1 - ni.x0 + 1 > PX / 2);
    assert_true(ni.y1 - ni.y0 + 1 > PX / 2);
    /* "x" sits on the baseline; 你 reaches it too, give or take a pixel or two */
    ink nx = draw_ink(fx, "x", NULL);
    assert_true(abs(ni.y1 - nx.y1) <= PX / 8);
    assert_true(ni.y0 < nx.y0); /* and is taller than an x */
}

/* 3b. a code point neither face has loads another face on demand */
static void lazy_fallback_face(void **state)
{
    fixture *fx = *state;
    const char *math_a = "\xf0\x9d\x90\xb4"; /* U+1D434 MATHEMATICAL ITALIC CAPITAL A */
    FcPattern *pat = FcPatternCreate();
    FcCharSet *cs = FcCharSetCreate();
    FcObjectSet *os = FcObjectSetBuild(FC_FILE, (char *)NULL);
    FcFontSet *set;
    int available;

    /* fontconfig is initialised while the font is open */
    FcCharSetAddChar(cs, 0x1D434);
    FcPatternAddCharSet(pat, FC_CHARSET, cs);
    set = FcFontList(NULL, pat, os);
    available = set && set->nfont > 0;
    if (set)
        FcFontSetDestroy(set);
    FcObjectSetDestroy(os);
    FcCharSetDestroy(cs);
    FcPatternDestroy(pat);
    if (!available)
        skip();

    int faces = sdl_font_face_count(fx->f);
    assert_int_equal(sdl_font_missing_glyphs(fx->f, math_a), 0);
    assert_int_equal(sdl_font_face_count(fx->f), faces + 1);
    assert_int_equal(sdl_font_missing_glyphs(fx->f, "x𝐴y"), 0);
    assert_int_equal(sdl_font_face_count(fx->f), faces + 1);
    int w;
    ink k = draw_ink(fx, math_a, &w);
    assert_true(w > 0 && k.count > 10);

    /* that face has its own ascent, yet 𝐴 and A stand on one baseline */
    assert_int_equal(sdl_font_set_size(fx->f, 48), 0);
    ink latin = draw_ink(fx, "A", NULL);
    ink math = draw_ink(fx, math_a, NULL);
    assert_true(abs(latin.y1 - math.y1) <= 1);
    assert_true(math.y1 - math.y0 > 48 / 3);
}

/* 4. measure predicts draw, and runs add up */
static void measure_matches_draw(void **state)
{
    fixture *fx = *state;
    const char *texts[] = {"attention", "你 是 一 只 猫 娘", "我 爱 AI",
                           "scores[h=2] = q₃·k₁ / √16", "−∞", "Ag 你 x",
                           "tab\tand\nnewline"};

    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        int w, h, drawn;
        sdl_font_measure(fx->f, texts[i], &w, &h);
        assert_true(w > 0);
        assert_int_equal(h, sdl_font_line_height(fx->f));
        ink k = draw_ink(fx, texts[i], &drawn);
        assert_int_equal(drawn, w);
        assert_true(k.count > 0);
        assert_true(k.x1 < 4 + w + 1 && k.y1 < 4 + h);
        /* measured again, now from the cache */
        int w2;
        sdl_font_measure(fx->f, texts[i], &w2, NULL);
        assert_int_equal(w2, w);
    }
    int sum = width_of(fx->f, "ab") + width_of(fx->f, "你");
    assert_true(abs(sum - width_of(fx->f, "ab你")) <= 1);
    assert_true(width_of(fx->f, "abc") > width_of(fx->f, "ab"));

    int w = -1, h = -1, drawn = -1;
    sdl_font_measure(fx->f, "", &w, &h);
    assert_int_equal(w, 0);
    assert_int_equal(h, sdl_font_line_height(fx->f));
    ink k = draw_ink(fx, "", &drawn);
    assert_int_equal(drawn, 0);
    assert_int_equal(k.count, 0);
    assert_int_equal(sdl_font_draw(fx->f, NULL, 0, 0, white), 0);
}

/* 5. ill-formed UTF-8 draws as U+FFFD, one per maximal invalid subpart */
static void invalid_utf8(void **state)
{
    fixture *fx = *state;
    const char *bad[] = {"\xff\xfe", "\xe4\xbd", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                         "a\xe4\xbd", "\x80", "\xf0\x9f\x98"};
    const char *fffd = "\xef\xbf\xbd";
    int one = width_of(fx->f, fffd);

    assert_true(one > 0);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int drawn;
        assert_true(width_of(fx->f, bad[i]) > 0);
        draw_ink(fx, bad[i], &drawn);
        assert_int_equal(drawn, width_of(fx->f, bad[i]));
        assert_int_equal(sdl_font_missing_glyphs(fx->f, bad[i]), 0);
    }
    assert_int_equal(width_of(fx->f, "\xff"), one);
    assert_int_equal(width_of(fx->f, "\xe4\xbd"), one); /* truncated: one */
    assert_int_equal(width_of(fx->f, "\xf0\x9f\x98"), one);
    /* overlong and surrogate: one for each byte */
    assert_int_equal(width_of(fx->f, "\xc0\xaf"), width_of(fx->f, "\xef\xbf\xbd\xef\xbf\xbd"));
    assert_int_equal(width_of(fx->f, "\xed\xa0\x80"),
                     width_of(fx->f, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"));
    assert_true(width_of(fx->f, "\xc0\xaf") > one);
    assert_int_equal(width_of(fx->f, "a\xe4\xbd" "b"), width_of(fx->f, "a\xef\xbf\xbd" "b"));
    assert_int_equal(width_of(fx->f, "\xe4\xbd\xa0"), width_of(fx->f, "你"));
}

/* 6. a string drawn twice is one texture; set_size empties the cache; it
 * never grows past its capacity */
static void texture_cache(void **state)
{
    fixture *fx = *state;
    static uint32_t first[W * H];
    char s[32];

    assert_int_equal(sdl_font_cache_count(fx->f), 0);
    draw_ink(fx, "hello 你", NULL);
    memcpy(first, fx->pixels, sizeof first);
    assert_int_equal(sdl_font_cache_count(fx->f), 1);
    draw_ink(fx, "hello 你", NULL);
    assert_int_equal(sdl_font_cache_count(fx->f), 1);
    assert_memory_equal(first, fx->pixels, sizeof first); /* the cached copy looks the same */

    sdl_font_draw(fx->f, "hello 你", 0, 0, (SDL_Color){255, 0, 0, 255});
    assert_int_equal(sdl_font_cache_count(fx->f), 2);
    sdl_font_measure(fx->f, "not drawn", NULL, NULL);
    sdl_font_draw(fx->f, "", 0, 0, white);
    assert_int_equal(sdl_font_cache_count(fx->f), 2);

    assert_int_equal(sdl_font_set_size(fx->f, PX + 4), 0);
    assert_int_equal(sdl_font_cache_count(fx->f), 0);

    for (int i = 0; i < ATTNLAB_SDL_FONT_CACHE_MAX + 100; i++) {
        snprintf(s, sizeof s, "%d", i);
        assert_true(sdl_font_draw(fx->f, s, 0, 0, white) > 0);
        assert_true(sdl_font_cache_count(fx->f) <= ATTNLAB_SDL_FONT_CACHE_MAX);
    }
    int n = sdl_font_cache_count(fx->f);
    assert_true(n > 0);
    sdl_font_draw(fx->f, s, 0, 0, white);
    assert_int_equal(sdl_font_cache_count(fx->f), n);
}

/* 7. sizes: bigger pixels, taller lines, wider text */
static void set_size(void **state)
{
    fixture *fx = *state;
    int h16 = sdl_font_line_height(fx->f);
    int w16 = width_of(fx->f, "Ag 你");

    assert_int_equal(sdl_font_size(fx->f), PX);
    assert_true(h16 >= PX && h16 <= 2 * PX);
    assert_int_equal(sdl_font_set_size(fx->f, 24), 0);
    assert_int_equal(sdl_font_size(fx->f), 24);
    assert_true(sdl_font_line_height(fx->f) > h16);
    assert_true(width_of(fx->f, "Ag 你") > w16);
    ink k = draw_ink(fx, "你", NULL);
    assert_true(k.x1 - k.x0 + 1 > 24 / 2);

    assert_int_equal(sdl_font_set_size(fx->f, 0), -1);
    assert_int_equal(sdl_font_size(fx->f), 24);
    assert_int_equal(sdl_font_set_size(fx->f, PX), 0);
    assert_int_equal(sdl_font_line_height(fx->f), h16);
    assert_int_equal(width_of(fx->f, "Ag 你"), w16);
}

/* SDL_ttf is initialised by the first font and shut down by the last, unless
 * the caller had initialised it */
static void ttf_init_refcount(void **state)
{
    fixture *fx = *state;
    sdl_font *a, *b;
    char err[256];

    assert_int_equal(TTF_WasInit(), 0);
    assert_int_equal(sdl_font_open(fx->r, PX, &a, err, sizeof err), 0);
    assert_int_equal(sdl_font_open(fx->r, 20, &b, err, sizeof err), 0);
    assert_true(TTF_WasInit() > 0);
    sdl_font_close(a);
    assert_true(TTF_WasInit() > 0);
    assert_true(sdl_font_draw(b, "still 你", 0, 0, white) > 0);
    sdl_font_close(b);
    assert_int_equal(TTF_WasInit(), 0);

    assert_int_equal(TTF_Init(), 0);
    assert_int_equal(sdl_font_open(fx->r, PX, &a, err, sizeof err), 0);
    sdl_font_close(a);
    assert_int_equal(TTF_WasInit(), 1);
    TTF_Quit();
    sdl_font_close(NULL);
}

/* 8. fontconfig with no fonts: -1 and a one-line message, then recovery */
static void no_fonts_error(void **state)
{
    fixture *fx = *state;
    const char *dir = getenv("ATTNLAB_TEST_TMP");
    char path[1024], err[256];
    sdl_font *f = (sdl_font *)&f;
    FILE *fp;

    snprintf(path, sizeof path, "%s/test_ui_font_empty.conf", dir && *dir ? dir : "/tmp");
    fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("<?xml version=\"1.0\"?>\n<fontconfig></fontconfig>\n", fp);
    fclose(fp);

    /* no font is open, so the next open starts fontconfig afresh */
    assert_int_equal(setenv("FONTCONFIG_FILE", path, 1), 0);
    int rc = sdl_font_open(fx->r, PX, &f, err, sizeof err);
    unsetenv("FONTCONFIG_FILE");
    remove(path);
    assert_int_equal(rc, -1);
    assert_null(f);
    assert_non_null(strstr(err, "font"));
    assert_null(strchr(err, '\n'));
    assert_true(strlen(err) > 10);
    assert_int_equal(TTF_WasInit(), 0);

    /* bad arguments, and a buffer too small for the message */
    assert_int_equal(sdl_font_open(fx->r, 0, &f, err, sizeof err), -1);
    assert_int_equal(sdl_font_open(NULL, PX, &f, err, sizeof err), -1);
    assert_int_equal(sdl_font_open(fx->r, 0, &f, err, 4), -1);
    assert_int_equal(strlen(err), 3);

    assert_int_equal(sdl_font_open(fx->r, PX, &f, err, sizeof err), 0);
    assert_int_equal(sdl_font_missing_glyphs(f, "你 AI"), 0);
    sdl_font_close(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(no_missing_glyphs, setup, teardown),
        cmocka_unit_test_setup_teardown(cjk_glyphs_differ, setup, teardown),
        cmocka_unit_test_setup_teardown(cjk_face_is_used, setup, teardown),
        cmocka_unit_test_setup_teardown(lazy_fallback_face, setup, teardown),
        cmocka_unit_test_setup_teardown(measure_matches_draw, setup, teardown),
        cmocka_unit_test_setup_teardown(invalid_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(texture_cache, setup, teardown),
        cmocka_unit_test_setup_teardown(set_size, setup, teardown),
        cmocka_unit_test_setup_teardown(ttf_init_refcount, setup_renderer, teardown),
        cmocka_unit_test_setup_teardown(no_fonts_error, setup_renderer, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
