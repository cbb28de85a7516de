/* fetch.h — the platform's fetcher: a shipped model's files brought in when
 * something first opens the model.
 *
 * The desktop has every shipped model on disk and gives none (NULL). The web
 * page ships only each model's config.json and card with its first load, and
 * downloads the rest (its weights, tokenizer and, when asked, training
 * checkpoints) into the models' folder when a lesson, o, m or j first needs
 * them (src/platform/web). The app core asks before it opens (app_fetch.c):
 * while the files come, the "opening …" notice shows the bytes downloaded of
 * the total, and the opening goes on by itself once they are here.
 *
 *     app_fetch_progress p;
 *     switch (fetcher->want(fetcher->ctx, "tang", false, &p)) { ... }
 *
 * want is asked again each turn of the loop until it says HERE or FAILED; the
 * first ask starts the download. Called on the app's own thread only. */
#ifndef APP_FETCH_H
#define APP_FETCH_H

#include <stdbool.h>

typedef enum {
    APP_FETCH_HERE,    /* in the models' folder (or nothing to fetch: not one the platform ships) */
    APP_FETCH_COMING,  /* downloading: done of total bytes */
    APP_FETCH_FAILED,  /* why says it, in words a student understands */
} app_fetch_state;

typedef struct {
    double done, total; /* bytes of the files still to come, all of them wanted so far */
    char why[160];      /* FAILED: what went wrong ("no connection", "HTTP 404") */
} app_fetch_progress;

typedef struct app_fetcher {
    /* model `name`'s files, and its training checkpoints when `checkpoints` */
    app_fetch_state (*want)(void *ctx, const char *name, bool checkpoints, app_fetch_progress *p);
    void *ctx;
} app_fetcher;

#endif
