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

int main(void)
{
	uint64_t want[NIDS + 1] = { 0 }, sent[NIDS + 1] = { 0 };
	struct reg_thread a, b, bad;
	struct meter_nl *nl;
	uint64_t *ca, *cb, *cm;
	char err[256] = "";
	uint32_t id;
	int ret, fd;

	ku_plan(15);
	nl = ku_open();
	ca = counters();
	cb = counters();

	reg_start(&a, (uintptr_t)ca);
	if (a.ret)
		ku_bail("register with counters", a.ret, a.err);
	ku_funcs(nl, NIDS);
	for (id = 1; id <= NIDS; id++)
		ca[id] = want[id] = 10 * id;
	ku_ok(!snap_differ(nl, want),
	      "a snapshot reads the live thread's counters: f1..f%d have 10, 20, ...",
	      NIDS);

	/* the first message of a flush: ids 1..30 become the session's */
	memcpy(sent, ca, sizeof(sent));
	ret = send_calls(nl, a.tid, sent, 1, 30, 0, err);
	ku_ok(ret == 0, "ADD_CALLS of ids 1..30 for the thread (%s)", err);
	ku_ok(!snap_differ(nl, want),
	      "between the messages of a flush nothing is counted twice or dropped");
	for (id = 1; id <= NIDS; id++)
		ca[id] += id <= 30 ? 5 : 1;
	for (id = 31; id <= NIDS; id++)
		want[id] += 1;
	ku_ok(!snap_differ(nl, want),
	      "ids sent are no longer read from memory; ids not yet sent are");

	memcpy(sent, ca, sizeof(sent));
	ret = send_calls(nl, a.tid, sent, 31, NIDS, 1, err);
	ku_ok(ret == 0, "ADD_CALLS of ids 31..%d, the last (%s)", NIDS, err);
	for (id = 1; id <= NIDS; id++)
		ca[id] += 1000;
	ku_ok(!snap_differ(nl, want),
	      "after the last message the memory is not read at all");

	/* a reset takes off what a live thread counted so far */
	reg_start(&b, (uintptr_t)cb);
	for (id = 1; id <= NIDS; id++)
		cb[id] = 100;
	for (id = 1; id <= NIDS; id++)
		want[id] += 100;
	ku_ok(!snap_differ(nl, want), "a second thread's counters add up");
	{
		struct meter_nl_sel sel = { .pid = getpid() };

		ret = meter_nl_reset(nl, &sel, err, sizeof(err));
	}
	memset(want, 0, sizeof(want));
	ku_ok(ret == 0 && !snap_differ(nl, want),
	      "after a reset every count is 0, the live thread's too");
	for (id = 1; id <= NIDS; id++)
		cb[id] += 7;
	for (id = 1; id <= NIDS; id++)
		want[id] = 7;
	ku_ok(!snap_differ(nl, want), "calls after the reset count from 0");
	ret = send_calls(nl, b.tid, cb, 1, NIDS, 1, err);
	ku_ok(ret == 0 && !snap_differ(nl, want),
	      "the thread's flush after the reset adds only the calls since");

	/* bad counters addresses */
	reg_start(&bad, (uintptr_t)ca + 4);
	ku_ok(bad.ret == -EINVAL && strstr(bad.err, "counters address"),
	      "a misaligned counters address is refused (%d: %s)", bad.ret,
	      bad.err);
	reg_stop(&bad);
	reg_start(&bad, 0xfffffffffffff000ULL);
	ku_ok(bad.ret == -EINVAL,
	      "a counters address outside user space is refused (%d: %s)",
	      bad.ret, bad.err);
	reg_stop(&bad);

	fd = memfd_create("counters", 0);
	if (fd < 0 || ftruncate(fd, 4096))
		ku_bail("memfd", -errno, "counters");
	cm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	for (id = 1; id <= NIDS; id++)
		cm[id] = 1000000;
	reg_start(&bad, (uintptr_t)cm);
	ku_ok(bad.ret == 0 && !snap_differ(nl, want),
	      "counters in shared file memory are not read (register %d)",
	      bad.ret);
	reg_stop(&bad);
	munmap(cm, 4096);
	reg_start(&bad, (uintptr_t)cm);
	ku_ok(bad.ret == 0 && !snap_differ(nl, want),
	      "counters not mapped: the snapshot works and adds nothing");
	reg_stop(&bad);

	/* NFUNCS: ids in use, named or counted, the same before and after */
	{
		struct meter_call_counts cc = { .id = NIDS + 10, .calls = 3 };
		struct meter_nl_sel sel = { .pid = getpid() };
		uint32_t n0 = session_nfuncs(nl), n1, n2, n3;

		meter_nl_add_calls(nl, 0, &cc, 1, err, sizeof(err));
		n1 = session_nfuncs(nl);
		meter_nl_reset(nl, &sel, err, sizeof(err));
		n2 = session_nfuncs(nl);
		meter_nl_add_calls(nl, 0, &cc, 1, err, sizeof(err));
		n3 = session_nfuncs(nl);
		ku_ok(n1 == n0 + 1 && n2 == n0 && n3 == n0 + 1,
		      "NFUNCS counts an unnamed id once, after a reset too (%u, %u, %u, %u)",
		      n0, n1, n2, n3);
	}

	reg_stop(&a);
	reg_stop(&b);
	meter_nl_close(nl);
	return ku_exit();
}
