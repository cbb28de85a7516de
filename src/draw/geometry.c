/* geometry.c — one head's q, k and v as 2-D points (geometry.h). */
#include "geometry.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/trace/stages.h"
#include "i18n.h"
#include "view.h"

#define AXES_MAX 512

/* Gram-Schmidt on the two columns a, b of length d: a unit, b unit and ⟂ a. */
static void orthonormalise(double *a, double *b, int d)
{
    double na = 0, ab = 0, nb = 0;
    for (int i = 0; i < d; i++) na += a[i] * a[i];
    na = sqrt(na);
    for (int i = 0; i < d; i++) a[i] = na > 0 ? a[i] / na : (i == 0);
    for (int i = 0; i < d; i++) ab += a[i] * b[i];
    for (int i = 0; i < d; i++) b[i] -= ab * a[i];
    for (int i = 0; i < d; i++) nb += b[i] * b[i];
    nb = sqrt(nb);
    if (nb < 1e-12) { /* b fell into a: any unit vector ⟂ a */
        int m = fabs(a[0]) < 0.9 ? 0 : 1;
        for (int i = 0; i < d; i++) b[i] = (i == m) - a[m] * a[i];
        orthonormalise(a, b, d);
        return;
    }
    for (int i = 0; i < d; i++) b[i] /= nb;
}

/* The top two eigenvectors of the symmetric positive semi-definite d × d
 * matrix G (the Gram matrix Σ x xᵀ) by orthogonal iteration: V ← G V,
 * re-orthonormalised, converges to the plane of the two largest eigenvalues;
 * a last 2 × 2 eigen-decomposition of Vᵀ G V orders the axes inside it. */
static void top_two(const double *G, int d, double *a, double *b, double *l1, double *l2)
{
    /* start from the columns of G with the largest diagonals: inside G's range */
    int i1 = 0, i2 = d > 1 ? 1 : 0;
    for (int i = 0; i < d; i++)
        if (G[i * d + i] > G[i1 * d + i1]) i1 = i;
    for (int i = 0; i < d; i++)
        if (i != i1 && (i2 == i1 || G[i * d + i] > G[i2 * d + i2])) i2 = i;
    for (int i = 0; i < d; i++) a[i] = G[i * d + i1] + 1e-9 * (i == i1), b[i] = G[i * d + i2] + 1e-9 * (i == i2);
    orthonormalise(a, b, d);
    double *ga = malloc(2 * (size_t)d * sizeof *ga), *gb = ga ? ga + d : NULL;
    if (!ga) return;
    for (int it = 0; it < 300; it++) {
        for (int i = 0; i < d; i++) {
            double sa = 0, sb = 0;
            for (int j = 0; j < d; j++) sa += G[i * d + j] * a[j], sb += G[i * d + j] * b[j];
            ga[i] = sa, gb[i] = sb;
        }
        memcpy(a, ga, (size_t)d * sizeof *a);
        memcpy(b, gb, (size_t)d * sizeof *b);
        orthonormalise(a, b, d);
    }
    /* B = [a b]ᵀ G [a b], 2 × 2 symmetric: rotate a, b onto its eigenvectors */
    double baa = 0, bab = 0, bbb = 0;
    for (int i = 0; i < d; i++) {
        double sa = 0, sb = 0;
        for (int j = 0; j < d; j++) sa += G[i * d + j] * a[j], sb += G[i * d + j] * b[j];
        baa += a[i] * sa, bab += a[i] * sb, bbb += b[i] * sb;
    }
    double th = 0.5 * atan2(2 * bab, baa - bbb), c = cos(th), s = sin(th);
    for (int i = 0; i < d; i++) {
        double x = a[i], y = b[i];
        a[i] = c * x + s * y;
        b[i] = -s * x + c * y;
    }
    *l1 = c * c * baa + 2 * c * s * bab + s * s * bbb;
    *l2 = s * s * baa - 2 * c * s * bab + c * c * bbb;
    free(ga);
}

float draw_geom_axes(const float *x, int n, int d, ptrdiff_t ld, float axes[2][512])
{
    memset(axes, 0, 2 * sizeof axes[0]);
    if (d <= 2 || d > AXES_MAX) {
        axes[0][0] = 1;
        if (d > 1) axes[1][1] = 1;
        return d <= 2 ? 1.0f : 0.0f;
    }
    double *G = calloc((size_t)d * d + 2 * (size_t)d, sizeof *G);
    if (!G) return 0;
    double *a = G + (size_t)d * d, *b = a + d, l1 = 0, l2 = 0, total = 0;
    for (int r = 0; r < n; r++)
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++) G[i * d + j] += (double)x[r * ld + i] * x[r * ld + j];
    for (int i = 0; i < d; i++) total += G[i * d + i];
    top_two(G, d, a, b, &l1, &l2);
    /* a sign of its own for each axis: its largest component positive */
    double *ax[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        int m = 0;
        for (int i = 1; i < d; i++)
            if (fabs(ax[k][i]) > fabs(ax[k][m])) m = i;
        double sg = ax[k][m] < 0 ? -1 : 1;
        for (int i = 0; i < d; i++) axes[k][i] = (float)(sg * ax[k][i]);
    }
    free(G);
    return total > 0 ? (float)((l1 + l2) / total) : 1.0f;
}

/* The rows of a (rows × dk) slice gathered into out (rows × dk, contiguous). */
static void gather(const app_slice *s, float *out)
{
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++) out[i * s->cols + j] = app_slice_at(s, i, j);
}

static void project(const float *x, int n, int d, float axes[2][512], float (*out)[2])
{
    for (int r = 0; r < n; r++) {
        double u = 0, v = 0;
        for (int i = 0; i < d; i++) u += (double)axes[0][i] * x[r * d + i], v += (double)axes[1][i] * x[r * d + i];
        out[r][0] = (float)u, out[r][1] = (float)v;
    }
}


/* Whether every cell of v is a finite number. */
static bool finite_slice(const app_view_slice *v)
{
    for (int i = 0; i < v->slice.rows; i++)
        for (int j = 0; j < v->slice.cols; j++)
            if (!isfinite(app_slice_at(&v->slice, i, j))) return false;
    return true;
}

/* Whether n points are finite, and small enough that a plane's pixels per
 * unit times them stays a float (plot_geometry.c's arithmetic). */
static bool drawable(const float (*pt)[2], int n)
{
    for (int i = 0; i < n; i++)
        if (!(fabsf(pt[i][0]) < 1e30f && fabsf(pt[i][1]) < 1e30f)) return false;
    return true;
}

/* The slices one head's arrows are read from: its q, k, v and weights, and
 * (with RoPE) q and k before the rotation. */
typedef struct {
    app_view_slice q, k, v, w, q0, k0;
} geom_slices;

/* Finds sl's slices in tr for this head and g's sizes and RoPE; -1 with the
 * reason in err when the trace lacks them or their sizes cannot be drawn. */
static int find_slices(const attn_trace *tr, int layer, int batch, int head, draw_geom *g, geom_slices *sl, char *err,
                       size_t errsize)
{
    static const attn_stage_id Q[] = {ATTN_STAGE_Q_ROPE, ATTN_STAGE_Q_NORM, ATTN_STAGE_Q_HEADS};
    static const attn_stage_id K[] = {ATTN_STAGE_K_CACHE, ATTN_STAGE_K_ROPE, ATTN_STAGE_K_NORM, ATTN_STAGE_K_HEADS};
    static const attn_stage_id Q0[] = {ATTN_STAGE_Q_NORM, ATTN_STAGE_Q_HEADS};
    static const attn_stage_id K0[] = {ATTN_STAGE_K_NORM, ATTN_STAGE_K_HEADS};
    static const attn_stage_id V[] = {ATTN_STAGE_V_CACHE, ATTN_STAGE_V_HEADS};
    static const attn_stage_id W[] = {ATTN_STAGE_WEIGHTS_DROPOUT, ATTN_STAGE_WEIGHTS};
    if (!app_view_first_of(tr, layer, Q, 3, batch, head, &sl->q) || !app_view_first_of(tr, layer, K, 4, batch, head, &sl->k) ||
        !app_view_first_of(tr, layer, V, 2, batch, head, &sl->v) || !app_view_first_of(tr, layer, W, 2, batch, head, &sl->w)) {
        snprintf(err, errsize, "%s", _("the geometry view needs the heads' q, k and v and the weights: this trace lacks them"));
        return -1;
    }
    g->s = sl->w.slice.rows, g->t = sl->w.slice.cols, g->dk = sl->q.slice.cols;
    if (g->s <= 0 || g->t <= 0 || g->dk <= 0 || sl->v.slice.cols <= 0) { /* another program's trace, a size 0 */
        /* TRANSLATORS: the geometry view of a trace with a size 0: queries, keys, features of a head */
        snprintf(err, errsize, _("the geometry view has nothing to draw: %d queries, %d keys, heads of %d features"),
                 g->s, g->t, g->dk);
        return -1;
    }
    if (g->s > DRAW_GEOM_MAX || g->t > DRAW_GEOM_MAX) {
        snprintf(err, errsize, _("the geometry view draws at most %d tokens (this trace has %d queries and %d keys)"),
                 DRAW_GEOM_MAX, g->s, g->t);
        return -1;
    }
    if (sl->q.slice.rows != g->s || sl->k.slice.rows != g->t || sl->v.slice.rows != g->t || sl->k.slice.cols != g->dk ||
        g->dk > AXES_MAX) {
        snprintf(err, errsize, "%s", _("the geometry view cannot read this trace's q, k and v shapes"));
        return -1;
    }
    g->rope = attn_trace_stage(tr, layer, ATTN_STAGE_Q_ROPE) != NULL;
    if (g->rope &&
        (!app_view_first_of(tr, layer, Q0, 2, batch, head, &sl->q0) || !app_view_first_of(tr, layer, K0, 2, batch, head, &sl->k0) ||
         sl->k0.slice.rows != g->t || sl->q0.slice.rows != g->s || sl->q0.slice.cols != g->dk || sl->k0.slice.cols != g->dk))
        g->rope = false; /* keys from a cache of earlier steps: their rotation is not in this trace */
    return 0;
}

/* NaN or ∞ (from the data, or a softmax of a row all −∞) has no arrow, the
 * heatmap shows it: -1 with the stage that holds one in err. */
static int check_finite(const draw_geom *g, const geom_slices *sl, char *err, size_t errsize)
{
    const app_view_slice *all[] = {&sl->q, &sl->k, &sl->v, &sl->w, &sl->q0, &sl->k0};
    for (int i = 0; i < (g->rope ? 6 : 4); i++)
        if (!finite_slice(all[i])) {
            /* TRANSLATORS: the geometry view; %s: a stage (q_rope, weights) with NaN or infinite numbers */
            snprintf(err, errsize, _("the arrows need finite numbers, and %s holds NaN or ∞ here: its heatmap shows where"),
                     all[i]->tensor->name);
            return -1;
        }
    return 0;
}

/* q, k and (with RoPE) their unrotated selves on one plane, so the turn
 * shows; x: room for their rows, (2 (s + t), dk) with RoPE, else (s + t, dk). */
static void project_queries_keys(draw_geom *g, const geom_slices *sl, float *x, float axes[2][512])
{
    int d = g->dk, nq = g->s, nk = g->t;
    int n = g->rope ? 2 * (nq + nk) : nq + nk;
    gather(&sl->q.slice, x);
    gather(&sl->k.slice, x + (size_t)nq * d);
    if (g->rope) {
        gather(&sl->q0.slice, x + (size_t)(nq + nk) * d);
        gather(&sl->k0.slice, x + (size_t)(2 * nq + nk) * d);
    }
    g->exact = d <= 2;
    g->qk_kept = draw_geom_axes(x, n, d, d, axes);
    project(x, nq, d, axes, g->q);
    project(x + (size_t)nq * d, nk, d, axes, g->k);
    if (g->rope) {
        project(x + (size_t)(nq + nk) * d, nq, d, axes, g->q0);
        project(x + (size_t)(2 * nq + nk) * d, nk, d, axes, g->k0);
    }
}

/* The value plane, and each query's context Σⱼ wᵢⱼ vⱼ in it (g->w: the
 * weights it used); xv, xc: room for the values (t, dv) and contexts (s, dv). */
static void project_values(draw_geom *g, const geom_slices *sl, float *xv, float *xc, float axes[2][512])
{
    int dv = sl->v.slice.cols, nq = g->s, nk = g->t;
    gather(&sl->v.slice, xv);
    g->v_kept = draw_geom_axes(xv, nk, dv, dv, axes);
    project(xv, nk, dv, axes, g->v);
    for (int i = 0; i < nq; i++)
        for (int j = 0; j < nk; j++) g->w[i][j] = app_slice_at(&sl->w.slice, i, j);
    for (int i = 0; i < nq; i++)
        for (int c = 0; c < dv; c++) {
            double acc = 0;
            for (int j = 0; j < nk; j++) acc += (double)g->w[i][j] * xv[j * dv + c];
            xc[i * dv + c] = (float)acc;
        }
    project(xc, nq, dv, axes, g->ctx);
}

int draw_geom_build(const attn_trace *tr, int layer, int batch, int head, draw_geom *g, char *err, size_t errsize)
{
    memset(g, 0, sizeof *g);
    geom_slices sl;
    if (find_slices(tr, layer, batch, head, g, &sl, err, errsize) || check_finite(g, &sl, err, errsize)) return -1;
    int d = g->dk, dv = sl.v.slice.cols, nq = g->s, nk = g->t;
    int n = g->rope ? 2 * (nq + nk) : nq + nk;
    float *x = malloc(((size_t)n * d + (size_t)nk * dv + (size_t)nq * dv) * sizeof *x);
    float(*axes)[512] = malloc(2 * sizeof *axes);
    if (!x || !axes) {
        free(x), free(axes);
        snprintf(err, errsize, "%s", _("out of memory"));
        return -1;
    }
    float *xv = x + (size_t)n * d, *xc = xv + (size_t)nk * dv;
    project_queries_keys(g, &sl, x, axes);
    project_values(g, &sl, xv, xc, axes);
    free(x);
    free(axes);
    if (!drawable(g->q, nq) || !drawable(g->k, nk) || !drawable(g->v, nk) || !drawable(g->ctx, nq) ||
        (g->rope && (!drawable(g->q0, nq) || !drawable(g->k0, nk)))) {
        snprintf(err, errsize, "%s", _("the arrows of this head are too long to draw (beyond 10³⁰)"));
        return -1;
    }
    for (int i = 0; i < nq; i++) app_view_row_label(tr, &sl.w, i, g->q_label[i], sizeof g->q_label[i]);
    for (int j = 0; j < nk; j++) app_view_col_label(tr, &sl.w, j, g->k_label[j], sizeof g->k_label[j]);
    return 0;
}
