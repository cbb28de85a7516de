/* keys.c — every key binding, with its line of the help overlay. */
#include "keys.h"

#include <stddef.h>

#include "engine/trace/config.h"
#include "i18n.h"

#define KEY(k, act, keys, text) {k, UI_SHIFT_ANY, UI_KEYS_VIEW, act, 0, NULL, keys, text, NULL}
#define ALSO(k, act) {k, UI_SHIFT_ANY, UI_KEYS_VIEW, act, 0, NULL, NULL, NULL, NULL}
#define PLAIN(k, act, keys, text) {k, UI_SHIFT_OFF, UI_KEYS_VIEW, act, 0, NULL, keys, text, NULL}
#define SHIFTED(k, act) {k, UI_SHIFT_ON, UI_KEYS_VIEW, act, 0, NULL, NULL, NULL, NULL}
#define LESSON(k, act, keys, text) {k, UI_SHIFT_ANY, UI_KEYS_LESSON, act, 0, NULL, keys, text, NULL}
#define LESSON_PLAIN(k, act) {k, UI_SHIFT_OFF, UI_KEYS_LESSON, act, 0, NULL, NULL, NULL, NULL}
/* a setting stepped through the values its row of the settings table lists */
#define CYCLE(k, setting, keys, text, chip) {k, UI_SHIFT_ANY, UI_KEYS_VIEW, UI_ACT_CYCLE, 0, setting, keys, text, chip}

/* key names stay as they are; the descriptions (and "click") are translated where drawn */
const ui_key_binding ui_keys[] = {
    KEY(UI_KEY_LEFT, UI_ACT_STAGE_PREV, "← →", N_("previous / next stage")),
    ALSO(UI_KEY_RIGHT, UI_ACT_STAGE_NEXT),
    KEY(',', UI_ACT_LAYER_PREV, ",  .", N_("previous / next layer (a trace of several layers)")),
    ALSO('.', UI_ACT_LAYER_NEXT),
    KEY(UI_KEY_UP, UI_ACT_HEAD_PREV, "↑ ↓", N_("previous / next head")),
    ALSO(UI_KEY_DOWN, UI_ACT_HEAD_NEXT),
    KEY('b', UI_ACT_BATCH_NEXT, "b", N_("next batch row")),
    KEY('c', UI_ACT_CAUSAL, "c", N_("causal mask on / off")),
    KEY('p', UI_ACT_PADDING, "p", N_("padding: right → left → unmasked")),
    KEY('m', UI_ACT_MODE, "m", N_("mode: MHA → GQA → MQA")),
    PLAIN('h', UI_ACT_HEADS_UP, "h  H", N_("more / fewer heads (divisors of d_model)")),
    SHIFTED('h', UI_ACT_HEADS_DOWN),
    PLAIN('v', UI_ACT_KV_UP, "v  V", N_("more / fewer kv heads (divisors of heads)")),
    SHIFTED('v', UI_ACT_KV_DOWN),
    KEY('r', UI_ACT_ROPE, "r", N_("RoPE on / off")),
    KEY('d', UI_ACT_TRAIN, "d", N_("training with dropout / evaluation")),
    KEY('i', UI_ACT_FILL, "i", N_("mask fill: −∞ or −1e9")),
    CYCLE('w', "sliding_window", "w", N_("sliding window: off → 2 → 3 → 4"), N_("window %s")),
    KEY('x', UI_ACT_CROSS, "x", N_("cross-attention on / off")),
    KEY('n', UI_ACT_PANELS, "n", N_("stage list and side panel: show / hide")),
    KEY('g', UI_ACT_GRID, "g", N_("all-heads grid")),
    KEY('a', UI_ACT_GEOMETRY, "a", N_("queries and keys as arrows: similarity is angle and length")),
    KEY('u', UI_ACT_SCALE_HEAD, "u", N_("colour scale: shared by all heads / this head's own")),
    KEY('y', UI_ACT_VOCAB_VIEW, "y", N_("logits, probs: each row's top tokens ranked / the full heatmap")),
    /* TRANSLATORS: the keys column of the help: the mouse wheel, dragging, and the key z */
    KEY('z', UI_ACT_ZOOM_RESET, N_("wheel  drag  z"), N_("zoom into a heatmap / move around it / the whole picture again")),
    KEY(UI_KEY_TAB, UI_ACT_COMPARE, "Tab", N_("compare view; t: which mask to toggle")),
    {'t', UI_SHIFT_ANY, UI_KEYS_VIEW, UI_ACT_COMPARE_WITH, -1, NULL, NULL, NULL, NULL}, /* -1: the next one */
    KEY('o', UI_ACT_MODEL_NEXT, "o", N_("trained models one after another (brown → … → tang-nocausal), then the built-in example")),
    PLAIN('j', UI_ACT_TRAIN_NEXT, "j  J", N_("a model saved during training: next / earlier training step")),
    SHIFTED('j', UI_ACT_TRAIN_PREV),
    KEY('e', UI_ACT_EDIT, "e", N_("edit the tokens (Enter applies, Esc cancels)")),
    KEY('k', UI_ACT_DECODE, "k", N_("KV-cache decode mode (a trained model: at its text's last token)")),
    KEY('[', UI_ACT_DECODE_PREV, "[  ]", N_("previous / next token; a model: ] at the end writes one (after </s>, a new text)")),
    ALSO(']', UI_ACT_DECODE_NEXT),
    /* TRANSLATORS: "click" stands in the keys column of the help */
    KEY(UI_KEY_NONE, UI_ACT_NONE, N_("click"), N_("a cell's row: its weights as bars")),
    PLAIN('s', UI_ACT_SAVE, "s  S", N_("save a PNG / choose PNG, SVG, PDF or the matrix as CSV")),
    SHIFTED('s', UI_ACT_SAVE_MENU),
    KEY('f', UI_ACT_FULLSCREEN, "f", N_("fullscreen")),
    KEY(UI_KEY_F5, UI_ACT_PRESENT, "F5", N_("presenter mode: fullscreen, large text, toolbar on mouse move")),
    KEY('+', UI_ACT_FONT_UP, "+ −", N_("bigger / smaller text")),
    SHIFTED('=', UI_ACT_FONT_UP),
    ALSO('-', UI_ACT_FONT_DOWN),
    KEY('l', UI_ACT_PICKER, "l", N_("lessons: pick one, with your progress")),
    LESSON(UI_KEY_SPACE, UI_ACT_LESSON_NEXT, "Space  ⌫", N_("in a lesson: next / previous step")),
    LESSON_PLAIN(UI_KEY_PAGEDOWN, UI_ACT_LESSON_NEXT),
    /* TRANSLATORS: the keys column of the help: { and } (Shift+[ and Shift+]), or dragging the line */
    {'[', UI_SHIFT_ON, UI_KEYS_LESSON, UI_ACT_LESSON_WIDTH, 1, NULL, N_("{ }  drag"),
     N_("in a lesson: a wider / narrower lesson panel (or drag the line between them)"), NULL},
    {']', UI_SHIFT_ON, UI_KEYS_LESSON, UI_ACT_LESSON_WIDTH, -1, NULL, NULL, NULL, NULL},
    {UI_KEY_BACKSPACE, UI_SHIFT_ANY, UI_KEYS_LESSON, UI_ACT_LESSON_PREV, 0, NULL, NULL, NULL, NULL},
    {UI_KEY_PAGEUP, UI_SHIFT_ANY, UI_KEYS_LESSON, UI_ACT_LESSON_PREV, 0, NULL, NULL, NULL, NULL},
    KEY('?', UI_ACT_HELP, "? F1", N_("this help")),
    ALSO(UI_KEY_F1, UI_ACT_HELP),
    SHIFTED('/', UI_ACT_HELP),
    KEY(UI_KEY_ESCAPE, UI_ACT_BACK, "Esc", N_("leave an overlay, the editor, the picker or the lesson")),
    KEY('q', UI_ACT_QUIT, "q", N_("quit (in a lesson it asks first)")),
};

const int ui_n_keys = (int)(sizeof ui_keys / sizeof ui_keys[0]);

const ui_key_binding *ui_keys_find(ui_key_scope scope, int key, int mods)
{
    bool shift = (mods & UI_MOD_SHIFT) != 0;
    if (key == UI_KEY_NONE) return NULL;
    for (int i = 0; i < ui_n_keys; i++) {
        const ui_key_binding *b = &ui_keys[i];
        if (b->key != key || b->scope != scope) continue;
        if ((b->shift == UI_SHIFT_ON && !shift) || (b->shift == UI_SHIFT_OFF && shift)) continue;
        return b;
    }
    return NULL;
}

int ui_keys_arg(const ui_key_binding *b)
{
    if (b->action != UI_ACT_CYCLE) return b->arg;
    const attn_setting *row = b->setting ? attn_setting_find(b->setting) : NULL;
    for (int i = 0; row && i < attn_setting_count(); i++)
        if (attn_setting_at(i) == row) return i;
    return -1;
}
