/* stages.h — the catalogue of traced stages, in pipeline order.
 *
 * One row per tensor name of the trace contract: its dimension names, a
 * one-line description and its formula. The engine, the trace reader, the
 * CLI and the visualizer all read names, shapes and texts from here.
 *
 * The bottom of the engine's line (stages ← config ← trace ← forward): this
 * header holds the sizes a stage's shape is made of (attn_dims) and includes
 * nothing of the engine. */
#ifndef ATTN_STAGES_H
#define ATTN_STAGES_H

#include <stdbool.h>
#include <stdint.h>

#define ATTN_MAX_NDIM 8       /* axes a tensor may have */
#define ATTN_TENSOR_ALIGN 16 /* floats: every tensor starts 64-byte aligned */

/* Multi-head attention variants, by how many K/V heads serve the query heads. */
typedef enum {
    ATTN_MODE_AUTO = 0, /* follow kv_heads (g = h when kv_heads is unset) */
    ATTN_MODE_MHA,      /* g = h: every query head has its own K/V head */
    ATTN_MODE_MQA,      /* g = 1: all query heads share one K/V head */
    ATTN_MODE_GQA,      /* 1 < g < h: groups of h/g query heads share one */
    ATTN_MODE_MLA       /* multi-head latent attention (DeepSeek-V2/V3): the cache keeps a latent of R
                         * values and one RoPE key of D a token; every head's key and value are
                         * rebuilt from the latent (g = h) */
} attn_mode;

/* Which features RoPE rotates together (ops.h's attn_op_rope). */
typedef enum { ATTN_ROPE_INTERLEAVED = 0, ATTN_ROPE_HALF = 1 } attn_rope_style;

/* Sizes of one resolved problem (names as in the trace contract). */
typedef struct {
    int b;      /* batch rows */
    int L;      /* padded target length, past included */
    int P;      /* cached (past) positions */
    int s;      /* query positions = L - P */
    int t;      /* key positions: P + s (self) or source length (cross) */
    int n;      /* new key positions: s (self) or t (cross) */
    int d;      /* d_model */
    int h;      /* query heads */
    int g;      /* kv heads */
    int k;      /* head dim: d / h, or a checkpoint's head_dim (then h·k may differ from d) */
    int f;      /* a model's MLP width (intermediate_size); 0 without a model */
    int V;      /* a model's vocabulary size; 0 without a model */
    int T;      /* with tiles BQ × BK: key tiles a query row passes, ⌈t / BK⌉; 0 without */
    bool cross; /* cross-attention: keys/values from the source tokens */
    attn_mode mode; /* resolved: MHA, MQA, GQA or MLA */
    int kv_rank;    /* R: MLA's latent width (dims letter R); 0 outside MLA */
    int rope_dim;   /* D: MLA's decoupled RoPE width (dims letter D); 0 outside MLA */
    int E;          /* a model's routed experts in a mixture-of-experts layer (dims letter E); 0: none */
} attn_dims;

/* Marks an engine string for translation (a stage's description, a worded
 * formula, a hover explanation): xgettext --keyword=ATTN_N_ collects it, and
 * the interface translates it where it shows it. The engine never translates. */
#define ATTN_N_(s) s

/* Every stage of the trace contract, in pipeline order. */
typedef enum {
    ATTN_STAGE_NONE = -1, /* a tensor outside the contract */
    ATTN_STAGE_EMBEDDINGS, /* model-level: before the layers */
    ATTN_STAGE_RESID_IN,   /* a model's layer: the residual stream coming in */
    ATTN_STAGE_X,
    ATTN_STAGE_X_PAST,
    ATTN_STAGE_MEMORY,
    ATTN_STAGE_W_Q,
    ATTN_STAGE_W_K,
    ATTN_STAGE_W_V,
    ATTN_STAGE_W_O,
    ATTN_STAGE_W_QN,       /* one layer with qk_norm: the q and k norms' gains */
    ATTN_STAGE_W_KN,
    ATTN_STAGE_W_DKV,      /* mode mla: down to the latent, up to keys and values, the RoPE key */
    ATTN_STAGE_W_UK,
    ATTN_STAGE_W_UV,
    ATTN_STAGE_W_KR,
    ATTN_STAGE_Q,
    ATTN_STAGE_K,
    ATTN_STAGE_V,
    ATTN_STAGE_Q_HEADS,
    ATTN_STAGE_K_HEADS,
    ATTN_STAGE_V_HEADS,
    ATTN_STAGE_Q_NORM,
    ATTN_STAGE_K_NORM,
    ATTN_STAGE_Q_ROPE,
    ATTN_STAGE_K_ROPE,
    ATTN_STAGE_K_CACHE,
    ATTN_STAGE_V_CACHE,
    ATTN_STAGE_Q_NOPE,     /* mode mla: the query split, the latent cache, the shared RoPE key */
    ATTN_STAGE_Q_PE,
    ATTN_STAGE_C_KV,
    ATTN_STAGE_K_PE,
    ATTN_STAGE_K_NOPE,     /* mode mla, naive: keys and values rebuilt per head */
    ATTN_STAGE_V_UP,
    ATTN_STAGE_Q_LATENT,   /* mode mla, absorbed: the query carried into the latent space */
    ATTN_STAGE_K_EXPANDED,
    ATTN_STAGE_V_EXPANDED,
    ATTN_STAGE_SCORES,
    ATTN_STAGE_BIAS,          /* alibi */
    ATTN_STAGE_CAPPED_SCORES, /* softcap */
    ATTN_STAGE_MASK,
    ATTN_STAGE_MASKED_SCORES,
    ATTN_STAGE_WEIGHTS,
    ATTN_STAGE_SINK_WEIGHT,   /* sink_logit */
    ATTN_STAGE_WEIGHTS_DROPOUT,
    ATTN_STAGE_TILE_MAX,      /* tiles */
    ATTN_STAGE_TILE_SUM,
    ATTN_STAGE_CONTEXT_LATENT, /* mode mla, absorbed: the weighted latent, before W_UV */
    ATTN_STAGE_CONTEXT,
    ATTN_STAGE_MERGED,
    ATTN_STAGE_OUT,
    ATTN_STAGE_RESID_MID,  /* a model's layer, after attention: residual, norm, MLP */
    ATTN_STAGE_MLP_NORM,
    ATTN_STAGE_ROUTER_SCORES,  /* a mixture-of-experts layer (DeepSeek): the router's scores, */
    ATTN_STAGE_EXPERT_WEIGHTS, /* and the weight of each expert a token chose */
    ATTN_STAGE_GATE,
    ATTN_STAGE_UP,
    ATTN_STAGE_ACT,
    ATTN_STAGE_MLP_OUT,
    ATTN_STAGE_RESID_OUT,
    ATTN_STAGE_FINAL_NORM, /* model-level: after the layers */
    ATTN_STAGE_LOGITS,
    ATTN_STAGE_PROBS,
    ATTN_STAGE_COUNT
} attn_stage_id;

/* When a run records the stage (attn_stage_present says whether it does). */
typedef enum {
    ATTN_PRESENT_ALWAYS = 0,
    ATTN_PRESENT_PAST,    /* P > 0: a KV cache holds earlier positions */
    ATTN_PRESENT_CROSS,   /* cross-attention: source tokens are given */
    ATTN_PRESENT_ROPE,    /* rope = true */
    ATTN_PRESENT_DROPOUT, /* train = true with dropout > 0 */
    ATTN_PRESENT_MODEL,   /* a run of a trained model (--model): norms, MLP, logits */
    ATTN_PRESENT_QK_NORM, /* each head's q and k normalised: a checkpoint (Qwen3) or qk_norm = true */
    ATTN_PRESENT_QK_GAINS, /* qk_norm = true on one layer: its gains are the layer's weights */
    ATTN_PRESENT_ALIBI,   /* alibi = true */
    ATTN_PRESENT_SOFTCAP, /* softcap > 0 */
    ATTN_PRESENT_SINK,    /* a finite sink_logit */
    ATTN_PRESENT_MLA,     /* mode mla */
    ATTN_PRESENT_MLA_NAIVE,  /* mode mla without mla_absorb: keys and values rebuilt per head */
    ATTN_PRESENT_MLA_ABSORB, /* mode mla with mla_absorb: W_UK in the query, W_UV after the weights */
    ATTN_PRESENT_TILES,   /* tiles BQ × BK set */
    ATTN_PRESENT_MOE      /* a model's mixture-of-experts layer (arch.h's attn_arch_layer_moe) */
} attn_stage_rule;

/* How the stage's values map to colours. */
typedef enum {
    ATTN_CMAP_DIVERGING = 0, /* signed values: symmetric around 0, over the stage's largest |value| */
    ATTN_CMAP_SEQUENTIAL,    /* probabilities: from 0 up to max(1, largest) */
    ATTN_CMAP_MASK           /* fixed −1..1: 0 is neutral, fills are hatched (−∞) or clamp to the blue end */
} attn_stage_cmap;

/* Per-head blocks of k features, outlined in the picture. */
typedef enum {
    ATTN_BLOCKS_NONE = 0,
    ATTN_BLOCKS_HEAD_COLS, /* columns, one block per query head (W_Q, q, merged, out) */
    ATTN_BLOCKS_KV_COLS,   /* columns, one block per kv head (W_K, W_V, k, v) */
    ATTN_BLOCKS_HEAD_ROWS  /* rows, one block per query head: W_O's inputs */
} attn_stage_blocks;

/* Role flags (attn_stage_info.roles). */
enum {
    ATTN_ROLE_INPUT = 1 << 0,     /* given to the layer, not computed: x, x_past, memory */
    ATTN_ROLE_WEIGHT = 1 << 1,    /* learned: the (in, out) matrices W_Q, W_K, W_V, W_O; QK-norm's gains (k) */
    ATTN_ROLE_QUERY_KEY = 1 << 2  /* one cell per (query i, key j): scores … weights_dropout */
};

/* Everything known about one stage. After its presence rule, zero is the
 * common case for every field, so a row names only what is special about its
 * stage. The hover explanation of a cell is explain.h's attn_explain, one
 * function per stage id (it reads the trace, which sits above this file). */
typedef struct {
    attn_stage_id id;
    const char *name;        /* "scores": the tensor's name in a single-layer trace */
    const char *dims;        /* comma-separated dimension names: "b,h,s,t" */
    const char *desc;        /* one line: what the tensor is (ATTN_N_) */
    const char *formula;     /* how it is computed, in plain Unicode */
    attn_stage_rule rule;    /* when it is present */
    attn_stage_cmap cmap;
    attn_stage_blocks blocks;
    unsigned roles;          /* ATTN_ROLE_* */
    bool masked;             /* the mask's hidden cells are drawn masked on it */
    bool compare;            /* the compare view toggles a mask on this stage itself;
                              * from any other stage it shows weights */
    bool model_level;        /* belongs to the model, not to a layer: embeddings, final_norm, logits, probs */
    const char *model_desc;  /* in a model's trace, where they differ: desc ... */
    const char *model_formula; /* ... and formula (attn_stage_desc, attn_stage_formula) */
    bool not_mla;            /* absent in mode mla, whose keys and values come from the latent */
    const char *mla_dims;    /* in mode mla, where the shape differs: "d,h*(k+D)" (attn_stage_dims) */
    bool dense_mlp;          /* the dense MLP's (gate, up, act): absent in a mixture-of-experts layer */
} attn_stage_info;

/* All stages in pipeline order (index = id); *count receives their number. */
const attn_stage_info *attn_stages(int *count);

/* The stage with this id, or NULL for an id outside [0, ATTN_STAGE_COUNT). */
const attn_stage_info *attn_stage_get(attn_stage_id id);

/* The stage called name, or NULL. */
const attn_stage_info *attn_stage_lookup(const char *name);

/* Pipeline position (= id) of name, or -1 for an unknown name. */
int attn_stage_index(const char *name);

/* The stage the compare view shows while `id` is selected: id itself if its
 * info has compare set, else weights. */
attn_stage_id attn_stage_compare_view(attn_stage_id id);

/* What decides which stages a run records: its sizes and two switches of its
 * configuration (config.h fills one from a config: attn_config_stage_ctx). */
typedef struct {
    const attn_dims *dims;
    bool rope;    /* q_rope, k_rope */
    bool dropout; /* weights_dropout: training with dropout > 0 */
    bool model;   /* a trained model's run: its norms, MLP and logits */
    bool qk_norm; /* q_norm, k_norm: the model's architecture has them (arch.h), or qk_norm = true */
    bool alibi;   /* bias */
    bool softcap; /* capped_scores */
    bool sink;    /* sink_weight */
    bool tiles;   /* tile_max, tile_sum */
    int qk_layers; /* layers that keep the stages of one cell per (query, key); 0: every layer */
    bool mla_absorb; /* mode mla (dims->mode): the absorbed path's stages, not the naive one's */
    bool q_lora;     /* mode mla with a low-rank query (a DeepSeek checkpoint's q_lora_rank): no w_q */
    int moe_layers;  /* of a model's layers, how many are mixtures of experts (the last ones); 0: none */
} attn_stage_ctx;

/* Whether layer l of a run described by ctx, of n_layers, records the stage:
 * attn_stage_present, and a mixture-of-experts layer (l ≥ n_layers −
 * moe_layers) has the router's stages and not the dense MLP's. */
bool attn_stage_in_layer(const attn_stage_info *info, const attn_stage_ctx *ctx, int l, int n_layers);

/* Whether a run described by ctx records the stage. */
bool attn_stage_present(const attn_stage_info *info, const attn_stage_ctx *ctx);

/* The stage's description and formula in a plain attention trace, or in a
 * model's trace (model = true), where x is a norm's output, not an embedding. */
const char *attn_stage_desc(const attn_stage_info *info, bool model);
const char *attn_stage_formula(const attn_stage_info *info, bool model);

/* What a stage's on-screen text depends on besides the stage: the settings
 * that change its formula (config.h fills one: attn_config_stage_text). */
typedef struct {
    bool model;     /* a trained model's trace (x is a norm's output; RoPE is rotate_half) */
    bool scale;     /* scores divided by √k */
    int causal;     /* 0 off, 1 on, 2 reversed (attn_causal's values) */
    bool pad_mask;  /* <pad> keys masked */
    bool cross;     /* cross-attention: keys from the source, no causal mask */
    bool rope_half; /* RoPE pairs feature m with m + k/2 (rope_style = half) */
    int window;     /* sliding window W; 0: none */
    bool bias;      /* q, k, v have biases (a Qwen2 checkpoint) */
    bool o_bias;    /* and o (a gpt-oss checkpoint's attention_bias) */
    bool qk_norm;   /* RoPE rotates q_norm and k_norm (a Qwen3 checkpoint) */
    int past;       /* P: positions already in the KV cache (x leaves them out) */
    bool alibi;     /* masked_scores add the ALiBi bias */
    bool softcap;   /* masked_scores start from capped_scores */
    bool sink;      /* the softmax has a sink logit: rows sum to 1 − p_sink */
    int keep_first; /* keys 0 … N−1 stay visible beside the window */
    bool mla;       /* mode mla: scores from the nope and pe parts, over √(dₖ + D) */
    bool rope;      /* rope = true: MLA's q_pe and k_pe are rotated */
    bool mla_absorb; /* ... computed the absorbed way (q_latent, context_latent) */
    bool q_lora;    /* ... with a DeepSeek checkpoint's low-rank query (no W_Q) */
    bool rope_to_halves; /* ... its RoPE pairs (2m, 2m+1) written out as halves (V3's rope_interleave) */
    bool tiles;     /* context and out come from the tiled path (FlashAttention) */
    bool gemma;     /* a Gemma checkpoint: scores over √query_pre_attn_scalar, post-norms, GeGLU, √d (gemma.h) */
    bool qk_norm_whole; /* q_norm, k_norm over the whole projection, before the split (OLMo 2) */
    bool post_norms;    /* no pre-norms; sublayer outputs normalised before the residual add (OLMo 2) */
    bool nope;          /* some layers leave q and k unrotated (SmolLM3's no_rope_layers) */
    int layer_rope;     /* with nope, for one layer's tensor: 1 it turns, 0 it does not; −1 any layer */
} attn_stage_text;

/* The description and formula as they hold under c: no "/√k" with scale
 * off, the past masked under a reversed mask, the window and the pads only
 * where they apply. Msgids: translate with gettext where shown. */
const char *attn_stage_desc_in(const attn_stage_info *info, const attn_stage_text *c);
const char *attn_stage_formula_in(const attn_stage_info *info, const attn_stage_text *c);

/* Why a run may lack the stage, in the settings' words: "it needs rope =
 * true"; "" for a stage every run records. */
const char *attn_stage_absent_why(const attn_stage_info *info);

/* The stage's dimension names under dims: its mla_dims in mode mla, where
 * it has them, else its dims. */
const char *attn_stage_dims(const attn_stage_info *info, const attn_dims *dims);

/* Expected shape of contract stage `info` under dims (attn_stage_dims); returns ndim. */
int attn_stage_shape(const attn_stage_info *info, const attn_dims *dims, int64_t shape[ATTN_MAX_NDIM]);

/* Bytes that all recorded stages of ctx take, in double so a huge config
 * cannot overflow; each tensor is counted with its alignment padding, and a
 * layer's stages once per layer of n_layers (model-level ones once, the
 * query-key ones once per ctx->qk_layers when that is set). */
double attn_stages_bytes(const attn_stage_ctx *ctx, int n_layers);

/* Axis names of a dims string ("b,h,s,t" → "b" "h" "s" "t"); returns how many. */
int attn_stage_axes(const char *dims, char names[][8], int max);

/* kv head that query head `head` reads: head / (h/g) (itself in MHA, 0 in MQA). */
int attn_kv_head(const attn_dims *d, int head);

/* Bytes a KV cache keeps per token for `layers` layers of dims, at
 * `value_bytes` a value: MHA, GQA, MQA keep a key and a value per kv head,
 * 2·g·k values a layer; MLA keeps its latent and its RoPE key, R + D. */
double attn_kv_bytes_per_token(const attn_dims *dims, int layers, int value_bytes);

/* ALiBi's slope of each of n heads into m (n), as BLOOM's build_alibi_tensor:
 * for n a power of two, m_h = 2^(−8(h+1)/n), a geometric series from 2^(−8/n)
 * down to 2^−8 (n = 8: 1/2, 1/4, … 1/256). Otherwise the p = 2^⌊log₂ n⌋
 * slopes of p heads, then every other slope of 2p heads, 2^(−8(2i+1)/(2p))
 * for i < n − p, which fall between them (n = 12: the 8 of 8 heads, then
 * 2^−0.5, 2^−1.5, 2^−2.5, 2^−3.5). */
void attn_alibi_slopes(int n, double *m);

#endif
