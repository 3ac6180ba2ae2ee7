// SPDX-License-Identifier: MIT
/*
 * What the tick does with what it reads from the page: deep recursion is
 * kept as truncated stacks and counted once per sample in the inclusive
 * total; ids the session never named, a bad magic and a bad frame count
 * as invalid; a current function without a shadow stack still counts.
 */
#include "kmod_util.h"

/*
 * With meter.ko loaded with stack_entries=16 (test_kmod_lost): 200
 * distinct stacks overflow the table; their samples are counted as lost
 * yet still as self.
 */
static int lost_mode(void)
{
	struct meter_profile *p;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie, self = 0;
	uint32_t i;

	ku_plan(2);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 100000);
	ku_funcs(nl, 1);
	{
		struct meter_nl_func f[200];
		char names[200][16];

		for (i = 0; i < 200; i++) {
			snprintf(names[i], sizeof(names[i]), "g%u", i + 1);
			f[i].id = i + 1;
			f[i].name = names[i];
		}
		if (meter_nl_add_funcs(nl, f, 200, NULL, 0))
			ku_bail("add_funcs", -EIO, "");
	}
	for (i = 1; i <= 200; i++) {
		ku_enter(pg, i);
		ku_burn(2000000);
		ku_leave(pg);
	}
	p = ku_profile(nl, cookie, 0);
	for (i = 1; i <= 200; i++)
		self += ku_self(p, i);
	ku_diag("%zu stacks kept, %llu samples lost, %llu self of %llu",
		p->nstacks, (unsigned long long)p->lost,
		(unsigned long long)self, (unsigned long long)p->samples);
	ku_ok(p->nstacks <= 16 && p->lost > 1000,
	      "a full stack table counts lost stacks");
	ku_ok(self == p->samples - p->no_current - p->invalid,
	      "samples whose stack was lost still count as self");
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}

int main(int argc, char **argv)
{
	struct meter_profile *p;
	const struct meter_func *f1;
	struct meter_page *pg;
	struct meter_nl *nl;
	uint64_t cookie, inv0, samples_rec;
	size_t i, truncated = 0;
	int d;

	if (argc > 1 && !strcmp(argv[1], "--lost"))
		return lost_mode();
	ku_plan(6);
	nl = ku_open();
	pg = ku_page();
	cookie = ku_register(nl, pg, 200000);
	ku_funcs(nl, 3);

	/* f2 -> f1 recursing 2000 deep: past METER_STACK_CAP too. */
	ku_enter(pg, 2);
	for (d = 0; d < 2000; d++)
		ku_enter(pg, 1);
	ku_burn(200000000);
	for (d = 0; d < 2000; d++)
		ku_leave(pg);
	ku_leave(pg);

	p = ku_profile(nl, cookie, 0);
	f1 = meter_profile_find(p, 1);
	for (i = 0; i < p->nstacks; i++)
		truncated += p->stacks[i].truncated &&
			p->stacks[i].depth <= METER_SAMPLE_DEPTH_MAX;
	samples_rec = ku_self(p, 1);
	ku_ok(f1 && samples_rec > 500 && f1->total_samples >= samples_rec &&
	      f1->total_samples <= p->samples,
	      "recursion counts once per sample in the total (%llu self, %llu total)",
	      (unsigned long long)samples_rec,
	      f1 ? (unsigned long long)f1->total_samples : 0ULL);
	ku_ok(truncated > 0 && p->truncated >= samples_rec * 9 / 10,
	      "deep stacks are kept truncated to %d frames (%llu truncated)",
	      METER_SAMPLE_DEPTH_MAX, (unsigned long long)p->truncated);
	inv0 = p->invalid;
	meter_profile_free(p);

	/* An id above every named id. */
	pg->current_id = 999;
	ku_burn(50000000);
	pg->current_id = 0;
	p = ku_profile(nl, cookie, 0);
	ku_ok(p->invalid > inv0 + 100 && !meter_profile_find(p, 999),
	      "an unnamed id counts as invalid, not as a function");
	inv0 = p->invalid;
	meter_profile_free(p);

	/* A bad magic. */
	pg->magic = 0;
	pg->current_id = 1;
	ku_burn(50000000);
	pg->current_id = 0;
	pg->magic = METER_PAGE_MAGIC;
	p = ku_profile(nl, cookie, 0);
	ku_ok(p->invalid > inv0 + 100, "a bad magic counts as invalid");
	inv0 = p->invalid;
	meter_profile_free(p);

	/* A stack frame out of range. */
	pg->stack[0] = 5000;
	pg->depth = 1;
	pg->current_id = 1;
	ku_burn(50000000);
	pg->current_id = 0;
	pg->depth = 0;
	p = ku_profile(nl, cookie, 0);
	ku_ok(p->invalid > inv0 + 100, "a bad stack frame counts as invalid");
	meter_profile_free(p);

	/* current without a shadow stack. */
	pg->current_id = 3;
	ku_burn(50000000);
	pg->current_id = 0;
	p = ku_profile(nl, cookie, 0);
	{
		const struct meter_func *f3 = meter_profile_find(p, 3);

		ku_ok(f3 && f3->self_samples > 100 &&
		      f3->total_samples == f3->self_samples,
		      "a current function without a shadow stack counts");
	}
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
