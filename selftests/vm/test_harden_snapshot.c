// SPDX-License-Identifier: MIT
/*
 * The memory a reader makes the kernel hold.  A session's stack table
 * starts small and grows as stacks come, to its bound, charged to the
 * registering process's memory cgroup; a PROFILE_GET held
 * open (a dump not read to its end) holds a snapshot charged to the
 * reader's cgroup and sized by what the session uses, not by its table;
 * max_user_snap_mb bounds what one user's open dumps hold, per user, and
 * closing them gives it back; the snapshot, copied in pieces, keeps every
 * stack's frames; a reset empties the table and ticking goes on into the
 * new one.
 *
 * The cgroups are made in a cgroup2 mount of the test's own
 * (memory.current).  Dumps are held on raw sockets with a small receive
 * buffer, as test_harden_unload.c does.
 */
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kmod_util.h"
#include "raw_genl.h"

#define DEPTH	64		/* frames of each stack made */
#define HELD	8		/* dumps held at once */
#define CG	"/tmp/cg"

static long cg_current(const char *cg)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), CG "/%s/memory.current", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A line of the cgroup's memory.stat, in bytes; -1 if not there */
static long cg_stat(const char *cg, const char *key)
{
	char path[128], name[64];
	long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), CG "/%s/memory.stat", cg);
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

/* MemFree in bytes: what the kernel holds for the dumps, charged or not */
static long mem_free(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemFree: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb << 10;
}

static int cg_make(const char *cg)
{
	char path[128];

	snprintf(path, sizeof(path), CG "/%s", cg);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int cg_enter(const char *cg, pid_t pid)
{
	char path[128], s[32];

	snprintf(path, sizeof(path), CG "/%s/cgroup.procs", cg);
	snprintf(s, sizeof(s), "%d", (int)pid);
	return ku_write(path, s);
}

static int cg_setup(void)
{
	mkdir(CG, 0755);
	if (mount("none", CG, "cgroup2", 0, NULL) && errno != EBUSY)
		return -errno;
	return ku_write(CG "/cgroup.subtree_control", "+memory");
}

/*
 * A child in cgroup cg that runs fn, then waits for a byte on *go before
 * it exits; returns its pid, with *go the write end.
 */
typedef void (*child_fn)(void *arg);

static pid_t child_in(const char *cg, child_fn fn, void *arg, int *go,
		      int *done)
{
	int in[2], out[2];
	pid_t pid;
	char c;

	if (pipe(in) || pipe(out))
		return -1;
	pid = fork();
	if (!pid) {
		close(in[1]);
		close(out[0]);
		alarm(120);
		if (read(in[0], &c, 1) != 1)	/* in its cgroup */
			_exit(3);
		fn(arg);
		if (write(out[1], "d", 1) != 1)
			_exit(3);
		if (read(in[0], &c, 1) < 0)	/* until told */
			_exit(3);
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	if (cg_enter(cg, pid) || write(in[1], "g", 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	*go = in[1];
	*done = out[0];
	return pid;
}

static void child_end(pid_t pid, int go, int done)
{
	close(go);
	close(done);
	waitpid(pid, NULL, 0);
}

/* Names ids from..to (the tick counts frames of unnamed ids as invalid). */
static void name_ids(struct meter_nl *nl, uint32_t from, uint32_t to)
{
	struct meter_nl_func f[64];
	char names[64][16], err[256] = "";
	uint32_t n = 0, id;

	for (id = from; id <= to; id++) {
		snprintf(names[n], sizeof(names[n]), "f%u", id);
		f[n].id = id;
		f[n].name = names[n];
		if (++n == 64 || id == to) {
			if (meter_nl_add_funcs(nl, f, n, err, sizeof(err)))
				ku_bail("add_funcs", -EIO, err);
			n = 0;
		}
	}
}

/* The ids make_stacks uses, named. */
static void name_stack_ids(struct meter_nl *nl)
{
	name_ids(nl, 1, DEPTH - 2);
	name_ids(nl, 100, 139);
	name_ids(nl, 200, 239);
}

/*
 * One stack after another, each of DEPTH frames and distinct in its last
 * two, for ns of CPU time.
 */
static void make_stacks(struct meter_page *pg, uint64_t ns)
{
	uint64_t start = ku_thread_cpu_ns();
	uint32_t k = 0, d;

	for (d = 1; d <= DEPTH - 2; d++)
		ku_enter(pg, d);
	while (ku_thread_cpu_ns() - start < ns) {
		ku_enter(pg, 100 + k % 40);
		ku_enter(pg, 200 + (k / 40) % 40);
		ku_burn(30000);
		ku_leave(pg);
		ku_leave(pg);
		k++;
	}
	for (d = 1; d <= DEPTH - 2; d++)
		ku_leave(pg);
}

/*
 * Child: registers and makes stacks until the session keeps GROWN_STACKS;
 * *arg gets their number.  A table that first holds 256 entries, then
 * 1024, has grown twice to keep more; its pool, grown when a quarter
 * full, has reached stack_frames by then (1100 stacks of DEPTH frames:
 * 70400 frames; kmod/stacks.c).
 */
#define GROWN_STACKS	1100

static void grow_table(void *arg)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_profile *p;
	uint64_t cookie;
	size_t n = 0;
	int i;

	cookie = ku_register(nl, pg, 100000);
	name_stack_ids(nl);
	for (i = 0; i < 40 && n < GROWN_STACKS; i++) {
		make_stacks(pg, 500000000ull);
		p = ku_profile(nl, cookie, 0);
		n = p->nstacks;
		meter_profile_free(p);
	}
	*(size_t *)arg = n;
}

static uint64_t held_cookie;
static int held_fds[HELD];
static int held_n;

/* Child: holds HELD dumps of held_cookie open. */
static void hold_dumps(void *arg)
{
	(void)arg;
	for (held_n = 0; held_n < HELD; held_n++) {
		held_fds[held_n] = raw_genl_dump_start(held_cookie);
		if (held_fds[held_n] < 0)
			break;
	}
}

/* What the session's snapshot holds: stacks, their frames, functions. */
static size_t used_bytes(const struct meter_profile *p)
{
	size_t b = p->nfuncs * 80 + p->nthreads * 16;
	size_t i;

	for (i = 0; i < p->nstacks; i++)
		b += 24 + p->stacks[i].depth * 4;
	return b;
}

/*
 * Every stack as made: frames 1, 2, ... up to DEPTH-2 (a tick while they
 * are pushed or popped sees fewer), then one of 100..139, then one of
 * 200..239.
 */
static int stacks_intact(const struct meter_profile *p)
{
	size_t i;
	uint32_t d;

	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		if (s->depth > DEPTH)
			return 0;
		for (d = 0; d < s->depth; d++)
			if (d < DEPTH - 2 ? s->frames[d] != d + 1 :
			    d == DEPTH - 2 ? s->frames[d] / 100 != 1 ||
					     s->frames[d] % 100 >= 40 :
			    s->frames[d] / 100 != 2 || s->frames[d] % 100 >= 40)
				return 0;
	}
	return 1;
}

static int same_stacks(const struct meter_profile *a,
		       const struct meter_profile *b)
{
	size_t i, j;

	if (a->nstacks != b->nstacks)
		return 0;
	for (i = 0; i < a->nstacks; i++) {
		for (j = 0; j < b->nstacks; j++)
			if (a->stacks[i].depth == b->stacks[j].depth &&
			    a->stacks[i].samples == b->stacks[j].samples &&
			    !memcmp(a->stacks[i].frames, b->stacks[j].frames,
				    a->stacks[i].depth * 4))
				break;
		if (j == b->nstacks)
			return 0;
	}
	return 1;
}

struct nobody_res {
	int ret;
	char msg[256];
};

/* Child as nobody: its own session, read in full. */
static void nobody_reads_own(struct nobody_res *r)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)pg };
	struct meter_nl_sel sel = { 0 };
	struct meter_profile *p = NULL;
	uint64_t cookie = 0;

	r->ret = meter_nl_register(nl, &reg, &cookie, NULL, r->msg,
				   sizeof(r->msg));
	if (r->ret)
		return;
	sel.cookie = cookie;
	r->ret = meter_nl_get_profile(nl, &sel, &p, r->msg, sizeof(r->msg));
	meter_profile_free(p);
}

int main(void)
{
	struct meter_nl *nl;
	struct meter_page *pg;
	struct meter_profile *p, *q;
	struct meter_nl_sel sel = { 0 };
	char msg[256] = "";
	uint64_t cookie;
	long before, after, free0, free1, table, old;
	int go, done, i, ret, fds[64], n;
	size_t used;
	pid_t pid, fin;
	char c;

	if (geteuid()) {
		printf("1..0 # SKIP needs root (cgroups, parameters)\n");
		return 4;	/* KSFT_SKIP */
	}
	ku_plan(7);
	if (cg_setup() || cg_make("reg") || cg_make("read"))
		ku_bail("cgroup2 with the memory controller", -errno, NULL);

	/* 1: the table grows from a worker, charged to the process's cgroup */
	table = ku_param_get("stack_frames") * 4;
	before = cg_stat("reg", "kernel");
	{
		size_t *kept = mmap(NULL, sizeof(*kept), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

		if (kept == MAP_FAILED)
			ku_bail("mmap", -errno, NULL);
		*kept = 0;
		pid = child_in("reg", grow_table, kept, &go, &done);
		if (pid < 0 || read(done, &c, 1) != 1)
			ku_bail("child", -EIO, NULL);
		after = cg_stat("reg", "kernel");
		ku_ok(before >= 0 && *kept >= GROWN_STACKS &&
		      after - before >= table,
		      "a session's stack table grows as stacks come (%zu kept) and its frame pool, grown to its bound (%ld KiB), is charged to the registering process's memory cgroup (kernel +%ld KiB)",
		      *kept, table >> 10, (after - before) >> 10);
		child_end(pid, go, done);
		munmap(kept, sizeof(*kept));
	}

	/* a finished session of many deep stacks, made by a child */
	fin = fork();
	if (!fin) {
		nl = ku_open();
		pg = ku_page();
		cookie = ku_register(nl, pg, 100000);
		name_stack_ids(nl);
		/*
		 * A loaded host delays the timer interrupt (CI once saw one
		 * per 12 ms), so CPU time goes on in slices until the table
		 * has grown.
		 */
		for (i = 0, n = 0; i < 20 && n < 256; i++) {
			make_stacks(pg, 500000000ull);
			p = ku_profile(nl, cookie, 0);
			n = p->nstacks;
			meter_profile_free(p);
		}
		_exit(0);
	}
	waitpid(fin, NULL, 0);
	nl = ku_open();
	sel.pid = fin;
	if (meter_nl_get_profile(nl, &sel, &p, msg, sizeof(msg)))
		ku_bail("get_profile", -EIO, msg);
	cookie = p->cookie;
	used = used_bytes(p);
	q = ku_profile(nl, cookie, 0);
	/* past 4096 frames (64 stacks) a piece ends on frames, not slots */
	ku_ok(p->nstacks >= 128 && stacks_intact(p) && same_stacks(p, q),
	      "a snapshot copied in pieces: %zu stacks of %d frames intact, and the same in a second dump",
	      p->nstacks, DEPTH);
	meter_profile_free(q);
	meter_profile_free(p);

	/* 2: held dumps charged to the reader, sized by what is used */
	held_cookie = cookie;
	before = cg_current("read");
	free0 = mem_free();
	pid = child_in("read", hold_dumps, NULL, &go, &done);
	if (pid < 0 || read(done, &c, 1) != 1)
		ku_bail("child", -EIO, NULL);
	after = cg_current("read");
	free1 = mem_free();
	ku_ok(after - before >= (long)(HELD * used * 8 / 10),
	      "%d held dumps are charged to the reader's memory cgroup: +%ld KiB for %zu KiB used",
	      HELD, (after - before) >> 10, HELD * used >> 10);
	ku_ok(free0 - free1 <= (long)(HELD * (used + (512 << 10))),
	      "... and sized by what the session uses, not by its table (%ld KiB): %ld KiB less free memory",
	      HELD * table >> 10, (free0 - free1) >> 10);
	child_end(pid, go, done);

	/* 3: max_user_snap_mb, per user, given back on close */
	old = ku_param_get("max_user_snap_mb");
	ku_param_set("max_user_snap_mb", (long)(2 * used >> 20) + 1);
	/* n dumps held, then one more read in full, until it is refused */
	for (n = 0, ret = 0; n < 64 && !ret; n++) {
		fds[n] = raw_genl_dump_start(cookie);
		if (fds[n] < 0)
			ku_bail("dump start", -errno, NULL);
		q = NULL;
		ret = meter_nl_get_profile(nl, &sel, &q, msg, sizeof(msg));
		meter_profile_free(q);
	}
	{
		struct nobody_res r = { 0 };
		int pf[2], st;

		if (pipe(pf))
			ku_bail("pipe", -errno, NULL);
		pid = fork();
		if (!pid) {
			ku_become_nobody();
			nobody_reads_own(&r);
			if (write(pf[1], &r, sizeof(r)) != sizeof(r))
				_exit(3);
			_exit(0);
		}
		if (read(pf[0], &r, sizeof(r)) != sizeof(r))
			r.ret = -9999;
		waitpid(pid, &st, 0);
		ku_ok(n > 1 && n < 64 && ret == -ENOBUFS &&
		      strstr(msg, "max_user_snap_mb") && r.ret == 0,
		      "max_user_snap_mb: root's %d open dumps fill it, the next is refused with ENOBUFS (%s); nobody's own dump still works (%s)",
		      n, msg, r.msg[0] ? r.msg : "ok");
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	/* the dumps end when their sockets go (a work item) */
	for (i = 0; i < 50; i++) {
		q = NULL;
		ret = meter_nl_get_profile(nl, &sel, &q, msg, sizeof(msg));
		meter_profile_free(q);
		if (!ret)
			break;
		usleep(100000);
	}
	ku_ok(ret == 0, "... and closing them gives it back: %s",
	      ret ? msg : "a full dump again");
	ku_param_set("max_user_snap_mb", old);

	/* 4: a reset empties the table; the session ticks into the new one */
	pg = ku_page();
	cookie = ku_register(nl, pg, 100000);
	name_stack_ids(nl);
	make_stacks(pg, 200000000ull);
	sel.pid = 0;
	sel.cookie = cookie;
	ret = meter_nl_reset(nl, &sel, msg, sizeof(msg));
	p = ku_profile(nl, cookie, 0);
	n = p->nstacks;
	meter_profile_free(p);
	/* in slices, as the child's above */
	for (i = 0, p = NULL; i < 50 && (!p || p->nstacks <= 20); i++) {
		meter_profile_free(p);
		make_stacks(pg, 200000000ull);
		p = ku_profile(nl, cookie, 0);
	}
	ku_ok(ret == 0 && n <= 2 && p->nstacks > 20 && stacks_intact(p),
	      "a reset empties the stack table (%d stacks left) and ticks go on into the new one (%zu after %d x 200 ms)",
	      n, p->nstacks, i);
	meter_profile_free(p);
	meter_nl_close(nl);
	return ku_exit();
}
