// SPDX-License-Identifier: MIT
/*
 * Unit tests of the process-tree walk (analysis/tree.c) that meter-run
 * --follow-fork and meter-stat tree rest on: parents found by cookie in
 * any order, descendants marked through any depth and from a run's
 * token, a cycle of cookies (bad input from the kernel or a file) marked
 * as no tree and walked in bounded time, and 100,000 sessions in one
 * chain marked in what an O(n log n) walk takes, not a quadratic one.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tree.h"

static int n, fails;

static void check(bool cond, const char *fmt, ...)
{
	va_list ap;

	n++;
	printf("%sok %d - ", cond ? "" : "not ", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		fails++;
}

/* n sessions with cookies 1000 + i and the parents given (0: none). */
static struct meter_profile **sessions(size_t count, const uint64_t *parents)
{
	struct meter_profile **list = calloc(count, sizeof(*list));
	size_t i;

	for (i = 0; i < count; i++) {
		list[i] = meter_profile_new();
		list[i]->cookie = 1000 + i;
		list[i]->parent_cookie = parents[i];
	}
	return list;
}

static void sessions_free(struct meter_profile **list, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		meter_profile_free(list[i]);
	free(list);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	/*
	 * 0 <- 1 <- 2 (listed child first: 2's parent is 1, 1's is 0),
	 * 3 linked to token 77, 4 a child of 3, 5 unrelated, 6 <-> 7 a cycle
	 */
	const uint64_t parents[] = { 0, 1000, 1001, 77, 1003, 0, 1007, 1006 };
	const size_t count = sizeof(parents) / sizeof(parents[0]);
	struct meter_profile **list = sessions(count, parents);
	uint64_t token = 77, *chain;
	size_t parent[8], m, i, big = 100000;
	bool in[8] = { 0 }, *bin;
	double t;

	alarm(60);	/* a quadratic walk fails by this, it does not hang */
	printf("TAP version 13\n1..6\n");
	check(!meter_tree_parents(list, count, parent) && parent[0] == count &&
	      parent[1] == 0 && parent[2] == 1 && parent[4] == 3 &&
	      parent[3] == count && parent[5] == count && parent[6] == 7 &&
	      parent[7] == 6,
	      "parents found by cookie, a token or no parent is none");

	in[0] = true;
	m = meter_tree_mark(list, count, in, NULL, 0);
	check(m == 3 && in[0] && in[1] && in[2] && !in[3] && !in[5] && !in[6],
	      "a root's descendants at any depth are marked (%zu), nothing else",
	      m);

	memset(in, 0, sizeof(in));
	m = meter_tree_mark(list, count, in, &token, 1);
	check(m == 2 && in[3] && in[4] && !in[0],
	      "a run's token marks the sessions linked to it and theirs (%zu)",
	      m);

	memset(in, 0, sizeof(in));
	m = meter_tree_mark(list, count, in, NULL, 0);
	check(m == 0, "nothing marked, nothing linked: no tree (%zu)", m);

	memset(in, 0, sizeof(in));
	in[6] = true;
	m = meter_tree_mark(list, count, in, &token, 1);
	check(m == 4 && in[6] && in[7] && !in[0],
	      "a cycle of cookies ends: the marked one's partner is in (%zu)",
	      m);
	sessions_free(list, count);

	/* one chain, each the parent of the one before it in the list */
	chain = calloc(big, sizeof(*chain));
	bin = calloc(big, sizeof(*bin));
	for (i = 0; i + 1 < big; i++)
		chain[i] = 1000 + i + 1;
	chain[big - 1] = 77;
	list = sessions(big, chain);
	t = now();
	m = meter_tree_mark(list, big, bin, &token, 1);
	t = now() - t;
	check(m == big,
	      "a chain of %zu sessions, parents listed after children, all marked (%zu) in %.3f s",
	      big, m, t);
	sessions_free(list, big);
	free(chain);
	free(bin);
	printf("# %d of %d failed\n", fails, n);
	return fails ? 1 : 0;
}
