/* app_input.c — keys, typed text, the mouse and a finger, turned into actions. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "app_impl.h"
#include "i18n.h"
#include "view.h"

bool app_wants_text(const app_state *app)
{
    return app->edit.open || (app->lesson.open && app->lesson.focus >= 0);
}

/* ---- keys ----------------------------------------------------------------- */

/* The lesson picker is modal: only its keys (and q) do something. */
static bool picker_key(app_state *app, int key)
{
    app_player *p = &app->lesson;
    int n = p->have_catalog ? p->catalog.n : 0;
    int page = p->picker_rows > 1 ? p->picker_rows - 1 : 1;
    switch (key) {
    case APP_KEY_UP: p->sel = n ? (p->sel + n - 1) % n : 0; break;
    case APP_KEY_DOWN: p->sel = n ? (p->sel + 1) % n : 0; break;
    case APP_KEY_PAGEUP: p->sel = p->sel > page ? p->sel - page : 0; break;
    case APP_KEY_PAGEDOWN: p->sel = n ? (p->sel + page < n ? p->sel + page : n - 1) : 0; break;
    case APP_KEY_HOME: p->sel = 0; break;
    case APP_KEY_END: p->sel = n ? n - 1 : 0; break;
    case APP_KEY_RETURN:
    case APP_KEY_SPACE:
        if (!p->have_catalog && app_player_listing(p)) p->pick_listed = true; /* once the list is read */
        else app_do(app, APP_ACT_PICK, p->sel);
        break;
    case APP_KEY_ESCAPE:
    case 'l': p->picker = p->pick_listed = false; break;
    case APP_KEY_DELETE: return app_do(app, APP_ACT_PICKER_RESET, 0);
    case 'q': return app_do(app, APP_ACT_QUIT, 0);
    default: return true;
    }
    p->confirm_reset = false;
    app->dirty = true;
    return true;
}

/* Typing a lesson's numeric answer: the text arrives through app_text. */
static bool answer_key(app_state *app, int key)
{
    app_player *p = &app->lesson;
    switch (key) {
    case APP_KEY_BACKSPACE: app_player_backspace(p); app->dirty = true; return true;
    case APP_KEY_RETURN: return app_do(app, APP_ACT_LESSON_CHECK, p->focus), true;
    case APP_KEY_ESCAPE:
    case APP_KEY_TAB: return app_do(app, APP_ACT_LESSON_FIELD, -1), true;
    default: return true;
    }
}

/* The save dialog: ↑ ↓ choose, Enter (or a digit) saves, Esc closes; other keys wait. */
static bool save_menu_key(app_state *app, int key)
{
    int *c = &app->save_menu.choice;
    switch (key) {
    case APP_KEY_UP: *c = (*c + APP_SAVE_KINDS - 1) % APP_SAVE_KINDS; break;
    case APP_KEY_DOWN: *c = (*c + 1) % APP_SAVE_KINDS; break;
    case APP_KEY_RETURN: return app_do(app, APP_ACT_SAVE_AS, *c);
    case APP_KEY_ESCAPE: return app_do(app, APP_ACT_SAVE_MENU, 0);
    default:
        if (key >= '1' && key < '1' + APP_SAVE_KINDS) return app_do(app, APP_ACT_SAVE_AS, key - '1');
        return false;
    }
    app->dirty = true;
    return true;
}

/* "Quit attnlab?" is asked: q or Enter quits, Esc stays; other keys wait. */
static bool quit_confirm_key(app_state *app, int key)
{
    switch (key) {
    case 'q':
    case APP_KEY_RETURN: return app_do(app, APP_ACT_QUIT, 0);
    case APP_KEY_ESCAPE: return app_do(app, APP_ACT_BACK, 0);
    default: return false;
    }
}

bool app_key(app_state *app, int key, int mods)
{
    if (app->quit_confirm) return quit_confirm_key(app, key);
    if (app->edit.open) {
        bool changed = app_edit_key(app, key, mods);
        if (changed) app->dirty = true;
        return changed;
    }
    if (app->save_menu.open) return save_menu_key(app, key);
    if (app->lesson.picker) return picker_key(app, key);
    if (app->lesson.open && app->lesson.focus >= 0) return answer_key(app, key);
    const app_key_binding *b = app->lesson.open ? app_keys_find(APP_KEYS_LESSON, key, mods) : NULL;
    if (!b) b = app_keys_find(APP_KEYS_VIEW, key, mods);
    bool hide = app->present && app->toolbar_shown; /* presenter mode: keys put the toolbar away */
    app->toolbar_shown = false;
    if (!b) return hide;
    if (app->help && b->action != APP_ACT_HELP && b->action != APP_ACT_BACK && b->action != APP_ACT_QUIT)
        app->help = false;
    return app_do(app, b->action, app_keys_arg(b)) || hide;
}

/* ---- text ----------------------------------------------------------------- */

bool app_text(app_state *app, const char *utf8)
{
    if (!app->edit.open && app->lesson.open && app->lesson.focus >= 0) {
        app_player_type(&app->lesson, utf8);
        app->dirty = true;
        return true;
    }
    if (!app->edit.open) return false;
    app_edit_insert(app, utf8);
    app->edit.compose[0] = '\0';
    app->dirty = true;
    return true;
}

bool app_compose(app_state *app, const char *utf8)
{
    if (!app->edit.open) return false;
    snprintf(app->edit.compose, sizeof app->edit.compose, "%s", utf8);
    app->dirty = true;
    return true;
}

bool app_paste(app_state *app, const char *utf8)
{
    app->req.paste = false;
    if (!app->edit.open || !utf8) return false;
    char one_line[APP_EDIT_MAX];
    snprintf(one_line, sizeof one_line, "%s", utf8);
    for (char *c = one_line; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
    app_edit_insert(app, one_line);
    app->dirty = true;
    return true;
}

/* ---- the mouse ------------------------------------------------------------ */

/* The area and the stage's cell (i, j) under (x, y). */
static bool find_cell(const app_state *app, int x, int y, int *area, int *i, int *j)
{
    for (int a = 0; a < app->layout.n_areas; a++) {
        const app_heat_area *h = &app->layout.areas[a];
        if (app_rect_contains(h->r, x, y) &&
            app_heat_cell_at(h->r.w, h->r.h, h->rows, h->cols, x - h->r.x, y - h->r.y, i, j) == 0) {
            *area = a;
            *i += h->row0;
            *j += h->col0;
            return true;
        }
    }
    return false;
}

/* ---- zoom: the single view's window on a large picture ---------------------- */

enum { ZOOM_MIN_CELLS = 4, ZOOM_MAX_LEVEL = 12 };

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
static int at_least(int v, int lo) { return v < lo ? lo : v; }

static bool zoomable(const app_state *app)
{
    return app->view.mode == LESSON_VIEW_SINGLE && !app->lesson.picker;
}

/* Cells along an axis of n at a zoom level: n / 2^level, at least a few. */
static int window_len(int n, int level)
{
    int w = (int)ceil(n / ldexp(1.0, level));
    return clamp(w, ZOOM_MIN_CELLS < n ? ZOOM_MIN_CELLS : n, n);
}


/* The largest zoom level whose window holds wr × wc cells of a rows × cols picture. */
static int level_holding(int rows, int cols, int wr, int wc)
{
    int level = 0;
    while (level < ZOOM_MAX_LEVEL && window_len(rows, level + 1) >= wr && window_len(cols, level + 1) >= wc) level++;
    return level;
}

bool app_zoom_window(const app_state *app, int rows, int cols, int *i0, int *j0, int *wr, int *wc)
{
    if (!zoomable(app) || rows <= 0 || cols <= 0) return false;
    if (app->zoom.rows > 0 && app->lesson.open) { /* a lesson's region */
        *wr = app->zoom.rows < rows ? app->zoom.rows : rows;
        *wc = app->zoom.cols < cols ? app->zoom.cols : cols;
    } else if (app->zoom.level && app->zoom.rows <= 0) {
        *wr = window_len(rows, app->zoom.level);
        *wc = window_len(cols, app->zoom.level);
    } else
        return false;
    *i0 = clamp(app->zoom.i0, 0, rows - *wr);
    *j0 = clamp(app->zoom.j0, 0, cols - *wc);
    return *wr < rows || *wc < cols;
}

/* The main picture's area (the single view's one heatmap), or NULL. */
static const app_heat_area *main_area(const app_state *app)
{
    for (int a = 0; a < app->layout.n_areas; a++)
        if (app->layout.areas[a].pane == 0) return &app->layout.areas[a];
    return NULL;
}

/* The whole slice's size behind area h. */
static bool slice_size(const app_state *app, const app_heat_area *h, int *rows, int *cols)
{
    app_view_slice v;
    if (app_view_make(&app->trace, h->stage, app->view.batch, h->head, &v)) return false;
    *rows = v.slice.rows;
    *cols = v.slice.cols;
    return true;
}

/* One wheel step over cell (i, j) of area h at (x, y): in (dy > 0) or out,
 * keeping that cell under the mouse. */
static bool zoom_at(app_state *app, const app_heat_area *h, int i, int j, int x, int y, int dy)
{
    int rows, cols, level, i0, j0, wr0, wc0;
    if (!slice_size(app, h, &rows, &cols)) return false;
    if (!app_zoom_window(app, rows, cols, &i0, &j0, &wr0, &wc0)) wr0 = rows, wc0 = cols;
    if (app->zoom.rows > 0) { /* from a lesson's region: in past it, or out to the level that holds it */
        int held = level_holding(rows, cols, wr0, wc0);
        bool exact = window_len(rows, held) == wr0 && window_len(cols, held) == wc0;
        level = dy > 0 ? held + 1 : exact ? held - 1 : held;
    } else
        level = app->zoom.level + (dy > 0 ? 1 : -1);
    if (level < 0 || level > ZOOM_MAX_LEVEL) return false;
    int wr = window_len(rows, level), wc = window_len(cols, level);
    if (dy > 0 && wr == wr0 && wc == wc0) return false; /* as close as it goes */
    app->zoom.rows = app->zoom.cols = 0;
    double fy = (y - h->r.y) / (double)at_least(h->r.h, 1), fx = (x - h->r.x) / (double)at_least(h->r.w, 1);
    app->zoom.level = wr == rows && wc == cols ? 0 : level;
    app->zoom.i0 = clamp((int)lround(i + 0.5 - fy * wr), 0, rows - wr);
    app->zoom.j0 = clamp((int)lround(j + 0.5 - fx * wc), 0, cols - wc);
    app->hover_area = -1; /* the cells moved under the mouse */
    if (app->zoom.level)
        app_status_about(app, APP_ABOUT_LAYER | APP_ABOUT_STAGE,
                         _("zoom: rows %d–%d of %d, columns %d–%d of %d (z: the whole picture)"), app->zoom.i0,
                      app->zoom.i0 + wr - 1, rows, app->zoom.j0, app->zoom.j0 + wc - 1, cols);
    else
        app_status(app, false, "%s", _("the whole picture"));
    app->dirty = true;
    return true;
}

bool app_mouse_drag(app_state *app, int x, int y)
{
    if (app->divider_drag) { /* the lesson panel as wide as from the mouse to the window's right edge */
        int w = app->full_width - x;
        if (w == app->lesson_width) return false;
        app->lesson_width = w;
        app->mouse_x = x;
        app->mouse_y = y;
        app->dirty = true;
        return true;
    }
    const app_heat_area *h = main_area(app);
    int rows, cols, i0, j0, wr, wc;
    if (!app->zoom.dragging || !h || !slice_size(app, h, &rows, &cols) ||
        !app_zoom_window(app, rows, cols, &i0, &j0, &wr, &wc))
        return app_mouse_move(app, x, y);
    if (app->zoom.drag_i >= 0 && (abs(x - app->zoom.drag_x) > 2 || abs(y - app->zoom.drag_y) > 2)) {
        /* a drag pans: the press that began it picks nothing */
        app_player *p = &app->lesson;
        const attn_tensor *t = app_player_quiz_tensor(p, &app->trace, &app->view);
        if (t && app_player_cell(p, &app->trace, &app->view, t->name, app->view.head, app->zoom.drag_i, app->zoom.drag_j))
            p->answers[p->cell_quiz].graded = app->zoom.drag_graded; /* the picks are as they were */
        app->zoom.drag_i = app->zoom.drag_j = -1;
        app->dirty = true;
    }
    /* the picture follows the mouse: a drag across the whole picture moves by one window */
    int ni = clamp(app->zoom.drag_i0 - (int)lround((y - app->zoom.drag_y) * (double)wr / at_least(h->r.h, 1)), 0, rows - wr);
    int nj = clamp(app->zoom.drag_j0 - (int)lround((x - app->zoom.drag_x) * (double)wc / at_least(h->r.w, 1)), 0, cols - wc);
    app->mouse_x = x;
    app->mouse_y = y;
    if (ni == i0 && nj == j0) return false;
    app->zoom.i0 = ni;
    app->zoom.j0 = nj;
    app->dirty = true;
    return true;
}

bool app_mouse_up(app_state *app)
{
    app->zoom.dragging = app->divider_drag = false;
    return false;
}

/* The query arrow at (x, y) in the geometry view: of the tips' hits that
 * hold it, the one whose tip is nearest; -1: none. */
static int geometry_query_at(const app_state *app, int x, int y)
{
    int q = -1;
    long best = 0;
    for (int i = 0; i < app->layout.n_hits && !app->help && !app->edit.open; i++) {
        const app_hit *h = &app->layout.hits[i];
        if (h->action != APP_ACT_ROW || !app_rect_contains(h->r, x, y)) continue;
        long dx = 2L * x - (2L * h->r.x + h->r.w), dy = 2L * y - (2L * h->r.y + h->r.h), d = dx * dx + dy * dy;
        if (q < 0 || d < best) q = h->arg, best = d;
    }
    return q;
}

static bool geometry_hover(app_state *app, int x, int y)
{
    int q = geometry_query_at(app, x, y);
    if (q == app->geom_hover) return false;
    app->geom_hover = q;
    app->dirty = true;
    return true;
}

bool app_mouse_move(app_state *app, int x, int y)
{
    /* presenter mode: the mouse moved to the top of the window brings the toolbar back
     * (not a move elsewhere, such as the one a window gets when it appears under the pointer) */
    bool show = app->present && !app->toolbar_shown && (app->height <= 0 || y < app->height / 6);
    app->toolbar_shown |= show;
    if (show) app->dirty = true;
    app->mouse_x = x;
    app->mouse_y = y;
    int tip = -1; /* a button with a tooltip under the mouse */
    for (int h = app->layout.n_hits - 1; h >= 0 && tip < 0; h--)
        if (app_rect_contains(app->layout.hits[h].r, x, y)) tip = app->layout.hits[h].tip ? h : -2;
    if (tip < -1) tip = -1;
    if (tip != app->hover_hit) {
        app->hover_hit = tip;
        app->dirty = show = true;
    }
    if (app->view.mode == LESSON_VIEW_GEOMETRY) return geometry_hover(app, x, y) || show;
    int area = -1, i = -1, j = -1;
    if (!app->help && !app->edit.open) find_cell(app, x, y, &area, &i, &j);
    if (area < 0) i = j = -1;
    if (area == app->hover_area && i == app->hover_i && j == app->hover_j) return show;
    app->hover_area = area;
    app->hover_i = i;
    app->hover_j = j;
    app->dirty = true;
    return true;
}

bool app_mouse_leave(app_state *app)
{
    app->mouse_x = app->mouse_y = -1;
    bool had = app->hover_area >= 0 || app->hover_hit >= 0;
    app->hover_area = app->hover_hit = -1;
    return had;
}

/* A click on heatmap cell (i, j) of area a: a cell quiz takes it, else the
 * grid selects that head, else a query row opens as a bar chart (not in the
 * expert view, whose rows are tokens' experts). */
static bool cell_click(app_state *app, const app_heat_area *a, int i, int j)
{
    if (a->pane == 0 && app_player_cell(&app->lesson, &app->trace, &app->view, a->stage, a->head, i, j)) {
        app_take_note(app); /* a click outside the quiz's region says so */
        return true;
    }
    if (app->view.mode == LESSON_VIEW_GRID && app_overview(app)) { /* a model's thumbnail: open it */
        const char *rest;
        int layer = attn_tensor_name_layer(a->stage, &rest);
        if (layer >= 0) app_set_layer(app, layer);
        app->view.head = a->head;
        return app_do(app, APP_ACT_GRID, 0);
    }
    if (app->view.mode == LESSON_VIEW_GRID && a->head != app->view.head) return app_do(app, APP_ACT_HEAD, a->head);
    if (app->view.mode == LESSON_VIEW_EXPERTS) return false; /* a token's experts: the hover says it all */
    app_view_slice v;
    if (app_view_make(&app->trace, a->stage, app->view.batch, a->head, &v) == 0 && v.row_axis == APP_AXIS_QUERY)
        return app_do(app, APP_ACT_ROW, i);
    return false;
}

/* How many cells the step's cell quiz has picked (-1: none). */
static int quiz_picks(const app_state *app)
{
    const app_player *p = &app->lesson;
    if (!p->open || p->cell_quiz < 0 || !p->answers) return -1;
    const app_quiz_answer *a = &p->answers[p->cell_quiz];
    int n = 0;
    for (int c = 0; a->cells && c < a->rows * a->cols; c++) n += a->cells[c];
    return n;
}

/* A press at (x, y) on area `area`: when it shows a zoomed window, a drag
 * that follows pans it. Returns whether one may. */
static bool start_pan(app_state *app, int area, int x, int y)
{
    const app_heat_area *a = &app->layout.areas[area];
    int rows, cols, i0, j0, wr, wc;
    if (a->pane != 0 || !slice_size(app, a, &rows, &cols) || !app_zoom_window(app, rows, cols, &i0, &j0, &wr, &wc))
        return false;
    app->zoom.dragging = true;
    app->zoom.drag_x = x;
    app->zoom.drag_y = y;
    app->zoom.drag_i0 = i0;
    app->zoom.drag_j0 = j0;
    return true;
}

bool app_mouse_down(app_state *app, int x, int y)
{
    const app_layout *L = &app->layout;
    if (app->edit.open) return false;
    if (app->quit_confirm) { /* the question's two buttons; a click elsewhere stays */
        for (int h = L->n_hits - 1; h >= 0; h--)
            if ((L->hits[h].action == APP_ACT_QUIT || L->hits[h].action == APP_ACT_BACK) &&
                app_rect_contains(L->hits[h].r, x, y))
                return app_do(app, L->hits[h].action, 0);
        return app_do(app, APP_ACT_BACK, 0);
    }
    if (app->lesson.focus >= 0) app_do(app, APP_ACT_LESSON_FIELD, -1); /* a click leaves the answer field */
    if (app->save_menu.open) { /* the save dialog: a kind saves, a click elsewhere closes it */
        for (int h = L->n_hits - 1; h >= 0; h--)
            if (L->hits[h].action == APP_ACT_SAVE_AS && app_rect_contains(L->hits[h].r, x, y))
                return app_do(app, APP_ACT_SAVE_AS, L->hits[h].arg);
        return app_do(app, APP_ACT_SAVE_MENU, 0);
    }
    if (app->lesson.picker) { /* the picker covers the window: its rows, scroll cues and ✕ take clicks */
        for (int h = L->n_hits - 1; h >= 0; h--)
            if ((L->hits[h].action == APP_ACT_PICK || L->hits[h].action == APP_ACT_PICK_SHOW ||
                 L->hits[h].action == APP_ACT_PICKER) && app_rect_contains(L->hits[h].r, x, y))
                return app_do(app, L->hits[h].action, L->hits[h].arg);
        if (L->picker_box.w > 0 && !app_rect_contains(L->picker_box, x, y)) /* a click outside closes it */
            return app_do(app, APP_ACT_PICKER, 0);
        return false;
    }
    int q = app->view.mode == LESSON_VIEW_GEOMETRY && !app->help ? geometry_query_at(app, x, y) : -1;
    if (q >= 0) return app_do(app, APP_ACT_ROW, q);
    if (app->menu_open) { /* the toolbar's menu: a row does its action and closes it, a click elsewhere closes it */
        app->menu_open = false;
        app->dirty = true;
        for (int h = L->n_hits - 1; h >= 0; h--)
            if (app_rect_contains(L->hits[h].r, x, y))
                return L->hits[h].action == APP_ACT_MENU || app_do(app, L->hits[h].action, L->hits[h].arg);
        return true;
    }
    for (int h = L->n_hits - 1; h >= 0; h--) /* later hits are drawn on top */
        if (app_rect_contains(L->hits[h].r, x, y)) {
            if (L->hits[h].action == APP_ACT_DIVIDER) return (app->divider_drag = true);
            return app_do(app, L->hits[h].action, L->hits[h].arg);
        }
    if (app->help) return app_do(app, APP_ACT_HELP, 0); /* a click anywhere closes the help */
    int area, i, j;
    if (!find_cell(app, x, y, &area, &i, &j)) return false;
    bool pan = start_pan(app, area, x, y);
    int before = quiz_picks(app);
    app->zoom.drag_graded = before >= 0 && app->lesson.answers[app->lesson.cell_quiz].graded;
    bool changed = cell_click(app, &L->areas[area], i, j);
    app->zoom.drag_i = pan && quiz_picks(app) != before ? i : -1; /* undone if the press becomes a drag */
    app->zoom.drag_j = j;
    return changed;
}

/* The picker's list from lesson `first` on (kept in range); the selection
 * moves along when it would leave the lessons shown, so Enter opens one
 * that is on screen. */
static bool picker_scroll(app_state *app, int first)
{
    app_player *p = &app->lesson;
    int n = p->have_catalog ? p->catalog.n : 0, rows = p->picker_rows > 0 ? p->picker_rows : 1;
    first = clamp(first, 0, at_least(n - rows, 0));
    if (first == p->picker_first) return false;
    p->picker_first = first;
    p->sel = clamp(p->sel, first, first + rows - 1);
    if (p->sel >= n) p->sel = n - 1;
    p->confirm_reset = false;
    app->dirty = true;
    return true;
}

/* The lesson panel's text (dock: its docked quiz) scrolled to s pixels, kept in range. */
static bool lesson_scroll(app_state *app, bool dock, int s)
{
    app_player *p = &app->lesson;
    int *at = dock ? &p->dock_scroll : &p->scroll;
    s = clamp(s, 0, at_least(dock ? p->dock_h : p->content_h, 0));
    if (s == *at) return false;
    *at = s;
    app->dirty = true;
    return true;
}

bool app_wheel(app_state *app, int dy)
{
    app_player *p = &app->lesson;
    if (p->picker) return picker_scroll(app, p->picker_first - dy);
    if (p->open && app_rect_contains(app->layout.lesson_box, app->mouse_x, app->mouse_y)) {
        /* over the lesson panel: its text, or its docked quiz's own scroll */
        bool dock = p->dock_h > 0 && app_rect_contains(app->layout.lesson_dock, app->mouse_x, app->mouse_y);
        return lesson_scroll(app, dock, (dock ? p->dock_scroll : p->scroll) - (int)(dy * 48 * app->pixel_ratio));
    }
    int area, i, j;
    if (dy && zoomable(app) && find_cell(app, app->mouse_x, app->mouse_y, &area, &i, &j) &&
        app->layout.areas[area].pane == 0)
        return zoom_at(app, &app->layout.areas[area], i, j, app->mouse_x, app->mouse_y, dy);
    int n = app->trace.n_tensors;
    int s = app->stage_scroll - dy;
    if (s > n - 1) s = n - 1;
    if (s < 0) s = 0; /* also with no stage at all */
    if (s == app->stage_scroll) return false;
    app->stage_scroll = s;
    app->dirty = true;
    return true;
}

/* ---- a finger ------------------------------------------------------------- */

/* What a finger's drag moves, decided where it went down. */
enum { TOUCH_NOTHING, TOUCH_LESSON, TOUCH_DOCK, TOUCH_PICKER, TOUCH_PICTURE, TOUCH_DIVIDER };

static int touch_target(const app_state *app, int x, int y)
{
    const app_layout *L = &app->layout;
    const app_player *p = &app->lesson;
    int area, i, j;
    if (app->quit_confirm || app->save_menu.open || app->edit.open || app->help || app->menu_open) return TOUCH_NOTHING;
    if (p->picker) return app_rect_contains(L->picker_box, x, y) ? TOUCH_PICKER : TOUCH_NOTHING;
    if (p->open && p->dock_h > 0 && app_rect_contains(L->lesson_dock, x, y)) return TOUCH_DOCK;
    if (p->open && app_rect_contains(L->lesson_box, x, y)) return TOUCH_LESSON;
    for (int h = L->n_hits - 1; h >= 0; h--)
        if (app_rect_contains(L->hits[h].r, x, y))
            return L->hits[h].action == APP_ACT_DIVIDER ? TOUCH_DIVIDER : TOUCH_NOTHING;
    return zoomable(app) && find_cell(app, x, y, &area, &i, &j) ? TOUCH_PICTURE : TOUCH_NOTHING;
}

bool app_touch_down(app_state *app, int x, int y)
{
    const app_player *p = &app->lesson;
    int what = touch_target(app, x, y);
    app->touch.down = true;
    app->touch.dragging = false;
    app->touch.x0 = x;
    app->touch.y0 = y;
    app->touch.what = what;
    app->touch.scroll0 = what == TOUCH_DOCK ? p->dock_scroll : what == TOUCH_LESSON ? p->scroll
                       : what == TOUCH_PICKER ? p->picker_first : 0;
    return app_mouse_move(app, x, y); /* what is under the finger shows while it is down */
}

/* The finger left the slop: a drag from now on, which clicks nothing. */
static bool touch_drag_starts(app_state *app)
{
    int area, i, j, x0 = app->touch.x0, y0 = app->touch.y0;
    app->touch.dragging = true;
    if (app->touch.what == TOUCH_PICTURE && find_cell(app, x0, y0, &area, &i, &j) && start_pan(app, area, x0, y0))
        app->zoom.drag_i = app->zoom.drag_j = -1; /* nothing was picked to undo */
    if (app->touch.what == TOUCH_DIVIDER) app->divider_drag = true;
    return app_mouse_leave(app); /* a drag shows no tooltip */
}

bool app_touch_move(app_state *app, int x, int y)
{
    int slop = (int)lroundf(APP_TOUCH_SLOP * (app->pixel_ratio > 0 ? app->pixel_ratio : 1.0f));
    if (!app->touch.down) return false;
    bool changed = false;
    if (!app->touch.dragging) {
        if (abs(x - app->touch.x0) <= slop && abs(y - app->touch.y0) <= slop) return false; /* still a tap */
        changed = touch_drag_starts(app);
    }
    int dy = y - app->touch.y0, row = app->layout.picker_rows > 0 ? app->layout.picker_list.h / app->layout.picker_rows : 0;
    switch (app->touch.what) {
    case TOUCH_LESSON:
    case TOUCH_DOCK: return lesson_scroll(app, app->touch.what == TOUCH_DOCK, app->touch.scroll0 - dy) || changed;
    case TOUCH_PICKER: /* the list follows the finger, a lesson per row's height */
        return (row > 0 && picker_scroll(app, app->touch.scroll0 - (int)lround((double)dy / row))) || changed;
    case TOUCH_PICTURE:
    case TOUCH_DIVIDER:
        return ((app->zoom.dragging || app->divider_drag) && app_mouse_drag(app, x, y)) || changed;
    default: return changed;
    }
}

bool app_touch_up(app_state *app)
{
    if (!app->touch.down) return false;
    bool tap = !app->touch.dragging, changed = false;
    app->touch.down = app->touch.dragging = false;
    if (tap) changed = app_mouse_down(app, app->touch.x0, app->touch.y0);
    app_mouse_up(app);
    return app_mouse_leave(app) || changed; /* a tap's tooltip leaves with the finger */
}

bool app_touch_cancel(app_state *app)
{
    app->touch.down = app->touch.dragging = false;
    app_mouse_up(app);
    return app_mouse_leave(app);
}

bool app_exposed(app_state *app)
{
    app->dirty = true;
    return true;
}
