/* window.c — the interactive window: events in, a frame out only when something changed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <SDL.h>

#include "app.h"
#include "engine/model/model.h"
#include "export.h"
#include "i18n.h"
#include "input_sdl.h"
#include "jobs_thread.h"
#include "offscreen.h"
#include "render.h"
#include "ui.h"

/* attnlab-weights-h0-1.png (or .svg, .pdf, .csv), the first number not yet
 * taken, in the current directory. */
static void save_name(const app_state *app, char *buf, size_t size)
{
    const attn_tensor *t = app_tensor(app);
    struct stat st;
    for (int n = 1; n < 10000; n++) {
        snprintf(buf, size, "attnlab-%s-h%d-%d.%s", t ? t->name : "frame", app->view.head, n,
                 export_extension(app->req.save_kind));
        if (stat(buf, &st) != 0) return;
    }
}

/* ---- s and S: the picture to a file, written on a thread of its own */

#define PROGRESS_FRAME_MS 250 /* while busy, the progress shown in a frame this often */

/* The file being written: a PNG (pixels read back here, since the renderer
 * is this thread's, then encoded on a thread) or an export (export.h). */
typedef struct {
    SDL_Thread *thread;   /* NULL: no PNG being written */
    SDL_Surface *pixels;
    export_job *export;   /* NULL: no SVG, PDF or CSV being written */
    char name[128];
    SDL_atomic_t done;
    int rc;
    char err[600];
} file_write;

static int png_work(void *arg)
{
    file_write *p = arg;
    p->rc = sdl_write_png(p->pixels, p->name, p->err, sizeof p->err);
    SDL_AtomicSet(&p->done, 1);
    return 0;
}

static bool saving(const file_write *p)
{
    return p->thread != NULL || p->export != NULL;
}

/* The file written, once it is (wait: waiting for it): the status line says
 * where, or why not. Returns whether it was taken in. */
static bool save_end(app_state *app, file_write *p, bool wait)
{
    if (p->export) {
        if (!wait && !export_done(p->export)) return false;
        p->rc = export_end(p->export, p->err, sizeof p->err);
        p->export = NULL;
    } else {
        if (!p->thread || (!wait && !SDL_AtomicGet(&p->done))) return false;
        SDL_WaitThread(p->thread, NULL);
        p->thread = NULL;
        SDL_FreeSurface(p->pixels);
        p->pixels = NULL;
    }
    if (p->rc) app_status(app, true, "%s", p->err);
    else app_status(app, false, _("saved %s"), p->name);
    return true;
}

static bool saved(app_state *app, file_write *p)
{
    return save_end(app, p, false);
}

static void saved_wait(app_state *app, file_write *p)
{
    save_end(app, p, true);
}

/* The PNG of the frame just drawn, on a thread (or here, with none to be had). */
static int save_png(file_write *p, sdl_gfx *g, char *err, size_t errsize)
{
    if (!(p->pixels = sdl_read_pixels(g->r))) {
        snprintf(err, errsize, "cannot read the picture back: %s", SDL_GetError());
        return -1;
    }
    SDL_AtomicSet(&p->done, 0);
    if ((p->thread = SDL_CreateThread(png_work, "attnlab-png", p))) return 0;
    png_work(p); /* no thread to be had: written here */
    SDL_FreeSurface(p->pixels);
    p->pixels = NULL;
    snprintf(err, errsize, "%s", p->err);
    return p->rc;
}

/* The frame just drawn, or its matrix, to a new file: the status line says
 * it is being written, then where (save_end), or at once why not. */
static void save(app_state *app, sdl_gfx *g, file_write *p)
{
    char err[600];
    int w, h, rc;
    save_name(app, p->name, sizeof p->name); /* one at a time (frame): the last is written */
    SDL_GetRendererOutputSize(g->r, &w, &h);
    app->req.save = false;
    if (app->req.save_kind == APP_SAVE_PNG) rc = save_png(p, g, err, sizeof err);
    else rc = export_start(app, g, w, h, app->req.save_kind, p->name, &p->export, err, sizeof err);
    if (rc) app_status(app, true, "%s", err);
    else if (saving(p)) app_status(app, false, _("saving %s …"), p->name);
    else app_status(app, false, _("saved %s"), p->name);
}

/* SDL's event pump: the window manager's ping answered (SDL answers it as it
 * reads events), the events kept for the loop. */
static void answer(void *ctx)
{
    (void)ctx;
    SDL_PumpEvents();
}

static void update_ratio(app_state *app, SDL_Window *win, SDL_Renderer *r)
{
    int ww, wh, dw, dh;
    SDL_GetWindowSize(win, &ww, &wh);
    SDL_GetRendererOutputSize(r, &dw, &dh);
    float ratio = ww > 0 ? (float)dw / ww : 1.0f;
    if (ratio != app->pixel_ratio) {
        app->pixel_ratio = ratio;
        app->dirty = true;
    }
}

static void frame(app_state *app, sdl_gfx *g, SDL_Window *win, char *title, size_t tsize, file_write *out)
{
    char t[256];
    sdl_render(app, g, &app->layout);
    if (app->req.save && !saving(out)) { /* else asked again while a file is written: saved after it */
        save(app, g, out);
        sdl_render(app, g, &app->layout); /* show the message */
    }
    sdl_gfx_answer(g);
    SDL_RenderPresent(g->r);
    app_title(app, t, sizeof t);
    if (strcmp(t, title)) {
        SDL_SetWindowTitle(win, t);
        snprintf(title, tsize, "%s", t);
    }
    if (app->edit.open) {
        app_rect r = app->layout.edit_rect;
        float k = app->pixel_ratio > 0 ? app->pixel_ratio : 1.0f;
        SDL_Rect pts = {(int)(r.x / k), (int)(r.y / k), (int)(r.w / k), (int)(r.h / k)};
        SDL_SetTextInputRect(&pts);
    }
}

/* What the app asked for after an event: the clipboard, text input, fullscreen. */
static void carry_out(app_state *app, SDL_Window *win, bool *fullscreen)
{
    if (app->req.paste) {
        char *clip = SDL_HasClipboardText() ? SDL_GetClipboardText() : NULL;
        app_paste(app, clip);
        SDL_free(clip);
    }
    bool text = app_wants_text(app);
    if (text != (bool)SDL_IsTextInputActive()) {
        if (text) SDL_StartTextInput();
        else SDL_StopTextInput();
    }
    if (app->req.fullscreen != *fullscreen) {
        *fullscreen = app->req.fullscreen;
        SDL_SetWindowFullscreen(win, *fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
        app->dirty = true;
    }
}

/* Whether r draws through a GL that is a software rasterizer (mesa's
 * llvmpipe or softpipe: Xvfb, a virtual machine, no GPU). That one draws a
 * whole frame inside SDL_RenderPresent, during which the window answers
 * nothing; SDL's own software renderer draws as the frame is built, where
 * the window answers as it goes (sdl_gfx_answer), and presents in a copy. */
static bool gl_without_gpu(SDL_Renderer *r)
{
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(r, &info) || strncmp(info.name, "opengl", 6)) return false;
    typedef const unsigned char *(*get_string_fn)(unsigned name);
    get_string_fn get;
    void *proc = SDL_GL_GetProcAddress("glGetString");
    if (!proc) return false;
    memcpy(&get, &proc, sizeof get);
    const char *name = (const char *)get(0x1F01 /* GL_RENDERER */);
    return name && (strstr(name, "llvmpipe") || strstr(name, "softpipe") || strstr(name, "Software Rasterizer"));
}

/* Whether SDL's accelerated renderer is a GL without a GPU, asked of a hidden
 * window of its own: finding out on the real window would make SDL recreate
 * it for the software renderer, and what was already sent to the old one
 * (going full screen) then fails with an X error that ends the program. */
static bool accelerated_is_software(void)
{
    if (getenv("SDL_RENDER_DRIVER")) return false; /* the user's choice stands */
    SDL_Window *probe = SDL_CreateWindow("attnlab", 0, 0, 1, 1, SDL_WINDOW_HIDDEN);
    SDL_Renderer *r = probe ? SDL_CreateRenderer(probe, -1, SDL_RENDERER_ACCELERATED) : NULL;
    bool software = r && gl_without_gpu(r);
    if (r) SDL_DestroyRenderer(r);
    if (probe) SDL_DestroyWindow(probe);
    return software;
}

#ifdef ATTNLAB_X11
#include <X11/Xlib.h>
#include <X11/Xproto.h>

static XErrorHandler x_default_handler;

/* SDL wakes its own wait by sending an event to the window over a second
 * connection to the X server. The last one, sent as q is read, may reach the
 * server after the window is gone; the server's BadWindow then arrives at
 * SDL_Quit, and Xlib's default handler ends the process with status 1.
 * That one error is harmless; every other goes to the default handler.
 * Installed before SDL_Init: SDL keeps the handler it finds (its own safety
 * net passes errors on to it) and puts it back at SDL_Quit, before it closes
 * the display, where the late error arrives. Installed after, it was the
 * default that SDL put back, and a window's quit sometimes ended in status 1. */
static int x_error(Display *d, XErrorEvent *e)
{
    if (e->error_code == BadWindow && e->request_code == X_SendEvent) return 0;
    return x_default_handler(d, e);
}

static void quiet_late_wakeups(void)
{
    if (!x_default_handler) x_default_handler = XSetErrorHandler(x_error);
}
#else
static void quiet_late_wakeups(void) {}
#endif

/* SDL's video, a window sized to the display and a renderer for it. Returns
 * 0, or -1 with a message (what was opened is left for the caller to close). */
static int open_window(SDL_Window **win, SDL_Renderer **r, char *err, size_t errsize)
{
    SDL_SetHint(SDL_HINT_IME_SHOW_UI, "1");
    /* no display to talk to: say so before SDL probes (and complains about) every driver.
     * These three stay English: tests/test_window_xvfb.py matches them, whatever the locale. */
    if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY") && !getenv("SDL_VIDEODRIVER")) {
        snprintf(err, errsize,
                 "no display (DISPLAY and WAYLAND_DISPLAY are not set) — to draw without one, use `attnlab render [config] -o FILE.png`");
        return -1;
    }
    quiet_late_wakeups();
    if (SDL_Init(SDL_INIT_VIDEO)) {
        snprintf(err, errsize,
                 "no display: %s — to draw without one, use `attnlab render [config] --stage NAME --head N -o FILE.png`",
                 SDL_GetError());
        return -1;
    }
    const char *drv = SDL_GetCurrentVideoDriver();
    if (drv && (!strcmp(drv, "offscreen") || !strcmp(drv, "dummy"))) {
        snprintf(err, errsize,
                 "no display: SDL's video driver is '%s' — to draw without one, use `attnlab render [config] -o FILE.png`",
                 drv);
        return -1;
    }
    int w = 1280, h = 800;
    SDL_Rect usable;
    if (SDL_GetDisplayUsableBounds(0, &usable) == 0) {
        if (w > usable.w - 40) w = usable.w - 40;
        if (h > usable.h - 60) h = usable.h - 60;
        if (w < 640) w = 640;
        if (h < 480) h = 480;
    }
    bool software = accelerated_is_software();
    /* then the window's pixels go to the display as they are (XShm), not
     * through that GL again (an environment variable still wins) */
    if (software) SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0");
    *win = SDL_CreateWindow("attnlab", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h,
                            SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI | SDL_WINDOW_HIDDEN);
    if (!*win) {
        snprintf(err, errsize, _("cannot open a window: %s (or use `attnlab render ... -o FILE.png`)"), SDL_GetError());
        return -1;
    }
    SDL_SetWindowMinimumSize(*win, 640, 400);
    if (!software) *r = SDL_CreateRenderer(*win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!*r) *r = SDL_CreateRenderer(*win, -1, SDL_RENDERER_SOFTWARE);
    if (!*r) {
        snprintf(err, errsize, _("cannot draw in the window: %s"), SDL_GetError());
        return -1;
    }
    return 0;
}

/* Opens the window on an initialised app and runs it until quit; frees app.
 * The loop's four beats: events into the app, the app's requests carried out,
 * a frame when something changed, present. */
/* The window as the loop keeps it between frames. */
typedef struct {
    SDL_Window *win;
    SDL_Renderer *r;
    sdl_gfx *g;
    char title[256];  /* the title last set */
    bool fullscreen;  /* as last set, following app->req.fullscreen */
    file_write out;   /* the file being written, if any */
} window;

/* No window: a lesson waiting to open is still read, so that its own
 * problem (FILE:LINE: message, exit 2) is said rather than the display's. */
static void read_pending_lesson(app_state *app, char *err, size_t errsize, int *exit_code)
{
    if (!app->opening.pending) return;
    app->async = false;
    app->opening.shown = true; /* no notice to wait for */
    for (int i = 0; i < 3 && app_poll(app) && !app->req.exit_code; i++) {} /* read, then computed here */
    if (app->req.exit_code) {
        snprintf(err, errsize, "%s", app->status);
        *exit_code = app->req.exit_code;
    }
}

/* The window shown once the fonts are loaded (no black window meanwhile),
 * and the first frame once it is on screen (at most 300 ms): it may say that
 * a lesson opens, and the window is busy reading it right after. */
static void show_first_frame(app_state *app, window *w)
{
    carry_out(app, w->win, &w->fullscreen); /* what was asked before the window existed (--present: fullscreen) */
    update_ratio(app, w->win, w->r);
    SDL_Event ev;
    SDL_ShowWindow(w->win);
    for (Uint32 until = SDL_GetTicks() + 300; !SDL_TICKS_PASSED(SDL_GetTicks(), until);) {
        if (!SDL_WaitEventTimeout(&ev, 20)) continue;
        sdl_input_event(app, &ev);
        if (ev.type == SDL_WINDOWEVENT && ev.window.event == SDL_WINDOWEVENT_EXPOSED) break;
    }
    carry_out(app, w->win, &w->fullscreen);
    frame(app, w->g, w->win, w->title, sizeof w->title, &w->out);
}

/* Events in, a frame out when something changed, until the app quits. */
static void event_loop(app_state *app, window *w)
{
    SDL_Event ev;
    Uint32 drawn = SDL_GetTicks();
    for (;;) {
        /* while the worker computes, wake every 50 ms to take its result, and
         * show its progress every PROGRESS_FRAME_MS: each frame is a picture
         * sent to the display server, during which the window answers nothing */
        bool busy = app_pending(app) || saving(&w->out); /* computing, opening, saving */
        bool got = busy ? SDL_WaitEventTimeout(&ev, 50) : SDL_WaitEvent(&ev);
        if (!got && !busy) break; /* SDL_WaitEvent failed */
        /* every pending event first, then at most one frame */
        while (got && !app->req.quit) {
            sdl_input_event(app, &ev);
            carry_out(app, w->win, &w->fullscreen);
            got = SDL_PollEvent(&ev);
        }
        if (app->req.quit) break;
        if (app_poll(app) || saved(app, &w->out)) app->dirty = true;
        if (busy && SDL_TICKS_PASSED(SDL_GetTicks(), drawn + PROGRESS_FRAME_MS)) app->dirty = true;
        if (app->req.quit) break; /* what was polled asked to end (a lesson that does not open) */
        update_ratio(app, w->win, w->r);
        if (app->dirty || (app->req.save && !saving(&w->out))) {
            frame(app, w->g, w->win, w->title, sizeof w->title, &w->out);
            drawn = SDL_GetTicks();
        }
    }
}

static int run(app_state *app, char *err, size_t errsize, int *exit_code)
{
    window w = {0};
    int rc = -1;
    *exit_code = 1;
    if (open_window(&w.win, &w.r, err, errsize) || sdl_gfx_open(w.r, DRAW_BASE_FONT_PX, &w.g, err, errsize)) {
        read_pending_lesson(app, err, errsize, exit_code);
        goto out;
    }
    SDL_StopTextInput(); /* keys are shortcuts until the token editor opens */
    w.g->answer = answer; /* a long frame answers pings as it goes */
    show_first_frame(app, &w);
    app->jobs = app->lesson.jobs = posix_jobs(); /* requests run on threads of their own */
    app->async = true; /* toggles recompute on a worker: the loop keeps drawing and answering */
    app->lesson.async_save = true; /* and progress is saved on a thread of its own */
    app->lesson.async_read = true; /* and the picker's list read on one */
    event_loop(app, &w);
    if (saving(&w.out)) SDL_HideWindow(w.win); /* gone at once; the file being written is finished first */
    saved_wait(app, &w.out);
    rc = 0;
    *exit_code = 0;
    if (app->req.exit_code) { /* ended on an error (a lesson that does not open): the caller prints it */
        snprintf(err, errsize, "%s", app->status);
        rc = -1;
        *exit_code = app->req.exit_code;
    }
out:
    sdl_gfx_close(w.g);
    if (w.r) SDL_DestroyRenderer(w.r);
    if (w.win) SDL_DestroyWindow(w.win);
    SDL_Quit();
    if (app->req.quit) app_leave(app); /* ending: no wait for the worker, no freeing (main ends with _exit) */
    else app_free(app);
    return rc;
}

int sdl_window_run(const attn_config *cfg, const char *path, int layer, bool present, char *err, size_t errsize,
                   int *exit_code)
{
    app_state app;
    app_i18n_init(NULL);
    /* a model opens in the window, its progress shown (reading its weights,
     * tracing its layers); what its config.json and tensors' shapes say
     * against it is said before, as by the other commands */
    attn_model_config mc;
    attn_error e;
    int st, layers = 0;
    const char *beyond = NULL; /* --layer past the last of it: a usage error, 2, before the window */
    if (path) st = app_init_file_with(&app, path, cfg, err, errsize);
    else if (!cfg->model) st = app_init(&app, cfg, err, errsize);
    else if ((st = (int)attn_model_check(cfg->model, &mc, &e))) snprintf(err, errsize, "%s", e.msg);
    else if (layer >= mc.layers) beyond = "the model", layers = mc.layers;
    else st = app_init_later(&app, cfg, layer, err, errsize);
    if (!st && (path || !cfg->model) && layer > 0 && app_set_layer(&app, layer)) {
        beyond = path ? "the trace" : "the configuration", layers = app.trace.n_layers;
        app_free(&app);
    }
    if (beyond) {
        snprintf(err, errsize, "--layer %d: %s has %d layer%s, 0 to %d", layer, beyond, layers, layers == 1 ? "" : "s",
                 layers - 1);
        st = ATTN_ERR_CONFIG;
    }
    if (st) {
        /* a model's bad file: 1, as the engine's commands say */
        *exit_code = beyond || (!path && st == ATTN_ERR_CONFIG) ? 2 : 1;
        return -1;
    }
    if (present) app_do(&app, APP_ACT_PRESENT, 0);
    return run(&app, err, errsize, exit_code);
}

int sdl_lesson_window(const char *path, int step, const char *lang, bool present)
{
    app_state app;
    attn_config cfg;
    char err[700];
    int code;
    lang = app_i18n_init(lang);
    attn_config_init(&cfg);
    int rc = app_init(&app, &cfg, err, sizeof err);
    attn_config_free(&cfg);
    if (rc) {
        fprintf(stderr, "attnlab: %s\n", err);
        return 2;
    }
    app_player_init(&app.lesson, lang, NULL);
    app.jobs = app.lesson.jobs = posix_jobs();
    app.async = true; /* the lesson is read and its step computed in the window, under an "opening" notice */
    app.opening.fail_exit = 2; /* a lesson with problems: the window closes and the message goes to stderr */
    if (path ? app_lesson_open(&app, path, step, err, sizeof err) : app_lesson_picker(&app)) {
        if (!path) snprintf(err, sizeof err, "%s", app.status);
        fprintf(stderr, "attnlab lesson%s: %s\n", path ? "" : "s", err);
        app_free(&app);
        return path ? 2 : 1;
    }
    if (present) app_do(&app, APP_ACT_PRESENT, 0);
    if (run(&app, err, sizeof err, &code)) fprintf(stderr, "attnlab lesson%s: %s\n", path ? "" : "s", err);
    return code;
}
