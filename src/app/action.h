/* action.h — everything a key or a click can do. No SDL.
 *
 * Keys (keys.c), buttons (hit areas the renderer records, layout.h) and
 * lesson steps all end in app_do(app, action, arg). */
#ifndef APP_ACTION_H
#define APP_ACTION_H

typedef enum {
    APP_ACT_NONE,
    APP_ACT_STAGE,     /* arg: stage index in the trace */
    APP_ACT_STAGE_PREV, APP_ACT_STAGE_NEXT,
    APP_ACT_LAYER_PREV, APP_ACT_LAYER_NEXT,
    APP_ACT_HEAD,      /* arg: head */
    APP_ACT_HEAD_PREV, APP_ACT_HEAD_NEXT,
    APP_ACT_BATCH_NEXT,
    APP_ACT_CAUSAL, APP_ACT_PADDING, APP_ACT_MODE, APP_ACT_ROPE, APP_ACT_TRAIN, APP_ACT_FILL, APP_ACT_CROSS,
    APP_ACT_HEADS_UP, APP_ACT_HEADS_DOWN, APP_ACT_KV_UP, APP_ACT_KV_DOWN,
    APP_ACT_GRID, APP_ACT_COMPARE, APP_ACT_GEOMETRY, APP_ACT_CURVES, APP_ACT_TILES,
    APP_ACT_EXPERTS,   /* the token × expert view of a routed layer / the picture again */
    APP_ACT_COMPARE_WITH, /* arg: app_toggle */
    APP_ACT_MODEL_NEXT, /* the next shipped trained model; after the last, the built-in example */
    APP_ACT_EDIT, APP_ACT_DECODE, APP_ACT_DECODE_PREV, APP_ACT_DECODE_NEXT,
    APP_ACT_PRESENT,   /* presenter mode on / off */
    APP_ACT_SCALE_HEAD, /* the colour scale: shared by all heads / the shown head's own */
    APP_ACT_VOCAB_VIEW, /* logits and probs: each row's top tokens ranked / the full heatmap */
    APP_ACT_ZOOM_RESET, /* the single view's zoom back to the whole picture */
    APP_ACT_SAVE,      /* a PNG of the window */
    APP_ACT_SAVE_MENU, /* the save dialog, open / close */
    APP_ACT_SAVE_AS,   /* arg: app_save_kind */
    APP_ACT_FULLSCREEN, APP_ACT_FONT_UP, APP_ACT_FONT_DOWN, APP_ACT_HELP,
    APP_ACT_ROW,       /* arg: query row to show as a bar chart (-1 closes it) */
    APP_ACT_LESSON_NEXT, APP_ACT_LESSON_PREV,
    APP_ACT_LESSON_RESTORE, /* the current step's state again, after exploring */
    APP_ACT_LESSON_CHOICE, /* arg: quiz << 8 | choice */
    APP_ACT_LESSON_CHECK,  /* arg: quiz */
    APP_ACT_LESSON_FIELD,  /* arg: quiz: type into its numeric answer */
    APP_ACT_LESSON_REVEAL, /* arg: quiz: show / hide the right cells */
    APP_ACT_LESSON_ONWARD, /* the course's next lesson, offered on the last step (player.h: next) */
    APP_ACT_LESSON_MORE,   /* arg: 0 the lesson's text, 1 its docked quiz: most of a view further down ("▼ more below") */
    APP_ACT_PICKER,        /* open / close the lesson picker */
    APP_ACT_PICK,          /* arg: lesson index in the picker */
    APP_ACT_PICKER_RESET,  /* forget all progress (asks once, then does it) */
    APP_ACT_PICK_SHOW,     /* arg: lesson index the picker selects, and scrolls to (its ▲ / ▼ more cues) */
    APP_ACT_CYCLE,         /* arg: row of the settings table (attn_setting_at) to step to the next value of its cycle */
    APP_ACT_MENU,          /* the toolbar's overflow menu, open / close */
    APP_ACT_PANELS,        /* the stage list and side panel: shown / hidden (auto until first asked) */
    APP_ACT_LESSON_WIDTH,  /* arg: +1 a wider lesson panel, -1 a narrower one */
    APP_ACT_DIVIDER,       /* the line between picture and lesson: a drag moves it */
    APP_ACT_TRAIN_PREV, APP_ACT_TRAIN_NEXT, /* the training checkpoint before / after the one shown (training.h) */
    APP_ACT_TRAIN_AT,      /* arg: training position (0 .. n; n: the final model) */
    APP_ACT_TRAIN_METRIC,  /* the training panel's small multiples: the next per-head measure */
    APP_ACT_TRAIN_HEAD,    /* arg: layer << 16 | head: show that head (a click on its small plot) */
    APP_ACT_BACK,          /* Esc: leave an overlay (help, save dialog, the quit question), the bar chart or the lesson; never quits */
    APP_ACT_QUIT           /* quit; with a lesson open, asks first (app->quit_confirm), and quits when asked again */
} app_action;

#endif
