/* model_config.h — config.json of a Hugging Face decoder checkpoint: the
 * numbers a model folder's config gives, read under the format's rules
 * (model_config.c says which keys and defaults). The file format's part of a
 * model: a trace file's metadata keeps its model's config.json, read back
 * with the same parser (trace_io.c). */
#ifndef ATTN_MODEL_CONFIG_H
#define ATTN_MODEL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/base/error.h"
#include "engine/trace/arch.h"

#define ATTN_MODEL_MAX_LAYERS ATTN_ARCH_MAX_LAYERS

/* DeepSeek's multi-head latent attention sizes (zero outside MLA). */
typedef struct {
    int q_rank;       /* q_lora_rank: the query's low-rank width; 0 (null): one q_proj */
    int kv_rank;      /* R: kv_lora_rank, the latent's width */
    int rope_dim;     /* D: qk_rope_head_dim, the RoPE part of each query and the shared key */
    int nope_dim;     /* qk_nope_head_dim: the part without position (head_dim below) */
    int v_dim;        /* v_head_dim: each head's value width (equal to nope_dim here) */
} attn_mla_sizes;

/* DeepSeek's and gpt-oss's mixture of experts (zero when every layer is dense). HF's names. */
typedef enum {
    ATTN_ROUTE_GREEDY = 0,       /* V2 topk_method "greedy": the top k of softmax(router logits) */
    ATTN_ROUTE_GROUP_LIMITED,    /* V2 "group_limited_greedy": the same within the topk_group groups
                                  * whose best expert scores highest */
    ATTN_ROUTE_SIGMOID_GROUPS,   /* V3: sigmoid scores, plus e_score_correction_bias for the choice,
                                  * groups ranked by the sum of their two best */
    ATTN_ROUTE_TOPK_SOFTMAX      /* gpt-oss: the top k of the router's logits (with its bias), their
                                  * weights a softmax over those k only */
} attn_route_method;

typedef struct {
    int experts;      /* E: n_routed_experts */
    int top_k;        /* num_experts_per_tok */
    int shared;       /* n_shared_experts: one MLP of shared · inter features, every token; 0: none */
    int inter;        /* moe_intermediate_size: each routed expert's MLP width */
    int first;        /* first_k_dense_replace: layers before it are dense */
    int groups;       /* n_group (group-limited methods) */
    int topk_group;   /* groups kept per token */
    double scale;     /* routed_scaling_factor */
    bool norm_topk;   /* norm_topk_prob: the k weights divided by their sum (V3 only: HF's V2 ignores it) */
    attn_route_method method;
    double limit;     /* gpt-oss's swiglu_limit: gate clamped above, up to [−limit, limit] */
    double alpha;     /* gpt-oss's sigmoid gain in gate · σ(α · gate) (swiglu_alpha, 1.702) */
} attn_moe_sizes;

/* Gemma 2 and 3's numbers (model_config_gemma.c; zero for the others); which
 * layers are local, their window and their RoPE are the arch's (arch.h: local,
 * local_window, local_theta, global_scaling): a trace keeps them. */
typedef struct {
    double query_scale;    /* query_pre_attn_scalar^−½: the scores' factor */
    double attn_softcap;   /* attn_logit_softcapping C; 0: none */
    double final_softcap;  /* final_logit_softcapping on the logits; 0: none */
} attn_gemma_sizes;

/* config.json's numbers. */
typedef struct {
    int vocab;        /* V: vocab_size */
    int d;            /* hidden_size */
    int layers;       /* num_hidden_layers */
    int heads;        /* num_attention_heads */
    int kv_heads;     /* num_key_value_heads */
    int head_dim;     /* k: head_dim, or hidden_size / num_attention_heads; MLA: qk_nope_head_dim */
    int ffn;          /* f: intermediate_size */
    int max_pos;      /* max_position_embeddings */
    double eps;       /* rms_norm_eps */
    double theta;     /* rope_theta */
    bool tied;        /* tie_word_embeddings: the LM head is the embedding table */
    int bos, eos;     /* bos_token_id, eos_token_id (the first, if a list); −1 if absent */
    int sliding_window; /* Mistral's window W; 0: none */
    bool causal;      /* attnlab_causal: trained with the causal mask (true when absent; attnlab's
                       * tang-nocausal was trained without it) */
    attn_arch arch;   /* the architecture and what it adds to attention */
    attn_mla_sizes mla; /* with arch.mla */
    attn_moe_sizes moe; /* with arch.experts */
    attn_gemma_sizes gemma; /* with arch.gemma */
} attn_model_config;

/* For the family files (model_config_*.c), from model_config.c: readers of
 * the keys more than one family reads, errors starting "config.json: ".
 * attn_model_config_number: root's key, a number from min to max (whole if
 * whole) into *out; def when absent, or when null if null_def (Gemma's
 * soft-caps: null is "none"). attn_model_config_layer_types: layer_types,
 * each "sliding_attention" (c->arch.local[l] true) or "full_attention", one a
 * layer of c->layers; *given false when absent or null, c untouched (the
 * caller applies its architecture's pattern). */
struct cJSON;
attn_status attn_model_config_number(const struct cJSON *root, const char *key, double min, double max, bool whole,
                                     double def, bool null_def, double *out, attn_error *err);
attn_status attn_model_config_layer_types(const struct cJSON *root, attn_model_config *c, bool *given,
                                          attn_error *err);

/* For model_config.c: DeepSeek-V2/V3's keys (model_config_mla.c) into c, whose
 * vocab, d, layers, heads and ffn are read: the latent attention's sizes, RoPE
 * convention, its mixture-of-experts layers (attn_model_config_moe), and the
 * refusals of what this engine does not run (quantization). Sets head_dim to
 * qk_nope_head_dim and kv_heads to heads. Errors start "config.json: ". */
struct cJSON;
attn_status attn_model_config_mla(const struct cJSON *root, attn_model_config *c, attn_error *err);

/* For model_config_mla.c: the mixture-of-experts keys of a DeepSeek config
 * whose first_k_dense_replace (`dense`) is below num_hidden_layers, into
 * c->moe and c->arch (experts, moe_from); what HF's modelling would run
 * differently, or not at all, refused naming the key (model_config_moe.c). */
attn_status attn_model_config_moe(const struct cJSON *root, attn_model_config *c, int dense, attn_error *err);

/* For model_config.c: Gemma 2 and Gemma 3's keys (model_config_gemma.c) into
 * c, whose vocab, d, layers, heads, kv_heads and ffn are read: head_dim, the
 * scale, the soft-caps, which layers are local, the window, the two RoPE
 * settings, and the refusals of what this engine does not run. Errors start
 * "config.json: " and name the key. */
attn_status attn_model_config_gemma(const struct cJSON *root, attn_model_config *c, attn_error *err);

/* For model_config.c: rope_scaling of every family but Gemma (model_config_rope.c):
 * null or "default", "llama3" or "yarn" (rope_type, or the older "type"),
 * into r, with YaRN's attention factor resolved, and its original context 0
 * when absent (the caller puts max_position_embeddings there). score_gain:
 * DeepSeek's softmax-scale factor mscale² from mscale_all_dim, 0 if none.
 * Other types and bad fields refused in one line naming the field. */
attn_status attn_model_config_rope_scaling(const struct cJSON *root, attn_rope_scaling *r, double *score_gain,
                                           attn_error *err);
/* The same reader on the object v itself, named obj in messages ("rope_scaling",
 * or gpt-oss's v5 "rope_parameters"); v NULL or null: no scaling. */
attn_status attn_model_config_rope_object(const struct cJSON *v, const char *obj, attn_rope_scaling *r,
                                          double *score_gain, attn_error *err);

/* For model_config.c, after the keys every family shares are read: OLMo 2's
 * (model_config_olmo2.c: its defaults, the whole-projection QK-norm and the
 * post-norms) and SmolLM3's (model_config_smollm3.c: no_rope_layers or
 * no_rope_layer_interval, its defaults, a sliding window refused). Both read
 * transformers v5's rope_parameters {rope_type "default", rope_theta} (gpt-oss
 * reads it too, and its {rope_type "yarn", ...} through the rope_scaling
 * reader) and refuse quantization_config (attn_model_config_refuse_common).
 * Errors start "config.json: " and name the key. */
/* For model_config.c: gpt-oss's keys (model_config_gptoss.c) into c, whose
 * vocab, d, layers, heads and ffn are read: head_dim and kv heads with
 * GptOssConfig's defaults, the biases and sinks, which layers are local and
 * their window, the experts and their clamped SwiGLU, and the refusals (an
 * MXFP4 checkpoint among them). Errors start "config.json: " and name the key. */
attn_status attn_model_config_gptoss(const struct cJSON *root, attn_model_config *c, attn_error *err);
/* Its refusals that come before any size is read (quantization_config: MXFP4 named;
 * partial_rotary_factor), so a published folder is told about its weights first. */
attn_status attn_model_config_gptoss_refuse(const struct cJSON *root, attn_error *err);

attn_status attn_model_config_olmo2(const struct cJSON *root, attn_model_config *c, attn_error *err);
attn_status attn_model_config_smollm3(const struct cJSON *root, attn_model_config *c, attn_error *err);
attn_status attn_model_config_rope_parameters(const struct cJSON *root, attn_model_config *c, attn_error *err);
attn_status attn_model_config_refuse_common(const struct cJSON *root, const attn_model_config *c, attn_error *err);

/* Reads config.json's text. Errors start "config.json: " and name the key;
 * an unsupported architecture is named with the list of supported ones. */
attn_status attn_model_config_parse(const char *text, size_t len, attn_model_config *c, attn_error *err);

/* "LlamaForCausalLM" …; "" for ATTN_ARCH_NONE. */
const char *attn_arch_name(attn_arch_kind kind);

#endif
