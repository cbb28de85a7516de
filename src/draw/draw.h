/* draw.h — a frame as a list of plain drawing commands (microui's pattern).
 * No SDL here.
 *
 * The renderer (render.c, plot.c, lesson_panel.c) lays a frame out and
 * appends commands to a draw_list; a backend walks the list and draws it:
 * the SDL backend (gfx.h, draw_sdl.c) today, a vector one later. Commands
 * are plain values: pixel rectangles, ARGB colours, UTF-8 text, and heatmaps
 * as a reference to the tensor slice with its colour scale, which a backend
 * rasterises with paint_heatmap (src/platform/paint/paint.h).
 *
 * Text is measured through callbacks (draw_text_measure, microui's
 * text_width / text_height), so a list can be built without a font library:
 * the SDL backend measures with its fonts, tests with a fake.
 *
 *     draw_list d;
 *     draw_list_init(&d, measure);
 *     draw_list_begin(&d, 16);         // each frame: empty the list, text at 16 px
 *     draw_fill(&d, 0, 0, 100, 20, DRAW_PANEL);
 *     draw_text(&d, "weights", 4, 2, DRAW_TEXT);
 *     for (const draw_cmd *c = NULL; (c = draw_list_next(&d, c));) ... // the backend
 *     draw_list_free(&d);
 */
#ifndef DRAW_H
#define DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heatmap.h"
#include "layout.h"

/* The palette: a dark theme that keeps the heatmap colours the brightest thing on screen.
 * Every text colour reads at 4.5:1 or more on every background (WCAG AA; test_ui_draw). */
#define DRAW_BG        0xFF1E1E24u
#define DRAW_PANEL     0xFF2A2A33u
#define DRAW_PANEL_HI  0xFF3A3A48u
#define DRAW_TEXT      0xFFE8E8ECu
#define DRAW_TEXT_DIM  0xFFA8A8B6u
#define DRAW_ACCENT    0xFF4FC3F7u
#define DRAW_ERROR     0xFFFF8A80u
#define DRAW_WHITE     0xFFFFFFFFu
#define DRAW_BLACK     0xFF000000u

static inline int draw_imin(int a, int b) { return a < b ? a : b; }
static inline int draw_imax(int a, int b) { return a > b ? a : b; }

/* How wide text is, and how far apart lines are, at px pixels. */
typedef struct {
    void *ctx;
    int (*text_width)(void *ctx, const char *utf8, int px);
    int (*line_height)(void *ctx, int px);
    int (*bold_width)(void *ctx, const char *utf8, int px); /* in the bold face; NULL: as text_width */
} draw_text_measure;

typedef enum {
    DRAW_CMD_RECT,    /* r filled with color */
    DRAW_CMD_FRAME,   /* the border of r, thickness t inside r */
    DRAW_CMD_LINE,    /* a horizontal or vertical line: see draw_line_to */
    DRAW_CMD_TEXT,    /* text at (r.x, r.y), its top-left; r.w × r.h its measured size */
    DRAW_CMD_HEATMAP, /* slice painted over r (paint_heatmap: cells, gaps, masked hatch, NaN checks) */
    DRAW_CMD_HATCH,   /* r striped as masked cells are (APP_HATCH_LIGHT, APP_HATCH_DARK) */
    DRAW_CMD_POLY,    /* a filled convex polygon of 3 or 4 points (poly); r its bounding box */
    DRAW_CMD_CLIP_PUSH, /* draw only inside r (and inside the clip already pushed) */
    DRAW_CMD_CLIP_POP /* back to the clip before the matching push */
} draw_cmd_kind;

typedef struct {
    draw_cmd_kind kind;
    app_rect r;
    uint32_t color;                /* ARGB: rect, frame, line, text */
    union {
        int t;                     /* frame, line: thickness in pixels */
        struct {
            size_t offset;         /* of the zero-terminated UTF-8 in the list: draw_cmd_text */
            int px;                /* font size */
            bool bold;             /* in the bold face (draw_text_bold) */
            bool turned;           /* a quarter turn counter-clockwise, read upwards (draw_text_turned):
                                    * r is then a line wide and the text's width tall */
        } text;
        struct {
            app_slice slice;       /* borrowed: the trace's data (or draw_list_floats) while the list is walked */
            app_scale scale;
            int gap;               /* as paint_heatmap's */
            unsigned generation;   /* the data under slice changes only with this: a backend may cache the picture */
        } heat;
        struct {
            float x[4], y[4];      /* in order around the polygon */
            int n;                 /* 3 or 4 */
        } poly;
        struct {
            int ox, oy;            /* the stripes' origin: hatches with one origin join up */
            bool in_image;         /* over a masked cell of the heatmap just before it: its pixels already
                                    * show this hatch, so a raster backend may skip it; a vector one draws
                                    * it over the image for sharp stripes */
        } hatch;
    };
} draw_cmd;

/* The hatch rectangles over a heatmap's masked cells (a scan of its pixels'
 * cells), kept for the frames after: the same picture, the same rectangles. */
typedef struct {
    unsigned generation;
    app_slice slice;               /* the picture's cells (app_slice_same) ... */
    int w, h, gap;                 /* ... and size */
    app_rect *rects;
    int n, cap;
    bool used;
} draw_hatch_memo;

typedef struct {
    draw_cmd *cmds;
    int n, cap;
    char *text;                    /* the text commands' strings, one after another */
    size_t text_len, text_cap;
    /* what a frame found scanning a slice whole (its NaN and masked cells),
     * kept from frame to frame: draw_list_memo */
    struct {
        unsigned generation;
        app_slice slice;           /* app_slice_same */
        int value;
        bool used;
    } memo[8];
    int memo_next;
    draw_hatch_memo hatches[4];
    int hatches_next;
    float **floats;                /* draw_list_floats' blocks, kept from frame to frame */
    size_t *floats_len;
    int n_floats, floats_used;
    draw_text_measure measure;
    app_layout *layout;            /* where the frame being built records its hit areas (backends ignore it) */
    int px;                        /* font size of the text added now */
    int clip_depth;
    bool failed;                   /* out of memory: the list lacks commands */
} draw_list;

void draw_list_init(draw_list *d, draw_text_measure m);
void draw_list_free(draw_list *d);

/* Empties the list for a new frame whose text is px pixels. */
void draw_list_begin(draw_list *d, int px);

/* Walks the list: the command after c (the first when c is NULL), NULL at the end. */
const draw_cmd *draw_list_next(const draw_list *d, const draw_cmd *c);

/* The string of a DRAW_CMD_TEXT command. */
const char *draw_cmd_text(const draw_list *d, const draw_cmd *c);

/* n floats that stay valid until the next draw_list_begin (a slice computed
 * for this frame, such as a difference), NULL if out of memory. */
float *draw_list_floats(draw_list *d, size_t n);

/* A number a frame worked out from the whole of slice s of trace generation
 * `generation` (the data under s changes only with it), remembered for the
 * frames after: true and *value when known. draw_list_memo_put remembers one
 * (the oldest of 8 is forgotten). */
bool draw_list_memo(const draw_list *d, unsigned generation, const app_slice *s, int *value);
void draw_list_memo_put(draw_list *d, unsigned generation, const app_slice *s, int value);

/* ---- measuring */

int draw_text_w(draw_list *d, const char *s);
int draw_line_h(draw_list *d);                                           /* line height */

/* ---- adding commands (sizes not positive draw nothing) */

void draw_fill(draw_list *d, int x, int y, int w, int h, uint32_t argb);
void draw_outline(draw_list *d, int x, int y, int w, int h, int thickness, uint32_t argb);
/* A line from (x0, y0) to (x1, y1), horizontal (y1 = y0) or vertical (x1 =
 * x0), thickness t below or right of it: it covers the pixels
 * [x0, x1) × [y0, y0 + t) or [x0, x0 + t) × [y0, y1). */
void draw_line_to(draw_list *d, int x0, int y0, int x1, int y1, int t, uint32_t argb);
int draw_text(draw_list *d, const char *s, int x, int y, uint32_t argb); /* returns width */
/* The same in the bold face; draw_text_w_bold measures it. */
int draw_text_bold(draw_list *d, const char *s, int x, int y, uint32_t argb);
int draw_text_w_bold(draw_list *d, const char *s);
/* s turned a quarter counter-clockwise, read from bottom to top, in the box
 * at (x, y) a line wide and its width tall (a column label); returns its width. */
int draw_text_turned(draw_list *d, const char *s, int x, int y, uint32_t argb);
/* Draws s in lines of at most max_w pixels, broken after spaces or between
 * Chinese characters, line after line (draw_line_h apart); returns the lines drawn.
 * draw_text_wrap_lines counts them without drawing. */
int draw_text_wrap(draw_list *d, const char *s, int x, int y, int max_w, uint32_t argb);
int draw_text_wrap_lines(draw_list *d, const char *s, int max_w);
/* Draws s cut with "…" to fit max_w pixels. */
int draw_text_fit(draw_list *d, const char *s, int x, int y, int max_w, uint32_t argb);
/* What draw_text_fit draws: s itself when it fits, else its start and "…" in buf
 * (size bytes), "" when not even that fits. */
const char *draw_text_cut(draw_list *d, const char *s, int max_w, char *buf, size_t size);
/* Slice s as a w × h heatmap at (x, y), and a hatch command in_image over its masked cells. */
void draw_heatmap(draw_list *d, unsigned generation, const app_slice *s, const app_scale *sc, int x, int y, int w,
                  int h, int gap);
/* Lines at any angle (the geometry view's arrows): a segment t pixels thick,
 * a filled triangle, and an arrow from (x0, y0) whose head, `head` pixels
 * long, has its tip at (x1, y1). Fractional pixels are kept. */
void draw_segment(draw_list *d, float x0, float y0, float x1, float y1, float t, uint32_t argb);
void draw_triangle(draw_list *d, float x0, float y0, float x1, float y1, float x2, float y2, uint32_t argb);
void draw_arrow(draw_list *d, float x0, float y0, float x1, float y1, float t, float head, uint32_t argb);
/* A hatched swatch, stripes starting at its own top-left corner. */
void draw_hatch(draw_list *d, int x, int y, int w, int h);
void draw_clip_push(draw_list *d, app_rect r);
void draw_clip_pop(draw_list *d);

#endif
