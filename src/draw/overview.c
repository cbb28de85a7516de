/* overview.c — a model's every layer × every head of the current stage, as
 * thumbnails framed by K/V group; a click opens one (app_input.c). */
#include <stdio.h>
#include <string.h>

#include "colormap.h"
#include "i18n.h"
#include "plot.h"
#include "plot_heatmap.h"
#include "view.h"

void draw_plot_overview(draw_list *dl, const app_state *app, app_rect box)
{
    const attn_trace *tr = &app->trace;
    const attn_dims *d = &tr->dims;
    const attn_tensor *shown = app_tensor(app);
    int u = draw_line_h(dl), L = tr->n_layers;
    char buf[160];
    if (!shown || d->h <= 0 || L <= 0) return; /* app_overview: never so */
    const char *stage = shown->name;
    attn_tensor_name_layer(stage, &stage);
    /* TRANSLATORS: the overview's caption: the stage shown in every layer and head */
    snprintf(buf, sizeof buf, _("%s of every layer (rows) and head (columns), framed by K/V group · click one to open it"),
             stage);
    int lines = draw_text_wrap_lines(dl, buf, box.w); /* wrapped, never cut: it says how to read the grid */
    draw_text_wrap(dl, buf, box.x, box.y, box.w, DRAW_TEXT_DIM);
    box.y += lines * u + u / 2;
    box.h -= lines * u + u / 2;
    int lab = draw_text_w(dl, "L00") + u / 2;
    int pw = (box.w - lab) / d->h, ph = box.h / L - u;
    for (int hh = 0; hh < d->h; hh++) {
        snprintf(buf, sizeof buf, _("head %d · kv %d"), hh, app_view_kv_head(d, hh));
        draw_text_fit(dl, buf, box.x + lab + hh * pw + u / 4, box.y, pw - u / 2, app_group_argb(app_view_kv_head(d, hh)));
    }
    box.y += u;
    for (int l = 0; l < L; l++) {
        const attn_tensor *t = attn_trace_get(tr, l, stage);
        int py = box.y + l * (ph + u / 4);
        snprintf(buf, sizeof buf, "L%d", l);
        draw_text(dl, buf, box.x, py + ph / 2 - u / 2, l == app->view.layer ? DRAW_WHITE : DRAW_TEXT_DIM);
        if (!t) continue;
        app_scale sc = app_scale_of(app, t); /* one colour scale per layer, as in its grid */
        for (int hh = 0; hh < d->h; hh++) {
            app_view_slice hv;
            if (app_view_make(tr, t->name, app->view.batch, hh, &hv)) continue;
            app_rect inner = {box.x + lab + hh * pw + 4, py + 4, pw - 8, ph - 8};
            draw_plot_opts o = {false, false, false, 0, app->generation, 0, 0, NULL, 0, 0};
            int a = draw_plot_heatmap(dl, app, tr, &hv, &sc, inner, &o);
            if (a < 0) continue;
            app_rect r = dl->layout->areas[a].r;
            draw_outline(dl, r.x - 3, r.y - 3, r.w + 6, r.h + 6, 2, app_group_argb(app_view_kv_head(d, hh)));
            if (l == app->view.layer && hh == app->view.head) draw_outline(dl, r.x - 5, r.y - 5, r.w + 10, r.h + 10, 1, DRAW_WHITE);
        }
    }
}
