// SPDX-License-Identifier: MIT
/*
 * Unit tests of the profile model (analysis/profile.c) and its JSON reader
 * (analysis/profile_json.c): look-up, totals from stacks, merge by name,
 * unnamed ids named, and the reader's behaviour on every truncation and
 * on random corruption of a valid file (an error message or a valid
 * profile, never a crash).
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "model.h"

static struct meter_profile *appel(uint32_t id_main, uint32_t id_f,
				   uint32_t id_g, uint32_t id_p)
{
	struct meter_profile *p = meter_profile_new();
	const uint32_t s1[] = { id_main, id_f, id_p };
	const uint32_t s2[] = { id_main, id_g, id_p };
	const uint32_t s3[] = { id_main };

	strcpy(p->backend, "kernel");
	p->period_ns = 1000000;
	p->samples = 1010;
	meter_profile_add_func(p, id_main, "main")->calls = 1;
	meter_profile_add_func(p, id_f, "f")->calls = 100;
	meter_profile_add_func(p, id_g, "g")->calls = 100;
	meter_profile_add_func(p, id_p, "is_prime")->calls = 200;
	meter_profile_find(p, id_main)->self_samples = 10;
	meter_profile_find(p, id_p)->self_samples = 1000;
	meter_profile_add_stack(p, s1, 3, 900);
	meter_profile_add_stack(p, s2, 3, 100);
	meter_profile_add_stack(p, s3, 1, 10);
	meter_profile_add_thread(p, 42, 1010);
	/* one address past 2^53: exact only as a string */
	meter_profile_add_addr(p, 0x555555554000 + id_p, id_p, 990);
	meter_profile_add_addr(p, 0xffffffffff600400ull, id_main, 10);
	meter_profile_add_map(p, 0x555555554000, 0x555555600000, 0x1000,
			      "/usr/bin/appel \"quoted\"\n");
	meter_profile_compute_totals(p);
	return p;
}

static const struct meter_func *by_name(const struct meter_profile *p,
					const char *name)
{
	size_t i;

	for (i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, name))
			return &p->funcs[i];
	return NULL;
}

static char *to_json(const struct meter_profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	meter_profile_write_json(p, f);
	fclose(f);
	return buf;
}

static struct meter_profile *from_json(const char *s, size_t len, char *err,
				       size_t errlen)
{
	FILE *f = fmemopen((void *)s, len ? len : 1, "r");
	struct meter_profile *p;

	if (!len) {	/* fmemopen cannot open an empty buffer */
		fclose(f);
		f = fopen("/dev/null", "r");
	}
	p = meter_profile_read_json(f, err, errlen);
	fclose(f);
	return p;
}

/* two runs of Appel's program, ids dense and sparse, merged */
FIXTURE(model) {
	struct meter_profile *a, *b, *m;
};

FIXTURE_SETUP(model)
{
	self->a = appel(1, 2, 3, 4);
	self->b = appel(40, 7, 9, 2);	/* unsorted ids */
	self->m = meter_profile_new();
	meter_profile_merge(self->m, self->a);
	meter_profile_merge(self->m, self->b);
}

FIXTURE_TEARDOWN(model)
{
	meter_profile_free(self->a);
	meter_profile_free(self->b);
	meter_profile_free(self->m);
}

TEST_F(model, find_dense_ids)
{
	ASSERT_NE(NULL, meter_profile_find(self->a, 3));
	EXPECT_STREQ("g", meter_profile_find(self->a, 3)->name);
}

TEST_F(model, find_unsorted_sparse_ids)
{
	ASSERT_NE(NULL, meter_profile_find(self->b, 9));
	EXPECT_STREQ("g", meter_profile_find(self->b, 9)->name);
	EXPECT_EQ(NULL, meter_profile_find(self->b, 3));
}

/* an ascending table's search stops at the binary search: an id added
 * below the last must still be found */
TEST(find_an_id_added_out_of_order_after_ascending_ones)
{
	struct meter_profile *p = meter_profile_new();

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, meter_profile_add_func(p, 1, "a"));
	ASSERT_NE(NULL, meter_profile_add_func(p, 4, "b"));
	EXPECT_EQ(NULL, meter_profile_find(p, 2));
	ASSERT_NE(NULL, meter_profile_add_func(p, 9, "c"));
	ASSERT_NE(NULL, meter_profile_add_func(p, 2, "d"));
	ASSERT_NE(NULL, meter_profile_find(p, 2));
	EXPECT_STREQ("d", meter_profile_find(p, 2)->name);
	EXPECT_STREQ("c", meter_profile_find(p, 9)->name);
	EXPECT_EQ(NULL, meter_profile_find(p, 3));
	meter_profile_free(p);
}

TEST_F(model, totals_from_the_stacks)
{
	EXPECT_EQ(1010, meter_profile_find(self->a, 1)->total_samples);
	EXPECT_EQ(900, meter_profile_find(self->a, 2)->total_samples);
	EXPECT_EQ(1000, meter_profile_find(self->a, 4)->total_samples);
}

/* main (id 5) and fib (id 9), one stack main;fib;fib;fib of 7 samples */
static struct meter_profile *fib_profile(void)
{
	struct meter_profile *r = meter_profile_new();
	const uint32_t rec[] = { 5, 9, 9, 9 };

	meter_profile_add_func(r, 5, "main");
	meter_profile_add_func(r, 9, "fib");
	meter_profile_add_stack(r, rec, 4, 7);
	meter_profile_compute_totals(r);
	return r;
}

TEST(recursive_function_total_counts_once_per_sample)
{
	struct meter_profile *r = fib_profile();

	EXPECT_EQ(7, meter_profile_find(r, 9)->total_samples);
	meter_profile_free(r);
}

TEST_F(model, merge_adds_counts_matched_by_name_across_ids)
{
	const struct meter_func *f = by_name(self->m, "is_prime");

	ASSERT_NE(NULL, f);
	EXPECT_EQ(400, f->calls);
	EXPECT_EQ(2000, f->self_samples);
	EXPECT_EQ(2000, f->total_samples);
}

TEST_F(model, merge_adds_identical_stacks_after_renumbering)
{
	EXPECT_EQ(4, self->m->nfuncs);
	ASSERT_EQ(3, self->m->nstacks);
	EXPECT_EQ(1800, self->m->stacks[0].samples);
}

TEST_F(model, merge_adds_runs_counters_and_threads)
{
	EXPECT_EQ(2, self->m->runs);
	EXPECT_EQ(2020, self->m->samples);
	EXPECT_EQ(2, self->m->nthreads);
}

/* an address means something in its own process only */
TEST_F(model, merge_keeps_each_process_addresses_apart_renumbered)
{
	const struct meter_func *prime = by_name(self->m, "is_prime");
	const struct meter_func *main_f = by_name(self->m, "main");

	ASSERT_EQ(4, self->m->naddrs);
	ASSERT_NE(NULL, prime);
	ASSERT_NE(NULL, main_f);
	EXPECT_EQ(0x555555554000 + 4, self->m->addrs[0].ip);
	EXPECT_EQ(0x555555554000 + 2, self->m->addrs[2].ip);
	EXPECT_EQ(prime->id, self->m->addrs[0].func);
	EXPECT_EQ(prime->id, self->m->addrs[2].func);
	EXPECT_EQ(main_f->id, self->m->addrs[3].func);
	EXPECT_EQ(990, self->m->addrs[2].samples);
	EXPECT_EQ(1, self->m->addrs[0].proc);
	EXPECT_EQ(1, self->m->addrs[1].proc);
	EXPECT_EQ(2, self->m->addrs[2].proc);
	EXPECT_EQ(2, self->m->addrs[3].proc);
	ASSERT_EQ(2, self->m->nmaps);
	EXPECT_EQ(1, self->m->maps[0].proc);
	EXPECT_EQ(2, self->m->maps[1].proc);
	EXPECT_EQ(0x1000, self->m->maps[1].pgoff);
	EXPECT_STREQ("/usr/bin/appel \"quoted\"\n", self->m->maps[1].path);
}

TEST_F(model, merge_adds_new_names_and_keeps_ids_unique)
{
	struct meter_profile *r = fib_profile();

	meter_profile_merge(self->m, r);
	meter_profile_free(r);
	EXPECT_EQ(5, self->m->nfuncs);
	ASSERT_NE(NULL, by_name(self->m, "fib"));
	EXPECT_EQ(2, by_name(self->m, "main")->calls);
	EXPECT_EQ(by_name(self->m, "fib"),
		  meter_profile_find(self->m, by_name(self->m, "fib")->id));
}

/* a stack naming an id the profile does not name */
TEST(merge_names_an_unnamed_id_and_the_json_reads_back)
{
	struct meter_profile *u = meter_profile_new(), *v, *w;
	const uint32_t fr[] = { 1, 77 };
	char err[300], *uj;
	size_t ul;

	meter_profile_add_func(u, 1, "main");
	meter_profile_add_stack(u, fr, 2, 5);
	u->samples = 5;
	v = meter_profile_new();
	meter_profile_merge(v, u);
	uj = to_json(v, &ul);
	w = from_json(uj, ul, err, sizeof(err));
	EXPECT_NE(NULL, by_name(v, "[id 77]"));
	EXPECT_NE(NULL, w) TH_LOG("%s", err);
	free(uj);
	meter_profile_free(u);
	meter_profile_free(v);
	meter_profile_free(w);
}

/*
 * The same, named in place (a kernel dump's id that its records lack):
 * "[id 77]", as merges name it, with its samples from the stacks, once
 * per stack however often.
 */
TEST(unnamed_id_named_in_place_once)
{
	struct meter_profile *u = meter_profile_new();
	const uint32_t f1[] = { 1, 77 }, f2[] = { 1, 77, 2, 77 };
	const struct meter_func *x;

	meter_profile_add_func(u, 1, "main");
	meter_profile_add_func(u, 2, "cb");
	meter_profile_add_stack(u, f1, 2, 5);
	meter_profile_add_stack(u, f2, 4, 3);
	EXPECT_EQ(1, meter_profile_name_unknown_ids(u));
	x = by_name(u, "[id 77]");
	ASSERT_NE(NULL, x);
	EXPECT_EQ(77, x->id);
	EXPECT_EQ(8, x->self_samples);
	EXPECT_EQ(8, x->total_samples);
	EXPECT_EQ(0, meter_profile_name_unknown_ids(u));
	meter_profile_free(u);
}

TEST_F(model, json_write_read_write_same_bytes)
{
	char err[300], *json, *json2 = NULL;
	size_t len, len2 = 0;
	struct meter_profile *r;

	json = to_json(self->m, &len);
	r = from_json(json, len, err, sizeof(err));
	ASSERT_NE(NULL, r) TH_LOG("%s", err);
	json2 = to_json(r, &len2);
	EXPECT_EQ(len, len2);
	EXPECT_EQ(0, memcmp(json, json2, len < len2 ? len : len2));
	meter_profile_free(r);
	free(json);
	free(json2);
}

/* every proper prefix of a valid file */
TEST_F(model, json_every_truncation_refused_with_one_line)
{
	char err[300], *json;
	size_t len, i, bad = 0, oneline = 0;
	struct meter_profile *r;

	json = to_json(self->m, &len);
	for (i = 0; i < len - 1; i++) {
		r = from_json(json, i, err, sizeof(err));
		if (r) {
			meter_profile_free(r);
			continue;
		}
		bad++;
		if (err[0] && !strchr(err, '\n'))
			oneline++;
	}
	EXPECT_EQ(len - 1, bad);
	EXPECT_EQ(bad, oneline);
	free(json);
}

/*
 * What the schema promises of a profile the reader accepted: function ids
 * unique and non-zero, every frame and every stack's process named.  A
 * round trip alone cannot see a dangling id: the writer writes it back.
 */
static bool profile_is_whole(const struct meter_profile *p)
{
	size_t i, j;

	for (i = 0; i < p->nfuncs; i++) {
		if (!p->funcs[i].id)
			return false;
		for (j = 0; j < i; j++)
			if (p->funcs[j].id == p->funcs[i].id)
				return false;
	}
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *st = &p->stacks[i];

		if (st->proc > p->nprocs)
			return false;
		for (j = 0; j < st->depth; j++)
			if (!meter_profile_find(p, st->frames[j]))
				return false;
	}
	return true;
}

/*
 * Random corruption: an error in one line, or a profile that is whole:
 * consistent (above), and what the writer writes back the reader takes
 * again unchanged (a half-checked profile would not survive the round
 * trip).
 */
TEST_F(model, json_corruption_refused_in_one_line_or_read_whole)
{
	size_t len, i, bad = 0, oneline = 0, parsed = 0, stable = 0;
	char err[300], *json = to_json(self->m, &len);
	struct meter_profile *r;

	srand(12345);
	for (i = 0; i < 3000; i++) {
		char *c = malloc(len);
		int k, flips = 1 + rand() % 4;

		memcpy(c, json, len);
		for (k = 0; k < flips; k++)
			c[rand() % len] = (char)(rand() % 256);
		r = from_json(c, len, err, sizeof(err));
		if (r) {
			size_t l1, l2;
			char *j1 = to_json(r, &l1);
			struct meter_profile *r2 =
				j1 ? from_json(j1, l1, err, sizeof(err)) : NULL;
			char *j2 = r2 ? to_json(r2, &l2) : NULL;

			parsed++;
			if (profile_is_whole(r) && j2 && l1 == l2 &&
			    !memcmp(j1, j2, l1))
				stable++;
			free(j1);
			free(j2);
			meter_profile_free(r2);
			meter_profile_free(r);
		} else {
			bad++;
			if (err[0] && !strchr(err, '\n'))
				oneline++;
		}
		free(c);
	}
	TH_LOG("%zu refused, %zu accepted", bad, parsed);
	EXPECT_LT(0, bad);
	EXPECT_EQ(bad, oneline);
	EXPECT_EQ(parsed, stable);
	free(json);
}

TEST(json_unknown_version_refused)
{
	char err[300];
	struct meter_profile *r;

	r = from_json("{\"format\":\"meter-profile\",\"version\":2}", 38, err,
		      sizeof(err));
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(err, "version 2")) TH_LOG("%s", err);
}

/* deep nesting is refused, not recursed into */
TEST(json_nesting_depth_bounded)
{
	char err[300], deep[4096];
	struct meter_profile *r;

	memset(deep, '[', sizeof(deep));
	memcpy(deep, "{\"a\":", 5);
	r = from_json(deep, sizeof(deep), err, sizeof(err));
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(err, "nested deeper")) TH_LOG("%s", err);
}

TEST(json_duplicate_function_ids_refused)
{
	const char *dup = "{\"format\":\"meter-profile\",\"version\":1,"
		"\"period_ns\":1,\"samples\":0,\"functions\":[{\"id\":1,"
		"\"name\":\"a\"},{\"id\":1,\"name\":\"b\"}],\"stacks\":[]}";
	char err[300];
	struct meter_profile *r;

	r = from_json(dup, strlen(dup), err, sizeof(err));
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(err, "appears twice")) TH_LOG("%s", err);
}

/* a function's source and own cost read back; wrong types refused, said */
TEST(json_function_source_and_cost_read_or_refused)
{
	static const char *const bad[][2] = {
		{ "\"file\":5", "\"file\" must be a string" },
		{ "\"line\":-3", "\"line\" must be a non-negative" },
		{ "\"line\":4294967296", "\"line\" is out of range" },
		{ "\"cost_ps\":\"x\"", "\"cost_ps\" must be a number" },
	};
	char doc[400], err[300];
	struct meter_profile *r;
	size_t i;

	snprintf(doc, sizeof(doc), "{\"format\":\"meter-profile\","
		 "\"version\":1,\"period_ns\":1,\"samples\":0,\"functions\":"
		 "[{\"id\":1,\"name\":\"m.f\",\"file\":\"/a.py\",\"line\":7,"
		 "\"cost_ps\":9658}],\"stacks\":[]}");
	r = from_json(doc, strlen(doc), err, sizeof(err));
	ASSERT_NE(NULL, r) TH_LOG("%s", err);
	ASSERT_NE(NULL, r->funcs[0].file);
	EXPECT_STREQ("/a.py", r->funcs[0].file);
	EXPECT_EQ(7, r->funcs[0].line);
	EXPECT_EQ(9658, r->funcs[0].cost_ps);
	meter_profile_free(r);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(doc, sizeof(doc), "{\"format\":\"meter-profile\","
			 "\"version\":1,\"period_ns\":1,\"samples\":0,"
			 "\"functions\":[{\"id\":1,\"name\":\"m.f\",%s}],"
			 "\"stacks\":[]}", bad[i][0]);
		r = from_json(doc, strlen(doc), err, sizeof(err));
		EXPECT_EQ(NULL, r) TH_LOG("%s read", bad[i][0]);
		EXPECT_NE(NULL, strstr(err, bad[i][1])) TH_LOG("%s: %s",
							 bad[i][0], err);
		meter_profile_free(r);
	}
}

TEST(json_frame_naming_no_function_refused)
{
	const char *dangling = "{\"format\":\"meter-profile\",\"version\":1,"
		"\"period_ns\":1,\"samples\":1,\"functions\":[{\"id\":1,"
		"\"name\":\"a\"}],\"stacks\":[{\"frames\":[1,7],"
		"\"samples\":1}]}";
	char err[300];
	struct meter_profile *r;

	r = from_json(dangling, strlen(dangling), err, sizeof(err));
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(err, "not in \"functions\"")) TH_LOG("%s", err);
	meter_profile_free(r);
}

/* an address is of a function listed, CPU time only, within the total */
TEST(json_addresses_checked_against_functions_clock_and_total)
{
	const char *head = "{\"format\":\"meter-profile\",\"version\":1,"
		"\"period_ns\":1,\"samples\":3,";
	const char *tail = "\"functions\":[{\"id\":1,\"name\":\"a\"}],"
		"\"stacks\":[],\"addresses\":[{\"ip\":\"4096\",";
	const struct {
		const char *clock, *rest, *said;
	} bad[] = {
		{ "", "\"func\":2,\"samples\":1}]}",
		  "addresses[0]: \"func\" 2 is not in \"functions\"" },
		{ "\"clock\":\"wall\",", "\"func\":1,\"samples\":1}]}",
		  "\"addresses\" in a wall-clock profile" },
		{ "", "\"func\":1,\"samples\":4}]}",
		  "the addresses hold 4 samples, more than the profile's 3" },
		{ "", "\"func\":1,\"samples\":1,\"proc\":1}]}",
		  "addresses[0]: \"proc\" 1 names no process" },
		{ "", "\"func\":1}]}", "addresses[0]: \"samples\"" },
		{ "", "\"func\":1,\"samples\":1}],\"maps\":[{\"start\":\"8\","
		  "\"end\":\"8\",\"path\":\"/a\"}]}",
		  "maps[0]: \"start\" must be below \"end\"" },
		{ "", "\"func\":1,\"samples\":1}],\"maps\":[{\"start\":\"8\","
		  "\"end\":\"9\",\"path\":\"\"}]}",
		  "maps[0]: \"path\" must be a non-empty string" },
	};
	char json[512], err[300];
	struct meter_profile *r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(json, sizeof(json), "%s%s%s%s", head, bad[i].clock,
			 tail, bad[i].rest);
		r = from_json(json, strlen(json), err, sizeof(err));
		EXPECT_EQ(NULL, r) TH_LOG("read: %s", json);
		EXPECT_NE(NULL, strstr(err, bad[i].said))
			TH_LOG("%s: said %s", bad[i].said, err);
		meter_profile_free(r);
	}
	snprintf(json, sizeof(json), "%s%s\"func\":1,\"samples\":3}]}", head,
		 tail);
	r = from_json(json, strlen(json), err, sizeof(err));
	ASSERT_NE(NULL, r) TH_LOG("%s", err);
	ASSERT_EQ(1, r->naddrs);
	EXPECT_EQ(4096, r->addrs[0].ip);
	EXPECT_EQ(3, r->addrs[0].samples);
	meter_profile_free(r);
}

/* parts that add up to more than the whole are refused, and said */
TEST(json_stacks_or_self_samples_past_the_total_refused)
{
	const char *stacks = "{\"format\":\"meter-profile\",\"version\":1,"
		"\"period_ns\":1,\"samples\":3,\"functions\":[{\"id\":1,"
		"\"name\":\"a\"}],\"stacks\":[{\"frames\":[1],"
		"\"samples\":2},{\"frames\":[],\"samples\":2}]}";
	const char *self = "{\"format\":\"meter-profile\",\"version\":1,"
		"\"period_ns\":1,\"samples\":3,\"functions\":[{\"id\":1,"
		"\"name\":\"a\",\"self_samples\":4}],\"stacks\":[]}";
	char err[300];
	struct meter_profile *r;

	r = from_json(stacks, strlen(stacks), err, sizeof(err));
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(err, "the stacks hold 4 samples, more than "
				    "the profile's 3")) TH_LOG("%s", err);
	meter_profile_free(r);
	r = from_json(self, strlen(self), err, sizeof(err));
	EXPECT_EQ(NULL, r);
	EXPECT_NE(NULL, strstr(err, "self samples add up to 4"))
		TH_LOG("%s", err);
	meter_profile_free(r);
}

/*
 * Numbers json-c bends: past 2^64 - 1 it saturates, so a counter of
 * 2^64 - 1 is refused as out of range too; NaN and fractions are not
 * integers.  Cookies are strings, exact past 2^53; numbers, as older
 * files wrote, still read.
 */
FIXTURE(number) {
	struct meter_profile *r;
	char err[300];
};

FIXTURE_VARIANT(number) {
	const char *field, *want;	/* want NULL: read, with cookie */
	uint64_t cookie;
};

FIXTURE_VARIANT_ADD(number, past_2_64) {
	"\"samples\":18446744073709551616", "out of range", 0 };
FIXTURE_VARIANT_ADD(number, saturation_2_64_minus_1) {
	"\"samples\":18446744073709551615", "out of range", 0 };
FIXTURE_VARIANT_ADD(number, nan) {
	"\"samples\":NaN", "non-negative integer", 0 };
FIXTURE_VARIANT_ADD(number, fraction) {
	"\"samples\":1.5", "non-negative integer", 0 };
FIXTURE_VARIANT_ADD(number, negative) {
	"\"samples\":-1", "non-negative integer", 0 };
FIXTURE_VARIANT_ADD(number, cookie_string_past_2_64) {
	"\"samples\":0,\"cookie\":\"18446744073709551616\"", "decimal integer", 0 };
FIXTURE_VARIANT_ADD(number, cookie_string_not_decimal) {
	"\"samples\":0,\"cookie\":\"12x\"", "decimal integer", 0 };
FIXTURE_VARIANT_ADD(number, nul_in_a_string) {
	"\"samples\":0,\"command\":\"a\\u0000b\"", "u0000", 0 };
FIXTURE_VARIANT_ADD(number, cookie_string_2_64_minus_1_exact) {
	"\"samples\":0,\"cookie\":\"18446744073709551615\"", NULL, UINT64_MAX };
FIXTURE_VARIANT_ADD(number, cookie_number_2_53_plus_1_exact) {
	"\"samples\":0,\"cookie\":9007199254740993", NULL, 9007199254740993ull };

FIXTURE_SETUP(number)
{
	char text[400];
	int n = snprintf(text, sizeof(text),
			 "{\"format\":\"meter-profile\",\"version\":1,"
			 "\"period_ns\":1,%s,\"functions\":[],"
			 "\"stacks\":[]}", variant->field);

	self->r = from_json(text, (size_t)n, self->err, sizeof(self->err));
}

FIXTURE_TEARDOWN(number)
{
	meter_profile_free(self->r);
}

TEST_F(number, refused_or_read_exactly)
{
	if (variant->want) {
		EXPECT_EQ(NULL, self->r);
		EXPECT_NE(NULL, strstr(self->err, variant->want))
			TH_LOG("%s", self->err);
	} else {
		ASSERT_NE(NULL, self->r) TH_LOG("%s", self->err);
		EXPECT_EQ(variant->cookie, self->r->cookie);
	}
}

/* a program without libstdc++ loaded sends C++ names mangled */
TEST(mangled_names_demangled_bad_ones_kept)
{
	struct meter_profile *p = meter_profile_new();

	ASSERT_NE(NULL, meter_profile_add_func(p, 1, "_ZN5Lexer4ReadEPi"));
	ASSERT_NE(NULL, meter_profile_add_func(p, 2, "_Zjunk"));
	ASSERT_NE(NULL, meter_profile_add_func(p, 3, "_start"));
	EXPECT_STREQ("Lexer::Read(int*)", p->funcs[0].name);
	EXPECT_STREQ("_Zjunk", p->funcs[1].name);
	EXPECT_STREQ("_start", p->funcs[2].name);
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
