// SPDX-License-Identifier: MIT
/*
 * The names reports show (names.h).  A demangled C++ name spells out every
 * parameter list and every default template argument: ninja's ran to 334
 * characters.  The short form drops what the reader can do without while
 * the row stays one function: the common std:: aliases first, then the
 * parameter list of the function itself, but only where no other function
 * of the profile has the same short form (overloads keep their lists).
 */
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* Spelled as libstdc++'s demangler gives them; longest first. */
static const struct {
	const char *whole, *alias;
} aliases[] = {
	{ "std::__cxx11::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> >", "std::string" },
	{ "std::basic_string<char, std::char_traits<char>, "
	  "std::allocator<char> >", "std::string" },
	{ "std::__cxx11::", "std::" },
};

/* s with every alias in place; NULL on ENOMEM. */
static char *with_aliases(const char *s)
{
	char *out = strdup(s), *at;
	size_t i;

	for (i = 0; out && i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		size_t wl = strlen(aliases[i].whole);
		size_t al = strlen(aliases[i].alias);

		/* an alias is never longer than what it replaces */
		while ((at = strstr(out, aliases[i].whole))) {
			memcpy(at, aliases[i].alias, al);
			memmove(at + al, at + wl, strlen(at + wl) + 1);
		}
	}
	return out;
}

/*
 * The length of s without its own parameter list (and the qualifiers
 * after it: " const", " &&" ...), or strlen(s) when it has none.  The
 * list is the balanced "(...)" that the name ends with: in
 * "main::{lambda(int)#1}::operator()(int) const" it is the last "(int)".
 */
static size_t without_params(const char *s)
{
	size_t n = strlen(s), end = n;
	int depth = 0;

	/* the qualifiers: words and &s after the list's ')' */
	while (end && s[end - 1] != ')') {
		char c = s[end - 1];

		if (c != ' ' && c != '&' && !(c >= 'a' && c <= 'z'))
			return n;
		end--;
	}
	while (end) {
		char c = s[--end];

		depth += c == ')' ? 1 : c == '(' ? -1 : 0;
		if (!depth)
			break;
	}
	/* unbalanced, or the whole name is a list ("(anonymous)") */
	return depth || !end ? n : end;
}

char *name_alias(const char *whole)
{
	return with_aliases(whole);
}

char *name_short(const char *whole)
{
	char *s = with_aliases(whole);

	if (s)
		s[without_params(s)] = '\0';
	return s;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

int names_short(char **out, const char *const *whole, size_t n)
{
	char ***sorted = NULL;
	size_t i, j;

	for (i = 0; i < n; i++)
		if (!(out[i] = name_short(whole[i])))
			goto fail;
	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!sorted)
		goto fail;
	for (i = 0; i < n; i++)
		sorted[i] = &out[i];
	qsort(sorted, n, sizeof(*sorted), by_str);
	/* a short form two functions share: each keeps its list */
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(*sorted[i], *sorted[j]); j++)
			;
		if (j - i < 2)
			continue;
		for (; i < j; i++) {
			char *a = name_alias(whole[sorted[i] - out]);

			if (!a)
				goto fail;
			free(*sorted[i]);
			*sorted[i] = a;
		}
	}
	free(sorted);
	return 0;
fail:
	free(sorted);
	for (i = 0; i < n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	return -1;
}
