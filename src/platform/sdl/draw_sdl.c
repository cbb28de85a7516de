/* draw_sdl.c — the SDL backend: walks a frame's command list and draws it. */
#include "gfx.h"
#include "render.h"

#define CLIP_MAX 16

static void fill(sdl_gfx *g, int x, int y, int w, int h, uint32_t c)
{
    if (w <= 0 || h <= 0) return;
    SDL_SetRenderDrawColor(g->r, (c >> 16) & 255, (c >> 8) & 255, c & 255, c >> 24);
    SDL_RenderFillRect(g->r, &(SDL_Rect){x, y, w, h});
}

static void frame(sdl_gfx *g, app_rect r, int t, uint32_t c)
{
    fill(g, r.x, r.y, r.w, t, c);
    fill(g, r.x, r.y + r.h - t, r.w, t, c);
    fill(g, r.x, r.y + t, t, r.h - 2 * t, c);
    fill(g, r.x + r.w - t, r.y + t, t, r.h - 2 * t, c);
}

static void poly(sdl_gfx *g, const draw_cmd *c)
{
    SDL_Vertex v[4];
    SDL_Color col = {(c->color >> 16) & 255, (c->color >> 8) & 255, c->color & 255, c->color >> 24};
    for (int i = 0; i < c->poly.n; i++) v[i] = (SDL_Vertex){{c->poly.x[i], c->poly.y[i]}, col, {0, 0}};
    static const int quad[6] = {0, 1, 2, 0, 2, 3};
    SDL_RenderGeometry(g->r, NULL, v, c->poly.n, c->poly.n == 4 ? quad : NULL, c->poly.n == 4 ? 6 : 0);
}

static void text(sdl_gfx *g, const char *s, int x, int y, int px, bool bold, bool turned, uint32_t c)
{
    sdl_gfx_font_px(g, px);
    SDL_Color col = {(c >> 16) & 255, (c >> 8) & 255, c & 255, c >> 24};
    if (turned) sdl_font_draw_turned(g->font, s, x, y, col);
    else sdl_font_draw(bold ? sdl_gfx_bold(g, px) : g->font, s, x, y, col);
}

/* The clip rectangles pushed and not yet popped; the innermost set on the renderer. */
typedef struct {
    app_rect r[CLIP_MAX];
    int n;     /* pushed, counting those beyond CLIP_MAX */
} clip_stack;

static void clip_push(sdl_gfx *g, clip_stack *cs, app_rect r)
{
    if (cs->n > 0) r = app_rect_intersect(r, cs->r[draw_imin(cs->n, CLIP_MAX) - 1]);
    if (cs->n < CLIP_MAX) cs->r[cs->n] = r;
    cs->n++;
    SDL_RenderSetClipRect(g->r, &(SDL_Rect){r.x, r.y, r.w, r.h});
}

static void clip_pop(sdl_gfx *g, clip_stack *cs)
{
    if (cs->n == 0) return;
    cs->n--;
    if (cs->n == 0) {
        SDL_RenderSetClipRect(g->r, NULL);
        return;
    }
    app_rect r = cs->r[draw_imin(cs->n, CLIP_MAX) - 1];
    SDL_RenderSetClipRect(g->r, &(SDL_Rect){r.x, r.y, r.w, r.h});
}

void sdl_gfx_draw(sdl_gfx *g, const draw_list *d)
{
    clip_stack cs = {.n = 0};
    for (const draw_cmd *c = NULL; (c = draw_list_next(d, c));) {
        sdl_gfx_answer(g);
        switch (c->kind) {
        case DRAW_CMD_RECT:
        case DRAW_CMD_LINE: fill(g, c->r.x, c->r.y, c->r.w, c->r.h, c->color); break;
        case DRAW_CMD_FRAME: frame(g, c->r, c->t, c->color); break;
        case DRAW_CMD_POLY: poly(g, c); break;
        case DRAW_CMD_TEXT: text(g, draw_cmd_text(d, c), c->r.x, c->r.y, c->text.px, c->text.bold, c->text.turned, c->color); break;
        case DRAW_CMD_HEATMAP:
            sdl_gfx_heatmap(g, c->heat.generation, &c->heat.slice, &c->heat.scale, c->r.x, c->r.y, c->r.w, c->r.h,
                            c->heat.gap);
            break;
        case DRAW_CMD_HATCH:
            /* a masked cell's hatch is in its heatmap's texture already */
            if (!c->hatch.in_image)
                sdl_gfx_hatch(g, c->r.x, c->r.y, c->r.w, c->r.h, (c->r.x - c->hatch.ox) + (c->r.y - c->hatch.oy));
            break;
        case DRAW_CMD_CLIP_PUSH: clip_push(g, &cs, c->r); break;
        case DRAW_CMD_CLIP_POP: clip_pop(g, &cs); break;
        }
    }
    while (cs.n > 0) clip_pop(g, &cs);
}

void sdl_render(app_state *app, sdl_gfx *g, app_layout *layout)
{
    int w, h;
    SDL_GetRendererOutputSize(g->r, &w, &h);
    draw_frame(app, &g->list, layout, w, h);
    sdl_gfx_draw(g, &g->list);
    draw_commit(app, layout);
}
