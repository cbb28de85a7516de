/* keys.h — the keyboard without SDL: key codes, and the one table that binds
 * keys to actions. No SDL.
 *
 * input_sdl.c maps SDL's keycodes to these codes (its key map, in the spirit of
 * microui's); the app looks a key up with ui_keys_find and does the row's
 * action; the help overlay lists the same rows. A new binding is one row. */
#ifndef UI_KEYS_H
#define UI_KEYS_H

#include <stdbool.h>

#include "action.h"

/* A printable key is its character (letters in lower case); the others: */
enum {
    UI_KEY_NONE = 0,
    UI_KEY_BACKSPACE = 8,
    UI_KEY_TAB = 9,
    UI_KEY_RETURN = 13, /* Enter on the keypad too */
    UI_KEY_ESCAPE = 27,
    UI_KEY_SPACE = ' ',
    UI_KEY_DELETE = 127,
    UI_KEY_LEFT = 256, UI_KEY_RIGHT, UI_KEY_UP, UI_KEY_DOWN,
    UI_KEY_HOME, UI_KEY_END, UI_KEY_PAGEUP, UI_KEY_PAGEDOWN, UI_KEY_F1, UI_KEY_F5
};

enum { UI_MOD_SHIFT = 1, UI_MOD_CTRL = 2, UI_MOD_ALT = 4 };

typedef enum {
    UI_KEYS_VIEW,   /* the visualizer */
    UI_KEYS_LESSON  /* while a lesson is open; tried before UI_KEYS_VIEW */
} ui_key_scope;

typedef enum { UI_SHIFT_ANY, UI_SHIFT_OFF, UI_SHIFT_ON } ui_shift;

typedef struct {
    int key;              /* UI_KEY_NONE: a line of the help only */
    ui_shift shift;
    ui_key_scope scope;
    ui_action action;
    int arg;
    const char *setting;  /* UI_ACT_CYCLE: the settings-table row whose cycle the key steps through */
    const char *help_keys;/* the help line: keys as shown (NULL: the row belongs to the line above) */
    const char *help;     /* and what they do (marked N_, translated where drawn) */
    const char *chip;     /* UI_ACT_CYCLE: its toolbar chip, %s the value ("window %s"; N_); NULL: none */
} ui_key_binding;

extern const ui_key_binding ui_keys[];
extern const int ui_n_keys;

/* The binding of key with modifiers mods (UI_MOD_*) in scope, or NULL. */
const ui_key_binding *ui_keys_find(ui_key_scope scope, int key, int mods);

/* The argument ui_app_do takes for binding b: for UI_ACT_CYCLE the index of
 * its setting in the settings table (-1 if there is none), else b->arg. */
int ui_keys_arg(const ui_key_binding *b);

#endif
