#!/bin/sh
# Remakes the README's screenshots with `attnlab render` (no display needed).
# Usage: scripts/screenshots.sh [path/to/attnlab] [output folder]
# Run from the repository root; the folder defaults to assets/screenshots.
set -eu
A=${1:-build/attnlab}
D=${2:-assets/screenshots}
mkdir -p "$D"
"$A" render --stage weights -o "$D/weights-causal.png"
"$A" render --stage masked_scores --head 1 --row 3 -o "$D/masked-scores-row.png"
"$A" render --view grid --d-model 64 --heads 8 --kv-heads 2 -o "$D/grid-gqa.png"
"$A" render --view compare --compare padding --batch-index 1 -o "$D/compare-padding.png"
"$A" render --decode-step 4 --stage weights -o "$D/decode.png"
"$A" render --tokens "我 爱 AI" --source-tokens "I love AI very much" --no-causal -o "$D/cross.png"
"$A" render --stage q --head 2 -o "$D/q-head-blocks.png"
"$A" render --view geometry --d-model 2 --heads 1 --seed 9 --tokens "你 是 一 只 猫 娘" --no-causal --row 4 -o "$D/geometry-2d.png"
"$A" render --view geometry --rope --row 5 -o "$D/geometry-pca-rope.png"
# issue 33's settings: the sink column, where its weight came from, ALiBi's bias of one head
"$A" render --sink-logit 0.5 --stage weights -o "$D/weights-sink.png"
"$A" render --sink-logit 0.5 --view compare --compare sink -o "$D/compare-sink.png"
"$A" render --alibi --stage bias --head 1 -o "$D/bias-alibi.png"
# FlashAttention's tiles (F): the first key tile, the causally skipped tiles hatched, m, ℓ and the output so far
"$A" render --tiles 2x4 --seq 8 --view tiles -o "$D/flash-tiles.png"
# multi-head latent attention: naive beside absorbed (the same output), and the latent cache with the KV panel
"$A" render --mode mla --view compare --compare mla_absorb -o "$D/compare-mla.png"
"$A" render --mode mla --kv-rank 8 --rope-dim 4 --stage c_kv -o "$D/mla-latent.png"
# today's families, on small random folders (scripts/family_folders.py): a Gemma 2 layer's capped scores,
# a DeepSeek layer's latent cache and its experts (E), a gpt-oss local layer's weights beside its head's sink
F=$(mktemp -d)
python3 scripts/family_folders.py "$F" >/dev/null
T="the cat sat on the mat . a dog ran over the hill to see the sun"
"$A" render --model "$F/gemma2" --text "$T" --layer 1 --stage capped_scores -o "$D/gemma2-capped-scores.png"
"$A" render --model "$F/deepseek-moe" --text "$T" --layer 1 --stage c_kv -o "$D/deepseek-latent.png"
"$A" render --model "$F/deepseek-moe" --text "$T" --layer 1 --stage expert_weights --view experts -o "$D/deepseek-experts.png"
"$A" render --model "$F/gpt-oss" --text "$T" --layer 0 --stage weights --head 3 -o "$D/gptoss-sink.png"
rm -rf "$F"
"$A" render --pad-side left --mask-value -1e9 --batch-index 1 --row 1 -o "$D/pitfall-finite-fill.png"
"$A" render --pad-side left --no-softmax-guard --batch-index 1 --row 4 -o "$D/pitfall-nan-rows.png"
# a trained model: one head, and every layer × every head
"$A" render --model tang --text "床前明月光，疑是地上霜。举头望明月，低头思故乡。" --layer 2 --head 3 -o "$D/model-previous-char.png"
"$A" render --model tang --text "床前明月光，疑是地上霜。举头望明月，低头思故乡。" --view grid -o "$D/model-overview.png"
# a poem tang wrote from its first line, as ] writes it: the text strip, the query at its last mark, </s> next
"$A" render --model tang --text 春眠不觉晓 --decode-step 25 --layer 2 --head 3 -o "$D/model-generated.png"
# lessons: a fresh progress file, so the picker shows "not started"
XDG_STATE_HOME=$(mktemp -d) && export XDG_STATE_HOME
"$A" render --lesson lessons/en/04-causal-mask.md --step 5 -o "$D/lesson-causal.png"
# a trained model beside its lesson: lesson 12 step 3 (25 × 25, every label), and its probs ranked (lesson 15 step 5)
"$A" render --lesson lessons/en/12-trained-heads.md --step 3 -o "$D/lesson-trained-heads.png"
"$A" render --lang zh --lesson lessons/zh/15-decoder-block.md --step 5 -o "$D/lesson-ranked-probs-zh.png"
"$A" render --lang zh --lesson lessons/zh/05-padding-mask.md --step 6 -o "$D/lesson-padding-zh.png"
"$A" render --lang en --picker -o "$D/lesson-picker.png"
rm -rf "$XDG_STATE_HOME"
