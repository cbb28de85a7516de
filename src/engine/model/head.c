/* head.c — a model trace's LM head, row chunks computed when read (head.h). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "head.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/attention/ops.h"
#include "engine/base/fileio.h"
#include "engine/base/mapping.h"
#include "engine/model/model.h"

/* Maps W_lm's bytes again, from the file m read them from, and points h->w
 * there; false (h->w left on m's bytes) when they are not a file's. */
static bool pin(attn_head *h, const attn_model *m)
{
    const attn_st_file *f = NULL;
    const attn_st_entry *e =
        attn_ckpt_find(&m->ckpt, m->cfg.tied ? "model.embed_tokens.weight" : "lm_head.weight", &f);
    if (!e || !f || !f->map || m->lm_head.data != f->data + e->begin) return false;
    const char *path = m->ckpt.paths[f - m->ckpt.files];
    size_t page = (size_t)sysconf(_SC_PAGESIZE), at = (size_t)(f->data - (const unsigned char *)f->map) + e->begin;
    size_t from = at / page * page, size = at + (e->end - e->begin) - from;
    attn_error ignore;
    int fd = attn_file_open_regular(path, O_RDONLY, &ignore);
    if (fd < 0) return false;
    attn_status st = attn_mapping_open_at(fd, from, size, path, &h->pin, &ignore);
    close(fd);
    if (st) return false;
    h->pin_size = size;
    h->w.data = (const unsigned char *)h->pin + (at - from);
    return true;
}

static int fill(attn_lazy *self, size_t row0, size_t n)
{
    return attn_head_fill((attn_head *)self, row0, n);
}

static void release(attn_lazy *self)
{
    attn_head_free((attn_head *)self);
}

attn_status attn_head_new(const attn_model *m, const float *final_norm, int rows, attn_head **out, attn_error *err)
{
    attn_head *h = calloc(1, sizeof *h);
    size_t n = (size_t)rows * m->cfg.vocab, padded = (n + 15) / 16 * 16, chunks = ((size_t)rows + ATTN_HEAD_CHUNK - 1) / ATTN_HEAD_CHUNK;
    *out = NULL;
    if (!h) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&h->lock, NULL);
    h->lazy = (attn_lazy){fill, release, false};
    h->w = m->lm_head;
    h->final_norm = final_norm;
    h->rows = rows, h->d = m->cfg.d, h->V = m->cfg.vocab;
    h->cap = (float)m->cfg.gemma.final_softcap;
    h->block_size = 2 * padded * sizeof(float);
    h->block = mmap(NULL, h->block_size ? h->block_size : 1, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (h->block == MAP_FAILED) h->block = NULL;
    if (!h->block || !(h->done = calloc(chunks ? chunks : 1, 1))) {
        attn_head_free(h);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the logits");
    }
    h->logits = h->block;
    h->probs = h->logits + padded;
    if (!pin(h, m) && attn_head_fill(h, 0, (size_t)rows)) { /* m's bytes: read them while m lives */
        attn_head_free(h);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory for the LM head");
    }
    *out = h;
    return ATTN_OK;
}

void attn_head_free(attn_head *h)
{
    if (!h) return;
    if (h->block) munmap(h->block, h->block_size ? h->block_size : 1);
    attn_mapping_close(h->pin, h->pin_size);
    free(h->done);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

int attn_head_fill(attn_head *h, size_t row0, size_t n)
{
    int rc = 0;
    if (!h || n == 0 || row0 >= (size_t)h->rows) return 0;
    size_t last = row0 + n > (size_t)h->rows ? (size_t)h->rows - 1 : row0 + n - 1;
    pthread_mutex_lock(&h->lock);
    for (size_t c = row0 / ATTN_HEAD_CHUNK, end = last / ATTN_HEAD_CHUNK + 1; !rc && c < end;) {
        if (h->done[c]) {
            c++;
            continue;
        }
        size_t c1 = c; /* the chunks [c, c1) not yet computed: one call, W_lm widened once for them */
        while (c1 < end && !h->done[c1]) c1++;
        size_t r0 = c * ATTN_HEAD_CHUNK, r1 = c1 * ATTN_HEAD_CHUNK < (size_t)h->rows ? c1 * ATTN_HEAD_CHUNK : (size_t)h->rows;
        float *lg = h->logits + r0 * h->V;
        /* logits (r1 − r0, V) = final_norm (r1 − r0, d) · W_lmᵀ, chunk by chunk; probs = row softmax */
        if (attn_wmat_product_blocks(&h->w, h->final_norm + r0 * h->d, (int)(r1 - r0), ATTN_HEAD_CHUNK, lg)) rc = -1;
        else if (h->cap > 0) attn_op_softcap(lg, lg, (r1 - r0) * h->V, h->cap);
        if (!rc) attn_op_softmax(lg, NULL, h->probs + r0 * h->V, 1, 1, (int)(r1 - r0), h->V, true);
        for (; !rc && c < c1; c++) h->done[c] = 1;
    }
    pthread_mutex_unlock(&h->lock);
    return rc;
}

double attn_head_row_bytes(int V)
{
    return 2.0 * V * sizeof(float);
}
