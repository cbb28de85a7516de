/* jobs.c — the job service's calls when the platform may give none (jobs.h). */
#include "jobs.h"

#include <stddef.h>

void app_task_finish(app_task_fn *fn, void *arg)
{
    while (fn(arg)) {}
}

app_task *app_jobs_start(const app_jobs *jobs, app_task_fn *fn, void *arg)
{
    return jobs ? jobs->start(fn, arg) : NULL;
}

void app_jobs_join(const app_jobs *jobs, app_task *t)
{
    if (jobs && t) jobs->join(t);
}

void app_jobs_leave(const app_jobs *jobs, app_task *t)
{
    if (jobs && t) jobs->leave(t);
}
