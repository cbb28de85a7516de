/* mapping.c — mmap with a table of what is mapped, for the SIGBUS handler. */
#define _DEFAULT_SOURCE /* MAP_PRIVATE with _POSIX_C_SOURCE alone on some libcs */
#include "mapping.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* One recorded mapping. A slot is claimed (state 0 → 1) by one thread, which
 * fills path and size and then publishes begin; the handler reads begin first,
 * so it never sees a half-filled slot. begin = 0: nothing to see. */
typedef struct {
    atomic_int state;            /* 0 free, 1 claimed */
    _Atomic(uintptr_t) begin;
    _Atomic(size_t) size;
    _Atomic(char *) path;
} slot;

static slot slots[ATTN_MAPPING_MAX];
static atomic_int high; /* slots [0, high) have ever been claimed: the handler looks no further */

static int record(void *addr, size_t size, const char *path)
{
    char *copy = strdup(path);
    if (!copy) return -1;
    for (int i = 0; i < ATTN_MAPPING_MAX; i++) {
        int free_state = 0;
        if (!atomic_compare_exchange_strong(&slots[i].state, &free_state, 1)) continue;
        atomic_store(&slots[i].path, copy);
        atomic_store(&slots[i].size, size);
        atomic_store(&slots[i].begin, (uintptr_t)addr); /* published: the handler may see it now */
        int h = atomic_load(&high);
        while (h < i + 1 && !atomic_compare_exchange_weak(&high, &h, i + 1)) {}
        return 0;
    }
    free(copy);
    return -1;
}

static void forget(void *addr)
{
    int h = atomic_load(&high);
    for (int i = 0; i < h; i++) {
        if (atomic_load(&slots[i].begin) != (uintptr_t)addr) continue;
        atomic_store(&slots[i].begin, 0); /* unseen from here on, before the pages go */
        char *path = atomic_exchange(&slots[i].path, NULL);
        atomic_store(&slots[i].size, 0);
        atomic_store(&slots[i].state, 0);
        free(path);
        return;
    }
}

attn_status attn_mapping_open(int fd, size_t size, const char *path, void **addr, attn_error *err)
{
    return attn_mapping_open_at(fd, 0, size, path, addr, err);
}

attn_status attn_mapping_open_at(int fd, size_t offset, size_t size, const char *path, void **addr, attn_error *err)
{
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, (off_t)offset);
    if (map == MAP_FAILED)
        return attn_fail(err, ATTN_ERR_IO, "%s: cannot map %zu bytes: %s", path, size, strerror(errno));
    if (record(map, size, path)) {
        munmap(map, size);
        return attn_fail(err, ATTN_ERR_NOMEM, "%s: cannot map it: %d files are mapped already", path,
                         ATTN_MAPPING_MAX);
    }
    *addr = map;
    return ATTN_OK;
}

void attn_mapping_close(void *addr, size_t size)
{
    if (!addr) return;
    forget(addr);
    munmap(addr, size);
}

const char *attn_mapping_path(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    int h = atomic_load(&high);
    for (int i = 0; i < h; i++) {
        uintptr_t b = atomic_load(&slots[i].begin);
        if (b && a >= b && a - b < atomic_load(&slots[i].size)) return atomic_load(&slots[i].path);
    }
    return NULL;
}

int attn_mapping_count(void)
{
    int n = 0, h = atomic_load(&high);
    for (int i = 0; i < h; i++) n += atomic_load(&slots[i].begin) != 0;
    return n;
}

/* ---- the handler: only async-signal-safe calls (write, sigaction, raise, pause, _exit) ---- */

static char guard_who[64];
static atomic_flag said = ATOMIC_FLAG_INIT;

static void say(const char *s)
{
    size_t n = strlen(s); /* strlen is async-signal-safe since POSIX.1-2016 */
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void on_sigbus(int sig, siginfo_t *si, void *ctx)
{
    (void)ctx;
    const char *path = attn_mapping_path(si->si_addr);
    if (!path) { /* not a file of ours: the default action, as if there were no handler */
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(sig, &dfl, NULL);
        raise(sig); /* pending until the handler returns; a fault would repeat anyway */
        return;
    }
    /* several threads may fault on the file at once: one says it, the others
     * wait for its _exit (pause: async-signal-safe) */
    if (atomic_flag_test_and_set(&said))
        for (;;) pause();
    say(guard_who);
    say(": ");
    say(path);
    say(": the file became shorter while attnlab was reading it (truncated or rewritten in place); stopped\n");
    _exit(1);
}

attn_status attn_mapping_guard(const char *who, attn_error *err)
{
    struct sigaction sa;
    snprintf(guard_who, sizeof guard_who, "%s", who);
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGBUS, &sa, NULL))
        return attn_fail(err, ATTN_ERR_IO, "cannot install the SIGBUS handler: %s", strerror(errno));
    return ATTN_OK;
}
