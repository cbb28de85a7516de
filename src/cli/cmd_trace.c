/* cmd_trace.c — `attnlab trace [config] -o FILE.safetensors` */
#include <stdio.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "engine/formats/trace_io.h"
#include "engine/run/forward.h"

static void usage(void)
{
    printf("Usage: attnlab trace [config flags] -o FILE.safetensors\n\n"
           "Runs masked multi-head attention on the configuration and writes every\n"
           "intermediate tensor (x, q, k, v, ..., scores, mask, weights, context, out)\n"
           "to FILE.safetensors, readable with numpy or safetensors.numpy.load_file.\n\n");
    cli_print_config_help();
}

int cmd_trace(int argc, char **argv)
{
    cli_args a;
    attn_trace tr;
    attn_error err;
    int rc = cli_start(argc, argv, "trace", CLI_OPT_OUTPUT, 0, usage, &a);
    if (rc >= 0) goto out;
    rc = CLI_OK;
    if (!a.output) {
        fprintf(stderr, "attnlab trace: no output file: use -o FILE.safetensors\n");
        rc = CLI_EUSAGE;
        goto out;
    }
    cli_open_as_trained("trace", &a);
    cli_progress shown;
    attn_progress *watch = cli_progress_start(&shown, "trace", "tracing");
    attn_status st = attn_trace_run(&a.cfg, &(attn_inputs){.progress = watch}, &tr, &err);
    cli_progress_stop(&shown);
    if (st == ATTN_OK) {
        st = attn_trace_save(&tr, a.output, &err);
        if (st == ATTN_OK) {
            struct stat sb;
            double mib = stat(a.output, &sb) == 0 ? (double)sb.st_size / (1 << 20) : 0.0;
            printf("wrote %s: %d tensors, %.2f MiB\n", a.output, tr.n_tensors, mib);
            cli_warn_nonfinite("trace", &tr);
        }
        attn_trace_free(&tr);
    }
    if (st) {
        fprintf(stderr, "attnlab trace: %s\n", err.msg);
        rc = cli_exit_code(st);
    }
out:
    cli_args_free(&a);
    return rc;
}
