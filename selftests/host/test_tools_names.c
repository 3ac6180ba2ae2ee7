// SPDX-License-Identifier: MIT
/*
 * Reports' short names (analysis/names.c) on names as the demangler gives
 * them: libstdc++'s long spellings by their aliases, the function's own
 * parameter list dropped (a lambda's, inside its name, kept), and
 * overloads keeping their lists so that two rows never read the same.
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "names.h"

#define STR "std::__cxx11::basic_string<char, std::char_traits<char>, " \
	    "std::allocator<char> >"

static void expect_short(struct __test_metadata *_metadata,
			 const char *whole, const char *want)
{
	char *s = name_short(whole);

	ASSERT_NE(NULL, s);
	EXPECT_STREQ(want, s);
	free(s);
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
		     "std::vector<std::string, std::allocator<std::string > >"
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

TEST_HARNESS_MAIN
