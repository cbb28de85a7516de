/* text_strip.c — the text strip of a trained model (text_strip.h).
 *
 * The text is cut into one piece per token, each the part of the text the
 * token adds: decode(ids[0 .. i]) minus decode(ids[0 .. i−1]). That is the
 * tokenizer's own decoding, so Chinese reads as characters and brown's words
 * get their spaces; a tokenizer whose decoding of a prefix is not the start of
 * the next (a byte-level token ending inside a character) shows the token's
 * label there. BOS and EOS show as their labels, dim. The pieces flow into
 * lines; a line never starts with closing punctuation (it hangs at the end of
 * the line before). */
#include "text_strip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/base/utf8.h"
#include "engine/model/model_run.h"
#include "engine/tokenizer/tokenizer.h"
#include "i18n.h"

enum { PREFIX_DECODE_MAX = 512 }; /* a longer text shows its tokens' labels: decoding every prefix costs n² */

typedef enum {
    PIECE_TEXT, /* what a token adds to the text */
    PIECE_MARK, /* BOS or EOS: its label */
    PIECE_NEXT, /* the token still to be written: "?" */
    PIECE_NOTE  /* "end of text" after an EOS */
} piece_kind;

typedef struct {
    size_t off;      /* its text in the list's buffer */
    int token;       /* its index in the row, -1: none */
    piece_kind kind;
    int x, line, w, lead; /* where it goes; lead: the width of its leading spaces */
} piece;

typedef struct {
    piece *p;
    int n, cap;
    char *buf;
    size_t len, size;
    bool failed;
} piece_list;

static void add(piece_list *l, const char *s, int token, piece_kind kind)
{
    size_t n = strlen(s);
    if (l->failed) return;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        piece *p = realloc(l->p, (size_t)cap * sizeof *p);
        if (!p) { l->failed = true; return; }
        l->p = p;
        l->cap = cap;
    }
    if (l->len + n + 1 > l->size) {
        size_t size = 2 * (l->size + n + 1);
        char *b = realloc(l->buf, size);
        if (!b) { l->failed = true; return; }
        l->buf = b;
        l->size = size;
    }
    memcpy(l->buf + l->len, s, n + 1);
    l->p[l->n++] = (piece){.off = l->len, .token = token, .kind = kind};
    l->len += n + 1;
}

/* Row r of the text the settings hold (the whole text, in decode mode too),
 * without pads; NULL when it cannot be read. Caller frees. */
static int *row_ids(const app_state *app, int r, int *n)
{
    attn_tokens tk;
    int *ids, *out = NULL;
    attn_error err;
    *n = 0;
    if (attn_model_tokenize(app->model, &app->cfg, &tk, &ids, &err)) return NULL;
    if (r < 0 || r >= tk.rows) r = 0;
    if ((out = malloc((size_t)(tk.len + 1) * sizeof *out)))
        for (int p = 0; p < tk.len; p++)
            if (ids[(size_t)r * tk.len + p] >= 0) out[(*n)++] = ids[(size_t)r * tk.len + p];
    attn_tokens_free(&tk);
    free(ids);
    return out;
}

/* The index in batch row b (pads not counted) of the token whose query row
 * is shown: decode mode's one new row, else the selected or last row; -1 on a pad. */
static int query_index(const app_state *app, int b)
{
    const attn_trace *tr = &app->trace;
    int pos = tr->dims.P + app_query_row(app), k = 0;
    if (pos < 0 || pos >= tr->tokens.len || attn_tokens_is_pad(&tr->tokens, b, pos)) return -1;
    for (int p = 0; p < pos; p++) k += !attn_tokens_is_pad(&tr->tokens, b, p);
    return k;
}

/* One piece per token of ids, then the end-of-text note after an EOS, else
 * "?" for the token still to come when the query is the last (q: its index). */
static void make_pieces(const attn_model *m, const int *ids, int n, int q, piece_list *l)
{
    int bos = attn_tokenizer_bos(m->tok), eos = m->cfg.eos;
    int *kept = malloc((size_t)(n + 1) * sizeof *kept), k = 0;
    char *prev = NULL, label[96];
    attn_error err;
    if (!kept) { l->failed = true; return; }
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        if (id == bos || id == m->cfg.bos || id == eos) {
            add(l, attn_tokenizer_label(m->tok, id, label, sizeof label), i, PIECE_MARK);
            continue;
        }
        kept[k++] = id;
        char *cur = NULL;
        size_t was = prev ? strlen(prev) : 0;
        if (n <= PREFIX_DECODE_MAX && attn_tokenizer_decode(m->tok, kept, k, false, &cur, &err)) cur = NULL;
        if (cur && (!prev || !strncmp(cur, prev, was)) && cur[was]) {
            add(l, cur + was, i, PIECE_TEXT);
        } else { /* no decoding of its own: its label, a space apart from a word before it */
            char spaced[100];
            snprintf(spaced, sizeof spaced, "%s%s", k > 1 && n > PREFIX_DECODE_MAX ? " " : "",
                     attn_tokenizer_label(m->tok, id, label, sizeof label));
            add(l, spaced, i, PIECE_TEXT);
        }
        if (cur) {
            free(prev);
            prev = cur;
        }
    }
    free(prev);
    free(kept);
    if (n > 0 && ids[n - 1] == eos) {
        char note[160];
        attn_tokenizer_label(m->tok, eos, label, sizeof label);
        if (q == n - 1) /* TRANSLATORS: after the model's end-of-text token (%s: its label, </s>), at the last step */
            snprintf(note, sizeof note, _("end of text (%s) · ] twice starts the next one"), label);
        else /* TRANSLATORS: after the model's end-of-text token (%s: its label, </s>) */
            snprintf(note, sizeof note, _("end of text (%s)"), label);
        add(l, note, -1, PIECE_NOTE);
    } else if (q == n - 1) {
        add(l, "?", n, PIECE_NEXT);
    }
}

/* Places the pieces in lines from x0 to right; returns the number of lines. */
static int flow(draw_list *dl, piece_list *l, int x0, int right)
{
    int u = draw_line_h(dl), x = x0, line = 0;
    for (int i = 0; i < l->n; i++) {
        piece *p = &l->p[i];
        const char *s = l->buf + p->off;
        int pad = p->kind == PIECE_MARK || p->kind == PIECE_NEXT ? u / 3 : 0;
        p->w = draw_text_w(dl, s) + 2 * pad;
        if (p->kind == PIECE_NOTE) p->w += u; /* set apart from the text */
        if (x > x0 && x + p->w > right) {
            uint32_t cp = 0;
            attn_utf8_decode(s, strlen(s), &cp);
            bool hang = p->kind == PIECE_TEXT && attn_utf8_is_closing(cp) && x + p->w <= right + u / 2;
            if (!hang) {
                line++;
                x = x0;
                while (p->kind == PIECE_TEXT && s[0] == ' ' && s[1]) { /* a line starts with the word, not its space */
                    p->off++;
                    s++;
                }
                p->w = draw_text_w(dl, s) + 2 * pad + (p->kind == PIECE_NOTE ? u : 0);
            }
        }
        size_t sp = strspn(s, " ");
        if (p->kind == PIECE_TEXT && sp && s[sp]) {
            char lead[64];
            snprintf(lead, sizeof lead, "%.*s", (int)(sp < sizeof lead - 1 ? sp : sizeof lead - 1), s);
            p->lead = draw_text_w(dl, lead);
        }
        p->x = x;
        p->line = line;
        x += p->w;
    }
    return line + 1;
}

/* The title line: what the strip is, and its legend, as far as it fits. */
static void title(draw_list *dl, int x, int y, int right, bool written, int first, int shown, int lines)
{
    int u = draw_line_h(dl), s = u * 3 / 4;
    char buf[160];
    if (shown < lines)
        /* TRANSLATORS: the text strip's title when the text has more lines than it shows */
        snprintf(buf, sizeof buf, _("text, lines %d–%d of %d"), first + 1, first + shown, lines);
    else
        /* TRANSLATORS: the title of the strip that shows a model's text in full */
        snprintf(buf, sizeof buf, "%s", _("text"));
    x += draw_text(dl, buf, x, y, DRAW_TEXT_DIM) + u;
    /* TRANSLATORS: the text strip's legend: the token of the query row shown, and the token that follows it in the text (what the row should predict) */
    const char *query = _("the query row shown"), *next = _("the token that comes next"), *gen = _("written by ]");
    int need = s + u / 4 + draw_text_w(dl, query) + u;
    if (x + need > right) return;
    draw_fill(dl, x, y + (u - s) / 2, s, s, DRAW_ACCENT);
    x += s + u / 4;
    x += draw_text(dl, query, x, y, DRAW_TEXT_DIM) + u;
    if (x + s + u / 4 + draw_text_w(dl, next) > right) return;
    draw_outline(dl, x, y + (u - s) / 2, s, s, 2, DRAW_WHITE);
    x += s + u / 4;
    x += draw_text(dl, next, x, y, DRAW_TEXT_DIM) + u;
    if (written && x + draw_text_w(dl, gen) <= right) draw_text(dl, gen, x, y, DRAW_ACCENT);
}

/* The strip in box: drawn when draw, else only measured. Returns its height,
 * margin included. compact (presenting, the picture first): no title line,
 * the text at the interface's size. */
static int strip(draw_list *dl, const app_state *app, app_rect box, bool draw, bool compact)
{
    const attn_trace *tr = &app->trace;
    if (!app->model || !attn_trace_is_model(tr) || app->from_file || tr->dims.cross) return 0;
    if (!app_decoding(app) && app->view.mode != LESSON_VIEW_COMPARE) return 0;
    int u = draw_line_h(dl), lh = u + u / 3, b = app->view.batch < tr->dims.b ? app->view.batch : 0, n;
    int *ids = row_ids(app, b, &n);
    if (!ids || n == 0) {
        free(ids);
        return 0;
    }
    piece_list l = {0};
    int q = query_index(app, b), prompt = b == 0 ? app_prompt_len(app) : -1;
    make_pieces(app->model, ids, n, q, &l);
    free(ids);
    int x0 = box.x + u / 2, right = box.x + box.w - u / 2, h = 0, frame_px = dl->px, text_px = frame_px;
    if (l.failed || right - x0 < 4 * u) goto out;
    /* the text large enough to read from the back of a class: half as large
     * again as the interface where it stays within a quarter of the box */
    int lines = 1;
    for (int k = compact ? 2 : 0; k < 3; k++) {
        dl->px = text_px = (int)lroundf(frame_px * (k == 0 ? 1.5f : k == 1 ? 1.25f : 1.0f));
        lines = flow(dl, &l, x0, right);
        if (k == 2 || u + lines * (draw_line_h(dl) + draw_line_h(dl) / 3) <= box.h / 4) break;
    }
    int tu = draw_line_h(dl);
    dl->px = frame_px;
    lh = tu + tu / 3;
    /* at most a third of the box; a longer text shows the lines of the query and its next token */
    int head = compact ? 0 : u + u / 4; /* the title line */
    int fits = draw_imax(1, (box.h / 3 - head - u / 4) / lh), shown = draw_imin(lines, fits), first = 0;
    if (shown < lines) { /* the query's line and its next token's, the query's first if only one fits */
        int lo = lines - 1, hi = -1;
        for (int i = 0; i < l.n; i++) {
            if (q >= 0 && l.p[i].token == q) lo = l.p[i].line;
            if (q >= 0 && l.p[i].token == q + 1) hi = l.p[i].line;
        }
        if (hi < lo) hi = lo;
        first = draw_imin(lo, draw_imax(0, draw_imin(hi - shown + 1, lines - shown)));
    }
    h = u / 4 + head + shown * lh + tu / 4;
    if (!draw) {
        h += u / 2;
        goto out;
    }
    draw_fill(dl, box.x, box.y, box.w, h, DRAW_PANEL);
    if (!compact) title(dl, x0, box.y + u / 4, right, prompt >= 0 && prompt < n, first, shown, lines);
    int top = box.y + u / 4 + head;
    dl->px = text_px;
    u = tu;
    for (int i = 0; i < l.n; i++) {
        const piece *p = &l.p[i];
        if (p->line < first || p->line >= first + shown) continue;
        const char *s = l.buf + p->off;
        int x = p->x, y = top + (p->line - first) * lh, ty = y + (lh - u) / 2;
        bool is_query = p->token >= 0 && p->token == q, is_next = q >= 0 && p->token == q + 1;
        uint32_t colour = p->kind == PIECE_MARK || p->kind == PIECE_NEXT ? DRAW_TEXT_DIM
                          : p->kind == PIECE_NOTE ? DRAW_WHITE
                          : prompt >= 0 && p->token >= prompt ? DRAW_ACCENT : DRAW_TEXT;
        if (is_query) {
            draw_fill(dl, x + p->lead, y + 1, p->w - p->lead, lh - 2, DRAW_ACCENT);
            colour = DRAW_BLACK;
        }
        if (is_next) draw_outline(dl, x + p->lead, y + 1, p->w - p->lead, lh - 2, 2, DRAW_WHITE);
        int pad = p->kind == PIECE_MARK || p->kind == PIECE_NEXT ? u / 3 : p->kind == PIECE_NOTE ? u : 0;
        if (p->kind == PIECE_NOTE) draw_text_fit(dl, s, x + pad, ty, right - x - pad, colour);
        else draw_text(dl, s, x + pad, ty, colour);
    }
    dl->px = frame_px;
    h += draw_line_h(dl) / 2;
out:
    free(l.p);
    free(l.buf);
    return h;
}

int draw_text_strip(draw_list *dl, const app_state *app, app_rect box, bool compact)
{
    return strip(dl, app, box, true, compact);
}

int draw_text_strip_height(draw_list *dl, const app_state *app, app_rect box, bool compact)
{
    return strip(dl, app, box, false, compact);
}
