/* gfx.c — the SDL backend's state: renderer, font and the heatmap texture cache. */
#include "gfx.h"

#include <stdlib.h>
#include <string.h>

#include "paint.h"

int sdl_gfx_open(SDL_Renderer *r, int base_px, sdl_gfx **out, char *err, size_t errsize)
{
    sdl_gfx *g = calloc(1, sizeof *g);
    *out = NULL;
    if (!g) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    g->r = r;
    g->font_px = base_px;
    if (sdl_font_open(r, base_px, &g->font, err, errsize)) {
        free(g);
        return -1;
    }
    g->sized[0] = g->font;
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    draw_list_init(&g->list, sdl_gfx_measure(g));
    *out = g;
    return 0;
}

void sdl_gfx_invalidate(sdl_gfx *g)
{
    for (int i = 0; i < ATTNLAB_SDL_HEAT_CACHE; i++) g->heat[i].generation = 0, g->heat[i].slice.data = NULL;
}

void sdl_gfx_close(sdl_gfx *g)
{
    if (!g) return;
    for (int i = 0; i < ATTNLAB_SDL_HEAT_CACHE; i++)
        if (g->heat[i].tex) SDL_DestroyTexture(g->heat[i].tex);
    if (g->hatch) SDL_DestroyTexture(g->hatch);
    for (int i = 0; i < ATTNLAB_SDL_GFX_SIZES; i++) sdl_font_close(g->sized[i]);
    sdl_font_close(g->bold);
    draw_list_free(&g->list);
    free(g);
}

static bool same(const sdl_heat_entry *e, unsigned gen, const app_slice *s, const app_scale *sc, int w, int h, int gap)
{
    return e->tex && e->generation == gen && app_slice_same(&e->slice, s) && e->w == w && e->h == h && e->gap == gap &&
           e->scale.cmap == sc->cmap && e->scale.lo == sc->lo && e->scale.hi == sc->hi;
}

size_t sdl_gfx_heat_bytes(const sdl_gfx *g)
{
    size_t n = 0;
    for (int i = 0; i < ATTNLAB_SDL_HEAT_CACHE; i++)
        if (g->heat[i].tex) n += 4 * (size_t)g->heat[i].w * (size_t)g->heat[i].h;
    return n;
}

/* Drops the least recently used pictures (never keep) until the cache holds
 * at most APP_HEAT_CACHE_SCREENS screens of pixels. */
static void trim(sdl_gfx *g, const sdl_heat_entry *keep)
{
    int sw = 0, sh = 0;
    if (SDL_GetRendererOutputSize(g->r, &sw, &sh)) return;
    while ((double)sdl_gfx_heat_bytes(g) > app_heat_cache_bytes(sw, sh)) {
        sdl_heat_entry *lru = NULL;
        for (int i = 0; i < ATTNLAB_SDL_HEAT_CACHE; i++)
            if (g->heat[i].tex && &g->heat[i] != keep && (!lru || g->heat[i].used < lru->used)) lru = &g->heat[i];
        if (!lru) return;
        SDL_DestroyTexture(lru->tex);
        lru->tex = NULL;
        lru->generation = 0;
        lru->slice.data = NULL;
    }
}

void sdl_gfx_heatmap(sdl_gfx *g, unsigned generation, const app_slice *s, const app_scale *sc, int x, int y, int w,
                     int h, int gap)
{
    if (w <= 0 || h <= 0 || s->rows <= 0 || s->cols <= 0) return;
    sdl_heat_entry *e = NULL, *victim = &g->heat[0];
    for (int i = 0; i < ATTNLAB_SDL_HEAT_CACHE; i++) {
        if (same(&g->heat[i], generation, s, sc, w, h, gap)) { e = &g->heat[i]; break; }
        if (g->heat[i].used < victim->used) victim = &g->heat[i];
    }
    if (!e) {
        /* the least recently used entry takes the picture; its texture is
         * kept when the size matches (the usual case: a new head, same layout) */
        e = victim;
        if (e->tex && (e->w != w || e->h != h)) {
            SDL_DestroyTexture(e->tex);
            e->tex = NULL;
        }
        if (!e->tex) e->tex = SDL_CreateTexture(g->r, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING, w, h);
        if (!e->tex) return;
        void *px;
        int pitch;
        if (SDL_LockTexture(e->tex, NULL, &px, &pitch)) return;
        paint_heatmap(s, sc, px, pitch / 4, w, h, gap);
        SDL_UnlockTexture(e->tex);
        e->generation = generation;
        e->slice = *s;
        e->scale = *sc;
        e->w = w;
        e->h = h;
        e->gap = gap;
    }
    e->used = ++g->frame;
    SDL_RenderCopy(g->r, e->tex, NULL, &(SDL_Rect){x, y, w, h});
    trim(g, e);
}

void sdl_gfx_hatch(sdl_gfx *g, int x, int y, int w, int h, int phase)
{
    if (w <= 0 || h <= 0) return;
    /* one texture of the pattern, wide enough to start at any phase */
    if (!g->hatch || g->hatch_w < w + APP_HATCH_PERIOD || g->hatch_h < h) {
        int tw = draw_imax(w + APP_HATCH_PERIOD, g->hatch_w), th = draw_imax(h, g->hatch_h);
        if (g->hatch) SDL_DestroyTexture(g->hatch);
        g->hatch_w = g->hatch_h = 0;
        g->hatch = SDL_CreateTexture(g->r, SDL_PIXELFORMAT_ARGB8888, SDL_TEXTUREACCESS_STREAMING, tw, th);
        if (!g->hatch) return;
        void *px;
        int pitch;
        if (SDL_LockTexture(g->hatch, NULL, &px, &pitch)) return;
        paint_hatch(px, pitch / 4, tw, th, 0);
        SDL_UnlockTexture(g->hatch);
        g->hatch_w = tw;
        g->hatch_h = th;
    }
    phase = (phase % APP_HATCH_PERIOD + APP_HATCH_PERIOD) % APP_HATCH_PERIOD;
    SDL_RenderCopy(g->r, g->hatch, &(SDL_Rect){phase, 0, w, h}, &(SDL_Rect){x, y, w, h});
}

/* ---- measuring text for the command list */

void sdl_gfx_font_px(sdl_gfx *g, int px)
{
    if (px == g->font_px) return;
    int slot = -1, oldest = 0;
    for (int i = 0; i < ATTNLAB_SDL_GFX_SIZES && slot < 0; i++)
        if (g->sized[i] && sdl_font_size(g->sized[i]) == px) slot = i;
    for (int i = 0; i < ATTNLAB_SDL_GFX_SIZES && slot < 0; i++) { /* a size not open yet: a free slot ... */
        char err[200];
        if (!g->sized[i] && !sdl_font_open(g->r, px, &g->sized[i], err, sizeof err)) slot = i;
    }
    if (slot < 0) { /* ... else the font chosen longest ago takes the new size */
        for (int i = 1; i < ATTNLAB_SDL_GFX_SIZES; i++)
            if (g->sized[i] && g->sized_used[i] < g->sized_used[oldest]) oldest = i;
        if (!g->sized[oldest] || sdl_font_set_size(g->sized[oldest], px)) return; /* it keeps its size */
        slot = oldest;
    }
    g->sized_used[slot] = ++g->font_uses;
    g->font = g->sized[slot];
    g->font_px = px;
}

sdl_font *sdl_gfx_bold(sdl_gfx *g, int px)
{
    sdl_gfx_font_px(g, px);
    if (!g->bold) {
        char err[200];
        if (sdl_font_open(g->r, g->font_px, &g->bold, err, sizeof err)) return g->font; /* regular, then */
        sdl_font_set_bold(g->bold, true);
    }
    if (sdl_font_size(g->bold) != g->font_px) sdl_font_set_size(g->bold, g->font_px);
    return g->bold;
}

void sdl_gfx_answer(sdl_gfx *g)
{
    if (!g->answer) return;
    Uint32 now = SDL_GetTicks();
    if (now - g->answered < ATTNLAB_SDL_GFX_ANSWER_MS) return;
    g->answer(g->answer_ctx);
    g->answered = SDL_GetTicks();
}

/* Text is measured while a frame is built: the window answers meanwhile too. */
static int text_width(void *ctx, const char *utf8, int px)
{
    sdl_gfx *g = ctx;
    int w = 0;
    sdl_gfx_answer(g);
    sdl_gfx_font_px(g, px);
    sdl_font_measure(g->font, utf8, &w, NULL);
    return w;
}

static int bold_width(void *ctx, const char *utf8, int px)
{
    int w = 0;
    sdl_gfx_answer(ctx);
    sdl_font_measure(sdl_gfx_bold(ctx, px), utf8, &w, NULL);
    return w;
}

static int line_height(void *ctx, int px)
{
    sdl_gfx *g = ctx;
    sdl_gfx_font_px(g, px);
    return sdl_font_line_height(g->font);
}

draw_text_measure sdl_gfx_measure(sdl_gfx *g)
{
    return (draw_text_measure){g, text_width, line_height, bold_width};
}
