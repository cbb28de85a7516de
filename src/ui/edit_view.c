/* edit_view.c — draws the token editor (app_edit.c): its field or fields over
 * the picture, the caret, an IME composition, and where the IME's candidate
 * window goes (layout->edit_rect). */
#include "edit_view.h"

#include <stdio.h>

#include "i18n.h"

void ui_render_edit(const ui_app *app, ui_draw *dl)
{
    int u = ui_line(dl);
    int w = ui_imin(dl->layout->width - 2 * u, 50 * u), h = 8 * u;
    int x = (dl->layout->width - w) / 2, y = (dl->layout->height - h) / 3;
    ui_fill(dl, 0, 0, dl->layout->width, dl->layout->height, 0x90000000u);
    ui_fill(dl, x, y, w, h, UI_PANEL);
    ui_frame(dl, x, y, w, h, 2, UI_ACCENT);
    ui_text_fit(dl, app->model ? _("text: the model's tokenizer splits it, | between batch rows — Enter applies, Esc cancels")
                               : _("tokens: spaces between tokens, | between batch rows — Enter applies, Esc cancels"),
                x + u, y + u / 2, w - 2 * u, UI_WHITE);
    bool two = app->cfg.source_tokens || app->edit.field == 1 || app->edit.text[1][0];
    for (int f = 0; f < (two ? 2 : 1); f++) {
        int fy = y + 2 * u + f * 2 * u;
        bool cur = f == app->edit.field;
        /* TRANSLATORS: labels of the token editor's fields: the target sentence and, for cross-attention, the source */
        ui_text(dl, f ? _("source") : _("target"), x + u, fy + u / 4, UI_TEXT_DIM);
        int fx = x + u + ui_imax(ui_text_w(dl, _("source")), ui_text_w(dl, _("target"))) + u;
        int fw = x + w - u - fx;
        ui_fill(dl, fx, fy, fw, u + u / 2, cur ? UI_BG : UI_PANEL_HI);
        if (cur) ui_frame(dl, fx, fy, fw, u + u / 2, 1, UI_ACCENT);
        const char *s = app->edit.text[f];
        int tx = fx + u / 3, ty = fy + u / 4;
        if (!cur) {
            ui_text_fit(dl, s, tx, ty, fw - u, UI_TEXT);
            continue;
        }
        char before[UI_EDIT_MAX];
        snprintf(before, sizeof before, "%.*s", app->edit.cursor, s);
        int bx = tx + ui_text(dl, before, tx, ty, UI_WHITE);
        int cx = bx;
        if (app->edit.compose[0]) { /* IME composition: underlined, at the cursor */
            int cw = ui_text(dl, app->edit.compose, bx, ty, UI_ACCENT);
            ui_line_to(dl, bx, ty + u, bx + cw, ty + u, 2, UI_ACCENT);
            cx = bx + cw;
        }
        ui_text(dl, s + app->edit.cursor, cx, ty, UI_WHITE);
        ui_line_to(dl, cx, ty, cx, ty + u, 2, UI_WHITE);
        dl->layout->edit_rect = (ui_rect){bx, fy, fw - (bx - fx), u + u / 2};
    }
    ui_text_fit(dl, two ? _("Tab switches between target and source") : _("Ctrl+V pastes, Ctrl+U clears"), x + u,
                y + h - u - u / 2, w - 2 * u, UI_TEXT_DIM);
}
