// SPDX-License-Identifier: MIT
/*
 * The netlink client's socket (see nlclient.h): the one place that sends
 * and receives with libnl.  Every request waits for its answer (reply,
 * ACK, end of dump or error); errors carry the kernel's extended-ack
 * message when there is one.  libmeter's registration (lib/nlreg.c) and
 * the tools' sessions and dumps (analysis/nldump.c) are built on it.
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
int meter_nl_transact(struct meter_nl *nl, struct nl_msg *msg,
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

struct nl_msg *meter_nl_msg(struct meter_nl *nl, int cmd, int flags,
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

uint64_t meter_nl_get_u64(const struct nlattr *a)
{
	uint64_t v = 0;

	if (a && nla_len(a) >= (int)sizeof(v))
		memcpy(&v, nla_data(a), sizeof(v));
	return v;
}

uint32_t meter_nl_get_u32(const struct nlattr *a)
{
	uint32_t v = 0;

	if (a && nla_len(a) >= (int)sizeof(v))
		memcpy(&v, nla_data(a), sizeof(v));
	return v;
}

/* A copy of a string attribute, NULL when absent; *bad on ENOMEM. */
char *meter_nl_get_str(const struct nlattr *a, int *bad)
{
	char *s;

	if (!a || nla_len(a) <= 0)
		return NULL;
	s = strndup(nla_data(a), nla_len(a));
	if (!s)
		*bad = 1;
	return s;
}
