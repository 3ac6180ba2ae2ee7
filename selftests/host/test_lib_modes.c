// SPDX-License-Identifier: MIT
/*
 * The signal backend works with no module: a CPU-bound run takes samples
 * and attributes them to the function that burnt the time, through the
 * right callers.  Manual, automatic and explicit-API instrumentation of the
 * same program give the same profile: same functions, same call counts,
 * same dominant stacks.
 */
#include "lib_tap.h"

static struct meter_profile *run_mode(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "spin", "300", NULL };
	struct meter_profile *p;
	const struct meter_func *spin;
	uint64_t ab, c;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s: spin workload, signal backend",
		 mode);
	p = run_backend(prog, "signal", args, out, sizeof(out), label,
			"METER_PERIOD_NS=1000000");
	ok(p && !strcmp(p->backend, "signal"),
	   "%s: profile written by the signal backend", mode);
	if (!p)
		return NULL;
	/* 600 ms of CPU at HZ >= 100: at least 40 signals */
	ok(p->samples >= 40, "%s: signal backend took samples without meter.ko (%llu)",
	   mode, (unsigned long long)p->samples);
	/* late signals weigh the periods that passed (timer overruns) */
	ok(p->samples >= 510 && p->samples <= 720,
	   "%s: 600 ms of CPU at a 1 ms period count about 600 samples (%llu)",
	   mode, (unsigned long long)p->samples);
	spin = func_named(p, "spin");
	ok(spin && spin->self_samples * 10 >= p->samples * 9,
	   "%s: >= 90%% of samples are self time of spin (%llu of %llu)",
	   mode, spin ? (unsigned long long)spin->self_samples : 0ULL,
	   (unsigned long long)p->samples);
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
	struct meter_profile *m = run_mode("manual");
	struct meter_profile *a = run_mode("auto");
	struct meter_profile *x = run_mode("api");
	struct meter_profile *g = run_mode("plugin");

	ok(same_spin_calls(m, a),
	   "manual and auto: same functions with the same call counts");
	ok(same_spin_calls(m, x),
	   "manual and api: same functions with the same call counts");
	ok(same_spin_calls(m, g),
	   "manual and plugin: same functions with the same call counts");
	meter_profile_free(m);
	meter_profile_free(a);
	meter_profile_free(x);
	meter_profile_free(g);
	scratch_cleanup();
	return tap_done();
}
