/* cmd_ui.c — the visualizer's commands: the window, `view FILE`, `render`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "platform/sdl/ui.h"

static void window_usage(void)
{
    printf("Usage: attnlab window [--present] [--layer N] [config flags]   (or just: attnlab [config flags])\n\n"
           "Opens the visualizer on the built-in example, or on the configuration the\n"
           "flags describe. Press ? in the window for its keys. --present starts in\n"
           "presenter mode (F5): fullscreen, large text, the toolbar when the mouse moves.\n"
           "--layer N shows layer N (from 0); a model's, as soon as it is traced, while\n"
           "the layers after it are traced.\n\n");
    cli_print_config_help();
}

static void view_usage(void)
{
    printf("Usage: attnlab view [--present] [--layer N] FILE.safetensors\n\n"
           "Opens a saved trace (attnlab's own, or another program's written in the same\n"
           "contract) in the visualizer.\n");
}

static void render_usage(void)
{
    printf("Usage: attnlab render [config flags] [--stage NAME] [--head N] [--batch-index I]\n"
           "                      [--view single|grid|compare|geometry|training|tiles|experts] [--compare KIND]\n"
           "                      [--row I] [--decode-step N] [--tile N] [--size WxH] [--font-scale F] [--scale N]\n"
           "                      [--lesson FILE.md [--step N]] [--picker] [--lang en|zh] [--present]\n"
           "                      [FILE.safetensors] -o FILE.png|FILE.svg|FILE.pdf|FILE.csv\n\n"
           "Draws the picture the window would show, without a display (SDL's offscreen\n"
           "driver), and writes it as the output's extension says: a PNG, vectors through\n"
           "cairo (SVG, or PDF with its text selectable and its fonts embedded), or the\n"
           "matrix the picture shows as CSV. With a trace file, draws that trace; with\n"
           "--lesson, step N of that lesson (its panel and the view it sets). --present\n"
           "draws it as presenter mode (F5) shows it: text at least 1.5x (--font-scale\n"
           "for more), the toolbar hidden, at 1920x1080 unless --size says otherwise.\n"
           "--compare KIND: the setting the compare view toggles: causal, padding, fill,\n"
           "window, keep_first, alibi, softcap, qk_norm, sink or mla_absorb (naive beside\n"
           "absorbed, with --mode mla). --tile N: the FlashAttention view (with --tiles)\n"
           "at key tile N, from 1 as the view counts them (] pressed N - 1 times).\n\n");
    cli_print_config_help();
}

static int finish(const char *cmd, int rc, int exit_code, const char *err)
{
    if (rc) fprintf(stderr, "attnlab%s%s: %s\n", cmd[0] ? " " : "", cmd, err);
    return rc ? exit_code : CLI_OK;
}

int cmd_window(int argc, char **argv)
{
    cli_args a;
    char err[512];
    int code = CLI_OK;
    int rc = cli_start(argc, argv, "window", CLI_OPT_PRESENT | CLI_OPT_LAYER, 0, window_usage, &a);
    if (rc < 0) {
        cli_reserve_window();
        cli_open_as_trained("window", &a);
        int st = sdl_window_run(&a.cfg, NULL, a.pic.view.layer, a.present, err, sizeof err, &code);
        rc = finish("window", st, code, err);
    }
    cli_args_free(&a);
    return rc;
}

int cmd_view(int argc, char **argv)
{
    cli_args a;
    char err[512];
    int code = CLI_OK;
    int rc = cli_start(argc, argv, "view", CLI_OPT_PRESENT | CLI_OPT_LAYER, 1, view_usage, &a);
    if (rc < 0 && a.n_positional != 1) {
        fprintf(stderr, "attnlab view: expected one trace file (attnlab view FILE.safetensors)\n");
        rc = CLI_EUSAGE;
    }
    if (rc < 0) {
        cli_reserve_window();
        int st = sdl_window_run(&a.cfg, a.positional[0], a.pic.view.layer, a.present, err, sizeof err, &code);
        rc = finish("view", st, code, err);
    }
    cli_args_free(&a);
    return rc;
}

int cmd_render(int argc, char **argv)
{
    cli_args a;
    char err[1024];
    int code = CLI_OK;
    int rc = cli_start(argc, argv, "render", CLI_OPT_OUTPUT | CLI_OPT_PICTURE | CLI_OPT_PRESENT, 1, render_usage, &a);
    if (rc < 0 && !a.output) {
        fprintf(stderr, "attnlab render: no output file: use -o FILE.png (or .svg, .pdf, .csv)\n");
        rc = CLI_EUSAGE;
    }
    if (rc < 0) {
        const char *path = a.n_positional ? a.positional[0] : NULL;
        a.pic.present = a.present;
        if (a.present && !a.pic.width) { /* a projector's screen */
            a.pic.width = 1920;
            a.pic.height = 1080;
        }
        if ((rc = cli_reserve_picture(&a.pic, &a.cfg, "render"))) goto out;
        cli_open_as_trained("render", &a);
        cli_progress shown;
        a.pic.watch = cli_progress_start(&shown, "render", "tracing");
        int st = sdl_render_png(&a.cfg, path, &a.pic, a.output, err, sizeof err, &code);
        cli_progress_stop(&shown);
        rc = finish("render", st, code, err);
        if (rc == CLI_OK && err[0]) fprintf(stderr, "attnlab render: warning: %s; every stage computed from it can hold it too\n", err);
        if (rc == CLI_OK) printf("wrote %s\n", a.output);
    }
out:
    cli_args_free(&a);
    return rc;
}
