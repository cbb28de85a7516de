/* test_utf8.c — the UTF-8 module: decoding, ill-formed input, stepping both
 * ways, validation, encoding, and the wide-character test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/base/error.h"
#include "engine/base/utf8.h"

/* Decodes the character at s[0..n): expects code point cp of len bytes. */
static void expect(const char *s, size_t n, uint32_t cp, size_t len)
{
    uint32_t got;
    assert_int_equal(attn_utf8_decode(s, n, &got), len);
    assert_int_equal(got, cp);
}

static void test_ascii(void **state)
{
    (void)state;
    expect("A", 1, 'A', 1);
    expect("\x7F", 1, 0x7F, 1);
    expect("", 1, 0, 1); /* a NUL inside the text is a character */
    uint32_t cp = 7;
    assert_int_equal(attn_utf8_decode("A", 0, &cp), 0);
    assert_int_equal(cp, 0);
    assert_int_equal(attn_utf8_next("abc", 3, 1), 2);
    assert_int_equal(attn_utf8_prev("abc", 2), 1);
}

static void test_multibyte(void **state)
{
    (void)state;
    expect("\xC2\x80", 2, 0x80, 2);           /* smallest 2-byte */
    expect("é", 2, 0xE9, 2);
    expect("\xDF\xBF", 2, 0x7FF, 2);
    expect("\xE0\xA0\x80", 3, 0x800, 3);      /* smallest 3-byte */
    expect("中", 3, 0x4E2D, 3);
    expect("\xEF\xBF\xBF", 3, 0xFFFF, 3);
    expect("\xF0\x90\x80\x80", 4, 0x10000, 4); /* smallest 4-byte */
    expect("😀", 4, 0x1F600, 4);
    expect("\xF4\x8F\xBF\xBF", 4, 0x10FFFF, 4);
    expect("中x", SIZE_MAX, 0x4E2D, 3);       /* a zero-terminated string */
}

/* Ill-formed input: U+FFFD for each maximal subpart. */
static void test_overlong_and_out_of_range(void **state)
{
    (void)state;
    const uint32_t R = ATTN_UTF8_REPLACEMENT;
    expect("\xC0\x80", 2, R, 1);              /* overlong NUL: C0 is never a lead */
    expect("\xC1\xBF", 2, R, 1);
    expect("\xE0\x80\xAF", 3, R, 1);          /* overlong '/': E0 needs A0..BF next */
    expect("\xF0\x8F\xBF\xBF", 4, R, 1);      /* overlong U+FFFF */
    expect("\xF4\x90\x80\x80", 4, R, 1);      /* U+110000 */
    expect("\xF5\x80\x80\x80", 4, R, 1);
    expect("\xFF", 1, R, 1);
    expect("\x80", 1, R, 1);                  /* stray continuation */
    expect("\xBF\xBF", 2, R, 1);
}

static void test_surrogates(void **state)
{
    (void)state;
    expect("\xED\xA0\x80", 3, ATTN_UTF8_REPLACEMENT, 1); /* U+D800: ED needs 80..9F next */
    expect("\xED\xBF\xBF", 3, ATTN_UTF8_REPLACEMENT, 1); /* U+DFFF */
    expect("\xED\x9F\xBF", 3, 0xD7FF, 3);                /* just below them */
    char out[4];
    assert_int_equal(attn_utf8_encode(0xD800, out), 0);
    assert_int_equal(attn_utf8_encode(0xDFFF, out), 0);
    assert_false(attn_utf8_valid("\xED\xA0\x80", 3));
}

static void test_truncated(void **state)
{
    (void)state;
    const uint32_t R = ATTN_UTF8_REPLACEMENT;
    expect("\xE4\xBD" "a", 3, R, 2);          /* the valid prefix is one character */
    expect("\xE4\xBD", 2, R, 2);              /* cut by the end of the text */
    expect("\xF0\x9F\x98", 3, R, 3);
    expect("\xF0\x9F\x98\x80", 2, R, 2);      /* n counts, not the bytes after it */
    expect("\xE4", SIZE_MAX, R, 1);           /* stops at the NUL after it */
    assert_int_equal(attn_utf8_next("\xE4\xBD" "a", 3, 0), 2);
    assert_int_equal(attn_utf8_next("\xE4\xBD" "a", 3, 2), 3);
}

/* Offsets of every character of s[0..n) stepping forward; then stepping back
 * from n must visit the same offsets in reverse. */
static void check_steps(const char *s, size_t n, const size_t *want, int nwant)
{
    size_t at[64];
    int k = 0;
    for (size_t p = 0; p < n; p = attn_utf8_next(s, n, p)) at[k++] = p;
    assert_int_equal(k, nwant);
    for (int i = 0; i < k; i++) assert_int_equal(at[i], want[i]);
    size_t p = n;
    for (int i = k - 1; i >= 0; i--) assert_int_equal(p = attn_utf8_prev(s, p), at[i]);
    assert_int_equal(attn_utf8_prev(s, 0), 0);
    assert_int_equal(attn_utf8_next(s, n, n), n);
}

static void test_stepping(void **state)
{
    (void)state;
    const char *s = "a中é😀b";
    check_steps(s, strlen(s), (const size_t[]){0, 1, 4, 6, 10}, 5);
    /* ill-formed text steps the way it decodes: E4 BD | C0 | 80 | 80 | F0 9F | x */
    const char *bad = "\xE4\xBD\xC0\x80\x80\xF0\x9F" "x";
    check_steps(bad, strlen(bad), (const size_t[]){0, 2, 3, 4, 5, 7}, 6);
    /* a run of continuation bytes after a letter: each is its own character */
    const char *run = "a\x80\x80\x80\x80\x80";
    check_steps(run, strlen(run), (const size_t[]){0, 1, 2, 3, 4, 5}, 6);
}

/* Back over continuation bytes: from inside a character to its start. */
static void test_prev_from_inside(void **state)
{
    (void)state;
    const char *s = "x😀中";
    assert_int_equal(attn_utf8_prev(s, 5), 1); /* end of 😀 */
    assert_int_equal(attn_utf8_prev(s, 4), 1); /* holding its last continuation byte */
    assert_int_equal(attn_utf8_prev(s, 3), 1);
    assert_int_equal(attn_utf8_prev(s, 2), 1);
    assert_int_equal(attn_utf8_prev(s, 1), 0);
    assert_int_equal(attn_utf8_prev(s, 7), 5); /* inside 中: truncate to whole characters */
    assert_int_equal(attn_utf8_prev(s, 8), 5);
    /* the nearest boundary at or before byte i is attn_utf8_prev(s, i + 1) */
    assert_int_equal(attn_utf8_prev(s, 6 + 1), 5);
    assert_int_equal(attn_utf8_prev(s, 5 + 1), 5);
}

static void test_validation(void **state)
{
    (void)state;
    assert_true(attn_utf8_valid("", 0));
    assert_true(attn_utf8_valid("你是猫 AI 😀", strlen("你是猫 AI 😀")));
    assert_true(attn_utf8_valid("\xEF\xBF\xBD", 3));          /* U+FFFD itself is fine */
    assert_false(attn_utf8_valid("\xe4\xbd", 2));           /* truncated */
    assert_false(attn_utf8_valid("\xed\xa0\x80", 3));       /* surrogate */
    assert_false(attn_utf8_valid("\xf4\x90\x80\x80", 4));   /* > U+10FFFF */
    assert_false(attn_utf8_valid("\xe0\x80\xaf", 3));       /* overlong */
    assert_false(attn_utf8_valid("\xc0\x80", 2));           /* overlong NUL */
    assert_false(attn_utf8_valid("\x80", 1));               /* stray continuation */
    assert_false(attn_utf8_valid("ok\xfe", 3));
    assert_true(attn_utf8_valid("ok\xfe", 2));              /* only n bytes count */
}

static void test_encode_round_trip(void **state)
{
    (void)state;
    const uint32_t cps[] = {0, 'A', 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x4E2D, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF,
                            0x10000, 0x1F600, 0x10FFFF};
    for (size_t i = 0; i < sizeof cps / sizeof cps[0]; i++) {
        char buf[4];
        size_t n = attn_utf8_encode(cps[i], buf);
        assert_true(n >= 1 && n <= 4);
        assert_true(attn_utf8_valid(buf, n));
        expect(buf, n, cps[i], n);
    }
    char buf[4];
    assert_int_equal(attn_utf8_encode(0x110000, buf), 0);
    assert_int_equal(attn_utf8_encode(0x4E2D, buf), 3);
    assert_memory_equal(buf, "中", 3);
}

/* The punctuation a wrapped line never starts or ends with. */
static void test_line_edge_marks(void **state)
{
    (void)state;
    static const uint32_t closing[] = {0xFF0C, 0x3002, 0xFF09, 0x300D, 0x201D, 0x2026, '.', ',', ')', '?', '%'};
    static const uint32_t opening[] = {0xFF08, 0x300C, 0x201C, '(', '['};
    static const uint32_t neither[] = {'a', '0', ' ', 0x732B /* 猫 */, '-', 0};
    for (size_t i = 0; i < sizeof closing / sizeof *closing; i++)
        assert_true(attn_utf8_is_closing(closing[i]) && !attn_utf8_is_opening(closing[i]));
    for (size_t i = 0; i < sizeof opening / sizeof *opening; i++)
        assert_true(attn_utf8_is_opening(opening[i]) && !attn_utf8_is_closing(opening[i]));
    for (size_t i = 0; i < sizeof neither / sizeof *neither; i++)
        assert_false(attn_utf8_is_closing(neither[i]) || attn_utf8_is_opening(neither[i]));
}

static void test_wide(void **state)
{
    (void)state;
    const uint32_t wide[] = {
        0x4E2D, 0x6CE8, /* 中 注: CJK ideographs */
        0x3400, 0x20000, 0x30000, /* extension A, B, G */
        0xD55C, 0xAC00, 0xD7A3, 0x1100, /* 한, Hangul syllables, leading jamo */
        0x3042, 0x30A2, /* あ ア: kana */
        0x3000, 0x3001, 0x3002, 0x300C, /* ideographic space 、。「 */
        0xFF0C, 0xFF01, 0xFF08, 0xFF1F, 0xFFE5, /* ，！（？￥: full-width forms */
        0xFE30, 0xFE50, 0xFE10, /* compatibility, small and vertical forms */
        0x1F600, 0x1F680, 0x1F914, 0x1FAE0, /* 😀 🚀 🤔 🫠 */
    };
    const uint32_t narrow[] = {
        'A', 'z', ' ', '0', 0, 0xE9, 0x3B1, 0x416, /* Latin, é, α, Ж */
        0x2026, 0x2192, 0x2014, 0x201C, /* … → — “ */
        0x303F, 0xFF61, 0xFF71, /* half fill space, half-width 。 and ｱ */
        0x1D434, 0xFFFD, 0xE000, /* 𝐴, the replacement character, private use */
        0x1F650, 0x10FFFF,
    };
    for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++)
        if (!attn_utf8_is_wide(wide[i])) fail_msg("U+%04X should be wide", (unsigned)wide[i]);
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++)
        if (attn_utf8_is_wide(narrow[i])) fail_msg("U+%04X should be narrow", (unsigned)narrow[i]);
}

/* One line of well-formed UTF-8, whatever a file or folder name brings: what
 * lesson diagnostics, `lessons --list` and `models` print (issue 37, finding 26). */
static void test_one_line(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
    } CASES[] = {
        {"plain 注意力", "plain 注意力"},
        {"red \x1b[31mtitle\x1b[0m", "red  [31mtitle [0m"},      /* ESC: the sequence is harmless text */
        {"\x1b]0;pwned\x07x", " ]0;pwned x"},                     /* OSC, BEL */
        {"a\nb\rc\td\x7f" "e", "a b c d e"},                       /* line breaks, tab, DEL */
        {"\xc2\x9b" "2J \xc2\x85" "x", " 2J  x"},                   /* C1: CSI, NEL */
        {"a\xe2\x80\xa8" "b\xe2\x80\xa9" "c", "a b c"},              /* U+2028, U+2029 */
        {"cut \xe6\xb3", "cut "},                                   /* a character cut short */
        {"\xff\xc0\xafok\xed\xa0\x80", "ok"},                       /* stray, overlong, surrogate bytes */
        {"\xe2\x80\xaeRLO kept", "\xe2\x80\xaeRLO kept"},             /* a format character is not a break */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        char buf[64];
        strcpy(buf, CASES[i].in);
        assert_ptr_equal(attn_utf8_one_line(buf), buf);
        assert_string_equal(buf, CASES[i].out);
        assert_true(attn_utf8_valid(buf, strlen(buf)));
    }
}

/* Engine messages are one line of valid UTF-8 (issue 37): a quote cut by
 * '%.Ns' inside a character, or a message cut by the end of msg or by
 * attn_error_prefix, drops the broken character, as it drops other ill-formed
 * bytes; control characters become spaces (attn_utf8_one_line's rule). */
static void test_engine_messages(void **state)
{
    (void)state;
    attn_error err;
    /* "日本語" is 9 bytes: 4 cut it inside 本, 8 inside 語 */
    attn_fail(&err, ATTN_ERR_FORMAT, "token '%.4s…' is long", "日本語");
    assert_string_equal(err.msg, "token '日…' is long");
    attn_fail(&err, ATTN_ERR_FORMAT, "architecture '%.8s'", "日本語");
    assert_string_equal(err.msg, "architecture '日本'");
    attn_fail(&err, ATTN_ERR_FORMAT, "'%s'", "a\xff" "b\x80" "c\xc0\xaf" "d\xe6\x97\xa5\xe6" "e\x1b[2J\xc2\x9b" "1m\xe2\x80\xa8" "f\xef\xbf\xbd");
    assert_string_equal(err.msg, "'abcd日e [2J 1m f\xef\xbf\xbd'");
    assert_int_equal(err.status, ATTN_ERR_FORMAT);

    /* the end of msg falls inside a character: every length of filler */
    char long_text[2 * sizeof err.msg];
    for (size_t fill = 0; fill < 4; fill++) {
        size_t n = 0;
        for (; n < fill; n++) long_text[n] = 'x';
        while (n + 3 < sizeof long_text) n += (size_t)snprintf(long_text + n, sizeof long_text - n, "語");
        long_text[n] = '\0';
        attn_fail(&err, ATTN_ERR_FORMAT, "%s", long_text);
        if (!attn_utf8_valid(err.msg, strlen(err.msg)) || strlen(err.msg) + 3 < sizeof err.msg - 1)
            fail_msg("fill %zu: %zu bytes, valid %d", fill, strlen(err.msg), attn_utf8_valid(err.msg, strlen(err.msg)));
        for (size_t p = 1; p < 8; p++) { /* and so does the prefix's cut */
            attn_fail(&err, ATTN_ERR_FORMAT, "%s", long_text + fill);
            attn_error_prefix(&err, "pp/pp/pp" + 8 - p);
            if (!attn_utf8_valid(err.msg, strlen(err.msg)) || strncmp(err.msg, "pp/pp/pp" + 8 - p, p) != 0)
                fail_msg("fill %zu, prefix %zu: not valid UTF-8", fill, p);
        }
    }
    attn_error_prefix(&err, "\xe6\x97");
    assert_true(attn_utf8_valid(err.msg, strlen(err.msg)));
    assert_true(err.msg[0] == ':' && err.msg[1] == ' ');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ascii),
        cmocka_unit_test(test_multibyte),
        cmocka_unit_test(test_overlong_and_out_of_range),
        cmocka_unit_test(test_surrogates),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_stepping),
        cmocka_unit_test(test_prev_from_inside),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_encode_round_trip),
        cmocka_unit_test(test_wide),
        cmocka_unit_test(test_line_edge_marks),
        cmocka_unit_test(test_one_line),
        cmocka_unit_test(test_engine_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
