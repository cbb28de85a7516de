/* trace_io.c — saving and loading traces as safetensors. */
#include "trace_io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/budget.h"
#include "engine/base/checked.h"
#include "engine/base/json.h"
#include "engine/base/utf8.h"
#include "engine/formats/model_config.h"
#include "engine/formats/safetensors.h"

/* ---- saving ---- */

static char *json_tokens(const attn_tokens *t)
{
    cJSON *rows = cJSON_CreateArray();
    for (int r = 0; rows && r < t->rows; r++) {
        cJSON *row = cJSON_AddArrayToObject(rows, "");
        for (int p = 0; row && p < t->len; p++)
            cJSON_AddItemToArray(row, cJSON_CreateString(attn_tokens_at(t, r, p)));
    }
    char *s = rows ? cJSON_PrintUnformatted(rows) : NULL;
    cJSON_Delete(rows);
    return s;
}

static char *json_ints(const int *v, int n, int group)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) {
        if (group == 1) {
            cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
        } else {
            cJSON *g = cJSON_CreateIntArray(v + (size_t)i * group, group);
            cJSON_AddItemToArray(arr, g);
        }
    }
    char *s = arr ? cJSON_PrintUnformatted(arr) : NULL;
    cJSON_Delete(arr);
    return s;
}

/* A model's token ids, one array per row without its pads. */
static char *json_token_ids(const attn_trace *tr)
{
    cJSON *rows = cJSON_CreateArray();
    for (int r = 0; rows && r < tr->tokens.rows; r++) {
        cJSON *row = cJSON_AddArrayToObject(rows, "");
        for (int p = 0; row && p < tr->tokens.len; p++) {
            int id = tr->token_ids[(size_t)r * tr->tokens.len + p];
            if (id >= 0) cJSON_AddItemToArray(row, cJSON_CreateNumber(id));
        }
    }
    char *s = rows ? cJSON_PrintUnformatted(rows) : NULL;
    cJSON_Delete(rows);
    return s;
}

/* Each contract stage of the trace once (every layer has the same ones). */
static char *json_stages(const attn_trace *tr)
{
    cJSON *arr = cJSON_CreateArray();
    bool seen[ATTN_STAGE_COUNT] = {0}, mla = tr->dims.mode == ATTN_MODE_MLA;
    attn_stage_text tc = attn_trace_stage_text(tr); /* MLA's scores and context: their own formulas */
    for (int i = 0; arr && i < tr->n_tensors; i++) {
        const attn_stage_info *in = tr->tensors[i].info;
        if (!in || seen[in->id]) continue;
        seen[in->id] = true;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", in->name);
        cJSON_AddStringToObject(o, "dims", attn_stage_dims(in, &tr->dims));
        cJSON_AddStringToObject(o, "desc", attn_stage_desc(in, attn_trace_is_model(tr)));
        cJSON_AddStringToObject(o, "formula", mla ? attn_stage_formula_in(in, &tc)
                                                  : attn_stage_formula(in, attn_trace_is_model(tr)));
        cJSON_AddItemToArray(arr, o);
    }
    char *s = arr ? cJSON_PrintUnformatted(arr) : NULL;
    cJSON_Delete(arr);
    return s;
}

attn_status attn_trace_save(const attn_trace *tr, const char *path, attn_error *err)
{
    enum { MAXMETA = 64 };
    const char *meta[2 * MAXMETA];
    char num[MAXMETA][ATTN_SETTING_VALUE_MAX]; /* numbers and names; a text is put as its own string, whole */
    char *owned[8] = {0};
    int nm = 0, nn = 0, no = 0;
    const attn_dims *d = &tr->dims;
    const attn_config run = attn_config_as_run(&tr->cfg, d); /* sizes as computed */
    attn_status st = ATTN_OK;
    if (attn_setting_count() + 10 > MAXMETA) return attn_fail(err, ATTN_ERR_NOMEM, "too many settings to save");

#define PUT(k, v) (meta[2 * nm] = (k), meta[2 * nm + 1] = (v), nm++)
#define PUTI(k, v) (snprintf(num[nn], sizeof num[nn], "%lld", (long long)(v)), PUT(k, num[nn++]))
#define PUTJ(k, expr) do { char *s_ = (expr); if (!s_) goto nomem; owned[no++] = s_; PUT(k, s_); } while (0)
    PUT("format", ATTN_TRACE_FORMAT);
    PUTI("layers", tr->n_layers > 0 ? tr->n_layers : 1);
    PUT("attention", d->cross ? "cross" : "self");
    for (int i = 0; i < attn_setting_count(); i++) { /* every setting a trace records, as its text */
        const attn_setting *row = attn_setting_at(i);
        if (row->flags & ATTN_SETTING_TRACE) PUT(row->name, attn_setting_format(&run, row, num[nn++], sizeof num[0]));
    }
    PUTI("head_dim", d->k);
    if (tr->tokens.rows) {
        PUTJ("tokens", json_tokens(&tr->tokens));
        PUTJ("lengths", json_ints(tr->tokens.lengths, tr->tokens.rows, 1));
    }
    if (d->cross && tr->source.rows) {
        PUTJ("source_tokens", json_tokens(&tr->source));
        PUTJ("source_lengths", json_ints(tr->source.lengths, tr->source.rows, 1));
    }
    PUTJ("fully_masked_rows", json_ints(tr->masked_rows, tr->n_masked, 2));
    if (tr->token_ids) PUTJ("token_ids", json_token_ids(tr));
    if (tr->model_config) PUT("model_config", tr->model_config);
    PUTJ("stages", json_stages(tr));
#undef PUT
#undef PUTI
#undef PUTJ
    {
        attn_st_tensor *ts = calloc((size_t)(tr->n_tensors ? tr->n_tensors : 1), sizeof *ts);
        if (!ts) goto nomem;
        for (int i = 0; i < tr->n_tensors; i++) {
            if (attn_tensor_fill_all(&tr->tensors[i])) { /* a model's logits and probs, every row */
                free(ts);
                goto nomem;
            }
            ts[i] = (attn_st_tensor){tr->tensors[i].name, tr->tensors[i].ndim, tr->tensors[i].shape,
                                     tr->tensors[i].data};
        }
        st = attn_st_write(path, ts, tr->n_tensors, meta, nm, err);
        free(ts);
    }
    goto out;
nomem:
    st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
out:
    for (int i = 0; i < no; i++) free(owned[i]);
    return st;
}

/* ---- loading ---- */

/* The largest size of any axis a trace may declare (2^30): any two add up
 * within an int, and products are taken as int64_t or checked (checked.h). */
#define MAX_SIZE (1 << 30)

typedef struct {
    const char *letter; /* dimension name */
    int *slot;          /* where its value goes in attn_dims */
    const char *from;   /* first tensor that told us, for messages */
} dim_slot;

static attn_status meta_int(const attn_st_file *f, const char *key, int *out, attn_error *err)
{
    const char *v = attn_st_meta(f, key);
    if (!v) return ATTN_OK;
    char *end;
    long x = strtol(v, &end, 10);
    if (end == v || *end || x < 0 || x > MAX_SIZE)
        return attn_fail(err, ATTN_ERR_FORMAT, "metadata '%s' = '%.40s' is not a size", key, v);
    *out = (int)x;
    return ATTN_OK;
}

/* ---- names and layers ---- */

/* A tensor of the file as the trace will hold it. */
typedef struct {
    const attn_st_entry *e;
    int layer;                   /* from "layers.N."; 0 for a plain contract name; else −1 */
    const attn_stage_info *info; /* NULL outside the contract */
} named;

/* One of a layer's contract tensors: not the model's, not outside the contract. */
static bool in_layer(const named *a)
{
    return a->layer >= 0 && a->info && !a->info->model_level;
}

/* Reads the layer and stage of every tensor of f into all[0..f->n), and the
 * highest layer named into *highest. A malformed "layers." name and a
 * model's stage named in a layer are errors. */
static attn_status name_tensors(const attn_st_file *f, named *all, int *highest, attn_error *err)
{
    for (int i = 0; i < f->n; i++) {
        const char *rest;
        int layer = attn_tensor_name_layer(f->entries[i].name, &rest);
        if (layer == -2)
            return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.60s' is not named layers.N.<stage> (N a layer from 0 "
                             "to %d)", f->entries[i].name, ATTN_MAX_LAYERS - 1);
        all[i] = (named){&f->entries[i], layer, attn_stage_lookup(rest)};
        if (all[i].info && all[i].info->model_level && layer >= 0)
            return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.60s': %s belongs to the model, not to a layer",
                             f->entries[i].name, all[i].info->name);
        if (layer < 0 && all[i].info && !all[i].info->model_level) all[i].layer = 0; /* a single-layer name */
        if (all[i].layer > *highest) *highest = all[i].layer;
    }
    return ATTN_OK;
}

/* Every layer from 0 to highest has tensors: a view of a layer without them would draw another's. */
static attn_status check_every_layer(const named *all, int n, int highest, attn_error *err)
{
    attn_status st = ATTN_OK;
    bool *has = calloc((size_t)highest + 1, sizeof *has);
    if (!has) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        if (in_layer(&all[i])) has[all[i].layer] = true;
    for (int l = 0; l <= highest && !st; l++)
        if (!has[l])
            st = attn_fail(err, ATTN_ERR_FORMAT, "no tensor belongs to layer %d of the %d the tensors name", l,
                           highest + 1);
    free(has);
    return st;
}

/* The trace's number of layers into *n_layers: the metadata's `layers` (lv,
 * read as meta) when it has one, else the highest layer named + 1. The
 * metadata's count must be the tensors' own: `layers = 256` beside four
 * layers' tensors would show "layer 100 / 256" drawing layer 0. */
static attn_status count_layers(const named *all, int n, const char *lv, int meta, int highest, int *n_layers,
                                attn_error *err)
{
    bool layered = false;
    for (int i = 0; i < n && !layered; i++) layered = in_layer(&all[i]);
    if (lv && layered && meta != highest + 1)
        return attn_fail(err, ATTN_ERR_FORMAT, "metadata says layers = %d but the tensors have %d", meta,
                         highest + 1);
    if (lv && !layered && meta != 1)
        return attn_fail(err, ATTN_ERR_FORMAT, "metadata says layers = %d but no tensor belongs to a layer", meta);
    *n_layers = lv ? meta : highest + 1;
    return layered ? check_every_layer(all, n, highest, err) : ATTN_OK;
}

/* Gives each contract tensor its place in slot: row l < n_layers holds layer
 * l's stages, row n_layers the model's, each cell 1 + the tensor's index in
 * all (0: none). A layer beyond the count, a stage twice in one layer and a
 * plain contract name in a trace of several layers are errors. */
static attn_status fill_slots(const named *all, int n, int n_layers, int *slot, attn_error *err)
{
    for (int i = 0; i < n; i++) {
        const named *a = &all[i];
        if (a->layer >= n_layers)
            return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.60s' is in layer %d, but the metadata says the trace "
                             "has %d", a->e->name, a->layer, n_layers);
        if (!a->info) continue;
        if (n_layers > 1 && !a->info->model_level && strncmp(a->e->name, "layers.", 7))
            return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.60s' has no layer, but the trace has %d (name it "
                             "layers.N.%s)", a->e->name, n_layers, a->info->name);
        int row = a->info->model_level ? n_layers : a->layer;
        int *s = &slot[(size_t)row * ATTN_STAGE_COUNT + a->info->id];
        if (*s)
            return attn_fail(err, ATTN_ERR_FORMAT, "tensors '%.60s' and '%.60s' are both layer %d's %s",
                             all[*s - 1].e->name, a->e->name, a->layer, a->info->name);
        *s = i + 1;
    }
    return ATTN_OK;
}

/* out[0..n) in the trace's order: the embeddings, the layers (each in
 * pipeline order), then final_norm, logits, probs, then the tensors outside
 * the contract as the file has them. */
static void put_in_order(const named *all, int n, const int *slot, int n_layers, named *out)
{
    const int *model = slot + (size_t)n_layers * ATTN_STAGE_COUNT;
    int k = 0;
    for (int id = 0; id < ATTN_STAGE_RESID_IN; id++)
        if (model[id]) out[k++] = all[model[id] - 1];
    for (size_t cell = 0; cell < (size_t)n_layers * ATTN_STAGE_COUNT; cell++)
        if (slot[cell]) out[k++] = all[slot[cell] - 1];
    for (int id = ATTN_STAGE_RESID_IN; id < ATTN_STAGE_COUNT; id++)
        if (model[id]) out[k++] = all[model[id] - 1];
    for (int i = 0; i < n; i++)
        if (!all[i].info) out[k++] = all[i];
}

/* Reads the layer and stage of every tensor of f and puts them in the
 * trace's order, out[0..f->n) (put_in_order). *n_layers is the metadata's
 * `layers`; a file without it has the highest layer named + 1. */
static attn_status order_tensors(const attn_st_file *f, named *out, int *n_layers, attn_error *err)
{
    const char *lv = attn_st_meta(f, "layers");
    int meta = 0, highest = 0;
    attn_status st;
    if ((st = meta_int(f, "layers", &meta, err))) return st;
    if (lv && (meta < 1 || meta > ATTN_MAX_LAYERS))
        return attn_fail(err, ATTN_ERR_FORMAT, "metadata 'layers' = '%.40s' is not a count from 1 to %d", lv,
                         ATTN_MAX_LAYERS);
    named *all = calloc((size_t)(f->n ? f->n : 1), sizeof *all);
    int *slot = NULL; /* (layer, stage) → 1 + index into all, 0: none (fill_slots) */
    if (!all) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    if ((st = name_tensors(f, all, &highest, err)) ||
        (st = count_layers(all, f->n, lv, meta, highest, n_layers, err)))
        goto out;
    slot = calloc((size_t)(*n_layers + 1) * ATTN_STAGE_COUNT, sizeof *slot);
    if (!slot) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((st = fill_slots(all, f->n, *n_layers, slot, err))) goto out;
    put_in_order(all, f->n, slot, *n_layers, out);
out:
    free(all);
    free(slot);
    return st;
}

/* Derives dims from the contract tensors' shapes (every layer has the same
 * sizes); conflicting sizes are an error. */
static attn_status infer_dims(const named *ts, int n, attn_dims *d, attn_error *err)
{
    dim_slot slots[] = {{"b", &d->b, 0}, {"s", &d->s, 0}, {"t", &d->t, 0}, {"n", &d->n, 0}, {"P", &d->P, 0},
                        {"d", &d->d, 0}, {"h", &d->h, 0}, {"g", &d->g, 0}, {"k", &d->k, 0},
                        {"f", &d->f, 0}, {"V", &d->V, 0}, {"T", &d->T, 0}, {"R", &d->kv_rank, 0},
                        {"D", &d->rope_dim, 0}, {"E", &d->E, 0}};
    const int ns = (int)(sizeof slots / sizeof slots[0]);
    memset(d, 0, sizeof *d);
    for (int i = 0; i < ns; i++) *slots[i].slot = -1;
    for (int i = 0; i < n && ts[i].info; i++) {
        const attn_st_entry *e = ts[i].e;
        const attn_stage_info *in = ts[i].info;
        int nd = 0;
        for (const char *p = in->dims; *p; nd++) {
            size_t len = strcspn(p, ",");
            if (nd < e->ndim && e->shape[nd] > MAX_SIZE)
                return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%s' has an implausible size %lld", e->name,
                                 (long long)e->shape[nd]);
            for (int j = 0; nd < e->ndim && j < ns; j++) {
                if (strlen(slots[j].letter) != len || strncmp(slots[j].letter, p, len)) continue;
                int v = (int)e->shape[nd];
                if (*slots[j].slot < 0) { *slots[j].slot = v; slots[j].from = e->name; }
                else if (*slots[j].slot != v)
                    return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%s' has %s=%d but '%s' has %s=%d", e->name,
                                     slots[j].letter, v, slots[j].from, slots[j].letter, *slots[j].slot);
            }
            p += len + (p[len] == ',');
        }
        if (nd != e->ndim)
            return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%s' has %d dimensions; the contract says (%s)", e->name,
                             e->ndim, in->dims);
    }
    for (int j = 0; j < ns; j++)
        if (*slots[j].slot < 0) *slots[j].slot = 0;
    return ATTN_OK;
}

/* Metadata key, itself JSON, read under the rule of every JSON attnlab
 * reads (json.h): *out NULL when the key is absent. */
static attn_status meta_json(const attn_st_file *f, const char *key, cJSON **out, attn_error *err)
{
    const char *v = attn_st_meta(f, key);
    char what[64];
    *out = NULL;
    if (!v || !attn_json_parse(v, strlen(v), out, err)) return ATTN_OK;
    snprintf(what, sizeof what, "metadata '%s'", key);
    return attn_error_prefix(err, what);
}

static attn_status load_tokens(const attn_st_file *f, const char *key, const char *len_key, int rows, int len,
                               attn_pad_side side, attn_tokens *out, attn_error *err)
{
    const char *text = attn_st_meta(f, key), *ltext = attn_st_meta(f, len_key);
    attn_status st = ATTN_OK;
    cJSON *j = NULL, *lj = NULL;
    const char **table = NULL;
    int *lengths = NULL;
    if (!text) return ATTN_OK;
    if ((st = meta_json(f, key, &j, err)) || (st = meta_json(f, len_key, &lj, err))) goto out;
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != rows) {
        st = attn_fail(err, ATTN_ERR_FORMAT, "metadata '%s' is not a list of %d rows", key, rows);
        goto out;
    }
    size_t cells = 0;
    if (attn_mul_size((size_t)rows, (size_t)(len ? len : 1), &cells)) table = calloc(cells, sizeof *table);
    lengths = calloc((size_t)(rows ? rows : 1), sizeof *lengths);
    if (!table || !lengths) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); goto out; }
    /* walked item by item: cJSON_GetArrayItem starts from the head each time */
    const cJSON *row = j->child, *l = cJSON_IsArray(lj) ? lj->child : NULL;
    for (int r = 0; r < rows; r++, row = row->next, l = l ? l->next : NULL) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != len) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "metadata '%s' row %d does not have %d tokens", key, r + 1, len);
            goto out;
        }
        const cJSON *tok = row->child;
        for (int p = 0; p < len; p++, tok = tok->next) {
            if (!cJSON_IsString(tok) || strlen(tok->valuestring) > ATTN_MAX_TOKEN_BYTES ||
                !attn_utf8_valid(tok->valuestring, strlen(tok->valuestring))) {
                st = attn_fail(err, ATTN_ERR_FORMAT, "metadata '%s' row %d has an invalid token", key, r + 1);
                goto out;
            }
            table[(size_t)r * len + p] = tok->valuestring;
        }
        lengths[r] = len;
        if (ltext) {
            if (!cJSON_IsArray(lj) || cJSON_GetArraySize(lj) != rows || !cJSON_IsNumber(l) || l->valuedouble < 0 ||
                l->valuedouble > len || floor(l->valuedouble) != l->valuedouble) {
                st = attn_fail(err, ATTN_ERR_FORMAT, "metadata '%s' is not %d lengths between 0 and %d", len_key,
                               rows, len);
                goto out;
            }
            lengths[r] = (int)l->valuedouble;
        }
    }
    st = attn_tokens_from_table(rows, len, table, lengths, side, out, err);
out:
    free(table);
    free(lengths);
    cJSON_Delete(j);
    cJSON_Delete(lj);
    return st;
}

/* token_ids: a row of ids per batch row, as many as its real tokens, each in
 * [0, V); they fill tr->token_ids (b, L) around the pads. */
static attn_status load_token_ids(const attn_st_file *f, attn_trace *tr, attn_error *err)
{
    const char *text = attn_st_meta(f, "token_ids");
    const attn_tokens *tk = &tr->tokens;
    if (!text) return ATTN_OK;
    cJSON *j = NULL;
    attn_status st = meta_json(f, "token_ids", &j, err);
    size_t cells = 0;
    if (st) goto out;
    if (attn_mul_size((size_t)(tk->rows ? tk->rows : 1), (size_t)(tk->len ? tk->len : 1), &cells))
        tr->token_ids = calloc(cells, sizeof(int));
    if (!tr->token_ids) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); goto out; }
    if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) != tk->rows) {
        st = attn_fail(err, ATTN_ERR_FORMAT, "metadata 'token_ids' is not a list of %d rows", tk->rows);
        goto out;
    }
    const cJSON *row = j->child;
    for (int r = 0; r < tk->rows; r++, row = row->next) {
        if (!cJSON_IsArray(row) || cJSON_GetArraySize(row) != tk->lengths[r]) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "metadata 'token_ids' row %d does not have %d ids", r + 1,
                           tk->lengths[r]);
            goto out;
        }
        const cJSON *next = row->child;
        for (int p = 0; p < tk->len; p++) {
            int *dst = &tr->token_ids[(size_t)r * tk->len + p];
            if (attn_tokens_is_pad(tk, r, p)) { *dst = -1; continue; }
            const cJSON *v = next;
            next = next ? next->next : NULL;
            if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= tr->dims.V ||
                floor(v->valuedouble) != v->valuedouble) {
                st = attn_fail(err, ATTN_ERR_FORMAT, "metadata 'token_ids' row %d has an id outside [0, %d)", r + 1,
                               tr->dims.V);
                goto out;
            }
            *dst = (int)v->valuedouble;
        }
    }
out:
    cJSON_Delete(j);
    return st;
}

/* Rebuilds "a b | c d" from a token table (real tokens only). */
static char *tokens_text(const attn_tokens *t)
{
    size_t cap = 1 + 3 * (size_t)t->rows; /* " | " between rows, also rows of no tokens */
    for (size_t i = 0; i < (size_t)t->rows * t->len; i++) cap += strlen(t->tok[i]) + 1;
    char *s = malloc(cap), *p = s;
    if (!s) return NULL;
    for (int r = 0; r < t->rows; r++) {
        if (r) p += sprintf(p, " | ");
        bool first = true;
        for (int i = 0; i < t->len; i++) {
            if (attn_tokens_is_pad(t, r, i)) continue;
            p += sprintf(p, "%s%s", first ? "" : " ", attn_tokens_at(t, r, i));
            first = false;
        }
    }
    *p = '\0';
    return s;
}

/* The settings recorded in the metadata; a setting the file does not name keeps its default. */
static attn_status load_config(const attn_st_file *f, attn_trace *tr, attn_error *err)
{
    attn_config *c = &tr->cfg;
    attn_config_init(c);
    c->causal = ATTN_CAUSAL_OFF; /* unless the file says so */
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        const char *v = row->flags & ATTN_SETTING_TRACE ? attn_st_meta(f, row->name) : NULL;
        if (v && !*v && row->type == ATTN_SET_TEXT) v = NULL; /* written for an unset text */
        /* older attnlab cut each setting at 63 bytes, in a character too: such a text reads up to the cut */
        char *cut = NULL;
        size_t n = v ? strlen(v) : 0, bad = v && row->type == ATTN_SET_TEXT ? attn_utf8_invalid_at(v, n) : n;
        if (bad < n && !(v = cut = strndup(v, bad))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        attn_status st = v ? attn_setting_parse(c, row, v, err) : ATTN_OK;
        free(cut);
        if (st) {
            attn_error_prefix(err, "metadata");
            err->status = ATTN_ERR_FORMAT;
            return ATTN_ERR_FORMAT;
        }
    }
    /* the tensors decide the sizes (checked against the metadata in from_file),
     * the tokens (set by the caller) the rows */
    c->d_model = tr->dims.d;
    c->heads = tr->dims.h;
    c->kv_heads = tr->dims.g;
    c->past = tr->dims.P;
    c->seq = c->batch = 0;
    return ATTN_OK;
}

/* The (batch row, query) pairs whose every key is masked, read from the file's
 * first mask (in the trace's order) one row of keys at a time: the same rows
 * attn_trace_find_masked_rows finds, without the tensor's data in memory. */
static attn_status masked_rows_of(const attn_st_file *f, const named *ts, attn_trace *tr, attn_error *err)
{
    int i = 0, cap = 0;
    while (i < tr->n_tensors && attn_tensor_stage(&tr->tensors[i]) != ATTN_STAGE_MASK) i++;
    if (i == tr->n_tensors) return ATTN_OK;
    const int64_t B = tr->tensors[i].shape[0], S = tr->tensors[i].shape[2], T = tr->tensors[i].shape[3];
    float *row = malloc((size_t)(T ? T : 1) * sizeof *row);
    if (!row) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < B; b++)
        for (int64_t q = 0; q < S; q++) {
            attn_st_copy_f32_range(f, ts[i].e, (size_t)(b * S + q) * (size_t)T, (size_t)T, row);
            attn_status st = attn_trace_note_masked_row(tr, row, T, (int)b, (int)q, &cap, err);
            if (st) {
                free(row);
                return st;
            }
        }
    free(row);
    return ATTN_OK;
}

static attn_status load_masked_rows(const attn_st_file *f, const named *ts, attn_trace *tr, attn_error *err)
{
    const char *text = attn_st_meta(f, "fully_masked_rows");
    const attn_dims *d = &tr->dims;
    if (text) {
        cJSON *j = NULL;
        attn_status st = meta_json(f, "fully_masked_rows", &j, err);
        if (st) return st;
        int n = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : -1;
        int64_t rows = 0; /* b · s fits: b and s are at most 2^30 */
        if (n < 0 || !attn_mul_i64(d->b, d->s, &rows) || n > rows) {
            cJSON_Delete(j);
            return attn_fail(err, ATTN_ERR_FORMAT, "metadata 'fully_masked_rows' is not a list of [b, i] pairs");
        }
        tr->masked_rows = calloc((size_t)(n ? n : 1) * 2, sizeof *tr->masked_rows);
        if (!tr->masked_rows) { cJSON_Delete(j); return attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); }
        const cJSON *p = j->child;
        for (int i = 0; i < n; i++, p = p->next) {
            const cJSON *b = cJSON_GetArrayItem(p, 0), *q = cJSON_GetArrayItem(p, 1);
            if (cJSON_GetArraySize(p) != 2 || !cJSON_IsNumber(b) || !cJSON_IsNumber(q) || b->valuedouble < 0 ||
                b->valuedouble >= d->b || q->valuedouble < 0 || q->valuedouble >= d->s) {
                cJSON_Delete(j);
                return attn_fail(err, ATTN_ERR_FORMAT, "metadata 'fully_masked_rows' has an out-of-range entry");
            }
            tr->masked_rows[2 * i] = (int)b->valuedouble;
            tr->masked_rows[2 * i + 1] = (int)q->valuedouble;
        }
        tr->n_masked = n;
        cJSON_Delete(j);
        return ATTN_OK;
    }
    return masked_rows_of(f, ts, tr, err); /* a file from elsewhere: read the mask itself */
}

/* Completes dims from the metadata: it fills what no tensor told, and must
 * agree with what they did. */
static attn_status meta_dims(const attn_st_file *f, const named *ts, int n, attn_dims *d, attn_error *err)
{
    struct { const char *key; int *slot; } mk[] = {{"batch", &d->b}, {"heads", &d->h}, {"kv_heads", &d->g},
                                                    {"d_model", &d->d}, {"past", &d->P}, {"head_dim", &d->k}};
    attn_status st;
    for (size_t i = 0; i < sizeof mk / sizeof mk[0]; i++) {
        int v = -1;
        if ((st = meta_int(f, mk[i].key, &v, err))) return st;
        if (v < 0) continue;
        if (*mk[i].slot && *mk[i].slot != v)
            return attn_fail(err, ATTN_ERR_FORMAT, "metadata says %s = %d but the tensors say %d", mk[i].key, v,
                             *mk[i].slot);
        *mk[i].slot = v;
    }
    /* cross-attention is attention to a memory, which a cross trace holds:
     * `attention = cross` on a self-attention trace would be believed
     * (`info` said "causal off") */
    const char *att = attn_st_meta(f, "attention");
    bool memory = false;
    for (int i = 0; i < n; i++) memory |= ts[i].info && ts[i].info->id == ATTN_STAGE_MEMORY;
    if (att && strcmp(att, "self") && strcmp(att, "cross"))
        return attn_fail(err, ATTN_ERR_FORMAT, "metadata 'attention' = '%.40s' is not self or cross", att);
    if (att && memory != !strcmp(att, "cross"))
        return attn_fail(err, ATTN_ERR_FORMAT, "metadata says attention = %s but the trace has %s memory tensor "
                         "(what cross-attention attends to)", att, memory ? "a" : "no");
    d->cross = memory;
    if (!d->k && d->h && d->d % d->h == 0) d->k = d->d / d->h;
    if (!d->n) d->n = d->cross ? d->t : d->s;
    if (!d->cross && !d->P && d->t > d->s) d->P = d->t - d->s;
    int sp; /* s + P, each up to 2^30 */
    if (!attn_add_int(d->s, d->P, &sp))
        return attn_fail(err, ATTN_ERR_FORMAT, "the sequence, s = %d queries after past = %d, is too long", d->s, d->P);
    d->L = d->cross ? sp : (d->t ? d->t : sp);
    if (d->h && d->g && d->h % d->g)
        return attn_fail(err, ATTN_ERR_FORMAT, "kv_heads %d does not divide heads %d", d->g, d->h);
    d->mode = !d->g ? ATTN_MODE_AUTO : d->g == d->h ? ATTN_MODE_MHA : d->g == 1 ? ATTN_MODE_MQA : ATTN_MODE_GQA;
    if (d->kv_rank) d->mode = ATTN_MODE_MLA, d->g = d->h; /* a latent cache c_kv (b,t,R): every head its own */
    return ATTN_OK;
}

/* Whether f is a mapping whose tensors can be used in place: every one float32
 * on a little-endian host, 4-byte aligned. */
static bool can_point_into(const attn_st_file *f)
{
    const uint16_t one = 1;
    if (!f->map || *(const unsigned char *)&one != 1) return false;
    for (int i = 0; i < f->n; i++)
        if (f->entries[i].dtype != ATTN_ST_F32 || (uintptr_t)(f->data + f->entries[i].begin) % sizeof(float))
            return false;
    return true;
}

/* What loading does with the tensors' data. */
typedef struct {
    bool describe;              /* nothing: every data stays NULL (attn_trace_describe) */
    const attn_budget *budget;  /* what widening into the arena may take */
} load_opts;

/* Refuses, before any is allocated, an arena of widened tensors over the budget. */
static attn_status check_widening(const attn_st_file *f, const attn_trace *tr, const attn_budget *budget,
                                  attn_error *err)
{
    double need = attn_trace_arena_bytes(tr);
    if (need <= budget->bytes) return ATTN_OK;
    const char *kind = "F32";
    for (int i = 0; i < f->n && !strcmp(kind, "F32"); i++) kind = attn_st_dtype_name(f->entries[i].dtype);
    char size[32], bound[200];
    return attn_fail(err, ATTN_ERR_NOMEM, "as float32 its %s tensors would take about %s of memory, more than %s",
                     kind, attn_budget_size(need, size, sizeof size), attn_budget_text(budget, bound, sizeof bound));
}

/* Takes the tensors in order; every contract tensor must have exactly its contract shape. */
static attn_status place_tensors(const attn_st_file *f, const named *ts, const load_opts *o, attn_trace *tr,
                                 attn_error *err)
{
    tr->tensors = calloc((size_t)(f->n ? f->n : 1), sizeof *tr->tensors);
    if (!tr->tensors) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = 0; i < f->n; i++) {
        const attn_st_entry *e = ts[i].e;
        attn_tensor *t = &tr->tensors[tr->n_tensors++];
        snprintf(t->name, sizeof t->name, "%s", e->name);
        t->info = ts[i].info;
        t->layer = ts[i].layer;
        t->ndim = e->ndim;
        memcpy(t->shape, e->shape, sizeof t->shape);
        t->count = attn_st_count(e);
        for (int j = 0; j < t->ndim; j++) /* every view takes a size as an int */
            if (t->shape[j] > MAX_SIZE)
                return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%s' has an implausible size %lld", t->name,
                                 (long long)t->shape[j]);
        if (!t->info) continue;
        int64_t want[ATTN_MAX_NDIM];
        int nd = attn_stage_shape(t->info, &tr->dims, want);
        if (attn_stage_dims(t->info, &tr->dims) != t->info->dims) t->dims = attn_stage_dims(t->info, &tr->dims);
        bool same = nd == t->ndim;
        for (int j = 0; same && j < nd; j++) same = want[j] == t->shape[j];
        if (!same) {
            char shp[96];
            return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%s' has shape %s, which does not fit (%s)", t->name,
                             attn_tensor_shape_str(t, shp, sizeof shp), t->info->dims);
        }
    }
    bool in_place = can_point_into(f);
    tr->widened = !in_place;
    tr->described = o->describe;
    if (o->describe) return ATTN_OK;
    if (in_place) { /* the mapped file's float32 data is the tensors' data */
        for (int i = 0; i < tr->n_tensors; i++) tr->tensors[i].data = (float *)(void *)(f->data + ts[i].e->begin);
        return ATTN_OK;
    }
    /* F16 or BF16: each number widens to 4 bytes in the arena, so a file takes
     * twice its size in memory; the pages read from the mapping are let go a
     * block at a time, so they do not add a third */
    enum { BLOCK = 4 << 20 }; /* elements */
    attn_status st = check_widening(f, tr, o->budget, err);
    if (!st) st = attn_trace_alloc_arena(tr, err);
    for (int i = 0; !st && i < tr->n_tensors; i++)
        for (size_t at = 0, n; at < tr->tensors[i].count; at += n) {
            n = tr->tensors[i].count - at < BLOCK ? tr->tensors[i].count - at : BLOCK;
            attn_st_copy_f32_range(f, ts[i].e, at, n, tr->tensors[i].data + at);
            attn_st_release(f, ts[i].e, at, n);
        }
    return st;
}

/* Builds a trace from a parsed file. The caller keeps and frees it, except a
 * mapping whose data the tensors point into: the trace takes that over. */
static attn_status from_file(attn_st_file *fp, const load_opts *o, attn_trace *tr, attn_error *err)
{
    const attn_st_file f = *fp;
    attn_status st;
    const char *fmt = attn_st_meta(&f, "format");
    attn_dims *d = &tr->dims;
    named *ts = calloc((size_t)(f.n ? f.n : 1), sizeof *ts);
    if (!ts) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    if (fmt && strcmp(fmt, ATTN_TRACE_FORMAT) != 0) {
        st = attn_fail(err, ATTN_ERR_FORMAT, "format '%.40s' is not %s", fmt, ATTN_TRACE_FORMAT);
        goto fail;
    }
    if ((st = order_tensors(&f, ts, &tr->n_layers, err)) || (st = infer_dims(ts, f.n, d, err)) ||
        (st = meta_dims(&f, ts, f.n, d, err)) || (st = place_tensors(&f, ts, o, tr, err)))
        goto fail;
    if (!tr->arena && !tr->described && f.map) { /* the tensors live in the mapping: it is the trace's now */
        tr->map = fp->map;
        tr->map_size = fp->map_size;
        fp->map = NULL;
        fp->data = NULL;
    }

    if ((st = load_config(&f, tr, err))) goto fail;
    if ((st = load_tokens(&f, "tokens", "lengths", d->b, d->L, tr->cfg.pad_side, &tr->tokens, err))) goto fail;
    if (d->cross && (st = load_tokens(&f, "source_tokens", "source_lengths", d->b, d->t, tr->cfg.pad_side,
                                      &tr->source, err)))
        goto fail;
    if (tr->tokens.rows && !(tr->cfg.tokens = tokens_text(&tr->tokens))) goto nomem;
    if (tr->source.rows && !(tr->cfg.source_tokens = tokens_text(&tr->source))) goto nomem;
    if ((st = load_masked_rows(&f, ts, tr, err))) goto fail;
    if ((st = load_token_ids(&f, tr, err))) goto fail;
    const char *mc = attn_st_meta(&f, "model_config");
    if (mc && !(tr->model_config = strdup(mc))) goto nomem;
    if (mc) { /* what the model's architecture added (a config this build cannot read adds nothing) */
        attn_model_config mcfg;
        attn_error ignore;
        if (!attn_model_config_parse(mc, strlen(mc), &mcfg, &ignore)) tr->arch = mcfg.arch;
    }
    free(ts);
    return ATTN_OK;
nomem:
    st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
fail:
    free(ts);
    attn_trace_free(tr);
    return st;
}

static attn_status load(const char *path, const load_opts *o, attn_trace *tr, attn_error *err)
{
    attn_st_file f;
    attn_status st;
    memset(tr, 0, sizeof *tr);
    if ((st = attn_st_map(path, &f, err))) return st; /* already names the file */
    if ((st = from_file(&f, o, tr, err))) attn_error_prefix(err, path);
    attn_st_free(&f);
    return st;
}

attn_status attn_trace_load_within(const char *path, const attn_budget *budget, attn_trace *tr, attn_error *err)
{
    attn_budget half = attn_budget_get(0, false);
    return load(path, &(load_opts){.budget = budget ? budget : &half}, tr, err);
}

attn_status attn_trace_load(const char *path, attn_trace *tr, attn_error *err)
{
    return attn_trace_load_within(path, NULL, tr, err);
}

attn_status attn_trace_describe(const char *path, attn_trace *tr, attn_error *err)
{
    return load(path, &(load_opts){.describe = true}, tr, err);
}

attn_status attn_trace_parse(const unsigned char *buf, size_t size, attn_trace *tr, attn_error *err)
{
    attn_st_file f;
    attn_status st;
    attn_budget half = attn_budget_get(0, false);
    memset(tr, 0, sizeof *tr);
    if ((st = attn_st_parse(buf, size, &f, err))) return st;
    st = from_file(&f, &(load_opts){.budget = &half}, tr, err);
    attn_st_free(&f);
    return st;
}
