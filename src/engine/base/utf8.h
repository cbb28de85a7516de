/* utf8.h — UTF-8 text: decode, step, validate, encode, and the wide test.
 *
 * Pure C, no other engine header: the engine, the lesson parser and the UI all
 * use it, so there is one answer to "where does this character end" and "does
 * it take two columns".
 *
 * Text is bytes s[0..n). One policy for ill-formed input everywhere: it
 * decodes as U+FFFD, one replacement per maximal subpart (Unicode 15, §3.9;
 * the WHATWG decoder does the same). So a stray continuation byte, C0, C1 or
 * F5..FF is one character of one byte, and a sequence cut short ("\xE4\xBD"
 * then 'a') is one character of its valid prefix. Stepping follows the
 * decoder, so attn_utf8_next and attn_utf8_prev always agree.
 *
 * Decoding never reads past a NUL byte inside s[0..n) (it is never a
 * continuation byte), so a zero-terminated string may pass SIZE_MAX as n. */
#ifndef ATTN_UTF8_H
#define ATTN_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ATTN_UTF8_REPLACEMENT 0xFFFDu

/* Decodes the character at the start of s[0..n) into *cp (U+FFFD when
 * ill-formed). Returns its length in bytes, 1..4; 0 (and *cp = 0) when n == 0. */
size_t attn_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Offset just past the character that starts at pos; n when pos >= n. */
size_t attn_utf8_next(const char *s, size_t n, size_t pos);

/* Offset where the character holding byte pos - 1 starts; 0 when pos == 0.
 * Reads only s[pos-4..pos). attn_utf8_prev(s, i + 1) is the start of the
 * character holding byte i: the nearest boundary at or before i. */
size_t attn_utf8_prev(const char *s, size_t pos);

/* True when s[0..n) is well-formed UTF-8: no stray or missing continuation
 * bytes, overlong forms, surrogates (U+D800..DFFF) or code points > U+10FFFF. */
bool attn_utf8_valid(const char *s, size_t n);

/* The offset of the first ill-formed byte of s[0..n), or n when it is well-formed. */
size_t attn_utf8_invalid_at(const char *s, size_t n);

/* Makes the zero-terminated s safe to print on one line of a terminal, in
 * place: each control character (C0 and C1, DEL, so ESC and the escape
 * sequences it starts), line break and line or paragraph separator (U+2028,
 * U+2029) becomes a space, and each ill-formed byte is dropped. What is left
 * is one line of well-formed UTF-8, never longer than s was. The one rule for
 * text a file or folder name brings to a message: a lesson's diagnostics, its
 * title in `lessons --list`, a model's folder name and card summary in
 * `models`. Returns s. */
char *attn_utf8_one_line(char *s);

/* Writes cp as UTF-8 into out; returns its length 1..4, or 0 (nothing
 * written) for a surrogate or cp > U+10FFFF. */
size_t attn_utf8_encode(uint32_t cp, char out[4]);

/* East Asian wide: CJK ideographs, kana, Hangul, full-width forms and emoji,
 * which take two terminal columns, may stand alone at a line edge, and join
 * across a soft line break without a space. */
bool attn_utf8_is_wide(uint32_t cp);

/* Punctuation a line never starts with (closing: ，。、：；！？）」』》】”’… and
 * . , ) : ; ! ? ] } %) or ends with (opening: （「『《【“‘ ( [): the one
 * rule of every wrapped text, the lesson panel's and draw_text_wrap's. */
bool attn_utf8_is_closing(uint32_t cp);
bool attn_utf8_is_opening(uint32_t cp);

#endif
