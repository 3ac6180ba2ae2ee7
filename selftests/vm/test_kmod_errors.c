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

FIXTURE(errors) {
	struct meter_nl *nl;
	char err[256];
};

FIXTURE_SETUP(errors)
{
	self->nl = ku_open();
	self->err[0] = 0;
}

FIXTURE_TEARDOWN(errors)
{
	meter_nl_close(self->nl);
}

/* REGISTER of the page at addr: its error, with the message in err */
static int reg(FIXTURE_DATA(errors) *self, void *addr, uint64_t period)
{
	struct meter_nl_reg r = { .page_addr = (uintptr_t)addr,
				  .period_ns = period };
	int ret = meter_nl_register(self->nl, &r, NULL, NULL, self->err,
				    sizeof(self->err));

	if (!ret)
		meter_nl_unregister(self->nl, NULL, 0);
	return ret;
}

/* a page with a valid header, then given the protection prot */
static struct meter_page *map(int prot, int flags, int fd)
{
	struct meter_page *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     flags, fd, 0);

	if (pg == MAP_FAILED)
		return NULL;
	pg->magic = METER_PAGE_MAGIC;
	pg->version = METER_PAGE_VERSION;
	mprotect(pg, 4096, prot);
	return pg;
}

#define EXPECT_REJECTED(want, ret) do {					\
	EXPECT_EQ(want, ret);						\
	EXPECT_NE(0, self->err[0]) TH_LOG("no extended-ack message");	\
	TH_LOG("message: %s", self->err);				\
} while (0)

TEST_F(errors, unaligned_page_rejected)
{
	EXPECT_REJECTED(-EINVAL, reg(self, (char *)ku_page() + 8, 0));
}

TEST_F(errors, unmapped_page_rejected)
{
	struct meter_page *gone = ku_page();

	munmap(gone, 4096);
	EXPECT_REJECTED(-EFAULT, reg(self, gone, 0));
}

TEST_F(errors, read_only_page_rejected)
{
	struct meter_page *pg = map(PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);

	ASSERT_NE(NULL, pg);
	EXPECT_REJECTED(-EACCES, reg(self, pg, 0));
}

TEST_F(errors, shared_anonymous_page_rejected)
{
	struct meter_page *pg = map(PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1);

	ASSERT_NE(NULL, pg);
	EXPECT_REJECTED(-EINVAL, reg(self, pg, 0));
}

TEST_F(errors, file_backed_page_rejected)
{
	char path[] = "/tmp/kmod_errors_XXXXXX";
	struct meter_page *pg;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 4096));
	unlink(path);
	pg = map(PROT_READ | PROT_WRITE, MAP_PRIVATE, fd);
	ASSERT_NE(NULL, pg);
	EXPECT_REJECTED(-EINVAL, reg(self, pg, 0));
}

TEST_F(errors, bad_magic_rejected)
{
	struct meter_page *pg = ku_page();

	pg->magic = 0;
	EXPECT_REJECTED(-EINVAL, reg(self, pg, 0));
}

TEST_F(errors, period_below_10_us_rejected)
{
	EXPECT_REJECTED(-ERANGE, reg(self, ku_page(), 5000));
}

TEST_F(errors, second_registration_of_a_thread_rejected)
{
	struct meter_page *pg = ku_page();

	ku_register(self->nl, pg, 0);
	EXPECT_REJECTED(-EEXIST, reg(self, pg, 0));
}

/* ADD_CALLS with one bad record: refused, and the session has no
 * function afterwards */
static void add_bad_calls(struct __test_metadata *_metadata,
			  FIXTURE_DATA(errors) *self, uint32_t id,
			  uint32_t reserved)
{
	struct meter_call_counts cc = { .id = id, .calls = 1,
					.reserved = reserved };
	uint64_t cookie = ku_register(self->nl, ku_page(), 0);
	struct meter_profile *p;

	EXPECT_REJECTED(-EINVAL, meter_nl_add_calls(self->nl, 0, &cc, 1, 0,
						    self->err,
						    sizeof(self->err)));
	p = ku_profile(self->nl, cookie, 0);
	EXPECT_EQ(0, p->nfuncs) TH_LOG("the rejected ADD_CALLS changed the session");
	meter_profile_free(p);
}

TEST_F(errors, add_calls_id_0_rejected_and_changes_nothing)
{
	add_bad_calls(_metadata, self, 0, 0);
}

TEST_F(errors, add_calls_id_above_the_limit_rejected_and_changes_nothing)
{
	add_bad_calls(_metadata, self, METER_FUNCS_MAX + 1, 0);
}

TEST_F(errors, add_calls_reserved_field_rejected_and_changes_nothing)
{
	add_bad_calls(_metadata, self, 1, 1);
}

TEST_F(errors, unknown_cookie_get_is_enoent)
{
	struct meter_nl_sel sel = { .cookie = 0x1234567890abcdefull };
	struct meter_profile *p = NULL;
	int ret = meter_nl_get_profile(self->nl, &sel, &p, self->err,
				       sizeof(self->err));

	EXPECT_REJECTED(-ENOENT, ret);
	EXPECT_NE(NULL, strstr(self->err, "no such session"));
	meter_profile_free(p);
}

TEST_F(errors, unknown_cookie_reset_is_enoent)
{
	struct meter_nl_sel sel = { .cookie = 0x1234567890abcdefull };

	EXPECT_REJECTED(-ENOENT, meter_nl_reset(self->nl, &sel, self->err,
						sizeof(self->err)));
}

TEST_F(errors, deleting_a_live_session_is_ebusy)
{
	struct meter_nl_sel sel = { .cookie = ku_register(self->nl, ku_page(), 0) };

	EXPECT_REJECTED(-EBUSY, meter_nl_delete(self->nl, &sel, self->err,
						sizeof(self->err)));
}

TEST_F(errors, reset_of_the_own_session_works)
{
	struct meter_nl_sel sel = { .cookie = ku_register(self->nl, ku_page(), 0) };

	EXPECT_EQ(0, meter_nl_reset(self->nl, &sel, self->err, sizeof(self->err)))
		TH_LOG("%s", self->err);
}

TEST_HARNESS_MAIN
