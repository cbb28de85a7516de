#!/usr/bin/env python3
# make_deepseek_v2_steps.py — writes deepseek-v2-steps.json beside it.
# A small tokenizer.json in DeepSeek-V2's structure (DeepSeek LLM's steps):
# an empty normalizer Sequence, six splits (newlines, Latin-and-other letters,
# ASCII and fullwidth punctuation, trailing whitespace, CJK and Hangul runs,
# Digits one by one) then ByteLevel without its regex; a byte-level BPE
# trained here on a few lines; ByteLevel post-processor and decoder.
import collections, json, os
def byte_chars():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b); cs.append(256 + n); n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}
B = byte_chars()
text = """The quick brown fox jumps over the lazy dog. The jury said it did not know who would win.
def main(argv): return {"a": [1, 2, 3]} if argv else None  # the end
床前明月光，疑是地上霜。举头望明月，低头思故乡。 人工智能 深度求索 模型
안녕하세요 세계 Привет мир numbers 12345 and 2025 and 3.14159 under_score
""" * 3
words = []
for w in text.replace("\n", " \n ").split(" "):
    if w: words.append(tuple(B[b] for b in (" " + w).encode("utf8")))
counts = collections.Counter(words)
vocab = {B[b]: i for i, b in enumerate(sorted(B, key=lambda b: ord(B[b])))}
merges = []
while len(merges) < 300:
    pairs = collections.Counter()
    for w, c in counts.items():
        for a, b in zip(w, w[1:]): pairs[(a, b)] += c
    if not pairs: break
    (a, b), c = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
    if c < 2: break
    merges.append(a + " " + b)
    if a + b not in vocab: vocab[a + b] = len(vocab)
    new = collections.Counter()
    for w, c2 in counts.items():
        out, i = [], 0
        while i < len(w):
            if i + 1 < len(w) and w[i] == a and w[i + 1] == b: out.append(a + b); i += 2
            else: out.append(w[i]); i += 1
        new[tuple(out)] += c2
    counts = new
n = len(vocab)
added = [(n, "<｜begin▁of▁sentence｜>"), (n + 1, "<｜end▁of▁sentence｜>"), (n + 2, "<｜fim▁hole｜>")]
def split(rx): return {"type": "Split", "pattern": {"Regex": rx}, "behavior": "Isolated", "invert": False}
# the letters' class as DeepSeek's file spells it: U+1F7D, U+1FBE, U+1FD3, U+1FDB, U+2126 and
# U+212A are written as escapes, since NFC would turn them into other letters
letters = ("\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+")
tok = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True} for i, c in added],
    "normalizer": {"type": "Sequence", "normalizers": []},
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        split("[\r\n]"), split(letters), split("\\s?[!-/:-~！-／：-～‘-‟　-。]+"), split("\\s+$"),
        split("[一-龥ࠀ-一가-퟿]+"), {"type": "Digits", "individual_digits": True},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
              "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": merges},
}
for i, c in added: tok["model"]["vocab"][c] = i
json.dump(tok, open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "deepseek-v2-steps.json"), "w", encoding="utf8"), ensure_ascii=False, indent=1)
print(len(vocab), len(merges))
