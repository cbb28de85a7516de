/* jobs_pieces.c — requests queued, a piece at a time (jobs_pieces.h). */
#include "jobs_pieces.h"

#include <stdlib.h>

/* A request: the core holds it until it joins or leaves it; the queue until it has run. */
struct app_task {
    app_task_fn *fn;
    void *arg;
    bool ran;             /* run to its end (its last piece returned false) */
    bool left;            /* the core let go: freed once it has run */
    struct app_task *next; /* in the queue, not yet run to its end */
};

static struct {
    app_task *head, *tail;
} queue;

static void queue_push(app_task *t)
{
    if (queue.tail) queue.tail->next = t;
    else queue.head = t;
    queue.tail = t;
}

static void queue_remove(app_task *t)
{
    app_task **at = &queue.head, *prev = NULL;
    while (*at && *at != t) prev = *at, at = &(*at)->next;
    if (!*at) return;
    *at = t->next;
    if (queue.tail == t) queue.tail = prev;
    t->next = NULL;
}

/* The request's next piece; whether it has now run to its end. */
static bool piece(app_task *t)
{
    if (!t->ran) t->ran = !t->fn(t->arg);
    return t->ran;
}

static app_task *pieces_start(app_task_fn *fn, void *arg)
{
    app_task *t = calloc(1, sizeof *t);
    if (!t) return NULL; /* the core then runs fn here and now */
    t->fn = fn, t->arg = arg;
    queue_push(t);
    return t;
}

/* Waits for the request: runs what is left of it now. */
static void pieces_join(app_task *t)
{
    queue_remove(t);
    while (!piece(t)) {}
    free(t);
}

static void pieces_leave(app_task *t)
{
    if (t->ran) free(t);
    else t->left = true;
}

const app_jobs *app_jobs_pieces(void)
{
    static const app_jobs jobs = {pieces_start, pieces_join, pieces_leave};
    return &jobs;
}

bool app_jobs_pieces_next(void)
{
    app_task *t = queue.head;
    if (!t) return false;
    queue_remove(t);
    if (!piece(t)) queue_push(t);
    else if (t->left) free(t);
    return true;
}

bool app_jobs_pieces_queued(void) { return queue.head != NULL; }
