/* gfx.h — the SDL backend of the command list (draw.h): an SDL renderer, the
 * font, cached heatmap textures, and the walk that draws a command list (draw_list).
 *
 * An sdl_gfx belongs to one SDL_Renderer; open it after the renderer and close
 * it before destroying the renderer. */
#ifndef ATTNLAB_SDL_GFX_H
#define ATTNLAB_SDL_GFX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <SDL.h>

#include "app.h"
#include "draw.h"
#include "font.h"
#include "heatmap.h"
#include "layout.h"

#define ATTNLAB_SDL_HEAT_CACHE 48 /* pictures kept, and at most APP_HEAT_CACHE_SCREENS screens of pixels (heatmap.h) */

typedef struct {
    unsigned generation; /* app generation the picture was painted for */
    app_slice slice;     /* what it shows (app_slice_same) */
    app_scale scale;
    int w, h, gap;
    SDL_Texture *tex;
    unsigned used;       /* frame it was last used in */
} sdl_heat_entry;

/* Regular fonts kept open at this many sizes at once: a frame mixing sizes
 * (the interface, the text strip's larger poem, the help's smaller text)
 * switches between them instead of resizing one font, which would drop its
 * glyphs and rendered texts every time. */
#define ATTNLAB_SDL_GFX_SIZES 3

typedef struct sdl_gfx {
    SDL_Renderer *r;
    sdl_font *font;      /* the regular font at font_px: one of sized */
    sdl_font *sized[ATTNLAB_SDL_GFX_SIZES]; /* opened as sizes are asked for; NULL until then */
    unsigned sized_used[ATTNLAB_SDL_GFX_SIZES]; /* when each was last chosen, to reuse the oldest */
    unsigned font_uses;
    sdl_font *bold;      /* the same faces emboldened, opened when first used; NULL until then */
    int font_px;
    unsigned frame;
    sdl_heat_entry heat[ATTNLAB_SDL_HEAT_CACHE];
    SDL_Texture *hatch;  /* the masked hatch, for DRAW_CMD_HATCH */
    int hatch_w, hatch_h;
    draw_list list;      /* the frame's commands, measured with font */
    /* the window's event pump, called while a frame is built and drawn at
     * most every ATTNLAB_SDL_GFX_ANSWER_MS (sdl_gfx_answer): a window manager's ping
     * is answered mid-frame, not after it. NULL: none (offscreen). */
    void (*answer)(void *ctx);
    void *answer_ctx;
    Uint32 answered;     /* SDL_GetTicks() of the last call */
} sdl_gfx;

/* How long a frame may go without g->answer: a ping waits at most this
 * long plus one command's drawing (a heatmap's texture, a run of text). */
#define ATTNLAB_SDL_GFX_ANSWER_MS 15

/* Calls g->answer if ATTNLAB_SDL_GFX_ANSWER_MS have passed since it last was. */
void sdl_gfx_answer(sdl_gfx *g);

/* The bold font at px pixels (opened on first use; the regular one if it cannot be). */
sdl_font *sdl_gfx_bold(sdl_gfx *g, int px);

/* Opens the font at base_px pixels. Returns 0, or -1 with a message. */
int sdl_gfx_open(SDL_Renderer *r, int base_px, sdl_gfx **out, char *err, size_t errsize);
void sdl_gfx_close(sdl_gfx *g);

/* Forgets every painted heatmap, so the next frame paints all of them again. */
void sdl_gfx_invalidate(sdl_gfx *g);

/* Sets the font to px pixels (if it can: else it keeps its size). */
void sdl_gfx_font_px(sdl_gfx *g, int px);

/* Text measured with g's font (its size changed to the size asked for). */
draw_text_measure sdl_gfx_measure(sdl_gfx *g);

/* Draws the commands of d (draw_sdl.c). */
void sdl_gfx_draw(sdl_gfx *g, const draw_list *d);

/* One frame of app on g's renderer (draw_sdl.c): built (draw_frame,
 * render.h), drawn and committed. It does not present: the window loop
 * presents, the offscreen driver reads the pixels back. */
void sdl_render(app_state *app, sdl_gfx *g, app_layout *layout);

/* The bytes of the heatmap pictures kept (at most app_heat_cache_bytes of the output size). */
size_t sdl_gfx_heat_bytes(const sdl_gfx *g);

/* Draws slice as a w × h heatmap at (x, y), repainting only if it changed. */
void sdl_gfx_heatmap(sdl_gfx *g, unsigned generation, const app_slice *s, const app_scale *sc, int x, int y, int w,
                     int h, int gap);

/* Draws the masked hatch over w × h pixels at (x, y), its stripes moved by phase pixels (paint_hatch). */
void sdl_gfx_hatch(sdl_gfx *g, int x, int y, int w, int h, int phase);

#endif
