/* i18n.h — interface strings through gettext (catalogs in assets/po/).
 *
 * Wrap every string a user reads in _(): _("step %d / %d"). N_() marks a
 * string in a static table for xgettext without translating it there; the
 * table's user calls _() on it. */
#ifndef APP_I18N_H
#define APP_I18N_H

#include <libintl.h>

#define _(s) gettext(s)
#define N_(s) (s)

/* Picks the interface language: "en", "zh", or NULL to follow the locale
 * (LANGUAGE, LC_ALL, LC_MESSAGES, LANG). Returns the language chosen. */
const char *app_i18n_init(const char *lang);

#endif
