/* action.h — everything a key or a click can do. No SDL.
 *
 * Keys (keys.c), buttons (hit areas the renderer records, layout.h) and
 * lesson steps all end in ui_app_do(app, action, arg). */
#ifndef UI_ACTION_H
#define UI_ACTION_H

typedef enum {
    UI_ACT_NONE,
    UI_ACT_STAGE,      /* arg: stage index in the trace */
    UI_ACT_STAGE_PREV, UI_ACT_STAGE_NEXT,
    UI_ACT_LAYER_PREV, UI_ACT_LAYER_NEXT,
    UI_ACT_HEAD,       /* arg: head */
    UI_ACT_HEAD_PREV, UI_ACT_HEAD_NEXT,
    UI_ACT_BATCH_NEXT,
    UI_ACT_CAUSAL, UI_ACT_PADDING, UI_ACT_MODE, UI_ACT_ROPE, UI_ACT_TRAIN, UI_ACT_FILL, UI_ACT_CROSS,
    UI_ACT_HEADS_UP, UI_ACT_HEADS_DOWN, UI_ACT_KV_UP, UI_ACT_KV_DOWN,
    UI_ACT_GRID, UI_ACT_COMPARE, UI_ACT_GEOMETRY,
    UI_ACT_COMPARE_WITH, /* arg: ui_toggle */
    UI_ACT_MODEL_NEXT, /* the next shipped trained model; after the last, the built-in example */
    UI_ACT_EDIT, UI_ACT_DECODE, UI_ACT_DECODE_PREV, UI_ACT_DECODE_NEXT,
    UI_ACT_PRESENT,    /* presenter mode on / off */
    UI_ACT_SCALE_HEAD, /* the colour scale: shared by all heads / the shown head's own */
    UI_ACT_VOCAB_VIEW, /* logits and probs: each row's top tokens ranked / the full heatmap */
    UI_ACT_ZOOM_RESET, /* the single view's zoom back to the whole picture */
    UI_ACT_SAVE,       /* a PNG of the window */
    UI_ACT_SAVE_MENU,  /* the save dialog, open / close */
    UI_ACT_SAVE_AS,    /* arg: ui_save_kind */
    UI_ACT_FULLSCREEN, UI_ACT_FONT_UP, UI_ACT_FONT_DOWN, UI_ACT_HELP,
    UI_ACT_ROW,        /* arg: query row to show as a bar chart (-1 closes it) */
    UI_ACT_LESSON_NEXT, UI_ACT_LESSON_PREV,
    UI_ACT_LESSON_RESTORE, /* the current step's state again, after exploring */
    UI_ACT_LESSON_CHOICE,  /* arg: quiz << 8 | choice */
    UI_ACT_LESSON_CHECK,   /* arg: quiz */
    UI_ACT_LESSON_FIELD,   /* arg: quiz: type into its numeric answer */
    UI_ACT_LESSON_REVEAL,  /* arg: quiz: show / hide the right cells */
    UI_ACT_PICKER,         /* open / close the lesson picker */
    UI_ACT_PICK,           /* arg: lesson index in the picker */
    UI_ACT_PICKER_RESET,   /* forget all progress (asks once, then does it) */
    UI_ACT_PICK_SHOW,      /* arg: lesson index the picker selects, and scrolls to (its ▲ / ▼ more cues) */
    UI_ACT_CYCLE,          /* arg: row of the settings table (attn_setting_at) to step to the next value of its cycle */
    UI_ACT_MENU,           /* the toolbar's overflow menu, open / close */
    UI_ACT_PANELS,         /* the stage list and side panel: shown / hidden (auto until first asked) */
    UI_ACT_LESSON_WIDTH,   /* arg: +1 a wider lesson panel, -1 a narrower one */
    UI_ACT_DIVIDER,        /* the line between picture and lesson: a drag moves it */
    UI_ACT_TRAIN_PREV, UI_ACT_TRAIN_NEXT, /* the training checkpoint before / after the one shown (training.h) */
    UI_ACT_TRAIN_AT,       /* arg: training position (0 .. n; n: the final model) */
    UI_ACT_TRAIN_METRIC,   /* the training panel's small multiples: the next per-head measure */
    UI_ACT_TRAIN_HEAD,     /* arg: layer << 16 | head: show that head (a click on its small plot) */
    UI_ACT_BACK,           /* Esc: leave an overlay (help, save dialog, the quit question), the bar chart or the lesson; never quits */
    UI_ACT_QUIT            /* quit; with a lesson open, asks first (app->quit_confirm), and quits when asked again */
} ui_action;

#endif
