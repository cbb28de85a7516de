/* gfx.c — drawing helpers and the heatmap texture cache. */
#include "gfx.h"

#include <stdlib.h>
#include <string.h>

int ui_gfx_open(SDL_Renderer *r, int base_px, ui_gfx **out, char *err, size_t errsize)
{
    ui_gfx *g = calloc(1, sizeof *g);
    *out = NULL;
    if (!g) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    g->r = r;
    g->font_px = base_px;
    if (ui_font_open(r, base_px, &g->font, err, errsize)) {
        free(g);
        return -1;
    }
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    *out = g;
    return 0;
}

void ui_gfx_invalidate(ui_gfx *g)
{
    for (int i = 0; i < UI_HEAT_CACHE; i++) g->heat[i].generation = 0, g->heat[i].data = NULL;
}

void ui_gfx_close(ui_gfx *g)
{
    if (!g) return;
    for (int i = 0; i < UI_HEAT_CACHE; i++)
        if (g->heat[i].tex) SDL_DestroyTexture(g->heat[i].tex);
    ui_font_close(g->font);
    free(g->scratch);
    free(g);
}

static bool same(const ui_heat_entry *e, unsigned gen, const ui_slice *s, const ui_scale *sc, int w, int h, int gap)
{
    return e->tex && e->generation == gen && e->data == s->data && e->rows == s->rows && e->cols == s->cols &&
           e->row_stride == s->row_stride && e->col_stride == s->col_stride && e->mask == s->mask && e->w == w && e->h == h &&
           e->gap == gap && e->scale.cmap == sc->cmap && e->scale.lo == sc->lo && e->scale.hi == sc->hi;
}

void ui_gfx_heatmap(ui_gfx *g, unsigned generation, const ui_slice *s, const ui_scale *sc, int x, int y, int w,
                    int h, int gap)
{
    if (w <= 0 || h <= 0 || s->rows <= 0 || s->cols <= 0) return;
    ui_heat_entry *e = NULL, *victim = &g->heat[0];
    for (int i = 0; i < UI_HEAT_CACHE; i++) {
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
        ui_heat_paint(s, sc, px, pitch / 4, w, h, gap);
        SDL_UnlockTexture(e->tex);
        e->generation = generation;
        e->data = s->data;
        e->rows = s->rows;
        e->cols = s->cols;
        e->row_stride = s->row_stride;
        e->col_stride = s->col_stride;
        e->mask = s->mask;
        e->scale = *sc;
        e->w = w;
        e->h = h;
        e->gap = gap;
    }
    e->used = ++g->frame;
    SDL_RenderCopy(g->r, e->tex, NULL, &(SDL_Rect){x, y, w, h});
}

static void set_color(ui_gfx *g, uint32_t c)
{
    SDL_SetRenderDrawColor(g->r, (c >> 16) & 255, (c >> 8) & 255, c & 255, c >> 24);
}

void ui_fill(ui_gfx *g, int x, int y, int w, int h, uint32_t argb)
{
    if (w <= 0 || h <= 0) return;
    set_color(g, argb);
    SDL_RenderFillRect(g->r, &(SDL_Rect){x, y, w, h});
}

void ui_frame(ui_gfx *g, int x, int y, int w, int h, int t, uint32_t argb)
{
    ui_fill(g, x, y, w, t, argb);
    ui_fill(g, x, y + h - t, w, t, argb);
    ui_fill(g, x, y + t, t, h - 2 * t, argb);
    ui_fill(g, x + w - t, y + t, t, h - 2 * t, argb);
}

int ui_text(ui_gfx *g, const char *s, int x, int y, uint32_t c)
{
    if (!s || !*s) return 0;
    SDL_Color col = {(c >> 16) & 255, (c >> 8) & 255, c & 255, c >> 24};
    return ui_font_draw(g->font, s, x, y, col);
}

int ui_text_w(ui_gfx *g, const char *s)
{
    int w = 0, h = 0;
    if (s && *s) ui_font_measure(g->font, s, &w, &h);
    return w;
}

int ui_line(ui_gfx *g)
{
    return ui_font_line_height(g->font);
}

int ui_text_fit(ui_gfx *g, const char *s, int x, int y, int max_w, uint32_t argb)
{
    if (max_w <= 0) return 0;
    if (ui_text_w(g, s) <= max_w) return ui_text(g, s, x, y, argb);
    char buf[512];
    size_t n = strlen(s);
    if (n >= sizeof buf - 4) n = sizeof buf - 4;
    while (n > 0) {
        /* back off one UTF-8 code point at a time */
        do n--; while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80);
        memcpy(buf, s, n);
        memcpy(buf + n, "…", 4);
        if (ui_text_w(g, buf) <= max_w) return ui_text(g, buf, x, y, argb);
    }
    return 0;
}
