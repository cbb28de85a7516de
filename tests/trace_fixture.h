/* trace_fixture.h — a trace run from `key, value` settings, and a stage's
 * slice of it, for the tests that read the view's numbers (test_ui_view,
 * test_ui_geometry). Static: include it once per program, after cmocka.h. */
#ifndef TEST_TRACE_FIXTURE_H
#define TEST_TRACE_FIXTURE_H

#include "engine/run/forward.h"
#include "view.h"

/* Runs the settings kv (NULL-terminated key, value pairs) into *tr. */
static void run(attn_trace *tr, const char *const *kv)
{
    attn_config c;
    attn_error err = {0};
    attn_config_init(&c);
    for (int i = 0; kv && kv[i]; i += 2)
        if (attn_config_set(&c, kv[i], kv[i + 1], &err)) fail_msg("set %s: %s", kv[i], err.msg);
    if (attn_trace_run(&c, NULL, tr, &err)) fail_msg("run: %s", err.msg);
    attn_config_free(&c);
}

/* The slice the view shows of `stage` for batch row b and query head h. */
static app_view_slice make(const attn_trace *tr, const char *stage, int b, int h)
{
    app_view_slice v;
    if (app_view_make(tr, stage, b, h, &v)) fail_msg("no slice for %s", stage);
    return v;
}

#endif
