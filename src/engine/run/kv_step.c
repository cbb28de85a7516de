/* kv_step.c — one token through the model over the KV cache, untraced (attn_kv_step, kv_cache.h).
 *
 * The whole step is one OpenMP parallel region: every thread runs every
 * layer, and the threads meet (team.h) only where what comes next needs all
 * of a vector the team computed between them. A layer (width d, MLP f):
 *   qkv  = x · [W_Q; W_K; W_V]ᵀ                      wait
 *   the attention's partials, unit by unit (below)    wait
 *   ctx  = the partials combined (each thread)
 *   out  = ctx · W_Oᵀ                                 wait
 *   mid  = resid + out, norm2 = RMSNorm(mid) ⊙ g      (each thread)
 *   act  = SiLU(norm2 · W_gateᵀ) ⊙ (norm2 · W_upᵀ)    wait
 *   mlp  = act · W_downᵀ                              wait
 *   resid = mid + mlp, x = RMSNorm(resid) ⊙ g         (each thread)
 * Five waits a layer. The vectors of d between two products (residual adds,
 * norms) every thread computes for itself, the same numbers in the same
 * order, rather than one thread computing them while the others wait for it
 * at two more barriers. Each product's rows are claimed in chunks, each
 * thread's own share first and in order (attn_team_claim_own), so that a
 * thread that starts late (woken late, or descheduled for another process)
 * computes less of it instead of the team waiting for its fixed share.
 *
 * The attention of the one query over the cache: for kv head j, the `per`
 * query heads that share it, and the key rows [a, b) of its cache (a unit):
 *   s_i[r] = scale · q_i · K_j[r], capped C·tanh(s/C) (Gemma 2), + mask[r]
 *   m_i = max_r s_i[r],  ℓ_i = Σ_r e^(s_i[r] − m_i),  c_i = Σ_r e^(s_i[r] − m_i) · V_j[r]   (k)
 * so each cached key and value row is read once for all the heads sharing
 * it. A kv head's rows are split into parts so that there are at least
 * UNITS units to share out (Gemma-3-270M's one kv head: eight parts), and
 * every thread merges each head's parts as the online softmax does:
 *   M = max_p m_p,   ctx_i = Σ_p e^(m_p − M) · c_p  /  Σ_p e^(m_p − M) · ℓ_p
 * The parts do not depend on how many threads there are, so neither do the
 * numbers. With dropout in training (its cells are drawn over each head's
 * whole row of weights) or with --tiles (the tiled online softmax), the
 * heads go one by one through attention.c's ops, as a traced step does. */
#include "kv_cache.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine/attention/attention.h"
#include "engine/attention/ops.h"
#include "engine/attention/tiles.h"
#include "engine/model/gemma.h"

/* Function multiversioning (ops.c's): the loops below built for AVX2 and
 * for the baseline ISA, picked at load time; none on the web. */
#ifdef __EMSCRIPTEN__
#define STEP_CLONES
#else
#define STEP_CLONES __attribute__((target_clones("avx2", "default")))
#endif

enum { UNITS = 8 }; /* the fewest attention units a layer is split into */

/* What the threads share. */
typedef struct {
    float *qkv, *q, *kn, *vn;            /* (h·k + 2·g·k): q (h·k), kn (g·k), vn (g·k) in it */
    float *out, *mlp;                    /* (d) each: W_O's and W_down's products */
    float *gate, *up, *act;              /* (f) each */
    float *mask, *mask_local;            /* (t) each: a global layer's, a local one's */
    float *part_m, *part_l, *part_c;     /* (units, per), (units, per), (units, per, k): m, ℓ, c above */
    float *ctx;                          /* (h·k): the heads one by one: their merged context */
    float *rope;                         /* (layers, k/2, 2): each layer's RoPE table at pos (attn_op_rope_table) */
    float *scores, *masked, *weights, *dropped; /* (h, t) each: the same (1, h, 1, t) */
    unsigned char *key_pad;              /* (t), all 0: one row has no pads */
    float *own;                          /* each thread's own_bufs, own_floats apart */
    size_t own_floats;
    int parts, units;                    /* parts of a kv head's rows; units = g · parts */
    bool fused;                          /* the attention by units (not dropout, not tiles) */
    attn_team_barrier bar;               /* where the step's threads meet (team.h) */
} step_bufs;

/* One thread's own. */
typedef struct {
    float *resid, *x, *mid, *norm2, *tmp; /* (d) each */
    float *ctx;                           /* (h·k): every head's context, combined */
    float *qk, *v;                        /* (per + 1, k): kv head `group`'s query heads and new key, ready; (k) its value */
    float *sc;                            /* (per, t): a unit's scores, then their exps */
    int group;                            /* the kv head qk holds for this layer; −1: none yet */
} own_bufs;

static int team_size(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

static int team_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* Floats of one thread's own_bufs for t keys, a multiple of 16 (64 bytes: no
 * cache line shared with the next thread's). */
static size_t own_size(const attn_model_config *c, int t)
{
    size_t k = (size_t)c->head_dim, per = (size_t)(c->heads / c->kv_heads);
    size_t n = 5 * (size_t)c->d + (size_t)c->heads * k + (per + 2) * k + per * (size_t)t;
    return (n + 15) / 16 * 16;
}

/* Lays out s in the cache's step block (grown when too small) for t keys and
 * `threads` threads at most. Returns false out of memory. */
static bool step_alloc(attn_kv_cache *c, const attn_model *m, int t, int threads, bool fused, step_bufs *s)
{
    const attn_model_config *mc = &m->cfg;
    size_t hk = (size_t)mc->heads * mc->head_dim, gk = (size_t)mc->kv_heads * mc->head_dim;
    size_t per = (size_t)(mc->heads / mc->kv_heads), ht = fused ? 0 : (size_t)mc->heads * t;
    memset(s, 0, sizeof *s);
    s->parts = mc->kv_heads >= UNITS ? 1 : (UNITS + mc->kv_heads - 1) / mc->kv_heads;
    s->units = mc->kv_heads * s->parts;
    s->fused = fused;
    s->own_floats = own_size(mc, t);
    size_t units = (size_t)s->units, rope = (size_t)mc->layers * (mc->head_dim / 2) * 2;
    size_t shared = hk + 2 * gk + 2 * (size_t)mc->d + 3 * (size_t)mc->ffn + 2 * (size_t)t +
                    units * per * (2 + (size_t)mc->head_dim) + hk + rope + 4 * ht + (size_t)t / 4 + 1;
    shared = (shared + 15) / 16 * 16;
    size_t need = shared + (size_t)threads * s->own_floats;
    if (need > c->step_floats) {
        free(c->step);
        c->step_floats = 0;
        need += need / 4; /* room for the next positions' longer rows */
        if (posix_memalign((void **)&c->step, 64, need * sizeof(float))) return (c->step = NULL), false;
        c->step_floats = need;
    }
    float *p = c->step;
    float **each[] = {&s->qkv, &s->out, &s->mlp, &s->gate, &s->up, &s->act, &s->mask, &s->mask_local, &s->part_m,
                      &s->part_l, &s->part_c, &s->ctx, &s->rope, &s->scores, &s->masked, &s->weights, &s->dropped};
    const size_t n[] = {hk + 2 * gk, mc->d, mc->d, mc->ffn, mc->ffn, mc->ffn, t, t, units * per, units * per,
                        units * per * mc->head_dim, hk, rope, ht, ht, ht, ht};
    for (size_t i = 0; i < sizeof n / sizeof *n; i++) *each[i] = p, p += n[i];
    s->q = s->qkv, s->kn = s->q + hk, s->vn = s->kn + gk;
    s->key_pad = memset(p, 0, (size_t)t);
    s->own = c->step + shared;
    return true;
}

static void own_at(const attn_model *m, const step_bufs *s, int id, own_bufs *o)
{
    const attn_model_config *c = &m->cfg;
    float *p = s->own + (size_t)id * s->own_floats;
    float **d_sized[] = {&o->resid, &o->x, &o->mid, &o->norm2, &o->tmp};
    for (int i = 0; i < 5; i++, p += c->d) *d_sized[i] = p;
    o->ctx = p, p += (size_t)c->heads * c->head_dim;
    o->qk = p, p += (size_t)(c->heads / c->kv_heads + 1) * c->head_dim;
    o->v = p, p += c->head_dim;
    o->sc = p;
    o->group = -1;
}

/* ---- the heads one by one: dropout in training, or tiles ---- */

/* Steps 3–4 of attention.c for kv head j, in place: its per query heads q
 * (per·k), its new key kn (k) and value vn (k) get their bias, q and kn
 * their norm per head and their rotation at the step's position (the
 * layer's table in rope). Every op is the one a whole-row call makes, on a
 * slice of heads: the same numbers. run is the layer's settings (its RoPE
 * style). */
static void ready_heads(const attn_model *m, const attn_config *run, const attn_model_layer *W, const float *rope,
                        int l, int j, float *q, float *kn, float *vn)
{
    const attn_model_config *c = &m->cfg;
    int k = c->head_dim, per = c->heads / c->kv_heads;
    if (c->arch.qkv_bias) {
        attn_op_add_bias(q, W->b_q + (size_t)j * per * k, 1, per * k);
        attn_op_add_bias(kn, W->b_k + (size_t)j * k, 1, k);
        attn_op_add_bias(vn, W->b_v + (size_t)j * k, 1, k);
    }
    /* one position: (1, 1, h·k) split into heads is (1, h, 1, k), the same floats
     * (OLMo 2's norm over the whole projection: layer_team, before the heads part) */
    if (c->arch.qk_norm && !c->arch.qk_norm_whole) {
        attn_op_rmsnorm(q, W->q_norm, q, (size_t)per, k, c->eps);
        attn_op_rmsnorm(kn, W->k_norm, kn, 1, k, c->eps);
    }
    if (run->rope && attn_arch_layer_rope(&c->arch, l)) { /* not in a SmolLM3 NoPE layer */
        const float *cs = rope + (size_t)l * (k / 2) * 2;
        attn_op_rope_apply(q, q, 1, per, 1, k, cs, run->rope_style);
        attn_op_rope_apply(kn, kn, 1, 1, 1, k, cs, run->rope_style);
    }
}

/* Kv head j ready (ready_heads) in the shared q, kn, vn, on one thread,
 * then step 5: its key and value join the cache, a windowed local layer's
 * row of position pos at pos − f, f its oldest kept position, in a room of
 * its own. */
static void prepare_group(attn_kv_cache *kc, const attn_model *m, const attn_config *run, const attn_model_layer *W,
                          step_bufs *r, int l, int pos, int j)
{
    int k = m->cfg.head_dim, per = m->cfg.heads / m->cfg.kv_heads;
    float *kn = r->kn + (size_t)j * k, *vn = r->vn + (size_t)j * k;
    ready_heads(m, run, W, r->rope, l, j, r->q + (size_t)j * per * k, kn, vn);
    int f = attn_kv_first(kc, l), room = attn_kv_room(kc, l);
    memcpy(kc->keys[l] + ((size_t)j * room + pos - f) * k, kn, (size_t)k * sizeof *kn);
    memcpy(kc->values[l] + ((size_t)j * room + pos - f) * k, vn, (size_t)k * sizeof *vn);
}

/* The mask layer l's query reads: a local layer's window (Gemma's, or a windowed cache's rows). */
static const float *layer_mask(const attn_kv_cache *kc, const attn_model *m, const step_bufs *s, int l)
{
    return attn_kv_windowed(kc, l) || (m->cfg.arch.gemma && m->cfg.arch.local[l]) ? s->mask_local : s->mask;
}

/* The scores' scale: 1/√k, a model's own (Gemma's query_pre_attn_scalar), or 1 (--scale false). */
static float score_scale(const attn_model *m, const attn_config *run)
{
    const attn_model_config *c = &m->cfg;
    return !run->scale ? 1.0f : c->arch.query_scale > 0 ? (float)c->arch.query_scale : 1.0f / sqrtf((float)c->head_dim);
}

/* Steps 6–11 for query head i against its kv head i / per's cached keys,
 * positions f .. pos (tl of them; f > 0 in a windowed local layer): scores,
 * soft-cap (Gemma), mask, softmax, and (without dropout) its context row (k). */
static int attend_head(const attn_kv_cache *kc, const attn_model *m, const attn_config *run, step_bufs *r, int l,
                       int pos, int i)
{
    const attn_model_config *c = &m->cfg;
    int k = c->head_dim, j = i / (c->heads / c->kv_heads), t = pos + 1;
    int f = attn_kv_first(kc, l), room = attn_kv_room(kc, l), tl = t - f;
    const float *keys = kc->keys[l] + (size_t)j * room * k, *values = kc->values[l] + (size_t)j * room * k;
    bool drop = run->train && run->dropout > 0.0f;
    size_t at = (size_t)i * t;
    /* with tiles (and no dropout, whose cells are drawn over the whole (h, t)
     * row of weights): ctx[i] by the online softmax, key tile by key tile */
    if (run->tiles.q && !drop) {
        attn_dims one = {.b = 1, .h = 1, .s = 1, .t = tl, .n = 1, .k = k, .P = tl - 1};
        attn_tiled a = {.c = run, .d = &one, .q = r->q + (size_t)i * k, .keys = keys, .values = values,
                        .kv_heads = 1, .kv_stride = (size_t)room * k, .ctx = r->ctx + (size_t)i * k};
        return attn_tiled_attention(&a, NULL) ? -1 : 0;
    }
    /* scores[i] = q_i · K_jᵀ · scale (tl), capped C·tanh(·/C) (Gemma), masked, softmaxed: weights[i] */
    const float *mask = layer_mask(kc, m, r, l);
    attn_op_scores(r->q + (size_t)i * k, keys, r->scores + at, 1, 1, 1, tl, k, score_scale(m, run));
    if (run->softcap > 0) attn_op_softcap(r->scores + at, r->scores + at, (size_t)tl, (float)run->softcap);
    attn_op_apply_mask(r->scores + at, mask, r->masked + at, 1, 1, 1, tl);
    attn_op_softmax(r->masked + at, mask, r->weights + at, 1, 1, 1, tl, run->softmax_guard);
    /* ctx[i] = weights_i · V_j (k); merged (h·k) is the same floats */
    if (!drop) attn_op_weighted_sum(r->weights + at, values, r->ctx + (size_t)i * k, 1, 1, 1, tl, k);
    return 0;
}

/* The attention of one layer head by head: kv heads split between the
 * threads for their queries' and keys' norms and rotations and the cache,
 * then query heads for the scores and contexts, then, with dropout, the
 * dropped weights' context. Ends at a barrier; *bad set when a tile ran out
 * of memory. */
static void attend_heads(attn_kv_cache *kc, const attn_model *m, const attn_config *run, const attn_model_layer *W,
                         step_bufs *r, int l, int pos, int *bad)
{
    const attn_model_config *c = &m->cfg;
    int h = c->heads, k = c->head_dim, per = c->heads / c->kv_heads, t = pos + 1, j0, j1, i0, i1;
    attn_wmat_team_share(c->kv_heads, &j0, &j1);
    for (int j = j0; j < j1; j++) prepare_group(kc, m, run, W, r, l, pos, j);
    attn_team_wait(&r->bar);
    attn_wmat_team_share(h, &i0, &i1);
    for (int i = i0; i < i1; i++)
        if (attend_head(kc, m, run, r, l, pos, i)) {
            #pragma omp atomic write
            *bad = 1;
        }
    attn_team_wait(&r->bar);
    if (!(run->train && run->dropout > 0.0f)) return;
    if (attn_team_first())
        attn_op_dropout(r->weights, r->dropped, (size_t)h * t, run->dropout, attn_dropout_key(run, "attention"));
    attn_team_wait(&r->bar);
    attn_wmat_team_share(h, &i0, &i1);
    for (int i = i0; i < i1; i++)
        attn_op_weighted_sum(r->dropped + (size_t)i * t, kc->values[l] + (size_t)(i / per) * attn_kv_room(kc, l) * k,
                             r->ctx + (size_t)i * k, 1, 1, 1, t, k);
    attn_team_wait(&r->bar);
}

/* ---- the attention by units ---- */

/* a · b over k floats */
static inline float dot_k(const float *restrict a, const float *restrict b, int k)
{
    float sum = 0.0f;
    #pragma omp simd reduction(+ : sum)
    for (int x = 0; x < k; x++) sum += a[x] * b[x];
    return sum;
}

/* One score: scale · dot, capped C·tanh(·/C) when cap > 0, + the mask's cell. */
static inline float score_of(float dot, float scale, float cap, float mask)
{
    float v = scale * dot;
    if (cap > 0) v = cap * tanhf(v / cap);
    return v + mask;
}

#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define STEP_V8 1
/* 8 floats at any float's address, read as one vector register (or two). */
typedef float step_v8 __attribute__((vector_size(32), aligned(4), may_alias));

/* *out = the sums of a[0], …, a[7]'s lanes, side by side: a transpose and
 * three adds instead of eight horizontal sums. */
static inline void sum8x8(const step_v8 a[8], step_v8 *out)
{
    step_v8 t[4], u[2];
    for (int p = 0; p < 4; p++) /* pairs of lanes summed: a[2p]'s and a[2p+1]'s interleaved */
        t[p] = __builtin_shufflevector(a[2 * p], a[2 * p + 1], 0, 8, 2, 10, 4, 12, 6, 14) +
               __builtin_shufflevector(a[2 * p], a[2 * p + 1], 1, 9, 3, 11, 5, 13, 7, 15);
    for (int p = 0; p < 2; p++) /* quads */
        u[p] = __builtin_shufflevector(t[2 * p], t[2 * p + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
               __builtin_shufflevector(t[2 * p], t[2 * p + 1], 2, 3, 10, 11, 6, 7, 14, 15);
    *out = __builtin_shufflevector(u[0], u[1], 0, 1, 2, 3, 8, 9, 10, 11) +
           __builtin_shufflevector(u[0], u[1], 4, 5, 6, 7, 12, 13, 14, 15);
}
#endif

/* sc[i][r] (per, n) = score_of(q_i · key_r): eight key rows at a time against
 * each head (k a multiple of 8), their sums reduced together; the rest one
 * row at a time. */
STEP_CLONES
static void unit_scores(const float *q, const float *keys, const float *mask, float *sc, int per, int n, int k,
                        float scale, float cap)
{
    int r = 0;
#ifdef STEP_V8
    for (; k % 8 == 0 && r + 8 <= n; r += 8) {
        /* the next eight rows asked for ahead: read across eight rows at once,
         * the rows of a part stream in no faster than the hardware guesses */
        for (size_t at = 0; r + 16 <= n && at < (size_t)8 * k; at += 16) __builtin_prefetch(keys + (size_t)(r + 8) * k + at);
        for (int i = 0; i < per; i++) {
            const step_v8 *qi = (const step_v8 *)(q + (size_t)i * k), *kr = (const step_v8 *)(keys + (size_t)r * k);
            size_t row = (size_t)k / 8; /* a key row in vectors */
            /* the eight sums in registers, named: as an array (or a loop)
             * gcc kept them on the stack and zeroed them with rep stos */
            step_v8 a0 = {0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, s;
            for (int x = 0; x < k / 8; x++) {
                step_v8 qx = qi[x];
                a0 += qx * kr[x], a1 += qx * kr[row + x], a2 += qx * kr[2 * row + x], a3 += qx * kr[3 * row + x];
                a4 += qx * kr[4 * row + x], a5 += qx * kr[5 * row + x], a6 += qx * kr[6 * row + x];
                a7 += qx * kr[7 * row + x];
            }
            sum8x8((const step_v8[8]){a0, a1, a2, a3, a4, a5, a6, a7}, &s);
            float *out = sc + (size_t)i * n + r;
            if (cap > 0) {
                for (int j = 0; j < 8; j++) out[j] = score_of(s[j], scale, cap, mask[r + j]);
            } else { /* score_of's scale · dot, then + mask, for the eight at once (two statements: never fused) */
                step_v8 v = scale * s;
                v += *(const step_v8 *)(mask + r);
                memcpy(out, &v, sizeof v);
            }
        }
    }
#endif
    for (; r < n; r++)
        for (int i = 0; i < per; i++)
            sc[(size_t)i * n + r] = score_of(dot_k(q + (size_t)i * k, keys + (size_t)r * k, k), scale, cap, mask[r]);
}

/* c_i (k) = Σ_r e[i][r] · value_r for the per heads. With k a multiple of
 * 64, the rows go by blocks of BLOCK (8 KiB of values at k = 64, kept in L1
 * while each head reads them), and each 64 of c_i's features stay in eight
 * registers through a block instead of being loaded and stored at every
 * row: the same additions in the same order, so the same sums. */
STEP_CLONES
static void unit_values(const float *e, const float *values, float *c, int per, int n, int k)
{
    memset(c, 0, (size_t)per * k * sizeof *c);
#ifdef STEP_V8
    enum { BLOCK = 32 };
    size_t row = (size_t)k / 8; /* a value row in vectors */
    for (int r0 = 0; k % 64 == 0 && r0 < n; r0 += BLOCK) {
        int r1 = r0 + BLOCK < n ? r0 + BLOCK : n;
        for (int i = 0; i < per; i++)
            for (size_t x = 0; x < row; x += 8) {
                step_v8 *ci = (step_v8 *)(c + (size_t)i * k) + x;
                step_v8 a0 = ci[0], a1 = ci[1], a2 = ci[2], a3 = ci[3], a4 = ci[4], a5 = ci[5], a6 = ci[6], a7 = ci[7];
                for (int r = r0; r < r1; r++) {
                    float w = e[(size_t)i * n + r];
                    const step_v8 *v = (const step_v8 *)values + (size_t)r * row + x;
                    a0 += w * v[0], a1 += w * v[1], a2 += w * v[2], a3 += w * v[3];
                    a4 += w * v[4], a5 += w * v[5], a6 += w * v[6], a7 += w * v[7];
                }
                ci[0] = a0, ci[1] = a1, ci[2] = a2, ci[3] = a3, ci[4] = a4, ci[5] = a5, ci[6] = a6, ci[7] = a7;
            }
    }
    if (k % 64 == 0) return;
#endif
    for (int r = 0; r < n; r++) {
        const float *v = values + (size_t)r * k;
        for (int at = 0; r + 4 < n && at < k; at += 16) __builtin_prefetch(v + (size_t)4 * k + at); /* 4 rows ahead */
        for (int i = 0; i < per; i++) {
            float w = e[(size_t)i * n + r], *ci = c + (size_t)i * k;
            #pragma omp simd
            for (int x = 0; x < k; x++) ci[x] += w * v[x];
        }
    }
}

/* kv head j's query heads and new key into o->qk, its value into o->v,
 * made ready (ready_heads) on this thread's copy: every thread that takes a
 * part of head j makes its own. Once a layer and head. */
static void prepare_own(const attn_model *m, const attn_config *run, const attn_model_layer *W, const step_bufs *s,
                        own_bufs *o, int l, int j)
{
    int k = m->cfg.head_dim, per = m->cfg.heads / m->cfg.kv_heads;
    float *q = o->qk, *kn = o->qk + (size_t)per * k;
    if (o->group == j) return;
    memcpy(q, s->q + (size_t)j * per * k, (size_t)per * k * sizeof *q);
    memcpy(kn, s->kn + (size_t)j * k, (size_t)k * sizeof *kn);
    memcpy(o->v, s->vn + (size_t)j * k, (size_t)k * sizeof *kn);
    ready_heads(m, run, W, s->rope, l, j, q, kn, o->v);
    o->group = j;
}

/* Unit u's rows [*a, *b) of the tl that layer l holds (part u % parts of kv head u / parts). */
static void unit_rows(const step_bufs *s, int tl, int u, int *a, int *b)
{
    int p = u % s->parts;
    *a = (int)((long long)tl * p / s->parts), *b = (int)((long long)tl * (p + 1) / s->parts);
}

/* Unit u: kv head j = u / parts, its rows [a, b) (part u % parts of the tl
 * the layer holds) against j's query heads: each head's m, ℓ and c into the
 * partials. The part that holds position pos writes its key and value into
 * the cache first (no other part reads that row). */
static void attend_unit(attn_kv_cache *kc, const attn_model *m, const attn_config *run, const attn_model_layer *W,
                        step_bufs *s, own_bufs *o, int l, int pos, int u)
{
    const attn_model_config *c = &m->cfg;
    int k = c->head_dim, per = c->heads / c->kv_heads, j = u / s->parts, a, b;
    int f = attn_kv_first(kc, l), room = attn_kv_room(kc, l), tl = pos + 1 - f;
    unit_rows(s, tl, u, &a, &b);
    int n = b - a;
    prepare_own(m, run, W, s, o, l, j);
    float *keys = kc->keys[l] + (size_t)j * room * k, *values = kc->values[l] + (size_t)j * room * k;
    if (b == tl) {
        memcpy(keys + (size_t)(tl - 1) * k, o->qk + (size_t)per * k, (size_t)k * sizeof *keys);
        memcpy(values + (size_t)(tl - 1) * k, o->v, (size_t)k * sizeof *values);
    }
    unit_scores(o->qk, keys + (size_t)a * k, layer_mask(kc, m, s, l) + a, o->sc, per, n, k, score_scale(m, run),
                run->softcap > 0 ? (float)run->softcap : 0.0f);
    float *pm = s->part_m + (size_t)u * per, *pl = s->part_l + (size_t)u * per;
    for (int i = 0; i < per; i++) {
        float *e = o->sc + (size_t)i * n;
        pm[i] = attn_op_row_max(e, n, -INFINITY);
        if (pm[i] > -INFINITY) {
            pl[i] = attn_op_exp_shifted(e, e, n, pm[i]); /* a NaN score makes ℓ NaN */
            continue;
        }
        pl[i] = 0.0f; /* every key of the part hidden (or a NaN): it adds nothing, or a NaN */
        for (int r = 0; r < n; r++) pl[i] += isnan(e[r]) ? NAN : 0.0f;
        memset(e, 0, (size_t)n * sizeof *e);
    }
    unit_values(o->sc, values + (size_t)a * k, s->part_c + (size_t)u * per * k, per, n, k);
}

/* Every query head's context from its kv head's parts into o->ctx (h·k):
 * M = max_p m_p, ctx = Σ_p e^(m_p − M) c_p / Σ_p e^(m_p − M) ℓ_p. No key to
 * attend to (M = −∞): zeros when the guard is on and the mask hides every
 * key, else NaN, as softmax_rows has it. */
static void combine(const attn_kv_cache *kc, const attn_model *m, const attn_config *run, const step_bufs *s,
                    own_bufs *o, int l, int pos)
{
    const attn_model_config *c = &m->cfg;
    int k = c->head_dim, per = c->heads / c->kv_heads, tl = pos + 1 - attn_kv_first(kc, l);
    for (int hq = 0; hq < c->heads; hq++) {
        size_t u0 = (size_t)(hq / per) * s->parts, i = (size_t)(hq % per);
        float M = -INFINITY, L = 0.0f, *ctx = o->ctx + (size_t)hq * k;
        for (int p = 0; p < s->parts; p++) M = s->part_m[(u0 + p) * per + i] > M ? s->part_m[(u0 + p) * per + i] : M;
        memset(ctx, 0, (size_t)k * sizeof *ctx);
        if (M == -INFINITY) {
            const float *mask = layer_mask(kc, m, s, l);
            bool hidden = tl > 0;
            for (int r = 0; r < tl && hidden; r++) hidden = mask[r] == -INFINITY;
            for (int x = 0; !(hidden && run->softmax_guard) && x < k; x++) ctx[x] = NAN;
            continue;
        }
        for (int p = 0; p < s->parts; p++) {
            size_t at = (u0 + p) * per + i;
            float mp = s->part_m[at], alpha = mp > -INFINITY ? expf(mp - M) : 0.0f;
            const float *cp = s->part_c + at * k;
            L += alpha * s->part_l[at];
            for (int x = 0; alpha != 0.0f && x < k; x++) ctx[x] += alpha * cp[x];
        }
        float inv = 1.0f / L;
        for (int x = 0; x < k; x++) ctx[x] *= inv;
    }
}

/* The cached keys and values of the units this thread will claim first
 * (attn_team_claim_own's share), up to WARM_BYTES of them, asked for as the
 * layer starts: a step reads all the weights between two uses of a layer's
 * cache, so its rows come from memory, at the pace of the attention's loads,
 * while the memory idles; asked for before W_Q·W_K·W_V they arrive beside
 * its weights and wait in L2 or L3 (shared: a unit another thread takes
 * finds them too). TinyLlama's shape after 512 tokens, 512 KiB a thread:
 * the units 2.14–2.35 → 1.62–1.99 ms a step (with the own-share claims).
 * The cap keeps a long context from asking for more than the caches hold
 * (measured at 512 tokens only). */
enum { WARM_BYTES = 512 * 1024 };
static void warm_units(const attn_kv_cache *kc, const attn_model *m, const step_bufs *s, int l, int pos)
{
    int k = m->cfg.head_dim, room = attn_kv_room(kc, l), tl = pos + 1 - attn_kv_first(kc, l);
    int u0, u1;
    attn_wmat_team_share(s->units, &u0, &u1); /* this thread's share, as attn_team_claim_own's */
    size_t left = WARM_BYTES / 2; /* of keys, and as many of values */
    for (int u = u0; u < u1 && left > 0; u++) {
        int a, b, j = u / s->parts;
        unit_rows(s, tl - 1, u, &a, &b); /* the rows cached before this step's */
        const char *keys = (const char *)(kc->keys[l] + ((size_t)j * room + a) * k);
        const char *values = (const char *)(kc->values[l] + ((size_t)j * room + a) * k);
        size_t bytes = (size_t)(b - a) * k * sizeof(float);
        bytes = bytes < left ? bytes : left;
        left -= bytes;
        for (size_t at = 0; at < bytes; at += 64) {
            __builtin_prefetch(keys + at, 0, 1);
            __builtin_prefetch(values + at, 0, 1);
        }
    }
}

/* The attention of layer l by units, claimed one at a time by the threads,
 * then every thread's merged context in o->ctx. */
static void attend_units(attn_kv_cache *kc, const attn_model *m, const attn_config *run, const attn_model_layer *W,
                         step_bufs *s, own_bufs *o, int l, int pos)
{
    o->group = -1;
    for (int u; (u = attn_team_claim_own(&s->bar, s->units)) >= 0;) attend_unit(kc, m, run, W, s, o, l, pos, u);
    attn_team_wait(&s->bar);
    combine(kc, m, run, s, o, l, pos);
}

/* ---- a layer ---- */

/* x = RMSNorm(resid) ⊙ g_attn of layer l (OLMo 2: resid itself); thread 0 keeps it in the cache's x
 * when the cache keeps x. */
static void layer_input(attn_kv_cache *c, const attn_model *m, own_bufs *o, int l, int pos)
{
    if (m->cfg.arch.post_norms) memcpy(o->x, o->resid, (size_t)m->cfg.d * sizeof *o->x);
    else attn_op_rmsnorm(o->resid, m->layer[l].attn_norm, o->x, 1, m->cfg.d, m->cfg.eps);
    if (attn_team_first() && c->keeps_x)
        memcpy(c->x[l] + (size_t)(pos - attn_kv_first(c, l)) * m->cfg.d, o->x, (size_t)m->cfg.d * sizeof *o->x);
}

/* The attention's output joins the residual, on this thread's copy: out
 * (dropped in training), normalised after the sublayer (OLMo 2, Gemma);
 * mid = resid + out; norm2 = RMSNorm(mid) ⊙ g_mlp (OLMo 2: mid itself). */
static void attention_joins(const attn_model *m, const attn_config *run, const attn_model_layer *W,
                            const step_bufs *s, own_bufs *o)
{
    const attn_model_config *mc = &m->cfg;
    int d = mc->d;
    bool post = mc->arch.post_norms;
    const float *out = s->out;
    if (run->train && run->dropout > 0.0f)
        attn_op_dropout(out, o->tmp, (size_t)d, run->dropout, attn_dropout_key(run, "output")), out = o->tmp;
    if (post || mc->arch.gemma) attn_op_rmsnorm(out, W->post_attn_norm, o->tmp, 1, d, mc->eps), out = o->tmp;
    attn_op_add(o->resid, out, o->mid, (size_t)d);
    if (post) memcpy(o->norm2, o->mid, (size_t)d * sizeof *o->norm2);
    else attn_op_rmsnorm(o->mid, W->mlp_norm, o->norm2, 1, d, mc->eps);
}

/* The MLP's output joins: normalised after the sublayer (OLMo 2, Gemma);
 * resid = mid + mlp; then layer l + 1's input, or after the last layer the
 * final norm into norm2. */
static void mlp_joins(attn_kv_cache *c, const attn_model *m, const attn_model_layer *W, const step_bufs *s,
                      own_bufs *o, int l, int pos)
{
    const attn_model_config *mc = &m->cfg;
    const float *mlp = s->mlp;
    if (mc->arch.post_norms || mc->arch.gemma) attn_op_rmsnorm(mlp, W->post_ff_norm, o->tmp, 1, mc->d, mc->eps), mlp = o->tmp;
    attn_op_add(o->mid, mlp, o->resid, (size_t)mc->d);
    if (l + 1 < mc->layers) layer_input(c, m, o, l + 1, pos);
    else attn_op_rmsnorm(o->resid, m->norm, o->norm2, 1, mc->d, mc->eps); /* the final norm */
}

/* act = SiLU(x · W_gateᵀ) ⊙ (x · W_upᵀ), or Gemma's GELU_tanh for SiLU,
 * chunk by chunk of the f features as the threads claim them (a chunk's
 * gate, up and act alike), then a barrier. */
static void mlp_claimed(const attn_model_layer *W, step_bufs *s, const float *x, int f, bool gelu)
{
    attn_wmat_x in;
    attn_wmat_x_set(&in, &W->w_gate, 1, x);
    int rows = attn_wmat_chunk_rows(&W->w_gate, 1, team_size());
    for (int c; (c = attn_team_claim_own(&s->bar, (f + rows - 1) / rows)) >= 0;) {
        int i0 = c * rows, i1 = i0 + rows < f ? i0 + rows : f;
        attn_wmat_product_x(&W->w_gate, 1, &in, s->gate, i0, i1);
        attn_wmat_product_x(&W->w_up, 1, &in, s->up, i0, i1);
        if (gelu) attn_op_geglu(s->gate + i0, s->up + i0, s->act + i0, (size_t)(i1 - i0));
        else attn_op_swiglu(s->gate + i0, s->up + i0, s->act + i0, (size_t)(i1 - i0));
    }
    attn_team_wait(&s->bar);
}

/* Layer l of a decoding step, by every thread of the team (or one), no
 * parallel region of its own: on return o->resid is its output and o->x the
 * next layer's input (after the last, o->norm2 the final norm). */
static void layer_team(attn_kv_cache *c, const attn_model *m, const attn_config *base, int l, step_bufs *s,
                       own_bufs *o, int pos, int *bad)
{
    const attn_model_config *mc = &m->cfg;
    const attn_model_layer *W = &m->layer[l];
    const attn_rope_scaling *scaling; /* in the step's RoPE tables (step_rope) */
    attn_config layer_run = attn_gemma_layer_run(m, l, base, &scaling), *run = &layer_run;
    /* W_Q, W_K, W_V stacked are one ((h + 2g)·k, d) matrix: one product
     * gives q, kn and vn side by side */
    const attn_wmat qkv[] = {W->w_q, W->w_k, W->w_v};
    if (s->fused) warm_units(c, m, s, l, pos);
    attn_wmat_product_row_claimed(qkv, 3, o->x, s->qkv, &s->bar);
    if (mc->arch.qk_norm_whole) { /* OLMo 2: one RMS over all of q's h·k features, one over k's g·k */
        if (attn_team_first()) {
            attn_op_rmsnorm(s->q, W->q_norm, s->q, 1, mc->heads * mc->head_dim, mc->eps);
            attn_op_rmsnorm(s->kn, W->k_norm, s->kn, 1, mc->kv_heads * mc->head_dim, mc->eps);
        }
        attn_team_wait(&s->bar);
    }
    if (s->fused) attend_units(c, m, run, W, s, o, l, pos);
    else attend_heads(c, m, run, W, s, l, pos, bad);
    attn_wmat_product_row_claimed(&W->w_o, 1, s->fused ? o->ctx : s->ctx, s->out, &s->bar);
    attention_joins(m, run, W, s, o);
    mlp_claimed(W, s, o->norm2, mc->ffn, mc->arch.gemma);
    attn_wmat_product_row_claimed(&W->w_down, 1, s->act, s->mlp, &s->bar);
    mlp_joins(c, m, W, s, o, l, pos);
}

/* The masks of a step at position pos: every global layer's, and a local
 * (Gemma) or windowed layer's. */
static void step_masks(const attn_kv_cache *c, const attn_model *m, const attn_config *run, step_bufs *s, int t)
{
    attn_dims one = {.b = 1, .s = 1, .t = t, .n = 1, .P = t - 1};
    attn_op_build_mask(s->mask, run, &one, s->key_pad); /* the same in every layer, or every global one */
    if (m->cfg.arch.gemma || c->window) { /* and every local one's: the window */
        attn_config local = *run;
        attn_dims rows = one; /* a windowed cache's local layers: positions first .. pos, t − first keys */
        if (m->cfg.arch.gemma) local.sliding_window = m->cfg.arch.local_window;
        if (c->window) rows.t = t - c->first, rows.P = rows.t - 1;
        attn_op_build_mask(s->mask_local, &local, &rows, s->key_pad);
    }
}

/* Every layer's RoPE table at position pos (k/2 pairs cos, sin), once a
 * step for all its heads and threads: a layer with the base and scaling of
 * an earlier one (all of a Llama model's, two kinds in Gemma 3's) copies its
 * table. Returns −1 out of memory. */
static int step_rope(const attn_model *m, const attn_config *base, step_bufs *s, int pos)
{
    const attn_model_config *c = &m->cfg;
    size_t each = (size_t)(c->head_dim / 2) * 2;
    for (int l = 0; l < c->layers; l++) {
        const attn_rope_scaling *scaling, *before;
        attn_config run = attn_gemma_layer_run(m, l, base, &scaling);
        if (!run.rope || !attn_arch_layer_rope(&c->arch, l)) continue;
        int same = -1;
        for (int e = 0; e < l && same < 0; e++) {
            attn_config earlier = attn_gemma_layer_run(m, e, base, &before);
            if (earlier.rope && attn_arch_layer_rope(&c->arch, e) && earlier.rope_theta == run.rope_theta &&
                before == scaling)
                same = e;
        }
        attn_rope rope = {run.rope_theta, run.rope_style, scaling, false};
        if (same >= 0) memcpy(s->rope + l * each, s->rope + (size_t)same * each, each * sizeof *s->rope);
        else if (attn_op_rope_table(1, c->head_dim, pos, &rope, s->rope + l * each)) return -1;
    }
    return 0;
}

attn_status attn_kv_step(attn_kv_cache *c, const attn_model *m, const attn_config *run, int id, float *logits,
                         attn_error *err)
{
    const attn_model_config *mc = &m->cfg;
    if (id < 0 || id >= mc->vocab)
        return attn_fail(err, ATTN_ERR_CONFIG, "token id %d is outside %s's vocabulary", id, m->name);
    if (c->latent || mc->arch.sinks) return attn_kv_latent_pass(c, m, run, &id, 1, logits, err); /* gpt-oss too */
    attn_status st = attn_kv_reserve(c, c->n + 1, err);
    if (st) return st;
    int pos = c->n, t = pos + 1, bad = 0;
    bool team = (size_t)mc->d * mc->ffn > 65536, fused = !(run->train && run->dropout > 0.0f) && !run->tiles.q;
#ifdef _OPENMP
    int threads = team ? omp_get_max_threads() : 1;
#else
    int threads = 1;
#endif
    step_bufs s;
    if (!step_alloc(c, m, t, threads, fused, &s)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a decoding step");
    step_masks(c, m, run, &s, t);
    if (step_rope(m, run, &s, pos)) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for RoPE");
    /* one parallel region for the whole step: every layer's products and
     * heads are shared out inside it */
    #pragma omp parallel if (team)
    {
        own_bufs o;
        own_at(m, &s, team_id(), &o);
        attn_model_embed_row(m, id, o.resid);
        layer_input(c, m, &o, 0, pos);
        for (int l = 0; l < mc->layers; l++) layer_team(c, m, run, l, &s, &o, pos, &bad);
        attn_wmat_product_row_claimed(&m->lm_head, 1, o.norm2, logits, &s.bar); /* logits = final_norm · W_lmᵀ */
    }
    if (mc->gemma.final_softcap > 0) /* Gemma 2: logits = C·tanh(logits / C) */
        attn_op_softcap(logits, logits, (size_t)mc->vocab, (float)mc->gemma.final_softcap);
    c->n = t;
    return bad ? attn_fail(err, ATTN_ERR_NOMEM, "out of memory for a tile") : ATTN_OK;
}
