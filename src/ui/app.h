/* app.h — the visualizer's state and its event handler.
 *
 * The main loop has four beats (microui's): SDL events go through
 * ui_app_event, which changes this state (and recomputes the trace when a
 * setting changes); ui_render (render.h) draws a frame from the state and
 * records where its buttons and cells are in `layout`; the loop presents. The
 * event handler never draws, and the renderer never changes what is shown. */
#ifndef UI_APP_H
#define UI_APP_H

#include <stdbool.h>
#include <stddef.h>

#include <SDL.h>

#include "config.h"
#include "heatmap.h"
#include "layout.h"
#include "player.h"
#include "trace.h"

typedef enum { UI_VIEW_SINGLE, UI_VIEW_GRID, UI_VIEW_COMPARE } ui_view_mode;
typedef enum { UI_TOGGLE_CAUSAL, UI_TOGGLE_PADDING, UI_TOGGLE_FILL, UI_TOGGLE_COUNT } ui_toggle;

#define UI_EDIT_MAX 1024

typedef struct ui_app {
    /* what is computed */
    attn_config cfg;      /* the settings the controls edit (owned) */
    attn_trace trace;     /* computed from cfg, or loaded (owned) */
    attn_trace alt;       /* compare view: cfg with one mask toggled (owned when has_alt) */
    bool has_alt;
    attn_trace file;      /* view FILE: the loaded trace, whose tensors feed recomputation */
    bool from_file;
    char *file_path;
    ui_scale *scales;     /* per tensor of trace, then of alt */
    unsigned generation;  /* bumped whenever trace or alt changes (render caches key on it) */

    /* what is shown */
    int stage;            /* index into trace.tensors */
    int head, batch;
    ui_view_mode view;
    ui_toggle compare_with;
    int sel_row;          /* query row shown as a bar chart, -1: none */
    bool help;

    /* KV-cache decode mode: the first decode_step tokens, the last one the new query */
    bool decode;
    int decode_step, decode_len;
    int trace_step;       /* decode step the trace was computed for (0: not decoding) */

    /* token editing (SDL text input, with IME composition) */
    bool editing;
    int edit_field;       /* 0: tokens, 1: source tokens (cross-attention) */
    char edit[2][UI_EDIT_MAX];
    int edit_cursor;      /* byte offset in edit[edit_field] */
    char compose[128];    /* IME composition in progress */

    ui_player lesson;     /* the lesson panel and picker (player.h) */

    /* presentation */
    float font_scale;     /* 1 = 16 px at 96 dpi */
    float pixel_ratio;    /* drawable pixels per window point (HiDPI) */
    int width, height;    /* drawable pixels: the visualizer's part (the window minus the lesson panel) */
    int full_width;       /* the whole window */
    bool fullscreen;
    int mouse_x, mouse_y; /* drawable pixels; -1: outside */
    int hover_area, hover_i, hover_j; /* cell under the mouse (area index), -1: none */
    int stage_scroll;     /* first stage shown in the navigator */

    char status[400];     /* last message (an error from a change, a saved file) */
    bool status_error;

    ui_layout layout;     /* written by ui_render, read by the event handler */

    /* requests for the window loop */
    bool quit, save_requested, fullscreen_changed;
    bool dirty;           /* a redraw is needed */
} ui_app;

/* Computes cfg (copied) and opens on the weights stage. Returns 0, or -1 with
 * a one-line message in err (the config's own error). */
int ui_app_init(ui_app *app, const attn_config *cfg, char *err, size_t errsize);
/* Opens a saved trace (attnlab's or another program's in the same contract). */
int ui_app_init_file(ui_app *app, const char *path, char *err, size_t errsize);
void ui_app_free(ui_app *app);

/* Handles one event; returns true when the picture must be redrawn. */
bool ui_app_event(ui_app *app, const SDL_Event *ev);

/* Performs an action (what a key or a button does). Returns true on a change. */
bool ui_app_do(ui_app *app, ui_action act, int arg);

/* Everything a lesson step shows. */
typedef struct {
    int decode_step;      /* 0: the full pass */
    ui_view_mode view;
    ui_toggle compare;
    const char *stage;
    int head, batch, row;
} ui_show;

/* Replaces settings and view at once (a lesson step): cfg's ownership moves
 * in. Returns 0, or -1 with the status line saying why (nothing changes). */
int ui_app_show(ui_app *app, attn_config *cfg, const ui_show *s);

/* Changes one setting by its config name and recomputes; on an invalid value
 * nothing changes and the status line says why. Returns 0 or -1. */
int ui_app_set(ui_app *app, const char *key, const char *value);

/* Moves to a stage by name; returns 0, or -1 if the trace has no such stage. */
int ui_app_set_stage(ui_app *app, const char *name);

/* The tensor of the current stage. */
const attn_tensor *ui_app_tensor(const ui_app *app);

/* The stage that the compare view shows (weights unless the current stage is
 * one whose difference means something: weights, weights_dropout, context). */
const char *ui_app_compare_stage(const ui_app *app);

/* Name of a toggle ("causal mask", "padding mask", "fill value"). */
const char *ui_toggle_name(ui_toggle t);

/* Scale of tensor t (of trace or alt), computed once per trace. */
ui_scale ui_app_scale(const ui_app *app, const attn_tensor *t);

/* "attnlab - weights - head 0 - batch row 0": the window title. */
const char *ui_app_title(const ui_app *app, char *buf, size_t size);

/* Sets the status line (printf-style); error colours it. */
void ui_app_status(ui_app *app, bool error, const char *fmt, ...);

#endif
