/* checkpoint.h — a Hugging Face model folder's weights, memory-mapped.
 *
 * Either one model.safetensors, or model.safetensors.index.json whose
 * "weight_map" names the shard holding each tensor:
 *
 *     {"metadata": {...}, "weight_map": {"model.norm.weight": "model-00002-of-00002.safetensors", ...}}
 *
 * Every file is mapped read-only (safetensors.h's attn_st_map), so opening a
 * checkpoint reads only the headers; a tensor's bytes are read when they are
 * converted. The index and the shards must agree exactly: every tensor the
 * index lists is in the shard it names, and every tensor of a shard is listed
 * there, once. A tensor in two shards is refused, naming both: a reader
 * would take whichever copy it looked at first. Tensors are found by name in
 * a hash table, so opening and checking n tensors takes time in proportion
 * to n, however many shards hold them. */
#ifndef ATTN_CHECKPOINT_H
#define ATTN_CHECKPOINT_H

#include "engine/base/error.h"
#include "engine/formats/safetensors.h"

typedef struct {
    attn_st_file *files; /* n_files mapped safetensors files */
    char **paths;        /* their paths, for messages */
    int n_files;
    size_t bytes;        /* the tensors' bytes in all files */
    struct { int file, entry; } *slots; /* every tensor by name (checkpoint.c); file −1: empty */
    size_t n_slots;      /* a power of two, at least twice the tensors */
} attn_ckpt;

/* Opens dir's weights. Errors name the file and the problem in one line.
 * Pair with attn_ckpt_free (safe on a zeroed struct). */
attn_status attn_ckpt_open(const char *dir, attn_ckpt *c, attn_error *err);
void attn_ckpt_free(attn_ckpt *c);

/* The entry called name and the file holding it (*file), or NULL. */
const attn_st_entry *attn_ckpt_find(const attn_ckpt *c, const char *name, const attn_st_file **file);

/* The file that holds name, for messages ("model-00001-of-00002.safetensors"). */
const char *attn_ckpt_where(const attn_ckpt *c, const char *name);

#endif
