/* kv_bytes.c — a model's KV-cache bytes per token, full and local layers (kv_bytes.h). */
#include "kv_bytes.h"

#include <math.h>

attn_kv_bytes attn_kv_bytes_of(const attn_model_config *c, int value_bytes)
{
    attn_kv_bytes b = {.layers = c->layers};
    /* one layer's values a token: latent attention keeps [c_kv | k_pe], the others a key and a value per kv head */
    b.per_layer = (c->arch.mla ? (double)c->mla.kv_rank + c->mla.rope_dim : 2.0 * c->kv_heads * c->head_dim) *
                  value_bytes;
    if (c->arch.local_window > 0) { /* some layers local (Gemma 2/3): arch.local[l] */
        b.window = c->arch.local_window;
        for (int l = 0; l < c->layers && l < ATTN_ARCH_MAX_LAYERS; l++) b.local_layers += c->arch.local[l] != 0;
    } else if (c->sliding_window > 0) { /* Mistral: every layer has the window */
        b.window = c->sliding_window;
        b.local_layers = c->layers;
    }
    if (!b.local_layers) b.window = 0;
    b.full_layers = c->layers - b.local_layers;
    b.full = b.per_layer * b.full_layers;
    b.local = b.per_layer * b.local_layers;
    b.local_cap = b.local * b.window;
    return b;
}

double attn_kv_bytes_at(const attn_kv_bytes *b, double n)
{
    return b->full * n + b->local * fmin(n, b->window);
}
