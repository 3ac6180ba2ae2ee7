// SPDX-License-Identifier: MIT
/*
 * The explicit API for runtimes: meter_record_register() hands out
 * distinct records, meter_enter()/meter_leave() count calls and nest, a
 * leave of an outer record pops the frames above it, a leave of a record
 * that is not on the stack changes nothing.  The test re-runs itself as
 * the profiled program ("child") and reads back the profile.
 */
#include "kselftest_harness.h"
#include "lib_run.h"
#include "meter.h"

static unsigned depth(void)
{
	const struct meter__page_hdr *pg =
		(const struct meter__page_hdr *)meter__tls.page;

	return pg ? pg->depth : 0;
}

static unsigned current(void)
{
	const struct meter__page_hdr *pg =
		(const struct meter__page_hdr *)meter__tls.page;

	return pg ? pg->current_id : 0;
}

static int child(void)
{
	meter_record_t *a = meter_record_register("interp_a");
	meter_record_t *b = meter_record_register("interp_b");
	meter_record_t *a2 = meter_record_register("interp_a");
	int i;

	printf("distinct=%d\n", a && b && a2 && a->id != b->id &&
	       a->id != a2->id && b->id != a2->id);
	for (i = 0; i < 3; i++) {
		meter_enter(a);
		meter_enter(b);
		meter_leave(b);
		meter_leave(a);
	}
	printf("balanced=%u\n", depth());
	meter_enter(a);
	meter_enter(b);
	printf("nested_current_is_b=%d\n", current() == b->id);
	meter_leave(a);	/* b was never left: popped with a */
	printf("after_outer_leave=%u\n", depth());
	meter_enter(a);
	meter_leave(b);	/* not on the stack: nothing happens */
	printf("after_stray_leave=%u current_is_a=%d\n", depth(),
	       current() == a->id);
	meter_leave(a);
	printf("backend=%s\n", meter_backend());
	return 0;
}

FIXTURE(api) {
	struct meter_profile *p;
	char out[1024];
};

FIXTURE_SETUP(api)
{
	char env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=off", env_out, "METER_QUIET=1",
			      NULL };
	const char *args[] = { "child", NULL };

	snprintf(path, sizeof(path), "%s/api.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ASSERT_EQ(0, run_prog("test_lib_api", env, args, self->out,
			      sizeof(self->out)));
	self->p = load_profile(path);
	ASSERT_NE(NULL, self->p);
}

FIXTURE_TEARDOWN(api)
{
	meter_profile_free(self->p);
	scratch_cleanup();
}

TEST_F(api, each_register_gives_its_own_record_even_for_one_name)
{
	EXPECT_NE(NULL, strstr(self->out, "distinct=1"));
}

TEST_F(api, balanced_enter_leave_return_to_depth_zero)
{
	EXPECT_NE(NULL, strstr(self->out, "balanced=0"));
}

TEST_F(api, innermost_entered_record_is_current)
{
	EXPECT_NE(NULL, strstr(self->out, "nested_current_is_b=1"));
}

TEST_F(api, leaving_an_outer_record_pops_the_frames_above)
{
	EXPECT_NE(NULL, strstr(self->out, "after_outer_leave=0"));
}

TEST_F(api, leaving_a_record_not_on_the_stack_changes_nothing)
{
	EXPECT_NE(NULL, strstr(self->out, "after_stray_leave=1 current_is_a=1"));
}

TEST_F(api, meter_backend_names_the_backend)
{
	EXPECT_NE(NULL, strstr(self->out, "backend=off"));
}

TEST_F(api, explicit_records_report_their_calls)
{
	const struct meter_func *b = func_named(self->p, "interp_b");

	ASSERT_NE(NULL, b);
	EXPECT_EQ(4, b->calls);
}

/* "child": the profiled program, this executable again; else the tests */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	return test_harness_run(argc, argv);
}
