/* keys.c — every key binding, with its line of the help overlay. */
#include "keys.h"

#include <stddef.h>

#include "engine/trace/config.h"
#include "i18n.h"

#define KEY(k, act, keys, text) {k, APP_SHIFT_ANY, APP_KEYS_VIEW, act, 0, NULL, keys, text, NULL, false}
#define ALSO(k, act) {k, APP_SHIFT_ANY, APP_KEYS_VIEW, act, 0, NULL, NULL, NULL, NULL, false}
#define PLAIN(k, act, keys, text) {k, APP_SHIFT_OFF, APP_KEYS_VIEW, act, 0, NULL, keys, text, NULL, false}
#define SHIFTED(k, act) {k, APP_SHIFT_ON, APP_KEYS_VIEW, act, 0, NULL, NULL, NULL, NULL, false}
#define LESSON(k, act, keys, text) {k, APP_SHIFT_ANY, APP_KEYS_LESSON, act, 0, NULL, keys, text, NULL, false}
#define LESSON_PLAIN(k, act) {k, APP_SHIFT_OFF, APP_KEYS_LESSON, act, 0, NULL, NULL, NULL, NULL, false}
/* a setting stepped through the values its row of the settings table lists */
#define CYCLE(k, setting, keys, text, chip) {k, APP_SHIFT_ANY, APP_KEYS_VIEW, APP_ACT_CYCLE, 0, setting, keys, text, chip, false}
/* the same on Shift and the letter: the letter alone does something else */
#define CYCLE_SHIFTED(k, setting, keys, text, chip) \
    {k, APP_SHIFT_ON, APP_KEYS_VIEW, APP_ACT_CYCLE, 0, setting, keys, text, chip, false}

/* key names stay as they are; the descriptions (and "click") are translated where drawn */
const app_key_binding app_keys[] = {
    KEY(APP_KEY_LEFT, APP_ACT_STAGE_PREV, "← →", N_("previous / next stage")),
    ALSO(APP_KEY_RIGHT, APP_ACT_STAGE_NEXT),
    KEY(',', APP_ACT_LAYER_PREV, ",  .", N_("previous / next layer (a trace of several layers)")),
    ALSO('.', APP_ACT_LAYER_NEXT),
    KEY(APP_KEY_UP, APP_ACT_HEAD_PREV, "↑ ↓", N_("previous / next head")),
    ALSO(APP_KEY_DOWN, APP_ACT_HEAD_NEXT),
    KEY('b', APP_ACT_BATCH_NEXT, "b", N_("next batch row")),
    PLAIN('c', APP_ACT_CAUSAL, "c", N_("causal mask on / off")),
    KEY('p', APP_ACT_PADDING, "p", N_("padding: right → left → unmasked")),
    PLAIN('m', APP_ACT_MODE, "m", N_("mode: MHA → GQA → MQA → MLA")),
    /* TRANSLATORS: MLA's two computations of the same output; the chip reads "absorbed on/off" */
    CYCLE_SHIFTED('m', "mla_absorb", "M", N_("MLA: naive (keys and values rebuilt per head) / absorbed (W_UK in the query)"),
                  N_("MLA absorbed %s")),
    PLAIN('h', APP_ACT_HEADS_UP, "h  H", N_("more / fewer heads (divisors of d_model)")),
    SHIFTED('h', APP_ACT_HEADS_DOWN),
    PLAIN('v', APP_ACT_KV_UP, "v  V", N_("more / fewer kv heads (divisors of heads)")),
    SHIFTED('v', APP_ACT_KV_DOWN),
    KEY('r', APP_ACT_ROPE, "r", N_("RoPE on / off")),
    KEY('d', APP_ACT_TRAIN, "d", N_("training with dropout / evaluation")),
    KEY('i', APP_ACT_FILL, "i", N_("mask fill: −∞ or −1e9")),
    CYCLE('w', "sliding_window", "w", N_("sliding window: off → 2 → 3 → 4"), N_("window %s")),
    /* TRANSLATORS: StreamingLLM's kept first keys: they stay visible beside the sliding window */
    CYCLE_SHIFTED('k', "keep_first", "K", N_("keep the first keys beside the window: off → 1 → 2 (sets a window of 3 if none)"),
                  N_("keep first %s")),
    CYCLE_SHIFTED('a', "alibi", "A", N_("ALiBi: a distance penalty −m_h·|i − j| on the scores, on / off"), N_("ALiBi %s")),
    CYCLE_SHIFTED('c', "softcap", "C", N_("soft-capping of the scores C·tanh(s/C): off → 5 → 1"), N_("softcap %s")),
    CYCLE_SHIFTED('n', "qk_norm", "N", N_("QK-norm: each q and k head RMS-normalised, on / off"), N_("QK-norm %s")),
    CYCLE_SHIFTED('x', "sink_logit", "X", N_("a learned sink logit X in every row's softmax: off → 0 → 2"),
                  N_("sink logit %s")),
    PLAIN('x', APP_ACT_CROSS, "x", N_("cross-attention on / off")),
    PLAIN('n', APP_ACT_PANELS, "n", N_("stage list and side panel: show / hide")),
    KEY('g', APP_ACT_GRID, "g", N_("all-heads grid")),
    PLAIN('a', APP_ACT_GEOMETRY, "a", N_("queries and keys as arrows: similarity is angle and length")),
    KEY('u', APP_ACT_SCALE_HEAD, "u", N_("colour scale: shared by all heads / this head's own")),
    KEY('y', APP_ACT_VOCAB_VIEW, "y", N_("logits, probs: each row's top tokens ranked / the full heatmap")),
    /* TRANSLATORS: the keys column of the help: the mouse wheel, dragging, and the key z */
    KEY('z', APP_ACT_ZOOM_RESET, N_("wheel  drag  z"), N_("zoom into a heatmap / move around it / the whole picture again")),
    KEY(APP_KEY_TAB, APP_ACT_COMPARE, "Tab", N_("compare view; t: which setting to toggle")),
    {'t', APP_SHIFT_OFF, APP_KEYS_VIEW, APP_ACT_COMPARE_WITH, -1, NULL, NULL, NULL, NULL, false}, /* -1: the next one */
    {'t', APP_SHIFT_ON, APP_KEYS_VIEW, APP_ACT_CURVES, 0, NULL, "T",
     N_("a model saved during training: its training curves instead of the picture / the picture again"), NULL, false},
    KEY('o', APP_ACT_MODEL_NEXT, "o", N_("trained models one after another (brown → … → tang-nocausal), then the built-in example")),
    PLAIN('j', APP_ACT_TRAIN_NEXT, "j  J", N_("a model saved during training: next / earlier training step")),
    SHIFTED('j', APP_ACT_TRAIN_PREV),
    PLAIN('e', APP_ACT_EDIT, "e", N_("edit the tokens (Enter applies, Esc cancels)")),
    PLAIN('k', APP_ACT_DECODE, "k", N_("KV-cache decode mode (a trained model: at its text's last token)")),
    KEY('[', APP_ACT_DECODE_PREV, "[  ]", N_("previous / next token; a model: ] at the end writes one (after </s>, a new text)")),
    ALSO(']', APP_ACT_DECODE_NEXT),
    /* TRANSLATORS: "click" stands in the keys column of the help */
    KEY(APP_KEY_NONE, APP_ACT_NONE, N_("click"), N_("a cell's row: its weights as bars")),
    PLAIN('s', APP_ACT_SAVE, "s  S", N_("save a PNG / choose PNG, SVG, PDF or the matrix as CSV")),
    SHIFTED('s', APP_ACT_SAVE_MENU),
    PLAIN('f', APP_ACT_FULLSCREEN, "f", N_("fullscreen")),
    /* TRANSLATORS: two views on Shift: FlashAttention's key tiles (with --tiles), and a mixture-of-experts
     * layer's tokens × experts (DeepSeek) */
    {'f', APP_SHIFT_ON, APP_KEYS_VIEW, APP_ACT_TILES, 0, NULL, "F  E",
     N_("FlashAttention's key tiles ([ ] steps; with tiles) / each token's experts (a MoE layer) / the picture"), NULL, false},
    {'e', APP_SHIFT_ON, APP_KEYS_VIEW, APP_ACT_EXPERTS, 0, NULL, NULL, NULL, NULL, false},
    KEY(APP_KEY_F5, APP_ACT_PRESENT, "F5", N_("presenter mode: fullscreen, large text, toolbar on mouse move")),
    KEY('+', APP_ACT_FONT_UP, "+ −", N_("bigger / smaller text")),
    SHIFTED('=', APP_ACT_FONT_UP),
    ALSO('-', APP_ACT_FONT_DOWN),
    KEY('l', APP_ACT_PICKER, "l", N_("lessons: pick one, with your progress")),
    LESSON(APP_KEY_SPACE, APP_ACT_LESSON_NEXT, "Space  ⌫", N_("in a lesson: next / previous step")),
    LESSON_PLAIN(APP_KEY_PAGEDOWN, APP_ACT_LESSON_NEXT),
    /* TRANSLATORS: the keys column of the help: { and } (Shift+[ and Shift+]), or dragging the line */
    {'[', APP_SHIFT_ON, APP_KEYS_LESSON, APP_ACT_LESSON_WIDTH, 1, NULL, N_("{ }  drag"),
     N_("in a lesson: a wider / narrower lesson panel (or drag the line between them)"), NULL, false},
    {']', APP_SHIFT_ON, APP_KEYS_LESSON, APP_ACT_LESSON_WIDTH, -1, NULL, NULL, NULL, NULL, false},
    {APP_KEY_BACKSPACE, APP_SHIFT_ANY, APP_KEYS_LESSON, APP_ACT_LESSON_PREV, 0, NULL, NULL, NULL, NULL, false},
    {APP_KEY_PAGEUP, APP_SHIFT_ANY, APP_KEYS_LESSON, APP_ACT_LESSON_PREV, 0, NULL, NULL, NULL, NULL, false},
    KEY('?', APP_ACT_HELP, "? F1", N_("this help")),
    ALSO(APP_KEY_F1, APP_ACT_HELP),
    SHIFTED('/', APP_ACT_HELP),
    KEY(APP_KEY_ESCAPE, APP_ACT_BACK, "Esc", N_("leave an overlay, the editor, the picker or the lesson")),
    {'q', APP_SHIFT_ANY, APP_KEYS_VIEW, APP_ACT_QUIT, 0, NULL, "q", N_("quit (in a lesson it asks first)"), NULL, true},
};

const int app_n_keys = (int)(sizeof app_keys / sizeof app_keys[0]);

const app_key_binding *app_keys_find(app_key_scope scope, int key, int mods)
{
    bool shift = (mods & APP_MOD_SHIFT) != 0;
    if (key == APP_KEY_NONE) return NULL;
    for (int i = 0; i < app_n_keys; i++) {
        const app_key_binding *b = &app_keys[i];
        if (b->key != key || b->scope != scope) continue;
        if ((b->shift == APP_SHIFT_ON && !shift) || (b->shift == APP_SHIFT_OFF && shift)) continue;
        return b;
    }
    return NULL;
}

int app_keys_arg(const app_key_binding *b)
{
    if (b->action != APP_ACT_CYCLE) return b->arg;
    const attn_setting *row = b->setting ? attn_setting_find(b->setting) : NULL;
    for (int i = 0; row && i < attn_setting_count(); i++)
        if (attn_setting_at(i) == row) return i;
    return -1;
}
