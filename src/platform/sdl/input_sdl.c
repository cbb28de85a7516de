/* input_sdl.c — SDL's events (keys, the mouse, a finger) into app calls, through a key map (microui's key_map). */
#include "input_sdl.h"

static const struct {
    SDL_Keycode sym;
    int key;
} KEY_MAP[] = {
    {SDLK_LEFT, APP_KEY_LEFT},       {SDLK_RIGHT, APP_KEY_RIGHT},       {SDLK_UP, APP_KEY_UP},
    {SDLK_DOWN, APP_KEY_DOWN},       {SDLK_HOME, APP_KEY_HOME},         {SDLK_END, APP_KEY_END},
    {SDLK_PAGEUP, APP_KEY_PAGEUP},   {SDLK_PAGEDOWN, APP_KEY_PAGEDOWN}, {SDLK_F1, APP_KEY_F1}, {SDLK_F5, APP_KEY_F5},
    {SDLK_RETURN, APP_KEY_RETURN},   {SDLK_KP_ENTER, APP_KEY_RETURN},   {SDLK_ESCAPE, APP_KEY_ESCAPE},
    {SDLK_BACKSPACE, APP_KEY_BACKSPACE}, {SDLK_DELETE, APP_KEY_DELETE}, {SDLK_TAB, APP_KEY_TAB},
    {SDLK_SPACE, APP_KEY_SPACE},     {SDLK_KP_PLUS, '+'},              {SDLK_KP_MINUS, '-'},
};

int sdl_input_key(SDL_Keycode sym)
{
    for (size_t i = 0; i < sizeof KEY_MAP / sizeof KEY_MAP[0]; i++)
        if (KEY_MAP[i].sym == sym) return KEY_MAP[i].key;
    /* SDL's keycodes of printable keys are their (lower case) characters */
    if (sym > ' ' && sym < 127) return (int)sym;
    return APP_KEY_NONE;
}

int sdl_input_mods(Uint16 mod)
{
    return (mod & KMOD_SHIFT ? APP_MOD_SHIFT : 0) | (mod & KMOD_CTRL ? APP_MOD_CTRL : 0) |
           (mod & KMOD_ALT ? APP_MOD_ALT : 0);
}

/* Window points, as SDL reports the mouse, to drawable pixels. */
static int px(const app_state *app, int points)
{
    return (int)(points * app->pixel_ratio);
}

static bool window_event(app_state *app, const SDL_WindowEvent *w)
{
    switch (w->event) {
    case SDL_WINDOWEVENT_LEAVE: return app_mouse_leave(app);
    case SDL_WINDOWEVENT_SIZE_CHANGED:
    case SDL_WINDOWEVENT_EXPOSED:
    case SDL_WINDOWEVENT_RESTORED:
    case SDL_WINDOWEVENT_MAXIMIZED: return app_exposed(app);
    default: return false;
    }
}

/* One finger: its place (SDL gives it from 0 to 1 across the window) in
 * drawable pixels. A second finger is not followed. */
static bool finger_event(app_state *app, const SDL_TouchFingerEvent *f)
{
    int x = (int)(f->x * app->full_width), y = (int)(f->y * app->full_height);
    switch (f->type) {
    case SDL_FINGERDOWN: return SDL_GetNumTouchFingers(f->touchId) <= 1 && app_touch_down(app, x, y);
    case SDL_FINGERMOTION: return app_touch_move(app, x, y);
    case SDL_FINGERUP: return app_touch_up(app);
    default: return false;
    }
}

bool sdl_input_event(app_state *app, const SDL_Event *ev)
{
    /* the mouse SDL makes of a finger: the finger's own events say it (finger_event) */
    if ((ev->type == SDL_MOUSEMOTION && ev->motion.which == SDL_TOUCH_MOUSEID) ||
        ((ev->type == SDL_MOUSEBUTTONDOWN || ev->type == SDL_MOUSEBUTTONUP) && ev->button.which == SDL_TOUCH_MOUSEID))
        return false;
    switch (ev->type) {
    case SDL_QUIT: app->req.quit = true; return true;
    case SDL_WINDOWEVENT: return window_event(app, &ev->window);
    case SDL_FINGERDOWN:
    case SDL_FINGERMOTION:
    case SDL_FINGERUP: return finger_event(app, &ev->tfinger);
    case SDL_MOUSEMOTION:
        if (ev->motion.state & SDL_BUTTON_LMASK) return app_mouse_drag(app, px(app, ev->motion.x), px(app, ev->motion.y));
        return app_mouse_move(app, px(app, ev->motion.x), px(app, ev->motion.y));
    case SDL_MOUSEBUTTONUP: return ev->button.button == SDL_BUTTON_LEFT && app_mouse_up(app);
    case SDL_MOUSEBUTTONDOWN:
        if (ev->button.button != SDL_BUTTON_LEFT) return false;
        return app_mouse_down(app, px(app, ev->button.x), px(app, ev->button.y));
    case SDL_MOUSEWHEEL: return app_wheel(app, ev->wheel.y);
    case SDL_TEXTEDITING: return app_compose(app, ev->edit.text);
    case SDL_TEXTINPUT: return app_text(app, ev->text.text);
    case SDL_KEYDOWN: {
        int key = sdl_input_key(ev->key.keysym.sym);
        return key != APP_KEY_NONE && app_key(app, key, sdl_input_mods(ev->key.keysym.mod));
    }
    default: return false;
    }
}
