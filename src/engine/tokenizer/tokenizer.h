/* tokenizer.h — a Hugging Face tokenizer.json: text → token ids → text.
 *
 * The pipeline of the Hugging Face tokenizers library, for the components
 * read here (any other is refused by name when the file is loaded):
 *
 *   text → split at added tokens (kept whole) → normalizer (Lowercase, NFC,
 *   NFKC, Prepend, Replace, Sequence) → pre-tokenizer (ByteLevel, Digits,
 *   Metaspace, Split, Whitespace, WhitespaceSplit, Sequence) → model (WordLevel, or BPE:
 *   each piece's characters merged pair by pair in the order of the merges
 *   list, unknown characters as their "<0xXX>" bytes with byte_fallback) →
 *   post-processor (TemplateProcessing: the BOS it puts first; ByteLevel) → ids
 *
 *   ids → their strings (special ones skipped if asked) → decoder (ByteLevel,
 *   ByteFallback, Fuse, Metaspace, Replace, Strip, Sequence; none: joined
 *   with spaces) → text
 *
 * Text that is not valid UTF-8 is read with each ill-formed part as U+FFFD
 * (utf8.h's policy), as Rust's String::from_utf8_lossy does.
 *
 * Limits. A tokenizer.json may come from anywhere, so nothing in it may make
 * reading it or encoding a text take memory or time without bound; past a
 * limit the file is refused in one line that names it, the step and the
 * limit. No published tokenizer comes near them:
 *   the file        at most 64 MiB and 4,194,304 JSON values (cJSON's tree
 *                   costs some 80 bytes a value; so at most as many tokens
 *                   and merges); ids up to 4,194,303; patterns of at most
 *                   8 KiB; added tokens of at most 256 bytes; 8 steps of
 *                   each kind
 *   a text          at most ATTN_TOKENIZER_MAX_TEXT bytes
 *   each normalizer, pre-tokenizer or decoder step
 *                   at most 16 × the bytes it is given + 1,024, and 4 MiB
 *   each search of a pattern
 *                   PCRE2's match and depth limits 100,000 + 10 per byte
 *                   searched, 8 MiB of heap or 1 MiB of JIT stack
 *                   (tokenizer_regex.c); a pattern that meets one is an error,
 *                   never "no match"
 *   the searches of one pre-tokenizer split
 *                   at most 1 MiB + 32 bytes read per byte of its text in all
 *                   (a search reads a window past its start, doubled only
 *                   when the match needs more): a pattern that reads to the
 *                   end from every match is refused, not run in n² time
 * Every JSON file is read under json.h's rule (nothing after the value, no
 * NUL in a string, no key given twice). */
#ifndef ATTN_TOKENIZER_H
#define ATTN_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/base/error.h"

typedef struct attn_tokenizer attn_tokenizer; /* opaque */

#define ATTN_TOKENIZER_MAX_TEXT (1 << 20) /* bytes of one text to encode */

/* Reads tokenizer.json at path (a regular file of at most 64 MiB). */
attn_status attn_tokenizer_load(const char *path, attn_tokenizer **out, attn_error *err);
/* The same from JSON in memory; `what` starts every message ("tok.json"). */
attn_status attn_tokenizer_parse(const char *json, size_t len, const char *what, attn_tokenizer **out,
                                 attn_error *err);
void attn_tokenizer_free(attn_tokenizer *t); /* NULL is fine */

int attn_tokenizer_vocab_size(const attn_tokenizer *t);           /* largest id + 1 */
const char *attn_tokenizer_token(const attn_tokenizer *t, int id); /* NULL out of range or unassigned */
int attn_tokenizer_find(const attn_tokenizer *t, const char *token); /* an exact token's (or label's) id, or -1 */
int attn_tokenizer_unk(const attn_tokenizer *t);                   /* -1 if none */
int attn_tokenizer_bos(const attn_tokenizer *t);                   /* what the post-processor puts first, -1 if none */
bool attn_tokenizer_is_special(const attn_tokenizer *t, int id);

/* As tokenizer.encode(text, add_special_tokens=add_special).ids. Caller frees *ids.
 * A text longer than ATTN_TOKENIZER_MAX_TEXT is ATTN_ERR_CONFIG; a step of
 * the file past its limit, ATTN_ERR_FORMAT naming the file. */
attn_status attn_tokenizer_encode(const attn_tokenizer *t, const char *text, bool add_special, int **ids, int *n,
                                  attn_error *err);
/* Token id's text as a label shows it: a byte-level token's bytes ("Ġthe" →
 * "␣the") or a SentencePiece one's ("▁the" → "␣the"), a space as '␣', a
 * newline as '↵', control bytes and partial UTF-8 as <0xXX> (never U+FFFD
 * for bytes that are there); special tokens as they are. Writes out and
 * returns it ("" for an unknown id). */
const char *attn_tokenizer_label(const attn_tokenizer *t, int id, char *out, size_t size);

/* As tokenizer.decode(ids, skip_special_tokens=skip_special): an id that is
 * no token (a model's vocab_size may be larger than its tokenizer) is skipped,
 * as the reference library skips it. Caller frees *text. */
attn_status attn_tokenizer_decode(const attn_tokenizer *t, const int *ids, int n, bool skip_special, char **text,
                                  attn_error *err);

#endif
