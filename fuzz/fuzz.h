/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share (Documentation/fuzzing.md): input as a FILE,
 * a FILE that discards, and what the tools do with a profile once a reader
 * has accepted it.  A reader that accepts what the reports, a merge or
 * the writer then trip over has let bad input through, so each target
 * runs them too: the sanitizers see the whole path of outside input.
 */
#ifndef METER_FUZZ_H
#define METER_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "addrs.h"
#include "fuzz_check.h"
#include "report.h"
#include "render_diff.h"
#include "units.h"


struct fuzz_in {
	const uint8_t *data;
	size_t size, off;
};

static inline ssize_t fuzz_in_read(void *cookie, char *buf, size_t len)
{
	struct fuzz_in *in = cookie;
	size_t n = in->size - in->off < len ? in->size - in->off : len;

	memcpy(buf, in->data + in->off, n);
	in->off += n;
	return (ssize_t)n;
}

static inline int fuzz_in_close(void *cookie)
{
	free(cookie);
	return 0;
}

/* The bytes as a FILE; fmemopen() refuses an empty buffer. */
static inline FILE *fuzz_open(const uint8_t *data, size_t size)
{
	struct fuzz_in *in = malloc(sizeof(*in));
	cookie_io_functions_t io = { .read = fuzz_in_read,
				     .close = fuzz_in_close };
	FILE *f;

	FUZZ_CHECK(in, "out of memory");
	*in = (struct fuzz_in){ data, size, 0 };
	f = fopencookie(in, "r", io);
	FUZZ_CHECK(f, "fopencookie failed");
	return f;
}

static inline ssize_t fuzz_sink_write(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	(void)buf;
	return (ssize_t)len;
}

/* Reports written here cost no system call (/dev/null would). */
static inline FILE *fuzz_sink(void)
{
	static FILE *sink;
	cookie_io_functions_t io = { .write = fuzz_sink_write };

	if (!sink)
		sink = fopencookie(NULL, "w", io);
	FUZZ_CHECK(sink, "fopencookie failed");
	return sink;
}

/* p as the writer writes it, malloc'ed (*len bytes). */
static inline char *fuzz_write_json(const struct meter_profile *p,
				    size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	FUZZ_CHECK(f, "open_memstream failed");
	FUZZ_CHECK(!meter_profile_write_json(p, f), "the writer failed");
	FUZZ_CHECK(!fclose(f), "the writer's memstream failed");
	return buf;
}

/*
 * The reading by address, with places made up from each address (the
 * files a profile names are never opened here): meter's own, a function
 * of the profile's, a function it has no row for, or not read.  Whatever
 * the input, the samples given out never exceed the rows', and the
 * result still holds together as a profile must.
 */
static inline void fuzz_by_address(const struct meter_profile *p)
{
	struct meter_profile *c = meter_profile_new();
	struct addr_where *w;
	struct byaddr_result r;
	char err[300], name[32];
	uint64_t before = 0, after = 0;
	size_t i;

	FUZZ_CHECK(c && !meter_profile_merge(c, p), "merge failed");
	w = calloc(c->naddrs ? c->naddrs : 1, sizeof(*w));
	FUZZ_CHECK(w, "out of memory");
	for (i = 0; i < c->naddrs; i++) {
		uint64_t ip = c->addrs[i].ip;

		w[i].kind = (enum addr_kind)(ip % 3);
		w[i].plugin = ip & 8;
		if (w[i].kind != ADDR_FUNC)
			continue;
		if (ip & 16 && c->nfuncs)
			snprintf(name, sizeof(name), "%.31s",
				 c->funcs[ip / 32 % c->nfuncs].name);
		else
			snprintf(name, sizeof(name), "inl%u",
				 (unsigned int)(ip / 32 % 5));
		w[i].func = strdup(name);
		FUZZ_CHECK(w[i].func, "out of memory");
		/* named by a clone's symbol: a record's name whole, or not */
		if (ip & 64) {
			w[i].sym = strdup(c->nfuncs && ip & 128 ?
					  c->funcs[ip / 256 % c->nfuncs].name :
					  "inl0.constprop.0");
			FUZZ_CHECK(w[i].sym, "out of memory");
		}
	}
	for (i = 0; i < c->nfuncs; i++)
		before += c->funcs[i].self_samples;
	FUZZ_CHECK(!byaddr_apply(c, w, &r), "by address failed");
	for (i = 0; i < c->nfuncs; i++)
		after += c->funcs[i].self_samples;
	FUZZ_CHECK(after + r.meter == before,
		   "by address: %llu self samples and %llu taken out, of %llu",
		   (unsigned long long)after, (unsigned long long)r.meter,
		   (unsigned long long)before);
	FUZZ_CHECK(!meter_profile_check_sums(c, err, sizeof(err)),
		   "by address: %s", err);
	addr_where_free(w, c->naddrs);
	free(w);
	meter_profile_free(c);
}

/*
 * What meter-stat does with a profile it read: every report format, with
 * and without the correction, a merge, a diff, and the JSON it writes,
 * which must read back and write again to the same bytes
 * (Documentation/json-format.md).  The inputs that reach here were
 * accepted, so every step must succeed.
 */
static inline void fuzz_consume(const struct meter_profile *p)
{
	static const enum report_format formats[] = {
		FMT_TEXT, FMT_FLAT, FMT_CALLGRAPH, FMT_METERING, FMT_JSON,
		FMT_FOLDED, FMT_PPROF, FMT_DOT, FMT_TOP, FMT_HTML,
	};
	struct report_opts o = { .threshold = 0.5,
				 .an = { .hide_self = 1, .hide_subs = 1 },
				 .threads = true };
	struct meter_profile *back, *all;
	char err[300], *a, *b;
	size_t i, alen, blen;
	FILE *in;

	for (i = 0; i < 2 * sizeof(formats) / sizeof(formats[0]); i++) {
		o.format = formats[i / 2];
		/* never by address: that opens the files a map names */
		o.attrib = i % 2 ? ATTRIB_CORRECTED : ATTRIB_AS_TAKEN;
		o.an.inclusive = i % 2;
		o.an.order = (enum an_order)(i % (ORDER_TOPOLOGICAL + 1));
		FUZZ_CHECK(!render_profile(p, &o, fuzz_sink(), err,
					   sizeof(err)),
			   "render format %d: %s", (int)o.format, err);
	}
	o.format = FMT_TEXT;
	o.attrib = ATTRIB_CORRECTED;
	FUZZ_CHECK(!render_diff(p, p, &o, fuzz_sink(), err, sizeof(err)),
		   "diff: %s", err);

	all = meter_profile_new();
	FUZZ_CHECK(all && !meter_profile_merge(all, p), "merge failed");
	meter_profile_free(all);
	fuzz_by_address(p);

	a = fuzz_write_json(p, &alen);
	in = fuzz_open((const uint8_t *)a, alen);
	back = meter_profile_read_json(in, err, sizeof(err));
	fclose(in);
	FUZZ_CHECK(back, "what the writer wrote does not read back: %s",
		   err);
	b = fuzz_write_json(back, &blen);
	FUZZ_CHECK(alen == blen && !memcmp(a, b, alen),
		   "read and written again, the bytes differ");
	meter_profile_free(back);
	free(a);
	free(b);
}

#endif /* METER_FUZZ_H */
