/* font.c — text drawing with SDL2_ttf, faces chosen by fontconfig.
 *
 * A string is decoded to code points (bad UTF-8 becomes U+FFFD), each code
 * point is given the first face that has a glyph for it, and consecutive code
 * points with the same face form a run. Runs are rendered one by one, placed
 * side by side on a shared baseline in one ARGB surface, and the result is
 * kept as a texture keyed by (string, colour) until the size changes.
 */
#include "font.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <SDL_ttf.h>
#include <fontconfig/fontconfig.h>

#include "engine/base/utf8.h"
#include "font_file.h"

#define MAX_FACES 8
#define MAX_PX 1024
#define CACHE_SLOTS (2 * ATTNLAB_SDL_FONT_CACHE_MAX) /* power of two: load factor <= 1/2 */
#define NO_FACE_MEMO 64 /* code points fontconfig was already asked about in vain */

typedef struct {
    TTF_Font *ttf;
    char *path;
    int index; /* face index inside a .ttc collection */
    int mapped; /* read from sdl_font_file's mapping of path (else by path) */
} face;

typedef struct {
    char *text; /* NULL: empty slot */
    uint32_t hash; /* of text only, so measure can find any colour */
    SDL_Color color;
    SDL_Texture *tex;
    int w, h;
} cache_entry;

typedef struct {
    int face;
    size_t start; /* offset of the run's NUL-terminated UTF-8 in scratch */
    int w, h; /* TTF_SizeUTF8 of the run */
} run;

struct sdl_font {
    SDL_Renderer *renderer;
    int px;
    face faces[MAX_FACES]; /* [0] the Latin face, then CJK, then fallbacks */
    int nfaces;
    int nline; /* faces opened with the font (Latin, CJK): they set the line */
    int ascent, line_h; /* shared baseline and line height */
    uint32_t no_face[NO_FACE_MEMO]; /* a ring */
    int n_no_face, no_face_next;
    cache_entry *cache; /* CACHE_SLOTS slots, open addressing */
    int cache_count;
    char *scratch; /* re-encoded text of the runs */
    size_t scratch_cap;
    run *runs;
    size_t runs_cap;
    bool bold; /* every face drawn emboldened (sdl_font_set_bold) */
};

/* The only global state: who initialised SDL_ttf and fontconfig. */
static int ttf_users, ttf_ours;
static int fc_users;

/* ---- library init, counted ---- */

static int ttf_acquire(void)
{
    if (ttf_users == 0 && TTF_WasInit() == 0) {
        if (TTF_Init() != 0)
            return -1;
        ttf_ours = 1;
    }
    ttf_users++;
    return 0;
}

static void ttf_release(void)
{
    if (--ttf_users == 0 && ttf_ours) {
        TTF_Quit();
        ttf_ours = 0;
    }
}

static int fc_acquire(void)
{
    if (fc_users == 0 && !FcInit())
        return -1;
    fc_users++;
    return 0;
}

/* FcFini frees fontconfig's configuration and caches; safe because nothing
 * else in attnlab calls fontconfig. */
static void fc_release(void)
{
    if (--fc_users == 0)
        FcFini();
}

/* ---- faces ---- */

static void close_face(face *fc)
{
    if (fc->ttf)
        TTF_CloseFont(fc->ttf);
    if (fc->mapped)
        sdl_font_file_release(fc->path);
    free(fc->path);
    fc->ttf = NULL;
    fc->path = NULL;
}

static int has_face(const sdl_font *f, const char *path, int index)
{
    for (int i = 0; i < f->nfaces; i++)
        if (f->faces[i].index == index && strcmp(f->faces[i].path, path) == 0)
            return 1;
    return 0;
}

/* TTF_Font of fc's path and index at px: from the file's shared mapping when
 * it can be made (fc->mapped set), else read by path. */
static TTF_Font *open_ttf(face *fc, int px)
{
    const void *data;
    size_t size;
    SDL_RWops *rw;
    TTF_Font *t;

    if (sdl_font_file_acquire(fc->path, &data, &size) == 0) {
        rw = size <= (size_t)INT_MAX ? SDL_RWFromConstMem(data, (int)size) : NULL;
        t = rw ? TTF_OpenFontIndexRW(rw, 1, px, fc->index) : NULL;
        if (t) {
            fc->mapped = 1;
            return t;
        }
        sdl_font_file_release(fc->path);
    }
    return TTF_OpenFontIndex(fc->path, px, fc->index);
}

/* Opens the face fontconfig pattern p names and appends it to f. Returns 0,
 * or -1 (TTF's error is set) if it cannot be opened or lacks must_have. */
static int add_face(sdl_font *f, FcPattern *p, uint32_t must_have)
{
    FcChar8 *file = NULL;
    int index = 0;
    face fc = {0};

    if (f->nfaces >= MAX_FACES)
        return -1;
    if (FcPatternGetString(p, FC_FILE, 0, &file) != FcResultMatch)
        return -1;
    if (FcPatternGetInteger(p, FC_INDEX, 0, &index) != FcResultMatch)
        index = 0;
    if (has_face(f, (const char *)file, index))
        return -1;
    fc.index = index;
    fc.path = malloc(strlen((const char *)file) + 1);
    if (!fc.path)
        return -1;
    strcpy(fc.path, (const char *)file);
    fc.ttf = open_ttf(&fc, f->px);
    if (!fc.ttf || (must_have && !TTF_GlyphIsProvided32(fc.ttf, must_have))) {
        close_face(&fc);
        return -1;
    }
    if (f->bold) TTF_SetFontStyle(fc.ttf, TTF_STYLE_BOLD);
    f->faces[f->nfaces++] = fc;
    return 0;
}

/* Best match for a fontconfig pattern string such as "sans-serif:lang=zh-cn";
 * the caller destroys the result. NULL if fontconfig has no face at all. */
static FcPattern *match_name(const char *name)
{
    FcPattern *pat = FcNameParse((const FcChar8 *)name);
    FcPattern *found = NULL;
    FcResult res;

    if (!pat)
        return NULL;
    FcPatternAddBool(pat, FC_SCALABLE, FcTrue);
    FcConfigSubstitute(NULL, pat, FcMatchPattern);
    FcDefaultSubstitute(pat);
    found = FcFontMatch(NULL, pat, &res);
    FcPatternDestroy(pat);
    return found;
}

static int pattern_has_char(FcPattern *p, uint32_t cp)
{
    FcCharSet *cs = NULL;
    return FcPatternGetCharSet(p, FC_CHARSET, 0, &cs) == FcResultMatch && cs &&
           FcCharSetHasChar(cs, cp);
}

/* The Latin and CJK faces set the line; fallbacks are fitted into it. */
static void update_metrics(sdl_font *f)
{
    int asc = 0, desc = 0, skip = 0;

    for (int i = 0; i < f->nline; i++) {
        TTF_Font *t = f->faces[i].ttf;
        if (TTF_FontAscent(t) > asc)
            asc = TTF_FontAscent(t);
        if (TTF_FontDescent(t) < desc)
            desc = TTF_FontDescent(t);
        if (TTF_FontLineSkip(t) > skip)
            skip = TTF_FontLineSkip(t);
    }
    f->ascent = asc;
    f->line_h = skip > asc - desc ? skip : asc - desc;
}

/* Asks fontconfig for a face that has cp and loads it. Returns its index,
 * or -1 if none (remembered so the next ask is free). */
static int load_fallback(sdl_font *f, uint32_t cp)
{
    FcPattern *pat = NULL;
    FcCharSet *cs = NULL;
    FcFontSet *set = NULL;
    FcResult res;
    int got = -1;

    for (int i = 0; i < f->n_no_face; i++)
        if (f->no_face[i] == cp)
            return -1;
    if (f->nfaces < MAX_FACES && (pat = FcNameParse((const FcChar8 *)"sans-serif")) &&
        (cs = FcCharSetCreate()) && FcCharSetAddChar(cs, cp) &&
        FcPatternAddCharSet(pat, FC_CHARSET, cs)) {
        FcConfigSubstitute(NULL, pat, FcMatchPattern);
        FcDefaultSubstitute(pat);
        set = FcFontSort(NULL, pat, FcTrue, NULL, &res);
        for (int i = 0; set && i < set->nfont && got < 0; i++)
            if (pattern_has_char(set->fonts[i], cp) && add_face(f, set->fonts[i], cp) == 0)
                got = f->nfaces - 1;
    }
    if (set)
        FcFontSetDestroy(set);
    if (cs)
        FcCharSetDestroy(cs);
    if (pat)
        FcPatternDestroy(pat);
    if (got < 0) {
        f->no_face[f->no_face_next] = cp;
        f->no_face_next = (f->no_face_next + 1) % NO_FACE_MEMO;
        if (f->n_no_face < NO_FACE_MEMO)
            f->n_no_face++;
    }
    return got;
}

/* Face for cp: the first that has it, else a newly loaded fallback, else -1. */
static int face_for(sdl_font *f, uint32_t cp)
{
    if (cp < 0x20 || cp == 0x7F)
        return 0; /* controls: not glyphs, never looked up */
    for (int i = 0; i < f->nfaces; i++)
        if (TTF_GlyphIsProvided32(f->faces[i].ttf, cp))
            return i;
    return load_fallback(f, cp);
}

/* ---- layout ---- */

static int grow(void **buf, size_t *cap, size_t need, size_t elem)
{
    void *p;
    size_t n = *cap ? *cap : 64;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    p = realloc(*buf, n * elem);
    if (!p)
        return -1;
    *buf = p;
    *cap = n;
    return 0;
}

/* Splits utf8 into runs of one face each, measured. Returns the number of
 * runs, or -1 on error; *w and *h get the size of the composed line. */
static int layout(sdl_font *f, const char *utf8, int *w, int *h)
{
    size_t len = strlen(utf8);
    size_t at = 0;
    int nruns = 0, width = 0, height = f->line_h;

    /* a byte becomes at most 3 (U+FFFD) plus a NUL if it starts a run */
    if (grow((void **)&f->scratch, &f->scratch_cap, 4 * len + 1, 1) ||
        grow((void **)&f->runs, &f->runs_cap, len + 1, sizeof(run)))
        return -1;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        i += attn_utf8_decode(utf8 + i, len - i, &cp);
        int fi = face_for(f, cp);
        if (fi < 0)
            fi = 0; /* nobody has it: the Latin face draws its box */
        if (nruns == 0 || f->runs[nruns - 1].face != fi) {
            if (nruns > 0)
                f->scratch[at++] = '\0';
            f->runs[nruns].face = fi;
            f->runs[nruns].start = at;
            nruns++;
        }
        at += attn_utf8_encode(cp, f->scratch + at);
    }
    if (nruns > 0)
        f->scratch[at] = '\0';
    for (int i = 0; i < nruns; i++) {
        run *r = &f->runs[i];
        TTF_Font *t = f->faces[r->face].ttf;
        if (TTF_SizeUTF8(t, f->scratch + r->start, &r->w, &r->h) != 0)
            r->w = r->h = 0;
        width += r->w;
        if (f->ascent - TTF_FontAscent(t) + r->h > height)
            height = f->ascent - TTF_FontAscent(t) + r->h;
    }
    *w = width;
    *h = height;
    return nruns;
}

/* Renders the runs of the last layout into one w x h texture. */
static SDL_Texture *compose(sdl_font *f, int nruns, int w, int h, SDL_Color color)
{
    SDL_Surface *line = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_ARGB8888);
    SDL_Texture *tex = NULL;
    int x = 0;

    if (!line)
        return NULL;
    SDL_FillRect(line, NULL, SDL_MapRGBA(line->format, color.r, color.g, color.b, 0));
    for (int i = 0; i < nruns; i++) {
        run *r = &f->runs[i];
        TTF_Font *t = f->faces[r->face].ttf;
        SDL_Surface *part;
        int y = f->ascent - TTF_FontAscent(t);
        SDL_Rect src = {0, 0, r->w, r->h}, dst = {x, y, r->w, r->h};

        if (r->w <= 0)
            continue;
        part = TTF_RenderUTF8_Blended(t, f->scratch + r->start, color);
        if (!part)
            goto out;
        if (y < 0) { /* a fallback face taller than the line: crop its top */
            src.y = -y;
            src.h = dst.h = r->h + y;
            dst.y = 0;
        }
        /* copy, not blend: the runs do not overlap and alpha must be kept */
        SDL_SetSurfaceBlendMode(part, SDL_BLENDMODE_NONE);
        SDL_BlitSurface(part, &src, line, &dst);
        SDL_FreeSurface(part);
        x += r->w;
    }
    tex = SDL_CreateTextureFromSurface(f->renderer, line);
    if (tex)
        SDL_SetTextureBlendMode(tex, SDL_BLENDMODE_BLEND);
out:
    SDL_FreeSurface(line);
    return tex;
}

/* ---- texture cache ---- */

static uint32_t hash_text(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int same_color(SDL_Color a, SDL_Color b)
{
    return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a;
}

static void cache_clear(sdl_font *f)
{
    if (!f->cache)
        return;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        cache_entry *e = &f->cache[i];
        if (e->text) {
            free(e->text);
            if (e->tex)
                SDL_DestroyTexture(e->tex);
        }
        memset(e, 0, sizeof *e);
    }
    f->cache_count = 0;
}

/* The entry for (text, color), or with any_color the first for text; else
 * the empty slot where it belongs (text == NULL), or NULL without a table. */
static cache_entry *cache_find(sdl_font *f, const char *text, uint32_t hash, SDL_Color color,
                               int any_color)
{
    if (!f->cache)
        return NULL;
    for (uint32_t i = hash & (CACHE_SLOTS - 1);; i = (i + 1) & (CACHE_SLOTS - 1)) {
        cache_entry *e = &f->cache[i];
        if (!e->text || (e->hash == hash && (any_color || same_color(e->color, color)) &&
                         strcmp(e->text, text) == 0))
            return e;
    }
}

/* ---- public ---- */

/* The Latin face: DejaVu Sans, or whatever sans-serif fontconfig has.
 * Returns 0, or -1 with the reason in err. */
static int add_latin_face(sdl_font *f, char *err, size_t errsize)
{
    FcPattern *p = match_name("DejaVu Sans");
    if (p)
        add_face(f, p, 'A');
    if (f->nfaces == 0) {
        if (p)
            FcPatternDestroy(p);
        p = match_name("sans-serif");
        if (!p) {
            snprintf(err, errsize, "no font: fontconfig found no face for 'sans-serif'"
                                   " (install fonts-dejavu-core)");
            return -1;
        }
        if (add_face(f, p, 0) != 0) {
            FcChar8 *file = NULL;
            FcPatternGetString(p, FC_FILE, 0, &file);
            snprintf(err, errsize, "no font: cannot open '%s' for 'sans-serif': %s",
                     file ? (const char *)file : "?", TTF_GetError());
            FcPatternDestroy(p);
            return -1;
        }
    }
    FcPatternDestroy(p);
    return 0;
}

/* The CJK face, if the match really covers Chinese (one that does not is
 * no error: glyph fallback then reports what is missing). */
static void add_cjk_face(sdl_font *f)
{
    FcPattern *p = match_name("sans-serif:lang=zh-cn");
    if (p && pattern_has_char(p, 0x4F60))
        add_face(f, p, 0x4F60);
    if (p)
        FcPatternDestroy(p);
}

/* What a failed sdl_font_open took given back: the font's faces and f (NULL:
 * none yet), fontconfig and SDL_ttf when acquired; err made one line. */
static void open_failed(sdl_font *f, int fc_ok, int ttf_ok, char *err)
{
    for (char *c = err; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    if (f) {
        for (int i = 0; i < f->nfaces; i++)
            close_face(&f->faces[i]);
        free(f);
    }
    if (fc_ok)
        fc_release();
    if (ttf_ok)
        ttf_release();
}

int sdl_font_open(SDL_Renderer *r, int px, sdl_font **out, char *err, size_t errsize)
{
    sdl_font *f = NULL;
    int ttf_ok = 0, fc_ok = 0;
    char dummy[1];

    if (!err || errsize == 0) {
        err = dummy;
        errsize = sizeof dummy;
    }
    err[0] = '\0';
    if (!out) {
        snprintf(err, errsize, "sdl_font_open: no output pointer");
        return -1;
    }
    *out = NULL;
    if (!r || px < 1 || px > MAX_PX) {
        snprintf(err, errsize, "no font: bad arguments (renderer %s, size %d px)",
                 r ? "set" : "missing", px);
        return -1;
    }
    if (ttf_acquire() != 0) {
        snprintf(err, errsize, "no font: TTF_Init failed: %s", TTF_GetError());
        goto fail;
    }
    ttf_ok = 1;
    if (fc_acquire() != 0) {
        snprintf(err, errsize, "no font: fontconfig could not load its configuration");
        goto fail;
    }
    fc_ok = 1;
    f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errsize, "no font: out of memory");
        goto fail;
    }
    f->renderer = r;
    f->px = px;
    if (add_latin_face(f, err, errsize) != 0)
        goto fail;
    add_cjk_face(f);

    f->nline = f->nfaces;
    update_metrics(f);
    *out = f;
    return 0;

fail:
    open_failed(f, fc_ok, ttf_ok, err);
    return -1;
}

void sdl_font_close(sdl_font *f)
{
    if (!f)
        return;
    cache_clear(f);
    free(f->cache);
    for (int i = 0; i < f->nfaces; i++)
        close_face(&f->faces[i]);
    free(f->scratch);
    free(f->runs);
    free(f);
    fc_release();
    ttf_release();
}

int sdl_font_set_size(sdl_font *f, int px)
{
    if (!f || px < 1 || px > MAX_PX)
        return -1;
    if (px == f->px)
        return 0;
    for (int i = 0; i < f->nfaces; i++) {
        if (TTF_SetFontSize(f->faces[i].ttf, px) != 0) {
            for (int j = 0; j < i; j++)
                TTF_SetFontSize(f->faces[j].ttf, f->px);
            return -1;
        }
    }
    f->px = px;
    update_metrics(f);
    cache_clear(f);
    return 0;
}

void sdl_font_set_bold(sdl_font *f, bool bold)
{
    if (!f || f->bold == bold) return;
    f->bold = bold;
    for (int i = 0; i < f->nfaces; i++) TTF_SetFontStyle(f->faces[i].ttf, bold ? TTF_STYLE_BOLD : TTF_STYLE_NORMAL);
    update_metrics(f);
    cache_clear(f);
}

int sdl_font_size(const sdl_font *f)
{
    return f ? f->px : 0;
}

int sdl_font_line_height(const sdl_font *f)
{
    return f ? f->line_h : 0;
}

void sdl_font_measure(sdl_font *f, const char *utf8, int *w, int *h)
{
    int mw = 0, mh = f ? f->line_h : 0;

    if (f && utf8 && *utf8) {
        cache_entry *e = cache_find(f, utf8, hash_text(utf8), (SDL_Color){0}, 1);
        if (e && e->text) {
            mw = e->w;
            mh = e->h;
        } else if (layout(f, utf8, &mw, &mh) < 0) {
            mw = 0;
            mh = f->line_h;
        }
    }
    if (w)
        *w = mw;
    if (h)
        *h = mh;
}

/* A text's texture, w × h, with its top-left at (x, y); turned: a quarter turn
 * counter-clockwise into the h × w box at (x, y), to read from bottom to top. */
static void put(sdl_font *f, SDL_Texture *tex, int x, int y, int w, int h, bool turned)
{
    if (!turned) {
        SDL_RenderCopy(f->renderer, tex, NULL, &(SDL_Rect){x, y, w, h});
        return;
    }
    int cx = x + h / 2, cy = y + w / 2; /* the box's centre, which the turn keeps */
    SDL_RenderCopyEx(f->renderer, tex, NULL, &(SDL_Rect){cx - w / 2, cy - h / 2, w, h}, -90.0, NULL, SDL_FLIP_NONE);
}

static int blit_text(sdl_font *f, const char *utf8, int x, int y, SDL_Color color, bool turned)
{
    uint32_t hash;
    cache_entry *e;
    int w, h, nruns;
    SDL_Texture *tex;

    if (!f || !utf8 || !*utf8)
        return 0;
    hash = hash_text(utf8);
    e = cache_find(f, utf8, hash, color, 0);
    if (e && e->text) {
        if (e->tex)
            put(f, e->tex, x, y, e->w, e->h, turned);
        return e->w;
    }
    nruns = layout(f, utf8, &w, &h);
    if (nruns < 0)
        return 0;
    if (w <= 0)
        return 0; /* only zero-width code points: nothing to draw */
    tex = compose(f, nruns, w, h, color);
    if (!tex)
        return 0;
    put(f, tex, x, y, w, h, turned);

    if (!f->cache && !(f->cache = calloc(CACHE_SLOTS, sizeof *f->cache)))
        goto uncached;
    if (f->cache_count >= ATTNLAB_SDL_FONT_CACHE_MAX)
        cache_clear(f); /* all gone at once: simple, and rare in practice */
    e = cache_find(f, utf8, hash, color, 0);
    if (!(e->text = malloc(strlen(utf8) + 1)))
        goto uncached;
    strcpy(e->text, utf8);
    e->hash = hash;
    e->color = color;
    e->tex = tex;
    e->w = w;
    e->h = h;
    f->cache_count++;
    return w;
uncached:
    SDL_DestroyTexture(tex);
    return w;
}

int sdl_font_draw(sdl_font *f, const char *utf8, int x, int y, SDL_Color color)
{
    return blit_text(f, utf8, x, y, color, false);
}

int sdl_font_draw_turned(sdl_font *f, const char *utf8, int x, int y, SDL_Color color)
{
    return blit_text(f, utf8, x, y, color, true);
}

int sdl_font_runs(sdl_font *f, const char *utf8, sdl_font_run_fn *fn, void *ctx)
{
    int w, h, n = layout(f, utf8, &w, &h);
    if (n < 0)
        return -1;
    for (int i = 0, x = 0; i < n; x += f->runs[i].w, i++) {
        const face *fc = &f->faces[f->runs[i].face];
        fn(ctx, fc->path, fc->index, f->scratch + f->runs[i].start, x, f->ascent);
    }
    return 0;
}

int sdl_font_missing_glyphs(sdl_font *f, const char *utf8)
{
    int missing = 0;

    if (!f || !utf8)
        return 0;
    for (size_t i = 0, len = strlen(utf8); i < len;) {
        uint32_t cp;
        i += attn_utf8_decode(utf8 + i, len - i, &cp);
        if (face_for(f, cp) < 0)
            missing++;
    }
    return missing;
}

const char *sdl_font_face_path(const sdl_font *f, int index)
{
    const char *slash;

    if (!f || index < 0 || index >= f->nfaces)
        return NULL;
    slash = strrchr(f->faces[index].path, '/');
    return slash ? slash + 1 : f->faces[index].path;
}

int sdl_font_face_count(const sdl_font *f)
{
    return f ? f->nfaces : 0;
}

int sdl_font_cache_count(const sdl_font *f)
{
    return f ? f->cache_count : 0;
}
