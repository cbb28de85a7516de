/* font.h — text for the visualizer: SDL2_ttf fonts found through fontconfig,
 * with glyph-by-glyph fallback so mixed Chinese/English never shows boxes.
 *
 * An sdl_font is a small set of faces at one pixel size: a Latin face
 * (DejaVu Sans), a CJK face (WenQuanYi Micro Hei) and, on demand, any other
 * face fontconfig offers for a code point neither covers. Each run of text is
 * drawn with the first face that has its glyphs. Rendered strings are kept as
 * textures of the renderer the font was opened for, so redrawing the same
 * labels costs one SDL_RenderCopy each.
 *
 *     sdl_font *f;
 *     if (sdl_font_open(renderer, 16, &f, err, sizeof err)) { puts(err); ... }
 *     sdl_font_draw(f, "你 是 cat", x, y, (SDL_Color){255, 255, 255, 255});
 *     sdl_font_close(f);  // before the renderer is destroyed
 */
#ifndef ATTNLAB_SDL_FONT_H
#define ATTNLAB_SDL_FONT_H

#include <stddef.h>

#include <SDL.h>
#include <stdbool.h>

typedef struct sdl_font sdl_font;

/* Opens the faces at px pixels (line height about 1.2 px) for drawing on r.
 * Returns 0, or -1 with a one-line message in err ("no font: fontconfig
 * found no face for 'sans-serif' (install fonts-dejavu-core)"). TTF_Init is
 * called here if needed. */
int sdl_font_open(SDL_Renderer *r, int px, sdl_font **out, char *err, size_t errsize);
void sdl_font_close(sdl_font *f);

/* Changes the pixel size (font scale, HiDPI); drops cached textures. */
int sdl_font_set_size(sdl_font *f, int px);
int sdl_font_size(const sdl_font *f);

/* Draws every face emboldened (SDL_ttf's bold style): a second font opened
 * for bold text, since a style change empties SDL_ttf's glyph cache. */
void sdl_font_set_bold(sdl_font *f, bool bold);
int sdl_font_line_height(const sdl_font *f); /* pixels from one baseline to the next */

/* Size in pixels of utf8 drawn on one line. Invalid UTF-8 is drawn as U+FFFD. */
void sdl_font_measure(sdl_font *f, const char *utf8, int *w, int *h);

/* Draws utf8 with its top-left corner at (x, y); returns the width drawn. */
int sdl_font_draw(sdl_font *f, const char *utf8, int x, int y, SDL_Color color);
/* The same turned a quarter counter-clockwise (read from bottom to top), in
 * the box whose top-left is (x, y): a line high wide, the text's width tall. */
int sdl_font_draw_turned(sdl_font *f, const char *utf8, int x, int y, SDL_Color color);

/* The runs utf8 is drawn in, for a second backend that draws the same glyphs
 * from the same files (draw_cairo.c): fn gets each run's face (its file and
 * the index in it), its text (valid UTF-8), its x from the start of the line
 * and the line's baseline from its top, in pixels. Returns -1 if out of memory. */
typedef void sdl_font_run_fn(void *ctx, const char *path, int index, const char *text, int x, int baseline);
int sdl_font_runs(sdl_font *f, const char *utf8, sdl_font_run_fn *fn, void *ctx);

/* Number of code points of utf8 that no face of f can draw (0 means no boxes). */
int sdl_font_missing_glyphs(sdl_font *f, const char *utf8);

/* File names of the faces in use, for messages and tests ("DejaVuSans.ttf"). */
const char *sdl_font_face_path(const sdl_font *f, int index);
int sdl_font_face_count(const sdl_font *f);

/* Rendered strings kept as textures; at ATTNLAB_SDL_FONT_CACHE_MAX the cache is
 * emptied and starts again. For tests and statistics. */
#define ATTNLAB_SDL_FONT_CACHE_MAX 4096
int sdl_font_cache_count(const sdl_font *f);

#endif
