/* test_ui_draw.c — the frame as a command list (draw.h, render.h), built with
 * a fake text measurer: no font, no renderer, no display. For a few states of
 * the app: one heatmap command per head in the grid, hatch commands exactly
 * over the masked cells that the picture paints hatched, every hit inside the
 * window, clips balanced, text at the frame's font size. */
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

#include "catalog.h"
#include "colormap.h"
#include "draw.h"
#include "engine/base/utf8.h"
#include "engine/model/loss.h"
#include "engine/run/forward.h"
#include "engine/tokenizer/tokenizer.h"
#include "i18n.h"
#include "jobs_thread.h"
#include "lesson_panel.h"
#include "linebreak.h"
#include "paint.h"
#include "player.h"
#include "predict.h"
#include "render.h"
#include "text_strip.h"
#include "view.h"

#include "layers_fixture.h"
#include "model_fixture.h"

#include "ui_fixture.h"

static int setup(void **state) { return setup_with(state, NULL); }

static int setup_mla(void **state)
{
    static const char *const kv[] = {"mode", "mla", "kv_rank", "8", "rope_dim", "4", NULL};
    return setup_with(state, kv);
}

static int setup_gqa(void **state)
{
    static const char *const kv[] = {"d_model", "64", "heads", "8", "kv_heads", "2", NULL};
    return setup_with(state, kv);
}

static int setup_four_heads(void **state)
{
    static const char *const kv[] = {"heads", "4", "seq", "12", NULL};
    return setup_with(state, kv);
}

static int setup_long(void **state)
{
    static const char *const kv[] = {"tokens", "the transformer reads | short", NULL};
    return setup_with(state, kv);
}

static int setup_seq40(void **state)
{
    static const char *const kv[] = {"seq", "40", NULL};
    return setup_with(state, kv);
}

static int count(const draw_list *dl, draw_cmd_kind kind)
{
    int n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));) n += c->kind == kind;
    return n;
}

static bool inside(app_rect r, app_rect box)
{
    return r.x >= box.x && r.y >= box.y && r.x + r.w <= box.x + box.w && r.y + r.h <= box.y + box.h;
}

/* Every hit and heatmap area of the last frame lies inside the window. */
static void check_layout(const fixture *f)
{
    const app_layout *l = &f->app.layout;
    app_rect win = {0, 0, W, H};
    for (int i = 0; i < l->n_hits; i++)
        if (l->hits[i].r.w > 0 && l->hits[i].r.h > 0 && !inside(l->hits[i].r, win))
            fail_msg("hit %d (action %d) at %d,%d %dx%d leaves the window", i, l->hits[i].action, l->hits[i].r.x,
                     l->hits[i].r.y, l->hits[i].r.w, l->hits[i].r.h);
    for (int i = 0; i < l->n_areas; i++) assert_true(inside(l->areas[i].r, win));
}

/* Clips pushed and popped in order, none left pushed; text at the frame's size. */
static void check_list(const fixture *f)
{
    int depth = 0, px = (int)lroundf(DRAW_BASE_FONT_PX * f->app.font_scale * f->app.pixel_ratio);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        if (c->kind == DRAW_CMD_CLIP_PUSH) depth++;
        if (c->kind == DRAW_CMD_CLIP_POP) assert_true(--depth >= 0);
        if (c->kind == DRAW_CMD_TEXT) {
            if (c->text.px != px) { /* only a heatmap's cell numbers step down, to unenlarged text's size */
                bool in_map = false;
                for (int i = 0; i < f->app.layout.n_areas; i++) in_map |= inside(c->r, f->app.layout.areas[i].r);
                assert_true(in_map);
                int base = (int)lroundf(DRAW_BASE_FONT_PX * f->app.pixel_ratio);
                assert_true(c->text.px < px && c->text.px >= (base > 10 ? base : 10));
            }
            assert_true(draw_cmd_text(&f->dl, c)[0] != '\0');
            int tw = (c->text.bold ? fake_bold : fake_width)(NULL, draw_cmd_text(&f->dl, c), c->text.px);
            assert_int_equal(c->text.turned ? c->r.h : c->r.w, tw); /* a turned label: as tall as its text is long */
        }
        if (c->kind == DRAW_CMD_RECT || c->kind == DRAW_CMD_LINE || c->kind == DRAW_CMD_HATCH || c->kind == DRAW_CMD_HEATMAP)
            assert_true(c->r.w > 0 && c->r.h > 0);
    }
    assert_int_equal(depth, 0);
}

/* The hatch commands that follow heatmap command c (over its masked cells)
 * cover exactly the pixels its painted picture shows hatched. */
static void check_hatch(const draw_list *dl, const draw_cmd *c)
{
    int w = c->r.w, h = c->r.h;
    uint32_t *px = malloc((size_t)w * h * sizeof *px);
    unsigned char *cover = calloc((size_t)w * h, 1);
    assert_non_null(px);
    assert_non_null(cover);
    paint_heatmap(&c->heat.slice, &c->heat.scale, px, w, w, h, c->heat.gap);
    int n = 0;
    for (const draw_cmd *k = c; (k = draw_list_next(dl, k)) && k->kind == DRAW_CMD_HATCH && k->hatch.in_image; n++) {
        assert_int_equal(k->hatch.ox, c->r.x);
        assert_int_equal(k->hatch.oy, c->r.y);
        app_rect r = {k->r.x - c->r.x, k->r.y - c->r.y, k->r.w, k->r.h};
        assert_true(inside(r, (app_rect){0, 0, w, h}));
        for (int y = r.y; y < r.y + r.h; y++)
            for (int x = r.x; x < r.x + r.w; x++) {
                assert_int_equal(cover[(size_t)y * w + x], 0); /* no overlaps */
                cover[(size_t)y * w + x] = 1;
            }
    }
    int hatched = 0;
    for (int i = 0; i < w * h; i++) {
        bool stripe = px[i] == APP_HATCH_LIGHT || px[i] == APP_HATCH_DARK;
        hatched += stripe;
        if (stripe != cover[i]) fail_msg("pixel %d,%d: painted %s, %s", i % w, i / w, stripe ? "hatched" : "plain",
                                         cover[i] ? "under a hatch command" : "under none");
    }
    /* the stripes of a hatch command, drawn alone from its origin, are the picture's */
    for (const draw_cmd *k = c; (k = draw_list_next(dl, k)) && k->kind == DRAW_CMD_HATCH && k->hatch.in_image;) {
        uint32_t pat[64 * 64];
        int pw = draw_imin(k->r.w, 64), ph = draw_imin(k->r.h, 64);
        paint_hatch(pat, pw, pw, ph, (k->r.x - k->hatch.ox) + (k->r.y - k->hatch.oy));
        for (int y = 0; y < ph; y++)
            for (int x = 0; x < pw; x++)
                assert_int_equal(pat[y * pw + x], px[(size_t)(k->r.y - c->r.y + y) * w + (k->r.x - c->r.x + x)]);
    }
    if (hatched) assert_true(n > 0);
    free(px);
    free(cover);
}

/* The heatmap command drawn for layout area a. */
static const draw_cmd *heatmap_of(const draw_list *dl, const app_heat_area *a)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_HEATMAP && !memcmp(&c->r, &a->r, sizeof c->r)) return c;
    return NULL;
}

/* ---- the list itself */

/* Texts that hold a formula, a shape, or a number with its unit, and the part
 * a line must not break inside (linebreak.h); the lessons broke 「i −⏎j」,
 * 「(b, h,⏎s, s)」 and 「4,096 字⏎节」. */
static const struct {
    const char *s, *whole;
} UNBROKEN[] = {
    {"the positional part of the score depends on i − j only", "i − j"},
    {"得分的位置部分只取决于 i − j。", "i − j。"},
    {"the text writes the weights as (b, h, s, s) here", "(b, h, s, s)"},
    {"而权重的形状是 (b, h, s, s)，每个头一张", "(b, h, s, s)，"},
    {"the header shows (b=1, g=4, n=25, k=32) for k_heads", "(b=1, g=4, n=25, k=32)"},
    {"tang-mha 每个 token 的缓存 4,096 字节，全部 4 层", "4,096 字节，"},
    {"缓存 2,048 字节/token", "2,048 字节/token"},
    {"KV cache 3.0 KiB per token", "3.0 KiB"},
    {"held-out loss 4.28 nats/token, measured", "4.28 nats/token,"},
    {"一共 3 个键", "3 个"},
    {"这是第 4 层的头 2", "第 4 层"},
    {"queries q = x · W_Q for every token", "q = x · W_Q"},
    {"the formula softmax(QKᵀ/√dₖ + M)V again", "softmax(QKᵀ/√dₖ + M)V"},
    {"kept weights are scaled by 1/(1 − p) in training", "1/(1 − p)"},
    {"a fill of −1e9 B", "−1e9 B"},
};

/* A line may not break inside UNBROKEN's parts, and may still break where
 * such a part is not: between words of prose, between Chinese characters,
 * inside parentheses that hold words. */
static void test_line_breaks(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof UNBROKEN / sizeof *UNBROKEN; c++) {
        const char *s = UNBROKEN[c].s, *at = strstr(s, UNBROKEN[c].whole);
        assert_non_null(at);
        size_t a = (size_t)(at - s), b = a + strlen(UNBROKEN[c].whole);
        for (size_t i = attn_utf8_next(s, b, a); i < b; i = attn_utf8_next(s, b, i))
            if (draw_break_before(s, i)) fail_msg("「%s」 may break before byte %zu of 「%s」", s, i - a, UNBROKEN[c].whole);
        /* the loose rule, for a part wider than a line, breaks where prose would */
        bool loose = false;
        for (size_t i = attn_utf8_next(s, b, a); i < b; i = attn_utf8_next(s, b, i)) loose |= draw_break_before_loose(s, i);
        assert_true(loose || !strchr(UNBROKEN[c].whole, ' '));
    }
    static const struct {
        const char *s, *before; /* a line may break before the first `before` */
    } may[] = {
        {"the score depends", "depends"},                    /* prose */
        {"(the stage memory; no mask)", "stage"},            /* words in parentheses */
        {"注意力权重", "权"},                                 /* between Chinese characters */
        {"in 2 steps", "steps"},                             /* a number, then a word that is no unit */
        {"head 3, then head 2", "then"},                     /* 3, is not a number before a unit */
        {"x2 字节", "字"},                                    /* x2 is no number */
        {"MHA → GQA → MQA: heads 4 then", "heads"},          /* after the chain */
    };
    for (size_t c = 0; c < sizeof may / sizeof *may; c++) {
        size_t at = (size_t)(strstr(may[c].s, may[c].before) - may[c].s);
        if (!draw_break_before(may[c].s, at)) fail_msg("「%s」 may not break before 「%s」", may[c].s, may[c].before);
    }
}

/* Each line of draw_text_wrap's UNBROKEN texts, at every width from the part's
 * own to the whole text's, holds the part whole; narrower than the part, the
 * part breaks (nothing is lost or drawn past the width). */
static void test_text_wrap_unbroken(void **state)
{
    fixture *f = *state;
    draw_list *dl = &f->dl;
    for (size_t c = 0; c < sizeof UNBROKEN / sizeof *UNBROKEN; c++) {
        const char *s = UNBROKEN[c].s, *whole = UNBROKEN[c].whole;
        draw_list_begin(dl, 16);
        int part = draw_text_w(dl, whole), all = draw_text_w(dl, s);
        for (int w = part / 2; w <= all; w += 4) {
            draw_list_begin(dl, 16);
            int n = draw_text_wrap(dl, s, 0, 0, w, DRAW_TEXT);
            bool found = false;
            for (int i = 0; i < dl->n; i++) {
                assert_true(dl->cmds[i].r.w <= w || (int)strlen(draw_cmd_text(dl, &dl->cmds[i])) <= 4);
                found |= strstr(draw_cmd_text(dl, &dl->cmds[i]), whole) != NULL;
            }
            assert_int_equal(dl->n, n);
            if (w >= part && !found) fail_msg("at %d px 「%s」 broke 「%s」", w, s, whole);
        }
    }
}

/* The text lines of the lesson panel (right of the picture), each the
 * panel's words at one height joined with a space where they stand apart. */
static int panel_lines(const fixture *f, char lines[][256], int max)
{
    int n = 0, ys[64], ends[64];
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        if (c->kind != DRAW_CMD_TEXT || c->r.x < f->app.layout.width) continue;
        int k = 0;
        while (k < n && ys[k] != c->r.y) k++;
        if (k == n) {
            if (n == max) continue;
            ys[n] = c->r.y;
            ends[n] = c->r.x;
            lines[n++][0] = '\0';
        }
        /* commands come in drawing order, left to right within a line */
        size_t len = strlen(lines[k]);
        if (len && c->r.x > ends[k] && len + 1 < 256) strcat(lines[k], " ");
        if (strlen(lines[k]) + strlen(draw_cmd_text(&f->dl, c)) < 256) strcat(lines[k], draw_cmd_text(&f->dl, c));
        ends[k] = c->r.x + c->r.w;
    }
    return n;
}

/* The lesson panel keeps a formula, a shape and a number with its unit on
 * one line at every panel width (issue 22): 「i −⏎j」, 「(b, h,⏎s, s)」 and
 * 「4,096 字⏎节」 were drawn broken. */
static void test_lesson_panel_unbroken(void **state)
{
    fixture *f = *state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[600], err[400];
    snprintf(path, sizeof path, "%s/unbroken-lesson.md", tmp ? tmp : "/tmp");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("# Unbroken\n\n## One\n\n```attnlab\nstage = weights\n```\n\n", fp);
    for (size_t c = 0; c < sizeof UNBROKEN / sizeof *UNBROKEN; c++) fprintf(fp, "%s%s", UNBROKEN[c].s, c % 2 ? "\n\n" : " ");
    fputs("\n\nAnd **bold (b, h, s, s)** with `code` after i − `j` too.\n", fp); /* styles change inside */
    fclose(fp);
    if (app_lesson_open(&f->app, path, 0, err, sizeof err)) fail_msg("%s", err);
    static char lines[64][256];
    int widths = 0;
    for (int lw = 300; lw <= 900; lw += 10) {
        f->app.lesson_width = lw;
        build(f);
        int n = panel_lines(f, lines, 64);
        for (size_t c = 0; c < sizeof UNBROKEN / sizeof *UNBROKEN; c++) {
            bool found = false;
            for (int i = 0; i < n && !found; i++) found = strstr(lines[i], UNBROKEN[c].whole) != NULL;
            if (!found) {
                for (int i = 0; i < n; i++) print_message("%s\n", lines[i]);
                fail_msg("panel width %d: 「%s」 is broken", lw, UNBROKEN[c].whole);
            }
        }
        /* across styles too: the bold shape on one line, the code j beside its − */
        int bold_open = -1, bold_close = -2, minus = -1, code_j = -2;
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
            if (c->kind != DRAW_CMD_TEXT || c->r.x < f->app.layout.width) continue;
            const char *t = draw_cmd_text(&f->dl, c);
            if (c->text.bold && !strcmp(t, "(b,")) bold_open = c->r.y;
            if (c->text.bold && !strcmp(t, "s)")) bold_close = c->r.y;
            if (!strcmp(t, "−")) minus = c->r.y;
            if (!strcmp(t, "j")) code_j = c->r.y;
        }
        if (bold_open != bold_close || minus != code_j) {
            for (int i = 0; i < n; i++) print_message("%s\n", lines[i]);
            fail_msg("panel width %d: the bold shape or the formula with code is broken", lw);
        }
        widths++;
    }
    assert_true(widths > 50);
    remove(path);
}

/* Wrapping: lines at most max_w wide, broken after spaces (never inside a
 * word that fits, never at a no-break space) or between Chinese characters
 * (never before closing punctuation), nothing lost; a word wider than a line
 * is cut between characters. */
static void test_text_wrap(void **state)
{
    fixture *f = *state;
    draw_list *dl = &f->dl;
    static const struct {
        const char *s;
        int max_w, lines;
        const char *first;
    } cases[] = {
        {"KV cache: MHA 3.0 KiB · GQA\u00a0(g=2)\u00a0768\u00a0B", 8 * 20, 3, "KV cache: MHA"}, /* 3.0 KiB stays whole */
        {"注意力权重每一行之和为一", 8 * 5, 3, "注意力权重"},
        {"注意力权重，每一行之和", 8 * 5, 3, "注意力权"}, /* a line never starts with ， */
        {"the row 只. Then", 8 * 9, 2, "the row"},          /* nor with the full stop after 只 */
        {"short", 8 * 20, 1, "short"},
        {"abcdefghij", 8 * 4, 3, "abcd"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        draw_list_begin(dl, 16);
        int n = draw_text_wrap(dl, cases[c].s, 10, 20, cases[c].max_w, DRAW_TEXT);
        assert_int_equal(n, cases[c].lines);
        assert_int_equal(draw_text_wrap_lines(dl, cases[c].s, cases[c].max_w), n);
        assert_int_equal(dl->n, n);
        char joined[256] = "";
        for (int i = 0; i < dl->n; i++) {
            const draw_cmd *t = &dl->cmds[i];
            assert_true(t->r.w <= cases[c].max_w);
            assert_int_equal(t->r.y, 20 + i * fake_line(NULL, 16));
            if (i == 0) assert_string_equal(draw_cmd_text(dl, t), cases[c].first);
            strcat(joined, draw_cmd_text(dl, t));
        }
        char want[256];
        size_t k = 0;
        for (const char *p = cases[c].s; *p; p++)
            if (*p != ' ') want[k++] = *p;
        want[k] = '\0';
        for (char *p = joined, *q = joined; ; p++) { /* the spaces dropped at breaks aside */
            if (*p != ' ') *q++ = *p;
            if (!*p) break;
        }
        assert_string_equal(joined, want);
    }
}

static void test_list_basics(void **state)
{
    fixture *f = *state;
    draw_list *dl = &f->dl;
    draw_list_begin(dl, 16);
    draw_fill(dl, 0, 0, 0, 10, DRAW_BG); /* nothing: not positive */
    draw_fill(dl, 1, 2, 3, 4, DRAW_PANEL);
    assert_int_equal(dl->n, 1);
    assert_int_equal(draw_text(dl, "", 0, 0, DRAW_TEXT), 0);
    assert_int_equal(draw_text(dl, "注意 attention", 5, 6, DRAW_TEXT), 12 * 8);
    const draw_cmd *t = &dl->cmds[1];
    assert_int_equal(t->kind, DRAW_CMD_TEXT);
    assert_string_equal(draw_cmd_text(dl, t), "注意 attention");
    assert_int_equal(t->text.px, 16);
    assert_int_equal(t->r.h, draw_line_h(dl));
    /* cut with an ellipsis, on a code point boundary */
    int w = draw_text_fit(dl, "注意 attention", 0, 0, 5 * 8, DRAW_TEXT);
    assert_true(w <= 5 * 8);
    assert_string_equal(draw_cmd_text(dl, &dl->cmds[2]), "注意 a…");
    /* lines: horizontal and vertical only, thickness below or right */
    draw_line_to(dl, 10, 20, 30, 20, 2, DRAW_WHITE);
    draw_line_to(dl, 10, 20, 10, 50, 3, DRAW_WHITE);
    draw_line_to(dl, 10, 20, 30, 40, 1, DRAW_WHITE); /* diagonal: refused */
    assert_int_equal(dl->n, 5);
    assert_memory_equal(&dl->cmds[3].r, (&(app_rect){10, 20, 20, 2}), sizeof(app_rect));
    assert_memory_equal(&dl->cmds[4].r, (&(app_rect){10, 20, 3, 30}), sizeof(app_rect));
    /* clips: a pop without a push is dropped */
    draw_clip_pop(dl);
    draw_clip_push(dl, (app_rect){0, 0, 10, 10});
    draw_clip_pop(dl);
    assert_int_equal(count(dl, DRAW_CMD_CLIP_PUSH), 1);
    assert_int_equal(count(dl, DRAW_CMD_CLIP_POP), 1);
    /* scratch floats: distinct blocks in a frame, kept for the next one */
    float *a = draw_list_floats(dl, 100), *b = draw_list_floats(dl, 10);
    assert_non_null(a);
    assert_non_null(b);
    assert_true(b >= a + 100 || a >= b + 10);
    draw_list_begin(dl, 16);
    assert_int_equal(dl->n, 0);
    assert_ptr_equal(draw_list_floats(dl, 100), a);
}

/* A masked swatch hatches from its own corner; a heatmap gets hatch
 * commands over its masked cells only, joined where no gap parts them. */
static void test_heatmap_hatch(void **state)
{
    fixture *f = *state;
    draw_list *dl = &f->dl;
    const float v[3 * 4] = {0.5f, -INFINITY, -INFINITY, 1.0f, /* two masked cells that touch */
                            NAN, 0.0f, -INFINITY, 2.0f,       /* NaN: checks, no hatch */
                            1.0f, 1.0f, 1.0f, 1.0f};
    const float m[3 * 4] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}; /* masked by the mask */
    app_slice s = {v, 3, 4, 4, 1, m, 4, 1};
    app_scale sc = {APP_CMAP_SEQUENTIAL, 0, 2};
    /* twice each: the second frame takes the rectangles the first found (at
     * another place on screen), the same ones; another generation scans again */
    for (int gap = 0; gap <= 2; gap++)
        for (int again = 0; again < 3; again++) {
            draw_list_begin(dl, 16);
            draw_hatch(dl, 3, 4, 10, 10);
            assert_int_equal(dl->cmds[0].hatch.ox, 3);
            assert_false(dl->cmds[0].hatch.in_image);
            draw_heatmap(dl, again == 2 ? 8 : 7, &s, &sc, 100 + 10 * again, 50, 40 * 4, 40 * 3, gap);
            assert_int_equal(dl->cmds[1].kind, DRAW_CMD_HEATMAP);
            assert_int_equal(dl->cmds[1].heat.generation, again == 2 ? 8 : 7);
            assert_int_equal(count(dl, DRAW_CMD_HATCH) - 1, gap ? 4 : 3); /* the pair joins without a gap */
            check_hatch(dl, &dl->cmds[1]);
        }
    /* more cells than pixels: each pixel shows one cell, hatches follow */
    draw_list_begin(dl, 16);
    draw_heatmap(dl, 7, &s, &sc, 0, 0, 3, 2, 0);
    check_hatch(dl, &dl->cmds[0]);
}

/* ---- frames */

static void test_single_view(void **state)
{
    fixture *f = *state;
    build(f);
    check_list(f);
    check_layout(f);
    /* the causal weights: one picture, hatched above the diagonal, and the legend's swatch */
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 1);
    assert_int_equal(f->app.layout.n_areas, 1);
    const draw_cmd *c = heatmap_of(&f->dl, &f->app.layout.areas[0]);
    assert_non_null(c);
    const attn_tensor *t = app_tensor(&f->app); /* drawn from the trace itself, not a copy */
    assert_true(c->heat.slice.data >= t->data && c->heat.slice.data < t->data + t->count);
    check_hatch(&f->dl, c);
    int swatches = 0;
    for (const draw_cmd *k = NULL; (k = draw_list_next(&f->dl, k));) swatches += k->kind == DRAW_CMD_HATCH && !k->hatch.in_image;
    assert_int_equal(swatches, 1);
    /* the same state builds the same list */
    int n = f->dl.n;
    build(f);
    assert_int_equal(f->dl.n, n);
    /* a query row's bars: the masked keys get swatches */
    assert_true(app_do(&f->app, APP_ACT_ROW, 1));
    build(f);
    check_list(f);
    check_layout(f);
    swatches = 0;
    for (const draw_cmd *k = NULL; (k = draw_list_next(&f->dl, k));) swatches += k->kind == DRAW_CMD_HATCH && !k->hatch.in_image;
    assert_true(swatches > 1);
}

static void test_grid_view(void **state)
{
    fixture *f = *state;
    assert_true(app_do(&f->app, APP_ACT_GRID, 0));
    build(f);
    check_list(f);
    check_layout(f);
    int h = f->app.trace.dims.h;
    assert_int_equal(h, 8);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), h);
    assert_int_equal(f->app.layout.n_areas, h);
    for (int i = 0; i < h; i++) {
        const app_heat_area *a = &f->app.layout.areas[i];
        assert_int_equal(a->head, i);
        const draw_cmd *c = heatmap_of(&f->dl, a);
        assert_non_null(c);
        check_hatch(&f->dl, c);
    }
    /* the thumbnails have room for the tokens: each head's rows and columns are labelled */
    int tokens = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        tokens += c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(&f->dl, c), "猫");
    assert_int_equal(tokens, 2 * h);
}

/* Four heads of 12 × 12 cells at 1400 × 900: one row of four labelled
 * thumbnails would give cells of 21 px, two rows of two 23 px once the labels
 * have their room beside and above them. The grid picks two rows (it picked
 * four columns when it compared the cells without the labels' room). */
static void test_grid_columns_count_the_labels(void **state)
{
    fixture *f = *state;
    assert_true(app_do(&f->app, APP_ACT_GRID, 0));
    draw_frame(&f->app, &f->dl, &f->app.layout, 1400, 900);
    draw_commit(&f->app, &f->app.layout);
    assert_int_equal(f->app.layout.n_areas, 4);
    int xs[4], columns = 0;
    for (int i = 0; i < 4; i++) {
        app_rect r = f->app.layout.areas[i].r;
        bool seen = false;
        for (int k = 0; k < columns; k++) seen |= xs[k] == r.x;
        if (!seen) xs[columns++] = r.x;
        assert_true(r.w / 12 >= 23);
    }
    assert_int_equal(columns, 2);
    /* labelled: the note the grid writes under unlabelled thumbnails is not there */
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        assert_false(c->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(&f->dl, c), "too small for token labels"));
}

static void test_compare_view(void **state)
{
    fixture *f = *state;
    assert_true(app_do(&f->app, APP_ACT_COMPARE, 0));
    build(f);
    check_list(f);
    check_layout(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 3);
    assert_int_equal(f->app.layout.n_areas, 3);
    const draw_cmd *a = heatmap_of(&f->dl, &f->app.layout.areas[0]), *b = heatmap_of(&f->dl, &f->app.layout.areas[1]),
                 *d = heatmap_of(&f->dl, &f->app.layout.areas[2]);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(d);
    /* the difference is computed into the list's own floats, toggled − configured */
    const app_slice *sa = &a->heat.slice, *sb = &b->heat.slice, *sd = &d->heat.slice;
    for (int i = 0; i < sd->rows; i++)
        for (int j = 0; j < sd->cols; j++) {
            float want = app_slice_at(sb, i, j) - app_slice_at(sa, i, j), got = app_slice_at(sd, i, j);
            if (isnan(want)) assert_true(isnan(got));
            else assert_float_equal(got, want, 0);
        }
    for (int p = 0; p < 3; p++) check_hatch(&f->dl, heatmap_of(&f->dl, &f->app.layout.areas[p]));
    /* large enough for a number in every cell of all three panes, which do not overlap */
    for (int p = 0; p < 3; p++) {
        app_rect r = f->app.layout.areas[p].r;
        int numbers = 0;
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
            numbers += c->kind == DRAW_CMD_TEXT && inside(c->r, r) && strchr(draw_cmd_text(&f->dl, c), '.');
        assert_int_equal(numbers, sa->rows * sa->cols);
        for (int q = 0; q < p; q++) {
            app_rect o = f->app.layout.areas[q].r;
            assert_true(r.x >= o.x + o.w || o.x >= r.x + r.w || r.y >= o.y + o.h || o.y >= r.y + r.h);
        }
    }
}

static void test_overlays(void **state)
{
    fixture *f = *state;
    assert_true(app_do(&f->app, APP_ACT_HELP, 0));
    build(f);
    check_list(f);
    check_layout(f);
    assert_true(app_do(&f->app, APP_ACT_HELP, 0));
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0));
    build(f);
    check_list(f);
    check_layout(f);
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0));
    assert_true(app_do(&f->app, APP_ACT_EDIT, 0));
    build(f);
    check_list(f);
    check_layout(f);
    assert_true(f->app.layout.edit_rect.w > 0);
}

/* A lesson: its panel's steps are clipped, and scrolled hits never leave the panel. */
static bool has_text(const draw_list *dl, const char *s)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(dl, c), s)) return true;
    return false;
}

/* A setting stepped by a key has a toolbar chip while it is in use. */
static void test_cycle_chip(void **state)
{
    fixture *f = *state;
    /* the fill value's chip writes it as the lessons do; −1e9 in the row, −∞ (the default) maybe in the menu */
    assert_true(app_do(&f->app, APP_ACT_FILL, 0));
    build(f);
    assert_true(has_text(&f->dl, "i  fill −1e9"));
    assert_true(app_do(&f->app, APP_ACT_FILL, 0));
    f->app.menu_open = true;
    build(f);
    assert_true(has_text(&f->dl, "i  fill −∞"));
    f->app.menu_open = false;
    build(f);
    assert_false(has_text(&f->dl, "w  window 0"));
    app_key(&f->app, 'w', 0);
    app_key(&f->app, 'w', 0);
    build(f);
    assert_true(has_text(&f->dl, "w  window 3"));
    f->app.help = true;
    build(f);
    assert_true(has_text(&f->dl, "sliding window: off → 2 → 3 → 4"));
    bool memory = false; /* the help ends with the memory the trace takes and the budget */
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        memory |= c->kind == DRAW_CMD_TEXT && !strncmp(draw_cmd_text(&f->dl, c), "memory: this trace ", 19) &&
                  strstr(draw_cmd_text(&f->dl, c), "GiB (--memory-gib)");
    assert_true(memory);
    /* a short window: the help takes columns, and leaves no key out */
    draw_frame(&f->app, &f->dl, &f->app.layout, 1280, 480);
    for (int i = 0; i < app_n_keys; i++)
        if (app_keys[i].help_keys) assert_true(has_text(&f->dl, app_keys[i].help_keys));
}

/* ---- the settings of issue 33 ---- */

static int setup_sink(void **state)
{
    static const char *const kv[] = {"sink_logit", "0.5", NULL};
    return setup_with(state, kv);
}

static int setup_alibi(void **state)
{
    static const char *const kv[] = {"alibi", "true", "softcap", "5", NULL};
    return setup_with(state, kv);
}

static void show(fixture *f, const char *stage)
{
    const attn_tensor *t = attn_trace_find(&f->app.trace, stage);
    assert_non_null(t);
    assert_true(app_do(&f->app, APP_ACT_STAGE, (int)(t - f->app.trace.tensors)));
    build(f);
    check_list(f);
    check_layout(f);
}

/* The texts drawn inside r that hold a number ("0.38"). */
static int numbers_in(const draw_list *dl, app_rect r)
{
    int n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        n += c->kind == DRAW_CMD_TEXT && inside(c->r, r) && strchr(draw_cmd_text(dl, c), '.');
    return n;
}

static const app_hit *tip_hit(const fixture *f, const char *start)
{
    for (int i = 0; i < f->app.layout.n_hits; i++)
        if (f->app.layout.hits[i].tip && !strncmp(f->app.layout.hits[i].tip, start, strlen(start)))
            return &f->app.layout.hits[i];
    return NULL;
}

/* The weights with a learned sink: a column "sink" left of the keys with each
 * query row's p_sink, which is not a cell of the matrix (no area takes it),
 * in the rows' places, so that the row with it sums to 1. */
static void test_sink_column(void **state)
{
    fixture *f = *state;
    show(f, "weights");
    assert_int_equal(f->app.layout.n_areas, 1);
    app_rect keys = f->app.layout.areas[0].r;
    const app_hit *h = tip_hit(f, "sink: ");
    assert_non_null(h);
    assert_true(h->r.x + h->r.w <= keys.x); /* left of the keys */
    assert_true(h->r.y == keys.y && h->r.h <= keys.h);
    assert_int_equal(numbers_in(&f->dl, h->r), f->app.trace.dims.s); /* a p_sink in each row */
    bool label = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        label |= c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(&f->dl, c), "sink") && c->r.x >= h->r.x &&
                 c->r.y + c->r.h <= keys.y;
    assert_true(label);
    assert_true(has_text(&f->dl, "sink logit X = 0.5: the column “sink” is not a key; with it each row sums to 1"));
    assert_true(has_text(&f->dl, "X  sink logit 0.5")); /* its chip, lit */
    /* row 0 of head 0: its keys and its sink make 1 */
    app_view_slice w, sw;
    assert_int_equal(app_view_make(&f->app.trace, "weights", 0, 0, &w), 0);
    assert_int_equal(app_view_make(&f->app.trace, "sink_weight", 0, 0, &sw), 0);
    double sum = app_slice_at(&sw.slice, 0, 0);
    for (int j = 0; j < w.slice.cols; j++) sum += app_slice_at(&w.slice, 0, j);
    assert_float_equal(sum, 1.0, 1e-5);
    /* sink_weight itself: rows are the heads, columns the queries */
    show(f, "sink_weight");
    assert_true(has_text(&f->dl, "h0") && has_text(&f->dl, "h3"));
    assert_false(has_text(&f->dl, "c0"));
    bool rows = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        rows |= c->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(&f->dl, c), "rows: heads h, columns: queries i");
    assert_true(rows);
    /* the compare view with the sink off: a column in the configured pane and where its weight went */
    show(f, "weights");
    app_do(&f->app, APP_ACT_COMPARE_WITH, attn_compare_find("sink"));
    assert_true(f->app.has_alt);
    build(f);
    check_layout(f);
    assert_int_equal(f->app.layout.n_areas, 3);
    int sinks = 0, labels = 0;
    for (int i = 0; i < f->app.layout.n_hits; i++)
        sinks += f->app.layout.hits[i].tip && !strncmp(f->app.layout.hits[i].tip, "sink: ", 6);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        labels += c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(&f->dl, c), "sink");
    assert_int_equal(sinks, 2); /* configured and difference; the toggled pane has no sink */
    assert_true(labels >= 1);   /* a pane under another reads the label above it */
    assert_true(has_text(&f->dl, "sink logit"));
}

/* ALiBi's bias on its head's own scale, from −m_h·(t − 1) to 0, with m_h
 * written out; the cap C under capped_scores' formula. */
static void test_bias_and_cap(void **state)
{
    fixture *f = *state;
    app_do(&f->app, APP_ACT_HEAD, 2);
    show(f, "bias");
    assert_true(has_text(&f->dl, "head 2 of 4: m = 2^(−8·3/4) = 0.01562, so bias = −0.01562·|i − j|; colours: this head's own"));
    const draw_cmd *hm = heatmap_of(&f->dl, &f->app.layout.areas[0]);
    assert_non_null(hm);
    assert_true(hm->heat.scale.hi == 0.0f);
    assert_float_equal(hm->heat.scale.lo, -0.015625 * 5, 1e-6); /* 6 tokens: the farthest key is 5 away */
    assert_true(has_text(&f->dl, "A  ALiBi on") && has_text(&f->dl, "C  softcap 5"));
    show(f, "capped_scores");
    assert_true(has_text(&f->dl, "C = 5: capped = 5·tanh(s/5), always between −5 and 5; small scores stay nearly as they "
                                 "were"));
    /* the settings off: in the menu behind ⋯, unlit, each a click away */
    app_key(&f->app, 'a', APP_MOD_SHIFT);
    f->app.menu_open = true;
    build(f);
    assert_true(has_text(&f->dl, "A  ALiBi off"));
    assert_true(has_text(&f->dl, "N  QK-norm off") && has_text(&f->dl, "X  sink logit off") &&
                has_text(&f->dl, "K  keep first off"));
    const app_hit *qk = NULL;
    for (int i = 0; i < f->app.layout.n_hits; i++)
        if (f->app.layout.hits[i].action == APP_ACT_CYCLE &&
            f->app.layout.hits[i].arg == app_keys_arg(app_keys_find(APP_KEYS_VIEW, 'n', APP_MOD_SHIFT)))
            qk = &f->app.layout.hits[i];
    assert_non_null(qk);
    app_mouse_down(&f->app, qk->r.x + 2, qk->r.y + 2);
    app_mouse_up(&f->app);
    assert_true(f->app.trace.cfg.qk_norm);
}

/* The header's formula follows the settings: no division by √k once scale is
 * off, the past masked under a reversed mask. */
static void test_header_follows_settings(void **state)
{
    static const char *const kv[] = {"scale", "false", "causal", "reversed", NULL};
    setup_with(state, kv);
    fixture *f = *state;
    assert_int_equal(app_set_stage(&f->app, "scores"), 0);
    build(f);
    assert_true(has_text(&f->dl, "scores = q · kᵀ   (not divided by √dₖ)"));
    assert_false(has_text(&f->dl, "scores = q · kᵀ / √dₖ"));
    assert_int_equal(app_set_stage(&f->app, "mask"), 0);
    build(f);
    assert_true(has_text(&f->dl, "mask[i,j] = fill if key j is in the past (j < i: reversed) or <pad>, else 0"));
    teardown(state);
}

/* The last hit area of the frame that does act, or NULL. */
static const app_hit *hit_of(const fixture *f, app_action act)
{
    const app_hit *found = NULL;
    for (int i = 0; i < f->app.layout.n_hits; i++)
        if (f->app.layout.hits[i].action == act) found = &f->app.layout.hits[i];
    return found;
}

/* Presenter mode hides the toolbar until the mouse moves. */
static void test_presenter_toolbar(void **state)
{
    fixture *f = *state;
    assert_true(app_do(&f->app, APP_ACT_PRESENT, 0));
    build(f);
    assert_null(hit_of(f, APP_ACT_CAUSAL));
    app_mouse_move(&f->app, 400, 500); /* the middle of the window: not yet */
    build(f);
    assert_null(hit_of(f, APP_ACT_CAUSAL));
    app_mouse_move(&f->app, 400, 20); /* the top */
    build(f);
    assert_non_null(hit_of(f, APP_ACT_CAUSAL));
    check_layout(f);
}

/* The KV cache shows where the cached rows end and the new ones begin. */
static void test_cache_line(void **state)
{
    static const char *const kv[] = {"tokens", "a b c d e f", "past", "3", NULL};
    setup_with(state, kv);
    fixture *f = *state;
    assert_int_equal(app_set_stage(&f->app, "k_cache"), 0);
    build(f);
    assert_true(has_text(&f->dl, "white line: the 3 cached positions above it, the 3 computed now below"));
    const app_heat_area *a = &f->app.layout.areas[0];
    int x, y, cw, ch, lines = 0;
    app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, 3, 0, &x, &y, &cw, &ch);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        lines += c->kind == DRAW_CMD_RECT && c->color == DRAW_WHITE && c->r.h == 3 && c->r.y == a->r.y + y - 1;
    assert_int_equal(lines, 1);
    teardown(state);
}

/* Labels left out of a long axis are never left out silently: a line under the
 * picture says which are shown; a short axis has every label and no such line. */
static void test_hidden_labels_said(void **state)
{
    static const char *const kv[] = {"seq", "300", NULL};
    setup_with(state, kv);
    fixture *f = *state;
    build(f);
    bool said = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        said |= c->kind == DRAW_CMD_TEXT && !strncmp(draw_cmd_text(&f->dl, c), "labels: 1 row in ", 17) &&
                strstr(draw_cmd_text(&f->dl, c), "of 300 × 300");
    assert_true(said);
    teardown(state);
    static const char *const few[] = {"tokens", "a b c", NULL};
    setup_with(state, few);
    f = *state;
    build(f);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        assert_false(c->kind == DRAW_CMD_TEXT && !strncmp(draw_cmd_text(&f->dl, c), "labels:", 7));
    teardown(state);
}

/* A long picture: the wheel over it zooms in around the cell under the mouse,
 * a minimap shows where the window is, a drag pans, the labels and the hover
 * name the stage's own rows, and z shows the whole picture again. */
static void test_zoom_and_pan(void **state)
{
    static const char *const kv[] = {"seq", "64", NULL};
    setup_with(state, kv);
    fixture *f = *state;
    app_state *app = &f->app;
    build(f);
    app_heat_area a = app->layout.areas[0];
    assert_int_equal(a.rows, 64);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 1);
    /* the wheel over row 48, column 16 */
    int cx, cy, cw, ch;
    app_heat_cell_rect(a.r.w, a.r.h, 64, 64, 48, 16, &cx, &cy, &cw, &ch);
    int mx = a.r.x + cx + cw / 2, my = a.r.y + cy + ch / 2;
    app_mouse_move(app, mx, my);
    assert_int_equal(app->hover_i, 48);
    assert_true(app_wheel(app, 1));
    build(f);
    a = app->layout.areas[0];
    assert_int_equal(a.rows, 32);
    assert_int_equal(a.cols, 32);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 2); /* and the minimap */
    /* the same cell is still under the mouse, and the hover names it */
    app_mouse_move(app, mx, my);
    assert_int_equal(app->hover_i, 48);
    assert_int_equal(app->hover_j, 16);
    assert_true(a.row0 > 0 && a.row0 <= 48 && 48 < a.row0 + 32);
    /* a drag up by half the picture moves the window down by a quarter of the rows */
    int row0 = a.row0;
    app_mouse_down(app, mx, my);
    assert_true(app_mouse_drag(app, mx, my - a.r.h / 2));
    app_mouse_up(app);
    build(f);
    assert_int_equal(app->layout.areas[0].row0, row0 + 16 > 32 ? 32 : row0 + 16);
    assert_int_equal(app->layout.areas[0].col0, a.col0);
    /* zoomed in as far as it goes: 4 cells */
    for (int k = 0; k < 10; k++) app_wheel(app, 1);
    build(f);
    assert_int_equal(app->layout.areas[0].rows, 4);
    /* z: the whole picture */
    assert_true(app_key(app, 'z', 0));
    build(f);
    assert_int_equal(app->layout.areas[0].rows, 64);
    assert_int_equal(app->layout.areas[0].row0, 0);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 1);
    teardown(state);
}

/* The mask has a legend of its two values, not a colour bar from −1 to 1. */
static void test_mask_legend(void **state)
{
    fixture *f = *state;
    assert_int_equal(app_set_stage(&f->app, "mask"), 0);
    build(f);
    assert_true(has_text(&f->dl, "may look"));
    assert_true(has_text(&f->dl, "masked"));
    assert_true(has_text(&f->dl, "−∞"));
    assert_false(has_text(&f->dl, "-1.00"));
    assert_true(app_do(&f->app, APP_ACT_GRID, 0)); /* the grid too */
    build(f);
    assert_true(has_text(&f->dl, "masked"));
    assert_false(has_text(&f->dl, "-1.00") || has_text(&f->dl, "1.00"));
    assert_true(app_do(&f->app, APP_ACT_GRID, 0));
    assert_int_equal(app_set_stage(&f->app, "weights"), 0);
    build(f);
    assert_false(has_text(&f->dl, "may look"));
    assert_true(has_text(&f->dl, "1.00"));
}

/* weights_dropout frames each weight dropout set to 0, and only those. */
static void test_dropped_marks(void **state)
{
    static const char *const kv[] = {"train", "true", "dropout", "0.5", NULL};
    setup_with(state, kv);
    fixture *f = *state;
    assert_int_equal(app_set_stage(&f->app, "weights_dropout"), 0);
    build(f);
    const app_heat_area *a = &f->app.layout.areas[0];
    app_view_slice dv, w;
    assert_int_equal(app_view_make(&f->app.trace, "weights_dropout", 0, f->app.view.head, &dv), 0);
    assert_int_equal(app_view_make(&f->app.trace, "weights", 0, f->app.view.head, &w), 0);
    int want = 0, frames = 0;
    for (int i = 0; i < a->rows; i++)
        for (int j = 0; j < a->cols; j++)
            want += app_slice_at(&dv.slice, i, j) == 0.0f && app_slice_at(&w.slice, i, j) > 0.0f;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        frames += c->kind == DRAW_CMD_FRAME && c->color == DRAW_ERROR && c->r.x >= a->r.x && c->r.x < a->r.x + a->r.w;
    assert_true(want > 0);
    assert_int_equal(frames, want);
    assert_true(has_text(&f->dl, "dropped"));
    teardown(state);
}

/* u: the single view colours by the shown head's own range, with a chip saying so. */
static void test_head_scale(void **state)
{
    fixture *f = *state;
    assert_int_equal(app_set_stage(&f->app, "scores"), 0);
    const attn_tensor *t = app_tensor(&f->app);
    app_view_slice v;
    assert_int_equal(app_view_make(&f->app.trace, "scores", 0, 0, &v), 0);
    app_scale shared = app_view_scale(t), own = app_view_slice_scale(t, &v.slice);
    assert_true(own.hi <= shared.hi);
    build(f);
    assert_true(heatmap_of(&f->dl, &f->app.layout.areas[0])->heat.scale.hi == shared.hi);
    assert_false(has_text(&f->dl, "u  colours: this head"));
    assert_true(app_key(&f->app, 'u', 0));
    build(f);
    assert_true(heatmap_of(&f->dl, &f->app.layout.areas[0])->heat.scale.hi == own.hi);
    assert_true(has_text(&f->dl, "u  colours: this head"));
    assert_true(app_key(&f->app, 'u', 0));
    build(f);
    assert_true(heatmap_of(&f->dl, &f->app.layout.areas[0])->heat.scale.hi == shared.hi);
}

/* A wide matrix fills more of the area with taller cells (q: 6 × 32); a square one keeps square cells. */
static void test_cells_fill_the_area(void **state)
{
    fixture *f = *state;
    assert_int_equal(app_set_stage(&f->app, "q"), 0);
    build(f);
    const app_heat_area *a = &f->app.layout.areas[0];
    int cw = a->r.w / a->cols, ch = a->r.h / a->rows;
    if (!(ch > cw * 3 / 2)) fail_msg("q cells %d × %d: want taller than wide", cw, ch);
    assert_int_equal(app_set_stage(&f->app, "weights"), 0);
    build(f);
    a = &f->app.layout.areas[0];
    assert_int_equal(a->r.w / a->cols, a->r.h / a->rows);
}

/* WCAG AA: every text colour on every panel colour at 4.5:1 or more. */
static void test_text_contrast(void **state)
{
    (void)state;
    static const uint32_t text[] = {DRAW_TEXT, DRAW_TEXT_DIM, DRAW_ACCENT, DRAW_ERROR, DRAW_WHITE};
    static const uint32_t back[] = {DRAW_BG, DRAW_PANEL, DRAW_PANEL_HI};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        for (size_t j = 0; j < sizeof back / sizeof back[0]; j++) {
            double a = app_argb_luminance(text[i]), b = app_argb_luminance(back[j]);
            double ratio = (fmax(a, b) + 0.05) / (fmin(a, b) + 0.05);
            if (ratio < 4.5) fail_msg("text %08x on %08x: contrast %.2f:1, below 4.5:1", text[i], back[j], ratio);
        }
}

/* A trace of three layers: the navigator's layer line has ◀ ▶ buttons, and a
 * click on one moves to the neighbouring layer on the same stage. */
static void test_layer_buttons(void **state)
{
    fixture *f = *state;
    attn_trace three = f->app.trace;
    three.tensors = NULL;
    three.arena = NULL;
    make_layers(&three, &f->app.trace, 3);
    free(f->app.trace.tensors); /* the rest (tokens, config) moves to three */
    free(f->app.trace.arena);
    f->app.trace = three;
    free(f->app.scales); /* sized for the old trace: scales are computed afresh without it */
    f->app.scales = NULL;
    f->app.view.layer = 0;
    assert_int_equal(app_set_stage(&f->app, "layers.0.weights"), 0);
    build(f);
    assert_true(has_text(&f->dl, "layer 0 / 3"));
    const app_hit *next = hit_of(f, APP_ACT_LAYER_NEXT), *prev = hit_of(f, APP_ACT_LAYER_PREV);
    assert_non_null(next);
    assert_non_null(prev);
    assert_true(prev->r.x + prev->r.w <= next->r.x);
    app_rect n = next->r;
    assert_true(app_mouse_down(&f->app, n.x + n.w / 2, n.y + n.h / 2));
    assert_int_equal(f->app.view.layer, 1);
    assert_string_equal(app_tensor(&f->app)->name, "layers.1.weights");
    build(f);
    assert_true(has_text(&f->dl, "layer 1 / 3"));
    assert_true(app_mouse_down(&f->app, n.x + n.w / 2, n.y + n.h / 2));
    build(f);
    assert_false(app_mouse_down(&f->app, n.x + n.w / 2, n.y + n.h / 2)); /* no layer 3 */
    assert_int_equal(f->app.view.layer, 2);
    check_layout(f);
}

/* A random model folder of `layers` layers in the test's temporary folder,
 * its path in dir (remove_model deletes it). */
static void new_model(char *dir, size_t size, const char *name, int layers)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(dir, size, "%s/draw-%s-XXXXXX", tmp ? tmp : "/tmp", name);
    assert_non_null(mkdtemp(dir));
    make_model(dir, layers, 4, 2, true, NULL, NULL);
}

static void remove_model(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* f's app again, on the model in dir reading "the cat sat on the mat". */
static void reopen_on_model(fixture *f, const char *dir)
{
    char err[400];
    attn_config c;
    attn_config_init(&c);
    attn_config_set(&c, "model", dir, NULL);
    attn_config_set(&c, "text", "the cat sat on the mat", NULL);
    app_free(&f->app);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
}

/* A model saved during training: the training panel across the bottom, the
 * step in the header; a click on the loss curve's first column opens step 0,
 * a click on a head's small plot shows that head, a click on the measure's
 * name switches it; n hides the panel. */
static void test_training_panel(void **state)
{
    fixture *f = *state;
    char dir[600];
    make_checkpointed(dir, sizeof dir, NULL);
    reopen_on_model(f, dir);
    app_state *app = &f->app;
    build(f);
    check_layout(f);
    assert_true(has_text(&f->dl, "final model (step 25) · j J: training steps"));
    assert_true(has_text(&f->dl, "each head's previous-token weight over training, on the held-out sentences ▸"));
    assert_true(has_text(&f->dl, "j  final"));
    const app_hit *first = NULL, *head = NULL, *metric = NULL;
    int heads = 0;
    for (int i = 0; i < app->layout.n_hits; i++) {
        const app_hit *h = &app->layout.hits[i];
        if (h->action == APP_ACT_TRAIN_AT && h->arg == 0) first = h;
        if (h->action == APP_ACT_TRAIN_HEAD) heads++;
        if (h->action == APP_ACT_TRAIN_HEAD && h->arg == (1 << 16 | 2)) head = h;
        if (h->action == APP_ACT_TRAIN_METRIC) metric = h;
    }
    assert_int_equal(heads, 8); /* 2 layers × 4 heads */
    assert_non_null(first);
    assert_non_null(head);
    assert_non_null(metric);
    app_rect hr = head->r, mr = metric->r;
    assert_true(app_mouse_down(app, first->r.x + first->r.w / 2, first->r.y + first->r.h / 2));
    app_mouse_up(app);
    assert_int_equal(app_train_newest(app), 0);
    build(f);
    assert_true(has_text(&f->dl, "training step 0 of 25 · j J"));
    assert_true(has_text(&f->dl, "j  step 0"));
    assert_true(app_mouse_down(app, hr.x + hr.w / 2, hr.y + hr.h / 2));
    app_mouse_up(app);
    assert_int_equal(app->view.layer, 1);
    assert_int_equal(app->view.head, 2);
    assert_true(app_mouse_down(app, mr.x + 2, mr.y + 2));
    app_mouse_up(app);
    build(f);
    assert_true(has_text(&f->dl, "each head's induction score over training, on random words said twice ▸"));
    /* T: the curves in the picture's place, large, with the phase change's two measures; T again: the picture */
    assert_true(app_key(app, 't', APP_MOD_SHIFT));
    build(f);
    assert_int_equal(app->view.mode, LESSON_VIEW_TRAINING);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 0);
    assert_true(has_text(&f->dl, "training step (log scale)"));
    bool best = false;
    for (const draw_cmd *cmd = NULL; (cmd = draw_list_next(&f->dl, cmd));)
        best |= cmd->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(&f->dl, cmd), "best head's induction score");
    assert_true(best);
    check_layout(f);
    assert_true(app_key(app, 't', APP_MOD_SHIFT));
    assert_int_equal(app->view.mode, LESSON_VIEW_SINGLE);
    build(f);
    assert_true(app_key(app, 'n', 0));
    build(f);
    assert_false(has_text(&f->dl, "loss, nats/token:"));
    bool named = false; /* the header names the step (its line may wrap) */
    for (const draw_cmd *cmd = NULL; (cmd = draw_list_next(&f->dl, cmd));)
        named |= cmd->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(&f->dl, cmd), "training step 0 (j J)");
    assert_true(named);
    check_layout(f);
}

/* A prompt too long for every layer's attention weights keeps the viewed
 * layer's; in the window (async) `.` computes the next layer's on the worker,
 * the view staying on the layer shown until they are in, then moving there on
 * the same stage. */
static void test_layer_on_demand_on_the_worker(void **state)
{
    fixture *f = *state;
    char dir[512], err[400];
    new_model(dir, sizeof dir, "lean", 4);
    attn_config c;
    attn_error e;
    attn_config_init(&c);
    attn_config_set(&c, "model", dir, NULL);
    attn_config_set(&c, "text", "the cat sat on the mat . a dog ran on the mat .", NULL);
    double all, one;
    if (attn_trace_estimate(&c, &all, &e)) fail_msg("estimate: %s", e.msg);
    c.qk_keep = 1;
    assert_int_equal(attn_trace_estimate(&c, &one, &e), ATTN_OK);
    c.qk_keep = 0;
    c.max_bytes = (one + all) / 2; /* room for one layer's weights */
    app_free(&f->app);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    app_state *app = &f->app;
    assert_int_equal(app->trace.cfg.qk_keep, 1);
    app->cfg.max_bytes = attn_trace_bytes(&app->trace) + (one + all) / 2; /* and the trace shown beside it */
    assert_int_equal(app_set_stage(app, "layers.0.weights"), 0);
    app->jobs = app->lesson.jobs = posix_jobs(); /* the window's threads */
    app->async = true;
    app_do(app, APP_ACT_LAYER_NEXT, 0);
    assert_int_equal(app_newest_layer(app), 1);
    if (app_busy(app, NULL, NULL, NULL)) assert_int_equal(app->view.layer, 0);
    for (int i = 0; i < 20000 && app_busy(app, NULL, NULL, NULL); i++) {
        app_poll(app);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_false(app_busy(app, NULL, NULL, NULL));
    assert_int_equal(app->view.layer, 1);
    assert_int_equal(app->trace.cfg.qk_keep, 2);
    assert_string_equal(app->view.stage, "layers.1.weights");
    build(f);
    check_layout(f);
    remove_model(dir);
}

/* A model's compare view: the viewed layer's weights in three panes (the
 * stage is looked up by its name in the layer, "layers.1.weights"). */
static void test_model_compare(void **state)
{
    fixture *f = *state;
    char dir[512], err[400];
    new_model(dir, sizeof dir, "model", 2);
    attn_config c;
    attn_config_init(&c);
    attn_config_set(&c, "model", dir, NULL);
    attn_config_set(&c, "text", "the cat sat | a dog ran on the mat", NULL);
    attn_config_set(&c, "pad_side", "left", NULL);
    app_free(&f->app);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    app_player_init(&f->app.lesson, "en", NULL);
    f->app.lesson.keep_progress = false;
    assert_int_equal(app_set_stage(&f->app, "layers.1.weights"), 0);
    assert_true(app_do(&f->app, APP_ACT_COMPARE_WITH, 1)); /* the padding mask */
    build(f);
    check_layout(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 3);
    assert_true(has_text(&f->dl, "compare layers.1.weights of head 0 with the padding mask toggled:"));
    remove_model(dir);
}

/* The text strip drawn alone in box on d: its height, and in out the text
 * of its body (below the title line), joined in the order drawn. */
static int strip_text(fixture *f, draw_list *d, app_rect box, char *out, size_t size)
{
    draw_list_begin(d, 16);
    d->layout = &f->app.layout;
    int h = draw_text_strip(d, &f->app, box, false), u = draw_line_h(d), body = box.y + u / 4 + u + u / 4;
    size_t n = 0;
    out[0] = '\0';
    for (const draw_cmd *c = NULL; (c = draw_list_next(d, c));)
        if (c->kind == DRAW_CMD_TEXT && c->r.y >= body && n < size)
            n += (size_t)snprintf(out + n, size - n, "%s", draw_cmd_text(d, c));
    return h;
}

/* The command after the one filled (DRAW_CMD_RECT) or framed (DRAW_CMD_FRAME)
 * in colour behind text s, if it is a text command of colour text_colour. */
static bool marked(const draw_list *d, const char *s, draw_cmd_kind kind, uint32_t colour, uint32_t text_colour)
{
    const draw_cmd *before = NULL;
    for (const draw_cmd *c = NULL; (c = draw_list_next(d, c)); before = c)
        if (c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(d, c), s) && c->color == text_colour && before &&
            before->kind == kind && before->color == colour && before->r.x < c->r.x + c->r.w &&
            before->r.x + before->r.w >= c->r.x + c->r.w) /* over it (a word's leading space aside) */
            return true;
    return false;
}

static uint32_t text_colour(const draw_list *d, const char *s)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(d, c));)
        if (c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(d, c), s)) return c->color;
    return 0;
}

/* A generated poem reads in full in the strip: prompt, then what ] wrote
 * (in the accent colour), the query row's token filled, the token it
 * predicts framed ("?" while unwritten), wrapped without a line starting on
 * closing punctuation, "end of text" after </s>, and a new text after that.
 * The frame puts the picture below it. */
static void test_text_strip(void **state)
{
    fixture *f = *state;
    char err[400], text[4096];
    attn_config c;
    attn_config_init(&c);
    attn_config_set(&c, "model", "tang", NULL);
    attn_config_set(&c, "text", "春眠不觉晓", NULL);
    app_free(&f->app);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    app_player_init(&f->app.lesson, "en", NULL);
    f->app.lesson.keep_progress = false;
    app_state *app = &f->app;
    draw_list d;
    draw_list_init(&d, FAKE);
    app_rect wide = {100, 50, 800, 600};
    /* not in the single view of the full pass */
    assert_int_equal(strip_text(f, &d, wide, text, sizeof text), 0);
    for (int i = 0; i < 5; i++) assert_true(app_key(app, ']', 0));
    assert_true(strip_text(f, &d, wide, text, sizeof text) > 0);
    assert_string_equal(text, "<s>春眠不觉晓，春醉不相?");
    assert_int_equal(text_colour(&d, "晓"), DRAW_TEXT);     /* the prompt */
    assert_int_equal(text_colour(&d, "醉"), DRAW_ACCENT);   /* written by ] */
    assert_true(marked(&d, "相", DRAW_CMD_RECT, DRAW_ACCENT, DRAW_BLACK)); /* the query: the last token */
    assert_true(marked(&d, "?", DRAW_CMD_FRAME, DRAW_WHITE, DRAW_TEXT_DIM)); /* what it predicts: still to come */
    assert_true(has_text(&d, "the query row shown") && has_text(&d, "the token that comes next") &&
                has_text(&d, "written by ]"));
    /* two steps back: the query reads 醉, and the 不 after it is framed */
    assert_true(app_key(app, '[', 0));
    assert_true(app_key(app, '[', 0));
    strip_text(f, &d, wide, text, sizeof text);
    assert_string_equal(text, "<s>春眠不觉晓，春醉不相");
    assert_true(marked(&d, "醉", DRAW_CMD_RECT, DRAW_ACCENT, DRAW_BLACK));
    assert_true(marked(&d, "不", DRAW_CMD_FRAME, DRAW_WHITE, DRAW_ACCENT));
    /* in the frame: under the decode panel, the picture below it */
    build(f);
    check_layout(f);
    assert_true(marked(&f->dl, "醉", DRAW_CMD_RECT, DRAW_ACCENT, DRAW_BLACK));
    int strip_y = -1, heat_y = -1;
    for (const draw_cmd *cmd = NULL; (cmd = draw_list_next(&f->dl, cmd));) {
        if (cmd->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(&f->dl, cmd), "text")) strip_y = cmd->r.y;
        if (cmd->kind == DRAW_CMD_HEATMAP && heat_y < 0) heat_y = cmd->r.y;
    }
    assert_true(strip_y > 0 && heat_y > strip_y + 2 * 20);

    /* narrow: wrapped inside the box, no line starting with ， or 。 */
    while (app->view.decode_step < app->decode_len) assert_true(app_key(app, ']', 0));
    for (int i = 0; i < 40 && !strstr(app->status, "end of the text"); i++) assert_true(app_key(app, ']', 0));
    assert_non_null(strstr(app->status, "end of the text"));
    app_rect narrow = {100, 50, 100, 600};
    strip_text(f, &d, narrow, text, sizeof text);
    int starts = 0, u = draw_line_h(&d);
    for (const draw_cmd *cmd = NULL; (cmd = draw_list_next(&d, cmd));) {
        if (cmd->kind != DRAW_CMD_TEXT || cmd->r.y < narrow.y + u + u / 2) continue;
        assert_true(cmd->r.x + cmd->r.w <= narrow.x + narrow.w);
        if (cmd->r.x == narrow.x + u / 2) {
            starts++;
            assert_true(strcmp(draw_cmd_text(&d, cmd), "，") && strcmp(draw_cmd_text(&d, cmd), "。"));
        }
    }
    assert_true(starts >= 2);
    /* the whole poem, then its end */
    strip_text(f, &d, wide, text, sizeof text);
    assert_non_null(strstr(text, "<s>春眠不觉晓，春醉不相催。"));
    const char *end = strstr(text, "。</s>end of text (</s>) · ] twice starts the next one");
    assert_true(end && !end[strlen("。</s>end of text (</s>) · ] twice starts the next one")]);
    assert_true(marked(&d, "</s>", DRAW_CMD_RECT, DRAW_ACCENT, DRAW_BLACK));
    /* a short box shows the lines around the query, and says which */
    strip_text(f, &d, (app_rect){100, 50, 100, 200}, text, sizeof text);
    assert_non_null(strstr(text, "</s>"));
    assert_null(strstr(text, "春眠"));
    bool said = false;
    for (const draw_cmd *cmd = NULL; (cmd = draw_list_next(&d, cmd));)
        said |= cmd->kind == DRAW_CMD_TEXT && !strncmp(draw_cmd_text(&d, cmd), "text, lines ", 12);
    assert_true(said);
    /* one step back: the end is said without the ] that would start the next */
    assert_true(app_key(app, '[', 0));
    strip_text(f, &d, wide, text, sizeof text);
    assert_non_null(strstr(text, "。</s>end of text (</s>)"));
    assert_null(strstr(text, "starts the next"));
    assert_true(app_key(app, ']', 0));
    /* ] twice after </s>: a new text from <s> alone (the first only says the text has ended) */
    assert_true(app_key(app, ']', 0));
    strip_text(f, &d, wide, text, sizeof text);
    assert_non_null(strstr(text, "。</s>end of text"));
    assert_true(app_key(app, ']', 0));
    strip_text(f, &d, wide, text, sizeof text);
    assert_string_equal(text, "<s>?");
    assert_true(marked(&d, "<s>", DRAW_CMD_RECT, DRAW_ACCENT, DRAW_BLACK));
    draw_list_free(&d);
}

/* Words with their spaces (a WordLevel tokenizer without a decoder joins
 * them so), in decode mode and in the compare view. */
static void test_text_strip_words(void **state)
{
    fixture *f = *state;
    char dir[512], text[1024];
    new_model(dir, sizeof dir, "words", 1);
    reopen_on_model(f, dir);
    app_player_init(&f->app.lesson, "en", NULL);
    f->app.lesson.keep_progress = false;
    draw_list d;
    draw_list_init(&d, FAKE);
    app_rect wide = {0, 0, 900, 600};
    assert_true(app_do(&f->app, APP_ACT_COMPARE, 0));
    assert_true(strip_text(f, &d, wide, text, sizeof text) > 0);
    assert_string_equal(text, "<s>the cat sat on the mat?");
    assert_true(marked(&d, " mat", DRAW_CMD_RECT, DRAW_ACCENT, DRAW_BLACK));
    assert_true(app_do(&f->app, APP_ACT_COMPARE, 0)); /* back to the single view */
    assert_int_equal(strip_text(f, &d, wide, text, sizeof text), 0);
    assert_true(app_key(&f->app, 'k', 0)); /* decode mode at the last token */
    assert_int_equal(f->app.view.decode_step, 7);
    assert_true(app_key(&f->app, '[', 0));
    strip_text(f, &d, wide, text, sizeof text);
    assert_string_equal(text, "<s>the cat sat on the mat");
    assert_true(marked(&d, " the", DRAW_CMD_RECT, DRAW_ACCENT, DRAW_BLACK));
    /* measured without drawing: the same height, no command */
    draw_list_begin(&d, 16);
    int measured = draw_text_strip_height(&d, &f->app, wide, false);
    assert_int_equal(d.n, 0);
    assert_int_equal(measured, strip_text(f, &d, wide, text, sizeof text));
    assert_true(marked(&d, " mat", DRAW_CMD_FRAME, DRAW_WHITE, DRAW_TEXT));
    draw_list_free(&d);
    remove_model(dir);
}

static int count_text(const draw_list *dl, const char *s)
{
    int n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));) n += c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(dl, c), s);
    return n;
}

/* A choice's explanation appears after Check: for the picked choice after a
 * wrong answer, for every choice after the right one. */
static void test_choice_explanations(void **state)
{
    fixture *f = *state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[600], err[400];
    snprintf(path, sizeof path, "%s/why-lesson.md", tmp ? tmp : "/tmp");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("# Why\n\n## One\n\n```attnlab\nstage = weights\n```\n\nWhich?\n\n"
          "- [ ] first\n  - wrongfirst\n- [x] second\n  - rightsecond\n- [ ] third\n  - wrongthird\n\n"
          "## Two\n\nNot the last step: no lesson's end (and its ✓) below the marks counted.\n",
          fp);
    fclose(fp);
    if (app_lesson_open(&f->app, path, 0, err, sizeof err)) fail_msg("%s", err);
    const lesson_quiz *q = &f->app.lesson.ls.steps[0].quizzes[0];
    assert_int_equal(q->n_choices, 3);
    assert_true(q->explained[0] && q->explained[1] && q->explained[2]);
    build(f);
    assert_false(has_text(&f->dl, "wrongfirst") || has_text(&f->dl, "rightsecond"));
    assert_true(app_do(&f->app, APP_ACT_LESSON_CHOICE, 0 << 8 | 0));
    assert_true(app_do(&f->app, APP_ACT_LESSON_CHECK, 0));
    build(f);
    assert_true(has_text(&f->dl, "wrongfirst"));
    assert_false(has_text(&f->dl, "rightsecond") || has_text(&f->dl, "wrongthird"));
    assert_int_equal(count_text(&f->dl, "✗"), 1);
    assert_true(app_do(&f->app, APP_ACT_LESSON_CHOICE, 0 << 8 | 0));
    assert_true(app_do(&f->app, APP_ACT_LESSON_CHOICE, 0 << 8 | 1));
    assert_true(app_do(&f->app, APP_ACT_LESSON_CHECK, 0));
    build(f);
    assert_true(has_text(&f->dl, "wrongfirst") && has_text(&f->dl, "rightsecond") && has_text(&f->dl, "wrongthird"));
    assert_int_equal(count_text(&f->dl, "✗"), 2);
    assert_int_equal(count_text(&f->dl, "✓"), 1);
    check_layout(f);
    remove(path);
}

/* The hit of (act, arg), or NULL. */
static const app_hit *hit_at(const app_state *app, app_action act, int arg)
{
    for (int i = 0; i < app->layout.n_hits; i++)
        if (app->layout.hits[i].action == act && app->layout.hits[i].arg == arg) return &app->layout.hits[i];
    return NULL;
}

/* a: queries and keys as arrows. Every query and key is an arrow; the mouse
 * over a query's tip makes it the query shown, a click keeps it. */
static void test_geometry_view(void **state)
{
    fixture *f = *state;
    assert_true(app_key(&f->app, 'a', 0));
    assert_int_equal(f->app.view.mode, LESSON_VIEW_GEOMETRY);
    build(f);
    check_list(f);
    check_layout(f);
    /* 6 queries and 6 keys, 6 values, the context and its chain of weighted values: arrows of 2 polygons */
    assert_true(count(&f->dl, DRAW_CMD_POLY) >= 2 * (6 + 6 + 6 + 1));
    assert_true(has_text(&f->dl, "context"));
    assert_true(has_text(&f->dl, "a  arrows"));
    bool last = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        last |= c->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(&f->dl, c), "query 娘");
    assert_true(last); /* no row chosen: the last query, which reads every key */
    const app_hit *h = hit_at(&f->app, APP_ACT_ROW, 2);
    assert_non_null(h);
    assert_true(app_mouse_move(&f->app, h->r.x + h->r.w / 2, h->r.y + h->r.h / 2));
    assert_int_equal(f->app.geom_hover, 2);
    build(f);
    bool two = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        two |= c->kind == DRAW_CMD_TEXT && strstr(draw_cmd_text(&f->dl, c), "query 一");
    assert_true(two);
    /* causal: query 2 reads keys 0..2; the keys after it carry no weight label */
    assert_false(has_text(&f->dl, "猫 0.00"));
    assert_true(app_mouse_down(&f->app, h->r.x + h->r.w / 2, h->r.y + h->r.h / 2));
    assert_int_equal(f->app.view.row, 2);
    assert_true(app_key(&f->app, 'a', 0));
    assert_int_equal(f->app.view.mode, LESSON_VIEW_SINGLE);
}

/* A label too long for its column is cut with "…", never left out, in the
 * single view and every pane of the grid; the tooltip shows it whole. */
static void test_long_labels(void **state)
{
    fixture *f = *state;
    for (int grid = 0; grid < 2; grid++) {
        if (grid) assert_true(app_do(&f->app, APP_ACT_GRID, 0));
        build(f);
        check_list(f);
        int whole = 0, cut = 0, reads = 0;
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
            if (c->kind != DRAW_CMD_TEXT) continue;
            const char *s = draw_cmd_text(&f->dl, c);
            whole += !strcmp(s, "transformer");
            cut += !strncmp(s, "tr", 2) && strstr(s, "…") != NULL;
            reads += !strcmp(s, "reads");
        }
        int panes = grid ? 4 : 1;
        assert_int_equal(reads, 2 * panes); /* as a row and as a column label in each pane */
        assert_true(whole + cut >= 2 * panes);
    }
    /* hover the cell (row 2, column 1): the tooltip names both labels in full */
    const app_heat_area *a = &f->app.layout.areas[0];
    int x = a->r.x + a->r.w * 3 / 6, y = a->r.y + a->r.h * 5 / 6;
    assert_true(app_mouse_move(&f->app, x, y));
    assert_int_equal(f->app.hover_i, 2);
    assert_int_equal(f->app.hover_j, 1);
    build(f);
    assert_true(has_text(&f->dl, "row 2: reads   column 1: transformer"));
}

/* A sentence of 27 tokens: every row and column labelled (the area says so),
 * the words read upwards, and <s> level over its column, never turned (it
 * would read "^s v"). */
static void test_few_tokens_all_labelled(void **state)
{
    static const char *const kv[] = {"tokens", "<s> the transformer reads every token of the sentence and writes "
                                     "what it found into the stream of numbers that flows on through the layers "
                                     "above it",
                                     NULL};
    setup_with(state, kv);
    fixture *f = *state;
    build(f);
    check_layout(f);
    const app_heat_area *a = &f->app.layout.areas[0];
    assert_int_equal(a->cols, 27);
    assert_int_equal(a->row_label_step, 1);
    assert_int_equal(a->col_label_step, 1);
    int x, y, w, h, level = 0, turned = 0;
    app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, 0, 0, &x, &y, &w, &h);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        if (c->kind != DRAW_CMD_TEXT || c->r.y + c->r.h > a->r.y) continue;
        if (!strcmp(draw_cmd_text(&f->dl, c), "transformer")) turned += c->text.turned;
        if (!strcmp(draw_cmd_text(&f->dl, c), "<s>") && !c->text.turned && c->r.x + c->r.w <= a->r.x + x + w + 1) level++;
    }
    assert_int_equal(turned, 1);
    assert_int_equal(level, 1);
    teardown(state);
}

/* A padded row whose words turn: a <pad> column is its name turned ("pad"),
 * never the token turned with its brackets (it would read "^pad v"), and
 * <s> off the first column stands level or stacked, never turned. */
static void test_pad_labels_read(void **state)
{
    static const char *const kv[] = {"tokens", "<s> the transformer reads every token of the sentence and writes "
                                     "what it found into the stream of numbers that flows on through the layers "
                                     "above it | <s> a short one", "pad_side", "left", NULL};
    setup_with(state, kv);
    fixture *f = *state;
    f->app.view.batch = 1;
    build(f);
    const app_heat_area *a = &f->app.layout.areas[0];
    int pads = 0, bracketed = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        if (c->kind != DRAW_CMD_TEXT || !c->text.turned || c->r.y + c->r.h > a->r.y) continue;
        const char *t = draw_cmd_text(&f->dl, c);
        pads += !strcmp(t, "pad");
        bracketed += strchr(t, '<') || strchr(t, '>');
    }
    assert_true(pads >= 8);
    assert_int_equal(bracketed, 0);
    teardown(state);
}

/* Too many tokens to label every row and column: every pane of the compare
 * view says which labels it shows, the grid says its thumbnails have none,
 * and no label is drawn as a bare "…". */
static void test_hidden_labels_are_said(void **state)
{
    fixture *f = *state;
    assert_true(app_do(&f->app, APP_ACT_COMPARE, 0));
    build(f);
    check_layout(f);
    int notes = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        if (c->kind == DRAW_CMD_TEXT) {
            notes += !strncmp(draw_cmd_text(&f->dl, c), "labels", 6);
            assert_string_not_equal(draw_cmd_text(&f->dl, c), "…");
        }
    assert_int_equal(notes, 3);
    assert_true(app_do(&f->app, APP_ACT_GRID, 0));
    build(f);
    check_layout(f);
    assert_true(has_text(&f->dl, "the thumbnails are too small for token labels: hover a cell for its tokens, or g for one head"));
}

/* Whether the chip that carries action act is lit (framed in the accent colour). */
static bool chip_lit(const fixture *f, app_action act)
{
    for (int i = 0; i < f->app.layout.n_hits; i++) {
        if (f->app.layout.hits[i].action != act) continue;
        app_rect r = f->app.layout.hits[i].r;
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
            if (c->kind == DRAW_CMD_FRAME && c->color == DRAW_ACCENT && c->r.x == r.x && c->r.y == r.y && c->r.w == r.w)
                return true;
    }
    return false;
}

/* The padding chip is lit only where the mask hides a <pad>: one sentence has none. */
static void test_padding_chip_lit_only_with_pads(void **state)
{
    fixture *f = *state;
    build(f);
    assert_true(f->app.trace.tokens.rows > 1);
    assert_true(chip_lit(f, APP_ACT_PADDING)); /* the example's two rows, one padded */
    assert_true(chip_lit(f, APP_ACT_CAUSAL));
    assert_int_equal(app_set_stage(&f->app, "mask"), 0);
    build(f);
    assert_true(has_text(&f->dl, "mask[i,j] = fill if key j is in the future (causal) or <pad>, else 0"));
    teardown(state);
    static const char *const one[] = {"tokens", "我 爱 AI", NULL};
    setup_with(state, one);
    f = *state;
    build(f);
    assert_true(f->app.trace.cfg.pad_mask);
    assert_false(chip_lit(f, APP_ACT_PADDING));
    assert_true(chip_lit(f, APP_ACT_CAUSAL));
    assert_int_equal(app_set_stage(&f->app, "mask"), 0); /* and the mask's formula leaves <pad> out */
    build(f);
    assert_true(has_text(&f->dl, "mask[i,j] = fill if key j is in the future (causal), else 0"));
}

/* Larger text (+, presenting) keeps what the lesson needs: every cell's number
 * of lesson 4's 6 × 6 scores (smaller than the text where they must be), and
 * the navigation buttons inside the window, shortened to their signs at most. */
static void test_larger_text_keeps_numbers_and_buttons(void **state)
{
    fixture *f = *state;
    char dir[512], path[600], err[400];
    snprintf(path, sizeof path, "%s/04-causal-mask.md", lesson_catalog_dir("en", dir, sizeof dir));
    if (app_lesson_open(&f->app, path, 1, err, sizeof err)) fail_msg("%s", err); /* "The mask matrix M" */
    static const float scales[] = {1.0f, 1.25f, 1.5f, 1.75f};
    for (size_t k = 0; k < sizeof scales / sizeof *scales; k++) {
        f->app.font_scale = scales[k];
        build(f);
        check_layout(f);
        check_list(f);
        int numbers = 0, smaller = 0, next = 0;
        int px = (int)lroundf(DRAW_BASE_FONT_PX * f->app.font_scale * f->app.pixel_ratio);
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
            if (c->kind == DRAW_CMD_TEXT && c->r.x < f->app.layout.width && strchr(draw_cmd_text(&f->dl, c), '.') &&
                f->app.layout.n_areas && inside(c->r, f->app.layout.areas[0].r)) {
                numbers++;
                smaller += c->text.px < px;
            }
        for (int i = 0; i < f->app.layout.n_hits; i++) next += f->app.layout.hits[i].action == APP_ACT_LESSON_NEXT;
        if (numbers != 36) fail_msg("font scale %.2f: %d of the 36 cells show their number", scales[k], numbers);
        assert_int_equal(next, 1);
        if (k == 0) assert_int_equal(smaller, 0); /* at the usual size, the text's own size */
    }
}

static void test_lesson_panel(void **state)
{
    fixture *f = *state;
    char dir[512], path[600], err[400];
    snprintf(path, sizeof path, "%s/04-causal-mask.md", lesson_catalog_dir("en", dir, sizeof dir));
    if (app_lesson_open(&f->app, path, 0, err, sizeof err)) fail_msg("%s", err);
    /* **bold** is drawn in the bold face, not underlined: no line under a bold word */
    int bold = 0;
    for (int step = 0; step < f->app.lesson.ls.n_steps && !bold; step++) {
        if (app_lesson_open(&f->app, path, step, err, sizeof err)) fail_msg("%s", err);
        build(f);
        for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
            if (c->kind != DRAW_CMD_TEXT || !c->text.bold || c->r.x < f->app.layout.width) continue;
            bold++;
            for (const draw_cmd *l = NULL; (l = draw_list_next(&f->dl, l));)
                assert_false(l->kind == DRAW_CMD_LINE && l->r.y == c->r.y + c->r.h - 0 && l->r.x == c->r.x &&
                             l->r.w == c->r.w);
        }
    }
    assert_true(bold > 0);
    for (int step = 0; step < f->app.lesson.ls.n_steps; step++) {
        if (app_lesson_open(&f->app, path, step, err, sizeof err)) fail_msg("%s", err);
        for (int scroll = 0; scroll < 3; scroll++) {
            f->app.lesson.scroll = scroll * 10000; /* far past the end: kept in range */
            build(f);
            check_list(f);
            check_layout(f);
            /* one clip for the step; two when its quizzes are docked under the text */
            bool docked = f->app.layout.lesson_dock.h > 0;
            assert_int_equal(count(&f->dl, DRAW_CMD_CLIP_PUSH), docked ? 2 : 1);
            assert_true(f->app.lesson.scroll <= f->app.layout.lesson_scroll_max);
            assert_true(f->app.layout.width < W);
            assert_int_equal(f->app.layout.full_width, W);
            app_rect shown = docked ? f->app.layout.lesson_dock : f->app.layout.lesson_view;
            for (int i = 0; i < f->app.layout.n_hits; i++) {
                const app_hit *h = &f->app.layout.hits[i];
                if (h->action == APP_ACT_LESSON_CHOICE && h->r.w > 0) assert_true(inside(h->r, shown));
            }
        }
    }
    assert_true(app_do(&f->app, APP_ACT_PICKER, 0));
    build(f);
    check_list(f);
    check_layout(f);
}

/* Every text command of the frame joined by spaces: a wrapped sentence reads whole. */
static char *all_text(const draw_list *dl)
{
    size_t n = 1;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT) n += strlen(draw_cmd_text(dl, c)) + 1;
    char *s = calloc(n, 1);
    assert_non_null(s);
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT) strcat(strcat(s, draw_cmd_text(dl, c)), " ");
    return s;
}

/* The side panel alone, as the frame draws it beside the picture (the layout
 * decides whether it is there; what it says is tested here), its text joined. */
static char *panel_text(fixture *f)
{
    draw_list_begin(&f->dl, (int)lroundf(DRAW_BASE_FONT_PX * f->app.font_scale * f->app.pixel_ratio));
    f->dl.layout = &f->app.layout;
    draw_predictions(&f->dl, &f->app, (app_rect){W - 20 * draw_line_h(&f->dl), 80, 19 * draw_line_h(&f->dl), H - 120});
    assert_false(f->dl.failed);
    return all_text(&f->dl);
}

/* The app on a shipped model and text, the causal mask as given. */
static void open_model(fixture *f, const char *model, const char *causal)
{
    char err[400];
    attn_config c;
    attn_config_init(&c);
    attn_config_set(&c, "model", model, NULL);
    attn_config_set(&c, "text", "床前明月光，疑是地上霜。举头望明月，低头思故乡。", NULL);
    if (causal) attn_config_set(&c, "causal", causal, NULL);
    app_free(&f->app);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    app_player_init(&f->app.lesson, "en", NULL);
    f->app.lesson.keep_progress = false;
}

/* A checkpoint without trained variants: the side panel gives its KV cache
 * per token as attnlab info counts it (kv_bytes.h). A Llama folder's every
 * layer; a Gemma 2 folder's global layer, and its two local layers capped at
 * their window of 3 tokens (2 · 1 kv head · 4 · 4 B = 32 B a layer). */
static void test_panel_kv_bytes(void **state)
{
    fixture *f = *state;
    char dir[300];
    new_model(dir, sizeof dir, "kvllama", 2); /* 2 kv heads of 2: 2 · 2 · 2 · 4 B = 32 B a layer */
    reopen_on_model(f, dir);
    char *text = panel_text(f);
    assert_non_null(strstr(text, "KV cache 64 B/token, all 2 layers"));
    free(text);
    remove_model(dir);
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(dir, sizeof dir, "%s/draw-kvgemma-XXXXXX", tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    make_gemma(dir, false, 3, 2, 1, 3, 32);
    reopen_on_model(f, dir);
    text = panel_text(f);
    assert_non_null(strstr(text, "KV cache 32 B/token in the global layers (1 of 3) + at most 3 tokens × 64 B in the "
                                 "local ones"));
    free(text);
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0)); /* the decode line counts the same way */
    build(f);
    text = all_text(&f->dl);
    assert_non_null(strstr(text, "this model: 32\u00a0B per token per layer, 32\u00a0B in the global layers + at most "
                                 "3\u00a0×\u00a064\u00a0B in the local\u00a0ones"));
    free(text);
    remove_model(dir);
}

/* The side panel gives the loss of the text shown under the settings shown,
 * beside the card's held-out loss as trained: the cheater with its mask back
 * is far worse than guessing, without it near 0; tang the other way round. */
static void test_panel_losses(void **state)
{
    fixture *f = *state;
    char want[200];
    int n;
    open_model(f, "tang-nocausal", "true");
    double on = attn_trace_loss(&f->app.trace, 0, &n);
    assert_int_equal(n, 24);
    assert_true(on > 20); /* its card: 31.16 on held-out poems */
    char *text = panel_text(f);
    snprintf(want, sizeof want, "this text: %.2f nats/token with the causal mask", on);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "held-out text, trained without it: 0.00"));
    assert_non_null(strstr(text, "trained without the causal mask"));
    free(text);
    assert_true(app_do(&f->app, APP_ACT_CAUSAL, 0));
    double off = attn_trace_loss(&f->app.trace, 0, &n);
    assert_true(off < 0.1);
    text = panel_text(f);
    snprintf(want, sizeof want, "this text: %.2f nats/token without the causal mask", off);
    assert_non_null(strstr(text, want));
    free(text);
    /* the compare view with the mask toggled: both losses, the toggled one under its bars */
    assert_true(app_do(&f->app, APP_ACT_COMPARE_WITH, attn_compare_find("causal")));
    text = panel_text(f);
    snprintf(want, sizeof want, "this text: %.2f nats/token without the causal mask", off);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof want, "this text, toggled: %.2f nats/token", on);
    assert_non_null(strstr(text, want));
    free(text);
    open_model(f, "tang", NULL);
    on = attn_trace_loss(&f->app.trace, 0, &n);
    assert_true(on > 1 && on < 8);
    text = panel_text(f);
    snprintf(want, sizeof want, "this text: %.2f nats/token with the causal mask", on);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "held-out text, trained with it: 4.28"));
    assert_null(strstr(text, "trained without the causal mask"));
    free(text);
    assert_true(app_do(&f->app, APP_ACT_CAUSAL, 0));
    text = panel_text(f);
    snprintf(want, sizeof want, "this text: %.2f nats/token without the causal mask", attn_trace_loss(&f->app.trace, 0, &n));
    assert_non_null(strstr(text, want));
    free(text);
}

/* tang-nocausal opens as it was trained, without the causal mask (o from the
 * model before it), and lists no variants, since m has none to reach from it;
 * tang lists its three, and m steps through them. */
static void test_model_as_trained(void **state)
{
    fixture *f = *state;
    open_model(f, "tang-mqa", NULL);
    assert_true(f->app.trace.cfg.causal);
    assert_true(app_do(&f->app, APP_ACT_MODEL_NEXT, 0));
    assert_string_equal(f->app.model->name, "tang-nocausal");
    assert_int_equal(f->app.cfg.causal, ATTN_CAUSAL_OFF);
    assert_int_equal(f->app.trace.cfg.causal, ATTN_CAUSAL_OFF);
    char *text = panel_text(f);
    assert_non_null(strstr(text, "trained without the causal mask"));
    assert_non_null(strstr(text, "without the causal mask"));
    assert_null(strstr(text, "m: variants trained alike"));
    assert_null(strstr(text, "KV 2048 B/token")); /* no variant's line, but the model's own cache (kv_bytes.h) */
    assert_non_null(strstr(text, "KV cache 2048 B/token, all 4 layers"));
    free(text);
    assert_int_equal(f->app.n_variants, 0);
    assert_false(app_do(&f->app, APP_ACT_MODE, 0)); /* m: nothing to switch to, as the panel says */
    assert_true(app_do(&f->app, APP_ACT_MODEL_NEXT, 0)); /* the built-in example */
    assert_null(f->app.model);
    assert_true(app_do(&f->app, APP_ACT_MODEL_NEXT, 0)); /* brown: trained with the mask, it opens with it */
    assert_string_equal(f->app.model->name, "brown");
    assert_int_equal(f->app.trace.cfg.causal, ATTN_CAUSAL_ON);
    open_model(f, "tang", NULL);
    text = panel_text(f);
    assert_non_null(strstr(text, "m: variants trained alike"));
    assert_non_null(strstr(text, "KV 2048 B/token, all 4 layers"));
    assert_non_null(strstr(text, "KV 4096 B/token, all 4 layers"));
    assert_non_null(strstr(text, "GQA  4/2  loss")); /* query heads / kv heads … */
    assert_non_null(strstr(text, "MLA  4 heads  loss")); /* … but MLA has no kv heads: "MLA 4/4" said none */
    assert_null(strstr(text, "MLA  4/"));
    free(text);
    assert_true(app_do(&f->app, APP_ACT_MODE, 0));
    assert_string_equal(f->app.model->name, "tang-mqa");
}

/* MLA in the window: the toolbar says what its cache keeps instead of kv heads
 * (v refuses), a head's line names no kv head, and the decode line gives MLA's
 * (R + D)·4 bytes a token beside MHA's, GQA's and MQA's. */
static void test_mla_cache_and_heads(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->app.trace.dims.mode, ATTN_MODE_MLA);
    const attn_tensor *t = attn_trace_find(&f->app.trace, "k_nope");
    assert_non_null(t);
    assert_true(app_do(&f->app, APP_ACT_STAGE, (int)(t - f->app.trace.tensors)));
    build(f);
    char *text = all_text(&f->dl);
    assert_non_null(strstr(text, "latent R=8 + k_pe D=4"));
    assert_null(strstr(text, "kv heads"));
    assert_null(strstr(text, "reads kv head"));
    assert_non_null(strstr(text, "head 0 of 4"));
    free(text);
    assert_false(app_do(&f->app, APP_ACT_KV_DOWN, 0)); /* no kv heads to change: MLA stays */
    assert_non_null(strstr(f->app.status, "MLA has no kv heads"));
    assert_int_equal(f->app.cfg.mode, ATTN_MODE_MLA);
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0));
    build(f);
    text = all_text(&f->dl);
    /* (R + D) · 4 = 48 bytes a token; MHA's 2 · 4 heads · 8 · 4 = 256 */
    assert_non_null(strstr(text, "MLA\u00a0(R=8,\u00a0D=4)"));
    assert_non_null(strstr(text, "MHA"));
    assert_non_null(strstr(text, "MQA"));
    assert_non_null(strstr(text, "this model: 48\u00a0B per token per layer"));
    free(text);
    /* naive beside absorbed: the same output, with the largest difference */
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0));
    assert_true(app_do(&f->app, APP_ACT_COMPARE_WITH, attn_compare_find("mla_absorb")));
    assert_true(f->app.has_alt);
    build(f);
    text = all_text(&f->dl);
    assert_non_null(strstr(text, "naive and absorbed MLA give the same output: largest |Δ| over out = "));
    free(text);
}

/* One synthetic MLA layer's side panel: its cache a token, (R + D)·4 = 48 B,
 * beside MHA's 2·4·8·4 = 256 B, GQA's (g = 2) 128 B and MQA's 64 B, as the
 * decode line counts it; folded to a line when n hides the panels; gone in
 * another mode (m). */
static void test_mla_kv_panel(void **state)
{
    fixture *f = *state;
    build(f);
    char *text = all_text(&f->dl);
    static const char *const WANT[] = {"KV cache per token, this layer", "MHA  4/4", "KV 256 B/token", "GQA  4/2",
                                       "KV 128 B/token", "MQA  4/1", "KV 64 B/token", "MLA  latent R=8 + k_pe D=4",
                                       "KV 48 B/token", "MHA: 2·h·dₖ = 64 (MLA keeps 19%)"};
    for (size_t i = 0; i < sizeof WANT / sizeof *WANT; i++)
        if (!strstr(text, WANT[i])) fail_msg("the panel has no '%s': %s", WANT[i], text);
    free(text);
    /* the panel lies beside the picture, inside the window */
    bool found = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        if (c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(&f->dl, c), "KV 48 B/token"))
            found = c->r.x > W / 2 && c->r.x + c->r.w <= W && c->r.y + c->r.h <= H;
    assert_true(found);
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0)); /* the decode line counts the same 48 B */
    build(f);
    text = all_text(&f->dl);
    assert_non_null(strstr(text, "this model: 48\u00a0B per token per layer"));
    assert_non_null(strstr(text, "KV 48 B/token"));
    free(text);
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0));
    f->app.view.panels = LESSON_PANELS_HIDDEN; /* n: folded to one line above the picture */
    build(f);
    text = all_text(&f->dl);
    assert_null(strstr(text, "KV cache per token, this layer"));
    assert_non_null(strstr(text, "KV cache per token: MHA 256\u00a0B GQA 128\u00a0B MQA 64\u00a0B MLA 48\u00a0B"));
    free(text);
    f->app.view.panels = LESSON_PANELS_AUTO;
    assert_true(app_do(&f->app, APP_ACT_MODE, 0)); /* m: MLA → MHA */
    assert_int_equal(f->app.trace.dims.mode, ATTN_MODE_MHA);
    build(f);
    text = all_text(&f->dl);
    assert_null(strstr(text, "KV cache per token"));
    free(text);
}

/* The KV cache per token is counted one way: the decode line's per layer and
 * for all layers, the panel's for all layers, m's status likewise. */
static void test_cache_bytes_agree(void **state)
{
    fixture *f = *state;
    open_model(f, "tang", NULL);
    assert_true(app_do(&f->app, APP_ACT_DECODE, 0));
    build(f);
    char *text = all_text(&f->dl);
    /* 2 (K and V) · g = 2 kv heads · k = 32 · 4 bytes = 512 B a layer, 4 layers */
    assert_non_null(strstr(text, "this model: 512\u00a0B per token per layer, 2048\u00a0B for all\u00a04\u00a0layers"));
    free(text);
    text = panel_text(f);
    assert_non_null(strstr(text, "KV 2048 B/token, all 4 layers"));
    free(text);
    assert_true(app_do(&f->app, APP_ACT_MODE, 0)); /* m: tang-mqa, one kv head */
    assert_non_null(strstr(f->app.status, "KV cache 1024 B/token, all 4 layers"));
}

/* A message about the view leaves with it: '.' says "layer 2 of 4"; a click
 * in the all-heads grid that opens layer 0 leaves no such line behind. */
static void test_status_follows_view(void **state)
{
    fixture *f = *state;
    open_model(f, "tang", NULL);
    assert_true(app_do(&f->app, APP_ACT_LAYER_NEXT, 0));
    assert_true(app_do(&f->app, APP_ACT_LAYER_NEXT, 0));
    build(f);
    assert_true(has_text(&f->dl, "layer 2 of 4"));
    assert_true(app_do(&f->app, APP_ACT_GRID, 0));
    build(f);
    const app_heat_area *thumb = NULL;
    for (int i = 0; i < f->app.layout.n_areas; i++)
        if (!strncmp(f->app.layout.areas[i].stage, "layers.0.", 9) && f->app.layout.areas[i].head == 1)
            thumb = &f->app.layout.areas[i];
    assert_non_null(thumb);
    int x = thumb->r.x + thumb->r.w / 2, y = thumb->r.y + thumb->r.h / 2;
    app_mouse_down(&f->app, x, y);
    app_mouse_up(&f->app);
    assert_int_equal(f->app.view.layer, 0);
    assert_int_equal(f->app.view.head, 1);
    build(f);
    assert_false(has_text(&f->dl, "layer 2 of 4"));
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        if (c->kind == DRAW_CMD_TEXT) assert_null(strstr(draw_cmd_text(&f->dl, c), "layer 2 of"));
    /* and the batch row's message with the batch row */
    open_model(f, "tang", NULL);
    assert_true(app_do(&f->app, APP_ACT_LAYER_NEXT, 0));
    assert_string_equal(app_status_text(&f->app), "layer 1 of 4");
    assert_true(app_do(&f->app, APP_ACT_LAYER_PREV, 0));
    assert_string_equal(app_status_text(&f->app), "layer 0 of 4");
    app_show_layer(&f->app, 3, "weights");
    assert_string_equal(app_status_text(&f->app), "");
}

/* The third heatmap of the compare view: the difference pane's picture. */
static const draw_cmd *difference_pane(const draw_list *dl)
{
    int k = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_HEATMAP && ++k == 3) return c;
    return NULL;
}

/* The compare view's difference does not magnify rounding: two traces that
 * differ by less than 1e-6 of their largest value (sums added in another
 * order) show no change, every cell exactly 0; a real change still shows,
 * the rounding beside it still 0. */
static void test_difference_rounding(void **state)
{
    fixture *f = *state;
    assert_true(app_do(&f->app, APP_ACT_COMPARE_WITH, attn_compare_find("fill")));
    assert_true(f->app.has_alt);
    build(f);
    assert_true(has_text(&f->dl, "difference: no change, the toggle changes nothing here") ||
                has_text(&f->dl, "difference: no change"));
    /* the toggled weights off by float rounding in a few cells of head 0 */
    attn_tensor *w = (attn_tensor *)attn_trace_find(&f->app.alt, "weights");
    assert_non_null(w);
    int t = f->app.trace.dims.t;
    w->data[0] += 3e-8f;          /* (0, 0), 1.00 */
    w->data[t + 0] -= 5e-8f;      /* (1, 0) */
    w->data[5 * t + 2] += 2e-7f;  /* (5, 2) */
    f->app.generation++;
    build(f);
    assert_true(has_text(&f->dl, "difference: no change (|Δ| ≤ 1e-6 · max|x|, float rounding, drawn as 0)") ||
                has_text(&f->dl, "difference: no change"));
    const draw_cmd *d = difference_pane(&f->dl);
    assert_non_null(d);
    for (int i = 0; i < d->heat.slice.rows; i++)
        for (int j = 0; j < d->heat.slice.cols; j++) {
            float v = app_slice_at(&d->heat.slice, i, j);
            assert_true(v == 0 && !signbit(v));
        }
    /* a change of 1e-3 is a change; the rounding beside it stays 0 */
    w->data[5 * t + 3] += 1e-3f;
    f->app.generation++;
    build(f);
    assert_true(has_text(&f->dl, "difference (toggled − configured)"));
    d = difference_pane(&f->dl);
    assert_true(fabsf(app_slice_at(&d->heat.slice, 5, 3) - 1e-3f) < 1e-6f);
    assert_true(app_slice_at(&d->heat.slice, 0, 0) == 0 && app_slice_at(&d->heat.slice, 5, 2) == 0);
    assert_true(d->heat.scale.hi < 1.1e-3f);
    check_layout(f);
}

/* The geometry view of a frame w × h: its two panels (the frames drawn after
 * the title "queries and keys"), every text that touches a panel lies inside
 * it and clear of every other, the arrows of the first panel span most of
 * it, and the labels drawn plus those the note says were left out make the
 * query's and every key's. */
static void check_geometry(fixture *f, int w, int h)
{
    draw_frame(&f->app, &f->dl, &f->app.layout, w, h);
    draw_commit(&f->app, &f->app.layout);
    assert_false(f->dl.failed);
    app_rect panel[2];
    int n_panels = 0;
    bool after = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        after |= c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(&f->dl, c), "queries and keys");
        if (after && c->kind == DRAW_CMD_FRAME && n_panels < 2) panel[n_panels++] = c->r;
    }
    assert_int_equal(n_panels, 2);
    app_rect labels[400];
    int n = 0, in_first = 0;
    float x0 = 1e9f, x1 = -1e9f, y0 = 1e9f, y1 = -1e9f;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        if (c->kind == DRAW_CMD_POLY && inside(c->r, panel[0])) {
            x0 = fminf(x0, (float)c->r.x), x1 = fmaxf(x1, (float)(c->r.x + c->r.w));
            y0 = fminf(y0, (float)c->r.y), y1 = fmaxf(y1, (float)(c->r.y + c->r.h));
        }
        if (c->kind != DRAW_CMD_TEXT) continue;
        for (int k = 0; k < 2; k++) {
            app_rect o = app_rect_intersect(c->r, panel[k]);
            if (o.w <= 0 || o.h <= 0) continue;
            if (!inside(c->r, panel[k]))
                fail_msg("label '%s' at (%d, %d, %d×%d) leaves its panel (%d, %d, %d×%d)", draw_cmd_text(&f->dl, c), c->r.x,
                         c->r.y, c->r.w, c->r.h, panel[k].x, panel[k].y, panel[k].w, panel[k].h);
            for (int i = 0; i < n; i++) {
                app_rect q = app_rect_intersect(c->r, labels[i]);
                if (q.w > 0 && q.h > 0) fail_msg("label '%s' overlaps another", draw_cmd_text(&f->dl, c));
            }
            labels[n++] = c->r;
            in_first += k == 0;
        }
    }
    /* the query's label and one per key, or the note's count of those left out */
    int first_dropped = -1;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        if (c->kind == DRAW_CMD_TEXT && c->r.y >= panel[0].y + panel[0].h && c->r.x < panel[0].x + panel[0].w &&
            sscanf(draw_cmd_text(&f->dl, c), "%d labels left out", &first_dropped) == 1)
            break;
    assert_int_equal(in_first + (first_dropped > 0 ? first_dropped : 0), 1 + f->app.trace.dims.t);
    /* spread: the arrows cover most of the panel one way or the other */
    float spread = fmaxf((x1 - x0) / panel[0].w, (y1 - y0) / panel[0].h);
    assert_true(spread > 0.6f);
}

/* The geometry view of a trained head (tang, layer 2, head 3: 25 keys in one
 * direction): labels inside their panels without overlap, arrows spread. */
static void test_geometry_labels(void **state)
{
    fixture *f = *state;
    open_model(f, "tang", NULL);
    app_show_layer(&f->app, 2, "weights");
    f->app.view.head = 3;
    assert_true(app_key(&f->app, 'a', 0));
    check_geometry(f, W, H);
    check_geometry(f, 1000, 640); /* less room: labels left out, and said */
    check_geometry(f, 1600, 1000);
    open_model(f, "brown", NULL);
    app_show_layer(&f->app, 1, "weights");
    assert_true(app_key(&f->app, 'a', 0));
    check_geometry(f, W, H);
}

/* ---- cell quiz marks on any picture */

/* The heatmap of tensor `stage` for head on screen, or NULL. */
static const app_heat_area *area_of(const app_state *app, const char *stage, int head)
{
    for (int k = 0; k < app->layout.n_areas; k++) {
        const app_heat_area *a = &app->layout.areas[k];
        if (a->pane == 0 && a->head == head && !strcmp(a->stage, stage)) return a;
    }
    return NULL;
}

/* Where area a draws the stage's cell (i, j); the cell must be in its window. */
static app_rect cell_of(const app_heat_area *a, int i, int j)
{
    int x, y, w, h;
    assert_true(i >= a->row0 && i < a->row0 + a->rows && j >= a->col0 && j < a->col0 + a->cols);
    app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i - a->row0, j - a->col0, &x, &y, &w, &h);
    return (app_rect){a->r.x + x, a->r.y + y, w, h};
}

static bool in_window(const app_heat_area *a, int i, int j)
{
    return i >= a->row0 && i < a->row0 + a->rows && j >= a->col0 && j < a->col0 + a->cols;
}

/* Frames of colour c drawn exactly on r. */
static int frames_at(const draw_list *dl, app_rect r, uint32_t c)
{
    int n = 0;
    for (const draw_cmd *k = NULL; (k = draw_list_next(dl, k));)
        n += k->kind == DRAW_CMD_FRAME && k->color == c && !memcmp(&k->r, &r, sizeof r);
    return n;
}

/* Frames of colour c drawn inside r. */
static int frames_in(const draw_list *dl, app_rect r, uint32_t c)
{
    int n = 0;
    for (const draw_cmd *k = NULL; (k = draw_list_next(dl, k));)
        n += k->kind == DRAW_CMD_FRAME && k->color == c && inside(k->r, r);
    return n;
}

/* A click on the stage's cell (i, j) where area a draws it, through the event handler. */
static void click_cell_of(fixture *f, const app_heat_area *a, int i, int j)
{
    app_rect r = cell_of(a, i, j);
    app_mouse_move(&f->app, r.x + r.w / 2, r.y + r.h / 2);
    app_mouse_down(&f->app, r.x + r.w / 2, r.y + r.h / 2);
    app_mouse_up(&f->app);
}

/* The right cells of the step's cell quiz (rows × cols, malloc'd). */
static unsigned char *answer_of(const app_state *app, int *rows, int *cols)
{
    assert_true(app_player_answer_cells(&app->lesson, &app->trace, &app->view, NULL, 0, rows, cols) >= 0);
    unsigned char *right = malloc((size_t)*rows * *cols);
    assert_non_null(right);
    assert_true(app_player_answer_cells(&app->lesson, &app->trace, &app->view, right, (size_t)*rows * *cols, NULL,
                                        NULL) > 0);
    return right;
}

/* The first right cell of row i, and a wrong one. */
static int right_in_row(const unsigned char *right, int cols, int i)
{
    for (int j = 0; j < cols; j++)
        if (right[i * cols + j]) return j;
    fail_msg("row %d has no answer", i);
    return -1;
}

static int wrong_in_row(const unsigned char *right, int cols, int i)
{
    for (int j = 0; j < cols; j++)
        if (!right[i * cols + j]) return j;
    fail_msg("row %d is all right", i);
    return -1;
}

/* Every pick of the quiz that area a's window shows is framed in `picked`
 * (or right / wrong once graded), and the frames inside a are no more. */
static void picks_framed(fixture *f, const app_heat_area *a, const unsigned char *right, bool graded)
{
    const app_quiz_answer *ans = &f->app.lesson.answers[f->app.lesson.cell_quiz];
    int shown = 0;
    for (int i = 0; i < ans->rows; i++)
        for (int j = 0; j < ans->cols; j++) {
            if (!ans->cells[i * ans->cols + j] || !in_window(a, i, j)) continue;
            uint32_t c = !graded ? DRAW_ACCENT : right[i * ans->cols + j] ? DRAW_GOOD : DRAW_ERROR;
            if (frames_at(&f->dl, cell_of(a, i, j), c) != 1)
                fail_msg("%s head %d: no %08x frame on cell %d,%d (window rows %d+%d, cols %d+%d)", a->stage, a->head,
                         c, i, j, a->row0, a->rows, a->col0, a->cols);
            shown++;
        }
    int drawn = frames_in(&f->dl, a->r, graded ? DRAW_GOOD : DRAW_ACCENT) + (graded ? frames_in(&f->dl, a->r, DRAW_ERROR) : 0);
    assert_int_equal(drawn, shown);
}

/* Lesson 12's quiz on `tang` (4 layers, 25 × 25 weights, layer 2 head 3): the
 * step opens zoomed to its region; picks, right and wrong, and the answer are
 * framed on their cells zoomed to the region, on the whole picture, zoomed
 * further with the wheel, panned with a drag, and in the grid of every layer
 * and head (only on the graded thumbnail), where a click picks too. */
static void test_quiz_marks_trained_model(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    char dir[512], path[600], err[400];
    snprintf(path, sizeof path, "%s/12-trained-heads.md", lesson_catalog_dir("en", dir, sizeof dir));
    if (app_lesson_open(app, path, 1, err, sizeof err)) fail_msg("%s", err);
    int q = app->lesson.cell_quiz;
    assert_true(q >= 0);
    build(f);
    const app_heat_area *a = area_of(app, "layers.2.weights", 3);
    assert_non_null(a);
    /* the view is zoomed to the quiz's region: rows 13..17, columns 8..17 */
    assert_int_equal(a->row0, 13);
    assert_int_equal(a->rows, 5);
    assert_int_equal(a->col0, 8);
    assert_int_equal(a->cols, 10);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 1); /* no minimap over the region's cells */
    assert_true(has_text(&f->dl, "rows 13–17, columns 8–17 of 25 × 25 · z: the whole picture")); /* as the lesson names them */
    int rows, cols;
    unsigned char *right = answer_of(app, &rows, &cols);
    assert_int_equal(rows, 25);
    assert_int_equal(cols, 25);
    int rj = right_in_row(right, cols, 13), wj = 10;
    assert_false(right[15 * cols + wj]);
    click_cell_of(f, a, 13, rj);
    click_cell_of(f, a, 15, wj);
    const app_quiz_answer *ans = &app->lesson.answers[q];
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    picks_framed(f, a, right, false);
    assert_int_equal(frames_at(&f->dl, cell_of(a, 13, rj), DRAW_ACCENT), 1);
    app_do(app, APP_ACT_LESSON_CHECK, q);
    assert_true(ans->graded);
    assert_int_equal(ans->grade.n_right, 1);
    assert_int_equal(ans->grade.n_wrong, 1);
    assert_int_equal(ans->grade.n_missed, 4); /* rows 13..17: the other four, and not rows outside the region */
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    picks_framed(f, a, right, true);
    assert_int_equal(frames_at(&f->dl, cell_of(a, 13, rj), DRAW_GOOD), 1);
    assert_int_equal(frames_at(&f->dl, cell_of(a, 15, wj), DRAW_ERROR), 1);
    /* Show answer: a white frame on the right cell of each of the five rows */
    app_do(app, APP_ACT_LESSON_REVEAL, q);
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    for (int i = 13; i <= 17; i++) assert_int_equal(frames_at(&f->dl, cell_of(a, i, right_in_row(right, cols, i)), DRAW_WHITE), 1);
    /* z: the whole picture, the same marks on the same cells, and the region framed */
    assert_true(app_key(app, 'z', 0));
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    assert_int_equal(a->rows, 25);
    assert_int_equal(a->row0, 0);
    picks_framed(f, a, right, true);
    for (int i = 13; i <= 17; i++) assert_int_equal(frames_at(&f->dl, cell_of(a, i, right_in_row(right, cols, i)), DRAW_WHITE), 1);
    app_rect tl = cell_of(a, 13, 8), br = cell_of(a, 17, 17);
    assert_int_equal(frames_at(&f->dl, (app_rect){tl.x, tl.y, br.x + br.w - tl.x, br.y + br.h - tl.y}, DRAW_TEXT_DIM), 1);
    /* a click outside the region is taken (no bar chart opens) but picks nothing, and says why */
    click_cell_of(f, a, 5, 2);
    assert_int_equal(ans->cells[5 * cols + 2], 0);
    assert_int_equal(app->view.row, -1);
    assert_non_null(strstr(app->status, "rows 13–17 and columns 8–17"));
    assert_true(ans->graded);
    /* the wheel over the wrong pick zooms in around it */
    app_rect c = cell_of(a, 15, wj);
    app_mouse_move(app, c.x + c.w / 2, c.y + c.h / 2);
    assert_true(app_wheel(app, 1));
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    assert_true(a->rows < 25);
    assert_true(in_window(a, 15, wj));
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 2); /* zoomed by the student: the minimap is back */
    picks_framed(f, a, right, true);
    assert_int_equal(frames_at(&f->dl, cell_of(a, 15, wj), DRAW_ERROR), 1);
    /* a drag pans, and the press that began it picks nothing */
    int row0 = a->row0, col0 = a->col0;
    c = cell_of(a, 15, wj);
    app_mouse_down(app, c.x + c.w / 2, c.y + c.h / 2);
    assert_true(app_mouse_drag(app, c.x + c.w / 2 + a->r.w / 3, c.y + c.h / 2 + a->r.h / 3));
    app_mouse_up(app);
    assert_int_equal(ans->cells[15 * cols + wj], 1);
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    assert_true(a->row0 < row0 || a->col0 < col0);
    assert_true(ans->graded);
    picks_framed(f, a, right, true);
    /* the grid of every layer and head: marks on layer 2, head 3 only */
    assert_true(app_do(app, APP_ACT_GRID, 0));
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    assert_non_null(a);
    assert_int_equal(a->rows, 25);
    picks_framed(f, a, right, true);
    for (int k = 0; k < app->layout.n_areas; k++) {
        const app_heat_area *o = &app->layout.areas[k];
        if (o == a) continue;
        assert_int_equal(frames_in(&f->dl, o->r, DRAW_GOOD) + frames_in(&f->dl, o->r, DRAW_ERROR), 0);
    }
    /* a click on the graded thumbnail picks; one on another head opens that head */
    int rj16 = right_in_row(right, cols, 16);
    click_cell_of(f, a, 16, rj16);
    assert_int_equal(ans->cells[16 * cols + rj16], 1);
    build(f);
    a = area_of(app, "layers.2.weights", 3);
    picks_framed(f, a, right, false);
    free(right);
}

/* A 64 × 64 picture (seq = 64) with a cell quiz over the whole of it: picks
 * framed on the whole picture, zoomed in with the wheel, panned, and in the
 * grid on the graded head only. */
static void test_quiz_marks_64(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[600], err[400];
    snprintf(path, sizeof path, "%s/draw-quiz64.md", tmp ? tmp : "/tmp");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("# Sixty-four\n\n## Argmax\n\n```attnlab\nseq = 64\nhead = 1\nstage = weights\n```\n\n"
          "Click the largest weight of each row.\n\n```quiz\nclick = argmax\n```\n",
          fp);
    fclose(fp);
    if (app_lesson_open(app, path, 0, err, sizeof err)) fail_msg("%s", err);
    int q = app->lesson.cell_quiz;
    build(f);
    const app_heat_area *a = area_of(app, "weights", 1);
    assert_non_null(a);
    assert_int_equal(a->rows, 64); /* no region: the whole picture */
    int rows, cols;
    unsigned char *right = answer_of(app, &rows, &cols);
    assert_int_equal(rows * cols, 64 * 64);
    static const int ROWS[] = {0, 40, 63};
    for (int k = 0; k < 3; k++) click_cell_of(f, a, ROWS[k], right_in_row(right, cols, ROWS[k]));
    click_cell_of(f, a, 41, wrong_in_row(right, cols, 41));
    app_do(app, APP_ACT_LESSON_CHECK, q);
    build(f);
    a = area_of(app, "weights", 1);
    picks_framed(f, a, right, true);
    assert_int_equal(frames_in(&f->dl, a->r, DRAW_GOOD), 3);
    assert_int_equal(frames_in(&f->dl, a->r, DRAW_ERROR), 1);
    /* zoomed in on row 40: 32 × 32, then 16 × 16; the picks in the window framed there */
    int j40 = right_in_row(right, cols, 40);
    for (int level = 1; level <= 2; level++) {
        app_rect c = cell_of(a, 40, j40);
        app_mouse_move(app, c.x + c.w / 2, c.y + c.h / 2);
        assert_true(app_wheel(app, 1));
        build(f);
        a = area_of(app, "weights", 1);
        assert_int_equal(a->rows, 64 >> level);
        assert_true(in_window(a, 40, j40));
        picks_framed(f, a, right, true);
        assert_int_equal(frames_at(&f->dl, cell_of(a, 40, j40), DRAW_GOOD), 1);
    }
    /* panned up and left as far as it goes: row 0's pick comes into view, row 40's leaves */
    app_rect c = cell_of(a, 40, j40);
    app_mouse_down(app, c.x + c.w / 2, c.y + c.h / 2);
    app_mouse_drag(app, c.x + c.w / 2 + 8 * a->r.w, c.y + c.h / 2 + 8 * a->r.h);
    app_mouse_up(app);
    assert_int_equal(app->lesson.answers[q].cells[40 * cols + j40], 1);
    build(f);
    a = area_of(app, "weights", 1);
    assert_int_equal(a->row0, 0);
    assert_int_equal(a->col0, 0);
    assert_false(in_window(a, 40, j40));
    assert_true(in_window(a, 0, right_in_row(right, cols, 0)));
    picks_framed(f, a, right, true);
    assert_int_equal(frames_in(&f->dl, a->r, DRAW_GOOD), 1);
    /* the grid: every head's whole picture, the marks on head 1's */
    assert_true(app_do(app, APP_ACT_GRID, 0));
    build(f);
    int heads = 0;
    for (int k = 0; k < app->layout.n_areas; k++) {
        const app_heat_area *o = &app->layout.areas[k];
        if (o->pane || strcmp(o->stage, "weights")) continue;
        heads++;
        assert_int_equal(o->rows, 64);
        if (o->head == 1) picks_framed(f, o, right, true);
        else assert_int_equal(frames_in(&f->dl, o->r, DRAW_GOOD) + frames_in(&f->dl, o->r, DRAW_ERROR), 0);
    }
    assert_int_equal(heads, 4);
    free(right);
    remove(path);
}

/* A step's highlight on a model's trace (the lesson's "weights" is
 * "layers.1.weights"): a row, then cells, framed on the whole picture, zoomed
 * in and in the grid on every head of the layer shown, and on no other layer. */
static void test_highlight_on_a_model(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char path[600], err[400];
    snprintf(path, sizeof path, "%s/draw-highlight.md", tmp ? tmp : "/tmp");
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs("# Highlight\n\n```attnlab\nmodel = tang\ntext = 床前明月光，疑是地上霜。\nstage = weights\nlayer = 1\nhead = 2\n```\n\n"
          "## A row\n\n```attnlab\nhighlight = row 9\n```\n\nRow 9.\n\n"
          "## Cells\n\n```attnlab\nhighlight = cells 9,8 10,4\n```\n\nTwo cells.\n",
          fp);
    fclose(fp);
    if (app_lesson_open(app, path, 0, err, sizeof err)) fail_msg("%s", err);
    build(f);
    const app_heat_area *a = area_of(app, "layers.1.weights", 2);
    assert_non_null(a);
    assert_int_equal(a->rows, 13);
    for (int j = 0; j < 13; j++) assert_int_equal(frames_at(&f->dl, cell_of(a, 9, j), DRAW_MARK), 1);
    assert_int_equal(frames_in(&f->dl, a->r, DRAW_MARK), 13);
    /* zoomed in around row 9: the row's cells in the window, and only those */
    app_rect c = cell_of(a, 9, 8);
    app_mouse_move(app, c.x + c.w / 2, c.y + c.h / 2);
    assert_true(app_wheel(app, 1));
    build(f);
    a = area_of(app, "layers.1.weights", 2);
    assert_true(a->rows < 13 && a->cols < 13 && in_window(a, 9, 8));
    for (int j = a->col0; j < a->col0 + a->cols; j++) assert_int_equal(frames_at(&f->dl, cell_of(a, 9, j), DRAW_MARK), 1);
    assert_int_equal(frames_in(&f->dl, a->r, DRAW_MARK), a->cols);
    /* cells, in the grid of every layer and head: on the four heads of layer 1 */
    assert_int_equal(app_lesson_go(app, 1), 0);
    assert_int_equal(app->zoom.level, 0); /* a step opens on the whole picture */
    assert_true(app_do(app, APP_ACT_GRID, 0));
    build(f);
    int marked = 0;
    for (int k = 0; k < app->layout.n_areas; k++) {
        const app_heat_area *o = &app->layout.areas[k];
        bool mine = !strcmp(o->stage, "layers.1.weights");
        int n = frames_in(&f->dl, o->r, DRAW_MARK);
        assert_int_equal(n, mine ? 2 : 0);
        if (mine) {
            assert_int_equal(frames_at(&f->dl, cell_of(o, 9, 8), DRAW_MARK), 1);
            assert_int_equal(frames_at(&f->dl, cell_of(o, 10, 4), DRAW_MARK), 1);
            marked++;
        }
    }
    assert_int_equal(marked, 4);
    remove(path);
}

/* ---- the ranked view of logits and probs ---------------------------------- */

#define POEM "床前明月光，疑是地上霜。举头望明月，低头思故乡。"

static int setup_tang(void **state)
{
    static const char *const kv[] = {"model", "tang", "text", POEM, NULL};
    return setup_with(state, kv);
}

/* The text commands of the last frame inside r, left to right. */
static int texts_in(const draw_list *dl, app_rect r, const draw_cmd **out, int max)
{
    int n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));) {
        if (c->kind != DRAW_CMD_TEXT || c->r.y + c->r.h / 2 < r.y || c->r.y + c->r.h / 2 >= r.y + r.h ||
            c->r.x < r.x || c->r.x >= r.x + r.w || n == max)
            continue;
        int at = n++;
        while (at > 0 && out[at - 1]->r.x > c->r.x) out[at] = out[at - 1], at--;
        out[at] = c;
    }
    return n;
}

/* Row i's strip in the ranked view (the ▲ ▼ under it also select rows, but are small), or NULL. */
static const app_hit *row_hit(const app_state *app, int i)
{
    for (int j = 0; j < app->layout.n_hits; j++)
        if (app->layout.hits[j].action == APP_ACT_ROW && app->layout.hits[j].arg == i && app->layout.hits[j].r.w > 200)
            return &app->layout.hits[j];
    return NULL;
}

/* Column id's rank in row i of tr's probs (1 = the largest), by a count. */
static int rank_in(const attn_trace *tr, const char *stage, int i, int id)
{
    const attn_tensor *t = attn_trace_find(tr, stage);
    const float *row = t->data + (size_t)i * tr->dims.V;
    int ahead = 0;
    for (int v = 0; v < tr->dims.V; v++) ahead += row[v] > row[id];
    return ahead + 1;
}

/* The id of rank r (1-based) in row i: the one with r − 1 ahead of it. */
static int id_of_rank(const attn_trace *tr, const char *stage, int i, int r)
{
    for (int v = 0; v < tr->dims.V; v++)
        if (rank_in(tr, stage, i, v) == r) return v;
    return -1;
}

/* A probability as the ranked view prints it, written out again here. */
static void percent(float p, char *buf, size_t size)
{
    if (p >= 0.0995f) snprintf(buf, size, "%.0f%%", 100.0 * p);
    else if (p >= 0.000995f) snprintf(buf, size, "%.1f%%", 100.0 * p);
    else snprintf(buf, size, "<0.1%%");
}

/* How many "#1", "#2", ... column headers the first pane has (on the line of
 * its "after" header; the next-token column prints ranks too): the k of the ranked view. */
static int ranked_k(const draw_list *dl)
{
    int y = -1, k = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(dl, c), "after")) y = c->r.y;
    assert_true(y >= 0);
    for (char h[16];; k++) {
        snprintf(h, sizeof h, "#%d", k + 1);
        bool found = false;
        for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
            found |= c->kind == DRAW_CMD_TEXT && c->r.y == y && !strcmp(draw_cmd_text(dl, c), h);
        if (!found) return k;
    }
}

/* Row i of the ranked view, read off the frame: its texts in [x0, x1)
 * hold the labels of its top tokens in rank order, each followed by its value. */
static void check_ranked_row(const fixture *f, const attn_trace *tr, const char *stage, int i, int k, int x0, int x1)
{
    const app_hit *h = row_hit(&f->app, i);
    assert_non_null(h);
    const draw_cmd *t[64];
    int n = texts_in(&f->dl, (app_rect){x0, h->r.y, x1 - x0, h->r.h}, t, 64), at = 0;
    const attn_tensor *pt = attn_trace_find(tr, stage);
    for (int r = 1; r <= k; r++) {
        int id = id_of_rank(tr, stage, i, r);
        char lab[80], val[32];
        attn_tokenizer_label(f->app.model->tok, id, lab, sizeof lab);
        float x = pt->data[(size_t)i * tr->dims.V + id];
        if (!strcmp(stage, "probs")) percent(x, val, sizeof val);
        else app_view_format(x, val, sizeof val);
        while (at < n && strcmp(draw_cmd_text(&f->dl, t[at]), lab)) at++;
        if (at + 1 >= n) {
            for (int q = 0; q < n; q++) print_message("[%s @%d,%d] ", draw_cmd_text(&f->dl, t[q]), t[q]->r.x, t[q]->r.y);
            fail_msg("row %d: #%d %s (%s) not drawn after #%d (row at y %d h %d)", i, r, lab, val, r - 1, h->r.y, h->r.h);
        }
        assert_string_equal(draw_cmd_text(&f->dl, t[at + 1]), val);
        at += 2;
    }
}

/* logits and probs of a trained model open as a ranked view: no heatmap,
 * each row's top tokens in the trace's order with their numbers, the text's
 * next token framed where it is among them and named with its rank at the
 * right; y switches to the full heatmap (zoomable) and back. */
static void test_ranked_view(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    const attn_trace *tr = &app->trace;
    assert_non_null(app->model);
    assert_int_equal(app_set_stage(app, "probs"), 0);
    build(f);
    check_layout(f);
    check_list(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 0);
    int k = ranked_k(&f->dl);
    assert_true(k >= 2);
    const app_hit *h0 = row_hit(app, 5);
    assert_non_null(h0);
    for (int i = 0; i < tr->dims.s; i++)
        if (row_hit(app, i)) check_ranked_row(f, tr, "probs", i, k, h0->r.x, h0->r.x + h0->r.w);
    /* after 光 (row 5) the poem goes on with ， — the model's first choice: framed in white */
    int comma = tr->token_ids[6];
    assert_int_equal(rank_in(tr, "probs", 5, comma), 1);
    bool framed = false;
    const draw_cmd *t[64];
    int n = texts_in(&f->dl, h0->r, t, 64);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        for (int j = 0; j < n && c->kind == DRAW_CMD_FRAME && c->color == DRAW_WHITE; j++)
            framed |= !strcmp(draw_cmd_text(&f->dl, t[j]), "，") && app_rect_contains(c->r, t[j]->r.x, t[j]->r.y + 1) &&
                      c->r.y >= h0->r.y && c->r.y + c->r.h <= h0->r.y + h0->r.h;
    assert_true(framed);
    /* after ， (row 6) comes 疑, far down the list: its rank is named */
    if (has_text(&f->dl, "next in the text")) {
        char want[16];
        snprintf(want, sizeof want, "#%d", rank_in(tr, "probs", 6, tr->token_ids[7]));
        assert_true(rank_in(tr, "probs", 6, tr->token_ids[7]) > k);
        const app_hit *h6 = row_hit(app, 6);
        n = texts_in(&f->dl, h6->r, t, 64);
        bool named = false;
        for (int j = 0; j < n; j++) named |= !strcmp(draw_cmd_text(&f->dl, t[j]), want);
        assert_true(named);
    }
    /* logits: the same order, their numbers as logits */
    assert_int_equal(app_set_stage(app, "logits"), 0);
    build(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 0);
    k = ranked_k(&f->dl);
    check_ranked_row(f, tr, "logits", 5, k, h0->r.x, h0->r.x + h0->r.w);
    /* y: the full heatmap, as before, zoomable with the wheel; y again: ranked */
    assert_true(app_key(app, 'y', 0));
    build(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 1);
    assert_int_equal(app->layout.n_areas, 1);
    assert_string_equal(app->layout.areas[0].stage, "logits");
    assert_null(row_hit(app, 5));
    app_rect r = app->layout.areas[0].r;
    app_mouse_move(app, r.x + r.w / 2, r.y + r.h / 2);
    assert_true(app_wheel(app, 1));
    assert_true(app->zoom.level > 0);
    assert_true(app_key(app, 'z', 0));
    assert_true(app_key(app, 'y', 0));
    build(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 0);
    assert_non_null(row_hit(app, 5));
    /* the key is in the table the help lists */
    const app_key_binding *y = app_keys_find(APP_KEYS_VIEW, 'y', 0);
    assert_non_null(y);
    assert_int_equal(y->action, APP_ACT_VOCAB_VIEW);
    assert_string_equal(y->help, "logits, probs: each row's top tokens ranked / the full heatmap");
}

/* A click on a row of the ranked view selects that query row: its label
 * turns the accent colour and the row is framed; the side panel follows it. */
static void test_ranked_click(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    assert_int_equal(app_set_stage(app, "probs"), 0);
    build(f);
    const app_hit *h = row_hit(app, 13);
    assert_non_null(h);
    app_rect r = h->r;
    assert_true(app_mouse_down(app, r.x + r.w / 2, r.y + r.h / 2));
    assert_int_equal(app->view.row, 13);
    build(f);
    h = row_hit(app, 13); /* the window of rows centres on the selected one */
    assert_non_null(h);
    r = h->r;
    bool framed = false, accent = false;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        framed |= c->kind == DRAW_CMD_FRAME && c->color == DRAW_ACCENT && c->r.y == r.y && c->r.h == r.h;
        accent |= c->kind == DRAW_CMD_TEXT && c->color == DRAW_ACCENT && !strcmp(draw_cmd_text(&f->dl, c), "举") &&
                  c->r.y >= r.y && c->r.y < r.y + r.h;
    }
    assert_true(framed);
    assert_true(accent);
    assert_int_equal(app_query_row(app), 13); /* the next-token panel reads it */
    /* no bar chart of attention weights under it: the ranked view is the row's chart */
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 0);
    check_layout(f);
}

/* More rows than fit: a window around the selected row, said under it, with
 * ▲ ▼ moving it. */
static void test_ranked_window(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    assert_int_equal(app_set_stage(app, "probs"), 0);
    assert_true(app_do(app, APP_ACT_ROW, 20));
    draw_frame(app, &f->dl, &app->layout, 1280, 520);
    draw_commit(app, &app->layout);
    int first = -1, last = -1;
    for (int i = 0; i < app->trace.dims.s; i++)
        if (row_hit(app, i)) {
            if (first < 0) first = i;
            last = i;
        }
    assert_true(first > 0 && first <= 20 && last >= 20);
    char note[64];
    snprintf(note, sizeof note, "rows %d–%d of %d", first, last, app->trace.dims.s);
    assert_true(has_text(&f->dl, note));
    const app_hit *up = hit_at(app, APP_ACT_ROW, first - 1); /* ▲ */
    assert_non_null(up);
    assert_true(has_text(&f->dl, "▲"));
    assert_true(app_mouse_down(app, up->r.x + up->r.w / 2, up->r.y + up->r.h / 2));
    assert_int_equal(app->view.row, first - 1);
    for (int i = 0; i < app->layout.n_hits; i++) /* every row hit is a line tall at least */
        if (app->layout.hits[i].action == APP_ACT_ROW) assert_true(app->layout.hits[i].r.h >= draw_line_h(&f->dl));
}

/* In decode mode the trace holds the tokens up to the step; the ranked
 * view still names the text's next token, with its rank. */
static void test_ranked_decode(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    int next = app->trace.token_ids[8]; /* <s> 床前明月光，疑 是: after 疑 (position 7) */
    assert_true(app_do(app, APP_ACT_DECODE, 0));
    for (int i = 0; i < 30 && app->view.decode_step != 8; i++)
        assert_true(app_do(app, app->view.decode_step < 8 ? APP_ACT_DECODE_NEXT : APP_ACT_DECODE_PREV, 0));
    assert_int_equal(app->view.decode_step, 8);
    assert_int_equal(app_set_stage(app, "probs"), 0);
    assert_int_equal(app->trace.dims.s, 1);
    build(f);
    check_layout(f);
    assert_true(has_text(&f->dl, "next in the text") || has_text(&f->dl, "next"));
    char want[16];
    snprintf(want, sizeof want, "#%d", rank_in(&app->trace, "probs", 0, next));
    const app_hit *h = row_hit(app, 0);
    assert_non_null(h);
    const draw_cmd *t[32];
    int n = texts_in(&f->dl, h->r, t, 32);
    bool named = false;
    for (int j = 0; j < n; j++) named |= !strcmp(draw_cmd_text(&f->dl, t[j]), want);
    assert_true(named);
}

/* The compare view of probs: three ranked panes on the same rows, the
 * toggled pane ranking the toggled trace's probs, no heatmap; y: the heatmaps. */
static void test_ranked_compare(void **state)
{
    fixture *f = *state;
    app_state *app = &f->app;
    assert_int_equal(app_set_stage(app, "probs"), 0);
    assert_true(app_do(app, APP_ACT_COMPARE_WITH, attn_compare_find("causal")));
    assert_true(app->has_alt);
    build(f);
    check_layout(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 0);
    assert_true(has_text(&f->dl, "compare probs with the causal mask toggled:"));
    assert_true(has_text(&f->dl, "as configured"));
    assert_true(has_text(&f->dl, "causal mask toggled") || has_text(&f->dl, "toggled"));
    assert_true(has_text(&f->dl, "largest changes (toggled − configured)") || has_text(&f->dl, "largest changes"));
    int k = ranked_k(&f->dl);
    assert_true(k >= 1);
    int row = -1; /* a row on screen where the toggle changes the top token */
    for (int i = 0; i < app->trace.dims.s && row < 0; i++)
        if (row_hit(app, i) && id_of_rank(&app->trace, "probs", i, 1) != id_of_rank(&app->alt, "probs", i, 1)) row = i;
    assert_true(row >= 0);
    const app_hit *h = row_hit(app, row);
    /* the panes split the row in three after the labels: the first holds the
     * configured top tokens, the second the toggled ones */
    int x_as = -1, x_tog = -1;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        if (c->kind == DRAW_CMD_TEXT) {
            if (!strcmp(draw_cmd_text(&f->dl, c), "as configured")) x_as = c->r.x;
            if (!strcmp(draw_cmd_text(&f->dl, c), "causal mask toggled") || !strcmp(draw_cmd_text(&f->dl, c), "toggled"))
                x_tog = c->r.x;
        }
    assert_true(x_as > 0 && x_tog > x_as);
    check_ranked_row(f, &app->trace, "probs", row, k, x_as, x_tog);
    int x_change = -1;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));)
        if (c->kind == DRAW_CMD_TEXT && !strncmp(draw_cmd_text(&f->dl, c), "largest changes", 15)) x_change = c->r.x;
    assert_true(x_change > x_tog);
    check_ranked_row(f, &app->alt, "probs", row, k, x_tog, x_change);
    /* the third pane: first the token whose probability moved most, signed */
    const float *pa = attn_trace_find(&app->trace, "probs")->data + (size_t)row * app->trace.dims.V;
    const float *pb = attn_trace_find(&app->alt, "probs")->data + (size_t)row * app->trace.dims.V;
    int most = 0;
    for (int v = 1; v < app->trace.dims.V; v++)
        if (fabsf(pb[v] - pa[v]) > fabsf(pb[most] - pa[most])) most = v;
    char lab[80], mag[32], want[40];
    attn_tokenizer_label(app->model->tok, most, lab, sizeof lab);
    percent(fabsf(pb[most] - pa[most]), mag, sizeof mag);
    snprintf(want, sizeof want, "%s%s", pb[most] > pa[most] ? "+" : "−", mag);
    const draw_cmd *t[32];
    int n = texts_in(&f->dl, (app_rect){x_change, h->r.y, h->r.x + h->r.w - x_change, h->r.h}, t, 32);
    assert_true(n >= 2);
    assert_string_equal(draw_cmd_text(&f->dl, t[0]), lab);
    assert_string_equal(draw_cmd_text(&f->dl, t[1]), want);
    assert_true(app_key(app, 'y', 0));
    build(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 3);
}

/* A model whose vocab_size (12) is larger than its tokenizer (ids 0 .. 8):
 * ids 9, 10, 11 have logits but no token (issue 21). However heavy their
 * probabilities, the ranked view and the next-token panel list only tokens,
 * and ] writes a token, never one of them. */
static void test_ids_without_tokens_not_shown(void **state)
{
    char dir[512];
    new_model(dir, sizeof dir, "holes", 1);
    char text[sizeof TOKENIZER];
    memcpy(text, TOKENIZER, sizeof TOKENIZER);
    strcpy(strstr(text, ",\"a\":9"), "}}}");
    write_text(dir, "tokenizer.json", text);
    const char *const kv[] = {"model", dir, "text", "the cat sat on the mat", NULL};
    setup_with(state, kv);
    fixture *f = *state;
    app_state *app = &f->app;
    const attn_dims *d = &app->trace.dims;
    assert_int_equal(d->V, V);
    assert_int_equal(attn_tokenizer_vocab_size(app->model->tok), 9);
    /* every row's probabilities: the three ids without a token far ahead */
    float *probs = attn_trace_find(&app->trace, "probs")->data, *logits = attn_trace_find(&app->trace, "logits")->data;
    for (int i = 0; i < d->s; i++)
        for (int v = 9; v < V; v++) probs[(size_t)i * V + v] = 0.3f, logits[(size_t)i * V + v] = 1e3f;
    assert_int_equal(app_set_stage(app, "probs"), 0);
    build(f);
    assert_true(ranked_k(&f->dl) >= 2);
    for (int v = 9; v < V; v++) {
        char lab[8];
        snprintf(lab, sizeof lab, "v%d", v);
        if (has_text(&f->dl, lab)) fail_msg("the ranked view shows id %d, which is no token", v);
    }
    int row = d->s - 1, best = 0; /* the last row's best token is ranked first */
    for (int v = 1; v < 9; v++)
        if (probs[(size_t)row * V + v] > probs[(size_t)row * V + best]) best = v;
    char lab[80];
    assert_true(has_text(&f->dl, attn_tokenizer_label(app->model->tok, best, lab, sizeof lab)));
    app_prediction top[5];
    assert_int_equal(app_predictions(app, &app->trace, 0, row, top, 5), 5);
    assert_int_equal(top[0].id, best);
    for (int i = 0; i < 5; i++) assert_true(top[i].id < 9);
    assert_true(app_key(app, 'y', 0)); /* the full heatmap still has every column */
    build(f);
    assert_int_equal(count(&f->dl, DRAW_CMD_HEATMAP), 1);
    /* ] past the text: the next token is a token, though the ids without one lead by far */
    assert_true(app_key(app, 'k', 0));
    while (app->view.decode_step < app->decode_len) assert_true(app_key(app, ']', 0));
    int len = app->decode_len;
    logits = attn_trace_find(&app->trace, "logits")->data;
    for (int v = 9; v < V; v++) logits[(size_t)(app->trace.dims.s - 1) * V + v] = 1e3f;
    assert_true(app_key(app, ']', 0));
    assert_int_equal(app->decode_len, len + 1);
    int id = app->trace.token_ids[app->trace.tokens.len - 1];
    assert_true(id >= 1 && id < 9);
    remove_model(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_basics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_wrap, setup, teardown),
        cmocka_unit_test(test_line_breaks),
        cmocka_unit_test_setup_teardown(test_text_wrap_unbroken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lesson_panel_unbroken, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heatmap_hatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_single_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_grid_view, setup_gqa, teardown),
        cmocka_unit_test_setup_teardown(test_grid_columns_count_the_labels, setup_four_heads, teardown),
        cmocka_unit_test_setup_teardown(test_compare_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overlays, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lesson_panel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_larger_text_keeps_numbers_and_buttons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_padding_chip_lit_only_with_pads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiz_marks_trained_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiz_marks_64, setup, teardown),
        cmocka_unit_test_setup_teardown(test_highlight_on_a_model, setup, teardown),
        cmocka_unit_test_setup_teardown(test_choice_explanations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_geometry_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_layer_on_demand_on_the_worker, setup, teardown),
        cmocka_unit_test_setup_teardown(test_training_panel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_labels, setup_long, teardown),
        cmocka_unit_test(test_few_tokens_all_labelled),
        cmocka_unit_test(test_pad_labels_read),
        cmocka_unit_test_setup_teardown(test_hidden_labels_are_said, setup_seq40, teardown),
        cmocka_unit_test_setup_teardown(test_cycle_chip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sink_column, setup_sink, teardown),
        cmocka_unit_test_setup_teardown(test_bias_and_cap, setup_alibi, teardown),
        cmocka_unit_test_setup_teardown(test_layer_buttons, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_compare, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_strip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_strip_words, setup, teardown),
        cmocka_unit_test(test_text_contrast),
        cmocka_unit_test_setup_teardown(test_cells_fill_the_area, setup, teardown),
        cmocka_unit_test_setup_teardown(test_head_scale, setup, teardown),
        cmocka_unit_test(test_dropped_marks),
        cmocka_unit_test_setup_teardown(test_mask_legend, setup, teardown),
        cmocka_unit_test(test_cache_line),
        cmocka_unit_test(test_hidden_labels_said),
        cmocka_unit_test(test_zoom_and_pan),
        cmocka_unit_test_setup_teardown(test_presenter_toolbar, setup, teardown),
        cmocka_unit_test(test_header_follows_settings),
        cmocka_unit_test_teardown(test_ids_without_tokens_not_shown, teardown),
        cmocka_unit_test_setup_teardown(test_panel_losses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_geometry_labels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_difference_rounding, setup, teardown),
        cmocka_unit_test_setup_teardown(test_panel_kv_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_model_as_trained, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cache_bytes_agree, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mla_cache_and_heads, setup_mla, teardown),
        cmocka_unit_test_setup_teardown(test_mla_kv_panel, setup_mla, teardown),
        cmocka_unit_test_setup_teardown(test_status_follows_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranked_view, setup_tang, teardown),
        cmocka_unit_test_setup_teardown(test_ranked_click, setup_tang, teardown),
        cmocka_unit_test_setup_teardown(test_ranked_window, setup_tang, teardown),
        cmocka_unit_test_setup_teardown(test_ranked_compare, setup_tang, teardown),
        cmocka_unit_test_setup_teardown(test_ranked_decode, setup_tang, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
