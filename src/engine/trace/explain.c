/* explain.c — the hover text of a cell: one explanation per stage.
 *
 * Each function recomputes its cell from the tensors it was made of, so the
 * line shows the actual numbers (q₃·k₁ / √8 = 2.31 / 2.83 = 0.82). One that
 * cannot (a tensor missing or of another shape, in a file from elsewhere)
 * returns false, and the cell is shown with its value only. */
#include "explain.h"

#include "engine/trace/rope.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* One cell being explained, and the line being written. */
typedef struct {
    const attn_trace *tr;
    const attn_tensor *t;
    const attn_dims *d;
    int layer;        /* the layer whose tensors the cell was computed from */
    int b, h, g, k;   /* batch row, query head, kv head (0 when the tensor has none), head dim */
    int i, j, cols;   /* the cell, and the picture's width */
    float x;          /* its value */
    const char *row_label;
    attn_translate_fn *translate;
    char *p;          /* the line: next byte, room left */
    size_t left;
} cell;

static const char *T(const cell *c, const char *msgid) __attribute__((format_arg(2)));
static const char *T(const cell *c, const char *msgid)
{
    return c->translate ? c->translate(msgid) : msgid;
}

static void put(cell *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(cell *c, const char *fmt, ...)
{
    if (c->left <= 1) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(c->p, c->left, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= c->left) n = (int)c->left - 1;
    c->p += n;
    c->left -= (size_t)n;
}

/* n as Unicode subscript digits: 12 → "₁₂" */
static const char *sub(int n, char *buf, size_t size)
{
    static const char *const D[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
    char digits[16];
    snprintf(digits, sizeof digits, "%d", n < 0 ? -n : n);
    buf[0] = '\0';
    size_t used = 0;
    for (const char *p = digits; *p && used + 4 < size; p++) {
        memcpy(buf + used, D[*p - '0'], 3);
        used += 3;
        buf[used] = '\0';
    }
    return buf;
}

static const char *num(float x, char *buf, size_t size)
{
    if (isnan(x)) snprintf(buf, size, "NaN");
    else if (isinf(x)) snprintf(buf, size, x < 0 ? "−∞" : "+∞");
    else if (x != 0.0f && (fabsf(x) >= 1e5f || fabsf(x) < 1e-3f)) snprintf(buf, size, "%.3g", (double)x);
    else snprintf(buf, size, "%.3f", (double)x);
    return buf;
}

/* The same layer's tensor of stage id. */
static const attn_tensor *S(const cell *c, attn_stage_id id)
{
    return attn_trace_stage(c->tr, c->layer, id);
}

/* Row `row` (length k) of a (b, heads, n, k) tensor, or NULL if the shape does not fit. */
static const float *row4(const attn_tensor *t, int b, int hh, int row, int k)
{
    if (!t || t->ndim != 4 || b >= t->shape[0] || hh >= t->shape[1] || row >= t->shape[2] || t->shape[3] != k)
        return NULL;
    return t->data + (((size_t)b * t->shape[1] + hh) * t->shape[2] + row) * t->shape[3];
}

/* ---- one function per stage: true when it has written its explanation ---- */

/* scores[i, j] = q_i · k_j / √k, with the dot product recomputed */
static bool explain_mla_scores(cell *c);
static bool explain_scores(cell *c)
{
    if (c->d->mode == ATTN_MODE_MLA) return explain_mla_scores(c);
    const attn_tensor *q = S(c, ATTN_STAGE_Q_ROPE) ? S(c, ATTN_STAGE_Q_ROPE)
                         : S(c, ATTN_STAGE_Q_NORM) ? S(c, ATTN_STAGE_Q_NORM) : S(c, ATTN_STAGE_Q_HEADS);
    const float *qi = row4(q, c->b, c->h, c->i, c->k), *kj = row4(S(c, ATTN_STAGE_K_EXPANDED), c->b, c->h, c->j, c->k);
    char a[32], b2[32], v[32], si[16], sj[16];
    if (!qi || !kj) return false;
    double dot = 0;
    for (int m = 0; m < c->k; m++) dot += (double)qi[m] * kj[m];
    if (!c->tr->cfg.scale) /* the no-scale pitfall: the plain dot product */
        put(c, T(c, ATTN_N_("q%s·k%s = %s (not divided by √%d)")), sub(c->i, si, sizeof si), sub(c->j, sj, sizeof sj),
            num(c->x, v, sizeof v), c->k);
    else if (c->tr->arch.query_scale > 0) /* Gemma: divided by √query_pre_attn_scalar, not √k */
        put(c, "q%s·k%s / √%.6g = %s / %s = %s", sub(c->i, si, sizeof si), sub(c->j, sj, sizeof sj),
            1.0 / (c->tr->arch.query_scale * c->tr->arch.query_scale), num((float)dot, a, sizeof a),
            num((float)(1.0 / c->tr->arch.query_scale), b2, sizeof b2), num(c->x, v, sizeof v));
    else
        put(c, "q%s·k%s / √%d = %s / %s = %s", sub(c->i, si, sizeof si), sub(c->j, sj, sizeof sj), c->k,
            num((float)dot, a, sizeof a), num(sqrtf((float)c->k), b2, sizeof b2), num(c->x, v, sizeof v));
    return true;
}

/* Why key j is hidden from query i: the words after "mask[i, j] = value".
 * Returns false when it is not hidden. */
static bool mask_reason(cell *c)
{
    const attn_trace *tr = c->tr;
    const attn_dims *d = c->d;
    const attn_tokens *keys = d->cross ? &tr->source : &tr->tokens;
    int b = c->b, i = c->i, j = c->j;
    bool pad = keys->rows && b < keys->rows && j < keys->len && attn_tokens_is_pad(keys, b, j) && tr->cfg.pad_mask;
    bool reversed = tr->cfg.causal == ATTN_CAUSAL_REVERSED && !d->cross;
    bool future = !reversed && tr->cfg.causal && !d->cross && j > d->P + i;
    bool past = reversed && j < d->P + i;
    /* a Gemma or gpt-oss model's layer has its own window (arch.h: local), the others the setting's */
    int W = !tr->arch.local_window ? tr->cfg.sliding_window
          : c->layer >= 0 && c->layer < ATTN_ARCH_MAX_LAYERS && tr->arch.local[c->layer] ? tr->arch.local_window : 0;
    int p = d->P + i;
    bool two_sided = tr->cfg.causal != ATTN_CAUSAL_ON;
    bool outside = W > 0 && !d->cross && !future && !past && j >= tr->cfg.keep_first &&
                   (j <= p - W || (two_sided && j >= p + W));
    int lo = p - W + 1 > 0 ? p - W + 1 : 0, hi = two_sided && p + W - 1 < d->t - 1 ? p + W - 1 : two_sided ? d->t - 1 : p;
    if (past && pad) put(c, T(c, ATTN_N_(": key %d is in the past of query %d, and padding")), j, d->P + i);
    else if (future && pad) put(c, T(c, ATTN_N_(": key %d is in the future of query %d, and padding")), j, d->P + i);
    else if (future) put(c, T(c, ATTN_N_(": key %d is in the future of query %d (causal)")), j, d->P + i);
    else if (past) put(c, T(c, ATTN_N_(": key %d is in the past of query %d (reversed causal mask)")), j, d->P + i);
    else if (outside && pad)
        put(c, T(c, ATTN_N_(": key %d is outside the window of %d (query %d reads keys %d to %d), and padding")),
            j, W, p, lo, hi);
    else if (outside)
        put(c, T(c, ATTN_N_(": key %d is outside the window of %d (query %d reads keys %d to %d)")), j, W, p, lo, hi);
    else if (pad) put(c, T(c, ATTN_N_(": key %d is <pad> (padding mask)")), j);
    return future || past || outside || pad;
}

static bool explain_mask(cell *c)
{
    char a[32];
    put(c, "%s", num(c->x, a, sizeof a));
    if (!mask_reason(c)) put(c, T(c, ATTN_N_(": query %d may look at key %d")), c->d->P + c->i, c->j);
    return true;
}

static bool explain_masked_scores(cell *c)
{
    const attn_tensor *cap = S(c, ATTN_STAGE_CAPPED_SCORES), *bias = S(c, ATTN_STAGE_BIAS);
    const attn_tensor *s = cap ? cap : S(c, ATTN_STAGE_SCORES), *m = S(c, ATTN_STAGE_MASK);
    char a[32], b2[32], v[32];
    if (!s || !m || s->ndim != 4 || m->ndim != 4 || (bias && bias->ndim != 4)) return false;
    float sv = attn_tensor_at4(s, c->b, c->h, c->i, c->j), mv = attn_tensor_at4(m, c->b, 0, c->i, c->j);
    if (cap) put(c, "capped_scores + mask = %s + ", num(sv, a, sizeof a));
    else if (bias)
        put(c, "scores + bias + mask = %s + (%s) + ", num(sv, a, sizeof a),
            num(attn_tensor_at4(bias, c->b, c->h, c->i, c->j), b2, sizeof b2));
    else put(c, "scores + mask = %s + ", num(sv, a, sizeof a));
    put(c, mv < 0 ? "(%s)" : "%s", num(mv, b2, sizeof b2));
    put(c, " = %s", num(c->x, v, sizeof v));
    return true;
}

/* The sink logit X of head `head` at query q: the config's one, or with
 * gpt-oss's learned sinks (arch.sinks, one X_h per head, not kept in the
 * trace) recovered from the row: with m the largest masked score, S = Σⱼ
 * e^(masked_scores[j] − m) and p = sink_weight, p = e^(X − m) / (S + e^(X − m)),
 * so X = m + ln(p·S / (1 − p)). −∞ when there is none (or p is 0 or 1). */
static float sink_logit(const cell *c, int head, int q)
{
    if (!c->tr->arch.sinks) return c->tr->cfg.sink_logit;
    const attn_tensor *ms = S(c, ATTN_STAGE_MASKED_SCORES), *sw = S(c, ATTN_STAGE_SINK_WEIGHT);
    if (!ms || !sw || ms->ndim != 4 || sw->ndim != 3 || head >= ms->shape[1] || q >= ms->shape[2]) return -INFINITY;
    const float *row = ms->data + (((size_t)c->b * ms->shape[1] + head) * ms->shape[2] + q) * ms->shape[3];
    double m = -INFINITY, sum = 0, p = sw->data[((size_t)c->b * sw->shape[1] + head) * sw->shape[2] + q];
    for (int j = 0; j < (int)ms->shape[3]; j++) m = fmax(m, row[j]);
    for (int j = 0; j < (int)ms->shape[3]; j++) sum += exp((double)row[j] - m);
    if (!(p > 0 && p < 1) || isinf(m)) return -INFINITY;
    return (float)(m + log(p * sum / (1 - p)));
}

/* softmax along the row, shifted by its largest score */
static bool explain_weights(cell *c)
{
    const attn_tensor *ms = S(c, ATTN_STAGE_MASKED_SCORES);
    char a[32], b2[32], e2[32], s2[32], v[32];
    if (!ms || ms->ndim != 4 || ms->shape[3] != c->cols) return false;
    const float *row = ms->data + (((size_t)c->b * ms->shape[1] + c->h) * ms->shape[2] + c->i) * ms->shape[3];
    float X = sink_logit(c, c->h, c->i), mx = X; /* −∞ without a sink */
    bool sink = !isinf(X);
    for (int jj = 0; jj < c->cols; jj++) mx = fmaxf(mx, row[jj]);
    if (mx == -INFINITY) {
        put(c, T(c, ATTN_N_("0: query %d has no key it may look at, so its row is all zeros")), c->d->P + c->i);
        return true;
    }
    double sum = sink ? exp((double)X - mx) : 0;
    for (int jj = 0; jj < c->cols; jj++) sum += exp((double)row[jj] - mx);
    double e = exp((double)row[c->j] - mx);
    put(c, sink ? "exp(%s − %s) / (Σⱼ exp(…) + exp(X − max)) = %s / %s = %s" : "exp(%s − %s) / Σⱼ exp(…) = %s / %s = %s", num(row[c->j], a, sizeof a), num(mx, b2, sizeof b2),
        num((float)e, e2, sizeof e2), num((float)sum, s2, sizeof s2), num(c->x, v, sizeof v));
    return true;
}

/* bias: the head's slope times the distance, recomputed */
static bool explain_bias(cell *c)
{
    double m[256];
    char a[32], v[32];
    if (c->d->h > 256 || c->h >= c->d->h) return false;
    attn_alibi_slopes(c->d->h, m);
    int p = c->d->P + c->i;
    put(c, "−m%s·|%d − %d| = −%s·%d = %s", "ₕ", p, c->j, num((float)m[c->h], a, sizeof a), abs(p - c->j),
        num(c->x, v, sizeof v));
    return true;
}

/* capped_scores: C·tanh of what came before, scores (+ bias) */
static bool explain_capped(cell *c)
{
    const attn_tensor *s = S(c, ATTN_STAGE_SCORES), *bias = S(c, ATTN_STAGE_BIAS);
    char a[32], v[32];
    if (!s || s->ndim != 4 || (bias && bias->ndim != 4)) return false;
    float x = attn_tensor_at4(s, c->b, c->h, c->i, c->j) + (bias ? attn_tensor_at4(bias, c->b, c->h, c->i, c->j) : 0);
    double C = c->tr->cfg.softcap;
    put(c, bias ? "C·tanh((scores + bias) / C) = %g·tanh(%s / %g) = %s" : "C·tanh(scores / C) = %g·tanh(%s / %g) = %s",
        C, num(x, a, sizeof a), C, num(c->x, v, sizeof v));
    return true;
}

/* sink_weight: the sink's share of its row, and what it leaves to the keys */
static bool explain_sink(cell *c)
{
    const attn_tensor *w = S(c, ATTN_STAGE_WEIGHTS);
    char a[32], v[32];
    int head = c->i, q = c->j; /* the picture is (h, s) */
    if (!w || w->ndim != 4 || head >= w->shape[1] || q >= w->shape[2]) return false;
    double keys = 0;
    for (int jj = 0; jj < (int)w->shape[3]; jj++) keys += attn_tensor_at4(w, c->b, head, q, jj);
    put(c, T(c, ATTN_N_("e^X / (Σⱼ e^masked_scores + e^X) with X = %g: %s; the keys' weights sum to %s")),
        (double)sink_logit(c, head, q), num(c->x, v, sizeof v), num((float)keys, a, sizeof a));
    return true;
}

/* tile_max, tile_sum: the running max or sum after key tile c->j, from the
 * one before it (−∞ and 0 before the first) */
static bool explain_tile(cell *c)
{
    bool is_max = attn_tensor_stage(c->t) == ATTN_STAGE_TILE_MAX;
    const attn_tensor *mt = S(c, ATTN_STAGE_TILE_MAX), *lt = S(c, ATTN_STAGE_TILE_SUM);
    int BK = c->tr->cfg.tiles.k, j0 = c->j * BK, j1 = j0 + BK < c->d->t ? j0 + BK : c->d->t;
    char a[32], b2[32], v[32];
    if (!mt || !lt || mt->ndim != 4 || BK < 1) return false;
    float m0 = c->j ? attn_tensor_at4(mt, c->b, c->h, c->i, c->j - 1) : -INFINITY;
    float l0 = c->j ? attn_tensor_at4(lt, c->b, c->h, c->i, c->j - 1) : 0.0f;
    if (is_max)
        put(c, T(c, ATTN_N_("after key tile %d (keys %d–%d): m′ = max(m, rowmax S) = max(%s, …) = %s")), c->j, j0,
            j1 - 1, num(m0, a, sizeof a), num(c->x, v, sizeof v));
    else
        put(c, T(c, ATTN_N_("after key tile %d (keys %d–%d): ℓ′ = e^(m − m′)·ℓ + Σ e^(S − m′), ℓ = %s before it: %s")),
            c->j, j0, j1 - 1, num(l0, b2, sizeof b2), num(c->x, v, sizeof v));
    return true;
}

/* q_norm, k_norm: the feature over its head's root mean square, times its gain */
static bool explain_qk_norm(cell *c)
{
    bool q = attn_tensor_stage(c->t) == ATTN_STAGE_Q_NORM;
    const float *x = row4(S(c, q ? ATTN_STAGE_Q_HEADS : ATTN_STAGE_K_HEADS), c->b, q ? c->h : c->g, c->i, c->k);
    char a[32], r[32], v[32];
    if (!x || c->j >= c->k) return false;
    double sq = 0;
    int heads = c->tr->arch.qk_norm_whole ? (q ? c->tr->dims.h : c->tr->dims.g) : 1, count = heads * c->k;
    for (int e = 0; e < heads; e++) { /* OLMo 2: the rms of every head of the position together */
        const float *y = heads > 1 ? row4(S(c, q ? ATTN_STAGE_Q_HEADS : ATTN_STAGE_K_HEADS), c->b, e, c->i, c->k) : x;
        for (int m = 0; y && m < c->k; m++) sq += (double)y[m] * y[m];
    }
    put(c, "%s_heads / rms ⊙ g = %s / %s ⊙ g = %s", q ? "q" : "k", num(x[c->j], a, sizeof a),
        num((float)sqrt(sq / count), r, sizeof r), num(c->x, v, sizeof v));
    return true;
}

static bool explain_weights_dropout(cell *c)
{
    const attn_tensor *w = S(c, ATTN_STAGE_WEIGHTS);
    char a[32], v[32];
    if (!w || w->ndim != 4) return false;
    float wv = attn_tensor_at4(w, c->b, c->h, c->i, c->j);
    float p = c->tr->cfg.dropout;
    if (c->x == 0.0f && wv != 0.0f) put(c, T(c, ATTN_N_("0: dropped (weights was %s, p = %g)")), num(wv, a, sizeof a), p);
    else put(c, "weights / (1 − p) = %s / %g = %s", num(wv, a, sizeof a), 1.0 - p, num(c->x, v, sizeof v));
    return true;
}

/* the weighted sum of the value rows, recomputed */
static bool explain_context(cell *c)
{
    const attn_tensor *w = S(c, ATTN_STAGE_WEIGHTS_DROPOUT) ? S(c, ATTN_STAGE_WEIGHTS_DROPOUT) : S(c, ATTN_STAGE_WEIGHTS);
    const attn_tensor *ve = S(c, ATTN_STAGE_V_UP) ? S(c, ATTN_STAGE_V_UP) : S(c, ATTN_STAGE_V_EXPANDED);
    char a[32];
    if (S(c, ATTN_STAGE_CONTEXT_LATENT)) { /* MLA absorbed: the latent context through W_UV */
        put(c, T(c, ATTN_N_("context_latent[h=%d, i=%d] · W_UV[:, %d·%d+%d] = %s")), c->h, c->i, c->h, c->k, c->j,
            num(c->x, a, sizeof a));
        return true;
    }
    if (!w || !ve || w->ndim != 4 || ve->ndim != 4 || ve->shape[3] != c->k) return false;
    double acc = 0;
    int tt = (int)w->shape[3];
    for (int jj = 0; jj < tt; jj++)
        acc += (double)attn_tensor_at4(w, c->b, c->h, c->i, jj) * attn_tensor_at4(ve, c->b, c->h, jj, c->j);
    put(c, "Σⱼ weights[i=%d, j]·%s[j, c=%d] = %s", c->i, S(c, ATTN_STAGE_V_UP) ? "v_up" : "v", c->j,
        num((float)acc, a, sizeof a)); /* MLA's values are rebuilt from the latent: v_up */
    return true;
}

/* q_heads, k_heads, v_heads: which column of q, k or v the feature came from */
static bool explain_heads(cell *c)
{
    attn_stage_id id = attn_tensor_stage(c->t);
    char letter = id == ATTN_STAGE_Q_HEADS ? 'q' : id == ATTN_STAGE_K_HEADS ? 'k' : 'v';
    int hh = letter == 'q' ? c->h : c->g;
    char a[32];
    put(c, "%c[i=%d, c=%d·%d+%d=%d] = %s", letter, c->i, hh, c->k, c->j, hh * c->k + c->j, num(c->x, a, sizeof a));
    return true;
}

/* The frequency ω_m of pair m as the engine turned it (rope.h's
 * attn_rope_freqs) with the layer's base *theta and rope_scaling *sc (arch.h:
 * Gemma's local layers have their own); returns the attention factor A that
 * multiplied cos and sin (YaRN's; else 1), or 0 out of memory. */
static double rope_omega(const cell *c, int m, double *theta, const attn_rope_scaling **sc, double *omega)
{
    *theta = attn_arch_layer_theta(&c->tr->arch, c->layer, c->tr->cfg.rope_theta, sc);
    double *w = malloc((size_t)(c->k / 2 > m ? c->k / 2 : m + 1) * sizeof *w);
    if (!w) return 0;
    double A = attn_rope_freqs(*theta, *sc, c->k, w);
    *omega = w[m];
    free(w);
    return A;
}

/* The rope_type that changed θ^(−2m/k), as rope.c applies it; NULL: none did. */
static const char *scaling_name(const attn_rope_scaling *sc)
{
    if (sc->factor > 0 && sc->yarn) return "yarn"; /* its ramp alone: rope.c returns before linear */
    if (sc->factor > 0) return sc->linear > 0 ? "llama3 + linear" : "llama3";
    return sc->linear > 0 ? "linear" : NULL;
}

/* q_rope, k_rope: the rotation angle of the feature's pair, angle = pos·ω_m
 * with the ω_m the engine used: θ^(−2m/k) with the layer's own θ, or that
 * scaled by the model's rope_scaling (and, YaRN, the pair multiplied by A) */
static bool explain_rope(cell *c)
{
    bool q = attn_tensor_stage(c->t) == ATTN_STAGE_Q_ROPE;
    int pos = (q || !c->d->cross) ? c->d->P + c->i : c->i;
    const char *s = q ? "q" : "k";
    char v[32], sm[16];
    num(c->x, v, sizeof v);
    if (!attn_arch_layer_rope(&c->tr->arch, c->t->layer)) { /* a SmolLM3 layer without RoPE */
        put(c, T(c, ATTN_N_("%s_rope = %s_heads, not rotated (no RoPE in this layer: NoPE) = %s")), s, s, v);
        return true;
    }
    bool half = c->tr->cfg.rope_style == ATTN_ROPE_HALF;
    int m = half ? c->j % (c->k / 2) : c->j / 2, a = half ? m : 2 * m, b = half ? m + c->k / 2 : 2 * m + 1;
    const attn_rope_scaling *sc;
    double theta, w, A = rope_omega(c, m, &theta, &sc, &w);
    if (!(A > 0)) return false;
    double ang = pos * w; /* ops.c's angle, in the same double */
    const char *how = scaling_name(sc);
    sub(m, sm, sizeof sm);
    if (how && sc->yarn)
        put(c, T(c, ATTN_N_("pair (%d, %d) of %s_heads rotated by %d·ω%s = %.4f rad and multiplied by the attention "
                            "factor A = %.4g, ω%s = %.4g: θ^(−%d/%d) scaled by rope_scaling yarn → %s")),
            a, b, s, pos, sm, ang, A, sm, w, 2 * m, c->k, v);
    else if (how)
        put(c, T(c, ATTN_N_("pair (%d, %d) of %s_heads rotated by %d·ω%s = %.4f rad, ω%s = %.4g: θ^(−%d/%d) scaled "
                            "by rope_scaling %s → %s")), a, b, s, pos, sm, ang, sm, w, 2 * m, c->k, how, v);
    else if (theta != c->tr->cfg.rope_theta) /* Gemma 3's local layers */
        put(c, T(c, ATTN_N_("pair (%d, %d) of %s_heads rotated by %d·θ^(−%d/%d) = %.4f rad, θ = %.6g: this local "
                            "layer's own base (rope_local_base_freq) → %s")), a, b, s, pos, 2 * m, c->k, ang, theta, v);
    else
        put(c, T(c, ATTN_N_("pair (%d, %d) of %s_heads rotated by %d·θ^(−%d/%d) = %.3f rad → %s")), a, b, s, pos,
            2 * m, c->k, ang, v);
    return true;
}

static bool explain_cache(cell *c)
{
    char a[32];
    if (c->i < c->d->P) put(c, T(c, ATTN_N_("%s: cached at an earlier step (position %d)")), num(c->x, a, sizeof a), c->i);
    else put(c, T(c, ATTN_N_("%s: new this step (position %d)")), num(c->x, a, sizeof a), c->i);
    return true;
}

static bool explain_expanded(cell *c)
{
    char a[32];
    put(c, T(c, ATTN_N_("%s of kv head %d = %d / (%d/%d) (repeat_kv)")), num(c->x, a, sizeof a), c->g, c->h, c->d->h,
        c->d->g);
    return true;
}

static bool explain_merged(cell *c)
{
    char a[32];
    put(c, "context[h=%d, i=%d, c=%d] = %s", c->k ? c->j / c->k : 0, c->i, c->k ? c->j % c->k : c->j,
        num(c->x, a, sizeof a));
    return true;
}

/* q, k, v and out: a row of the input times a column of the projection */
static bool explain_projection(cell *c)
{
    attn_stage_id id = attn_tensor_stage(c->t);
    const char *w = id == ATTN_STAGE_Q ? "W_Q" : id == ATTN_STAGE_K ? "W_K" : id == ATTN_STAGE_V ? "W_V" : "W_O";
    bool out = id == ATTN_STAGE_OUT;
    const char *src = out ? "merged" : (c->d->cross && id != ATTN_STAGE_Q) ? "memory" : "x";
    char a[32], si[16];
    put(c, "%s%s · %s[:, %d] = %s", src, sub(c->i, si, sizeof si), w, c->j, num(c->x, a, sizeof a));
    if (c->k && !out)
        put(c, id == ATTN_STAGE_Q ? T(c, ATTN_N_("  (query head %d)")) : T(c, ATTN_N_("  (kv head %d)")),
            c->j / (c->k + c->d->rope_dim)); /* MLA's query heads: k + D features */
    if (out && c->tr->cfg.train && c->tr->cfg.dropout > 0) put(c, "%s", T(c, ATTN_N_(", after dropout")));
    return true;
}

/* x, x_past, memory: the embedding of the row's token */
static bool explain_embedding(cell *c)
{
    char a[32], lb[16];
    const char *label = c->row_label;
    if (!label) snprintf(lb, sizeof lb, "%d", c->i), label = lb;
    put(c, "embed(“%s”)[%d] = %s", label, c->j, num(c->x, a, sizeof a));
    return true;
}

/* w_q … w_o: the value, and the head its block belongs to */
static bool explain_weight(cell *c)
{
    char a[32];
    attn_stage_id id = attn_tensor_stage(c->t);
    bool rows = c->t->info->blocks == ATTN_BLOCKS_HEAD_ROWS;
    put(c, "%s", num(c->x, a, sizeof a));
    if (id == ATTN_STAGE_W_QN || id == ATTN_STAGE_W_KN)
        put(c, id == ATTN_STAGE_W_QN ? T(c, ATTN_N_("  (the gain of feature %d of every query head after its RMS norm)"))
                                     : T(c, ATTN_N_("  (the gain of feature %d of every key head after its RMS norm)")),
            c->j);
    else if (c->k)
        put(c, rows ? T(c, ATTN_N_("  (input from head %d)"))
                    : id == ATTN_STAGE_W_Q ? T(c, ATTN_N_("  (feeds head %d)")) : T(c, ATTN_N_("  (feeds kv head %d)")),
            (rows ? c->i : c->j) / (rows ? c->k : c->k + c->d->rope_dim)); /* MLA's W_Q: k + D a head */
    return true;
}

/* ---- multi-head latent attention (mla.h) ---- */

/* scores: the part without position and the RoPE part, each recomputed */
static bool explain_mla_scores(cell *c)
{
    const int e = c->d->rope_dim, R = c->d->kv_rank;
    bool absorb = S(c, ATTN_STAGE_Q_LATENT) != NULL;
    const float *qn = absorb ? row4(S(c, ATTN_STAGE_Q_LATENT), c->b, c->h, c->i, R)
                             : row4(S(c, ATTN_STAGE_Q_NOPE), c->b, c->h, c->i, c->k);
    const attn_tensor *ckv = S(c, ATTN_STAGE_C_KV);
    const float *kn = !absorb ? row4(S(c, ATTN_STAGE_K_NOPE), c->b, c->h, c->j, c->k)
                    : ckv && ckv->ndim == 3 && c->j < ckv->shape[1] && ckv->shape[2] == R
                    ? ckv->data + ((size_t)c->b * ckv->shape[1] + c->j) * R : NULL;
    const float *qp = row4(S(c, ATTN_STAGE_Q_PE), c->b, c->h, c->i, e);
    const attn_tensor *kpe = S(c, ATTN_STAGE_K_PE);
    if (!qn || !kn || !qp || !kpe || kpe->ndim != 3 || kpe->shape[1] <= c->j) return false;
    const float *kp = kpe->data + ((size_t)c->b * kpe->shape[1] + c->j) * e;
    double nope = 0, pe = 0;
    for (int m = 0; m < (absorb ? R : c->k); m++) nope += (double)qn[m] * kn[m];
    for (int m = 0; m < e; m++) pe += (double)qp[m] * kp[m];
    char a[32], b2[32], v[32];
    put(c, absorb ? "(q_latent·c_kv + q_pe·k_pe) / √(%d+%d) = (%s + %s) / √%d = %s"
                  : "(q_nope·k_nope + q_pe·k_pe) / √(%d+%d) = (%s + %s) / √%d = %s",
        c->k, e, num((float)nope, a, sizeof a), num((float)pe, b2, sizeof b2), c->k + e, num(c->x, v, sizeof v));
    if (!c->tr->cfg.scale) put(c, "%s", T(c, ATTN_N_("  (scale off: not divided)")));
    return true;
}

/* the other MLA stages: where the cell comes from, in the stage's own terms */
static bool explain_mla(cell *c)
{
    attn_stage_id id = attn_tensor_stage(c->t);
    const int e = c->d->rope_dim, w = c->k + e;
    char a[32], si[16];
    num(c->x, a, sizeof a);
    sub(c->i, si, sizeof si);
    switch (id) {
    case ATTN_STAGE_Q_NOPE: put(c, "q[i=%d, c=%d·%d+%d] = %s", c->i, c->h, w, c->j, a); break;
    case ATTN_STAGE_Q_PE:
        if (!c->tr->cfg.rope) { /* rope off: the RoPE part as projected, not rotated (the formula says so too) */
            put(c, T(c, ATTN_N_("q[i=%d, c=%d·%d+%d+%d] = %s, not rotated (rope off)")), c->i, c->h, w, c->k, c->j, a);
            break;
        }
        put(c, T(c, ATTN_N_("q[i=%d, c=%d·%d+%d+%d], rotated to position %d = %s")), c->i, c->h, w, c->k, c->j,
            c->d->P + c->i, a);
        break;
    case ATTN_STAGE_C_KV:
        put(c, T(c, ATTN_N_("x%s · W_DKV[:, %d] = %s: latent feature %d of position %d (%s)")), si, c->j, a, c->j,
            c->i, c->i < c->d->P ? T(c, ATTN_N_("cached")) : T(c, ATTN_N_("new")));
        break;
    case ATTN_STAGE_K_PE:
        if (!c->tr->cfg.rope)
            put(c, T(c, ATTN_N_("x%s · W_KR[:, %d] = %s, not rotated (rope off), the same for every head")), si, c->j, a);
        else
            put(c, T(c, ATTN_N_("x%s · W_KR[:, %d], rotated to position %d = %s, the same for every head")), si, c->j,
                c->i, a);
        break;
    case ATTN_STAGE_K_NOPE:
    case ATTN_STAGE_V_UP:
        put(c, "c_kv%s · %s[:, %d·%d+%d] = %s", si, id == ATTN_STAGE_K_NOPE ? "W_UK" : "W_UV", c->h, c->k, c->j, a);
        break;
    case ATTN_STAGE_Q_LATENT: put(c, "q_nope%s · W_UK[%d, %d·%d : %d·%d]ᵀ = %s", si, c->j, c->h, c->k, c->h + 1, c->k, a); break;
    case ATTN_STAGE_CONTEXT_LATENT: put(c, "Σⱼ weights[i=%d, j]·c_kv[j, %d] = %s", c->i, c->j, a); break;
    case ATTN_STAGE_W_DKV: put(c, T(c, ATTN_N_("%s  (into latent feature %d)")), a, c->j); break;
    case ATTN_STAGE_W_KR: put(c, T(c, ATTN_N_("%s  (into feature %d of the shared RoPE key)")), a, c->j); break;
    case ATTN_STAGE_W_UK:
    case ATTN_STAGE_W_UV: put(c, T(c, ATTN_N_("%s  (feeds head %d)")), a, c->k ? c->j / c->k : 0); break;
    default: return false;
    }
    return true;
}

int attn_expert_rank(const float *w, int E, int j, int *n)
{
    int rank = 1, chose = 0;
    for (int e = 0; e < E; e++) {
        chose += w[e] != 0.0f;
        rank += w[e] > w[j] || (w[e] == w[j] && e < j);
    }
    if (n) *n = chose;
    return w[j] != 0.0f ? rank : 0;
}

/* A mixture-of-experts layer's router: token i and expert j (moe.h). */
static bool explain_moe(cell *c)
{
    const attn_tensor *sc = S(c, ATTN_STAGE_ROUTER_SCORES), *w = S(c, ATTN_STAGE_EXPERT_WEIGHTS);
    size_t row = ((size_t)c->b * c->d->s + c->i) * c->d->E, at = row + c->j;
    char a[32], b[32], tok[80];
    if (!sc || !w || !c->d->E || at >= sc->count || at >= w->count) return false;
    float s = sc->data[at], x = w->data[at];
    int n, rank = attn_expert_rank(w->data + row, c->d->E, c->j, &n);
    if (c->row_label) snprintf(tok, sizeof tok, "%d “%s”", c->i, c->row_label);
    else snprintf(tok, sizeof tok, "%d", c->i);
    if (attn_tensor_stage(c->t) == ATTN_STAGE_ROUTER_SCORES && rank)
        put(c, T(c, ATTN_N_("%s: expert %d's score for token %s (chosen: rank %d of its %d by weight)")),
            num(s, a, sizeof a), c->j, tok, rank, n);
    else if (attn_tensor_stage(c->t) == ATTN_STAGE_ROUTER_SCORES)
        put(c, T(c, ATTN_N_("%s: expert %d's score for token %s (not chosen)")), num(s, a, sizeof a), c->j, tok);
    else if (rank)
        put(c, T(c, ATTN_N_("%s: token %s chose expert %d, rank %d of its %d by weight: its output is weighed by "
                            "this (router score %s)")),
            num(x, a, sizeof a), tok, c->j, rank, n, num(s, b, sizeof b));
    else
        put(c, T(c, ATTN_N_("0: token %s did not choose expert %d (router score %s)")), tok, c->j, num(s, b, sizeof b));
    return true;
}

static bool (*const EXPLAIN[ATTN_STAGE_COUNT])(cell *) = {
    [ATTN_STAGE_ROUTER_SCORES] = explain_moe,
    [ATTN_STAGE_EXPERT_WEIGHTS] = explain_moe,
    [ATTN_STAGE_W_DKV] = explain_mla,
    [ATTN_STAGE_W_UK] = explain_mla,
    [ATTN_STAGE_W_UV] = explain_mla,
    [ATTN_STAGE_W_KR] = explain_mla,
    [ATTN_STAGE_Q_NOPE] = explain_mla,
    [ATTN_STAGE_Q_PE] = explain_mla,
    [ATTN_STAGE_C_KV] = explain_mla,
    [ATTN_STAGE_K_PE] = explain_mla,
    [ATTN_STAGE_K_NOPE] = explain_mla,
    [ATTN_STAGE_V_UP] = explain_mla,
    [ATTN_STAGE_Q_LATENT] = explain_mla,
    [ATTN_STAGE_CONTEXT_LATENT] = explain_mla,
    [ATTN_STAGE_X] = explain_embedding,
    [ATTN_STAGE_X_PAST] = explain_embedding,
    [ATTN_STAGE_MEMORY] = explain_embedding,
    [ATTN_STAGE_W_Q] = explain_weight,
    [ATTN_STAGE_W_K] = explain_weight,
    [ATTN_STAGE_W_V] = explain_weight,
    [ATTN_STAGE_W_O] = explain_weight,
    [ATTN_STAGE_W_QN] = explain_weight,
    [ATTN_STAGE_W_KN] = explain_weight,
    [ATTN_STAGE_Q_NORM] = explain_qk_norm,
    [ATTN_STAGE_K_NORM] = explain_qk_norm,
    [ATTN_STAGE_BIAS] = explain_bias,
    [ATTN_STAGE_CAPPED_SCORES] = explain_capped,
    [ATTN_STAGE_SINK_WEIGHT] = explain_sink,
    [ATTN_STAGE_TILE_MAX] = explain_tile,
    [ATTN_STAGE_TILE_SUM] = explain_tile,
    [ATTN_STAGE_Q] = explain_projection,
    [ATTN_STAGE_K] = explain_projection,
    [ATTN_STAGE_V] = explain_projection,
    [ATTN_STAGE_Q_HEADS] = explain_heads,
    [ATTN_STAGE_K_HEADS] = explain_heads,
    [ATTN_STAGE_V_HEADS] = explain_heads,
    [ATTN_STAGE_Q_ROPE] = explain_rope,
    [ATTN_STAGE_K_ROPE] = explain_rope,
    [ATTN_STAGE_K_CACHE] = explain_cache,
    [ATTN_STAGE_V_CACHE] = explain_cache,
    [ATTN_STAGE_K_EXPANDED] = explain_expanded,
    [ATTN_STAGE_V_EXPANDED] = explain_expanded,
    [ATTN_STAGE_SCORES] = explain_scores,
    [ATTN_STAGE_MASK] = explain_mask,
    [ATTN_STAGE_MASKED_SCORES] = explain_masked_scores,
    [ATTN_STAGE_WEIGHTS] = explain_weights,
    [ATTN_STAGE_WEIGHTS_DROPOUT] = explain_weights_dropout,
    [ATTN_STAGE_CONTEXT] = explain_context,
    [ATTN_STAGE_MERGED] = explain_merged,
    [ATTN_STAGE_OUT] = explain_projection,
};

/* "name[indices] = ", in the tensor's own index names */
static void put_indices(cell *c, const attn_matrix *m)
{
    const attn_tensor *t = c->t;
    const char *nm = t->info ? t->info->name : t->name;
    attn_stage_id id = attn_tensor_stage(t);
    int rows_axis = t->ndim - 2;
    bool rows_are_keys = t->info && rows_axis >= 0 && !strcmp(m->axes[rows_axis], "t");
    if (id == ATTN_STAGE_MASK) put(c, "mask[i=%d, j=%d] = ", c->i, c->j);
    else if (id == ATTN_STAGE_SINK_WEIGHT) put(c, "%s[h=%d, i=%d] = ", nm, c->i, c->j);
    else if (id == ATTN_STAGE_ROUTER_SCORES || id == ATTN_STAGE_EXPERT_WEIGHTS) /* token i, expert e */
        put(c, "%s[i=%d, e=%d] = ", nm, c->i, c->j);
    else if (t->ndim == 1) put(c, "%s[c=%d] = ", nm, c->j);
    else if (t->info && (t->info->roles & ATTN_ROLE_QUERY_KEY)) put(c, "%s[h=%d, i=%d, j=%d] = ", nm, c->h, c->i, c->j);
    else if (m->head_axis == 'h') put(c, "%s[h=%d, %s=%d, c=%d] = ", nm, c->h, rows_are_keys ? "j" : "i", c->i, c->j);
    else if (m->head_axis == 'g') put(c, "%s[g=%d, %s=%d, c=%d] = ", nm, c->g, rows_are_keys ? "j" : "i", c->i, c->j);
    else if (t->ndim == 2) put(c, "%s[m=%d, c=%d] = ", nm, c->i, c->j);
    else put(c, "%s[i=%d, c=%d] = ", nm, c->i, c->j);
}

const char *attn_explain(const attn_explain_cell *in, char *buf, size_t size)
{
    attn_matrix m;
    if (!size) return buf;
    buf[0] = '\0';
    if (!in->t || attn_trace_matrix_of(in->tr, in->t, in->batch, in->head, &m)) return buf;
    if (in->i < 0 || in->j < 0 || in->i >= m.rows || in->j >= m.cols) return buf;
    cell c = {
        .tr = in->tr, .t = in->t, .d = &in->tr->dims, .layer = in->t->layer < 0 ? 0 : in->t->layer,
        .b = m.batch < 0 ? 0 : m.batch, .h = m.head < 0 ? 0 : m.head, .g = m.kv_head < 0 ? 0 : m.kv_head,
        .k = in->tr->dims.k, .i = in->i, .j = in->j, .cols = m.cols, .x = m.data[(size_t)in->i * m.cols + in->j],
        .row_label = in->row_label, .translate = in->translate, .p = buf, .left = size,
    };
    put_indices(&c, &m);
    attn_stage_id id = attn_tensor_stage(in->t);
    if (id != ATTN_STAGE_NONE && EXPLAIN[id] && EXPLAIN[id](&c)) return buf;
    char a[32];
    put(&c, "%s", num(c.x, a, sizeof a));
    return buf;
}
