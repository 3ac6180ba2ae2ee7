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
#include <sys/socket.h>
#include <sys/wait.h>

#include "kmod_util.h"
#include "raw_genl.h"

#define DEPTH	64		/* frames of each stack made */
#define HELD	8		/* dumps held at once */

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
	if (ku_cg_enter(cg, pid) || write(in[1], "g", 1) != 1) {
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

	memset(f, 0, sizeof(f));	/* no file, no line */
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
	uint64_t cookie, t0 = ku_mono_ns();
	struct meter_profile *p;
	size_t n = 0;

	cookie = ku_register(nl, pg, 100000);
	name_stack_ids(nl);
	/*
	 * Rounds of 0.5 s of CPU time until the stacks are there, for up to
	 * 100 s (the child's alarm is at 120): a few rounds on a cloud
	 * kernel, 40 were not enough on the debug kernel (KASAN) with the
	 * host busy.
	 */
	while (n < GROWN_STACKS && ku_mono_ns() - t0 < 100000000000ull) {
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

/* root, the cgroups made: reg (the registering process), read (a reader) */
static void cgroups(struct __test_metadata *_metadata)
{
	if (geteuid())
		SKIP(return, "needs root (cgroups, parameters)");
	ASSERT_EQ(0, ku_cg_setup()) TH_LOG("cgroup2 with the memory controller");
	ASSERT_EQ(0, ku_cg_make("reg"));
	ASSERT_EQ(0, ku_cg_make("read"));
}

TEST(the_stack_table_grows_charged_to_the_registering_processs_cgroup)
{
	long table, before, after;
	size_t *kept;
	int go, done;
	pid_t pid;
	char c;

	cgroups(_metadata);
	if (_metadata->skip)
		return;
	table = ku_param_get("stack_frames") * 4;
	before = ku_cg_stat("reg", "kernel");
	ASSERT_LE(0, before);
	kept = mmap(NULL, sizeof(*kept), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, kept);
	*kept = 0;
	pid = child_in("reg", grow_table, kept, &go, &done);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(done, &c, 1));
	after = ku_cg_stat("reg", "kernel");
	TH_LOG("%zu stacks kept; the frame pool grown to its bound, %ld KiB; the cgroup's kernel memory +%ld KiB",
	       *kept, table >> 10, (after - before) >> 10);
	EXPECT_LE(GROWN_STACKS, *kept);
	EXPECT_LE(table, after - before);
	child_end(pid, go, done);
	munmap(kept, sizeof(*kept));
}

/* a finished session of many deep stacks, made by a child */
FIXTURE(finished) {
	struct meter_nl *nl;
	struct meter_nl_sel sel;
	uint64_t cookie;
	size_t used;		/* bytes its stacks use */
	long table;		/* bytes of its frame pool at the bound */
};

FIXTURE_SETUP(finished)
{
	struct meter_profile *p;
	char msg[256] = "";
	pid_t fin;

	cgroups(_metadata);
	if (_metadata->skip)
		return;
	fin = fork();
	if (!fin) {
		struct meter_nl *nl = ku_open();
		struct meter_page *pg = ku_page();
		uint64_t cookie = ku_register(nl, pg, 100000);
		int i, n;

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
	self->nl = ku_open();
	self->sel = (struct meter_nl_sel){ .pid = fin };
	ASSERT_EQ(0, meter_nl_get_profile(self->nl, &self->sel, &p, msg,
					  sizeof(msg))) TH_LOG("%s", msg);
	self->cookie = p->cookie;
	self->used = used_bytes(p);
	self->table = ku_param_get("stack_frames") * 4;
	meter_profile_free(p);
}

FIXTURE_TEARDOWN(finished)
{
	if (self->nl)
		meter_nl_close(self->nl);
}

/* past 4096 frames (64 stacks) a piece ends on frames, not slots */
TEST_F(finished, a_snapshot_copied_in_pieces_keeps_every_stacks_frames)
{
	struct meter_profile *p, *q;

	if (_metadata->skip)
		return;
	p = ku_profile(self->nl, self->cookie, 0);
	q = ku_profile(self->nl, self->cookie, 0);
	TH_LOG("%zu stacks of %d frames", p->nstacks, DEPTH);
	EXPECT_LE(128, p->nstacks);
	EXPECT_TRUE(stacks_intact(p));
	EXPECT_TRUE(same_stacks(p, q)) TH_LOG("a second dump differs");
	meter_profile_free(q);
	meter_profile_free(p);
}

/* HELD dumps held open by a child in the reader's cgroup */
static void held(struct __test_metadata *_metadata,
		 FIXTURE_DATA(finished) *self, long *charged, long *taken)
{
	long before, free0;
	int go, done;
	pid_t pid;
	char c;

	held_cookie = self->cookie;
	before = ku_cg_current("read");
	free0 = mem_free();
	pid = child_in("read", hold_dumps, NULL, &go, &done);
	ASSERT_LT(0, pid);
	ASSERT_EQ(1, read(done, &c, 1));
	*charged = ku_cg_current("read") - before;
	*taken = free0 - mem_free();
	child_end(pid, go, done);
	TH_LOG("%d held dumps: the reader's cgroup +%ld KiB, free memory -%ld KiB, for %zu KiB used, a table of %ld KiB",
	       HELD, *charged >> 10, *taken >> 10, HELD * self->used >> 10,
	       HELD * self->table >> 10);
}

TEST_F(finished, held_dumps_are_charged_to_the_readers_cgroup)
{
	long charged, taken;

	if (_metadata->skip)
		return;
	held(_metadata, self, &charged, &taken);
	EXPECT_LE((long)(HELD * self->used * 8 / 10), charged);
}

TEST_F(finished, held_dumps_are_sized_by_what_the_session_uses)
{
	long charged, taken;

	if (_metadata->skip)
		return;
	held(_metadata, self, &charged, &taken);
	EXPECT_GE((long)(HELD * (self->used + (512 << 10))), taken);
}

/*
 * max_user_snap_mb at twice what the session uses, plus 1: dumps held
 * one by one, each followed by a full read, until a read is refused.
 */
static int fill_snap(FIXTURE_DATA(finished) *self, int *fds, char *msg,
		     size_t len, int *ret)
{
	struct meter_profile *q;
	int n;

	ku_param_set("max_user_snap_mb", (long)(2 * self->used >> 20) + 1);
	for (n = 0, *ret = 0; n < 64 && !*ret; n++) {
		fds[n] = raw_genl_dump_start(self->cookie);
		if (fds[n] < 0)
			return n;
		q = NULL;
		*ret = meter_nl_get_profile(self->nl, &self->sel, &q, msg, len);
		meter_profile_free(q);
	}
	return n;
}

TEST_F(finished, max_user_snap_mb_refuses_the_dump_past_it_not_nobodys_own)
{
	struct nobody_res r = { 0 };
	int fds[64], n, i, ret, pf[2], st;
	char msg[256] = "";
	long old;
	pid_t pid;

	if (_metadata->skip)
		return;
	old = ku_param_get("max_user_snap_mb");
	n = fill_snap(self, fds, msg, sizeof(msg), &ret);
	ASSERT_EQ(0, pipe(pf));
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
	for (i = 0; i < n; i++)
		close(fds[i]);
	ku_param_set("max_user_snap_mb", old);
	TH_LOG("root's %d open dumps fill it: %s", n, msg);
	EXPECT_LT(1, n);
	EXPECT_GT(64, n);
	EXPECT_EQ(-ENOBUFS, ret);
	EXPECT_NE(NULL, strstr(msg, "max_user_snap_mb"));
	EXPECT_EQ(0, r.ret) TH_LOG("nobody's own dump: %s", r.msg);
}

TEST_F(finished, max_user_snap_mb_closing_the_dumps_gives_it_back)
{
	struct meter_profile *q;
	int fds[64], n, i, ret;
	char msg[256] = "";
	long old;

	if (_metadata->skip)
		return;
	old = ku_param_get("max_user_snap_mb");
	n = fill_snap(self, fds, msg, sizeof(msg), &ret);
	ASSERT_EQ(-ENOBUFS, ret) TH_LOG("%s", msg);
	for (i = 0; i < n; i++)
		close(fds[i]);
	/* the dumps end when their sockets go (a work item) */
	for (i = 0; i < 50; i++) {
		q = NULL;
		ret = meter_nl_get_profile(self->nl, &self->sel, &q, msg,
					   sizeof(msg));
		meter_profile_free(q);
		if (!ret)
			break;
		usleep(100000);
	}
	ku_param_set("max_user_snap_mb", old);
	EXPECT_EQ(0, ret) TH_LOG("%s", msg);
}

TEST(a_reset_empties_the_stack_table_and_ticks_go_on_into_the_new_one)
{
	struct meter_nl *nl = ku_open();
	struct meter_page *pg = ku_page();
	struct meter_nl_sel sel = { .cookie = ku_register(nl, pg, 100000) };
	struct meter_profile *p;
	char msg[256] = "";
	size_t n;
	int i;

	name_stack_ids(nl);
	make_stacks(pg, 200000000ull);
	ASSERT_EQ(0, meter_nl_reset(nl, &sel, msg, sizeof(msg))) TH_LOG("%s", msg);
	p = ku_profile(nl, sel.cookie, 0);
	n = p->nstacks;
	meter_profile_free(p);
	/* in slices, as the finished session's child's */
	for (i = 0, p = NULL; i < 50 && (!p || p->nstacks <= 20); i++) {
		meter_profile_free(p);
		make_stacks(pg, 200000000ull);
		p = ku_profile(nl, sel.cookie, 0);
	}
	TH_LOG("%zu stacks left by the reset, %zu after %d x 200 ms", n,
	       p->nstacks, i);
	EXPECT_GE(2, n);
	EXPECT_LT(20, p->nstacks);
	EXPECT_TRUE(stacks_intact(p));
	meter_profile_free(p);
	meter_nl_close(nl);
}

TEST_HARNESS_MAIN
