/* experts_view.h — the token × expert view's numbers (key E, `view = experts`):
 * for the layer shown, which routed experts each token of the batch row chose
 * and with what weight, read from the layer's expert_weights (b, s, E: the
 * chosen experts' weights, 0 elsewhere) and router_scores. Any routed layer
 * that records those two stages has the view (DeepSeek-V2/V3's mixture of
 * experts, moe.h; other routed families record the same two). No SDL; the
 * picture is src/draw/plot_experts.c. */
#ifndef APP_EXPERTS_VIEW_H
#define APP_EXPERTS_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "view.h"

#define APP_EXPERTS_MAX 1024 /* routed experts the view counts (DeepSeek-V3 has 256) */

/* What the trace shown offers the view. */
typedef enum {
    APP_EXPERTS_NONE,   /* no layer of it routes (no expert_weights anywhere): the key says so and stays */
    APP_EXPERTS_DENSE,  /* another layer routes; the one shown has one dense MLP */
    APP_EXPERTS_ROUTED  /* the layer shown routes each token to its experts */
} app_experts_kind;

app_experts_kind app_experts_kind_of(const app_state *app);

/* The first layer of tr that routes (has expert_weights), -1 if none. */
int app_experts_first_layer(const attn_trace *tr);

typedef struct {
    int layer;            /* the layer shown */
    app_view_slice w;     /* its expert_weights for the batch row shown: s × E */
    app_view_slice score; /* its router_scores, the same cells; score.tensor NULL: not recorded */
    int s, E;             /* tokens (rows), routed experts (columns) */
    int top_k;            /* experts per token: config.json's (num_experts_per_tok), else the most any token chose */
    int shared;           /* shared experts every token goes through besides (n_shared_experts); 0: none */
    float wmax;           /* the largest weight of the slice (the colour scale's top) */
    int load[APP_EXPERTS_MAX]; /* tokens of the row that chose each expert */
} app_experts;

/* The numbers for the layer and batch row shown: 0, or -1 with the reason in err
 * (the trace has no routed layer, or the layer shown is dense: said in words). */
int app_experts_make(const app_state *app, app_experts *ex, char *err, size_t errsize);

/* Expert e's rank among the experts token i chose, by weight: 1 the heaviest
 * (ties to the lower index), 0 when i did not choose e (its weight is 0). */
int app_experts_rank(const app_slice *w, int i, int e);

#endif
