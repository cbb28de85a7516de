/* utf8.c — UTF-8 decode, step, validate, encode, and the wide test. */
#include "utf8.h"

#include <string.h>

#define BAD 0xFFFFFFFFu /* decode's mark for an ill-formed subpart */

static bool is_cont(unsigned char b) { return (b & 0xC0) == 0x80; }

/* The character at s[0..n), n > 0: its code point (BAD when ill-formed) and
 * its length in *len. A well-formed character is
 *     00..7F                  U+0000..007F
 *     C2..DF 80..BF           U+0080..07FF   (C0, C1 would be overlong)
 *     E0..EF 80..BF 80..BF    U+0800..FFFF   but E0 needs A0..BF (overlong)
 *                                            and ED needs 80..9F (surrogates)
 *     F0..F4 80..BF x2 ..     U+10000..10FFFF but F0 needs 90..BF (overlong)
 *                                            and F4 needs 80..8F (> U+10FFFF)
 * An ill-formed one ends before the first byte that breaks the table. */
static uint32_t decode(const unsigned char *s, size_t n, size_t *len)
{
    unsigned c = s[0];
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    size_t need;
    uint32_t cp;

    *len = 1;
    if (c < 0x80) return c;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 3;
        cp = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 4;
        cp = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return BAD; /* stray continuation, C0/C1, F5..FF */
    }
    for (size_t i = 1; i < need; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) return BAD; /* s[0..i) is the maximal subpart */
        cp = (cp << 6) | (s[i] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
        *len = i + 1;
    }
    return cp;
}

size_t attn_utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    size_t len;
    if (n == 0) return *cp = 0, 0;
    uint32_t c = decode((const unsigned char *)s, n, &len);
    *cp = c == BAD ? ATTN_UTF8_REPLACEMENT : c;
    return len;
}

char *attn_utf8_one_line(char *s)
{
    unsigned char *u = (unsigned char *)s;
    size_t n = strlen(s), out = 0, len;
    for (size_t i = 0; i < n; i += len) {
        uint32_t c = decode(u + i, n - i, &len);
        if (c == BAD) continue; /* the ill-formed subpart, dropped */
        if (c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 || c == 0x2029) u[out++] = ' ';
        else memmove(u + out, u + i, len), out += len;
    }
    u[out] = '\0';
    return s;
}

size_t attn_utf8_next(const char *s, size_t n, size_t pos)
{
    size_t len;
    if (pos >= n) return n;
    decode((const unsigned char *)s + pos, n - pos, &len);
    return pos + len;
}

size_t attn_utf8_prev(const char *s, size_t pos)
{
    const unsigned char *u = (const unsigned char *)s;
    if (pos == 0) return 0;
    /* back over at most three continuation bytes to a lead byte; it starts the
     * character holding pos - 1 if its decoding reaches that far, otherwise
     * pos - 1 is a stray continuation byte, a character of its own */
    size_t lead = pos - 1, stop = pos > 4 ? pos - 4 : 0, len;
    while (lead > stop && is_cont(u[lead])) lead--;
    if (!is_cont(u[lead])) {
        decode(u + lead, pos - lead, &len);
        if (lead + len == pos) return lead;
    }
    return pos - 1;
}

size_t attn_utf8_invalid_at(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len;
    for (size_t i = 0; i < n; i += len)
        if (decode(u + i, n - i, &len) == BAD) return i;
    return n;
}

bool attn_utf8_valid(const char *s, size_t n) { return attn_utf8_invalid_at(s, n) == n; }

size_t attn_utf8_encode(uint32_t cp, char out[4])
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp > 0x10FFFF) return 0;
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Markus Kuhn's wcwidth() ranges of East Asian Wide (W) and Fullwidth (F)
 * characters, by block, plus the emoji blocks. Coarser than Unicode's
 * EastAsianWidth.txt (a few unassigned or narrow code points inside the blocks
 * count as wide), and small enough to read. Sorted. */
static const struct { uint32_t lo, hi; } WIDE[] = {
    {0x1100, 0x115F},   /* Hangul Jamo leading consonants */
    {0x2329, 0x232A},   /* 〈 〉 angle brackets */
    {0x2E80, 0x303E},   /* CJK radicals, Kangxi, CJK symbols and punctuation (、。「」) */
    {0x3040, 0xA4CF},   /* kana, bopomofo, Hangul compatibility jamo, CJK, Yi */
    {0xAC00, 0xD7A3},   /* Hangul syllables */
    {0xF900, 0xFAFF},   /* CJK compatibility ideographs */
    {0xFE10, 0xFE19},   /* vertical forms */
    {0xFE30, 0xFE6F},   /* CJK compatibility forms, small form variants */
    {0xFF00, 0xFF60},   /* full-width ASCII and punctuation (，！（）) */
    {0xFFE0, 0xFFE6},   /* full-width signs (￥) */
    {0x1F300, 0x1F64F}, /* pictographs, emoticons */
    {0x1F680, 0x1F6FF}, /* transport and map symbols */
    {0x1F900, 0x1F9FF}, /* supplemental symbols and pictographs */
    {0x1FA70, 0x1FAFF}, /* symbols and pictographs extended-A */
    {0x20000, 0x2FFFD}, /* CJK extensions B..F, compatibility supplement */
    {0x30000, 0x3FFFD}, /* CJK extensions G.. */
};

bool attn_utf8_is_closing(uint32_t cp)
{
    static const uint32_t CLOSE[] = {0xFF0C, 0x3002, 0x3001, 0xFF1A, 0xFF1B, 0xFF01, 0xFF1F, 0xFF09,
                                     0x300D, 0x300F, 0x300B, 0x3011, 0x201D, 0x2019, 0x2026};
    if (cp > 0 && cp < 128) return strchr(".,):;!?]}%", (int)cp) != NULL;
    for (size_t i = 0; i < sizeof CLOSE / sizeof CLOSE[0]; i++)
        if (cp == CLOSE[i]) return true;
    return false;
}

bool attn_utf8_is_opening(uint32_t cp)
{
    static const uint32_t OPEN[] = {'(', '[', 0xFF08, 0x300C, 0x300E, 0x300A, 0x3010, 0x201C, 0x2018};
    for (size_t i = 0; i < sizeof OPEN / sizeof OPEN[0]; i++)
        if (cp == OPEN[i]) return true;
    return false;
}

bool attn_utf8_is_wide(uint32_t cp)
{
    if (cp < WIDE[0].lo) return false; /* the fast path: Latin, Greek, Cyrillic, ... */
    for (size_t i = 0; i < sizeof WIDE / sizeof WIDE[0] && cp >= WIDE[i].lo; i++)
        if (cp <= WIDE[i].hi) return true;
    return false;
}
