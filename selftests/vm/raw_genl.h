/* SPDX-License-Identifier: MIT */
/*
 * Raw generic netlink for the tests that talk to meter.ko below
 * common/nlclient.c (test_harden_fuzz.c, test_harden_unload.c,
 * test_harden_snapshot.c).
 */
#ifndef METER_RAW_GENL_H
#define METER_RAW_GENL_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>

#include <linux/meter.h>

/*
 * Resolves meter's family id on the raw NETLINK_GENERIC socket fd with a
 * hand-made CTRL_CMD_GETFAMILY; -1 on any failure.
 */
static inline int raw_genl_family(int fd)
{
	uint8_t buf[4096];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct nlattr *a = (struct nlattr *)((uint8_t *)g + GENL_HDRLEN);
	ssize_t n;

	memset(buf, 0, sizeof(buf));
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(METER_GENL_NAME);
	memcpy((uint8_t *)a + NLA_HDRLEN, METER_GENL_NAME,
	       sizeof(METER_GENL_NAME));
	nlh->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_ALIGN(a->nla_len);
	nlh->nlmsg_type = GENL_ID_CTRL;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	g->cmd = CTRL_CMD_GETFAMILY;
	g->version = 1;
	if (send(fd, buf, nlh->nlmsg_len, 0) < 0)
		return -1;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0 || !NLMSG_OK(nlh, (size_t)n) ||
	    nlh->nlmsg_type != GENL_ID_CTRL)
		return -1;
	n = nlh->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
	for (a = (struct nlattr *)((uint8_t *)g + GENL_HDRLEN);
	     n >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= n;
	     n -= NLA_ALIGN(a->nla_len),
	     a = (struct nlattr *)((uint8_t *)a + NLA_ALIGN(a->nla_len)))
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)((uint8_t *)a + NLA_HDRLEN);
	return -1;
}

/*
 * Starts PROFILE_GET of cookie on a fresh raw socket with a small receive
 * buffer, so that the dump stays open (its snapshot held) until read or
 * closed; the socket, or -1.
 */
static inline int raw_genl_dump_start(uint64_t cookie)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	uint8_t buf[64];
	struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
	struct genlmsghdr *g = NLMSG_DATA(nlh);
	struct nlattr *a = (struct nlattr *)((uint8_t *)g + GENL_HDRLEN);
	int fam, small = 4096;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	fam = raw_genl_family(fd);
	if (fam < 0) {
		close(fd);
		return -1;
	}
	memset(buf, 0, sizeof(buf));
	a->nla_type = METER_A_COOKIE;
	a->nla_len = NLA_HDRLEN + 8;
	memcpy((uint8_t *)a + NLA_HDRLEN, &cookie, 8);
	nlh->nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN + 8;
	nlh->nlmsg_type = fam;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	g->cmd = METER_CMD_PROFILE_GET;
	g->version = METER_GENL_VERSION;
	if (send(fd, buf, nlh->nlmsg_len, 0) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif /* METER_RAW_GENL_H */
