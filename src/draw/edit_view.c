/* edit_view.c — draws the token editor (app_edit.c): its field or fields over
 * the picture, the caret, an IME composition, and where the IME's candidate
 * window goes (layout->edit_rect).
 *
 * A field holds several lines: the text is wrapped to its width (after a
 * space when a line has one, else between any two characters, so a Chinese
 * poem wraps too), and when it is longer than the field the lines shown are
 * those around the caret: the caret is always on screen, however long the
 * text. Nothing is remembered between frames; the caret decides. */
#include "edit_view.h"

#include <stdio.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "i18n.h"

#define EDIT_LINES_ONE 5 /* lines of the field when there is one, */
#define EDIT_LINES_TWO 3 /* and of each when there are two (cross-attention) */
#define EDIT_MAX_LINES 256

/* The display text: the field's text with an IME composition at the cursor. */
typedef struct {
    char s[APP_EDIT_MAX + 128];
    int len;
    int caret;          /* byte offset of the caret in s */
    int comp0, comp1;   /* the composition's bytes [comp0, comp1), empty when none */
    int start[EDIT_MAX_LINES + 1]; /* line i is s[start[i], start[i + 1]) */
    int n_lines;
} edit_text;

static void make_text(edit_text *t, const char *text, int cursor, const char *compose)
{
    size_t n = strlen(text), c = strlen(compose);
    if (cursor < 0 || (size_t)cursor > n) cursor = (int)n;
    memcpy(t->s, text, (size_t)cursor);
    memcpy(t->s + cursor, compose, c);
    memcpy(t->s + cursor + c, text + cursor, n - (size_t)cursor + 1);
    t->len = (int)(n + c);
    t->comp0 = cursor;
    t->comp1 = cursor + (int)c;
    t->caret = t->comp1;
}

/* The width of s[a, b) as drawn. */
static int span_w(draw_list *dl, const edit_text *t, int a, int b)
{
    char buf[sizeof t->s];
    memcpy(buf, t->s + a, (size_t)(b - a));
    buf[b - a] = '\0';
    return draw_text_w(dl, buf);
}

/* Breaks t into lines of at most w pixels: after the last space that fits,
 * else before the first character that does not (at least one per line). */
static void wrap(draw_list *dl, edit_text *t, int w)
{
    int at = 0;
    t->n_lines = 0;
    do {
        t->start[t->n_lines++] = at;
        int end = at, space = -1;
        while (end < t->len) {
            int next = (int)attn_utf8_next(t->s, (size_t)t->len, (size_t)end);
            if (end > at && span_w(dl, t, at, next) > w) break;
            if (t->s[end] == ' ') space = next;
            end = next;
        }
        if (end < t->len && space > at) end = space; /* the line ends after its last space */
        at = end;
    } while (at < t->len && t->n_lines < EDIT_MAX_LINES);
    if (at < t->len) t->n_lines--, at = t->start[t->n_lines]; /* out of lines: the rest on the last */
    t->start[t->n_lines] = t->len;
}

/* The line holding byte offset pos (the caret at a line's end belongs to it,
 * unless the next line starts there). */
static int line_of(const edit_text *t, int pos)
{
    for (int i = t->n_lines - 1; i > 0; i--)
        if (pos >= t->start[i]) return i;
    return 0;
}

/* Draws bytes [a, b) of line i's text at (x, y), the composition underlined. */
static void draw_line(draw_list *dl, const edit_text *t, int a, int b, int x, int y, uint32_t color)
{
    int u = draw_line_h(dl);
    char buf[sizeof t->s];
    memcpy(buf, t->s + a, (size_t)(b - a));
    buf[b - a] = '\0';
    while (b > a && (buf[b - a - 1] == ' ')) buf[--b - a] = '\0'; /* a wrapped line's trailing space */
    draw_text(dl, buf, x, y, color);
    int c0 = draw_imax(a, t->comp0), c1 = draw_imin(b, t->comp1);
    if (c1 > c0) { /* the IME's composition on this line: underlined */
        int x0 = x + span_w(dl, t, a, c0), x1 = x + span_w(dl, t, a, c1);
        draw_line_to(dl, x0, y + u, x1, y + u, 2, DRAW_ACCENT);
    }
}

/* One field at (fx, fy), fw wide, `lines` lines high; with the caret when cur. */
static void field(draw_list *dl, const app_state *app, int f, bool cur, int fx, int fy, int fw, int lines)
{
    static edit_text t; /* large: kept off the stack */
    int u = draw_line_h(dl), pad = u / 3, fh = lines * u + u / 2;
    draw_fill(dl, fx, fy, fw, fh, cur ? DRAW_BG : DRAW_PANEL_HI);
    if (cur) draw_outline(dl, fx, fy, fw, fh, 1, DRAW_ACCENT);
    make_text(&t, app->edit.text[f], cur ? app->edit.cursor : 0, cur ? app->edit.compose : "");
    int bar = u / 4, tw = fw - 2 * pad - bar;
    wrap(dl, &t, tw);
    int caret_line = cur ? line_of(&t, t.caret) : 0;
    int first = caret_line >= lines ? caret_line - lines + 1 : 0; /* the caret's line in view */
    int tx = fx + pad, ty = fy + u / 4;
    for (int i = first; i < t.n_lines && i < first + lines; i++)
        draw_line(dl, &t, t.start[i], t.start[i + 1], tx, ty + (i - first) * u, cur ? DRAW_WHITE : DRAW_TEXT);
    if (t.n_lines > lines) { /* a scroll bar: where the lines shown are in the text */
        int bh = draw_imax(u / 2, fh * lines / t.n_lines), by = fy + (fh - bh) * first / (t.n_lines - lines);
        draw_fill(dl, fx + fw - bar - 1, by, bar, bh, DRAW_TEXT_DIM);
    }
    if (!cur) return;
    int cl = caret_line - first, ly = ty + cl * u;
    int cx = tx + span_w(dl, &t, t.start[caret_line], t.caret);
    draw_line_to(dl, cx, ly, cx, ly + u, 2, DRAW_WHITE);
    /* the IME's candidate window goes under the composition's start (the caret when none) */
    int comp_line = line_of(&t, t.comp0);
    int bx = comp_line >= first && comp_line < first + lines ? tx + span_w(dl, &t, t.start[comp_line], t.comp0) : cx;
    int by = comp_line >= first && comp_line < first + lines ? ty + (comp_line - first) * u : ly;
    dl->layout->edit_rect = (app_rect){bx, by - u / 4, draw_imax(1, fx + fw - bx), u + u / 2};
}

/* The dialog's size for nf fields of `lines` lines at the list's text size:
 * its title, the fields, the hint under them. */
static void dialog_size(draw_list *dl, int nf, int lines, int *w, int *h)
{
    int u = draw_line_h(dl), fh = lines * u + u / 2;
    *w = draw_imin(dl->layout->width - 2 * u, 50 * u);
    *h = 2 * u + nf * (fh + u / 2) + 2 * u;
}

/* Whether that dialog fits the window with its fields at least 6 lines wide. */
static bool dialog_fits(draw_list *dl, int nf, int lines)
{
    int u = draw_line_h(dl), w, h;
    dialog_size(dl, nf, lines, &w, &h);
    int labels = draw_imax(draw_text_w(dl, _("source")), draw_text_w(dl, _("target")));
    return h <= dl->layout->height - u && w - 3 * u - labels >= 6 * u;
}

void draw_edit(const app_state *app, draw_list *dl)
{
    bool two = app->cfg.source_tokens || app->edit.field == 1 || app->edit.text[1][0];
    int nf = two ? 2 : 1, lines = two ? EDIT_LINES_TWO : EDIT_LINES_ONE, frame_px = dl->px;
    /* in a window too small for the dialog at this text size (after +): fewer
     * lines per field, then smaller text, so that all of it stays inside */
    while (!dialog_fits(dl, nf, lines) && (lines > 1 || dl->px > 9)) {
        if (lines > 1) lines--;
        else dl->px--;
    }
    int u = draw_line_h(dl), fh = lines * u + u / 2, w, h;
    dialog_size(dl, nf, lines, &w, &h);
    h = draw_imin(h, dl->layout->height - u);
    int x = (dl->layout->width - w) / 2, y = draw_imax(u / 2, (dl->layout->height - h) / 3);
    draw_fill(dl, 0, 0, dl->layout->width, dl->layout->height, 0x90000000u);
    draw_fill(dl, x, y, w, h, DRAW_PANEL);
    draw_outline(dl, x, y, w, h, 2, DRAW_ACCENT);
    draw_clip_push(dl, (app_rect){x, y, w, h}); /* a window smaller than even that: cut at the dialog's edge */
    draw_text_fit(dl, app->model ? _("text: the model's tokenizer splits it, | between batch rows — Enter applies, Esc cancels")
                               : _("tokens: spaces between tokens, | between batch rows — Enter applies, Esc cancels"),
                x + u, y + u / 2, w - 2 * u, DRAW_WHITE);
    for (int f = 0; f < nf; f++) {
        int fy = y + 2 * u + f * (fh + u / 2);
        /* TRANSLATORS: labels of the token editor's fields: the target sentence and, for cross-attention, the source */
        draw_text(dl, f ? _("source") : _("target"), x + u, fy + u / 4, DRAW_TEXT_DIM);
        int fx = x + u + draw_imax(draw_text_w(dl, _("source")), draw_text_w(dl, _("target"))) + u;
        field(dl, app, f, f == app->edit.field, fx, fy, x + w - u - fx, lines);
    }
    draw_text_fit(dl, two ? _("Tab switches between target and source") : _("Ctrl+V pastes, Ctrl+U clears"), x + u,
                  y + h - u - u / 2, w - 2 * u, DRAW_TEXT_DIM);
    draw_clip_pop(dl);
    dl->px = frame_px;
}
