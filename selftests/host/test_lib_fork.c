// SPDX-License-Identifier: MIT
/*
 * A forked child gets its own profile: its own output file (METER_OUTPUT
 * with %p) or its own session, only its own calls (the parent's are not
 * counted twice), and the parent's cookie as its parent_cookie.  Forks
 * while threads make profiled calls leave no child holding a lock.  A
 * child that leaves with _exit() still writes its profile; a vfork child
 * that does touches nothing of its parent's.  In each mode (the
 * variants); the signal backend on the host, meter.ko in the VM
 * (selftests/vm/test_lib_fork.sh, lib_backend.h), where no sample of the
 * child is invalid either, also at 10 us a sample: the child's page keeps
 * the parent's frames, whose ids its session learns only after it has
 * registered (a machine with its other core busy gave 1 to 4 invalid
 * samples at 1 ms).
 */
#include "lib_backend.h"

/* lib_workload_MODE WHAT N; its children's profiles, the first keep of
 * them in pp[] */
static int run_forks(struct backend_run *r, const char *mode,
		     const char *what, const char *n, const char *extra,
		     struct meter_profile **pp, int keep)
{
	char prog[64];
	const char *args[] = { what, n, NULL };

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	backend_run(r, prog, "signal", args, what, extra);
	return r->p ? backend_children(r, pp, keep) : -1;
}

FIXTURE(fork) {
	struct backend_run r;
	struct meter_profile *parent, *child;
};

FIXTURE_VARIANT(fork) {
	const char *mode, *what;
	const char *extra;	/* "K=V" for the run, or NULL */
};

FIXTURE_VARIANT_ADD(fork, manual) { .mode = "manual", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, automatic) { .mode = "auto", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, plugin) { .mode = "plugin", .what = "fork" };
FIXTURE_VARIANT_ADD(fork, manual__exit) {
	.mode = "manual", .what = "fork_exit" };
FIXTURE_VARIANT_ADD(fork, automatic__exit) {
	.mode = "auto", .what = "fork_exit" };
FIXTURE_VARIANT_ADD(fork, plugin__exit) {
	.mode = "plugin", .what = "fork_exit" };
FIXTURE_VARIANT_ADD(fork, plugin_10us) {
	.mode = "plugin", .what = "fork", .extra = "METER_PERIOD_NS=10000" };

/* "fork 1000": the parent calls leaf 1000 times, forks, the child 2000,
 * spins 100 ms and exit()s; "fork_exit 1000": the child _exit()s */
FIXTURE_SETUP(fork)
{
	int children;

	self->child = NULL;
	children = run_forks(&self->r, variant->mode, variant->what, "1000",
			     variant->extra, &self->child, 1);
	ASSERT_BACKEND_RUN(&self->r);
	self->parent = self->r.p;
	ASSERT_EQ(1, children) TH_LOG("the child has its own profile");
	ASSERT_NE(NULL, self->child);
}

FIXTURE_TEARDOWN(fork)
{
	meter_profile_free(self->r.p);
	meter_profile_free(self->child);
	scratch_cleanup();
}

TEST_F(fork, the_two_profiles_are_two_processes)
{
	EXPECT_NE(self->parent->pid, self->child->pid);
}

TEST_F(fork, parent_reports_its_own_calls)
{
	EXPECT_EQ(1000, calls_of(self->parent, "leaf"));
}

TEST_F(fork, child_reports_only_its_own_calls)
{
	EXPECT_EQ(2000, calls_of(self->child, "leaf"));
}

TEST_F(fork, child_keeps_its_time_by_exit_or__exit)
{
	const struct meter_func *spin = func_named(self->child, "spin");

	ASSERT_NE(NULL, spin);
	EXPECT_EQ(1, spin->calls);
	/* it spun 100 ms of CPU: sampled, or counted as missed */
	EXPECT_LE(50, accounted_ms(self->child));
	EXPECT_EQ(0, self->child->invalid);
	/* meter.ko misses none of it: its tick runs on the child's CPU time */
	if (on_kernel())
		EXPECT_LT(0, spin->self_samples);
}

TEST_F(fork, child_names_the_parent_cookie)
{
	EXPECT_NE(0, self->parent->cookie);
	EXPECT_EQ(self->parent->cookie, self->child->parent_cookie);
}

FIXTURE(forkbusy) {
	struct backend_run r;
	int children, exact;
};

FIXTURE_VARIANT(forkbusy) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(forkbusy, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(forkbusy, automatic) { .mode = "auto" };
FIXTURE_VARIANT_ADD(forkbusy, plugin) { .mode = "plugin" };

/*
 * make check-asan: GCC 12's ASan allocator takes no lock around fork, so a
 * child forked while another thread is inside it (here the 4 threads
 * start and register, calloc, as the forks begin) can hang for good in
 * LeakSanitizer's check at its exit.
 */
#define FORKBUSY_ASAN_SKIP()						\
	do {								\
		if (getenv("METER_ASAN"))				\
			SKIP(return, "ASan's allocator is not fork-safe: a child forked while threads allocate can hang"); \
	} while (0)

/* "forkbusy 30": 30 forks while 4 threads make profiled calls; each
 * child calls leaf 100 times */
FIXTURE_SETUP(forkbusy)
{
	struct meter_profile *pp[64] = { NULL };
	int i;

	FORKBUSY_ASAN_SKIP();
	self->children = run_forks(&self->r, variant->mode, "forkbusy", "30",
				   NULL, pp, 64);
	self->exact = 0;
	for (i = 0; i < self->children && i < 64; i++) {
		self->exact += pp[i] && calls_of(pp[i], "leaf") == 100;
		meter_profile_free(pp[i]);
	}
}

FIXTURE_TEARDOWN(forkbusy)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(forkbusy, every_child_exits_0)
{
	FORKBUSY_ASAN_SKIP();
	EXPECT_EQ(0, self->r.status);
	EXPECT_NE(NULL, strstr(self->r.out, "children_failed=0"));
}

TEST_F(forkbusy, each_child_profile_has_exactly_its_own_calls)
{
	FORKBUSY_ASAN_SKIP();
	ASSERT_NE(NULL, self->r.p);
	EXPECT_EQ(30, self->children);
	EXPECT_EQ(30, self->exact);
}

/* "vfork 100": leaf, then a vfork child that _exit()s at once, 100 times */
FIXTURE(vfork) {
	struct backend_run r;
	int children;
};

FIXTURE_VARIANT(vfork) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(vfork, manual) { .mode = "manual" };
FIXTURE_VARIANT_ADD(vfork, plugin) { .mode = "plugin" };

FIXTURE_SETUP(vfork)
{
	self->children = run_forks(&self->r, variant->mode, "vfork", "100",
				   NULL, NULL, 0);
}

FIXTURE_TEARDOWN(vfork)
{
	meter_profile_free(self->r.p);
	scratch_cleanup();
}

TEST_F(vfork, a_vfork_child_leaving_with__exit_touches_no_profile)
{
	ASSERT_BACKEND_RUN(&self->r);
	EXPECT_EQ(0, self->children) TH_LOG("only the parent has a profile");
	EXPECT_EQ(100, calls_of(self->r.p, "leaf"));
	EXPECT_EQ(1, calls_of(self->r.p, "spin"));
	EXPECT_EQ(1, printed_depth(self->r.out)) TH_LOG("the stack came back");
}

TEST_HARNESS_MAIN
