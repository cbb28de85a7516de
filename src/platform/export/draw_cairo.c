/* draw_cairo.c — the vector backend: walks a frame's command list onto a cairo
 * surface (export.c makes it SVG or PDF). Text is text, in the faces the SDL
 * backend picks for each run (font.h), so a PDF embeds them, CJK included;
 * heatmap cells are rectangles, masked hatches stripes, NaN checks squares. A
 * heatmap with more cells than are worth drawing one by one, or smaller than
 * its cells, is an image, painted as the SDL backend paints it. */
#include "draw_cairo.h"

#include <cairo-ft.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gfx.h"
#include "paint.h"

#define MAX_FACES 16
#define VECTOR_CELLS 65536 /* at most this many cells are drawn as rectangles */

struct export_cairo {
    struct {
        char *path;
        int index;
        bool bold;
        cairo_font_face_t *face;
    } faces[MAX_FACES];
    int n;
};

export_cairo *export_cairo_new(void)
{
    return calloc(1, sizeof(export_cairo));
}

void export_cairo_free(export_cairo *vc)
{
    if (!vc) return;
    for (int i = 0; i < vc->n; i++) {
        cairo_font_face_destroy(vc->faces[i].face);
        free(vc->faces[i].path);
    }
    free(vc);
}

/* The cairo face for a font file (and its index in a collection), emboldened
 * as SDL_ttf's bold style is; NULL if it cannot be made. */
static cairo_font_face_t *face_of(export_cairo *vc, const char *path, int index, bool bold)
{
    for (int i = 0; i < vc->n; i++)
        if (vc->faces[i].index == index && vc->faces[i].bold == bold && !strcmp(vc->faces[i].path, path))
            return vc->faces[i].face;
    if (vc->n == MAX_FACES) return NULL;
    FcPattern *p = FcPatternCreate();
    if (!p) return NULL;
    FcPatternAddString(p, FC_FILE, (const FcChar8 *)path);
    FcPatternAddInteger(p, FC_INDEX, index);
    FcPatternAddBool(p, FC_EMBOLDEN, bold);
    cairo_font_face_t *face = cairo_ft_font_face_create_for_pattern(p);
    FcPatternDestroy(p);
    char *copy = strdup(path);
    if (!copy || cairo_font_face_status(face) != CAIRO_STATUS_SUCCESS) {
        free(copy);
        cairo_font_face_destroy(face);
        return NULL;
    }
    vc->faces[vc->n].path = copy;
    vc->faces[vc->n].index = index;
    vc->faces[vc->n].bold = bold;
    vc->faces[vc->n].face = face;
    return vc->faces[vc->n++].face;
}

static void set_color(cairo_t *cr, uint32_t c)
{
    cairo_set_source_rgba(cr, ((c >> 16) & 255) / 255.0, ((c >> 8) & 255) / 255.0, (c & 255) / 255.0,
                          (c >> 24) / 255.0);
}

static void fill(cairo_t *cr, double x, double y, double w, double h, uint32_t c)
{
    if (w <= 0 || h <= 0) return;
    set_color(cr, c);
    cairo_rectangle(cr, x, y, w, h);
    cairo_fill(cr);
}

/* ---- text */

/* One run of a text command: its face, where it goes, its text (offsets into pool). */
typedef struct {
    int cmd;                 /* the command's index in the list */
    size_t path, text;       /* offsets of zero-terminated strings in pool */
    int index, x, baseline;
} text_run;

struct export_cairo_runs {
    text_run *runs;
    int n, cap;
    char *pool;
    size_t len, cap_pool;
    bool failed;
    int cmd;                 /* while collecting: the command whose runs come */
};

void export_cairo_runs_free(export_cairo_runs *r)
{
    if (!r) return;
    free(r->runs);
    free(r->pool);
    free(r);
}

/* s copied into the pool: its offset, or (size_t)-1 when out of memory. */
static size_t pool_put(export_cairo_runs *r, const char *s)
{
    size_t n = strlen(s) + 1;
    if (r->len + n > r->cap_pool) {
        size_t cap = (r->len + n) * 2;
        char *grown = realloc(r->pool, cap);
        if (!grown) return (size_t)-1;
        r->pool = grown;
        r->cap_pool = cap;
    }
    memcpy(r->pool + r->len, s, n);
    r->len += n;
    return r->len - n;
}

static void collect_run(void *ctx, const char *path, int index, const char *text, int x, int baseline)
{
    export_cairo_runs *r = ctx;
    if (r->failed) return;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 64;
        text_run *grown = realloc(r->runs, (size_t)cap * sizeof *grown);
        if (!grown) {
            r->failed = true;
            return;
        }
        r->runs = grown;
        r->cap = cap;
    }
    text_run *t = &r->runs[r->n];
    *t = (text_run){.cmd = r->cmd, .index = index, .x = x, .baseline = baseline};
    if ((t->path = pool_put(r, path)) == (size_t)-1 || (t->text = pool_put(r, text)) == (size_t)-1) r->failed = true;
    else r->n++;
}

export_cairo_runs *export_cairo_runs_of(sdl_gfx *g, const draw_list *d)
{
    export_cairo_runs *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->cmd = 0;
    for (const draw_cmd *c = NULL; !r->failed && (c = draw_list_next(d, c)); r->cmd++) {
        if (c->kind != DRAW_CMD_TEXT) continue;
        sdl_gfx_font_px(g, c->text.px);
        if (sdl_font_runs(g->font, draw_cmd_text(d, c), collect_run, r)) r->failed = true; /* the bold font's runs are the regular one's */
    }
    if (r->failed) {
        export_cairo_runs_free(r);
        return NULL;
    }
    return r;
}

/* Text command number `cmd` (c) from its runs, starting at *at (moved past them). */
static void text(cairo_t *cr, export_cairo *vc, const export_cairo_runs *runs, int *at, int cmd, const draw_cmd *c)
{
    double x = c->r.x, y = c->r.y;
    set_color(cr, c->color);
    if (c->text.turned) { /* drawn level at the origin, turned a quarter counter-clockwise about the box's bottom-left */
        cairo_save(cr);
        cairo_translate(cr, c->r.x, c->r.y + c->r.h);
        cairo_rotate(cr, -acos(0.0)); /* −π/2 */
        x = y = 0;
    }
    for (; *at < runs->n && runs->runs[*at].cmd == cmd; (*at)++) {
        const text_run *t = &runs->runs[*at];
        cairo_font_face_t *face = face_of(vc, runs->pool + t->path, t->index, c->text.bold);
        if (!face) continue;
        cairo_set_font_face(cr, face);
        cairo_set_font_size(cr, c->text.px);
        cairo_move_to(cr, x + t->x, y + t->baseline);
        cairo_show_text(cr, runs->pool + t->text);
    }
    if (c->text.turned) cairo_restore(cr);
}

/* ---- masked hatch and NaN checks, as paint_heatmap draws them */

/* r striped: pixel (x, y) of it is dark where (x + y + phase) mod the period
 * is under the dark width, as diagonal bands. */
static void hatch(cairo_t *cr, double x, double y, double w, double h, int phase)
{
    enum { DARK_W = 3 }; /* paint.c's HATCH_DARK_W */
    if (w <= 0 || h <= 0) return;
    cairo_save(cr);
    cairo_rectangle(cr, x, y, w, h);
    cairo_clip(cr);
    fill(cr, x, y, w, h, APP_HATCH_LIGHT);
    set_color(cr, APP_HATCH_DARK);
    phase = ((phase % APP_HATCH_PERIOD) + APP_HATCH_PERIOD) % APP_HATCH_PERIOD;
    /* pixel (i, j) of the raster hatch is dark when (i + j + phase) mod P < DARK_W: its
     * centre's u = (X − x) + (Y − y) = i + j + 1, so the bands are u ∈ [kP − phase + ½, + DARK_W) */
    for (double u = 0.5 - phase; u < w + h; u += APP_HATCH_PERIOD) {
        cairo_move_to(cr, x + u, y);
        cairo_line_to(cr, x + u + DARK_W, y);
        cairo_line_to(cr, x + u + DARK_W - h, y + h);
        cairo_line_to(cr, x + u - h, y + h);
        cairo_close_path(cr);
    }
    cairo_fill(cr);
    cairo_restore(cr);
}

/* A NaN cell: squares of APP_NAN_A and APP_NAN_B aligned to the picture's corner (ox, oy). */
static void checks(cairo_t *cr, double ox, double oy, int x, int y, int w, int h)
{
    enum { CHECK = 4 }; /* paint.c's NAN_CHECK */
    cairo_save(cr);
    cairo_rectangle(cr, ox + x, oy + y, w, h);
    cairo_clip(cr);
    fill(cr, ox + x, oy + y, w, h, APP_NAN_A);
    set_color(cr, APP_NAN_B);
    for (int cy = y / CHECK * CHECK; cy < y + h; cy += CHECK)
        for (int cx = x / CHECK * CHECK; cx < x + w; cx += CHECK)
            if ((cx / CHECK + cy / CHECK) % 2) cairo_rectangle(cr, ox + cx, oy + cy, CHECK, CHECK);
    cairo_fill(cr);
    cairo_restore(cr);
}

/* ---- heatmaps */

static bool masked(const app_slice *s, int i, int j)
{
    float v = app_slice_at(s, i, j);
    return !isnan(v) && (v == -INFINITY || (s->mask && s->mask[i * s->mask_row_stride + j * s->mask_col_stride] != 0.0f));
}

/* Every cell a rectangle (its gap left in APP_GAP, as heatmap.h says); masked
 * cells are left for the hatch commands that follow the heatmap's. */
static void cells(cairo_t *cr, const draw_cmd *c)
{
    const app_slice *s = &c->heat.slice;
    int W = c->r.w, H = c->r.h, gap = c->heat.gap;
    bool gaps = W / s->cols >= 2 * gap + 4 && H / s->rows >= 2 * gap + 4;
    fill(cr, c->r.x, c->r.y, W, H, APP_GAP);
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) {
            int x, y, cw, ch;
            app_heat_cell_rect(W, H, s->rows, s->cols, i, j, &x, &y, &cw, &ch);
            if (gaps) cw -= gap, ch -= gap;
            float v = app_slice_at(s, i, j);
            if (masked(s, i, j)) continue;
            if (isnan(v)) checks(cr, c->r.x, c->r.y, x, y, cw, ch);
            else fill(cr, c->r.x + x, c->r.y + y, cw, ch, app_heat_color(&c->heat.scale, v));
        }
}

/* The picture as the SDL backend paints it, embedded at two pixels a point. */
static void image(cairo_t *cr, const draw_cmd *c)
{
    enum { FINE = 2 };
    int w = c->r.w * FINE, h = c->r.h * FINE;
    cairo_surface_t *img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        return;
    }
    cairo_surface_flush(img);
    paint_heatmap(&c->heat.slice, &c->heat.scale, (uint32_t *)cairo_image_surface_get_data(img),
                  cairo_image_surface_get_stride(img) / 4, w, h, c->heat.gap * FINE);
    cairo_surface_mark_dirty(img);
    cairo_save(cr);
    cairo_translate(cr, c->r.x, c->r.y);
    cairo_scale(cr, 1.0 / FINE, 1.0 / FINE);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(img);
}

static void heatmap(cairo_t *cr, const draw_cmd *c)
{
    const app_slice *s = &c->heat.slice;
    if (s->rows <= 0 || s->cols <= 0 || c->r.w <= 0 || c->r.h <= 0) return;
    if ((size_t)s->rows * s->cols <= VECTOR_CELLS && c->r.w >= s->cols && c->r.h >= s->rows) cells(cr, c);
    else image(cr, c);
}

/* ---- the list */

int export_cairo_draw(cairo_t *cr, export_cairo *vc, const export_cairo_runs *runs, const draw_list *d)
{
    int depth = 0, cmd = 0, at = 0;
    /* advances rounded to whole pixels, as SDL_ttf's are: the layout measured
     * with SDL_ttf then fits the text cairo draws, however long the line */
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_ON);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
    for (const draw_cmd *c = NULL; (c = draw_list_next(d, c)); cmd++) {
        app_rect r = c->r;
        switch (c->kind) {
        case DRAW_CMD_RECT:
        case DRAW_CMD_LINE: fill(cr, r.x, r.y, r.w, r.h, c->color); break;
        case DRAW_CMD_FRAME:
            fill(cr, r.x, r.y, r.w, c->t, c->color);
            fill(cr, r.x, r.y + r.h - c->t, r.w, c->t, c->color);
            fill(cr, r.x, r.y + c->t, c->t, r.h - 2 * c->t, c->color);
            fill(cr, r.x + r.w - c->t, r.y + c->t, c->t, r.h - 2 * c->t, c->color);
            break;
        case DRAW_CMD_POLY:
            set_color(cr, c->color);
            cairo_move_to(cr, c->poly.x[0], c->poly.y[0]);
            for (int i = 1; i < c->poly.n; i++) cairo_line_to(cr, c->poly.x[i], c->poly.y[i]);
            cairo_close_path(cr);
            cairo_fill(cr);
            break;
        case DRAW_CMD_TEXT: text(cr, vc, runs, &at, cmd, c); break;
        case DRAW_CMD_HEATMAP: heatmap(cr, c); break;
        case DRAW_CMD_HATCH: /* over a heatmap too: its masked cells were left for this */
            hatch(cr, r.x, r.y, r.w, r.h, (r.x - c->hatch.ox) + (r.y - c->hatch.oy));
            break;
        case DRAW_CMD_CLIP_PUSH:
            cairo_save(cr);
            cairo_rectangle(cr, r.x, r.y, r.w, r.h);
            cairo_clip(cr);
            depth++;
            break;
        case DRAW_CMD_CLIP_POP:
            if (depth > 0) cairo_restore(cr), depth--;
            break;
        }
    }
    for (; depth > 0; depth--) cairo_restore(cr);
    return cairo_status(cr) == CAIRO_STATUS_SUCCESS ? 0 : -1;
}
