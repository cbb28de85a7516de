/* budget.h — how much memory a command may still take, and which bound says so.
 *
 * A command estimates what it will hold (a trace: attn_trace_estimate; a trace
 * file: its size, mapped) and compares it with the budget before it allocates
 * anything, so that it is refused up front with both numbers instead of
 * failing halfway. The budget is the smaller of two bounds:
 *
 *   - the ceiling: --memory-gib when set, else half the physical memory or,
 *     when the machine has less free than that, what it has free (the
 *     kernel's MemAvailable, what can be taken without swapping, and what
 *     this process holds already), less what the front end holds besides
 *     traces (a picture's pixels, attn_budget_hold);
 *   - what the address-space limit (RLIMIT_AS, `ulimit -v`) leaves, when there
 *     is one: the limit, less the address space the process has mapped already
 *     (its libraries, a model's weights, a trace file it maps, a trace it holds),
 *     less a reserve for what the command maps besides its traces (thread
 *     stacks, BLAS buffers, and what the front end declares: the window's SDL,
 *     GL and fonts, a picture's pixels).
 *
 * The address-space room is measured when asked, so a second trace or file
 * is checked against what the first left. */
#ifndef ATTN_BUDGET_H
#define ATTN_BUDGET_H

#include <stdbool.h>

typedef enum {
    ATTN_BUDGET_NONE,    /* no bound at all (a file mapped without an address-space limit) */
    ATTN_BUDGET_RAM,     /* half the physical memory, the default ceiling */
    ATTN_BUDGET_FREE,    /* what the machine has free, when that is less (the default too) */
    ATTN_BUDGET_SETTING, /* --memory-gib */
    ATTN_BUDGET_CALLER,  /* a number a caller worked out from a budget (attn_config.max_bytes) */
    ATTN_BUDGET_ULIMIT   /* what the address-space limit leaves */
} attn_budget_source;

typedef struct {
    double bytes;              /* what the command may still take (>= 0; INFINITY: no bound) */
    attn_budget_source source; /* the bound that decided bytes */
    double ceiling;            /* the ceiling alone (--memory-gib, half the RAM or what is free; INFINITY: none) */
    double half_ram;           /* ATTN_BUDGET_FREE: the half of the RAM it is less than */
    double held;               /* taken off the ceiling: what the front end holds (attn_budget_hold) */
    double limit;              /* RLIMIT_AS's soft limit in bytes; INFINITY when unlimited */
    double mapped;             /* the address space the process had mapped when asked */
    double reserve;            /* what is kept for the command's own use besides traces */
} attn_budget;

/* The budget now. ceiling > 0: the caller's ceiling in bytes (--memory-gib),
 * INFINITY for none (mapping a file); 0: half the physical memory. computes:
 * the command is about to run forward passes, so the reserve counts the
 * compute threads' stacks and BLAS buffers too. */
attn_budget attn_budget_get(double ceiling, bool computes);

/* Adds bytes to the reserve of every later budget: what the front end will map
 * besides traces and compute threads (the window, a picture's pixels). Call it
 * once, before any thread starts. */
void attn_budget_reserve(double bytes);

/* Memory the front end fills besides traces (a picture's pixels): added to
 * the reserve, as attn_budget_reserve, and taken off the ceiling too, so that
 * the traces and it together stay within --memory-gib. what names it in the
 * refusals ("the picture"; a string that outlives the budget). Call it once,
 * before any thread starts. */
void attn_budget_hold(double bytes, const char *what);

/* Half the physical memory (4 GiB when it cannot be read). */
double attn_budget_half_ram(void);

/* What the machine has free for this process: nine tenths of MemAvailable
 * as meminfo (a /proc/meminfo) gives it, plus this process's resident memory
 * (its own traces and weights are its to reuse); INFINITY when meminfo
 * cannot be read or says nothing of it (a kernel before 3.14, a sandbox). */
double attn_budget_free_memory(const char *meminfo);

/* A size for a message: "512 bytes", "12 KiB", "785 MiB", "1.73 GiB". Returns buf. */
const char *attn_budget_size(double bytes, char *buf, int size);

/* The bound that decided b, as a message's "more than ..." says it: "the 2.00
 * GiB limit (--memory-gib)", "the 11.8 GiB limit (half the physical memory)",
 * "the 100 MiB that the 1.00 GiB limit (--memory-gib) leaves besides the
 * picture (924 MiB)",
 * "the 600 MiB that the address-space limit (ulimit -v 1.50 GiB) leaves after
 * 700 MiB mapped and 200 MiB reserved". Returns buf (160 bytes is enough). */
const char *attn_budget_text(const attn_budget *b, char *buf, int size);

/* The whole account, for `attnlab info`: "600 MiB (what the address-space
 * limit, ulimit -v 1.50 GiB, leaves after 700 MiB mapped and 200 MiB reserved
 * for threads and buffers; without it 11.77 GiB)". Returns buf. */
const char *attn_budget_explain(const attn_budget *b, char *buf, int size);

#endif
