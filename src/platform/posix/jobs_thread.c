/* jobs_thread.c — the desktop's job service: a thread a request (jobs.h).
 * The web page's threaded build (emcc -pthread) uses it too: there a thread is a Web Worker. */
#define _GNU_SOURCE /* syscall(SYS_gettid): a thread's own nice value */
#include "jobs_thread.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif

struct app_task {
    pthread_t thread;
};

/* What the thread runs; its own, freed by it, so that a task left
 * (app_jobs_leave) can be freed before the thread has read it. */
typedef struct {
    app_task_fn *fn;
    void *arg;
} call;

/* On Linux each thread has a nice value of its own: +5 gives the window's
 * thread (and the display server) about three times this one's share of a
 * busy core. */
static void background(void)
{
#ifdef __linux__
    pid_t tid = (pid_t)syscall(SYS_gettid);
    errno = 0;
    int now = getpriority(PRIO_PROCESS, (id_t)tid);
    if (now != -1 || !errno) setpriority(PRIO_PROCESS, (id_t)tid, now + 5 < 19 ? now + 5 : 19);
#endif
}

static void *run(void *arg)
{
    call c = *(call *)arg;
    free(arg);
    background();
    app_task_finish(c.fn, c.arg);
    return NULL;
}

static app_task *start(app_task_fn *fn, void *arg)
{
    app_task *t = malloc(sizeof *t);
    call *c = malloc(sizeof *c);
    if (t && c) {
        *c = (call){fn, arg};
        if (!pthread_create(&t->thread, NULL, run, c)) return t;
    }
    free(c);
    free(t);
    return NULL;
}

static void join(app_task *t)
{
#ifdef __EMSCRIPTEN__
    /* The web page's thread (src/platform/web): the core joins a request once it has
     * said it is done, and by the next frame its thread has nearly always ended;
     * pthread_join is called (and warns that the page's thread may block) only if not. */
    if (!pthread_tryjoin_np(t->thread, NULL)) {
        free(t);
        return;
    }
#endif
    pthread_join(t->thread, NULL);
    free(t);
}

static void leave(app_task *t)
{
    pthread_detach(t->thread);
    free(t);
}

const app_jobs *posix_jobs(void)
{
    static const app_jobs jobs = {start, join, leave};
    return &jobs;
}
