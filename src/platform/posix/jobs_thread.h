/* jobs_thread.h — the desktop's job service (jobs.h): a POSIX thread a request.
 * No SDL: the app core's tests run their worker on it too. */
#ifndef ATTNLAB_POSIX_JOBS_THREAD_H
#define ATTNLAB_POSIX_JOBS_THREAD_H

#include "jobs.h"

/* Each request on a thread of its own that yields the CPU to the window's
 * (a nice value 5 higher on Linux, where a thread has one of its own). */
const app_jobs *posix_jobs(void);

#endif
