// SPDX-License-Identifier: MIT
/*
 * meter.ko samples what libmeter publishes: a CPU-bound run is charged to
 * the function that burnt the time, through the right callers, at the
 * requested rate; and manual, automatic and explicit-API instrumentation
 * give the same profile.
 */
#include "lib_kernel.h"

static const char *const names[] = { "main", "a", "b", "c", "spin" };

static struct meter_profile *spin(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "spin", "300", NULL };
	struct meter_profile *p;
	const struct meter_func *s;
	uint64_t ab, c;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s spin", mode);
	p = run_kernel(prog, args, out, sizeof(out), label);
	if (!p) {
		ok(0, "%s: session read back", mode);
		return NULL;
	}
	/* 600 ms of CPU at the default 1 kHz */
	ok(p->samples >= 400, "%s: kernel took samples at the requested rate (%llu)",
	   mode, (unsigned long long)p->samples);
	s = func_named(p, "spin");
	ok(s && s->self_samples * 10 >= p->samples * 9,
	   "%s: >= 90%% of samples are self time of spin", mode);
	ab = samples_of_stack(p, "main;a;b;spin");
	c = samples_of_stack(p, "main;c;spin");
	ok(ab * 10 >= p->samples * 3 && c * 10 >= p->samples * 3,
	   "%s: stacks main;a;b;spin (%llu) and main;c;spin (%llu) each hold >= 30%%",
	   mode, (unsigned long long)ab, (unsigned long long)c);
	ok(p->invalid == 0, "%s: no invalid samples", mode);
	return p;
}

int main(void)
{
	struct meter_profile *m = spin("manual");
	struct meter_profile *all[2] = { spin("auto"), spin("api") };
	const char *mode[] = { "auto", "api" };
	size_t i, k;

	for (k = 0; k < 2; k++) {
		int same = m && all[k];

		for (i = 0; same && i < sizeof(names) / sizeof(*names); i++)
			if (calls_of(m, names[i]) < 1 ||
			    calls_of(m, names[i]) != calls_of(all[k], names[i]))
				same = 0;
		ok(same, "manual and %s: same functions with the same call counts",
		   mode[k]);
		meter_profile_free(all[k]);
	}
	meter_profile_free(m);
	scratch_cleanup();
	return tap_done();
}
