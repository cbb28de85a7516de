/* cmd_bench.c — `attnlab bench [config] [--repeat N]`: times full traced forward passes. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/base/clock.h"
#include "engine/model/model.h"
#include "engine/model/model_run.h"
#include "engine/run/forward.h"
#include "engine/run/generate.h"
#include "engine/run/kv_cache.h"
#include "engine/run/untraced.h"
#include "platform/sdl/ui.h"

static void usage(void)
{
    printf("Usage: attnlab bench [config flags] [--repeat N]\n"
           "       attnlab bench --model NAME|DIR --text TEXT [--repeat N] [--generate N]\n"
           "       attnlab bench [config flags] --frames N [--view single|grid|compare] [--size WxH]\n\n"
           "Times N traced forward passes (after one warm-up), allocation of every\n"
           "intermediate included, and prints the median. As in the window, each pass\n"
           "reuses the memory of the one before; the first one's, fresh, is printed\n"
           "apart. With a model that is the prefill: prefill tokens/s; then the same\n"
           "tokens N times through the untraced prefill (the KV cache, nothing traced,\n"
           "as `generate` runs a prompt): `prefill untraced:` and traced/untraced; then\n"
           "`first pass / untraced`, with the new memory that pass wrote and how fast this\n"
           "machine writes new memory the first time (a fresh 256 MiB block).\n"
           "With --generate N: then times N greedy decoding steps over the KV cache and\n"
           "prints decode tokens/s (median step): `decode:` with nothing traced, as a\n"
           "deployed model decodes, and how that compares with reading the weights a step\n"
           "reads and nothing else (`decode reads`: its read bound on this machine, read\n"
           "once after each step), then `decode traced:` with each step a traced pass of\n"
           "one new token, as the window shows it.\n"
           "With --tiles BQxBK and no model: times the layer untraced instead, its\n"
           "attention by FlashAttention's tiles, holding no s x t matrix (`untraced\n"
           "tiled:`), and says what the same layer traced would hold.\n"
           "With --frames: renders N frames offscreen with the software renderer, each a\n"
           "full redraw, and times a config change (recompute + redraw); the last line is\n"
           "`render: X ms per frame (median)`.\n\n");
    cli_print_config_help();
}

/* The weights a decoding step reads (attn_model_step_matrices), read alone
 * by the same threads (attn_wmat_stream) once after each timed step: its
 * read bound, measured in the same stretch of the run as the steps: on a
 * shared machine the same bytes read in 41 to 88 ms within minutes (the
 * 2-core VM, TinyLlama's step), more than the gap being measured. ms[i] is
 * the read after step i. */
typedef struct {
    attn_wmat *w;
    int n;
    double *ms;
    volatile uint64_t sink; /* the bytes' sum, so the read is not left out */
} step_reads;

/* N greedy steps after the prompt, each timed, traced or not, each followed
 * by one read of the step's weights when reads is not NULL: the median's
 * tokens/s printed on a line that starts with label, its ms in *median. */
static int time_steps(const attn_model *m, const attn_config *cfg, int steps, bool traced, const char *label,
                      double *median, step_reads *reads)
{
    attn_generator g;
    attn_error err;
    attn_sampling greedy = {.seed = cfg->seed}; /* <unk> left out, as generate does */
    double *ms = calloc((size_t)steps, sizeof *ms);
    attn_status st = !ms ? attn_fail(&err, ATTN_ERR_NOMEM, "out of memory")
                   : traced ? attn_generator_init(&g, m, cfg, &err) : attn_generator_init_untraced(&g, m, cfg, &err);
    bool live = st == ATTN_OK; /* g holds something to free */
    int done = 0, prompt = live ? g.n : 0;
    if (!st && reads) reads->sink += attn_wmat_stream(reads->w, reads->n); /* the weights in, as the prompt had them */
    for (; !st && done < steps; done++) {
        int next;
        double t0 = attn_clock_ms();
        if ((st = attn_generator_step(&g, &greedy, &next, &err))) break;
        ms[done] = attn_clock_ms() - t0;
        if (!reads) continue;
        t0 = attn_clock_ms();
        reads->sink += attn_wmat_stream(reads->w, reads->n);
        reads->ms[done] = attn_clock_ms() - t0;
    }
    if (live) attn_generator_free(&g);
    if (st) {
        fprintf(stderr, "attnlab bench: decoding step %d: %s\n", done + 1, err.msg);
        free(ms);
        return cli_exit_code(st);
    }
    double med = *median = attn_median(ms, steps);
    printf("%s: %.2f ms per token (median of %d steps after a prompt of %d; min %.2f, max %.2f), %.1f tokens/s\n",
           label, med, steps, prompt, ms[0], ms[steps - 1], 1e3 / med);
    free(ms);
    return CLI_OK;
}

/* Decoding as a deployed model does it (the KV cache, nothing traced), with
 * its read bound (step_reads), then as the window shows it (each step a
 * traced pass). */
static int bench_decode(const attn_model *m, const attn_config *cfg, int steps)
{
    double untraced, traced;
    int n = attn_model_step_matrices(m, NULL, 0);
    step_reads reads = {malloc((size_t)n * sizeof *reads.w), n, malloc((size_t)steps * sizeof *reads.ms), 0};
    if (!reads.w || !reads.ms) {
        free(reads.w), free(reads.ms);
        fprintf(stderr, "attnlab bench: out of memory\n");
        return cli_exit_code(ATTN_ERR_NOMEM);
    }
    attn_model_step_matrices(m, reads.w, n);
    int rc = time_steps(m, cfg, steps, false, "decode", &untraced, &reads);
    if (!rc) {
        double bytes = (double)attn_wmat_bytes(reads.w, n), read = attn_median(reads.ms, steps);
        printf("decode reads %.0f MB of weights a token; read alone by the same threads they take %.2f ms "
               "(%.1f GB/s, median of %d passes, one after each step): decode at %.2fx that read bound\n",
               bytes / 1e6, read, bytes / read / 1e6, steps, untraced / read);
    }
    free(reads.w), free(reads.ms);
    return rc ? rc : time_steps(m, cfg, steps, true, "decode traced", &traced, NULL);
}

/* The first trace: the inputs of the timed runs. It stays while each timed
 * one is made, so two traces count against the budget, checked here once:
 * every later run of cfg is then given what is left beside the first trace
 * (max_bytes), not a budget measured again with the first trace and the
 * compute threads already mapped, which would count them twice. */
/* The model's estimate from the model loaded (attn_trace_estimate would load it again). */
static attn_status estimate(const attn_config *cfg, const attn_model *model, double *bytes, attn_error *err)
{
    return model ? attn_model_trace_estimate(model, cfg, bytes, err) : attn_trace_estimate(cfg, bytes, err);
}

static attn_status first_trace(attn_config *cfg, const attn_model *model, attn_progress *watch, attn_trace *first,
                               attn_error *err)
{
    double one = 0;
    attn_budget budget = attn_config_budget(cfg);
    /* the size of one trace, not refused by itself against the whole budget; a
     * model's keeps one layer's attention weights when two whole ones would not fit */
    attn_config probe = *cfg; /* shallow: only max_bytes differs, nothing is freed */
    probe.max_bytes = cfg->model ? budget.bytes / 2 : HUGE_VAL;
    attn_status st = estimate(&probe, model, &one, err);
    if (st == ATTN_ERR_CONFIG && cfg->model) { /* too large even so: the whole one's size, for the message */
        probe.max_bytes = HUGE_VAL;
        if (estimate(&probe, model, &one, NULL) == ATTN_OK) st = ATTN_OK;
    }
    if (!st && 2 * one > budget.bytes) {
        char size[32], bound[200];
        return attn_fail(err, ATTN_ERR_CONFIG, "bench holds two traces of about %s each, more than %s; use a shorter "
                         "text, fewer rows or a larger limit", attn_budget_size(one, size, sizeof size),
                         attn_budget_text(&budget, bound, sizeof bound));
    }
    if (!st) cfg->max_bytes = budget.bytes - one;
    return st ? st : attn_trace_run(cfg, &(attn_inputs){.model = model, .progress = watch}, first, err);
}

/* This machine's first write into new memory, taken as a trace's arena takes
 * it (attn_arena_take without a store: huge pages advised): GB/s over a fresh
 * 256 MiB block, or 0 when it cannot be had. A virtual machine may hand its
 * guests memory its host must first find (10x slower than memory written
 * before): then a pass on new memory is mostly that. */
static double new_memory_gbps(void)
{
    size_t size, bytes = (size_t)256 << 20;
    volatile char *p = attn_arena_take(NULL, bytes, &size);
    if (!p) return 0;
    double t0 = attn_clock_ms();
    memset((char *)p, 1, bytes);
    double ms = attn_clock_ms() - t0;
    int seen = p[bytes - 1];
    attn_arena_give(NULL, (void *)p, size);
    return ms > 0 && seen ? bytes / (ms * 1e6) : 0;
}

/* The first pass, on new memory, against the untraced prefill (med), and how
 * much of it this machine's first write of that memory explains. */
static void first_pass_line(const attn_trace *first, double first_ms, double med)
{
    double bytes = attn_trace_arena_bytes(first), later = 0, gbps = new_memory_gbps();
    for (int i = 0; i < first->n_tensors; i++) /* made when read (trace.h's attn_lazy): none is, here */
        if (first->tensors[i].lazy) later += (double)first->tensors[i].count * sizeof(float);
    bytes -= later;
    char size[32], size_later[32];
    printf("first pass / untraced %.2f: it wrote %s of new memory (%s more as its masked scores, logits and probs "
           "are read)",
           first_ms / med, attn_budget_size(bytes, size, sizeof size), attn_budget_size(later, size_later,
                                                                                        sizeof size_later));
    if (gbps > 0)
        printf(", which this machine writes the first time at %.2f GB/s (a fresh 256 MiB block): about %.0f ms "
               "of the pass", gbps, bytes / (gbps * 1e6));
    printf("\n");
}

/* The traced pass's tokens through attn_kv_prefill, n times after a warm-up,
 * the cache's memory reused as the traced passes reuse theirs: the median
 * beside the traced pass's (traced_ms). */
static int bench_prefill(const attn_model *m, const attn_trace *first, int n, double traced_ms, double first_ms)
{
    attn_kv_cache c;
    attn_error err;
    int len = first->dims.L;
    if (first->dims.b != 1) {
        printf("prefill untraced: not timed (it runs one text, not %d rows)\n", first->dims.b);
        return CLI_OK;
    }
    double *ms = calloc((size_t)n, sizeof *ms);
    float *logits = malloc((size_t)m->cfg.vocab * sizeof *logits);
    attn_status st = ms && logits ? attn_kv_init(&c, m, &err) : attn_fail(&err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = -1; !st && i < n; i++) {
        c.n = 0;
        double t0 = attn_clock_ms();
        st = attn_kv_prefill(&c, m, &first->cfg, first->token_ids, len, logits, &err);
        if (i >= 0) ms[i] = attn_clock_ms() - t0;
    }
    if (ms && logits) attn_kv_free(&c);
    if (!st) {
        double med = attn_median(ms, n);
        printf("prefill untraced: %.2f ms for %d tokens (median of %d; min %.2f, max %.2f), %.0f tokens/s; "
               "traced/untraced %.2f\n", med, len, n, ms[0], ms[n - 1], len / (med / 1e3), traced_ms / med);
        first_pass_line(first, first_ms, med);
    } else {
        fprintf(stderr, "attnlab bench: untraced prefill: %s\n", err.msg);
    }
    free(ms);
    free(logits);
    return st ? cli_exit_code(st) : CLI_OK;
}

/* --tiles without a model: n untraced tiled passes after a warm-up, and what
 * the traced pass would need beside what this one holds. */
static int bench_untraced(const attn_config *cfg, int n)
{
    attn_untraced u;
    attn_error err;
    double *ms = calloc((size_t)n, sizeof *ms), traced = 0;
    attn_status st = ms ? ATTN_OK : attn_fail(&err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = -1; !st && i < n; i++) {
        double t0 = attn_clock_ms();
        if ((st = attn_untraced_run(cfg, &u, &err))) break;
        if (i >= 0) ms[i] = attn_clock_ms() - t0;
        free(u.out);
    }
    if (st) {
        fprintf(stderr, "attnlab bench: %s\n", err.msg);
        free(ms);
        return cli_exit_code(st);
    }
    const attn_dims *d = &u.dims;
    char held[32], whole[32];
    attn_config plain = *cfg; /* shallow: only the tiles and the bound differ */
    plain.tiles = (attn_tiles){0, 0};
    plain.max_bytes = HUGE_VAL;
    bool sized = attn_trace_estimate(&plain, &traced, NULL) == ATTN_OK;
    double med = attn_median(ms, n);
    double flops = 4.0 * d->b * d->s * d->d * d->h * d->k + 4.0 * d->b * d->s * d->d * d->g * d->k +
                   4.0 * d->b * d->h * (double)d->s * d->t * d->k;
    printf("config: batch %d, seq %d, d_model %d, heads %d, kv_heads %d, tiles %dx%d, untraced\n", d->b, d->L, d->d,
           d->h, d->g, cfg->tiles.q, cfg->tiles.k);
    printf("untraced tiled: holds about %s (no s x t matrix: a %dx%d tile of scores per core)", 
           attn_budget_size(u.bytes, held, sizeof held), cfg->tiles.q, cfg->tiles.k);
    if (sized) printf("; the same layer traced would hold about %s, %s per head for each (s, t) stage",
                      attn_budget_size(traced, whole, sizeof whole),
                      attn_budget_size((double)d->b * d->s * d->t * sizeof(float), held, sizeof held));
    printf("\nmin %.2f ms, max %.2f ms\n", ms[0], ms[n - 1]);
    printf("bench: %.2f ms per untraced tiled forward (median of %d), %.1f GFLOP/s\n", med, n, flops / (med * 1e6));
    free(ms);
    return CLI_OK;
}

/* Prints the timed passes; returns their median. */
static double report(const attn_trace *first, const attn_model *model, double *ms, int n, const attn_arena *store)
{
    printf("first pass: %.2f ms, its memory new; the %ld after it reused it (%ld block%s allocated)\n", ms[0],
           store->lends, store->maps, store->maps == 1 ? "" : "s");
    const attn_dims *d = &first->dims;
    /* multiply-adds of the five products: q, k+v, scores, context, out */
    double flops = 2.0 * d->b * d->s * d->d * d->d + 2.0 * 2.0 * d->b * d->n * d->d * d->g * d->k +
                   2.0 * 2.0 * d->b * d->h * (double)d->s * d->t * d->k + 2.0 * d->b * d->s * d->d * d->d;
    double med = attn_median(ms, n); /* sorts: ms[0] and ms[n-1] are min and max */
    printf("config: batch %d, seq %d, d_model %d, heads %d, kv_heads %d, past %d, %s-attention", d->b, d->L, d->d,
           d->h, d->g, d->P, d->cross ? "cross" : "self");
    if (model) printf(", model %s (%d layers, every stage traced)", model->name, first->n_layers);
    printf("\nmin %.2f ms, max %.2f ms\n", ms[0], ms[n - 1]);
    if (model) /* the attention's products are a part of a model's: give tokens per second */
        printf("bench: %.2f ms per traced forward (median of %d), prefill %.0f tokens/s\n", med, n,
               d->b * d->s / (med / 1e3));
    else
        printf("bench: %.2f ms per traced forward (median of %d), %.1f GFLOP/s\n", med, n, flops / (med * 1e6));
    return med;
}

int cmd_bench(int argc, char **argv)
{
    cli_args a;
    attn_trace tr, first;
    attn_error err;
    attn_model model = {0};
    double *ms = NULL;
    int rc = cli_start(argc, argv, "bench", CLI_OPT_REPEAT | CLI_OPT_FRAMES | CLI_OPT_PICTURE | CLI_OPT_BENCH_DECODE, 0,
                       usage, &a);
    if (rc >= 0) goto out;
    rc = CLI_OK;
    if (a.decode_steps && (!a.cfg.model || a.frames)) {
        fprintf(stderr, "attnlab bench: --generate times a model's decoding: it needs --model and no --frames\n");
        rc = CLI_EUSAGE;
        goto out;
    }
    cli_open_as_trained("bench", &a);
    if (a.frames > 0) {
        char msg[512];
        int code = CLI_OK;
        if ((rc = cli_reserve_picture(&a.pic, &a.cfg, "bench"))) goto out;
        if (sdl_bench(&a.cfg, &a.pic, a.frames, msg, sizeof msg, &code)) {
            fprintf(stderr, "attnlab bench: %s\n", msg);
            rc = code;
        }
        goto out;
    }
    int n = a.repeat ? a.repeat : 5;
    if (a.cfg.tiles.q && !a.cfg.model) {
        rc = bench_untraced(&a.cfg, n);
        goto out;
    }
    if (!(ms = calloc((size_t)n, sizeof *ms))) { rc = CLI_EFILE; goto out; }
    /* The warm-up run makes the inputs (embeddings, weights); the timed runs
     * reuse them, so what is timed is the attention itself, every stage traced.
     * A model is loaded once, as the window keeps it: what is timed is its
     * whole traced forward pass, as a toggle in the window recomputes it. */
    const attn_model *m = a.cfg.model ? &model : NULL;
    cli_progress shown; /* the weights read and the warm-up pass traced: the long wait before the figures */
    attn_progress *watch = cli_progress_start(&shown, "bench", "tracing (warm-up)");
    attn_status st = m ? attn_model_load_watched(a.cfg.model, &model, watch, &err) : ATTN_OK;
    if (!st && (st = first_trace(&a.cfg, m, watch, &first, &err))) attn_model_free(&model);
    cli_progress_stop(&shown);
    if (st) {
        fprintf(stderr, "attnlab bench: %s\n", err.msg);
        rc = cli_exit_code(st);
        goto out;
    }
    attn_inputs in;
    attn_arena store; /* the timed passes' arenas: each reuses the one before's, as a toggle in the window does */
    attn_arena_init(&store);
    attn_inputs_from_trace(&first, &in);
    in.model = m;
    in.arena = &store;
    for (int i = 0; i < n && st == ATTN_OK; i++) {
        double t0 = attn_clock_ms();
        if ((st = attn_trace_run(&a.cfg, &in, &tr, &err))) break;
        ms[i] = attn_clock_ms() - t0;
        attn_trace_free(&tr);
    }
    if (st) {
        fprintf(stderr, "attnlab bench: %s\n", err.msg);
        rc = cli_exit_code(st);
    } else {
        double first_ms = ms[0]; /* before report sorts them */
        double traced = report(&first, m, ms, n, &store);
        if (m) rc = bench_prefill(m, &first, n, traced, first_ms);
    }
    attn_arena_free(&store);
    attn_trace_free(&first);
    if (!rc && a.decode_steps) rc = bench_decode(&model, &a.cfg, a.decode_steps);
    attn_model_free(&model);
out:
    free(ms);
    cli_args_free(&a);
    return rc;
}
