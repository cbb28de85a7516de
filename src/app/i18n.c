/* i18n.c — gettext setup: the catalog folder and the interface language. */
#include "i18n.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "engine/base/paths.h"

#ifndef ATTNLAB_LOCALEDIR
#define ATTNLAB_LOCALEDIR "locale"
#endif

const char *app_i18n_init(const char *lang)
{
    const char *l = lang && !strcmp(lang, "zh") ? "zh" : lang ? "en" : lesson_lang_from_env();
    /* messages only: numbers keep the C locale's '.' whatever the user's locale */
    setlocale(LC_MESSAGES, "");
    setenv("LANGUAGE", !strcmp(l, "zh") ? "zh_CN" : "en", 1);
    /* glibc's gettext ignores LANGUAGE while LC_MESSAGES is exactly "C" (LANG=C, or a
     * locale that is not installed, e.g. zh_CN.UTF-8): any other locale will do, since
     * LANGUAGE picks the catalog and the codeset is UTF-8 whatever the locale's.
     * C.UTF-8 is in glibc >= 2.35 and Debian; the others for systems without it. */
    static const char *const fallback[] = {"C.UTF-8", "C.utf8", "en_US.UTF-8", "en_US.utf8", "en_GB.UTF-8"};
    const char *cur = setlocale(LC_MESSAGES, NULL);
    if (!cur || !strcmp(cur, "C") || !strcmp(cur, "POSIX"))
        for (size_t i = 0; i < sizeof fallback / sizeof fallback[0]; i++)
            if (setlocale(LC_MESSAGES, fallback[i])) break;
    char dir[4096];
    bindtextdomain("attnlab", attn_data_dir("ATTNLAB_LOCALEDIR", "locale", ATTNLAB_LOCALEDIR, dir, sizeof dir));
    bind_textdomain_codeset("attnlab", "UTF-8");
    textdomain("attnlab");
    return l;
}
