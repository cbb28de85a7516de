/* keys.h — the keyboard without SDL: key codes, and the one table that binds
 * keys to actions. No SDL.
 *
 * input_sdl.c maps SDL's keycodes to these codes (its key map, in the spirit of
 * microui's); the app looks a key up with app_keys_find and does the row's
 * action; the help overlay lists the same rows. A new binding is one row. */
#ifndef APP_KEYS_H
#define APP_KEYS_H

#include <stdbool.h>

#include "action.h"

/* A printable key is its character (letters in lower case); the others: */
enum {
    APP_KEY_NONE = 0,
    APP_KEY_BACKSPACE = 8,
    APP_KEY_TAB = 9,
    APP_KEY_RETURN = 13, /* Enter on the keypad too */
    APP_KEY_ESCAPE = 27,
    APP_KEY_SPACE = ' ',
    APP_KEY_DELETE = 127,
    APP_KEY_LEFT = 256, APP_KEY_RIGHT, APP_KEY_UP, APP_KEY_DOWN,
    APP_KEY_HOME, APP_KEY_END, APP_KEY_PAGEUP, APP_KEY_PAGEDOWN, APP_KEY_F1, APP_KEY_F5
};

enum { APP_MOD_SHIFT = 1, APP_MOD_CTRL = 2, APP_MOD_ALT = 4 };

typedef enum {
    APP_KEYS_VIEW,  /* the visualizer */
    APP_KEYS_LESSON /* while a lesson is open; tried before APP_KEYS_VIEW */
} app_key_scope;

typedef enum { APP_SHIFT_ANY, APP_SHIFT_OFF, APP_SHIFT_ON } app_shift;

typedef struct {
    int key;              /* APP_KEY_NONE: a line of the help only */
    app_shift shift;
    app_key_scope scope;
    app_action action;
    int arg;
    const char *setting;  /* APP_ACT_CYCLE: the settings-table row whose cycle the key steps through */
    const char *help_keys;/* the help line: keys as shown (NULL: the row belongs to the line above) */
    const char *help;     /* and what they do (marked N_, translated where drawn) */
    const char *chip;     /* APP_ACT_CYCLE: its toolbar chip, %s the value ("window %s"; N_); NULL: none */
    bool desktop;         /* the desktop's alone: the web page's help leaves the row out */
} app_key_binding;

extern const app_key_binding app_keys[];
extern const int app_n_keys;

/* The binding of key with modifiers mods (APP_MOD_*) in scope, or NULL. */
const app_key_binding *app_keys_find(app_key_scope scope, int key, int mods);

/* The argument app_do takes for binding b: for APP_ACT_CYCLE the index of
 * its setting in the settings table (-1 if there is none), else b->arg. */
int app_keys_arg(const app_key_binding *b);

#endif
