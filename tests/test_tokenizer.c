/* test_tokenizer.c — tokenizer.json: each component on small hand-made files,
 * the refusals, and text that is not UTF-8. (check_tokenizer_node.mjs checks
 * the same files against Hugging Face's own library.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "engine/base/utf8.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/tokenizer/tokenizer_impl.h" /* attn_tok_match, the limits */

/* A tokenizer.json from its parts (each a JSON value). */
static attn_tokenizer *make(const char *model, const char *added, const char *norm, const char *pre, const char *post,
                            const char *dec)
{
    char json[4096];
    attn_tokenizer *t;
    attn_error err;
    snprintf(json, sizeof json,
             "{\"version\":\"1.0\",\"added_tokens\":%s,\"normalizer\":%s,\"pre_tokenizer\":%s,\"post_processor\":%s,"
             "\"decoder\":%s,\"model\":%s}",
             added, norm, pre, post, dec, model);
    if (attn_tokenizer_parse(json, strlen(json), "t.json", &t, &err)) fail_msg("%s", err.msg);
    return t;
}

static const char *const SPECIALS =
    "[{\"id\":0,\"content\":\"<unk>\",\"special\":true},{\"id\":1,\"content\":\"<s>\",\"special\":true},"
    "{\"id\":2,\"content\":\"</s>\",\"special\":true}]";
static const char *const BOS_TEMPLATE =
    "{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\",\"type_id\":0}},"
    "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\",\"ids\":[1],\"tokens\":[\"<s>\"]}}}";

static void expect_ids(const attn_tokenizer *t, const char *text, bool special, const int *want, int n)
{
    int *ids, got;
    attn_error err;
    if (attn_tokenizer_encode(t, text, special, &ids, &got, &err)) fail_msg("%s: %s", text, err.msg);
    if (got != n) fail_msg("'%s': %d ids, want %d", text, got, n);
    for (int i = 0; i < n; i++)
        if (ids[i] != want[i]) fail_msg("'%s': id %d is %d, want %d", text, i, ids[i], want[i]);
    free(ids);
}
#define IDS(t, text, special, ...) \
    expect_ids(t, text, special, (const int[]){__VA_ARGS__}, (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int)))

static void word_level(void **state)
{
    (void)state;
    attn_tokenizer *t = make("{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"<s>\":1,"
                             "\"</s>\":2,\"the\":3,\"jury\":4,\"'\":5,\"s\":6,\",\":7,\"!\":8,\"café\":9,\"猫猫\":10,"
                             "\"2024\":11,\"ünïcode\":12,\"_x\":13}}",
                             SPECIALS, "{\"type\":\"Lowercase\"}", "{\"type\":\"Whitespace\"}", BOS_TEMPLATE, "null");
    /* \w+ and [^\w\s]+: apostrophes and punctuation are words of their own; case folds */
    IDS(t, "The JURY's verdict, 2024!", true, 1, 3, 4, 5, 6, 0, 7, 11, 8);
    IDS(t, "The JURY's", false, 3, 4, 5, 6);
    /* Unicode letters are word characters; CJK too; underscore is one */
    IDS(t, "ÜNÏCODE Café 猫猫 _x", false, 12, 9, 10, 13);
    /* added tokens are found before anything else, even inside a word */
    IDS(t, "the<s>jury </s>", false, 3, 1, 4, 2);
    /* whitespace only, and nothing */
    expect_ids(t, "  \t\n ", false, NULL, 0);
    expect_ids(t, "", false, NULL, 0);
    assert_int_equal(attn_tokenizer_bos(t), 1);
    assert_int_equal(attn_tokenizer_unk(t), 0);
    assert_int_equal(attn_tokenizer_vocab_size(t), 14);
    assert_string_equal(attn_tokenizer_token(t, 10), "猫猫");
    assert_null(attn_tokenizer_token(t, 99));
    assert_int_equal(attn_tokenizer_find(t, "jury"), 4);
    assert_true(attn_tokenizer_is_special(t, 2) && !attn_tokenizer_is_special(t, 3));
    char *text;
    attn_error err;
    assert_int_equal(attn_tokenizer_decode(t, (const int[]){1, 3, 4, 2}, 4, true, &text, &err), ATTN_OK);
    assert_string_equal(text, "the jury"); /* no decoder: joined with spaces */
    free(text);
    assert_int_equal(attn_tokenizer_decode(t, (const int[]){1, 3}, 2, false, &text, &err), ATTN_OK);
    assert_string_equal(text, "<s> the");
    free(text);
    /* ids that are no token are skipped, as tokenizers' decode skips them (issue 21) */
    assert_int_equal(attn_tokenizer_decode(t, (const int[]){3, 77, -1, 4}, 4, false, &text, &err), ATTN_OK);
    assert_string_equal(text, "the jury");
    free(text);
    attn_tokenizer_free(t);
}

static const char *const BPE_VOCAB = "\"vocab\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2,\"a\":3,\"b\":4,\"c\":5,\"ab\":6,"
                                     "\"bc\":7,\"abc\":8,\"猫\":9,\"猫a\":10}";

static attn_tokenizer *bpe(const char *merges, const char *extra)
{
    char model[1024];
    snprintf(model, sizeof model, "{\"type\":\"BPE\",\"unk_token\":\"<unk>\",%s,\"merges\":%s%s}", BPE_VOCAB, merges,
             extra);
    return make(model, SPECIALS, "null", "null", BOS_TEMPLATE, "{\"type\":\"Fuse\"}");
}

static void bpe_merges(void **state)
{
    (void)state;
    /* rank order: "a b" before "ab c" */
    attn_tokenizer *t = bpe("[\"a b\",\"ab c\",\"猫 a\"]", "");
    IDS(t, "abc", false, 8);
    IDS(t, "abcab", false, 8, 6);
    IDS(t, "abab", false, 6, 6);
    IDS(t, "猫ab", false, 9, 6); /* a b (rank 0) goes first, and leaves 猫 a (rank 2) nothing to merge */
    IDS(t, "猫a", false, 10);
    IDS(t, "cba", true, 1, 5, 4, 3);
    /* an unknown character is unk; several in a row stay several without fuse_unk */
    IDS(t, "axxb", false, 3, 0, 0, 4);
    char *text;
    attn_error err;
    assert_int_equal(attn_tokenizer_decode(t, (const int[]){1, 8, 10}, 3, true, &text, &err), ATTN_OK);
    assert_string_equal(text, "abc猫a"); /* Fuse: joined as they are */
    free(text);
    attn_tokenizer_free(t);
    /* "b c" before "a b": the same text splits the other way */
    t = bpe("[[\"b\",\"c\"],[\"a\",\"b\"]]", "");
    IDS(t, "abc", false, 3, 7);
    attn_tokenizer_free(t);
    t = bpe("[\"a b\"]", ",\"fuse_unk\":true");
    IDS(t, "axxxb", false, 3, 0, 4);
    attn_tokenizer_free(t);
    /* ignore_merges: a word in the vocabulary is taken whole (no merge makes abc here) */
    t = bpe("[]", ",\"ignore_merges\":true");
    IDS(t, "abc", false, 8);
    attn_tokenizer_free(t);
    t = bpe("[]", "");
    IDS(t, "abc", false, 3, 4, 5);
    attn_tokenizer_free(t);
}

/* Text that is not UTF-8 is read with U+FFFD for each ill-formed part: an
 * unknown character, never a crash. */
static void ill_formed_text(void **state)
{
    (void)state;
    attn_tokenizer *t = bpe("[\"a b\"]", "");
    IDS(t, "a\xff" "b", false, 3, 0, 4);
    IDS(t, "ab\xe7\x8c", false, 6, 0);
    IDS(t, "\xc0\x80", false, 0, 0);
    attn_tokenizer_free(t);
}

/* Byte-level BPE (GPT-2's alphabet: "Ġ" is the space byte, "åº" two bytes of 床)
 * and SentencePiece byte fallback; each token's label is readable, and never U+FFFD
 * for bytes that are there. */
static void byte_level_and_labels(void **state)
{
    (void)state;
    attn_tokenizer *t = make("{\"type\":\"BPE\",\"vocab\":{\"Ġ\":0,\"a\":1,\"Ġa\":2,\"å\":3,\"º\":4,\"åº\":5,"
                             "\"Ĭ\":6,\"Ċ\":7},\"merges\":[\"Ġ a\",\"å º\"]}",
                             "[]", "null", "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}",
                             "null", "{\"type\":\"ByteLevel\"}");
    IDS(t, " a床\n", false, 2, 5, 6, 7); /* 床 = E5 BA 8A: "åº" then "Ĭ" */
    char label[64], *text;
    attn_error err;
    assert_string_equal(attn_tokenizer_label(t, 2, label, sizeof label), "␣a");
    assert_string_equal(attn_tokenizer_label(t, 5, label, sizeof label), "<0xE5><0xBA>");
    assert_string_equal(attn_tokenizer_label(t, 6, label, sizeof label), "<0x8A>");
    assert_string_equal(attn_tokenizer_label(t, 7, label, sizeof label), "↵");
    assert_int_equal(attn_tokenizer_find(t, "␣a"), 2); /* a label typed back finds its token */
    int ids[] = {2, 5, 6};
    assert_int_equal(attn_tokenizer_decode(t, ids, 3, false, &text, &err), ATTN_OK);
    assert_string_equal(text, " a床");
    free(text);
    attn_tokenizer_free(t);
    /* SentencePiece: "▁" for spaces, byte fallback for a character outside the vocabulary */
    t = make("{\"type\":\"BPE\",\"byte_fallback\":true,\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"<0xE5>\":1,"
             "\"<0xBA>\":2,\"<0x8A>\":3,\"▁\":4,\"a\":5,\"▁a\":6},\"merges\":[\"▁ a\"]}", "[]",
             "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"▁\"},"
             "{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"▁\"}]}", "null", "null",
             "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"▁\"},"
             "\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\","
             "\"content\":\" \",\"start\":1,\"stop\":0}]}");
    IDS(t, "a床a", false, 6, 1, 2, 3, 5);
    assert_string_equal(attn_tokenizer_label(t, 6, label, sizeof label), "␣a");
    assert_string_equal(attn_tokenizer_label(t, 1, label, sizeof label), "<0xE5>");
    int sp[] = {6, 1, 2, 3, 5, 1};
    assert_int_equal(attn_tokenizer_decode(t, sp, 6, false, &text, &err), ATTN_OK);
    assert_string_equal(text, "a床a\xEF\xBF\xBD"); /* a lone E5 at the end is one U+FFFD */
    free(text);
    attn_tokenizer_free(t);
}

static void expect_refused(const char *json, const char *msg)
{
    attn_tokenizer *t;
    attn_error err = {0};
    if (attn_tokenizer_parse(json, strlen(json), "t.json", &t, &err) == ATTN_OK) {
        attn_tokenizer_free(t);
        fail_msg("accepted: %s", json);
    }
    if (!strstr(err.msg, msg)) fail_msg("'%s' does not contain '%s'", err.msg, msg);
    if (strncmp(err.msg, "t.json: ", 8)) fail_msg("'%s' does not name the file", err.msg);
    assert_null(strchr(err.msg, '\n'));
    assert_null(t);
}

/* Digits (DeepSeek LLM and DeepSeek-V2 split with it): every \p{N}, as
 * Rust's char::is_numeric, so Arabic-Indic and superscript digits too; one
 * by one with individual_digits, else in runs. */
static void digits(void **state)
{
    (void)state;
    static const char *const VOCAB = "{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,"
                                     "\"a\":1,\"1\":2,\"2\":3,\"12\":4,\"\u0663\":5,\"\u00b2\":6,\"b\":7,"
                                     "\"a b\":8,\"12\u0663\u00b2\":9}}";
    attn_tokenizer *t = make(VOCAB, "[]", "null", "{\"type\":\"Digits\",\"individual_digits\":true}", "null", "null");
    IDS(t, "a b12\u0663\u00b2", false, 8, 2, 3, 5, 6);
    attn_tokenizer_free(t);
    t = make(VOCAB, "[]", "null", "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\"}]}", "null", "null");
    IDS(t, "a b12\u0663\u00b2b", false, 8, 9, 7);
    attn_tokenizer_free(t);
}

static void refusals(void **state)
{
    (void)state;
#define WL "\"model\":{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"a\":1}}"
    expect_refused("{\"model\":", "not valid JSON");
    expect_refused("[1]", "not a JSON object");
    expect_refused("{\"this\":\"is not a tokenizer\"}", "has no model");
    expect_refused("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}", "model 'Unigram' is not supported (supported: WordLevel, BPE)");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}," WL "}",
                   "pre_tokenizer 'BertPreTokenizer' is not supported (supported: ByteLevel, Digits, Metaspace, Split, "
                   "Whitespace, WhitespaceSplit, Sequence)");
    expect_refused("{\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFD\"}]}," WL "}",
                   "normalizer 'NFD' is not supported (supported: Lowercase, NFC, NFKC, Prepend, Replace, Sequence)");
    expect_refused("{\"decoder\":{\"type\":\"WordPiece\"}," WL "}", "decoder 'WordPiece' is not supported (supported: "
                   "ByteLevel, ByteFallback, Fuse, Metaspace, Replace, Strip, Sequence)");
    expect_refused("{\"post_processor\":{\"type\":\"RobertaProcessing\"}," WL "}", "post_processor 'RobertaProcessing'");
    expect_refused("{\"added_tokens\":[{\"id\":2,\"content\":\"<x>\",\"lstrip\":true}]," WL "}", "lstrip is not supported");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(\"},\"behavior\":\"Isolated\"}," WL "}",
                   "pre_tokenizer Split: pattern does not compile at offset 1");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"String\":\" \"},\"behavior\":\"Sideways\"}," WL "}",
                   "behavior 'Sideways' is not one of");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"_\",\"prepend_scheme\":\"twice\"}," WL "}",
                   "prepend_scheme 'twice' is not always, first or never");
    expect_refused("{\"normalizer\":{\"type\":\"Replace\",\"content\":\"x\"}," WL "}", "Replace has no String or Regex pattern");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"dropout\":0.1,\"vocab\":{\"a\":0}}}", "model dropout is not supported");
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"a\":-1}}}", "id -1, not a whole number");
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"a\":1.5}}}", "id 1.5");
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"a\":\"x\"}}}", "vocab entry 'a' is not a number");
    expect_refused("{\"added_tokens\":[{\"id\":1,\"content\":\"<x>\"}]," WL "}", "id 1 is both 'a' and '<x>'");
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"unk_token\":\"<u>\",\"vocab\":{\"a\":0}}}",
                   "unk_token '<u>' is not in the vocabulary");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"a b\"]}}",
                   "merge 1 ('a' + 'b') names a token not in the vocabulary");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a\"]}}", "merge 1 ('a') is not two tokens");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[3]}}", "merge 1 is neither");
    expect_refused("{\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<q>\"}}],"
                   "\"special_tokens\":{}}," WL "}", "no id of one token");
    /* an id inside the vocabulary's range that no token has (fuzz: regress-template-hole) */
    expect_refused("{\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<s>\"}},"
                   "{\"Sequence\":{\"id\":\"A\"}}],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\",\"ids\":[1]}}},"
                   "\"model\":{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"a\":2}}}",
                   "the template's special token '<s>' has id 1, which is no token of the vocabulary");
    /* a token that is not UTF-8 (issue 21): named by its id, the byte and where it is */
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"a\":0,\"b\xff\":1}}}",
                   "vocab entry of id 1 is not valid UTF-8 (byte 0xFF at offset 1 of 2)");
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"\xe9\xaa\":5}}}",
                   "vocab entry of id 5 is not valid UTF-8 (byte 0xE9 at offset 0 of 2)");
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"\xed\xa0\x80\":0}}}", /* a surrogate */
                   "vocab entry of id 0 is not valid UTF-8 (byte 0xED at offset 0 of 3)");
    expect_refused("{\"added_tokens\":[{\"id\":2,\"content\":\"<\xc0\xaf>\"}]," WL "}", /* overlong '/' */
                   "added token of id 2 is not valid UTF-8 (byte 0xC0 at offset 1 of 4)");
    expect_refused("{\"normalizer\":{\"type\":\"Replace\",\"pattern\":{\"String\":\"x\"},\"content\":\"\xfe\"}," WL "}",
                   "normalizer Replace's content is not valid UTF-8 (byte 0)");
    /* a key given twice, at any depth: which one holds? */
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"vocab\":{\"a\":0,\"b\":1,\"a\":2}}}",
                   "key 'a' appears twice in model.vocab");
    expect_refused("{\"model\":{\"type\":\"WordLevel\",\"type\":\"BPE\",\"vocab\":{\"a\":0}}}",
                   "key 'type' appears twice in model");
    expect_refused("{\"added_tokens\":[{\"id\":2,\"content\":\"<x>\",\"special\":true,\"special\":false}]," WL "}",
                   "key 'special' appears twice in added_tokens[0]");
    /* a flag of another kind is refused, not read as false */
    expect_refused("{\"model\":{\"type\":\"BPE\",\"byte_fallback\":\"true\",\"vocab\":{\"a\":0}}}",
                   "'model.byte_fallback' must be true or false, not a string (\"true\")");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"ignore_merges\":1,\"vocab\":{\"a\":0}}}",
                   "'model.ignore_merges' must be true or false, not a number");
    expect_refused("{\"model\":{\"type\":\"BPE\",\"unk_token\":0,\"vocab\":{\"a\":0}}}",
                   "'model.unk_token' must be a token or null, not a number");
    expect_refused("{\"added_tokens\":[{\"id\":2,\"content\":\"<x>\",\"special\":\"yes\"}]," WL "}",
                   "'added_tokens[0].special' must be true or false, not a string (\"yes\")");
    expect_refused("{\"added_tokens\":[{\"id\":2,\"content\":\"<x>\",\"lstrip\":null}]," WL "}",
                   "'added_tokens[0].lstrip' must be true or false, not null");
#undef WL
    /* WordLevel without an unknown token: a word outside the vocabulary is an error, said once */
    attn_tokenizer *t = make("{\"type\":\"WordLevel\",\"vocab\":{\"a\":0}}", "[]", "null",
                             "{\"type\":\"WhitespaceSplit\"}", "null", "null");
    int *ids, n;
    attn_error err;
    assert_int_equal(attn_tokenizer_encode(t, "a zebra", false, &ids, &n, &err), ATTN_ERR_CONFIG);
    assert_non_null(strstr(err.msg, "'zebra' is not in the vocabulary"));
    attn_tokenizer_free(t);
    /* files */
    assert_int_not_equal(attn_tokenizer_load("/nonexistent/tokenizer.json", &t, &err), ATTN_OK);
    assert_non_null(strstr(err.msg, "/nonexistent/tokenizer.json"));
    assert_int_not_equal(attn_tokenizer_load("/tmp", &t, &err), ATTN_OK);
    assert_null(strchr(err.msg, '\n'));
}

/* ---- hostile files (issue 21, findings 5 and 6) ---- */

/* A tokenizer of a WordLevel vocabulary {"<unk>": 0, "x": 1} with these steps
 * (JSON values, "null" for none); json is built in buf. */
static attn_tokenizer *hostile(const char *norm, const char *pre, const char *dec, char *buf, size_t size)
{
    attn_tokenizer *t;
    attn_error err;
    snprintf(buf, size, "{\"normalizer\":%s,\"pre_tokenizer\":%s,\"decoder\":%s,\"model\":{\"type\":\"WordLevel\","
             "\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"x\":1}}}", norm, pre, dec);
    if (attn_tokenizer_parse(buf, strlen(buf), "t.json", &t, &err)) fail_msg("%s", err.msg);
    return t;
}

/* Encoding text is refused with a message that names the file and holds msg. */
static void encode_refused(const attn_tokenizer *t, const char *text, attn_status want, const char *msg)
{
    int *ids = NULL, n = 0;
    attn_error err = {0};
    attn_status st = attn_tokenizer_encode(t, text, false, &ids, &n, &err);
    if (st == ATTN_OK) {
        free(ids);
        fail_msg("a text of %zu bytes was encoded into %d ids, want: %s", strlen(text), n, msg);
    }
    assert_int_equal(st, want);
    if (!strstr(err.msg, msg)) fail_msg("'%s' does not contain '%s'", err.msg, msg);
    if (want == ATTN_ERR_FORMAT && strncmp(err.msg, "t.json: ", 8)) fail_msg("'%s' does not name the file", err.msg);
    assert_null(strchr(err.msg, '\n'));
}

static char *repeat(const char *s, size_t times)
{
    size_t n = strlen(s);
    char *out = malloc(n * times + 1);
    assert_non_null(out);
    for (size_t i = 0; i < times; i++) memcpy(out + i * n, s, n);
    out[n * times] = '\0';
    return out;
}

/* Finding 5: a step makes at most 16 × what it is given + 1,024 bytes, and
 * 4 MiB; past that the text is refused before the memory is taken, naming the
 * file and the step. The steps of published tokenizers pass. */
static void steps_are_bounded(void **state)
{
    (void)state;
    char json[4096], rep[1200];
    char *x1000 = repeat("x", 1000), *x100 = repeat("x", 100);
    /* the file: three Replace steps of an empty pattern by 1,000 characters (17.9 GB before) */
    snprintf(rep, sizeof rep, "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\"},\"content\":\"%s\"}", x1000);
    char norm[4000];
    snprintf(norm, sizeof norm, "{\"type\":\"Sequence\",\"normalizers\":[%s,%s,%s]}", rep, rep, rep);
    char *big = malloc(strlen(norm) + 400);
    assert_non_null(big);
    attn_tokenizer *t = hostile(norm, "{\"type\":\"WhitespaceSplit\"}", "null", big, strlen(norm) + 400);
    encode_refused(t, "hello world", ATTN_ERR_FORMAT, "t.json: normalizer step 1 (Replace) makes more than 1200 bytes "
                   "of 11, the most a step may make (16 × what it is given + 1024, and at most 4194304)");
    attn_tokenizer_free(t);
    free(big);
    /* 100 characters: the first step (605 bytes of "hello") passes, the second does not */
    snprintf(rep, sizeof rep, "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\"},\"content\":\"%s\"}", x100);
    snprintf(norm, sizeof norm, "{\"type\":\"Sequence\",\"normalizers\":[%s,%s]}", rep, rep);
    t = hostile(norm, "null", "null", json, sizeof json);
    encode_refused(t, "hello", ATTN_ERR_FORMAT, "normalizer step 2 (Replace) makes more than 10704 bytes of 605");
    attn_tokenizer_free(t);
    /* within 16 ×, past 4 MiB */
    t = hostile("{\"type\":\"Replace\",\"pattern\":{\"String\":\"a\"},\"content\":\"bbbbbbbbbbbbbbb\"}", "null", "null",
                json, sizeof json);
    char *a = repeat("a", 300000);
    encode_refused(t, a, ATTN_ERR_FORMAT, "normalizer step 1 (Replace) makes more than 4194304 bytes of 300000");
    free(a);
    attn_tokenizer_free(t);
    /* a pre-tokenizer: Metaspace's replacement of 100 bytes for each of 2,000 spaces */
    snprintf(rep, sizeof rep, "{\"type\":\"Metaspace\",\"replacement\":\"%s\",\"prepend_scheme\":\"always\"}", x100);
    t = hostile("null", rep, "null", json, sizeof json);
    char *spaces = repeat(" ", 2000);
    encode_refused(t, spaces, ATTN_ERR_FORMAT, "pre_tokenizer step 1 (Metaspace) makes more than 33024 bytes of 2000");
    free(spaces);
    attn_tokenizer_free(t);
    /* a decoder: Replace of each "x" by 100 bytes */
    snprintf(rep, sizeof rep, "{\"type\":\"Replace\",\"pattern\":{\"String\":\"x\"},\"content\":\"%s\"}", x100);
    t = hostile("null", "null", rep, json, sizeof json);
    int ids[1000];
    char *text = NULL;
    attn_error err;
    for (int i = 0; i < 1000; i++) ids[i] = 1;
    assert_int_equal(attn_tokenizer_decode(t, ids, 1000, false, &text, &err), ATTN_ERR_FORMAT);
    assert_null(text);
    assert_non_null(strstr(err.msg, "t.json: decoder step 1 (Replace) makes more than 17024 bytes of 1000"));
    assert_int_equal(attn_tokenizer_decode(t, ids, 10, false, &text, &err), ATTN_OK); /* 1,000 of 10 is fine */
    assert_int_equal(strlen(text), 1000);
    free(text);
    attn_tokenizer_free(t);
    /* what published tokenizers do stays far inside: "▁" for every space (3 ×), NFKC's
     * longest expansion (U+FDFA, 3 bytes into 33), ByteLevel's two bytes for one */
    t = hostile("{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFKC\"},{\"type\":\"Replace\",\"pattern\":"
                "{\"String\":\" \"},\"content\":\"▁\"}]}",
                "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,\"use_regex\":false}", "null", json, sizeof json);
    char *wide = repeat("\xEF\xB7\xBA", 20000); /* ﷺ */
    int *out, n;
    assert_int_equal(attn_tokenizer_encode(t, wide, false, &out, &n, &err), ATTN_OK);
    free(out);
    free(wide);
    spaces = repeat(" ", 300000);
    assert_int_equal(attn_tokenizer_encode(t, spaces, false, &out, &n, &err), ATTN_OK);
    free(out);
    free(spaces);
    /* a text itself has a limit, the caller's problem (exit 2) */
    char *huge = repeat("x", ATTN_TOKENIZER_MAX_TEXT + 1);
    encode_refused(t, huge, ATTN_ERR_CONFIG, "a text of 1048577 bytes is more than the 1048576 a tokenizer takes");
    free(huge);
    attn_tokenizer_free(t);
    free(x1000);
    free(x100);
}

/* The file's own sizes: JSON values (what cJSON's tree costs), patterns,
 * added tokens, steps; the strings a step puts into the text are UTF-8. */
static void file_sizes_are_bounded(void **state)
{
    (void)state;
#define WL "\"model\":{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"a\":1}}"
    /* 4,194,305 values: the model, then a list; refused before cJSON builds the tree (2.5 GB for 64 MiB of them) */
    size_t n = (size_t)TOK_MAX_VALUES;
    char *json = malloc(2 * n + 200), *o = json;
    assert_non_null(json);
    o += sprintf(o, "{" WL ",\"x\":[0");
    for (size_t i = 1; i < n; i++) o += sprintf(o, ",0");
    sprintf(o, "]}");
    expect_refused(json, "holds more than 4194304 JSON values, the most a tokenizer.json may have");
    free(json);
    char *pat = repeat("a", TOK_MAX_PATTERN + 1), buf[TOK_MAX_PATTERN + 400];
    snprintf(buf, sizeof buf, "{\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"%s\"},"
             "\"behavior\":\"Isolated\"}," WL "}", pat);
    expect_refused(buf, "pre_tokenizer Split: the pattern has 8193 bytes, more than the 8192 a pattern may have");
    free(pat);
    char *long_token = repeat("<", TOK_MAX_ADDED + 1);
    snprintf(buf, sizeof buf, "{\"added_tokens\":[{\"id\":2,\"content\":\"%s\"}]," WL "}", long_token);
    expect_refused(buf, "has 257 bytes, more than the 256 an added token may have");
    free(long_token);
    expect_refused("{\"normalizer\":{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"a\xff\"}," WL "}",
                   "normalizer Replace's content is not valid UTF-8 (byte 1)");
    expect_refused("{\"normalizer\":{\"type\":\"Prepend\",\"prepend\":\"\xe2\x96\"}," WL "}",
                   "normalizer Prepend's prepend is not valid UTF-8 (byte 0)");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"Sequence\",\"pretokenizers\":[" /* 9 steps */
                   "{\"type\":\"Whitespace\"},{\"type\":\"Whitespace\"},{\"type\":\"Whitespace\"},{\"type\":\"Whitespace\"},"
                   "{\"type\":\"Whitespace\"},{\"type\":\"Whitespace\"},{\"type\":\"Whitespace\"},{\"type\":\"Whitespace\"},"
                   "{\"type\":\"Whitespace\"}]}," WL "}", "pre_tokenizer has more than 8 steps");
#undef WL
}

/* Added tokens are found at every character: the longest that starts there,
 * among tokens sharing prefixes, looked up in the sorted list. */
static void added_tokens_longest_first(void **state)
{
    (void)state;
    attn_tokenizer *t = make("{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"x\":1}}",
                             "[{\"id\":2,\"content\":\"<a>\"},{\"id\":3,\"content\":\"<ab>\"},{\"id\":4,\"content\":\"<abc>\"},"
                             "{\"id\":5,\"content\":\"<\"},{\"id\":6,\"content\":\"<b>\"},{\"id\":7,\"content\":\"x<\"},"
                             "{\"id\":8,\"content\":\"<a\"}]",
                             "null", "{\"type\":\"WhitespaceSplit\"}", "null", "null");
    IDS(t, "<abc><ab><a><b>", false, 4, 3, 2, 6);
    IDS(t, "<abcd", false, 8, 0);         /* "<abc" is no token: "<a", then "bcd" */
    IDS(t, "x x<ab <q", false, 1, 7, 0, 5, 0); /* "x<" from the x; "<" alone before q */
    IDS(t, "<<<", false, 5, 5, 5);
    attn_tokenizer_free(t);
}

/* Finding 6: a pattern that backtracks without end is an error that names the
 * file and the step, never "no match" (25 x's were one <unk>); before, each
 * such word took 0.27 s. */
static void pattern_limits_are_errors(void **state)
{
    (void)state;
    char json[1024];
    attn_tokenizer *t = hostile("null", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(x+x+)+y|\\\\S\"},"
                                "\"behavior\":\"Isolated\"}", "null", json, sizeof json);
    IDS(t, "xxxxxxxxxxxxxxx", false, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    encode_refused(t, "xxxxxxxxxxxxxxxxxxxxxxxxx", ATTN_ERR_FORMAT,
                   "t.json: pre_tokenizer step 1 (Split): the pattern backtracks without end at byte 0 of 25 "
                   "(match limit exceeded: 100250, that is 100000 + 10 per byte searched)");
    attn_tokenizer_free(t);
    t = hostile("{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"(x+x+)+y\"},\"content\":\"z\"}", "null", "null", json,
                sizeof json);
    /* with a y after the x's: PCRE2 first looks for the y a match needs, and without one gives up at once */
    encode_refused(t, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxx y", ATTN_ERR_FORMAT,
                   "t.json: normalizer step 1 (Replace): the pattern backtracks without end in a text of 31 bytes");
    attn_tokenizer_free(t);

    /* the same limits without the JIT (the interpreter, where there is no JIT) */
    attn_tok_matcher m;
    attn_error err;
    int code;
    PCRE2_SIZE at;
    size_t a, b;
    bool found;
    assert_int_equal(attn_tok_matcher_init(&m, &err), ATTN_OK);
    pcre2_code *slow = pcre2_compile((PCRE2_SPTR) "(x+x+)+y", PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &at, NULL);
    assert_non_null(slow);
    assert_int_equal(attn_tok_match(&m, slow, "xxxxxxxxxxxxxxxxxxxxxxxxx y", 27, 0, &a, &b, &found, &err), ATTN_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "backtracks without end at byte 0 of 27 (match limit exceeded"));
    assert_int_equal(attn_tok_match(&m, slow, "xxy", 3, 0, &a, &b, &found, &err), ATTN_OK);
    assert_true(found && a == 0 && b == 3);
    pcre2_code_free(slow);
    /* a group repeated per character keeps a frame per character: 8 MiB of heap, or 1 MiB of JIT stack */
    char *word = repeat("a", 200000);
    pcre2_code *group = pcre2_compile((PCRE2_SPTR) "(?:a|b)+", PCRE2_ZERO_TERMINATED, PCRE2_UTF, &code, &at, NULL);
    assert_int_equal(attn_tok_match(&m, group, word, 200000, 0, &a, &b, &found, &err), ATTN_ERR_FORMAT);
    assert_non_null(strstr(err.msg, "the pattern keeps too much to backtrack to at byte 0 of 200000 (heap limit exceeded"));
    pcre2_code_free(group);
    uint32_t jit = 0;
    pcre2_config(PCRE2_CONFIG_JIT, &jit);
    assert_int_equal(attn_tok_compile("(?:a|b)+", false, true, "test", &group, &err), ATTN_OK);
    assert_int_equal(attn_tok_match(&m, group, word, 200000, 0, &a, &b, &found, &err), ATTN_ERR_FORMAT);
    assert_non_null(strstr(err.msg, jit ? "(JIT stack limit reached" : "(heap limit exceeded"));
    assert_int_equal(attn_tok_match(&m, group, word, 2000, 0, &a, &b, &found, &err), ATTN_OK); /* a word of 2,000 is fine */
    assert_true(found && a == 0 && b == 2000);
    pcre2_code_free(group);
    free(word);
    attn_tok_matcher_free(&m);

    /* the patterns of published tokenizers never meet the limits: Qwen's (and Llama 3's)
     * \s*[\r\n]+ backtracks once per space of a run, the most any needs */
    t = hostile("null", "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":"
                "\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+"
                "[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},\"behavior\":\"Isolated\"},"
                "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}]}", "null", json, sizeof json);
    static const char *const RUNS[] = {" ", "x", "7", "!", "\n", "床"};
    for (int i = 0; i < 6; i++) {
        char *run = repeat(RUNS[i], 250000 / strlen(RUNS[i]));
        int *ids, n;
        if (attn_tokenizer_encode(t, run, false, &ids, &n, &err)) fail_msg("a run of '%s': %s", RUNS[i], err.msg);
        free(ids);
        free(run);
    }
    attn_tokenizer_free(t);
}

/* Issue 37: a Split pattern that reads to the end of the text from every
 * match (a(?=[^c]*c)? over a's and no c) made tokenizing quadratic inside
 * PCRE2's limits: 100 KB took 2.85 s. Its searches now read at most
 * TOK_SCAN_BASE + TOK_SCAN_PER_BYTE bytes per byte of the text, and it is
 * refused past that, at once; the same pattern over a text with c's works. */
static void scans_are_bounded(void **state)
{
    (void)state;
    char json[1024];
    attn_tokenizer *t = hostile("null", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a(?=[^c]*c)?\"},"
                                "\"behavior\":\"Isolated\"}", "null", json, sizeof json);
    char *as = repeat("a", 100000);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    encode_refused(t, as, ATTN_ERR_FORMAT, "t.json: pre_tokenizer step 1 (Split): the pattern reads too far ahead at "
                   "byte ");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (took > 1.0) fail_msg("refusing took %.2f s", took);
    attn_tokenizer_free(t);
    /* the same inside one search: [cd] keeps PCRE2 from rejecting the text at
     * once, and an unanchored search tried every start, each to the end */
    t = hostile("null", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a(?=[^c]*[cd])\"},"
                "\"behavior\":\"Isolated\"}", "null", json, sizeof json);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    encode_refused(t, as, ATTN_ERR_FORMAT, "t.json: pre_tokenizer step 1 (Split): the pattern reads too far ahead at "
                   "byte ");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (took > 1.0) fail_msg("refusing a(?=[^c]*[cd]) took %.2f s", took);
    attn_tokenizer_free(t);
    t = hostile("null", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a(?=[^c]*c)?\"},"
                "\"behavior\":\"Isolated\"}", "null", json, sizeof json);
    char *acs = repeat("aac", 30000); /* each lookahead stops at the next c */
    int *ids, n;
    attn_error err;
    if (attn_tokenizer_encode(t, acs, false, &ids, &n, &err)) fail_msg("%s", err.msg);
    assert_int_equal(n, 90000); /* "a", "a", "c": each a match, each c the span between */
    free(ids);
    free(acs);
    free(as);
    attn_tokenizer_free(t);
}

/* A search looks at a window of the text first (tokenizer_regex.c): its
 * answers are those of a search over the whole text, at every start, for
 * patterns that look ahead, behind, to the end, or at word boundaries. */
static void windows_change_no_match(void **state)
{
    (void)state;
    static const char *const PATTERNS[] = {
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
        "|\\s+(?!\\S)|\\s+",
        "a(?=[^c]*c)?", "a(?![^c]*c)", "\\b\\w+\\b", "x$", "(?<=a)b+", "\\s+(?!\\S)", "[^x]{300}", "床+",
    };
    static const char *const PARTS[] = {"a", "b", "c", " ", "  ", "\n", "x", "床", "'s", "7", "ab", "    "};
    size_t n = 0, cap = 4000;
    char *text = malloc(cap + 16);
    uint64_t r = 12345;
    assert_non_null(text);
    while (n < cap) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        int k = (int)(r >> 33) % 12, times = (int)(r >> 50) % 3 ? 1 : 150; /* now and then a long run */
        for (int i = 0; i < times && n < cap; i++) n += (size_t)sprintf(text + n, "%s", PARTS[k]);
    }
    attn_tok_matcher m;
    attn_error err;
    assert_int_equal(attn_tok_matcher_init(&m, &err), ATTN_OK);
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    for (size_t p = 0; p < sizeof PATTERNS / sizeof PATTERNS[0]; p++) {
        pcre2_code *re, *ref; /* as a split compiles it, and as one search over the whole text reads it */
        assert_int_equal(attn_tok_compile(PATTERNS[p], false, true, "test", &re, &err), ATTN_OK);
        assert_int_equal(attn_tok_compile(PATTERNS[p], false, false, "test", &ref, &err), ATTN_OK);
        for (size_t at = 0; at < n; at = attn_utf8_next(text, n, at)) {
            size_t a = 0, b = 0;
            bool found;
            /* a text per start: the budget is a text's, and a split searches on from its last match */
            if (attn_tok_match(&m, re, text, n, 0, &a, &b, &found, &err)) fail_msg("%s", err.msg);
            if (attn_tok_match(&m, re, text, n, at, &a, &b, &found, &err)) fail_msg("%s at %zu: %s", PATTERNS[p], at, err.msg);
            int rc = pcre2_match(ref, (PCRE2_SPTR)text, n, at, 0, md, NULL);
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            if (found != (rc >= 0) || (found && (a != ov[0] || b != ov[1])))
                fail_msg("%s at %zu: the window found [%zu, %zu), the whole text [%zu, %zu)", PATTERNS[p], at,
                         found ? a : 0, found ? b : 0, rc >= 0 ? (size_t)ov[0] : 0, rc >= 0 ? (size_t)ov[1] : 0);
        }
        pcre2_code_free(re);
        pcre2_code_free(ref);
    }
    pcre2_match_data_free(md);
    attn_tok_matcher_free(&m);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(word_level),
        cmocka_unit_test(bpe_merges),
        cmocka_unit_test(ill_formed_text),
        cmocka_unit_test(digits),
        cmocka_unit_test(refusals),
        cmocka_unit_test(byte_level_and_labels),
        cmocka_unit_test(steps_are_bounded),
        cmocka_unit_test(file_sizes_are_bounded),
        cmocka_unit_test(added_tokens_longest_first),
        cmocka_unit_test(pattern_limits_are_errors),
        cmocka_unit_test(scans_are_bounded),
        cmocka_unit_test(windows_change_no_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
