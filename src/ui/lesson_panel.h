/* lesson_panel.h — drawing the lesson player (player.h): the panel beside the
 * visualizer, the lesson's marks on the heatmap, and the picker overlay. */
#ifndef UI_LESSON_PANEL_H
#define UI_LESSON_PANEL_H

#include "app.h"
#include "draw.h"

/* The step's title, prose, quizzes and navigation inside box. */
void ui_render_lesson(const ui_app *app, ui_draw *dl, ui_rect box);

/* On the single view's heatmap: the step's highlight and the cell quiz's picks. */
void ui_render_lesson_marks(const ui_app *app, ui_draw *dl);

/* The list of lessons with the student's progress, over the whole window. */
void ui_render_picker(const ui_app *app, ui_draw *dl);

#endif
