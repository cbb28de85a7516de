/* export.c — SVG and PDF files of a frame. */
#include "export.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "draw_cairo.h"
#include "fileio.h"
#include "gfx.h"
#include "render.h"
#include "view.h"

static const char *const EXTENSIONS[UI_SAVE_KINDS] = {"png", "svg", "pdf", "csv"};

ui_save_kind ui_export_kind_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    for (int k = 1; dot && k < UI_SAVE_KINDS; k++)
        if (!strcasecmp(dot + 1, EXTENSIONS[k])) return (ui_save_kind)k;
    return UI_SAVE_PNG;
}

const char *ui_export_extension(ui_save_kind kind)
{
    return EXTENSIONS[kind >= 0 && kind < UI_SAVE_KINDS ? kind : 0];
}

/* The file's bytes as cairo writes them. */
typedef struct {
    unsigned char *data;
    size_t len, cap;
    bool failed;
} bytes;

static cairo_status_t append(void *closure, const unsigned char *data, unsigned int n)
{
    bytes *b = closure;
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2;
        unsigned char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return CAIRO_STATUS_NO_MEMORY;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, n);
    b->len += n;
    return CAIRO_STATUS_SUCCESS;
}

static bool put(bytes *b, const char *s, size_t n)
{
    return append(b, (const unsigned char *)s, (unsigned)n) == CAIRO_STATUS_SUCCESS;
}

/* s with XML's five special characters escaped. */
static bool put_escaped(bytes *b, const char *s)
{
    bool ok = true;
    for (; *s && ok; s++) {
        const char *e = *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : *s == '&' ? "&amp;" : *s == '"' ? "&quot;" :
                        *s == '\'' ? "&apos;" : NULL;
        ok = e ? put(b, e, strlen(e)) : put(b, s, 1);
    }
    return ok;
}

/* cairo's SVG draws text as glyph outlines, which no one can select or
 * search. Under them goes a layer of the same text as SVG <text>, invisible
 * (fill-opacity 0) and stretched to each run's measured width, so a browser
 * or an editor selects, finds and copies the words where they are drawn.
 * Text outside the clip it was drawn in (a scrolled lesson) is left out. */
static bool svg_text_layer(bytes *b, const ui_draw *dl)
{
    /* everything before the closing tag, then the layer, then the tag again */
    static const char END[] = "</svg>";
    size_t at = b->len;
    while (at >= sizeof END - 1 && memcmp(b->data + at - (sizeof END - 1), END, sizeof END - 1)) at--;
    if (at < sizeof END - 1) return false;
    b->len = at - (sizeof END - 1);
    static const char OPEN[] = "<g id=\"text\" fill-opacity=\"0\" font-family=\"sans-serif\">\n";
    bool ok = put(b, OPEN, strlen(OPEN));
    ui_rect clip[16];
    int depth = 0;
    char num[160];
    for (const ui_cmd *c = NULL; ok && (c = ui_draw_next(dl, c));) {
        if (c->kind == UI_CMD_CLIP_PUSH) {
            ui_rect r = depth ? ui_rect_intersect(c->r, clip[depth < 16 ? depth - 1 : 15]) : c->r;
            if (depth < 16) clip[depth] = r;
            depth++;
        } else if (c->kind == UI_CMD_CLIP_POP && depth > 0) {
            depth--;
        } else if (c->kind == UI_CMD_TEXT) {
            ui_rect in = depth ? ui_rect_intersect(c->r, clip[depth < 16 ? depth - 1 : 15]) : c->r;
            if (in.w <= 0 || in.h <= 0) continue;
            /* the baseline about four fifths of the size below the top */
            int n;
            if (c->text.turned) /* level at the box's bottom-left, turned about it as the picture is */
                n = snprintf(num, sizeof num,
                             "<text x=\"%d\" y=\"%.1f\" font-size=\"%d\" textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\" "
                             "transform=\"rotate(-90 %d %d)\">",
                             c->r.x, c->r.y + c->r.h + 0.8 * c->text.px, c->text.px, c->r.h > 0 ? c->r.h : 1, c->r.x,
                             c->r.y + c->r.h);
            else
                n = snprintf(num, sizeof num,
                             "<text x=\"%d\" y=\"%.1f\" font-size=\"%d\" textLength=\"%d\" lengthAdjust=\"spacingAndGlyphs\">",
                             c->r.x, c->r.y + 0.8 * c->text.px, c->text.px, c->r.w > 0 ? c->r.w : 1);
            ok = put(b, num, (size_t)n) && put_escaped(b, ui_cmd_text(dl, c)) && put(b, "</text>\n", strlen("</text>\n"));
        }
    }
    return ok && put(b, "</g>\n</svg>\n", strlen("</g>\n</svg>\n"));
}

int ui_export_vector(ui_app *app, ui_gfx *g, int w, int h, ui_save_kind kind, const char *path, char *err,
                     size_t errsize)
{
    bytes out = {0};
    ui_cairo *vc = ui_cairo_new();
    if (!vc) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    cairo_surface_t *s = kind == UI_SAVE_SVG ? cairo_svg_surface_create_for_stream(append, &out, w, h)
                                               : cairo_pdf_surface_create_for_stream(append, &out, w, h);
    if (kind == UI_SAVE_SVG) cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX); /* not pt */
    if (kind == UI_SAVE_PDF) {
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, "attnlab");
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "attnlab render");
    }
    ui_render_frame(app, &g->list, &app->layout, w, h);
    cairo_t *cr = cairo_create(s);
    int drawn = ui_cairo_draw(cr, vc, g, &g->list);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    cairo_status_t st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    ui_cairo_free(vc);
    ui_render_commit(app, &app->layout);
    attn_error e;
    int rc = 0;
    if (st == CAIRO_STATUS_SUCCESS && !drawn && !out.failed && kind == UI_SAVE_SVG && !svg_text_layer(&out, &g->list))
        out.failed = true;
    if (st != CAIRO_STATUS_SUCCESS || drawn || out.failed) {
        snprintf(err, errsize, "%s: cannot draw: %s", path, cairo_status_to_string(st));
        rc = -1;
    } else if (attn_file_write_atomic(path, out.data, out.len, 0644, &e)) {
        snprintf(err, errsize, "%s", e.msg);
        rc = -1;
    }
    free(out.data);
    return rc;
}

/* One CSV field: quoted, with quotes doubled, when it holds a comma, a quote
 * or a line break (RFC 4180). */
static void field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int ui_export_csv(const ui_app *app, const char *path, char *err, size_t errsize)
{
    const attn_tensor *t = ui_app_tensor(app);
    ui_view_slice v;
    if (!t || ui_view_make_of(&app->trace, t, app->view.batch, app->view.head, &v)) {
        snprintf(err, errsize, "%s: there is no matrix on screen to save", path);
        return -1;
    }
    char *text = NULL, label[160];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    snprintf(label, sizeof label, "%s", t->name);
    if (v.batch >= 0) snprintf(label + strlen(label), sizeof label - strlen(label), " b=%d", v.batch);
    if (v.head >= 0) snprintf(label + strlen(label), sizeof label - strlen(label), " h=%d", v.head);
    field(f, label);
    for (int j = 0; j < v.slice.cols; j++) {
        fputc(',', f);
        field(f, ui_view_col_label(&app->trace, &v, j, label, sizeof label));
    }
    fputs("\r\n", f);
    for (int i = 0; i < v.slice.rows; i++) {
        field(f, ui_view_row_label(&app->trace, &v, i, label, sizeof label));
        for (int j = 0; j < v.slice.cols; j++) fprintf(f, ",%.9g", ui_slice_at(&v.slice, i, j));
        fputs("\r\n", f);
    }
    bool failed = ferror(f) != 0;
    failed |= fclose(f) != 0;
    attn_error e;
    int rc = 0;
    if (failed) {
        snprintf(err, errsize, "out of memory");
        rc = -1;
    } else if (attn_file_write_atomic(path, text, len, 0644, &e)) {
        snprintf(err, errsize, "%s", e.msg);
        rc = -1;
    }
    free(text);
    return rc;
}
