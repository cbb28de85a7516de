/* stream.h — a long text read one token at a time over a KV cache that
 * evicts, as StreamingLLM measures it (Xiao et al. 2023, mit-han-lab's
 * StartRecentKVCache): everything kept, the last W positions only, or the
 * first N kept beside the last W.
 *
 *     attn_stream_opts o = {ATTN_STREAM_SINK, .window = 64, .keep_first = 4};
 *     attn_stream_run(&m, &run, &o, ids, n, loss, &scored, &err);
 *
 * The cache never holds more than N + W positions (W with the window, N = 0).
 * A key's RoPE position is its slot in the cache, not its place in the text:
 * when position N is evicted, every later key moves down one slot and is
 * rotated again at its new slot (from its unrotated copy, kept beside the
 * cache), and the new query is rotated at the slot it takes, N + W − 1 once
 * the cache is full. So a model never sees a position past N + W − 1, however
 * long the text. Everything kept numbers positions as the text does and stops
 * at the model's context (max_position_embeddings): the positions after it
 * are not scored. What a key and value hold is what they were computed with
 * when their token was read: an evicted token still speaks through the later
 * keys of deeper layers, as in StreamingLLM. */
#ifndef ATTN_STREAM_H
#define ATTN_STREAM_H

#include "engine/base/error.h"
#include "engine/model/model.h"
#include "engine/trace/config.h"

typedef enum { ATTN_STREAM_ALL, ATTN_STREAM_WINDOW, ATTN_STREAM_SINK } attn_stream_policy;

typedef struct {
    attn_stream_policy policy;
    int window;     /* W ≥ 1, the most recent positions kept, the new one included (window, sink) */
    int keep_first; /* N ≥ 1, the text's first positions kept for good (sink); 0 otherwise */
} attn_stream_opts;

/* "all", "window", "sink"; −1 for another name. */
int attn_stream_policy_parse(const char *name);
const char *attn_stream_policy_name(attn_stream_policy p);

/* The most positions the cache holds under o (N + W, or n for all). */
int attn_stream_cache_size(const attn_stream_opts *o, int n);

/* ATTN_OK, or ATTN_ERR_CONFIG with one line: W < 1, N < 1 with sink, N ≥ W,
 * N + W beyond m's context. */
attn_status attn_stream_check(const attn_model *m, const attn_stream_opts *o, attn_error *err);

/* Reads ids[0 .. n) with m one token at a time (attn_kv_step, with run's
 * settings: attn_model_run_config's, whose own window and keep_first are
 * ignored) under o. loss[i], i < n − 1: −log p(ids[i + 1]) after reading
 * ids[0 .. i] (NAN when the policy kept everything and i is past m's
 * context). *scored receives how many are numbers. */
attn_status attn_stream_run(const attn_model *m, const attn_config *run, const attn_stream_opts *o, const int *ids,
                            int n, double *loss, int *scored, attn_error *err);

/* The texts a stream reads (stream_text.c), one row of ids each text after
 * the other, every text as the model was trained on it: <s> … </s>. Caller
 * frees *ids; *texts receives how many texts. */

/* The model's held-out sample: its folder's heldout_ids.json (rows of token
 * ids, the first 64 held-out rows, as scripts/train/card.py measures them),
 * concatenated. */
attn_status attn_stream_heldout(const attn_model *m, int **ids, int *n, int *texts, attn_error *err);

/* Each non-empty line of text through m's tokenizer (BOS first), its EOS
 * after it. */
attn_status attn_stream_lines(const attn_model *m, const char *text, int **ids, int *n, int *texts, attn_error *err);

/* The texts of ids (n) joined into one, as StreamingLLM reads a book: the
 * first token kept, every later BOS and every EOS (m's) dropped, in place;
 * *n receives the new length. */
void attn_stream_join(const attn_model *m, int *ids, int *n);

#endif
