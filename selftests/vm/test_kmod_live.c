// SPDX-License-Identifier: MIT
/*
 * Live call counts, step by step (include/uapi/linux/meter.h, "Live call
 * counts"): a snapshot reads a registered thread's counters from its
 * memory; ADD_CALLS folds them message by message (the session holds the
 * ids sent, the memory is no longer read for them, nothing is counted
 * twice or dropped in between); a reset takes what was counted off; a
 * counters address that is misaligned or out of range is refused, and
 * counters in memory that is not private anonymous, or not mapped, are
 * not read.  NFUNCS does not drift over a reset.
 *
 * The registered threads only register and wait; the main thread writes
 * their counters and sends ADD_CALLS on their behalf (METER_A_TID).
 */
#include <pthread.h>
#include <semaphore.h>
#include <sys/syscall.h>

#include <netlink/attr.h>
#include <netlink/msg.h>

#include "kmod_util.h"

#define NIDS	64

struct reg_thread {
	pthread_t th;
	uint64_t counts_addr;
	int ret;
	pid_t tid;
	char err[256];
	sem_t registered, leave;
};

static void *reg_main(void *arg)
{
	struct reg_thread *r = arg;
	struct meter_nl_reg reg = { .period_ns = 1000000 };
	struct meter_page *pg = ku_page();
	uint64_t cookie, eff;
	struct meter_nl *nl = ku_open();

	r->tid = (pid_t)syscall(SYS_gettid);
	reg.page_addr = (uintptr_t)pg;
	reg.counts_addr = r->counts_addr;
	r->ret = meter_nl_register(nl, &reg, &cookie, &eff, r->err,
				   sizeof(r->err));
	sem_post(&r->registered);
	sem_wait(&r->leave);
	if (!r->ret)
		meter_nl_unregister(nl, NULL, 0);
	meter_nl_close(nl);
	return NULL;
}

static void reg_start(struct reg_thread *r, uint64_t counts_addr)
{
	memset(r, 0, sizeof(*r));
	r->counts_addr = counts_addr;
	sem_init(&r->registered, 0, 0);
	sem_init(&r->leave, 0, 0);
	pthread_create(&r->th, NULL, reg_main, r);
	sem_wait(&r->registered);
}

static void reg_stop(struct reg_thread *r)
{
	sem_post(&r->leave);
	pthread_join(r->th, NULL);
}

/* ADD_CALLS of ids lo..hi with calls[id], for tid, LAST if asked. */
static int send_calls(struct meter_nl *nl, pid_t tid, const uint64_t *calls,
		      uint32_t lo, uint32_t hi, int last, char *err)
{
	struct meter_call_counts c[NIDS];
	struct nl_msg *msg;
	uint32_t id, n = 0;

	for (id = lo; id <= hi; id++) {
		memset(&c[n], 0, sizeof(c[n]));
		c[n].id = id;
		c[n++].calls = calls[id];
	}
	msg = meter_nl_msg(nl, METER_CMD_ADD_CALLS, 0, 0);
	if (!msg || nla_put(msg, METER_A_CALLS, (int)(n * sizeof(c[0])), c) ||
	    nla_put_u32(msg, METER_A_TID, (uint32_t)tid) ||
	    (last && nla_put_flag(msg, METER_A_LAST)))
		return -ENOMEM;
	return meter_nl_transact(nl, msg, NULL, NULL, "add calls", err, 256);
}

/* Ids lo..hi whose snapshot calls differ from want[id]. */
static int differ(const struct meter_profile *p, const uint64_t *want,
		  uint32_t lo, uint32_t hi)
{
	char name[16];
	uint32_t id;
	int bad = 0;

	for (id = lo; id <= hi; id++) {
		const struct meter_func *f;
		size_t i;

		snprintf(name, sizeof(name), "f%u", id);
		for (i = 0, f = NULL; i < p->nfuncs; i++)
			if (p->funcs[i].name && !strcmp(p->funcs[i].name, name))
				f = &p->funcs[i];
		if (!f || f->calls != want[id]) {
			if (!bad)
				ku_diag("f%u: %llu calls, want %llu", id,
					f ? (unsigned long long)f->calls : 0ULL,
					(unsigned long long)want[id]);
			bad++;
		}
	}
	return bad;
}

static int snap_differ(struct meter_nl *nl, const uint64_t *want)
{
	struct meter_profile *p = ku_profile(nl, 0, getpid());
	int bad = differ(p, want, 1, NIDS);

	meter_profile_free(p);
	return bad;
}

static int parse_nfuncs(struct nlattr **tb, void *arg)
{
	if (!tb[METER_A_NFUNCS])
		return -EPROTO;
	*(uint32_t *)arg = nla_get_u32(tb[METER_A_NFUNCS]);
	return 0;
}

/* SESSION_GET's NFUNCS for this process. */
static uint32_t session_nfuncs(struct meter_nl *nl)
{
	struct nl_msg *msg = meter_nl_msg(nl, METER_CMD_SESSION_GET, 0, 0);
	char err[256] = "";
	uint32_t n = 0;

	if (!msg || nla_put_u32(msg, METER_A_PID, (uint32_t)getpid()) ||
	    meter_nl_transact(nl, msg, parse_nfuncs, &n, "session", err,
			      sizeof(err)))
		ku_diag("SESSION_GET: %s", err);
	return n;
}

static uint64_t *counters(void)
{
	uint64_t *c = mmap(NULL, (NIDS + 1) * sizeof(uint64_t),
			   PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		ku_bail("mmap", -errno, "counters");
	return c;
}

/* thread a registered with counters ca, f1..f64 named, ca[id] = 10 id */
FIXTURE(live) {
	struct meter_nl *nl;
	struct reg_thread a;
	uint64_t *ca, *cb;
	uint64_t want[NIDS + 1];
	char err[256];
};

FIXTURE_SETUP(live)
{
	uint32_t id;

	self->nl = ku_open();
	self->ca = counters();
	self->cb = counters();
	reg_start(&self->a, (uintptr_t)self->ca);
	ASSERT_EQ(0, self->a.ret) TH_LOG("register with counters: %s",
					 self->a.err);
	ku_funcs(self->nl, NIDS);
	for (id = 1; id <= NIDS; id++)
		self->ca[id] = self->want[id] = 10 * id;
}

FIXTURE_TEARDOWN(live)
{
	reg_stop(&self->a);
	meter_nl_close(self->nl);
}

/* the first message of a flush: ids 1..30 become the session's; then
 * every counter in memory moves (+5 for the ids sent, +1 for the rest) */
static int flush_first(FIXTURE_DATA(live) *self)
{
	uint64_t sent[NIDS + 1];
	uint32_t id;
	int ret;

	memcpy(sent, self->ca, sizeof(sent));
	ret = send_calls(self->nl, self->a.tid, sent, 1, 30, 0, self->err);
	for (id = 1; id <= NIDS; id++)
		self->ca[id] += id <= 30 ? 5 : 1;
	for (id = 31; id <= NIDS; id++)
		self->want[id] += 1;
	return ret;
}

/* the last message, ids 31..64; then the memory moves by 1000 */
static int flush_last(FIXTURE_DATA(live) *self)
{
	uint64_t sent[NIDS + 1];
	uint32_t id;
	int ret;

	memcpy(sent, self->ca, sizeof(sent));
	ret = send_calls(self->nl, self->a.tid, sent, 31, NIDS, 1, self->err);
	for (id = 1; id <= NIDS; id++)
		self->ca[id] += 1000;
	return ret;
}

TEST_F(live, a_snapshot_reads_the_live_threads_counters)
{
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
}

TEST_F(live, between_the_messages_of_a_flush_nothing_is_counted_twice_or_dropped)
{
	uint64_t sent[NIDS + 1];

	memcpy(sent, self->ca, sizeof(sent));
	ASSERT_EQ(0, send_calls(self->nl, self->a.tid, sent, 1, 30, 0,
				self->err)) TH_LOG("%s", self->err);
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
}

TEST_F(live, ids_sent_are_no_longer_read_from_memory_ids_not_yet_sent_are)
{
	ASSERT_EQ(0, flush_first(self)) TH_LOG("%s", self->err);
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
}

TEST_F(live, after_the_last_message_the_memory_is_not_read_at_all)
{
	ASSERT_EQ(0, flush_first(self)) TH_LOG("%s", self->err);
	ASSERT_EQ(0, flush_last(self)) TH_LOG("%s", self->err);
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
}

/* thread b with counters cb, 100 each */
static void start_b(FIXTURE_DATA(live) *self, struct reg_thread *b)
{
	uint32_t id;

	reg_start(b, (uintptr_t)self->cb);
	for (id = 1; id <= NIDS; id++) {
		self->cb[id] = 100;
		self->want[id] += 100;
	}
}

static int reset(FIXTURE_DATA(live) *self)
{
	struct meter_nl_sel sel = { .pid = getpid() };

	memset(self->want, 0, sizeof(self->want));
	return meter_nl_reset(self->nl, &sel, self->err, sizeof(self->err));
}

TEST_F(live, a_second_threads_counters_add_up)
{
	struct reg_thread b;

	start_b(self, &b);
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
	reg_stop(&b);
}

TEST_F(live, after_a_reset_every_count_is_0_the_live_threads_too)
{
	struct reg_thread b;

	start_b(self, &b);
	ASSERT_EQ(0, reset(self)) TH_LOG("%s", self->err);
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
	reg_stop(&b);
}

TEST_F(live, calls_after_a_reset_count_from_0)
{
	struct reg_thread b;
	uint32_t id;

	start_b(self, &b);
	ASSERT_EQ(0, reset(self)) TH_LOG("%s", self->err);
	for (id = 1; id <= NIDS; id++) {
		self->cb[id] += 7;
		self->ca[id] += 3;
		self->want[id] = 10;
	}
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
	reg_stop(&b);
}

TEST_F(live, a_flush_after_a_reset_adds_only_the_calls_since)
{
	struct reg_thread b;
	uint32_t id;

	start_b(self, &b);
	ASSERT_EQ(0, reset(self)) TH_LOG("%s", self->err);
	for (id = 1; id <= NIDS; id++) {
		self->cb[id] += 7;
		self->want[id] = 7;
	}
	ASSERT_EQ(0, send_calls(self->nl, b.tid, self->cb, 1, NIDS, 1,
				self->err)) TH_LOG("%s", self->err);
	/* thread a's counters moved by 0 since the reset */
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
	reg_stop(&b);
}

TEST_F(live, a_misaligned_counters_address_is_refused)
{
	struct reg_thread bad;

	reg_start(&bad, (uintptr_t)self->ca + 4);
	EXPECT_EQ(-EINVAL, bad.ret);
	EXPECT_NE(NULL, strstr(bad.err, "counters address")) TH_LOG("%s", bad.err);
	reg_stop(&bad);
}

TEST_F(live, a_counters_address_outside_user_space_is_refused)
{
	struct reg_thread bad;

	reg_start(&bad, 0xfffffffffffff000ULL);
	EXPECT_EQ(-EINVAL, bad.ret) TH_LOG("%s", bad.err);
	reg_stop(&bad);
}

/* a thread whose counters say 1000000 each: they must not show */
static struct reg_thread *start_shared(FIXTURE_DATA(live) *self,
				       struct reg_thread *t, bool unmap)
{
	uint64_t *cm;
	uint32_t id;
	int fd = memfd_create("counters", 0);

	(void)self;
	if (fd < 0 || ftruncate(fd, 4096))
		return NULL;
	cm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (cm == MAP_FAILED)
		return NULL;
	for (id = 1; id <= NIDS; id++)
		cm[id] = 1000000;
	if (unmap)
		munmap(cm, 4096);
	reg_start(t, (uintptr_t)cm);
	return t;
}

TEST_F(live, counters_in_shared_file_memory_are_not_read)
{
	struct reg_thread t;

	ASSERT_NE(NULL, start_shared(self, &t, false));
	EXPECT_EQ(0, t.ret) TH_LOG("%s", t.err);
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
	reg_stop(&t);
}

TEST_F(live, counters_not_mapped_the_snapshot_works_and_adds_nothing)
{
	struct reg_thread t;

	ASSERT_NE(NULL, start_shared(self, &t, true));
	EXPECT_EQ(0, t.ret) TH_LOG("%s", t.err);
	EXPECT_EQ(0, snap_differ(self->nl, self->want));
	reg_stop(&t);
}

/* NFUNCS: ids in use, named or counted, the same before and after */
TEST_F(live, nfuncs_counts_an_unnamed_id_once_after_a_reset_too)
{
	struct meter_call_counts cc = { .id = NIDS + 10, .calls = 3 };
	uint32_t n0 = session_nfuncs(self->nl), n1, n2, n3;

	ASSERT_EQ(0, meter_nl_add_calls(self->nl, 0, &cc, 1, 0, self->err,
					sizeof(self->err)));
	n1 = session_nfuncs(self->nl);
	ASSERT_EQ(0, reset(self));
	n2 = session_nfuncs(self->nl);
	ASSERT_EQ(0, meter_nl_add_calls(self->nl, 0, &cc, 1, 0, self->err,
					sizeof(self->err)));
	n3 = session_nfuncs(self->nl);
	ASSERT_LT(0, n0);
	EXPECT_EQ(n0 + 1, n1);
	EXPECT_EQ(n0, n2);
	EXPECT_EQ(n0 + 1, n3);
}

TEST_HARNESS_MAIN
