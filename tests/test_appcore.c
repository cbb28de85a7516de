/* test_appcore.c — the app core with no SDL at all: no SDL header is included
 * and no SDL library is linked (CMake target attn_appcore). The app is driven
 * through its own entry points (app_key, app_text, app_mouse_down,
 * ...) the way input_sdl.c drives it, with a hand-made layout standing in for
 * the renderer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "app.h"
#include "app_impl.h"
#include "catalog.h"
#include "engine/formats/trace_io.h"
#include "engine/model/loss.h"
#include "engine/run/forward.h"
#include "jobs_pieces.h"
#include "jobs_thread.h"
#include "keys.h"
#include "layers_fixture.h"
#include "model_fixture.h"
#include "player.h"
#include "state.h"

static char progress_file[512];

static int setup(void **state)
{
    app_state *app = calloc(1, sizeof *app);
    char err[400];
    attn_config c;
    attn_config_init(&c);
    if (app_init(app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(progress_file, sizeof progress_file, "%s/appcore-progress.json", tmp ? tmp : "/tmp");
    remove(progress_file);
    app_player_init(&app->lesson, "en", progress_file);
    app->lesson.keep_progress = false;
    *state = app;
    return 0;
}

static int teardown(void **state)
{
    app_state *app = *state;
    app_free(app);
    free(app);
    return 0;
}

static const char *stage(const app_state *app) { return app_tensor(app)->name; }

static void keys_move_through_stages_and_heads(void **state)
{
    app_state *app = *state;
    assert_string_equal(stage(app), "weights");
    int i = app_stage(app);
    assert_true(app_key(app, APP_KEY_RIGHT, 0));
    assert_int_equal(app_stage(app), i + 1);
    assert_string_equal(app->view.stage, app->trace.tensors[i + 1].name);
    app_key(app, APP_KEY_LEFT, 0);
    app_key(app, APP_KEY_LEFT, 0);
    assert_int_equal(app_stage(app), i - 1);
    for (int k = 0; k < 100; k++) app_key(app, APP_KEY_LEFT, 0);
    assert_int_equal(app_stage(app), 0);
    assert_false(app_key(app, APP_KEY_LEFT, 0)); /* nothing before the first stage */

    int h = app->trace.dims.h;
    app_key(app, APP_KEY_UP, 0);
    assert_int_equal(app->view.head, h - 1); /* wraps */
    app_key(app, APP_KEY_DOWN, 0);
    assert_int_equal(app->view.head, 0);
    app_key(app, 'b', 0);
    assert_int_equal(app->view.batch, 1);
    assert_false(app_key(app, 'z', 0)); /* not bound */
}

static void keys_change_settings(void **state)
{
    app_state *app = *state;
    unsigned gen = app->generation;
    assert_int_equal(app->cfg.causal, ATTN_CAUSAL_ON);
    assert_true(app_key(app, 'c', 0));
    assert_int_equal(app->cfg.causal, ATTN_CAUSAL_OFF);
    assert_int_equal(app->trace.cfg.causal, ATTN_CAUSAL_OFF);
    assert_true(app->generation != gen);
    assert_string_equal(app->status, "causal mask off");
    long maps = app->arena->maps, lends = app->arena->lends;
    app_key(app, 'c', 0); /* (Shift+C is soft-capping: keys_reach_the_new_settings) */
    assert_int_equal(app->cfg.causal, ATTN_CAUSAL_ON);
    /* a toggle recomputes the same shape in the memory of the trace it replaced */
    assert_int_equal(app->arena->maps, maps);
    assert_int_equal(app->arena->lends, lends + 1);

    int heads = app->trace.dims.h;
    app_key(app, 'h', 0);
    assert_true(app->trace.dims.h > heads);
    app_key(app, 'h', APP_MOD_SHIFT);
    assert_int_equal(app->trace.dims.h, heads);

    /* the compare view: Tab, then t for the next toggle */
    app_key(app, APP_KEY_TAB, 0);
    assert_int_equal(app->view.mode, LESSON_VIEW_COMPARE);
    assert_true(app->has_alt);
    assert_int_equal(app->alt.cfg.causal, ATTN_CAUSAL_OFF);
    app_key(app, 't', 0);
    assert_int_equal(app->view.compare, attn_compare_find("padding"));
    app_key(app, 'g', 0);
    assert_int_equal(app->view.mode, LESSON_VIEW_GRID);
    assert_false(app->has_alt);
}

/* A setting with a cycle in the settings table steps through it: one action, any setting. */
/* w steps the sliding window off → 2 → 3 → 4 → off; the compare view toggles it. */
static void sliding_window_key(void **state)
{
    app_state *app = *state;
    static const int expect[] = {2, 3, 4, 0};
    for (int k = 0; k < 4; k++) {
        assert_true(app_key(app, 'w', 0));
        assert_int_equal(app->cfg.sliding_window, expect[k]);
        assert_int_equal(app->trace.cfg.sliding_window, expect[k]);
        assert_false(app->status_error);
    }
    app_key(app, 'w', 0);
    app_key(app, 'w', 0); /* 3 */
    app_do(app, APP_ACT_COMPARE_WITH, attn_compare_find("window"));
    assert_int_equal(app->view.mode, LESSON_VIEW_COMPARE);
    assert_true(app->has_alt);
    assert_int_equal(app->alt.cfg.sliding_window, 0); /* with the window beside without it */
    /* cross-attention has no positions to slide over: refused, nothing changes */
    assert_false(app_do(app, APP_ACT_CROSS, 0));
    assert_true(app->status_error);
    assert_int_equal(app->cfg.sliding_window, 3);
    const app_key_binding *b = app_keys_find(APP_KEYS_VIEW, 'w', 0);
    assert_non_null(b);
    assert_non_null(b->help);
}

/* MLA from the keyboard: m goes MHA → GQA → MQA → MLA → MHA, Shift+M switches
 * MLA between the naive and the absorbed computation (their own stages), and
 * leaving MLA drops its settings. */
static void m_reaches_mla_and_shift_m_absorbs(void **state)
{
    app_state *app = *state;
    assert_false(app_key(app, 'm', APP_MOD_SHIFT) && app->trace.cfg.mla_absorb); /* no MLA yet: refused */
    int mla = attn_compare_find("mla_absorb");
    assert_true(mla >= 0);
    assert_false(app_compare_offered(app, mla));
    for (int i = 0; i < attn_compare_count(); i++) { /* t skips MLA's toggle outside MLA */
        assert_true(app_do(app, APP_ACT_COMPARE_WITH, -1));
        assert_int_not_equal(app->view.compare, mla);
    }
    app_do(app, APP_ACT_COMPARE, 0); /* back to the single view */
    for (int i = 0; i < 4 && app->trace.dims.mode != ATTN_MODE_MLA; i++) app_key(app, 'm', 0);
    assert_int_equal(app->trace.dims.mode, ATTN_MODE_MLA);
    assert_non_null(attn_trace_find(&app->trace, "c_kv"));
    assert_non_null(attn_trace_find(&app->trace, "k_pe"));
    assert_non_null(attn_trace_find(&app->trace, "k_nope"));
    assert_true(app_key(app, 'm', APP_MOD_SHIFT)); /* M: absorbed */
    assert_true(app->trace.cfg.mla_absorb);
    assert_non_null(attn_trace_find(&app->trace, "q_latent"));
    assert_null(attn_trace_find(&app->trace, "k_nope"));
    assert_false(app->status_error);
    /* the compare view: absorbed beside naive */
    assert_true(app_compare_offered(app, mla));
    assert_true(app_do(app, APP_ACT_COMPARE_WITH, mla));
    assert_true(app->has_alt);
    assert_false(app->alt.cfg.mla_absorb);
    assert_non_null(attn_trace_find(&app->alt, "k_nope"));
    app_do(app, APP_ACT_COMPARE, 0);
    assert_true(app_key(app, 'm', 0)); /* MLA → MHA: kv_rank, rope_dim and mla_absorb go */
    assert_int_equal(app->trace.dims.mode, ATTN_MODE_MHA);
    assert_false(app->trace.cfg.mla_absorb);
    assert_null(attn_trace_find(&app->trace, "c_kv"));
}

/* The settings of issue 33 from the keyboard: Shift and a letter steps each
 * (the letter alone does what it did), the trace records its stages, and the
 * compare view shows the weights with and without each. */
static void keys_reach_the_new_settings(void **state)
{
    app_state *app = *state;
    assert_true(app_key(app, 'a', APP_MOD_SHIFT)); /* A: ALiBi */
    assert_true(app->trace.cfg.alibi);
    assert_non_null(attn_trace_find(&app->trace, "bias"));
    assert_int_equal(app->view.mode, LESSON_VIEW_SINGLE); /* not the arrows of a */
    assert_true(app_key(app, 'c', APP_MOD_SHIFT)); /* C: soft-capping, off → 5 */
    assert_true(app->trace.cfg.softcap == 5.0);
    assert_int_equal(app->cfg.causal, ATTN_CAUSAL_ON); /* c alone is the causal mask */
    assert_non_null(attn_trace_find(&app->trace, "capped_scores"));
    assert_true(app_key(app, 'n', APP_MOD_SHIFT)); /* N: QK-norm */
    assert_true(app->trace.cfg.qk_norm);
    assert_non_null(attn_trace_find(&app->trace, "q_norm"));
    assert_true(app_key(app, 'x', APP_MOD_SHIFT)); /* X: the sink logit, off → 0 */
    assert_true(app->trace.cfg.sink_logit == 0.0f);
    assert_false(app->trace.dims.cross); /* not cross-attention's x */
    assert_non_null(attn_trace_find(&app->trace, "sink_weight"));
    /* K with no window: the kept first key beside a window of 3 */
    assert_int_equal(app->trace.cfg.sliding_window, 0);
    assert_true(app_key(app, 'k', APP_MOD_SHIFT));
    assert_int_equal(app->trace.cfg.keep_first, 1);
    assert_int_equal(app->trace.cfg.sliding_window, 3);
    assert_false(app->status_error);
    assert_false(app_decoding(app)); /* not the decoding of k */
    /* the window stepped off takes the kept keys with it: 3 → 4 → off */
    app_key(app, 'w', 0);
    app_key(app, 'w', 0);
    assert_int_equal(app->trace.cfg.sliding_window, 0);
    assert_int_equal(app->trace.cfg.keep_first, 0);
    assert_false(app->status_error);
    /* every new toggle of the compare view: the weights beside the other value */
    static const char *const kinds[] = {"alibi", "softcap", "qk_norm", "sink"};
    for (int k = 0; k < 4; k++) {
        int t = attn_compare_find(kinds[k]);
        assert_true(t >= 0);
        app_do(app, APP_ACT_COMPARE_WITH, t);
        assert_int_equal(app->view.mode, LESSON_VIEW_COMPARE);
        assert_true(app->has_alt);
        assert_true(app_compare_offered(app, t));
    }
    assert_true(isinf(app->alt.cfg.sink_logit)); /* sink X = 0 beside no sink */
    assert_null(attn_trace_find(&app->alt, "sink_weight"));
    /* the kept first keys without a window: one line, no toggled trace */
    int kf = attn_compare_find("keep_first");
    assert_false(app_compare_offered(app, kf) && app->view.compare != kf);
    app_do(app, APP_ACT_COMPARE_WITH, kf);
    assert_false(app->has_alt);
    assert_true(app->status_error);
    assert_non_null(strstr(app->status, "sliding window"));
    for (int i = 0; i < app_n_keys; i++) /* each has its line in the help */
        if (app_keys[i].action == APP_ACT_CYCLE) assert_non_null(app_keys[i].help);
}

/* A trace of three layers: , and . change the layer on the same stage, the
 * arrows stay in the layer, and a lesson-style view names a layer. */
static void layers_in_the_window(void **state)
{
    (void)state;
    attn_config c;
    attn_error err;
    attn_trace one, three = {0};
    attn_config_init(&c);
    assert_int_equal(attn_trace_run(&c, NULL, &one, &err), ATTN_OK);
    three = one;
    three.tensors = NULL;
    three.arena = NULL;
    make_layers(&three, &one, 3);
    char path[512];
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(path, sizeof path, "%s/appcore-layers.safetensors", tmp ? tmp : "/tmp");
    if (attn_trace_save(&three, path, &err)) fail_msg("save: %s", err.msg);
    free(three.tensors);
    free(three.arena);
    attn_trace_free(&one);
    attn_config_free(&c);

    app_state *app = calloc(1, sizeof *app);
    char msg[400];
    if (app_init_file(app, path, msg, sizeof msg)) fail_msg("open: %s", msg);
    assert_int_equal(app->trace.n_layers, 3);
    assert_string_equal(stage(app), "layers.0.weights");
    assert_true(app_key(app, '.', 0));
    assert_string_equal(stage(app), "layers.1.weights");
    assert_int_equal(app->view.layer, 1);
    assert_string_equal(app->status, "layer 1 of 3");
    app_key(app, '.', 0);
    assert_false(app_key(app, '.', 0)); /* no layer 3 */
    assert_string_equal(stage(app), "layers.2.weights");
    app_key(app, APP_KEY_RIGHT, 0);
    assert_int_equal(app_tensor(app)->layer, 2); /* the next stage of the same layer */
    for (int k = 0; k < 40; k++) app_key(app, APP_KEY_RIGHT, 0);
    assert_int_equal(app_tensor(app)->layer, 2);
    for (int i = 0; i < app->trace.n_tensors; i++)
        assert_int_equal(app_in_layer(app, i), app->trace.tensors[i].layer == 2);
    app_key(app, ',', 0);
    assert_int_equal(app->view.layer, 1);
    assert_int_equal(app_tensor(app)->layer, 1);
    /* a stage name is read in the viewed layer; a full name moves to its layer */
    assert_int_equal(app_set_stage(app, "scores"), 0);
    assert_string_equal(stage(app), "layers.1.scores");
    assert_int_equal(app_set_stage(app, "layers.0.mask"), 0);
    assert_int_equal(app->view.layer, 0);
    assert_int_equal(app_set_layer(app, 3), -1);
    app_free(app);
    free(app);
    remove(path);
}

/* F5: presenter mode is fullscreen with large text; the toolbar comes back
 * when the mouse moves and goes away at the next key; F5 again restores all. */
static void presenter_mode(void **state)
{
    app_state *app = *state;
    float before = app->font_scale;
    assert_true(app_key(app, APP_KEY_F5, 0));
    assert_true(app->present);
    assert_true(app->req.fullscreen);
    assert_true(app->font_scale >= APP_PRESENT_FONT_SCALE);
    assert_false(app->toolbar_shown);
    assert_true(app_mouse_move(app, 5, 5));
    assert_true(app->toolbar_shown);
    assert_true(app_key(app, APP_KEY_RIGHT, 0));
    assert_false(app->toolbar_shown);
    assert_true(app_key(app, APP_KEY_F5, 0));
    assert_false(app->present);
    assert_false(app->req.fullscreen);
    assert_true(app->font_scale == before);
}

static void settings_cycle(void **state)
{
    app_state *app = *state;
    int rope = -1;
    for (int i = 0; i < attn_setting_count(); i++)
        if (attn_setting_at(i) == attn_setting_find("rope")) rope = i;
    assert_true(rope >= 0);
    bool was = app->cfg.rope;
    assert_true(app_do(app, APP_ACT_CYCLE, rope));
    assert_int_equal(app->cfg.rope, !was);
    assert_int_equal(app->trace.cfg.rope, !was);
    assert_false(app->status_error);
    assert_true(app_do(app, APP_ACT_CYCLE, rope));
    assert_int_equal(app->cfg.rope, was);
    assert_false(app_do(app, APP_ACT_CYCLE, -1));
    assert_false(app_do(app, APP_ACT_CYCLE, attn_setting_count()));
}

static int double_heads(attn_config *next, const void *arg, attn_error *err)
{
    (void)arg, (void)err;
    next->heads *= 2;
    return 0;
}

static int refuse(attn_config *next, const void *arg, attn_error *err)
{
    (void)next;
    return attn_fail(err, ATTN_ERR_CONFIG, "%s", (const char *)arg), -1;
}

static void settings_change_through_one_function(void **state)
{
    app_state *app = *state;
    int heads = app->cfg.heads;
    assert_int_equal(app_edit_config(app, double_heads, NULL), 0);
    assert_int_equal(app->cfg.heads, 2 * heads);
    /* a change that refuses leaves everything as it was, and says why */
    unsigned gen = app->generation;
    assert_int_equal(app_edit_config(app, refuse, "no thanks"), -1);
    assert_int_equal(app->cfg.heads, 2 * heads);
    assert_int_equal(app->generation, gen);
    assert_string_equal(app->status, "no thanks");
    assert_true(app->status_error);
    /* settings the engine refuses: the same */
    assert_int_equal(app_set(app, "heads", "7"), -1);
    assert_int_equal(app->cfg.heads, 2 * heads);
    assert_non_null(strstr(app->status, "must divide d_model"));
    /* NULL recomputes the same settings */
    assert_int_equal(app_edit_config(app, NULL, NULL), 0);
    assert_true(app->generation != gen);
}

/* Esc cancels, Enter applies; the cursor steps over whole characters. */
static void token_editor_edits_utf8(void **state)
{
    app_state *app = *state;
    assert_false(app_wants_text(app));
    app_key(app, 'e', 0);
    assert_true(app->edit.open);
    assert_true(app_wants_text(app));
    app_key(app, 'u', APP_MOD_CTRL);
    assert_string_equal(app->edit.text[0], "");
    app_text(app, "我 爱 你");
    assert_int_equal(app->edit.cursor, (int)strlen("我 爱 你"));
    app_key(app, APP_KEY_LEFT, 0); /* over 你: three bytes */
    assert_int_equal(app->edit.cursor, (int)strlen("我 爱 "));
    app_key(app, APP_KEY_BACKSPACE, 0); /* the space before it */
    app_key(app, APP_KEY_BACKSPACE, 0); /* 爱, whole */
    assert_string_equal(app->edit.text[0], "我 你");
    app_key(app, APP_KEY_DELETE, 0); /* 你, whole */
    assert_string_equal(app->edit.text[0], "我 ");
    app_key(app, APP_KEY_HOME, 0);
    assert_int_equal(app->edit.cursor, 0);
    app_key(app, APP_KEY_END, 0);
    /* the IME: a composition is shown until the text arrives, and owns the keys meanwhile */
    assert_true(app_compose(app, "mao"));
    assert_false(app_key(app, APP_KEY_BACKSPACE, 0));
    app_text(app, "猫");
    assert_string_equal(app->edit.compose, "");
    assert_false(app_key(app, 'm', 0)); /* a letter is text, not the mode key */
    /* pasting is a request the window answers */
    assert_true(app_key(app, 'v', APP_MOD_CTRL));
    assert_true(app->req.paste);
    app_paste(app, " 狗\n们");
    assert_false(app->req.paste);
    assert_string_equal(app->edit.text[0], "我 猫 狗 们");
    app_key(app, APP_KEY_RETURN, 0);
    assert_false(app->edit.open);
    assert_false(app_wants_text(app));
    assert_string_equal(app->cfg.tokens, "我 猫 狗 们");
    assert_int_equal(app->trace.dims.L, 4);

    app_key(app, 'e', 0);
    app_text(app, " 啊");
    app_key(app, APP_KEY_ESCAPE, 0);
    assert_false(app->edit.open);
    assert_false(app->req.quit);
    assert_string_equal(app->cfg.tokens, "我 猫 狗 们");
}

static void requests_for_the_window(void **state)
{
    app_state *app = *state;
    app_key(app, 's', 0);
    assert_true(app->req.save);
    app_key(app, 'f', 0);
    assert_true(app->req.fullscreen);
    app_key(app, 'f', 0);
    assert_false(app->req.fullscreen);
    app_key(app, '?', 0);
    assert_true(app->help);
    app_key(app, APP_KEY_ESCAPE, 0); /* closes the help, does not quit */
    assert_false(app->help);
    assert_false(app->req.quit);
    app_key(app, APP_KEY_ESCAPE, 0); /* nothing left to close: Esc never quits */
    assert_false(app->req.quit);
    app_key(app, 'q', 0); /* no lesson open: q quits without asking */
    assert_false(app->quit_confirm);
    assert_true(app->req.quit);
}

/* A frame's layout made by hand: a button and a heatmap of the weights. */
static void mouse_goes_through_the_layout(void **state)
{
    app_state *app = *state;
    const attn_dims *d = &app->trace.dims;
    app_layout_hit(&app->layout, (app_rect){10, 10, 50, 20}, APP_ACT_COMPARE, 0);
    app_heat_area *a = &app->layout.areas[app->layout.n_areas++];
    *a = (app_heat_area){{100, 100, 60 * d->t, 60 * d->s}, d->s, d->t, 0, 0, "weights", 0, 0, 1, 1};
    assert_true(app_mouse_move(app, 100 + 60 * 2 + 5, 100 + 60 * 3 + 5));
    assert_int_equal(app->hover_area, 0);
    assert_int_equal(app->hover_i, 3);
    assert_int_equal(app->hover_j, 2);
    assert_false(app_mouse_move(app, 100 + 60 * 2 + 9, 100 + 60 * 3 + 9)); /* the same cell */
    assert_true(app_mouse_down(app, 100 + 60 * 2 + 5, 100 + 60 * 3 + 5));
    assert_int_equal(app->view.row, 3); /* a query row: its bar chart */
    assert_true(app_mouse_leave(app));
    assert_int_equal(app->hover_area, -1);
    assert_true(app_mouse_down(app, 20, 15)); /* the button */
    assert_int_equal(app->view.mode, LESSON_VIEW_COMPARE);
    assert_false(app_mouse_down(app, 5, 5));
    /* the wheel scrolls the stage navigator */
    assert_true(app_wheel(app, -2));
    assert_int_equal(app->stage_scroll, 2);
    assert_true(app_exposed(app));
    assert_true(app->dirty);
}

static void lesson_steps_forward_and_back(void **state)
{
    app_state *app = *state;
    char dir[1024], path[1200], err[600];
    snprintf(path, sizeof path, "%s/04-causal-mask.md", lesson_catalog_dir("en", dir, sizeof dir));
    assert_int_equal(app_lesson_open(app, path, 0, err, sizeof err), 0);
    app_player *p = &app->lesson;
    assert_true(p->open);
    assert_int_equal(p->step, 0);
    assert_non_null(strstr(app->status, "step 1 / "));
    app_key(app, APP_KEY_SPACE, 0);
    assert_int_equal(p->step, 1);
    /* the app shows what the step set: the same view spec */
    assert_string_equal(app->view.stage, p->view.stage);
    assert_int_equal(app->view.head, p->view.head);
    assert_int_equal(app->view.mode, p->view.mode);
    /* exploring, then Backspace rebuilds step 1 from the lesson */
    app_key(app, 'c', 0);
    app_key(app, APP_KEY_BACKSPACE, 0);
    assert_int_equal(p->step, 0);
    attn_config cfg;
    lesson_view v;
    lesson_marks m;
    assert_int_equal(app_player_step(p, 0, &cfg, &v, &m, err, sizeof err), 0);
    assert_int_equal(app->cfg.causal, cfg.causal);
    assert_string_equal(app->view.stage, v.stage);
    attn_config_free(&cfg);
    app_key(app, APP_KEY_PAGEDOWN, APP_MOD_SHIFT); /* not bound with Shift */
    assert_int_equal(p->step, 0);
    while (p->step + 1 < p->ls.n_steps) app_key(app, APP_KEY_SPACE, 0);
    app_key(app, APP_KEY_SPACE, 0);
    assert_int_equal(p->step, p->ls.n_steps - 1);
    assert_non_null(strstr(app->status, "last step"));
    /* the picker is modal: keys select, Esc closes it */
    assert_true(app_key(app, 'l', 0));
    assert_true(p->picker);
    attn_causal causal = app->cfg.causal;
    assert_true(app_key(app, 'c', 0));
    assert_int_equal(app->cfg.causal, causal);
    app_key(app, APP_KEY_ESCAPE, 0);
    assert_false(p->picker);
    assert_false(app->req.quit);
}

static bool ends_with(const char *s, const char *tail);

/* ---- the single-threaded web page's job service (jobs_pieces.c), each piece
 * of a request counted */

static int pieces_run;

typedef struct {
    app_task_fn *fn;
    void *arg;
} counted_call;

static bool counted_piece(void *arg)
{
    counted_call *c = arg;
    pieces_run++;
    bool more = c->fn(c->arg);
    if (!more) free(c);
    return more;
}

static app_task *counted_start(app_task_fn *fn, void *arg)
{
    counted_call *c = malloc(sizeof *c);
    if (!c) return NULL;
    *c = (counted_call){fn, arg};
    app_task *t = app_jobs_pieces()->start(counted_piece, c);
    if (!t) free(c);
    return t;
}

static void counted_join(app_task *t) { app_jobs_pieces()->join(t); }
static void counted_leave(app_task *t) { app_jobs_pieces()->leave(t); }
static const app_jobs piece_jobs = {counted_start, counted_join, counted_leave};

/* A frame of that page (web_poll): the notice drawn, a piece, a poll; whether work is left. */
static bool page_frame(app_state *app)
{
    app->opening.shown = true;
    app_jobs_pieces_next();
    app_poll(app);
    return app_pending(app) || app_jobs_pieces_queued();
}

/* Frames until no work is left (at most 1000). */
static void page_frames(app_state *app)
{
    for (int i = 0; i < 1000 && page_frame(app); i++) {}
}

/* On the single-threaded page no request may hold a frame for long: a lesson
 * is read in pieces, the file then a step a poll, and opens as it does at once. */
static void a_lesson_is_read_a_step_a_poll(void **state)
{
    app_state *app = *state;
    char dir[1024], path[1200], err[600];
    snprintf(path, sizeof path, "%s/04-causal-mask.md", lesson_catalog_dir("en", dir, sizeof dir));
    lesson ls;
    assert_int_equal(app_player_read(path, &ls, err, sizeof err), 0);
    int steps = ls.n_steps;
    lesson_free(&ls);
    assert_true(steps > 3);

    app->jobs = app->lesson.jobs = &piece_jobs;
    app->async = true;
    pieces_run = 0;
    assert_int_equal(app_lesson_open(app, path, 2, err, sizeof err), 0);
    for (int i = 0; i < 1000 && page_frame(app); i++)
        if (pieces_run < steps) assert_false(app->lesson.open); /* not before its last step is checked */
    assert_false(app_jobs_pieces_queued());
    assert_true(app->lesson.open);
    assert_int_equal(app->lesson.step, 2);
    assert_int_equal(app->lesson.ls.n_steps, steps);
    /* the file and each step a piece, then the step's picture (a piece of its own) */
    assert_true(pieces_run >= 1 + steps);
    assert_true(pieces_run <= 1 + steps + 2);
    app->async = false;
    app->jobs = app->lesson.jobs = NULL;

    /* another lesson asked for while one is read: the first stops at its next
     * piece (nobody waits for it), and the second opens */
    char other[1200];
    snprintf(other, sizeof other, "%s/05-padding-mask.md", dir);
    assert_int_equal(app_player_read(other, &ls, err, sizeof err), 0);
    int other_steps = ls.n_steps;
    lesson_free(&ls);
    app->jobs = app->lesson.jobs = &piece_jobs;
    app->async = true;
    pieces_run = 0;
    assert_int_equal(app_lesson_open(app, path, 0, err, sizeof err), 0);
    for (int i = 0; i < 3; i++) page_frame(app); /* the notice, then the file and a step or two */
    int before = pieces_run;
    assert_true(before >= 2 && steps - before > 3); /* so that the bound below tells */
    assert_int_equal(app_lesson_open(app, other, 0, err, sizeof err), 0);
    page_frames(app);
    assert_false(app_jobs_pieces_queued());
    assert_true(ends_with(app->lesson.name, "05-padding-mask.md"));
    /* the first lesson's one more piece (its end), the second's file and steps, its picture */
    assert_true(pieces_run - before <= 1 + 1 + other_steps + 2);
    app->async = false;
    app->jobs = app->lesson.jobs = NULL;

    /* a lesson with a problem in its last step: read the same way, refused the same way */
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    char bad[600], at_once[600];
    snprintf(bad, sizeof bad, "%s/appcore-bad-lesson.md", tmp ? tmp : "/tmp");
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("# Bad\n\nIntro.\n\n## One\n\nText.\n\n## Two\n\n```attnlab\nhead = 99\n```\n\nText.\n", f);
    fclose(f);
    assert_int_equal(app_player_read(bad, &ls, at_once, sizeof at_once), -1);
    assert_non_null(strstr(at_once, "appcore-bad-lesson.md:"));
    app->jobs = app->lesson.jobs = &piece_jobs;
    app->async = true;
    pieces_run = 0;
    assert_int_equal(app_lesson_open(app, bad, 0, err, sizeof err), 0);
    page_frames(app);
    assert_false(app_jobs_pieces_queued());
    assert_int_equal(pieces_run, 1 + 2);
    assert_true(app->lesson.open); /* the lesson open before stays open */
    if (!strstr(app->status, at_once)) fail_msg("status: %s; at once: %s", app->status, at_once);
    app->async = false;
    app->jobs = app->lesson.jobs = NULL;
    remove(bad);
}

/* Issue 32: clicking Next through a lesson reaches its end but does not finish
 * it; its quizzes do. The last step offers the next lesson, which opens where
 * the student left it: at once, and on the page (a piece a frame). */
static void a_lesson_is_finished_by_its_quizzes(void **state)
{
    app_state *app = *state;
    app_player *p = &app->lesson;
    char dir[1024], path[1200], err[600];
    snprintf(path, sizeof path, "%s/04-causal-mask.md", lesson_catalog_dir("en", dir, sizeof dir));
    assert_int_equal(app_lesson_open(app, path, 0, err, sizeof err), 0);
    int quizzes = lesson_quiz_count(&p->ls);
    assert_true(quizzes > 2);
    while (p->step + 1 < p->ls.n_steps) app_key(app, APP_KEY_SPACE, 0);
    lesson_record r = app_player_record(p);
    assert_true(r.reached_end);
    assert_false(r.finished); /* no quiz answered */
    assert_int_equal(r.quizzes_right, 0);
    /* the picker says so: 04 is not finished, and opens at its first quiz */
    assert_true(app_key(app, 'l', 0));
    int i04 = -1;
    for (int i = 0; i < p->catalog.n; i++)
        if (!strcmp(p->catalog.items[i].name, "04-causal-mask.md")) i04 = i;
    assert_true(i04 >= 0);
    r = app_player_entry_record(p, &p->catalog.items[i04]);
    assert_true(r.reached_end && !r.finished);
    int first_quiz = 0;
    while (!p->quizzes[first_quiz]) first_quiz++;
    assert_int_equal(app_player_resume(p, &p->catalog.items[i04]), first_quiz);
    app_key(app, APP_KEY_ESCAPE, 0);
    /* every quiz right but one: still not finished; that one too: finished, and opened from the start */
    for (int s = 0; s < p->ls.n_steps; s++)
        for (int q = 0; q < p->quizzes[s]; q++) lesson_progress_quiz(p->progress, p->name, s, q, s || q);
    r = app_player_record(p);
    assert_false(r.finished);
    assert_int_equal(r.quizzes_right, quizzes - (p->quizzes[0] > 0));
    for (int s = 0; s < p->ls.n_steps; s++)
        for (int q = 0; q < p->quizzes[s]; q++) lesson_progress_quiz(p->progress, p->name, s, q, true);
    r = app_player_record(p);
    assert_true(r.finished);
    assert_int_equal(r.quizzes_right, quizzes);
    /* an answer kept for a quiz the lesson no longer has is not counted */
    lesson_progress_quiz(p->progress, p->name, 0, 99, true);
    assert_int_equal(app_player_record(p).quizzes_right, quizzes);

    /* the last step offers lesson 05; its action opens it, at its start */
    assert_string_equal(p->next.name, "05-padding-mask.md");
    assert_non_null(strstr(p->next.title, "padding"));
    assert_true(app_do(app, APP_ACT_LESSON_ONWARD, 0));
    assert_string_equal(p->name, "05-padding-mask.md");
    assert_int_equal(p->step, 0);
    assert_string_equal(p->next.name, "06-mqa-gqa.md");
    app_key(app, APP_KEY_SPACE, 0); /* on to its step 2 */
    /* on the page: the same action, the lesson read a piece a frame */
    app->jobs = app->lesson.jobs = &piece_jobs;
    app->async = true;
    assert_int_equal(app_lesson_open(app, path, p->ls.n_steps, err, sizeof err), 0);
    page_frames(app);
    assert_string_equal(p->name, "04-causal-mask.md");
    assert_int_equal(p->step, p->ls.n_steps - 1);
    assert_true(app_do(app, APP_ACT_LESSON_ONWARD, 0));
    page_frames(app);
    assert_false(app_jobs_pieces_queued());
    assert_string_equal(p->name, "05-padding-mask.md");
    assert_int_equal(p->step, 1); /* where the student left it */
    app->async = false;
    app->jobs = app->lesson.jobs = NULL;
    /* the course's last lesson offers none */
    snprintf(path, sizeof path, "%s/99-glossary.md", dir);
    assert_int_equal(app_lesson_open(app, path, 0, err, sizeof err), 0);
    assert_null(p->next.path);
    assert_false(app_do(app, APP_ACT_LESSON_ONWARD, 0));
}

/* The player alone: no app anywhere. */
static void player_stands_alone(void **state)
{
    (void)state;
    app_player p;
    char dir[1024], path[1200], err[600];
    app_player_init(&p, "en", progress_file);
    p.keep_progress = false;
    snprintf(path, sizeof path, "%s/04-causal-mask.md", lesson_catalog_dir("en", dir, sizeof dir));
    assert_int_equal(app_player_load(&p, path, err, sizeof err), 0);
    attn_config cfg;
    lesson_view v;
    lesson_marks m;
    assert_int_equal(app_player_step(&p, 1, &cfg, &v, &m, err, sizeof err), 0);
    app_player_enter(&p, 1, &v, &m);
    assert_int_equal(p.step, 1);
    assert_non_null(strstr(p.note, "step 2 / "));
    attn_config_free(&cfg);
    assert_int_equal(app_player_step(&p, 999, &cfg, &v, &m, err, sizeof err), -1);
    attn_config_free(&cfg);
    app_player_free(&p);
}

/* One table of keys: every help line names its keys, no binding shadows
 * another, and the names of the view modes and toggles are all there. */
/* Three variants of one "training run" (MHA, GQA, MQA) under ATTNLAB_MODELS. */
static void make_variants(char *root, size_t size)
{
    const char *tmp = getenv("ATTNLAB_TEST_TMP");
    snprintf(root, size, "%s/appcore-models-XXXXXX", tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(root));
    static const struct { const char *name, *variant; int g; double loss; } V3[] = {
        {"v-gqa", "gqa", 2, 2.5}, {"v-mha", "mha", 4, 2.4}, {"v-mqa", "mqa", 1, 2.7}};
    for (int i = 0; i < 3; i++) {
        char dir[600];
        snprintf(dir, sizeof dir, "%s/%s", root, V3[i].name);
        make_model(dir, 2, 4, V3[i].g, true, NULL, NULL);
        write_eval(dir, V3[i].variant, V3[i].loss);
        write_text(dir, "example.txt", "a dog ran on the mat .\n");
    }
    setenv("ATTNLAB_MODELS", root, 1);
}

/* make_variants undone: the models' folder removed, ATTNLAB_MODELS unset. */
static void drop_variants(const char *root)
{
    unsetenv("ATTNLAB_MODELS");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

static int init_model(app_state *app, const char *model)
{
    char err[400];
    attn_config c;
    attn_config_init(&c);
    attn_config_set(&c, "model", model, NULL);
    attn_config_set(&c, "text", "the cat sat on the mat", NULL);
    int rc = app_init(app, &c, err, sizeof err);
    attn_config_free(&c);
    if (rc) fail_msg("app: %s", err);
    return rc;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* The fixture of the tests of trained models: the three variants under
 * ATTNLAB_MODELS (make_variants) and the app on v-gqa's model with "the cat
 * sat on the mat". */
typedef struct {
    char root[512];
    app_state app;
} variants_fixture;

static int variants_setup(void **state)
{
    variants_fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    make_variants(f->root, sizeof f->root);
    init_model(&f->app, "v-gqa");
    *state = f;
    return 0;
}

/* The app freed and the variants removed; done once, by the test when it
 * goes on without them, or else by the teardown. */
static void variants_close(variants_fixture *f)
{
    if (!f->root[0]) return;
    app_free(&f->app);
    drop_variants(f->root);
    f->root[0] = '\0';
}

static app_state *variants_app(void **state)
{
    return &((variants_fixture *)*state)->app;
}

static int variants_teardown(void **state)
{
    variants_close(*state);
    free(*state);
    return 0;
}

/* The view a student set, which stepping through training must keep. */
static void assert_view_kept(const app_state *app)
{
    assert_int_equal(app->view.layer, 1);
    assert_int_equal(app->view.head, 3);
    assert_int_equal(app->view.row, 2);
    assert_int_equal(app->zoom.level, 1);
    assert_int_equal(app->cfg.causal, ATTN_CAUSAL_OFF);
    assert_string_equal(app->view.stage, "layers.1.scores");
    assert_string_equal(app->cfg.text, "the cat sat on the mat");
}

static void training_steps_keep_the_view(void **state)
{
    (void)state;
    char dir[600];
    app_state app;
    make_checkpointed(dir, sizeof dir, NULL);
    init_model(&app, dir);
    assert_int_equal(app.train.n, 2);
    assert_int_equal(app_train_newest(&app), 2); /* the final model */
    assert_false(app.status_error);
    /* the panel's data is metrics.json's */
    const attn_metrics *m = &app.train.metrics;
    assert_int_equal(m->n, 2);
    assert_int_equal(m->layers, 2);
    assert_int_equal(m->heads, 4);
    assert_int_equal(m->step[1], 25);
    assert_true(m->train_loss[1] == 2.0 && m->heldout_loss[0] == 3.1);
    for (int s = 0; s < 2; s++)
        for (int l = 0; l < 2; l++)
            for (int h = 0; h < 4; h++) {
                double base = s / 10.0 + l / 100.0 + h / 1000.0;
                assert_float_equal(attn_metrics_head(m, ATTN_METRIC_INDUCTION, s, l, h), base + 0.0001, 1e-9);
                assert_float_equal(attn_metrics_head(m, ATTN_METRIC_PREV, s, l, h), base + 0.0002, 1e-9);
                assert_float_equal(attn_metrics_head(m, ATTN_METRIC_FIRST, s, l, h), base + 0.0003, 1e-9);
            }

    /* a view of its own: layer 1's scores, head 3, row 2, zoomed, the causal mask off */
    assert_int_equal(app_set_layer(&app, 1), 0);
    assert_int_equal(app_set_stage(&app, "scores"), 0);
    app.view.head = 3;
    assert_true(app_do(&app, APP_ACT_ROW, 2));
    app.zoom.level = 1;
    assert_true(app_key(&app, 'c', 0));
    float before = attn_trace_find(&app.trace, "layers.1.scores")->data[5];

    /* J: back to step 25, then 0; the view stays, the model changes */
    assert_true(app_key(&app, 'j', APP_MOD_SHIFT));
    assert_true(ends_with(app.model->dir, "checkpoints/step25"));
    assert_int_equal(app_train_newest(&app), 1);
    assert_view_kept(&app);
    assert_true(app_key(&app, 'j', APP_MOD_SHIFT));
    assert_true(ends_with(app.model->dir, "checkpoints/step0"));
    assert_view_kept(&app);
    assert_true(attn_trace_find(&app.trace, "layers.1.scores")->data[5] != before);
    assert_false(app_key(&app, 'j', APP_MOD_SHIFT)); /* nothing before step 0 */
    assert_true(ends_with(app.model->dir, "checkpoints/step0"));

    /* on the window's worker, as the window does it: j to 25, then the final model */
    app.jobs = app.lesson.jobs = posix_jobs(); /* the window's threads */
    app.async = true;
    for (int want = 1; want <= 2; want++) {
        assert_true(app_key(&app, 'j', 0));
        assert_int_equal(app_train_newest(&app), want);
        for (int i = 0; i < 20000 && app_busy(&app, NULL, NULL, NULL); i++) {
            app_poll(&app);
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        assert_view_kept(&app);
    }
    app.async = false;
    assert_string_equal(app.model->dir, dir);
    assert_true(attn_trace_find(&app.trace, "layers.1.scores")->data[5] == before);
    assert_false(app_key(&app, 'j', 0)); /* nothing after the final model */

    /* a click on the loss curve's first column; on the measure's name; on a head's small plot */
    assert_true(app_do(&app, APP_ACT_TRAIN_AT, 0));
    assert_true(ends_with(app.model->dir, "checkpoints/step0"));
    assert_view_kept(&app);
    assert_int_equal(app.train_metric, ATTN_METRIC_PREV);
    assert_true(app_do(&app, APP_ACT_TRAIN_METRIC, 0));
    assert_int_equal(app.train_metric, ATTN_METRIC_INDUCTION);
    assert_true(app_do(&app, APP_ACT_TRAIN_HEAD, 0 << 16 | 2));
    assert_int_equal(app.view.layer, 0);
    assert_int_equal(app.view.head, 2);
    assert_string_equal(app.view.stage, "layers.0.scores");
    app_free(&app);

    /* opened at a checkpoint's folder, it knows where it is among the steps */
    char step25[700];
    snprintf(step25, sizeof step25, "%s/checkpoints/step25", dir);
    init_model(&app, step25);
    assert_int_equal(app.train.n, 2);
    assert_int_equal(app_train_newest(&app), 1);
    assert_true(app_key(&app, 'j', 0));
    assert_string_equal(app.model->dir, dir);
    app_free(&app);

    /* while a model trains only its checkpoints exist: the last step is as far as j goes */
    char cfg[700], moved[700];
    snprintf(cfg, sizeof cfg, "%s/config.json", dir);
    snprintf(moved, sizeof moved, "%s/config.moved", dir);
    assert_int_equal(rename(cfg, moved), 0);
    init_model(&app, step25);
    assert_false(app.train.final);
    assert_false(app_key(&app, 'j', 0));
    assert_true(ends_with(app.model->dir, "checkpoints/step25"));
    app_free(&app);
    assert_int_equal(rename(moved, cfg), 0);
}

static void a_broken_metrics_file_is_said(void **state)
{
    (void)state;
    char dir[600];
    app_state app;
    make_checkpointed(dir, sizeof dir, "{\"snapshots\": [{\"step\": 0, \"train_loss\": 3, \"heldout_loss\": 3}]}");
    init_model(&app, dir);
    assert_true(app.status_error);
    assert_non_null(strstr(app.status, "checkpoints/metrics.json: "));
    assert_non_null(strstr(app.status, "heads"));
    assert_null(strchr(app.status, '\n'));
    assert_int_equal(app.train.metrics.n, 0); /* no panel */
    assert_int_equal(app.train.n, 2);         /* the steps are still there */
    assert_true(app_key(&app, 'j', APP_MOD_SHIFT));
    assert_true(ends_with(app.model->dir, "checkpoints/step25"));
    app_free(&app);

    /* a model saved only at the end has no steps to go through: j says so */
    char plain[700];
    snprintf(plain, sizeof plain, "%s-plain", dir);
    make_model(plain, 2, 4, 2, true, NULL, NULL);
    init_model(&app, plain);
    assert_int_equal(app.train.n, 0);
    assert_false(app_key(&app, 'j', 0));
    assert_true(app.status_error);
    assert_non_null(strstr(app.status, "checkpoints"));
    app_free(&app);
}

static void a_trained_model_in_the_window(void **state)
{
    app_state *app = variants_app(state);
    assert_true(attn_trace_is_model(&app->trace));
    assert_int_equal(app->n_variants, 3);
    assert_string_equal(app->variants[0].variant, "mha");
    assert_string_equal(app->variants[2].variant, "mqa");
    assert_true(app->variants[2].kv_bytes_per_token * 2 == app->variants[1].kv_bytes_per_token);

    /* the next-token panel: five tokens, best first, the best being the argmax */
    app_prediction top[5];
    int row = app_query_row(app);
    assert_int_equal(row, app->trace.dims.s - 1);
    assert_int_equal(app_predictions(app, &app->trace, 0, row, top, 5), 5);
    const attn_tensor *probs = attn_trace_find(&app->trace, "probs");
    attn_tensor_fill(probs, (size_t)row, 1);
    const float *p = probs->data + (size_t)row * app->trace.dims.V;
    for (int v = 0; v < app->trace.dims.V; v++) assert_true(p[v] <= top[0].p);
    for (int i = 1; i < 5; i++) assert_true(top[i].p <= top[i - 1].p);
    float before = top[0].p;

    /* m: GQA → MQA → MHA, each with its own numbers */
    assert_true(app_key(app, 'm', 0));
    assert_string_equal(app->model->name, "v-mqa");
    assert_int_equal(app->trace.dims.g, 1);
    assert_non_null(strstr(app->status, "held-out loss 2.700"));
    assert_true(app_key(app, 'm', 0));
    assert_string_equal(app->model->name, "v-mha");
    assert_int_equal(app->trace.dims.g, 4);
    /* heads are the model's */
    assert_false(app_key(app, 'h', 0));
    assert_non_null(strstr(app->status, "trained with 4 heads"));
    assert_int_equal(app->trace.dims.h, 4);
    /* the causal mask off changes the predictions */
    assert_true(app_key(app, 'm', 0)); /* back to v-gqa */
    assert_true(app_key(app, 'c', 0));
    app_predictions(app, &app->trace, 0, row, top, 5);
    assert_true(top[0].p != before);
    assert_true(app_key(app, 'c', 0));

    /* decode mode steps through the model's tokens; past the end, ] writes on */
    assert_true(app_key(app, 'k', 0));
    assert_int_equal(app->decode_len, 7);
    while (app->view.decode_step < app->decode_len) assert_true(app_key(app, ']', 0));
    assert_int_equal(app->trace.dims.P, 6);
    assert_true(app_key(app, ']', 0));
    assert_int_equal(app->view.decode_step, 8);
    assert_int_equal(app->decode_len, 8);
    assert_int_equal(app->trace.dims.s, 1);
    assert_int_equal(app->trace.dims.P, 7);
    assert_non_null(strstr(app->status, "generated"));
    /* on the window's worker: ] again while it computes is kept (it cannot draw from the logits
     * shown, the last token's) and writes its token once the one computing is in (issue 35: 20
     * presses gave 1 token); the step shown moves as each is in */
    app->jobs = app->lesson.jobs = posix_jobs(); /* the window's threads */
    app->async = true;
    assert_true(app_key(app, ']', 0));
    int queued = 0;
    if (app_busy(app, NULL, NULL, NULL)) {
        assert_int_equal(app->view.decode_step, 8);
        assert_true(app_key(app, ']', 0));
        assert_non_null(strstr(app->status, "still computing: ] pressed 1 more times"));
        assert_int_equal(app->gen.queued, 1);
        queued = 1;
    }
    for (int i = 0; i < 20000 && (app_busy(app, NULL, NULL, NULL) || app->gen.queued); i++) {
        app_poll(app);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_int_equal(app->gen.queued, 0);
    assert_int_equal(app->view.decode_step, 9 + queued);
    assert_int_equal(app->decode_len, 9 + queued);
    app->async = false;
    for (int i = 0; i < 2 + queued; i++) assert_true(app_key(app, '[', 0));
    assert_int_equal(app->view.decode_step, 7);
    assert_true(app_key(app, 'k', 0)); /* the full pass again */

    /* g: every layer × every head; a click on a thumbnail opens that layer's head */
    assert_true(app_key(app, 'g', 0));
    assert_true(app_overview(app));
    app_layout_clear(&app->layout);
    app_heat_area *th = &app->layout.areas[app->layout.n_areas++];
    *th = (app_heat_area){{300, 200, 40, 40}, 7, 7, 2, 0, "layers.1.weights", 0, 0, 1, 1};
    assert_true(app_mouse_down(app, 310, 210));
    assert_int_equal(app->view.mode, LESSON_VIEW_SINGLE);
    assert_int_equal(app->view.layer, 1);
    assert_int_equal(app->view.head, 2);
    assert_string_equal(app_tensor(app)->name, "layers.1.weights");

    /* the editor edits the model's text, which its tokenizer reads: the zebra is unknown, and shown so */
    assert_true(app_key(app, 'e', 0));
    assert_true(app->edit.open);
    /* the text as the tokenizer decodes it, with the generated words (two, and the one queued) */
    int words = 1;
    for (const char *c = app->edit.text[0] + 23; *c; c++) words += *c == ' ';
    assert_true(!strncmp(app->edit.text[0], "the cat sat on the mat ", 23));
    assert_int_equal(words, 2 + queued);
    snprintf(app->edit.text[0], APP_EDIT_MAX, "a dog sat on the zebra");
    app->edit.cursor = (int)strlen(app->edit.text[0]);
    assert_true(app_key(app, APP_KEY_RETURN, 0));
    assert_false(app->edit.open);
    assert_string_equal(app->cfg.text, "a dog sat on the zebra");
    assert_int_equal(app->trace.dims.L, 7);
    assert_string_equal(attn_tokens_at(&app->trace.tokens, 0, 6), "<unk>");
    assert_non_null(strstr(app->status, "(7 tokens)"));

    /* o: the shipped models in order, each on its example text, then the built-in example */
    assert_true(app_key(app, 'o', 0));
    assert_string_equal(app->model->name, "v-mha");
    assert_null(app->cfg.text);
    assert_string_equal(attn_tokens_at(&app->trace.tokens, 0, 2), "dog");
    assert_string_equal(app_tensor(app)->name, "layers.0.weights");
    assert_non_null(strstr(app->status, "v-mha: "));
    assert_true(app_key(app, 'o', 0));
    assert_string_equal(app->model->name, "v-mqa");
    assert_true(app_key(app, 'o', 0));
    assert_null(app->model);
    assert_false(attn_trace_is_model(&app->trace));
    assert_string_equal(app_tensor(app)->name, "weights");
    assert_non_null(strstr(app->status, "built-in example"));
    assert_true(app_key(app, 'o', 0));
    assert_string_equal(app->model->name, "v-gqa");
}

/* The id of the most likely next token after the last position of tr's
 * batch row 0, <unk> (the fixture's id 0 and tang's) left out. */
static int likeliest_next(const attn_trace *tr)
{
    const attn_tensor *lg = attn_trace_find(tr, "logits");
    attn_tensor_fill(lg, (size_t)tr->dims.s - 1, 1);
    const float *row = lg->data + (size_t)(tr->dims.s - 1) * tr->dims.V;
    int best = 1;
    for (int v = 2; v < tr->dims.V; v++)
        if (row[v] > row[best]) best = v;
    return best;
}

/* The text's loss reads every row of the logits (seconds for a long text on
 * a large vocabulary), so in the window it is the worker's: after the trace
 * is shown, without keeping the window busy, cancelled by a newer request. */
static void the_loss_is_computed_on_the_worker(void **state)
{
    app_state *app = variants_app(state);
    app_loss inline_loss = app_loss_of(app, &app->trace, 0); /* not async: here and now */
    assert_true(inline_loss.known);
    assert_int_equal(inline_loss.counted, 6);
    app->async = true;
    app->loss_inline = 0; /* every loss is a long one */
    for (int round = 0; round < 2; round++) {
        assert_true(app_key(app, 'c', 0));
        if (round) { /* a toggle while the loss of the one before may still run: it is given up */
            for (int i = 0; i < 20000 && !app_poll(app); i++) /* installs it, and starts its loss */
                nanosleep(&(struct timespec){0, 1000000}, NULL);
            assert_true(app_job_running(app));
            assert_false(app_busy(app, NULL, NULL, NULL));
            assert_true(app_key(app, 'c', 0));
        }
        for (int i = 0; i < 20000 && app_busy(app, NULL, NULL, NULL); i++) {
            app_poll(app);
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        assert_false(app_busy(app, NULL, NULL, NULL)); /* the loss's run is not a recomputation */
        for (int i = 0; i < 20000 && app_job_running(app); i++) {
            app_poll(app);
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        app_loss l = app_loss_of(app, &app->trace, 0);
        assert_true(l.known);
        int n;
        double want = attn_trace_loss(&app->trace, 0, &n);
        assert_int_equal(l.counted, n);
        assert_true(l.mean == want);
        assert_true(l.mean != inline_loss.mean); /* the causal mask's toggle changed it */
    }
}

/* o pressed again before the model it opened is shown goes on from that
 * one: o o in the window moves two models on, as the label says. The jobs
 * run where they are asked (no service), installed only by the poll. */
static void o_again_goes_on_from_the_model_asked_for(void **state)
{
    app_state *app = variants_app(state);
    app->async = true;
    for (int k = 0; k < 2; k++) {
        assert_true(app_key(app, 'o', 0));
        assert_true(app->opening.pending);
        app->opening.shown = true; /* the frame drew the notice */
        assert_true(app_poll(app)); /* listed and asked for: computed, not yet installed */
        assert_false(app->opening.pending);
        assert_true(app_job_running(app));
        assert_string_equal(app->model->name, "v-gqa");
    }
    assert_string_equal(app_settings(app)->model, "v-mqa");
    assert_non_null(strstr(app->opening.label, "v-mqa"));
    for (int i = 0; i < 10 && app_busy(app, NULL, NULL, NULL); i++) app_poll(app);
    assert_string_equal(app->model->name, "v-mqa");
    assert_string_equal(app_tensor(app)->name, "layers.0.weights");
}

/* A model opens at once (issue 36): the notice alone, only the keys that
 * need no picture acting, then its picture; and the first picture shown
 * layer by layer (a worker's trace borrowed with its first layer written):
 * only the ready layers reachable, nothing that would change the trace. */
static void a_model_opens_at_once(void **state)
{
    (void)state; /* the variants' folder (ATTNLAB_MODELS) */
    app_state app;
    attn_config c;
    attn_error e;
    char err[400], title[300];
    attn_config_init(&c);
    attn_config_set(&c, "model", "v-mha", NULL);
    attn_config_set(&c, "text", "the cat sat on the mat", NULL);
    assert_int_equal(app_init_later(&app, &c, 0, err, sizeof err), 0);
    attn_config_free(&c);
    assert_true(app.opening.first && app.opening.pending);
    assert_string_equal(app_title(&app, title, sizeof title), "attnlab - opening v-mha");
    assert_false(app_key(&app, 'c', 0)); /* it would act on the example under the notice */
    assert_true(app_key(&app, '?', 0));
    assert_true(app.help);
    assert_true(app_key(&app, '?', 0));
    app.opening.shown = true; /* the frame drew the notice: no worker here, so it opens at once */
    for (int i = 0; i < 6 && app_poll(&app); i++) {}
    assert_false(app.opening.first);
    assert_string_equal(app.model->name, "v-mha");
    assert_non_null(strstr(app_title(&app, title, sizeof title), "v-mha - layers.0.weights"));
    int n = app.trace.n_tensors;

    /* layer by layer: the same model's trace, its layer 0 written, shown borrowed */
    attn_trace tr;
    assert_int_equal(attn_trace_run(&app.cfg, &(attn_inputs){.model = app.model}, &tr, &e), ATTN_OK);
    assert_int_equal(app_partial_begin(&app, &tr, app.model, app.model_key, &app.cfg, 1), 0);
    assert_non_null(strstr(app_title(&app, title, sizeof title), " - tracing, 1 of 2 layers ready"));
    int ready = 0, later = 0;
    for (int i = 0; i < app.trace.n_tensors; i++) {
        const attn_tensor *t = &app.trace.tensors[i];
        bool embeddings = t->info == attn_stage_get(ATTN_STAGE_EMBEDDINGS);
        assert_int_equal(app_tensor_ready(&app, i), t->layer == 0 || embeddings);
        ready += app_tensor_ready(&app, i);
        later += t->layer == 1;
    }
    assert_true(ready > 1 && later > 1);
    assert_false(app_key(&app, '.', 0)); /* layer 1 is still being traced: shown once it is */
    assert_non_null(strstr(app.status, "layer 1 is being traced: it is shown as soon as it is"));
    assert_int_equal(app.view.layer, 0);
    assert_int_equal(app.partial.want, 1);
    app_show_wanted_layer(&app); /* the worker wrote no more */
    assert_int_equal(app.view.layer, 0);
    assert_false(app_key(&app, 'c', 0)); /* nothing that would change the trace */
    assert_non_null(strstr(app.status, "still being traced"));
    assert_true(app_key(&app, APP_KEY_RIGHT, 0)); /* the stages of layer 0 */
    assert_true(app_tensor(&app)->layer == 0);
    app.partial.layers = 2; /* the worker wrote layer 1: the view goes there, on the stage it was on */
    const char *stage = app_tensor(&app)->name;
    attn_tensor_name_layer(stage, &stage);
    char was[64];
    snprintf(was, sizeof was, "%s", stage);
    app_show_wanted_layer(&app);
    assert_int_equal(app.view.layer, 1);
    assert_int_equal(app.partial.want, -1);
    assert_true(app_tensor(&app)->layer == 1);
    assert_non_null(strstr(app_tensor(&app)->name, was));
    assert_true(app_key(&app, ',', 0));
    assert_int_equal(app.view.layer, 0);
    assert_true(app_key(&app, '.', 0)); /* ready: at once */
    assert_int_equal(app.view.layer, 1);
    app_partial_end(&app); /* the app's own trace back, before the worker's is let go */
    assert_false(app.partial.on);
    assert_int_equal(app.trace.n_tensors, n);
    assert_true(app.opening.first); /* until the worker's picture is installed */
    app.opening.first = false;
    attn_trace_free(&tr);
    app_free(&app);

    /* --layer 1: the picture opens on layer 1 */
    attn_config_init(&c);
    attn_config_set(&c, "model", "v-mha", NULL);
    assert_int_equal(app_init_later(&app, &c, 1, err, sizeof err), 0);
    attn_config_free(&c);
    app.opening.shown = true;
    for (int i = 0; i < 6 && app_poll(&app); i++) {}
    assert_false(app.opening.first);
    assert_int_equal(app.view.layer, 1);
    assert_non_null(strstr(app_title(&app, title, sizeof title), "v-mha - layers.1.weights"));
    app_free(&app);
}

/* The web page's fetcher (fetch.h), faked: a model's files come after two
 * asks, then are here, or fail. */
typedef struct {
    int asks;
    bool fail;
    char last[64];
} fake_fetch;

static app_fetch_state fake_want(void *ctx, const char *name, bool checkpoints, app_fetch_progress *p)
{
    fake_fetch *f = ctx;
    (void)checkpoints;
    snprintf(f->last, sizeof f->last, "%s", name);
    if (f->asks++ < 2) {
        p->done = 1e6 * f->asks;
        p->total = 3e6;
        return APP_FETCH_COMING;
    }
    if (!f->fail) return APP_FETCH_HERE;
    snprintf(p->why, sizeof p->why, "no connection");
    return APP_FETCH_FAILED;
}

/* With a fetcher, o waits behind its notice for the next model's files, with
 * their bytes, and opens by itself once they are here; a failed download ends
 * the opening with a sentence, not a path. */
static void an_opening_waits_for_its_files(void **state)
{
    app_state *app = variants_app(state);
    fake_fetch f = {0};
    const app_fetcher fetcher = {fake_want, &f};
    app->fetch = &fetcher;
    app->async = true;
    assert_true(app_key(app, 'o', 0));
    app->opening.shown = true;
    assert_false(app_poll(app)); /* listed, its files asked for: coming */
    assert_true(app->opening.pending);
    assert_string_equal(app->opening.fetching, f.last);
    assert_true(app->opening.fetched.done == 1e6 && app->opening.fetched.total == 3e6);
    assert_false(app_poll(app));
    assert_true(app_poll(app)); /* here: it opens */
    assert_false(app->opening.pending);
    assert_string_equal(app->opening.fetching, "");
    assert_string_equal(app_settings(app)->model, f.last);
    for (int i = 0; i < 10 && app_busy(app, NULL, NULL, NULL); i++) app_poll(app);

    f = (fake_fetch){.fail = true};
    assert_true(app_key(app, 'o', 0));
    app->opening.shown = true;
    app_poll(app);
    app_poll(app);
    assert_true(app_poll(app));
    assert_false(app->opening.pending);
    assert_true(app->status_error);
    assert_non_null(strstr(app->status, "could not be downloaded (no connection)"));
    assert_null(strchr(app->status, '/'));
    app->fetch = NULL;
}

/* Generating as a class expects it: the first ] at the end of a model's
 * prompt writes a token (decode mode opens at the prompt's last token); k
 * on a model starts at the last token; the app knows the prompt from what ]
 * wrote. With the shipped tang, the poem ends at </s>, and ] then starts the
 * next one from <s> alone. */
static void generating_in_the_window(void **state)
{
    variants_fixture *f = *state;
    app_state *app = &f->app;
    int L = app->trace.dims.L, want = likeliest_next(&app->trace);
    assert_int_equal(L, 7);
    assert_int_equal(app->view.decode_step, 0);
    assert_int_equal(app_prompt_len(app), -1); /* nothing written yet */

    /* the first ] writes: decode mode at the new token, which reads the whole prompt from the cache */
    assert_true(app_key(app, ']', 0));
    assert_int_equal(app->view.decode_step, L + 1);
    assert_int_equal(app->decode_len, L + 1);
    assert_int_equal(app->trace.dims.s, 1);
    assert_int_equal(app->trace.dims.P, L);
    assert_int_equal(app->trace.token_ids[L], want);
    assert_non_null(strstr(app->status, "generated"));
    assert_int_equal(app_prompt_len(app), L);
    assert_true(app_key(app, ']', 0));
    assert_int_equal(app->view.decode_step, L + 2);
    assert_int_equal(app_prompt_len(app), L); /* the same prompt, two tokens written */

    /* k leaves decode mode; k again opens it at the last token, [ walks back */
    assert_true(app_key(app, 'k', 0));
    assert_int_equal(app->view.decode_step, 0);
    assert_true(app_key(app, 'k', 0));
    assert_int_equal(app->view.decode_step, L + 2);
    assert_non_null(strstr(app->status, "last token"));
    assert_true(app_key(app, '[', 0));
    assert_int_equal(app->view.decode_step, L + 1);
    assert_int_equal(app_prompt_len(app), L);
    /* a new text typed is a new prompt: nothing of it was written */
    assert_true(app_key(app, 'e', 0));
    snprintf(app->edit.text[0], APP_EDIT_MAX, "a dog ran");
    app->edit.cursor = (int)strlen(app->edit.text[0]);
    assert_true(app_key(app, APP_KEY_RETURN, 0));
    assert_int_equal(app_prompt_len(app), -1);
    variants_close(f); /* ATTNLAB_MODELS unset: tang below is the shipped one */

    /* tang writes the poem's last mark, then </s>: the end of the text */
    char err[400];
    app_state tang;
    attn_config c;
    attn_config_init(&c);
    attn_config_set(&c, "model", "tang", NULL);
    attn_config_set(&c, "text", "春眠不觉晓，春醉不相催。不见花前醉，还应不见来", NULL);
    if (app_init(&tang, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    L = tang.trace.dims.L;
    assert_int_equal(L, 24);
    assert_true(app_key(&tang, ']', 0));
    assert_string_equal(attn_tokens_at(&tang.trace.tokens, 0, L), "。");
    assert_true(app_key(&tang, ']', 0));
    assert_int_equal(tang.view.decode_step, L + 2);
    assert_int_equal(tang.trace.token_ids[L + 1], tang.model->cfg.eos);
    assert_non_null(strstr(tang.status, "the end of the text"));
    /* ] after </s> says the text has ended and leaves it shown (issue 35: one press replaced the
     * poem); ] again starts the next poem from <s> alone, the last one on the status line */
    assert_true(app_key(&tang, ']', 0));
    assert_int_equal(tang.view.decode_step, L + 2);
    assert_non_null(strstr(tang.status, "the text has ended (</s>): ] again starts a new one"));
    assert_true(app_key(&tang, ']', 0));
    assert_string_equal(tang.cfg.tokens, "<s>");
    assert_int_equal(tang.view.decode_step, 1);
    assert_int_equal(tang.decode_len, 1);
    assert_non_null(strstr(tang.status, "a new text from <s>"));
    assert_non_null(strstr(tang.status, "春眠不觉晓，春醉不相催。不见花前醉，还应不见来。"));
    assert_int_equal(app_prompt_len(&tang), 1);
    /* and ] writes its first character, neither </s> nor <unk> */
    assert_true(app_key(&tang, ']', 0));
    assert_int_equal(tang.view.decode_step, 2);
    assert_int_equal(tang.trace.dims.P, 1);
    assert_true(tang.trace.token_ids[1] > 2);
    assert_int_equal(app_prompt_len(&tang), 1);
    app_free(&tang);
}

static void key_table_is_sound(void **state)
{
    (void)state;
    int lines = 0;
    for (int i = 0; i < app_n_keys; i++) {
        const app_key_binding *b = &app_keys[i];
        assert_true((b->help_keys == NULL) == (b->help == NULL));
        lines += b->help_keys != NULL;
        if (b->key == APP_KEY_NONE) continue;
        if (b->shift != APP_SHIFT_OFF) assert_ptr_equal(app_keys_find(b->scope, b->key, APP_MOD_SHIFT), b);
        if (b->shift != APP_SHIFT_ON) assert_ptr_equal(app_keys_find(b->scope, b->key, 0), b);
        if (b->action == APP_ACT_CYCLE) { /* its setting is in the settings table, with a cycle */
            int row = app_keys_arg(b);
            assert_true(row >= 0);
            assert_non_null(attn_setting_at(row)->cycle);
        }
    }
    assert_true(lines >= 20);
    assert_int_equal(app_keys_find(APP_KEYS_VIEW, 'h', APP_MOD_SHIFT)->action, APP_ACT_HEADS_DOWN);
    assert_int_equal(app_keys_find(APP_KEYS_VIEW, 'h', APP_MOD_CTRL)->action, APP_ACT_HEADS_UP);
    for (int i = 0; i < LESSON_VIEW_COUNT; i++) assert_non_null(lesson_view_names[i]);
    for (int i = 0; i < attn_compare_count(); i++) assert_non_null(attn_compare_at(i)->compare.label);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(keys_move_through_stages_and_heads, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_change_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(settings_change_through_one_function, setup, teardown),
        cmocka_unit_test_setup_teardown(settings_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(presenter_mode, setup, teardown),
        cmocka_unit_test_setup_teardown(sliding_window_key, setup, teardown),
        cmocka_unit_test_setup_teardown(keys_reach_the_new_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(m_reaches_mla_and_shift_m_absorbs, setup, teardown),
        cmocka_unit_test(layers_in_the_window),
        cmocka_unit_test_setup_teardown(token_editor_edits_utf8, setup, teardown),
        cmocka_unit_test_setup_teardown(requests_for_the_window, setup, teardown),
        cmocka_unit_test_setup_teardown(mouse_goes_through_the_layout, setup, teardown),
        cmocka_unit_test_setup_teardown(lesson_steps_forward_and_back, setup, teardown),
        cmocka_unit_test_setup_teardown(a_lesson_is_read_a_step_a_poll, setup, teardown),
        cmocka_unit_test_setup_teardown(a_lesson_is_finished_by_its_quizzes, setup, teardown),
        cmocka_unit_test(player_stands_alone),
        cmocka_unit_test(key_table_is_sound),
        cmocka_unit_test_setup_teardown(a_trained_model_in_the_window, variants_setup, variants_teardown),
        cmocka_unit_test(training_steps_keep_the_view),
        cmocka_unit_test(a_broken_metrics_file_is_said),
        cmocka_unit_test_setup_teardown(generating_in_the_window, variants_setup, variants_teardown),
        cmocka_unit_test_setup_teardown(the_loss_is_computed_on_the_worker, variants_setup, variants_teardown),
        cmocka_unit_test_setup_teardown(o_again_goes_on_from_the_model_asked_for, variants_setup, variants_teardown),
        cmocka_unit_test_setup_teardown(a_model_opens_at_once, variants_setup, variants_teardown),
        cmocka_unit_test_setup_teardown(an_opening_waits_for_its_files, variants_setup, variants_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
