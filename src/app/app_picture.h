/* app_picture.h — one picture asked for from the command line (`attnlab
 * render`, `attnlab bench`): the view its flags name, and the app put in the
 * state they ask for. No SDL: the backend draws the app afterwards.
 *
 * app_picture_apply drives the app as keys would (decode steps, the
 * stage, the view mode) and checks each flag against the trace, so the
 * messages and exit codes of a bad flag are the same whichever backend
 * draws the picture. */
#ifndef APP_PICTURE_H
#define APP_PICTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "state.h"

typedef struct {
    lesson_view view;     /* stage, head, batch row, bar-chart row, view mode, compare toggle, decode step;
                           * stage "", layer, head or batch -1: not given (the trace's own, 0) */
    int width, height;    /* pixels; 0: 1280 × 800 */
    float font_scale;     /* 0: 1 */
    int scale;            /* pixels per point, for sharp slides: 1 to 4 (the same picture, finer); 0: 1 */
    const char *lesson;   /* a lesson file: draw its step `step` (the lesson sets the view) */
    int step;             /* 1-based; 0: 1 */
    const char *lang;     /* "en", "zh"; NULL: the locale */
    bool picker;          /* draw the lesson picker over the picture */
    bool present;         /* presenter mode (F5): text at least 1.5×, the toolbar hidden */
    int tile;             /* the FlashAttention view at key tile N (0-based: ] pressed N times); -1: not given */
    attn_progress *watch; /* NULL, or a watcher of the trace's run (a terminal's progress line) */
} app_picture;

/* Every field "not given": the trace's own stage, layer, head and batch row. */
void app_picture_init(app_picture *p);

/* The app (just made with app_init or app_init_file_with) as the picture asks
 * for it: the lesson player in lang (app_i18n_init's choice), and its lesson
 * opened at its step as the window opens one, or the picker, or the view the
 * flags name (app_picture_apply); then the text size and presenter mode.
 * What `attnlab render` draws, and what a test that draws the course drives.
 * Returns 0, or the exit code with a one-line message in err. */
int app_picture_open(app_state *app, const app_picture *p, const char *lang, char *err, size_t errsize);

/* Puts app in the state a picture asks for (stage, head, view, ...). Returns
 * 0, or the exit code with a one-line message in err: 2 when a flag asks for
 * what the trace lacks (a stage it does not have, a head out of range), 1 when
 * no flag asked and the trace itself lacks what the picture needs (a file's
 * trace with h = 0 or b = 0 on a stage with that axis: the message names the file). */
int app_picture_apply(app_state *app, const app_picture *p, char *err, size_t errsize);

#endif
