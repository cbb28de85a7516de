/* cmd_bench.c — `attnlab bench [config] [--repeat N]`: times full traced forward passes. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/cli.h"
#include "engine/forward.h"
#include "ui/ui.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

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
    attn_inputs in = {0};
    const attn_tensor *t;
    if ((t = attn_trace_find(&first, "w_q"))) in.w_q = t->data;
    if ((t = attn_trace_find(&first, "w_k"))) in.w_k = t->data;
    if ((t = attn_trace_find(&first, "w_v"))) in.w_v = t->data;
    if ((t = attn_trace_find(&first, "w_o"))) in.w_o = t->data;
    if ((t = attn_trace_find(&first, "x"))) in.x = t->data;
    if ((t = attn_trace_find(&first, "x_past"))) in.x_past = t->data;
    if ((t = attn_trace_find(&first, "memory"))) in.memory = t->data;
    for (int i = 0; i < n && st == ATTN_OK; i++) {
        double t0 = now_ms();
        if ((st = attn_trace_run(&a.cfg, &in, &tr, &err))) break;
        ms[i] = now_ms() - t0;
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
        qsort(ms, (size_t)n, sizeof *ms, cmp_double);
        double med = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
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
