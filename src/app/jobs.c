/* jobs.c — the job service's calls when the platform may give none (jobs.h). */
#include "jobs.h"

#include <stddef.h>

void ui_task_finish(ui_task_fn *fn, void *arg)
{
    while (fn(arg)) {}
}

ui_task *ui_jobs_start(const ui_jobs *jobs, ui_task_fn *fn, void *arg)
{
    return jobs ? jobs->start(fn, arg) : NULL;
}

void ui_jobs_join(const ui_jobs *jobs, ui_task *t)
{
    if (jobs && t) jobs->join(t);
}

void ui_jobs_leave(const ui_jobs *jobs, ui_task *t)
{
    if (jobs && t) jobs->leave(t);
}
