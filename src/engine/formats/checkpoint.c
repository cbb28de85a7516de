/* checkpoint.c — mapping a model folder's safetensors files, one or sharded. */
#include "checkpoint.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/base/paths.h"

#define INDEX_LIMIT (64u << 20)
#define MAX_SHARDS 1024

void attn_ckpt_free(attn_ckpt *c)
{
    if (!c) return;
    for (int i = 0; i < c->n_files; i++) {
        attn_st_free(&c->files[i]);
        free(c->paths[i]);
    }
    free(c->files);
    free(c->paths);
    free(c->slots);
    memset(c, 0, sizeof *c);
}

/* ---- every tensor by name ----
 *
 * A table of the tensors of every file, open addressing: a name hashes
 * (FNV-1a) to a slot, and a taken slot sends it on to the next, in a table at
 * most half full, so a look-up reads a slot or two. Walking every shard's
 * entries instead cost a look-up as many comparisons as there are tensors:
 * the index of 64 shards of 4,096 tensors checks 262,144 names, and once
 * one was unlisted, the walk for each of them ran past a minute (issue 37). */

static uint64_t name_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull; /* FNV-1a, 64 bits */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Where name is, or the empty slot where it would go. */
static size_t slot_of(const attn_ckpt *c, const char *name)
{
    size_t mask = c->n_slots - 1, i = (size_t)name_hash(name) & mask;
    while (c->slots[i].file >= 0 &&
           strcmp(c->files[c->slots[i].file].entries[c->slots[i].entry].name, name))
        i = (i + 1) & mask;
    return i;
}

/* File i's name without its folder. */
static const char *file_name(const attn_ckpt *c, int i)
{
    const char *slash = strrchr(c->paths[i], '/');
    return slash ? slash + 1 : c->paths[i];
}

/* Puts every tensor of every file in the table. No tensor is in two files:
 * which copy a reader took would depend on the order it looks in. */
static attn_status build_table(attn_ckpt *c, attn_error *err)
{
    size_t n = 0;
    for (int i = 0; i < c->n_files; i++) n += (size_t)c->files[i].n;
    c->n_slots = 16;
    while (c->n_slots < 2 * n) c->n_slots *= 2;
    if (!(c->slots = malloc(c->n_slots * sizeof *c->slots))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < c->n_slots; k++) c->slots[k].file = -1;
    for (int i = 0; i < c->n_files; i++)
        for (int j = 0; j < c->files[i].n; j++) {
            const char *name = c->files[i].entries[j].name;
            size_t k = slot_of(c, name);
            if (c->slots[k].file >= 0)
                return attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.60s' is in two shards, %s and %s (a checkpoint "
                                 "holds each tensor once)", name, file_name(c, c->slots[k].file), file_name(c, i));
            c->slots[k].file = i;
            c->slots[k].entry = j;
        }
    return ATTN_OK;
}

/* The file and entry of name: *file and *entry, or false. */
static bool lookup(const attn_ckpt *c, const char *name, int *file, int *entry)
{
    if (!c->slots) return false;
    size_t k = slot_of(c, name);
    *file = c->slots[k].file;
    *entry = c->slots[k].entry;
    return *file >= 0;
}

const attn_st_entry *attn_ckpt_find(const attn_ckpt *c, const char *name, const attn_st_file **file)
{
    int i, j;
    if (!lookup(c, name, &i, &j)) return NULL;
    if (file) *file = &c->files[i];
    return &c->files[i].entries[j];
}

const char *attn_ckpt_where(const attn_ckpt *c, const char *name)
{
    int i, j;
    return lookup(c, name, &i, &j) ? file_name(c, i) : "";
}

/* Maps path as file i (the arrays have room). */
static attn_status map_file(attn_ckpt *c, const char *path, attn_error *err)
{
    attn_status st;
    if (!(c->paths[c->n_files] = strdup(path))) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    if ((st = attn_st_map(path, &c->files[c->n_files], err))) {
        free(c->paths[c->n_files]);
        return st;
    }
    const attn_st_file *f = &c->files[c->n_files++];
    for (int i = 0; i < f->n; i++) c->bytes += f->entries[i].end - f->entries[i].begin;
    return ATTN_OK;
}

/* The mapped files in the order of their names: by_name[0 .. n_files). */
typedef struct {
    int *by_name;
} shard_order;

/* The mapped file named shard (a name in the folder, never a path), or -1;
 * *at: where in the order it is or would go. A binary search: an index
 * names a shard for each of its tensors. */
static int shard_of(const attn_ckpt *c, const shard_order *o, const char *shard, int *at)
{
    int lo = 0, hi = c->n_files;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, d = strcmp(file_name(c, o->by_name[mid]), shard);
        if (d == 0) return *at = mid, o->by_name[mid];
        if (d < 0) lo = mid + 1;
        else hi = mid;
    }
    *at = lo;
    return -1;
}

/* The index's weight_map: maps every shard it names, then checks that the
 * index and the shards list the same tensors in the same places. Each check
 * is a look-up in the table of tensors (or a binary search among the
 * shards), so an index of n tensors takes time in proportion to n. */
static attn_status open_index(const char *dir, const char *text, size_t len, attn_ckpt *c, attn_error *err)
{
    const char *IDX = "model.safetensors.index.json";
    attn_status st = ATTN_OK;
    cJSON *root = NULL;
    shard_order order = {0};
    unsigned char *seen = NULL; /* per slot of the table: the index lists that tensor where it is */
    int at;
    if ((st = attn_json_parse(text, len, &root, err))) { /* a tensor listed twice is a key given twice */
        attn_error_prefix(err, IDX);
        return st;
    }
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map"), *e;
    if (!cJSON_IsObject(map)) {
        cJSON_Delete(root);
        return attn_fail(err, ATTN_ERR_FORMAT, "%s: no \"weight_map\" object", IDX);
    }
    if (!(c->files = calloc(MAX_SHARDS, sizeof *c->files)) || !(c->paths = calloc(MAX_SHARDS, sizeof *c->paths)) ||
        !(order.by_name = calloc(MAX_SHARDS, sizeof *order.by_name))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto out;
    }
    int listed = 0;
    cJSON_ArrayForEach(e, map) {
        listed++;
        if (!cJSON_IsString(e) || !e->valuestring[0] || strchr(e->valuestring, '/') ||
            !strcmp(e->valuestring, "..") || !strcmp(e->valuestring, ".")) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "%s: tensor '%.60s' names no shard file in this folder", IDX,
                           e->string);
            goto out;
        }
        if (shard_of(c, &order, e->valuestring, &at) >= 0) continue;
        if (c->n_files == MAX_SHARDS) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "%s: more than %d shards", IDX, MAX_SHARDS);
            goto out;
        }
        char path[PATH_MAX];
        if ((st = attn_path_format(path, sizeof path, err, "%s/%s", dir, e->valuestring)) ||
            (st = map_file(c, path, err))) {
            attn_error_prefix(err, IDX);
            goto out;
        }
        memmove(order.by_name + at + 1, order.by_name + at, (size_t)(c->n_files - 1 - at) * sizeof *order.by_name);
        order.by_name[at] = c->n_files - 1;
    }
    if ((st = build_table(c, err))) goto out;
    if (!(seen = calloc(c->n_slots, 1))) {
        st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        goto out;
    }
    cJSON_ArrayForEach(e, map) {
        int i = shard_of(c, &order, e->valuestring, &at), file, entry;
        if (!lookup(c, e->string, &file, &entry) || file != i) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "%s puts '%.60s' in %s, which has no such tensor", IDX, e->string,
                           e->valuestring);
            goto out;
        }
        seen[slot_of(c, e->string)] = 1;
    }
    int held = 0;
    for (int i = 0; i < c->n_files; i++) held += c->files[i].n;
    if (held != listed) /* a tensor of some shard that the index does not list (each it lists is where it says) */
        for (int i = 0; i < c->n_files; i++)
            for (int j = 0; j < c->files[i].n; j++) {
                const char *name = c->files[i].entries[j].name;
                if (!seen[slot_of(c, name)]) {
                    st = attn_fail(err, ATTN_ERR_FORMAT, "%s holds '%.60s', which %s does not list there",
                                   file_name(c, i), name, IDX);
                    goto out;
                }
            }
out:
    free(seen);
    free(order.by_name);
    cJSON_Delete(root);
    return st;
}

attn_status attn_ckpt_open(const char *dir, attn_ckpt *c, attn_error *err)
{
    char path[PATH_MAX], *text = NULL;
    size_t size;
    attn_status st;
    struct stat sb;
    memset(c, 0, sizeof *c);
    if ((st = attn_path_format(path, sizeof path, err, "%s/model.safetensors.index.json", dir))) return st;
    if (lstat(path, &sb) == 0) {
        if (!(st = attn_file_read(path, INDEX_LIMIT, &text, &size, err))) st = open_index(dir, text, size, c, err);
        free(text);
    } else if (!(st = attn_path_format(path, sizeof path, err, "%s/model.safetensors", dir))) {
        if (!(c->files = calloc(1, sizeof *c->files)) || !(c->paths = calloc(1, sizeof *c->paths)))
            st = attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
        else if (!(st = map_file(c, path, err))) st = build_table(c, err);
    }
    if (st) attn_ckpt_free(c);
    return st;
}
