"""tokenizer.json of a small word-level vocabulary, for the random model folders
that scripts and tests write (scripts/family_folders.py, tests/common.py,
tests/make_checkpoints.py): Hugging Face's WordLevel model over a list of
words whose first three are <unk> <s> </s> (special tokens), the text split on
white space, <s> put before every text. Standard library only.

A test imports it from scripts/:

    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
    import wordlevel
"""


def tokenizer_json(words):
    """tokenizer.json's object (json.dump it) for words, word i being token i."""
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": i, "content": w, "single_word": False, "lstrip": False, "rstrip": False,
                              "normalized": False, "special": True} for i, w in enumerate(words[:3])],
            "normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"},
            "post_processor": {"type": "TemplateProcessing",
                               "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                                          {"Sequence": {"id": "A", "type_id": 0}}],
                               "pair": [{"Sequence": {"id": "A", "type_id": 0}},
                                        {"Sequence": {"id": "B", "type_id": 1}}],
                               "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
            "decoder": None,
            "model": {"type": "WordLevel", "vocab": {w: i for i, w in enumerate(words)}, "unk_token": "<unk>"}}
