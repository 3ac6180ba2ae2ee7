/* SPDX-License-Identifier: MIT */
/*
 * One libmeter test for both machines.  On the host a run writes profile
 * files with the backend the test names ("off" or "signal"); in the VM,
 * selftests/vm/test_NAME.sh runs the same binary with
 * LIBTEST_BACKEND=kernel, and a run's profile is its session, read back
 * from meter.ko and deleted.  A forked child's profile is its own file
 * (METER_OUTPUT's %p) or its own session, whose parent_cookie is the
 * parent's cookie.
 */
#ifndef LIB_BACKEND_H
#define LIB_BACKEND_H

#include <dirent.h>
#include <stdbool.h>

#include "kselftest_harness.h"
#include "lib_run.h"

/*
 * A test's time limit: the harness's 30 s is for a native machine; under
 * TCG, and on the debug kernel, a workload takes many times longer (the
 * macro is read where TEST() expands, after this).
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600
#include "nldump.h"

static struct meter_nl *knl;

TAP_HELPER bool nl_ready(void)
{
	char err[256];

	if (!knl && meter_nl_open(&knl, err, sizeof(err))) {
		printf("# meter_nl_open: %s\n", err);
		return false;
	}
	return true;
}

/* A session's profile, deleted afterwards: a session left behind would
 * be another test's to trip over.  sel: its pid (the newest of it) or its
 * cookie. */
TAP_HELPER struct meter_profile *kernel_session(struct meter_nl_sel sel)
{
	struct meter_profile *p = NULL;
	char err[256];

	if (!nl_ready())
		return NULL;
	if (meter_nl_get_profile(knl, &sel, &p, err, sizeof(err))) {
		printf("# meter_nl_get_profile(pid %d): %s\n", (int)sel.pid,
		       err);
		return NULL;
	}
	sel.cookie = p->cookie;
	if (meter_nl_delete(knl, &sel, err, sizeof(err))) {
		printf("# meter_nl_delete: %s\n", err);
		meter_profile_free(p);
		return NULL;
	}
	return p;
}

/* The profile of the newest session of pid, deleted afterwards. */
TAP_HELPER struct meter_profile *kernel_profile(pid_t pid)
{
	struct meter_nl_sel sel = { .pid = pid };

	return kernel_session(sel);
}

/* True in the VM's run of a test (selftests/vm/test_NAME.sh). */
TAP_HELPER bool on_kernel(void)
{
	const char *b = getenv("LIBTEST_BACKEND");

	return b && !strcmp(b, "kernel");
}

/* One run of a workload and the profile of its process. */
struct backend_run {
	const char *backend;	/* what the run used */
	struct meter_profile *p;
	char dir[PATH_MAX];	/* where its processes' files go */
	char out[1024];		/* its stdout */
	int status;		/* run_prog()'s */
	bool wrote;		/* its process wrote a file */
};

/*
 * Runs PROG (next to this test, or a path relative to it) with args,
 * the backend named and extra ("K=V" or NULL) in its environment; each
 * process's file is r->dir/out.PID.json, and r->p the profile of the
 * process: its file, or its session on meter.ko.
 */
TAP_HELPER void run_with_backend(struct backend_run *r, const char *prog,
				 const char *backend,
				 const char *const *args, const char *label,
				 const char *extra)
{
	char env_out[PATH_MAX + 32], env_b[64], path[PATH_MAX + 32];
	const char *env[] = { env_b, env_out, "METER_QUIET=1", extra, NULL };

	r->backend = backend;
	snprintf(r->dir, sizeof(r->dir), "%s/%s", scratch(), label);
	mkdir(r->dir, 0700);
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s/out.%%p.json",
		 r->dir);
	snprintf(env_b, sizeof(env_b), "METER_BACKEND=%s", backend);
	r->status = run_prog(prog, env, args, r->out, sizeof(r->out));
	snprintf(path, sizeof(path), "%s/out.%d.json", r->dir, (int)last_pid);
	r->wrote = access(path, F_OK) == 0;
	if (!strcmp(backend, "kernel"))
		r->p = kernel_profile(last_pid);
	else
		r->p = r->wrote ? load_profile(path) : NULL;
}

/* The same, with host_backend on the host and meter.ko in the VM. */
TAP_HELPER void backend_run(struct backend_run *r, const char *prog,
			    const char *host_backend,
			    const char *const *args, const char *label,
			    const char *extra)
{
	run_with_backend(r, prog, on_kernel() ? "kernel" : host_backend, args,
			 label, extra);
}

/* What every run must have done, in a fixture's setup: exit 0, a file
 * only where there is no session, and a profile read back. */
#define ASSERT_BACKEND_RUN(r) do {					\
		bool kernel_ = !strcmp((r)->backend, "kernel");		\
									\
		ASSERT_EQ(0, (r)->status);				\
		ASSERT_EQ(!kernel_, (r)->wrote)				\
			TH_LOG("%s", kernel_ ? "the kernel backend wrote a file" \
			       : "no profile file");			\
		ASSERT_NE(NULL, (r)->p) TH_LOG("no profile read back");	\
	} while (0)

/* Room for one more profile after the n in *all. */
TAP_HELPER bool grow(struct meter_profile ***all, int n)
{
	struct meter_profile **m = realloc(*all, (n + 1) * sizeof(**all));

	if (m)
		*all = m;
	return m != NULL;
}

/* The children's files: every file of r->dir but r's process's own. */
TAP_HELPER int file_children(const struct backend_run *r,
			     struct meter_profile ***all)
{
	char own[64], path[PATH_MAX + 256];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(own, sizeof(own), "out.%d.json", r->p ? (int)r->p->pid : -1);
	d = opendir(r->dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, own))
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->dir, de->d_name);
		if (!grow(all, n))
			break;
		(*all)[n++] = load_profile(path);
	}
	if (d)
		closedir(d);
	return n;
}

/* The children's sessions: those naming r's session as their parent. */
TAP_HELPER int session_children(const struct backend_run *r,
				struct meter_profile ***all)
{
	struct meter_session_row *rows = NULL;
	size_t nrows = 0, i;
	char err[256];
	int n = 0;

	if (!r->p || !nl_ready() ||
	    meter_nl_list(knl, &rows, &nrows, err, sizeof(err)))
		return -1;
	for (i = 0; i < nrows; i++) {
		struct meter_nl_sel sel = { .cookie = rows[i].cookie };

		if (rows[i].parent_cookie != r->p->cookie)
			continue;
		if (!grow(all, n))
			break;
		(*all)[n++] = kernel_session(sel);
	}
	meter_session_rows_free(rows, nrows);
	return n;
}

/*
 * The profiles of r's forked children: their number (-1 when they could
 * not be listed); the first keep of them in pp[], the others freed.  A
 * child whose profile could not be read is a NULL.
 */
TAP_HELPER int backend_children(const struct backend_run *r,
				struct meter_profile **pp, int keep)
{
	struct meter_profile **all = NULL;
	int n, i;

	n = !strcmp(r->backend, "kernel") ? session_children(r, &all) :
			  file_children(r, &all);
	for (i = 0; i < n; i++) {
		if (i < keep)
			pp[i] = all[i];
		else
			meter_profile_free(all[i]);
	}
	free(all);
	return n;
}

#endif
