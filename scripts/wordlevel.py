"""tokenizer.json of a small word-level vocabulary, for the random model folders
that scripts and tests write (scripts/family_folders.py, tests/common.py,
tests/make_checkpoints.py): Hugging Face's WordLevel model over a list of
words whose first three are <unk> <s> </s> (special tokens), the text split on
white space, <s> put before every text. Standard library only.

A test imports it from scripts/:

    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    import wordlevel
"""


def tokenizer_json(words, specials=3, bos="<s>", unk="<unk>"):
    """tokenizer.json's object (json.dump it) for words, word i being token i: the first specials
    of them special tokens, bos put before every text, unk for a word not in the list."""
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": i, "content": w, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": True} for i, w in enumerate(words[:specials])],
            "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                                        {"Sequence": {"id": "B", "type_id": 1}}],
                               "special_tokens": {bos: {"id": bos, "ids": [words.index(bos)], "tokens": [bos]}}},
            "decoder": None,
            "model": {"type": "WordLevel", "vocab": {w: i for i, w in enumerate(words)}, "unk_token": unk}}
