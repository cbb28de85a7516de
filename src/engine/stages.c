/* stages.c — names, shapes, descriptions and formulas of every traced stage. */
#include "stages.h"

#include <stdio.h>
#include <string.h>


/* Marks a description (or a formula with words) for translation: xgettext
 * --keyword=ATTN_N_ collects them, and the interface translates them where it
 * draws them. The engine itself never translates. */
#define ATTN_N_(s) s

static const attn_stage_info STAGES[] = {
    {"x", "b,s,d", ATTN_N_("token embeddings at the query positions"), "x = embed(tokens[P:])"},
    {"x_past", "b,P,d", ATTN_N_("embeddings of the positions already in the KV cache"), "x_past = embed(tokens[:P])"},
    {"memory", "b,t,d", ATTN_N_("encoder output that the queries read (cross-attention)"), ATTN_N_("memory = embed(source tokens)")},
    {"w_q", "d,d", ATTN_N_("query projection weights, (in, out)"), "W_Q"},
    {"w_k", "d,g*k", ATTN_N_("key projection weights: one d×k block per kv head"), "W_K"},
    {"w_v", "d,g*k", ATTN_N_("value projection weights: one d×k block per kv head"), "W_V"},
    {"w_o", "d,d", ATTN_N_("output projection weights, (in, out)"), "W_O"},
    {"q", "b,s,d", ATTN_N_("queries: what each position is looking for"), "q = x · W_Q"},
    {"k", "b,n,g*k", ATTN_N_("keys of the new positions: what each position offers"), ATTN_N_("k = x · W_K   (memory · W_K in cross-attention)")},
    {"v", "b,n,g*k", ATTN_N_("values of the new positions: what each position passes on"), ATTN_N_("v = x · W_V   (memory · W_V in cross-attention)")},
    {"q_heads", "b,h,s,k", ATTN_N_("queries split into h heads of k features"), "q_heads[b,j,i,:] = q[b,i, j·k:(j+1)·k]"},
    {"k_heads", "b,g,n,k", ATTN_N_("keys split into g kv heads"), "k_heads[b,j,i,:] = k[b,i, j·k:(j+1)·k]"},
    {"v_heads", "b,g,n,k", ATTN_N_("values split into g kv heads"), "v_heads[b,j,i,:] = v[b,i, j·k:(j+1)·k]"},
    {"q_rope", "b,h,s,k", ATTN_N_("queries rotated by their position (RoPE)"),
     ATTN_N_("(q₂ₘ, q₂ₘ₊₁) rotated by pos·θ^(−2m/k)")},
    {"k_rope", "b,g,n,k", ATTN_N_("keys rotated by their position (RoPE)"),
     ATTN_N_("(k₂ₘ, k₂ₘ₊₁) rotated by pos·θ^(−2m/k)")},
    {"k_cache", "b,g,t,k", ATTN_N_("KV cache: the cached keys followed by the new ones"), "k_cache = [k_past ; k_new]"},
    {"v_cache", "b,g,t,k", ATTN_N_("KV cache: the cached values followed by the new ones"), "v_cache = [v_past ; v_new]"},
    {"k_expanded", "b,h,t,k", ATTN_N_("keys repeated so that every query head has one (repeat_kv)"),
     "k_expanded[b,j] = K[b, j / (h/g)]"},
    {"v_expanded", "b,h,t,k", ATTN_N_("values repeated so that every query head has one (repeat_kv)"),
     "v_expanded[b,j] = V[b, j / (h/g)]"},
    {"scores", "b,h,s,t", ATTN_N_("scaled dot product of every query with every key"), "scores = q · kᵀ / √k"},
    {"mask", "b,1,s,t", ATTN_N_("additive mask: 0 where a query may look, the fill value where it may not"),
     ATTN_N_("mask[i,j] = fill if key j is in the future (causal) or <pad>, else 0")},
    {"masked_scores", "b,h,s,t", ATTN_N_("scores plus the mask, broadcast over heads"), "masked_scores = scores + mask"},
    {"weights", "b,h,s,t", ATTN_N_("attention weights: each query row sums to 1"),
     ATTN_N_("weights = softmax(masked_scores) along t")},
    {"weights_dropout", "b,h,s,t", ATTN_N_("attention weights after dropout (training only)"),
     ATTN_N_("kept: weights / (1 − p), dropped: 0")},
    {"context", "b,h,s,k", ATTN_N_("per head, the weighted average of the value rows"), "context = weights · v_expanded"},
    {"merged", "b,s,d", ATTN_N_("heads concatenated back side by side"), "merged[b,i, j·k:(j+1)·k] = context[b,j,i,:]"},
    {"out", "b,s,d", ATTN_N_("the layer's output"), ATTN_N_("out = merged · W_O   (then dropout when training)")},
};

const attn_stage_info *attn_stages(int *count)
{
    *count = (int)(sizeof STAGES / sizeof STAGES[0]);
    return STAGES;
}

int attn_stage_index(const char *name)
{
    for (int i = 0; i < (int)(sizeof STAGES / sizeof STAGES[0]); i++)
        if (strcmp(STAGES[i].name, name) == 0) return i;
    return -1;
}

const attn_stage_info *attn_stage_lookup(const char *name)
{
    int i = attn_stage_index(name);
    return i < 0 ? NULL : &STAGES[i];
}

bool attn_stage_present(const char *name, const attn_stage_ctx *ctx)
{
    const attn_dims *d = ctx->dims;
    if (!strcmp(name, "x_past")) return d->P > 0;
    if (!strcmp(name, "memory")) return d->cross;
    if (!strcmp(name, "q_rope") || !strcmp(name, "k_rope")) return ctx->rope;
    if (!strcmp(name, "k_cache") || !strcmp(name, "v_cache")) return d->P > 0;
    if (!strcmp(name, "weights_dropout")) return ctx->dropout;
    return true;
}

int attn_stage_axes(const char *dims, char names[][8], int max)
{
    int n = 0;
    for (const char *p = dims; *p && n < max;) {
        size_t len = strcspn(p, ",");
        snprintf(names[n++], 8, "%.*s", (int)(len < 7 ? len : 7), p);
        p += len;
        if (*p == ',') p++;
    }
    return n;
}

int attn_kv_head(const attn_dims *d, int head)
{
    if (d->g <= 0 || d->h <= 0) return 0;
    int per = d->h / d->g;
    return per > 0 ? head / per : 0;
}

/* Value of one dimension name ("b", "g*k", "1") under dims. */
static int64_t dim_value(const char *name, size_t len, const attn_dims *d)
{
    if (len == 3 && !strncmp(name, "g*k", 3)) return (int64_t)d->g * d->k;
    if (len != 1) return -1;
    switch (name[0]) {
    case 'b': return d->b;
    case 's': return d->s;
    case 't': return d->t;
    case 'n': return d->n;
    case 'P': return d->P;
    case 'd': return d->d;
    case 'h': return d->h;
    case 'g': return d->g;
    case 'k': return d->k;
    case '1': return 1;
    default: return -1;
    }
}

int attn_stage_shape(const attn_stage_info *info, const attn_dims *dims, int64_t shape[ATTN_MAX_NDIM])
{
    int nd = 0;
    for (const char *p = info->dims; *p && nd < ATTN_MAX_NDIM;) {
        size_t len = strcspn(p, ",");
        shape[nd++] = dim_value(p, len, dims);
        p += len + (p[len] == ',');
    }
    return nd;
}

double attn_stages_bytes(const attn_stage_ctx *ctx)
{
    int n;
    const attn_stage_info *st = attn_stages(&n);
    double total = 0;
    for (int i = 0; i < n; i++) {
        if (!attn_stage_present(st[i].name, ctx)) continue;
        int64_t shape[ATTN_MAX_NDIM];
        int nd = attn_stage_shape(&st[i], ctx->dims, shape);
        double count = 1;
        for (int j = 0; j < nd; j++) count *= (double)shape[j];
        total += (count + ATTN_TENSOR_ALIGN) * sizeof(float);
    }
    return total;
}
