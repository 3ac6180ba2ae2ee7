// SPDX-License-Identifier: MIT
/*
 * Flat functions (METER_FUNCTION_FLAT, Appel's scheme: count the call,
 * become current, the caller current again on return; nothing pushed):
 * exact call counts, self time where it was spent (signal backend), the
 * caller's current and depth restored on return, and the sampled stacks
 * follow the rule of Documentation/libmeter.md: the stacked chain, then
 * the current flat function as the leaf.  The test re-runs itself as the
 * profiled program ("child").
 */
#include <math.h>
#include <time.h>

#include "lib_tap.h"
#include "meter.h"

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;

static unsigned long cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long)ts.tv_sec * 1000 +
	       (unsigned long)ts.tv_nsec / 1000000;
}

static void burn(unsigned long ms)
{
	unsigned long t0 = cpu_ms();

	while (cpu_ms() - t0 < ms)
		sink++;
}

static uint32_t cur_now(void)
{
	return ((const struct meter__page_hdr *)meter__tls.page)->current_id;
}

static uint32_t depth_now(void)
{
	return ((const struct meter__page_hdr *)meter__tls.page)->depth;
}

static int restored = 1;

NOINLINE static void tiny(unsigned long x)
{
	METER_FUNCTION_FLAT();
	sink += x;
}

NOINLINE static void flat_spin(unsigned long ms)
{
	METER_FUNCTION_FLAT();
	burn(ms);
}

NOINLINE static void stacked_child(unsigned long ms)
{
	METER_FUNCTION();
	burn(ms);
}

/* a flat function calling a stacked one: current comes back to it */
NOINLINE static void flat_mid(unsigned long ms)
{
	METER_FUNCTION_FLAT();
	uint32_t me = cur_now(), d = depth_now();

	burn(ms);
	stacked_child(ms);
	if (cur_now() != me || depth_now() != d)
		restored = 0;
	burn(ms);
}

NOINLINE static void parent(void)
{
	METER_FUNCTION();
	uint32_t me = cur_now(), d = depth_now();
	unsigned long i;

	burn(100);
	flat_spin(200);
	if (cur_now() != me || depth_now() != d)
		restored = 0;
	flat_mid(50);
	for (i = 0; i < 100000; i++)
		tiny(i);
	if (cur_now() != me || depth_now() != d)
		restored = 0;
}

static int child(void)
{
	METER_FUNCTION();
	uint32_t me = cur_now();

	parent();
	printf("restored=%d current_main=%d depth=%u\n", restored,
	       cur_now() == me, depth_now());
	return 0;
}

/* Every function of a has the same calls in b (and there is one). */
static int same_calls(const struct meter_profile *a,
		      const struct meter_profile *b)
{
	size_t i;

	if (!a || !b || !a->nfuncs)
		return 0;
	for (i = 0; i < a->nfuncs; i++)
		if (calls_of(b, a->funcs[i].name) != (long long)a->funcs[i].calls)
			return 0;
	return 1;
}

/* lib_workload built with -DMETER_FLAT against the stacked build. */
static void workload_flat(void)
{
	static const char *const runs[][4] = {
		{ "counts", "1000", NULL },
		{ "threads", "4", "1000", NULL },
		{ "longjmp", "300", "20", NULL },
	};
	struct meter_profile *m, *f;
	char out[1024], label[64];
	size_t i;

	for (i = 0; i < sizeof(runs) / sizeof(*runs); i++) {
		snprintf(label, sizeof(label), "stacked %s", runs[i][0]);
		m = run_backend("lib_workload_manual", "off", runs[i], out,
				sizeof(out), label, NULL);
		snprintf(label, sizeof(label), "-DMETER_FLAT %s", runs[i][0]);
		f = run_backend("lib_workload_flat", "off", runs[i], out,
				sizeof(out), label, NULL);
		ok(printed_depth(out) == 0,
		   "-DMETER_FLAT %s: nothing pushed (depth=%ld)", runs[i][0],
		   printed_depth(out));
		ok(same_calls(m, f),
		   "-DMETER_FLAT %s: the same call counts as METER_FUNCTION()",
		   runs[i][0]);
		meter_profile_free(m);
		meter_profile_free(f);
	}
}

static double share(const struct meter_profile *p, const char *name)
{
	const struct meter_func *f = func_named(p, name);
	uint64_t all = 0;
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		all += p->funcs[i].self_samples;
	return f && all ? 100.0 * (double)f->self_samples / (double)all : -1;
}

int main(int argc, char **argv)
{
	const char *args[] = { "child", NULL };
	static const struct {
		const char *name;
		double pct;
	} want[] = {
		{ "parent", 100.0 / 4.5 }, { "flat_spin", 200.0 / 4.5 },
		{ "flat_mid", 100.0 / 4.5 }, { "stacked_child", 50.0 / 4.5 },
	};
	const struct meter_func *f;
	struct meter_profile *p;
	char out[1024];
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	p = run_backend("test_lib_flat", "signal", args, out, sizeof(out),
			"flat, signal", "METER_PERIOD_NS=1000000");
	ok(strstr(out, "restored=1 current_main=1 depth=1") != NULL,
	   "a flat function's return makes its caller current again, depth unchanged (%.*s)",
	   (int)strcspn(out, "\n"), out);
	ok(p != NULL, "profile written");
	if (!p)
		return tap_done();
	ok(calls_of(p, "tiny") == 100000 && calls_of(p, "flat_spin") == 1 &&
	   calls_of(p, "flat_mid") == 1 && calls_of(p, "stacked_child") == 1 &&
	   calls_of(p, "parent") == 1,
	   "exact call counts (tiny %lld of 100000)", calls_of(p, "tiny"));
	for (i = 0; i < sizeof(want) / sizeof(*want); i++)
		ok(fabs(share(p, want[i].name) - want[i].pct) < 8.0,
		   "%s: self %.1f%% of the samples (expected %.1f%%)",
		   want[i].name, share(p, want[i].name), want[i].pct);
	/* the stack rule: the stacked chain, then the flat function */
	f = func_named(p, "flat_spin");
	ok(f && f->self_samples &&
	   samples_of_stack(p, "child;parent;flat_spin") == f->self_samples &&
	   f->total_samples == f->self_samples,
	   "flat_spin's samples have the stack child;parent;flat_spin (%llu of %llu)",
	   (unsigned long long)samples_of_stack(p, "child;parent;flat_spin"),
	   f ? (unsigned long long)f->self_samples : 0ULL);
	ok(samples_of_stack(p, "child;parent;stacked_child") > 0 &&
	   samples_of_stack(p, "child;parent;flat_mid;stacked_child") == 0,
	   "a stacked callee of a flat function hangs from the nearest stacked frame");
	meter_profile_free(p);
	workload_flat();
	scratch_cleanup();
	return tap_done();
}
