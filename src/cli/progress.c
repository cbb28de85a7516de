/* progress.c — a long command's progress on stderr, when stderr is a terminal.
 *
 * The command runs as always, watched (attention.h's attn_progress); a
 * thread of this file's reads where the run is four times a second and
 * rewrites one line: the weights read, the tokenizer built, the layer
 * traced, the time so far and the time left. Nothing is printed when stderr
 * is not a terminal (a pipe, a file, a test), so that the output the
 * commands document stays as it is. ATTNLAB_PROGRESS_MS sets another
 * interval (the tests' quick runs: 20). */
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "engine/base/budget.h"
#include "engine/base/clock.h"

/* The line for where p's run is now; "" before it has begun. */
static void line(const cli_progress *p, char *buf, size_t size)
{
    const attn_progress *w = &p->watch;
    double ms = attn_clock_ms() - p->started, left_ms;
    char what[160], left[48] = "";
    switch (atomic_load(&w->phase)) {
    case ATTN_PHASE_READING: {
        char done[32], total[32];
        double d = (double)atomic_load(&w->bytes_done), t = (double)atomic_load(&w->bytes_total);
        snprintf(what, sizeof what, "reading the weights: %s of %s", attn_budget_size(d, done, sizeof done),
                 attn_budget_size(t, total, sizeof total));
        break;
    }
    case ATTN_PHASE_TOKENIZER: snprintf(what, sizeof what, "building the tokenizer"); break;
    case ATTN_PHASE_TRACING: {
        int layers = atomic_load(&w->layers), done = atomic_load(&w->layers_done);
        snprintf(what, sizeof what, "%s layer %d of %d", p->what, done < layers ? done : layers - 1, layers);
        break;
    }
    default: buf[0] = '\0'; return;
    }
    attn_progress_fraction(w, &left_ms);
    if (left_ms >= 0) snprintf(left, sizeof left, ", about %.0f s left", left_ms / 1000);
    snprintf(buf, size, "attnlab %s: %s (%.1f s%s)", p->cmd, what, ms / 1000, left);
}

static void *watch_loop(void *arg)
{
    cli_progress *p = arg;
    char buf[256];
    const char *env = getenv("ATTNLAB_PROGRESS_MS");
    long ms = env ? strtol(env, NULL, 10) : 0;
    if (ms < 1 || ms > 999) ms = 250;
    while (!atomic_load(&p->stop)) {
        nanosleep(&(struct timespec){0, ms * 1000000L}, NULL);
        if (atomic_load(&p->stop)) break;
        line(p, buf, sizeof buf);
        if (!buf[0]) continue;
        fprintf(stderr, "\r%s\033[K", buf); /* the line rewritten in place, its old tail cleared */
        fflush(stderr);
        p->shown = true;
    }
    return NULL;
}

attn_progress *cli_progress_start(cli_progress *p, const char *cmd, const char *what)
{
    memset(p, 0, sizeof *p);
    attn_progress_init(&p->watch);
    atomic_init(&p->stop, false);
    p->cmd = cmd;
    p->what = what;
    p->started = attn_clock_ms();
    p->on = isatty(STDERR_FILENO) && pthread_create(&p->thread, NULL, watch_loop, p) == 0;
    return &p->watch;
}

void cli_progress_stop(cli_progress *p)
{
    if (!p->on) return;
    atomic_store(&p->stop, true);
    pthread_join(p->thread, NULL);
    p->on = false;
    if (p->shown) fputs("\r\033[K", stderr); /* the line gone: what the command prints next starts clean */
    fflush(stderr);
}
