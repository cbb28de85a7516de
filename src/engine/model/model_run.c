/* model_run.c — a trained Llama-style model's traced forward pass.
 *
 * Every layer l (shapes for b rows of s query positions, width d, MLP width f):
 *   resid_in  = embeddings (l = 0) or layer l−1's resid_out        (b, s, d)
 *   x         = RMSNorm(resid_in) ⊙ g_attn                         (b, s, d)
 *   out       = attention(x) with the layer's W_Q, W_K, W_V, W_O   (b, s, d)
 *   resid_mid = resid_in + out
 *   mlp_norm  = RMSNorm(resid_mid) ⊙ g_mlp
 *   act       = SiLU(mlp_norm · W_gate) ⊙ (mlp_norm · W_up)          (b, s, f)
 *   resid_out = resid_mid + act · W_down
 * OLMo 2 (arch.post_norms) normalises each sublayer's output instead of its input:
 *   x = resid_in, resid_mid = resid_in + RMSNorm(out) ⊙ g_post_attn,
 *   mlp_norm = resid_mid (no norm), resid_out = resid_mid + RMSNorm(mlp_out) ⊙ g_post_ff;
 * SmolLM3's NoPE layers skip RoPE (attention.c); a DeepSeek mixture-of-experts
 * layer replaces gate, up and act with router_scores and expert_weights (b, s, E)
 * and mlp_out with its experts' weighted sum (moe.h; gpt-oss's: gptoss.h, whose
 * attention adds o's bias and a learned sink per head, its local layers a window).
 * then final_norm = RMSNorm(resid_out) ⊙ g, logits = final_norm · W_lmᵀ
 * (b, s, V) and probs = softmax(logits), those two computed for the rows a
 * reader asks for (head.h). */
#include "model_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/attention/ops.h"
#include "engine/base/utf8.h"
#include "engine/model/deepseek.h"
#include "engine/model/gemma.h"
#include "engine/model/gptoss.h"
#include "engine/model/head.h"
#include "engine/model/moe.h"

/* ---- tokens ---- */

/* The rows of text: split at '|', with "\|" a literal bar and "\\" a
 * backslash (so a row can end in one: "a\\|b" is "a\" and "b"); any other
 * backslash is itself. Every row after the first starts at a bar, so there
 * are at most 1 + (the bars) rows: "|||" is four empty ones. Caller frees. */
static char **split_rows(const char *text, int *n)
{
    size_t len = strlen(text), bars = 0;
    for (const char *p = text; *p; p++) bars += *p == '|';
    char *buf = malloc(len + 1);
    char **rows = calloc(bars + 1, sizeof *rows);
    if (!buf || !rows) { free(buf); free(rows); return NULL; }
    *n = 0;
    rows[(*n)++] = buf;
    for (const char *p = text; *p; p++) {
        if (p[0] == '\\' && (p[1] == '|' || p[1] == '\\')) *buf++ = *++p;
        else if (*p == '|') { *buf++ = '\0'; rows[(*n)++] = buf; }
        else *buf++ = *p;
    }
    *buf = '\0';
    return rows;
}

static void free_rows(int **ids, int n)
{
    for (int i = 0; i < n; i++) free(ids[i]);
    free(ids);
}

/* One row of given tokens, each looked up in the vocabulary. */
static attn_status lookup_row(const attn_model *m, const attn_tokens *tk, int r, int **ids, int *n, attn_error *err)
{
    int unk = attn_tokenizer_unk(m->tok), bos = attn_tokenizer_bos(m->tok), k = 0;
    if (!(*ids = malloc((size_t)(tk->lengths[r] + 1) * sizeof **ids)))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int p = 0; p < tk->len; p++) {
        if (attn_tokens_is_pad(tk, r, p)) continue;
        const char *s = attn_tokens_at(tk, r, p);
        int id = attn_tokenizer_find(m->tok, s);
        if (id < 0 && unk < 0)
            return attn_fail(err, ATTN_ERR_CONFIG, "tokens: '%s' is not in %s's vocabulary, which has no unknown token",
                             s, m->name);
        if (k == 0 && bos >= 0 && id != bos) (*ids)[k++] = bos;
        (*ids)[k++] = id < 0 ? unk : id;
    }
    *n = k;
    return ATTN_OK;
}

/* Every row's ids, unpadded: rows[r][0 .. len[r]). */
static attn_status encode_rows(const attn_model *m, const attn_config *cfg, int ***rows, int **len, int *b,
                               attn_error *err)
{
    attn_status st = ATTN_OK;
    attn_tokens given = {0};
    char **texts = NULL;
    const char *text = cfg->text ? cfg->text : cfg->tokens ? NULL : m->example ? m->example : "";
    /* the model's example.txt is a text like --text's and is checked as one:
     * a stray byte would reach the tokenizer as U+FFFD, then <unk> */
    const char *whose = cfg->text ? "text" : "example.txt";
    size_t bad = text ? attn_utf8_invalid_at(text, strlen(text)) : 0;
    if (text && text[bad])
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: not valid UTF-8 at byte offset %zu (0x%02X)", whose, bad,
                         (unsigned char)text[bad]);
    if (text) {
        if (!(texts = split_rows(text, b))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    } else {
        if ((st = attn_tokens_parse(cfg->tokens, cfg->pad_side, "tokens", &given, err))) return st;
        *b = given.rows;
    }
    *rows = calloc((size_t)*b, sizeof **rows);
    *len = calloc((size_t)*b, sizeof **len);
    if (!*rows || !*len) st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int r = 0; !st && r < *b; r++) {
        if (texts && !texts[r][strspn(texts[r], " \t\r\n")] && (*b > 1 || cfg->text))
            st = attn_fail(err, ATTN_ERR_CONFIG, "%s: row %d is empty", whose, r + 1);
        else if (texts) st = attn_tokenizer_encode(m->tok, texts[r], true, &(*rows)[r], &(*len)[r], err);
        else st = lookup_row(m, &given, r, &(*rows)[r], &(*len)[r], err);
        if (!st && (*len)[r] == 0)
            st = attn_fail(err, ATTN_ERR_CONFIG, "%s: row %d gives no tokens", texts ? whose : "tokens", r + 1);
    }
    if (texts) free(texts[0]);
    free(texts);
    attn_tokens_free(&given);
    return st;
}

/* The padded table and ids of b rows of ids (rows[r][0 .. len[r])). */
static attn_status pad_rows(const attn_model *m, const attn_config *cfg, int **rows, int *len, int b,
                            attn_tokens *tok, int **ids, attn_error *err)
{
    enum { LABEL = 96 }; /* bytes of one token's label */
    int L = 0;
    const char **table = NULL;
    char *labels = NULL;
    attn_status st = ATTN_OK;
    for (int r = 0; !st && r < b; r++) L = len[r] > L ? len[r] : L;
    if (!st && L > m->cfg.max_pos)
        st = attn_fail(err, ATTN_ERR_CONFIG, "text: %d tokens, more than %s's %d positions", L, m->name,
                       m->cfg.max_pos);
    if (!st && (!(table = calloc((size_t)b * L, sizeof *table)) || !(labels = malloc((size_t)b * L * LABEL)) ||
                !(*ids = malloc((size_t)b * L * sizeof **ids))))
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int r = 0; !st && r < b; r++)
        for (int p = 0; p < L; p++) {
            int lead = cfg->pad_side == ATTN_PAD_LEFT ? L - len[r] : 0, q = p - lead;
            int id = q >= 0 && q < len[r] ? rows[r][q] : -1;
            char *label = labels + ((size_t)r * L + p) * LABEL;
            const char *s = id >= 0 ? attn_tokenizer_label(m->tok, id, label, LABEL) : NULL;
            (*ids)[(size_t)r * L + p] = id;
            table[(size_t)r * L + p] = id < 0 ? ATTN_PAD_TOKEN : s && *s ? s : "<?>";
        }
    if (!st) st = attn_tokens_from_table(b, L, table, len, cfg->pad_side, tok, err);
    free(table);
    free(labels);
    return st;
}

attn_status attn_model_tokenize(const attn_model *m, const attn_config *cfg, attn_tokens *tok, int **ids,
                                attn_error *err)
{
    int **rows = NULL, *len = NULL, b = 0;
    memset(tok, 0, sizeof *tok);
    *ids = NULL;
    attn_status st = encode_rows(m, cfg, &rows, &len, &b, err);
    if (!st) st = pad_rows(m, cfg, rows, len, b, tok, ids, err);
    if (rows) free_rows(rows, b);
    free(len);
    if (st) {
        attn_tokens_free(tok);
        free(*ids);
        *ids = NULL;
    }
    return st;
}

/* ---- the trace ---- */

attn_status attn_model_run_config(const attn_model *m, const attn_config *cfg, attn_config *run, attn_error *err)
{
    if (cfg->source_tokens)
        return attn_fail(err, ATTN_ERR_CONFIG, "source_tokens: %s is a decoder; cross-attention needs one attention "
                         "layer without --model", m->name);
    if (cfg->weights_path || cfg->input_path)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: a model brings its own weights and embeddings",
                         cfg->weights_path ? "weights" : "input");
    attn_status st = attn_config_copy(run, cfg, err);
    if (st) return st;
    if (!run->model && !(run->model = strdup(m->dir))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    run->d_model = m->cfg.d;
    run->heads = m->cfg.heads;
    run->kv_heads = m->cfg.kv_heads;
    run->mode = run->mode == ATTN_MODE_MLA ? ATTN_MODE_MLA : ATTN_MODE_AUTO; /* mla: refused below */
    run->rope = true;
    run->rope_style = ATTN_ROPE_HALF;
    run->rope_theta = m->cfg.theta;
    if (!run->sliding_window) run->sliding_window = m->cfg.sliding_window; /* Mistral's, unless set */
    st = m->cfg.arch.mla     ? attn_deepseek_run_config(m, run, err)
       : m->cfg.arch.gemma ? attn_gemma_run_config(m, run, err)
       : m->cfg.arch.kind == ATTN_ARCH_GPT_OSS ? attn_gptoss_run_config(m, run, err)
                           : attn_config_check_scores(run, true, err);
    if (st) attn_config_free(run);
    return st;
}

/* Sizes of b rows of L tokens (past of them cached) on a model of config c. */
static void model_dims(const attn_model_config *c, int b, int L, int past, attn_dims *d)
{
    memset(d, 0, sizeof *d);
    d->b = b;
    d->L = L;
    d->P = past;
    d->s = d->L - past;
    d->t = d->L;
    d->n = d->s;
    d->d = c->d;
    d->h = c->heads;
    d->g = c->kv_heads;
    d->k = c->head_dim;
    d->f = c->ffn;
    d->V = c->vocab;
    d->E = c->arch.experts;
    d->mode = d->g == d->h ? ATTN_MODE_MHA : d->g == 1 ? ATTN_MODE_MQA : ATTN_MODE_GQA;
    if (c->arch.mla) { /* latent attention: every head's key and value rebuilt from R + D a token */
        d->mode = ATTN_MODE_MLA;
        d->kv_rank = c->mla.kv_rank;
        d->rope_dim = c->mla.rope_dim;
    }
}

static void place(attn_trace *tr, const attn_stage_info *info, int layer)
{
    attn_tensor *t = &tr->tensors[tr->n_tensors++];
    attn_tensor_name(layer, tr->n_layers, info->name, t->name, sizeof t->name);
    t->layer = layer;
    t->info = info;
    t->ndim = attn_stage_shape(info, &tr->dims, t->shape);
    t->count = 1;
    for (int j = 0; j < t->ndim; j++) t->count *= (size_t)t->shape[j];
}

/* What decides the stages of tr's layers: its settings and its model's architecture. */
static attn_stage_ctx model_stage_ctx(const attn_trace *tr)
{
    attn_stage_ctx ctx = attn_config_stage_ctx(&tr->cfg, &tr->dims);
    ctx.qk_norm = tr->arch.qk_norm;
    ctx.q_lora = tr->arch.q_lora;
    ctx.sink = ctx.sink || tr->arch.sinks; /* gpt-oss: sink_weight in every layer */
    ctx.moe_layers = tr->arch.experts && tr->arch.moe_from < tr->n_layers ? tr->n_layers - tr->arch.moe_from : 0;
    return ctx;
}

/* Floats a layer that does not keep its query-key stages computes them in:
 * two (b,h,s,t) buffers and the mask (b,1,s,t). */
static size_t qk_scratch_floats(const attn_dims *d)
{
    return ((size_t)2 * d->h + 1) * d->b * d->s * d->t;
}

/* Bytes the run holds: the trace, and the scratch of a trace that keeps the
 * query-key stages of one layer only. */
static double run_bytes(const attn_trace *tr)
{
    attn_stage_ctx ctx = model_stage_ctx(tr);
    return attn_stages_bytes(&ctx, tr->n_layers) + (tr->cfg.qk_keep ? qk_scratch_floats(&tr->dims) * sizeof(float) : 0);
}

/* embeddings, every layer's stages, then final_norm, logits, probs; refused
 * before any allocation if the whole would exceed the size limit. A prompt
 * too long for every layer's query-key stages keeps them for one layer only:
 * cfg.qk_keep's, else layer 0's, when that fits. */
static attn_status fit(attn_trace *tr, double *need, attn_error *err)
{
    attn_budget budget = attn_arena_budget(tr->store, attn_config_budget(&tr->cfg));
    if (tr->cfg.qk_keep > tr->n_layers)
        return attn_fail(err, ATTN_ERR_CONFIG, "attention weights of layer %d asked for, of a model of %d layers",
                         tr->cfg.qk_keep - 1, tr->n_layers);
    int keep = tr->cfg.qk_keep ? tr->cfg.qk_keep
                               : (tr->cfg.qk_prefer > 0 && tr->cfg.qk_prefer < tr->n_layers ? tr->cfg.qk_prefer : 0) + 1;
    attn_trace one = *tr; /* a shallow copy: only its settings change, nothing is freed */
    one.cfg.qk_keep = keep;
    double lean = run_bytes(&one);
    one.cfg.qk_keep = 0;
    double full = run_bytes(&one);
    if (!tr->cfg.qk_keep && full > budget.bytes && lean <= budget.bytes) tr->cfg.qk_keep = keep;
    *need = tr->cfg.qk_keep ? lean : full;
    if (*need > budget.bytes) {
        char all[32], size[32], bound[200];
        return attn_fail(err, ATTN_ERR_CONFIG, "this trace would need about %s, and %s even with one layer's attention "
                         "weights: more than %s; use a shorter text or fewer rows", attn_budget_size(full, all, sizeof all),
                         attn_budget_size(lean, size, sizeof size), attn_budget_text(&budget, bound, sizeof bound));
    }
    return ATTN_OK;
}

/* Places tr's stages and allocates them; without head, the model-level ones
 * after the layers (final_norm, logits, probs) are left out. logits and
 * probs are never in the arena: head() places them in its attn_head. */
static attn_status allocate(attn_trace *tr, bool head, attn_error *err)
{
    int n;
    double need;
    const attn_stage_info *st = attn_stages(&n);
    attn_status status = fit(tr, &need, err);
    if (status) return status;
    attn_stage_ctx ctx = model_stage_ctx(tr);
    if (!(tr->tensors = calloc((size_t)n * (tr->n_layers + 1), sizeof *tr->tensors)))
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    place(tr, &st[ATTN_STAGE_EMBEDDINGS], -1);
    for (int l = 0; l < tr->n_layers; l++)
        for (int i = 0; i < n; i++) {
            bool kept = !(st[i].roles & ATTN_ROLE_QUERY_KEY) || !tr->cfg.qk_keep || l == tr->cfg.qk_keep - 1;
            if (!st[i].model_level && kept && attn_stage_in_layer(&st[i], &ctx, l, tr->n_layers)) place(tr, &st[i], l);
        }
    for (int i = ATTN_STAGE_RESID_IN; head && i < n; i++)
        if (st[i].model_level && i != ATTN_STAGE_LOGITS && i != ATTN_STAGE_PROBS) place(tr, &st[i], -1);
    return attn_trace_alloc_arena(tr, err);
}

static float *D(const attn_trace *tr, int layer, attn_stage_id id)
{
    const attn_tensor *t = attn_trace_slot((attn_trace *)tr, layer, id);
    return t ? t->data : NULL;
}

/* embeddings[b, i] = E[token at position P + i], zeros at pads. */
static void embed(const attn_model *m, attn_trace *tr)
{
    const attn_dims *d = &tr->dims;
    float *e = D(tr, -1, ATTN_STAGE_EMBEDDINGS);
    for (int r = 0; r < d->b; r++)
        for (int i = 0; i < d->s; i++) {
            int id = tr->token_ids[(size_t)r * d->L + d->P + i];
            float *row = e + ((size_t)r * d->s + i) * d->d;
            if (id >= 0 && id < m->cfg.vocab) attn_model_embed_row(m, id, row);
            else memset(row, 0, (size_t)d->d * sizeof *row);
        }
}

/* Layer l; ai holds the layer's past (x_past, k_past, v_past, past_stride) and
 * qk_scratch, and receives its weights and input. */
static attn_status run_layer(const attn_model *m, attn_trace *tr, int l, attn_inputs *ai, float *xbuf,
                             attn_error *err)
{
    const attn_dims *d = &tr->dims;
    const attn_model_layer *W = &m->layer[l];
    size_t rows = (size_t)d->b * d->s, n = rows * d->d;
    float *in = D(tr, l, ATTN_STAGE_RESID_IN), *mid = D(tr, l, ATTN_STAGE_RESID_MID);
    float *norm2 = D(tr, l, ATTN_STAGE_MLP_NORM), *gate = D(tr, l, ATTN_STAGE_GATE), *up = D(tr, l, ATTN_STAGE_UP);
    float *act = D(tr, l, ATTN_STAGE_ACT), *mlp = D(tr, l, ATTN_STAGE_MLP_OUT);
    memcpy(in, l ? D(tr, l - 1, ATTN_STAGE_RESID_OUT) : D(tr, -1, ATTN_STAGE_EMBEDDINGS), n * sizeof *in);
    bool post = m->cfg.arch.post_norms; /* OLMo 2: no norm before a sublayer, one after it */
    if (post) memcpy(xbuf, in, n * sizeof *xbuf);
    else attn_op_rmsnorm(in, W->attn_norm, xbuf, rows, d->d, m->cfg.eps);
    ai->w_stored[0] = &W->w_q, ai->w_stored[1] = &W->w_k, ai->w_stored[2] = &W->w_v, ai->w_stored[3] = &W->w_o;
    ai->x = xbuf;
    ai->b_q = W->b_q, ai->b_k = W->b_k, ai->b_v = W->b_v, ai->q_norm = W->q_norm, ai->k_norm = W->k_norm;
    ai->b_o = W->b_o, ai->sinks = W->sinks;
    ai->qk_eps = m->cfg.eps;
    attn_deepseek_layer mla = {0};
    attn_gemma_layer_set saved;
    bool gemma = m->cfg.arch.gemma; /* gemma.h: its window, RoPE and post-norms */
    attn_status st = m->cfg.arch.mla ? attn_deepseek_inputs(m, l, xbuf, (int)rows, ai, &mla, err) : ATTN_OK;
    int window = tr->cfg.sliding_window; /* gpt-oss: the layer's own window (local) or none (global) */
    if (gemma) attn_gemma_layer_enter(m, l, &tr->cfg, &tr->arch, &saved);
    else if (m->cfg.arch.local_window) tr->cfg.sliding_window = m->cfg.arch.local[l] ? m->cfg.arch.local_window : 0;
    if (!st) st = attn_attention_run(tr, l, ai, err);
    if (gemma) attn_gemma_layer_restore(&tr->cfg, &tr->arch, &saved);
    tr->cfg.sliding_window = window;
    attn_deepseek_free(&mla);
    if (st) return st;
    /* OLMo 2 and Gemma: xbuf, free once x is the trace's, holds RMSNorm(out) ⊙ g_post_attn */
    const float *added = D(tr, l, ATTN_STAGE_OUT);
    if (post || gemma) {
        attn_op_rmsnorm(added, W->post_attn_norm, xbuf, rows, d->d, m->cfg.eps);
        added = xbuf;
    }
    attn_op_add(in, added, mid, n);
    if (post) memcpy(norm2, mid, n * sizeof *norm2);
    else attn_op_rmsnorm(mid, W->mlp_norm, norm2, rows, d->d, m->cfg.eps);
    if (attn_arch_layer_moe(&m->cfg.arch, l)) { /* the router's choice, the chosen experts, the shared one */
        bool oss = m->cfg.moe.method == ATTN_ROUTE_TOPK_SOFTMAX; /* gpt-oss's router and experts */
        st = (oss ? attn_gptoss_moe_run : attn_moe_run)(m, l, norm2, (int)rows, mlp,
                                                         D(tr, l, ATTN_STAGE_ROUTER_SCORES),
                                                         D(tr, l, ATTN_STAGE_EXPERT_WEIGHTS), err);
        if (st) return st;
    } else if (attn_wmat_product(&W->w_gate, norm2, (int)rows, gate) ||
               attn_wmat_product(&W->w_up, norm2, (int)rows, up)) {
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's MLP", l);
    } else {
        if (gemma) attn_op_geglu(gate, up, act, rows * d->f);
        else attn_op_swiglu(gate, up, act, rows * d->f);
        if (attn_wmat_product(&W->w_down, act, (int)rows, mlp))
            return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for layer %d's MLP", l);
    }
    if (post || gemma) { /* resid_out = resid_mid + RMSNorm(mlp_out) ⊙ g_post_ff */
        attn_op_rmsnorm(mlp, W->post_ff_norm, xbuf, rows, d->d, m->cfg.eps);
        attn_op_add(mid, xbuf, D(tr, l, ATTN_STAGE_RESID_OUT), n);
    } else {
        attn_op_add(mid, mlp, D(tr, l, ATTN_STAGE_RESID_OUT), n);
    }
    return ATTN_OK;
}

/* final_norm, and logits and probs as an attn_head that computes the rows
 * read (head.h): nothing of the (b, s, V) pair is computed here. */
static attn_status head(const attn_model *m, attn_trace *tr, attn_error *err)
{
    const attn_dims *d = &tr->dims;
    size_t rows = (size_t)d->b * d->s;
    float *fn = D(tr, -1, ATTN_STAGE_FINAL_NORM);
    attn_op_rmsnorm(D(tr, tr->n_layers - 1, ATTN_STAGE_RESID_OUT), m->norm, fn, rows, d->d, m->cfg.eps);
    attn_head *h;
    attn_status st = attn_head_new(m, fn, (int)rows, &h, err);
    if (st) return st;
    tr->head = &h->lazy;
    const attn_stage_info *info = attn_stage_get(ATTN_STAGE_LOGITS);
    for (int i = 0; i < 2; i++, info = attn_stage_get(ATTN_STAGE_PROBS)) {
        attn_tensor *t = &tr->tensors[tr->n_tensors];
        place(tr, info, -1);
        t->data = i ? h->probs : h->logits;
        t->lazy = &h->lazy;
    }
    return ATTN_OK;
}

/* The first P positions of tr's rows, as a trace of their own: its layers' x
 * are the KV cache's inputs. */
static attn_status run_prefix(const attn_model *m, const attn_trace *tr, attn_trace *pre, attn_error *err);

void attn_model_trace_kv(const attn_trace *tr, int l, const float **k, const float **v)
{
    bool cached = tr->dims.P > 0;
    *k = D(tr, l, cached ? ATTN_STAGE_K_CACHE : tr->cfg.rope ? ATTN_STAGE_K_ROPE
                  : tr->arch.qk_norm ? ATTN_STAGE_K_NORM : ATTN_STAGE_K_HEADS);
    *v = D(tr, l, cached ? ATTN_STAGE_V_CACHE : ATTN_STAGE_V_HEADS);
}

/* Runs tr's layers, and with head its final norm, logits and probs. A
 * prefix's pass (run_prefix) is read for its KV cache only: its head, V
 * logits and probs at each of its P positions, would be work and memory
 * nobody reads (SmolLM2-135M: a fifth of the products, 384 KiB a position). */
static attn_status run_ids(const attn_model *m, attn_trace *tr, const attn_model_past *past, attn_progress *watch,
                           bool with_head, attn_error *err)
{
    attn_trace pre = {0};
    float *xbuf = NULL, *qk = NULL;
    attn_status st = ATTN_OK;
    if (tr->dims.P > 0 && !past) {
        if ((st = run_prefix(m, tr, &pre, err))) return st;
    }
    if ((st = allocate(tr, with_head, err))) goto out;
    if (!(xbuf = malloc((size_t)tr->dims.b * tr->dims.s * tr->dims.d * sizeof *xbuf)) ||
        (tr->cfg.qk_keep && !(qk = malloc(qk_scratch_floats(&tr->dims) * sizeof *qk)))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto out;
    }
    embed(m, tr);
    if (watch) atomic_store(&watch->layers_done, 0), atomic_store(&watch->layers, tr->n_layers);
    if (attn_progress_phase(watch, ATTN_PHASE_TRACING)) st = attn_fail(err, ATTN_ERR_CANCELLED, "cancelled");
    for (int l = 0; !st && l < tr->n_layers; l++) {
        if (attn_progress_at(watch, l, ATTN_STAGE_RESID_IN)) {
            st = attn_fail(err, ATTN_ERR_CANCELLED, "cancelled");
            break;
        }
        attn_inputs ai = {.qk_scratch = qk, .progress = watch};
        const int R = tr->dims.kv_rank, mla = tr->dims.mode == ATTN_MODE_MLA;
        if (past && mla) { /* the latent cache: each position's [c_kv | k_pe] */
            ai.x_past = past->x[l];
            ai.ckv_past = past->k ? past->k[l] : NULL;
            ai.kpe_past = past->k ? past->k[l] + R : NULL;
            ai.latent_stride = R + tr->dims.rope_dim;
        } else if (past) {
            ai.x_past = past->x[l];
            ai.k_past = past->k ? past->k[l] : NULL;
            ai.v_past = past->v ? past->v[l] : NULL;
            ai.past_stride = past->stride;
        } else if (tr->dims.P) { /* the prefix's own pass is the cache */
            ai.x_past = D(&pre, l, ATTN_STAGE_X);
            if (mla) ai.ckv_past = D(&pre, l, ATTN_STAGE_C_KV), ai.kpe_past = D(&pre, l, ATTN_STAGE_K_PE);
            else attn_model_trace_kv(&pre, l, &ai.k_past, &ai.v_past);
        }
        st = run_layer(m, tr, l, &ai, xbuf, err);
        /* layer l written: a watcher may read it from now on (attention.h) */
        if (!st && watch) atomic_store_explicit(&watch->layers_done, l + 1, memory_order_release);
    }
    if (!st && with_head) st = head(m, tr, err);
out:
    free(xbuf);
    free(qk);
    attn_trace_free(&pre);
    return st;
}

static attn_status run_prefix(const attn_model *m, const attn_trace *tr, attn_trace *pre, attn_error *err)
{
    const attn_tokens *tk = &tr->tokens;
    int P = tr->dims.P, b = tk->rows;
    const char **table = calloc((size_t)b * P, sizeof *table);
    int *len = calloc((size_t)b, sizeof *len);
    attn_status st = ATTN_OK;
    memset(pre, 0, sizeof *pre);
    if (!table || !len || attn_config_copy(&pre->cfg, &tr->cfg, err) ||
        !(pre->token_ids = malloc((size_t)b * P * sizeof *pre->token_ids))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto out;
    }
    pre->cfg.past = 0;
    for (int r = 0; r < b; r++)
        for (int p = 0; p < P; p++) {
            table[(size_t)r * P + p] = attn_tokens_at(tk, r, p);
            pre->token_ids[(size_t)r * P + p] = tr->token_ids[(size_t)r * tk->len + p];
            len[r] += !attn_tokens_is_pad(tk, r, p);
        }
    if ((st = attn_tokens_from_table(b, P, table, len, tk->side, &pre->tokens, err))) goto out;
    pre->n_layers = tr->n_layers;
    pre->arch = tr->arch;
    model_dims(&m->cfg, pre->tokens.rows, pre->tokens.len, 0, &pre->dims);
    pre->dims.T = attn_config_key_tiles(&pre->cfg, pre->dims.t);
    st = run_ids(m, pre, NULL, NULL, false, err);
out:
    free(table);
    free(len);
    if (st) attn_trace_free(pre);
    return st;
}

/* Tokens, ids, sizes and configuration of the trace, nothing computed yet:
 * the tokens are cfg's, or the one row ids[0 .. n) when ids is given. */
static attn_status begin(const attn_model *m, const attn_config *cfg, const int *ids, int n, attn_trace *tr,
                         attn_error *err)
{
    attn_status st;
    memset(tr, 0, sizeof *tr);
    if ((st = attn_model_run_config(m, cfg, &tr->cfg, err))) return st;
    if (ids) {
        int *row = (int *)ids;
        for (int i = 0; i < n; i++)
            if (ids[i] < 0 || ids[i] >= m->cfg.vocab)
                return attn_fail(err, ATTN_ERR_CONFIG, "token id %d is outside %s's vocabulary", ids[i], m->name);
        st = pad_rows(m, &tr->cfg, &row, &n, 1, &tr->tokens, &tr->token_ids, err);
    } else {
        st = attn_model_tokenize(m, &tr->cfg, &tr->tokens, &tr->token_ids, err);
    }
    if (st) return st;
    if (cfg->past >= tr->tokens.len)
        return attn_fail(err, ATTN_ERR_CONFIG, "past (%d) must be less than the %d tokens so at least one query "
                         "remains", cfg->past, tr->tokens.len);
    tr->n_layers = m->cfg.layers;
    tr->arch = m->cfg.arch;
    model_dims(&m->cfg, tr->tokens.rows, tr->tokens.len, cfg->past, &tr->dims);
    tr->dims.T = attn_config_key_tiles(&tr->cfg, tr->dims.t);
    if (!(tr->model_config = strdup(m->config_json))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    return ATTN_OK;
}

attn_status attn_model_trace_run(const attn_model *m, const attn_config *cfg, const attn_model_past *past,
                                 attn_trace *tr, attn_error *err)
{
    return attn_model_trace_watched(m, cfg, past, NULL, NULL, tr, err);
}

attn_status attn_model_trace_watched(const attn_model *m, const attn_config *cfg, const attn_model_past *past,
                                     attn_progress *watch, attn_arena *store, attn_trace *tr, attn_error *err)
{
    attn_status st = begin(m, cfg, NULL, 0, tr, err);
    tr->store = store;
    if (!st) st = run_ids(m, tr, past, watch, true, err);
    if (st) attn_trace_free(tr);
    return st;
}

attn_status attn_model_trace_ids(const attn_model *m, const attn_config *cfg, const int *ids, int n,
                                 const attn_model_past *past, attn_trace *tr, attn_error *err)
{
    attn_status st = n > 0 ? begin(m, cfg, ids, n, tr, err)
                           : attn_fail(err, ATTN_ERR_CONFIG, "no tokens to run");
    if (!st) st = run_ids(m, tr, past, NULL, true, err);
    if (st) attn_trace_free(tr);
    return st;
}

attn_status attn_model_trace_estimate(const attn_model *m, const attn_config *cfg, double *bytes, attn_error *err)
{
    attn_trace tr;
    attn_status st = begin(m, cfg, NULL, 0, &tr, err);
    if (!st) st = fit(&tr, bytes, err);
    attn_trace_free(&tr);
    return st;
}

double attn_model_trace_bytes(const attn_model_config *c, int n, bool one_layer)
{
    attn_trace tr = {.n_layers = c->layers, .arch = c->arch}; /* sizes and settings only: nothing to free */
    tr.cfg.rope = true;
    tr.cfg.qk_keep = one_layer;
    tr.cfg.model = (char *)"";
    tr.cfg.sink_logit = -INFINITY; /* no sink (0 would be one: a model's run never has it) */
    model_dims(c, 1, n, 0, &tr.dims);
    return run_bytes(&tr);
}

double attn_model_trace_full_bytes(const attn_trace *tr)
{
    attn_trace all = *tr; /* a shallow copy: only its settings change, nothing is freed */
    all.cfg.qk_keep = 0;
    return run_bytes(&all);
}

attn_status attn_model_decode(const attn_model *m, const attn_config *base, int step, attn_config *out, int *len,
                              attn_error *err)
{
    attn_tokens tk;
    int *ids, longest = 0;
    attn_status st = attn_model_tokenize(m, base, &tk, &ids, err);
    if (st) return st;
    free(ids);
    for (int i = 0; i < tk.rows * tk.len; i++)
        if (tk.tok[i][strcspn(tk.tok[i], " \t|")] || !tk.tok[i][0]) {
            st = attn_fail(err, ATTN_ERR_CONFIG, "decoding: token '%s' cannot be written as a token list", tk.tok[i]);
            goto out;
        }
    for (int r = 0; r < tk.rows; r++) longest = tk.lengths[r] > longest ? tk.lengths[r] : longest;
    *len = longest;
    step = step > longest ? longest : step < 1 ? 1 : step;
    char *text = attn_tokens_text(&tk, step);
    if (!text) { st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory"); goto out; }
    if ((st = attn_config_copy(out, base, err))) { free(text); goto out; }
    free(out->tokens);
    free(out->text);
    out->tokens = text;
    out->text = NULL;
    out->past = step - 1;
out:
    attn_tokens_free(&tk);
    return st;
}

double attn_model_head_row_bytes(const attn_model_config *c) { return attn_head_row_bytes(c->vocab); }
