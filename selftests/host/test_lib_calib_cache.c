// SPDX-License-Identifier: MIT
/*
 * The calibration kept per machine (lib/meter_calib_cache.c): the first
 * process measures and writes its line, later ones take their figures from
 * it; a line for another key, a file that does not parse, a speed that
 * does not match and METER_CALIBRATE=1 each make the process measure; the
 * manual and automatic modes keep a line each; METER_CACHE_DIR=off keeps
 * nothing.  With the other cores busy, every later process still takes the
 * kept figures, and one kept at a quarter or four times this speed, or
 * under valgrind, is still measured over.
 */
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "lib_run.h"

static char dir[PATH_MAX], file[PATH_MAX + 16], env_dir[PATH_MAX + 32];

/* call_cost_ps of one run of the workload in mode, extra env or NULL */
static uint64_t cost_of(const char *mode, const char *label,
			const char *extra)
{
	char prog[64], path[PATH_MAX], env_out[PATH_MAX + 16];
	const char *args[] = { "spin", "1", NULL };
	const char *env[] = { "METER_BACKEND=off", "METER_QUIET=1", env_out,
			      env_dir, extra, NULL };
	struct meter_profile *p;
	uint64_t c = 0;
	int rc;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(path, sizeof(path), "%s/%s.json", scratch(), label);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	rc = run_prog(prog, env, args, NULL, 0);
	if (rc == 0 && !access(path, F_OK)) {
		p = load_profile(path);
		if (p)
			c = p->call_cost_ps;
		meter_profile_free(p);
	}
	if (!c)
		printf("# %s (%s): exit %d, no call cost in %s\n", prog,
		       label, rc, path);
	return c;
}

/* the file's lines, and the first numbers of the line for mode */
static int read_cache(const char *mode, uint64_t *ps, char *key, size_t len)
{
	char line[512], want[32];
	int n = 0;
	FILE *f = fopen(file, "r");

	*ps = 0;
	if (!f)
		return -1;
	snprintf(want, sizeof(want), "|mode=%s ", mode);
	while (fgets(line, sizeof(line), f)) {
		char *m = strstr(line, want);

		n++;
		if (m) {
			*ps = strtoull(m + strlen(want), NULL, 10);
			snprintf(key, len, "%.*s", (int)(m - line) +
				 (int)strlen(want) - 1, line);
		}
	}
	fclose(f);
	return n;
}

/* the uninstrumented call's kept time of the file's only line */
static int read_cache_plain(uint64_t *plain)
{
	char line[512] = "";
	char *sp;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	sp = strrchr(line, ' ');
	*plain = sp ? strtoull(sp + 1, NULL, 10) : 0;
	return *plain ? 1 : 0;
}

static void write_cache(const char *text)
{
	FILE *f = fopen(file, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* a fresh cache directory for this test's process */
static void cache_in_scratch(void)
{
	snprintf(dir, sizeof(dir), "%s/cache", scratch());
	snprintf(file, sizeof(file), "%s/calibration", dir);
	snprintf(env_dir, sizeof(env_dir), "METER_CACHE_DIR=%s", dir);
}

/* a first run's key, and a file whose line for it has the sentinel cost
 * 777 (the speed check's figure kept as measured) */
static void kept_sentinel(char *key, size_t len)
{
	char line[512] = "", text[600];
	uint64_t kept;
	char *sp;
	FILE *f;

	cost_of("manual", "first", NULL);
	read_cache("manual", &kept, key, len);
	f = fopen(file, "r");
	if (f) {
		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
	}
	sp = strrchr(line, ' ');
	snprintf(text, sizeof(text), "%s 777 333 %s", key,
		 sp ? sp + 1 : "1000\n");
	write_cache(text);
}

FIXTURE(cache) {
	char key[400];
};

FIXTURE_SETUP(cache)
{
	cache_in_scratch();
}

FIXTURE_TEARDOWN(cache)
{
	scratch_cleanup();
}

TEST_F(cache, first_process_measures_and_keeps_its_figures)
{
	uint64_t first = cost_of("manual", "first", NULL), kept;

	ASSERT_LT(0, first);
	EXPECT_EQ(1, read_cache("manual", &kept, self->key,
				sizeof(self->key)));
	EXPECT_EQ(first, kept);
}

TEST_F(cache, key_names_build_cpu_kernel_and_mode)
{
	uint64_t kept;

	cost_of("manual", "first", NULL);
	read_cache("manual", &kept, self->key, sizeof(self->key));
	EXPECT_NE(NULL, strstr(self->key, "build="));
	EXPECT_NE(NULL, strstr(self->key, "|cpu="));
	EXPECT_NE(NULL, strstr(self->key, "|kernel="));
	EXPECT_NE(NULL, strstr(self->key, "|mode=manual")) TH_LOG("%s", self->key);
}

TEST_F(cache, later_process_takes_the_kept_figures)
{
	kept_sentinel(self->key, sizeof(self->key));
	EXPECT_EQ(777, cost_of("manual", "kept", NULL));
}

TEST_F(cache, calibrate_1_measures_again_and_replaces_the_line)
{
	uint64_t c, kept;

	kept_sentinel(self->key, sizeof(self->key));
	c = cost_of("manual", "forced", "METER_CALIBRATE=1");
	read_cache("manual", &kept, self->key, sizeof(self->key));
	EXPECT_NE(777, c);
	EXPECT_EQ(c, kept);
}

TEST_F(cache, another_machines_line_is_not_used_and_kept)
{
	char text[600];
	uint64_t kept;

	kept_sentinel(self->key, sizeof(self->key));
	snprintf(text, sizeof(text), "X%s 777 333 1000\n", self->key);
	write_cache(text);
	EXPECT_NE(777, cost_of("manual", "otherkey", NULL));
	EXPECT_EQ(2, read_cache("manual", &kept, self->key,
				sizeof(self->key)));
}

/* an uninstrumented call of 1 ps: kept at another speed */
TEST_F(cache, figures_kept_at_another_speed_are_measured_over)
{
	char text[600];

	kept_sentinel(self->key, sizeof(self->key));
	snprintf(text, sizeof(text), "%s 777 333 1\n", self->key);
	write_cache(text);
	EXPECT_NE(777, cost_of("manual", "speed", NULL));
}

TEST_F(cache, file_that_does_not_parse_is_measured_over_and_replaced)
{
	uint64_t c, kept;

	write_cache("\x01\x02garbage 12 x\nkey 0 0 0\n\n");
	c = cost_of("manual", "garbage", NULL);
	ASSERT_LT(0, c);
	EXPECT_EQ(1, read_cache("manual", &kept, self->key,
				sizeof(self->key)));
	EXPECT_EQ(c, kept);
}

TEST_F(cache, automatic_mode_keeps_a_line_of_its_own)
{
	uint64_t c, kept;

	cost_of("manual", "first", NULL);
	c = cost_of("auto", "auto", NULL);
	EXPECT_EQ(2, read_cache("auto", &kept, self->key, sizeof(self->key)));
	EXPECT_EQ(c, kept);
}

/* off wins over the default place ($XDG_CACHE_HOME/meter), which would
 * be this test's directory */
TEST_F(cache, cache_dir_off_measures_and_keeps_nothing)
{
	char xdg[PATH_MAX + 32], dflt[PATH_MAX + 32];

	snprintf(xdg, sizeof(xdg), "XDG_CACHE_HOME=%s", scratch());
	snprintf(dflt, sizeof(dflt), "%s/meter/calibration", scratch());
	snprintf(env_dir, sizeof(env_dir), "METER_CACHE_DIR=off");
	EXPECT_LT(0, cost_of("manual", "off", xdg));
	EXPECT_NE(0, access(dflt, F_OK));
	EXPECT_NE(0, access(file, F_OK));
	EXPECT_NE(0, access("off/calibration", F_OK)) TH_LOG("off taken as a path");
}

/*
 * This process (and the workloads it starts) on the first CPU it may use,
 * one spinning child on each other: a loaded machine.
 */
FIXTURE(busy) {
	char key[400];
	pid_t burners[64];
	int nburners;
};

FIXTURE_SETUP(busy)
{
	cpu_set_t all, one;
	int cpu, first = -1;

	cache_in_scratch();
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(all), &all));
	self->nburners = 0;
	for (cpu = 0; cpu < CPU_SETSIZE && self->nburners < 64; cpu++) {
		pid_t pid;

		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (first < 0) {
			first = cpu;
			ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
			continue;
		}
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			volatile unsigned long spin = 0;

			sched_setaffinity(0, sizeof(one), &one);
			for (;;)
				spin++;
		}
		self->burners[self->nburners++] = pid;
	}
	if (!self->nburners)
		TH_LOG("one CPU: nothing else to load");
}

FIXTURE_TEARDOWN(busy)
{
	int i;

	for (i = 0; i < self->nburners; i++) {
		kill(self->burners[i], SIGKILL);
		waitpid(self->burners[i], NULL, 0);
	}
	scratch_cleanup();
}

TEST_F(busy, every_later_process_takes_the_kept_figures)
{
	int i, taken = 0;

	kept_sentinel(self->key, sizeof(self->key));
	for (i = 0; i < 20; i++)
		taken += cost_of("manual", "kept", NULL) == 777;
	EXPECT_EQ(20, taken);
}

/* the kept uninstrumented call 4x faster, then 4x slower than here */
TEST_F(busy, figures_kept_at_four_times_another_speed_are_measured_over)
{
	char text[600];
	uint64_t plain;

	kept_sentinel(self->key, sizeof(self->key));
	ASSERT_EQ(1, read_cache_plain(&plain));
	snprintf(text, sizeof(text), "%s 777 333 %" PRIu64 "\n", self->key,
		 plain / 4);
	write_cache(text);
	EXPECT_NE(777, cost_of("manual", "faster", NULL));
	snprintf(text, sizeof(text), "%s 777 333 %" PRIu64 "\n", self->key,
		 plain * 4);
	write_cache(text);
	EXPECT_NE(777, cost_of("manual", "slower", NULL));
}

/* valgrind: caught by its CPU, which is not this one, in the key */
TEST_F(busy, a_run_under_valgrind_measures_over)
{
	char path[PATH_MAX], cmd[3 * PATH_MAX + 200];
	struct meter_profile *p;

	if (system("valgrind --version >/dev/null 2>&1"))
		SKIP(return, "valgrind is not installed");
	if (getenv("METER_ASAN"))	/* make check-asan */
		SKIP(return, "valgrind cannot run a program built with ASan");
	kept_sentinel(self->key, sizeof(self->key));
	snprintf(path, sizeof(path), "%s/valgrind.json", scratch());
	snprintf(cmd, sizeof(cmd),
		 "METER_BACKEND=off METER_QUIET=1 METER_OUTPUT='%s' %s "
		 "valgrind --tool=none -q '%s/lib_workload_manual' spin 1 "
		 ">/dev/null", path, env_dir, self_dir());
	ASSERT_EQ(0, system(cmd));
	p = load_profile(path);
	ASSERT_NE(NULL, p);
	EXPECT_LT(0, p->call_cost_ps);
	EXPECT_NE(777, p->call_cost_ps);
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
