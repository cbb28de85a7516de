/* gfx.h — what the renderer draws with: the SDL renderer, the font, cached
 * heatmap textures, and a few drawing helpers in ARGB colours.
 *
 * A ui_gfx belongs to one SDL_Renderer; open it after the renderer and close
 * it before destroying the renderer. */
#ifndef UI_GFX_H
#define UI_GFX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <SDL.h>

#include "font.h"
#include "heatmap.h"
#include "layout.h"

/* The palette: a dark theme that keeps the heatmap colours the brightest thing on screen. */
#define UI_BG        0xFF1E1E24u
#define UI_PANEL     0xFF2A2A33u
#define UI_PANEL_HI  0xFF3A3A48u
#define UI_TEXT      0xFFE8E8ECu
#define UI_TEXT_DIM  0xFF9A9AA8u
#define UI_ACCENT    0xFF4FC3F7u
#define UI_ERROR     0xFFFF8A80u
#define UI_WHITE     0xFFFFFFFFu
#define UI_BLACK     0xFF000000u

#define UI_HEAT_CACHE 48

typedef struct {
    unsigned generation; /* app generation the picture was painted for */
    const void *data;    /* slice data pointer */
    int rows, cols;
    ptrdiff_t row_stride, col_stride;
    const void *mask;
    ui_scale scale;
    int w, h, gap;
    SDL_Texture *tex;
    unsigned used;       /* frame it was last used in */
} ui_heat_entry;

typedef struct ui_gfx {
    SDL_Renderer *r;
    ui_font *font;
    int font_px;
    unsigned frame;
    ui_heat_entry heat[UI_HEAT_CACHE];
    float *scratch;      /* compare view: the difference slice */
    size_t scratch_len;
    ui_layout *layout;   /* the frame's hit areas, filled while drawing (ui_render sets it) */
} ui_gfx;

/* Opens the font at base_px pixels. Returns 0, or -1 with a message. */
int ui_gfx_open(SDL_Renderer *r, int base_px, ui_gfx **out, char *err, size_t errsize);
void ui_gfx_close(ui_gfx *g);

/* Forgets every painted heatmap, so the next frame paints all of them again. */
void ui_gfx_invalidate(ui_gfx *g);

/* Draws slice as a w × h heatmap at (x, y), repainting only if it changed. */
void ui_gfx_heatmap(ui_gfx *g, unsigned generation, const ui_slice *s, const ui_scale *sc, int x, int y, int w,
                    int h, int gap);

static inline SDL_Rect ui_sdl_rect(ui_rect r) { return (SDL_Rect){r.x, r.y, r.w, r.h}; }
static inline ui_rect ui_rect_of(SDL_Rect r) { return (ui_rect){r.x, r.y, r.w, r.h}; }
static inline int ui_imin(int a, int b) { return a < b ? a : b; }
static inline int ui_imax(int a, int b) { return a > b ? a : b; }

void ui_fill(ui_gfx *g, int x, int y, int w, int h, uint32_t argb);
void ui_frame(ui_gfx *g, int x, int y, int w, int h, int thickness, uint32_t argb);
int ui_text(ui_gfx *g, const char *s, int x, int y, uint32_t argb);       /* returns width */
int ui_text_w(ui_gfx *g, const char *s);
int ui_line(ui_gfx *g);                                                  /* line height */
/* Draws s cut with "…" to fit max_w pixels. */
int ui_text_fit(ui_gfx *g, const char *s, int x, int y, int max_w, uint32_t argb);

#endif
