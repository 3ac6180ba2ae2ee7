// SPDX-License-Identifier: MIT
/*
 * Big tables cross netlink in several messages: 20000 function names and
 * 20000 call counts (many ADD_FUNCS and ADD_CALLS messages), ids spread
 * over many chunks up to METER_FUNCS_MAX, and a profile dump of them all
 * (many dump calls) come back complete.
 */
#include "kmod_util.h"

#define N 20000

static struct meter_nl_func f[N];
static struct meter_call_counts cc[N];
static char names[N][32];

static uint32_t id_of(uint32_t i)
{
	return i * 52 + 1;	/* 1 .. ~1040000: every chunk of ids */
}

FIXTURE(bulk) {
	struct meter_nl *nl;
	uint64_t cookie;
};

FIXTURE_SETUP(bulk)
{
	size_t i;

	self->nl = ku_open();
	self->cookie = ku_register(self->nl, ku_page(), 0);
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "function_number_%zu", i);
		f[i].id = id_of(i);
		f[i].name = names[i];
		cc[i].id = id_of(i);
		cc[i].calls = i + 1;
	}
}

FIXTURE_TEARDOWN(bulk)
{
	meter_nl_close(self->nl);
}

TEST_F(bulk, names_and_calls_in_many_messages_dump_back_complete)
{
	struct meter_profile *p;
	char err[256] = "";
	size_t i, good = 0;

	ASSERT_EQ(0, meter_nl_add_funcs(self->nl, f, N, err, sizeof(err)))
		TH_LOG("%d names in ADD_FUNCS messages: %s", N, err);
	ASSERT_EQ(0, meter_nl_add_calls(self->nl, 0, cc, N, 0, err, sizeof(err)))
		TH_LOG("%d call counts in ADD_CALLS messages: %s", N, err);
	p = ku_profile(self->nl, self->cookie, 0);
	for (i = 0; i < N; i++) {
		const struct meter_func *fn = meter_profile_find(p, id_of(i));

		good += fn && fn->name && !strcmp(fn->name, names[i]) &&
			fn->calls == i + 1;
	}
	EXPECT_EQ(N, good) TH_LOG("functions with their name and calls");
	EXPECT_EQ(N, p->nfuncs) TH_LOG("and nothing else");
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
