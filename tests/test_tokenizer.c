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

#include <cmocka.h>

#include "tokenizer.h"

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

static void refusals(void **state)
{
    (void)state;
#define WL "\"model\":{\"type\":\"WordLevel\",\"unk_token\":\"<unk>\",\"vocab\":{\"<unk>\":0,\"a\":1}}"
    expect_refused("{\"model\":", "not valid JSON");
    expect_refused("[1]", "not a JSON object");
    expect_refused("{\"this\":\"is not a tokenizer\"}", "has no model");
    expect_refused("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}", "model 'Unigram' is not supported (supported: WordLevel, BPE)");
    expect_refused("{\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}," WL "}",
                   "pre_tokenizer 'BertPreTokenizer' is not supported (supported: ByteLevel, Metaspace, Split, "
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
                   "not valid UTF-8 (byte 0xFE at offset 68)");
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(word_level),
        cmocka_unit_test(bpe_merges),
        cmocka_unit_test(ill_formed_text),
        cmocka_unit_test(refusals),
        cmocka_unit_test(byte_level_and_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
