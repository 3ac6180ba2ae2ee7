// SPDX-License-Identifier: MIT
/*
 * Where meter-run finds a run's profile (run_collect.h): the kernel
 * sessions of the run, or the files the signal and off backends wrote.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_collect.h"
#include "proctree.h"

static struct meter_nl *nl;
static bool nl_tried;
static char nl_err[256];

struct meter_nl *run_kernel(void)
{
	if (!nl_tried) {
		int ret;

		nl_tried = true;
		ret = meter_nl_open(&nl, nl_err, sizeof(nl_err));
		if (ret) {
			nl = NULL;
			if (ret == -ENOENT)
				snprintf(nl_err, sizeof(nl_err),
					 "the meter kernel module is not "
					 "loaded");
			else if (!nl_err[0])
				snprintf(nl_err, sizeof(nl_err), "%s",
					 strerror(-ret));
		}
	}
	return nl;
}

/*
 * The sessions of this run: those of pid started since t0 and, with
 * --follow-fork, their descendants and those linked to the run's token
 * (exec'd below PROG through processes without a session).  Returns the
 * count; *sel receives a malloc'd array of list indices.
 */
static size_t select_sessions(const struct meter_session_row *list, size_t n,
			      const struct run_result *rr, bool follow,
			      size_t **sel)
{
	bool *in = calloc(n ? n : 1, sizeof(*in));
	size_t i, m = 0;

	*sel = calloc(n ? n : 1, sizeof(**sel));
	if (!in || !*sel) {
		free(in);
		return 0;
	}
	for (i = 0; i < n; i++)
		if (list[i].pid == rr->pid &&
		    (!list[i].start_ns || list[i].start_ns >= rr->t0_ns))
			in[i] = true;
	if (follow)
		meter_tree_mark(list, n, in, rr->links, rr->nlinks);
	for (i = 0; i < n; i++)
		if (in[i])
			(*sel)[m++] = i;
	free(in);
	return m;
}

/* meter.ko's evicted parameter: finished sessions evicted since load. */
static uint64_t evicted_count(void)
{
	FILE *f = fopen("/sys/module/meter/parameters/evicted", "re");
	unsigned long long v = 0;

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Session s's profile, its unnamed ids named; NULL on error (said if say). */
static struct meter_profile *read_session(const struct meter_session_row *s,
					  bool say)
{
	struct meter_nl_sel which = { .cookie = s->cookie };
	struct meter_profile *p = NULL;
	char err[256];

	if (meter_nl_get_profile(nl, &which, &p, err, sizeof(err))) {
		if (say)
			fprintf(stderr, "meter-run: cannot read kernel session "
				"0x%" PRIx64 ": %s\n", s->cookie, err);
		return NULL;
	}
	meter_profile_name_unknown_ids(p);
	return p;
}

/* p merged into *all and freed; the sessions of one run are one run. */
static int merge_session(struct meter_profile **all, struct meter_profile *p)
{
	if (cli_merge_into(all, p))
		return -1;
	(*all)->runs = 1;
	return 0;
}

struct meter_profile *run_kernel_collect(struct run_result *rr,
					    bool follow, bool final,
					    bool want_profile,
					    uint64_t *samples)
{
	struct meter_session_row *list = NULL;
	struct meter_profile *all = NULL;
	size_t n = 0, m, i, *sel = NULL;
	char err[256] = "";
	int tries;

	if (samples)
		*samples = rr->harvest ? rr->harvest->samples : 0;
	if (!run_kernel())
		return NULL;
	if (want_profile && rr->harvest) {
		all = meter_profile_new();
		if (!all || meter_profile_merge(all, rr->harvest)) {
			fprintf(stderr, "meter-run: out of memory\n");
			meter_profile_free(all);
			return NULL;
		}
	}
	/* After exit, give the module a moment to fold the threads in. */
	for (tries = 0;; tries++) {
		bool live = false;

		meter_session_rows_free(list, n);
		list = NULL;
		n = 0;
		if (meter_nl_list(nl, &list, &n, err, sizeof(err))) {
			if (final)
				fprintf(stderr, "meter-run: cannot list kernel "
					"sessions: %s\n", err);
			return NULL;
		}
		free(sel);
		m = select_sessions(list, n, rr, follow, &sel);
		for (i = 0; i < m; i++)
			if (!list[sel[i]].exited)
				live = true;
		if (!final || !live || tries >= 40)
			break;
		usleep(50000);
	}
	if (final && follow) {
		uint64_t ev = evicted_count();

		/* any user's: the module does not say whose */
		if (ev > rr->evicted0)
			fprintf(stderr, "meter-run: meter.ko evicted %" PRIu64
				" finished session%s during the run (bound: "
				"max_finished); processes of this tree may be "
				"missing from the report\n", ev - rr->evicted0,
				ev - rr->evicted0 == 1 ? "" : "s");
	}
	if (final && !follow) {
		size_t *all_sel = NULL;
		size_t mf = select_sessions(list, n, rr, true, &all_sel);

		rr->children_left = mf > m ? mf - m : 0;
		if (mf > m)
			fprintf(stderr, "meter-run: %zu session%s of forked "
				"children left in the kernel (meter-stat lists "
				"them; --follow-fork merges them)\n", mf - m,
				mf - m == 1 ? "" : "s");
		free(all_sel);
	}
	for (i = 0; i < m; i++) {
		const struct meter_session_row *s = &list[sel[i]];
		struct meter_nl_sel which = { .cookie = s->cookie };
		struct meter_profile *p = NULL;

		if (samples)
			*samples += s->samples;
		if (!want_profile)
			continue;
		p = read_session(s, true);
		if (!p)
			continue;
		if (final) {
			if (!s->exited)
				fprintf(stderr, "meter-run: session 0x%" PRIx64
					" (pid %" PRId32 ") is still running; "
					"read, not deleted\n", s->cookie,
					s->pid);
			else if (meter_nl_delete(nl, &which, err, sizeof(err)))
				fprintf(stderr, "meter-run: cannot delete "
					"kernel session 0x%" PRIx64 ": %s\n",
					s->cookie, err);
		}
		if (merge_session(&all, p))
			break;
	}
	free(sel);
	meter_session_rows_free(list, n);
	return all;
}

static int add_link(struct run_result *rr, uint64_t cookie)
{
	if (rr->nlinks == rr->links_cap) {
		size_t cap = rr->links_cap ? 2 * rr->links_cap : 16;
		uint64_t *l = realloc(rr->links, cap * sizeof(*l));

		if (!l)
			return -1;
		rr->links = l;
		rr->links_cap = cap;
	}
	rr->links[rr->nlinks++] = cookie;
	return 0;
}

int run_result_init(struct run_result *rr, uint64_t token)
{
	memset(rr, 0, sizeof(*rr));
	rr->evicted0 = evicted_count();
	return add_link(rr, token);
}

void run_result_free(struct run_result *rr)
{
	free(rr->links);
	meter_profile_free(rr->harvest);
	rr->links = NULL;
	rr->harvest = NULL;
	rr->nlinks = rr->links_cap = 0;
}

void run_kernel_harvest(struct run_result *rr)
{
	struct meter_session_row *list = NULL;
	size_t n = 0, m, i, *sel = NULL;
	char err[256];

	if (!run_kernel() || meter_nl_list(nl, &list, &n, err, sizeof(err)))
		return;
	m = select_sessions(list, n, rr, true, &sel);
	for (i = 0; i < m; i++) {
		const struct meter_session_row *s = &list[sel[i]];
		struct meter_nl_sel which = { .cookie = s->cookie };
		struct meter_profile *p;

		/* PROG's own are read at the end, with the report's checks */
		if (!s->exited || s->pid == rr->pid)
			continue;
		p = read_session(s, false);
		if (!p)
			continue;
		/* its children, registered later, still find the tree */
		if (add_link(rr, s->cookie)) {
			meter_profile_free(p);
			break;
		}
		if (merge_session(&rr->harvest, p))
			break;
		meter_nl_delete(nl, &which, err, sizeof(err));
	}
	free(sel);
	meter_session_rows_free(list, n);
}

struct meter_profile *run_files_collect(struct run_result *rr,
				       const char *tmpdir, bool follow)
{
	struct meter_profile *all = NULL;
	char own[64];
	struct dirent *de;
	size_t ignored = 0, nfiles = 0;
	bool have_own;
	DIR *d;

	snprintf(own, sizeof(own), "meter.out.%d", (int)rr->pid);
	{
		char path[1400];

		snprintf(path, sizeof(path), "%s/%s", tmpdir, own);
		have_own = access(path, F_OK) == 0;
	}
	d = opendir(tmpdir);
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		struct meter_profile *p;
		char path[1400], err[300];
		FILE *f;

		/* --patch's reports are run_patch_collect's */
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "patch.", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		/*
		 * Without --follow-fork, PROG's own files if it wrote one:
		 * meter.out.PID and those written before its execs
		 * (meter.out.PID.COOKIE).
		 */
		if (!follow && have_own && strcmp(de->d_name, own) &&
		    (strncmp(de->d_name, own, strlen(own)) ||
		     de->d_name[strlen(own)] != '.')) {
			unlink(path);
			ignored++;
			continue;
		}
		f = fopen(path, "re");
		if (!f)
			continue;
		p = meter_profile_read_json(f, err, sizeof(err));
		fclose(f);
		unlink(path);
		if (!p) {
			fprintf(stderr, "meter-run: profile %s is unreadable: "
				"%s\n", de->d_name, err);
			continue;
		}
		if (cli_merge_into(&all, p))
			break;
		all->runs = 1;
		nfiles++;
	}
	closedir(d);
	rr->children_left = ignored;
	if (ignored)
		fprintf(stderr, "meter-run: %zu profile%s of forked children "
			"left out (--follow-fork merges them)\n", ignored,
			ignored == 1 ? "" : "s");
	if (all && !follow && !have_own)
		fprintf(stderr, "meter-run: pid %d wrote no profile itself; the "
			"report is of the %zu descendant process%s that did\n",
			(int)rr->pid, nfiles, nfiles == 1 ? "" : "es");
	return all;
}

const char *run_kernel_error(void)
{
	return nl_err[0] ? nl_err : "meter.ko could not be reached";
}

void run_kernel_close(void)
{
	if (nl)
		meter_nl_close(nl);
	nl = NULL;
}

/* One refused function: its row, given the reason (a new one if none). */
static int refused_into(struct meter_profile *p, const char *name,
			const char *why, uint32_t *next_id)
{
	struct meter_func *f = NULL;
	size_t i;

	for (i = 0; i < p->nfuncs && !f; i++)
		if (p->funcs[i].name && !strcmp(p->funcs[i].name, name))
			f = &p->funcs[i];
	if (!f) {
		f = meter_profile_add_func(p, (*next_id)++, name);
		if (!f)
			return -1;
	}
	if (f->refused || f->calls)
		return 0;
	f->refused = strdup(why);
	return f->refused ? 0 : -1;
}

static int patch_file_collect(struct meter_profile *p, const char *path,
			      uint32_t *next_id)
{
	char line[1024], *tab;
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return 0;
	while (!ret && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		tab = strchr(line, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		ret = refused_into(p, line, tab + 1, next_id);
	}
	fclose(f);
	unlink(path);
	return ret;
}

int run_patch_collect(struct meter_profile *p, const char *tmpdir)
{
	char path[1200];
	struct dirent *de;
	uint32_t next_id = 1;
	size_t i;
	DIR *d;
	int ret = 0;

	for (i = 0; i < p->nfuncs; i++)
		if (p->funcs[i].id >= next_id)
			next_id = p->funcs[i].id + 1;
	d = opendir(tmpdir);
	if (!d)
		return 0;
	while (!ret && (de = readdir(d))) {
		if (strncmp(de->d_name, "patch.", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		ret = patch_file_collect(p, path, &next_id);
	}
	closedir(d);
	return ret;
}

/* dir and the files in it (meter-run's private directory). */
void run_remove_dir(const char *dir)
{
	DIR *d;
	struct dirent *de;

	if (!dir[0])
		return;
	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			char path[1400];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir,
				 de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}
