/* nonfinite.c — where a trace's NaN (or infinity) first appears. */
#define _DEFAULT_SOURCE /* madvise, MADV_PAGEOUT */
#include "nonfinite.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A float is NaN or ±∞ when its 8 exponent bits are all set; −∞ is exactly
 * the sign bit with them. Compared as bits, the test vectorises. */
#define EXP_BITS 0x7f800000u
#define MINUS_INF 0xff800000u

static inline bool bad_bits(uint32_t u, bool fill_ok)
{
    return (u & EXP_BITS) == EXP_BITS && !(fill_ok && u == MINUS_INF);
}

size_t attn_nonfinite_scan(const float *x, size_t n, bool fill_ok)
{
    enum { BLOCK = 4096 }; /* a branch-free pass over each block, then the exact cell */
    for (size_t at = 0; at < n; at += BLOCK) {
        size_t end = n - at < BLOCK ? n : at + BLOCK;
        unsigned bad = 0;
        #pragma omp simd reduction(| : bad)
        for (size_t i = at; i < end; i++) {
            uint32_t u;
            memcpy(&u, x + i, sizeof u);
            bad |= bad_bits(u, fill_ok);
        }
        if (!bad) continue;
        for (size_t i = at; i < end; i++) {
            uint32_t u;
            memcpy(&u, x + i, sizeof u);
            if (bad_bits(u, fill_ok)) return i;
        }
    }
    return n;
}

/* A trace mapped from its file (trace_io.h) reads a page of it only when a
 * picture needs it, so a 2 GiB file costs what one stage shows. The scan reads
 * every page; they are handed back after it (reclaimed, never lost: a page
 * the process changed is swapped out, not dropped), so that looking for a NaN
 * does not leave the whole file resident. */
static void release_pages(const attn_trace *tr, const attn_tensor *t)
{
#ifdef MADV_PAGEOUT
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)t->data, hi = lo + t->count * sizeof(float), base = (uintptr_t)tr->map;
    if (!tr->map || page <= 0 || lo < base || hi > base + tr->map_size) return;
    lo = (lo + (uintptr_t)page - 1) / (uintptr_t)page * (uintptr_t)page; /* whole pages of t only */
    hi = hi / (uintptr_t)page * (uintptr_t)page;
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_PAGEOUT); /* a hint: failure is harmless */
#else
    (void)tr, (void)t;
#endif
}

/* When t was computed: model-level tensors before the layers (embeddings),
 * each layer's stages in pipeline order, model-level ones after the layers
 * (final_norm, logits, probs), then tensors outside the contract. */
static long long computed_at(const attn_tensor *t, int i)
{
    const long long phase = 1LL << 40;
    if (!t->info) return 3 * phase + i;
    long long id = t->info->id;
    if (t->info->model_level) return (id < ATTN_STAGE_RESID_IN ? 0 : 2 * phase) + id;
    return phase + (long long)(t->layer < 0 ? 0 : t->layer) * ATTN_STAGE_COUNT + id;
}

typedef struct {
    long long at; /* computed_at */
    int i;        /* the tensor's index in the trace */
} ranked;

static int by_computing_order(const void *a, const void *b)
{
    long long x = ((const ranked *)a)->at, y = ((const ranked *)b)->at;
    return (x > y) - (x < y);
}

/* Whether every non-finite cell of the weights tensor t is a NaN of a fully
 * masked row with the guard off: the unguarded softmax's 0/0, by design. */
static bool unguarded_rows(const attn_trace *tr, const attn_tensor *t)
{
    attn_stage_id id = attn_tensor_stage(t);
    if (tr->cfg.softmax_guard || (id != ATTN_STAGE_WEIGHTS && id != ATTN_STAGE_WEIGHTS_DROPOUT) || t->ndim != 4 ||
        !tr->n_masked)
        return false;
    int64_t B = t->shape[0], H = t->shape[1], S = t->shape[2], T = t->shape[3];
    unsigned char *hidden = calloc((size_t)(B * S > 0 ? B * S : 1), 1);
    if (!hidden) return false;
    for (int r = 0; r < tr->n_masked; r++) {
        int64_t b = tr->masked_rows[2 * r], i = tr->masked_rows[2 * r + 1];
        if (b >= 0 && b < B && i >= 0 && i < S) hidden[b * S + i] = 1;
    }
    bool all = true;
    for (int64_t row = 0; all && row < B * H * S; row++) {
        const float *x = t->data + (size_t)row * (size_t)T;
        int64_t b = row / (H * S), i = row % S;
        if (hidden[b * S + i]) { /* NaN there is the pitfall's, anything else is not */
            for (int64_t j = 0; all && j < T; j++) all = isnan(x[j]) || isfinite(x[j]);
        } else {
            all = attn_nonfinite_scan(x, (size_t)T, false) == (size_t)T;
        }
    }
    free(hidden);
    return all;
}

bool attn_nonfinite_find(const attn_trace *tr, attn_nonfinite *out)
{
    memset(out, 0, sizeof *out);
    ranked *order = malloc((size_t)(tr->n_tensors > 0 ? tr->n_tensors : 1) * sizeof *order);
    if (!order) return false;
    for (int i = 0; i < tr->n_tensors; i++) order[i] = (ranked){computed_at(&tr->tensors[i], i), i};
    qsort(order, (size_t)tr->n_tensors, sizeof *order, by_computing_order);
    for (int k = 0; k < tr->n_tensors; k++) {
        const attn_tensor *t = &tr->tensors[order[k].i];
        attn_stage_id id = attn_tensor_stage(t);
        bool fill_ok = id == ATTN_STAGE_MASK || id == ATTN_STAGE_MASKED_SCORES || id == ATTN_STAGE_TILE_MAX;
        if (!t->data || t->lazy) continue; /* logits, probs: rows computed when read; scanning would compute all */
        size_t at = attn_nonfinite_scan(t->data, t->count, fill_ok);
        release_pages(tr, t);
        if (at == t->count) continue;
        out->tensor = t;
        out->index = at;
        out->value = t->data[at];
        out->expected = unguarded_rows(tr, t);
        break;
    }
    free(order);
    return out->tensor && !out->expected;
}

const char *attn_nonfinite_kind(const attn_nonfinite *nf)
{
    return isnan(nf->value) ? "NaN" : nf->value > 0 ? "+inf" : "-inf";
}

const char *attn_nonfinite_index_text(const attn_nonfinite *nf, char *buf, size_t size)
{
    const attn_tensor *t = nf->tensor;
    int64_t idx[ATTN_MAX_NDIM] = {0};
    size_t rest = nf->index, len = 0;
    int nd = t ? t->ndim : 0;
    for (int a = nd - 1; a >= 0; a--) { /* the flat index as one per axis */
        int64_t n = t->shape[a] > 0 ? t->shape[a] : 1;
        idx[a] = (int64_t)(rest % (size_t)n);
        rest /= (size_t)n;
    }
    if (size) buf[0] = '\0';
    for (int a = 0; a <= nd && size; a++) {
        int w = a < nd ? snprintf(buf + len, size - len, "%s%lld", a ? ", " : "[", (long long)idx[a])
                       : snprintf(buf + len, size - len, "%s]", nd ? "" : "[");
        if (w < 0 || (size_t)w >= size - len) break; /* cut short: what fits */
        len += (size_t)w;
    }
    return buf;
}

const char *attn_nonfinite_text(const attn_trace *tr, const attn_nonfinite *nf, char *buf, size_t size)
{
    const attn_tensor *t = nf->tensor;
    if (!t) {
        snprintf(buf, size, "no NaN or infinity");
        return buf;
    }
    char where[2 * ATTN_MAX_NAME + 32], at[ATTN_MAX_NDIM * 22 + 4];
    if (t->info && !t->info->model_level && tr->n_layers > 1)
        snprintf(where, sizeof where, "layer %d's %s (%s)", t->layer, t->info->name, t->name);
    else
        snprintf(where, sizeof where, "%s", t->name);
    snprintf(buf, size, "%s first appears in %s, at %s", attn_nonfinite_kind(nf), where,
             attn_nonfinite_index_text(nf, at, sizeof at));
    return buf;
}
