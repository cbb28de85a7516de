/* ui_fixture.h — the app and its command list for the tests that drive the
 * window through the event handler and read the frame as commands, built
 * with the fake text measurer (fake_measure.h): no font, no renderer, no
 * display. setup_with(state, kv) starts an app from config key/value pairs
 * (NULL-ended; NULL for the defaults) in English, with no progress file;
 * teardown frees it; build() draws one W × H frame and hands its layout back
 * as sdl_render does. Static: include it once per test program. */
#ifndef TEST_UI_FIXTURE_H
#define TEST_UI_FIXTURE_H

#include <stdbool.h>
#include <stdlib.h>

#include "app.h"
#include "draw.h"
#include "i18n.h"
#include "player.h"
#include "render.h"

#include "fake_measure.h"

#define W 1280
#define H 800

static const draw_text_measure FAKE = {NULL, fake_width, fake_line, fake_bold};

typedef struct {
    app_state app;
    draw_list dl;
} fixture;

static int setup_with(void **state, const char *const *kv)
{
    fixture *f = calloc(1, sizeof *f);
    char err[400];
    attn_config c;
    attn_error e;
    app_i18n_init("en");
    attn_config_init(&c);
    for (int i = 0; kv && kv[i]; i += 2)
        if (attn_config_set(&c, kv[i], kv[i + 1], &e)) fail_msg("set %s: %s", kv[i], e.msg);
    if (app_init(&f->app, &c, err, sizeof err)) fail_msg("app: %s", err);
    attn_config_free(&c);
    app_player_init(&f->app.lesson, "en", NULL);
    f->app.lesson.keep_progress = false;
    draw_list_init(&f->dl, FAKE);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    draw_list_free(&f->dl);
    app_free(&f->app);
    free(f);
    return 0;
}

/* Builds a frame of the app as it is, and hands its layout back as sdl_render does. */
static void build(fixture *f)
{
    draw_frame(&f->app, &f->dl, &f->app.layout, W, H);
    draw_commit(&f->app, &f->app.layout);
    assert_false(f->dl.failed);
}

#endif
