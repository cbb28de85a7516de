/* test_ui_experts.c — the token × expert view (key E, `view = experts`)
 * through the event handler and the command list, on a small DeepSeek-V3
 * folder with a mixture of experts (moe_fixture.h): E refused in one
 * status line without experts (no chip; render --view experts exits 2); on
 * the dense layer 0 the view says so; on layer 1 every token labelled, one
 * column per expert, top 2 of 4 and the shared expert in the caption, each
 * token's chosen experts with the trace's weights, its heaviest framed, the
 * tokens per expert under the columns; hovering a cell names the token, the
 * expert, the weight and its rank (i, e: no c=); E again, the picture. A
 * gpt-oss folder, which records the same two stages, gets the same view on
 * every layer (top 2 of 8, no shared expert). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "app_picture.h"
#include "draw.h"
#include "experts_view.h"
#include "i18n.h"
#include "player.h"
#include "render.h"
#include "view.h"

#include "moe_fixture.h"
#include "ui_fixture.h"

static char MODEL[600], GPTOSS[600]; /* the folders, made once */
static const char TEXT[] = "the cat sat on the mat . a dog ran";

static int group_setup(void **state)
{
    (void)state;
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char root[512];
    snprintf(root, sizeof root, "%s/experts-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) return -1;
    snprintf(MODEL, sizeof MODEL, "%s/ds-moe", root);
    make_deepseek_moe(MODEL);
    snprintf(GPTOSS, sizeof GPTOSS, "%s/gpt-oss", root);
    make_gptoss(GPTOSS);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%.*s'", (int)(strrchr(MODEL, '/') - MODEL), MODEL);
    return system(cmd) ? -1 : 0;
}

static int setup_model(void **state, const char *model)
{
    const char *const kv[] = {"model", model, "text", TEXT, NULL};
    return setup_with(state, kv);
}

static int setup_plain(void **state) { return setup_with(state, NULL); }
static int setup_moe(void **state) { return setup_model(state, MODEL); }
static int setup_gptoss(void **state) { return setup_model(state, GPTOSS); }

static bool has_text(const draw_list *dl, const char *s)
{
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && !strcmp(draw_cmd_text(dl, c), s)) return true;
    return false;
}

/* The frame's text, every run joined by spaces (a wrapped sentence reads whole). */
static const char *all_text(const draw_list *dl, char *buf, size_t size)
{
    size_t n = 0;
    buf[0] = '\0';
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));)
        if (c->kind == DRAW_CMD_TEXT && n < size)
            n += (size_t)snprintf(buf + n, size - n, "%s ", draw_cmd_text(dl, c));
    return buf;
}

static bool has_part(const draw_list *dl, const char *s)
{
    static char buf[1 << 16];
    return strstr(all_text(dl, buf, sizeof buf), s) != NULL;
}

/* Without a routed layer, E says so in one line and the picture stays; no
 * chip; render --view experts refuses with E's reason. */
static void test_refused_without_experts(void **state)
{
    fixture *f = *state;
    assert_int_equal(app_experts_kind_of(&f->app), APP_EXPERTS_NONE);
    app_key(&f->app, 'e', APP_MOD_SHIFT);
    assert_int_equal(f->app.view.mode, LESSON_VIEW_SINGLE);
    assert_false(f->app.edit.open); /* Shift+E is not e's editor */
    assert_true(f->app.status_error);
    assert_non_null(strstr(f->app.status, "needs a mixture-of-experts model"));
    assert_null(strchr(f->app.status, '\n'));
    build(f);
    assert_false(has_text(&f->dl, "E  experts"));
    fixture *g;
    setup_plain((void **)&g);
    app_picture p;
    app_picture_init(&p);
    p.view.mode = LESSON_VIEW_EXPERTS;
    char err[300] = "";
    assert_int_equal(app_picture_apply(&g->app, &p, err, sizeof err), 2);
    assert_non_null(strstr(err, "--view experts: the expert view (E) needs"));
    teardown((void **)&g);
}

/* The cell (i, e) of the view's heatmap in window pixels: its centre. */
static void cell_centre(const app_heat_area *a, int i, int e, int *x, int *y)
{
    int cx, cy, cw, ch;
    app_heat_cell_rect(a->r.w, a->r.h, a->rows, a->cols, i, e, &cx, &cy, &cw, &ch);
    *x = a->r.x + cx + cw / 2, *y = a->r.y + cy + ch / 2;
}

static const app_heat_area *experts_area(const app_state *app)
{
    for (int i = 0; i < app->layout.n_areas; i++)
        if (strstr(app->layout.areas[i].stage, "expert_weights")) return &app->layout.areas[i];
    return NULL;
}

static void test_view(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->app.view.layer, 0);
    assert_int_equal(app_experts_kind_of(&f->app), APP_EXPERTS_DENSE);
    assert_true(app_key(&f->app, 'e', APP_MOD_SHIFT));
    assert_int_equal(f->app.view.mode, LESSON_VIEW_EXPERTS);
    build(f);
    assert_true(has_text(&f->dl, "E  experts")); /* the chip, lit */
    assert_true(has_part(&f->dl, "layer 0 is dense: one MLP for every token, no experts"));
    assert_null(experts_area(&f->app));

    assert_true(app_key(&f->app, '.', 0)); /* layer 1 routes */
    assert_int_equal(f->app.view.layer, 1);
    assert_int_equal(f->app.view.mode, LESSON_VIEW_EXPERTS);
    build(f);
    assert_true(has_part(&f->dl, "its top 2 of 4 routed experts"));
    assert_true(has_part(&f->dl, "Shared experts: 1"));
    app_experts ex;
    char err[300];
    assert_int_equal(app_experts_make(&f->app, &ex, err, sizeof err), 0);
    assert_int_equal(ex.E, DS_E);
    assert_int_equal(ex.top_k, DS_TOP);
    assert_int_equal(ex.shared, 1);
    const app_heat_area *a = experts_area(&f->app);
    assert_non_null(a);
    assert_string_equal(a->stage, "layers.1.expert_weights");
    assert_int_equal(a->rows, ex.s);
    assert_int_equal(a->cols, DS_E);
    assert_true(a->r.x >= 0 && a->r.y >= 0 && a->r.x + a->r.w <= W && a->r.y + a->r.h <= H);
    assert_true(a->r.h / ex.s >= 16); /* a line a row at least */
    char buf[64];
    for (int i = 0; i < ex.s; i++) /* every token, labelled as the heatmap labels it */
        assert_true(has_text(&f->dl, app_view_row_label(&f->app.trace, &ex.w, i, buf, sizeof buf)));
    for (int e = 0; e < DS_E; e++) {
        snprintf(buf, sizeof buf, "e%d", e);
        assert_true(has_text(&f->dl, buf));
    }
    /* each token chose exactly 2 experts, ranked 1 and 2; the loads add up to 2 a token */
    const attn_tensor *t = attn_trace_find(&f->app.trace, "layers.1.expert_weights");
    assert_non_null(t);
    int loads = 0, frames = 0;
    for (int e = 0; e < DS_E; e++) loads += ex.load[e];
    assert_int_equal(loads, DS_TOP * ex.s);
    for (int i = 0; i < ex.s; i++) {
        int chosen = 0, ranks = 0;
        for (int e = 0; e < DS_E; e++) {
            float x = app_slice_at(&ex.w.slice, i, e);
            assert_float_equal(x, t->data[(size_t)i * DS_E + e], 0);
            chosen += x != 0.0f;
            ranks += app_experts_rank(&ex.w.slice, i, e);
        }
        assert_int_equal(chosen, DS_TOP);
        assert_int_equal(ranks, 1 + 2);
    }
    /* the heaviest framed, one a token, each on its token's largest weight in the trace (ties: the lower) */
    int framed[64] = {0};
    assert_true(ex.s <= 64);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) {
        if (c->kind != DRAW_CMD_FRAME || c->color != DRAW_WHITE || !app_rect_contains(a->r, c->r.x, c->r.y)) continue;
        frames++;
        int cx = c->r.x + c->r.w / 2 - a->r.x, cy = c->r.y + c->r.h / 2 - a->r.y, at_i = -1, at_e = -1;
        for (int i = 0; i < ex.s; i++)
            for (int e = 0; e < DS_E; e++) {
                int x0, y0, w0, h0;
                app_heat_cell_rect(a->r.w, a->r.h, ex.s, DS_E, i, e, &x0, &y0, &w0, &h0);
                if (cx >= x0 && cx < x0 + w0 && cy >= y0 && cy < y0 + h0) at_i = i, at_e = e;
            }
        assert_true(at_i >= 0);
        const float *row = t->data + (size_t)at_i * DS_E;
        int best = 0;
        for (int e = 1; e < DS_E; e++) best = row[e] > row[best] ? e : best;
        assert_int_equal(at_e, best);
        framed[at_i]++;
    }
    assert_int_equal(frames, ex.s);
    for (int i = 0; i < ex.s; i++) assert_int_equal(framed[i], 1);
    for (const draw_cmd *c = NULL; (c = draw_list_next(&f->dl, c));) /* every text inside the frame */
        if (c->kind == DRAW_CMD_TEXT) assert_true(c->r.x >= 0 && c->r.y >= 0 && c->r.x + c->r.w <= W && c->r.y + c->r.h <= H);

    /* hover token 2's heaviest expert, then one it did not choose */
    int heavy = -1, idle = -1, x, y;
    for (int e = 0; e < DS_E; e++) {
        if (app_experts_rank(&ex.w.slice, 2, e) == 1) heavy = e;
        if (app_experts_rank(&ex.w.slice, 2, e) == 0) idle = e;
    }
    cell_centre(a, 2, heavy, &x, &y);
    assert_true(app_mouse_move(&f->app, x, y));
    assert_int_equal(f->app.hover_i, 2);
    assert_int_equal(f->app.hover_j, heavy);
    build(f);
    char want[200], label[64];
    app_view_row_label(&f->app.trace, &ex.w, 2, label, sizeof label);
    snprintf(want, sizeof want, "row 2: %s   column %d: e%d", label, heavy, heavy);
    assert_true(has_text(&f->dl, want));
    snprintf(want, sizeof want, "expert_weights[i=2, e=%d] = ", heavy);
    assert_true(has_part(&f->dl, want));
    snprintf(want, sizeof want, "token 2 “%s” chose expert %d, rank 1 of its 2 by weight", label, heavy);
    assert_true(has_part(&f->dl, want));
    assert_false(has_part(&f->dl, ", c="));
    cell_centre(a, 2, idle, &x, &y);
    assert_true(app_mouse_move(&f->app, x, y));
    build(f);
    snprintf(want, sizeof want, "token 2 “%s” did not choose expert %d", label, idle);
    assert_true(has_part(&f->dl, want));

    app_status(&f->app, false, "%s", ""); /* no message: the status line's hint */
    build(f);
    assert_true(has_part(&f->dl, "E the picture again · , . layer"));
    app_mouse_down(&f->app, x, y); /* a click opens no bar chart behind the view */
    app_mouse_up(&f->app);
    assert_int_equal(f->app.view.row, -1);
    assert_true(app_key(&f->app, 'e', APP_MOD_SHIFT)); /* E again: the picture */
    assert_int_equal(f->app.view.mode, LESSON_VIEW_SINGLE);
}

/* gpt-oss records the same two stages: every layer routes (no dense one), top 2 of 8 from its
 * config.json, no shared expert said; each token's two, its heaviest framed, the hover the same. */
static void test_gptoss(void **state)
{
    fixture *f = *state;
    assert_int_equal(app_experts_kind_of(&f->app), APP_EXPERTS_ROUTED);
    assert_true(app_key(&f->app, 'e', APP_MOD_SHIFT));
    build(f);
    assert_true(has_part(&f->dl, "layer 0: each token goes to its top 2 of 8 routed experts"));
    assert_false(has_part(&f->dl, "Shared experts"));
    app_experts ex;
    char err[300];
    assert_int_equal(app_experts_make(&f->app, &ex, err, sizeof err), 0);
    assert_int_equal(ex.E, GO_E);
    assert_int_equal(ex.top_k, GO_TOP);
    assert_int_equal(ex.shared, 0);
    for (int i = 0; i < ex.s; i++) {
        int chosen = 0;
        for (int e = 0; e < GO_E; e++) chosen += app_slice_at(&ex.w.slice, i, e) != 0.0f;
        assert_int_equal(chosen, GO_TOP);
    }
    const app_heat_area *a = experts_area(&f->app);
    assert_non_null(a);
    assert_string_equal(a->stage, "layers.0.expert_weights");
    int heavy = -1, x, y;
    for (int e = 0; e < GO_E; e++)
        if (app_experts_rank(&ex.w.slice, 1, e) == 1) heavy = e;
    cell_centre(a, 1, heavy, &x, &y);
    assert_true(app_mouse_move(&f->app, x, y));
    build(f);
    char want[200];
    snprintf(want, sizeof want, "chose expert %d, rank 1 of its 2 by weight", heavy);
    assert_true(has_part(&f->dl, want));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refused_without_experts, setup_plain, teardown),
        cmocka_unit_test_setup_teardown(test_view, setup_moe, teardown),
        cmocka_unit_test_setup_teardown(test_gptoss, setup_gptoss, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
