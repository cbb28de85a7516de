/* tiles_view.h — the FlashAttention view's numbers (key F, `view = tiles`):
 * the grid of BQ × BK tiles, the causally skipped ones, and for each query
 * row of one head m, ℓ and the partial output after key tile j (app->tile_step),
 * read from the trace's tile_max, tile_sum, masked_scores, values and context
 * (mode mla: v_up and context naive, c_kv and context_latent absorbed).
 * No SDL; the picture is src/draw/plot_tiles.c. */
#ifndef APP_TILES_VIEW_H
#define APP_TILES_VIEW_H

#include <stdbool.h>

#include "app.h"

#define APP_TILES_MAX_ROWS 64 /* query rows the view lists (the course draws ≤ 32 tokens) */

typedef struct {
    int s, t, P;          /* query rows, keys, cached positions before the first query */
    int bq, bk;           /* the tile: BQ query rows by BK keys */
    int n_q, n_k;         /* query tiles ⌈s / BQ⌉, key tiles ⌈t / BK⌉ */
    int step;             /* the key tile shown, 0 … n_k − 1 */
    bool causal_skip;     /* a causal mask with −∞: tiles wholly in the future are skipped */
    bool latent;          /* mode mla absorbed: the values are the latent cache c_kv, o is R wide (context_latent) */
    float m[APP_TILES_MAX_ROWS], l[APP_TILES_MAX_ROWS]; /* after key tile step (tile_max, tile_sum) */
    float norm[APP_TILES_MAX_ROWS]; /* ‖o_j‖, o_j = Σ_{keys of tiles ≤ j} e^(S − m_j)·v / ℓ_j; NaN: no key yet */
    float first[APP_TILES_MAX_ROWS]; /* o_j's first feature */
    long long bytes_plain, bytes_tile; /* per head: s·t scores × 4 B, one BQ × BK tile × 4 B */
    float max_diff;       /* largest |context − weights·v| over this head (the tiled against the plain output) */
    float sink;           /* the head's sink logit X, whose e^(X − m) joins ℓ at the last tile; −∞: none */
} app_tiles;

/* Whether the trace shown has tiles (tile_max and tile_sum in its layer). */
bool app_tiles_ok(const app_state *app);

/* The numbers for the head and batch row shown; -1 with the reason in err. */
int app_tiles_make(const app_state *app, app_tiles *out, char *err, size_t errsize);

/* Whether the causal mask skips tile (query tile qi, key tile kj) entirely. */
bool app_tiles_skipped(const app_tiles *tv, int qi, int kj);

/* The key tile shown one on (dir +1) or back (−1), wrapping; true: redraw. */
bool app_tiles_step(app_state *app, int dir);

#endif
