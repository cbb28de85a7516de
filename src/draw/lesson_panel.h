/* lesson_panel.h — drawing the lesson player (player.h): the panel beside the
 * visualizer, the lesson's marks on the heatmap, and the picker overlay. */
#ifndef UI_LESSON_PANEL_H
#define UI_LESSON_PANEL_H

#include "app.h"
#include "draw.h"

/* The step's title, prose, quizzes and navigation inside box. */
void ui_render_lesson(const ui_app *app, ui_draw *dl, ui_rect box);

/* The marks' colours: a cell quiz's picks are UI_ACCENT frames until checked,
 * then UI_GOOD (right) or UI_ERROR (wrong); "Show answer" frames the right
 * cells thinly in UI_WHITE; the step's highlight is UI_MARK, and the quiz's
 * region, when it is less than the picture, a UI_TEXT_DIM frame. */
#define UI_GOOD 0xFF81C784u
#define UI_MARK 0xFFFFD54Fu

/* On every heatmap of the single view and the grid that shows the step's
 * stage (in a model: the layer shown), wherever the picture is zoomed or
 * panned to: the step's highlight, and on the graded head the cell quiz's
 * region, picks, grades and answer. */
void ui_render_lesson_marks(const ui_app *app, ui_draw *dl);

/* The list of lessons with the student's progress, over the whole window. */
void ui_render_picker(const ui_app *app, ui_draw *dl);

#endif
