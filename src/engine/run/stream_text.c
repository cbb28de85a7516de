/* stream_text.c — the long texts a stream reads (stream.h): a model's
 * held-out sample, or lines of text, each <s> … </s>. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/fileio.h"
#include "engine/base/json.h"
#include "engine/run/stream.h"
#include "engine/tokenizer/tokenizer.h"

/* Appends n ids to *ids (holding *len of *cap). */
static attn_status append(int **ids, int *len, int *cap, const int *add, int n, attn_error *err)
{
    if (*len + n > *cap) {
        int c = *cap ? *cap : 1024;
        while (c < *len + n) c *= 2;
        int *grown = realloc(*ids, (size_t)c * sizeof *grown);
        if (!grown) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the text's tokens");
        *ids = grown, *cap = c;
    }
    memcpy(*ids + *len, add, (size_t)n * sizeof *add);
    *len += n;
    return ATTN_OK;
}

/* The rows of a parsed heldout_ids.json appended to *ids: ids in [0, V). */
static attn_status rows_of(const cJSON *root, const char *path, int V, int **ids, int *n, int *texts,
                           attn_error *err)
{
    int cap = 0;
    const cJSON *row, *id;
    if (!cJSON_IsArray(root)) return attn_fail(err, ATTN_ERR_FORMAT, "%s: not a list of rows of token ids", path);
    cJSON_ArrayForEach(row, root) {
        if (!cJSON_IsArray(row)) return attn_fail(err, ATTN_ERR_FORMAT, "%s: row %d is not a list", path, *texts);
        cJSON_ArrayForEach(id, row) {
            int v = cJSON_IsNumber(id) ? (int)id->valuedouble : -1;
            if (!cJSON_IsNumber(id) || id->valuedouble != v || v < 0 || v >= V)
                return attn_fail(err, ATTN_ERR_FORMAT, "%s: row %d holds something not a token id below %d", path,
                                 *texts, V);
            attn_status st = append(ids, n, &cap, &v, 1, err);
            if (st) return st;
        }
        ++*texts;
    }
    return ATTN_OK;
}

attn_status attn_stream_heldout(const attn_model *m, int **ids, int *n, int *texts, attn_error *err)
{
    char path[PATH_MAX], *data = NULL;
    size_t size;
    cJSON *root = NULL;
    *ids = NULL, *n = 0, *texts = 0;
    if (snprintf(path, sizeof path, "%s/heldout_ids.json", m->dir) >= (int)sizeof path)
        return attn_fail(err, ATTN_ERR_CONFIG, "%s: the path is too long", m->dir);
    attn_status st = attn_file_read(path, (size_t)64 << 20, &data, &size, err);
    if (st) return attn_fail(err, st, "%s has no held-out sample (%s): give --text-file", m->name, err->msg);
    if (!(st = attn_json_parse(data, size, &root, err))) st = rows_of(root, path, m->cfg.vocab, ids, n, texts, err);
    cJSON_Delete(root);
    free(data);
    if (st) free(*ids), *ids = NULL, *n = 0;
    return st;
}

attn_status attn_stream_lines(const attn_model *m, const char *text, int **ids, int *n, int *texts, attn_error *err)
{
    int cap = 0;
    attn_status st = ATTN_OK;
    *ids = NULL, *n = 0, *texts = 0;
    char *copy = strdup(text), *save = NULL;
    if (!copy) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    for (char *line = strtok_r(copy, "\r\n", &save); line && !st; line = strtok_r(NULL, "\r\n", &save)) {
        int *row, len;
        if (!(st = attn_tokenizer_encode(m->tok, line, true, &row, &len, err))) {
            st = append(ids, n, &cap, row, len, err);
            if (!st && m->cfg.eos >= 0) st = append(ids, n, &cap, &m->cfg.eos, 1, err);
            free(row);
            ++*texts;
        }
    }
    free(copy);
    if (st) free(*ids), *ids = NULL, *n = 0;
    return st;
}

void attn_stream_join(const attn_model *m, int *ids, int *n)
{
    int kept = *n ? 1 : 0;
    for (int i = 1; i < *n; i++)
        if (ids[i] != m->cfg.bos && ids[i] != m->cfg.eos && ids[i] != attn_tokenizer_bos(m->tok)) ids[kept++] = ids[i];
    *n = kept;
}
