/* model.h — a decoder checkpoint: a Hugging Face model folder.
 *
 * The folder holds config.json, the weights (model.safetensors, or shards
 * listed by model.safetensors.index.json; F32, F16 or BF16, HF tensor names)
 * and tokenizer.json. The architectures read are LlamaForCausalLM (SmolLM2,
 * TinyLlama, Llama 3.x with its rope_scaling), MistralForCausalLM (sliding
 * window), Qwen2ForCausalLM (q, k, v biases), Qwen3ForCausalLM (per-head
 * q and k norms), DeepSeek-V2/V3 (latent attention, deepseek.h),
 * with its mixture-of-experts layers (moe.h),
 * GptOssForCausalLM (learned sinks, biases, local layers and experts: gptoss.h),
 * Olmo2ForCausalLM (q and k norms over the whole projection; norms after each
 * sublayer instead of before), SmolLM3ForCausalLM (layers without RoPE) and
 * Gemma 2 and 3 (local and global layers, norms before and after each
 * sublayer, GeGLU: gemma.h): arch.h says what each adds. Every layer but
 * OLMo 2's and Gemma's is
 *
 *     resid_in → RMSNorm → attention (RoPE rotate-half) → + → resid_mid
 *              → RMSNorm → SwiGLU MLP → + → resid_out
 *
 * (OLMo 2's: resid_in → attention → RMSNorm → + → resid_mid → SwiGLU MLP →
 * RMSNorm → + → resid_out), then a final RMSNorm and the LM head (the
 * embedding table when tied).
 *
 * Weights stay in the mapped files, in their own dtype: every matrix is an
 * attn_wmat view of its bytes there (wmat.h), and the products widen F16 and
 * BF16 to float32 in registers as they read, so a 1B-parameter BF16 model
 * needs its 2.2 GB of mapped file and nothing more for its weights. Only the
 * vectors (norm gains, biases) are widened to float32, at load. The matrices
 * are (out, in) as HF's nn.Linear stores them: a projection is y = x · Wᵀ. */
#ifndef ATTN_MODEL_H
#define ATTN_MODEL_H

#include <stdbool.h>

#include "engine/attention/attention.h"
#include "engine/attention/wmat.h"
#include "engine/base/error.h"
#include "engine/formats/checkpoint.h"
#include "engine/formats/model_config.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/trace/config.h"

/* config.json of the model `name` means (attn_model_find), read without its
 * weights: what it is and how it was trained, before it is loaded. */
attn_status attn_model_peek(const char *name, attn_model_config *c, attn_error *err);

/* The settings a model opens with when nothing else says: the one place that
 * decides them, for the window (o, a model opened by its flags), its pictures
 * and the command line alike. The causal mask as config.json's attnlab_causal
 * says the model was trained: off for tang-nocausal, on for the others.
 * cfg->model names the model; with none, nothing changes. A model that cannot
 * be read leaves cfg as it was and returns the error (the caller may leave it
 * for the run to report). */
attn_status attn_model_as_trained(attn_config *cfg, attn_error *err);

/* attn_model_peek, then the weights' headers against it, without reading a
 * weight (checkpoint.h maps the files): every tensor the architecture needs is
 * there with the shape config.json gives it, and no other. For describing a
 * model (`info --model`) without loading it; errors name the folder and the file. */
attn_status attn_model_check(const char *name, attn_model_config *c, attn_error *err);

/* One layer's weights: the matrices (out, in) as the checkpoint stores them,
 * read in place (a projection is y = x · Wᵀ, attn_wmat_product); the vectors
 * widened to float32. */
typedef struct {
    float *attn_norm;                   /* (d) input_layernorm */
    attn_wmat w_q, w_k, w_v, w_o;       /* (h·k, d), (g·k, d), (g·k, d), (d, h·k); MLA: q_proj (h·(k+D), d)
                                         * or none (q_lora), no w_k, w_v, o_proj (d, h·k) */
    float *b_q, *b_k, *b_v;             /* (h·k), (g·k), (g·k): Qwen2's biases, else NULL */
    float *q_norm, *k_norm;             /* (k): Qwen3's per-head norm gains; OLMo 2's whole-projection
                                         * ones, (h·k) and (g·k); else NULL */
    /* MLA (DeepSeek; Q = q_lora_rank, R = kv_lora_rank, D = qk_rope_head_dim): */
    attn_wmat w_qa, w_qb;               /* (Q, d) q_a_proj, (h·(k+D), Q) q_b_proj: with q_lora */
    float *qa_norm;                     /* (Q) q_a_layernorm */
    attn_wmat w_kva;                    /* (R+D, d) kv_a_proj_with_mqa: the latent, then the RoPE key */
    float *kva_norm;                    /* (R) kv_a_layernorm */
    attn_wmat w_kvb;                    /* (h·2k, R) kv_b_proj: each head's key part, then its value */
    float *mlp_norm;                    /* (d) post_attention_layernorm: the MLP's input norm; NULL in OLMo 2;
                                         * Gemma's pre_feedforward_layernorm */
    float *post_attn_norm, *post_ff_norm; /* (d) OLMo 2's and Gemma's post_attention_layernorm and
                                         * post_feedforward_layernorm: each sublayer's output normalised (OLMo 2
                                         * has no attn_norm and no mlp_norm; Gemma has both) */
    attn_wmat w_gate, w_up;             /* (f, d); none in a mixture-of-experts layer */
    attn_wmat w_down;                   /* (d, f) */
    /* A DeepSeek mixture-of-experts layer (arch.h's attn_arch_layer_moe; moe.h; E = n_routed_experts,
     * I = moe_intermediate_size, S = n_shared_experts): */
    attn_wmat w_router;                 /* (E, d) mlp.gate.weight: one logit per expert */
    float *router_bias;                 /* (E) mlp.gate.e_score_correction_bias (V3), else NULL */
    attn_wmat *experts;                 /* (E, 3): expert e's gate_proj (I, d), up_proj (I, d),
                                         * down_proj (d, I) at [3e], [3e+1], [3e+2]; in attn_model.experts */
    attn_wmat w_sh_gate, w_sh_up;       /* (S·I, d) mlp.shared_experts.*; none when S = 0 */
    attn_wmat w_sh_down;                /* (d, S·I) */
    /* gpt-oss (gptoss.h; E = num_local_experts, I = intermediate_size): */
    float *b_o;                         /* (d) o_proj's bias (attention_bias), else NULL */
    float *sinks;                       /* (h) self_attn.sinks: each query head's sink logit */
    float *gate_up_bias, *down_bias;    /* (E, 2I), (E, d): the experts' biases; router_bias is
                                         * mlp.router.bias (E) and w_router mlp.router.weight (E, d).
                                         * experts: [2e] gate_up_proj[e] (d, 2I) and [2e+1] down_proj[e]
                                         * (I, d), each stored (in, out): y = x · W, not x · Wᵀ */
} attn_model_layer;

typedef struct attn_model {
    char *dir;                /* the folder it was read from */
    char *name;               /* the folder's last component ("tang") */
    char *config_json;        /* config.json as read */
    char *summary;            /* the model card's one-line summary, or NULL */
    char *example;            /* example.txt's first line, or NULL */
    char variant[16];         /* eval.json's: "gqa", "mha", "mqa", "mla", "nocausal"; "" if absent */
    char lang[8];             /* eval.json's training language: "zh", "en"; "" if absent */
    double heldout_loss;      /* eval.json's, nats per token on held-out text; NAN if absent */
    double train_loss;        /* the same on training text */
    attn_model_config cfg;
    attn_ckpt ckpt;           /* the mapped weight files */
    attn_wmat embed;          /* (V, d) embed_tokens */
    attn_wmat lm_head;        /* (V, d): embed when tied, else its own */
    float *norm;              /* (d) the final norm's gain */
    float embed_scale;        /* Gemma: √d rounded to the embedding's dtype, as transformers does; else 1 */
    attn_model_layer *layer;  /* cfg.layers */
    attn_wmat *experts;       /* the routed experts' views: 3·E per MoE layer (attn_model_layer.experts) */
    attn_tokenizer *tok;
    float *arena;             /* the vectors above, and any float32 matrix whose bytes in
                               * the file are not float-aligned, widened at load */
} attn_model;

/* Token id's embedding row (d floats). */
void attn_model_embed_row(const attn_model *m, int id, float *out);

/* logits (rows, V) = x (rows, d) · lm_headᵀ; returns 0, or -1 out of memory. */
int attn_model_logits(const attn_model *m, const float *x, float *logits, size_t rows);

/* The matrices one decoding step reads, in the order it reads them: each
 * layer's q, k, v, o, gate, up and down (latent attention: q or q_a and q_b,
 * kv_a, kv_b, o, ...), then the LM head (of the embedding, one row). Writes
 * the first max of them to out; returns how many there are (7 · layers + 1
 * for Llama's). */
int attn_model_step_matrices(const attn_model *m, attn_wmat *out, int max);

/* Where shipped models live, written to buf (size bytes): $ATTNLAB_MODELS,
 * else the installed or the source tree's assets/models. Returns buf, or
 * NULL (buf "") when the path does not fit. Each caller has its own buffer:
 * the window lists the models on a worker while its main thread looks one
 * up. */
const char *attn_model_root(char *buf, size_t size);

/* The folder that `name` means. A bare name (no '/', not starting with '.')
 * means the shipped model <root>/<name> when there is one, even where the
 * current folder holds a folder of that name (give ./NAME for that one);
 * anything else, and a bare name no shipped model has, is a folder as given.
 * Writes it to out; an unknown name lists the shipped ones. */
bool attn_model_is_bare(const char *name);
attn_status attn_model_find(const char *name, char *out, size_t size, attn_error *err);

/* Reads and checks a model folder (or a shipped model's name). Errors name the
 * file and the problem in one line. Pair with attn_model_free. */
attn_status attn_model_load(const char *name, attn_model *m, attn_error *err);
/* The same, watched (attention.h's attn_progress; NULL: not watched): the
 * weights' bytes read as they are checked, then the tokenizer's phase; stops
 * with ATTN_ERR_CANCELLED between two tensors once asked. */
attn_status attn_model_load_watched(const char *name, attn_model *m, attn_progress *watch, attn_error *err);
void attn_model_free(attn_model *m);

/* The names of the shipped models, sorted (caller frees each and the array). */
attn_status attn_model_list(char ***names, int *n, attn_error *err);

/* Training checkpoints: DIR/checkpoints/step<N>/, each a complete model folder
 * (scripts/train_model.py --checkpoints): a folder named step<N>, N written
 * without leading zeros ("step025" is no step), holding a config.json. Listing
 * and looking up follow that one rule. attn_model_steps writes the steps N
 * of model `name` (a folder or shipped name) to steps, sorted, at most max
 * (of more, max spread evenly from the first to the last); *n = 0 when it has
 * none. attn_model_checkpoint writes step's folder to out, however many
 * steps there are; a step it lacks is ATTN_ERR_CONFIG listing the steps it
 * has (as many as fit, then "…" and how many). */
enum { ATTN_MAX_STEPS = 64 };
attn_status attn_model_steps(const char *name, long *steps, int max, int *n, attn_error *err);
attn_status attn_model_checkpoint(const char *name, long step, char *out, size_t size, attn_error *err);
/* The other way: the model whose checkpoint `name` is. A folder
 * M/checkpoints/step<N> writes M to base and N to *step; any other model
 * writes its own folder and -1. */
attn_status attn_model_base(const char *name, char *base, size_t size, long *step, attn_error *err);

/* K and V of one token in every layer, float32: 2 · layers · g · k · 4 bytes;
 * latent attention's latent and RoPE key, (R + D) · layers · 4 bytes. Local
 * layers counted too: what the cache grows by while the text is shorter than
 * their window (kv_bytes.h has the full and local layers apart). */
double attn_model_kv_bytes_per_token(const attn_model_config *c);

/* A shipped model trained like another except for its attention. */
typedef struct {
    char name[64];             /* as attn_model_list gives it */
    char variant[16];          /* "mha", "gqa", "mqa", "mla" */
    int heads, kv_heads;
    int layers;
    double heldout_loss;       /* nats per token; NAN if unknown */
    double kv_bytes_per_token; /* K and V of all its layers, or MLA's latent and RoPE key
                                * (attn_model_kv_bytes_per_token) */
} attn_model_variant;

enum { ATTN_MAX_VARIANTS = 4 }; /* MHA, GQA, MQA, MLA */

/* The shipped variants of m's training run, in the order MHA, GQA, MQA, MLA
 * (m among them when it is one): same language, variant mha, gqa, mqa or mla
 * (a DeepSeek-style model, tang-mla). out has room for ATTN_MAX_VARIANTS;
 * *n receives how many there are. */
attn_status attn_model_variants(const attn_model *m, attn_model_variant *out, int *n, attn_error *err);

#endif
