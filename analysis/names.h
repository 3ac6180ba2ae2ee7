/* SPDX-License-Identifier: MIT */
/*
 * The short names of a report's rows (names.c): libstdc++'s long spellings
 * by their std:: aliases, and a function's parameter list dropped where no
 * other function then has the same name.  The whole name stays the
 * function's identity: JSON, pprof and folded output and merges use it.
 * Internal to meter; not installed.
 */
#ifndef METER_NAMES_H
#define METER_NAMES_H

#include <stddef.h>

/* whole with the aliases in place; malloc'ed, NULL on ENOMEM */
char *name_alias(const char *whole);
/* name_alias without the function's own parameter list */
char *name_short(const char *whole);

/*
 * out[i]: the short name of whole[i], each malloc'ed; functions whose
 * short names would be equal keep their parameter lists (name_alias).
 * 0, or -1 on ENOMEM (out all NULL).
 */
int names_short(char **out, const char *const *whole, size_t n);

#endif
