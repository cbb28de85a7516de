/* source.h — where a lesson's quoted figure was measured. No SDL.
 *
 * A measure names its source with on= (lessons/README.md): the held-out text,
 * the training text, rows of random tokens (the induction test), no text at
 * all (the model's settings and sizes), or the step's own text on screen. The
 * table is lessons/sources.tsv, compiled in: which card keys come from which
 * source, and the words that name a source in a lesson's sentence, in English
 * and in Chinese. A figure whose on= is not its key's source, or whose
 * sentence does not name it, is refused by `attnlab lesson --check` at its
 * line: "the small plot says 0.39, measured on the training text" of a
 * held-out series cannot pass. */
#ifndef LESSON_SOURCE_H
#define LESSON_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

/* The source card key `key` comes from ("heldout", "training", "random",
 * "model"), or NULL for a key in no row of the table. */
const char *lesson_source_of_key(const char *key);

/* Whether `on` is one of the table's sources. */
bool lesson_source_known(const char *on);

/* "heldout, training, random, model, text" into buf; returns buf. */
const char *lesson_source_names(char *buf, size_t size);

/* "en" for a lesson in a folder named en, "zh" in one named zh, else NULL
 * (either language's words will do). */
const char *lesson_source_lang(const char *path);

/* A figure measured on source `on` (lesson_measure_source), written `spec`
 * (for the message), whose number stands at byte `at` of text (a block's
 * text, its measures already reduced to their numbers), against the table: 0
 * when its source needs no word, or when the sentence holding it (or
 * `before`, the paragraph a quiz's or a list's text goes on from; NULL: none)
 * names that source with one of its words in language lang
 * (lesson_source_lang). Else -1 with why. */
int lesson_source_check(const char *on, const char *spec, const char *text, size_t at, const char *before,
                        const char *lang, char *why, size_t size);

#endif
