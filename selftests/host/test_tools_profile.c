// SPDX-License-Identifier: MIT
/*
 * Unit tests of the profile model (analysis/profile.c) and its JSON reader
 * (analysis/profile_json.c): look-up, totals from stacks, merge by name,
 * unnamed ids named, and the reader's behaviour on every truncation and
 * on random corruption of a valid file (an error message or a valid
 * profile, never a crash).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static int n, fails;

static void check(bool cond, const char *fmt, ...)
{
	va_list ap;

	n++;
	printf("%sok %d - ", cond ? "" : "not ", n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		fails++;
}

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

int main(void)
{
	struct meter_profile *a, *b, *m, *r;
	const struct meter_func *f;
	char err[300], *json, *json2;
	size_t len, len2, i, bad = 0, oneline = 0, parsed = 0;
	uint32_t rec[] = { 5, 9, 9, 9 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("1..20\n");

	a = appel(1, 2, 3, 4);
	check(meter_profile_find(a, 3) && !strcmp(meter_profile_find(a, 3)->name,
						  "g"),
	      "find: dense ids");
	b = appel(40, 7, 9, 2);	/* unsorted ids */
	check(meter_profile_find(b, 9) &&
	      !strcmp(meter_profile_find(b, 9)->name, "g") &&
	      !meter_profile_find(b, 3), "find: unsorted, sparse ids");
	check(meter_profile_find(a, 1)->total_samples == 1010 &&
	      meter_profile_find(a, 2)->total_samples == 900 &&
	      meter_profile_find(a, 4)->total_samples == 1000,
	      "compute_totals: each function's samples from the stacks");

	r = meter_profile_new();
	meter_profile_add_func(r, 5, "main");
	meter_profile_add_func(r, 9, "fib");
	meter_profile_add_stack(r, rec, 4, 7);
	meter_profile_compute_totals(r);
	check(meter_profile_find(r, 9)->total_samples == 7,
	      "compute_totals: a recursive function counts once per sample");

	m = meter_profile_new();
	meter_profile_merge(m, a);
	meter_profile_merge(m, b);
	f = by_name(m, "is_prime");
	check(f && f->calls == 400 && f->self_samples == 2000 &&
	      f->total_samples == 2000, "merge: counts add up, matched by name "
	      "across different ids");
	check(m->nfuncs == 4 && m->nstacks == 3 && m->stacks[0].samples == 1800,
	      "merge: identical stacks (after renumbering) add their samples");
	check(m->runs == 2 && m->samples == 2020 && m->nthreads == 2,
	      "merge: runs, counters and threads add up");
	meter_profile_merge(m, r);
	meter_profile_free(r);
	check(m->nfuncs == 5 && by_name(m, "fib") && by_name(m, "main")->calls == 2,
	      "merge: new names are added, old ones matched");
	check(meter_profile_find(m, by_name(m, "fib")->id) == by_name(m, "fib"),
	      "merge: ids stay unique and findable");

	{
		/* A stack naming an id the profile does not name. */
		struct meter_profile *u = meter_profile_new();
		const uint32_t fr[] = { 1, 77 };
		struct meter_profile *v;
		char *uj;
		size_t ul;

		meter_profile_add_func(u, 1, "main");
		meter_profile_add_stack(u, fr, 2, 5);
		v = meter_profile_new();
		meter_profile_merge(v, u);
		uj = to_json(v, &ul);
		meter_profile_free(u);
		u = from_json(uj, ul, err, sizeof(err));
		check(by_name(v, "[id 77]") && u != NULL,
		      "merge: an id without a name becomes \"[id 77]\", and "
		      "the JSON reads back");
		free(uj);
		meter_profile_free(u);
		meter_profile_free(v);
	}
	{
		/*
		 * The same, named in place (a kernel dump's id that its
		 * records lack): "[id 77]", as merges name it, with its
		 * samples from the stacks, once per stack however often.
		 */
		struct meter_profile *u = meter_profile_new();
		const uint32_t f1[] = { 1, 77 }, f2[] = { 1, 77, 2, 77 };
		const struct meter_func *x;
		size_t added;

		meter_profile_add_func(u, 1, "main");
		meter_profile_add_func(u, 2, "cb");
		meter_profile_add_stack(u, f1, 2, 5);
		meter_profile_add_stack(u, f2, 4, 3);
		added = meter_profile_name_unknown_ids(u);
		x = by_name(u, "[id 77]");
		check(added == 1 && x && x->id == 77 && x->self_samples == 8 &&
		      x->total_samples == 8 &&
		      meter_profile_name_unknown_ids(u) == 0,
		      "an unnamed id named in place: \"[id 77]\", self 8, "
		      "total 8, once");
		meter_profile_free(u);
	}

	json = to_json(m, &len);
	r = from_json(json, len, err, sizeof(err));
	json2 = r ? to_json(r, &len2) : NULL;
	check(json2 && len == len2 && !memcmp(json, json2, len),
	      "json: write, read, write gives the same bytes");
	meter_profile_free(r);
	free(json2);

	/* Every proper prefix of a valid file is refused with one line. */
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
	check(bad == len - 1, "json: all %zu truncations are refused", len - 1);
	check(oneline == bad, "json: each with a one-line message");

	/*
	 * Random corruption: an error in one line, or a profile that is
	 * whole: what the reader accepts, the writer writes back and the
	 * reader takes again unchanged (a half-checked profile would not
	 * survive the round trip).
	 */
	srand(12345);
	bad = oneline = parsed = 0;
	size_t stable = 0;
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
			if (j2 && l1 == l2 && !memcmp(j1, j2, l1))
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
	check(bad > 0 && oneline == bad,
	      "json: 3000 corrupted files: %zu refused, each with one line",
	      bad);
	check(stable == parsed,
	      "json: the %zu corrupted files accepted are whole profiles "
	      "(%zu survive a write and a read unchanged)", parsed, stable);

	r = from_json("{\"format\":\"meter-profile\",\"version\":2}", 38, err,
		      sizeof(err));
	check(!r && strstr(err, "version 2"), "json: unknown version refused: %s",
	      err);
	{
		/* Deep nesting is refused, not recursed into. */
		char deep[4096];

		memset(deep, '[', sizeof(deep));
		memcpy(deep, "{\"a\":", 5);
		r = from_json(deep, sizeof(deep), err, sizeof(err));
		check(!r && strstr(err, "nested deeper"),
		      "json: nesting depth is bounded: %s", err);
	}
	{
		const char *dup = "{\"format\":\"meter-profile\",\"version\":1,"
			"\"period_ns\":1,\"samples\":0,\"functions\":[{\"id\":1,"
			"\"name\":\"a\"},{\"id\":1,\"name\":\"b\"}],\"stacks\":[]}";

		r = from_json(dup, strlen(dup), err, sizeof(err));
		check(!r && strstr(err, "appears twice"),
		      "json: duplicate function ids refused: %s", err);
	}

	{
		/*
		 * Numbers json-c bends: past 2^64 - 1 it saturates, so a
		 * counter of 2^64 - 1 is refused as out of range too; NaN
		 * and fractions are not integers.  Cookies are strings,
		 * exact past 2^53; numbers, as older files wrote, still read.
		 */
		static const struct {
			const char *field, *want;
		} cases[] = {
			{ "\"samples\":18446744073709551616", "out of range" },
			{ "\"samples\":18446744073709551615", "out of range" },
			{ "\"samples\":NaN", "non-negative integer" },
			{ "\"samples\":1.5", "non-negative integer" },
			{ "\"samples\":-1", "non-negative integer" },
			{ "\"samples\":0,\"cookie\":\"18446744073709551616\"",
			  "decimal integer" },
			{ "\"samples\":0,\"cookie\":\"12x\"", "decimal integer" },
			{ "\"samples\":0,\"command\":\"a\\u0000b\"", "u0000" },
			{ "\"samples\":0,\"cookie\":\"18446744073709551615\"",
			  NULL },
			{ "\"samples\":0,\"cookie\":9007199254740993", NULL },
		};
		char text[400];
		size_t k;
		int right = 0;

		for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			int n = snprintf(text, sizeof(text),
				"{\"format\":\"meter-profile\",\"version\":1,"
				"\"period_ns\":1,%s,\"functions\":[],"
				"\"stacks\":[]}", cases[k].field);

			err[0] = 0;
			r = from_json(text, (size_t)n, err, sizeof(err));
			if (cases[k].want ? !r && strstr(err, cases[k].want) :
			    r && r->cookie == (k == 8 ? UINT64_MAX :
					       9007199254740993ull))
				right++;
			else
				printf("# %s: %s\n", cases[k].field,
				       r ? "accepted" : err);
			meter_profile_free(r);
		}
		check(right == (int)k,
		      "json: 2^64 and its saturation, NaN, fractions, negatives, bad cookie strings and \\u0000 refused; cookies 2^64 - 1 (string) and 2^53 + 1 (number) exact (%d of %zu)",
		      right, k);
	}

	free(json);
	meter_profile_free(a);
	meter_profile_free(b);
	meter_profile_free(m);
	printf("# %d failed\n", fails);
	return fails ? 1 : 0;
}
