// SPDX-License-Identifier: MIT
/*
 * The calibration kept per machine (lib/meter_calib_cache.c): the first
 * process measures and writes its line, later ones take their figures from
 * it; a line for another key, a file that does not parse, a speed that
 * does not match and METER_CALIBRATE=1 each make the process measure; the
 * manual and automatic modes keep a line each; METER_CACHE_DIR=off keeps
 * nothing.
 */
#include "lib_tap.h"

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

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(path, sizeof(path), "%s/%s.json", scratch(), label);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	if (run_prog(prog, env, args, NULL, 0) == 0 && !access(path, F_OK)) {
		p = load_profile(path);
		if (p)
			c = p->call_cost_ps;
		meter_profile_free(p);
	}
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

static void write_cache(const char *text)
{
	FILE *f = fopen(file, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(void)
{
	char key[400], text[600];
	uint64_t first, kept, c;
	int lines;

	snprintf(dir, sizeof(dir), "%s/cache", scratch());
	snprintf(file, sizeof(file), "%s/calibration", dir);
	snprintf(env_dir, sizeof(env_dir), "METER_CACHE_DIR=%s", dir);

	first = cost_of("manual", "first", NULL);
	lines = read_cache("manual", &kept, key, sizeof(key));
	ok(lines == 1 && kept && kept == first,
	   "the first process measures and keeps its figures (%d line, %llu ps, profile %llu ps)",
	   lines, (unsigned long long)kept, (unsigned long long)first);
	ok(strstr(key, "build=") && strstr(key, "|cpu=") &&
	   strstr(key, "|kernel=") && strstr(key, "|mode=manual"),
	   "the key names the build, the CPU, the kernel and the mode (%s)",
	   key);

	/* A sentinel cost proves where a later process took its figures:
	 * the speed check's figure is the one just measured. */
	{
		FILE *f = fopen(file, "r");
		char line[512] = "";
		char *sp;

		if (f) {
			if (!fgets(line, sizeof(line), f))
				line[0] = 0;
			fclose(f);
		}
		sp = strrchr(line, ' ');
		snprintf(text, sizeof(text), "%s 777 333 %s", key,
			 sp ? sp + 1 : "1000\n");
	}
	write_cache(text);
	c = cost_of("manual", "kept", NULL);
	ok(c == 777, "a later process takes the kept figures (777 ps, got %llu)",
	   (unsigned long long)c);

	c = cost_of("manual", "forced", "METER_CALIBRATE=1");
	read_cache("manual", &kept, key, sizeof(key));
	ok(c != 777 && kept == c,
	   "METER_CALIBRATE=1 measures again and replaces the line (%llu ps)",
	   (unsigned long long)c);

	snprintf(text, sizeof(text), "X%s 777 333 1000\n", key);
	write_cache(text);
	c = cost_of("manual", "otherkey", NULL);
	lines = read_cache("manual", &kept, key, sizeof(key));
	ok(c != 777 && lines == 2,
	   "another machine's line is not used, and kept beside ours (%d lines)",
	   lines);

	snprintf(text, sizeof(text), "%s 777 333 1\n", key);
	write_cache(text);
	c = cost_of("manual", "speed", NULL);
	ok(c != 777,
	   "figures kept at another speed (an uninstrumented call of 1 ps) are measured over");

	write_cache("\x01\x02garbage 12 x\nkey 0 0 0\n\n");
	c = cost_of("manual", "garbage", NULL);
	lines = read_cache("manual", &kept, key, sizeof(key));
	ok(c && lines == 1 && kept == c,
	   "a file that does not parse is measured over and replaced (%d line)",
	   lines);

	c = cost_of("auto", "auto", NULL);
	lines = read_cache("auto", &kept, key, sizeof(key));
	ok(lines == 2 && kept == c,
	   "the automatic mode keeps a line of its own (%d lines)", lines);

	snprintf(env_dir, sizeof(env_dir), "METER_CACHE_DIR=off");
	unlink(file);
	c = cost_of("manual", "off", NULL);
	ok(c && access(file, F_OK) != 0,
	   "METER_CACHE_DIR=off: measured, nothing kept");

	scratch_cleanup();
	return tap_done();
}
