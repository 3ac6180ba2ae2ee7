/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the meter.ko tests (selftests/vm/test_kmod_*.c).  The tests
 * fill struct meter_page themselves and talk to the module through
 * common/nlclient.c only, so they test the kernel independently of libmeter.
 */
#ifndef METER_KMOD_UTIL_H
#define METER_KMOD_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/meter.h>

#include "kselftest_harness.h"

#include "nldump.h"
#include "nlreg.h"

/*
 * The tests are on the kernel's kselftest_harness.h (from linux-source-6.1
 * at build time, scripts/kselftest-headers), one behaviour per test.  Its
 * 30 s limit per test is for a native machine; under TCG, and on the debug
 * kernel, the module tests take many times longer (read where TEST()
 * expands, after this).
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600

/* A "# " line in the test's output, through kselftest.h. */
static inline void __attribute__((format(printf, 1, 2)))
ku_diag(const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	ksft_print_msg("%s\n", text);
}

/* Ends the test (its child: the harness reports it failed). */
static inline void ku_bail(const char *what, int err, const char *msg)
{
	ksft_exit_fail_msg("%s: %s (%s)\n", what, strerror(-err),
			   msg ? msg : "");
}

static inline uint64_t ku_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC in ns: wall time for the tests that time requests. */
static inline uint64_t ku_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burns ns of this thread's CPU time; returns the CPU time burnt. */
static inline uint64_t ku_burn(uint64_t ns)
{
	uint64_t start = ku_thread_cpu_ns(), now;
	volatile uint64_t x = 0;
	int i;

	do {
		for (i = 0; i < 2000; i++)
			x += (uint64_t)i * 7;
		now = ku_thread_cpu_ns();
	} while (now - start < ns);
	return now - start;
}

/* A fresh private anonymous page laid out as struct meter_page. */
static inline struct meter_page *ku_page(void)
{
	struct meter_page *pg = mmap(NULL, METER_PAGE_SIZE,
				     PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (pg == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
	memset(pg, 0, METER_PAGE_SIZE);
	pg->magic = METER_PAGE_MAGIC;
	pg->version = METER_PAGE_VERSION;
	return pg;
}

/*
 * Appel's protocol, in libmeter's order (<meter.h>, meter__enter): the
 * callee becomes current, then its id is pushed, then the depth counts
 * it; until the depth store a sample sees the callee current over its
 * caller's stack.
 */
static inline void ku_enter(struct meter_page *pg, uint32_t id)
{
	pg->current_id = id;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (pg->depth < METER_STACK_CAP)
		pg->stack[pg->depth] = id;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pg->depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void ku_leave(struct meter_page *pg)
{
	pg->depth--;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pg->current_id = pg->depth ?
		(pg->depth <= METER_STACK_CAP ? pg->stack[pg->depth - 1] : 0) : 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline struct meter_nl *ku_open(void)
{
	struct meter_nl *nl;
	char err[256] = "";
	int ret = meter_nl_open(&nl, err, sizeof(err));

	if (ret)
		ku_bail("meter_nl_open", ret, err);
	return nl;
}

/* Registers the calling thread; bails out on failure. */
static inline uint64_t ku_register(struct meter_nl *nl, struct meter_page *pg,
			    uint64_t period_ns)
{
	struct meter_nl_reg reg = {
		.page_addr = (uintptr_t)pg,
		.period_ns = period_ns,
	};
	uint64_t cookie = 0, eff = 0;
	char err[256] = "";
	int ret = meter_nl_register(nl, &reg, &cookie, &eff, err, sizeof(err));

	if (ret)
		ku_bail("register", ret, err);
	return cookie;
}

/* Names ids 1..n as f1..fn. */
static inline void ku_funcs(struct meter_nl *nl, uint32_t n)
{
	struct meter_nl_func f[64];
	char names[64][16];
	char err[256] = "";
	uint32_t i;
	int ret;

	memset(f, 0, sizeof(f));	/* no file, no line */
	for (i = 0; i < n && i < 64; i++) {
		snprintf(names[i], sizeof(names[i]), "f%u", i + 1);
		f[i].id = i + 1;
		f[i].name = names[i];
	}
	ret = meter_nl_add_funcs(nl, f, i, err, sizeof(err));
	if (ret)
		ku_bail("add_funcs", ret, err);
}

static inline struct meter_profile *ku_profile(struct meter_nl *nl, uint64_t cookie,
					int32_t pid)
{
	struct meter_nl_sel sel = { .cookie = cookie, .pid = pid };
	struct meter_profile *p = NULL;
	char err[256] = "";
	int ret = meter_nl_get_profile(nl, &sel, &p, err, sizeof(err));

	if (ret)
		ku_bail("get_profile", ret, err);
	return p;
}

static inline uint64_t ku_self(const struct meter_profile *p, uint32_t id)
{
	const struct meter_func *f = meter_profile_find(p, id);

	return f ? f->self_samples : 0;
}

static inline double ku_abs(double x)
{
	return x < 0 ? -x : x;
}

/*
 * Drops root for uid/gid 65534.  Changing credentials makes the process
 * non-dumpable (suid_dumpable is 0); an ordinary user process is
 * dumpable, so make it so again.  Exits the process on failure.
 */
static inline void ku_become_nobody(void)
{
	if (setgid(65534) || setuid(65534) ||
	    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		_exit(2);
}

/* VmLck of process pid (0: this process) in kB; -1 if unknown. */
static inline long ku_vmlck_kb(pid_t pid)
{
	char line[256], path[64];
	long kb = -1;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmLck: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Module parameter NAME (/sys/module/meter/parameters); -1 if unreadable. */
static inline long ku_param_get(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/meter/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1) {
		char c = 0;

		/* bool parameters read Y or N */
		rewind(f);
		v = fscanf(f, "%c", &c) == 1 ? c == 'Y' : -1;
	}
	fclose(f);
	return v;
}

static inline int ku_param_set(const char *name, long v)
{
	char path[128];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/meter/parameters/%s", name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fprintf(f, "%ld\n", v) > 0 ? 0 : -EIO;
	if (fclose(f))
		ret = -errno;
	return ret;
}

/* Writes s to path (a sysfs, procfs or cgroup file); 0 or -errno. */
static inline int ku_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		ret = -errno;
	close(fd);
	return ret;
}

/* Keeps the calling thread on CPU cpu (the budget and IPI tests). */
static inline void ku_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Maps ids in the user namespace of child (which has just unshared it):
 * map is the uid_map and gid_map line ("0 200000 2"); 0 or -errno.
 */
static inline int ku_map_ids(pid_t child, const char *map)
{
	char path[64];
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)child);
	ret = ku_write(path, "deny");
	snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)child);
	if (!ret)
		ret = ku_write(path, map);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", (int)child);
	if (!ret)
		ret = ku_write(path, map);
	return ret;
}

/*
 * The tests' own cgroup2 mount, with the memory controller on for the
 * cgroups made in it (the memory tests measure what the module charges).
 */
#define KU_CG	"/tmp/cg"

/* The number a sysfs, procfs or cgroup file starts with; -1 if none. */
static inline long ku_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The cgroup's memory.current in bytes; -1 if unreadable. */
static inline long ku_cg_current(const char *cg)
{
	char path[128];

	snprintf(path, sizeof(path), KU_CG "/%s/memory.current", cg);
	return ku_read_long(path);
}

/* A line of the cgroup's memory.stat, in bytes; -1 if not there */
static inline long ku_cg_stat(const char *cg, const char *key)
{
	char path[128], name[64];
	long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), KU_CG "/%s/memory.stat", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", name, &v) == 2)
		if (!strcmp(name, key)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

/* Makes cgroup cg (or finds it made); 0 or -errno. */
static inline int ku_cg_make(const char *cg)
{
	char path[128];

	snprintf(path, sizeof(path), KU_CG "/%s", cg);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Moves process pid into cgroup cg; 0 or -errno. */
static inline int ku_cg_enter(const char *cg, pid_t pid)
{
	char path[128], s[32];

	snprintf(path, sizeof(path), KU_CG "/%s/cgroup.procs", cg);
	snprintf(s, sizeof(s), "%d", (int)pid);
	return ku_write(path, s);
}

/* Mounts KU_CG (or finds it mounted); 0 or -errno. */
static inline int ku_cg_setup(void)
{
	mkdir(KU_CG, 0755);
	if (mount("none", KU_CG, "cgroup2", 0, NULL) && errno != EBUSY)
		return -errno;
	return ku_write(KU_CG "/cgroup.subtree_control", "+memory");
}

/*
 * A child process that reports back on a pipe (the permission and limit
 * tests try things as another user, or in a process of their own).  In
 * the child (0 returned; as nobody if asked, killed after 60 s) *fd is the
 * write end, for ku_child_exit(); in the parent, the child's pid, and *fd
 * the read end, for ku_child_result().
 */
static inline pid_t ku_child(int nobody, int *fd)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		ku_bail("pipe", -errno, NULL);
	pid = fork();
	if (pid < 0)
		ku_bail("fork", -errno, NULL);
	if (!pid) {
		close(fds[0]);
		alarm(60);
		if (nobody)
			ku_become_nobody();
		*fd = fds[1];
		return 0;
	}
	close(fds[1]);
	*fd = fds[0];
	return pid;
}

/* In the child: sends res and exits. */
static inline void ku_child_exit(int fd, const void *res, size_t size)
{
	_exit(write(fd, res, size) == (ssize_t)size ? 0 : 3);
}

/* In the parent: the child's res, once it has exited; -1 if none came. */
static inline int ku_child_result(pid_t pid, int fd, void *res, size_t size)
{
	int st, ok = read(fd, res, size) == (ssize_t)size;

	close(fd);
	waitpid(pid, &st, 0);
	return ok ? 0 : -1;
}

/* Unloads meter.ko without waiting; 0 or -errno (EAGAIN while in use). */
static inline int ku_rmmod(void)
{
	return syscall(SYS_delete_module, "meter", O_NONBLOCK) ? -errno : 0;
}

/* Loads the module vm-run loaded ($METER_MODULE) with params. */
static inline int ku_insmod(const char *params)
{
	const char *ko = getenv("METER_MODULE");
	int fd, ret;

	if (!ko)
		return -ENOENT;
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

#endif /* METER_KMOD_UTIL_H */
