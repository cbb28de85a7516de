/* checkpoint.c — mapping a model folder's safetensors files, one or sharded. */
#include "checkpoint.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "json.h"
#include "paths.h"

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
    memset(c, 0, sizeof *c);
}

const attn_st_entry *attn_ckpt_find(const attn_ckpt *c, const char *name, const attn_st_file **file)
{
    for (int i = 0; i < c->n_files; i++) {
        const attn_st_entry *e = attn_st_find(&c->files[i], name);
        if (e) {
            if (file) *file = &c->files[i];
            return e;
        }
    }
    return NULL;
}

const char *attn_ckpt_where(const attn_ckpt *c, const char *name)
{
    for (int i = 0; i < c->n_files; i++)
        if (attn_st_find(&c->files[i], name)) {
            const char *slash = strrchr(c->paths[i], '/');
            return slash ? slash + 1 : c->paths[i];
        }
    return "";
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

/* File i's name without its folder. */
static const char *file_name(const attn_ckpt *c, int i)
{
    const char *slash = strrchr(c->paths[i], '/');
    return slash ? slash + 1 : c->paths[i];
}

/* The mapped file named shard (a name in the folder, never a path), or -1. */
static int shard_of(const attn_ckpt *c, const char *shard)
{
    for (int i = 0; i < c->n_files; i++)
        if (strcmp(file_name(c, i), shard) == 0) return i;
    return -1;
}

typedef struct {
    const char *name;
    int file;
} held_at;

static int by_name(const void *a, const void *b)
{
    const held_at *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (x->file > y->file) - (x->file < y->file);
}

/* No tensor is in two files: which copy a reader took would depend on the
 * order it looks in. Sorts every (name, file): neighbours share a name. */
static attn_status held_once(const attn_ckpt *c, attn_error *err)
{
    size_t n = 0, k = 0;
    for (int i = 0; i < c->n_files; i++) n += (size_t)c->files[i].n;
    if (c->n_files < 2 || n < 2) return ATTN_OK;
    held_at *all = malloc(n * sizeof *all);
    if (!all) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (int i = 0; i < c->n_files; i++)
        for (int j = 0; j < c->files[i].n; j++) all[k++] = (held_at){c->files[i].entries[j].name, i};
    qsort(all, n, sizeof *all, by_name);
    attn_status st = ATTN_OK;
    for (size_t i = 1; i < n && !st; i++)
        if (!strcmp(all[i - 1].name, all[i].name))
            st = attn_fail(err, ATTN_ERR_FORMAT, "tensor '%.60s' is in two shards, %s and %s (a checkpoint holds "
                           "each tensor once)", all[i].name, file_name(c, all[i - 1].file), file_name(c, all[i].file));
    free(all);
    return st;
}

/* The index's weight_map: maps every shard it names, then checks that the
 * index and the shards list the same tensors in the same places. */
static attn_status open_index(const char *dir, const char *text, size_t len, attn_ckpt *c, attn_error *err)
{
    const char *IDX = "model.safetensors.index.json";
    attn_status st = ATTN_OK;
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map"), *e;
    if (!cJSON_IsObject(map)) {
        cJSON_Delete(root);
        return attn_fail(err, ATTN_ERR_FORMAT, "%s: no \"weight_map\" object", IDX);
    }
    if (!(c->files = calloc(MAX_SHARDS, sizeof *c->files)) || !(c->paths = calloc(MAX_SHARDS, sizeof *c->paths))) {
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
        if (shard_of(c, e->valuestring) >= 0) continue;
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
    }
    if ((st = held_once(c, err))) goto out;
    if ((st = attn_json_unique_keys(root, err))) { /* a tensor listed twice, in the same shard */
        attn_error_prefix(err, IDX);
        goto out;
    }
    cJSON_ArrayForEach(e, map) {
        int i = shard_of(c, e->valuestring);
        const attn_st_entry *found = attn_st_find(&c->files[i], e->string);
        if (!found) {
            st = attn_fail(err, ATTN_ERR_FORMAT, "%s puts '%.60s' in %s, which has no such tensor", IDX, e->string,
                           e->valuestring);
            goto out;
        }
    }
    int held = 0;
    for (int i = 0; i < c->n_files; i++) held += c->files[i].n;
    if (held != listed) { /* a tensor of some shard that the index does not list there */
        for (int i = 0; i < c->n_files; i++)
            for (int j = 0; j < c->files[i].n; j++) {
                const char *name = c->files[i].entries[j].name;
                const cJSON *where = cJSON_GetObjectItemCaseSensitive(map, name);
                if (!cJSON_IsString(where) || shard_of(c, where->valuestring) != i) {
                    st = attn_fail(err, ATTN_ERR_FORMAT, "%s holds '%.60s', which %s does not list there",
                                   file_name(c, i), name, IDX);
                    goto out;
                }
            }
    }
out:
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
        else st = map_file(c, path, err);
    }
    if (st) attn_ckpt_free(c);
    return st;
}
