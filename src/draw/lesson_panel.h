/* lesson_panel.h — drawing the lesson player (player.h): the panel beside the
 * visualizer, the lesson's marks on the heatmap, and the picker overlay. */
#ifndef DRAW_LESSON_PANEL_H
#define DRAW_LESSON_PANEL_H

#include "app.h"
#include "draw.h"

/* The step's title, prose, quizzes and navigation inside box. */
void draw_lesson(const app_state *app, draw_list *dl, app_rect box);

/* The marks' colours: a cell quiz's picks are DRAW_ACCENT frames until checked,
 * then DRAW_GOOD (right) or DRAW_ERROR (wrong); "Show answer" frames the right
 * cells thinly in DRAW_WHITE; the step's highlight is DRAW_MARK, and the quiz's
 * region, when it is less than the picture, a DRAW_TEXT_DIM frame. */
#define DRAW_GOOD 0xFF81C784u
#define DRAW_MARK 0xFFFFD54Fu

/* On every heatmap of the single view and the grid that shows the step's
 * stage (in a model: the layer shown), wherever the picture is zoomed or
 * panned to: the step's highlight, and on the graded head the cell quiz's
 * region, picks, grades and answer. */
void draw_lesson_marks(const app_state *app, draw_list *dl);

/* The list of lessons with the student's progress, over the whole window. */
void draw_picker(const app_state *app, draw_list *dl);

#endif
