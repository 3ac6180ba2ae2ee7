// SPDX-License-Identifier: MIT
/*
 * libmeter's requests to meter.ko (see nlreg.h): what a profiled process
 * says about itself.  Nothing here reads a session back.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "nlreg.h"

/* Bound on the payload packed into one ADD_FUNCS / ADD_CALLS message. */
#define METER_NL_BATCH_BYTES	(16 * 1024)

struct meter_nl_reg_reply {
	uint64_t cookie, period_ns;
	uint32_t clock;
};

static int meter_nl_parse_reg(struct nlattr **tb, void *arg)
{
	struct meter_nl_reg_reply *r = arg;

	if (!tb[METER_A_COOKIE])
		return -EPROTO;
	r->cookie = meter_nl_get_u64(tb[METER_A_COOKIE]);
	r->period_ns = meter_nl_get_u64(tb[METER_A_PERIOD_NS]);
	r->clock = tb[METER_A_CLOCK] ? nla_get_u32(tb[METER_A_CLOCK]) :
				       METER_CLOCK_CPU;
	return 0;
}

int meter_nl_register(struct meter_nl *nl, struct meter_nl_reg *reg,
		      uint64_t *cookie, uint64_t *period_ns,
		      char *err, size_t errlen)
{
	struct meter_nl_reg_reply r = { 0, 0, 0 };
	struct nl_msg *msg;
	int ret;

	msg = meter_nl_msg(nl, METER_CMD_REGISTER, 0, 0);
	if (!msg)
		return -ENOMEM;
	if (nla_put_u64(msg, METER_A_PAGE_ADDR, reg->page_addr) ||
	    (reg->period_ns &&
	     nla_put_u64(msg, METER_A_PERIOD_NS, reg->period_ns)) ||
	    (reg->parent_cookie &&
	     nla_put_u64(msg, METER_A_PARENT_COOKIE, reg->parent_cookie)) ||
	    (reg->call_cost_ps &&
	     nla_put_u64(msg, METER_A_CALL_COST_PS, reg->call_cost_ps)) ||
	    (reg->counts_addr &&
	     nla_put_u64(msg, METER_A_COUNTS_ADDR, reg->counts_addr)) ||
	    /* only when asked: a module without wall clocks refuses it */
	    (reg->clock &&
	     nla_put_u32(msg, METER_A_CLOCK, reg->clock))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = meter_nl_transact(nl, msg, meter_nl_parse_reg, &r, "register",
				err, errlen);
	if (ret)
		return ret;
	if (cookie)
		*cookie = r.cookie;
	if (period_ns)
		*period_ns = r.period_ns;
	reg->clock = r.clock;
	return 0;
}

int meter_nl_unregister(struct meter_nl *nl, char *err, size_t errlen)
{
	struct nl_msg *msg = meter_nl_msg(nl, METER_CMD_UNREGISTER, 0, 0);

	if (!msg)
		return -ENOMEM;
	return meter_nl_transact(nl, msg, NULL, NULL, "unregister", err,
				 errlen);
}

/*
 * The kernel keeps names of up to METER_FUNC_NAME_MAX - 1 bytes (an older
 * module 255: OLD_NAME_MAX).  A longer one (C++ templates run to
 * thousands) is sent as its first bytes, cut at a character, then "~#"
 * and 16 hex digits of a hash of the whole name: two functions whose
 * names only differ past the cut stay two rows, and the same function in
 * another process gets the same name, so merges still pair them.
 */
#define OLD_NAME_MAX 256

/* the longest name (with the NUL) the loaded module took */
static _Atomic size_t name_max = METER_FUNC_NAME_MAX;
/* whether it takes a function's file and line (older modules refuse) */
static _Atomic bool send_source = true;

static const char *kernel_name(const char *name, char *cut, size_t cutlen)
{
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */
	size_t len = strlen(name), keep = cutlen - 1 - 18;
	const unsigned char *s;

	if (len < cutlen)
		return name;
	for (s = (const unsigned char *)name; *s; s++)
		h = (h ^ *s) * 1099511628211ULL;
	/* not inside a UTF-8 sequence */
	while (keep && ((unsigned char)name[keep] & 0xc0) == 0x80)
		keep--;
	snprintf(cut, cutlen, "%.*s~#%016llx", (int)keep, name,
		 (unsigned long long)h);
	return cut;
}

/*
 * A function's file and line where the module takes them; a file that
 * does not fit beside the name is left out (the name matters more).
 */
static int put_source(struct nl_msg *msg, const struct meter_nl_func *f,
		      const char *name)
{
	if (!send_source)
		return 0;
	if (f->file &&
	    strlen(name) + 1 + strlen(f->file) + 1 <= METER_FUNC_NAME_MAX &&
	    nla_put_string(msg, METER_A_FUNC_FILE, f->file))
		return -1;
	if (f->line && nla_put_u32(msg, METER_A_FUNC_LINE, f->line))
		return -1;
	if (f->cost_ps && nla_put_u64(msg, METER_A_FUNC_COST_PS, f->cost_ps))
		return -1;
	return 0;
}

/*
 * One ADD_FUNCS request of f[*i...], names cut to max: *i moves past the
 * functions sent; *long_name says one was longer than OLD_NAME_MAX, or
 * came with a file or a line.
 */
static int add_funcs_batch(struct meter_nl *nl, const struct meter_nl_func *f,
			   size_t n, size_t *i, size_t max, bool *long_name,
			   char *err, size_t errlen)
{
	struct nlattr *funcs, *one;
	struct nl_msg *msg;

	/* room for one more function past the batch: a name and a file of
	 * METER_FUNC_NAME_MAX together, and their attributes */
	msg = meter_nl_msg(nl, METER_CMD_ADD_FUNCS, 0,
			   METER_NL_BATCH_BYTES + METER_FUNC_NAME_MAX + 128);
	if (!msg)
		goto nomem;
	funcs = nla_nest_start(msg, METER_A_FUNCS);
	if (!funcs)
		goto nomem;
	*long_name = false;
	for (; *i < n && nlmsg_hdr(msg)->nlmsg_len < METER_NL_BATCH_BYTES;
	     (*i)++) {
		char cut[METER_FUNC_NAME_MAX];
		const char *name = kernel_name(f[*i].name ? f[*i].name : "",
					       cut, max);

		one = nla_nest_start(msg, METER_A_FUNC);
		if (!one ||
		    nla_put_u32(msg, METER_A_FUNC_ID, f[*i].id) ||
		    nla_put_string(msg, METER_A_FUNC_NAME, name) ||
		    put_source(msg, &f[*i], name))
			goto nomem;
		nla_nest_end(msg, one);
		*long_name = *long_name || strlen(name) >= OLD_NAME_MAX ||
			     (send_source && (f[*i].file || f[*i].line ||
					      f[*i].cost_ps));
	}
	nla_nest_end(msg, funcs);
	return meter_nl_transact(nl, msg, NULL, NULL, "add functions", err,
				 errlen);
nomem:
	nlmsg_free(msg);
	snprintf(err, errlen, "add functions: no memory for the message");
	return -ENOMEM;
}

int meter_nl_add_funcs(struct meter_nl *nl, const struct meter_nl_func *f,
		       size_t n, char *err, size_t errlen)
{
	size_t i = 0;

	while (i < n) {
		size_t from = i;
		bool long_name;
		int ret = add_funcs_batch(nl, f, n, &i, name_max, &long_name,
					  err, errlen);

		/* An older module refuses a long name, or a file; a request
		 * applies whole or not at all, so send it again, cut to its
		 * 255 and without files. */
		if (ret == -EINVAL && long_name) {
			name_max = OLD_NAME_MAX;
			send_source = false;
			i = from;
			ret = add_funcs_batch(nl, f, n, &i, name_max,
					      &long_name, err, errlen);
		}
		if (ret)
			return ret;
	}
	return 0;
}

int meter_nl_add_calls(struct meter_nl *nl, uint32_t tid,
		       const struct meter_call_counts *c, size_t n,
		       uint64_t slow, char *err, size_t errlen)
{
	const size_t per_msg = METER_NL_BATCH_BYTES / sizeof(*c);
	size_t i;
	int ret;

	for (i = 0; i < n; i += per_msg) {
		size_t k = n - i < per_msg ? n - i : per_msg;
		struct nl_msg *msg;

		msg = meter_nl_msg(nl, METER_CMD_ADD_CALLS, 0,
				   METER_NL_BATCH_BYTES + 4096);
		if (!msg)
			return -ENOMEM;
		if (nla_put(msg, METER_A_CALLS, (int)(k * sizeof(*c)), c + i) ||
		    (tid && nla_put_u32(msg, METER_A_TID, tid)) ||
		    (i + k == n && nla_put_flag(msg, METER_A_LAST)) ||
		    (i + k == n && slow &&
		     nla_put_u64(msg, METER_A_SLOW_ENTRIES, slow))) {
			nlmsg_free(msg);
			return -ENOMEM;
		}
		ret = meter_nl_transact(nl, msg, NULL, NULL, "add call counts",
					err, errlen);
		if (ret)
			return ret;
	}
	return 0;
}
