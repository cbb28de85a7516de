/* cli.h — the attnlab command line: shared flag parsing and the subcommands.
 * Exit codes: 0 success, 1 unreadable or invalid file, 2 usage or config error. */
#ifndef ATTNLAB_CLI_H
#define ATTNLAB_CLI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/attention/attention.h"
#include "engine/base/error.h"
#include "engine/trace/config.h"
#include "engine/trace/trace.h"
#include "platform/sdl/ui.h"

enum { CLI_OK = 0, CLI_EFILE = 1, CLI_EUSAGE = 2 };

/* Which non-config options a command accepts. */
enum {
    CLI_OPT_OUTPUT = 1, CLI_OPT_REPEAT = 2, CLI_OPT_PICTURE = 4, CLI_OPT_FRAMES = 8, CLI_OPT_GENERATE = 16,
    CLI_OPT_PRESENT = 32, CLI_OPT_BENCH_DECODE = 64, CLI_OPT_LAYER = 128
};

typedef struct {
    attn_config cfg;
    const char *output; /* -o FILE */
    int repeat;         /* --repeat N (bench) */
    int frames;         /* --frames N (bench of the renderer) */
    int max_new;        /* --max-new N (generate) */
    bool probs;         /* --probs (generate) */
    int decode_steps;   /* --generate N (bench) */
    long checkpoint;    /* --checkpoint N: cfg.model is then DIR/checkpoints/stepN; -1 none */
    app_picture pic;    /* --stage, --head, --batch-index, --view, --size, ... (render) */
    bool help;
    bool present;       /* --present (the window) */
    bool causal_given;  /* --causal, --no-causal or --reversed-causal was given */
    char **positional;  /* arguments that are not options, in order */
    int n_positional;
} cli_args;

/* Parses argv[1..] of subcommand `cmd` into a (initialised with defaults).
 * On error prints "attnlab CMD: message" to stderr and returns CLI_EUSAGE. */
int cli_parse(int argc, char **argv, const char *cmd, unsigned opts, cli_args *a);
void cli_args_free(cli_args *a);

/* The common start of a subcommand: parses, prints usage() for --help and
 * refuses more than max_positional arguments. Returns -1 to carry on, or the
 * exit code to return (0 after --help). Free a with cli_args_free either way. */
int cli_start(int argc, char **argv, const char *cmd, unsigned opts, int max_positional, void (*usage)(void),
              cli_args *a);

/* The output (-o) checked, before any work, against every file the command
 * reads (guard.c): its inputs, the model folder and the model it is a
 * checkpoint of, a lesson's models, the picker's lessons, the progress
 * folder. Returns CLI_OK, or CLI_EUSAGE after one line on stderr. */
int cli_guard_output(const char *cmd, const cli_args *a);

/* A note on stderr when `name`, a bare model name, is also a folder here:
 * the name means the shipped model, ./NAME the folder. */
void cli_note_model(const char *cmd, const char *name);

/* Every command that runs a model (the window, render, trace, summary,
 * generate, bench) opens it as it was trained unless the flags say otherwise:
 * the settings attn_model_as_trained decides, the window's own. For a model
 * trained without the causal mask (tang-nocausal, config.json's
 * attnlab_causal) that is the mask off, said in one note on stderr
 * ("attnlab CMD: note: ..."); an explicit --causal, --no-causal or
 * --reversed-causal wins. A model that cannot be read is left for the command
 * to report. */
void cli_open_as_trained(const char *cmd, cli_args *a);

/* Prints the config flags section of a --help text. */
void cli_print_config_help(void);

/* What a command maps besides its traces and compute threads, declared to the
 * memory budget (engine/budget.h) before anything is computed or loaded, so
 * that under `ulimit -v` the command is refused up front, not halfway.
 * The window: SDL, GL (with its threads) and fonts. A picture: its pixels,
 * which count against the ceiling (--memory-gib) with the traces too; a picture
 * over the ceiling by itself is refused: "attnlab CMD: ..." on stderr, CLI_EUSAGE. */
void cli_reserve_window(void);
int cli_reserve_picture(const app_picture *p, const attn_config *cfg, const char *cmd);

/* Text from a file (a trace's metadata, tokens, names) to the terminal:
 * control characters (C0, DEL, C1) and ill-formed UTF-8 bytes are printed
 * as escapes (\x1b, \u009b, \xff), never sent raw. cli_term_width: the
 * columns that takes (a CJK character two). */
void cli_term_put(FILE *f, const char *s);
int cli_term_width(const char *s);
/* Prints "attnlab CMD: warning: NaN first appears in ..." to stderr when the
 * data put a NaN or an infinity in tr (engine/nonfinite.h). */
void cli_warn_nonfinite(const char *cmd, const attn_trace *tr);

/* A long command's progress on stderr (progress.c): one line rewritten in
 * place while the run watched by the returned attn_progress goes on, when
 * stderr is a terminal; nothing otherwise. what names the traced pass
 * ("tracing", "reading the prompt"). cli_progress_stop clears the line. */
typedef struct {
    attn_progress watch;
    const char *cmd, *what;
    double started;
    atomic_bool stop;
    bool on, shown;
    pthread_t thread;
} cli_progress;
attn_progress *cli_progress_start(cli_progress *p, const char *cmd, const char *what);
void cli_progress_stop(cli_progress *p);

/* Exit code for an engine status. */
int cli_exit_code(attn_status st);

int cmd_trace(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_summary(int argc, char **argv);
int cmd_render(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_window(int argc, char **argv);
int cmd_lesson(int argc, char **argv);
int cmd_lessons(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_stream(int argc, char **argv);

#endif
