// SPDX-License-Identifier: MIT
/*
 * Unit tests of the process-tree walk (analysis/proctree.c) that meter-run
 * --follow-fork and meter-stat tree rest on: parents found by cookie in
 * any order, descendants marked through any depth and from a run's
 * token, a cycle of cookies (bad input from the kernel or a file) marked
 * as no tree and walked in bounded time, and 100,000 sessions in one
 * chain marked in what an O(n log n) walk takes, not a quadratic one
 * (the harness's 30 s timeout fails a quadratic walk; it does not hang).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "proctree.h"

/* n sessions with cookies 1000 + i and the parents given (0: none). */
static struct meter_session_row *sessions(size_t count,
					  const uint64_t *parents)
{
	struct meter_session_row *list = calloc(count, sizeof(*list));
	size_t i;

	for (i = 0; list && i < count; i++) {
		list[i].cookie = 1000 + i;
		list[i].parent_cookie = parents[i];
	}
	return list;
}

static void sessions_free(struct meter_session_row *list, size_t count)
{
	meter_session_rows_free(list, count);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * 0 <- 1 <- 2 (listed child first: 2's parent is 1, 1's is 0),
 * 3 linked to token 77, 4 a child of 3, 5 unrelated, 6 <-> 7 a cycle
 */
FIXTURE(tree) {
	struct meter_session_row *list;
	size_t count;
	uint64_t token;
	bool in[8];
};

FIXTURE_SETUP(tree)
{
	static const uint64_t parents[] = { 0, 1000, 1001, 77, 1003, 0,
					    1007, 1006 };

	self->count = sizeof(parents) / sizeof(parents[0]);
	self->list = sessions(self->count, parents);
	ASSERT_NE(NULL, self->list);
	self->token = 77;
}

FIXTURE_TEARDOWN(tree)
{
	sessions_free(self->list, self->count);
}

TEST_F(tree, parents_found_by_cookie_a_token_is_none)
{
	size_t parent[8];

	ASSERT_EQ(0, meter_tree_parents(self->list, self->count, parent));
	EXPECT_EQ(self->count, parent[0]);
	EXPECT_EQ(0, parent[1]);
	EXPECT_EQ(1, parent[2]);
	EXPECT_EQ(self->count, parent[3]);
	EXPECT_EQ(3, parent[4]);
	EXPECT_EQ(self->count, parent[5]);
	EXPECT_EQ(7, parent[6]);
	EXPECT_EQ(6, parent[7]);
}

TEST_F(tree, root_marks_its_descendants_at_any_depth_only)
{
	self->in[0] = true;
	EXPECT_EQ(3, meter_tree_mark(self->list, self->count, self->in,
				     NULL, 0));
	EXPECT_TRUE(self->in[1] && self->in[2]);
	EXPECT_FALSE(self->in[3] || self->in[5] || self->in[6]);
}

TEST_F(tree, token_marks_the_sessions_linked_to_it_and_theirs)
{
	EXPECT_EQ(2, meter_tree_mark(self->list, self->count, self->in,
				     &self->token, 1));
	EXPECT_TRUE(self->in[3] && self->in[4]);
	EXPECT_FALSE(self->in[0]);
}

TEST_F(tree, nothing_marked_nothing_linked_no_tree)
{
	EXPECT_EQ(0, meter_tree_mark(self->list, self->count, self->in,
				     NULL, 0));
}

TEST_F(tree, cycle_of_cookies_ends)
{
	self->in[6] = true;
	EXPECT_EQ(4, meter_tree_mark(self->list, self->count, self->in,
				     &self->token, 1));
	EXPECT_TRUE(self->in[6] && self->in[7]);
	EXPECT_FALSE(self->in[0]);
}

/* one chain, each the parent of the one before it in the list */
TEST(chain_of_100000_parents_after_children_all_marked)
{
	size_t big = 100000, i, m;
	uint64_t token = 77, *chain = calloc(big, sizeof(*chain));
	bool *bin = calloc(big, sizeof(*bin));
	struct meter_session_row *list;
	double t;

	ASSERT_TRUE(chain && bin);
	for (i = 0; i + 1 < big; i++)
		chain[i] = 1000 + i + 1;
	chain[big - 1] = 77;
	list = sessions(big, chain);
	ASSERT_NE(NULL, list);
	t = now();
	m = meter_tree_mark(list, big, bin, &token, 1);
	t = now() - t;
	EXPECT_EQ(big, m);
	TH_LOG("marked in %.3f s", t);
	sessions_free(list, big);
	free(chain);
	free(bin);
}

TEST_HARNESS_MAIN
