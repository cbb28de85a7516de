/* offscreen.c — drawing without a display: `attnlab render` and `attnlab bench`. */
#include "offscreen.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <SDL_image.h>

#include "engine/base/clock.h"
#include "engine/base/fileio.h"
#include "engine/trace/nonfinite.h"
#include "export.h"
#include "i18n.h"
#include "jobs_thread.h"
#include "render.h"

int sdl_offscreen_open(sdl_offscreen *o, int w, int h, char *err, size_t errsize)
{
    memset(o, 0, sizeof *o);
    SDL_SetHint(SDL_HINT_VIDEODRIVER, "offscreen");
    /* the software renderer draws straight into the window's surface: no GL
     * or EGL library is loaded to back it */
    SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    /* SDL's SIGINT/SIGTERM handlers only post a quit event, which no one here
     * reads: the picture was drawn to the end and exit 0. Without them the
     * signal ends the process, and a file being written goes with it (fileio.h). */
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
    if (SDL_InitSubSystem(SDL_INIT_VIDEO)) {
        snprintf(err, errsize, "cannot start SDL's offscreen video driver: %s", SDL_GetError());
        return -1;
    }
    o->win = SDL_CreateWindow("attnlab", 0, 0, w, h, SDL_WINDOW_HIDDEN);
    if (o->win) o->r = SDL_CreateRenderer(o->win, -1, SDL_RENDERER_SOFTWARE);
    if (!o->win || !o->r) {
        snprintf(err, errsize, "cannot create an offscreen %d×%d picture: %s", w, h, SDL_GetError());
        sdl_offscreen_close(o);
        return -1;
    }
    if (sdl_gfx_open(o->r, DRAW_BASE_FONT_PX, &o->g, err, errsize)) {
        sdl_offscreen_close(o);
        return -1;
    }
    return 0;
}

void sdl_offscreen_close(sdl_offscreen *o)
{
    sdl_gfx_close(o->g);
    if (o->r) SDL_DestroyRenderer(o->r);
    if (o->win) SDL_DestroyWindow(o->win);
    SDL_QuitSubSystem(SDL_INIT_VIDEO);
    memset(o, 0, sizeof *o);
}

SDL_Surface *sdl_read_pixels(SDL_Renderer *r)
{
    int w, h;
    SDL_GetRendererOutputSize(r, &w, &h);
    SDL_Surface *s = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    if (!s) return NULL;
    if (SDL_RenderReadPixels(r, NULL, SDL_PIXELFORMAT_ARGB8888, s->pixels, s->pitch)) {
        SDL_FreeSurface(s);
        return NULL;
    }
    return s;
}

int sdl_save_png(SDL_Renderer *r, const char *path, char *err, size_t errsize)
{
    SDL_Surface *s = sdl_read_pixels(r);
    if (!s) {
        snprintf(err, errsize, "cannot read the picture back: %s", SDL_GetError());
        return -1;
    }
    int rc = sdl_write_png(s, path, err, errsize);
    SDL_FreeSurface(s);
    return rc;
}

/* SDL_image's PNG bytes streamed into the one writer (fileio.h), whose
 * failures SDL_image may not check: the first one is kept. */
typedef struct {
    attn_file_out out;
    attn_status st;
    attn_error err;
    Sint64 pos;
} png_sink;

static size_t sink_write(SDL_RWops *rw, const void *p, size_t size, size_t num)
{
    png_sink *k = rw->hidden.unknown.data1;
    if (k->st || (num && size > SIZE_MAX / num)) return 0;
    if ((k->st = attn_file_out_write(&k->out, p, size * num, &k->err))) {
        SDL_SetError("%s", k->err.msg);
        return 0;
    }
    k->pos += (Sint64)(size * num);
    return num;
}

static Sint64 sink_seek(SDL_RWops *rw, Sint64 offset, int whence)
{
    png_sink *k = rw->hidden.unknown.data1;
    if (whence == RW_SEEK_CUR && offset == 0) return k->pos; /* SDL_RWtell */
    return SDL_SetError("a PNG being written cannot seek");
}

static Sint64 sink_size(SDL_RWops *rw)
{
    (void)rw;
    return -1;
}

static size_t sink_read(SDL_RWops *rw, void *p, size_t size, size_t num)
{
    (void)rw, (void)p, (void)size, (void)num;
    SDL_SetError("a PNG being written cannot be read");
    return 0;
}

static int sink_close(SDL_RWops *rw)
{
    (void)rw;
    return 0;
}

int sdl_write_png(SDL_Surface *s, const char *path, char *err, size_t errsize)
{
    png_sink k = {.st = ATTN_OK};
    SDL_RWops rw = {.size = sink_size, .seek = sink_seek, .read = sink_read, .write = sink_write,
                    .close = sink_close, .type = SDL_RWOPS_UNKNOWN};
    rw.hidden.unknown.data1 = &k;
    if ((k.st = attn_file_out_begin(&k.out, path, 0644, &k.err))) {
        snprintf(err, errsize, "%s", k.err.msg);
        return -1;
    }
    if (IMG_SavePNG_RW(s, &rw, 0) && !k.st) {
        attn_file_out_abort(&k.out);
        snprintf(err, errsize, "%s: cannot write: %s", path, IMG_GetError());
        return -1;
    }
    if (!k.st) k.st = attn_file_out_commit(&k.out, &k.err);
    if (k.st) {
        attn_file_out_abort(&k.out);
        snprintf(err, errsize, "%s", k.err.msg);
        return -1;
    }
    return 0;
}

static int open_app(app_state *app, const attn_config *cfg, const char *path, const app_picture *p, char *err,
                    size_t errsize, int *exit_code)
{
    int st = path ? app_init_file_with(app, path, cfg, err, errsize)
                  : app_init_watched(app, cfg, p->watch, err, errsize);
    if (st) {
        *exit_code = path || st != ATTN_ERR_CONFIG ? 1 : 2; /* a model's bad file: 1, as the engine's commands say */
        return -1;
    }
    return 0;
}

int sdl_render_png(const attn_config *cfg, const char *path, const app_picture *p, const char *out, char *err,
                   size_t errsize, int *exit_code)
{
    app_state app;
    sdl_offscreen o;
    int w = p->width ? p->width : 1280, h = p->height ? p->height : 800;
    app_save_kind kind = export_kind_of(out);
    if (kind == APP_SAVE_KINDS) { /* refused before anything is computed, rather than a PNG under another name */
        const char *slash = strrchr(out, '/'), *dot = strrchr(slash ? slash : out, '.');
        snprintf(err, errsize, "%s: %s%s%s: name the file .png, .svg, .pdf or .csv", out,
                 dot ? "cannot write a '" : "no extension to say which format to write", dot ? dot : "",
                 dot ? "' file" : "");
        *exit_code = 2;
        return -1;
    }
    const char *lang = app_i18n_init(p->lang);
    if (open_app(&app, cfg, path, p, err, errsize, exit_code)) return -1;
    int rc = app_picture_open(&app, p, lang, err, errsize);
    if (rc) {
        *exit_code = rc;
        app_free(&app);
        return -1;
    }
    attn_nonfinite nf; /* the picture is drawn, and the caller told where its NaN began */
    char warning[300] = "";
    if (attn_nonfinite_find(&app.trace, &nf)) attn_nonfinite_text(&app.trace, &nf, warning, sizeof warning);
    int s = p->scale > 0 && kind == APP_SAVE_PNG ? p->scale : 1; /* HiDPI: the layout in points, drawn s times finer */
    app.pixel_ratio = (float)s;
    if (sdl_offscreen_open(&o, w * s, h * s, err, errsize)) {
        *exit_code = 1;
        app_free(&app);
        return -1;
    }
    if (kind == APP_SAVE_CSV) {
        rc = export_csv(&app, out, err, errsize);
    } else if (kind != APP_SAVE_PNG) {
        rc = export_vector(&app, o.g, w, h, kind, out, err, errsize);
    } else {
        sdl_render(&app, o.g, &app.layout);
        rc = sdl_save_png(o.r, out, err, errsize);
    }
    if (rc) *exit_code = 1;
    else snprintf(err, errsize, "%s", warning);
    sdl_offscreen_close(&o);
    app_free(&app);
    return rc;
}

/* Toggles the causal mask n times on the worker, drawing frames all the while
 * as the window does: the longest time between two frames, in ms. */
static double worker_gap(app_state *app, sdl_gfx *g, int n)
{
    double worst = 0;
    app->jobs = posix_jobs();
    app->async = true;
    for (int i = 0; i < n; i++) {
        double last = attn_clock_ms();
        app_do(app, APP_ACT_CAUSAL, 0);
        for (bool busy = true; busy;) {
            busy = app_busy(app, NULL, NULL, NULL);
            app_poll(app);
            sdl_render(app, g, &app->layout);
            SDL_RenderPresent(g->r);
            double now = attn_clock_ms();
            worst = fmax(worst, now - last);
            last = now;
        }
    }
    app->async = false;
    return worst;
}

int sdl_bench(const attn_config *cfg, const app_picture *p, int frames, char *err, size_t errsize, int *exit_code)
{
    app_state app;
    sdl_offscreen o;
    int w = p->width ? p->width : 1280, h = p->height ? p->height : 800;
    if (open_app(&app, cfg, NULL, p, err, errsize, exit_code)) return -1;
    int rc = app_picture_apply(&app, p, err, errsize);
    if (rc) {
        *exit_code = rc;
        app_free(&app);
        return -1;
    }
    if (sdl_offscreen_open(&o, w, h, err, errsize)) {
        *exit_code = 1;
        app_free(&app);
        return -1;
    }
    double *full = calloc((size_t)frames, sizeof *full), *change = calloc((size_t)frames, sizeof *change);
    if (!full || !change) {
        snprintf(err, errsize, "out of memory");
        *exit_code = 1;
        free(full);
        free(change);
        sdl_offscreen_close(&o);
        app_free(&app);
        return -1;
    }
    sdl_render(&app, o.g, &app.layout); /* warm-up: glyphs and textures */
    SDL_RenderPresent(o.r);
    /* a config change: toggle the causal mask, recompute, redraw */
    for (int i = 0; i < frames; i++) {
        double t0 = attn_clock_ms();
        app_do(&app, APP_ACT_CAUSAL, 0);
        sdl_render(&app, o.g, &app.layout);
        SDL_RenderPresent(o.r);
        change[i] = attn_clock_ms() - t0;
    }
    if (app.cfg.causal != cfg->causal) app_do(&app, APP_ACT_CAUSAL, 0);
    /* a full redraw: every heatmap repainted from the trace */
    for (int i = 0; i < frames; i++) {
        double t0 = attn_clock_ms();
        sdl_gfx_invalidate(o.g);
        sdl_render(&app, o.g, &app.layout);
        SDL_RenderPresent(o.r);
        full[i] = attn_clock_ms() - t0;
    }
    double gap = worker_gap(&app, o.g, frames);
    const attn_dims *d = &app.trace.dims;
    printf("picture: %d×%d, %s view of %s, b=%d s=%d t=%d h=%d g=%d, software renderer\n", w, h,
           lesson_view_names[p->view.mode], app_tensor(&app)->name, d->b, d->s, d->t, d->h, d->g);
    printf("config change (toggle causal, recompute, redraw): %.2f ms (median of %d)\n", attn_median(change, frames),
           frames);
    printf("toggle on the worker (as the window does): longest gap between frames %.1f ms (worst of %d toggles)\n",
           gap, frames);
    /* quitting while the worker recomputes: the window frees the app */
    app.jobs = posix_jobs();
    app.async = true;
    app_do(&app, APP_ACT_CAUSAL, 0);
    nanosleep(&(struct timespec){0, 20 * 1000000}, NULL);
    bool busy = app_busy(&app, NULL, NULL, NULL);
    double t0 = attn_clock_ms();
    sdl_offscreen_close(&o);
    app_free(&app);
    printf("quit during a recomputation: %.1f ms%s\n", attn_clock_ms() - t0,
           !busy ? " (it had already finished)" : app_job_abandoned() ? " (the worker left to the process's end)" : "");
    printf("render: %.2f ms per frame (median)\n", attn_median(full, frames));
    free(full);
    free(change);
    return 0;
}
