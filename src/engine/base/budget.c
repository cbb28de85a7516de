/* budget.c — the memory budget: a ceiling, and what the address-space limit leaves.
 *
 * `ulimit -v` (RLIMIT_AS) caps the address space a process may map: not the
 * memory it touches, but every byte of every mapping, its shared libraries and
 * the stacks of its threads included. Past it, malloc returns NULL, mmap
 * fails, and the libraries fail their own way: libgomp exits with "Thread
 * creation failed", and OpenBLAS retries the 128 MiB buffer it wants for a
 * thread forever, so the command hangs. So a command under a limit must be
 * refused before it starts, and its estimate must count what it will map
 * besides its traces.
 *
 * What attnlab maps besides its traces, measured on x86-64 (Debian 12,
 * OpenBLAS 0.3.21's OpenMP build, 2 cores, 8 MiB stacks) by reading VmPeak
 * and by lowering `ulimit -v` until each command failed:
 *
 *   - before the first check: its libraries, about 33 MiB (--help, info).
 *     OpenBLAS is not among them: it is opened at the first product (blas.h),
 *     because its start-up maps a 128 MiB buffer for each thread and, linked,
 *     hung attnlab before main under a limit too small for them.
 *   - for a forward pass: each OpenMP thread beyond the first, a stack
 *     (RLIMIT_STACK's size, glibc's default for a thread), and OpenBLAS:
 *     its code (39 MiB) and a 128 MiB buffer for each thread it starts with,
 *     for each it grows to and for the thread that calls it (attn_blas_reserve).
 *     When it was linked, `trace` of a 785 MiB trace peaked at 327 + 785 +
 *     138 MiB with 2 threads; +410 with 4, +954 with 8, +2042 with 16, +130
 *     with 1, beyond the 327 MiB it had mapped at start.
 *   - the command's own: `trace` and `info` +2 MiB, `render` of 1280 × 800
 *     +15 MiB (SDL's offscreen driver, cairo, fonts, the PNG): BASE_RESERVE.
 *     A picture's pixels (about 12 bytes a pixel) and the window (SDL, GL,
 *     its threads) are declared by the front end, attn_budget_reserve.
 *
 * Only the address-space limit is measured this way. RLIMIT_DATA (`ulimit -d`)
 * and cgroup memory limits are not read. */
#include "budget.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "engine/base/blas.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * MIB)

/* the command's own maps besides traces and compute threads (measured: up to 15 MiB) */
#define BASE_RESERVE (64 * MIB)
/* when /proc/self/statm cannot be read: more than attnlab maps at start */
#define MAPPED_FALLBACK (512 * MIB)

static double front_end_reserve; /* attn_budget_reserve's and attn_budget_hold's; set before any thread starts */
static double front_end_held;    /* attn_budget_hold's alone */
static const char *held_what = "what the command holds";

void attn_budget_reserve(double bytes)
{
    if (bytes > 0) front_end_reserve += bytes;
}

void attn_budget_hold(double bytes, const char *what)
{
    if (bytes <= 0) return;
    front_end_reserve += bytes;
    front_end_held += bytes;
    if (what) held_what = what;
}

double attn_budget_half_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return 4.0 * GIB;
    return (double)pages * (double)page / 2.0;
}

/* This process's resident memory: statm's second field, in pages (0 if unread). */
static double resident_now(void)
{
    unsigned long size = 0, pages = 0;
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    int ok = f && fscanf(f, "%lu %lu", &size, &pages) == 2 && page > 0;
    if (f) fclose(f);
    return ok ? (double)pages * (double)page : 0;
}

double attn_budget_free_memory(const char *meminfo)
{
    FILE *f = fopen(meminfo, "r");
    char line[256];
    double kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
    if (f) fclose(f);
    if (!(kib >= 0)) return INFINITY;
    return 0.9 * kib * 1024.0 + resident_now();
}

/* The address space mapped now: statm's first field is the size in pages (VmSize). */
static double mapped_now(void)
{
    unsigned long pages = 0;
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    int ok = f && fscanf(f, "%lu", &pages) == 1 && page > 0;
    if (f) fclose(f);
    return ok ? (double)pages * (double)page : MAPPED_FALLBACK;
}

/* What a forward pass maps for its threads: a stack for each beyond the
 * calling one, and OpenBLAS's code and buffers (blas.h). Counted again by
 * every check, even once the threads exist: a little too careful, never too
 * little. */
static double threads_reserve(void)
{
    int n = attn_blas_compute_threads();
    return attn_blas_thread_stacks(n) + attn_blas_reserve(n);
}

attn_budget attn_budget_get(double ceiling, bool computes)
{
    attn_budget b = {0};
    struct rlimit as;
    b.ceiling = ceiling > 0 ? ceiling : attn_budget_half_ram();
    b.source = isinf(b.ceiling) ? ATTN_BUDGET_NONE : ceiling > 0 ? ATTN_BUDGET_SETTING : ATTN_BUDGET_RAM;
    double free_now = ceiling > 0 ? INFINITY : attn_budget_free_memory("/proc/meminfo");
    if (free_now < b.ceiling) { /* a busy machine: what it has free, not what it has */
        b.half_ram = b.ceiling;
        b.ceiling = free_now;
        b.source = ATTN_BUDGET_FREE;
    }
    b.held = isinf(b.ceiling) ? 0 : front_end_held; /* a file mapped without a ceiling holds nothing of it */
    b.bytes = b.ceiling - b.held > 0 ? b.ceiling - b.held : 0;
    b.limit = getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY ? (double)as.rlim_cur : INFINITY;
    if (isinf(b.limit)) return b;
    b.mapped = mapped_now();
    b.reserve = BASE_RESERVE + front_end_reserve + (computes ? threads_reserve() : 0);
    double room = b.limit - b.mapped - b.reserve;
    if (room < 0) room = 0;
    if (room < b.bytes) {
        b.bytes = room;
        b.source = ATTN_BUDGET_ULIMIT;
    }
    return b;
}

const char *attn_budget_size(double bytes, char *buf, int size)
{
    if (bytes < 0) bytes = 0;
    if (isinf(bytes)) snprintf(buf, (size_t)size, "unlimited");
    else if (bytes < 1024) snprintf(buf, (size_t)size, "%.0f bytes", bytes);
    else if (bytes < MIB) snprintf(buf, (size_t)size, "%.0f KiB", bytes / 1024);
    else if (bytes < GIB) snprintf(buf, (size_t)size, "%.0f MiB", bytes / MIB);
    else snprintf(buf, (size_t)size, "%.2f GiB", bytes / GIB);
    return buf;
}

const char *attn_budget_text(const attn_budget *b, char *buf, int size)
{
    char n[32], lim[32];
    attn_budget_size(b->bytes, n, sizeof n);
    const char *why = b->source == ATTN_BUDGET_RAM    ? "half the physical memory"
                      : b->source == ATTN_BUDGET_FREE ? "the memory this machine has free"
                                                      : "--memory-gib";
    bool ceiling = b->source == ATTN_BUDGET_RAM || b->source == ATTN_BUDGET_FREE || b->source == ATTN_BUDGET_SETTING;
    if (ceiling && b->held > 0) {
        char ceil[32], held[32];
        snprintf(buf, (size_t)size, "the %s that the %s limit (%s) leaves besides %s (%s)", n,
                 attn_budget_size(b->ceiling, ceil, sizeof ceil), why, held_what,
                 attn_budget_size(b->held, held, sizeof held));
        return buf;
    }
    switch (b->source) {
    case ATTN_BUDGET_NONE: snprintf(buf, (size_t)size, "no limit"); break;
    case ATTN_BUDGET_RAM:
    case ATTN_BUDGET_FREE:
    case ATTN_BUDGET_SETTING: snprintf(buf, (size_t)size, "the %s limit (%s)", n, why); break;
    case ATTN_BUDGET_CALLER: snprintf(buf, (size_t)size, "the %s limit", n); break;
    case ATTN_BUDGET_ULIMIT: {
        char map[32], res[32];
        snprintf(buf, (size_t)size, "the %s that the address-space limit (ulimit -v %s) leaves after %s mapped and %s "
                 "reserved", n, attn_budget_size(b->limit, lim, sizeof lim), attn_budget_size(b->mapped, map, sizeof map),
                 attn_budget_size(b->reserve, res, sizeof res));
        break;
    }
    }
    return buf;
}

const char *attn_budget_explain(const attn_budget *b, char *buf, int size)
{
    char n[32], lim[32], map[32], res[32], ceil[32];
    attn_budget_size(b->bytes, n, sizeof n);
    attn_budget_size(b->ceiling, ceil, sizeof ceil);
    char free_why[160];
    snprintf(free_why, sizeof free_why, "the memory this machine has free, less than half its physical memory (%s); "
             "--memory-gib sets another", attn_budget_size(b->half_ram, res, sizeof res));
    const char *why = b->source == ATTN_BUDGET_SETTING  ? "--memory-gib"
                      : b->source == ATTN_BUDGET_CALLER ? "set by the caller"
                      : b->source == ATTN_BUDGET_FREE   ? free_why
                                                        : "half the physical memory; --memory-gib sets another";
    if (b->source == ATTN_BUDGET_CALLER || isinf(b->limit)) {
        snprintf(buf, (size_t)size, "%s (%s%s)", n, why, isinf(b->limit) ? "; no address-space limit" : "");
        return buf;
    }
    attn_budget_size(b->limit, lim, sizeof lim);
    attn_budget_size(b->mapped, map, sizeof map);
    attn_budget_size(b->reserve, res, sizeof res);
    if (b->source == ATTN_BUDGET_ULIMIT)
        snprintf(buf, (size_t)size, "%s (what the address-space limit, ulimit -v %s, leaves after %s mapped and %s "
                 "reserved for threads and buffers; without it %s)", n, lim, map, res, ceil);
    else {
        char room[32];
        attn_budget_size(b->limit - b->mapped - b->reserve, room, sizeof room);
        snprintf(buf, (size_t)size, "%s (%s; the address-space limit, ulimit -v %s, leaves more: %s after %s mapped "
                 "and %s reserved for threads and buffers)", n, why, lim, room, map, res);
    }
    return buf;
}
