/* SPDX-License-Identifier: MIT */
/*
 * Helpers for libmeter's tests: running a workload under a backend with
 * its environment, and reading back the profile it wrote.  The tests
 * report through kselftest_harness.h; nothing here prints TAP.
 */
#ifndef LIB_RUN_H
#define LIB_RUN_H

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"
#include "names.h"

/* paths in these tests are short; snprintf truncation is checked by use */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define TAP_HELPER static __attribute__((unused))

static pid_t last_pid;	/* of the last run_prog() */
static uid_t run_uid;	/* non-zero: run_prog() runs as this uid and gid */
static int run_stderr;	/* non-zero: run_prog() captures stderr too */

/* The directory of this executable: the workloads sit next to it. */
TAP_HELPER const char *self_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (!dir[0]) {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n < 0)
			return ".";
		exe[n] = 0;
		snprintf(dir, sizeof(dir), "%s", dirname(exe));
	}
	return dir;
}

static char tmpdir[PATH_MAX];

TAP_HELPER const char *scratch(void)
{
	if (!tmpdir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(tmpdir, sizeof(tmpdir), "%s/libmeter-test.XXXXXX",
			 t && *t ? t : "/tmp");
		if (!mkdtemp(tmpdir))
			snprintf(tmpdir, sizeof(tmpdir), "/tmp");
	}
	return tmpdir;
}

TAP_HELPER void scratch_cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (tmpdir[0] && strcmp(tmpdir, "/tmp")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			printf("# could not remove %s\n", tmpdir);
	}
}

/*
 * Runs dir/prog with args (NULL-terminated) and extra environment (NULL-
 * terminated "K=V"); stdout goes to out (if not NULL).  Returns the exit
 * status, or -1 when it did not exit normally.
 */
TAP_HELPER int run_prog(const char *prog, const char *const *env,
		    const char *const *args, char *out, size_t outlen)
{
	char path[PATH_MAX];
	const char *argv[16];
	int pfd[2], st, i;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", self_dir(), prog);
	argv[0] = path;
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	if (pipe(pfd))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		if (run_stderr)
			dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		if (run_uid && (setgid(run_uid) || setuid(run_uid)))
			_exit(126);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	last_pid = pid;
	{
		size_t n = 0;
		ssize_t r;
		char buf[512];

		while ((r = read(pfd[0], buf, sizeof(buf))) > 0) {
			if (out && n + (size_t)r < outlen) {
				memcpy(out + n, buf, (size_t)r);
				n += (size_t)r;
			}
		}
		if (out)
			out[n] = 0;
	}
	close(pfd[0]);
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

TAP_HELPER struct meter_profile *load_profile(const char *path)
{
	char err[256];
	struct meter_profile *p;
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("# %s: %s\n", path, strerror(errno));
		return NULL;
	}
	p = meter_profile_read_json(f, err, sizeof(err));
	fclose(f);
	if (!p)
		printf("# %s: %s\n", path, err);
	return p;
}

/* A name without its C++ parameter list: "leaf(int)" is "leaf". */
TAP_HELPER int same_name(const char *full, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(full, name, n) && (!full[n] || full[n] == '(');
}

TAP_HELPER const struct meter_func *func_named(const struct meter_profile *p,
					   const char *name)
{
	size_t i;

	for (i = 0; p && i < p->nfuncs; i++)
		if (same_name(p->funcs[i].name, name))
			return &p->funcs[i];
	return NULL;
}

TAP_HELPER long long calls_of(const struct meter_profile *p, const char *name)
{
	const struct meter_func *f = func_named(p, name);

	return f ? (long long)f->calls : -1;
}

/*
 * lib_cxx_names' Deep<Long, I>::run(), I in 0..999, in p: how many rows
 * there are (one each, named whole, or cut with a hash past what the
 * backend keeps), how many have other than I % 5 + 1 calls (whole names
 * only), and how many distinct names reports give them (names.h).
 */
struct cxx_rows {
	int rows, cut, bad_calls, report_names;
};

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

TAP_HELPER struct cxx_rows cxx_names_rows(const struct meter_profile *p)
{
	struct cxx_rows r = { 0, 0, 0, 0 };
	const char **whole = calloc(p->nfuncs + 1, sizeof(*whole));
	char **shown = calloc(p->nfuncs + 1, sizeof(*shown));
	size_t i, n = 0;

	for (i = 0; whole && i < p->nfuncs; i++) {
		const char *name = p->funcs[i].name, *at;

		if (strncmp(name, "Deep<", 5))
			continue;
		whole[n++] = name;
		r.rows++;
		at = strstr(name, ">::run()");
		if (!at) {
			r.cut++;
			continue;
		}
		while (at > name && at[-1] >= '0' && at[-1] <= '9')
			at--;
		if (p->funcs[i].calls != (uint64_t)(atoi(at) % 5 + 1))
			r.bad_calls++;
	}
	if (shown && !names_short(shown, whole, n)) {
		qsort(shown, n, sizeof(*shown), cmp_strp);
		for (i = 0; i < n; i++)
			r.report_names += !i || strcmp(shown[i], shown[i - 1]);
		for (i = 0; i < n; i++)
			free(shown[i]);
	}
	free(shown);
	free(whole);
	return r;
}

/*
 * Over the truncated stacks of p: their samples, those whose leaf is the
 * function named leaf, and those whose root is the function named root.
 */
/*
 * The signal backend, on a loaded machine, missed a quarter or more of
 * the threads' CPU time (it says so: unsampled_ns; unloaded it misses a
 * few periods): its signals then came unevenly, and shares and sample
 * counts say nothing a test could check.  The tests that need them skip,
 * naming the figures.
 */
#define SKIP_IF_SIGNAL_STARVED(p)					\
	do {								\
		if ((p)->unsampled_ns * 4 >				\
		    (p)->samples * (p)->period_ns)			\
			SKIP(return, "the signal backend missed %llu ms of "\
			     "CPU time and sampled %llu: the machine is too "\
			     "loaded for its shares",			\
			     (unsigned long long)((p)->unsampled_ns / 1000000),\
			     (unsigned long long)((p)->samples *		\
				(p)->period_ns / 1000000));		\
	} while (0)

/* Samples as CPU time, with what the signal backend says it missed. */
TAP_HELPER uint64_t accounted_ms(const struct meter_profile *p)
{
	return (p->samples * p->period_ns + p->unsampled_ns) / 1000000;
}

TAP_HELPER void truncated_ends(const struct meter_profile *p, const char *leaf,
			       const char *root, uint64_t *truncated,
			       uint64_t *at_leaf, uint64_t *at_root)
{
	const struct meter_func *lf = p ? func_named(p, leaf) : NULL;
	const struct meter_func *rt = p ? func_named(p, root) : NULL;
	size_t i;

	*truncated = *at_leaf = *at_root = 0;
	for (i = 0; lf && rt && i < p->nstacks; i++) {
		const struct meter_stack *st = &p->stacks[i];

		if (!st->truncated || !st->depth)
			continue;
		*truncated += st->samples;
		if (st->frames[st->depth - 1] == lf->id)
			*at_leaf += st->samples;
		if (st->frames[0] == rt->id)
			*at_root += st->samples;
	}
}

/*
 * Samples of the stacks whose leaf is leaf, and of those the ones whose
 * frame before the leaf is caller.
 */
TAP_HELPER void leaf_callers(const struct meter_profile *p, const char *leaf,
			     const char *caller, uint64_t *at_leaf,
			     uint64_t *from_caller)
{
	const struct meter_func *lf = p ? func_named(p, leaf) : NULL;
	const struct meter_func *cf = p ? func_named(p, caller) : NULL;
	size_t i;

	*at_leaf = *from_caller = 0;
	for (i = 0; lf && cf && i < p->nstacks; i++) {
		const struct meter_stack *st = &p->stacks[i];

		if (!st->depth || st->frames[st->depth - 1] != lf->id)
			continue;
		*at_leaf += st->samples;
		if (st->depth > 1 && st->frames[st->depth - 2] == cf->id)
			*from_caller += st->samples;
	}
}

/* "a;b;c" for a stack, using function names. */
TAP_HELPER void stack_string(const struct meter_profile *p,
			 const struct meter_stack *s, char *buf, size_t len)
{
	size_t n = 0;
	uint32_t i;

	buf[0] = 0;
	for (i = 0; i < s->depth && n < len; i++) {
		const struct meter_func *f = meter_profile_find(p, s->frames[i]);

		const char *nm = f ? f->name : "?";

		n += (size_t)snprintf(buf + n, len - n, "%s%.*s", i ? ";" : "",
				      (int)strcspn(nm, "("), nm);
	}
}

/* The samples of the stack "a;b;c" on threads other than off_tid (0: on
 * every thread). */
TAP_HELPER uint64_t samples_of_stack_off(const struct meter_profile *p,
				     const char *want, uint32_t off_tid)
{
	char buf[4096];
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < p->nstacks; i++) {
		if (off_tid && (!p->stacks[i].tid ||
				p->stacks[i].tid == off_tid))
			continue;
		stack_string(p, &p->stacks[i], buf, sizeof(buf));
		if (!strcmp(buf, want))
			n += p->stacks[i].samples;
	}
	return n;
}

TAP_HELPER uint64_t samples_of_stack(const struct meter_profile *p,
				 const char *want)
{
	return samples_of_stack_off(p, want, 0);
}

/* "stack N, ..." for each stack whose leaf is leaf, into buf (what a
 * failed count of one stack shows of the others). */
TAP_HELPER void stacks_of_leaf(const struct meter_profile *p,
			       const char *leaf, char *out, size_t len)
{
	size_t i, n = 0, l = strlen(leaf), k;
	char buf[4096];

	out[0] = 0;
	for (i = 0; i < p->nstacks && n < len; i++) {
		stack_string(p, &p->stacks[i], buf, sizeof(buf));
		k = strlen(buf);
		if (k < l || strcmp(buf + k - l, leaf) ||
		    (k > l && buf[k - l - 1] != ';'))
			continue;
		n += (size_t)snprintf(out + n, len - n, "%s%s %llu",
				      n ? ", " : "", buf,
				      (unsigned long long)p->stacks[i].samples);
	}
}

/*
 * Runs PROG (next to this test, or a path relative to it) with
 * METER_BACKEND=backend, METER_QUIET=1, extra ("K=V" or NULL) and its
 * profile written to scratch()/label.json; *status is its exit status
 * (run_prog()); returns the profile it wrote (NULL if none).
 */
TAP_HELPER struct meter_profile *run_profile(const char *prog,
					     const char *backend,
					     const char *const *args,
					     char *out, size_t outlen,
					     const char *label,
					     const char *extra, int *status)
{
	char env_out[PATH_MAX + 16], env_b[64], path[PATH_MAX];
	const char *env[] = { env_b, env_out, "METER_QUIET=1", extra, NULL };
	char *c;

	snprintf(path, sizeof(path), "%s/%s.json", scratch(), label);
	for (c = path + strlen(scratch()) + 1; *c; c++)
		if (*c == ' ' || *c == '/')
			*c = '-';
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	snprintf(env_b, sizeof(env_b), "METER_BACKEND=%s", backend);
	*status = run_prog(prog, env, args, out, outlen);
	return access(path, F_OK) ? NULL : load_profile(path);
}

/* The spin workload's functions, called in every mode. */
static const char *const spin_names[] = { "main", "a", "b", "c", "spin" };

/* True when a and b both call each of spin_names, equally often. */
TAP_HELPER int same_spin_calls(const struct meter_profile *a,
			       const struct meter_profile *b)
{
	size_t i;

	if (!a || !b)
		return 0;
	for (i = 0; i < sizeof(spin_names) / sizeof(*spin_names); i++)
		if (calls_of(a, spin_names[i]) < 1 ||
		    calls_of(a, spin_names[i]) != calls_of(b, spin_names[i]))
			return 0;
	return 1;
}

/* The depth=N line a workload prints. */
TAP_HELPER long printed_depth(const char *out)
{
	const char *d = strstr(out, "depth=");

	return d ? atol(d + 6) : -1;
}

#endif
