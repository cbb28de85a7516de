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

ui_export_kind ui_export_kind_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (dot && !strcasecmp(dot, ".svg")) return UI_EXPORT_SVG;
    if (dot && !strcasecmp(dot, ".pdf")) return UI_EXPORT_PDF;
    return UI_EXPORT_PNG;
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

int ui_export_vector(ui_app *app, ui_gfx *g, int w, int h, ui_export_kind kind, const char *path, char *err,
                     size_t errsize)
{
    bytes out = {0};
    ui_cairo *vc = ui_cairo_new();
    if (!vc) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    cairo_surface_t *s = kind == UI_EXPORT_SVG ? cairo_svg_surface_create_for_stream(append, &out, w, h)
                                               : cairo_pdf_surface_create_for_stream(append, &out, w, h);
    if (kind == UI_EXPORT_SVG) cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX); /* not pt */
    if (kind == UI_EXPORT_PDF) {
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
