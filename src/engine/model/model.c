/* model.c — reading a Hugging Face LlamaForCausalLM folder: its weights viewed where they are mapped. */
#include "model.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdint.h>
#include <unistd.h>

#include "engine/attention/ops.h"
#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/base/paths.h"
#include "engine/formats/safetensors.h"
#include "engine/model/gemma_weights.h"
#include "engine/model/kv_bytes.h"

#ifndef ATTNLAB_MODELS_DIR
#define ATTNLAB_MODELS_DIR "assets/models"
#endif

#define CONFIG_LIMIT (1u << 20)

const char *attn_model_root(char *buf, size_t size)
{
    return attn_data_dir("ATTNLAB_MODELS", "models", ATTNLAB_MODELS_DIR, buf, size);
}

/* The shipped models' folder into root, or an error when its path is too long to be one. */
static attn_status model_root(char root[PATH_MAX], attn_error *err)
{
    if (attn_model_root(root, PATH_MAX)) return ATTN_OK;
    return attn_fail(err, ATTN_ERR_IO, "the models' folder ($ATTNLAB_MODELS or the installed one) has a path longer "
                     "than the %d bytes a path may have", PATH_MAX - 1);
}

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The models in folder root (attn_model_list's). */
static attn_status list_in(const char *root, char ***names, int *n, attn_error *err)
{
    *names = NULL;
    *n = 0;
    DIR *d = opendir(root);
    if (!d) return ATTN_OK; /* no shipped models here */
    int cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char cfg[PATH_MAX];
        if (e->d_name[0] == '.') continue;
        if (attn_path_format(cfg, sizeof cfg, NULL, "%s/%s/config.json", root, e->d_name)) continue; /* unreadable */
        if (access(cfg, R_OK) != 0) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            char **grown = realloc(*names, (size_t)cap * sizeof *grown);
            if (!grown) goto nomem;
            *names = grown;
        }
        if (!((*names)[*n] = strdup(e->d_name))) goto nomem;
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(*names, (size_t)*n, sizeof **names, by_name);
    return ATTN_OK;
nomem:
    closedir(d);
    for (int i = 0; i < *n; i++) free((*names)[i]);
    free(*names);
    *names = NULL;
    *n = 0;
    return attn_fail(err, ATTN_ERR_NOMEM, "out of memory listing %s", root);
}

attn_status attn_model_list(char ***names, int *n, attn_error *err)
{
    char root[PATH_MAX];
    *names = NULL;
    *n = 0;
    attn_status st = model_root(root, err);
    return st ? st : list_in(root, names, n, err);
}

bool attn_model_is_bare(const char *name)
{
    return name && name[0] && name[0] != '.' && !strchr(name, '/');
}

attn_status attn_model_find(const char *name, char *out, size_t size, attn_error *err)
{
    char root[PATH_MAX];
    attn_status st;
    if (!name || !*name) return attn_fail(err, ATTN_ERR_CONFIG, "model: no name or folder given");
    if (attn_model_is_bare(name)) { /* a shipped model's name means it, whatever folder is here */
        if ((st = model_root(root, err)) || (st = attn_path_format(out, size, err, "%s/%s", root, name))) return st;
        if (is_dir(out)) return ATTN_OK;
    }
    if (is_dir(name)) return attn_path_format(out, size, err, "%s", name);
    char **names;
    int n;
    char list[512] = "";
    if ((st = attn_model_list(&names, &n, err))) return st;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
    free(names);
    return attn_fail(err, ATTN_ERR_CONFIG, "model '%s': no such folder or shipped model (shipped: %s)", name,
                     n ? list : "none found");
}

/* ---- the weights ---- */

/* One weight the folder must have: its HF name, its HF shape (rows, cols;
 * cols 0 for a vector) and where it goes: a vector's float32 copy to *vec, a
 * matrix's view to *mat. Matrices stay as the checkpoint stores them, (out,
 * in), so x · Wᵀ reads each row of W in order, which is what lets a one-row
 * product (a decoding step) run at memory speed. */
typedef struct {
    char name[ATTN_ST_MAX_NAME];
    int64_t rows, cols;
    float **vec;
    attn_wmat *mat;
    int64_t planes; /* > 0: a stack (planes, rows, cols) of matrices (gpt-oss's experts), or of vectors
                     * (planes, rows) copied whole; each matrix's view at mat[p · step] */
    int step;
} wanted;

enum { MAX_PER_LAYER = 14 }; /* a dense layer's; a MoE layer adds its router, experts and shared MLP */

/* Room for the weights of one layer of c (plan_room) and where a MoE
 * layer's expert views go while only checking (3·E). */
static size_t plan_room(const attn_model_config *c) { return MAX_PER_LAYER + 2 + 3 * (size_t)c->arch.experts; }

static size_t count_of(const wanted *w)
{
    return (size_t)(w->planes ? w->planes : 1) * (size_t)w->rows * (size_t)(w->cols ? w->cols : 1);
}

#define W_(vec_, mat_, r_, c_, ...) (snprintf(w[n].name, sizeof w[n].name, __VA_ARGS__), w[n].planes = 0, \
                                     w[n].rows = (r_), w[n].cols = (c_), w[n].vec = (vec_), w[n].mat = (mat_), n++)
#define STACK(p_, step_) (w[n - 1].planes = (p_), w[n - 1].step = (step_))
#define VEC(dst_, r_, ...) W_(dst_, NULL, r_, 0, __VA_ARGS__)
#define MAT(dst_, r_, c_, ...) W_(NULL, dst_, r_, c_, __VA_ARGS__)

/* Layer l's latent attention (DeepSeek): its weights from w[n] on; returns the new count. */
static int mla_plan(const attn_model_config *c, int l, attn_model_layer *L, wanted *w, int n)
{
    const attn_mla_sizes *m = &c->mla;
    int64_t d = c->d, h = c->heads, qk = h * (m->nope_dim + m->rope_dim);
    if (m->q_rank) {
        MAT(&L->w_qa, m->q_rank, d, "model.layers.%d.self_attn.q_a_proj.weight", l);
        VEC(&L->qa_norm, m->q_rank, "model.layers.%d.self_attn.q_a_layernorm.weight", l);
        MAT(&L->w_qb, qk, m->q_rank, "model.layers.%d.self_attn.q_b_proj.weight", l);
    } else {
        MAT(&L->w_q, qk, d, "model.layers.%d.self_attn.q_proj.weight", l);
    }
    MAT(&L->w_kva, m->kv_rank + m->rope_dim, d, "model.layers.%d.self_attn.kv_a_proj_with_mqa.weight", l);
    VEC(&L->kva_norm, m->kv_rank, "model.layers.%d.self_attn.kv_a_layernorm.weight", l);
    MAT(&L->w_kvb, h * (m->nope_dim + m->v_dim), m->kv_rank, "model.layers.%d.self_attn.kv_b_proj.weight", l);
    MAT(&L->w_o, d, h * m->v_dim, "model.layers.%d.self_attn.o_proj.weight", l);
    return n;
}

/* Layer l's mixture of experts (DeepSeek; moe.h): the router, V3's bias, E
 * experts of width I, the shared MLP of S·I; expert views to xp (3·E). */
static int moe_plan(const attn_model_config *c, int l, attn_model_layer *L, attn_wmat *xp, wanted *w, int n)
{
    const attn_moe_sizes *e = &c->moe;
    int64_t d = c->d, I = e->inter, S = (int64_t)e->shared * e->inter;
    MAT(&L->w_router, e->experts, d, "model.layers.%d.mlp.gate.weight", l);
    if (e->method == ATTN_ROUTE_SIGMOID_GROUPS)
        VEC(&L->router_bias, e->experts, "model.layers.%d.mlp.gate.e_score_correction_bias", l);
    L->experts = xp;
    for (int x = 0; x < e->experts; x++) {
        MAT(&xp[3 * x], I, d, "model.layers.%d.mlp.experts.%d.gate_proj.weight", l, x);
        MAT(&xp[3 * x + 1], I, d, "model.layers.%d.mlp.experts.%d.up_proj.weight", l, x);
        MAT(&xp[3 * x + 2], d, I, "model.layers.%d.mlp.experts.%d.down_proj.weight", l, x);
    }
    if (S) { /* n_shared_experts 0: no shared MLP, and no tensors of zero width */
        MAT(&L->w_sh_gate, S, d, "model.layers.%d.mlp.shared_experts.gate_proj.weight", l);
        MAT(&L->w_sh_up, S, d, "model.layers.%d.mlp.shared_experts.up_proj.weight", l);
        MAT(&L->w_sh_down, d, S, "model.layers.%d.mlp.shared_experts.down_proj.weight", l);
    }
    return n;
}

/* Layer l's gpt-oss mixture of experts (gptoss.h): the router with its bias,
 * and the experts as HF stacks them, E matrices a tensor, stored (in, out);
 * expert e's views to xp[2e] (gate_up) and xp[2e + 1] (down). */
static int gptoss_moe_plan(const attn_model_config *c, int l, attn_model_layer *L, attn_wmat *xp, wanted *w, int n)
{
    int64_t d = c->d, I = c->moe.inter, E = c->moe.experts;
    MAT(&L->w_router, E, d, "model.layers.%d.mlp.router.weight", l);
    VEC(&L->router_bias, E, "model.layers.%d.mlp.router.bias", l);
    L->experts = xp;
    MAT(&xp[0], d, 2 * I, "model.layers.%d.mlp.experts.gate_up_proj", l), STACK(E, 2);
    VEC(&L->gate_up_bias, 2 * I, "model.layers.%d.mlp.experts.gate_up_proj_bias", l), STACK(E, 0);
    MAT(&xp[1], I, d, "model.layers.%d.mlp.experts.down_proj", l), STACK(E, 2);
    VEC(&L->down_bias, d, "model.layers.%d.mlp.experts.down_proj_bias", l), STACK(E, 0);
    return n;
}

/* Layer l's weights, each to its field of L (a MoE layer's expert views to xp). */
static int layer_plan(const attn_model_config *c, int l, attn_model_layer *L, attn_wmat *xp, wanted *w)
{
    int64_t d = c->d, q = (int64_t)c->heads * c->head_dim, kv = (int64_t)c->kv_heads * c->head_dim, f = c->ffn;
    int n = 0;
    memset(L, 0, sizeof *L);
    if (!c->arch.post_norms) VEC(&L->attn_norm, d, "model.layers.%d.input_layernorm.weight", l);
    if (c->arch.mla) n = mla_plan(c, l, L, w, n);
    else {
        MAT(&L->w_q, q, d, "model.layers.%d.self_attn.q_proj.weight", l);
        MAT(&L->w_k, kv, d, "model.layers.%d.self_attn.k_proj.weight", l);
        MAT(&L->w_v, kv, d, "model.layers.%d.self_attn.v_proj.weight", l);
        MAT(&L->w_o, d, q, "model.layers.%d.self_attn.o_proj.weight", l);
        if (c->arch.qkv_bias) {
            VEC(&L->b_q, q, "model.layers.%d.self_attn.q_proj.bias", l);
            VEC(&L->b_k, kv, "model.layers.%d.self_attn.k_proj.bias", l);
            VEC(&L->b_v, kv, "model.layers.%d.self_attn.v_proj.bias", l);
        }
        if (c->arch.o_bias) VEC(&L->b_o, d, "model.layers.%d.self_attn.o_proj.bias", l);
        if (c->arch.sinks) VEC(&L->sinks, c->heads, "model.layers.%d.self_attn.sinks", l);
        if (c->arch.qk_norm) { /* per head (k), or OLMo 2's over the whole projection (h·k, g·k) */
            VEC(&L->q_norm, c->arch.qk_norm_whole ? q : c->head_dim, "model.layers.%d.self_attn.q_norm.weight", l);
            VEC(&L->k_norm, c->arch.qk_norm_whole ? kv : c->head_dim, "model.layers.%d.self_attn.k_norm.weight", l);
        }
    }
    if (c->arch.gemma) { /* both norms around each sublayer */
        VEC(&L->post_attn_norm, d, "model.layers.%d.post_attention_layernorm.weight", l);
        VEC(&L->mlp_norm, d, "model.layers.%d.pre_feedforward_layernorm.weight", l);
        VEC(&L->post_ff_norm, d, "model.layers.%d.post_feedforward_layernorm.weight", l);
    } else if (c->arch.post_norms) {
        VEC(&L->post_attn_norm, d, "model.layers.%d.post_attention_layernorm.weight", l);
        VEC(&L->post_ff_norm, d, "model.layers.%d.post_feedforward_layernorm.weight", l);
    } else {
        VEC(&L->mlp_norm, d, "model.layers.%d.post_attention_layernorm.weight", l);
    }
    if (attn_arch_layer_moe(&c->arch, l))
        return c->moe.method == ATTN_ROUTE_TOPK_SOFTMAX ? gptoss_moe_plan(c, l, L, xp, w, n) : moe_plan(c, l, L, xp, w, n);
    MAT(&L->w_gate, f, d, "model.layers.%d.mlp.gate_proj.weight", l);
    MAT(&L->w_up, f, d, "model.layers.%d.mlp.up_proj.weight", l);
    MAT(&L->w_down, d, f, "model.layers.%d.mlp.down_proj.weight", l);
    return n;
}

/* The weights outside the layers. */
static int global_plan(attn_model *m, wanted *w)
{
    const attn_model_config *c = &m->cfg;
    int n = 0;
    MAT(&m->embed, c->vocab, c->d, "model.embed_tokens.weight");
    VEC(&m->norm, c->d, "model.norm.weight");
    if (!c->tied) MAT(&m->lm_head, c->vocab, c->d, "lm_head.weight");
    return n;
}
#undef W_
#undef STACK
#undef VEC
#undef MAT

static attn_status check_entry(const attn_ckpt *ck, const wanted *w, attn_error *err)
{
    const attn_st_entry *e = attn_ckpt_find(ck, w->name, NULL);
    char blocks[ATTN_ST_MAX_NAME + 8];
    snprintf(blocks, sizeof blocks, "%s_blocks", w->name);
    if (!e && attn_ckpt_find(ck, blocks, NULL)) /* gpt-oss as published: its experts in MXFP4 */
        return attn_fail(err, ATTN_ERR_FORMAT, "weights: '%s' is stored as MXFP4 ('%s', '_scales'), which is not "
                         "read; use a BF16, F16 or F32 copy of the weights", w->name, blocks);
    if (!e) return attn_fail(err, ATTN_ERR_FORMAT, "weights: tensor '%s' is missing", w->name);
    int64_t dims[3];
    int nd = 0;
    if (w->planes) dims[nd++] = w->planes;
    dims[nd++] = w->rows;
    if (w->cols) dims[nd++] = w->cols;
    bool ok = e->ndim == nd;
    for (int i = 0; ok && i < nd; i++) ok = e->shape[i] == dims[i];
    if (ok) return ATTN_OK;
    char got[64] = "(", want[48];
    for (int i = 0; i < e->ndim; i++) {
        size_t len = strlen(got);
        snprintf(got + len, sizeof got - len, "%s%lld", i ? ", " : "", (long long)e->shape[i]);
    }
    strncat(got, ")", sizeof got - strlen(got) - 1);
    want[0] = '(', want[1] = '\0';
    for (int i = 0; i < nd; i++) {
        size_t len = strlen(want);
        snprintf(want + len, sizeof want - len, "%s%lld", i ? ", " : "", (long long)dims[i]);
    }
    strncat(want, ")", sizeof want - strlen(want) - 1);
    return attn_fail(err, ATTN_ERR_FORMAT, "%s: '%s' has shape %s but config.json needs %s",
                     attn_ckpt_where(ck, w->name), w->name, got, want);
}

static attn_status check_planned(attn_model *m, wanted *w, attn_wmat *xp, attn_error *err);

/* Every tensor of the files must be one the plan names (an extra one means a
 * different architecture, or a config that disagrees with the weights). */
static attn_status check_all(attn_model *m, attn_error *err)
{
    const attn_model_config *c = &m->cfg;
    wanted *w = malloc(plan_room(c) * sizeof *w);
    attn_wmat *xp = malloc((3 * (size_t)c->arch.experts + 1) * sizeof *xp);
    attn_status st = w && xp ? check_planned(m, w, xp, err) : attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    free(w);
    free(xp);
    return st;
}

/* Every weight the plan names has its shape; every tensor of the files is named. */
static attn_status check_planned(attn_model *m, wanted *w, attn_wmat *xp, attn_error *err)
{
    const attn_model_config *c = &m->cfg;
    attn_model_layer L;
    attn_status st;
    size_t named = 0, held = 0;
    for (int l = -1; l < c->layers; l++) {
        int n = l < 0 ? global_plan(m, w) : layer_plan(c, l, &L, xp, w);
        for (int i = 0; i < n; i++)
            if ((st = check_entry(&m->ckpt, &w[i], err))) return st;
        named += (size_t)n;
    }
    for (int i = 0; i < m->ckpt.n_files; i++) held += (size_t)m->ckpt.files[i].n;
    if (c->tied && attn_ckpt_find(&m->ckpt, "lm_head.weight", NULL)) {
        /* a tied head may be saved too, as the copy of the embedding it is:
         * never read, but one of another shape says the file is not this model */
        wanted head = {.name = "lm_head.weight", .rows = c->vocab, .cols = c->d};
        if ((st = check_entry(&m->ckpt, &head, err))) return st;
        held--;
    }
    if (held == named) return ATTN_OK;
    for (int i = 0; i < m->ckpt.n_files; i++)
        for (int j = 0; j < m->ckpt.files[i].n; j++) {
            const char *name = m->ckpt.files[i].entries[j].name;
            int layer = -1;
            bool known = c->tied && !strcmp(name, "lm_head.weight");
            if (sscanf(name, "model.layers.%d.", &layer) != 1) layer = -1;
            int n = layer >= 0 && layer < c->layers ? layer_plan(c, layer, &L, xp, w) : global_plan(m, w);
            for (int k = 0; !known && k < n; k++) known = !strcmp(name, w[k].name);
            if (!known)
                return attn_fail(err, ATTN_ERR_FORMAT, "%s: unexpected tensor '%.60s' (not part of a %s with this "
                                 "config.json)", attn_ckpt_where(&m->ckpt, name), name, attn_arch_name(c->arch.kind));
        }
    return ATTN_OK;
}

/* Bytes of every weight the plan names, as stored: what check_numbers reads. */
static size_t weight_bytes(attn_model *m, wanted *w, attn_wmat *xp)
{
    attn_model_layer L;
    size_t bytes = 0;
    for (int l = -1; l < m->cfg.layers; l++) {
        int n = l < 0 ? global_plan(m, w) : layer_plan(&m->cfg, l, &L, xp, w);
        for (int i = 0; i < n; i++) {
            const attn_st_file *f;
            const attn_st_entry *e = attn_ckpt_find(&m->ckpt, w[i].name, &f);
            bytes += e->end - e->begin;
        }
    }
    return bytes;
}

/* Every weight the model reads must be a number. A NaN or ±∞ in a
 * checkpoint (a training run that diverged, a conversion that overflowed
 * float16's 65504) spreads through every later stage: the first layer's
 * scores turn NaN, then the residual stream, then every logit, and nothing
 * said where it came from. So the model is refused, naming the file and the
 * tensor. One pass over the stored bits of each tensor, nothing widened:
 * SmolLM2-135M's shape took 68 ms in bfloat16 (269 MB), 261 ms in float32
 * (538 MB), its pages resident, on the 2-core test machine. */
static attn_status check_numbers(attn_model *m, wanted *w, attn_wmat *xp, attn_progress *watch, attn_error *err)
{
    const attn_model_config *c = &m->cfg;
    attn_model_layer L;
    if (watch) atomic_store(&watch->bytes_total, (long long)weight_bytes(m, w, xp));
    for (int l = -1; l < c->layers; l++) {
        int n = l < 0 ? global_plan(m, w) : layer_plan(c, l, &L, xp, w);
        for (int i = 0; i < n; i++) {
            const attn_st_file *f;
            const attn_st_entry *e = attn_ckpt_find(&m->ckpt, w[i].name, &f);
            if (attn_progress_phase(watch, ATTN_PHASE_READING)) return attn_fail(err, ATTN_ERR_CANCELLED, "cancelled");
            size_t at = attn_st_find_nonfinite(f, e), cols = w[i].cols ? (size_t)w[i].cols : 0;
            if (watch) atomic_fetch_add(&watch->bytes_done, (long long)(e->end - e->begin));
            if (at == attn_st_count(e)) continue;
            float v;
            char where[48];
            attn_st_copy_f32_range(f, e, at, 1, &v);
            size_t plane = (size_t)w[i].rows * (cols ? cols : 1);
            if (w[i].planes && cols)
                snprintf(where, sizeof where, "[%zu, %zu, %zu]", at / plane, at % plane / cols, at % cols);
            else if (w[i].planes) snprintf(where, sizeof where, "[%zu, %zu]", at / plane, at % plane);
            else if (cols) snprintf(where, sizeof where, "[%zu, %zu]", at / cols, at % cols);
            else snprintf(where, sizeof where, "[%zu]", at);
            return attn_fail(err, ATTN_ERR_FORMAT, "%s: tensor '%s' holds %s at %s: a model's weights must all be "
                             "numbers", attn_ckpt_where(&m->ckpt, w[i].name), w[i].name,
                             isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf", where);
        }
    }
    return ATTN_OK;
}

/* Whether a weight is copied at load: a vector, widened to float32 (a few
 * KiB), or a float32 matrix whose bytes are not float-aligned in the file
 * (a file written without padding); every other matrix is read in place. */
static bool copied(const attn_st_file *f, const attn_st_entry *e, const wanted *w)
{
    return !w->cols || (e->dtype == ATTN_ST_F32 && (uintptr_t)(f->data + e->begin) % sizeof(float));
}

/* Floats the copies of the n weights of w take. */
static size_t copied_floats(const attn_ckpt *ck, const wanted *w, int n)
{
    size_t need = 0;
    for (int i = 0; i < n; i++) {
        const attn_st_file *f;
        const attn_st_entry *e = attn_ckpt_find(ck, w[i].name, &f);
        if (copied(f, e, &w[i])) need += count_of(&w[i]);
    }
    return need;
}

/* Places the n weights of w: a view into the file for each matrix read in
 * place, a float32 copy from p on for the others. Returns the end of the copies. */
static float *place_all(const attn_ckpt *ck, const wanted *w, int n, float *p)
{
    for (int i = 0; i < n; i++) {
        const attn_st_file *f;
        const attn_st_entry *e = attn_ckpt_find(ck, w[i].name, &f);
        int rows = (int)w[i].rows, cols = (int)w[i].cols, planes = w[i].planes ? (int)w[i].planes : 1;
        size_t plane = (size_t)rows * cols;
        if (!copied(f, e, &w[i])) {
            for (int k = 0; k < planes; k++)
                w[i].mat[(size_t)k * w[i].step] = attn_wmat_view(f->data + e->begin + k * plane *
                                                                 (size_t)attn_st_dtype_size(e->dtype),
                                                                 e->dtype, rows, cols);
            continue;
        }
        attn_st_copy_f32(f, e, p);
        if (w[i].vec) *w[i].vec = p;
        else
            for (int k = 0; k < planes; k++)
                w[i].mat[(size_t)k * w[i].step] = attn_wmat_view(p + k * plane, ATTN_ST_F32, rows, cols);
        p += count_of(&w[i]);
    }
    return p;
}

/* Gemma (gemma_weights.h): every norm's stored w becomes its gain 1 + w, and
 * the embeddings' scale is √d in the embedding's dtype. */
static void gemma_gains(attn_model *m)
{
    const attn_model_config *c = &m->cfg;
    for (int l = 0; l < c->layers; l++) {
        attn_model_layer *L = &m->layer[l];
        float *d_sized[] = {L->attn_norm, L->post_attn_norm, L->mlp_norm, L->post_ff_norm};
        for (int i = 0; i < 4; i++) attn_gemma_gain(d_sized[i], c->d);
        attn_gemma_gain(L->q_norm, c->head_dim);
        attn_gemma_gain(L->k_norm, c->head_dim);
    }
    attn_gemma_gain(m->norm, c->d);
    m->embed_scale = attn_gemma_embed_scale(c->d, m->embed.dtype);
}

/* Views every matrix where it is mapped and widens the vectors. */
static attn_status load_weights(attn_model *m, attn_progress *watch, attn_error *err)
{
    const attn_model_config *c = &m->cfg;
    attn_status st;
    if ((st = attn_ckpt_open(m->dir, &m->ckpt, err)) || (st = check_all(m, err))) return st;
    size_t per = 3 * (size_t)c->arch.experts; /* a MoE layer's expert views */
    wanted *w = malloc(plan_room(c) * sizeof *w);
    if (!w || !(m->experts = calloc(per * c->layers + 1, sizeof *m->experts))) {
        free(w);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    if ((st = check_numbers(m, w, m->experts, watch, err))) goto out;
    attn_model_layer L;
    size_t total = 0;
    for (int l = -1; l < c->layers; l++)
        total += copied_floats(&m->ckpt, w, l < 0 ? global_plan(m, w) : layer_plan(c, l, &L, m->experts, w));
    if (!(m->arena = malloc((total ? total : 1) * sizeof *m->arena)) ||
        !(m->layer = calloc((size_t)c->layers, sizeof *m->layer))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory for %zu KiB of weights", (total * 4) >> 10);
        goto out;
    }
    float *p = place_all(&m->ckpt, w, global_plan(m, w), m->arena);
    for (int l = 0; l < c->layers; l++)
        p = place_all(&m->ckpt, w, layer_plan(c, l, &m->layer[l], m->experts + per * l, w), p);
    if (c->tied) m->lm_head = m->embed;
    m->embed_scale = 1.0f;
    if (c->arch.gemma) gemma_gains(m);
out:
    free(w);
    return st;
}

void attn_model_embed_row(const attn_model *m, int id, float *out)
{
    attn_wmat_rows(&m->embed, id, 1, out);
    if (m->embed_scale != 1.0f) /* Gemma: the row times √d (gemma.h) */
        for (int i = 0; i < m->cfg.d; i++) out[i] *= m->embed_scale;
}

int attn_model_logits(const attn_model *m, const float *x, float *logits, size_t rows)
{
    int rc = attn_wmat_product(&m->lm_head, x, (int)rows, logits);
    if (!rc && m->cfg.gemma.final_softcap > 0) /* Gemma 2: logits = C·tanh(logits / C) */
        attn_op_softcap(logits, logits, rows * (size_t)m->cfg.vocab, (float)m->cfg.gemma.final_softcap);
    return rc;
}

int attn_model_step_matrices(const attn_model *m, attn_wmat *out, int max)
{
    int n = 0;
    for (int l = 0; l < m->cfg.layers; l++) {
        const attn_model_layer *y = &m->layer[l];
        const attn_wmat *w[] = {&y->w_q, &y->w_qa, &y->w_qb, &y->w_k, &y->w_v, &y->w_kva, &y->w_kvb,
                                &y->w_o, &y->w_gate, &y->w_up, &y->w_down};
        for (int i = 0; i < 11; i++)
            if (w[i]->data && n++ < max) out[n - 1] = *w[i]; /* those the architecture has */
    }
    if (n < max) out[n] = m->lm_head;
    return n + 1;
}

/* ---- the folder ---- */

/* The model card's `summary:` line (README.md's front matter), if any. */
static char *card_summary(const char *dir)
{
    char path[PATH_MAX], *text = NULL, *out = NULL;
    size_t size;
    attn_error ignore;
    if (attn_path_format(path, sizeof path, NULL, "%s/README.md", dir) ||
        attn_file_read(path, 1u << 20, &text, &size, &ignore))
        return NULL;
    const char *s = strstr(text, "\nsummary:");
    if (s && (size_t)(s - text) < 4096) {
        s += 9;
        while (*s == ' ') s++;
        out = strndup(s, strcspn(s, "\r\n"));
    }
    free(text);
    return out;
}

static char *first_line(const char *dir, const char *file)
{
    char path[PATH_MAX], *text = NULL, *out = NULL;
    size_t size;
    attn_error ignore;
    if (attn_path_format(path, sizeof path, NULL, "%s/%s", dir, file) ||
        attn_file_read(path, 1u << 16, &text, &size, &ignore))
        return NULL;
    out = strndup(text, strcspn(text, "\r\n"));
    free(text);
    return out;
}

double attn_model_kv_bytes_per_token(const attn_model_config *c)
{
    attn_kv_bytes b = attn_kv_bytes_of(c, sizeof(float));
    return b.full + b.local;
}

/* eval.json's text key into out (size bytes): absent, ""; else a string that fits. */
static attn_status eval_text(const cJSON *root, const char *key, char *out, size_t size, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) return ATTN_OK;
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= size)
        return attn_fail(err, ATTN_ERR_FORMAT, "eval.json: '%s' must be a string of at most %zu bytes, not %s", key,
                         size - 1, cJSON_IsString(v) ? "a longer one" : attn_json_kind(v));
    memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
    return ATTN_OK;
}

/* eval.json's number key: absent, NAN. */
static attn_status eval_num(const cJSON *root, const char *key, double *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    *out = NAN;
    if (!v) return ATTN_OK;
    if (!cJSON_IsNumber(v))
        return attn_fail(err, ATTN_ERR_FORMAT, "eval.json: '%s' must be a number, not %s", key, attn_json_kind(v));
    *out = v->valuedouble;
    return ATTN_OK;
}

/* eval.json (written by the training script): variant, language, losses.
 * Without the file they are unknown; with it, each must be of its kind. */
static attn_status read_eval(attn_model *m, attn_error *err)
{
    char path[PATH_MAX], *text = NULL;
    size_t size;
    attn_status st;
    m->heldout_loss = m->train_loss = NAN;
    if ((st = attn_path_format(path, sizeof path, err, "%s/eval.json", m->dir))) return st;
    if ((st = attn_file_read(path, 1u << 16, &text, &size, err))) return errno == ENOENT ? ATTN_OK : st;
    cJSON *root = NULL;
    if ((st = attn_json_parse(text, size, &root, err))) attn_error_prefix(err, "eval.json");
    else if (!cJSON_IsObject(root)) st = attn_fail(err, ATTN_ERR_FORMAT, "eval.json: not a JSON object");
    else if (!(st = eval_text(root, "variant", m->variant, sizeof m->variant, err)) &&
             !(st = eval_text(root, "lang", m->lang, sizeof m->lang, err)) &&
             !(st = eval_num(root, "heldout_loss", &m->heldout_loss, err)))
        st = eval_num(root, "train_loss", &m->train_loss, err);
    cJSON_Delete(root);
    free(text);
    return st;
}

static int variant_rank(const char *v)
{
    return !strcmp(v, "mha") ? 0 : !strcmp(v, "gqa") ? 1 : !strcmp(v, "mqa") ? 2 : !strcmp(v, "mla") ? 3 : -1;
}

attn_status attn_model_variants(const attn_model *m, attn_model_variant *out, int *n, attn_error *err)
{
    char **all, root[PATH_MAX];
    int count;
    bool have[ATTN_MAX_VARIANTS] = {false, false, false, false};
    *n = 0;
    attn_status st = model_root(root, err);
    if (st || (st = list_in(root, &all, &count, err))) return st; /* names and paths from the one folder */
    for (int i = 0; i < count; i++) {
        attn_model o = {0};
        char dir[PATH_MAX], path[PATH_MAX], *text = NULL;
        size_t size;
        attn_error ignore;
        /* another model that cannot be read is no variant */
        bool read = !attn_path_format(dir, sizeof dir, NULL, "%s/%s", root, all[i]) &&
                    !attn_path_format(path, sizeof path, NULL, "%s/config.json", dir) && (o.dir = strdup(dir)) &&
                    !read_eval(&o, &ignore);
        int r = read && strlen(all[i]) < sizeof out->name ? variant_rank(o.variant) : -1;
        if (r >= 0 && !have[r] && m->lang[0] && !strcmp(o.lang, m->lang) &&
            !attn_file_read(path, CONFIG_LIMIT, &text, &size, &ignore) &&
            !attn_model_config_parse(text, size, &o.cfg, &ignore)) {
            attn_model_variant *v = &out[r];
            snprintf(v->name, sizeof v->name, "%s", all[i]);
            snprintf(v->variant, sizeof v->variant, "%s", o.variant);
            v->heads = o.cfg.heads;
            v->kv_heads = o.cfg.kv_heads;
            v->layers = o.cfg.layers;
            v->heldout_loss = o.heldout_loss;
            v->kv_bytes_per_token = attn_model_kv_bytes_per_token(&o.cfg);
            have[r] = true;
        }
        free(text);
        free(o.dir);
        free(all[i]);
    }
    free(all);
    for (int r = 0; r < ATTN_MAX_VARIANTS; r++) /* close the gaps: MHA, GQA, MQA, MLA in order */
        if (have[r]) out[(*n)++] = out[r];
    return ATTN_OK;
}

attn_status attn_model_peek(const char *name, attn_model_config *c, attn_error *err)
{
    char dir[PATH_MAX], path[PATH_MAX], *text = NULL;
    size_t size;
    attn_status st = attn_model_find(name, dir, sizeof dir, err);
    if (!st) st = attn_path_format(path, sizeof path, err, "%s/config.json", dir);
    if (st) return st;
    if (!(st = attn_file_read(path, CONFIG_LIMIT, &text, &size, err))) st = attn_model_config_parse(text, size, c, err);
    free(text);
    return st;
}

attn_status attn_model_as_trained(attn_config *cfg, attn_error *err)
{
    attn_model_config mc;
    if (!cfg->model) return ATTN_OK;
    attn_status st = attn_model_peek(cfg->model, &mc, err);
    if (!st) cfg->causal = mc.causal ? ATTN_CAUSAL_ON : ATTN_CAUSAL_OFF;
    return st;
}

attn_status attn_model_check(const char *name, attn_model_config *c, attn_error *err)
{
    char dir[PATH_MAX];
    attn_model m; /* only cfg and ckpt: what check_all reads */
    memset(&m, 0, sizeof m);
    attn_status st = attn_model_peek(name, c, err);
    if (!st) st = attn_model_find(name, dir, sizeof dir, err);
    if (st) return st;
    m.cfg = *c;
    if ((st = attn_ckpt_open(dir, &m.ckpt, err)) || (st = check_all(&m, err))) attn_error_prefix(err, dir);
    attn_ckpt_free(&m.ckpt);
    return st;
}

static attn_status load_folder(attn_model *m, attn_progress *watch, attn_error *err)
{
    char path[PATH_MAX];
    size_t size;
    attn_status st;
    if ((st = attn_path_format(path, sizeof path, err, "%s/config.json", m->dir)) ||
        (st = attn_file_read(path, CONFIG_LIMIT, &m->config_json, &size, err)) ||
        (st = attn_model_config_parse(m->config_json, size, &m->cfg, err)) || (st = load_weights(m, watch, err)) ||
        (st = attn_path_format(path, sizeof path, err, "%s/tokenizer.json", m->dir)))
        return st;
    if (attn_progress_phase(watch, ATTN_PHASE_TOKENIZER)) return attn_fail(err, ATTN_ERR_CANCELLED, "cancelled");
    if ((st = attn_tokenizer_load(path, &m->tok, err)))
        return st;
    if (attn_tokenizer_vocab_size(m->tok) > m->cfg.vocab)
        return attn_fail(err, ATTN_ERR_FORMAT, "tokenizer.json has %d tokens but config.json's vocab_size is %d",
                         attn_tokenizer_vocab_size(m->tok), m->cfg.vocab);
    /* the card and the example are optional, and their names shorter than the
     * weights' index's, whose path fitted */
    m->summary = card_summary(m->dir);
    m->example = first_line(m->dir, "example.txt");
    return read_eval(m, err);
}

attn_status attn_model_load(const char *name, attn_model *m, attn_error *err)
{
    return attn_model_load_watched(name, m, NULL, err);
}

attn_status attn_model_load_watched(const char *name, attn_model *m, attn_progress *watch, attn_error *err)
{
    char dir[PATH_MAX];
    attn_status st;
    memset(m, 0, sizeof *m);
    if ((st = attn_model_find(name, dir, sizeof dir, err))) return st;
    const char *slash = strrchr(dir, '/');
    while (slash && slash[1] == '\0' && slash > dir) { /* "models/tang/" is named tang */
        const char *p = slash - 1;
        while (p > dir && *p != '/') p--;
        slash = *p == '/' ? p : NULL;
    }
    m->dir = strdup(dir);
    m->name = strndup(slash ? slash + 1 : dir, strcspn(slash ? slash + 1 : dir, "/"));
    if (!m->dir || !m->name) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    else if ((st = load_folder(m, watch, err)) && st != ATTN_ERR_CANCELLED) attn_error_prefix(err, m->dir);
    if (st) attn_model_free(m);
    return st;
}

void attn_model_free(attn_model *m)
{
    if (!m) return;
    free(m->dir);
    free(m->name);
    free(m->config_json);
    free(m->summary);
    free(m->example);
    free(m->layer);
    free(m->experts);
    free(m->arena);
    attn_ckpt_free(&m->ckpt);
    attn_tokenizer_free(m->tok);
    memset(m, 0, sizeof *m);
}
