/* tokenizer_regex.c — the file's patterns, run under limits.
 *
 * A pattern from a tokenizer.json can backtrack without end: "(x+x+)+y" tries
 * every way of cutting a run of x's in two before it gives up, 2^n ways for n
 * x's. PCRE2 stops such a match at its limits and returns an error; that
 * error is the file's fault and is reported as one, never read as "no match"
 * (which would silently leave the text unsplit).
 *
 * The limits grow with the text left to search, so that a tokenizer's usual
 * pattern never meets them: GPT-2's, Llama 3's and Qwen's, on a megabyte of
 * prose, digits or spaces, need at most 1 unit of the match limit per byte
 * (Qwen's \s*[\r\n]+ over a run of spaces) and a few frames of depth.
 * A pattern whose group repeats per character ("(?:\p{L}|')+") needs
 * about 280 bytes of heap per character in the interpreter and 30 of JIT
 * stack, so the memory limits let such a word run to some 30,000 bytes.
 *
 * Those limits hold each search; a split searches once per piece, and a
 * pattern can read far past the match it finds: a(?=[^c]*c)? reads to the
 * end of a text without a c from every a, so 100 KB of a's took 2.85 s,
 * quadratic, each search well inside its limits; a(?=[^c]*[cd]) did the
 * same inside one search, trying every start. So a search tries its starts
 * one by one, each an anchored match over TOK_WINDOW bytes of the text with
 * PCRE2_PARTIAL_HARD: a try that needed to read past the window's end says
 * so (a partial match) and runs again over twice the window, until it has
 * its answer or the text ends. A try that never reached its window's end
 * read nothing beyond it, so its answer is the one over the whole text, and
 * the first start that matches gives the leftmost match, as one unanchored
 * search would. Each try is charged its window, and the searches of one text
 * may be charged at most TOK_SCAN_BASE + TOK_SCAN_PER_BYTE × its length: the
 * usual patterns stay far below (a start that fails costs TOK_WINDOW), and
 * a(?=[^c]*c)? is refused after a few dozen of its starts, in milliseconds.
 *
 * Patterns are compiled once more by PCRE2's JIT where it is available
 * (pcre2_jit_compile), which pcre2_match then uses on its own; where it is
 * not (a platform without it, or memory that may not be executable), the
 * interpreter runs the same patterns under its depth and heap limits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "engine/tokenizer/tokenizer_impl.h"

attn_status attn_tok_compile(const char *pattern, bool literal, bool anchored, const char *what, pcre2_code **re,
                             attn_error *err)
{
    int code;
    PCRE2_SIZE at;
    size_t n = strlen(pattern);
    *re = NULL;
    if (n > TOK_MAX_PATTERN)
        return attn_fail(err, ATTN_ERR_FORMAT, "%s: the pattern has %zu bytes, more than the %d a pattern may have",
                         what, n, TOK_MAX_PATTERN);
    uint32_t options = (literal ? PCRE2_UTF | PCRE2_LITERAL : PCRE2_UTF | PCRE2_UCP) | (anchored ? PCRE2_ANCHORED : 0);
    *re = pcre2_compile((PCRE2_SPTR)pattern, n, options, &code, &at, NULL);
    if (!*re) {
        PCRE2_UCHAR msg[120];
        pcre2_get_error_message(code, msg, sizeof msg);
        return attn_fail(err, ATTN_ERR_FORMAT, "%s: pattern does not compile at offset %zu: %s", what, (size_t)at,
                         (const char *)msg);
    }
    /* both kinds of match a search makes (attn_tok_match); where it fails, pcre2_match interprets */
    pcre2_jit_compile(*re, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD);
    return ATTN_OK;
}

attn_status attn_tok_matcher_init(attn_tok_matcher *m, attn_error *err)
{
    uint32_t jit = 0;
    memset(m, 0, sizeof *m);
    pcre2_config(PCRE2_CONFIG_JIT, &jit); /* without a JIT there is no stack to make */
    m->ctx = pcre2_match_context_create(NULL);
    m->md = pcre2_match_data_create(1, NULL); /* only the whole match is read */
    m->stack = jit ? pcre2_jit_stack_create(32 * 1024, TOK_JIT_STACK, NULL) : NULL;
    if (!m->ctx || !m->md || (jit && !m->stack)) {
        attn_tok_matcher_free(m);
        return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    }
    pcre2_jit_stack_assign(m->ctx, NULL, m->stack);
    pcre2_set_heap_limit(m->ctx, TOK_HEAP_LIMIT / 1024); /* in KiB */
    return ATTN_OK;
}

void attn_tok_matcher_free(attn_tok_matcher *m)
{
    pcre2_match_data_free(m->md);
    pcre2_jit_stack_free(m->stack);
    pcre2_match_context_free(m->ctx);
    memset(m, 0, sizeof *m);
}

/* The match and depth limits for a search of `left` bytes. */
static uint32_t limit_for(size_t left)
{
    size_t l = TOK_MATCH_BASE + TOK_MATCH_PER_BYTE * left;
    return l > UINT32_MAX ? UINT32_MAX : (uint32_t)l;
}

/* PCRE2's error rc as the file's problem, with the limit it met; where:
 * "at byte 12 of 40". */
static attn_status regex_error(int rc, size_t left, const char *where, attn_error *err)
{
    PCRE2_UCHAR msg[120];
    pcre2_get_error_message(rc, msg, sizeof msg);
    switch (rc) {
    case PCRE2_ERROR_MATCHLIMIT:
    case PCRE2_ERROR_DEPTHLIMIT:
        return attn_fail(err, ATTN_ERR_FORMAT, "the pattern backtracks without end %s (%s: %u, that is %d + %d per "
                         "byte searched)", where, (const char *)msg, limit_for(left), TOK_MATCH_BASE, TOK_MATCH_PER_BYTE);
    case PCRE2_ERROR_HEAPLIMIT:
    case PCRE2_ERROR_JIT_STACKLIMIT:
        return attn_fail(err, ATTN_ERR_FORMAT, "the pattern keeps too much to backtrack to %s (%s: %d KiB of heap, or "
                         "%d KiB of JIT stack)", where, (const char *)msg, TOK_HEAP_LIMIT / 1024, TOK_JIT_STACK / 1024);
    case PCRE2_ERROR_NOMEMORY: return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    default: return attn_fail(err, ATTN_ERR_FORMAT, "the pattern fails %s: %s", where, (const char *)msg);
    }
}

attn_status attn_tok_match(attn_tok_matcher *m, const pcre2_code *re, const char *s, size_t n, size_t at, size_t *a, size_t *b,
                           bool *found, attn_error *err)
{
    uint32_t limit = limit_for(n - at);
    pcre2_set_match_limit(m->ctx, limit);
    pcre2_set_depth_limit(m->ctx, limit);
    if (at == 0) { /* a new text */
        m->read = 0;
        m->most = TOK_SCAN_BASE + (n < SIZE_MAX / TOK_SCAN_PER_BYTE ? TOK_SCAN_PER_BYTE * n : SIZE_MAX - TOK_SCAN_BASE);
    }
    /* PCRE2 checks the subject is UTF-8 at every call: once per piece is
     * enough (the pipeline only makes UTF-8, and a call per match would check
     * the rest of the piece again each time). A piece that is not is given
     * whole, for PCRE2 to say where. */
    bool whole = at == 0 && !attn_utf8_valid(s, n);
    uint32_t check = whole ? 0 : PCRE2_NO_UTF_CHECK;
    /* Start by start, each an anchored match over a window of the text:
     * the subject ends at the window's end, so a try can read no further,
     * and with PCRE2_PARTIAL_HARD a try that needed more says so and runs
     * again over twice the window. Every try is charged its window, so the
     * bytes charged bound the bytes read, inside one search as across them. */
    uint32_t compiled = 0; /* a pattern not compiled anchored is anchored at each try (PCRE2 then interprets) */
    pcre2_pattern_info(re, PCRE2_INFO_ARGOPTIONS, &compiled);
    check |= compiled & PCRE2_ANCHORED ? 0 : PCRE2_ANCHORED;
    int rc;
    size_t from = at, window = TOK_WINDOW;
    for (;;) {
        size_t end = whole || n - from <= window ? n : from + window;
        while (end < n && ((unsigned char)s[end] & 0xC0) == 0x80) end++; /* a character's first byte */
        size_t cost = end > from ? end - from : 1;
        if (m->read > m->most || cost > m->most - m->read)
            return attn_fail(err, ATTN_ERR_FORMAT, "the pattern reads too far ahead at byte %zu of %zu (its searches "
                             "may read %d + %d bytes per byte of the text, %zu here, in all)", from, n, TOK_SCAN_BASE,
                             TOK_SCAN_PER_BYTE, m->most);
        m->read += cost;
        rc = pcre2_match(re, (PCRE2_SPTR)s, end, from, check | (end < n ? PCRE2_PARTIAL_HARD : 0), m->md, m->ctx);
        if (rc == PCRE2_ERROR_PARTIAL) { /* this start needs more of the text */
            window *= 2;
            continue;
        }
        if (rc != PCRE2_ERROR_NOMATCH || from >= n) break; /* a match, an error, or no start left */
        from = attn_utf8_next(s, n, from);                 /* this start fails: the next one */
        window = TOK_WINDOW;
    }
    *found = rc >= 0; /* 0: a match the one-pair ovector holds only the bounds of */
    if (rc == PCRE2_ERROR_NOMATCH) return ATTN_OK;
    if (rc < 0) {
        char where[64];
        snprintf(where, sizeof where, "at byte %zu of %zu", at, n);
        return regex_error(rc, n - at, where, err);
    }
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
    *a = ov[0];
    *b = ov[1];
    return ATTN_OK;
}

attn_status attn_tok_replace(attn_tok_matcher *m, const pcre2_code *re, const char *s, const char *with, size_t most,
                             char **out, size_t *len, bool *over, attn_error *err)
{
    size_t n = strlen(s);
    uint32_t limit = limit_for(n);
    PCRE2_SIZE cap = most + 1;
    *out = malloc(cap);
    *over = false;
    if (!*out) return attn_fail(err, ATTN_ERR_NOMEM, "out of memory");
    pcre2_set_match_limit(m->ctx, limit);
    pcre2_set_depth_limit(m->ctx, limit);
    /* with a buffer of `most` bytes, PCRE2 stops at the first match that does not fit */
    int rc = pcre2_substitute(re, (PCRE2_SPTR)s, n, 0, PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_LITERAL, m->md,
                              m->ctx, (PCRE2_SPTR)with, PCRE2_ZERO_TERMINATED, (PCRE2_UCHAR *)*out, &cap);
    if (rc >= 0) {
        *len = cap;
        return ATTN_OK;
    }
    free(*out);
    *out = NULL;
    if (rc == PCRE2_ERROR_NOMEMORY) { /* the output, not the heap: more than `most` bytes */
        *over = true;
        return ATTN_OK;
    }
    char where[64];
    snprintf(where, sizeof where, "in a text of %zu bytes", n);
    return regex_error(rc, n, where, err);
}
