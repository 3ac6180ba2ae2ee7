// SPDX-License-Identifier: MIT
/*
 * The names reports show (names.h).  A demangled C++ name spells out every
 * parameter list and every default template argument: ninja's ran to 334
 * characters.  The short form drops what the reader can do without while
 * the row stays one function: the common std:: aliases always; then the
 * parameter list of the function itself, and the template arguments of
 * the classes it is a member of (std::_Hashtable<...>::_M_rehash), but
 * each only where no other function of the profile has the same short
 * form (overloads keep their lists, two instantiations their arguments).
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

/* Replaces each what in s by with, no longer than what. */
static void replace_all(char *s, const char *what, const char *with)
{
	size_t wl = strlen(what), al = strlen(with);
	char *at = s;

	while ((at = strstr(at, what))) {
		memcpy(at, with, al);
		memmove(at + al, at + wl, strlen(at + wl) + 1);
		at += al;
	}
}

/* s with every alias in place; NULL on ENOMEM. */
static char *with_aliases(const char *s)
{
	char *out = strdup(s);
	size_t i;

	for (i = 0; out && i < sizeof(aliases) / sizeof(aliases[0]); i++)
		replace_all(out, aliases[i].whole, aliases[i].alias);
	/* the demangler's "> >" needs no space after an alias */
	if (out)
		replace_all(out, "std::string >", "std::string>");
	return out;
}

/* The length of an operator's symbol at s ("operator<<" ...), or 0. */
static size_t operator_symbol(const char *s, const char *start)
{
	static const char *const syms[] = {
		"<<=", ">>=", "->*", "<=>", "<<", ">>", "<=", ">=", "->", "<",
		">",
	};
	size_t i;

	if (s - start < 8 || strncmp(s - 8, "operator", 8))
		return 0;
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!strncmp(s, syms[i], strlen(syms[i])))
			return strlen(syms[i]);
	return 0;
}

/* arguments this short read as easily as "..." (<int>, <std::string>) */
#define SCOPE_ARGS_KEPT 16

/*
 * s with the template arguments of every scope ("<...>" followed by
 * "::") written "<...>" when longer than SCOPE_ARGS_KEPT: a member's class
 * named, not spelled out.
 */
static void elide_scope_args(char *s)
{
	size_t i = 0, open = 0;
	int depth = 0;

	while (s[i]) {
		size_t op = operator_symbol(s + i, s);

		if (op) {
			i += op;
			continue;
		}
		if (s[i] == '<' && !depth++)
			open = i;
		if (s[i] == '>' && depth && !--depth &&
		    !strncmp(s + i + 1, "::", 2) &&
		    i - open - 1 > SCOPE_ARGS_KEPT) {
			memcpy(s + open + 1, "...", 3);
			memmove(s + open + 4, s + i, strlen(s + i) + 1);
			i = open + 4;
		}
		i++;
	}
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

char *name_short(const char *whole, enum name_level level)
{
	char *s = with_aliases(whole);

	if (s && level >= NAME_NO_PARAMS)
		s[without_params(s)] = '\0';
	if (s && level >= NAME_NO_SCOPE_ARGS)
		elide_scope_args(s);
	return s;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(**(char *const *const *)a, **(char *const *const *)b);
}

/*
 * Names idx[0..n) of whole at level into out; where two or more share a
 * name, those are named again one level down.  0, or -1 on ENOMEM.
 */
static int name_group(char **out, const char *const *whole, size_t *idx,
		      size_t n, enum name_level level)
{
	char ***sorted = malloc((n ? n : 1) * sizeof(*sorted));
	size_t *same = malloc((n ? n : 1) * sizeof(*same));
	size_t i, j, k;
	int ret = -1;

	if (!sorted || !same)
		goto out;
	for (i = 0; i < n; i++) {
		free(out[idx[i]]);
		out[idx[i]] = level == NAME_WHOLE ? strdup(whole[idx[i]]) :
			      name_short(whole[idx[i]], level);
		if (!out[idx[i]])
			goto out;
		sorted[i] = &out[idx[i]];
	}
	ret = 0;
	if (level == NAME_WHOLE)
		goto out;
	qsort(sorted, n, sizeof(*sorted), by_str);
	for (i = 0; i < n && !ret; i = j) {
		for (j = i + 1; j < n && !strcmp(*sorted[i], *sorted[j]); j++)
			;
		if (j - i < 2)
			continue;
		for (k = i; k < j; k++)
			same[k - i] = (size_t)(sorted[k] - out);
		ret = name_group(out, whole, same, j - i, level - 1);
	}
out:
	free(sorted);
	free(same);
	return ret;
}

int names_short(char **out, const char *const *whole, size_t n)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), i;
	int ret = -1;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (idx) {
		for (i = 0; i < n; i++)
			idx[i] = i;
		ret = name_group(out, whole, idx, n, NAME_NO_SCOPE_ARGS);
	}
	free(idx);
	for (i = 0; ret && i < n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	return ret;
}
