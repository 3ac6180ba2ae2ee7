// SPDX-License-Identifier: MIT
/*
 * meter-run [options] -- PROG [ARGS...]
 *
 * Runs PROG with libmeter's environment (METER_BACKEND, METER_PERIOD_NS,
 * METER_OUTPUT pointing into a private directory), waits for it, collects
 * its profile -- the JSON files the signal and off backends wrote into the
 * directory, or else the kernel sessions of PROG's pid -- and prints the
 * report.  Exits with PROG's status (128 + N when a signal N killed it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "nldump.h"
#include "run_attach.h"
#include "run_collect.h"
#include "run_lua.h"
#include "run_python.h"

enum {
	OPT_PERIOD = OPT_CLI_LAST,
	OPT_CLOCK,
	OPT_BACKEND,
	OPT_PERIODIC,
	OPT_REPEAT,
	OPT_FOLLOW_FORK,
	OPT_NO_PROGRESS,
	OPT_KEEP,
	OPT_ALLOC,
	OPT_PATCH,
	OPT_PATCH_LIST,
	OPT_PATCH_EXCLUDE,
	OPT_PID,
	OPT_DURATION,
};

struct run_opts {
	struct cli_report r;
	const char *backend;	/* NULL: leave METER_BACKEND as it is */
	uint64_t period_ns;	/* 0: libmeter's default */
	const char *clock;	/* NULL: leave METER_CLOCK as it is */
	double periodic;	/* seconds, 0: off */
	unsigned repeat;
	bool follow_fork;
	bool progress;
	char alloc_lib[1024];	/* --alloc: libmeter-alloc.so, "": off */
	char patch_lib[1024];	/* --patch: libmeter-patch.so, "": off */
	char patch_objs[256];	/* --patch=OBJ,...: exe, all, a library */
	bool patch_list;
	char patch_exclude[1024];	/* globs, comma-separated */
	pid_t pid;		/* --pid: attach, no PROG */
	double duration;	/* --pid: seconds, 0: until ^C */
	char **argv;
};

/* The private directory METER_OUTPUT points into. */
static char tmpdir[1024];


/* The running PROG, for forwarding SIGTERM and SIGHUP. */
static volatile pid_t running_child;

static void forward_signal(int sig)
{
	if (running_child > 0)
		kill(running_child, sig);
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: meter-run [options] [--] PROG [ARGS...]\n"
"\n"
"Runs PROG, a program built with libmeter, and prints its profile when it\n"
"exits.  meter-run exits with PROG's exit status (128+N if signal N killed\n"
"it).\n"
"\n"
"Sampling:\n"
"  -F, --frequency HZ   samples per CPU-second of each thread (per second\n"
"                       with --clock wall)\n"
"      --period DUR     sampling period from 10us to 1s: 1ms, 100us,\n"
"                       250000ns, 0.01s\n"
"                       (default 1ms)\n"
"      --clock CLOCK    cpu (default: each thread's CPU time) or wall (each\n"
"                       thread's wall-clock time, running or not, split into\n"
"                       on-CPU, runnable and blocked; kernel backend)\n"
"  -b, --backend B      kernel, signal, off or auto (default: $METER_BACKEND\n"
"                       or auto)\n"
"      --follow-fork    also profile the processes PROG forks, merged\n"
"      --repeat N       run PROG N times and merge the profiles\n"
"      --periodic SECS  print a live report on stderr every SECS seconds\n"
"                       (kernel backend)\n"
"      --patch[=OBJ,..] profile a program built without meter: patch the\n"
"                       function entries of OBJ (exe, the default; all; a\n"
"                       library's name) as it loads (patching.md)\n"
"      --patch-list     with --patch: list each function, patched or refused\n"
"                       and why, on stderr\n"
"      --patch-exclude=GLOB  with --patch: leave matching functions alone\n"
"      --pid PID        attach to a running process, patch it as --patch does,\n"
"                       profile it --duration SECS (or until ^C), detach\n"
"      --alloc          also count malloc, calloc and realloc calls and bytes\n"
"                       per function (preloads libmeter-alloc.so)\n"
"      --no-progress    no progress line on a terminal\n"
"  -h, --help           this help\n"
"\n" CLI_REPORT_HELP
"\n"
"PROG must be built with libmeter: with meter's GCC plugin (every function,\n"
"-fplugin=$(pkg-config --variable=gccplugin meter)); or `#include <meter.h>`\n"
"and METER_FUNCTION(); at the top of each function to profile; or with\n"
"-finstrument-functions; linked with -lmeter (pkg-config has the flags).\n");
}

static int parse_uint(const char *s, unsigned long long max,
		      unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || !v || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * A library meter-run preloads (lib, for option opt): $env, else beside
 * meter-run (../lib, the build tree), else meter's own directory under the
 * LIBDIR it was built for (PKGLIBDIR: /usr/lib/<triplet>/meter in the
 * Debian package).
 */
static void find_preload(const char *lib, const char *env, const char *opt,
			 char *out, size_t outlen)
{
	const char *v = getenv(env);
	char exe[900];
	ssize_t n;

	if (v && *v) {
		snprintf(out, outlen, "%s", v);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		if (strrchr(exe, '/'))
			*strrchr(exe, '/') = '\0';
		snprintf(out, outlen, "%s/../lib/%s", exe, lib);
		if (access(out, R_OK))
			snprintf(out, outlen, "%s/%s", METER_PKGLIBDIR, lib);
	}
	if (access(out, R_OK))
		cli_die_usage("%s needs %s: %s: %s", opt, lib, out,
			      strerror(errno));
}

/* --patch-exclude=GLOB, once or more: the globs, comma-separated. */
static void add_exclude(struct run_opts *o, const char *glob)
{
	size_t n = strlen(o->patch_exclude);

	if (!*glob || strchr(glob, ',') ||
	    n + strlen(glob) + 2 > sizeof(o->patch_exclude))
		cli_die_usage("--patch-exclude wants a glob without commas, "
			      "not '%s'", glob);
	snprintf(o->patch_exclude + n, sizeof(o->patch_exclude) - n, "%s%s",
		 n ? "," : "", glob);
}

static const char *backend_said(const struct run_opts *o)
{
	const char *b = o->backend ? o->backend : getenv("METER_BACKEND");

	/* only the module samples wall time: say so rather than fall back */
	if ((!b || !*b || !strcmp(b, "auto")) && o->clock &&
	    !strcmp(o->clock, "wall"))
		return "kernel";
	return b && *b ? b : "auto";
}

static void check_args(const struct run_opts *o);

/* One option of meter-run's own (not a report option): o updated, or
 * the usage error. */
static void run_option(struct run_opts *o, int c)
{
	unsigned long long v;
	double d;

	switch (c) {
	case 'F':
		if (parse_seconds(optarg, &d) || d < 1 || d > 100000)
			cli_die_usage("-F wants a rate in Hz from 1 to "
				      "100000, not '%s'", optarg);
		o->period_ns = (uint64_t)(1e9 / d + 0.5);
		return;
	case OPT_PERIOD:
		if (parse_duration_ns(optarg, &o->period_ns) ||
		    o->period_ns < METER_PERIOD_MIN_NS ||
		    o->period_ns > METER_PERIOD_MAX_NS)
			cli_die_usage("--period wants a duration from "
				      "10us to 1s such as 1ms or 100us, "
				      "not '%s'", optarg);
		return;
	case OPT_CLOCK:
		if (strcmp(optarg, "cpu") && strcmp(optarg, "wall"))
			cli_die_usage("--clock wants cpu or wall, not "
				      "'%s'", optarg);
		o->clock = optarg;
		return;
	case 'b':
		if (strcmp(optarg, "kernel") &&
		    strcmp(optarg, "signal") &&
		    strcmp(optarg, "off") && strcmp(optarg, "auto"))
			cli_die_usage("unknown backend '%s' (kernel, "
				      "signal, off, auto)", optarg);
		o->backend = optarg;
		return;
	case OPT_PERIODIC:
		if (parse_seconds(optarg, &o->periodic) ||
		    o->periodic < 0.01)
			cli_die_usage("--periodic wants seconds (at "
				      "least 0.01), not '%s'", optarg);
		return;
	case OPT_REPEAT:
		if (parse_uint(optarg, 1000000, &v))
			cli_die_usage("--repeat wants a count from 1, "
				      "not '%s'", optarg);
		o->repeat = (unsigned)v;
		return;
	case OPT_FOLLOW_FORK:
		o->follow_fork = true;
		return;
	case OPT_NO_PROGRESS:
		o->progress = false;
		return;
	case OPT_ALLOC:
		find_preload("libmeter-alloc.so", "METER_ALLOC_LIB",
			     "--alloc", o->alloc_lib,
			     sizeof(o->alloc_lib));
		return;
	case OPT_PATCH:
		if (snprintf(o->patch_objs, sizeof(o->patch_objs),
			     "%s", optarg ? optarg : "exe") >=
		    (int)sizeof(o->patch_objs) || !o->patch_objs[0])
			cli_die_usage("--patch= wants exe, all or "
				      "libraries, comma-separated");
		find_preload("libmeter-patch.so", "METER_PATCH_LIB",
			     "--patch", o->patch_lib,
			     sizeof(o->patch_lib));
		return;
	case OPT_PATCH_LIST:
		o->patch_list = true;
		return;
	case OPT_PID:
		if (parse_uint(optarg, 1 << 22, &v) || !v)
			cli_die_usage("--pid wants a process id, not "
				      "'%s'", optarg);
		o->pid = (pid_t)v;
		return;
	case OPT_DURATION:
		if (parse_seconds(optarg, &o->duration))
			cli_die_usage("--duration wants seconds, not "
				      "'%s'", optarg);
		return;
	case OPT_PATCH_EXCLUDE:
		add_exclude(o, optarg);
		return;
	case 'h':
		usage(stdout);
		exit(0);
	default:
		fprintf(stderr, "Try 'meter-run --help'.\n");
		exit(2);
	}
}

static void parse_args(int argc, char **argv, struct run_opts *o)
{
	static const struct option longopts[] = {
		CLI_REPORT_LONGOPTS,
		{ "frequency", required_argument, NULL, 'F' },
		{ "period", required_argument, NULL, OPT_PERIOD },
		{ "clock", required_argument, NULL, OPT_CLOCK },
		{ "backend", required_argument, NULL, 'b' },
		{ "periodic", required_argument, NULL, OPT_PERIODIC },
		{ "repeat", required_argument, NULL, OPT_REPEAT },
		{ "follow-fork", no_argument, NULL, OPT_FOLLOW_FORK },
		{ "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
		{ "alloc", no_argument, NULL, OPT_ALLOC },
		{ "patch", optional_argument, NULL, OPT_PATCH },
		{ "patch-list", no_argument, NULL, OPT_PATCH_LIST },
		{ "patch-exclude", required_argument, NULL, OPT_PATCH_EXCLUDE },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	cli_report_init(&o->r);
	o->repeat = 1;
	o->progress = true;
	while ((c = getopt_long(argc, argv, "+f:o:F:b:h", longopts,
				NULL)) != -1) {
		if (cli_report_option(&o->r, c, optarg))
			continue;
		run_option(o, c);
	}
	if (optind >= argc && !o->pid)
		cli_die_usage("no program to run (meter-run [options] -- PROG "
			      "[ARGS...])");
	if (o->pid && optind < argc)
		cli_die_usage("--pid attaches to a process: no PROG");
	o->argv = argv + optind;
	if (o->pid && !o->patch_lib[0]) {	/* --pid patches */
		strcpy(o->patch_objs, "exe");
		find_preload("libmeter-patch.so", "METER_PATCH_LIB", "--pid",
			     o->patch_lib, sizeof(o->patch_lib));
	}
	check_args(o);
}

/* The options that only go together. */
static void check_args(const struct run_opts *o)
{
	if (o->periodic && o->backend && (!strcmp(o->backend, "signal") ||
					  !strcmp(o->backend, "off")))
		cli_die_usage("--periodic reads the kernel session: it needs "
			      "--backend kernel or auto");
	if (o->clock && !strcmp(o->clock, "wall") &&
	    strcmp(backend_said(o), "kernel"))
		cli_die_usage("--clock wall samples threads while they sleep: "
			      "only the kernel backend can (meter.ko)");
	if (o->pid && (o->repeat > 1 || o->follow_fork || o->periodic ||
		       o->alloc_lib[0]))
		cli_die_usage("--pid goes with none of --repeat, --follow-fork, "
			      "--periodic, --alloc");
	if (o->duration && !o->pid)
		cli_die_usage("--duration goes with --pid");
	if ((o->patch_list || o->patch_exclude[0]) && !o->patch_lib[0])
		cli_die_usage("--patch-list and --patch-exclude go with "
			      "--patch");
	if (o->periodic && o->r.ro.format == FMT_PPROF)
		cli_die_usage("--periodic cannot repeat the binary pprof "
			      "format");
}

static double elapsed_s(uint64_t t0)
{
	return (double)(cli_boottime_ns() - t0) / 1e9;
}

/* --- running --- */

/* In the child: lib first in LD_PRELOAD. */
static void preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;

	if (asprintf(&v, "%s%s%s", lib, old && *old ? " " : "",
		     old ? old : "") < 0)
		_exit(126);
	setenv("LD_PRELOAD", v, 1);
	free(v);
}

/* In the child: what --alloc and --patch ask of the preloads. */
static void preload_env(const struct run_opts *o)
{
	if (o->alloc_lib[0]) {
		setenv("METER_ALLOC", "1", 1);
		preload(o->alloc_lib);
	}
	if (o->patch_lib[0]) {
		setenv("METER_PATCH", o->patch_objs, 1);
		setenv("METER_PATCH_REPORT", tmpdir, 1);
		if (o->patch_list)
			setenv("METER_PATCH_LIST", "1", 1);
		if (o->patch_exclude[0])
			setenv("METER_PATCH_EXCLUDE", o->patch_exclude, 1);
		preload(o->patch_lib);
	}
}

static void setenv_u64(const char *name, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	setenv(name, buf, 1);
}

/*
 * Every profiled process would say that it samples with signals (each
 * child, each --repeat): meter-run says it once for the run, and tells
 * libmeter not to (METER_NOTICE_SIGNAL=0).
 */
static void say_signal_backend_once(const struct run_opts *o)
{
	static bool said;
	const char *b = backend_said(o);
	bool quiet = getenv("METER_QUIET") && *getenv("METER_QUIET") &&
		     strcmp(getenv("METER_QUIET"), "0");

	if (!strcmp(b, "signal")) {
		if (!said && !quiet)
			fprintf(stderr, "meter-run: signal backend: samples "
				"are limited to the scheduler tick\n");
	} else if (!strcmp(b, "auto") && !run_kernel()) {
		if (!said && !quiet)
			fprintf(stderr, "meter-run: %s: using the signal "
				"backend (samples limited to the scheduler "
				"tick)\n", run_kernel_error());
	} else {
		return;
	}
	said = true;
	setenv("METER_NOTICE_SIGNAL", "0", 1);
}

static void periodic_report(const struct run_opts *o,
			    struct run_result *rr, double t)
{
	struct meter_profile *p = run_kernel_collect(rr, o->follow_fork, false,
						 true, NULL);
	struct report_opts ro = o->r.ro;
	char err[256];

	if (!p && !run_kernel()) {
		static bool told;

		if (!told)
			fprintf(stderr, "meter-run: no live reports: %s (they "
				"need the kernel backend)\n", run_kernel_error());
		told = true;
		return;
	}
	fprintf(stderr, "\n=== meter-run: live report at %.1f s ===\n", t);
	if (!p) {
		fprintf(stderr, "(no kernel session yet)\n");
		return;
	}
	if (render_profile(p, &ro, stderr, err, sizeof(err)))
		fprintf(stderr, "meter-run: %s\n", err);
	meter_profile_free(p);
}

/*
 * --follow-fork: how often the tree's finished kernel sessions are read
 * and deleted, so that meter.ko's bound on finished sessions (64) evicts
 * none: more than 640 exits a second in one tree would outrun it.
 */
#define HARVEST_S 0.1

static void wait_child(const struct run_opts *o, struct run_result *rr)
{
	bool tty = o->progress && !o->periodic && isatty(STDERR_FILENO);
	double next_progress = 1.0, next_periodic = o->periodic;
	double next_harvest = HARVEST_S;
	bool shown = false;
	int st;

	for (;;) {
		pid_t w;

		if (!tty && !o->periodic && !o->follow_fork) {
			w = waitpid(rr->pid, &st, 0);
		} else {
			w = waitpid(rr->pid, &st, WNOHANG);
			if (w == 0) {
				double t = elapsed_s(rr->t0_ns);

				if (tty && t >= next_progress) {
					uint64_t samples = 0;

					run_kernel_collect(rr, o->follow_fork,
						       false, false, &samples);
					if (run_kernel())
						fprintf(stderr, "\rmeter-run: "
							"%.1f s, %" PRIu64
							" samples\033[K", t,
							samples);
					else
						fprintf(stderr, "\rmeter-run: "
							"%.1f s\033[K", t);
					shown = true;
					next_progress = t + 0.5;
				}
				if (o->follow_fork && t >= next_harvest) {
					run_kernel_harvest(rr);
					next_harvest = t + HARVEST_S;
				}
				if (o->periodic && t >= next_periodic) {
					periodic_report(o, rr, t);
					next_periodic = t + o->periodic;
				}
				usleep(20000);
				continue;
			}
		}
		if (w < 0 && errno == EINTR)
			continue;
		break;
	}
	if (shown)
		fprintf(stderr, "\r\033[K");
	if (WIFEXITED(st))
		rr->status = WEXITSTATUS(st);
	else if (WIFSIGNALED(st)) {
		rr->status = 128 + WTERMSIG(st);
		rr->signal = WTERMSIG(st);
	}
	else
		rr->status = 1;
}


/* What PROG is told (with --pid, what the process is told). */
static void child_env(const struct run_opts *o, uint64_t token)
{
	char out[1100];

	setenv("METER_BACKEND", o->backend ? o->backend : backend_said(o), 1);
	if (o->period_ns)
		setenv_u64("METER_PERIOD_NS", o->period_ns);
	if (o->clock)
		setenv("METER_CLOCK", o->clock, 1);
	snprintf(out, sizeof(out), "%s/meter.out.%%p", tmpdir);
	setenv("METER_OUTPUT", out, 1);
	setenv_u64("METER_PARENT_COOKIE", token);
	preload_env(o);
}

static int run_once(const struct run_opts *o, struct run_result *rr)
{
	int pfd[2];
	ssize_t got;
	int child_errno = 0;

	uint64_t token = 0;

	/*
	 * The run's token, for sessions with no profiled ancestor (followed
	 * with --follow-fork, else counted as left out).  Never 0, which
	 * means none; a clash with a real cookie is a chance of 2^-64.
	 */
	while (!token)
		if (getrandom(&token, sizeof(token), 0) < 0)
			token = ((uint64_t)getpid() << 32) ^ cli_boottime_ns();
	if (run_result_init(rr, token)) {
		fprintf(stderr, "meter-run: out of memory\n");
		return -1;
	}
	if (o->pid) {		/* the process is told what PROG would be */
		say_signal_backend_once(o);
		child_env(o, token);
		return run_attach_env(o->pid, o->duration, o->patch_lib, rr);
	}
	if (pipe2(pfd, O_CLOEXEC)) {
		fprintf(stderr, "meter-run: pipe: %s\n", strerror(errno));
		return -1;
	}
	say_signal_backend_once(o);
	fflush(NULL);
	rr->t0_ns = cli_boottime_ns();
	rr->pid = fork();
	if (rr->pid < 0) {
		fprintf(stderr, "meter-run: fork: %s\n", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (rr->pid == 0) {
		char **py = NULL;
		int e;

		close(pfd[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		child_env(o, token);
		/* patched, an interpreter is profiled as the C program it is */
		if (!o->patch_lib[0]) {
			run_lua_env(o->argv);
			py = run_python_argv(o->argv);
		}
		execvp(o->argv[0], py ? py : o->argv);
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	running_child = rr->pid;
	close(pfd[1]);
	do {
		got = read(pfd[0], &child_errno, sizeof(child_errno));
	} while (got < 0 && errno == EINTR);
	close(pfd[0]);
	if (got == (ssize_t)sizeof(child_errno)) {
		int st;

		waitpid(rr->pid, &st, 0);
		fprintf(stderr, "meter-run: cannot run %s: %s\n", o->argv[0],
			strerror(child_errno));
		rr->exec_failed = true;
		rr->status = child_errno == ENOENT ? 127 : 126;
		return 0;
	}
	wait_child(o, rr);
	running_child = 0;
	return 0;
}


static void explain_no_profile(const struct run_opts *o,
			       const struct run_result *rr)
{
	const char *b = backend_said(o);

	if (o->pid) {
		fprintf(stderr, "meter-run: process %d made no profiled call "
			"while attached\n", (int)o->pid);
		return;
	}
	if (rr->signal && strcmp(b, "kernel")) {
		fprintf(stderr, "meter-run: %s was killed by signal %d (%s) "
			"before it could write its profile: the signal and "
			"off backends write it at exit; the kernel backend "
			"keeps it.\n", o->argv[0], rr->signal,
			strsignal(rr->signal));
		return;
	}
	if (rr->children_left) {
		fprintf(stderr, "meter-run: %s made no profiled call itself, "
			"but %zu process%s it forked did: --follow-fork merges "
			"them.\n", o->argv[0], rr->children_left,
			rr->children_left == 1 ? "" : "es");
		return;
	}
	fprintf(stderr, "meter-run: %s produced no profile (backend %s: ",
		o->argv[0], b);
	if (strcmp(b, "kernel") && strcmp(b, "auto"))
		fprintf(stderr, "no file in METER_OUTPUT).\n");
	else if (run_kernel())
		fprintf(stderr, "no file in METER_OUTPUT, no kernel session "
			"for pid %d).\n", (int)rr->pid);
	else
		fprintf(stderr, "no file in METER_OUTPUT, no kernel session: "
			"%s).\n", run_kernel_error());
	fprintf(stderr,
		"meter-run: it was probably not built with libmeter.  Build it "
		"with meter's\n"
		"    GCC plugin: -fplugin=$(pkg-config --variable=gccplugin "
		"meter); or with\n"
		"    #include <meter.h>   and   METER_FUNCTION();  at the top "
		"of each\n"
		"    function to profile; or with -finstrument-functions; "
		"linked with -lmeter\n"
		"    (pkg-config --cflags --libs meter).\n");
	if (!strcmp(b, "kernel") && !run_kernel())
		fprintf(stderr, "meter-run: the kernel backend needs meter.ko "
			"(modprobe meter); --backend signal works without "
			"it.\n");
}

/*
 * A tree of processes is PROG's, whether PROG is instrumented or a shell:
 * the header names it, not whichever session was merged first.
 */
static void name_tree(struct meter_profile *all, const struct run_opts *o,
		      const struct run_result *rr)
{
	const char *slash;
	char *name;

	if (!o->follow_fork || all->nprocs < 2)
		return;
	slash = strrchr(o->argv[0], '/');
	name = strdup(slash ? slash + 1 : o->argv[0]);
	if (!name)
		return;
	free(all->command);
	all->command = name;
	all->pid = rr->pid;
}

int main(int argc, char **argv)
{
	struct meter_profile *all = NULL;
	struct run_opts o;
	struct run_result rr = { 0 };
	const char *td;
	FILE *out;
	int status = 0;
	unsigned run;

	cli_prog = "meter-run";
	parse_args(argc, argv, &o);

	/* Fail now, not after a long run. */
	out = cli_open_output(&o.r);
	if (!out)
		return 2;
	td = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/meter-run.XXXXXX",
		 td && *td ? td : "/tmp");
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "meter-run: cannot create a directory in %s: "
			"%s\n", td && *td ? td : "/tmp", strerror(errno));
		return 1;
	}
	/* Like time(1): ^C goes to PROG; we stay to print the report. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	/* SIGTERM and SIGHUP end PROG, and we still report. */
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = forward_signal;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}

	for (run = 0; run < o.repeat; run++) {
		struct meter_profile *p;

		if (run_once(&o, &rr)) {
			run_result_free(&rr);
			status = 1;
			break;
		}
		if (rr.exec_failed) {
			run_result_free(&rr);
			status = rr.status;
			break;
		}
		p = run_files_collect(&rr, tmpdir, o.follow_fork);
		if (!p)
			p = run_kernel_collect(&rr, o.follow_fork, true, true,
					   NULL);
		run_result_free(&rr);
		if (p && o.patch_lib[0] && run_patch_collect(p, tmpdir)) {
			meter_profile_free(p);
			status = 1;
			break;
		}
		if (p && cli_merge_into(&all, p)) {
			status = 1;
			break;
		}
		if (rr.status) {
			status = rr.status;
			if (o.repeat > 1 && run + 1 < o.repeat)
				fprintf(stderr, "meter-run: run %u exited with "
					"status %d; not repeating\n", run + 1,
					rr.status);
			break;
		}
	}
	run_remove_dir(tmpdir);
	run_kernel_close();

	if (!all) {
		if (!rr.exec_failed)
			explain_no_profile(&o, &rr);
		if (out != stdout) {
			fclose(out);
			unlink(o.r.output);
		}
		return status ? status : 1;
	}
	name_tree(all, &o, &rr);
	run_warn_slow_path(all);
	run_warn_unsampled(all);
	if (cli_write_report(all, &o.r, out) && !status)
		status = 1;
	meter_profile_free(all);
	return status;
}
