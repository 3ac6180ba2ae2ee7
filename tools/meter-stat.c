// SPDX-License-Identifier: MIT
/*
 * meter-stat: the sessions that meter.ko holds, and saved profiles.
 *
 *   meter-stat                         list sessions
 *   meter-stat show PID|COOKIE         a session's profile
 *   meter-stat show --tree PID|COOKIE  ... merged with its descendants'
 *   meter-stat tree [PID|COOKIE]       sessions as process trees
 *   meter-stat watch PID|COOKIE        ... again every --interval seconds
 *   meter-stat reset PID|COOKIE        zero a session's counters
 *   meter-stat delete PID|COOKIE       forget a finished session
 *   meter-stat -i FILE                 render a saved JSON profile
 *   meter-stat merge FILE... [-o OUT]  add JSON profiles (by name)
 *   meter-stat diff BASE NEW           compare two JSON profiles
 *
 * Exit status: 0 success, 1 failure, 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "render_diff.h"
#include "interval.h"
#include "nldump.h"
#include "proctree.h"

#define OPT_INTERVAL OPT_CLI_LAST
#define OPT_TREE (OPT_CLI_LAST + 1)

static void usage(FILE *out)
{
	fprintf(out,
"Usage: meter-stat [list]\n"
"       meter-stat show [--tree] PID|COOKIE [report options]\n"
"       meter-stat tree [PID|COOKIE]\n"
"       meter-stat watch PID|COOKIE [--interval SECONDS] [report options]\n"
"       meter-stat reset PID|COOKIE\n"
"       meter-stat delete PID|COOKIE\n"
"       meter-stat -i FILE [report options]\n"
"       meter-stat merge FILE... [-o OUT] [report options]\n"
"       meter-stat diff BASE NEW [-f text|json|html] [-o OUT]\n"
"\n"
"Lists, shows, watches, resets and deletes the profiling sessions of\n"
"meter.ko, renders saved JSON profiles and merges them (functions are\n"
"matched by name) and compares two (diff).  A number up to 4194304 names the newest session of\n"
"that pid; a larger number or 0x... names a session by its cookie,\n"
"or for tree and show --tree the token of a meter-run --follow-fork run.\n"
"\n"
"  -i, --input FILE     read a JSON profile instead of the kernel\n"
"      --interval SECS  watch: seconds between reports (default 1)\n"
"      --tree           show: the session and its descendants, merged\n"
"  -h, --help           this help\n"
"\n" CLI_REPORT_HELP
"\nmerge writes JSON unless --format says otherwise.  diff shows per\n"
"function the change of self and total share with its noise band and\n"
"of calls, as text, json or html (--threshold and --correct\n"
"apply).\n");
}

static int open_kernel(struct meter_nl **nl)
{
	char err[256] = "";
	int ret = meter_nl_open(nl, err, sizeof(err));

	if (ret == -ENOENT) {
		fprintf(stderr, "meter-stat: the meter kernel module is not "
			"loaded (modprobe meter)\n");
		return -1;
	}
	if (ret) {
		fprintf(stderr, "meter-stat: cannot talk to meter.ko: %s\n",
			err[0] ? err : strerror(-ret));
		return -1;
	}
	return 0;
}

static void format_age(uint64_t ns, char *buf, size_t len)
{
	uint64_t s = ns / 1000000000ULL;

	if (s < 120)
		snprintf(buf, len, "%" PRIu64 "s", s);
	else if (s < 7200)
		snprintf(buf, len, "%" PRIu64 "m", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%" PRIu64 "h", s / 3600);
	else
		snprintf(buf, len, "%" PRIu64 "d", s / 86400);
}

static int list_sessions(struct meter_nl *nl,
			 struct meter_session_row **list, size_t *n)
{
	char err[256] = "";
	int ret = meter_nl_list(nl, list, n, err, sizeof(err));

	if (ret)
		fprintf(stderr, "meter-stat: cannot list sessions: %s\n",
			err[0] ? err : strerror(-ret));
	return ret;
}

/* The sessions, on a socket of their own; 1 after saying why not. */
static int fetch_sessions(struct meter_session_row **list, size_t *n)
{
	struct meter_nl *nl;
	int ret;

	if (open_kernel(&nl))
		return 1;
	ret = list_sessions(nl, list, n);
	meter_nl_close(nl);
	return ret ? 1 : 0;
}

static int cmd_list(void)
{
	struct meter_session_row *list = NULL;
	uint64_t now = cli_boottime_ns();
	size_t n = 0, i;

	if (fetch_sessions(&list, &n))
		return 1;
	if (!n) {
		printf("no sessions\n");
		meter_session_rows_free(list, n);
		return 0;
	}
	printf("%-18s %7s %-16s %-8s %7s %10s %9s %6s\n", "COOKIE", "PID",
	       "COMMAND", "STATE", "THREADS", "SAMPLES", "RATE", "AGE");
	for (i = 0; i < n; i++) {
		const struct meter_session_row *p = &list[i];
		char cookie[24], threads[24], rate[32], age[24];

		snprintf(cookie, sizeof(cookie), "0x%" PRIx64, p->cookie);
		/* running: its live threads; exited: all it had */
		snprintf(threads, sizeof(threads), "%" PRIu32,
			 p->exited ? p->threads_total : p->threads);
		if (p->period_ns)
			snprintf(rate, sizeof(rate), "%.0f Hz",
				 1e9 / (double)p->period_ns);
		else
			snprintf(rate, sizeof(rate), "-");
		if (p->start_ns && now > p->start_ns)
			format_age(now - p->start_ns, age, sizeof(age));
		else
			snprintf(age, sizeof(age), "-");
		printf("%-18s %7" PRId32 " %-16.16s %-8s %7s %10" PRIu64
		       " %9s %6s\n", cookie, p->pid,
		       p->command ? p->command : "?",
		       p->exited ? "exited" : "running", threads, p->samples,
		       rate, age);
	}
	meter_session_rows_free(list, n);
	return 0;
}

/* The last step of show, -i and merge: the report, then p is freed. */
static int report_and_free(struct meter_profile *p,
			   const struct cli_report *r)
{
	FILE *out = cli_open_output(r);
	int ret = 1;

	if (out)
		ret = cli_write_report(p, r, out) ? 1 : 0;
	meter_profile_free(p);
	return ret;
}

static struct meter_profile *get_session(struct meter_nl *nl,
					 const struct meter_nl_sel *sel,
					 const char *what)
{
	struct meter_profile *p = NULL;
	char err[256] = "";
	int ret = meter_nl_get_profile(nl, sel, &p, err, sizeof(err));

	if (ret) {
		if (ret == -ENOENT || ret == -ESRCH)
			fprintf(stderr, "meter-stat: no session %s%s%s\n",
				what, err[0] ? ": " : "", err);
		else
			fprintf(stderr, "meter-stat: cannot read session "
				"%s: %s\n", what,
				err[0] ? err : strerror(-ret));
		return NULL;
	}
	meter_profile_name_unknown_ids(p);
	return p;
}

static int cmd_show(const char *what, const struct cli_report *r)
{
	struct meter_nl_sel sel;
	struct meter_profile *p;
	struct meter_nl *nl;

	if (cli_parse_selector(what, &sel))
		cli_die_usage("'%s' is neither a pid nor a cookie", what);
	if (open_kernel(&nl))
		return 1;
	p = get_session(nl, &sel, what);
	meter_nl_close(nl);
	if (!p)
		return 1;
	return report_and_free(p, r);
}

/*
 * Marks in[] the tree that sel names: a session (the newest of a pid)
 * and its descendants, or every session linked to a run's token.
 * Returns how many are marked.
 */
static size_t tree_select(const struct meter_session_row *list, size_t n,
			  const struct meter_nl_sel *sel, bool *in)
{
	size_t i, root = n;

	for (i = 0; i < n; i++) {
		if (sel->cookie ? list[i].cookie == sel->cookie :
		    list[i].pid == sel->pid &&
		    (root == n || list[i].start_ns > list[root].start_ns))
			root = i;
	}
	if (root < n)
		in[root] = true;
	return meter_tree_mark(list, n, in, &sel->cookie,
			       root < n || !sel->cookie ? 0 : 1);
}

/* A session and, indented below it, its marked descendants. */
static void tree_print(const struct meter_session_row *list,
		       const size_t *child, const size_t *sibling, size_t n,
		       size_t i, int depth)
{
	const struct meter_session_row *p = &list[i];
	size_t k;

	printf("%-18s%*s 0x%" PRIx64 " pid %" PRId32 " %s, %" PRIu64
	       " samples\n", "", 2 * depth, "", p->cookie, p->pid,
	       p->command ? p->command : "?", p->samples);
	/* a cycle of cookies is bad input: depth bounds it */
	if (depth > 64)
		return;
	for (k = child[i]; k < n; k = sibling[k])
		tree_print(list, child, sibling, n, k, depth + 1);
}

/*
 * The sessions as trees: each root (a session whose parent is not shown)
 * under the cookie it links to (a run's token, or a parent outside the
 * tree asked for), its descendants indented below it.
 */
static int cmd_tree(const char *what)
{
	size_t n = 0, i, k, m = 0, *parent = NULL, *child = NULL;
	struct meter_session_row *list = NULL;
	struct meter_nl_sel sel = { 0 };
	size_t *sibling = NULL;
	bool *in, *done;

	if (what && cli_parse_selector(what, &sel))
		cli_die_usage("'%s' is neither a pid nor a cookie", what);
	if (fetch_sessions(&list, &n))
		return 1;
	in = calloc(n + 1, sizeof(*in));
	done = calloc(n + 1, sizeof(*done));
	parent = calloc(n + 1, sizeof(*parent));
	child = calloc(n + 1, sizeof(*child));
	sibling = calloc(n + 1, sizeof(*sibling));
	if (!in || !done || !parent || !child || !sibling ||
	    meter_tree_parents(list, n, parent)) {
		fprintf(stderr, "meter-stat: out of memory\n");
		goto out;
	}
	if (what)
		m = tree_select(list, n, &sel, in);
	else
		for (i = 0, m = n; i < n; i++)
			in[i] = true;
	if (!m) {
		fprintf(stderr, "meter-stat: no session or tree %s\n",
			what ? what : "");
		goto out;
	}
	/* a parent's marked children, in list order; roots have none above */
	for (i = 0; i < n; i++)
		child[i] = n;
	for (k = n; k-- > 0;) {
		if (!in[k] || parent[k] == n || !in[parent[k]]) {
			parent[k] = n;
			continue;
		}
		sibling[k] = child[parent[k]];
		child[parent[k]] = k;
	}
	printf("%-18s %s\n", "RUN", "SESSION TREE");
	for (i = 0; i < n; i++) {
		uint64_t run = list[i].parent_cookie;

		if (!in[i] || done[i] || parent[i] < n)
			continue;
		if (run)
			printf("0x%" PRIx64 "\n", run);
		/* the roots that link to the same run token, together */
		for (k = i; k < n; k++) {
			if (!in[k] || done[k] || parent[k] < n ||
			    list[k].parent_cookie != run)
				continue;
			done[k] = true;
			tree_print(list, child, sibling, n, k, run ? 1 : 0);
		}
	}
out:
	meter_session_rows_free(list, n);
	free(in);
	free(done);
	free(parent);
	free(child);
	free(sibling);
	return m ? 0 : 1;
}

/* show --tree: the sessions of a tree merged, one per process. */
static int cmd_show_tree(const char *what, const struct cli_report *r)
{
	struct meter_session_row *list = NULL;
	struct meter_profile *all = NULL;
	struct meter_nl_sel sel;
	struct meter_nl *nl;
	size_t n = 0, i;
	bool *in = NULL;
	int ret = 1;

	if (cli_parse_selector(what, &sel))
		cli_die_usage("'%s' is neither a pid nor a cookie", what);
	if (open_kernel(&nl))
		return 1;
	if (list_sessions(nl, &list, &n))
		goto out;
	in = calloc(n + 1, sizeof(*in));
	if (!in || !tree_select(list, n, &sel, in)) {
		fprintf(stderr, "meter-stat: %s\n", in ? "no such session or "
			"tree" : "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct meter_nl_sel one = { .cookie = list[i].cookie };
		struct meter_profile *p;
		char cookie[24];

		if (!in[i])
			continue;
		snprintf(cookie, sizeof(cookie), "0x%" PRIx64, one.cookie);
		p = get_session(nl, &one, cookie);
		if (!p || cli_merge_into(&all, p))
			goto out;
		all->runs = 1;	/* the sessions of one tree are one run */
	}
	ret = report_and_free(all, r);
	all = NULL;
out:
	meter_nl_close(nl);
	meter_profile_free(all);
	meter_session_rows_free(list, n);
	free(in);
	return ret;
}

static volatile sig_atomic_t stop_watch;

static void on_sigint(int sig)
{
	(void)sig;
	stop_watch = 1;
}

/* Rows that fit the terminal under the view's five lines of header. */
static size_t top_rows(bool tty)
{
	struct winsize ws;

	if (!tty || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 10)
		return tty ? 20 : 0;
	return (size_t)ws.ws_row - 7;
}

/* One view of the watch: the top view against prev, or a full report. */
static int watch_one(const struct meter_profile *p,
		     const struct meter_profile *prev,
		     const struct cli_report *r, bool tty, double interval)
{
	FILE *out = cli_open_output(r);
	struct interval iv;
	int ret;

	if (!out)
		return -1;
	if (tty)
		fputs("\033[H\033[2J", out);
	fprintf(out, "meter-stat: session 0x%" PRIx64 " (%s), every %g s; "
		"Ctrl-C to stop\n\n", p->cookie,
		p->exited ? "exited" : "running", interval);
	if (r->ro.format != FMT_TOP)
		return cli_write_report(p, r, out);
	if (interval_build(&iv, p, prev, r->ro.an.order)) {
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		ret = -1;
	} else {
		ret = render_top(&iv, &r->ro, top_rows(tty), out);
		interval_free(&iv);
	}
	if (!tty)
		fputc('\n', out);
	if (out != stdout)
		fclose(out);
	else
		fflush(out);
	return ret;
}

static int cmd_watch(const char *what, struct cli_report *r,
		     double interval)
{
	struct meter_profile *prev = NULL;
	struct meter_nl_sel sel;
	struct meter_nl *nl;
	bool tty = isatty(STDOUT_FILENO) && !r->output;
	int ret = 0;

	if (cli_parse_selector(what, &sel))
		cli_die_usage("'%s' is neither a pid nor a cookie", what);
	if (r->ro.format == FMT_PPROF)
		cli_die_usage("watch cannot repeat a binary format; use show");
	if (!r->format_set)
		r->ro.format = FMT_TOP;
	if (open_kernel(&nl))
		return 1;
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	while (!stop_watch) {
		struct meter_profile *p = get_session(nl, &sel, what);
		struct timespec ts;
		bool done;

		if (!p) {
			ret = 1;
			break;
		}
		/* Follow this session, not a newer one of a reused pid. */
		if (!sel.cookie)
			sel.cookie = p->cookie;
		done = p->exited;
		if (watch_one(p, prev, r, tty, interval))
			ret = 1;
		meter_profile_free(prev);
		prev = p;
		if (ret || done)
			break;
		ts.tv_sec = (time_t)interval;
		ts.tv_nsec = (long)((interval - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) && errno == EINTR && !stop_watch)
			;
	}
	meter_profile_free(prev);
	meter_nl_close(nl);
	return ret;
}

static int cmd_reset_delete(const char *what, bool del)
{
	struct meter_nl_sel sel;
	struct meter_nl *nl;
	char err[256] = "";
	int ret;

	if (cli_parse_selector(what, &sel))
		cli_die_usage("'%s' is neither a pid nor a cookie", what);
	if (open_kernel(&nl))
		return 1;
	ret = del ? meter_nl_delete(nl, &sel, err, sizeof(err)) :
		    meter_nl_reset(nl, &sel, err, sizeof(err));
	meter_nl_close(nl);
	if (ret) {
		const char *why = err[0] ? err : strerror(-ret);

		if (del && ret == -EBUSY && !err[0])
			why = "the process is still running";
		fprintf(stderr, "meter-stat: cannot %s session %s: %s\n",
			del ? "delete" : "reset", what, why);
		return 1;
	}
	printf("session %s %s\n", what, del ? "deleted" : "reset");
	return 0;
}

static struct meter_profile *read_file(const char *path)
{
	struct meter_profile *p;
	char err[300];
	FILE *f;

	f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	if (!f) {
		fprintf(stderr, "meter-stat: cannot read %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	p = meter_profile_read_json(f, err, sizeof(err));
	if (f != stdin)
		fclose(f);
	if (!p)
		fprintf(stderr, "meter-stat: %s: %s\n", path, err);
	return p;
}

static int cmd_input(const char *path, const struct cli_report *r)
{
	struct meter_profile *p = read_file(path);

	if (!p)
		return 1;
	return report_and_free(p, r);
}

static int cmd_merge(char **files, int n, struct cli_report *r,
		     bool format_set)
{
	struct meter_profile *all = meter_profile_new();
	int i;

	if (!all) {
		fprintf(stderr, "meter-stat: out of memory\n");
		return 1;
	}
	if (!format_set)
		r->ro.format = FMT_JSON;
	for (i = 0; i < n; i++) {
		struct meter_profile *p = read_file(files[i]);

		if (!p) {
			meter_profile_free(all);
			return 1;
		}
		if (cli_merge_into(&all, p)) {
			meter_profile_free(all);
			return 1;
		}
	}
	return report_and_free(all, r);
}

static int cmd_diff(const char *base_path, const char *new_path,
		    const struct cli_report *r)
{
	struct meter_profile *base, *new = NULL;
	char err[256] = "";
	FILE *out;
	int ret = 1;

	if (r->ro.format != FMT_TEXT && r->ro.format != FMT_JSON &&
	    r->ro.format != FMT_HTML)
		cli_die_usage("diff writes text, json or html");
	base = read_file(base_path);
	if (base)
		new = read_file(new_path);
	if (!base || !new)
		goto out;
	meter_profile_name_unknown_ids(base);
	meter_profile_name_unknown_ids(new);
	out = cli_open_output(r);
	if (!out)
		goto out;
	ret = render_diff(base, new, &r->ro, out, err, sizeof(err)) ? 1 : 0;
	if (ret)
		fprintf(stderr, "meter-stat: diff: %s\n", err);
	if (out != stdout && fclose(out) && !ret) {
		fprintf(stderr, "meter-stat: cannot write %s\n", r->output);
		ret = 1;
	}
out:
	meter_profile_free(base);
	meter_profile_free(new);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_REPORT_LONGOPTS,
		{ "input", required_argument, NULL, 'i' },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "tree", no_argument, NULL, OPT_TREE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_report r;
	const char *input = NULL, *cmd;
	double interval = 1.0;
	bool format_set = false, interval_set = false, tree = false;
	int c, nargs;

	cli_prog = "meter-stat";
	cli_report_init(&r);
	while ((c = getopt_long(argc, argv, "f:o:i:h", longopts, NULL)) != -1) {
		if (cli_report_option(&r, c, optarg)) {
			if (c == 'f')
				format_set = true;
			continue;
		}
		switch (c) {
		case 'i':
			input = optarg;
			break;
		case OPT_INTERVAL:
			if (parse_seconds(optarg, &interval))
				cli_die_usage("--interval wants a positive "
					      "number of seconds, not '%s'",
					      optarg);
			interval_set = true;
			break;
		case OPT_TREE:
			tree = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'meter-stat --help'.\n");
			return 2;
		}
	}
	nargs = argc - optind;
	cmd = nargs ? argv[optind] : NULL;

	if (input) {
		if (nargs)
			cli_die_usage("-i FILE takes no command ('%s')", cmd);
		return cmd_input(input, &r);
	}
	if (interval_set && (!cmd || strcmp(cmd, "watch")))
		cli_die_usage("--interval is for watch");
	if (tree && (!cmd || strcmp(cmd, "show")))
		cli_die_usage("--tree is for show");
	if (cmd && !strcmp(cmd, "tree")) {
		if (nargs > 2)
			cli_die_usage("tree takes at most one PID or COOKIE");
		return cmd_tree(nargs == 2 ? argv[optind + 1] : NULL);
	}
	if (!cmd || !strcmp(cmd, "list")) {
		if (nargs > 1)
			cli_die_usage("list takes no arguments");
		return cmd_list();
	}
	if (!strcmp(cmd, "merge")) {
		if (nargs < 2)
			cli_die_usage("merge needs at least one FILE");
		return cmd_merge(argv + optind + 1, nargs - 1, &r, format_set);
	}
	if (!strcmp(cmd, "diff")) {
		if (nargs != 3)
			cli_die_usage("diff needs two files, BASE and NEW");
		return cmd_diff(argv[optind + 1], argv[optind + 2], &r);
	}
	if (!strcmp(cmd, "show") || !strcmp(cmd, "watch") ||
	    !strcmp(cmd, "reset") || !strcmp(cmd, "delete")) {
		if (nargs != 2)
			cli_die_usage("%s needs one PID or COOKIE", cmd);
		if (!strcmp(cmd, "show"))
			return tree ? cmd_show_tree(argv[optind + 1], &r) :
				      cmd_show(argv[optind + 1], &r);
		if (!strcmp(cmd, "watch"))
			return cmd_watch(argv[optind + 1], &r, interval);
		return cmd_reset_delete(argv[optind + 1],
					!strcmp(cmd, "delete"));
	}
	cli_die_usage("unknown command '%s' (list, tree, show, watch, "
		      "reset, delete, merge, diff, or -i FILE)", cmd);
}
