// SPDX-License-Identifier: MIT
/*
 * Call counts stay exact under threads: 8 threads calling leaf() 100000
 * times each report 800000, in each mode; with the signal backend every
 * thread gets its own timer and shows up in the profile.
 */
#include "lib_tap.h"

static void check(const char *mode, const char *backend)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "threads", "8", "100000", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s/%s: 8-thread workload", mode,
		 backend);
	p = run_backend(prog, backend, args, out, sizeof(out), label, NULL);
	ok(p != NULL, "%s/%s: profile written", mode, backend);
	if (!p)
		return;
	ok(calls_of(p, "leaf") == 800000,
	   "%s/%s: leaf called 8 x 100000 times reports 800000 (got %lld)",
	   mode, backend, calls_of(p, "leaf"));
	ok(calls_of(p, "worker") == 8, "%s/%s: worker reports 8 calls",
	   mode, backend);
	ok(p->nthreads == 9, "%s/%s: 9 threads listed (got %zu)", mode,
	   backend, p->nthreads);
	{
		size_t i, n = 0;

		for (i = 0; i < p->nfuncs; i++)
			n += same_name(p->funcs[i].name, "leaf");
		ok(n == 1, "%s/%s: threads first calling leaf at once make one record (%zu)",
		   mode, backend, n);
	}
	meter_profile_free(p);
}

/* 300 threads one after the other: each set up and torn down cleanly. */
static void churn(const char *mode, const char *backend)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "churn", "300", "1000", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label),
		 "%s/%s: 300 short-lived threads, one after the other", mode,
		 backend);
	p = run_backend(prog, backend, args, out, sizeof(out), label, NULL);
	ok(p && calls_of(p, "leaf") == 300000 && calls_of(p, "worker") == 300 &&
	   p->nthreads == 301,
	   "%s/%s: every exited thread's calls are kept (leaf %lld, %zu threads)",
	   mode, backend, calls_of(p, "leaf"), p ? p->nthreads : 0);
	meter_profile_free(p);
}

int main(void)
{
	check("manual", "off");
	check("auto", "off");
	check("api", "off");
	check("manual", "signal");
	check("auto", "signal");
	check("plugin", "signal");
	churn("manual", "signal");
	churn("auto", "off");
	churn("plugin", "signal");
	scratch_cleanup();
	return tap_done();
}
