// SPDX-License-Identifier: MIT
/*
 * With meter.ko, libmeter registers each thread and flushes call counts at
 * thread and process exit: a function called N times reports N in the
 * session, in each mode and under 8 threads; allocation accounting too.
 */
#include "lib_kernel.h"

static void counts(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "counts", "1000", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s counts", mode);
	p = run_kernel(prog, args, out, sizeof(out), label);
	ok(p != NULL, "%s: session read back by pid", mode);
	if (!p)
		return;
	ok(!strcmp(p->backend, "kernel"), "%s: profile from the kernel backend",
	   mode);
	ok(calls_of(p, "top") == 1000 && calls_of(p, "mid") == 1000 &&
	   calls_of(p, "leaf") == 4000 && calls_of(p, "main") == 1,
	   "%s: exact call counts in the session (top %lld, mid %lld, leaf %lld)",
	   mode, calls_of(p, "top"), calls_of(p, "mid"), calls_of(p, "leaf"));
	ok(p->call_cost_ps > 0, "%s: calibrated call cost registered (%llu ps)",
	   mode, (unsigned long long)p->call_cost_ps);
	meter_profile_free(p);
}

static void threads(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "threads", "8", "100000", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s threads", mode);
	p = run_kernel(prog, args, out, sizeof(out), label);
	ok(p && calls_of(p, "leaf") == 800000,
	   "%s: 8 threads x 100000 calls report 800000 (got %lld)", mode,
	   calls_of(p, "leaf"));
	ok(p && calls_of(p, "worker") == 8, "%s: worker reports 8 calls", mode);
	ok(p && p->nthreads == 9, "%s: 9 threads in the session (got %zu)",
	   mode, p ? p->nthreads : 0);
	meter_profile_free(p);
}

static void churn(void)
{
	char out[256];
	const char *args[] = { "churn", "300", "1000", NULL };
	struct meter_profile *p;

	p = run_kernel("lib_workload_manual", args, out, sizeof(out), "churn");
	ok(p && calls_of(p, "leaf") == 300000 && p->nthreads == 301,
	   "300 short-lived threads: all registered, all counts flushed (leaf %lld, %zu threads)",
	   calls_of(p, "leaf"), p ? p->nthreads : 0);
	meter_profile_free(p);
}

static void alloc(void)
{
	char out[256], preload[PATH_MAX + 16];
	const char *args[] = { "alloc", "1000", NULL };
	const struct meter_func *f;
	struct meter_profile *p;

	/* what meter-run --alloc sets */
	snprintf(preload, sizeof(preload),
		 "LD_PRELOAD=%s/../../lib/libmeter-alloc.so", self_dir());
	setenv("METER_ALLOC", "1", 1);
	p = run_kernel_env("lib_workload_manual", args, out, sizeof(out),
			   "alloc", preload);
	unsetenv("METER_ALLOC");
	f = func_named(p, "allocator");
	ok(f && f->alloc_calls == 3000 && f->alloc_bytes == 400000,
	   "libmeter-alloc.so, METER_ALLOC=1: allocation calls and bytes reach the session (%llu calls, %llu bytes)",
	   f ? (unsigned long long)f->alloc_calls : 0ULL,
	   f ? (unsigned long long)f->alloc_bytes : 0ULL);
	meter_profile_free(p);
}

static void modules(void)
{
	char out[256], dso[PATH_MAX];
	const char *args[] = { dso, NULL };
	struct meter_profile *p;

	snprintf(dso, sizeof(dso), "%s/../host/liblibtest_opened.so",
		 self_dir());
	p = run_kernel("lib_modules", args, out, sizeof(out), "modules");
	ok(p && calls_of(p, "exe_func") == 10 && calls_of(p, "linked_func") == 10,
	   "records of the executable and a linked library reach the session");
	ok(p && calls_of(p, "opened_func") == 7,
	   "a library opened with dlopen during the run names its functions too");
	meter_profile_free(p);
}

int main(void)
{
	counts("manual");
	counts("auto");
	counts("plugin");
	counts("api");
	threads("manual");
	threads("auto");
	threads("plugin");
	alloc();
	modules();
	churn();
	scratch_cleanup();
	return tap_done();
}
