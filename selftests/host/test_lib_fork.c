// SPDX-License-Identifier: MIT
/*
 * A forked child gets its own profile: its own output file (METER_OUTPUT
 * with %p), only its own calls (the parent's are not counted twice), and
 * the parent's cookie as its parent_cookie.
 */
#include <dirent.h>

#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], out[256], env_out[PATH_MAX + 16], dir[PATH_MAX];
	char path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { "fork", "1000", NULL };
	struct meter_profile *pp[2] = { NULL, NULL }, *parent = NULL,
			     *child = NULL;
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(dir, sizeof(dir), "%s/fork-%s", scratch(), mode);
	mkdir(dir, 0700);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s/out.%%p.json", dir);
	ok(run_prog(prog, env, args, out, sizeof(out)) == 0,
	   "%s: forking workload exits 0", mode);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (n < 2)
			pp[n] = load_profile(path);
		n++;
	}
	if (d)
		closedir(d);
	ok(n == 2, "%s: parent and child each wrote their own file (%d files)",
	   mode, n);
	if (n != 2 || !pp[0] || !pp[1])
		goto out;
	parent = calls_of(pp[0], "main") == 1 && pp[0]->parent_cookie == 0 ?
		 pp[0] : pp[1];
	child = parent == pp[0] ? pp[1] : pp[0];
	ok(parent->pid != child->pid, "%s: the two files are two processes",
	   mode);
	ok(calls_of(parent, "leaf") == 1000,
	   "%s: parent's leaf reports its 1000 calls (got %lld)", mode,
	   calls_of(parent, "leaf"));
	ok(calls_of(child, "leaf") == 2000,
	   "%s: child's leaf reports only its own 2000 calls (got %lld)", mode,
	   calls_of(child, "leaf"));
	ok(child->parent_cookie == parent->cookie && parent->cookie,
	   "%s: child's parent_cookie is the parent's cookie", mode);
out:
	meter_profile_free(pp[0]);
	meter_profile_free(pp[1]);
}

/* Forks while 4 threads make profiled calls: no child inherits a lock. */
static void busy(const char *mode)
{
	char prog[64], out[256], env_out[PATH_MAX + 16], dir[PATH_MAX];
	char path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { "forkbusy", "30", NULL };
	struct dirent *de;
	DIR *d;
	int files = 0, exact = 0;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(dir, sizeof(dir), "%s/forkbusy-%s", scratch(), mode);
	mkdir(dir, 0700);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s/out.%%p.json", dir);
	ok(run_prog(prog, env, args, out, sizeof(out)) == 0 &&
	   strstr(out, "children_failed=0"),
	   "%s: 30 forks while 4 threads make profiled calls: every child exits 0",
	   mode);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct meter_profile *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		p = load_profile(path);
		files++;
		if (p && p->parent_cookie && calls_of(p, "leaf") == 100)
			exact++;
		meter_profile_free(p);
	}
	if (d)
		closedir(d);
	ok(files == 31 && exact == 30,
	   "%s: 30 children's files with exactly their own 100 calls (%d files, %d exact)",
	   mode, files, exact);
}

int main(void)
{
	check("manual");
	check("auto");
	check("plugin");
	busy("manual");
	busy("auto");
	busy("plugin");
	scratch_cleanup();
	return tap_done();
}
