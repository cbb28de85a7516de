/* main.c — attnlab: dispatches subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/app.h"
#include "cli/cli.h"
#include "engine/base/mapping.h"
#include "engine/run/forward.h"

static void usage(FILE *out)
{
    fprintf(out,
            "attnlab — step through masked multi-head attention\n\n"
            "Usage:\n"
            "  attnlab [config]             open the visualizer (the built-in example without flags)\n"
            "  attnlab view FILE            open a saved trace in the visualizer\n"
            "  attnlab render [config] [--stage NAME] [--head N] [--view single|grid|compare] -o FILE.png\n"
            "                               draw the visualizer's picture without a display\n"
            "  attnlab lessons              pick a lesson of the course (--lang en|zh)\n"
            "  attnlab lesson FILE.md       open one lesson; --check FILE... validates lessons\n"
            "  attnlab summary [config]     run a configuration and print its trace\n"
            "  attnlab trace [config] -o FILE.safetensors\n"
            "                               write every intermediate tensor to a file\n"
            "  attnlab info FILE            configuration and stages of a trace file\n"
            "  attnlab models               the shipped trained models\n"
            "  attnlab generate --model NAME --text TEXT [--max-new N] [--temperature T] [--top-k K] [--seed S] [--allow-unk]\n"
            "                               continue a text with a trained model (it stops at </s>;\n"
            "                               <unk> is never chosen unless --allow-unk)\n"
            "  attnlab stream --model NAME [--policy all,window,sink] [--window W] [--keep-first N]\n"
            "                               a long text over a KV cache that evicts (StreamingLLM): the loss\n"
            "  attnlab bench [config] [--repeat N]\n"
            "                               time traced forward passes\n"
            "  attnlab bench [config] --frames N [--view single|grid]\n"
            "                               time rendered frames\n\n"
            "Each command takes --help. Exit status: 0 ok, 1 bad file, 2 bad usage or config.\n");
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) return cmd_window(argc, argv);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("attnlab 0.1.0\n");
        return CLI_OK;
    }
    if (!strcmp(cmd, "trace")) return cmd_trace(argc - 1, argv + 1);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "summary")) return cmd_summary(argc - 1, argv + 1);
    if (!strcmp(cmd, "render")) return cmd_render(argc - 1, argv + 1);
    if (!strcmp(cmd, "window")) return cmd_window(argc - 1, argv + 1);
    if (!strcmp(cmd, "view")) return cmd_view(argc - 1, argv + 1);
    if (!strcmp(cmd, "lesson")) return cmd_lesson(argc - 1, argv + 1);
    if (!strcmp(cmd, "lessons")) return cmd_lessons(argc - 1, argv + 1);
    if (!strcmp(cmd, "generate")) return cmd_generate(argc - 1, argv + 1);
    if (!strcmp(cmd, "models")) return cmd_models(argc - 1, argv + 1);
    if (!strcmp(cmd, "stream")) return cmd_stream(argc - 1, argv + 1);
    if (cmd[0] == '-') return cmd_window(argc, argv); /* config flags alone: the window on that config */
    fprintf(stderr, "attnlab: unknown command '%s' (see attnlab --help)\n", cmd);
    return CLI_EUSAGE;
}

/* OpenMP's idle threads spin, waiting for the next parallel loop, before they
 * sleep (libgomp: 300,000 turns, about a millisecond). Alone on the machine
 * that saves a wake-up per loop; beside another busy process it burns the
 * core that process needs, and each loop waits for a thread the kernel has
 * descheduled: attnlab's decoding slowed 20× under one competitor (issue 25).
 * So attnlab waits passively (OMP_WAIT_POLICY=passive: sleep at once) unless
 * the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT. libgomp reads them when it
 * is loaded, before main, so attnlab runs itself again with the setting
 * (once: then it is set); if that cannot be done, it runs on as it is. */
static void wait_passively(char **argv)
{
#ifdef _OPENMP
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || setenv("OMP_WAIT_POLICY", "passive", 1)) return;
    /* by its own path, so that the process is still named attnlab (ps, top,
     * pkill), not "exe" after /proc/self/exe; that link only if unreadable */
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) self[n] = '\0';
    execv(n > 0 && access(self, X_OK) == 0 ? self : "/proc/self/exe", argv);
    unsetenv("OMP_WAIT_POLICY"); /* still here: this process's libgomp keeps its default */
#else
    (void)argv;
#endif
}

int main(int argc, char **argv)
{
    attn_forward_choose_kernels(); /* OpenBLAS's kernels for this CPU (forward.h); kept if it runs itself again */
    wait_passively(argv);
    /* a trace or model file cut short while it is mapped: one line naming it,
     * exit 1, instead of death by SIGBUS (engine/mapping.h) */
    char who[64];
    attn_error err;
    snprintf(who, sizeof who, "attnlab%s%.40s", argc > 1 && argv[1][0] != '-' ? " " : "",
             argc > 1 && argv[1][0] != '-' ? argv[1] : "");
    if (attn_mapping_guard(who, &err)) fprintf(stderr, "attnlab: %s\n", err.msg); /* and on, unguarded */
    int rc = dispatch(argc, argv);
    if (app_job_abandoned()) { /* the window quit (app_leave): end now, without the libraries'
                                   * exit handlers running under a worker that may still compute */
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}
