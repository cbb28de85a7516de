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

#define LABELS_MAX (3 * DRAW_GEOM_MAX)
#define POINTS_MAX (6 * DRAW_GEOM_MAX)
#define SEGS_MAX 1024 /* the arrows and arcs a panel drew, which its labels keep off */

typedef struct {
    float x0, y0, x1, y1;
} seg;

/* A panel's plane: where the origin is on screen, and pixels per unit (one
 * scale for both axes, so angles and the lengths that make q·k stay true). */
typedef struct {
    float cx, cy, sc;
    app_rect box;  /* the panel: nothing is drawn outside it */
    app_rect inner; /* where arrow tips and labels may go */
    app_rect placed[LABELS_MAX]; /* labels drawn so far, which later ones step around */
    int n_placed;
    seg segs[SEGS_MAX]; /* the lines drawn (arrows, arcs, the chain), which labels step around where they can */
    int n_segs;
    int dropped;   /* labels left out: the first with no free place inside the panel, and all after it */
    int cut;       /* arrows longer than the panel, cut at its edge */
} plane;

/* The extent the picture is fitted to, from the origin and the arrow tips:
 * their box, but with an arrow longer than 3 times the median length counted
 * as that long. One outlier (an attention sink's key, often 5-10 times the
 * others) would otherwise shrink every other arrow into a clump at the
 * centre; it is drawn cut at the panel's edge instead. */
typedef struct {
    float x0, y0, x1, y1;
} extent;

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The median is over the first n_arrows points (the arrows drawn from the
 * origin); the rest (the chain of weighted values) only widen the box. */
static extent robust_extent(const float (*pt)[2], int n, int n_arrows)
{
    extent e = {0, 0, 0, 0};
    float len[POINTS_MAX];
    int m = 0;
    for (int i = 0; i < n_arrows && m < POINTS_MAX; i++) {
        float l = hypotf(pt[i][0], pt[i][1]);
        if (l > 0 && isfinite(l)) len[m++] = l;
    }
    if (!m) return e;
    qsort(len, (size_t)m, sizeof *len, by_value);
    float cap = 3 * len[m / 2];
    for (int i = 0; i < n; i++) {
        float l = hypotf(pt[i][0], pt[i][1]), f = l > cap ? cap / l : 1;
        if (!isfinite(l)) continue;
        e.x0 = fminf(e.x0, f * pt[i][0]), e.x1 = fmaxf(e.x1, f * pt[i][0]);
        e.y0 = fminf(e.y0, f * pt[i][1]), e.y1 = fmaxf(e.y1, f * pt[i][1]);
    }
    return e;
}

/* The room a panel keeps around the arrows for their labels. */
static int margin_x(int u) { return u + u / 2; }
static int margin_y(int u) { return u; }

/* Pixels per unit that fit extent e into a w × h panel. */
static float scale_for(const extent *e, int w, int h, int u)
{
    float bw = e->x1 - e->x0, bh = e->y1 - e->y0;
    float aw = (float)(w - 2 * margin_x(u)), ah = (float)(h - 2 * margin_y(u));
    if (aw < 1 || ah < 1) return 0;
    if (!(bw > 0) && !(bh > 0)) return 1;
    return fminf(bw > 0 ? aw / bw : 1e30f, bh > 0 ? ah / bh : 1e30f);
}

/* The plane of panel box fitted to e, its extent centred, and its axes. */
static void fit(draw_list *dl, app_rect box, const extent *e, plane *out)
{
    int u = draw_line_h(dl);
    float sc = scale_for(e, box.w, box.h, u);
    if (!(sc > 0)) sc = 1;
    sc = fminf(sc, 1e30f); /* arrows of 10⁻³⁸ would make it ∞ */
    plane p = {0};
    p.sc = sc;
    p.cx = box.x + box.w / 2.0f - sc * (e->x0 + e->x1) / 2;
    p.cy = box.y + box.h / 2.0f + sc * (e->y0 + e->y1) / 2;
    p.box = box;
    p.inner = (app_rect){box.x + u / 4, box.y + u / 4, box.w - u / 2, box.h - u / 2};
    draw_line_to(dl, box.x + u / 2, (int)p.cy, box.x + box.w - u / 2, (int)p.cy, 1, AXIS);
    draw_line_to(dl, (int)p.cx, box.y + u / 2, (int)p.cx, box.y + box.h - u / 2, 1, AXIS);
    *out = p;
}

/* Where v's tip is on screen, pulled back along the arrow to the panel's
 * inner edge when it lies beyond (returns true then). */
static bool tip(const plane *p, const float v[2], float *x, float *y)
{
    /* in double: an arrow 10³⁰ long on a plane of 10¹⁰ pixels a unit (one
     * outlier among tiny arrows) is past float's range before it is cut */
    double tx = p->cx + (double)v[0] * p->sc, ty = p->cy - (double)v[1] * p->sc, dx = tx - p->cx, dy = ty - p->cy, f = 1;
    double x0 = p->inner.x, x1 = p->inner.x + p->inner.w, y0 = p->inner.y, y1 = p->inner.y + p->inner.h;
    if (tx > x1 && dx > 0) f = fmin(f, (x1 - p->cx) / dx);
    if (tx < x0 && dx < 0) f = fmin(f, (x0 - p->cx) / dx);
    if (ty > y1 && dy > 0) f = fmin(f, (y1 - p->cy) / dy);
    if (ty < y0 && dy < 0) f = fmin(f, (y0 - p->cy) / dy);
    *x = (float)(p->cx + f * dx), *y = (float)(p->cy + f * dy);
    return f < 1;
}

static float sx(const plane *p, const float v[2]) { float x, y; tip(p, v, &x, &y); return x; }
static float sy(const plane *p, const float v[2]) { float x, y; tip(p, v, &x, &y); return y; }

/* Remembers a line drawn on p, for the labels to keep off (as many as fit). */
static void keep_off(plane *p, float x0, float y0, float x1, float y1)
{
    if (p->n_segs < SEGS_MAX) p->segs[p->n_segs++] = (seg){x0, y0, x1, y1};
}

/* An arrow from the origin to v; one longer than the panel is cut at its
 * edge, drawn with a double head, and counted for the note. */
static void arrow(draw_list *dl, plane *p, const float v[2], float t, float head, uint32_t c, bool count)
{
    float x, y;
    bool cut = tip(p, v, &x, &y);
    draw_arrow(dl, p->cx, p->cy, x, y, t, head, c);
    keep_off(p, p->cx, p->cy, x, y);
    if (!cut) return;
    float d = hypotf(x - p->cx, y - p->cy);
    if (d > 2 * head) { /* a second head behind the first: it goes on */
        float f = (d - head * 0.8f) / d;
        draw_arrow(dl, p->cx, p->cy, p->cx + f * (x - p->cx), p->cy + f * (y - p->cy), t, head, c);
    }
    p->cut += count;
}

static uint32_t alpha(uint32_t c, float a)
{
    unsigned al = (unsigned)lroundf(255.0f * (a < 0 ? 0 : a > 1 ? 1 : a));
    return (c & 0x00FFFFFFu) | al << 24;
}

static bool overlaps(const plane *p, app_rect r)
{
    for (int i = 0; i < p->n_placed; i++) {
        app_rect o = app_rect_intersect(r, p->placed[i]);
        if (o.w > 0 && o.h > 0) return true;
    }
    return false;
}

static bool inside(app_rect r, app_rect box)
{
    return r.x >= box.x && r.y >= box.y && r.x + r.w <= box.x + box.w && r.y + r.h <= box.y + box.h;
}

/* Whether segment s passes through r (Liang–Barsky: the part of s inside r's
 * slabs in x and in y is not empty). */
static bool crosses(const seg *s, app_rect r)
{
    float t0 = 0, t1 = 1, d[2] = {s->x1 - s->x0, s->y1 - s->y0}, o[2] = {s->x0, s->y0};
    float lo[2] = {(float)r.x, (float)r.y}, hi[2] = {(float)(r.x + r.w), (float)(r.y + r.h)};
    for (int a = 0; a < 2; a++) {
        if (fabsf(d[a]) < 1e-6f) {
            if (o[a] < lo[a] || o[a] > hi[a]) return false;
            continue;
        }
        float ta = (lo[a] - o[a]) / d[a], tb = (hi[a] - o[a]) / d[a];
        if (ta > tb) { float x = ta; ta = tb; tb = x; }
        t0 = fmaxf(t0, ta), t1 = fminf(t1, tb);
        if (t0 > t1) return false;
    }
    return true;
}

/* Whether a label at r would lie on a line drawn on p (a pixel of room around it). */
static bool on_a_line(const plane *p, app_rect r)
{
    app_rect pad = {r.x - 1, r.y - 1, r.w + 2, r.h + 2};
    for (int i = 0; i < p->n_segs; i++)
        if (crosses(&p->segs[i], pad)) return true;
    return false;
}

/* A label near the tip of the arrow to v, inside the panel, clear of every
 * label placed before it and, where it can be, of every line drawn (arrows,
 * RoPE's arcs, the chain of values): just beyond the tip, else further out
 * along the arrow or beside it, else further still; a leader line to the tip
 * from any label not right at it.
 * With no such place it is left out, and so is every label after it
 * (counted in p->dropped): labels come in order of weight, so the ones left
 * out are exactly those of the smallest weights. */
enum { NEAR = 13, RINGS = 8, ANGLES = 16, PLACES = NEAR + RINGS * ANGLES };

/* The k-th place tip_label tries for a label w wide of the arrow whose tip is
 * (tx, ty), pointing (dx, dy): beyond the tip, along the arrow or beside it
 * (the text hanging from that side); then rings further out, the nearest
 * first, from the arrow's direction round, centred there. */
static app_rect label_place(int k, float tx, float ty, float dx, float dy, int w, int u)
{
    static const float OUT[NEAR] = {0.6f, 1.5f, 0.6f, 0.6f, 2.5f, 1.5f, 1.5f, 3.5f, 2.5f, 2.5f, 0.6f, 0.6f, 4.5f};
    static const float SIDE[NEAR] = {0, 0, 1, -1, 0, 1, -1, 0, 1.5f, -1.5f, 2, -2, 0};
    if (k < NEAR) {
        float x = tx + dx * u * OUT[k] - dy * u * SIDE[k], y = ty + dy * u * OUT[k] + dx * u * SIDE[k];
        return (app_rect){(int)lroundf(x - (dx < -0.3f ? w : dx < 0.3f ? w / 2.0f : 0)), (int)lroundf(y - u / 2.0f), w, u};
    }
    int ring = (k - NEAR) / ANGLES, a = (k - NEAR) % ANGLES;
    float rad = u * (3.0f + 1.5f * ring), ang = atan2f(dy, dx) + (a % 2 ? -1 : 1) * ((a + 1) / 2) * (6.2831853f / ANGLES);
    float x = tx + rad * cosf(ang), y = ty + rad * sinf(ang);
    return (app_rect){(int)lroundf(x - w / 2.0f), (int)lroundf(y - u / 2.0f), w, u};
}

/* Whether the leader l crosses a label placed on p. */
static bool leader_crosses(const plane *p, const seg *l)
{
    for (int i = 0; i < p->n_placed; i++)
        if (crosses(l, p->placed[i])) return true;
    return false;
}

static bool tip_label(draw_list *dl, plane *p, const float v[2], const char *s, uint32_t c)
{
    if (p->dropped) { /* one before it found no place: the ones after weigh less and are left out too */
        p->dropped++;
        return false;
    }
    int u = draw_line_h(dl), w = draw_text_w(dl, s);
    float n = hypotf(v[0], v[1]), dx = n > 0 ? v[0] / n : 1, dy = n > 0 ? -v[1] / n : 0, tx, ty;
    tip(p, v, &tx, &ty);
    /* first a place off every line drawn too; where there is none, one on a line rather than none */
    for (int k = 0; k < 2 * PLACES; k++) {
        bool lines = k < PLACES;
        app_rect r = label_place(k % PLACES, tx, ty, dx, dy, w, u);
        if (!inside(r, p->inner) || overlaps(p, r) || (lines && on_a_line(p, r))) continue;
        /* a label away from its tip (further out, or stepped around a line) gets a leader to it */
        float lx = fminf(fmaxf(tx, (float)r.x), (float)(r.x + r.w)), ly = fminf(fmaxf(ty, (float)r.y), (float)(r.y + r.h));
        seg leader = {tx, ty, lx, ly};
        bool led = k % PLACES >= NEAR || hypotf(lx - tx, ly - ty) > 0.8f * u;
        if (led && lines && leader_crosses(p, &leader)) continue;
        if (led) {
            draw_segment(dl, tx, ty, lx, ly, 1, alpha(c, 0.5f));
            keep_off(p, tx, ty, lx, ly);
        }
        draw_text(dl, s, r.x, r.y, c);
        if (p->n_placed < LABELS_MAX) p->placed[p->n_placed++] = r;
        return true;
    }
    p->dropped++;
    return false;
}

/* The arc at radius |v1| from v0's direction to v1's: the turn RoPE gave. In
 * the head's own plane (exact) RoPE turns counter-clockwise, by the position
 * in radians; in a projection the shorter way round is drawn. */
static void turn(draw_list *dl, plane *p, const float v0[2], const float v1[2], bool exact, uint32_t c)
{
    float a0 = atan2f(v0[1], v0[0]), a1 = atan2f(v1[1], v1[0]), r = hypotf(v1[0], v1[1]) * p->sc;
    float da = exact ? fmodf(a1 - a0 + 4 * 3.14159265f, 2 * 3.14159265f) : remainderf(a1 - a0, 2 * 3.14159265f);
    if (!(r < 1e5f)) return; /* an arc far beyond the panel (a cut arrow's) */
    int steps = (int)ceilf(fabsf(da) * r / 6) + 1;
    for (int i = 0; i < steps; i++) {
        float t0 = a0 + da * i / steps, t1 = a0 + da * (i + 1) / steps;
        draw_segment(dl, p->cx + r * cosf(t0), p->cy - r * sinf(t0), p->cx + r * cosf(t1), p->cy - r * sinf(t1), 1.5f, c);
        keep_off(p, p->cx + r * cosf(t0), p->cy - r * sinf(t0), p->cx + r * cosf(t1), p->cy - r * sinf(t1));
    }
}

/* The query the picture is about: the one under the mouse, else the selected row, else the last. */
static int shown_query(const app_state *app, const draw_geom *g)
{
    if (app->geom_hover >= 0 && app->geom_hover < g->s) return app->geom_hover;
    if (app->view.row >= 0 && app->view.row < g->s) return app->view.row;
    return g->s - 1;
}

/* The tips a panel shows, for its extent: q and k (and before RoPE), or the
 * values, the context and the chain of weighted values that sums to it. */
static int qk_points(const draw_geom *g, int qi, float (*pt)[2])
{
    int n = 0;
    for (int i = 0; i < g->s; i++) pt[n][0] = g->q[i][0], pt[n][1] = g->q[i][1], n++;
    for (int j = 0; j < g->t; j++) pt[n][0] = g->k[j][0], pt[n][1] = g->k[j][1], n++;
    if (g->rope) {
        pt[n][0] = g->q0[qi][0], pt[n][1] = g->q0[qi][1], n++;
        for (int j = 0; j < g->t; j++) pt[n][0] = g->k0[j][0], pt[n][1] = g->k0[j][1], n++;
    }
    return n;
}

/* The chain's point after the first j + 1 weighted values: Σ_{j' ≤ j} w_{qi j'} v_{j'}
 * (in double: its terms are finite, see draw_geom_build, their sums may not be floats). */
static void chain_at(const draw_geom *g, int qi, int j, double acc[2], float out[2])
{
    acc[0] += (double)g->w[qi][j] * g->v[j][0], acc[1] += (double)g->w[qi][j] * g->v[j][1];
    out[0] = (float)fmax(-1e30, fmin(1e30, acc[0])), out[1] = (float)fmax(-1e30, fmin(1e30, acc[1]));
}

static int v_points(const draw_geom *g, int qi, float (*pt)[2])
{
    int n = 0;
    double acc[2] = {0, 0};
    for (int j = 0; j < g->t; j++) pt[n][0] = g->v[j][0], pt[n][1] = g->v[j][1], n++;
    for (int j = 0; j < g->t; j++) chain_at(g, qi, j, acc, pt[n++]);
    pt[n][0] = g->ctx[qi][0], pt[n][1] = g->ctx[qi][1], n++;
    return n;
}

/* The keys (or values) in order of the chosen query's weight, largest first:
 * the order their labels are placed in. */
static void by_weight(const draw_geom *g, int qi, int *order)
{
    bool done[DRAW_GEOM_MAX] = {false};
    for (int n = 0; n < g->t; n++) {
        int j = -1;
        for (int c = 0; c < g->t; c++)
            if (!done[c] && (j < 0 || g->w[qi][c] > g->w[qi][j])) j = c;
        done[j] = true;
        order[n] = j;
    }
}

static void qk_panel(draw_list *dl, const draw_geom *g, int qi, app_rect box, plane *p)
{
    int u = draw_line_h(dl);
    float t = fmaxf(2.0f, u / 8.0f), head = u * 0.7f;
    char buf[32];
    draw_clip_push(dl, p->box);
    for (int j = 0; j < g->t; j++) {
        float w = g->w[qi][j];
        if (g->rope && w > 0) {
            arrow(dl, p, g->k0[j], 1, head * 0.7f, alpha(K_COLOR, 0.25f), false);
            turn(dl, p, g->k0[j], g->k[j], g->exact, alpha(K_COLOR, 0.45f));
        }
        arrow(dl, p, g->k[j], t * (0.6f + 3 * w), head, alpha(K_COLOR, w > 0 ? 0.45f + 0.55f * fminf(1, 3 * w) : 0.25f), true);
    }
    for (int i = 0; i < g->s; i++) {
        bool on = i == qi;
        if (g->rope && on) {
            arrow(dl, p, g->q0[i], 1, head * 0.7f, alpha(Q_COLOR, 0.3f), false);
            turn(dl, p, g->q0[i], g->q[i], g->exact, alpha(Q_COLOR, 0.6f));
        }
        arrow(dl, p, g->q[i], on ? 2 * t : t, on ? head * 1.2f : head * 0.8f, alpha(Q_COLOR, on ? 1 : 0.35f), true);
        float x = sx(p, g->q[i]), y = sy(p, g->q[i]);
        app_rect hit = {(int)(x - u * 0.7f), (int)(y - u * 0.7f), (int)(1.4f * u), (int)(1.4f * u)};
        app_layout_hit(dl->layout, app_rect_intersect(hit, box), APP_ACT_ROW, i);
    }
    draw_clip_pop(dl);
    /* labels last, the query's first and then the keys by weight, so the
     * ones that matter get the places nearest their tips */
    tip_label(dl, p, g->q[qi], g->q_label[qi], Q_COLOR);
    int order[DRAW_GEOM_MAX];
    by_weight(g, qi, order);
    for (int n = 0; n < g->t; n++) {
        int j = order[n];
        float w = g->w[qi][j];
        snprintf(buf, sizeof buf, "%s %.2f", g->k_label[j], w);
        tip_label(dl, p, g->k[j], w > 0 ? buf : g->k_label[j], w > 0 ? DRAW_TEXT : DRAW_TEXT_DIM);
    }
}

static void value_panel(draw_list *dl, const draw_geom *g, int qi, plane *p)
{
    int u = draw_line_h(dl);
    float t = fmaxf(2.0f, u / 8.0f), head = u * 0.7f;
    draw_clip_push(dl, p->box);
    for (int j = 0; j < g->t; j++) arrow(dl, p, g->v[j], 1, head * 0.7f, alpha(V_COLOR, 0.4f), true);
    /* wᵢ₀v₀ + wᵢ₁v₁ + …: each value arrow shrunk by its weight, tip to tail */
    float at[2] = {0, 0}, to[2];
    double acc[2] = {0, 0};
    for (int j = 0; j < g->t; j++) {
        chain_at(g, qi, j, acc, to);
        if (g->w[qi][j] > 0) {
            draw_arrow(dl, sx(p, at), sy(p, at), sx(p, to), sy(p, to), t, head * 0.8f, V_COLOR);
            keep_off(p, sx(p, at), sy(p, at), sx(p, to), sy(p, to));
        }
        at[0] = to[0], at[1] = to[1];
    }
    arrow(dl, p, g->ctx[qi], 2 * t, head * 1.2f, Q_COLOR, true);
    draw_clip_pop(dl);
    tip_label(dl, p, g->ctx[qi], _("context"), Q_COLOR);
    int order[DRAW_GEOM_MAX];
    by_weight(g, qi, order);
    for (int n = 0; n < g->t; n++) tip_label(dl, p, g->v[order[n]], g->k_label[order[n]], DRAW_TEXT_DIM);
}

/* Under a panel: the labels it left out and the arrows it cut, if any, in
 * shorter words when the panel is narrow. */
static void panel_note(draw_list *dl, const plane *p, int x, int y, int w)
{
    char buf[200];
    for (int brief = 0; brief < 2; brief++) {
        int n = 0;
        buf[0] = '\0';
        if (p->dropped)
            /* TRANSLATORS: the geometry view: labels with no free place near their arrow; placed by weight, largest first */
            n += snprintf(buf, sizeof buf, brief ? _("%d labels left out") : _("%d labels left out: lowest weights"),
                          p->dropped);
        if (p->cut)
            /* TRANSLATORS: the geometry view: arrows over 3 times the median length end at the panel's edge with a double head */
            snprintf(buf + n, sizeof buf - (size_t)n, brief ? _("%s%d cut") : _("%s%d long arrows cut (double head)"),
                     n ? " · " : "", p->cut);
        if (draw_text_w(dl, buf) <= w) break;
    }
    if (buf[0]) draw_text_fit(dl, buf, x, y, w, DRAW_TEXT_DIM);
}

void draw_plot_geometry(draw_list *dl, const app_state *app, app_rect box)
{
    int u = draw_line_h(dl);
    draw_geom *g = malloc(sizeof *g);
    char err[240], line[400];
    if (!g || draw_geom_build(&app->trace, app->view.layer, app->view.batch, app->view.head, g, err, sizeof err)) {
        draw_text_wrap(dl, g ? err : _("out of memory"), box.x, box.y + u, box.w, DRAW_ERROR);
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
    int y = box.y + draw_text_wrap(dl, line, box.x, box.y, box.w, DRAW_TEXT) * u;
    snprintf(line, sizeof line,
             _("query %s (click or hover another): score = q·k/√dₖ, and q·k = ‖q‖ ‖k‖ cos θ, so long keys pointing its "
               "way win the softmax; the numbers are its weights."),
             g->q_label[qi]);
    y += draw_text_wrap(dl, line, box.x, y, box.w, DRAW_TEXT_DIM) * u;
    if (g->rope) y += draw_text_wrap(dl, _("RoPE on: faint arrows are q and k before it; each turns by an angle that grows with its position."),
                                     box.x, y, box.w, DRAW_TEXT_DIM) * u;
    y += u / 2;
    /* two panels side by side, or one above the other: whichever draws the
     * arrows larger (each fitted to its own extent, one scale for both axes) */
    float (*pt)[2] = malloc(POINTS_MAX * sizeof *pt);
    if (!pt) {
        free(g);
        return;
    }
    extent eq = robust_extent((const float(*)[2])pt, qk_points(g, qi, pt), g->s + g->t);
    int nv = v_points(g, qi, pt);
    extent ev = robust_extent((const float(*)[2])pt, nv, g->t);
    free(pt);
    int h = box.y + box.h - y - 3 * u, half_w = (box.w - u) / 2, half_h = (h - 3 * u) / 2;
    if (h < 4 * u || half_w < 6 * u) {
        free(g);
        return;
    }
    float side = fminf(scale_for(&eq, half_w, h, u), scale_for(&ev, half_w, h, u));
    float stack = half_h >= 4 * u ? fminf(scale_for(&eq, box.w, half_h, u), scale_for(&ev, box.w, half_h, u)) : 0;
    app_rect left, right;
    int ty1 = y, ty2;
    if (stack > side * 1.1f) {
        left = (app_rect){box.x, y + u + u / 4, box.w, half_h};
        ty2 = left.y + left.h + u + u / 4;
        right = (app_rect){box.x, ty2 + u + u / 4, box.w, half_h};
    } else {
        left = (app_rect){box.x, y + u + u / 4, half_w, h};
        right = (app_rect){box.x + half_w + u, y + u + u / 4, half_w, h};
        ty2 = y;
    }
    draw_text_fit(dl, _("queries and keys"), left.x, ty1, left.w, Q_COLOR);
    draw_text_fit(dl, _("values, and the context Σ wⱼ vⱼ"), right.x, ty2, right.w, V_COLOR);
    draw_outline(dl, left.x, left.y, left.w, left.h, 1, DRAW_PANEL_HI);
    draw_outline(dl, right.x, right.y, right.w, right.h, 1, DRAW_PANEL_HI);
    plane pq, pv;
    fit(dl, left, &eq, &pq);
    qk_panel(dl, g, qi, left, &pq);
    fit(dl, right, &ev, &pv);
    value_panel(dl, g, qi, &pv);
    /* each panel's note under it (stacked: between the panels, above the second's title) */
    panel_note(dl, &pq, left.x, left.y + left.h + u / 8, left.w);
    panel_note(dl, &pv, right.x, right.y + right.h + u / 8, right.w);
    free(g);
}
