/* cmd_bench.c — `attnlab bench [config] [--repeat N]`: times full traced forward passes. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli/cli.h"
#include "engine/forward.h"

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

int cmd_bench(int argc, char **argv)
{
    cli_args a;
    attn_trace tr;
    attn_error err;
    double *ms = NULL;
    int rc = cli_parse(argc, argv, "bench", CLI_OPT_REPEAT, &a);
    if (rc) goto out;
    if (a.help) {
        printf("Usage: attnlab bench [config flags] [--repeat N]\n\n"
               "Times N traced forward passes (after one warm-up), allocation of every\n"
               "intermediate included, and prints the median.\n\n");
        cli_print_config_help();
        goto out;
    }
    if (a.n_positional) {
        fprintf(stderr, "attnlab bench: unexpected argument '%s'\n", a.positional[0]);
        rc = CLI_EUSAGE;
        goto out;
    }
    int n = a.repeat ? a.repeat : 5;
    ms = calloc((size_t)n, sizeof *ms);
    if (!ms) { rc = CLI_EFILE; goto out; }
    for (int i = -1; i < n; i++) { /* i = -1: warm-up */
        double t0 = now_ms();
        attn_status st = attn_trace_run(&a.cfg, NULL, &tr, &err);
        if (st) {
            fprintf(stderr, "attnlab bench: %s\n", err.msg);
            rc = cli_exit_code(st);
            goto out;
        }
        if (i >= 0) ms[i] = now_ms() - t0;
        if (i == n - 1) {
            const attn_dims *d = &tr.dims;
            /* multiply-adds of the five products: q, k+v, scores, context, out */
            double flops = 2.0 * d->b * d->s * d->d * d->d + 2.0 * 2.0 * d->b * d->n * d->d * d->g * d->k +
                           2.0 * 2.0 * d->b * d->h * (double)d->s * d->t * d->k + 2.0 * d->b * d->s * d->d * d->d;
            qsort(ms, (size_t)n, sizeof *ms, cmp_double);
            double med = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
            printf("config: batch %d, seq %d, d_model %d, heads %d, kv_heads %d, past %d, %s\n", d->b, d->L, d->d,
                   d->h, d->g, d->P, d->cross ? "cross" : "self");
            printf("min %.2f ms, max %.2f ms\n", ms[0], ms[n - 1]);
            printf("bench: %.2f ms per traced forward (median of %d), %.1f GFLOP/s\n", med, n,
                   flops / (med * 1e6));
        }
        attn_trace_free(&tr);
    }
out:
    free(ms);
    cli_args_free(&a);
    return rc;
}
