/* blas.c — OpenBLAS, opened when the first matrix product needs it. */
#include "blas.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifdef ATTNLAB_HAVE_BLAS
#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#define MIB (1024.0 * 1024.0)

static int cores(void)
{
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#endif
}

int attn_blas_start_threads(void)
{
    static const char *const VARS[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"};
    int n = 0, all = cores();
    for (size_t i = 0; i < sizeof VARS / sizeof VARS[0] && n <= 0; i++) {
        const char *v = getenv(VARS[i]);
        n = v ? atoi(v) : 0;
    }
    return n > 0 && n < all ? n : all;
}

/* The stacks of the compute threads beyond the caller, which the pass may
 * still start after the library is opened. */
double attn_blas_thread_stacks(int threads)
{
    struct rlimit st;
    double stack = getrlimit(RLIMIT_STACK, &st) == 0 && st.rlim_cur != RLIM_INFINITY ? (double)st.rlim_cur : 2 * MIB;
    return threads > 1 ? (threads - 1) * stack : 0;
}

int attn_blas_compute_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return attn_blas_start_threads();
#endif
}

const char *attn_blas_core_for(bool intel, bool avx512, bool avx2)
{
    if (!intel) return NULL;
    return avx512 ? "SKYLAKEX" : avx2 ? "HASWELL" : NULL;
}

const char *attn_blas_choose_core(void)
{
#if defined(ATTNLAB_HAVE_BLAS) && (defined(__x86_64__) || defined(__i386__))
    if (getenv("OPENBLAS_CORETYPE")) return NULL; /* the user's choice stands */
    __builtin_cpu_init();
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512cd");
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const char *core = attn_blas_core_for(__builtin_cpu_is("intel"), avx512, avx2);
    return core && !setenv("OPENBLAS_CORETYPE", core, 0) ? core : NULL;
#else
    return NULL;
#endif
}

#ifndef ATTNLAB_HAVE_BLAS

bool attn_blas_sgemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                     int ldb, float *c, int ldc)
{
    (void)trans_b, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)c, (void)ldc;
    return false;
}

bool attn_blas_sgemv(int k, int n, float alpha, const float *b, int ldb, const float *a, float *c)
{
    (void)k, (void)n, (void)alpha, (void)b, (void)ldb, (void)a, (void)c;
    return false;
}

double attn_blas_reserve(int threads)
{
    (void)threads;
    return 0;
}

const char *attn_blas_describe(char *buf, size_t size)
{
    snprintf(buf, size, "the engine's own loops (built without OpenBLAS)");
    return buf;
}

#else

/* What OpenBLAS maps for each thread that multiplies (its BUFFER_SIZE on
 * x86-64), and besides its file's size for the libraries it brings
 * (libgfortran, libquadmath): measured, opening Debian 12's OpenMP build
 * (36.5 MB) mapped 39.2 MiB plus 128 MiB a start-up thread. */
#define BUFFER (128 * MIB)
#define BESIDES_FILE (8 * MIB)
/* left over after everything counted, for what the counting misses (a thread's stack or two) */
#define SLACK (16 * MIB)

/* ATTNLAB_BLAS_PATHS (CMake): the library the build found, as colon-separated
 * names to try: its soname beside it, its real file, the soname anywhere. */
#ifndef ATTNLAB_BLAS_PATHS
#define ATTNLAB_BLAS_PATHS "libopenblas.so.0"
#endif

enum { PENDING, OPEN, NOT_FOUND, NO_ROOM };

typedef __typeof__(cblas_sgemm) sgemm_t;
typedef __typeof__(cblas_sgemv) sgemv_t;

static struct {
    atomic_int state;  /* PENDING until the first product settles it */
    sgemm_t *sgemm;
    sgemv_t *sgemv;
    char path[512];    /* the library to open: the first of ATTNLAB_BLAS_PATHS that exists */
    char opened[512];  /* OPEN: the name that opened */
    char core[64];     /* OPEN: its kernels' name (openblas_get_corename), or "" */
    double file;       /* its size, bytes */
    int threads;       /* OPEN: the start-up threads it mapped buffers for */
    double need, room; /* NO_ROOM: what opening it needed, and what the limit left */
    char why[300];     /* NOT_FOUND: dlerror's */
} lib;

/* What the address-space limit (RLIMIT_AS) leaves now: the limit less the
 * address space mapped (/proc/self/statm's size); INFINITY without a limit.
 * (budget.h counts the same, and more; it sits above this file.) */
static double room_now(void)
{
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY) return INFINITY;
    unsigned long pages = 0;
    long page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    bool ok = f && fscanf(f, "%lu", &pages) == 1 && page > 0;
    if (f) fclose(f);
    return ok ? (double)as.rlim_cur - (double)pages * (double)page : 0; /* unreadable: no room known */
}

static pthread_once_t once = PTHREAD_ONCE_INIT, found = PTHREAD_ONCE_INIT;

/* The first candidate that exists, as lib.path and lib.file (else the last
 * name, size 0); once, before anything reads them. */
static void find_file(void)
{
    char names[] = ATTNLAB_BLAS_PATHS, *save = NULL;
    for (char *p = strtok_r(names, ":", &save); p; p = strtok_r(NULL, ":", &save)) {
        struct stat sb;
        snprintf(lib.path, sizeof lib.path, "%s", p);
        lib.file = 0;
        if (stat(p, &sb) == 0) {
            lib.file = (double)sb.st_size;
            return;
        }
    }
}

/* What opening the library and multiplying on `threads` threads maps: its
 * code, a buffer for each of the threads it starts with or grows to (the
 * OpenMP build follows the caller's thread count at each product), and one
 * for the calling thread. */
static double opening_bytes(int threads)
{
    pthread_once(&found, find_file);
    int start = attn_blas_start_threads(), most = threads > start ? threads : start;
    double code = lib.file > 0 ? lib.file + BESIDES_FILE : 48 * MIB; /* not found by name: a guess */
    return code + BUFFER * (most + 1);
}

static void open_library(void)
{
    int threads = attn_blas_compute_threads();
    double need = opening_bytes(threads) + attn_blas_thread_stacks(threads), room = room_now();
    if (need + SLACK > room) { /* isinf(limit): room is infinite */
        lib.need = need;
        lib.room = room > 0 ? room : 0;
        atomic_store(&lib.state, NO_ROOM);
        return;
    }
    char names[] = ATTNLAB_BLAS_PATHS, *save = NULL;
    void *h = NULL;
    for (char *p = strtok_r(names, ":", &save); p && !h; p = strtok_r(NULL, ":", &save))
        if ((h = dlopen(p, RTLD_NOW | RTLD_LOCAL))) snprintf(lib.opened, sizeof lib.opened, "%s", p);
    if (h) {
        lib.sgemm = (sgemm_t *)dlsym(h, "cblas_sgemm");
        lib.sgemv = (sgemv_t *)dlsym(h, "cblas_sgemv");
    }
    if (!h || !lib.sgemm || !lib.sgemv) {
        const char *e = dlerror();
        snprintf(lib.why, sizeof lib.why, "%s", e ? e : "no cblas_sgemm in it");
        atomic_store(&lib.state, NOT_FOUND);
        return; /* never closed: a library's constructor may have started threads */
    }
    char *(*corename)(void) = (char *(*)(void))dlsym(h, "openblas_get_corename");
    const char *core = corename ? corename() : NULL;
    snprintf(lib.core, sizeof lib.core, "%s", core ? core : "");
    lib.threads = attn_blas_start_threads();
    atomic_store(&lib.state, OPEN);
}

static bool ready(void)
{
    if (atomic_load(&lib.state) == PENDING) pthread_once(&once, open_library);
    return atomic_load(&lib.state) == OPEN;
}

bool attn_blas_sgemm(bool trans_b, int m, int n, int k, float alpha, const float *a, int lda, const float *b,
                     int ldb, float *c, int ldc)
{
    if (!ready()) return false;
    lib.sgemm(CblasRowMajor, CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b, ldb, 0.0f,
              c, ldc);
    return true;
}

bool attn_blas_sgemv(int k, int n, float alpha, const float *b, int ldb, const float *a, float *c)
{
    if (!ready()) return false;
    lib.sgemv(CblasRowMajor, CblasTrans, k, n, alpha, b, ldb, a, 1, 0.0f, c, 1);
    return true;
}

double attn_blas_reserve(int threads)
{
    if (atomic_load(&lib.state) != OPEN) return 0; /* to be opened only in the room a trace leaves */
    int more = threads > lib.threads ? threads - lib.threads : 0;
    return BUFFER * (more + 1); /* the buffers it grows to, and the caller's */
}

const char *attn_blas_describe(char *buf, size_t size)
{
    switch (atomic_load(&lib.state)) {
    case OPEN:
        snprintf(buf, size, "OpenBLAS (%s, %d threads%s%s%s)", lib.opened, lib.threads, lib.core[0] ? ", " : "",
                 lib.core, lib.core[0] ? " kernels" : "");
        break;
    case NOT_FOUND: snprintf(buf, size, "the engine's own loops: OpenBLAS could not be opened (%s)", lib.why); break;
    case NO_ROOM:
        snprintf(buf, size, "the engine's own loops: OpenBLAS needs about %.0f MiB, more than the %.0f MiB the "
                 "address-space limit left", lib.need / MIB, lib.room / MIB);
        break;
    default: {
        int t = attn_blas_compute_threads();
        double need = opening_bytes(t) + attn_blas_thread_stacks(t); /* (also finds the file) */
        int n = isinf(room_now())
                    ? snprintf(buf, size, "OpenBLAS (%s), opened at the first product", lib.path)
                    : snprintf(buf, size, "OpenBLAS (%s) from the first product if the address-space limit still "
                               "leaves the %.0f MiB it maps then, else the engine's own loops", lib.path, need / MIB);
        const char *core = getenv("OPENBLAS_CORETYPE"); /* attnlab's (attn_blas_choose_core) or the user's */
        if (core && n >= 0 && (size_t)n < size)
            snprintf(buf + n, size - (size_t)n, ", its kernels OPENBLAS_CORETYPE=%.32s", core);
    }
    }
    return buf;
}

#endif
