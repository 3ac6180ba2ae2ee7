// SPDX-License-Identifier: MIT
/*
 * Call counts are exact: a function called N times reports N, in each of
 * the three instrumentation modes, with the off backend (calls only, no
 * samples).
 */
#include "lib_tap.h"

static void check_mode(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "counts", "1000", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s counts", mode);
	p = run_backend(prog, "off", args, out, sizeof(out), label, NULL);
	ok(p != NULL, "%s: off backend writes a readable JSON profile", mode);
	if (!p)
		return;
	ok(!strcmp(p->backend, "off"), "%s: profile says backend off", mode);
	ok(p->samples == 0, "%s: off backend takes no samples", mode);
	ok(calls_of(p, "top") == 1000, "%s: top called 1000 times reports 1000 (got %lld)",
	   mode, calls_of(p, "top"));
	ok(calls_of(p, "mid") == 1000, "%s: mid reports 1000 calls (got %lld)",
	   mode, calls_of(p, "mid"));
	ok(calls_of(p, "leaf") == 4000, "%s: leaf called 4000 times reports 4000 (got %lld)",
	   mode, calls_of(p, "leaf"));
	ok(calls_of(p, "main") == 1, "%s: main reports 1 call", mode);
	ok(printed_depth(out) == 1, "%s: shadow stack depth back to 1 in main (got %ld)",
	   mode, printed_depth(out));
	ok(p->call_cost_ps > 0, "%s: calibrated call cost in the profile (%llu ps)",
	   mode, (unsigned long long)p->call_cost_ps);
	meter_profile_free(p);
}

int main(void)
{
	check_mode("manual");
	check_mode("auto");
	check_mode("plugin");
	check_mode("api");
	scratch_cleanup();
	return tap_done();
}
