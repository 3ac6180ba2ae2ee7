// SPDX-License-Identifier: MIT
/*
 * Big tables cross netlink in several messages: 20000 function names and
 * 20000 call counts (many ADD_FUNCS and ADD_CALLS messages), ids spread
 * over many chunks up to METER_FUNCS_MAX, and a profile dump of them all
 * (many dump calls) come back complete.
 */
#include "kmod_util.h"

#define N 20000

static uint32_t id_of(uint32_t i)
{
	return i * 52 + 1;	/* 1 .. ~1040000: every chunk of ids */
}

int main(void)
{
	static struct meter_nl_func f[N];
	static struct meter_call_counts cc[N];
	static char names[N][32];
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	char err[256] = "";
	uint64_t cookie;
	size_t i, good = 0;
	int ret;

	ku_plan(4);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 0);
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "function_number_%zu", i);
		f[i].id = id_of(i);
		f[i].name = names[i];
		cc[i].id = id_of(i);
		cc[i].calls = i + 1;
	}
	ret = meter_nl_add_funcs(nl, f, N, err, sizeof(err));
	ku_ok(ret == 0, "%d names in several ADD_FUNCS messages (%s)", N, err);
	ret = meter_nl_add_calls(nl, 0, cc, N, err, sizeof(err));
	ku_ok(ret == 0, "%d call counts in several ADD_CALLS messages (%s)", N,
	      err);
	p = ku_profile(nl, cookie, 0);
	for (i = 0; i < N; i++) {
		const struct meter_func *fn = meter_profile_find(p, id_of(i));

		good += fn && fn->name && !strcmp(fn->name, names[i]) &&
			fn->calls == i + 1;
	}
	ku_ok(good == N, "the dump returns every function with its name and calls (%zu)",
	      good);
	ku_ok(p->nfuncs == N, "and nothing else (%zu functions)", p->nfuncs);
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
