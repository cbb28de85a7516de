/* cmd_bench.c — `attnlab bench [config] [--repeat N]`: times full traced forward passes. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "engine/clock.h"
#include "engine/forward.h"
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
     * reuse them, so what is timed is the attention itself, every stage traced. */
    attn_trace first;
    attn_status st = attn_trace_run(&a.cfg, NULL, &first, &err);
    if (st) {
        fprintf(stderr, "attnlab bench: %s\n", err.msg);
        rc = cli_exit_code(st);
        goto out;
    }
    attn_inputs in;
    attn_inputs_from_trace(&first, &in);
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
        printf("config: batch %d, seq %d, d_model %d, heads %d, kv_heads %d, past %d, %s-attention\n", d->b, d->L,
               d->d, d->h, d->g, d->P, d->cross ? "cross" : "self");
        printf("min %.2f ms, max %.2f ms\n", ms[0], ms[n - 1]);
        printf("bench: %.2f ms per traced forward (median of %d), %.1f GFLOP/s\n", med, n, flops / (med * 1e6));
    }
    attn_trace_free(&first);
out:
    free(ms);
    cli_args_free(&a);
    return rc;
}
