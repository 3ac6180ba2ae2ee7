// SPDX-License-Identifier: MIT
/*
 * Backend choice without meter.ko (this host has no module support):
 * auto falls back to the signal backend with one line on stderr, which
 * METER_QUIET=1 silences; signal says once that it is tick-limited;
 * kernel explains that the module is missing and counts calls only;
 * METER_OUTPUT's %p is the pid.
 */
#include "lib_tap.h"
#include "nldump.h"

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static struct meter_profile *run(const char *const *env, char *out,
				 size_t outlen, const char *path)
{
	const char *args[] = { "counts", "100", NULL };

	run_stderr = 1;
	if (run_prog("lib_workload_manual", env, args, out, outlen))
		diag("workload failed: %s", out);
	run_stderr = 0;
	return load_profile(path);
}

int main(void)
{
	char out[2048], env_out[PATH_MAX + 16], path[PATH_MAX];
	char pattern[PATH_MAX + 16], expect[PATH_MAX + 32];
	struct meter_profile *p;
	struct meter_nl *nl;

	if (meter_nl_open(&nl, out, sizeof(out)) == 0) {
		meter_nl_close(nl);
		printf("1..0 # SKIP meter.ko is reachable on this machine\n");
		return 4;
	}
	snprintf(path, sizeof(path), "%s/b.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	{
		const char *env[] = { "METER_BACKEND=auto", env_out, NULL };

		p = run(env, out, sizeof(out), path);
		ok(p && !strcmp(p->backend, "signal"),
		   "auto without meter.ko: the signal backend");
		ok(strstr(out, "meter.ko not available") && lines(out) == 2,
		   "auto: one line on stderr says so (besides the program's own)");
		meter_profile_free(p);
	}
	{
		const char *env[] = { "METER_BACKEND=auto", "METER_QUIET=1",
				      env_out, NULL };

		p = run(env, out, sizeof(out), path);
		ok(p && lines(out) == 1, "METER_QUIET=1: no notice");
		meter_profile_free(p);
	}
	{
		const char *env[] = { "METER_BACKEND=signal", env_out, NULL };

		p = run(env, out, sizeof(out), path);
		ok(p && !strcmp(p->backend, "signal") &&
		   strstr(out, "scheduler tick") && lines(out) == 2,
		   "signal: says once that it is limited to the scheduler tick");
		meter_profile_free(p);
	}
	{
		const char *env[] = { "METER_BACKEND=kernel", env_out, NULL };

		p = run(env, out, sizeof(out), path);
		ok(strstr(out, "METER_BACKEND=kernel") != NULL,
		   "kernel without meter.ko: says why on stderr");
		ok(p && !strcmp(p->backend, "off") && calls_of(p, "leaf") == 400,
		   "kernel without meter.ko: counts calls only, exactly");
		meter_profile_free(p);
	}
	{
		snprintf(pattern, sizeof(pattern), "METER_OUTPUT=%s/pid-%%p.json",
			 scratch());
		const char *env[] = { "METER_BACKEND=off", "METER_QUIET=1",
				      pattern, NULL };
		const char *args[] = { "counts", "1", NULL };

		ok(run_prog("lib_workload_manual", env, args, out, sizeof(out)) == 0,
		   "off backend with %%p in METER_OUTPUT exits 0");
		snprintf(expect, sizeof(expect), "%s/pid-%d.json", scratch(),
			 (int)last_pid);
		ok(access(expect, F_OK) == 0, "%%p in METER_OUTPUT is the pid");
	}
	scratch_cleanup();
	return tap_done();
}
