/* pin.c — a model's file bytes mapped again, to outlive the model (model.h). */
#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>

#include "engine/base/fileio.h"
#include "engine/base/mapping.h"
#include "engine/model/model.h"

bool attn_model_pin(const attn_model *m, const void *data, size_t n, void **pin, size_t *pin_size, const void **at)
{
    const unsigned char *p = data;
    for (int i = 0; i < m->ckpt.n_files; i++) {
        const attn_st_file *f = &m->ckpt.files[i];
        const unsigned char *map = f->map;
        if (!map || p < map || n > f->map_size || (size_t)(p - map) > f->map_size - n) continue;
        size_t page = (size_t)sysconf(_SC_PAGESIZE), off = (size_t)(p - map), from = off / page * page;
        attn_error ignore;
        int fd = attn_file_open_regular(m->ckpt.paths[i], O_RDONLY, &ignore);
        if (fd < 0) return false;
        attn_status st = attn_mapping_open_at(fd, from, off + n - from, m->ckpt.paths[i], pin, &ignore);
        close(fd);
        if (st) return false;
        *pin_size = off + n - from;
        *at = (const unsigned char *)*pin + (off - from);
        return true;
    }
    return false;
}
