// SPDX-License-Identifier: MIT
/*
 * Bad input gets a clear error (errno and an extended-ack message) and
 * changes nothing: unaligned, unmapped, read-only, shared, file-backed
 * pages, a bad magic, an out-of-range period, double registration, bad
 * ids and reserved fields in ADD_CALLS, unknown cookies, deleting a live
 * session.
 */
#include <fcntl.h>

#include "kmod_util.h"

static struct meter_nl *nl;

static void expect_reg(void *addr, uint64_t period, int want, const char *what)
{
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)addr,
				    .period_ns = period };
	char err[256] = "";
	int ret = meter_nl_register(nl, &reg, NULL, NULL, err, sizeof(err));

	ku_ok(ret == want && err[0], "%s: %s", what, err);
	if (!ret)
		meter_nl_unregister(nl, NULL, 0);
}

static struct meter_page *map(int prot, int flags, int fd)
{
	struct meter_page *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     flags, fd, 0);

	if (pg == MAP_FAILED)
		exit(1);
	pg->magic = METER_PAGE_MAGIC;
	pg->version = METER_PAGE_VERSION;
	mprotect(pg, 4096, prot);
	return pg;
}

int main(void)
{
	struct meter_call_counts cc = { .id = 1, .calls = 1 };
	struct meter_nl_sel sel = { .cookie = 0x1234567890abcdefull };
	struct meter_profile *p = NULL;
	struct meter_page *pg;
	char err[256] = "", path[] = "/tmp/kmod_errors_XXXXXX";
	uint64_t cookie;
	int fd, ret;

	ku_plan(16);
	nl = ku_open();
	pg = ku_page();

	expect_reg((char *)pg + 8, 0, -EINVAL, "unaligned page rejected");
	{
		struct meter_page *gone = ku_page();

		munmap(gone, 4096);
		expect_reg(gone, 0, -EFAULT, "unmapped page rejected");
	}
	expect_reg(map(PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1), 0,
		   -EACCES, "read-only page rejected");
	expect_reg(map(PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1),
		   0, -EINVAL, "shared anonymous page rejected");
	fd = mkstemp(path);
	if (fd < 0 || ftruncate(fd, 4096))
		return 1;
	unlink(path);
	expect_reg(map(PROT_READ | PROT_WRITE, MAP_PRIVATE, fd), 0, -EINVAL,
		   "file-backed page rejected");
	pg->magic = 0;
	expect_reg(pg, 0, -EINVAL, "bad magic rejected");
	pg->magic = METER_PAGE_MAGIC;
	expect_reg(pg, 5000, -ERANGE, "period below 10 us rejected");

	cookie = ku_register(nl, pg, 0);
	expect_reg(pg, 0, -EEXIST, "second registration of a thread rejected");

	cc.id = 0;
	ret = meter_nl_add_calls(nl, 0, &cc, 1, err, sizeof(err));
	ku_ok(ret == -EINVAL && err[0], "ADD_CALLS id 0 rejected: %s", err);
	cc.id = METER_FUNCS_MAX + 1;
	ret = meter_nl_add_calls(nl, 0, &cc, 1, err, sizeof(err));
	ku_ok(ret == -EINVAL && err[0], "ADD_CALLS id above the limit rejected: %s",
	      err);
	cc.id = 1;
	cc.reserved = 1;
	ret = meter_nl_add_calls(nl, 0, &cc, 1, err, sizeof(err));
	ku_ok(ret == -EINVAL && err[0], "ADD_CALLS reserved field rejected: %s",
	      err);
	p = ku_profile(nl, cookie, 0);
	ku_ok(p->nfuncs == 0, "rejected ADD_CALLS changed nothing");
	meter_profile_free(p);
	p = NULL;

	ret = meter_nl_get_profile(nl, &sel, &p, err, sizeof(err));
	ku_ok(ret == -ENOENT && strstr(err, "no such session"), "unknown cookie: ENOENT: %s", err);
	ret = meter_nl_reset(nl, &sel, err, sizeof(err));
	ku_ok(ret == -ENOENT && err[0], "reset of unknown cookie: ENOENT: %s",
	      err);
	sel.cookie = cookie;
	ret = meter_nl_delete(nl, &sel, err, sizeof(err));
	ku_ok(ret == -EBUSY && err[0], "deleting a live session: EBUSY: %s", err);
	ret = meter_nl_reset(nl, &sel, err, sizeof(err));
	ku_ok(ret == 0, "reset of the own session works");
	meter_nl_close(nl);
	return ku_exit();
}
