/* jobs.h — the platform's job service: work run away from the frame.
 *
 * The app core starts no thread. When it wants work done while the frame
 * goes on (a recomputation, a lesson read and checked, a progress save), it
 * hands the platform a request: a function and its argument. The request
 * says itself when it has ended (an atomic flag of the core's, its last
 * write); the core then joins it and installs the result on its own thread,
 * in one place (app_job.c's install for a recomputation).
 *
 *     app_task *t = app_jobs_start(app->jobs, work, arg);
 *     if (!t) app_task_finish(work, arg); // no service, or none to be had: here and now
 *     ... later, once arg says it is done:
 *     app_jobs_join(app->jobs, t);    // t freed (NULL: nothing to do)
 *     ... or, when the program ends without waiting:
 *     app_jobs_leave(app->jobs, t);   // it finishes on its own
 *
 * The desktop runs each request on a thread of its own at a lower priority
 * (src/platform/posix/jobs_thread.c), and so does the web page's threaded
 * build (a Web Worker a request). The single-threaded page runs each later on
 * its one thread, a piece a poll (jobs_pieces.c). The tests may give none
 * (NULL): every request then runs where it is made, the frame waiting for it. */
#ifndef APP_JOBS_H
#define APP_JOBS_H

#include <stdbool.h>

typedef struct app_task app_task;      /* one request under way: the service's own */

/* A request's work, done in pieces: each call does one and returns true while
 * some are left. A thread calls it again at once; the single-threaded page
 * calls it once a poll, so that a long request (a lesson checked a step at a
 * time) never holds a frame for the whole of it. Most requests are one
 * piece (they return false). */
typedef bool app_task_fn(void *arg);

typedef struct app_jobs {
    /* Starts fn(arg) away from the caller; NULL when it cannot (nothing ran). */
    app_task *(*start)(app_task_fn *fn, void *arg);
    /* Waits for fn to return, then frees t. */
    void (*join)(app_task *t);
    /* Lets fn return on its own, never waited for; frees what t holds once it has. */
    void (*leave)(app_task *t);
} app_jobs;

/* The same three through jobs, which may be NULL (no service): start then
 * returns NULL, and join and leave of a NULL task do nothing. */
app_task *app_jobs_start(const app_jobs *jobs, app_task_fn *fn, void *arg);
void app_jobs_join(const app_jobs *jobs, app_task *t);
void app_jobs_leave(const app_jobs *jobs, app_task *t);

/* fn(arg), every piece, here and now: what a caller does with a request no
 * service took, and what a thread does with one. */
void app_task_finish(app_task_fn *fn, void *arg);

#endif
