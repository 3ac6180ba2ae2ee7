// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "meter" (include/uapi/linux/meter.h).
 *
 * Hand-written genl_ops (the generated split-ops form does not build on
 * 6.1), one policy per operation, strict validation for every operation
 * (resv_start_op left at 0).  Permissions are checked inside the handlers:
 * GENL_ADMIN_PERM would ask for CAP_NET_ADMIN, the wrong capability.
 *
 * PROFILE_GET copies the session into a snapshot when the dump starts and
 * emits it as a run of messages (SESSION, FUNC..., STACK..., THREAD...)
 * over as many dump calls as needed; the snapshot is freed in .done.
 */
#include <linux/bsearch.h>
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/version.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "meter_kmod.h"

static struct genl_family meter_family;

/* --- policies --- */

static struct netlink_range_validation meter_period_range = {
	.min = METER_PERIOD_MIN_NS,
	.max = METER_PERIOD_MAX_NS,
};

static struct netlink_range_validation meter_id_range = {
	.min = 1,
	.max = METER_FUNCS_MAX,
};

static const struct nla_policy meter_none_policy[METER_A_MAX + 1] = {
};

static const struct nla_policy meter_register_policy[METER_A_MAX + 1] = {
	[METER_A_PAGE_ADDR] = { .type = NLA_U64 },
	[METER_A_PERIOD_NS] = NLA_POLICY_FULL_RANGE(NLA_U64,
						    &meter_period_range),
	[METER_A_PARENT_COOKIE] = { .type = NLA_U64 },
	[METER_A_CALL_COST_PS] = { .type = NLA_U64 },
	[METER_A_COUNTS_ADDR] = { .type = NLA_U64 },
	[METER_A_CLOCK] = NLA_POLICY_MAX(NLA_U32, __METER_CLOCK_MAX - 1),
};

static const struct nla_policy meter_func_policy[METER_A_FUNC_MAX + 1] = {
	[METER_A_FUNC_ID] = NLA_POLICY_FULL_RANGE(NLA_U32, &meter_id_range),
	[METER_A_FUNC_NAME] = { .type = NLA_NUL_STRING,
				.len = METER_FUNC_NAME_MAX - 1 },
	[METER_A_FUNC_FILE] = { .type = NLA_NUL_STRING,
				.len = METER_FUNC_NAME_MAX - 1 },
	[METER_A_FUNC_LINE] = { .type = NLA_U32 },
	[METER_A_FUNC_COST_PS] = { .type = NLA_U64 },
};

static const struct nla_policy meter_add_funcs_policy[METER_A_MAX + 1] = {
	[METER_A_FUNCS] = NLA_POLICY_NESTED_ARRAY(meter_func_policy),
};

static const struct nla_policy meter_add_calls_policy[METER_A_MAX + 1] = {
	[METER_A_CALLS] = { .type = NLA_BINARY },
	[METER_A_TID] = { .type = NLA_U32 },
	[METER_A_LAST] = { .type = NLA_FLAG },
	[METER_A_SLOW_ENTRIES] = { .type = NLA_U64 },
};

static const struct nla_policy meter_set_period_policy[METER_A_MAX + 1] = {
	[METER_A_PERIOD_NS] = NLA_POLICY_FULL_RANGE(NLA_U64,
						    &meter_period_range),
};

static const struct nla_policy meter_select_policy[METER_A_MAX + 1] = {
	[METER_A_COOKIE] = { .type = NLA_U64 },
	[METER_A_PID] = { .type = NLA_U32 },
};

/* --- helpers --- */

/*
 * CAP_PERFMON (or CAP_SYS_ADMIN) held by the sender and by whoever opened
 * the socket: a privileged process handed an unprivileged user's socket
 * does not lend it its privileges (netlink_capable()).
 */
static bool meter_nl_privileged(const struct sk_buff *skb)
{
	return netlink_capable(skb, CAP_PERFMON) ||
	       netlink_capable(skb, CAP_SYS_ADMIN);
}

/*
 * A tid as the sender's pid namespace numbers it (libmeter's gettid()),
 * as the module keys threads: the global one; 0 when there is none.
 */
static pid_t meter_global_tid(u32 tid)
{
	struct pid *pid;
	pid_t nr = 0;

	rcu_read_lock();
	pid = find_vpid(tid);
	if (pid)
		nr = pid_nr(pid);
	rcu_read_unlock();
	return nr;
}

/* The session named by COOKIE or PID that the caller may read. */
static struct meter_session *meter_select(const struct sk_buff *skb,
					  struct nlattr **attrs,
					  struct netlink_ext_ack *extack,
					  int *err)
{
	u64 cookie = attrs[METER_A_COOKIE] ?
		nla_get_u64(attrs[METER_A_COOKIE]) : 0;
	pid_t pid = attrs[METER_A_PID] ? nla_get_u32(attrs[METER_A_PID]) : 0;
	struct meter_session *s;

	if (!cookie && !pid) {
		NL_SET_ERR_MSG_MOD(extack, "a session cookie or pid is needed");
		*err = -EINVAL;
		return NULL;
	}
	/* Sessions finish in the exit probe, which cannot evict. */
	meter_sessions_evict();
	s = meter_session_lookup(cookie, pid);
	/* one the reader's pid namespace does not see is not there */
	if (!s || !meter_session_visible(s)) {
		NL_SET_ERR_MSG_MOD(extack, "no such session");
		*err = -ENOENT;
		return NULL;
	}
	if (!meter_session_may_read(s, meter_nl_privileged(skb))) {
		NL_SET_ERR_MSG_MOD(extack,
				   "session belongs to another user (needs CAP_PERFMON)");
		*err = -EPERM;
		return NULL;
	}
	*err = 0;
	return s;
}

/* The calling process's live session.  Caller holds meter_mutex. */
static struct meter_session *meter_own_session(struct netlink_ext_ack *extack)
{
	struct meter_session *s = NULL;

	if (current->mm)
		s = meter_session_find_live(current);
	if (!s)
		NL_SET_ERR_MSG_MOD(extack,
				   "calling process has no live session (register first)");
	return s;
}

/* --- do handlers --- */

static int meter_genl_register(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct meter_thread_reg reg = {};
	struct sk_buff *msg;
	void *hdr;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, METER_A_PAGE_ADDR)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "the page address (METER_A_PAGE_ADDR) is required");
		return -EINVAL;
	}
	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &meter_family, 0,
				METER_CMD_REGISTER);
	if (!hdr) {
		ret = -EMSGSIZE;
		goto err_free;
	}
	reg.page_addr = nla_get_u64(a[METER_A_PAGE_ADDR]);
	if (a[METER_A_PERIOD_NS])
		reg.period_ns = nla_get_u64(a[METER_A_PERIOD_NS]);
	if (a[METER_A_PARENT_COOKIE])
		reg.parent_cookie = nla_get_u64(a[METER_A_PARENT_COOKIE]);
	if (a[METER_A_CALL_COST_PS])
		reg.call_cost_ps = nla_get_u64(a[METER_A_CALL_COST_PS]);
	if (a[METER_A_COUNTS_ADDR])
		reg.counts_addr = nla_get_u64(a[METER_A_COUNTS_ADDR]);
	if (a[METER_A_CLOCK])
		reg.clock = nla_get_u32(a[METER_A_CLOCK]);
	reg.privileged = meter_nl_privileged(skb);
	ret = meter_thread_register(&reg, info->extack);
	if (ret)
		goto err_free;
	meter_maps_update();
	if (nla_put_u64_64bit(msg, METER_A_COOKIE, reg.cookie, METER_A_PAD) ||
	    nla_put_u64_64bit(msg, METER_A_PERIOD_NS, reg.period_ns,
			      METER_A_PAD) ||
	    nla_put_u32(msg, METER_A_CLOCK, reg.clock)) {
		ret = -EMSGSIZE;
		goto err_free;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return ret;
}

static int meter_genl_unregister(struct sk_buff *skb, struct genl_info *info)
{
	return meter_thread_unregister(info->extack);
}

/* A function's name, file, line and cost, kmalloc'd in one. */
static int meter_func_name_copy(struct nlattr **tb, struct meter_func_name *fn)
{
	size_t nlen = nla_len(tb[METER_A_FUNC_NAME]);
	size_t flen = tb[METER_A_FUNC_FILE] ? nla_len(tb[METER_A_FUNC_FILE]) : 0;
	struct meter_func_text *t;

	/* the policy has checked both for a NUL within their lengths */
	nlen = strnlen(nla_data(tb[METER_A_FUNC_NAME]), nlen) + 1;
	if (flen)
		flen = strnlen(nla_data(tb[METER_A_FUNC_FILE]), flen) + 1;
	t = kzalloc(struct_size(t, text, nlen + flen), GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	fn->id = nla_get_u32(tb[METER_A_FUNC_ID]);
	t->line = tb[METER_A_FUNC_LINE] ?
		nla_get_u32(tb[METER_A_FUNC_LINE]) : 0;
	t->cost_ps = tb[METER_A_FUNC_COST_PS] ?
		nla_get_u64(tb[METER_A_FUNC_COST_PS]) : 0;
	t->file_off = flen ? nlen : 0;
	t->len = nlen + flen;
	memcpy(t->text, nla_data(tb[METER_A_FUNC_NAME]), nlen);
	if (flen)
		memcpy(t->text + nlen, nla_data(tb[METER_A_FUNC_FILE]), flen);
	fn->t = t;
	return 0;
}

/* One METER_A_FUNC checked: an id, a name, a name and file that fit. */
static int meter_func_check(struct nlattr *f, struct nlattr **tb,
			    struct netlink_ext_ack *extack)
{
	size_t len;
	int ret;

	if (nla_type(f) != METER_A_FUNC) {
		NL_SET_ERR_MSG_ATTR(extack, f, "expected METER_A_FUNC");
		return -EINVAL;
	}
	ret = nla_parse_nested(tb, METER_A_FUNC_MAX, f, meter_func_policy,
			       extack);
	if (ret)
		return ret;
	if (!tb[METER_A_FUNC_ID] || !tb[METER_A_FUNC_NAME]) {
		NL_SET_ERR_MSG_ATTR(extack, f,
				    "function needs an id and a name");
		return -EINVAL;
	}
	if (!tb[METER_A_FUNC_FILE])
		return 0;
	len = strnlen(nla_data(tb[METER_A_FUNC_NAME]),
		      nla_len(tb[METER_A_FUNC_NAME])) + 1 +
	      strnlen(nla_data(tb[METER_A_FUNC_FILE]),
		      nla_len(tb[METER_A_FUNC_FILE])) + 1;
	if (len > METER_FUNC_NAME_MAX) {
		NL_SET_BAD_ATTR(extack, f);
		NL_SET_ERR_MSG_MOD(extack,
				   "name and file past METER_FUNC_NAME_MAX");
		return -EINVAL;
	}
	return 0;
}

static int meter_genl_add_funcs(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *tb[METER_A_FUNC_MAX + 1];
	struct meter_func_name *fn = NULL;
	struct meter_session *s;
	size_t n = 0, i = 0;
	struct nlattr *f;
	int rem, ret = 0;

	if (GENL_REQ_ATTR_CHECK(info, METER_A_FUNCS)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "METER_A_FUNCS is required");
		return -EINVAL;
	}
	/* Check every entry before changing anything. */
	nla_for_each_nested(f, info->attrs[METER_A_FUNCS], rem) {
		ret = meter_func_check(f, tb, info->extack);
		if (ret)
			return ret;
		n++;
	}
	/* The names are copied before the session is touched. */
	fn = kcalloc(n, sizeof(*fn), GFP_KERNEL_ACCOUNT);
	if (!fn)
		return -ENOMEM;
	nla_for_each_nested(f, info->attrs[METER_A_FUNCS], rem) {
		nla_parse_nested(tb, METER_A_FUNC_MAX, f, meter_func_policy,
				 NULL);
		ret = meter_func_name_copy(tb, &fn[i]);
		if (ret)
			goto out_free;
		i++;
	}

	mutex_lock(&meter_mutex);
	s = meter_own_session(info->extack);
	if (s)
		ret = meter_session_name_funcs(s, fn, n, info->extack);
	else
		ret = -ENOENT;
	mutex_unlock(&meter_mutex);
	/* new records, new code perhaps (a dlopen): where it is mapped */
	if (!ret)
		meter_maps_update();
out_free:
	for (i = 0; i < n; i++)
		kfree(fn[i].t);
	kfree(fn);
	return ret;
}

static int meter_genl_add_calls(struct sk_buff *skb, struct genl_info *info)
{
	const struct meter_call_counts *c;
	struct meter_session *s;
	u64 slow = 0;
	size_t n, i;
	pid_t tid;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, METER_A_CALLS)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "METER_A_CALLS is required");
		return -EINVAL;
	}
	c = nla_data(info->attrs[METER_A_CALLS]);
	n = nla_len(info->attrs[METER_A_CALLS]);
	if (!n || n % sizeof(*c)) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[METER_A_CALLS],
				    "length is not a multiple of struct meter_call_counts");
		return -EINVAL;
	}
	n /= sizeof(*c);
	for (i = 0; i < n; i++) {
		if (c[i].reserved) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[METER_A_CALLS],
					    "reserved field is not zero");
			return -EINVAL;
		}
		if (!c[i].id || c[i].id > METER_FUNCS_MAX) {
			NL_SET_ERR_MSG_ATTR(info->extack,
					    info->attrs[METER_A_CALLS],
					    "function id out of range");
			return -EINVAL;
		}
	}

	tid = info->attrs[METER_A_TID] ?
	      meter_global_tid(nla_get_u32(info->attrs[METER_A_TID])) :
	      task_pid_nr(current);
	if (info->attrs[METER_A_SLOW_ENTRIES])
		slow = nla_get_u64(info->attrs[METER_A_SLOW_ENTRIES]);
	mutex_lock(&meter_mutex);
	s = meter_own_session(info->extack);
	if (s)
		meter_session_get(s);
	mutex_unlock(&meter_mutex);
	if (!s)
		return -ENOENT;
	/* live_lock before meter_mutex: a snapshot may be reading (live.c) */
	mutex_lock(&s->live_lock);
	mutex_lock(&meter_mutex);
	ret = meter_session_add_calls(s, tid, c, n, slow,
				      nla_get_flag(info->attrs[METER_A_LAST]),
				      info->extack);
	mutex_unlock(&meter_mutex);
	mutex_unlock(&s->live_lock);
	meter_session_put(s);
	return ret;
}

static int meter_genl_set_period(struct sk_buff *skb, struct genl_info *info)
{
	struct meter_session *s;
	u64 period;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, METER_A_PERIOD_NS)) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "the period (METER_A_PERIOD_NS) is required");
		return -EINVAL;
	}
	period = meter_period_clamp(nla_get_u64(info->attrs[METER_A_PERIOD_NS]),
				    meter_nl_privileged(skb), info->extack,
				    &ret);
	if (ret)
		return ret;
	mutex_lock(&meter_mutex);
	s = meter_own_session(info->extack);
	if (s)
		ret = meter_session_set_period(s, period);
	else
		ret = -ENOENT;
	mutex_unlock(&meter_mutex);
	return ret;
}

static int meter_genl_session_get(struct sk_buff *skb, struct genl_info *info)
{
	struct meter_session_info si;
	struct meter_session *s;
	struct sk_buff *msg;
	unsigned long flags;
	void *hdr;
	int ret;

	msg = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&meter_mutex);
	s = meter_select(skb, info->attrs, info->extack, &ret);
	if (s) {
		raw_spin_lock_irqsave(&s->lock, flags);
		meter_session_info_fill(s, &si);
		raw_spin_unlock_irqrestore(&s->lock, flags);
	}
	mutex_unlock(&meter_mutex);
	if (ret)
		goto err_free;

	hdr = genlmsg_put_reply(msg, info, &meter_family, 0,
				METER_CMD_SESSION_GET);
	if (!hdr || meter_put_session(msg, &si)) {
		ret = -EMSGSIZE;
		goto err_free;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return ret;
}

static int meter_genl_session_dump(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	bool priv = meter_nl_privileged(cb->skb);
	struct meter_session_info si;
	struct meter_session *s;
	unsigned long flags;
	void *hdr;

	mutex_lock(&meter_mutex);
	meter_sessions_evict();
	list_for_each_entry(s, &meter_sessions, node) {
		if (s->seq <= (u64)cb->args[0] ||
		    !meter_session_may_read(s, priv))
			continue;
		raw_spin_lock_irqsave(&s->lock, flags);
		meter_session_info_fill(s, &si);
		raw_spin_unlock_irqrestore(&s->lock, flags);
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &meter_family,
				  NLM_F_MULTI, METER_CMD_SESSION_GET);
		if (!hdr)
			break;
		if (meter_put_session(skb, &si)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		cb->args[0] = s->seq;
	}
	mutex_unlock(&meter_mutex);
	return skb->len;
}

static int meter_genl_session_reset(struct sk_buff *skb, struct genl_info *info)
{
	struct meter_session *s;
	int ret;

	mutex_lock(&meter_mutex);
	s = meter_select(skb, info->attrs, info->extack, &ret);
	if (s)
		meter_session_get(s);
	mutex_unlock(&meter_mutex);
	if (!s)
		return ret;
	ret = meter_session_reset(s, info->extack);
	meter_session_put(s);
	return ret;
}

static int meter_genl_session_del(struct sk_buff *skb, struct genl_info *info)
{
	struct meter_session *s;
	int ret;

	mutex_lock(&meter_mutex);
	s = meter_select(skb, info->attrs, info->extack, &ret);
	if (s && READ_ONCE(s->state) == METER_STATE_LIVE) {
		NL_SET_ERR_MSG_MOD(info->extack,
				   "session is live (its process is running)");
		ret = -EBUSY;
	} else if (s) {
		meter_session_unlink(s);
	}
	mutex_unlock(&meter_mutex);
	return ret;
}

/* --- PROFILE_GET --- */

/* Out of tree, for 6.1 and later: where the dump's parsed attributes are. */
static struct nlattr **meter_dump_attrs(struct netlink_callback *cb)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return genl_info_dump(cb)->attrs;
#else
	return genl_dumpit_info(cb)->attrs;
#endif
}

/*
 * Where the dump start has no extended ack (6.1 does not pass one to
 * .start), an error is deferred to the first dump call, whose error and
 * message go into NLMSG_DONE.
 */
static int meter_genl_profile_start(struct netlink_callback *cb)
{
	struct netlink_ext_ack local = {};
	struct netlink_ext_ack *extack = cb->extack ?: &local;
	struct meter_session *s;
	struct meter_snap *sn;
	int ret;

	sn = kzalloc(sizeof(*sn), GFP_KERNEL_ACCOUNT);
	if (!sn)
		return -ENOMEM;
	mutex_lock(&meter_mutex);
	s = meter_select(cb->skb, meter_dump_attrs(cb), extack, &ret);
	if (s)
		meter_session_get(s);
	mutex_unlock(&meter_mutex);
	if (s) {
		ret = meter_snap_take(s, sn);
		meter_session_put(s);
	}
	if (ret == -ENOMEM)
		NL_SET_ERR_MSG_MOD(extack, "out of memory for the snapshot");
	else if (ret == -ENOBUFS)
		NL_SET_ERR_MSG_MOD(extack,
				   "this user's unfinished profile dumps hold max_user_snap_mb");
	if (ret)
		meter_snap_clear(sn);
	if (ret && cb->extack) {
		kfree(sn);
		return ret;
	}
	if (ret) {
		sn->err = ret;
		sn->errmsg = local._msg;
	}
	cb->args[0] = (long)sn;
	/* phase: session, funcs, stacks, threads, addresses, maps */
	cb->args[1] = 0;
	cb->args[2] = 0;	/* position within the phase */
	return 0;
}

static int meter_genl_profile_done(struct netlink_callback *cb)
{
	struct meter_snap *sn = (struct meter_snap *)cb->args[0];

	if (sn) {
		meter_snap_clear(sn);
		kfree(sn);
	}
	cb->args[0] = 0;
	return 0;
}

/* One message of the run; -EMSGSIZE when the skb is full, 1 when done. */
static int meter_profile_put_one(struct sk_buff *skb,
				 struct netlink_callback *cb,
				 const struct meter_snap *sn)
{
	long phase = cb->args[1], pos = cb->args[2];
	struct nlattr *nest;
	void *hdr;
	int ret;

	while ((phase == 1 && pos >= sn->nfuncs) ||
	       (phase == 2 && pos >= sn->nstacks) ||
	       (phase == 3 && pos >= sn->nthreads) ||
	       (phase == 4 && pos >= sn->naddrs) ||
	       (phase == 5 && pos >= sn->maps.n)) {
		phase++;
		pos = 0;
	}
	cb->args[1] = phase;
	cb->args[2] = pos;
	if (phase > 5)
		return 1;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &meter_family, NLM_F_MULTI, METER_CMD_PROFILE_GET);
	if (!hdr)
		return -EMSGSIZE;
	switch (phase) {
	case 0:
		nest = nla_nest_start(skb, METER_A_SESSION);
		ret = nest ? meter_put_session(skb, &sn->si) : -EMSGSIZE;
		if (!ret)
			nla_nest_end(skb, nest);
		else if (nest)
			nla_nest_cancel(skb, nest);
		break;
	case 1:
		ret = meter_put_func(skb, sn, &sn->funcs[pos]);
		break;
	case 2:
		ret = meter_put_stack(skb, sn, &sn->stacks[pos]);
		break;
	case 3:
		ret = meter_put_thread(skb, &sn->threads[pos]);
		break;
	case 4:
		ret = meter_put_addr(skb, sn, &sn->addrs[pos]);
		break;
	default:
		ret = meter_put_map(skb, &sn->maps, pos);
		break;
	}
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return ret;
	}
	genlmsg_end(skb, hdr);
	if (phase == 0) {
		cb->args[1] = 1;
		cb->args[2] = 0;
	} else {
		cb->args[2] = pos + 1;
	}
	return 0;
}

static int meter_genl_profile_dump(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	const struct meter_snap *sn = (const struct meter_snap *)cb->args[0];
	int ret;

	if (sn->err) {
		if (sn->errmsg && cb->extack)
			cb->extack->_msg = sn->errmsg;
		return sn->err;
	}
	do {
		ret = meter_profile_put_one(skb, cb, sn);
	} while (!ret);
	if (ret == -EMSGSIZE && !skb->len)
		return -EMSGSIZE;	/* one message larger than a buffer */
	return skb->len;
}

/* --- the family --- */

static const struct genl_ops meter_ops[] = {
	{
		.cmd = METER_CMD_REGISTER,
		.doit = meter_genl_register,
		.policy = meter_register_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_UNREGISTER,
		.doit = meter_genl_unregister,
		.policy = meter_none_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_ADD_FUNCS,
		.doit = meter_genl_add_funcs,
		.policy = meter_add_funcs_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_ADD_CALLS,
		.doit = meter_genl_add_calls,
		.policy = meter_add_calls_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_SET_PERIOD,
		.doit = meter_genl_set_period,
		.policy = meter_set_period_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_SESSION_GET,
		.doit = meter_genl_session_get,
		.dumpit = meter_genl_session_dump,
		.policy = meter_select_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_PROFILE_GET,
		.start = meter_genl_profile_start,
		.dumpit = meter_genl_profile_dump,
		.done = meter_genl_profile_done,
		.policy = meter_select_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_SESSION_RESET,
		.doit = meter_genl_session_reset,
		.policy = meter_select_policy,
		.maxattr = METER_A_MAX,
	},
	{
		.cmd = METER_CMD_SESSION_DEL,
		.doit = meter_genl_session_del,
		.policy = meter_select_policy,
		.maxattr = METER_A_MAX,
	},
};

/*
 * parallel_ops: the handlers lock what they share themselves (meter_mutex,
 * a session's live_lock), so no request waits on genl_mutex, which every
 * generic netlink family without parallel_ops shares: a snapshot reading
 * live counters would otherwise hold up every other user's REGISTER, and
 * every other family's requests (test_harden_readers).
 */
static struct genl_family meter_family __ro_after_init = {
	.name = METER_GENL_NAME,
	.version = METER_GENL_VERSION,
	.netnsok = true,
	.parallel_ops = true,
	.module = THIS_MODULE,
	.ops = meter_ops,
	.n_ops = ARRAY_SIZE(meter_ops),
};

int __init meter_netlink_init(void)
{
	return genl_register_family(&meter_family);
}

void meter_netlink_exit(void)
{
	genl_unregister_family(&meter_family);
}

MODULE_ALIAS_GENL_FAMILY(METER_GENL_NAME);
