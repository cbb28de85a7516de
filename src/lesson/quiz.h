/* quiz.h — right answers and grading. No SDL.
 *
 * A cell quiz's answer is not stored in the lesson: it is computed from the
 * live trace, for the batch row and head on screen, every time it is graded.
 * A student who toggles the mask or switches head is graded against what
 * they now see. */
#ifndef LESSON_QUIZ_H
#define LESSON_QUIZ_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/trace/trace.h"
#include "lesson.h"

typedef struct {
    bool right;
    int n_right;  /* choices / cells (argmax: rows) picked that are right */
    int n_wrong;  /* picked but wrong */
    int n_missed; /* right but not picked */
} lesson_grade;

/* "masked", "argmax", ... */
const char *lesson_cell_rule_name(lesson_cell_rule r);

/* The tensor a lesson's `stage` names in tr: the stage itself
 * ("layers.2.weights"), else the stage of layer `layer` ("weights" of the layer
 * shown); NULL if tr has neither. */
const attn_tensor *lesson_stage_tensor(const attn_trace *tr, const char *stage, int layer);

/* A cell quiz's region on a rows × cols picture: its first and last row and
 * column (both included), kept inside the picture. The whole picture when the
 * quiz names no region. */
void lesson_quiz_region(const lesson_quiz *q, int rows, int cols, int *r0, int *r1, int *c0, int *c1);

/* Whether the cell quiz names a region smaller than the whole picture. */
bool lesson_quiz_has_region(const lesson_quiz *q);

/* Right cells of a cell quiz on the (stage, batch, head) picture of tr (a
 * stage named without its layer is layer `layer`'s): if out
 * is not NULL, out[i·cols + j] = 1 for a right cell (argmax/argmin: every
 * cell that ties for the row's extreme). *rows and *cols receive the picture's
 * size (may be NULL). Only cells inside the quiz's region (rows, cols) can
 * be right, and argmax/argmin look at the region's columns of a row: the
 * region is the picture the question is about. Returns the number of right
 * cells (argmax/argmin: rows
 * that have an answer), or -1 with a reason in why (no such stage, or a
 * masked/unmasked rule on a stage that is not a query × key matrix). out, if
 * given, has room for rows·cols bytes: call once with out = NULL for the size. */
int lesson_quiz_cells(const lesson_quiz *q, const attn_trace *tr, const char *stage, int layer, int batch, int head,
                      unsigned char *out, int *rows, int *cols, char *why, size_t whysize);

lesson_grade lesson_grade_choice(const lesson_quiz *q, const bool *picked);

/* Reads a number typed by a student ("0.25", "1/4", "25%", "−1e9"); returns
 * -1 if text is not one. */
int lesson_grade_number(const lesson_quiz *q, const char *text, lesson_grade *g);

/* picked and answer are rows·cols bytes (0/1), answer from lesson_quiz_cells. */
lesson_grade lesson_grade_cells(const lesson_quiz *q, const unsigned char *answer, const unsigned char *picked,
                                int rows, int cols);

#endif
