/* quiz.c — cell answers from a trace, and grading. */
#include "quiz.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const RULES[] = {"masked", "unmasked", "argmax", "argmin", "nan"};

const char *lesson_cell_rule_name(lesson_cell_rule r)
{
    return r >= 0 && r < LESSON_CELLS_COUNT ? RULES[r] : "?";
}

const attn_tensor *lesson_stage_tensor(const attn_trace *tr, const char *stage, int layer)
{
    const char *bare = stage;
    const attn_tensor *t = attn_trace_find(tr, stage);
    if (t) return t;
    attn_tensor_name_layer(stage, &bare);
    return attn_trace_get(tr, layer, bare);
}

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

void lesson_quiz_region(const lesson_quiz *q, int rows, int cols, int *r0, int *r1, int *c0, int *c1)
{
    *r0 = clamp(q->rows[0], 0, rows - 1);
    *r1 = q->rows[1] <= 0 ? rows - 1 : clamp(q->rows[1] - 1, *r0, rows - 1);
    *c0 = clamp(q->cols[0], 0, cols - 1);
    *c1 = q->cols[1] <= 0 ? cols - 1 : clamp(q->cols[1] - 1, *c0, cols - 1);
}

bool lesson_quiz_has_region(const lesson_quiz *q)
{
    return q->rows[1] > 0 || q->cols[1] > 0;
}

int lesson_quiz_cells(const lesson_quiz *q, const attn_trace *tr, const char *stage, int layer, int batch, int head,
                      unsigned char *out, int *rows, int *cols, char *why, size_t whysize)
{
    attn_matrix m, mask;
    const attn_tensor *t = lesson_stage_tensor(tr, stage, layer);
    if (attn_trace_matrix_of(tr, t, batch, head, &m)) {
        snprintf(why, whysize, "the trace has no stage %s", stage);
        return -1;
    }
    if (rows) *rows = m.rows;
    if (cols) *cols = m.cols;
    bool by_mask = q->rule == LESSON_CELLS_MASKED || q->rule == LESSON_CELLS_UNMASKED;
    if (by_mask) {
        if (!(t->info && (t->info->roles & ATTN_ROLE_QUERY_KEY))) {
            snprintf(why, whysize, "click = %s needs a query × key stage (scores, mask, masked_scores, weights), not %s",
                     RULES[q->rule], stage);
            return -1;
        }
        if (attn_trace_matrix_of(tr, attn_trace_stage(tr, t->layer, ATTN_STAGE_MASK), batch, head, &mask) ||
            mask.rows != m.rows || mask.cols != m.cols) {
            snprintf(why, whysize, "click = %s: the trace has no mask for %s", RULES[q->rule], stage);
            return -1;
        }
    }
    int n = 0, r0, r1, c0, c1;
    lesson_quiz_region(q, m.rows, m.cols, &r0, &r1, &c0, &c1);
    if (out) memset(out, 0, (size_t)m.rows * m.cols);
    for (int i = r0; i <= r1; i++) {
        const float *row = m.data + (size_t)i * m.cols;
        float best = NAN;
        if (q->rule == LESSON_CELLS_ARGMAX || q->rule == LESSON_CELLS_ARGMIN)
            for (int j = c0; j <= c1; j++) {
                float v = row[j];
                if (isnan(v)) continue;
                if (isnan(best) || (q->rule == LESSON_CELLS_ARGMAX ? v > best : v < best)) best = v;
            }
        bool row_has = false;
        for (int j = c0; j <= c1; j++) {
            bool right;
            switch (q->rule) {
            case LESSON_CELLS_MASKED: right = mask.data[(size_t)i * mask.cols + j] != 0.0f; break;
            case LESSON_CELLS_UNMASKED: right = mask.data[(size_t)i * mask.cols + j] == 0.0f; break;
            case LESSON_CELLS_NAN: right = isnan(row[j]); break;
            default: right = !isnan(best) && row[j] == best; break;
            }
            if (out) out[(size_t)i * m.cols + j] = right;
            if (right) {
                if (q->rule == LESSON_CELLS_ARGMAX || q->rule == LESSON_CELLS_ARGMIN) row_has = true;
                else n++;
            }
        }
        n += row_has;
    }
    return n;
}

lesson_grade lesson_grade_choice(const lesson_quiz *q, const bool *picked)
{
    lesson_grade g = {0};
    for (int i = 0; i < q->n_choices; i++) {
        if (picked[i] && q->correct[i]) g.n_right++;
        else if (picked[i]) g.n_wrong++;
        else if (q->correct[i]) g.n_missed++;
    }
    g.right = !g.n_wrong && !g.n_missed;
    return g;
}

/* Replaces "−" (U+2212) by '-' and drops spaces, so "− 1e9" reads. */
static void plain(const char *in, char *out, size_t size)
{
    size_t j = 0;
    for (size_t i = 0; in[i] && j + 1 < size; i++) {
        if (!strncmp(in + i, "\xE2\x88\x92", 3)) out[j++] = '-', i += 2;
        else if (in[i] != ' ' && in[i] != '\t') out[j++] = in[i];
    }
    out[j] = '\0';
}

static bool read_double(const char *s, const char **end, double *v)
{
    char *e;
    errno = 0;
    *v = strtod(s, &e);
    *end = e;
    return e != s && errno != ERANGE;
}

int lesson_grade_number(const lesson_quiz *q, const char *text, lesson_grade *g)
{
    char s[128];
    plain(text, s, sizeof s);
    const char *end;
    double v, den;
    if (!read_double(s, &end, &v)) return -1;
    if (*end == '/') {
        if (!read_double(end + 1, &end, &den) || den == 0.0) return -1;
        v /= den;
    } else if (*end == '%') {
        v /= 100.0;
        end++;
    }
    if (*end || !isfinite(v)) return -1;
    *g = (lesson_grade){0};
    g->right = fabs(v - q->answer) <= q->tolerance + 1e-12 * fmax(1.0, fabs(q->answer));
    if (g->right) g->n_right = 1;
    else g->n_wrong = 1;
    return 0;
}

lesson_grade lesson_grade_cells(const lesson_quiz *q, const unsigned char *answer, const unsigned char *picked,
                                int rows, int cols)
{
    lesson_grade g = {0};
    bool per_row = q->rule == LESSON_CELLS_ARGMAX || q->rule == LESSON_CELLS_ARGMIN;
    for (int i = 0; i < rows; i++) {
        int good = 0, has = 0;
        for (int j = 0; j < cols; j++) {
            size_t c = (size_t)i * cols + j;
            has += answer[c];
            if (!picked[c]) {
                if (!per_row && answer[c]) g.n_missed++;
                continue;
            }
            if (answer[c]) good++;
            else g.n_wrong++;
        }
        if (!per_row) {
            g.n_right += good;
            continue;
        }
        /* one pick per row, on one of the row's extremes */
        if (good > 1) g.n_wrong += good - 1;
        if (good) g.n_right++;
        else if (has) g.n_missed++;
    }
    g.right = !g.n_wrong && !g.n_missed;
    return g;
}
