/* model.h — a trained decoder model: a Hugging Face LlamaForCausalLM folder.
 *
 * The folder holds config.json, model.safetensors (F32, F16 or BF16, HF
 * tensor names) and tokenizer.json. Every layer is
 *
 *     resid_in → RMSNorm → attention (RoPE rotate-half, no bias) → + → resid_mid
 *              → RMSNorm → SwiGLU MLP → + → resid_out
 *
 * then a final RMSNorm and the LM head (the embedding table when tied).
 * Weights are widened to float32 at load and kept in the engine's (in, out)
 * layout: HF's nn.Linear weight (out, in) is transposed, so y = x · W. */
#ifndef ATTN_MODEL_H
#define ATTN_MODEL_H

#include <stdbool.h>

#include "error.h"
#include "tokenizer.h"

#define ATTN_MODEL_MAX_LAYERS 256

/* config.json's numbers. */
typedef struct {
    int vocab;        /* V: vocab_size */
    int d;            /* hidden_size */
    int layers;       /* num_hidden_layers */
    int heads;        /* num_attention_heads */
    int kv_heads;     /* num_key_value_heads */
    int ffn;          /* f: intermediate_size */
    int max_pos;      /* max_position_embeddings */
    double eps;       /* rms_norm_eps */
    double theta;     /* rope_theta */
    bool tied;        /* tie_word_embeddings: the LM head is the embedding table */
    int bos, eos;     /* bos_token_id, eos_token_id; −1 if absent */
} attn_model_config;

/* One layer's weights, float32, (in, out) layout. */
typedef struct {
    float *attn_norm;            /* (d) input_layernorm */
    float *w_q, *w_k, *w_v, *w_o; /* (d, d), (d, g·k), (d, g·k), (d, d) */
    float *mlp_norm;             /* (d) post_attention_layernorm */
    float *w_gate, *w_up;        /* (d, f) */
    float *w_down;               /* (f, d) */
} attn_model_layer;

typedef struct attn_model {
    char *dir;                /* the folder it was read from */
    char *name;               /* the folder's last component ("tang") */
    char *config_json;        /* config.json as read */
    char *summary;            /* the model card's one-line summary, or NULL */
    char *example;            /* example.txt's first line, or NULL */
    char variant[16];         /* eval.json's: "gqa", "mha", "mqa", "nocausal"; "" if absent */
    char lang[8];             /* eval.json's training language: "zh", "en"; "" if absent */
    double heldout_loss;      /* eval.json's, nats per token on held-out text; NAN if absent */
    double train_loss;        /* the same on training text */
    attn_model_config cfg;
    float *embed;             /* (V, d) embed_tokens */
    float *norm;              /* (d) the final norm's gain */
    float *lm_head;           /* (V, d): embed when tied, else its own */
    attn_model_layer *layer;  /* cfg.layers */
    attn_tokenizer *tok;
    float *arena;             /* every weight above */
} attn_model;

/* Where shipped models live: $ATTNLAB_MODELS, else the source tree's or the
 * installed assets/models. */
const char *attn_model_root(void);

/* The folder that `name` means: an existing folder as given, else
 * <root>/<name>. Writes it to out; an unknown name lists the shipped ones. */
attn_status attn_model_find(const char *name, char *out, size_t size, attn_error *err);

/* Reads and checks a model folder (or a shipped model's name). Errors name the
 * file and the problem in one line. Pair with attn_model_free. */
attn_status attn_model_load(const char *name, attn_model *m, attn_error *err);
void attn_model_free(attn_model *m);

/* The names of the shipped models, sorted (caller frees each and the array). */
attn_status attn_model_list(char ***names, int *n, attn_error *err);

/* K and V of one token in every layer, float32: 2 · layers · g · k · 4 bytes. */
double attn_model_kv_bytes_per_token(const attn_model_config *c);

/* A shipped model trained like another except for its attention. */
typedef struct {
    char name[64];             /* as attn_model_list gives it */
    char variant[16];          /* "mha", "gqa", "mqa" */
    int heads, kv_heads;
    double heldout_loss;       /* nats per token; NAN if unknown */
    double kv_bytes_per_token;
} attn_model_variant;

/* The shipped variants of m's training run, in the order MHA, GQA, MQA (m
 * among them when it is one): same language, variant mha, gqa or mqa.
 * out has room for 3; *n receives how many there are. */
attn_status attn_model_variants(const attn_model *m, attn_model_variant *out, int *n, attn_error *err);

#endif
