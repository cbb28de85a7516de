/* layout.h — where a frame put its buttons and heatmaps. No SDL.
 *
 * The renderer fills an app_layout while it draws a frame; the event handler
 * reads it to turn a click or a hover into an action or a cell. Rectangles
 * are in drawable pixels. */
#ifndef APP_LAYOUT_H
#define APP_LAYOUT_H

#include <stdbool.h>

#include "action.h"
#include "engine/trace/trace.h"

typedef struct {
    int x, y, w, h;
} app_rect;

/* A clickable rectangle and what a click on it does. */
typedef struct {
    app_rect r;
    app_action action;
    int arg;
    const char *tip;    /* shown when the mouse rests on it (a string that outlives the frame), or NULL */
} app_hit;

/* A heatmap on screen: where it is and what it shows, for hover and clicks. */
typedef struct {
    app_rect r;
    int rows, cols;
    int head;   /* query head shown */
    int pane;   /* compare: 0 current, 1 toggled, 2 difference; grid: 0 */
    char stage[ATTN_MAX_NAME]; /* a copy: the trace it came from may be gone by the next event */
    int row0, col0; /* a zoomed picture: its cell (i, j) is the stage's (row0 + i, col0 + j) */
    int row_label_step, col_label_step; /* 1: every row/column labelled, k: one in k, 0: none */
} app_heat_area;

/* Where a quiz of the lesson's step went, whole (the part outside the panel's
 * view is not cut off): its question's text, and its answer from its first
 * choice, field or instruction down to its Check row. {0, 0, 0, 0}: not drawn. */
typedef struct {
    app_rect question, answer;
} app_quiz_place;

#define APP_MAX_HITS 160
#define APP_MAX_AREAS 64
#define APP_MAX_QUIZ_PLACES 8

typedef struct {
    app_hit hits[APP_MAX_HITS]; /* later hits are drawn on top */
    int n_hits;
    app_heat_area areas[APP_MAX_AREAS];
    int n_areas;
    app_rect edit_rect;        /* the token editor's field, for the IME's candidate window */
    int width, height;         /* the visualizer's part of the drawable: the window minus the lesson panel */
    int full_width, full_height; /* the whole drawable */
    app_rect lesson_box;       /* the lesson panel: right of the picture, or under it in portrait; {0, 0, 0, 0}: none */
    int stage_first;           /* first stage the navigator shows (the app's scroll, kept in range) */
    int lesson_scroll;         /* the lesson panel's scroll (of its text above a docked quiz), kept in range */
    int lesson_scroll_max;     /* how far it can scroll: text below its view, pixels */
    app_rect lesson_view;      /* the part of the lesson panel that shows the step, between its header and buttons */
    app_rect lesson_dock;      /* the step's quizzes docked at the bottom of lesson_view when the step does not
                                * fit whole; {0, 0, 0, 0}: none */
    int dock_scroll, dock_scroll_max; /* the dock's own scroll, when a quiz's explanations do not fit in it */
    app_quiz_place quizzes[APP_MAX_QUIZ_PLACES]; /* the step's quizzes, in order */
    bool layer_shown;          /* the header above the picture says which layer ("layer N / M") */
    bool panels_shown;         /* the stage list and the side panel were drawn beside the picture */
    int picker_first;          /* the picker's first lesson shown (its scroll, the selection kept in view) */
    int picker_rows;           /* and how many lessons it shows */
    app_rect picker_box;       /* the picker's panel (a click outside closes it), and its rows (a drag scrolls them) */
    app_rect picker_list;
} app_layout;

/* Forgets every hit and area (a new frame, or what was drawn no longer matches). */
static inline void app_layout_clear(app_layout *l)
{
    l->n_hits = l->n_areas = 0;
}

/* Records a clickable rectangle; ignored once APP_MAX_HITS are recorded. */
static inline void app_layout_hit(app_layout *l, app_rect r, app_action act, int arg)
{
    if (l->n_hits < APP_MAX_HITS) l->hits[l->n_hits++] = (app_hit){r, act, arg, NULL};
}

/* The same, with a tooltip. */
static inline void app_layout_hit_tip(app_layout *l, app_rect r, app_action act, int arg, const char *tip)
{
    if (l->n_hits < APP_MAX_HITS) l->hits[l->n_hits++] = (app_hit){r, act, arg, tip};
}

static inline bool app_rect_contains(app_rect r, int x, int y)
{
    return x >= r.x && y >= r.y && x < r.x + r.w && y < r.y + r.h;
}

/* The overlap of a and b; {0, 0, 0, 0} when they do not overlap. */
static inline app_rect app_rect_intersect(app_rect a, app_rect b)
{
    int x0 = a.x > b.x ? a.x : b.x, y0 = a.y > b.y ? a.y : b.y;
    int x1 = a.x + a.w < b.x + b.w ? a.x + a.w : b.x + b.w;
    int y1 = a.y + a.h < b.y + b.h ? a.y + a.h : b.y + b.h;
    if (x1 <= x0 || y1 <= y0) return (app_rect){0, 0, 0, 0};
    return (app_rect){x0, y0, x1 - x0, y1 - y0};
}

#endif
