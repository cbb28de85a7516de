/* trace.c — ownership, arena, iteration and shape helpers for attn_trace. */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/mapping.h"

void attn_trace_free(attn_trace *tr)
{
    if (!tr) return;
    attn_config_free(&tr->cfg);
    attn_tokens_free(&tr->tokens);
    attn_tokens_free(&tr->source);
    free(tr->tensors);
    attn_arena_give(tr->store, tr->arena, tr->arena_size);
    attn_mapping_close(tr->map, tr->map_size);
    free(tr->masked_rows);
    free(tr->token_ids);
    free(tr->model_config);
    if (tr->head) tr->head->release(tr->head);
    if (tr->derived) tr->derived->release(tr->derived);
    memset(tr, 0, sizeof *tr);
}

int attn_tensor_fill(const attn_tensor *t, size_t row0, size_t n)
{
    return t && t->lazy ? t->lazy->fill(t->lazy, row0, n) : 0;
}

int attn_tensor_fill_all(const attn_tensor *t)
{
    size_t last = t && t->ndim ? (size_t)t->shape[t->ndim - 1] : 0;
    return last ? attn_tensor_fill(t, 0, t->count / last) : 0;
}

const attn_tensor *attn_tensor_filled(const attn_tensor *t)
{
    if (t && t->lazy && t->lazy->whole) attn_tensor_fill_all(t); /* out of memory: it reads 0, as logits do */
    return t;
}

static size_t padded(size_t count)
{
    return (count + ATTN_TENSOR_ALIGN - 1) / ATTN_TENSOR_ALIGN * ATTN_TENSOR_ALIGN;
}

double attn_trace_bytes(const attn_trace *tr)
{
    double b = 0;
    for (int i = 0; i < tr->n_tensors; i++) b += (double)tr->tensors[i].count * sizeof(float);
    return b;
}

double attn_trace_arena_bytes(const attn_trace *tr)
{
    double b = 0;
    for (int i = 0; i < tr->n_tensors; i++) b += (double)padded(tr->tensors[i].count) * sizeof(float);
    return b;
}

static void *copy_of(const void *src, size_t bytes, bool *ok)
{
    if (!src) return NULL;
    void *p = malloc(bytes ? bytes : 1);
    if (p) memcpy(p, src, bytes);
    else *ok = false;
    return p;
}

attn_status attn_trace_borrow(const attn_trace *src, attn_trace *dst, attn_error *err)
{
    attn_status st;
    bool ok = true;
    memset(dst, 0, sizeof *dst);
    if ((st = attn_config_copy(&dst->cfg, &src->cfg, err))) return st;
    dst->dims = src->dims;
    dst->n_tensors = src->n_tensors;
    dst->n_layers = src->n_layers;
    dst->n_masked = src->n_masked;
    dst->arch = src->arch;
    dst->widened = src->widened;
    dst->described = src->described;
    /* the tensor table is dst's own; its data pointers are src's */
    dst->tensors = copy_of(src->tensors, (size_t)src->n_tensors * sizeof *src->tensors, &ok);
    dst->masked_rows = copy_of(src->masked_rows, (size_t)src->n_masked * 2 * sizeof(int), &ok);
    dst->token_ids = copy_of(src->token_ids, (size_t)src->tokens.rows * (size_t)src->tokens.len * sizeof(int), &ok);
    dst->model_config = src->model_config ? strdup(src->model_config) : NULL;
    ok &= !src->model_config || dst->model_config;
    const attn_tokens *from[2] = {&src->tokens, &src->source};
    attn_tokens *to[2] = {&dst->tokens, &dst->source};
    for (int k = 0; ok && k < 2; k++)
        if (from[k]->rows && attn_tokens_from_table(from[k]->rows, from[k]->len, (const char *const *)from[k]->tok,
                                                    from[k]->lengths, from[k]->side, to[k], NULL))
            ok = false;
    if (ok) return ATTN_OK;
    attn_trace_free(dst);
    return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
}

attn_status attn_trace_alloc_arena(attn_trace *tr, attn_error *err)
{
    size_t total = 0;
    for (int i = 0; i < tr->n_tensors; i++) total += padded(tr->tensors[i].count);
    tr->arena = attn_arena_take(tr->store, (total ? total : ATTN_TENSOR_ALIGN) * sizeof(float), &tr->arena_size);
    if (!tr->arena)
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory allocating a %.1f MiB trace",
                         (double)total * sizeof(float) / (1 << 20));
    size_t off = 0;
    for (int i = 0; i < tr->n_tensors; i++) {
        tr->tensors[i].data = tr->arena + off;
        off += padded(tr->tensors[i].count);
    }
    return ATTN_OK;
}

attn_status attn_trace_note_masked_row(attn_trace *tr, const float *row, int64_t T, int b, int q, int *cap,
                                       attn_error *err)
{
    int64_t j = 0;
    while (j < T && row[j] != 0.0f) j++;
    if (j < T) return ATTN_OK; /* some key is visible */
    if (tr->n_masked == *cap) {
        int n = *cap ? *cap * 2 : 16;
        int *p = realloc(tr->masked_rows, (size_t)n * 2 * sizeof *p);
        if (!p) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        tr->masked_rows = p;
        *cap = n;
    }
    tr->masked_rows[2 * tr->n_masked] = b;
    tr->masked_rows[2 * tr->n_masked + 1] = q;
    tr->n_masked++;
    return ATTN_OK;
}

attn_status attn_trace_find_masked_rows(attn_trace *tr, attn_error *err)
{
    const attn_tensor *mask = NULL; /* every layer's mask is the same: the first one kept */
    for (int l = 0; !mask && l < (tr->n_layers > 0 ? tr->n_layers : 1); l++) mask = attn_trace_stage(tr, l, ATTN_STAGE_MASK);
    int cap = 0;
    if (!mask) return ATTN_OK;
    const int64_t B = mask->shape[0], S = mask->shape[2], T = mask->shape[3];
    for (int64_t b = 0; b < B; b++)
        for (int64_t i = 0; i < S; i++) {
            attn_status st = attn_trace_note_masked_row(tr, mask->data + (b * S + i) * T, T, (int)b, (int)i, &cap, err);
            if (st) return st;
        }
    return ATTN_OK;
}

const attn_tensor *attn_trace_next(const attn_trace *tr, const attn_tensor *prev)
{
    const attn_tensor *next = prev ? prev + 1 : tr->tensors;
    return next && next < tr->tensors + tr->n_tensors ? next : NULL;
}

int attn_trace_matrix(const attn_trace *tr, const char *name, int batch, int head, attn_matrix *m)
{
    return attn_trace_matrix_of(tr, attn_trace_find(tr, name), batch, head, m);
}

int attn_trace_matrix_of(const attn_trace *tr, const attn_tensor *t, int batch, int head, attn_matrix *m)
{
    memset(m, 0, sizeof *m);
    m->batch = m->head = m->kv_head = -1;
    if (!t || t->ndim < 1) return -1;
    int nn = t->info ? attn_stage_axes(t->info->dims, m->axes, ATTN_MAX_NDIM) : 0;
    bool named = nn == t->ndim;

    /* leading axes: batch row, then head / kv head / broadcast 1 */
    size_t offset = 0;
    int lead = t->ndim > 2 ? t->ndim - 2 : 0;
    for (int a = 0; a < lead; a++) {
        int64_t idx = 0, inner = 1;
        for (int r = a + 1; r < t->ndim; r++) inner *= t->shape[r];
        const char *nm = named ? m->axes[a] : (a == 0 ? "b" : "h");
        if (!strcmp(nm, "b")) {
            idx = batch < t->shape[a] ? batch : t->shape[a] - 1;
            m->batch = (int)idx;
        } else if (!strcmp(nm, "h")) {
            idx = head < t->shape[a] ? head : t->shape[a] - 1;
            m->head_axis = 'h';
            m->head = (int)idx;
            m->kv_head = attn_kv_head(&tr->dims, (int)idx);
        } else if (!strcmp(nm, "g")) {
            idx = attn_kv_head(&tr->dims, head);
            if (idx >= t->shape[a]) idx = t->shape[a] - 1;
            m->head_axis = 'g';
            m->head = head;
            m->kv_head = (int)idx;
        } else if (!strcmp(nm, "1")) {
            m->head_axis = '1';
        }
        if (idx < 0) idx = 0;
        offset += (size_t)(idx * inner);
    }
    if (!named)
        for (int a = 0; a < ATTN_MAX_NDIM; a++) m->axes[a][0] = '\0';
    m->data = t->data + offset;
    m->rows = t->ndim >= 2 ? (int)t->shape[t->ndim - 2] : 1;
    m->cols = (int)t->shape[t->ndim - 1];
    if (!t->count) /* a size 0 on any axis (b = 0 too): no cell to read, not even the last two axes' */
        m->data = t->data, m->rows = m->cols = 0;
    else attn_tensor_fill(t, offset / (size_t)m->cols, (size_t)m->rows); /* the picture's rows of a lazy stage */
    return 0;
}

const attn_tensor *attn_trace_find(const attn_trace *tr, const char *name)
{
    for (int i = 0; i < tr->n_tensors; i++)
        if (strcmp(tr->tensors[i].name, name) == 0) return attn_tensor_filled(&tr->tensors[i]);
    return NULL;
}

attn_tensor *attn_trace_slot(attn_trace *tr, int layer, attn_stage_id id)
{
    if (id == ATTN_STAGE_NONE) return NULL;
    for (int i = 0; i < tr->n_tensors; i++)
        if (tr->tensors[i].layer == layer && attn_tensor_stage(&tr->tensors[i]) == id) return &tr->tensors[i];
    return NULL;
}

const attn_tensor *attn_trace_stage(const attn_trace *tr, int layer, attn_stage_id id)
{
    return attn_tensor_filled(attn_trace_slot((attn_trace *)tr, layer, id));
}

const attn_tensor *attn_trace_get(const attn_trace *tr, int layer, const char *name)
{
    for (int i = 0; i < tr->n_tensors; i++) {
        const char *rest;
        attn_tensor_name_layer(tr->tensors[i].name, &rest);
        if (tr->tensors[i].layer == layer && strcmp(rest, name) == 0) return attn_tensor_filled(&tr->tensors[i]);
    }
    return NULL;
}

const char *attn_tensor_name(int layer, int n_layers, const char *stage, char *buf, size_t size)
{
    const attn_stage_info *in = attn_stage_lookup(stage);
    if (layer < 0 || n_layers <= 1 || (in && in->model_level)) snprintf(buf, size, "%s", stage);
    else snprintf(buf, size, "layers.%d.%s", layer, stage);
    return buf;
}

int attn_tensor_name_layer(const char *name, const char **rest)
{
    static const char PREFIX[] = "layers.";
    *rest = name;
    if (strncmp(name, PREFIX, sizeof PREFIX - 1)) return -1;
    const char *p = name + sizeof PREFIX - 1;
    int layer = 0, digits = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) {
        if ((digits == 1 && layer == 0) || (layer = layer * 10 + (*p - '0')) >= ATTN_MAX_LAYERS) return -2;
    }
    if (!digits || *p != '.' || !p[1]) return -2;
    *rest = p + 1;
    return layer;
}

const char *attn_tensor_shape_str(const attn_tensor *t, char *buf, size_t size)
{
    size_t used = 0;
    const char *p = t->dims ? t->dims : t->info ? t->info->dims : NULL;
    used += (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < t->ndim && used < size; i++) {
        if (p) {
            size_t len = strcspn(p, ",");
            if (len == 1 && p[0] == '1')
                used += (size_t)snprintf(buf + used, size - used, "%s1", i ? ", " : "");
            else
                used += (size_t)snprintf(buf + used, size - used, "%s%.*s=%lld", i ? ", " : "", (int)len, p,
                                         (long long)t->shape[i]);
            p += len + (p[len] == ',');
        } else {
            used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
        }
    }
    if (used < size) snprintf(buf + used, size - used, ")");
    return buf;
}

attn_stage_text attn_trace_stage_text(const attn_trace *tr)
{
    attn_stage_text tc = attn_config_stage_text(&tr->cfg, attn_trace_is_model(tr), tr->dims.cross);
    /* no <pad> anywhere: the padding mask changes nothing, and the mask's formula leaves it out */
    tc.pad_mask = tc.pad_mask && (attn_tokens_padded(&tr->tokens) || attn_tokens_padded(&tr->source));
    tc.bias = tr->arch.qkv_bias;
    tc.o_bias = tr->arch.o_bias;
    tc.qk_norm = tr->arch.qk_norm;
    tc.q_lora = tr->arch.q_lora;
    tc.rope_to_halves = tr->arch.rope_to_halves;
    tc.gemma = tr->arch.gemma;
    tc.qk_norm_whole = tr->arch.qk_norm_whole;
    tc.post_norms = tr->arch.post_norms;
    tc.nope = tr->arch.nope;
    tc.sink = tc.sink || tr->arch.sinks; /* gpt-oss: a learned sink per head */
    tc.layer_rope = -1;
    return tc;
}

attn_stage_text attn_trace_tensor_text(const attn_trace *tr, const attn_tensor *t)
{
    attn_stage_text tc = attn_trace_stage_text(tr);
    if (tr->arch.local_window && t && t->layer >= 0 && t->layer < ATTN_ARCH_MAX_LAYERS) /* the layer's own window */
        tc.window = tr->arch.local[t->layer] ? tr->arch.local_window : 0;
    if (t && t->layer >= 0) tc.layer_rope = attn_arch_layer_rope(&tr->arch, t->layer);
    return tc;
}
