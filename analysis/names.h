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

/* How much a short name leaves out, each level what the one before does */
enum name_level {
	NAME_WHOLE,		/* nothing: the whole name */
	NAME_ALIASED,		/* libstdc++'s long spellings as std::string */
	NAME_NO_PARAMS,		/* the function's own parameter list */
	NAME_NO_SCOPE_ARGS,	/* its classes' template arguments, "<...>" */
};

/* whole with the aliases in place; malloc'ed, NULL on ENOMEM */
char *name_alias(const char *whole);
/* whole shortened to level; malloc'ed, NULL on ENOMEM */
char *name_short(const char *whole, enum name_level level);

/*
 * out[i]: the short name of whole[i], each malloc'ed: the shortest level
 * at which no other function of whole has the same name.  0, or -1 on
 * ENOMEM (out all NULL).
 */
int names_short(char **out, const char *const *whole, size_t n);

#endif
