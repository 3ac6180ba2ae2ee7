// SPDX-License-Identifier: MIT
/*
 * The netlink client of meter.ko (see nlclient.h): the one user of libnl
 * in meter.  Every request waits for its answer (reply, ACK, end of dump
 * or error); errors carry the kernel's extended-ack message when there is
 * one.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "nlclient.h"

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

/* Bound on the payload packed into one ADD_FUNCS / ADD_CALLS message. */
#define METER_NL_BATCH_BYTES	(16 * 1024)

struct meter_nl {
	struct nl_sock *sk;
	int family;
};

/* The state of one request. */
struct meter_nl_req {
	int (*parse)(struct nlattr **tb, void *arg);
	void *arg;
	int err;		/* 0 or -errno */
	int done;
	char msg[256];		/* extended-ack message */
};

static void meter_nl_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int meter_nl_open(struct meter_nl **out, char *err, size_t errlen)
{
	struct meter_nl *nl;
	int one = 1, ret;

	*out = NULL;
	nl = calloc(1, sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = genl_connect(nl->sk);
	if (ret < 0) {
		meter_nl_seterr(err, errlen, "netlink: %s", nl_geterror(ret));
		ret = -EIO;
		goto err_sock;
	}
	/* Ask for extended-ack messages; harmless if refused. */
	setsockopt(nl_socket_get_fd(nl->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	nl->family = genl_ctrl_resolve(nl->sk, METER_GENL_NAME);
	if (nl->family < 0) {
		meter_nl_seterr(err, errlen,
				"generic netlink family \"%s\" not found (is meter.ko loaded?)",
				METER_GENL_NAME);
		ret = -ENOENT;
		goto err_sock;
	}
	*out = nl;
	return 0;

err_sock:
	nl_socket_free(nl->sk);
err_free:
	free(nl);
	return ret;
}

void meter_nl_close(struct meter_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

/* --- one request --- */

static void meter_nl_extack(struct meter_nl_req *req, struct nlmsgerr *e)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct nlattr *tlvs, *a;
	size_t off;
	int len, rem;

	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	off = sizeof(*e);
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	len = (int)(nlh->nlmsg_len - NLMSG_HDRLEN) - (int)off;
	if (len <= 0)
		return;
	tlvs = (struct nlattr *)((char *)e + NLMSG_ALIGN(off));
	nla_for_each_attr(a, tlvs, len, rem) {
		if (nla_type(a) == NLMSGERR_ATTR_MSG && nla_len(a) > 0) {
			snprintf(req->msg, sizeof(req->msg), "%.*s",
				 nla_len(a), (const char *)nla_data(a));
			/* The kernel's message ends with a newline sometimes. */
			req->msg[strcspn(req->msg, "\n")] = '\0';
		}
	}
}

static int meter_nl_on_error(struct sockaddr_nl *who, struct nlmsgerr *e,
			     void *arg)
{
	struct meter_nl_req *req = arg;

	(void)who;
	req->err = e->error ? e->error : -EIO;
	req->done = 1;
	meter_nl_extack(req, e);
	return NL_STOP;
}

static int meter_nl_on_ack(struct nl_msg *msg, void *arg)
{
	struct meter_nl_req *req = arg;

	(void)msg;
	req->done = 1;
	return NL_STOP;
}

static int meter_nl_on_finish(struct nl_msg *msg, void *arg)
{
	struct meter_nl_req *req = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	int code;

	/* A dump that failed puts the error, and maybe the extended-ack
	 * attributes after it, in NLMSG_DONE.
	 */
	if (nlmsg_datalen(nlh) >= (int)sizeof(int)) {
		memcpy(&code, nlmsg_data(nlh), sizeof(code));
		if (code < 0 && !req->err)
			req->err = code;
	}
	if (req->err && (nlh->nlmsg_flags & NLM_F_ACK_TLVS) &&
	    nlmsg_datalen(nlh) > (int)NLMSG_ALIGN(sizeof(int))) {
		struct nlattr *a, *tlvs = (struct nlattr *)
			((char *)nlmsg_data(nlh) + NLMSG_ALIGN(sizeof(int)));
		int len = nlmsg_datalen(nlh) - (int)NLMSG_ALIGN(sizeof(int));
		int rem;

		nla_for_each_attr(a, tlvs, len, rem)
			if (nla_type(a) == NLMSGERR_ATTR_MSG && nla_len(a) > 0) {
				snprintf(req->msg, sizeof(req->msg), "%.*s",
					 nla_len(a), (const char *)nla_data(a));
				req->msg[strcspn(req->msg, "\n")] = '\0';
			}
	}
	req->done = 1;
	return NL_STOP;
}

static int meter_nl_on_valid(struct nl_msg *msg, void *arg)
{
	struct meter_nl_req *req = arg;
	struct nlattr *tb[METER_A_MAX + 1];
	int ret;

	if (!req->parse || req->err)
		return NL_OK;
	ret = genlmsg_parse(nlmsg_hdr(msg), 0, tb, METER_A_MAX, NULL);
	if (ret < 0) {
		req->err = -EPROTO;
		snprintf(req->msg, sizeof(req->msg), "malformed reply");
		return NL_OK;
	}
	ret = req->parse(tb, req->arg);
	if (ret < 0 && !req->err) {
		req->err = ret;
		if (ret == -ENOMEM)
			snprintf(req->msg, sizeof(req->msg), "out of memory");
		else
			snprintf(req->msg, sizeof(req->msg), "malformed reply");
	}
	return NL_OK;
}

/*
 * Sends msg (consumed) and processes the answer until its end.  parse is
 * called for every reply or dump message.
 */
static int meter_nl_transact(struct meter_nl *nl, struct nl_msg *msg,
			     int (*parse)(struct nlattr **, void *), void *arg,
			     const char *what, char *err, size_t errlen)
{
	struct meter_nl_req req = { .parse = parse, .arg = arg };
	struct nl_cb *cb;
	int ret;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, meter_nl_on_valid, &req);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, meter_nl_on_ack, &req);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, meter_nl_on_finish, &req);
	nl_cb_err(cb, NL_CB_CUSTOM, meter_nl_on_error, &req);

	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret < 0) {
		meter_nl_seterr(err, errlen, "%s: send: %s", what,
				nl_geterror(ret));
		nl_cb_put(cb);
		return -EIO;
	}
	while (!req.done) {
		ret = nl_recvmsgs(nl->sk, cb);
		if (req.done)
			break;
		if (ret < 0) {
			req.err = -EIO;
			snprintf(req.msg, sizeof(req.msg), "receive: %s",
				 nl_geterror(ret));
			break;
		}
	}
	nl_cb_put(cb);
	if (req.err) {
		if (req.msg[0])
			meter_nl_seterr(err, errlen, "%s: %s (%s)", what,
					req.msg, strerror(-req.err));
		else
			meter_nl_seterr(err, errlen, "%s: %s", what,
					strerror(-req.err));
	}
	return req.err;
}

static struct nl_msg *meter_nl_msg(struct meter_nl *nl, int cmd, int flags,
				   size_t size)
{
	struct nl_msg *msg = size ? nlmsg_alloc_size(size) : nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0, flags,
			 cmd, METER_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* --- attribute readers: absent or short attributes read as 0 --- */

static uint64_t get_u64(const struct nlattr *a)
{
	uint64_t v = 0;

	if (a && nla_len(a) >= (int)sizeof(v))
		memcpy(&v, nla_data(a), sizeof(v));
	return v;
}

static uint32_t get_u32(const struct nlattr *a)
{
	uint32_t v = 0;

	if (a && nla_len(a) >= (int)sizeof(v))
		memcpy(&v, nla_data(a), sizeof(v));
	return v;
}

/* A copy of a string attribute, NULL when absent; *bad on ENOMEM. */
static char *get_str(const struct nlattr *a, int *bad)
{
	char *s;

	if (!a || nla_len(a) <= 0)
		return NULL;
	s = strndup(nla_data(a), nla_len(a));
	if (!s)
		*bad = 1;
	return s;
}

/* --- the registering thread's half --- */

struct meter_nl_reg_reply {
	uint64_t cookie, period_ns;
};

static int meter_nl_parse_reg(struct nlattr **tb, void *arg)
{
	struct meter_nl_reg_reply *r = arg;

	if (!tb[METER_A_COOKIE])
		return -EPROTO;
	r->cookie = get_u64(tb[METER_A_COOKIE]);
	r->period_ns = get_u64(tb[METER_A_PERIOD_NS]);
	return 0;
}

int meter_nl_register(struct meter_nl *nl, const struct meter_nl_reg *reg,
		      uint64_t *cookie, uint64_t *period_ns,
		      char *err, size_t errlen)
{
	struct meter_nl_reg_reply r = { 0, 0 };
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
	     nla_put_u64(msg, METER_A_CALL_COST_PS, reg->call_cost_ps))) {
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

int meter_nl_add_funcs(struct meter_nl *nl, const struct meter_nl_func *f,
		       size_t n, char *err, size_t errlen)
{
	size_t i = 0;
	int ret;

	while (i < n) {
		struct nlattr *funcs, *one;
		struct nl_msg *msg;
		size_t used = 0;

		msg = meter_nl_msg(nl, METER_CMD_ADD_FUNCS, 0,
				   METER_NL_BATCH_BYTES + 4096);
		if (!msg)
			return -ENOMEM;
		funcs = nla_nest_start(msg, METER_A_FUNCS);
		if (!funcs)
			goto nomem;
		for (; i < n && used < METER_NL_BATCH_BYTES; i++) {
			const char *name = f[i].name ? f[i].name : "";
			char cut[METER_FUNC_NAME_MAX];

			/* The kernel takes names of up to 255 bytes. */
			snprintf(cut, sizeof(cut), "%s", name);
			one = nla_nest_start(msg, METER_A_FUNC);
			if (!one ||
			    nla_put_u32(msg, METER_A_FUNC_ID, f[i].id) ||
			    nla_put_string(msg, METER_A_FUNC_NAME, cut))
				goto nomem;
			nla_nest_end(msg, one);
			used += 24 + strlen(cut);
		}
		nla_nest_end(msg, funcs);
		ret = meter_nl_transact(nl, msg, NULL, NULL, "add functions",
					err, errlen);
		if (ret)
			return ret;
		continue;
nomem:
		nlmsg_free(msg);
		return -ENOMEM;
	}
	return 0;
}

int meter_nl_add_calls(struct meter_nl *nl,
		       const struct meter_call_counts *c, size_t n,
		       char *err, size_t errlen)
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
		if (nla_put(msg, METER_A_CALLS, (int)(k * sizeof(*c)), c + i)) {
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

/* --- the reader's half --- */

/* Session attributes (top level or inside METER_A_SESSION) into p. */
static int meter_nl_fill_session(struct meter_profile *p, struct nlattr **tb)
{
	int bad = 0;

	free(p->command);
	p->command = get_str(tb[METER_A_COMM], &bad);
	if (bad)
		return -ENOMEM;
	snprintf(p->backend, sizeof(p->backend), "kernel");
	p->cookie = get_u64(tb[METER_A_COOKIE]);
	p->parent_cookie = get_u64(tb[METER_A_PARENT_COOKIE]);
	p->pid = (int32_t)get_u32(tb[METER_A_PID]);
	p->uid = get_u32(tb[METER_A_UID]);
	p->exited = get_u32(tb[METER_A_STATE]) == METER_STATE_EXITED;
	p->runs = 1;
	p->period_ns = get_u64(tb[METER_A_PERIOD_NS]);
	p->start_ns = get_u64(tb[METER_A_START_NS]);
	p->end_ns = get_u64(tb[METER_A_END_NS]);
	p->samples = get_u64(tb[METER_A_SAMPLES]);
	p->ticks = get_u64(tb[METER_A_TICKS]);
	p->no_current = get_u64(tb[METER_A_NO_CURRENT]);
	p->invalid = get_u64(tb[METER_A_INVALID]);
	p->lost = get_u64(tb[METER_A_LOST]);
	p->truncated = get_u64(tb[METER_A_TRUNCATED]);
	p->call_cost_ps = get_u64(tb[METER_A_CALL_COST_PS]);
	return 0;
}

struct meter_nl_list {
	struct meter_profile **v;
	size_t n, cap;
};

static int meter_nl_parse_list(struct nlattr **tb, void *arg)
{
	struct meter_nl_list *l = arg;
	struct meter_profile *p;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct meter_profile **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	p = meter_profile_new();
	if (!p)
		return -ENOMEM;
	if (meter_nl_fill_session(p, tb)) {
		meter_profile_free(p);
		return -ENOMEM;
	}
	l->v[l->n++] = p;
	return 0;
}

int meter_nl_list(struct meter_nl *nl, struct meter_profile ***out,
		  size_t *n, char *err, size_t errlen)
{
	struct meter_nl_list l = { NULL, 0, 0 };
	struct nl_msg *msg;
	size_t i;
	int ret;

	*out = NULL;
	*n = 0;
	msg = meter_nl_msg(nl, METER_CMD_SESSION_GET, NLM_F_DUMP, 0);
	if (!msg)
		return -ENOMEM;
	ret = meter_nl_transact(nl, msg, meter_nl_parse_list, &l,
				"list sessions", err, errlen);
	if (ret) {
		for (i = 0; i < l.n; i++)
			meter_profile_free(l.v[i]);
		free(l.v);
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

	if (nla_parse_nested(tb, METER_A_FUNC_MAX, nest, NULL) < 0 ||
	    !tb[METER_A_FUNC_ID])
		return -EPROTO;
	name = get_str(tb[METER_A_FUNC_NAME], &bad);
	if (bad)
		return -ENOMEM;
	f = meter_profile_add_func(p, get_u32(tb[METER_A_FUNC_ID]), name);
	free(name);
	if (!f)
		return -ENOMEM;
	f->calls = get_u64(tb[METER_A_FUNC_CALLS]);
	f->self_samples = get_u64(tb[METER_A_FUNC_SELF]);
	f->total_samples = get_u64(tb[METER_A_FUNC_TOTAL]);
	f->alloc_calls = get_u64(tb[METER_A_FUNC_ALLOC_CALLS]);
	f->alloc_bytes = get_u64(tb[METER_A_FUNC_ALLOC_BYTES]);
	return 0;
}

static int meter_nl_parse_stack(struct meter_profile *p, struct nlattr *nest)
{
	struct nlattr *tb[METER_A_STACK_MAX + 1];
	struct meter_stack *s;
	uint32_t *frames;
	int len;

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
	s = meter_profile_add_stack(p, frames, (uint32_t)(len / 4),
				    get_u64(tb[METER_A_STACK_SAMPLES]));
	free(frames);
	if (!s)
		return -ENOMEM;
	s->truncated = tb[METER_A_STACK_TRUNCATED] != NULL;
	return 0;
}

static int meter_nl_parse_thread(struct meter_profile *p, struct nlattr *nest)
{
	struct nlattr *tb[METER_A_THREAD_MAX + 1];
	struct meter_thread_row *t;

	if (nla_parse_nested(tb, METER_A_THREAD_MAX, nest, NULL) < 0 ||
	    !tb[METER_A_THREAD_TID])
		return -EPROTO;
	t = meter_profile_add_thread(p, get_u32(tb[METER_A_THREAD_TID]),
				     get_u64(tb[METER_A_THREAD_SAMPLES]));
	if (!t)
		return -ENOMEM;
	t->exited = get_u32(tb[METER_A_THREAD_STATE]) == METER_THREAD_EXITED;
	return 0;
}

static int meter_nl_parse_profile(struct nlattr **tb, void *arg)
{
	struct meter_profile *p = arg;
	struct nlattr *stb[METER_A_MAX + 1];

	if (tb[METER_A_SESSION]) {
		if (nla_parse_nested(stb, METER_A_MAX, tb[METER_A_SESSION],
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
	return 0;	/* newer kernel, unknown nest: skip */
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
