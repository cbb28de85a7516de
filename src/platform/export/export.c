/* export.c — SVG and PDF files of a frame, CSV of its matrix: prepared on
 * the app's thread, drawn and written on one of their own. */
#include "export.h"

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "draw_cairo.h"
#include "engine/base/fileio.h"
#include "gfx.h"
#include "render.h"
#include "view.h"

static const char *const EXTENSIONS[APP_SAVE_KINDS] = {"png", "svg", "pdf", "csv"};

app_save_kind export_kind_of(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(slash ? slash : path, '.');
    for (int k = 0; dot && k < APP_SAVE_KINDS; k++)
        if (!strcasecmp(dot + 1, EXTENSIONS[k])) return (app_save_kind)k;
    return APP_SAVE_KINDS;
}

const char *export_extension(app_save_kind kind)
{
    return EXTENSIONS[kind >= 0 && kind < APP_SAVE_KINDS ? kind : 0];
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
static bool svg_text_layer(bytes *b, const draw_list *dl)
{
    /* everything before the closing tag, then the layer, then the tag again */
    static const char END[] = "</svg>";
    size_t at = b->len;
    while (at >= sizeof END - 1 && memcmp(b->data + at - (sizeof END - 1), END, sizeof END - 1)) at--;
    if (at < sizeof END - 1) return false;
    b->len = at - (sizeof END - 1);
    static const char OPEN[] = "<g id=\"text\" fill-opacity=\"0\" font-family=\"sans-serif\">\n";
    bool ok = put(b, OPEN, strlen(OPEN));
    app_rect clip[16];
    int depth = 0;
    char num[160];
    for (const draw_cmd *c = NULL; ok && (c = draw_list_next(dl, c));) {
        if (c->kind == DRAW_CMD_CLIP_PUSH) {
            app_rect r = depth ? app_rect_intersect(c->r, clip[depth < 16 ? depth - 1 : 15]) : c->r;
            if (depth < 16) clip[depth] = r;
            depth++;
        } else if (c->kind == DRAW_CMD_CLIP_POP && depth > 0) {
            depth--;
        } else if (c->kind == DRAW_CMD_TEXT) {
            app_rect in = depth ? app_rect_intersect(c->r, clip[depth < 16 ? depth - 1 : 15]) : c->r;
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
            ok = put(b, num, (size_t)n) && put_escaped(b, draw_cmd_text(dl, c)) && put(b, "</text>\n", strlen("</text>\n"));
        }
    }
    return ok && put(b, "</g>\n</svg>\n", strlen("</g>\n</svg>\n"));
}

/* ---- an export: what it needs copied out of the app, then the thread */

struct export_job {
    pthread_t thread;
    bool threaded;           /* thread runs (else it was written in export_start) */
    atomic_bool done;
    app_save_kind kind;
    char path[PATH_MAX];
    int rc;                  /* the thread's result, and its message */
    char err[PATH_MAX + 300];
    /* SVG, PDF: the frame's commands, their text's runs, the pictures' numbers */
    int w, h;
    draw_list list;
    bool have_list;
    export_cairo_runs *runs;
    float **copies;          /* each heatmap's cells (and mask) copied: the list's slices point here */
    int n_copies;
    /* CSV: rows × cols values (row-major) and their labels: corner, cols, rows */
    int rows, cols;
    float *values;
    char **labels;
};

/* A copy of s's cells as rows × cols row-major floats (mask likewise), and s
 * pointed at it. Returns 0, or -1 when out of memory. */
static int own_slice(export_job *x, app_slice *s)
{
    size_t n = (size_t)s->rows * (size_t)s->cols;
    float **grown = realloc(x->copies, (size_t)(x->n_copies + 2) * sizeof *grown);
    if (!grown) return -1;
    x->copies = grown;
    float *d = malloc((n ? n : 1) * sizeof *d), *m = s->mask ? malloc((n ? n : 1) * sizeof *m) : NULL;
    if (d) x->copies[x->n_copies++] = d;
    if (m) x->copies[x->n_copies++] = m;
    if (!d || (s->mask && !m)) return -1;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) {
            d[(size_t)i * s->cols + j] = app_slice_at(s, i, j);
            if (m) m[(size_t)i * s->cols + j] = s->mask[i * s->mask_row_stride + j * s->mask_col_stride];
        }
    s->data = d;
    s->row_stride = s->cols;
    s->col_stride = 1;
    if (m) s->mask = m, s->mask_row_stride = s->cols, s->mask_col_stride = 1;
    return 0;
}

/* The frame laid out again for w × h into x's own list (app->layout left as
 * it is), its text's runs found in g's fonts and its pictures' cells copied:
 * after this x needs neither the app nor g. */
static int prepare_vector(export_job *x, const app_state *app, sdl_gfx *g)
{
    app_layout *layout = malloc(sizeof *layout);
    if (!layout) return -1;
    *layout = app->layout;
    draw_list_init(&x->list, sdl_gfx_measure(g));
    x->have_list = true;
    draw_frame(app, &x->list, layout, x->w, x->h);
    free(layout);
    if (x->list.failed || !(x->runs = export_cairo_runs_of(g, &x->list))) return -1;
    for (int i = 0; i < x->list.n; i++)
        if (x->list.cmds[i].kind == DRAW_CMD_HEATMAP && own_slice(x, &x->list.cmds[i].heat.slice)) return -1;
    return 0;
}

static void write_vector(export_job *x)
{
    bytes out = {0};
    export_cairo *vc = export_cairo_new();
    if (!vc) {
        snprintf(x->err, sizeof x->err, "out of memory");
        x->rc = -1;
        return;
    }
    cairo_surface_t *s = x->kind == APP_SAVE_SVG ? cairo_svg_surface_create_for_stream(append, &out, x->w, x->h)
                                                  : cairo_pdf_surface_create_for_stream(append, &out, x->w, x->h);
    if (x->kind == APP_SAVE_SVG) cairo_svg_surface_set_document_unit(s, CAIRO_SVG_UNIT_PX); /* not pt */
    if (x->kind == APP_SAVE_PDF) {
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_TITLE, "attnlab");
        cairo_pdf_surface_set_metadata(s, CAIRO_PDF_METADATA_CREATOR, "attnlab render");
    }
    cairo_t *cr = cairo_create(s);
    int drawn = export_cairo_draw(cr, vc, x->runs, &x->list);
    cairo_destroy(cr);
    cairo_surface_finish(s);
    cairo_status_t st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    export_cairo_free(vc);
    attn_error e;
    x->rc = 0;
    if (st == CAIRO_STATUS_SUCCESS && !drawn && !out.failed && x->kind == APP_SAVE_SVG && !svg_text_layer(&out, &x->list))
        out.failed = true;
    if (st != CAIRO_STATUS_SUCCESS || drawn || out.failed) {
        snprintf(x->err, sizeof x->err, "%s: cannot draw: %s", x->path, cairo_status_to_string(st));
        x->rc = -1;
    } else if (attn_file_write_atomic(x->path, out.data, out.len, 0644, &e)) {
        snprintf(x->err, sizeof x->err, "%s", e.msg);
        x->rc = -1;
    }
    free(out.data);
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

/* The matrix the single view shows, copied with its labels. */
static int prepare_csv(export_job *x, const app_state *app)
{
    const attn_tensor *t = app_tensor(app);
    app_view_slice v;
    if (!t || app_view_make_of(&app->trace, t, app->view.batch, app->view.head, &v)) {
        snprintf(x->err, sizeof x->err, "%s: there is no matrix on screen to save", x->path);
        return -1;
    }
    x->rows = v.slice.rows;
    x->cols = v.slice.cols;
    size_t n = (size_t)x->rows * (size_t)x->cols;
    if (!(x->values = malloc((n ? n : 1) * sizeof *x->values)) ||
        !(x->labels = calloc(1 + (size_t)x->rows + (size_t)x->cols, sizeof *x->labels)))
        return -1;
    for (int i = 0; i < x->rows; i++)
        for (int j = 0; j < x->cols; j++) x->values[(size_t)i * x->cols + j] = app_slice_at(&v.slice, i, j);
    char label[160];
    snprintf(label, sizeof label, "%s", t->name);
    if (v.batch >= 0) snprintf(label + strlen(label), sizeof label - strlen(label), " b=%d", v.batch);
    if (v.head >= 0) snprintf(label + strlen(label), sizeof label - strlen(label), " h=%d", v.head);
    if (!(x->labels[0] = strdup(label))) return -1;
    for (int j = 0; j < x->cols; j++)
        if (!(x->labels[1 + j] = strdup(app_view_col_label(&app->trace, &v, j, label, sizeof label)))) return -1;
    for (int i = 0; i < x->rows; i++)
        if (!(x->labels[1 + x->cols + i] = strdup(app_view_row_label(&app->trace, &v, i, label, sizeof label)))) return -1;
    return 0;
}

/* A corner cell naming the matrix, the column labels, then each row's label and values. */
static void write_csv(export_job *x)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    x->rc = -1;
    if (!f) {
        snprintf(x->err, sizeof x->err, "out of memory");
        return;
    }
    field(f, x->labels[0]);
    for (int j = 0; j < x->cols; j++) {
        fputc(',', f);
        field(f, x->labels[1 + j]);
    }
    fputs("\r\n", f);
    for (int i = 0; i < x->rows; i++) {
        field(f, x->labels[1 + x->cols + i]);
        for (int j = 0; j < x->cols; j++) fprintf(f, ",%.9g", x->values[(size_t)i * x->cols + j]);
        fputs("\r\n", f);
    }
    bool failed = ferror(f) != 0;
    failed |= fclose(f) != 0;
    attn_error e;
    if (failed) snprintf(x->err, sizeof x->err, "out of memory");
    else if (attn_file_write_atomic(x->path, text, len, 0644, &e)) snprintf(x->err, sizeof x->err, "%s", e.msg);
    else x->rc = 0;
    free(text);
}

/* ---- the job */

static void *export_work(void *arg)
{
    export_job *x = arg;
    if (x->kind == APP_SAVE_CSV) write_csv(x);
    else write_vector(x);
    atomic_store(&x->done, true);
    return NULL;
}

static void export_free(export_job *x)
{
    if (x->have_list) draw_list_free(&x->list);
    export_cairo_runs_free(x->runs);
    for (int i = 0; i < x->n_copies; i++) free(x->copies[i]);
    free(x->copies);
    if (x->labels)
        for (int i = 0; i < 1 + x->rows + x->cols; i++) free(x->labels[i]);
    free(x->labels);
    free(x->values);
    free(x);
}

int export_start(const app_state *app, sdl_gfx *g, int w, int h, app_save_kind kind, const char *path, export_job **out,
                 char *err, size_t errsize)
{
    *out = NULL;
    export_job *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    x->kind = kind == APP_SAVE_CSV || kind == APP_SAVE_PDF ? kind : APP_SAVE_SVG;
    x->w = w;
    x->h = h;
    atomic_init(&x->done, false);
    if (snprintf(x->path, sizeof x->path, "%s", path) >= (int)sizeof x->path) {
        snprintf(err, errsize, "%.200s…: the path is longer than the %d bytes a path may have", path, PATH_MAX - 1);
        export_free(x);
        return -1;
    }
    if (x->kind == APP_SAVE_CSV ? prepare_csv(x, app) : prepare_vector(x, app, g)) {
        snprintf(err, errsize, "%s", x->err[0] ? x->err : "out of memory");
        export_free(x);
        return -1;
    }
    x->threaded = !pthread_create(&x->thread, NULL, export_work, x);
    if (!x->threaded) export_work(x); /* no thread to be had: written here */
    *out = x;
    return 0;
}

bool export_done(const export_job *x)
{
    return atomic_load(&x->done);
}

int export_end(export_job *x, char *err, size_t errsize)
{
    if (x->threaded) pthread_join(x->thread, NULL);
    int rc = x->rc;
    if (rc) snprintf(err, errsize, "%s", x->err);
    export_free(x);
    return rc;
}

int export_vector(const app_state *app, sdl_gfx *g, int w, int h, app_save_kind kind, const char *path, char *err,
                  size_t errsize)
{
    export_job *x;
    return export_start(app, g, w, h, kind, path, &x, err, errsize) ? -1 : export_end(x, err, errsize);
}

int export_csv(const app_state *app, const char *path, char *err, size_t errsize)
{
    export_job *x;
    return export_start(app, NULL, 0, 0, APP_SAVE_CSV, path, &x, err, errsize) ? -1 : export_end(x, err, errsize);
}
