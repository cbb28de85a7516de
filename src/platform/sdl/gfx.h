/* gfx.h — the SDL backend of the command list (draw.h): an SDL renderer, the
 * font, cached heatmap textures, and the walk that draws a ui_draw list.
 *
 * A ui_gfx belongs to one SDL_Renderer; open it after the renderer and close
 * it before destroying the renderer. */
#ifndef UI_GFX_H
#define UI_GFX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <SDL.h>

#include "draw.h"
#include "font.h"
#include "heatmap.h"

#define UI_HEAT_CACHE 48 /* pictures kept, and at most UI_HEAT_CACHE_SCREENS screens of pixels (heatmap.h) */

typedef struct {
    unsigned generation; /* app generation the picture was painted for */
    ui_slice slice;      /* what it shows (ui_slice_same) */
    ui_scale scale;
    int w, h, gap;
    SDL_Texture *tex;
    unsigned used;       /* frame it was last used in */
} ui_heat_entry;

/* Regular fonts kept open at this many sizes at once: a frame mixing sizes
 * (the interface, the text strip's larger poem, the help's smaller text)
 * switches between them instead of resizing one font, which would drop its
 * glyphs and rendered texts every time. */
#define UI_GFX_SIZES 3

typedef struct ui_gfx {
    SDL_Renderer *r;
    ui_font *font;       /* the regular font at font_px: one of sized */
    ui_font *sized[UI_GFX_SIZES]; /* opened as sizes are asked for; NULL until then */
    unsigned sized_used[UI_GFX_SIZES]; /* when each was last chosen, to reuse the oldest */
    unsigned font_uses;
    ui_font *bold;       /* the same faces emboldened, opened when first used; NULL until then */
    int font_px;
    unsigned frame;
    ui_heat_entry heat[UI_HEAT_CACHE];
    SDL_Texture *hatch;  /* the masked hatch, for UI_CMD_HATCH */
    int hatch_w, hatch_h;
    ui_draw list;        /* the frame's commands, measured with font */
    /* the window's event pump, called while a frame is built and drawn at
     * most every UI_GFX_ANSWER_MS (ui_gfx_answer): a window manager's ping
     * is answered mid-frame, not after it. NULL: none (offscreen). */
    void (*answer)(void *ctx);
    void *answer_ctx;
    Uint32 answered;     /* SDL_GetTicks() of the last call */
} ui_gfx;

/* How long a frame may go without g->answer: a ping waits at most this
 * long plus one command's drawing (a heatmap's texture, a run of text). */
#define UI_GFX_ANSWER_MS 15

/* Calls g->answer if UI_GFX_ANSWER_MS have passed since it last was. */
void ui_gfx_answer(ui_gfx *g);

/* The bold font at px pixels (opened on first use; the regular one if it cannot be). */
ui_font *ui_gfx_bold(ui_gfx *g, int px);

/* Opens the font at base_px pixels. Returns 0, or -1 with a message. */
int ui_gfx_open(SDL_Renderer *r, int base_px, ui_gfx **out, char *err, size_t errsize);
void ui_gfx_close(ui_gfx *g);

/* Forgets every painted heatmap, so the next frame paints all of them again. */
void ui_gfx_invalidate(ui_gfx *g);

/* Sets the font to px pixels (if it can: else it keeps its size). */
void ui_gfx_font_px(ui_gfx *g, int px);

/* Text measured with g's font (its size changed to the size asked for). */
ui_text_measure ui_gfx_measure(ui_gfx *g);

/* Draws the commands of d (draw_sdl.c). */
void ui_gfx_draw(ui_gfx *g, const ui_draw *d);

/* The bytes of the heatmap pictures kept (at most ui_heat_cache_bytes of the output size). */
size_t ui_gfx_heat_bytes(const ui_gfx *g);

/* Draws slice as a w × h heatmap at (x, y), repainting only if it changed. */
void ui_gfx_heatmap(ui_gfx *g, unsigned generation, const ui_slice *s, const ui_scale *sc, int x, int y, int w,
                    int h, int gap);

/* Draws the masked hatch over w × h pixels at (x, y), its stripes moved by phase pixels (ui_heat_paint_hatch). */
void ui_gfx_hatch(ui_gfx *g, int x, int y, int w, int h, int phase);

#endif
