/* model.c — reading a Hugging Face LlamaForCausalLM folder into float32 weights. */
#include "model.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "paths.h"
#include "safetensors.h"

#ifndef ATTNLAB_MODELS_DIR
#define ATTNLAB_MODELS_DIR "assets/models"
#endif

#define CONFIG_LIMIT (1u << 20)

const char *attn_model_root(void)
{
    static char root[4096];
    return attn_data_dir("ATTNLAB_MODELS", "models", ATTNLAB_MODELS_DIR, root, sizeof root);
}

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

attn_status attn_model_list(char ***names, int *n, attn_error *err)
{
    const char *root = attn_model_root();
    DIR *d = opendir(root);
    *names = NULL;
    *n = 0;
    if (!d) return ATTN_OK; /* no shipped models here */
    int cap = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char cfg[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(cfg, sizeof cfg, "%s/%s/config.json", root, e->d_name);
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

attn_status attn_model_find(const char *name, char *out, size_t size, attn_error *err)
{
    if (!name || !*name) return attn_fail(err, ATTN_ERR_CONFIG, "model: no name or folder given");
    if (is_dir(name)) {
        snprintf(out, size, "%s", name);
        return ATTN_OK;
    }
    if (!strchr(name, '/')) {
        snprintf(out, size, "%s/%s", attn_model_root(), name);
        if (is_dir(out)) return ATTN_OK;
    }
    char **names;
    int n;
    char list[512] = "";
    if (attn_model_list(&names, &n, err)) return ATTN_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
    free(names);
    return attn_fail(err, ATTN_ERR_CONFIG, "model '%s': no such folder or shipped model (shipped: %s)", name,
                     n ? list : "none found");
}

/* ---- config.json ---- */

static attn_status json_int(const cJSON *root, const char *key, int min, int max, int *out, attn_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' is missing", key);
    if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long)v->valuedouble || v->valuedouble < min ||
        v->valuedouble > max)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: '%s' must be a whole number from %d to %d", key, min, max);
    *out = (int)v->valuedouble;
    return ATTN_OK;
}

static double json_num(const cJSON *root, const char *key, double def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

/* An option this engine does not compute must be absent or off. */
static attn_status refuse_extras(const cJSON *root, attn_error *err)
{
    static const char *const OFF[] = {"attention_bias", "mlp_bias"};
    const cJSON *v;
    for (size_t i = 0; i < sizeof OFF / sizeof OFF[0]; i++)
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, OFF[i])))
            return attn_fail(err, ATTN_ERR_FORMAT, "config.json: %s = true is not supported", OFF[i]);
    v = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    if (v && !cJSON_IsNull(v)) return attn_fail(err, ATTN_ERR_FORMAT, "config.json: rope_scaling is not supported");
    v = cJSON_GetObjectItemCaseSensitive(root, "hidden_act");
    if (v && (!cJSON_IsString(v) || strcmp(v->valuestring, "silu") != 0))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: hidden_act '%.30s' is not supported (only silu)",
                         cJSON_IsString(v) ? v->valuestring : "?");
    return ATTN_OK;
}

static attn_status check_architecture(const cJSON *root, attn_error *err)
{
    const cJSON *arch = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    const cJSON *first = cJSON_IsArray(arch) ? cJSON_GetArrayItem(arch, 0) : NULL;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (cJSON_IsString(first) && strcmp(first->valuestring, "LlamaForCausalLM") != 0)
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: architecture '%.60s' is not supported (supported: "
                         "LlamaForCausalLM)", first->valuestring);
    if (!cJSON_IsString(first) && !(cJSON_IsString(type) && strcmp(type->valuestring, "llama") == 0))
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: names no architecture (expected \"architectures\": "
                         "[\"LlamaForCausalLM\"])");
    return ATTN_OK;
}

static attn_status parse_config(const char *text, size_t len, attn_model_config *c, attn_error *err)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    attn_status st;
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return attn_fail(err, ATTN_ERR_FORMAT, "config.json: not a JSON object");
    }
    if ((st = check_architecture(root, err)) || (st = refuse_extras(root, err)) ||
        (st = json_int(root, "vocab_size", 1, 1 << 22, &c->vocab, err)) ||
        (st = json_int(root, "hidden_size", 2, 1 << 16, &c->d, err)) ||
        (st = json_int(root, "num_hidden_layers", 1, ATTN_MODEL_MAX_LAYERS, &c->layers, err)) ||
        (st = json_int(root, "num_attention_heads", 1, 1024, &c->heads, err)) ||
        (st = json_int(root, "intermediate_size", 1, 1 << 20, &c->ffn, err)))
        goto out;
    c->kv_heads = c->heads;
    if (cJSON_GetObjectItemCaseSensitive(root, "num_key_value_heads") &&
        (st = json_int(root, "num_key_value_heads", 1, c->heads, &c->kv_heads, err)))
        goto out;
    c->max_pos = (int)json_num(root, "max_position_embeddings", 2048);
    c->eps = json_num(root, "rms_norm_eps", 1e-6);
    c->theta = json_num(root, "rope_theta", 10000.0);
    c->tied = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings"));
    c->bos = (int)json_num(root, "bos_token_id", -1);
    c->eos = (int)json_num(root, "eos_token_id", -1);
    if (c->d % c->heads || c->heads % c->kv_heads || (c->d / c->heads) % 2)
        st = attn_fail(err, ATTN_ERR_FORMAT, "config.json: hidden_size %d, %d heads and %d K/V heads do not fit "
                       "(heads must divide hidden_size into an even head dim, K/V heads must divide heads)",
                       c->d, c->heads, c->kv_heads);
    else if (!(c->eps > 0 && c->eps < 1) || !(c->theta > 1))
        st = attn_fail(err, ATTN_ERR_FORMAT, "config.json: rms_norm_eps must be in (0, 1) and rope_theta above 1");
    else if (c->max_pos < 1)
        st = attn_fail(err, ATTN_ERR_FORMAT, "config.json: max_position_embeddings must be positive");
out:
    cJSON_Delete(root);
    return st;
}

/* ---- model.safetensors ---- */

/* One weight the folder must have: its HF name, its HF shape (rows, cols;
 * cols 0 for a vector) and where its float32 copy goes. A matrix is stored
 * transposed, (cols, rows) = (in, out), so the engine computes x · W. */
typedef struct {
    char name[ATTN_MAX_NAME];
    int64_t rows, cols;
    float **dst;
    bool transpose;
} wanted;

static int plan_weights(attn_model *m, wanted *w)
{
    const attn_model_config *c = &m->cfg;
    int64_t d = c->d, kv = (int64_t)c->kv_heads * (c->d / c->heads), f = c->ffn, V = c->vocab;
    int n = 0;
#define W(dst_, tr_, r_, c_, ...) (snprintf(w[n].name, sizeof w[n].name, __VA_ARGS__), \
                                   w[n].rows = (r_), w[n].cols = (c_), w[n].dst = (dst_), w[n].transpose = (tr_), n++)
    W(&m->embed, false, V, d, "model.embed_tokens.weight");
    for (int l = 0; l < c->layers; l++) {
        attn_model_layer *L = &m->layer[l];
        W(&L->attn_norm, false, d, 0, "model.layers.%d.input_layernorm.weight", l);
        W(&L->w_q, true, d, d, "model.layers.%d.self_attn.q_proj.weight", l);
        W(&L->w_k, true, kv, d, "model.layers.%d.self_attn.k_proj.weight", l);
        W(&L->w_v, true, kv, d, "model.layers.%d.self_attn.v_proj.weight", l);
        W(&L->w_o, true, d, d, "model.layers.%d.self_attn.o_proj.weight", l);
        W(&L->mlp_norm, false, d, 0, "model.layers.%d.post_attention_layernorm.weight", l);
        W(&L->w_gate, true, f, d, "model.layers.%d.mlp.gate_proj.weight", l);
        W(&L->w_up, true, f, d, "model.layers.%d.mlp.up_proj.weight", l);
        W(&L->w_down, true, d, f, "model.layers.%d.mlp.down_proj.weight", l);
    }
    W(&m->norm, false, d, 0, "model.norm.weight");
    if (!c->tied) W(&m->lm_head, false, V, d, "lm_head.weight");
#undef W
    return n;
}

static attn_status check_entry(const attn_st_entry *e, const wanted *w, attn_error *err)
{
    if (!e) return attn_fail(err, ATTN_ERR_FORMAT, "model.safetensors: tensor '%s' is missing", w->name);
    bool ok = w->cols ? e->ndim == 2 && e->shape[0] == w->rows && e->shape[1] == w->cols
                      : e->ndim == 1 && e->shape[0] == w->rows;
    if (ok) return ATTN_OK;
    char got[64] = "(", want[48];
    for (int i = 0; i < e->ndim; i++) {
        size_t len = strlen(got);
        snprintf(got + len, sizeof got - len, "%s%lld", i ? ", " : "", (long long)e->shape[i]);
    }
    strncat(got, ")", sizeof got - strlen(got) - 1);
    if (w->cols) snprintf(want, sizeof want, "(%lld, %lld)", (long long)w->rows, (long long)w->cols);
    else snprintf(want, sizeof want, "(%lld)", (long long)w->rows);
    return attn_fail(err, ATTN_ERR_FORMAT, "model.safetensors: '%s' has shape %s but config.json needs %s", w->name,
                     got, want);
}

/* Every tensor of the file must be one the plan names (an extra one means a
 * different architecture, or a config that disagrees with the weights). */
static attn_status check_extras(const attn_st_file *f, const wanted *w, int n, bool tied, attn_error *err)
{
    for (int i = 0; i < f->n; i++) {
        const char *name = f->entries[i].name;
        bool known = tied && strcmp(name, "lm_head.weight") == 0; /* a tied head may be saved too */
        for (int j = 0; !known && j < n; j++) known = strcmp(name, w[j].name) == 0;
        if (!known)
            return attn_fail(err, ATTN_ERR_FORMAT, "model.safetensors: unexpected tensor '%.60s' (not part of a "
                             "LlamaForCausalLM with this config.json)", name);
    }
    return ATTN_OK;
}

static attn_status load_weights(attn_model *m, const char *path, attn_error *err)
{
    attn_st_file f = {0};
    attn_status st;
    int n = 1 + 9 * m->cfg.layers + 2;
    wanted *w = calloc((size_t)n, sizeof *w);
    float *tmp = NULL;
    if (!w) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    n = plan_weights(m, w);
    if ((st = attn_st_read(path, &f, err))) goto out;
    size_t total = 0, largest = 0;
    for (int i = 0; i < n; i++) {
        if ((st = check_entry(attn_st_find(&f, w[i].name), &w[i], err))) goto out;
        size_t count = (size_t)w[i].rows * (size_t)(w[i].cols ? w[i].cols : 1);
        total += count;
        if (count > largest) largest = count;
    }
    if ((st = check_extras(&f, w, n, m->cfg.tied, err))) goto out;
    m->arena = malloc(total * sizeof *m->arena);
    tmp = malloc(largest * sizeof *tmp);
    if (!m->arena || !tmp) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the model's weights"); goto out; }
    float *p = m->arena;
    for (int i = 0; i < n; i++) {
        size_t rows = (size_t)w[i].rows, cols = (size_t)(w[i].cols ? w[i].cols : 1);
        attn_st_copy_f32(&f, attn_st_find(&f, w[i].name), w[i].transpose ? tmp : p);
        if (w[i].transpose) /* (out, in) → (in, out) */
            for (size_t r = 0; r < rows; r++)
                for (size_t c = 0; c < cols; c++) p[c * rows + r] = tmp[r * cols + c];
        *w[i].dst = p;
        p += rows * cols;
    }
    if (m->cfg.tied) m->lm_head = m->embed;
out:
    attn_st_free(&f);
    free(w);
    free(tmp);
    return st;
}

/* ---- the folder ---- */

/* The model card's `summary:` line (README.md's front matter), if any. */
static char *card_summary(const char *dir)
{
    char path[4096], *text = NULL, *out = NULL;
    size_t size;
    attn_error ignore;
    snprintf(path, sizeof path, "%s/README.md", dir);
    if (attn_file_read(path, 1u << 20, &text, &size, &ignore)) return NULL;
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
    char path[4096], *text = NULL, *out = NULL;
    size_t size;
    attn_error ignore;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (attn_file_read(path, 1u << 16, &text, &size, &ignore)) return NULL;
    out = strndup(text, strcspn(text, "\r\n"));
    free(text);
    return out;
}

double attn_model_kv_bytes_per_token(const attn_model_config *c)
{
    return 2.0 * c->layers * c->kv_heads * (c->d / c->heads) * sizeof(float);
}

/* eval.json (written by the training script): variant, language, losses. */
static void read_eval(attn_model *m)
{
    char path[4096], *text = NULL;
    size_t size;
    attn_error ignore;
    m->heldout_loss = m->train_loss = NAN;
    snprintf(path, sizeof path, "%s/eval.json", m->dir);
    if (attn_file_read(path, 1u << 16, &text, &size, &ignore)) return;
    cJSON *root = cJSON_ParseWithLength(text, size);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "variant");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(root, "lang");
    if (cJSON_IsString(v)) snprintf(m->variant, sizeof m->variant, "%s", v->valuestring);
    if (cJSON_IsString(l)) snprintf(m->lang, sizeof m->lang, "%s", l->valuestring);
    m->heldout_loss = json_num(root, "heldout_loss", NAN);
    m->train_loss = json_num(root, "train_loss", NAN);
    cJSON_Delete(root);
    free(text);
}

static int variant_rank(const char *v)
{
    return !strcmp(v, "mha") ? 0 : !strcmp(v, "gqa") ? 1 : !strcmp(v, "mqa") ? 2 : -1;
}

attn_status attn_model_variants(const attn_model *m, attn_model_variant *out, int *n, attn_error *err)
{
    char **all;
    int count;
    bool have[3] = {false, false, false};
    attn_status st = attn_model_list(&all, &count, err);
    *n = 0;
    if (st) return st;
    for (int i = 0; i < count; i++) {
        attn_model o = {0};
        char dir[4096], path[4200], *text = NULL;
        size_t size;
        attn_error ignore;
        snprintf(dir, sizeof dir, "%s/%s", attn_model_root(), all[i]);
        snprintf(path, sizeof path, "%s/config.json", dir);
        if ((o.dir = strdup(dir))) read_eval(&o);
        int r = variant_rank(o.variant);
        if (r >= 0 && !have[r] && m->lang[0] && !strcmp(o.lang, m->lang) &&
            !attn_file_read(path, CONFIG_LIMIT, &text, &size, &ignore) && !parse_config(text, size, &o.cfg, &ignore)) {
            attn_model_variant *v = &out[r];
            snprintf(v->name, sizeof v->name, "%s", all[i]);
            snprintf(v->variant, sizeof v->variant, "%s", o.variant);
            v->heads = o.cfg.heads;
            v->kv_heads = o.cfg.kv_heads;
            v->heldout_loss = o.heldout_loss;
            v->kv_bytes_per_token = attn_model_kv_bytes_per_token(&o.cfg);
            have[r] = true;
        }
        free(text);
        free(o.dir);
        free(all[i]);
    }
    free(all);
    for (int r = 0; r < 3; r++) /* close the gaps: MHA, GQA, MQA in order */
        if (have[r]) out[(*n)++] = out[r];
    return ATTN_OK;
}

static attn_status load_folder(attn_model *m, attn_error *err)
{
    char path[4096];
    size_t size;
    attn_status st;
    snprintf(path, sizeof path, "%s/config.json", m->dir);
    if ((st = attn_file_read(path, CONFIG_LIMIT, &m->config_json, &size, err))) return st;
    if ((st = parse_config(m->config_json, size, &m->cfg, err))) return st;
    if (!(m->layer = calloc((size_t)m->cfg.layers, sizeof *m->layer)))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    snprintf(path, sizeof path, "%s/model.safetensors", m->dir);
    if ((st = load_weights(m, path, err))) return st;
    snprintf(path, sizeof path, "%s/tokenizer.json", m->dir);
    if ((st = attn_tokenizer_load(path, &m->tok, err))) return st;
    if (attn_tokenizer_vocab_size(m->tok) > m->cfg.vocab)
        return attn_fail(err, ATTN_ERR_FORMAT, "tokenizer.json has %d tokens but config.json's vocab_size is %d",
                         attn_tokenizer_vocab_size(m->tok), m->cfg.vocab);
    m->summary = card_summary(m->dir);
    m->example = first_line(m->dir, "example.txt");
    read_eval(m);
    return ATTN_OK;
}

attn_status attn_model_load(const char *name, attn_model *m, attn_error *err)
{
    char dir[4096];
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
    else if ((st = load_folder(m, err))) attn_error_prefix(err, m->dir);
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
    free(m->arena);
    attn_tokenizer_free(m->tok);
    memset(m, 0, sizeof *m);
}
