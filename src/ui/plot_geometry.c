/* plot_geometry.c — the query–key geometry view (key a): one head's queries
 * and keys as arrows, the chosen query's weights on its keys, and its context
 * as the weighted sum of the value arrows. The numbers come from geometry.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "geometry.h"
#include "i18n.h"
#include "plot.h"

#define Q_COLOR   0xFFFFB74Du /* queries: orange */
#define K_COLOR   0xFF4FC3F7u /* keys: the accent blue */
#define V_COLOR   0xFF81C784u /* values: green */
#define AXIS      0xFF4A4A58u

#define LABELS_MAX (3 * UI_GEOM_MAX)

typedef struct {
    float cx, cy, sc; /* the origin on screen, pixels per unit */
    ui_rect placed[LABELS_MAX]; /* labels drawn so far, which later ones step around */
    int n_placed;
} plane;

static float sx(const plane *p, const float v[2]) { return p->cx + v[0] * p->sc; }
static float sy(const plane *p, const float v[2]) { return p->cy - v[1] * p->sc; }

static uint32_t alpha(uint32_t c, float a)
{
    unsigned al = (unsigned)lroundf(255.0f * (a < 0 ? 0 : a > 1 ? 1 : a));
    return (c & 0x00FFFFFFu) | al << 24;
}

/* A square plot in box with the origin at its centre and room for labels; r the largest length drawn. */
static void fit(ui_draw *dl, ui_rect box, float r, plane *out)
{
    int u = ui_line(dl);
    float half = (float)(box.w < box.h ? box.w : box.h) / 2 - 2.5f * u;
    plane p = {box.x + box.w / 2.0f, box.y + box.h / 2.0f, r > 0 ? half / r : 1, {{0}}, 0};
    ui_line_to(dl, box.x + u, (int)p.cy, box.x + box.w - u, (int)p.cy, 1, AXIS);
    ui_line_to(dl, (int)p.cx, box.y + u / 2, (int)p.cx, box.y + box.h - u / 2, 1, AXIS);
    *out = p;
}

static bool overlaps(const plane *p, ui_rect r)
{
    for (int i = 0; i < p->n_placed; i++) {
        ui_rect o = ui_rect_intersect(r, p->placed[i]);
        if (o.w > 0 && o.h > 0) return true;
    }
    return false;
}

/* A label just beyond the tip of the arrow from the origin to v; when an
 * earlier label is there, further out along the arrow, then beside it. */
static void tip_label(ui_draw *dl, plane *p, const float v[2], const char *s, uint32_t c)
{
    int u = ui_line(dl), w = ui_text_w(dl, s);
    float n = hypotf(v[0], v[1]), dx = n > 0 ? v[0] / n : 1, dy = n > 0 ? -v[1] / n : 0;
    static const float OUT[] = {0.6f, 1.5f, 0.6f, 0.6f, 2.5f, 1.5f, 1.5f, 3.5f, 2.5f, 2.5f, 0.6f, 0.6f, 4.5f};
    static const float SIDE[] = {0, 0, 1, -1, 0, 1, -1, 0, 1.5f, -1.5f, 2, -2, 0};
    ui_rect r = {0};
    for (int k = 0; k < (int)(sizeof OUT / sizeof OUT[0]); k++) {
        float x = sx(p, v) + dx * u * OUT[k] - dy * u * SIDE[k], y = sy(p, v) + dy * u * OUT[k] + dx * u * SIDE[k];
        r = (ui_rect){(int)lroundf(x - (dx < -0.3f ? w : dx < 0.3f ? w / 2.0f : 0)), (int)lroundf(y - u / 2.0f), w, u};
        if (!overlaps(p, r)) break;
    }
    ui_text(dl, s, r.x, r.y, c);
    if (p->n_placed < LABELS_MAX) p->placed[p->n_placed++] = r;
}

/* The arc at radius |v1| from v0's direction to v1's: the turn RoPE gave. In
 * the head's own plane (exact) RoPE turns counter-clockwise, by the position
 * in radians; in a projection the shorter way round is drawn. */
static void turn(ui_draw *dl, const plane *p, const float v0[2], const float v1[2], bool exact, uint32_t c)
{
    float a0 = atan2f(v0[1], v0[0]), a1 = atan2f(v1[1], v1[0]), r = hypotf(v1[0], v1[1]) * p->sc;
    float da = exact ? fmodf(a1 - a0 + 4 * 3.14159265f, 2 * 3.14159265f) : remainderf(a1 - a0, 2 * 3.14159265f);
    int steps = (int)ceilf(fabsf(da) * r / 6) + 1;
    for (int i = 0; i < steps; i++) {
        float t0 = a0 + da * i / steps, t1 = a0 + da * (i + 1) / steps;
        ui_segment(dl, p->cx + r * cosf(t0), p->cy - r * sinf(t0), p->cx + r * cosf(t1), p->cy - r * sinf(t1), 1.5f, c);
    }
}

/* The query the picture is about: the one under the mouse, else the selected row, else the last. */
static int shown_query(const ui_app *app, const ui_geom *g)
{
    if (app->geom_hover >= 0 && app->geom_hover < g->s) return app->geom_hover;
    if (app->view.row >= 0 && app->view.row < g->s) return app->view.row;
    return g->s - 1;
}

static void qk_panel(ui_draw *dl, const ui_geom *g, int qi, ui_rect box)
{
    int u = ui_line(dl);
    float r = 0;
    for (int i = 0; i < g->s; i++) r = fmaxf(r, hypotf(g->q[i][0], g->q[i][1]));
    for (int j = 0; j < g->t; j++) r = fmaxf(r, hypotf(g->k[j][0], g->k[j][1]));
    plane p;
    fit(dl, box, r, &p);
    float t = fmaxf(2.0f, u / 8.0f), head = u * 0.7f;
    char buf[32];
    for (int j = 0; j < g->t; j++) {
        float w = g->w[qi][j];
        if (g->rope && w > 0) {
            ui_arrow(dl, p.cx, p.cy, sx(&p, g->k0[j]), sy(&p, g->k0[j]), 1, head * 0.7f, alpha(K_COLOR, 0.25f));
            turn(dl, &p, g->k0[j], g->k[j], g->exact, alpha(K_COLOR, 0.45f));
        }
        ui_arrow(dl, p.cx, p.cy, sx(&p, g->k[j]), sy(&p, g->k[j]), t * (0.6f + 3 * w), head,
                 alpha(K_COLOR, w > 0 ? 0.45f + 0.55f * fminf(1, 3 * w) : 0.25f));
    }
    for (int i = 0; i < g->s; i++) {
        bool on = i == qi;
        if (g->rope && on) {
            ui_arrow(dl, p.cx, p.cy, sx(&p, g->q0[i]), sy(&p, g->q0[i]), 1, head * 0.7f, alpha(Q_COLOR, 0.3f));
            turn(dl, &p, g->q0[i], g->q[i], g->exact, alpha(Q_COLOR, 0.6f));
        }
        ui_arrow(dl, p.cx, p.cy, sx(&p, g->q[i]), sy(&p, g->q[i]), on ? 2 * t : t, on ? head * 1.2f : head * 0.8f,
                 alpha(Q_COLOR, on ? 1 : 0.35f));
        ui_rect hit = {(int)(sx(&p, g->q[i]) - u * 0.7f), (int)(sy(&p, g->q[i]) - u * 0.7f), (int)(1.4f * u), (int)(1.4f * u)};
        ui_layout_hit(dl->layout, hit, UI_ACT_ROW, i);
    }
    /* labels last, the query's first and then the keys by weight, so the
     * ones that matter get the places nearest their tips */
    tip_label(dl, &p, g->q[qi], g->q_label[qi], Q_COLOR);
    bool done[UI_GEOM_MAX] = {false};
    for (int n = 0; n < g->t; n++) {
        int j = -1;
        for (int c = 0; c < g->t; c++)
            if (!done[c] && (j < 0 || g->w[qi][c] > g->w[qi][j])) j = c;
        done[j] = true;
        float w = g->w[qi][j];
        snprintf(buf, sizeof buf, "%s %.2f", g->k_label[j], w);
        tip_label(dl, &p, g->k[j], w > 0 ? buf : g->k_label[j], w > 0 ? UI_TEXT : UI_TEXT_DIM);
    }
}

static void value_panel(ui_draw *dl, const ui_geom *g, int qi, ui_rect box)
{
    int u = ui_line(dl);
    float r = hypotf(g->ctx[qi][0], g->ctx[qi][1]), acc[2] = {0, 0};
    for (int j = 0; j < g->t; j++) {
        r = fmaxf(r, hypotf(g->v[j][0], g->v[j][1]));
        acc[0] += g->w[qi][j] * g->v[j][0], acc[1] += g->w[qi][j] * g->v[j][1];
        r = fmaxf(r, hypotf(acc[0], acc[1]));
    }
    plane p;
    fit(dl, box, r, &p);
    float t = fmaxf(2.0f, u / 8.0f), head = u * 0.7f;
    for (int j = 0; j < g->t; j++)
        ui_arrow(dl, p.cx, p.cy, sx(&p, g->v[j]), sy(&p, g->v[j]), 1, head * 0.7f, alpha(V_COLOR, 0.4f));
    /* wᵢ₀v₀ + wᵢ₁v₁ + …: each value arrow shrunk by its weight, tip to tail */
    float at[2] = {0, 0};
    for (int j = 0; j < g->t; j++) {
        float w = g->w[qi][j], to[2] = {at[0] + w * g->v[j][0], at[1] + w * g->v[j][1]};
        if (w > 0) ui_arrow(dl, sx(&p, at), sy(&p, at), sx(&p, to), sy(&p, to), t, head * 0.8f, V_COLOR);
        at[0] = to[0], at[1] = to[1];
    }
    ui_arrow(dl, p.cx, p.cy, sx(&p, g->ctx[qi]), sy(&p, g->ctx[qi]), 2 * t, head * 1.2f, Q_COLOR);
    tip_label(dl, &p, g->ctx[qi], _("context"), Q_COLOR);
    for (int j = 0; j < g->t; j++) tip_label(dl, &p, g->v[j], g->k_label[j], UI_TEXT_DIM);
}

void ui_plot_geometry(ui_draw *dl, const ui_app *app, ui_rect box)
{
    int u = ui_line(dl);
    ui_geom *g = malloc(sizeof *g);
    char err[240], line[400];
    if (!g || ui_geom_build(&app->trace, app->view.layer, app->view.batch, app->view.head, g, err, sizeof err)) {
        ui_text_wrap(dl, g ? err : _("out of memory"), box.x, box.y + u, box.w, UI_ERROR);
        free(g);
        return;
    }
    int qi = shown_query(app, g);
    /* the caption: what the arrows are, and whether the plane is exact */
    if (g->exact)
        snprintf(line, sizeof line, _("head %d: the plane is the head's own space (dₖ = %d), drawn exactly."), app->view.head,
                 g->dk);
    else
        snprintf(line, sizeof line,
                 _("head %d: dₖ = %d, drawn as a projection on the two main axes of the arrows (PCA): the plane keeps %.0f%% "
                   "of q and k and %.0f%% of v."),
                 app->view.head, g->dk, 100 * g->qk_kept, 100 * g->v_kept);
    int y = box.y + ui_text_wrap(dl, line, box.x, box.y, box.w, UI_TEXT) * u;
    snprintf(line, sizeof line,
             _("query %s (click or hover another): score = q·k = ‖q‖ ‖k‖ cos θ, so long keys pointing its way win the "
               "softmax; the numbers are its weights."),
             g->q_label[qi]);
    y += ui_text_wrap(dl, line, box.x, y, box.w, UI_TEXT_DIM) * u;
    if (g->rope) y += ui_text_wrap(dl, _("RoPE on: faint arrows are q and k before it; each turns by an angle that grows with its position."),
                                   box.x, y, box.w, UI_TEXT_DIM) * u;
    y += u / 2;
    int h = box.y + box.h - y - u - u / 2, half = (box.w - u) / 2;
    if (h < 4 * u || half < 6 * u) {
        free(g);
        return;
    }
    ui_rect left = {box.x, y + u + u / 4, half, h}, right = {box.x + half + u, y + u + u / 4, half, h};
    ui_text(dl, _("queries and keys"), left.x, y, Q_COLOR);
    ui_text(dl, _("values, and the context Σ wⱼ vⱼ"), right.x, y, V_COLOR);
    ui_frame(dl, left.x, left.y, left.w, left.h, 1, UI_PANEL_HI);
    ui_frame(dl, right.x, right.y, right.w, right.h, 1, UI_PANEL_HI);
    qk_panel(dl, g, qi, left);
    value_panel(dl, g, qi, right);
    free(g);
}
