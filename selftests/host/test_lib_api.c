// SPDX-License-Identifier: MIT
/*
 * The explicit API for runtimes: meter_record_register() hands out
 * distinct records, meter_enter()/meter_leave() count calls and nest, a
 * leave of an outer record pops the frames above it, a leave of a record
 * that is not on the stack changes nothing.  The test re-runs itself as
 * the profiled program ("child") and reads back the profile.
 */
#include "lib_tap.h"
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

int main(int argc, char **argv)
{
	char out[1024], env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=off", env_out, "METER_QUIET=1",
			      NULL };
	const char *args[] = { "child", NULL };
	struct meter_profile *p;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	snprintf(path, sizeof(path), "%s/api.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ok(run_prog("test_lib_api", env, args, out, sizeof(out)) == 0,
	   "API program exits 0");
	ok(strstr(out, "distinct=1") != NULL,
	   "each meter_record_register() gives its own record, even for one name");
	ok(strstr(out, "balanced=0") != NULL, "balanced enter/leave pairs return to depth 0");
	ok(strstr(out, "nested_current_is_b=1") != NULL, "the innermost entered record is current");
	ok(strstr(out, "after_outer_leave=0") != NULL,
	   "leaving an outer record pops the frames above it");
	ok(strstr(out, "after_stray_leave=1 current_is_a=1") != NULL,
	   "leaving a record that is not on the stack changes nothing");
	ok(strstr(out, "backend=off") != NULL, "meter_backend() names the backend");
	p = load_profile(path);
	ok(p && func_named(p, "interp_b") && func_named(p, "interp_b")->calls == 4,
	   "explicit records report their calls (interp_b: 4)");
	meter_profile_free(p);
	scratch_cleanup();
	return tap_done();
}
