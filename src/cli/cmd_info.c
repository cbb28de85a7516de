/* cmd_info.c — `attnlab info FILE` and `attnlab summary [config]`:
 * the configuration, the table of stages, and (summary) one head's weights. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/attention/wmat.h"
#include "engine/base/utf8.h"
#include "engine/formats/trace_io.h"
#include "engine/model/kv_bytes.h"
#include "engine/model/model_run.h"
#include "engine/run/forward.h"

/* Prints s (from the file: escaped, cli_term_put) in `width` columns, left- or right-aligned. */
static void print_padded(const char *s, int width, bool right)
{
    int w = cli_term_width(s), pad = width > w ? width - w : 0;
    if (right) printf("%*s", pad, "");
    cli_term_put(stdout, s);
    if (!right) printf("%*s", pad, "");
}

/* Each row's first SHOWN tokens: a long prompt stays a line. */
static void print_tokens(const char *label, const attn_tokens *t)
{
    enum { SHOWN = 48 };
    printf("  %s (lengths", label);
    for (int r = 0; r < t->rows; r++) printf("%s%d", r ? ", " : " ", t->lengths[r]);
    printf("):");
    for (int r = 0; r < t->rows; r++) {
        printf("%s", r ? " |" : "");
        for (int p = 0; p < t->len && p < SHOWN; p++) {
            printf(" ");
            cli_term_put(stdout, attn_tokens_at(t, r, p));
        }
        if (t->len > SHOWN) printf(" … (%d more)", t->len - SHOWN);
    }
    printf("\n");
}

/* What the trace holds in memory, and where, against the limit of one trace.
 * A file described (info) holds nothing: what drawing it would take is said. */
static void print_memory(const attn_trace *tr)
{
    double bytes = attn_trace_bytes(tr);
    attn_budget budget = attn_config_budget(&tr->cfg);
    bool small = bytes < (1 << 20);
    char why[320];
    const char *where = tr->described ? (tr->widened ? "read into memory as float32 when drawn (the file stores them "
                                                       "otherwise, e.g. F16)"
                                                     : "mapped from the file when drawn (pages read as they are used)")
                        : tr->map ? "mapped from the file (pages read as they are used)"
                                  : "in memory";
    printf("  memory: %.1f %s of tensors, %s; here a trace may take up to %s\n", bytes / (small ? 1 << 10 : 1 << 20),
           small ? "KiB" : "MiB", where, attn_budget_explain(&budget, why, sizeof why));
    printf("  matrix products: %s\n", attn_forward_products(why, sizeof why));
    if (tr->model_config)
        printf("  a model's weights: read in place from its files in their own dtype; F16 and BF16 widened in "
               "registers (%s kernel)\n", attn_wmat_kernel_name());
    int kept = 0, layer = -1; /* a long prompt's trace keeps one layer's attention weights */
    for (int l = 0; l < tr->n_layers; l++)
        if (attn_trace_stage(tr, l, ATTN_STAGE_WEIGHTS)) kept++, layer = l;
    if (tr->n_layers > 1 && kept == 1)
        printf("  attention weights (scores, mask, masked_scores, weights) kept for layer %d only, of %d: the prompt "
               "was too long for every layer's\n", layer, tr->n_layers);
}

/* A Gemma trace: which layers masked with their window (the sliding_window
 * setting above is 0: each layer has its own, arch.h's local). */
static void print_trace_windows(const attn_trace *tr)
{
    char list[160] = "";
    int local = 0;
    for (int l = 0; l < tr->n_layers && l < ATTN_ARCH_MAX_LAYERS; l++) {
        if (!tr->arch.local[l]) continue;
        size_t len = strlen(list);
        if (len < sizeof list - 16) snprintf(list + len, sizeof list - len, "%s%d", local ? ", " : "", l);
        local++;
    }
    printf("  local layers (each masks keys outside its window of %d): %d of %d%s%s%s; the others see the whole past\n",
           tr->arch.local_window, local, tr->n_layers, local ? " (" : "", list, local ? ")" : "");
}

/* v with a comma between groups of three digits ("36,864"), into buf. */
static const char *grouped(double v, char *buf, size_t size)
{
    char digits[40];
    int n = snprintf(digits, sizeof digits, "%.0f", v), lead = digits[0] == '-', o = 0;
    for (int i = 0; i < n && o + 2 < (int)size; i++) {
        if (i > lead && (n - i) % 3 == 0) buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

/* The KV cache's line (kv_bytes.h, float32, then BF16): bytes a token of
 * the full layers, and the local layers' bound, W tokens of theirs.
 *   KV cache: 2,048 B/token (a key and a value per kv head, 4 layers, float32; 1,024 B/token in BF16)
 *   KV cache: 6,144 B/token (the 3 global layers, …) + local layers capped at 512 tokens × 30,720 B (15 layers …) */
static void print_kv_line(const attn_model_config *c, const attn_kv_bytes *b)
{
    attn_kv_bytes h = attn_kv_bytes_of(c, 2);
    char a[40], x[40], y[40], z[40], a2[40], y2[40], what[80];
    if (c->arch.mla) snprintf(what, sizeof what, "latent %d + RoPE key %d", c->mla.kv_rank, c->mla.rope_dim);
    else snprintf(what, sizeof what, "a key and a value per kv head");
    printf("  KV cache: ");
    if (!b->local_layers) {
        printf("%s B/token (%s, %d layer%s, float32; %s B/token in BF16)", grouped(b->full, a, sizeof a), what,
               b->layers, b->layers == 1 ? "" : "s", grouped(h.full, x, sizeof x));
        return;
    }
    if (b->full_layers)
        printf("%s B/token (the %d global layer%s, %s, float32) + ", grouped(b->full, a, sizeof a), b->full_layers,
               b->full_layers == 1 ? "" : "s", what);
    printf("local layers capped at %s tokens × %s B (%s%d layer%s%s%s: %s B at most); in BF16 ",
           grouped(b->window, x, sizeof x), grouped(b->local, y, sizeof y), b->full_layers ? "" : "every one, ",
           b->local_layers, b->local_layers == 1 ? "" : "s", b->full_layers ? "" : ", ", b->full_layers ? "" : what,
           grouped(b->local_cap, z, sizeof z));
    if (b->full_layers) printf("%s B/token + ", grouped(h.full, a2, sizeof a2));
    printf("%s × %s B", x, grouped(h.local, y2, sizeof y2));
}

/* What a KV cache of this layer keeps per token, in float32 and BF16, beside
 * what MHA, GQA and MQA with the same heads would; a model's trace: the
 * model's line (kv_bytes.h), as info --model prints it. */
static void print_kv_bytes(const attn_trace *tr)
{
    const attn_dims *d = &tr->dims;
    attn_model_config mc;
    attn_error ignore;
    if (tr->model_config && !attn_model_config_parse(tr->model_config, strlen(tr->model_config), &mc, &ignore)) {
        attn_kv_bytes b = attn_kv_bytes_of(&mc, sizeof(float)); /* a model's trace: its layers, local ones capped */
        print_kv_line(&mc, &b);
        printf("\n");
        return;
    }
    if (d->cross || !d->h) return; /* cross-attention caches the source once: no cache per token */
    int layers = tr->n_layers > 0 ? tr->n_layers : 1;
    double now = attn_kv_bytes_per_token(d, layers, 4);
    printf("  KV cache: %.0f B/token (%s, %d layer%s, float32; %.0f B/token in BF16)", now,
           d->mode == ATTN_MODE_MLA ? "latent R + RoPE key D" : "a key and a value per kv head", layers,
           layers == 1 ? "" : "s", attn_kv_bytes_per_token(d, layers, 2));
    if (d->mode == ATTN_MODE_MLA) {
        attn_dims mha = *d, mqa = *d;
        mha.mode = ATTN_MODE_MHA, mqa.mode = ATTN_MODE_MQA, mqa.g = 1;
        printf("; with these %d heads of %d MHA would keep %.0f B, MQA %.0f B", d->h, d->k,
               attn_kv_bytes_per_token(&mha, layers, 4), attn_kv_bytes_per_token(&mqa, layers, 4));
    } else if (d->g != d->h) {
        attn_dims mha = *d;
        mha.mode = ATTN_MODE_MHA, mha.g = d->h;
        printf("; MHA with these %d heads would keep %.0f B", d->h, attn_kv_bytes_per_token(&mha, layers, 4));
    }
    printf("\n");
}

static void print_header(const attn_trace *tr)
{
    const attn_dims *d = &tr->dims;
    const attn_config *c = &tr->cfg, run = attn_config_as_run(c, d);
    static const char *const MODE[] = {"?", "MHA", "MQA", "GQA", "MLA"};
    printf("%s-attention, %s: batch %d, seq %d, d_model %d, heads %d, kv_heads %d, head_dim %d\n",
           d->cross ? "cross" : "self", MODE[d->mode], d->b, d->L, d->d, d->h, d->g, d->k);
    /* the recorded settings, each as its row describes it ("causal on", "rope off") */
    const char *sep = " ";
    printf(" ");
    for (int i = 0; i < attn_setting_count(); i++) {
        const attn_setting *row = attn_setting_at(i);
        char text[160];
        if (!(row->flags & ATTN_SETTING_TRACE) || !*attn_setting_describe(&run, row, text, sizeof text)) continue;
        printf("%s", sep);
        cli_term_put(stdout, text); /* a text setting (model, tokens) is the file's */
        sep = " · ";
    }
    printf("\n");
    print_kv_bytes(tr);
    if (tr->arch.local_window) print_trace_windows(tr);
    if (tr->tokens.rows) print_tokens("tokens", &tr->tokens);
    if (tr->source.rows) print_tokens("source", &tr->source);
    printf("  fully masked query rows:");
    if (!tr->n_masked) printf(" none");
    for (int i = 0; i < tr->n_masked && i < 16; i++)
        printf(" (b=%d, i=%d)", tr->masked_rows[2 * i], tr->masked_rows[2 * i + 1]);
    if (tr->n_masked > 16) printf(" … %d in all", tr->n_masked);
    if (tr->n_masked) printf(" → weights %s", c->softmax_guard ? "0" : "NaN (softmax guard off)");
    printf("\n");
}

static void print_stage_table(const attn_trace *tr)
{
    printf("\n  %-3s %-16s %-28s %s\n", "#", "stage", "shape", "formula");
    int i = 0;
    for (const attn_tensor *t = NULL; (t = attn_trace_next(tr, t));) {
        attn_stage_text tc = attn_trace_tensor_text(tr, t); /* a layer's own: NoPE (SmolLM3), a Gemma window */
        char shp[128];
        printf("  %-3d ", ++i);
        print_padded(t->name, 16, false);
        printf(" %-28s %s\n", attn_tensor_shape_str(t, shp, sizeof shp),
               t->info ? attn_stage_formula_in(t->info, &tc) : "(not part of the attnlab contract)");
    }
}

/* Weights of batch row 0, head 0: rows are queries, columns keys; × marks masked cells. */
static void print_weights(const attn_trace *tr)
{
    const attn_tensor *w = attn_trace_stage(tr, 0, ATTN_STAGE_WEIGHTS), *m = attn_trace_stage(tr, 0, ATTN_STAGE_MASK);
    const attn_dims *d = &tr->dims;
    const attn_tokens *keys = d->cross ? &tr->source : &tr->tokens;
    if (!w || !m || !tr->tokens.rows || d->t > 16) return;
    printf("\n  weights, batch row 0, head 0 (rows: queries, columns: keys; × = masked):\n  %8s", "");
    for (int j = 0; j < d->t; j++) { printf(" "); print_padded(attn_tokens_at(keys, 0, j), 5, true); }
    printf("\n");
    for (int i = 0; i < d->s; i++) {
        printf("  ");
        print_padded(attn_tokens_at(&tr->tokens, 0, d->P + i), 8, false);
        for (int j = 0; j < d->t; j++) {
            if (attn_tensor_at4(m, 0, 0, i, j) != 0.0f) printf("     ×");
            else printf("  %.2f", (double)attn_tensor_at4(w, 0, 0, i, j));
        }
        printf("\n");
    }
}

static void info_usage(void)
{
    printf("Usage: attnlab info FILE.safetensors\n"
           "       attnlab info --model NAME|DIR\n\n"
           "Prints a trace's configuration and the table of its stages with their shapes;\n"
           "for a model, its sizes, its KV cache per token (local layers capped at their\n"
           "window) and what a traced pass of it holds in memory, once its weights'\n"
           "headers match config.json (every tensor there, with its shape; no weight is\n"
           "read): a folder without weights, or with broken ones, is refused.\n");
}

/* Which layers are local (Gemma's and gpt-oss's sliding_attention), and what a cache of
 * them holds at the model's context: global layers every position, local
 * ones their last W (kv_bytes.h). */
static void print_local_layers(const attn_model_config *c, const attn_kv_bytes *b)
{
    char list[160] = "";
    if (c->arch.local_window > 0) {
        int n = 0;
        for (int l = 0; l < c->layers && l < ATTN_ARCH_MAX_LAYERS; l++) {
            if (!c->arch.local[l]) continue;
            size_t len = strlen(list);
            if (len < sizeof list - 16) snprintf(list + len, sizeof list - len, "%s%d", n ? ", " : "", l);
            else if (len < sizeof list - 1) strcat(list, "…"), list[sizeof list - 1] = '\0';
            n++;
        }
        printf("  local layers (sliding_window %d): %d of %d%s%s%s; each reads only its last %d positions\n", b->window,
               b->local_layers, c->layers, n ? " (" : "", list, n ? ")" : "", b->window);
    } else {
        printf("  sliding_window %d: every layer reads only its last %d positions\n", b->window, b->window);
    }
    /* at the model's context n: full layers keep n positions, local ones min(n, W) */
    double n = c->max_pos, kept = attn_kv_bytes_at(b, n), all = (b->full + b->local) * n;
    /* gpt-oss decodes through the traced layer, over a cache of every position (kv_cache.c) */
    printf("  at its context of %d tokens a cache that keeps only the windows needs %.1f MiB in float32 (%.1f in "
           "BF16; %s), every position of every layer %.1f MiB (as a traced pass keeps them)\n", c->max_pos,
           kept / (1 << 20), kept / 2 / (1 << 20),
           c->arch.sinks ? "attnlab generate keeps every position of this model" : "attnlab generate keeps only them",
           all / (1 << 20));
}

static void print_gemma_numbers(const attn_model_config *c)
{
    const attn_gemma_sizes *g = &c->gemma;
    char cap[2][24] = {"none", "none"};
    if (g->attn_softcap > 0) snprintf(cap[0], sizeof cap[0], "%.6g", g->attn_softcap);
    if (g->final_softcap > 0) snprintf(cap[1], sizeof cap[1], "%.6g", g->final_softcap);
    printf("  scores · query_pre_attn_scalar^-1/2 = %.6g; attn_logit_softcapping %s, final_logit_softcapping %s; "
           "RoPE base %.6g on global layers, %.6g on local ones\n", g->query_scale, cap[0], cap[1], c->theta,
           c->arch.local_theta);
}

/* gpt-oss's attention additions and its experts (gptoss.h). */
static void print_gptoss(const attn_model_config *c)
{
    const attn_moe_sizes *e = &c->moe;
    printf("  gpt-oss: a learned sink logit per head (self_attn.sinks: each row of weights sums to 1 - sink_weight)%s; "
           "every layer a mixture of %d experts of %d features, top %d of the router's logits with a softmax over "
           "those %d, SwiGLU clamped at swiglu_limit %g (gate above, up both sides), alpha %g\n",
           c->arch.o_bias ? "; biases on q, k, v and o" : "; no attention biases", e->experts, e->inter, e->top_k,
           e->top_k, e->limit, e->alpha);
}

/* rope_scaling, when the model has one: Llama 3's bands, YaRN's ramp and factors, Gemma's linear. */
static void print_rope_scaling(const attn_model_config *c)
{
    const attn_rope_scaling *r = c->arch.gemma ? &c->arch.global_scaling : &c->arch.rope_scaling;
    if (r->linear > 0)
        printf("  rope: linear ×%g (every frequency divided by it)%s\n", r->linear,
               c->arch.kind == ATTN_ARCH_GEMMA3 ? " on global layers" : "");
    if (!(r->factor > 0)) return;
    if (!r->yarn) {
        printf("  rope: llama3 ×%g from %d (low_freq_factor %g, high_freq_factor %g)\n", r->factor,
               r->original_max_pos, r->low_freq_factor, r->high_freq_factor);
        return;
    }
    printf("  rope: yarn ×%g from %d (beta_fast %g, beta_slow %g%s), attention ×%.4g", r->factor, r->original_max_pos,
           r->beta_fast, r->beta_slow, r->truncate ? "" : ", truncate false", r->attention);
    if (c->arch.mla_score_gain > 0) printf("; scores ×%.4g (mscale² of mscale_all_dim)", c->arch.mla_score_gain);
    printf("%s\n", c->arch.kind == ATTN_ARCH_GEMMA3 ? " on global layers" : "");
}

/* What a model's KV cache keeps per token (kv_bytes.h): latent attention's
 * latent and RoPE key, (R + D) · layers values; the others' K and V,
 * 2 · g · k · layers; local layers at most their window's. */
static void print_model_kv(const attn_model_config *c)
{
    attn_kv_bytes b = attn_kv_bytes_of(c, sizeof(float));
    if (c->arch.kind == ATTN_ARCH_OLMO2)
        printf("  OLMo 2: q and k RMS-normalised over the whole projection (%d and %d features) before the head "
               "split; each sublayer's output normalised before the residual add (no pre-norms)\n",
               c->heads * c->head_dim, c->kv_heads * c->head_dim);
    if (c->arch.nope) {
        char list[4 * ATTN_MODEL_MAX_LAYERS + 8] = "";
        int n = 0;
        for (int l = 0; l < c->layers; l++)
            if (!attn_arch_layer_rope(&c->arch, l)) {
                size_t len = strlen(list);
                snprintf(list + len, sizeof list - len, "%s%d", n++ ? ", " : "", l);
            }
        printf("  SmolLM3: %d of %d layers without RoPE (no_rope_layers 0: NoPE)%s%s; they cache their keys and "
               "values all the same\n", n, c->layers, n ? ": layers " : "", list);
    }
    if (!c->arch.mla) {
        print_kv_line(c, &b);
        printf("\n");
        if (b.local_layers) print_local_layers(c, &b);
        if (c->arch.gemma) print_gemma_numbers(c);
        if (c->arch.kind == ATTN_ARCH_GPT_OSS) print_gptoss(c);
        return;
    }
    const attn_mla_sizes *s = &c->mla;
    /* what the same heads would cache as keys of k + D and values of k */
    double mha = (double)c->heads * (2.0 * s->nope_dim + s->rope_dim) * c->layers * 4;
    char m[40];
    printf("  latent attention (DeepSeek's MLA): kv_lora_rank %d, qk_rope_head_dim %d, qk_nope_head_dim %d, "
           "v_head_dim %d, q_lora_rank %s%.0d\n", s->kv_rank, s->rope_dim, s->nope_dim, s->v_dim,
           s->q_rank ? "" : "none (q_proj)", s->q_rank);
    const attn_moe_sizes *e = &c->moe;
    static const char *const ROUTER[] = {"softmax, greedy", "softmax, group_limited_greedy",
                                         "sigmoid + e_score_correction_bias, groups by their two best"};
    if (c->arch.experts)
        printf("  mixture of experts from layer %d: %d routed experts of %d features, top %d (%s%s%.0d%s%.0d), "
               "%d shared, routed_scaling_factor %g%s\n", e->first, e->experts, e->inter, e->top_k, ROUTER[e->method],
               e->groups ? "; n_group " : "", e->groups, e->groups ? ", topk_group " : "", e->topk_group, e->shared,
               e->scale, e->norm_topk ? ", norm_topk_prob" : "");
    print_kv_line(c, &b);
    printf("; its %d heads' own keys and values would take %s B\n", c->heads, grouped(mha, m, sizeof m));
}

/* A model's sizes, and what a traced pass holds: per token at 512 tokens (or
 * its context, if shorter) and at its context length, as the budget weighs it. */
static int model_info(const char *name)
{
    attn_model_config c;
    attn_error err;
    char b[32], c1[32], c2[32], why[320];
    if (attn_model_check(name, &c, &err)) { /* config.json and the weights' headers, no weight read */
        fprintf(stderr, "attnlab info: %s\n", err.msg);
        return CLI_EFILE;
    }
    printf("model %s (%s): %d layers, d_model %d, heads %d, kv_heads %d, head_dim %d, MLP %d, vocabulary %d, "
           "context %d\n", name, attn_arch_name(c.arch.kind), c.layers, c.d, c.heads, c.kv_heads, c.head_dim, c.ffn, c.vocab, c.max_pos);
    print_rope_scaling(&c);
    print_model_kv(&c);
    int typical = c.max_pos < 512 ? c.max_pos : 512;
    double at = attn_model_trace_bytes(&c, typical, false), full = attn_model_trace_bytes(&c, c.max_pos, false);
    attn_budget budget = attn_budget_get(0, true);
    /* per token at a typical length: the attention weights grow with the square of the tokens */
    printf("  a traced pass (every stage of every layer kept): %.2f MiB per token at %d tokens (%s in all); "
           "%s at its context of %d tokens, %s with one layer's attention weights\n", at / typical / (1 << 20),
           typical, attn_budget_size(at, b, sizeof b), attn_budget_size(full, c1, sizeof c1), c.max_pos,
           attn_budget_size(attn_model_trace_bytes(&c, c.max_pos, true), c2, sizeof c2));
    /* logits and probs are reserved whole (the budget counts them) but computed, and held, for the rows read */
    double head = attn_model_head_row_bytes(&c);
    printf("  of which logits and probs, %s per token, are computed and take memory only for the rows read (the "
           "next-token row, a view of them, a trace file): %.2f MiB per token without them\n", attn_budget_size(head, b, sizeof b),
           (at / typical - head) / (1 << 20));
    printf("  here a trace may take up to %s\n", attn_budget_explain(&budget, why, sizeof why));
    return CLI_OK;
}

static void summary_usage(void)
{
    printf("Usage: attnlab summary [config flags]\n\n"
           "Runs the configuration (the built-in example by default) and prints its\n"
           "trace: settings, stages with shapes and formulas, and head 0's weights.\n\n");
    cli_print_config_help();
}

int cmd_info(int argc, char **argv)
{
    cli_args a;
    attn_trace tr;
    attn_error err;
    int rc = cli_start(argc, argv, "info", 0, argc, info_usage, &a); /* counted below */
    if (rc >= 0) goto out;
    rc = CLI_OK;
    if (a.cfg.model && !a.n_positional) {
        rc = model_info(a.cfg.model);
        goto out;
    }
    if (a.n_positional != 1) {
        fprintf(stderr, "attnlab info: expected one trace file (attnlab info FILE.safetensors) or --model NAME|DIR\n");
        rc = CLI_EUSAGE;
        goto out;
    }
    /* described, not loaded: no tensor is widened or read, whatever the file's size */
    attn_status st = attn_trace_describe(a.positional[0], &tr, &err);
    if (st) {
        fprintf(stderr, "attnlab info: %s\n", err.msg);
        rc = CLI_EFILE; /* any failure to load a file, even an odd config in it */
        goto out;
    }
    cli_term_put(stdout, a.positional[0]);
    printf(": ");
    print_header(&tr);
    print_memory(&tr);
    print_stage_table(&tr);
    cli_warn_nonfinite("info", &tr);
    attn_trace_free(&tr);
out:
    cli_args_free(&a);
    return rc;
}

int cmd_summary(int argc, char **argv)
{
    cli_args a;
    attn_trace tr;
    attn_error err;
    int rc = cli_start(argc, argv, "summary", 0, 0, summary_usage, &a);
    if (rc >= 0) goto out;
    rc = CLI_OK;
    cli_open_as_trained("summary", &a);
    attn_status st = attn_trace_run(&a.cfg, NULL, &tr, &err);
    if (st) {
        fprintf(stderr, "attnlab summary: %s\n", err.msg);
        rc = cli_exit_code(st);
        goto out;
    }
    print_header(&tr);
    print_memory(&tr);
    print_stage_table(&tr);
    print_weights(&tr);
    cli_warn_nonfinite("summary", &tr);
    attn_trace_free(&tr);
out:
    cli_args_free(&a);
    return rc;
}
