/* main_web.c — the web page's backend: the same app core as the desktop,
 * driven from JavaScript (canvas.js), its frames handed over as a flat buffer.
 *
 * The four beats of the desktop's loop, split between the two sides:
 *   events   canvas.js calls web_key, web_mouse_*, web_touch_*, web_wheel, web_text;
 *   build    web_frame lays the frame out (draw_frame) into a command list;
 *   draw     web_frame flattens the list into WEB_REC words a command, which
 *            canvas.js walks and draws on a <canvas>;
 *   present  the browser does.
 * Text is measured by the canvas too (js_text_width, js_line_height), so the
 * layout C computes and the glyphs JS draws agree.
 *
 * A record (int32 words; WEB_REC of them, unused ones 0):
 *   [0] kind (draw_cmd_kind, or WEB_CMD_IMAGE)  [1..4] x, y, w, h  [5] ARGB colour
 *   frame, line: [6] thickness
 *   text:        [6] address of its UTF-8  [7] px  [8] bold  [9] turned
 *   image:       [6] address of w × h RGBA pixels  [7] serial: the same serial, the same pixels
 *   poly:        [6] n  [8..15] x0, y0, … x3, y3 as float32
 * Heatmaps and free-standing hatches become images, painted here by
 * paint_heatmap as on the desktop; a heatmap's pixels are kept while its
 * trace generation, slice, scale and size stay the same.
 *
 * The job service (jobs.h) has two builds. The threaded one (ATTNLAB_WEB_THREADS,
 * attnlab-mt.js, loaded when the page is cross-origin isolated) is the
 * desktop's: each request on a pthread, a Web Worker of emscripten's pool,
 * while the page's thread only draws and takes results in; the core joins a
 * request only once its done flag is set, so the page's thread never waits
 * on one. A worker's file calls are carried out by the page's thread
 * (emscripten proxies them), between its frames. The single-threaded one
 * runs each request later on the page's one thread, a piece per web_poll
 * (src/app/jobs_pieces.c): a key that opens a lesson or a model returns at
 * once, the frame saying so is drawn, and then the work comes in pieces (a
 * lesson: its file, then a step checked a piece).
 * A shipped model's weights, tokenizer and checkpoints are not in the page's
 * data: the app core asks the fetcher (fetch.h, model_want) before it opens a
 * model, and canvas.js downloads them into the memory file system meanwhile.
 * The lesson progress file lives in the page's memory file system, which
 * canvas.js copies to and from localStorage. */
#include <ctype.h>
#include <dirent.h>
#include <emscripten.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "draw.h"
#include "engine/base/clock.h"
#include "engine/run/forward.h"
#include "engine/trace/arena.h"
#include "fetch.h"
#include "i18n.h"
#include "jobs.h"
#include "lesson/catalog.h"
#include "paint.h"
#include "render.h"
#ifdef ATTNLAB_WEB_THREADS
#include <emscripten/threading.h>
#include <stdatomic.h>

#include "jobs_thread.h"
#else
#include "jobs_pieces.h"
#endif

/* app_impl.h's (the app core's inside): o's step, given the names to step
 * through. Declared here rather than that header included; the app core
 * could offer it publicly as "open this model". */
int app_next_model_in(struct app_state *app, const char *const *names, int n);

#define WEB_REC 16
#define WEB_CMD_IMAGE 100
#define WEB_IMAGES 8      /* heatmap pictures kept from frame to frame */
#define WEB_PROGRESS_MS 250 /* while the app works, a frame this often */

EM_JS(int, js_text_width, (const char *utf8, int px, int bold),
      { return Module.attnTextWidth(UTF8ToString(utf8), px, bold); });
EM_JS(int, js_line_height, (int px), { return Module.attnLineHeight(px); });

/* ---- shipped models' files, downloaded by canvas.js when the app first opens one (fetch.h) */

EM_JS(int, js_model_want, (const char *name, int checkpoints),
      { return Module.attnModelWant(UTF8ToString(name), !!checkpoints); });
EM_JS(double, js_model_bytes, (int total), { return Module.attnModelBytes(total); });
EM_JS(void, js_model_why, (char *buf, int size), { stringToUTF8(Module.attnModelWhy(), buf, size); });

static app_fetch_state model_want(void *ctx, const char *name, bool checkpoints, app_fetch_progress *p)
{
    (void)ctx;
    int st = js_model_want(name, checkpoints);
    p->done = js_model_bytes(0);
    p->total = js_model_bytes(1);
    if (st == APP_FETCH_FAILED) js_model_why(p->why, (int)sizeof p->why);
    return st == APP_FETCH_COMING || st == APP_FETCH_FAILED ? (app_fetch_state)st : APP_FETCH_HERE;
}

#ifdef ATTNLAB_WEB_THREADS
/* ---- the job service: the desktop's, a pthread (a Worker) a request, counted */

static atomic_int off_thread; /* requests that ran on a worker, not the page's thread */
static int on_page;           /* requests the core ran itself: no Worker was free */

typedef struct {
    app_task_fn *fn;
    void *arg;
} job_call;

static bool job_counted(void *arg)
{
    job_call c = *(job_call *)arg;
    free(arg);
    if (!emscripten_is_main_runtime_thread()) atomic_fetch_add(&off_thread, 1);
    app_task_finish(c.fn, c.arg);
    return false;
}

static app_task *job_start(app_task_fn *fn, void *arg)
{
    job_call *c = malloc(sizeof *c);
    if (!c) return NULL;
    *c = (job_call){fn, arg};
    app_task *t = posix_jobs()->start(job_counted, c);
    if (!t) free(c), on_page++; /* no Worker free: the core runs fn here and now */
    return t;
}

static void job_join(app_task *t) { posix_jobs()->join(t); }
static void job_leave(app_task *t) { posix_jobs()->leave(t); }

static const app_jobs *web_jobs(void)
{
    static const app_jobs jobs = {job_start, job_join, job_leave};
    return &jobs;
}

static bool job_next(void) { return false; }
static bool job_queued(void) { return false; }

/* For the test (tests/web): how many requests ran off the page's thread (page: 0), or on it for want
 * of a free Worker (page: 1); -1: the single-threaded build. */
EMSCRIPTEN_KEEPALIVE int web_worker_jobs(int page) { return page ? on_page : atomic_load(&off_thread); }
#else
/* ---- the job service: requests run later, a piece per web_poll, on this thread */

static const app_jobs *web_jobs(void) { return app_jobs_pieces(); }
static bool job_next(void) { return app_jobs_pieces_next(); }
static bool job_queued(void) { return app_jobs_pieces_queued(); }

EMSCRIPTEN_KEEPALIVE int web_worker_jobs(int page) { return (void)page, -1; }
#endif

/* One painted picture (RGBA, as canvas ImageData wants) and what it shows. */
typedef struct {
    uint8_t *px;          /* w × h × 4 bytes */
    int w, h, gap;
    unsigned generation;
    app_slice slice;
    app_scale scale;
    int serial;           /* 0: empty */
    int used;             /* the frame that last drew it */
} web_image;

static struct {
    app_state app;
    draw_list list;
    bool ready;
    int w, h;             /* the canvas in device pixels */
    int32_t *out;         /* [0] records, then WEB_REC words each */
    int out_cap;          /* records */
    web_image images[WEB_IMAGES];
    uint8_t **hatches;    /* this frame's hatch pictures, freed at the next */
    int n_hatches, hatch_cap;
    int frame, serial;
    double drawn_ms;      /* when the last frame was laid out */
} web;

static int text_width(void *ctx, const char *s, int px)
{
    (void)ctx;
    return js_text_width(s, px, 0);
}

static int bold_width(void *ctx, const char *s, int px)
{
    (void)ctx;
    return js_text_width(s, px, 1);
}

static int line_height(void *ctx, int px)
{
    (void)ctx;
    return js_line_height(px);
}

/* ARGB words (paint_heatmap's) to the RGBA bytes of canvas ImageData, in place. */
static void to_rgba(uint32_t *px, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t c = px[i]; /* 0xAARRGGBB; in memory (little-endian) R must come first */
        px[i] = (c & 0xFF00FF00u) | ((c >> 16) & 0xFFu) | ((c & 0xFFu) << 16);
    }
}

static bool image_same(const web_image *im, const draw_cmd *c)
{
    return im->serial && im->generation == c->heat.generation && im->w == c->r.w && im->h == c->r.h &&
           im->gap == c->heat.gap && app_slice_same(&im->slice, &c->heat.slice) &&
           !memcmp(&im->scale, &c->heat.scale, sizeof im->scale);
}

/* The picture of heatmap command c: kept from an earlier frame, else painted
 * into the slot drawn longest ago. NULL when out of memory. */
static const web_image *heat_image(const draw_cmd *c)
{
    web_image *slot = &web.images[0];
    for (int i = 0; i < WEB_IMAGES; i++) {
        web_image *im = &web.images[i];
        if (image_same(im, c)) {
            im->used = web.frame;
            return im;
        }
        if (im->used < slot->used) slot = im;
    }
    size_t n = (size_t)c->r.w * (size_t)c->r.h;
    uint8_t *px = realloc(slot->px, n * 4);
    if (!px) return NULL;
    memset(px, 0, n * 4);
    paint_heatmap(&c->heat.slice, &c->heat.scale, (uint32_t *)px, c->r.w, c->r.w, c->r.h, c->heat.gap);
    to_rgba((uint32_t *)px, n);
    *slot = (web_image){.px = px, .w = c->r.w, .h = c->r.h, .gap = c->heat.gap, .generation = c->heat.generation,
                        .slice = c->heat.slice, .scale = c->heat.scale, .serial = ++web.serial, .used = web.frame};
    return slot;
}

/* A hatched swatch's pixels for this frame only. NULL when out of memory. */
static const uint8_t *hatch_image(const draw_cmd *c)
{
    if (web.n_hatches == web.hatch_cap) {
        int cap = web.hatch_cap ? 2 * web.hatch_cap : 16;
        uint8_t **h = realloc(web.hatches, (size_t)cap * sizeof *h);
        if (!h) return NULL;
        web.hatches = h;
        web.hatch_cap = cap;
    }
    size_t n = (size_t)c->r.w * (size_t)c->r.h;
    uint8_t *px = malloc(n * 4);
    if (!px) return NULL;
    paint_hatch((uint32_t *)px, c->r.w, c->r.w, c->r.h,
                (c->r.x - c->hatch.ox) + (c->r.y - c->hatch.oy));
    to_rgba((uint32_t *)px, n);
    web.hatches[web.n_hatches++] = px;
    return px;
}

/* Fills record o from command c; false when c draws nothing here. */
static bool flatten(const draw_cmd *c, int32_t *o)
{
    memset(o, 0, WEB_REC * sizeof *o);
    o[0] = (int32_t)c->kind;
    o[1] = c->r.x, o[2] = c->r.y, o[3] = c->r.w, o[4] = c->r.h;
    o[5] = (int32_t)c->color;
    switch (c->kind) {
    case DRAW_CMD_FRAME:
    case DRAW_CMD_LINE: o[6] = c->t; return true;
    case DRAW_CMD_TEXT:
        o[6] = (int32_t)(uintptr_t)draw_cmd_text(&web.list, c);
        o[7] = c->text.px, o[8] = c->text.bold, o[9] = c->text.turned;
        return true;
    case DRAW_CMD_POLY:
        o[6] = c->poly.n;
        for (int i = 0; i < c->poly.n && i < 4; i++) {
            memcpy(&o[8 + 2 * i], &c->poly.x[i], sizeof(float));
            memcpy(&o[9 + 2 * i], &c->poly.y[i], sizeof(float));
        }
        return true;
    case DRAW_CMD_HEATMAP: {
        if (c->r.w <= 0 || c->r.h <= 0) return false;
        const web_image *im = heat_image(c);
        if (!im) return false;
        o[0] = WEB_CMD_IMAGE, o[6] = (int32_t)(uintptr_t)im->px, o[7] = im->serial;
        return true;
    }
    case DRAW_CMD_HATCH: {
        /* a masked cell's hatch is in its heatmap's picture already */
        if (c->hatch.in_image || c->r.w <= 0 || c->r.h <= 0) return false;
        const uint8_t *px = hatch_image(c);
        if (!px) return false;
        o[0] = WEB_CMD_IMAGE, o[6] = (int32_t)(uintptr_t)px, o[7] = 0; /* 0: not kept */
        return true;
    }
    default: return true;
    }
}

/* ---- the calls canvas.js makes */

/* Opens the built-in example on a w × h canvas (device pixels, dpr of them a
 * CSS pixel), the interface in lang ("en" or "zh"). Data folders are those
 * the page preloads. Returns 0, or -1 with the reason on stderr (the console). */
EMSCRIPTEN_KEEPALIVE int web_init(int w, int h, float dpr, const char *lang)
{
    setenv("ATTNLAB_MODELS", "/attnlab/models", 1);
    setenv("ATTNLAB_LESSONS", "/attnlab/lessons", 1);
    setenv("ATTNLAB_LOCALEDIR", "/attnlab/locale", 1);
    setenv("XDG_STATE_HOME", "/state", 1); /* progress: /state/attnlab/progress.json */
    /* musl's gettext takes the catalog's name from LC_MESSAGES alone (LANGUAGE is glibc's) */
    setenv("LC_MESSAGES", lang && !strcmp(lang, "zh") ? "zh_CN.UTF-8" : "en.UTF-8", 1);
    lang = app_i18n_init(lang);
    attn_config cfg;
    attn_config_init(&cfg);
    char err[700];
    int rc = app_init(&web.app, &cfg, err, sizeof err);
    attn_config_free(&cfg);
    if (rc) {
        fprintf(stderr, "attnlab: %s\n", err);
        return -1;
    }
    app_player_init(&web.app.lesson, lang, NULL);
    /* as the window: recomputations, lesson reads and progress saves go to the job service */
    web.app.jobs = web.app.lesson.jobs = web_jobs();
    static const app_fetcher fetcher = {model_want, NULL};
    web.app.fetch = &fetcher; /* a shipped model's weights come when it is first opened */
    web.app.async = true;
    web.app.lesson.async_save = true;
    web.app.lesson.async_read = true;
    web.app.pixel_ratio = dpr > 0 ? dpr : 1.0f;
    web.app.web = true; /* the help leaves out the desktop's keys and flags */
    web.w = w, web.h = h;
    draw_list_init(&web.list, (draw_text_measure){.text_width = text_width, .line_height = line_height,
                                              .bold_width = bold_width});
    web.ready = true;
    return 0;
}

EMSCRIPTEN_KEEPALIVE void web_resize(int w, int h, float dpr)
{
    web.w = w, web.h = h;
    web.app.pixel_ratio = dpr > 0 ? dpr : 1.0f;
    app_exposed(&web.app);
    web.app.dirty = true;
}

/* The app's turn between frames. Bit 1: a frame is wanted (the app changed, or
 * finished something it was doing; while it works, its progress every
 * WEB_PROGRESS_MS, as the desktop's window shows it: a frame at every
 * animation frame would take a core from the worker). Bit 2: it has work
 * under way. */
EMSCRIPTEN_KEEPALIVE int web_poll(void)
{
    if (!web.ready) return 0;
    bool ran = job_next();
    bool changed = app_poll(&web.app);
    bool working = app_pending(&web.app) || job_queued();
    bool progress = working && attn_clock_ms() - web.drawn_ms >= WEB_PROGRESS_MS;
    return (ran || changed || web.app.dirty || progress ? 1 : 0) | (working ? 2 : 0);
}

/* The frame as records (see the banner): [0] their count, then the records. */
EMSCRIPTEN_KEEPALIVE const int32_t *web_frame(void)
{
    if (!web.ready) return NULL;
    for (int i = 0; i < web.n_hatches; i++) free(web.hatches[i]);
    web.n_hatches = 0;
    web.frame++;
    web.drawn_ms = attn_clock_ms();
    draw_frame(&web.app, &web.list, &web.app.layout, web.w, web.h);
    if (web.list.n + 1 > web.out_cap) {
        int32_t *o = realloc(web.out, ((size_t)web.list.n + 1) * WEB_REC * sizeof *o);
        if (!o) return NULL;
        web.out = o;
        web.out_cap = web.list.n + 1;
    }
    int n = 0;
    for (const draw_cmd *c = NULL; (c = draw_list_next(&web.list, c));)
        if (flatten(c, web.out + WEB_REC * (1 + n))) n++;
    web.out[0] = n;
    draw_commit(&web.app, &web.app.layout);
    return web.out;
}

EMSCRIPTEN_KEEPALIVE int web_rec_words(void) { return WEB_REC; }

EMSCRIPTEN_KEEPALIVE const char *web_title(void)
{
    static char t[256];
    return web.ready ? app_title(&web.app, t, sizeof t) : "attnlab";
}

EMSCRIPTEN_KEEPALIVE int web_key(int key, int mods) { return web.ready && app_key(&web.app, key, mods); }
EMSCRIPTEN_KEEPALIVE int web_text(const char *utf8) { return web.ready && app_text(&web.app, utf8); }
EMSCRIPTEN_KEEPALIVE int web_lesson_open(void) { return web.ready && web.app.lesson.open; }
EMSCRIPTEN_KEEPALIVE int web_picker_open(void) { return web.ready && web.app.lesson.picker; }
EMSCRIPTEN_KEEPALIVE int web_wants_text(void) { return web.ready && app_wants_text(&web.app); }
EMSCRIPTEN_KEEPALIVE int web_mouse_move(int x, int y) { return web.ready && app_mouse_move(&web.app, x, y); }
EMSCRIPTEN_KEEPALIVE int web_mouse_drag(int x, int y) { return web.ready && app_mouse_drag(&web.app, x, y); }
EMSCRIPTEN_KEEPALIVE int web_mouse_down(int x, int y) { return web.ready && app_mouse_down(&web.app, x, y); }
EMSCRIPTEN_KEEPALIVE int web_mouse_up(void) { return web.ready && app_mouse_up(&web.app); }
EMSCRIPTEN_KEEPALIVE int web_mouse_leave(void) { return web.ready && app_mouse_leave(&web.app); }
EMSCRIPTEN_KEEPALIVE int web_wheel(int dy) { return web.ready && app_wheel(&web.app, dy); }
EMSCRIPTEN_KEEPALIVE int web_touch_down(int x, int y) { return web.ready && app_touch_down(&web.app, x, y); }
EMSCRIPTEN_KEEPALIVE int web_touch_move(int x, int y) { return web.ready && app_touch_move(&web.app, x, y); }
EMSCRIPTEN_KEEPALIVE int web_touch_up(void) { return web.ready && app_touch_up(&web.app); }
EMSCRIPTEN_KEEPALIVE int web_touch_cancel(void) { return web.ready && app_touch_cancel(&web.app); }

/* Opens the model folder `name` under /attnlab/models, as o opens the next
 * shipped one: canvas.js has written a student's own model there (its file
 * picker). Returns 0, or -1 with the status line saying why. */
EMSCRIPTEN_KEEPALIVE int web_open_model(const char *name)
{
    if (!web.ready) return -1;
    int rc = app_next_model_in(&web.app, &name, 1);
    web.app.dirty = true;
    return rc;
}

/* ---- links to a lesson's step (?lesson=07&step=3: canvas.js) */

/* The course lesson `want` names, into path: its number ("7", "07") or its
 * file name ("07-rope", "07-rope.md"). false when none does. */
static bool find_lesson(const char *want, char *path, size_t size)
{
    char dir[PATH_MAX];
    if (!want || !*want || !lesson_catalog_dir(web.app.lesson.lang, dir, sizeof dir)) return false;
    bool number = true;
    for (const char *c = want; *c; c++) number = number && isdigit((unsigned char)*c);
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    for (struct dirent *e; !found && (e = readdir(d));) {
        const char *n = e->d_name;
        size_t len = strlen(n);
        if (len < 4 || strcmp(n + len - 3, ".md") || !strcmp(n, "README.md")) continue;
        if (number) found = strlen(want) < 9 && isdigit((unsigned char)n[0]) && atol(n) == atol(want); /* short: no overflow */
        else found = !strcmp(n, want) || (strlen(want) == len - 3 && !strncmp(n, want, len - 3));
        if (found) found = snprintf(path, size, "%s/%s", dir, n) < (int)size;
    }
    closedir(d);
    return found;
}

/* Opens lesson `want` (find_lesson's names) at step `at` (the link's text: a
 * number from 1, as the panel counts; NULL or "": the first), as `attnlab
 * lesson --step N FILE` does: a frame says so, then the lesson is read. A link
 * that names no lesson, or a step the lesson does not have, leaves the page as
 * it is and says so on the status line. Returns 0, or -1. */
EMSCRIPTEN_KEEPALIVE int web_open_lesson(const char *want, const char *at)
{
    if (!web.ready) return -1;
    char path[PATH_MAX], err[600];
    long step = at && *at ? 0 : 1;
    if (at && *at && strspn(at, "0123456789") == strlen(at) && strlen(at) < 7) step = atol(at);
    web.app.dirty = true;
    if (!find_lesson(want, path, sizeof path)) {
        /* TRANSLATORS: a link to a lesson (?lesson=…) that names none; %s: what it named */
        app_status(&web.app, true, _("This link names no lesson (\"%.40s\"): l opens the list of lessons."),
                   want ? want : "");
        return -1;
    }
    lesson ls;
    lesson_diags dg = {0};
    lesson_load(path, &ls, &dg); /* its steps only: parsing is quick, the checks come with the opening */
    int n = ls.n_steps;
    char title[200];
    snprintf(title, sizeof title, "%s", ls.title && *ls.title ? ls.title : want);
    lesson_free(&ls);
    lesson_diags_free(&dg);
    if (step < 1 || (n > 0 && step > n)) {
        /* TRANSLATORS: a link to a step the lesson does not have; the lesson's title, its steps, the step asked */
        app_status(&web.app, true, _("\"%s\" has %d steps: this link asks for step %.12s. l opens the list of lessons."),
                   title, n, at);
        return -1;
    }
    if (app_lesson_open(&web.app, path, (int)step - 1, err, sizeof err)) {
        app_status(&web.app, true, "%s", err);
        return -1;
    }
    return 0;
}

/* Where the student is, for the page's address and its tab: "07\t3\t9\tTITLE"
 * (the lesson's number, or its file name without .md; the step, 1-based; its
 * steps; the tab's title in the interface's language); "" with no lesson open;
 * NULL while a lesson is being opened (the address waits for it). */
EMSCRIPTEN_KEEPALIVE const char *web_lesson_where(void)
{
    static char where[NAME_MAX + 400];
    const app_player *p = &web.app.lesson;
    if (!web.ready || web.app.opening.pending || web.app.opening.running || web.app.opening.reading) return NULL;
    if (!p->open) return "";
    char num[16], key[NAME_MAX + 1], head[300];
    app_player_lesson_number(p->name, num, sizeof num);
    snprintf(key, sizeof key, "%s", num[0] ? num : p->name);
    size_t len = strlen(key);
    if (!num[0] && len > 3 && !strcmp(key + len - 3, ".md")) key[len - 3] = '\0';
    snprintf(head, sizeof head, "%s%s%s", num, num[0] ? " " : "", p->ls.title ? p->ls.title : p->name);
    snprintf(where, sizeof where, "%s\t%d\t%d\t", key, p->step + 1, p->ls.n_steps);
    size_t at = strlen(where);
    /* TRANSLATORS: the browser tab's title in a lesson: its number and title, the step, the steps */
    snprintf(where + at, sizeof where - at, _("%s · step %d/%d — attnlab"), head, p->step + 1, p->ls.n_steps);
    return where;
}

/* Back or Forward to a step the address names (popstate): that step of the
 * open lesson, else that lesson at it; want NULL or "": the lesson closed. */
EMSCRIPTEN_KEEPALIVE int web_lesson_goto(const char *want, const char *at)
{
    if (!web.ready) return -1;
    app_player *p = &web.app.lesson;
    web.app.dirty = true;
    if (!want || !*want) {
        if (p->open) app_player_close(p);
        return 0;
    }
    char path[PATH_MAX];
    if (p->open && find_lesson(want, path, sizeof path)) {
        const char *slash = strrchr(path, '/');
        long step = !at || !*at ? 1 : strspn(at, "0123456789") == strlen(at) && strlen(at) < 7 ? atol(at) : -1;
        if (!strcmp(slash ? slash + 1 : path, p->name) && step >= 1 && step <= p->ls.n_steps)
            return app_lesson_go(&web.app, (int)step - 1);
    }
    return web_open_lesson(want, at);
}

/* The page's own words (its bar, drawn by canvas.js), translated as the
 * app's are; canvas.js fills each %s in turn. Index: canvas.js's WORD. */
static const char *const web_words[] = {
    N_("lesson progress is kept in this browser"),
    /* TRANSLATORS: why a model could not be downloaded: the browser could not reach the site */
    N_("no connection"),
    /* TRANSLATORS: why a model could not be downloaded: fewer (or more) bytes came than the file has */
    N_("the download was cut short"),
    N_("Open a model…"),
    /* TRANSLATORS: the button's tooltip; %s: the size limit in MB */
    N_("A model of your own: pick the files of its folder (config.json, model.safetensors, tokenizer.json), up to %s MB"),
    /* TRANSLATORS: the model's size in MB, then the limit in MB */
    N_("That model is %s MB: the page opens models up to %s MB (it holds them in memory); "
       "open larger ones in the desktop attnlab (attnlab --model FOLDER)"),
    /* TRANSLATORS: %s: a file name (config.json) */
    N_("Not a model folder: %s is missing (it needs config.json, model.safetensors and tokenizer.json)"),
    N_("reading your model: %s MB …"),
    N_("your model %s is open (o: the shipped ones again)"),
    N_("the engine computes on Web Workers: the page never waits for it"),
    N_("the engine computes on the page's own thread (Web Workers need a cross-origin isolated page): "
       "a long computation holds the page until it ends"),
    /* TRANSLATORS: the page's button that copies the address of the step on screen */
    N_("Copy link"),
    N_("The address of this page, to send to others: in a lesson it opens the same step"),
    /* TRANSLATORS: %s: the address just copied */
    N_("link copied: %s"),
    /* TRANSLATORS: the clipboard refused; %s: the address, selected for Ctrl+C */
    N_("copy this link (Ctrl+C): %s"),
};

EMSCRIPTEN_KEEPALIVE const char *web_word(int i)
{
    return i >= 0 && i < (int)(sizeof web_words / sizeof *web_words) ? _(web_words[i]) : "";
}

/* What the app asks of the page after an input (canvas.js carries it out):
 * bit 1 quit (a page cannot close itself: it says so), bit 2 save the frame
 * (the kind in bits 8..15), bit 4 fullscreen wanted (f, presenter mode).
 * Quit and save are taken by the call. */
EMSCRIPTEN_KEEPALIVE int web_requests(void)
{
    app_requests *r = &web.app.req;
    int bits = (r->quit ? 1 : 0) | (r->save ? 2 | (int)r->save_kind << 8 : 0) | (r->fullscreen ? 4 : 0);
    r->quit = r->save = false;
    return bits;
}

/* attnlab-weights-h0.png: the name a saved frame downloads as. */
EMSCRIPTEN_KEEPALIVE const char *web_save_name(void)
{
    static char name[ATTN_MAX_NAME + 40];
    const attn_tensor *t = app_tensor(&web.app);
    snprintf(name, sizeof name, "attnlab-%s-h%d.png", t ? t->name : "frame", web.app.view.head);
    return name;
}

/* The status line after a save: downloaded (ok), else why not. */
EMSCRIPTEN_KEEPALIVE void web_saved(int ok, int kind)
{
    if (ok) app_status(&web.app, false, _("saved %s"), web_save_name());
    else if (kind != APP_SAVE_PNG)
        app_status(&web.app, true, "%s", _("the page saves the picture as PNG; SVG, PDF and the matrix as CSV are "
                                           "in the desktop attnlab"));
    else app_status(&web.app, true, "%s", _("the browser did not save the picture"));
    web.app.dirty = true;
}

/* Fullscreen as the browser left it (Esc leaves it without a key for the page). */
EMSCRIPTEN_KEEPALIVE void web_fullscreen(int on)
{
    if (!on && web.app.present) app_do(&web.app, APP_ACT_PRESENT, 0); /* presenter mode ends with it */
    web.app.req.fullscreen = on;
    web.app.dirty = true;
}

/* `attnlab bench` in the page: the median ms of `reps` traced forward passes
 * of the built-in attention at this shape (kv_heads 0: as many as heads), after a warm-up that makes the
 * inputs, each pass reusing the memory of the one before (as cmd_bench.c
 * times it natively). -1 when the shape is refused. */
EMSCRIPTEN_KEEPALIVE double web_bench(int batch, int seq, int d_model, int heads, int kv_heads, int reps)
{
    attn_config cfg;
    attn_error err;
    attn_trace first, tr;
    char v[5][16];
    const char *keys[5] = {"batch", "seq", "d_model", "heads", "kv_heads"};
    int vals[5] = {batch, seq, d_model, heads, kv_heads > 0 ? kv_heads : heads};
    double *ms = reps > 0 ? calloc((size_t)reps, sizeof *ms) : NULL;
    double med = -1;
    attn_config_init(&cfg);
    attn_status st = ms ? ATTN_OK : ATTN_ERR_NOMEM;
    for (int i = 0; i < 5 && !st; i++) {
        snprintf(v[i], sizeof v[i], "%d", vals[i]);
        st = attn_config_set(&cfg, keys[i], v[i], &err);
    }
    if (!st) st = attn_trace_run(&cfg, &(attn_inputs){0}, &first, &err);
    if (!st) {
        attn_inputs in;
        attn_arena store;
        attn_arena_init(&store);
        attn_inputs_from_trace(&first, &in);
        in.arena = &store;
        int i = 0;
        for (; i < reps; i++) {
            double t0 = attn_clock_ms();
            if ((st = attn_trace_run(&cfg, &in, &tr, &err))) break;
            ms[i] = attn_clock_ms() - t0;
            attn_trace_free(&tr);
        }
        if (i == reps) med = attn_median(ms, reps);
        attn_arena_free(&store);
        attn_trace_free(&first);
    }
    if (st) fprintf(stderr, "attnlab bench: %s\n", st == ATTN_ERR_NOMEM && !ms ? "out of memory" : err.msg);
    attn_config_free(&cfg);
    free(ms);
    return med;
}
