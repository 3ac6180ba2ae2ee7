// SPDX-License-Identifier: MIT
/*
 * The patch plan (patch/patch_plan.h) on a program built as users build:
 * ordinary functions are patchable (one of them calls among its first
 * bytes); a function under 5 bytes, one whose first bytes a loop jumps
 * back into and one that returns among them are refused, each with its
 * reason; a call, a conditional jump and a RIP-relative load among them
 * are patchable; an endbr64 stays and the jump goes after it.  Stripped, the same program's
 * functions come from .eh_frame, named after the file and address.  And
 * Debian's own stripped /usr/bin/bzip2 is read and planned.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "patch_plan.h"

static char corners[PATH_MAX];

static const struct patch_func *named(const struct patch_obj *obj,
				      const char *name)
{
	size_t i;

	for (i = 0; i < obj->nfuncs; i++)
		if (!strcmp(obj->funcs[i].name, name))
			return &obj->funcs[i];
	return NULL;
}

FIXTURE(plan) {
	struct patch_obj obj;
	struct patch_counts counts;
};

FIXTURE_SETUP(plan)
{
	char err[256] = "", *slash;
	ssize_t n = readlink("/proc/self/exe", corners, sizeof(corners) - 32);

	ASSERT_LT(0, n);
	corners[n] = '\0';
	slash = strrchr(corners, '/');
	strcpy(slash + 1, "patch_corners");
	ASSERT_EQ(0, patch_obj_open(corners, &self->obj, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, patch_plan(&self->obj, &self->counts, err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(plan)
{
	patch_obj_close(&self->obj);
}

TEST_F(plan, ordinary_functions_are_patchable)
{
	const char *fns[] = { "main", "work", "mix" };
	size_t i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		const struct patch_func *f = named(&self->obj, fns[i]);

		ASSERT_NE(NULL, f) TH_LOG("%s not found", fns[i]);
		EXPECT_EQ(NULL, f->refused) TH_LOG("%s: %s", fns[i], f->refused);
		EXPECT_LE(5, f->patch_len);
		EXPECT_EQ(PATCH_SRC_SYMTAB, f->src);
	}
}

TEST_F(plan, each_refusal_has_its_reason)
{
	const struct patch_func *tiny = named(&self->obj, "tiny_ret");
	const struct patch_func *into = named(&self->obj, "jumped_into");
	const struct patch_func *ret = named(&self->obj, "early_ret");

	ASSERT_NE(NULL, tiny);
	ASSERT_NE(NULL, into);
	ASSERT_NE(NULL, ret);
	EXPECT_STREQ(PATCH_REFUSED_SMALL, tiny->refused ? tiny->refused : "");
	EXPECT_STREQ(PATCH_REFUSED_INTO, into->refused ? into->refused : "");
	EXPECT_STREQ(PATCH_REFUSED_RET, ret->refused ? ret->refused : "");
}

TEST_F(plan, calls_jumps_and_rip_relative_are_patchable_endbr64_stays)
{
	const struct patch_func *call = named(&self->obj, "calls_first");
	const struct patch_func *rip = named(&self->obj, "rip_relative");
	const struct patch_func *endbr = named(&self->obj, "with_endbr");
	const struct patch_func *jcc = named(&self->obj, "early_branch");

	ASSERT_NE(NULL, rip);
	ASSERT_NE(NULL, endbr);
	ASSERT_NE(NULL, jcc);
	ASSERT_NE(NULL, call);
	EXPECT_EQ(NULL, call->refused);
	EXPECT_EQ(5, call->patch_len) TH_LOG("one call");
	EXPECT_EQ(NULL, jcc->refused);
	EXPECT_EQ(9, jcc->patch_len) TH_LOG("test (2), je (2), mov (5)");
	EXPECT_EQ(NULL, rip->refused);
	EXPECT_EQ(6, rip->patch_len) TH_LOG("one 6-byte mov");
	EXPECT_EQ(NULL, endbr->refused);
	EXPECT_EQ(4, endbr->patch_off);
	EXPECT_EQ(6, endbr->patch_len) TH_LOG("lea (3) and imul (3)");
}

/* stripped: the C functions again, from .eh_frame, at the same places */
TEST_F(plan, a_stripped_copy_is_read_from_eh_frame)
{
	char stripped[PATH_MAX + 16], cmd[2 * PATH_MAX + 64], err[256] = "";
	const char *fns[] = { "main", "work", "mix" };
	struct patch_obj s;
	size_t i, k;

	snprintf(stripped, sizeof(stripped), "%s.stripped", corners);
	snprintf(cmd, sizeof(cmd), "strip -o '%s' '%s'", stripped, corners);
	ASSERT_EQ(0, system(cmd));
	ASSERT_EQ(0, patch_obj_open(stripped, &s, err, sizeof(err)))
		TH_LOG("%s", err);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		const struct patch_func *f = named(&self->obj, fns[i]);
		char want[64];
		bool found = false;

		ASSERT_NE(NULL, f);
		snprintf(want, sizeof(want), "patch_corners.stripped@0x%llx",
			 (unsigned long long)f->addr);
		for (k = 0; k < s.nfuncs; k++)
			if (s.funcs[k].addr == f->addr) {
				found = true;
				EXPECT_STREQ(want, s.funcs[k].name);
				EXPECT_EQ(PATCH_SRC_EH_FRAME, s.funcs[k].src);
				EXPECT_EQ(f->size, s.funcs[k].size);
			}
		EXPECT_TRUE(found) TH_LOG("%s at 0x%llx", fns[i],
					  (unsigned long long)f->addr);
	}
	patch_obj_close(&s);
	unlink(stripped);
}

TEST(debians_stripped_bzip2_is_planned)
{
	struct patch_counts c;
	struct patch_obj obj;
	char err[256] = "";
	size_t i;

	if (access("/usr/bin/bzip2", R_OK))
		SKIP(return, "no /usr/bin/bzip2");
	ASSERT_EQ(0, patch_obj_open("/usr/bin/bzip2", &obj, err, sizeof(err)))
		TH_LOG("%s", err);
	ASSERT_EQ(0, patch_plan(&obj, &c, err, sizeof(err))) TH_LOG("%s", err);
	for (i = 0; i < obj.nfuncs; i++)
		if (obj.funcs[i].refused)
			TH_LOG("refused %s: %s", obj.funcs[i].name,
			       obj.funcs[i].refused);
	TH_LOG("/usr/bin/bzip2: %zu functions (%s), %zu patchable, %zu refused",
	       obj.nfuncs, obj.funcs[0].src == PATCH_SRC_EH_FRAME ?
	       ".eh_frame" : "symbols", c.patchable, c.refused);
	EXPECT_LT(10, c.patchable);
	EXPECT_EQ(obj.nfuncs, c.patchable + c.refused);
	patch_obj_close(&obj);
}

TEST_HARNESS_MAIN
