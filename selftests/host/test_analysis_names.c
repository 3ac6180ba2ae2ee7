// SPDX-License-Identifier: MIT
/*
 * Reports' short names (analysis/names.c) on names as the demangler gives
 * them: libstdc++'s long spellings by their aliases, the function's own
 * parameter list dropped (a lambda's, inside its name, kept), its
 * classes' template arguments elided (an operator's < and > are not
 * brackets), and overloads or instantiations keeping what tells them
 * apart, so that two rows never read the same.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "analysis.h"
#include "names.h"

#define STR "std::__cxx11::basic_string<char, std::char_traits<char>, " \
	    "std::allocator<char> >"

static void expect_level(struct __test_metadata *_metadata,
			 const char *whole, enum name_level level,
			 const char *want)
{
	char *s = name_short(whole, level);

	ASSERT_NE(NULL, s);
	EXPECT_STREQ(want, s);
	free(s);
}

static void expect_short(struct __test_metadata *_metadata,
			 const char *whole, const char *want)
{
	expect_level(_metadata, whole, NAME_NO_PARAMS, want);
}

TEST(parameter_list_dropped)
{
	expect_short(_metadata, "Builder::AddTarget(Node*, " STR "*)",
		     "Builder::AddTarget");
}

TEST(qualifiers_after_the_list_dropped_with_it)
{
	expect_short(_metadata, "State::LookupNode(StringPiece) const",
		     "State::LookupNode");
	expect_short(_metadata, "Foo::get() const &&", "Foo::get");
}

TEST(string_spelled_as_its_alias)
{
	expect_short(_metadata, "Edge::GetBinding(" STR " const&) const",
		     "Edge::GetBinding");
	expect_short(_metadata, "std::vector<" STR ", std::allocator<" STR
		     " > >::push_back",
		     "std::vector<std::string, std::allocator<std::string> >"
		     "::push_back");
}

TEST(lambda_keeps_the_list_inside_its_name)
{
	expect_short(_metadata,
		     "main::{lambda(int, int)#1}::operator()(int, int) const",
		     "main::{lambda(int, int)#1}::operator()");
}

TEST(names_without_a_list_unchanged)
{
	expect_short(_metadata, "is_prime", "is_prime");
	expect_short(_metadata, "(anonymous namespace)::helper",
		     "(anonymous namespace)::helper");
	expect_short(_metadata, "f(int", "f(int");
}

TEST(class_template_arguments_elided)
{
	expect_level(_metadata, "std::_Hashtable<" STR ", std::pair<" STR
		     " const, long> >::_M_find_before_node(unsigned long) const",
		     NAME_NO_SCOPE_ARGS, "std::_Hashtable<...>::_M_find_before_node");
	/* a function template's own arguments stay, and short ones */
	expect_level(_metadata, "Box<double>::grow(double)",
		     NAME_NO_SCOPE_ARGS, "Box<double>::grow");
	expect_level(_metadata, "void std::vector<int, std::allocator<int> >"
		     "::emplace_back<int>(int&&)", NAME_NO_SCOPE_ARGS,
		     "void std::vector<...>::emplace_back<int>");
}

TEST(operators_are_not_brackets)
{
	expect_level(_metadata, "Vec<std::pair<int, long>, 64ul>::operator<"
		     "(Vec<int> const&) const", NAME_NO_SCOPE_ARGS,
		     "Vec<...>::operator<");
	expect_level(_metadata, "std::basic_ostream<char, std::char_traits"
		     "<char> >& std::operator<< <std::char_traits<char> >"
		     "(std::basic_ostream<char>&, char const*)",
		     NAME_NO_SCOPE_ARGS,
		     "std::basic_ostream<char, std::char_traits<char> >& "
		     "std::operator<< <std::char_traits<char> >");
	expect_level(_metadata, "Ptr<std::pair<int, long>, 64ul>::operator->() "
		     "const", NAME_NO_SCOPE_ARGS, "Ptr<...>::operator->");
}

TEST(two_instantiations_keep_their_arguments)
{
	const char *whole[] = {
		"Map<" STR ", long>::add(" STR " const&)",
		"Map<" STR ", double>::add(" STR " const&)",
		"Map<" STR ", long>::sorted() const",
	};
	char *out[3];
	size_t i;

	ASSERT_EQ(0, names_short(out, whole, 3));
	EXPECT_STREQ("Map<std::string, long>::add", out[0]);
	EXPECT_STREQ("Map<std::string, double>::add", out[1]);
	EXPECT_STREQ("Map<...>::sorted", out[2]);
	for (i = 0; i < 3; i++)
		free(out[i]);
}

TEST(overloads_keep_their_lists_the_rest_are_short)
{
	const char *whole[] = {
		"Lexer::Read(Token*)", "Lexer::Read(" STR "*)",
		"Lexer::Start(" STR ")", "main",
	};
	char *out[4];
	size_t i;

	ASSERT_EQ(0, names_short(out, whole, 4));
	EXPECT_STREQ("Lexer::Read(Token*)", out[0]);
	EXPECT_STREQ("Lexer::Read(std::string*)", out[1]);
	EXPECT_STREQ("Lexer::Start", out[2]);
	EXPECT_STREQ("main", out[3]);
	for (i = 0; i < 4; i++)
		free(out[i]);
}

/*
 * The analysis names its rows short, whole on request; built and linked
 * with libmeter-analysis.a alone, which names no renderer.
 */
TEST(analysis_rows_short_or_whole_without_the_tools)
{
	struct meter_profile *p = meter_profile_new();
	struct an_opts o = { .order = ORDER_SELF };
	struct analysis *an;

	meter_profile_add_func(p, 1, "Lexer::Read(" STR "*)")->calls = 1;
	meter_profile_add_func(p, 2, "main")->calls = 1;
	an = analysis_new(p, &o, ORDER_SELF);
	ASSERT_NE(NULL, an);
	EXPECT_STREQ("Lexer::Read", an_name(an, 0));
	EXPECT_STREQ("Lexer::Read(" STR "*)", an_whole_name(an, 0));
	analysis_free(an);
	o.whole_names = true;
	an = analysis_new(p, &o, ORDER_SELF);
	ASSERT_NE(NULL, an);
	EXPECT_STREQ("Lexer::Read(" STR "*)", an_name(an, 0));
	analysis_free(an);
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
