/* cmd_bench.c — `attnlab bench [config] [--repeat N]`: times full traced forward passes. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "engine/clock.h"
#include "engine/forward.h"
#include "engine/model.h"
#include "ui/ui.h"

static void usage(void)
{
    printf("Usage: attnlab bench [config flags] [--repeat N]\n"
           "       attnlab bench [config flags] --frames N [--view single|grid|compare] [--size WxH]\n\n"
           "Times N traced forward passes (after one warm-up), allocation of every\n"
           "intermediate included, and prints the median.\n"
           "With --frames: renders N frames offscreen with the software renderer, each a\n"
           "full redraw, and times a config change (recompute + redraw); the last line is\n"
           "`render: X ms per frame (median)`.\n\n");
    cli_print_config_help();
}

int cmd_bench(int argc, char **argv)
{
    cli_args a;
    attn_trace tr;
    attn_error err;
    double *ms = NULL;
    int rc = cli_start(argc, argv, "bench", CLI_OPT_REPEAT | CLI_OPT_FRAMES | CLI_OPT_PICTURE, 0, usage, &a);
    if (rc >= 0) goto out;
    rc = CLI_OK;
    if (a.frames > 0) {
        char msg[512];
        int code = CLI_OK;
        if (ui_bench(&a.cfg, &a.pic, a.frames, msg, sizeof msg, &code)) {
            fprintf(stderr, "attnlab bench: %s\n", msg);
            rc = code;
        }
        goto out;
    }
    int n = a.repeat ? a.repeat : 5;
    ms = calloc((size_t)n, sizeof *ms);
    if (!ms) { rc = CLI_EFILE; goto out; }
    /* The warm-up run makes the inputs (embeddings, weights); the timed runs
     * reuse them, so what is timed is the attention itself, every stage traced.
     * A model is loaded once, as the window keeps it: what is timed is its
     * whole traced forward pass, as a toggle in the window recomputes it. */
    attn_trace first;
    attn_model model = {0};
    attn_status st = a.cfg.model ? attn_model_load(a.cfg.model, &model, &err) : ATTN_OK;
    if (!st) st = attn_trace_run(&a.cfg, &(attn_inputs){.model = a.cfg.model ? &model : NULL}, &first, &err);
    if (st) {
        fprintf(stderr, "attnlab bench: %s\n", err.msg);
        rc = cli_exit_code(st);
        attn_model_free(&model);
        goto out;
    }
    attn_inputs in;
    attn_inputs_from_trace(&first, &in);
    in.model = a.cfg.model ? &model : NULL;
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
        const attn_dims *d = &first.dims;
        /* multiply-adds of the five products: q, k+v, scores, context, out */
        double flops = 2.0 * d->b * d->s * d->d * d->d + 2.0 * 2.0 * d->b * d->n * d->d * d->g * d->k +
                       2.0 * 2.0 * d->b * d->h * (double)d->s * d->t * d->k + 2.0 * d->b * d->s * d->d * d->d;
        double med = attn_median(ms, n); /* sorts: ms[0] and ms[n-1] are min and max */
        printf("config: batch %d, seq %d, d_model %d, heads %d, kv_heads %d, past %d, %s-attention", d->b, d->L,
               d->d, d->h, d->g, d->P, d->cross ? "cross" : "self");
        if (a.cfg.model) printf(", model %s (%d layers, every stage traced)", model.name, first.n_layers);
        printf("\n");
        printf("min %.2f ms, max %.2f ms\n", ms[0], ms[n - 1]);
        if (a.cfg.model) /* the attention's products are a part of a model's: give tokens per second */
            printf("bench: %.2f ms per traced forward (median of %d), %.0f tokens/s\n", med, n,
                   d->b * d->s / (med / 1e3));
        else
            printf("bench: %.2f ms per traced forward (median of %d), %.1f GFLOP/s\n", med, n, flops / (med * 1e6));
    }
    attn_trace_free(&first);
    attn_model_free(&model);
out:
    free(ms);
    cli_args_free(&a);
    return rc;
}
