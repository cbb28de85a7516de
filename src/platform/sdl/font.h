/* font.h — text for the visualizer: SDL2_ttf fonts found through fontconfig,
 * with glyph-by-glyph fallback so mixed Chinese/English never shows boxes.
 *
 * A ui_font is a small set of faces at one pixel size: a Latin face
 * (DejaVu Sans), a CJK face (WenQuanYi Micro Hei) and, on demand, any other
 * face fontconfig offers for a code point neither covers. Each run of text is
 * drawn with the first face that has its glyphs. Rendered strings are kept as
 * textures of the renderer the font was opened for, so redrawing the same
 * labels costs one SDL_RenderCopy each.
 *
 *     ui_font *f;
 *     if (ui_font_open(renderer, 16, &f, err, sizeof err)) { puts(err); ... }
 *     ui_font_draw(f, "你 是 cat", x, y, (SDL_Color){255, 255, 255, 255});
 *     ui_font_close(f);   // before the renderer is destroyed
 */
#ifndef UI_FONT_H
#define UI_FONT_H

#include <stddef.h>

#include <SDL.h>
#include <stdbool.h>

typedef struct ui_font ui_font;

/* Opens the faces at px pixels (line height about 1.2 px) for drawing on r.
 * Returns 0, or -1 with a one-line message in err ("no font: fontconfig
 * found no face for 'sans-serif' (install fonts-dejavu-core)"). TTF_Init is
 * called here if needed. */
int ui_font_open(SDL_Renderer *r, int px, ui_font **out, char *err, size_t errsize);
void ui_font_close(ui_font *f);

/* Changes the pixel size (font scale, HiDPI); drops cached textures. */
int ui_font_set_size(ui_font *f, int px);
int ui_font_size(const ui_font *f);

/* Draws every face emboldened (SDL_ttf's bold style): a second font opened
 * for bold text, since a style change empties SDL_ttf's glyph cache. */
void ui_font_set_bold(ui_font *f, bool bold);
int ui_font_line_height(const ui_font *f); /* pixels from one baseline to the next */

/* Size in pixels of utf8 drawn on one line. Invalid UTF-8 is drawn as U+FFFD. */
void ui_font_measure(ui_font *f, const char *utf8, int *w, int *h);

/* Draws utf8 with its top-left corner at (x, y); returns the width drawn. */
int ui_font_draw(ui_font *f, const char *utf8, int x, int y, SDL_Color color);
/* The same turned a quarter counter-clockwise (read from bottom to top), in
 * the box whose top-left is (x, y): a line high wide, the text's width tall. */
int ui_font_draw_turned(ui_font *f, const char *utf8, int x, int y, SDL_Color color);

/* The runs utf8 is drawn in, for a second backend that draws the same glyphs
 * from the same files (draw_cairo.c): fn gets each run's face (its file and
 * the index in it), its text (valid UTF-8), its x from the start of the line
 * and the line's baseline from its top, in pixels. Returns -1 if out of memory. */
typedef void ui_font_run_fn(void *ctx, const char *path, int index, const char *text, int x, int baseline);
int ui_font_runs(ui_font *f, const char *utf8, ui_font_run_fn *fn, void *ctx);

/* Number of code points of utf8 that no face of f can draw (0 means no boxes). */
int ui_font_missing_glyphs(ui_font *f, const char *utf8);

/* File names of the faces in use, for messages and tests ("DejaVuSans.ttf"). */
const char *ui_font_face_path(const ui_font *f, int index);
int ui_font_face_count(const ui_font *f);

/* Rendered strings kept as textures; at UI_FONT_CACHE_MAX the cache is
 * emptied and starts again. For tests and statistics. */
#define UI_FONT_CACHE_MAX 4096
int ui_font_cache_count(const ui_font *f);

#endif
