#!/bin/sh
# Runs tests/check_tokenizer_node.mjs: attnlab's tokenizer (the tok_encode
# program given) against the npm package @huggingface/tokenizers on the test
# tokenizers, every shipped model's and the real ones of tests/data/hf. Installs the package, pinned, into a
# cache folder the first time; the reference's answers for each file are kept
# in the same folder (reference-cache/, keyed by the package's version, the
# file, the texts and the check script; ATTNLAB_REFERENCE_CACHE=off ignores
# it). Exits 77 (skipped) without node or npm, or when the install fails (no
# network). Usage: node_reference.sh TOK_ENCODE [--sanitized]; with
# --sanitized (a tok_encode built with ASan and UBSan, which loads the large
# files three times slower) the real files over 10 MB unpacked (gpt-oss's,
# SmolLM3's) are left to the release build's run.
set -u
ENCODER=$1
SANITIZED=${2:-}
VERSION=0.2.0
DIR=${XDG_CACHE_HOME:-$HOME/.cache}/attnlab/node
command -v node >/dev/null 2>&1 || { echo "node is not installed: skipped"; exit 77; }
if [ ! -f "$DIR/node_modules/@huggingface/tokenizers/package.json" ] ||
   ! grep -q "\"version\": \"$VERSION\"" "$DIR/node_modules/@huggingface/tokenizers/package.json"; then
  command -v npm >/dev/null 2>&1 || { echo "npm is not installed: skipped"; exit 77; }
  mkdir -p "$DIR"
  npm install --silent --no-save --no-audit --no-fund --prefix "$DIR" "@huggingface/tokenizers@$VERSION" >/dev/null 2>&1 ||
    { echo "npm could not install @huggingface/tokenizers@$VERSION: skipped"; exit 77; }
fi
# the real tokenizers of published checkpoints (tests/data/hf), unpacked
HF=$(mktemp -d)
trap 'rm -rf "$HF"' EXIT
for f in tests/data/hf/*.tokenizer.json.gz; do
  out="$HF/$(basename "$f" .gz)"
  gzip -dc "$f" > "$out"
  if [ "$SANITIZED" = --sanitized ] && [ "$(wc -c < "$out")" -gt 10000000 ]; then
    echo "left to the release build: $(basename "$f")"
    rm "$out"
  fi
done
# Llama 2's vocabulary as newer conversions write it (Mistral, recent TinyLlama
# files): a Metaspace pre-tokenizer and decoder instead of Prepend and Replace
node -e '
const fs = require("fs");
const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const ms = {type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false};
j.normalizer = null;
j.pre_tokenizer = ms;
j.decoder = {type: "Sequence", decoders: [{type: "ByteFallback"}, ms, {type: "Fuse"}]};
fs.writeFileSync(process.argv[2], JSON.stringify(j));
' "$HF/llama2.tokenizer.json" "$HF/llama2-metaspace.tokenizer.json"
node tests/check_tokenizer_node.mjs "$DIR/node_modules" "$ENCODER" tests/data/tokenizers/*.json \
  assets/models/*/tokenizer.json "$HF"/*.json
