/* input_sdl.c — SDL's events into app calls, through a key map (microui's key_map). */
#include "input_sdl.h"

static const struct {
    SDL_Keycode sym;
    int key;
} KEY_MAP[] = {
    {SDLK_LEFT, UI_KEY_LEFT},       {SDLK_RIGHT, UI_KEY_RIGHT},       {SDLK_UP, UI_KEY_UP},
    {SDLK_DOWN, UI_KEY_DOWN},       {SDLK_HOME, UI_KEY_HOME},         {SDLK_END, UI_KEY_END},
    {SDLK_PAGEUP, UI_KEY_PAGEUP},   {SDLK_PAGEDOWN, UI_KEY_PAGEDOWN}, {SDLK_F1, UI_KEY_F1}, {SDLK_F5, UI_KEY_F5},
    {SDLK_RETURN, UI_KEY_RETURN},   {SDLK_KP_ENTER, UI_KEY_RETURN},   {SDLK_ESCAPE, UI_KEY_ESCAPE},
    {SDLK_BACKSPACE, UI_KEY_BACKSPACE}, {SDLK_DELETE, UI_KEY_DELETE}, {SDLK_TAB, UI_KEY_TAB},
    {SDLK_SPACE, UI_KEY_SPACE},     {SDLK_KP_PLUS, '+'},              {SDLK_KP_MINUS, '-'},
};

int ui_input_sdl_key(SDL_Keycode sym)
{
    for (size_t i = 0; i < sizeof KEY_MAP / sizeof KEY_MAP[0]; i++)
        if (KEY_MAP[i].sym == sym) return KEY_MAP[i].key;
    /* SDL's keycodes of printable keys are their (lower case) characters */
    if (sym > ' ' && sym < 127) return (int)sym;
    return UI_KEY_NONE;
}

int ui_input_sdl_mods(Uint16 mod)
{
    return (mod & KMOD_SHIFT ? UI_MOD_SHIFT : 0) | (mod & KMOD_CTRL ? UI_MOD_CTRL : 0) |
           (mod & KMOD_ALT ? UI_MOD_ALT : 0);
}

/* Window points, as SDL reports the mouse, to drawable pixels. */
static int px(const ui_app *app, int points)
{
    return (int)(points * app->pixel_ratio);
}

static bool window_event(ui_app *app, const SDL_WindowEvent *w)
{
    switch (w->event) {
    case SDL_WINDOWEVENT_LEAVE: return ui_app_mouse_leave(app);
    case SDL_WINDOWEVENT_SIZE_CHANGED:
    case SDL_WINDOWEVENT_EXPOSED:
    case SDL_WINDOWEVENT_RESTORED:
    case SDL_WINDOWEVENT_MAXIMIZED: return ui_app_exposed(app);
    default: return false;
    }
}

bool ui_input_sdl(ui_app *app, const SDL_Event *ev)
{
    switch (ev->type) {
    case SDL_QUIT: app->req.quit = true; return true;
    case SDL_WINDOWEVENT: return window_event(app, &ev->window);
    case SDL_MOUSEMOTION:
        if (ev->motion.state & SDL_BUTTON_LMASK) return ui_app_mouse_drag(app, px(app, ev->motion.x), px(app, ev->motion.y));
        return ui_app_mouse_move(app, px(app, ev->motion.x), px(app, ev->motion.y));
    case SDL_MOUSEBUTTONUP: return ev->button.button == SDL_BUTTON_LEFT && ui_app_mouse_up(app);
    case SDL_MOUSEBUTTONDOWN:
        if (ev->button.button != SDL_BUTTON_LEFT) return false;
        return ui_app_mouse_down(app, px(app, ev->button.x), px(app, ev->button.y));
    case SDL_MOUSEWHEEL: return ui_app_wheel(app, ev->wheel.y);
    case SDL_TEXTEDITING: return ui_app_compose(app, ev->edit.text);
    case SDL_TEXTINPUT: return ui_app_text(app, ev->text.text);
    case SDL_KEYDOWN: {
        int key = ui_input_sdl_key(ev->key.keysym.sym);
        return key != UI_KEY_NONE && ui_app_key(app, key, ui_input_sdl_mods(ev->key.keysym.mod));
    }
    default: return false;
    }
}
