// SPDX-License-Identifier: MIT
/*
 * Flat functions (METER_FUNCTION_FLAT, Appel's scheme: count the call,
 * become current, the caller current again on return; nothing pushed):
 * exact call counts, self time where it was spent (signal backend), the
 * caller's current and depth restored on return, and the sampled stacks
 * follow the rule of Documentation/libmeter.md: the stacked chain, then
 * the current flat function as the leaf.  The test re-runs itself as the
 * profiled program ("child").  The VM runs it on meter.ko
 * (selftests/vm/test_lib_flat.sh, lib_backend.h).
 */
#include <math.h>
#include <time.h>

#include "lib_backend.h"
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

static double share(const struct meter_profile *p, const char *name)
{
	const struct meter_func *f = func_named(p, name);
	uint64_t all = 0;
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		all += p->funcs[i].self_samples;
	return f && all ? 100.0 * (double)f->self_samples / (double)all : -1;
}

/* this executable as the profiled program, signal backend at 1 ms */
FIXTURE(flat) {
	struct backend_run r;
	struct meter_profile *p;
};

FIXTURE_SETUP(flat)
{
	const char *args[] = { "child", NULL };

	backend_run(&self->r, "test_lib_flat", "signal", args, "flat",
		    "METER_PERIOD_NS=1000000");
	ASSERT_BACKEND_RUN(&self->r);
	self->p = self->r.p;
}

FIXTURE_TEARDOWN(flat)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(flat, return_makes_the_caller_current_again_depth_unchanged)
{
	EXPECT_NE(NULL, strstr(self->r.out, "restored=1 current_main=1 depth=1"))
		TH_LOG("%s", self->r.out);
}

TEST_F(flat, exact_call_counts)
{
	EXPECT_EQ(100000, calls_of(self->p, "tiny"));
	EXPECT_EQ(1, calls_of(self->p, "flat_spin"));
	EXPECT_EQ(1, calls_of(self->p, "flat_mid"));
	EXPECT_EQ(1, calls_of(self->p, "stacked_child"));
	EXPECT_EQ(1, calls_of(self->p, "parent"));
}

/* burnt: parent 100 ms, flat_spin 200, flat_mid 2 x 50, stacked_child 50 */
TEST_F(flat, self_time_where_it_was_spent)
{
	if (on_kernel())
		SKIP(return, "shares are the host's to check: a VM stalled by its host can weigh many periods at once (%.1f %.1f %.1f %.1f%%, expected 22.2 44.4 22.2 11.1)",
		     share(self->p, "parent"), share(self->p, "flat_spin"),
		     share(self->p, "flat_mid"),
		     share(self->p, "stacked_child"));
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_GT(8.0, fabs(share(self->p, "parent") - 100.0 / 4.5));
	EXPECT_GT(8.0, fabs(share(self->p, "flat_spin") - 200.0 / 4.5));
	EXPECT_GT(8.0, fabs(share(self->p, "flat_mid") - 100.0 / 4.5));
	EXPECT_GT(8.0, fabs(share(self->p, "stacked_child") - 50.0 / 4.5));
}

/* the stack rule: the stacked chain, then the flat function */
TEST_F(flat, flat_function_is_the_leaf_over_the_stacked_chain)
{
	const struct meter_func *f = func_named(self->p, "flat_spin");

	ASSERT_NE(NULL, f);
	SKIP_IF_SIGNAL_STARVED(self->p);
	ASSERT_LT(0, f->self_samples);
	EXPECT_EQ(f->self_samples,
		  samples_of_stack(self->p, "child;parent;flat_spin"));
	EXPECT_EQ(f->self_samples, f->total_samples);
}

TEST_F(flat, stacked_callee_hangs_from_the_nearest_stacked_frame)
{
	SKIP_IF_SIGNAL_STARVED(self->p);
	EXPECT_LT(0, samples_of_stack(self->p, "child;parent;stacked_child"));
	EXPECT_EQ(0, samples_of_stack(self->p,
				      "child;parent;flat_mid;stacked_child"));
}

/* lib_workload built with -DMETER_FLAT against the stacked build */
FIXTURE(flat_build) {
	struct backend_run m, f;
};

FIXTURE_VARIANT(flat_build) {
	const char *args[4];
};

FIXTURE_VARIANT_ADD(flat_build, counts) { { "counts", "1000", NULL } };
FIXTURE_VARIANT_ADD(flat_build, threads) { { "threads", "4", "1000", NULL } };
FIXTURE_VARIANT_ADD(flat_build, longjmp) { { "longjmp", "300", "20", NULL } };

FIXTURE_SETUP(flat_build)
{
	backend_run(&self->m, "lib_workload_manual", "off", variant->args,
		    "stacked", NULL);
	ASSERT_BACKEND_RUN(&self->m);
	backend_run(&self->f, "lib_workload_flat", "off", variant->args,
		    "flat", NULL);
	ASSERT_BACKEND_RUN(&self->f);
}

FIXTURE_TEARDOWN(flat_build)
{
	meter_profile_free(self->m.p);
	meter_profile_free(self->f.p);
	scratch_cleanup();
}

TEST_F(flat_build, nothing_pushed)
{
	EXPECT_EQ(0, printed_depth(self->f.out));
}

TEST_F(flat_build, same_call_counts_as_the_stacked_build)
{
	const struct meter_profile *m = self->m.p;
	size_t i;

	ASSERT_LT(0, m->nfuncs);
	for (i = 0; i < m->nfuncs; i++)
		EXPECT_EQ((long long)m->funcs[i].calls,
			  calls_of(self->f.p, m->funcs[i].name))
			TH_LOG("%s", m->funcs[i].name);
}

/* "child": the profiled program, this executable again; else the tests */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	return test_harness_run(argc, argv);
}
