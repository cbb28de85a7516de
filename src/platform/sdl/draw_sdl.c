/* draw_sdl.c — the SDL backend: walks a frame's command list and draws it. */
#include "gfx.h"
#include "render.h"

#define CLIP_MAX 16

static void fill(ui_gfx *g, int x, int y, int w, int h, uint32_t c)
{
    if (w <= 0 || h <= 0) return;
    SDL_SetRenderDrawColor(g->r, (c >> 16) & 255, (c >> 8) & 255, c & 255, c >> 24);
    SDL_RenderFillRect(g->r, &(SDL_Rect){x, y, w, h});
}

static void frame(ui_gfx *g, ui_rect r, int t, uint32_t c)
{
    fill(g, r.x, r.y, r.w, t, c);
    fill(g, r.x, r.y + r.h - t, r.w, t, c);
    fill(g, r.x, r.y + t, t, r.h - 2 * t, c);
    fill(g, r.x + r.w - t, r.y + t, t, r.h - 2 * t, c);
}

static void poly(ui_gfx *g, const ui_cmd *c)
{
    SDL_Vertex v[4];
    SDL_Color col = {(c->color >> 16) & 255, (c->color >> 8) & 255, c->color & 255, c->color >> 24};
    for (int i = 0; i < c->poly.n; i++) v[i] = (SDL_Vertex){{c->poly.x[i], c->poly.y[i]}, col, {0, 0}};
    static const int quad[6] = {0, 1, 2, 0, 2, 3};
    SDL_RenderGeometry(g->r, NULL, v, c->poly.n, c->poly.n == 4 ? quad : NULL, c->poly.n == 4 ? 6 : 0);
}

static void text(ui_gfx *g, const char *s, int x, int y, int px, bool bold, bool turned, uint32_t c)
{
    ui_gfx_font_px(g, px);
    SDL_Color col = {(c >> 16) & 255, (c >> 8) & 255, c & 255, c >> 24};
    if (turned) ui_font_draw_turned(g->font, s, x, y, col);
    else ui_font_draw(bold ? ui_gfx_bold(g, px) : g->font, s, x, y, col);
}

/* The clip rectangles pushed and not yet popped; the innermost set on the renderer. */
typedef struct {
    ui_rect r[CLIP_MAX];
    int n;     /* pushed, counting those beyond CLIP_MAX */
} clip_stack;

static void clip_push(ui_gfx *g, clip_stack *cs, ui_rect r)
{
    if (cs->n > 0) r = ui_rect_intersect(r, cs->r[ui_imin(cs->n, CLIP_MAX) - 1]);
    if (cs->n < CLIP_MAX) cs->r[cs->n] = r;
    cs->n++;
    SDL_RenderSetClipRect(g->r, &(SDL_Rect){r.x, r.y, r.w, r.h});
}

static void clip_pop(ui_gfx *g, clip_stack *cs)
{
    if (cs->n == 0) return;
    cs->n--;
    if (cs->n == 0) {
        SDL_RenderSetClipRect(g->r, NULL);
        return;
    }
    ui_rect r = cs->r[ui_imin(cs->n, CLIP_MAX) - 1];
    SDL_RenderSetClipRect(g->r, &(SDL_Rect){r.x, r.y, r.w, r.h});
}

void ui_gfx_draw(ui_gfx *g, const ui_draw *d)
{
    clip_stack cs = {.n = 0};
    for (const ui_cmd *c = NULL; (c = ui_draw_next(d, c));) {
        ui_gfx_answer(g);
        switch (c->kind) {
        case UI_CMD_RECT:
        case UI_CMD_LINE: fill(g, c->r.x, c->r.y, c->r.w, c->r.h, c->color); break;
        case UI_CMD_FRAME: frame(g, c->r, c->t, c->color); break;
        case UI_CMD_POLY: poly(g, c); break;
        case UI_CMD_TEXT: text(g, ui_cmd_text(d, c), c->r.x, c->r.y, c->text.px, c->text.bold, c->text.turned, c->color); break;
        case UI_CMD_HEATMAP:
            ui_gfx_heatmap(g, c->heat.generation, &c->heat.slice, &c->heat.scale, c->r.x, c->r.y, c->r.w, c->r.h,
                           c->heat.gap);
            break;
        case UI_CMD_HATCH:
            /* a masked cell's hatch is in its heatmap's texture already */
            if (!c->hatch.in_image)
                ui_gfx_hatch(g, c->r.x, c->r.y, c->r.w, c->r.h, (c->r.x - c->hatch.ox) + (c->r.y - c->hatch.oy));
            break;
        case UI_CMD_CLIP_PUSH: clip_push(g, &cs, c->r); break;
        case UI_CMD_CLIP_POP: clip_pop(g, &cs); break;
        }
    }
    while (cs.n > 0) clip_pop(g, &cs);
}

void ui_render(ui_app *app, ui_gfx *g, ui_layout *layout)
{
    int w, h;
    SDL_GetRendererOutputSize(g->r, &w, &h);
    ui_render_frame(app, &g->list, layout, w, h);
    ui_gfx_draw(g, &g->list);
    ui_render_commit(app, layout);
}
