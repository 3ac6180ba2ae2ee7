// SPDX-License-Identifier: MIT
/*
 * A function's source, where a runtime gives it (Python's file and first
 * line), and its own call cost: ADD_FUNCS takes METER_A_FUNC_FILE,
 * METER_A_FUNC_LINE and METER_A_FUNC_COST_PS beside the name, the profile
 * dump gives them back, naming the id again replaces them, a name and file past METER_FUNC_NAME_MAX together are
 * refused with nothing changed, and libmeter leaves out a file that would
 * not fit beside its name rather than lose the name.
 */
#include <netlink/attr.h>
#include <netlink/msg.h>

#include "kmod_util.h"

FIXTURE(source) {
	struct meter_nl *nl;
};

FIXTURE_SETUP(source)
{
	self->nl = ku_open();
	ku_register(self->nl, ku_page(), 0);
}

FIXTURE_TEARDOWN(source)
{
	meter_nl_close(self->nl);
}

static int name_cost(struct meter_nl *nl, uint32_t id, const char *name,
		     const char *file, uint32_t line, uint64_t cost_ps)
{
	struct meter_nl_func f = {
		.id = id, .name = name, .file = file, .line = line,
		.cost_ps = cost_ps,
	};
	char err[256] = "";

	return meter_nl_add_funcs(nl, &f, 1, err, sizeof(err));
}

static int name_one(struct meter_nl *nl, uint32_t id, const char *name,
		    const char *file, uint32_t line)
{
	return name_cost(nl, id, name, file, line, 0);
}

/* ADD_FUNCS of one function, built by hand: libmeter would cut it. */
static int raw_name(struct meter_nl *nl, uint32_t id, const char *name,
		    const char *file, char *err, size_t errlen)
{
	struct nl_msg *msg = meter_nl_msg(nl, METER_CMD_ADD_FUNCS, 0, 8192);
	struct nlattr *funcs, *one;

	if (!msg)
		return -ENOMEM;
	funcs = nla_nest_start(msg, METER_A_FUNCS);
	one = nla_nest_start(msg, METER_A_FUNC);
	if (!funcs || !one || nla_put_u32(msg, METER_A_FUNC_ID, id) ||
	    nla_put_string(msg, METER_A_FUNC_NAME, name) ||
	    nla_put_string(msg, METER_A_FUNC_FILE, file)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nla_nest_end(msg, one);
	nla_nest_end(msg, funcs);
	return meter_nl_transact(nl, msg, NULL, NULL, "add functions", err,
				 errlen);
}

static const struct meter_func *func_of(struct meter_profile **p,
					struct meter_nl *nl, uint32_t id)
{
	meter_profile_free(*p);
	*p = ku_profile(nl, 0, getpid());
	return meter_profile_find(*p, id);
}

TEST_F(source, file_and_line_come_back_in_the_dump)
{
	struct meter_profile *p = NULL;
	const struct meter_func *f;

	ASSERT_EQ(0, name_one(self->nl, 1, "app.main", "/srv/app.py", 12));
	ASSERT_EQ(0, name_one(self->nl, 2, "app.helper", NULL, 40));
	ASSERT_EQ(0, name_one(self->nl, 3, "plain_c", NULL, 0));
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	EXPECT_STREQ("app.main", f->name);
	ASSERT_NE(NULL, f->file);
	EXPECT_STREQ("/srv/app.py", f->file);
	EXPECT_EQ(12, f->line);
	f = meter_profile_find(p, 2);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(NULL, f->file);
	EXPECT_EQ(40, f->line);
	f = meter_profile_find(p, 3);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(NULL, f->file);
	EXPECT_EQ(0, f->line);
	meter_profile_free(p);
}

TEST_F(source, a_functions_own_call_cost_comes_back_and_is_replaced)
{
	struct meter_profile *p = NULL;
	const struct meter_func *f;

	ASSERT_EQ(0, name_cost(self->nl, 1, "mod.f", "/a.py", 3, 9658));
	ASSERT_EQ(0, name_one(self->nl, 2, "c_func", NULL, 0));
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(9658, f->cost_ps);
	f = meter_profile_find(p, 2);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, f->cost_ps);
	ASSERT_EQ(0, name_cost(self->nl, 1, "mod.f", "/a.py", 3, 12000));
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(12000, f->cost_ps);
	meter_profile_free(p);
}

TEST_F(source, naming_again_replaces_file_and_line)
{
	struct meter_profile *p = NULL;
	const struct meter_func *f;

	ASSERT_EQ(0, name_one(self->nl, 1, "mod.f", "/a.py", 3));
	ASSERT_EQ(0, name_one(self->nl, 1, "mod.f", "/b.py", 7));
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, f->file);
	EXPECT_STREQ("/b.py", f->file);
	EXPECT_EQ(7, f->line);
	ASSERT_EQ(0, name_one(self->nl, 1, "mod.f", NULL, 0));
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(NULL, f->file);
	EXPECT_EQ(0, f->line);
	meter_profile_free(p);
}

TEST_F(source, name_and_file_past_the_limit_are_refused_and_change_nothing)
{
	static char name[1500], file[METER_FUNC_NAME_MAX];
	struct meter_profile *p = NULL;
	const struct meter_func *f;
	char err[256] = "";

	ASSERT_EQ(0, name_one(self->nl, 1, "kept", "/kept.py", 5));
	memset(name, 'n', sizeof(name) - 1);
	memset(file, '/', METER_FUNC_NAME_MAX - sizeof(name));
	/* 1500 bytes and 549 with the NULs: one past */
	EXPECT_EQ(-EINVAL, raw_name(self->nl, 1, name, file, err,
				    sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "METER_FUNC_NAME_MAX")) TH_LOG("%s", err);
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	EXPECT_STREQ("kept", f->name);
	EXPECT_STREQ("/kept.py", f->file);
	/* one byte shorter fits */
	file[strlen(file) - 1] = '\0';
	EXPECT_EQ(0, raw_name(self->nl, 1, name, file, err, sizeof(err)))
		TH_LOG("%s", err);
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(strlen(file), f->file ? strlen(f->file) : 0);
	meter_profile_free(p);
}

TEST_F(source, libmeter_leaves_out_a_file_that_does_not_fit_beside_the_name)
{
	static char name[1500], file[1000];
	struct meter_profile *p = NULL;
	const struct meter_func *f;

	memset(name, 'n', sizeof(name) - 1);
	memset(file, '/', sizeof(file) - 1);
	ASSERT_EQ(0, name_one(self->nl, 1, name, file, 9));
	f = func_of(&p, self->nl, 1);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(sizeof(name) - 1, strlen(f->name));
	EXPECT_EQ(NULL, f->file);
	EXPECT_EQ(9, f->line);
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
