// check_tokenizer_node.mjs — attnlab's tokenizer against Hugging Face's own
// JavaScript implementation (npm @huggingface/tokenizers, installed by
// scripts/node_reference.sh), on every tokenizer.json given, over a corpus of
// English, Chinese, code, emoji, whitespace runs and punctuation. Exits 77
// (skipped) when the package cannot be loaded.
//
// Places where tokenizers.js (0.2.0) differs from the Rust library that
// trains and ships these files, and where attnlab follows Rust:
//  - a word missing from a WordLevel vocabulary: Rust gives unk_token's id,
//    tokenizers.js gives null; null is read as the unk id here;
//  - the Whitespace pre-tokenizer's \w: Rust's (regex::Regex in
//    pre_tokenizers/whitespace.rs) is Unicode, so "café" and "猫猫" are words;
//    tokenizers.js's is ASCII. For a tokenizer with Whitespace, texts with a
//    non-ASCII letter or digit are left out here; test_tokenizer.c checks them;
//  - the Digits pre-tokenizer's digits: Rust's (char::is_numeric in
//    pre_tokenizers/digits.rs) are \p{N}, so "١٢٣", "²" and "Ⅻ" split too;
//    tokenizers.js's \d is ASCII. For a tokenizer with Digits, texts with a
//    non-ASCII \p{N} are left out here; test_tokenizer.c checks them;
//  - ByteLevel's own regex (use_regex: GPT-2's file): tokenizers.js runs it
//    with JavaScript's \s, which takes U+FEFF and leaves U+0085, where Rust's
//    is Unicode's White_Space (as in the Split patterns, which tokenizers.js
//    rewrites to \p{White_Space}); no text here has either character;
//  - BPE's fuse_unk: Rust fuses unknown characters within one pre-tokenized
//    word (bpe/model.rs merge_word), tokenizers.js across words too; with
//    fuse_unk, runs of unk ids are compared as one.
// The decoded text of the ids (special tokens kept) must equal the
// reference's decode of the same ids too, with clean_up_tokenization_spaces
// off: that is a transformers option of tokenizer_config.json, which the Rust
// library's decode (and attnlab's) does not apply.
// Usage: node check_tokenizer_node.mjs NODE_MODULES_DIR TOK_ENCODE FILE.json...
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const [modules, encoder, ...files] = process.argv.slice(2);
let Tokenizer;
try {
  const require = createRequire(path.join(modules, "x.js"));
  ({ Tokenizer } = require("@huggingface/tokenizers"));
} catch (e) {
  console.log(`@huggingface/tokenizers is not installed in ${modules}: skipped (${e.message.split("\n")[0]})`);
  process.exit(77);
}

const corpus = [
  "The jury said it did not know who would win.",
  "THE Fulton County Grand Jury's verdict, 1961: \"no evidence\" -- of irregularities!",
  "床前明月光，疑是地上霜。举头望明月，低头思故乡。",
  "春眠不觉晓，处处闻啼鸟。夜来风雨声，花落知多少。",
  "Ünïcode café naïve résumé — straße ÉCOLE",
  "int main(void) { return x->y[3] * 2 + f(a, b); } // done",
  "emoji 😀🚀 and 猫猫 mixed with ASCII, 😀😀",
  "   leading and    multiple   spaces\t\ttabs\nnew lines\n\n  ",
  "<s>added</s> tokens <unk> inside text<s>",
  "",
  "a",
  "$$$ ... !!! ??? ''' ``",
  "12345 67.89 1,000,000 3rd 2nd",
  "under_score snake_case CamelCase x2y3",
  "def f(x):\n    return {'a': [1, 2]}  # comment\n\n\tif x != 0:  pass",
  "ill-formed bytes read as \ufffd, twice \ufffd\ufffd, then text",
  "家人们谁懂啊 🤯🤯 ｆｕｌｌｗｉｄｔｈ ＡＢＣ１２３ and ｶﾀｶﾅ",
  "e\u0301 versus \u00e9, A\u030a versus \u00c5 (combining marks)",
  "           ",
  "\n\n\n",
  "tokenization of the unbelievably long word antidisestablishmentarianism",
  "Привет, мир! مرحبا بالعالم नमस्ते दुनिया 안녕하세요 세계",
  // for the 2025 families (Gemma, OLMo 2, SmolLM3, DeepSeek-V3, gpt-oss):
  // kana beside kanji (DeepSeek's CJK split), digit runs and other digits
  // (\p{N}{1,3}), contractions in any case and title-case letters (o200k's
  // \p{Lt}, \p{Lm} classes and (?i:'s…)), Gemma's added tokens (HTML tags,
  // tab and newline runs) and each family's chat markers, \r\n, NBSP, ZWJ
  "ひらがなとカタカナ、漢字の東京タワー。ﾊﾝｶｸ ｶﾀｶﾅ",
  "1234567890 0.000001 -42 +3.14e-10 2025-07-15T03:39:29Z 1,234,567.89",
  "other digits: ١٢٣٤ १२३ １２３４ ² ½ Ⅻ",
  "DON'T I'M YOU'LL they'd WE'VE it's ǅemo ǈubljana ʰaspirated McDonald's O'Neil",
  "<table><tr><td>cell</td></tr></table> <h1>Title</h1> <strong>bold</strong>\t\t\tthree tabs",
  "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
  "<|start|>assistant<|channel|>analysis<|message|>think<|end|><|return|>",
  "<｜begin▁of▁sentence｜><｜User｜>你好<｜Assistant｜>",
  "<|im_start|>user\n<think>\n</think><|im_end|><|endoftext|><|pad|>",
  "line one\r\nline two\r\n\r\n\u00a0nbsp\u3000ideographic space\u200bzero width",
  "family 👨\u200d👩\u200d👧 flag 🇫🇷 skin 👍🏽 keycap 1\ufe0f\u20e3 math ∑∫√∞ ≤≥ → ⇒",
  "    def __init__(self):\n        self.x = [i**2 for i in range(10)]\n\n\n\n\n\n\n\n",
  "▁▁ already ▁ metaspace ▁▁▁ characters",
];

let failed = 0, checked = 0;
// attnlab's encodings of a file, from tok_encode run beside this process: it
// reads its file while the reference reads the same one (the large real
// tokenizers take a second or two each to load, in each implementation)
const input = corpus.map((s) => JSON.stringify(s)).join("\n") + "\n";
function encodeAsync(file) {
  return new Promise((resolve) => {
    const child = spawn(encoder, [file]);
    let stdout = "", stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.on("error", (e) => resolve({ status: -1, stdout, stderr: e.message }));
    child.on("close", (status) => resolve({ status, stdout, stderr }));
    child.stdin.on("error", () => {}); // a child that exits early: its status tells
    child.stdin.end(input);
  });
}

// The reference's answers for one file (its ids for every text, and the
// decoding of those ids) depend only on the package's version, the file, the
// texts and this script: they are kept under that key in a cache folder beside
// the package (ATTNLAB_REFERENCE_CACHE=off: none), so that a run after the
// first reads no large file into the reference (gpt-oss's takes it about 2 s of CPU).
// attnlab's side runs every time.
const version = JSON.parse(readFileSync(path.join(modules, "@huggingface/tokenizers/package.json"), "utf8")).version;
const cacheDir = process.env.ATTNLAB_REFERENCE_CACHE === "off" ? null : path.join(modules, "..", "reference-cache");

function referenceAnswers(bytes) {
  const key = createHash("sha256").update(`${version}\0`).update(readFileSync(new URL(import.meta.url))).update("\0")
    .update(bytes).update("\0").update(input).digest("hex");
  const where = cacheDir && path.join(cacheDir, `${key}.json`);
  try {
    if (where) return { ...JSON.parse(readFileSync(where, "utf8")), live: null, cached: true };
  } catch {} // not there yet (or unreadable): computed below
  const json = JSON.parse(bytes.toString("utf8"));
  const ref = new Tokenizer(json, {});
  const pre = JSON.stringify(json.pre_tokenizer ?? null);
  const facts = {
    unk: json.model.unk_token != null ? json.model.vocab[json.model.unk_token] : null,
    fuse: !!json.model.fuse_unk,
    whitespace: pre.includes('"Whitespace"'),
    digits: pre.includes('"Digits"'),
    decoder: !!json.decoder,
  };
  const texts = corpus.map((text) => {
    const raw = Array.from(ref.encode(text).ids, (id) => (id == null ? facts.unk : id));
    const decoded = facts.decoder && raw.length ? ref.decode(raw, { skip_special_tokens: false, clean_up_tokenization_spaces: false }) : null;
    return { raw, decoded };
  });
  if (where) {
    try {
      mkdirSync(cacheDir, { recursive: true });
      writeFileSync(`${where}.${process.pid}`, JSON.stringify({ facts, texts }));
      renameSync(`${where}.${process.pid}`, where);
    } catch {} // a cache that cannot be written is only slower
  }
  return { facts, texts, live: ref, cached: false };
}

for (const file of files) {
  const pending = encodeAsync(file);
  const bytes = readFileSync(file);
  const answers = referenceAnswers(bytes);
  const { unk, fuse: fuseUnk, whitespace: usesWhitespace, digits: usesDigits, decoder } = answers.facts;
  // decoding ids other than the reference's own (equal only once fused) needs the reference itself
  const live = () => (answers.live ??= new Tokenizer(JSON.parse(bytes.toString("utf8")), {}));
  const skip = (text) =>
    (usesWhitespace && /[^\x00-\x7f]/u.test(text.replace(/[^\p{L}\p{N}]/gu, ""))) ||
    (usesDigits && /[^\x00-\x7f]/u.test(text.replace(/[^\p{N}]/gu, "")));
  const r = await pending;
  if (r.status !== 0) {
    console.log(`FAIL ${file}: tok_encode exited ${r.status}: ${r.stderr.trim()}`);
    failed++;
    continue;
  }
  const got = r.stdout.trim().split("\n");
  corpus.forEach((text, i) => {
    if (skip(text)) return;
    const fuse = (ids) => (fuseUnk && Array.isArray(ids) ? ids.filter((id, k) => !(id === unk && ids[k - 1] === unk)) : ids);
    const { raw, decoded } = answers.texts[i];
    const want = fuse(raw);
    const out = JSON.parse(got[i] ?? "null") ?? {};
    const mine = fuse(out.ids ?? out);
    checked++;
    if (JSON.stringify(want) !== JSON.stringify(mine)) {
      failed++;
      console.log(`FAIL ${path.basename(path.dirname(file))}/${path.basename(file)} ${JSON.stringify(text)}:\n  attnlab ${JSON.stringify(mine)}\n  HF      ${JSON.stringify(want)}`);
      return;
    }
    if (out.ids?.length && decoder) { // decoding: the same ids give the same text
      const wantText = JSON.stringify(out.ids) === JSON.stringify(raw) ? decoded
        : live().decode(out.ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
      if (wantText !== out.text) {
        failed++;
        console.log(`FAIL decode ${path.basename(file)} ${JSON.stringify(text)}:\n  attnlab ${JSON.stringify(out.text)}\n  HF      ${JSON.stringify(wantText)}`);
      }
    }
  });
  console.log(`ok   ${file}: ${corpus.filter((t) => !skip(t)).length} texts${answers.cached ? " (the reference's answers from its cache)" : ""}`);
}
console.log(`${checked - failed} of ${checked} encodings equal Hugging Face's`);
process.exit(failed ? 1 : 0);
