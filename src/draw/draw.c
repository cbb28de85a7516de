/* draw.c — the command list: adding commands, measuring text, walking the list. */
#include "draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "linebreak.h"

void draw_list_init(draw_list *d, draw_text_measure m)
{
    memset(d, 0, sizeof *d);
    d->measure = m;
}

void draw_list_free(draw_list *d)
{
    if (!d) return;
    for (int i = 0; i < (int)(sizeof d->hatches / sizeof d->hatches[0]); i++) free(d->hatches[i].rects);
    free(d->cmds);
    free(d->text);
    for (int i = 0; i < d->n_floats; i++) free(d->floats[i]);
    free(d->floats);
    free(d->floats_len);
    memset(d, 0, sizeof *d);
}

void draw_list_begin(draw_list *d, int px)
{
    d->n = 0;
    d->text_len = 0;
    d->floats_used = 0;
    d->px = px;
    d->clip_depth = 0;
    d->failed = false;
}

const draw_cmd *draw_list_next(const draw_list *d, const draw_cmd *c)
{
    const draw_cmd *next = c ? c + 1 : d->cmds;
    return next && next < d->cmds + d->n ? next : NULL;
}

bool draw_list_memo(const draw_list *d, unsigned generation, const app_slice *s, int *value)
{
    for (int i = 0; i < (int)(sizeof d->memo / sizeof d->memo[0]); i++)
        if (d->memo[i].used && d->memo[i].generation == generation && app_slice_same(&d->memo[i].slice, s)) {
            *value = d->memo[i].value;
            return true;
        }
    return false;
}

void draw_list_memo_put(draw_list *d, unsigned generation, const app_slice *s, int value)
{
    int i = d->memo_next;
    d->memo_next = (i + 1) % (int)(sizeof d->memo / sizeof d->memo[0]);
    d->memo[i].generation = generation;
    d->memo[i].slice = *s;
    d->memo[i].value = value;
    d->memo[i].used = true;
}

const char *draw_cmd_text(const draw_list *d, const draw_cmd *c)
{
    return c->kind == DRAW_CMD_TEXT ? d->text + c->text.offset : "";
}

/* Room for one more element in *buf (cap elements of size elem), doubling. */
static bool reserve(void **buf, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *p = realloc(*buf, n * elem);
    if (!p) return false;
    *buf = p;
    *cap = n;
    return true;
}

float *draw_list_floats(draw_list *d, size_t n)
{
    int k = d->floats_used;
    if (k == d->n_floats) {
        float **blocks = realloc(d->floats, (size_t)(k + 1) * sizeof *blocks);
        if (blocks) d->floats = blocks;
        size_t *lens = blocks ? realloc(d->floats_len, (size_t)(k + 1) * sizeof *lens) : NULL;
        if (lens) d->floats_len = lens;
        if (!blocks || !lens) return NULL;
        d->floats[k] = NULL;
        d->floats_len[k] = 0;
        d->n_floats++;
    }
    if (d->floats_len[k] < n) {
        float *p = realloc(d->floats[k], n * sizeof *p);
        if (!p) return NULL;
        d->floats[k] = p;
        d->floats_len[k] = n;
    }
    d->floats_used++;
    return d->floats[k];
}

static draw_cmd *push(draw_list *d, draw_cmd_kind kind, int x, int y, int w, int h, uint32_t argb)
{
    size_t cap = (size_t)d->cap;
    if (!reserve((void **)&d->cmds, &cap, (size_t)d->n + 1, sizeof *d->cmds)) {
        d->failed = true;
        return NULL;
    }
    d->cap = (int)cap;
    draw_cmd *c = &d->cmds[d->n++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->r = (app_rect){x, y, w, h};
    c->color = argb;
    return c;
}

/* ---- measuring */

int draw_text_w(draw_list *d, const char *s)
{
    return s && *s ? d->measure.text_width(d->measure.ctx, s, d->px) : 0;
}

int draw_line_h(draw_list *d)
{
    return d->measure.line_height(d->measure.ctx, d->px);
}

/* ---- commands */

void draw_fill(draw_list *d, int x, int y, int w, int h, uint32_t argb)
{
    if (w > 0 && h > 0) push(d, DRAW_CMD_RECT, x, y, w, h, argb);
}

void draw_outline(draw_list *d, int x, int y, int w, int h, int t, uint32_t argb)
{
    draw_cmd *c = w > 0 && h > 0 && t > 0 ? push(d, DRAW_CMD_FRAME, x, y, w, h, argb) : NULL;
    if (c) c->t = t;
}

void draw_line_to(draw_list *d, int x0, int y0, int x1, int y1, int t, uint32_t argb)
{
    draw_cmd *c = NULL;
    if (y1 == y0 && x1 > x0 && t > 0) c = push(d, DRAW_CMD_LINE, x0, y0, x1 - x0, t, argb);
    else if (x1 == x0 && y1 > y0 && t > 0) c = push(d, DRAW_CMD_LINE, x0, y0, t, y1 - y0, argb);
    if (c) c->t = t;
}

/* A polygon needs every point finite, and within ±2²⁴ pixels (where a float
 * still holds every whole pixel, and its box an int): another is not drawn. */
#define POLY_REACH 16777216.0f

static void poly(draw_list *d, const float *x, const float *y, int n, uint32_t argb)
{
    float x0 = x[0], x1 = x[0], y0 = y[0], y1 = y[0];
    for (int i = 0; i < n; i++) {
        if (!(fabsf(x[i]) <= POLY_REACH && fabsf(y[i]) <= POLY_REACH)) return; /* NaN too */
        x0 = fminf(x0, x[i]), x1 = fmaxf(x1, x[i]);
        y0 = fminf(y0, y[i]), y1 = fmaxf(y1, y[i]);
    }
    int bx = (int)floorf(x0), by = (int)floorf(y0);
    draw_cmd *c = push(d, DRAW_CMD_POLY, bx, by, (int)ceilf(x1) - bx + 1, (int)ceilf(y1) - by + 1, argb);
    if (!c) return;
    c->poly.n = n;
    for (int i = 0; i < n; i++) c->poly.x[i] = x[i], c->poly.y[i] = y[i];
}

void draw_segment(draw_list *d, float x0, float y0, float x1, float y1, float t, uint32_t argb)
{
    float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
    if (len < 1e-3f || t <= 0) return;
    float nx = -dy / len * t / 2, ny = dx / len * t / 2; /* half the thickness, across the line */
    float x[4] = {x0 + nx, x1 + nx, x1 - nx, x0 - nx}, y[4] = {y0 + ny, y1 + ny, y1 - ny, y0 - ny};
    poly(d, x, y, 4, argb);
}

void draw_triangle(draw_list *d, float x0, float y0, float x1, float y1, float x2, float y2, uint32_t argb)
{
    float x[3] = {x0, x1, x2}, y[3] = {y0, y1, y2};
    poly(d, x, y, 3, argb);
}

void draw_arrow(draw_list *d, float x0, float y0, float x1, float y1, float t, float head, uint32_t argb)
{
    float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
    if (len < 1e-3f) return;
    float ux = dx / len, uy = dy / len;
    if (head > len * 0.6f) head = len * 0.6f; /* a short arrow is mostly head, never only head */
    float bx = x1 - ux * head, by = y1 - uy * head, w = head * 0.45f;
    draw_segment(d, x0, y0, bx + ux * 0.5f, by + uy * 0.5f, t, argb);
    draw_triangle(d, x1, y1, bx - uy * w, by + ux * w, bx + uy * w, by - ux * w, argb);
}

static int text_cmd(draw_list *d, const char *s, int x, int y, uint32_t argb, bool bold, bool turned)
{
    if (!s || !*s) return 0;
    int w = bold ? draw_text_w_bold(d, s) : draw_text_w(d, s);
    size_t n = strlen(s) + 1;
    if (!reserve((void **)&d->text, &d->text_cap, d->text_len + n, 1)) {
        d->failed = true;
        return w;
    }
    draw_cmd *c = turned ? push(d, DRAW_CMD_TEXT, x, y, draw_line_h(d), w, argb) : push(d, DRAW_CMD_TEXT, x, y, w, draw_line_h(d), argb);
    if (!c) return w;
    memcpy(d->text + d->text_len, s, n);
    c->text.offset = d->text_len;
    c->text.px = d->px;
    c->text.bold = bold;
    c->text.turned = turned;
    d->text_len += n;
    return w;
}

int draw_text(draw_list *d, const char *s, int x, int y, uint32_t argb) { return text_cmd(d, s, x, y, argb, false, false); }
int draw_text_bold(draw_list *d, const char *s, int x, int y, uint32_t argb) { return text_cmd(d, s, x, y, argb, true, false); }
int draw_text_turned(draw_list *d, const char *s, int x, int y, uint32_t argb) { return text_cmd(d, s, x, y, argb, false, true); }

int draw_text_w_bold(draw_list *d, const char *s)
{
    if (!s || !*s) return 0;
    return d->measure.bold_width ? d->measure.bold_width(d->measure.ctx, s, d->px) : draw_text_w(d, s);
}

const char *draw_text_cut(draw_list *d, const char *s, int max_w, char *buf, size_t size)
{
    if (max_w <= 0 || size < 5) return "";
    if (draw_text_w(d, s) <= max_w) return s;
    size_t n = strlen(s);
    if (n >= size - 4) n = size - 4;
    while (n > 0) {
        n = attn_utf8_prev(s, n); /* back off one character at a time */
        memcpy(buf, s, n);
        memcpy(buf + n, "…", 4);
        if (draw_text_w(d, buf) <= max_w) return buf;
    }
    return "";
}

int draw_text_fit(draw_list *d, const char *s, int x, int y, int max_w, uint32_t argb)
{
    char buf[512];
    return draw_text(d, draw_text_cut(d, s, max_w, buf, sizeof buf), x, y, argb);
}

/* The longest prefix of s[0..n) that ends where brk lets a line break (or at
 * n) and fits in max_w, its trailing spaces dropped; 0 when none fits. */
static size_t fit_prefix(draw_list *d, const char *s, size_t n, int max_w, bool (*brk)(const char *, size_t))
{
    char buf[512];
    size_t fit = 0;
    for (size_t i = attn_utf8_next(s, n, 0); i <= n; i = i < n ? attn_utf8_next(s, n, i) : n + 1) {
        if (i < n && !brk(s, i)) continue;
        memcpy(buf, s, i);
        size_t e = i;
        while (e > 0 && buf[e - 1] == ' ') e--;
        buf[e] = '\0';
        if (draw_text_w(d, buf) > max_w) break;
        fit = i;
        if (i == n) break;
    }
    return fit;
}

/* Lays s out in lines of at most max_w pixels, drawing them when draw; the
 * number of lines. Each line takes the longest prefix that ends at a break
 * (linebreak.h) and fits, its trailing spaces dropped; where a formula, a
 * shape or a number with its unit is wider than a line, it breaks at the
 * ordinary places, and a word wider than a line is cut between characters. */
static int wrap(draw_list *d, const char *s, int x, int y, int max_w, uint32_t argb, bool draw)
{
    char buf[512];
    int lines = 0, u = draw_line_h(d);
    while (*s == ' ') s++;
    while (*s) {
        size_t n = strlen(s), fit;
        if (n >= sizeof buf) n = sizeof buf - 1;
        if (!(fit = fit_prefix(d, s, n, max_w, draw_break_before))) fit = fit_prefix(d, s, n, max_w, draw_break_before_loose);
        if (!fit) { /* nothing fits whole: as many characters as fit, at least one */
            for (size_t i = attn_utf8_next(s, n, 0); i <= n; i = i < n ? attn_utf8_next(s, n, i) : n + 1) {
                memcpy(buf, s, i);
                buf[i] = '\0';
                if (fit && draw_text_w(d, buf) > max_w) break;
                fit = i;
                if (i == n) break;
            }
        }
        memcpy(buf, s, fit);
        size_t e = fit;
        while (e > 0 && buf[e - 1] == ' ') e--;
        buf[e] = '\0';
        if (draw) draw_text(d, buf, x, y + lines * u, argb);
        lines++;
        s += fit;
        while (*s == ' ') s++;
    }
    return lines ? lines : 1;
}

int draw_text_wrap(draw_list *d, const char *s, int x, int y, int max_w, uint32_t argb)
{
    return max_w > 0 ? wrap(d, s, x, y, max_w, argb, true) : 0;
}

int draw_text_wrap_lines(draw_list *d, const char *s, int max_w)
{
    return max_w > 0 ? wrap(d, s, 0, 0, max_w, 0, false) : 1;
}

typedef struct {
    draw_list *d;
    int x, y;            /* the picture's top-left: the stripes' origin */
    draw_hatch_memo *memo; /* being filled for the frames after; NULL: not kept */
} hatch_ctx;

static void hatch_at(draw_list *d, int ox, int oy, app_rect r)
{
    draw_cmd *c = r.w > 0 && r.h > 0 ? push(d, DRAW_CMD_HATCH, ox + r.x, oy + r.y, r.w, r.h, 0) : NULL;
    if (!c) return;
    c->hatch.ox = ox;
    c->hatch.oy = oy;
    c->hatch.in_image = true;
}

/* One masked run: a hatch command, and a copy in the memo being filled (if any). */
static void hatch_cell(void *ctx, int x, int y, int w, int h)
{
    hatch_ctx *hc = ctx;
    app_rect r = {x, y, w, h};
    hatch_at(hc->d, hc->x, hc->y, r);
    draw_hatch_memo *m = hc->memo;
    if (!m) return;
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 64;
        app_rect *g = realloc(m->rects, (size_t)cap * sizeof *g);
        if (!g) {
            m->used = false, hc->memo = NULL; /* not kept: scanned again next frame */
            return;
        }
        m->rects = g, m->cap = cap;
    }
    m->rects[m->n++] = r;
}

void draw_heatmap(draw_list *d, unsigned generation, const app_slice *s, const app_scale *sc, int x, int y, int w,
                  int h, int gap)
{
    if (w <= 0 || h <= 0 || s->rows <= 0 || s->cols <= 0) return;
    draw_cmd *c = push(d, DRAW_CMD_HEATMAP, x, y, w, h, 0);
    if (!c) return;
    c->heat.slice = *s;
    c->heat.scale = *sc;
    c->heat.gap = gap;
    c->heat.generation = generation;
    /* the same picture as a frame before: its rectangles again, without the scan */
    for (int i = 0; generation && i < (int)(sizeof d->hatches / sizeof d->hatches[0]); i++) {
        const draw_hatch_memo *m = &d->hatches[i];
        if (m->used && m->generation == generation && app_slice_same(&m->slice, s) && m->w == w && m->h == h &&
            m->gap == gap) {
            for (int k = 0; k < m->n; k++) hatch_at(d, x, y, m->rects[k]);
            return;
        }
    }
    hatch_ctx hc = {d, x, y, NULL};
    if (generation) {
        hc.memo = &d->hatches[d->hatches_next];
        d->hatches_next = (d->hatches_next + 1) % (int)(sizeof d->hatches / sizeof d->hatches[0]);
        *hc.memo = (draw_hatch_memo){generation, *s, w, h, gap, hc.memo->rects, 0, hc.memo->cap, true};
    }
    app_heat_masked_rects(s, w, h, gap, hatch_cell, &hc);
}

void draw_hatch(draw_list *d, int x, int y, int w, int h)
{
    draw_cmd *c = w > 0 && h > 0 ? push(d, DRAW_CMD_HATCH, x, y, w, h, 0) : NULL;
    if (!c) return;
    c->hatch.ox = x;
    c->hatch.oy = y;
}

void draw_clip_push(draw_list *d, app_rect r)
{
    if (push(d, DRAW_CMD_CLIP_PUSH, r.x, r.y, r.w, r.h, 0)) d->clip_depth++;
}

void draw_clip_pop(draw_list *d)
{
    if (d->clip_depth > 0 && push(d, DRAW_CMD_CLIP_POP, 0, 0, 0, 0, 0)) d->clip_depth--;
}
