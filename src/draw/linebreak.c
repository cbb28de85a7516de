/* linebreak.c — where a line of text may break (linebreak.h). */
#include "linebreak.h"

#include <string.h>

#include "engine/base/utf8.h"

static uint32_t cp_at(const char *s, size_t i)
{
    uint32_t cp;
    attn_utf8_decode(s + i, SIZE_MAX, &cp);
    return cp;
}

static uint32_t cp_before(const char *s, size_t i)
{
    return i ? cp_at(s, attn_utf8_prev(s, i)) : 0;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* A wide character that is a word, not punctuation: a measure word. */
static bool is_wide_word(uint32_t cp)
{
    return attn_utf8_is_wide(cp) && !attn_utf8_is_closing(cp) && !attn_utf8_is_opening(cp);
}

/* s[a..b) equals the zero-terminated w. */
static bool is(const char *s, size_t a, size_t b, const char *w)
{
    return b - a == strlen(w) && !memcmp(s + a, w, b - a);
}

/* The word (bytes up to a space, a newline or the end) starting at a: its end. */
static size_t word_end(const char *s, size_t a)
{
    while (s[a] && s[a] != ' ' && s[a] != '\n') a++;
    return a;
}

/* The word ending at b: its start. */
static size_t word_start(const char *s, size_t b)
{
    while (b > 0 && s[b - 1] != ' ' && s[b - 1] != '\n') b--;
    return b;
}

/* An operator that stands between two operands in a formula. The middle dot
 * also separates the parts of a status line; keeping it with its neighbours
 * does no harm there. */
static bool is_operator(const char *s, size_t a, size_t b)
{
    static const char *const OPS[] = {"−", "-", "+", "×", "·", "=", "≈", "≠", "≤", "≥", "<", ">",
                                      "/", "*", "→", "±", "÷", "≡", "∝"};
    for (size_t k = 0; k < sizeof OPS / sizeof OPS[0]; k++)
        if (is(s, a, b, OPS[k])) return true;
    return false;
}

/* Where the number that starts at a ends (a sign, digits with , and . inside,
 * an exponent, then % or ×), or a when none starts there. */
static size_t number_end(const char *s, size_t a)
{
    size_t i = a;
    if (!strncmp(s + i, "−", 3)) i += 3;
    else if (!strncmp(s + i, "±", 2)) i += 2;
    else if (s[i] == '-' || s[i] == '+') i++;
    int digits = 0;
    for (; s[i]; i++) {
        if (is_digit(s[i])) digits++;
        else if (!((s[i] == ',' || s[i] == '.') && digits && is_digit(s[i + 1]))) break;
    }
    if (!digits) return a;
    if ((s[i] == 'e' || s[i] == 'E') && (is_digit(s[i + 1]) || ((s[i + 1] == '-' || s[i + 1] == '+') && is_digit(s[i + 2])))) {
        i += 2;
        while (is_digit(s[i])) i++;
    }
    if (s[i] == '%') i++;
    else if (!strncmp(s + i, "×", 2)) i += 2;
    return i;
}

static bool is_number(const char *s, size_t a, size_t b)
{
    return b > a && number_end(s, a) == b;
}

/* The word at a is a unit of measure (4,096 bytes, 3.0 KiB, 4.28 nats/token). */
static bool is_unit(const char *s, size_t a)
{
    static const char *const UNITS[] = {"B", "KiB", "MiB", "GiB", "kB", "KB", "MB", "GB", "byte", "bytes", "bit",
                                        "bits", "nat", "nats", "ms", "s", "rad", "px", "pt", "°"};
    size_t b = a;
    while (s[b] && s[b] != ' ' && s[b] != '\n' && s[b] != '/' && !attn_utf8_is_closing(cp_at(s, b)))
        b = attn_utf8_next(s, SIZE_MAX, b);
    for (size_t k = 0; k < sizeof UNITS / sizeof UNITS[0]; k++)
        if (is(s, a, b, UNITS[k])) return true;
    return false;
}

/* A number ends at byte b (after it, maybe one space): 4,096 字节, 3 个. */
static bool number_ends_at(const char *s, size_t b)
{
    if (b > 0 && s[b - 1] == ' ') b--;
    size_t a = b;
    while (a > 0 && (is_digit(s[a - 1]) || s[a - 1] == ',' || s[a - 1] == '.' || s[a - 1] == '%')) a--;
    if (a >= 3 && !strncmp(s + a - 3, "−", 3)) a -= 3;
    else if (a > 0 && (s[a - 1] == '-' || s[a - 1] == '+')) a--;
    if (a > 0 && (s[a - 1] & 0x80) == 0 && s[a - 1] != ' ' && s[a - 1] != '(' && s[a - 1] != '\n') return false; /* x2, W_1 */
    return is_number(s, a, b);
}

/* Byte i lies inside a Chinese unit of two or more characters written after
 * a number: 4,096 字节 is not broken into 字 and 节. */
static bool inside_cjk_unit(const char *s, size_t i)
{
    static const char *const UNITS[] = {"字节", "奈特", "毫秒", "比特", "千字节"};
    for (size_t k = 0; k < sizeof UNITS / sizeof UNITS[0]; k++) {
        size_t n = strlen(UNITS[k]);
        for (size_t back = 3; back < n && back <= i; back += 3) /* every boundary inside it: 3 bytes a character */
            if (!strncmp(s + i - back, UNITS[k], n) && number_ends_at(s, i - back)) return true;
    }
    return false;
}

/* The space before byte i (s[i - 1] == ' ') lies inside parentheses that hold
 * a shape or tuple: items without spaces, separated by ", ". */
static bool inside_tuple(const char *s, size_t i)
{
    enum { REACH = 80, MAX_ITEMS = 8 };
    if (i < 2 || s[i - 2] != ',') return false;
    size_t open = i - 2; /* back from the comma to the parenthesis */
    while (s[open] != '(') {
        if (open == 0 || i - open >= REACH) return false;
        open = attn_utf8_prev(s, open);
        uint32_t c = cp_at(s, open);
        if (c == ')' || c == '\n' || attn_utf8_is_wide(c)) return false;
    }
    int items = 1;
    for (size_t j = open + 1;; j = attn_utf8_next(s, SIZE_MAX, j)) {
        if (!s[j] || s[j] == '\n' || s[j] == '(' || j - open > REACH || attn_utf8_is_wide(cp_at(s, j))) return false;
        if (s[j] == ')') return j > open + 1 && s[j - 1] != ' ' && items <= MAX_ITEMS;
        if (s[j] == ' ' && s[j - 1] != ',') return false; /* words, not a tuple: (the stage memory; no mask) */
        if (s[j] == ',') items++;
    }
}

bool draw_break_before_loose(const char *s, size_t i)
{
    if (i == 0 || !s[i]) return false;
    uint32_t next = cp_at(s, i), prev = cp_before(s, i);
    if (attn_utf8_is_closing(next) || attn_utf8_is_opening(prev)) return false;
    if (s[i - 1] == ' ') return true;
    return attn_utf8_is_wide(next) || attn_utf8_is_wide(prev);
}

bool draw_break_before(const char *s, size_t i)
{
    if (!draw_break_before_loose(s, i)) return false;
    uint32_t next = cp_at(s, i), prev = cp_before(s, i);
    if (s[i] == ' ') /* a break before a space is the break after it */
        return s[i + 1] == ' ' || s[i + 1] == '\n' || !s[i + 1] || draw_break_before(s, i + 1);
    if (s[i - 1] == ' ') {
        size_t pe = i - 1, pa = word_start(s, pe), ne = word_end(s, i);
        /* a formula: i − j, with an operand on each side of the operator */
        if (is_operator(s, pa, pe) && pa > 0 && s[pa - 1] == ' ') return false;
        if (is_operator(s, i, ne) && s[ne] == ' ' && s[ne + 1] && s[ne + 1] != ' ' && s[ne + 1] != '\n') return false;
        /* a shape: (b, h, s, s) */
        if (inside_tuple(s, i)) return false;
        /* a number and its unit: 4,096 bytes, 3 个; 第 4 层 */
        if (is_number(s, pa, pe) && (is_unit(s, i) || is_wide_word(next))) return false;
        if (cp_before(s, pe) == 0x7B2C /* 第 */ && number_end(s, i) > i) return false;
        return true;
    }
    /* a slash joins what it stands between: 字节/token */
    if (next == '/' || prev == '/') return false;
    /* next to a wide character, no space: 4层, and inside 字节 after a number */
    if (is_wide_word(next) && !attn_utf8_is_wide(prev) && number_ends_at(s, i)) return false;
    if (attn_utf8_is_wide(prev) && attn_utf8_is_wide(next) && inside_cjk_unit(s, i)) return false;
    return true;
}
