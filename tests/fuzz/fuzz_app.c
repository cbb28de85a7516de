/* fuzz_app.c — libFuzzer target: the window's app core over a trace another
 * program wrote. The input makes a trace file, opens it as `attnlab view FILE`
 * does (app_init_file), then replays keys, text, clicks, drags, the wheel
 * and resizes through the app's input calls, drawing each frame into a
 * command list (no SDL) and painting its heatmaps as a backend would. Any
 * stage may be missing and any size 0: nothing may crash, read out of
 * bounds (a heatmap only inside a tensor), divide by zero, leak, or place
 * a command a million pixels away.
 *
 * The input: byte 0 chooses the trace.
 *   odd:  a raw file: bytes 1-2 its length N (little-endian), then N bytes
 *         (a safetensors header and data, as in tests/fuzz/app_corpus);
 *   even: a generated one: sizes b h g s t P d k f V (each 0..7), a layer
 *         count, which stages it has (one bit each), metadata switches and
 *         a value pattern (zeros, ±∞, NaN, ...), shapes per the contract.
 * The rest of the input is the event sequence (replay()). */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "draw.h"
#include "engine/formats/safetensors.h"
#include "engine/trace/stages.h"
#include "heatmap.h"
#include "keys.h"
#include "paint.h"
#include "render.h"

typedef struct {
    const uint8_t *p;
    size_t n;
} reader;

static unsigned byte(reader *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

static char g_dir[256], g_path[300];

/* Text metrics without a font: every byte half the size wide, lines 5/4 apart. */
static int fake_width(void *ctx, const char *s, int px)
{
    (void)ctx;
    return (int)strlen(s) * (px / 2);
}

static int fake_line(void *ctx, int px)
{
    (void)ctx;
    return px + px / 4;
}

static void cleanup(void)
{
    remove(g_path);
    rmdir(g_dir); /* left when something else was written there */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    /* a folder of its own: no shipped model or lesson is read, no progress
     * of the user's is written (the picker's reset asks twice, a fuzzer may too) */
    /* in memory where there is a tmpfs: attn_st_write syncs the file it writes, each run */
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(g_dir, sizeof g_dir, "%s/attnlab-fuzz-app-XXXXXX", tmp);
    if (!mkdtemp(g_dir)) abort();
    setenv("ATTNLAB_MODELS", g_dir, 1);
    setenv("ATTNLAB_LESSONS", g_dir, 1);
    setenv("XDG_STATE_HOME", g_dir, 1);
    setenv("HOME", g_dir, 1);
    snprintf(g_path, sizeof g_path, "%s/trace.safetensors", g_dir);
    atexit(cleanup);
    return 0;
}

/* ---- the generated trace ---- */

/* what a cell may hold: ordinary numbers, sizes past an int's pixels, the ends of float */
static const float VALUES[] = {0.0f, 1.0f, -1.0f, 0.25f, 1e-30f, 3e38f, -3e38f, INFINITY, -INFINITY, NAN, 1e7f, -1e9f};
enum { N_VALUES = sizeof VALUES / sizeof VALUES[0] };

static int write_generated(reader *r)
{
    attn_dims d = {0};
    int *slot[] = {&d.b, &d.h, &d.g, &d.s, &d.t, &d.P, &d.d, &d.k, &d.f, &d.V};
    for (size_t i = 0; i < sizeof slot / sizeof slot[0]; i++) *slot[i] = (int)(byte(r) % 8);
    unsigned flags = byte(r), layers = 1 + byte(r) % 3, pattern = byte(r);
    d.cross = flags & 1;
    if (flags & 2) { /* sizes that agree with each other, as attnlab writes them */
        if (d.h && d.g && d.h % d.g) d.g = 1;
        if (!d.cross) d.t = d.P + d.s;
    }
    d.n = d.cross ? d.t : d.s;
    uint64_t have = 0;
    for (int i = 0; i < 6; i++) have |= (uint64_t)byte(r) << (8 * i);
    int n_stages;
    const attn_stage_info *st = attn_stages(&n_stages);
    attn_st_tensor ts[ATTN_STAGE_COUNT * 3];
    int64_t shapes[ATTN_STAGE_COUNT * 3][ATTN_MAX_NDIM];
    char names[ATTN_STAGE_COUNT * 3][64];
    float *data[ATTN_STAGE_COUNT * 3];
    int n = 0, rc = -1;
    for (int i = 0; i < n_stages; i++) {
        if (!(have >> i & 1)) continue;
        for (unsigned l = 0; l < (st[i].model_level ? 1 : layers); l++) {
            int nd = attn_stage_shape(&st[i], &d, shapes[n]);
            size_t count = 1;
            for (int j = 0; j < nd; j++) count *= (size_t)shapes[n][j];
            if (layers > 1 && !st[i].model_level) snprintf(names[n], sizeof names[n], "layers.%u.%s", l, st[i].name);
            else snprintf(names[n], sizeof names[n], "%s", st[i].name);
            data[n] = malloc((count ? count : 1) * sizeof(float));
            if (!data[n]) goto out;
            /* the pattern: one value (pattern / 8) with every (pattern % 8)-th cell another, or all mixed */
            unsigned every = pattern % 8, first = pattern / 8 % N_VALUES;
            for (size_t c = 0; c < count; c++)
                data[n][c] = VALUES[every == 0 ? (c * 7 + first) % N_VALUES : c % every ? first : (c + (size_t)i) % N_VALUES];
            ts[n] = (attn_st_tensor){names[n], nd, shapes[n], data[n]};
            n++;
        }
    }
    /* metadata: what attnlab writes, some of it */
    const char *meta[32];
    int nm = 0;
    char layers_s[8], tokens[2048], lengths[64], ids[1024];
    if (flags & 4) meta[nm++] = "format", meta[nm++] = "attnlab-trace/1";
    if (flags & 8) snprintf(layers_s, sizeof layers_s, "%u", layers), meta[nm++] = "layers", meta[nm++] = layers_s;
    if (flags & 16) meta[nm++] = "attention", meta[nm++] = d.cross ? "cross" : "self";
    if (flags & 32) meta[nm++] = "causal", meta[nm++] = "true";
    if (flags & 64) meta[nm++] = "rope", meta[nm++] = "true";
    if (flags & 128) { /* tokens for every row of L positions; odd rows one short (a pad); a model's ids */
        static const char *const TOK[] = {"a", "bb", "中", "<pad>", "|", "\\", "é", " "};
        int L = d.cross ? d.s + d.P : (d.t ? d.t : d.s + d.P);
        bool pads = pattern & 128;
        size_t o = 1, oi = 1, ol = 1;
        strcpy(tokens, "["), strcpy(ids, "["), strcpy(lengths, "[");
        for (int b = 0; b < d.b; b++) {
            int len = pads && b % 2 && L ? L - 1 : L;
            o += (size_t)snprintf(tokens + o, sizeof tokens - o, "%s[", b ? "," : "");
            oi += (size_t)snprintf(ids + oi, sizeof ids - oi, "%s[", b ? "," : "");
            ol += (size_t)snprintf(lengths + ol, sizeof lengths - ol, "%s%d", b ? "," : "", len);
            for (int p = 0; p < L; p++) {
                const char *t = p >= len ? "<pad>" : TOK[(pattern + (unsigned)p + (unsigned)b) % 8];
                o += (size_t)snprintf(tokens + o, sizeof tokens - o, "%s\"%s\"", p ? "," : "", t);
                if (d.V && p < len) oi += (size_t)snprintf(ids + oi, sizeof ids - oi, "%s%d", p ? "," : "", (p + b) % d.V);
            }
            o += (size_t)snprintf(tokens + o, sizeof tokens - o, "]");
            oi += (size_t)snprintf(ids + oi, sizeof ids - oi, "]");
        }
        snprintf(tokens + o, sizeof tokens - o, "]");
        snprintf(ids + oi, sizeof ids - oi, "]");
        snprintf(lengths + ol, sizeof lengths - ol, "]");
        meta[nm++] = "tokens", meta[nm++] = tokens;
        if (pads) meta[nm++] = "lengths", meta[nm++] = lengths;
        if (d.V) meta[nm++] = "token_ids", meta[nm++] = ids;
    }
    attn_error err;
    rc = attn_st_write(g_path, ts, n, meta, nm / 2, &err) ? -1 : 0;
out:
    for (int i = 0; i < n; i++) free(data[i]);
    return rc;
}

static int write_raw(reader *r)
{
    size_t len = byte(r);
    len |= (size_t)byte(r) << 8;
    if (len > r->n) len = r->n;
    FILE *f = fopen(g_path, "wb");
    if (!f) return -1;
    size_t put = fwrite(r->p, 1, len, f);
    r->p += len, r->n -= len;
    return fclose(f) || put != len ? -1 : 0;
}

/* ---- the events ---- */

/* A key: a printable byte is its character (every binding is one, and the
 * editor's text), the others the special keys. */
static int key_of(unsigned b)
{
    static const int SPECIAL[] = {APP_KEY_LEFT, APP_KEY_RIGHT, APP_KEY_UP, APP_KEY_DOWN, APP_KEY_HOME, APP_KEY_END,
                                  APP_KEY_PAGEUP, APP_KEY_PAGEDOWN, APP_KEY_F1, APP_KEY_F5, APP_KEY_RETURN,
                                  APP_KEY_ESCAPE, APP_KEY_BACKSPACE, APP_KEY_DELETE, APP_KEY_TAB, APP_KEY_SPACE};
    if (b > ' ' && b < 127) return (int)b;
    return SPECIAL[b % (sizeof SPECIAL / sizeof SPECIAL[0])];
}

static const char *const TEXTS[] = {"a", " ", "|", "\\", "中文", "x y | z", "", "\\\\", "<pad>", "é"};

static volatile uint32_t sink;

/* Whether n floats from p, `stride` apart along rows and columns, lie inside
 * one tensor of tr. */
static bool in_trace(const attn_trace *tr, const float *first, const float *last)
{
    for (int i = 0; tr && i < tr->n_tensors; i++) {
        const attn_tensor *t = &tr->tensors[i];
        if (t->count && first >= t->data && last < t->data + t->count) return true;
    }
    return false;
}

/* Every cell a heatmap command would paint lies in a tensor of the traces
 * shown, or in the frame's own floats (a difference), or it is the one-cell
 * NaN legend: a slice past its tensor (a size 0 axis) reads another's data
 * or past the mapping, which no sanitizer sees in a mapped file. */
static void check_slice(const app_state *app, const draw_list *dl, const float *data, int rows, int cols,
                        ptrdiff_t rs, ptrdiff_t cs)
{
    if (rows <= 0 || cols <= 0) return;
    if (rs < 0 || cs < 0) abort();
    const float *first = data, *last = data + (rows - 1) * rs + (cols - 1) * cs;
    if (in_trace(&app->trace, first, last) || (app->has_alt && in_trace(&app->alt, first, last))) return;
    for (int k = 0; k < dl->floats_used; k++)
        if (first >= dl->floats[k] && last < dl->floats[k] + dl->floats_len[k]) return;
    if (rows == 1 && cols == 1 && isnan(*first)) return;
    fprintf(stderr, "fuzz_app: a %d x %d heatmap reads outside every tensor\n", rows, cols);
    abort();
}

/* A frame as the window draws one, and its heatmaps painted as a backend does. */
static void frame(app_state *app, draw_list *dl, int w, int h, uint32_t *px)
{
    draw_frame(app, dl, &app->layout, w, h);
    draw_commit(app, &app->layout);
    for (const draw_cmd *c = NULL; (c = draw_list_next(dl, c));) {
        /* a command a million pixels away is a size computed from a number out of range */
        if (abs(c->r.x) > 1000000 || abs(c->r.y) > 1000000 || abs(c->r.w) > 1000000 || abs(c->r.h) > 1000000) {
            fprintf(stderr, "fuzz_app: a command at (%d, %d) %d x %d\n", c->r.x, c->r.y, c->r.w, c->r.h);
            abort();
        }
        if (c->kind == DRAW_CMD_TEXT) sink += (uint32_t)strlen(draw_cmd_text(dl, c));
        if (c->kind != DRAW_CMD_HEATMAP) continue;
        const app_slice *sl = &c->heat.slice;
        check_slice(app, dl, sl->data, sl->rows, sl->cols, sl->row_stride, sl->col_stride);
        if (sl->mask) check_slice(app, dl, sl->mask, sl->rows, sl->cols, sl->mask_row_stride, sl->mask_col_stride);
        int pw = c->r.w < 64 ? c->r.w : 64, ph = c->r.h < 64 ? c->r.h : 64;
        paint_heatmap(&c->heat.slice, &c->heat.scale, px, 64, pw, ph, c->heat.gap);
        sink += px[0];
    }
}

static void replay(app_state *app, reader *r)
{
    draw_list dl;
    static uint32_t px[64 * 64];
    int w = 1280, h = 800;
    draw_list_init(&dl, (draw_text_measure){NULL, fake_width, fake_line, NULL});
    frame(app, &dl, w, h, px);
    for (int ev = 0; r->n && ev < 48 && !app->req.quit; ev++) {
        unsigned op = byte(r), a = byte(r), c = byte(r);
        int x = (int)a * w / 256, y = (int)c * h / 256;
        switch (op % 12) {
        case 0: case 1: case 2: case 3: app_key(app, key_of(a), (int)(op >> 4) & 7); break;
        case 4: app_text(app, TEXTS[a % 10]); break;
        case 5: app_mouse_move(app, x, y); break;
        case 6: app_mouse_down(app, x, y); app_mouse_up(app); break;
        case 7: /* a drag, from (x, y) to the next point */
            app_mouse_down(app, x, y);
            app_mouse_drag(app, (int)(byte(r) * w / 256), (int)(byte(r) * h / 256));
            app_mouse_up(app);
            break;
        case 8: app_wheel(app, (int)(a % 7) - 3); break;
        case 9: /* a resize: very small windows too */
            w = 1 + (int)a * 10, h = 1 + (int)c * 6;
            app_exposed(app);
            break;
        case 10: app_mouse_leave(app); break;
        default: app_compose(app, TEXTS[a % 10]); break;
        }
        /* what the window loop does with the app's requests */
        if (app->req.paste) app_paste(app, TEXTS[op % 10]);
        app->req.save = false;
        app_poll(app);
        if (app->dirty) frame(app, &dl, w, h, px);
    }
    draw_list_free(&dl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    if (!size) return 0;
    if ((byte(&r) & 1 ? write_raw(&r) : write_generated(&r))) return 0;
    app_state *app = calloc(1, sizeof *app);
    char err[700];
    if (!app) return 0;
    if (app_init_file(app, g_path, err, sizeof err) == 0) {
        replay(app, &r);
        app_free(app);
    } else if (!err[0] || strchr(err, '\n')) {
        abort(); /* refused: in one line that says why */
    }
    free(app);
    return 0;
}
