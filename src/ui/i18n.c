/* i18n.c — gettext setup: the catalog folder and the interface language. */
#include "i18n.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

#ifndef ATTNLAB_LOCALEDIR
#define ATTNLAB_LOCALEDIR "locale"
#endif

const char *ui_i18n_init(const char *lang)
{
    const char *l = lang && !strcmp(lang, "zh") ? "zh" : lang ? "en" : lesson_lang_from_env();
    /* messages only: numbers keep the C locale's '.' whatever the user's locale */
    setlocale(LC_MESSAGES, "");
    setenv("LANGUAGE", !strcmp(l, "zh") ? "zh_CN" : "en", 1);
    const char *cur = setlocale(LC_MESSAGES, NULL);
    if (!cur || !strcmp(cur, "C") || !strcmp(cur, "POSIX")) /* gettext ignores LANGUAGE under "C" */
        setlocale(LC_MESSAGES, "C.UTF-8");
    const char *dir = getenv("ATTNLAB_LOCALEDIR");
    bindtextdomain("attnlab", dir && *dir ? dir : ATTNLAB_LOCALEDIR);
    bind_textdomain_codeset("attnlab", "UTF-8");
    textdomain("attnlab");
    return l;
}
