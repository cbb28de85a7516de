/* jobs_pieces.h — a job service (jobs.h) with no thread: requests queued and
 * run later, a piece at a time, on the caller's thread.
 *
 * The single-threaded web page runs on it (src/platform/web/main_web.c): a
 * poll runs the oldest request's next piece, which then waits behind the
 * others, so a long request shares the frames with the rest. The app core's
 * tests run the page's frames on it too.
 *
 *     app->jobs = app_jobs_pieces();
 *     ... each frame:
 *     app_jobs_pieces_next();
 *     app_poll(app);
 *
 * One queue for the program, on one thread. */
#ifndef APP_JOBS_PIECES_H
#define APP_JOBS_PIECES_H

#include <stdbool.h>

#include "jobs.h"

const app_jobs *app_jobs_pieces(void);

/* Runs the next piece of the oldest request; whether there was one. */
bool app_jobs_pieces_next(void);

/* Whether a request has pieces left. */
bool app_jobs_pieces_queued(void);

#endif
