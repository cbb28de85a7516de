/* gemma_weights.h — what a Gemma checkpoint stores differently from a Llama
 * one, undone once at load (model.c): the numbers gemma.h's layer reads.
 *
 *   norm gains   Gemma*RMSNorm multiplies by (1 + w) and stores w (around 0):
 *                the engine keeps 1 + w, so its RMSNorm is the usual x̂ ⊙ g
 *   embeddings   multiplied by √hidden_size, which transformers rounds to the
 *                weights' dtype first (BF16: √640 = 25.25 stands for 25.2982)
 *
 * This header includes nothing of the model, so that model.c can call it
 * (gemma.h, which does, is the layer's side). */
#ifndef ATTN_GEMMA_WEIGHTS_H
#define ATTN_GEMMA_WEIGHTS_H

#include "engine/formats/safetensors.h"

/* w[0 .. n) += 1: stored w into the gain 1 + w (float32, as transformers
 * computes 1.0 + weight.float()). NULL: nothing. */
void attn_gemma_gain(float *w, int n);

/* √d as a value of dtype holds it (BF16 and F16 round to nearest even;
 * F32: the float nearest). */
float attn_gemma_embed_scale(int d, attn_st_dtype dtype);

#endif
