// SPDX-License-Identifier: MIT
/*
 * A generic netlink fuzzer for meter.ko.  Tens of thousands of random and
 * malformed messages, as root and as nobody (uid 65534, setuid in a
 * child): random commands including out-of-range ones and random
 * versions, random attribute types (in and out of range, NLA_F_NESTED
 * set at random), lengths and nesting, truncated netlink and genetlink
 * headers, attribute lengths running past the message, oversized names,
 * binary arrays of bad lengths, dump flags on do-only commands and none on
 * dump-only ones, bogus cookies, pids and port ids, several messages in
 * one datagram.  Valid values (the sender's page, cookie and pid) are
 * mixed in so that the handlers past the policy run too.
 *
 * One message in four is well-formed by construction: a command of the
 * family with the attributes its policy allows, of the right types and
 * lengths (values may still be wrong: a foreign cookie, a taken page).
 * Every answer is matched to its message by sequence number and read:
 * an ACK, a message of the family, the end of a dump, or an error whose
 * extended ack is one of meter's own ("meter: ...") was given by the
 * command's handler, past the policy; the policy's refusals carry the
 * netlink core's messages.  For each command, every well-formed message
 * must have reached its handler, so each handler is shown to have run
 * thousands of times per identity.  Afterwards a normal register /
 * sample / read round trip must work; vm-run fails the run on any kernel
 * WARN, BUG or Oops (and make check-debug runs it on the debug kernel).
 *
 * This is a test, not product code: it builds messages by hand on a raw
 * netlink socket (libnl would refuse to build most of them); the product's
 * only netlink client is common/nlclient.c.
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "kmod_util.h"
#include "raw_genl.h"

#define FUZZ_MSGS	100000
#define BUF_SIZE	65536
#define NCMDS		(METER_CMD_SESSION_DEL + 1)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t rndn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

struct fuzz {
	int fd;
	uint16_t family;
	struct meter_page *page;
	uint64_t cookie;
	uint32_t pid;
	uint32_t seq;
	unsigned long sent, replies, errors;
	unsigned long data, acks;	/* handlers' answers, ACKs of 0 */
	uint64_t errnos;		/* the error codes seen, 1..63 */
	/* by sequence number: the command (0: not the family's), whether
	 * well-formed, whether its handler answered
	 */
	uint8_t *cmd, *wellformed, *reached;
};

static void put_attr_hdr(uint8_t *p, uint16_t len, uint16_t type)
{
	struct nlattr a = { .nla_len = len, .nla_type = type };

	memcpy(p, &a, sizeof(a));
}

/* An interesting 8-byte value for u64 attributes. */
static uint64_t value64(struct fuzz *f)
{
	switch (rndn(10)) {
	case 0: return 0;
	case 1: return f->cookie;
	case 2: return (uintptr_t)f->page;
	case 3: return (uintptr_t)f->page + rndn(4096);
	case 4: return METER_PERIOD_MIN_NS + rndn(3) - 1;
	case 5: return METER_PERIOD_MAX_NS + rndn(3) - 1;
	case 6: return ~0ull;
	case 7: return 0xffffffff81000000ull;
	case 8: return rndn(200000);
	default: return rnd();
	}
}

static uint32_t value32(struct fuzz *f)
{
	switch (rndn(8)) {
	case 0: return 0;
	case 1: return f->pid;
	case 2: return 1;
	case 3: return METER_FUNCS_MAX + rndn(3) - 1;
	case 4: return rndn(100);
	case 5: return ~0u;
	default: return (uint32_t)rnd();
	}
}

/* Random attributes into buf[0..cap); returns bytes written. */
static size_t fuzz_attrs(struct fuzz *f, uint8_t *buf, size_t cap, int depth)
{
	size_t off = 0;
	int n = rndn(7), i;

	for (i = 0; i < n && off + 4 <= cap; i++) {
		uint16_t type = rndn(10) ? rndn(METER_A_MAX + 4) : rnd();
		size_t room = cap - off - 4, len;
		uint8_t *p = buf + off + 4;

		if (rndn(8) == 0)
			type |= NLA_F_NESTED;
		switch (rndn(12)) {
		case 0: len = 0; break;
		case 1: len = 1 + rndn(7); break;
		case 2:	/* u64 */
			len = 8;
			if (len <= room) {
				uint64_t v = value64(f);

				memcpy(p, &v, 8);
			}
			break;
		case 3:	/* u32 */
			len = 4;
			if (len <= room) {
				uint32_t v = value32(f);

				memcpy(p, &v, 4);
			}
			break;
		case 4:	/* a string, NUL-terminated or not, maybe too long */
			len = rndn(3) ? 1 + rndn(300) : 256 + rndn(2000);
			if (len <= room) {
				memset(p, 'a' + rndn(26), len);
				if (rndn(2))
					p[len - 1] = 0;
			}
			break;
		case 5:	/* an array of call counts, maybe of a bad length */
			len = sizeof(struct meter_call_counts) * (1 + rndn(8)) +
			      (rndn(3) ? 0 : rndn(31));
			if (len <= room) {
				size_t k;

				for (k = 0; k + 4 <= len; k += 4) {
					uint32_t v = rndn(2) ? value32(f) : 0;

					memcpy(p + k, &v, 4);
				}
				type = rndn(3) ? METER_A_CALLS : type;
			}
			break;
		case 6:
		case 7:	/* nested, maybe METER_A_FUNCS of METER_A_FUNC */
			if (depth < 4 && room > 8) {
				len = fuzz_attrs(f, p, room > 1024 ? 1024 : room,
						 depth + 1);
				if (rndn(2))
					type = rndn(2) ? METER_A_FUNCS :
						METER_A_FUNC;
				if (rndn(2))
					type |= NLA_F_NESTED;
			} else {
				len = 0;
			}
			break;
		default:	/* random bytes */
			len = rndn(64);
			if (len <= room) {
				size_t k;

				for (k = 0; k < len; k++)
					p[k] = (uint8_t)rnd();
			}
			break;
		}
		if (len > room)
			len = room;
		/* sometimes the attribute claims more or less than it has */
		put_attr_hdr(buf + off,
			     rndn(40) ? (uint16_t)(4 + len) :
			     (uint16_t)(rndn(2) ? 4 + len + 1 + rndn(100) :
					rndn(4)),
			     type);
		off += NLA_ALIGN(4 + len);
		if (off > cap)
			off = cap;
	}
	return off;
}

static size_t put_u32(uint8_t *p, uint16_t type, uint32_t v)
{
	put_attr_hdr(p, 8, type);
	memcpy(p + 4, &v, 4);
	return 8;
}

static size_t put_u64(uint8_t *p, uint16_t type, uint64_t v)
{
	put_attr_hdr(p, 12, type);
	memcpy(p + 4, &v, 8);
	return 12;
}

/* A selector as the policy wants it: this session, or a random one. */
static size_t put_select(struct fuzz *f, uint8_t *p)
{
	switch (rndn(3)) {
	case 0: return put_u32(p, METER_A_PID, rndn(2) ? f->pid : rndn(5000));
	case 1: return put_u64(p, METER_A_COOKIE, rnd());
	default: return put_u64(p, METER_A_COOKIE, f->cookie);
	}
}

/*
 * A message of command cmd that its policy accepts; the flags ask for an
 * ACK (do) or a dump; returns its length.
 */
static size_t wellformed_msg(struct fuzz *f, uint8_t *buf, uint8_t cmd)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)NLMSG_DATA(nlh);
	size_t len = NLMSG_HDRLEN + GENL_HDRLEN;
	uint64_t period = METER_PERIOD_MIN_NS +
			  rnd() % (METER_PERIOD_MAX_NS - METER_PERIOD_MIN_NS);
	uint32_t i, n;

	memset(buf, 0, len);
	nlh->nlmsg_type = f->family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g->cmd = cmd;
	g->version = METER_GENL_VERSION;
	switch (cmd) {
	case METER_CMD_REGISTER:
		len += put_u64(buf + len, METER_A_PAGE_ADDR,
			       rndn(2) ? (uintptr_t)f->page : rnd() & ~4095ull);
		if (rndn(2))
			len += put_u64(buf + len, METER_A_PERIOD_NS, period);
		if (rndn(2))
			len += put_u32(buf + len, METER_A_CLOCK, rndn(2));
		break;
	case METER_CMD_ADD_FUNCS: {
		size_t outer = len;

		len += 4;
		for (i = 0, n = 1 + rndn(4); i < n; i++) {
			size_t inner = len, nl = 1 + rndn(40);

			len += 4;
			len += put_u32(buf + len, METER_A_FUNC_ID,
				       1 + rndn(1000));
			put_attr_hdr(buf + len, 4 + nl, METER_A_FUNC_NAME);
			memset(buf + len + 4, 'a' + rndn(26), nl - 1);
			buf[len + 4 + nl - 1] = 0;
			len += NLA_ALIGN(4 + nl);
			/* a file the policy takes (METER_FUNC_NAME_MAX - 1
			 * bytes with its NUL), at times past what fits
			 * beside the name, which the handler refuses
			 */
			if (rndn(2)) {
				size_t fl = 1 + (rndn(8) ? rndn(200) :
						 1900 + rndn(147));

				put_attr_hdr(buf + len, 4 + fl, METER_A_FUNC_FILE);
				memset(buf + len + 4, '/', fl - 1);
				buf[len + 4 + fl - 1] = 0;
				len += NLA_ALIGN(4 + fl);
			}
			if (rndn(2))
				len += put_u32(buf + len, METER_A_FUNC_LINE,
					       rndn(3) ? rndn(5000) : value32(f));
			put_attr_hdr(buf + inner, len - inner,
				     METER_A_FUNC | NLA_F_NESTED);
		}
		put_attr_hdr(buf + outer, len - outer,
			     METER_A_FUNCS | NLA_F_NESTED);
		break;
	}
	case METER_CMD_ADD_CALLS:
		n = 1 + rndn(8);
		put_attr_hdr(buf + len, 4 + n * sizeof(struct meter_call_counts),
			     METER_A_CALLS);
		for (i = 0; i < n; i++) {
			struct meter_call_counts c = {
				.id = 1 + i * (1 + rndn(50)),
				.calls = rndn(1000),
			};

			memcpy(buf + len + 4 + i * sizeof(c), &c, sizeof(c));
		}
		len += NLA_ALIGN(4 + n * sizeof(struct meter_call_counts));
		if (rndn(2))
			len += put_u32(buf + len, METER_A_TID, f->pid);
		break;
	case METER_CMD_SET_PERIOD:
		len += put_u64(buf + len, METER_A_PERIOD_NS, period);
		break;
	case METER_CMD_SESSION_GET:
		if (rndn(2)) {
			nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
			break;
		}
		len += put_select(f, buf + len);
		break;
	case METER_CMD_PROFILE_GET:
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		len += put_select(f, buf + len);
		break;
	case METER_CMD_SESSION_RESET:
	case METER_CMD_SESSION_DEL:
		len += put_select(f, buf + len);
		break;
	default:	/* UNREGISTER: no attributes */
		break;
	}
	nlh->nlmsg_len = len;
	return len;
}

/* One message at buf; returns its length (what nlmsg_len may not say). */
static size_t fuzz_msg(struct fuzz *f, uint8_t *buf, size_t cap)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = (struct genlmsghdr *)NLMSG_DATA(nlh);
	static const uint16_t flagset[] = {
		NLM_F_REQUEST, NLM_F_REQUEST | NLM_F_ACK,
		NLM_F_REQUEST | NLM_F_DUMP, NLM_F_REQUEST | NLM_F_ROOT,
		NLM_F_REQUEST | NLM_F_DUMP | NLM_F_ACK,
		NLM_F_REQUEST | NLM_F_ECHO, NLM_F_REQUEST | NLM_F_ATOMIC,
		0, NLM_F_ACK, NLM_F_MULTI | NLM_F_REQUEST,
	};
	size_t len;

	memset(buf, 0, NLMSG_HDRLEN + GENL_HDRLEN);
	switch (rndn(50)) {
	case 0: nlh->nlmsg_type = GENL_ID_CTRL; break;
	case 1: nlh->nlmsg_type = 0xfff0 + rndn(16); break;
	case 2: nlh->nlmsg_type = rndn(NLMSG_MIN_TYPE); break;
	default: nlh->nlmsg_type = f->family; break;
	}
	if (nlh->nlmsg_type == GENL_ID_CTRL)
		g->cmd = CTRL_CMD_GETFAMILY;
	else
		g->cmd = rndn(8) ? rndn(METER_CMD_MAX + 3) : (uint8_t)rnd();
	g->version = rndn(10) ? METER_GENL_VERSION : (uint8_t)rnd();
	g->reserved = rndn(20) ? 0 : (uint16_t)rnd();
	nlh->nlmsg_flags = flagset[rndn(sizeof(flagset) / sizeof(flagset[0]))];
	if (!rndn(30))
		nlh->nlmsg_flags = (uint16_t)rnd();
	nlh->nlmsg_seq = ++f->seq;
	nlh->nlmsg_pid = rndn(10) ? 0 : (uint32_t)rnd();
	len = NLMSG_HDRLEN + GENL_HDRLEN;
	len += fuzz_attrs(f, buf + len, cap - len, 0);
	nlh->nlmsg_len = len;
	switch (rndn(30)) {
	case 0:	/* truncated genetlink header */
		nlh->nlmsg_len = NLMSG_HDRLEN + rndn(GENL_HDRLEN);
		len = nlh->nlmsg_len;
		break;
	case 1:	/* truncated netlink header */
		len = rndn(NLMSG_HDRLEN);
		break;
	case 2:	/* length says more than sent */
		nlh->nlmsg_len = len + 1 + rndn(1000);
		break;
	case 3:	/* cut inside the attributes */
		len = NLMSG_HDRLEN + GENL_HDRLEN +
		      rndn(len - NLMSG_HDRLEN - GENL_HDRLEN + 1);
		nlh->nlmsg_len = len;
		break;
	default:
		break;
	}
	if (nlh->nlmsg_type == f->family && g->cmd < NCMDS &&
	    len >= NLMSG_HDRLEN + GENL_HDRLEN)
		f->cmd[f->seq] = g->cmd;
	return len;
}

/* Whether the extended ack after an error or a dump's end is meter's. */
static int ack_is_meters(const struct nlmsghdr *h, const uint8_t *tlv)
{
	const uint8_t *end = (const uint8_t *)h + h->nlmsg_len;
	struct nlattr a;

	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return 0;
	while (tlv + NLA_HDRLEN <= end) {
		memcpy(&a, tlv, sizeof(a));
		if (a.nla_len < NLA_HDRLEN || tlv + a.nla_len > end)
			return 0;
		if (a.nla_type == NLMSGERR_ATTR_MSG)
			return a.nla_len > NLA_HDRLEN + 7 &&
			       !memcmp(tlv + NLA_HDRLEN, "meter: ", 7);
		tlv += NLA_ALIGN(a.nla_len);
	}
	return 0;
}

/*
 * Whether this answer comes from a command's handler: an ACK, a message
 * of the family, a dump's end, or an error with meter's own message.
 */
static int from_handler(struct fuzz *f, const struct nlmsghdr *h)
{
	if (h->nlmsg_type == f->family || h->nlmsg_type == NLMSG_DONE)
		return h->nlmsg_type == f->family ||
		       h->nlmsg_len < NLMSG_HDRLEN + sizeof(int) ||
		       !*(const int *)NLMSG_DATA(h) ||
		       ack_is_meters(h, (const uint8_t *)NLMSG_DATA(h) +
				     sizeof(int));
	if (h->nlmsg_type == NLMSG_ERROR &&
	    h->nlmsg_len >= NLMSG_HDRLEN + sizeof(struct nlmsgerr)) {
		const struct nlmsgerr *e = NLMSG_DATA(h);

		return !e->error ||
		       ack_is_meters(h, (const uint8_t *)e + sizeof(*e));
	}
	return 0;
}

static void drain(struct fuzz *f)
{
	static uint8_t rbuf[BUF_SIZE];
	int i;

	for (i = 0; i < 10000; i++) {
		ssize_t n = recv(f->fd, rbuf, sizeof(rbuf), MSG_DONTWAIT);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			continue;	/* ENOBUFS and the like: keep reading */
		}
		if (n == 0)
			return;
		for (h = (struct nlmsghdr *)rbuf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				f->errors += e->error != 0;
				f->acks += e->error == 0;
				if (e->error < 0 && e->error > -64)
					f->errnos |= 1ull << -e->error;
			} else if (h->nlmsg_type == f->family) {
				f->data++;
			}
			f->replies++;
			if (h->nlmsg_seq <= f->seq && from_handler(f, h))
				f->reached[h->nlmsg_seq] = 1;
		}
	}
}

/*
 * What the kernel answered the last run: answers, error answers, answers
 * built by meter's handlers (the family's own messages: a dump, a
 * profile), ACKs of success, and the set of error codes (a bit per errno):
 * together they show that the fuzzed messages reached the handlers and
 * were answered there, not only refused by the policies.
 */
static unsigned long fuzz_answers[5];
/* per command: well-formed messages sent, those that reached the
 * handler, and all messages of the command that reached it
 */
static unsigned long fuzz_wf[NCMDS], fuzz_wf_reached[NCMDS];
static unsigned long fuzz_reached[NCMDS];

/* Fuzzes as the current identity; returns the number of messages sent. */
static unsigned long fuzz_run(unsigned long msgs, uint64_t seed)
{
	static uint8_t buf[BUF_SIZE];
	struct fuzz f = { 0 };
	int one = 1, fam;

	rng_state ^= seed;
	/* a forked fuzzer starts from the parent's copy of the last run's */
	memset(fuzz_wf, 0, sizeof(fuzz_wf));
	memset(fuzz_wf_reached, 0, sizeof(fuzz_wf_reached));
	memset(fuzz_reached, 0, sizeof(fuzz_reached));
	f.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (f.fd < 0)
		return 0;
	f.cmd = calloc(msgs + 16, 1);
	f.wellformed = calloc(msgs + 16, 1);
	f.reached = calloc(msgs + 16, 1);
	if (!f.cmd || !f.wellformed || !f.reached)
		return 0;
	/* answers keep their extended ack; requests are not echoed in it */
	setsockopt(f.fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(f.fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
	{
		int big = 4 << 20;

		if (setsockopt(f.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big,
			       sizeof(big)))
			setsockopt(f.fd, SOL_SOCKET, SO_RCVBUF, &big,
				   sizeof(big));
	}
	fam = raw_genl_family(f.fd);
	if (fam < 0)
		return 0;
	f.family = fam;
	f.pid = getpid();
	f.page = ku_page();
	{
		/* a real registration, so the session commands reach code */
		struct meter_nl *nl = ku_open();

		f.cookie = ku_register(nl, f.page, 0);
		ku_funcs(nl, 8);
		f.page->current_id = 1;
		meter_nl_close(nl);
	}
	while (f.sent < msgs) {
		size_t len = 0;
		int k, batch = rndn(10) ? 1 : 2 + rndn(3);

		/* strict checking toggled at random */
		if (!rndn(500)) {
			one = rndn(2);
			setsockopt(f.fd, SOL_NETLINK, NETLINK_GET_STRICT_CHK,
				   &one, sizeof(one));
		}
		/*
		 * A well-formed message goes alone, after the last answers
		 * are read (a dump still running on the socket would make
		 * the core refuse another with EBUSY)
		 */
		if (!rndn(4)) {
			uint8_t cmd = 1 + rndn(NCMDS - 1);
			struct nlmsghdr *nlh = (struct nlmsghdr *)buf;

			len = wellformed_msg(&f, buf, cmd);
			nlh->nlmsg_seq = ++f.seq;
			f.cmd[f.seq] = cmd;
			f.wellformed[f.seq] = 1;
			batch = 0;
			f.sent++;
		}
		for (k = 0; k < batch && len + 4096 < sizeof(buf) &&
		     f.sent < msgs; k++) {
			size_t cap = sizeof(buf) - len;

			if (cap > 8192 && rndn(20))
				cap = 8192;
			len += NLMSG_ALIGN(fuzz_msg(&f, buf + len, cap));
			f.sent++;
		}
		send(f.fd, buf, len, 0);
		drain(&f);
		f.page->current_id = 1 + rndn(10);	/* some ids out of range */
	}
	close(f.fd);
	{
		unsigned long i;

		for (i = 1; i <= f.seq; i++) {
			fuzz_reached[f.cmd[i]] += f.reached[i];
			fuzz_wf[f.cmd[i]] += f.wellformed[i];
			fuzz_wf_reached[f.cmd[i]] +=
				f.wellformed[i] && f.reached[i];
		}
	}
	fuzz_answers[0] = f.replies;
	fuzz_answers[1] = f.errors;
	fuzz_answers[2] = f.data;
	fuzz_answers[3] = f.acks;
	fuzz_answers[4] = (unsigned long)f.errnos;
	return f.sent;
}

/* Runs the fuzzer in a child, as nobody if asked; returns messages sent. */
static unsigned long fuzz_child(int nobody, uint64_t seed, int *status)
{
	unsigned long sent = 0;
	int fds[2];
	pid_t pid;

	if (pipe(fds))
		return 0;
	pid = fork();
	if (!pid) {
		alarm(1800);
		if (nobody)
			ku_become_nobody();
		sent = fuzz_run(FUZZ_MSGS, seed);
		if (write(fds[1], &sent, sizeof(sent)) != sizeof(sent) ||
		    write(fds[1], fuzz_answers, sizeof(fuzz_answers)) !=
		    sizeof(fuzz_answers) ||
		    write(fds[1], fuzz_wf, sizeof(fuzz_wf)) != sizeof(fuzz_wf) ||
		    write(fds[1], fuzz_wf_reached, sizeof(fuzz_wf_reached)) !=
		    sizeof(fuzz_wf_reached) ||
		    write(fds[1], fuzz_reached, sizeof(fuzz_reached)) !=
		    sizeof(fuzz_reached))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &sent, sizeof(sent)) != sizeof(sent) ||
	    read(fds[0], fuzz_answers, sizeof(fuzz_answers)) !=
	    sizeof(fuzz_answers) ||
	    read(fds[0], fuzz_wf, sizeof(fuzz_wf)) != sizeof(fuzz_wf) ||
	    read(fds[0], fuzz_wf_reached, sizeof(fuzz_wf_reached)) !=
	    sizeof(fuzz_wf_reached) ||
	    read(fds[0], fuzz_reached, sizeof(fuzz_reached)) !=
	    sizeof(fuzz_reached))
		sent = 0;
	close(fds[0]);
	waitpid(pid, status, 0);
	ku_diag("%lu messages sent as %s: %lu answers, %lu of them errors, %lu from the handlers, %lu ACKs, %d error codes",
		sent, nobody ? "nobody (uid 65534)" : "root", fuzz_answers[0],
		fuzz_answers[1], fuzz_answers[2], fuzz_answers[3],
		__builtin_popcountl(fuzz_answers[4]));
	{
		/* forget the fuzzer's session (root may; its memory goes) */
		struct meter_nl *nl = ku_open();
		struct meter_nl_sel sel = { .pid = pid };

		meter_nl_delete(nl, &sel, NULL, 0);
		meter_nl_close(nl);
	}
	return sent;
}

/*
 * Every command's handler ran: every well-formed message of it (a known
 * share, one in four of all messages, spread over the commands) got its
 * answer from the handler, past the policy.  The diagnostics give, per
 * command, the well-formed messages and all the messages that reached it.
 */
static int reached_handlers(const char *who)
{
	static const char *const names[NCMDS] = {
		"", "REGISTER", "UNREGISTER", "ADD_FUNCS", "ADD_CALLS",
		"SET_PERIOD", "SESSION_GET", "PROFILE_GET", "SESSION_RESET",
		"SESSION_DEL",
	};
	int c, ok = 1;

	for (c = 1; c < NCMDS; c++) {
		ku_diag("%s: %-13s %5lu of %5lu well-formed messages reached the handler, %5lu messages in all",
			who, names[c], fuzz_wf_reached[c], fuzz_wf[c],
			fuzz_reached[c]);
		ok &= fuzz_wf[c] >= 1000 && fuzz_wf_reached[c] == fuzz_wf[c];
	}
	return ok;
}

/* A normal round trip in a fresh process: register, sample, read. */
static int round_trip(void)
{
	int st;
	pid_t pid = fork();

	if (!pid) {
		struct meter_nl *nl = ku_open();
		struct meter_page *pg = ku_page();
		uint64_t cookie = ku_register(nl, pg, 0);
		struct meter_profile *p;

		ku_funcs(nl, 1);
		ku_enter(pg, 1);
		ku_burn(100000000);
		ku_leave(pg);
		p = ku_profile(nl, cookie, 0);
		_exit(p && ku_self(p, 1) >= 80 && p->nfuncs == 1 ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int live_sessions(void)
{
	struct meter_nl *nl = ku_open();
	struct meter_session_row *v = NULL;
	size_t n = 0, i;
	int live = 0;

	if (meter_nl_list(nl, &v, &n, NULL, 0))
		live = -1;
	for (i = 0; i < n; i++)
		live += !v[i].exited;
	meter_session_rows_free(v, n);
	meter_nl_close(nl);
	return live;
}

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_VARIANT(fuzz) {
	int nobody;
	uint64_t seed;
	const char *who;
};

FIXTURE_VARIANT_ADD(fuzz, as_root) {
	.nobody = 0, .seed = 0x1234, .who = "root",
};

FIXTURE_VARIANT_ADD(fuzz, as_nobody) {
	.nobody = 1, .seed = 0xabcdef, .who = "nobody",
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

/*
 * One test per identity, not one per claim: a run of the fuzzer takes
 * minutes under TCG, and its claims are about that run: every message
 * sent, every well-formed one (a quarter, over 1000 per command) answered
 * by its command's handler, and the module working and holding no live
 * session afterwards.
 */
TEST_F_TIMEOUT(fuzz, every_handler_is_reached_and_the_module_works_after, 3600)
{
	int st = 0;
	unsigned long sent = fuzz_child(variant->nobody, variant->seed, &st);

	EXPECT_LE(FUZZ_MSGS, sent);
	EXPECT_TRUE(WIFEXITED(st) && !WEXITSTATUS(st))
		TH_LOG("the fuzzer did not exit cleanly");
	EXPECT_TRUE(reached_handlers(variant->who))
		TH_LOG("a well-formed message did not reach its handler");
	EXPECT_TRUE(round_trip())
		TH_LOG("a register / sample / read round trip after the fuzzing");
	EXPECT_EQ(0, live_sessions()) TH_LOG("sessions left live");
}

TEST_HARNESS_MAIN
