// SPDX-License-Identifier: MIT
/*
 * The tools' requests to meter.ko (see nldump.h): sessions listed, dumped
 * into the profile model, reset, deleted, their period changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "nldump.h"

int meter_nl_set_period(struct meter_nl *nl, uint64_t period_ns,
			char *err, size_t errlen)
{
	struct nl_msg *msg = meter_nl_msg(nl, METER_CMD_SET_PERIOD, 0, 0);

	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, METER_A_PERIOD_NS, period_ns)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return meter_nl_transact(nl, msg, NULL, NULL, "set period", err,
				 errlen);
}

/*
 * What meter.h promises of the counts, and the reports and the JSON file
 * rely on: none is 2^64 - 1, which no counter reaches and the JSON
 * profile cannot hold (json-format.md) ...
 */
static bool meter_nl_counts_ok(const uint64_t *v, size_t n)
{
	while (n--)
		if (v[n] == UINT64_MAX)
			return false;
	return true;
}

/* ... and the samples taken off the CPU are parts of the whole, on the
 * wall clock only.
 */
static bool meter_nl_parts_ok(bool wall, uint64_t whole,
			      const uint64_t off[METER_OFF_KINDS])
{
	return (wall || (!off[0] && !off[1])) && off[0] <= whole &&
	       off[1] <= whole - off[0];
}

static bool meter_nl_session_ok(const struct meter_session_row *r)
{
	const uint64_t c[] = {
		r->period_ns, r->start_ns, r->end_ns, r->samples, r->ticks,
		r->no_current, r->invalid, r->lost, r->truncated,
		r->call_cost_ps, r->slow_entries, r->stretched_ticks,
	};

	return meter_nl_counts_ok(c, sizeof(c) / sizeof(c[0])) &&
	       meter_nl_parts_ok(r->wall, r->samples, r->samples_off);
}

static bool meter_nl_func_ok(const struct meter_profile *p,
			     const struct meter_func *f)
{
	const uint64_t c[] = {
		f->calls, f->self_samples, f->total_samples, f->alloc_calls,
		f->alloc_bytes,
	};

	return meter_nl_counts_ok(c, sizeof(c) / sizeof(c[0])) &&
	       meter_nl_parts_ok(p->wall, f->self_samples, f->self_off);
}

/*
 * Session attributes (top level or inside METER_A_SESSION) into r, zeroed
 * by the caller, whose r->command is then the caller's to free whatever
 * this returns: -ENOMEM, or -EPROTO when they break meter.h's promises.
 * The one reader of them, for the list's rows and the profiles' headers
 * alike, so that both are checked the same.
 */
static int meter_nl_parse_row(struct meter_session_row *r, struct nlattr **tb)
{
	int bad = 0;

	r->command = meter_nl_get_str(tb[METER_A_COMM], &bad);
	if (bad)
		return -ENOMEM;
	r->cookie = meter_nl_get_u64(tb[METER_A_COOKIE]);
	r->parent_cookie = meter_nl_get_u64(tb[METER_A_PARENT_COOKIE]);
	r->pid = (int32_t)meter_nl_get_u32(tb[METER_A_PID]);
	r->uid = meter_nl_get_u32(tb[METER_A_UID]);
	r->exited = meter_nl_get_u32(tb[METER_A_STATE]) == METER_STATE_EXITED;
	r->wall = meter_nl_get_u32(tb[METER_A_CLOCK]) == METER_CLOCK_WALL;
	r->period_ns = meter_nl_get_u64(tb[METER_A_PERIOD_NS]);
	r->start_ns = meter_nl_get_u64(tb[METER_A_START_NS]);
	r->end_ns = meter_nl_get_u64(tb[METER_A_END_NS]);
	r->samples = meter_nl_get_u64(tb[METER_A_SAMPLES]);
	r->samples_off[METER_OFF_RUNQ] =
		meter_nl_get_u64(tb[METER_A_SAMPLES_RUNQ]);
	r->samples_off[METER_OFF_BLOCKED] =
		meter_nl_get_u64(tb[METER_A_SAMPLES_BLOCKED]);
	r->ticks = meter_nl_get_u64(tb[METER_A_TICKS]);
	r->no_current = meter_nl_get_u64(tb[METER_A_NO_CURRENT]);
	r->invalid = meter_nl_get_u64(tb[METER_A_INVALID]);
	r->lost = meter_nl_get_u64(tb[METER_A_LOST]);
	r->truncated = meter_nl_get_u64(tb[METER_A_TRUNCATED]);
	r->call_cost_ps = meter_nl_get_u64(tb[METER_A_CALL_COST_PS]);
	r->slow_entries = meter_nl_get_u64(tb[METER_A_SLOW_ENTRIES]);
	r->stretched_ticks = meter_nl_get_u64(tb[METER_A_STRETCHED_TICKS]);
	r->threads = meter_nl_get_u32(tb[METER_A_THREADS]);
	r->threads_total = meter_nl_get_u32(tb[METER_A_THREADS_TOTAL]);
	return meter_nl_session_ok(r) ? 0 : -EPROTO;
}

/*
 * A profile's header from the session attributes: the row's fields, its
 * command handed over.  The threads are counted from the profile's own
 * rows, not taken from the row.
 */
static int meter_nl_fill_session(struct meter_profile *p, struct nlattr **tb)
{
	struct meter_session_row r = { 0 };
	int ret = meter_nl_parse_row(&r, tb);
	uint64_t addrs_lost = meter_nl_get_u64(tb[METER_A_ADDRS_LOST]);

	if (!ret && !meter_nl_counts_ok(&addrs_lost, 1))
		ret = -EPROTO;
	if (ret) {
		free(r.command);
		return ret;
	}
	free(p->command);
	p->command = r.command;
	snprintf(p->backend, sizeof(p->backend), "kernel");
	p->cookie = r.cookie;
	p->parent_cookie = r.parent_cookie;
	p->pid = r.pid;
	p->uid = r.uid;
	p->exited = r.exited;
	p->runs = 1;
	p->wall = r.wall;
	p->period_ns = r.period_ns;
	p->start_ns = r.start_ns;
	p->end_ns = r.end_ns;
	p->samples = r.samples;
	memcpy(p->samples_off, r.samples_off, sizeof(p->samples_off));
	p->ticks = r.ticks;
	p->no_current = r.no_current;
	p->invalid = r.invalid;
	p->lost = r.lost;
	p->truncated = r.truncated;
	p->call_cost_ps = r.call_cost_ps;
	p->slow_entries = r.slow_entries;
	p->stretched_ticks = r.stretched_ticks;
	p->addrs_lost = addrs_lost;
	return 0;
}

void meter_session_rows_free(struct meter_session_row *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		free(v[i].command);
	free(v);
}

struct meter_nl_list {
	struct meter_session_row *v;
	size_t n, cap;
};

static int meter_nl_parse_list(struct nlattr **tb, void *arg)
{
	struct meter_nl_list *l = arg;
	struct meter_session_row *r;
	int ret;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct meter_session_row *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	r = &l->v[l->n];
	memset(r, 0, sizeof(*r));
	ret = meter_nl_parse_row(r, tb);
	if (ret) {
		free(r->command);
		r->command = NULL;
		return ret;
	}
	l->n++;
	return 0;
}

int meter_nl_list(struct meter_nl *nl, struct meter_session_row **out,
		  size_t *n, char *err, size_t errlen)
{
	struct meter_nl_list l = { NULL, 0, 0 };
	struct nl_msg *msg;
	int ret;

	*out = NULL;
	*n = 0;
	msg = meter_nl_msg(nl, METER_CMD_SESSION_GET, NLM_F_DUMP, 0);
	if (!msg)
		return -ENOMEM;
	ret = meter_nl_transact(nl, msg, meter_nl_parse_list, &l,
				"list sessions", err, errlen);
	if (ret) {
		meter_session_rows_free(l.v, l.n);
		return ret;
	}
	*out = l.v;
	*n = l.n;
	return 0;
}

static int meter_nl_put_sel(struct nl_msg *msg, const struct meter_nl_sel *sel)
{
	if (sel->cookie)
		return nla_put_u64(msg, METER_A_COOKIE, sel->cookie);
	return nla_put_u32(msg, METER_A_PID, (uint32_t)sel->pid);
}

static int meter_nl_parse_func(struct meter_profile *p, struct nlattr *nest)
{
	struct nlattr *tb[METER_A_FUNC_MAX + 1];
	struct meter_func *f;
	char *name;
	int bad = 0;
	uint32_t id;

	if (nla_parse_nested(tb, METER_A_FUNC_MAX, nest, NULL) < 0 ||
	    !tb[METER_A_FUNC_ID])
		return -EPROTO;
	/* ids are from 1, each named once */
	id = meter_nl_get_u32(tb[METER_A_FUNC_ID]);
	if (!id || meter_profile_find(p, id))
		return -EPROTO;
	name = meter_nl_get_str(tb[METER_A_FUNC_NAME], &bad);
	if (bad)
		return -ENOMEM;
	f = meter_profile_add_func(p, id, name);
	free(name);
	if (!f)
		return -ENOMEM;
	f->calls = meter_nl_get_u64(tb[METER_A_FUNC_CALLS]);
	f->self_samples = meter_nl_get_u64(tb[METER_A_FUNC_SELF]);
	f->total_samples = meter_nl_get_u64(tb[METER_A_FUNC_TOTAL]);
	f->alloc_calls = meter_nl_get_u64(tb[METER_A_FUNC_ALLOC_CALLS]);
	f->alloc_bytes = meter_nl_get_u64(tb[METER_A_FUNC_ALLOC_BYTES]);
	f->self_off[METER_OFF_RUNQ] =
		meter_nl_get_u64(tb[METER_A_FUNC_SELF_RUNQ]);
	f->self_off[METER_OFF_BLOCKED] =
		meter_nl_get_u64(tb[METER_A_FUNC_SELF_BLOCKED]);
	if (tb[METER_A_FUNC_FILE]) {
		f->file = meter_nl_get_str(tb[METER_A_FUNC_FILE], &bad);
		if (bad)
			return -ENOMEM;
	}
	f->line = meter_nl_get_u32(tb[METER_A_FUNC_LINE]);
	f->cost_ps = meter_nl_get_u64(tb[METER_A_FUNC_COST_PS]);
	return meter_nl_func_ok(p, f) ? 0 : -EPROTO;
}

static int meter_nl_parse_stack(struct meter_profile *p, struct nlattr *nest)
{
	struct nlattr *tb[METER_A_STACK_MAX + 1];
	struct meter_stack *s;
	uint32_t *frames, state;
	uint64_t samples;
	int len, k, bad;

	if (nla_parse_nested(tb, METER_A_STACK_MAX, nest, NULL) < 0 ||
	    !tb[METER_A_STACK_FRAMES])
		return -EPROTO;
	len = nla_len(tb[METER_A_STACK_FRAMES]);
	if (len < 0 || len % 4)
		return -EPROTO;
	frames = malloc(len ? (size_t)len : 1);
	if (!frames)
		return -ENOMEM;
	memcpy(frames, nla_data(tb[METER_A_STACK_FRAMES]), (size_t)len);
	samples = meter_nl_get_u64(tb[METER_A_STACK_SAMPLES]);
	bad = !meter_nl_counts_ok(&samples, 1);
	/* id 0 is "no function", never a frame */
	for (k = 0; k < len / 4; k++)
		if (!frames[k])
			bad = 1;
	if (bad) {
		free(frames);
		return -EPROTO;
	}
	s = meter_profile_add_stack(p, frames, (uint32_t)(len / 4), samples);
	free(frames);
	if (!s)
		return -ENOMEM;
	s->truncated = tb[METER_A_STACK_TRUNCATED] != NULL;
	state = meter_nl_get_u32(tb[METER_A_STACK_STATE]);
	if (state >= __METER_SAMPLE_STATE_MAX || (state && !p->wall))
		return -EPROTO;
	s->state = (uint8_t)state;
	s->tid = meter_nl_get_u32(tb[METER_A_STACK_TID]);
	return 0;
}

static int meter_nl_parse_thread(struct meter_profile *p, struct nlattr *nest)
{
	struct nlattr *tb[METER_A_THREAD_MAX + 1];
	struct meter_thread_row *t;
	uint64_t samples;

	if (nla_parse_nested(tb, METER_A_THREAD_MAX, nest, NULL) < 0 ||
	    !tb[METER_A_THREAD_TID])
		return -EPROTO;
	samples = meter_nl_get_u64(tb[METER_A_THREAD_SAMPLES]);
	if (!meter_nl_counts_ok(&samples, 1))
		return -EPROTO;
	t = meter_profile_add_thread(p, meter_nl_get_u32(tb[METER_A_THREAD_TID]),
				     samples);
	if (!t)
		return -ENOMEM;
	t->exited = meter_nl_get_u32(tb[METER_A_THREAD_STATE]) == METER_THREAD_EXITED;
	if (tb[METER_A_THREAD_COMM])
		meter_thread_name_set(t, nla_data(tb[METER_A_THREAD_COMM]),
				      nla_len(tb[METER_A_THREAD_COMM]));
	t->folded = meter_nl_get_u32(tb[METER_A_THREAD_FOLDED]);
	return 0;
}

static int meter_nl_parse_addr(struct meter_profile *p, struct nlattr *nest)
{
	struct nlattr *tb[METER_A_ADDR_MAX + 1];
	uint64_t samples;
	uint32_t func;

	if (nla_parse_nested(tb, METER_A_ADDR_MAX, nest, NULL) < 0 ||
	    !tb[METER_A_ADDR_IP] || !tb[METER_A_ADDR_FUNC])
		return -EPROTO;
	samples = meter_nl_get_u64(tb[METER_A_ADDR_SAMPLES]);
	func = meter_nl_get_u32(tb[METER_A_ADDR_FUNC]);
	/* CPU clock only (meter.h); id 0 is "no function" */
	if (!meter_nl_counts_ok(&samples, 1) || !func || p->wall)
		return -EPROTO;
	if (!meter_profile_add_addr(p, meter_nl_get_u64(tb[METER_A_ADDR_IP]),
				    func, samples))
		return -ENOMEM;
	return 0;
}

static int meter_nl_parse_map(struct meter_profile *p, struct nlattr *nest)
{
	struct nlattr *tb[METER_A_MAP_MAX + 1];
	uint64_t start, end;
	int bad = 0;
	char *path;
	int ret = 0;

	if (nla_parse_nested(tb, METER_A_MAP_MAX, nest, NULL) < 0 ||
	    !tb[METER_A_MAP_START] || !tb[METER_A_MAP_END] ||
	    !tb[METER_A_MAP_PATH])
		return -EPROTO;
	start = meter_nl_get_u64(tb[METER_A_MAP_START]);
	end = meter_nl_get_u64(tb[METER_A_MAP_END]);
	path = meter_nl_get_str(tb[METER_A_MAP_PATH], &bad);
	if (bad)
		return -ENOMEM;
	if (start >= end || !path || !path[0])
		ret = -EPROTO;
	else if (!meter_profile_add_map(p, start, end,
					meter_nl_get_u64(tb[METER_A_MAP_PGOFF]),
					path))
		ret = -ENOMEM;
	free(path);
	return ret;
}

static int meter_nl_parse_profile(struct nlattr **tb, void *arg)
{
	struct meter_profile *p = arg;
	struct nlattr *stb[METER_A_MAX + 1];

	if (tb[METER_A_SESSION]) {
		/* first (meter.h): its clock judged what came after it */
		if (p->nfuncs || p->nstacks || p->nthreads || p->naddrs ||
		    p->nmaps ||
		    nla_parse_nested(stb, METER_A_MAX, tb[METER_A_SESSION],
				     NULL) < 0)
			return -EPROTO;
		return meter_nl_fill_session(p, stb);
	}
	if (tb[METER_A_FUNC])
		return meter_nl_parse_func(p, tb[METER_A_FUNC]);
	if (tb[METER_A_STACK])
		return meter_nl_parse_stack(p, tb[METER_A_STACK]);
	if (tb[METER_A_THREAD])
		return meter_nl_parse_thread(p, tb[METER_A_THREAD]);
	if (tb[METER_A_ADDR])
		return meter_nl_parse_addr(p, tb[METER_A_ADDR]);
	if (tb[METER_A_MAP])
		return meter_nl_parse_map(p, tb[METER_A_MAP]);
	return 0;	/* newer kernel, unknown nest: skip */
}

/*
 * A live session's counters come first in the dump, its tables after:
 * ticks taken meanwhile are in the tables only.  The total is raised to
 * the sum of its parts, as the JSON reader requires of any profile;
 * -EPROTO when they add up past any count (2^64 - 2).
 */
static int at_least_the_parts(struct meter_profile *p)
{
	uint64_t stacks = 0, self = 0, addrs = 0;
	size_t i;

	for (i = 0; i < p->nstacks; i++) {
		if (p->stacks[i].samples >= UINT64_MAX - stacks)
			return -EPROTO;
		stacks += p->stacks[i].samples;
	}
	for (i = 0; i < p->naddrs; i++) {
		if (p->addrs[i].samples >= UINT64_MAX - addrs)
			return -EPROTO;
		addrs += p->addrs[i].samples;
	}
	if (addrs > p->samples)
		p->samples = addrs;
	for (i = 0; i < p->nfuncs; i++) {
		if (p->funcs[i].self_samples >= UINT64_MAX - self)
			return -EPROTO;
		self += p->funcs[i].self_samples;
	}
	if (stacks > p->samples)
		p->samples = stacks;
	if (self > p->samples)
		p->samples = self;
	return 0;
}

/*
 * The end of a dump.  Ids that a stack holds and no record names are
 * named first (as the tools would name them): their self samples are
 * parts of the total too.  An address of a function with no row (the
 * kernel dumps a row for every function it counted) is dropped as lost.
 */
static int meter_nl_profile_end(struct meter_profile *p)
{
	size_t i, kept = 0;

	meter_profile_name_unknown_ids(p);
	/* an address's function must be a row: else its samples are lost */
	for (i = 0; i < p->naddrs; i++) {
		if (meter_profile_find(p, p->addrs[i].func))
			p->addrs[kept++] = p->addrs[i];
		else if (p->addrs[i].samples < UINT64_MAX - p->addrs_lost)
			p->addrs_lost += p->addrs[i].samples;
	}
	p->naddrs = kept;
	return at_least_the_parts(p);
}

int meter_nl_get_profile(struct meter_nl *nl, const struct meter_nl_sel *sel,
			 struct meter_profile **out, char *err, size_t errlen)
{
	struct meter_profile *p;
	struct nl_msg *msg;
	int ret;

	*out = NULL;
	p = meter_profile_new();
	if (!p)
		return -ENOMEM;
	snprintf(p->backend, sizeof(p->backend), "kernel");
	msg = meter_nl_msg(nl, METER_CMD_PROFILE_GET, NLM_F_DUMP, 0);
	if (!msg || meter_nl_put_sel(msg, sel)) {
		if (msg)
			nlmsg_free(msg);
		meter_profile_free(p);
		return -ENOMEM;
	}
	ret = meter_nl_transact(nl, msg, meter_nl_parse_profile, p,
				"get profile", err, errlen);
	if (!ret) {
		ret = meter_nl_profile_end(p);
		if (ret && err && errlen)
			snprintf(err, errlen, "get profile: malformed reply (%s)",
				 strerror(-ret));
	}
	if (ret) {
		meter_profile_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

static int meter_nl_sel_cmd(struct meter_nl *nl, int cmd, const char *what,
			    const struct meter_nl_sel *sel, char *err,
			    size_t errlen)
{
	struct nl_msg *msg = meter_nl_msg(nl, cmd, 0, 0);

	if (!msg)
		return -ENOMEM;
	if (meter_nl_put_sel(msg, sel)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return meter_nl_transact(nl, msg, NULL, NULL, what, err, errlen);
}

int meter_nl_reset(struct meter_nl *nl, const struct meter_nl_sel *sel,
		   char *err, size_t errlen)
{
	return meter_nl_sel_cmd(nl, METER_CMD_SESSION_RESET, "reset session",
				sel, err, errlen);
}

int meter_nl_delete(struct meter_nl *nl, const struct meter_nl_sel *sel,
		    char *err, size_t errlen)
{
	return meter_nl_sel_cmd(nl, METER_CMD_SESSION_DEL, "delete session",
				sel, err, errlen);
}
