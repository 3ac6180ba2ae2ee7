// SPDX-License-Identifier: MIT
/*
 * meter-run --pid: a running process profiled by patching it, then left
 * running as it was (Documentation/patching.md, "Attaching").  With every
 * thread stopped by ptrace, one of them is made to call the C library's
 * dlopen on libmeter-patch.so, then meter_patch_attach(), which patches
 * the objects named as --patch names them, no jump over a stopped
 * thread's next instruction; the threads go on.  After the duration
 * (or ^C), stopped again, the thread calls meter_patch_detach(): the
 * jumps taken back and the profile ended, sent to meter.ko or written
 * where meter-run reads it.  A call is made by setting the thread's
 * registers (the function, its arguments, a stack below the red zone
 * whose return address is 0) and letting it run to the fault at 0.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "patch_elf.h"
#include "run_attach.h"
#include "run_collect.h"

extern char **environ;

#define TIDS_MAX	4096

struct tracee {
	pid_t tid[TIDS_MAX];
	uint64_t rip[TIDS_MAX];		/* where each was stopped */
	size_t n;
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "meter-run: --pid: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -1;
}

static bool seized(const struct tracee *t, pid_t tid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->tid[i] == tid)
			return true;
	return false;
}

/* Why PTRACE_SEIZE was refused, as the user can mend it. */
static int say_eperm(pid_t pid)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	if (scope >= 3)
		return fail("process %d: ptrace is disabled (kernel.yama."
			    "ptrace_scope is 3, until reboot)", (int)pid);
	if (scope >= 1)
		return fail("process %d: not permitted: kernel.yama.ptrace_"
			    "scope is %d, which lets only a parent or a process "
			    "with CAP_SYS_PTRACE attach (run as root)", (int)pid,
			    scope);
	return fail("process %d: not permitted: it is another user's, or "
		    "not dumpable", (int)pid);
}

/* Every thread of pid stopped (threads made meanwhile too). */
static int stop_all(pid_t pid, struct tracee *t)
{
	char dir[64];
	bool more = true;

	t->n = 0;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	while (more) {
		struct dirent *de;
		DIR *d = opendir(dir);

		if (!d)
			return fail("no process %d", (int)pid);
		more = false;
		while ((de = readdir(d))) {
			pid_t tid = (pid_t)atoi(de->d_name);
			struct user_regs_struct r;
			int st;

			if (tid <= 0 || seized(t, tid) || t->n == TIDS_MAX)
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, 0)) {
				if (errno == EPERM) {
					closedir(d);
					return say_eperm(pid);
				}
				continue;	/* it ended */
			}
			if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) ||
			    waitpid(tid, &st, __WALL) != tid ||
			    !WIFSTOPPED(st) ||
			    ptrace(PTRACE_GETREGS, tid, 0, &r))
				continue;
			t->tid[t->n] = tid;
			t->rip[t->n++] = r.rip;
			if (tid == pid && t->n > 1) {	/* the leader first: */
				t->tid[t->n - 1] = t->tid[0];	/* its stack */
				t->rip[t->n - 1] = t->rip[0];	/* grows */
				t->tid[0] = tid;
				t->rip[0] = r.rip;
			}
			more = true;
		}
		closedir(d);
	}
	return t->n ? 0 : fail("process %d has no thread to stop", (int)pid);
}

static void release_all(struct tracee *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		ptrace(PTRACE_DETACH, t->tid[i], 0, 0);
	t->n = 0;
}

/* Where pid has the object whose file's name starts with name; its path. */
static uint64_t object_base(pid_t pid, const char *name, char *path,
			    size_t len)
{
	char maps[64], line[4352], file[4096];
	unsigned long long lo, off;
	uint64_t base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return 0;
	while (!base && fgets(line, sizeof(line), f)) {
		const char *slash;

		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %4095s", &lo, &off,
			   file) != 3 || off)
			continue;
		slash = strrchr(file, '/');
		if (slash && !strncmp(slash + 1, name, strlen(name)) &&
		    strlen(file) < len) {
			base = lo;
			strcpy(path, file);
		}
	}
	fclose(f);
	return base;
}

/* The address of function sym of object name in pid; 0 if none. */
static uint64_t symbol_in(pid_t pid, const char *name, const char *sym)
{
	struct patch_obj obj;
	char path[4096], err[256];
	uint64_t base = object_base(pid, name, path, sizeof(path)), at = 0;
	size_t i;

	if (!base || patch_obj_open(path, &obj, err, sizeof(err)))
		return 0;
	for (i = 0; i < obj.nfuncs && !at; i++)
		if (!strcmp(obj.funcs[i].name, sym))
			at = base + obj.funcs[i].addr;
	patch_obj_close(&obj);
	return at;
}

static int poke(pid_t pid, uint64_t at, const void *data, size_t len)
{
	struct iovec local = { (void *)data, len };
	struct iovec remote = { (void *)(uintptr_t)at, len };

	return process_vm_writev(pid, &local, 1, &remote, 1, 0) ==
	       (ssize_t)len ? 0 : -1;
}

/*
 * fn(a, b, c) in thread tid, stopped; data (len bytes) is copied below
 * its stack first and *at says where, for the arguments to point into
 * (a, b and c are then offsets in data when their bit 63 is set).  The
 * thread's registers are as they were after.  Its return value, or -1.
 */
static int call_in(pid_t tid, uint64_t fn, const void *data, size_t len,
		   const uint64_t arg[3], uint64_t *ret)
{
	struct user_regs_struct saved, r;
	uint64_t at, sp, zero = 0, a[3];
	int st, sig = 0, i;

	if (ptrace(PTRACE_GETREGS, tid, 0, &saved))
		return -1;
	at = (saved.rsp - 4096 - len) & ~(uint64_t)15;
	sp = at - 16 - 8;	/* aligned as after a call */
	for (i = 0; i < 3; i++)
		a[i] = arg[i] >> 63 ? at + (arg[i] & ~(1ull << 63)) : arg[i];
	if ((len && poke(tid, at, data, len)) ||
	    poke(tid, sp, &zero, sizeof(zero)))
		return -1;
	r = saved;
	r.rip = fn;
	r.rsp = sp;
	r.rdi = a[0];
	r.rsi = a[1];
	r.rdx = a[2];
	r.rax = 0;
	r.orig_rax = (uint64_t)-1;	/* no system call to restart */
	if (ptrace(PTRACE_SETREGS, tid, 0, &r))
		return -1;
	for (;;) {
		if (ptrace(PTRACE_CONT, tid, 0, sig) ||
		    waitpid(tid, &st, __WALL) != tid || !WIFSTOPPED(st))
			return -1;
		sig = WSTOPSIG(st);
		if (sig == SIGSEGV && !ptrace(PTRACE_GETREGS, tid, 0, &r) &&
		    r.rip == 0)
			break;
		if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL)
			return -1;	/* a real fault: leave it stopped */
		if ((st >> 16) == PTRACE_EVENT_STOP)
			sig = 0;	/* a group stop, not a signal */
	}
	*ret = r.rax;
	return ptrace(PTRACE_SETREGS, tid, 0, &saved) ? -1 : 0;
}

#define IN_DATA(off)	((1ull << 63) | (off))

/*
 * What --pid cannot take on, read from the maps of the stopped process
 * (stopped, its maps cannot change under the reading; and another user's
 * cannot be read before the stop, which tells why it is refused): one
 * with no C library mapped, static or still in the dynamic loader (which
 * maps its libraries before running any, so what it is cannot be told
 * yet); a process meter profiles already (its own profile would be ended
 * at the detach); and C++, whose unwinder would meet the return hook's
 * addresses: at load time the preload's unwinder entries come first
 * (patch_unwind.c), but the C++ library of a running process has bound
 * libgcc's already.
 */
static int refused(pid_t pid)
{
	char path[4096];

	if (!object_base(pid, "libc.so.6", path, sizeof(path)))
		return fail("process %d has no C library mapped: a static "
			    "program, or one still starting", (int)pid);
	if (object_base(pid, "libmeter.so", path, sizeof(path)))
		return fail("process %d is profiled by meter already (%s)",
			    (int)pid, path);
	if (object_base(pid, "libstdc++", path, sizeof(path)))
		return fail("process %d is a C++ program: its exceptions would "
			    "meet the patched frames (--patch at its start "
			    "handles them; attaching does not)", (int)pid);
	return 0;
}

/* dlopen(lib) and meter_patch_attach(env, rips) in the stopped process. */
static int attach(pid_t pid, struct tracee *t, const struct attach_req *q)
{
	uint64_t dl = symbol_in(pid, "libc.so.6", "dlopen"), fn, ret;
	size_t plen = strlen(q->patch_lib) + 1, rips = (q->env_len + 7) & ~7ul;
	uint64_t args[3] = { IN_DATA(0), RTLD_NOW, 0 };
	char *data;
	int err;

	if (!dl)
		return fail("no dlopen in the C library of process %d",
			    (int)pid);
	if (call_in(t->tid[0], dl, q->patch_lib, plen, args, &ret) || !ret)
		return fail("process %d could not load %s", (int)pid,
			    q->patch_lib);
	fn = symbol_in(pid, "libmeter-patch.so", "meter_patch_attach");
	data = malloc(rips + t->n * 8);
	if (!fn || !data) {
		free(data);
		return fail("no meter_patch_attach in %s", q->patch_lib);
	}
	memcpy(data, q->env, q->env_len);
	memcpy(data + rips, t->rip, t->n * 8);
	args[0] = IN_DATA(0);
	args[1] = IN_DATA(rips);
	args[2] = t->n;
	err = call_in(t->tid[0], fn, data, rips + t->n * 8, args, &ret);
	free(data);
	if (err || (int)ret)
		return fail("nothing could be patched in process %d", (int)pid);
	return 0;
}

static int detach(pid_t pid, struct tracee *t)
{
	uint64_t fn = symbol_in(pid, "libmeter-patch.so", "meter_patch_detach");
	uint64_t args[3] = { 0, 0, 0 }, ret;

	if (!fn || call_in(t->tid[0], fn, NULL, 0, args, &ret))
		return fail("the patches of process %d could not be taken back",
			    (int)pid);
	return 0;
}

/*
 * The process's start time (/proc's clock ticks since boot), 0 if it has
 * ended (a zombie stays in /proc until its parent reaps it): a pid that
 * was reused is another process.
 */
static unsigned long long started(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	FILE *f;
	size_t n;
	int field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	/* field 3 is the state, after the name; the start time is 22 */
	for (field = 3, p += 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field == 22)
		t = strtoull(p, NULL, 10);
	return t;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int run_attach(const struct attach_req *q, bool *ended)
{
	unsigned long long born = started(q->pid);
	static struct tracee t;
	struct sigaction sa, old;
	double end;

	*ended = false;
	if (stop_all(q->pid, &t))
		return -1;
	if (refused(q->pid) || attach(q->pid, &t, q)) {
		release_all(&t);
		return -1;
	}
	release_all(&t);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, &old);
	end = now_s() + q->duration;
	while (!interrupted && (q->duration <= 0 || now_s() < end) &&
	       started(q->pid) == born)
		usleep(20000);
	sigaction(SIGINT, &old, NULL);
	if (started(q->pid) != born) {
		*ended = true;	/* its profile ended with it */
		return 0;
	}
	if (stop_all(q->pid, &t))
		return -1;
	if (detach(q->pid, &t)) {
		release_all(&t);
		return -1;
	}
	release_all(&t);
	return 0;
}

int run_attach_env(pid_t pid, double duration, const char *patch_lib,
		   struct run_result *rr)
{
	struct attach_req q = { .pid = pid, .duration = duration,
				.patch_lib = patch_lib };
	size_t len = 1, cap = 4096;
	char *env = malloc(cap), **e;
	bool ended;
	int ret;

	if (!env)
		return -1;
	for (e = environ; *e; e++) {
		size_t n = strlen(*e) + 1;

		if (strncmp(*e, "METER_", 6) || len + n > cap)
			continue;
		memcpy(env + len - 1, *e, n);
		len += n;
	}
	env[len - 1] = '\0';
	q.env = env;
	q.env_len = len;
	rr->pid = pid;
	rr->t0_ns = cli_boottime_ns();
	ret = run_attach(&q, &ended);
	free(env);
	rr->exec_failed = ret != 0;	/* said why: nothing more to explain */
	if (!ret && !ended)
		fprintf(stderr, "meter-run: detached from process %d, which "
			"goes on\n", (int)pid);
	return ret;
}
