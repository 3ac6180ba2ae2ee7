// SPDX-License-Identifier: MIT
/*
 * pprof: a gzipped profile.proto message, encoded by hand.
 *
 * Facts used from the public profile.proto (package perftools.profiles):
 *   Profile:   sample_type 1, sample 2, location 4, function 5,
 *              string_table 6 (index 0 is ""), duration_nanos 10,
 *              period_type 11, period 12, comment 13,
 *              default_sample_type 14
 *   ValueType: type 1, unit 2 (string table indices)
 *   Sample:    location_id 1 (packed, leaf first), value 2 (packed),
 *              label 3;  Label: key 1, str 2, num 3 (string table
 *              indices, number)
 *   Location:  id 1, line 4;  Line: function_id 1
 *   Function:  id 1, name 2, system_name 3
 * Values per sample: samples/count and cpu/nanoseconds; for a wall-clock
 * profile samples/count, wall/nanoseconds, then the wall time split as
 * cpu, runq and blocked/nanoseconds (pprof -sample_index=blocked shows
 * where threads wait); last, calls/count, 0 in every sampled stack and a
 * one-frame sample per called function holding its exact call count
 * (`go tool pprof -sample_index=calls -top`).  The default sample type
 * is the time (cpu or wall), as the period's.  A sampled stack carries its
 * thread as the numeric label "tid" (`-tags`, `-tagfocus=tid=N`), as
 * perf_to_profile labels perf's samples, and its name as the string label
 * "thread" (`-tagfocus=thread=worker-0`), and in a profile of several
 * processes its program as the string label "program"
 * (`-tagfocus=program=cc1`).
 *
 * Every function's self samples appear: samples whose stack was not kept
 * (the kernel's stack table was full) become one-frame samples of the
 * function they were charged to, and ticks without a current function a
 * sample of "[no current function]", so pprof's flat column equals the
 * flat profile's.  A truncated stack gets a "[truncated]" root frame.
 *
 * The message is compressed into a gzip stream by zlib (pprof reads
 * gzipped and plain messages alike; every pprof file in the wild is
 * gzipped).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report.h"
#include "tree.h"

struct pbuf {
	uint8_t *d;
	size_t n, cap;
	bool oom;
};

static void pb_put(struct pbuf *b, const void *data, size_t len)
{
	if (b->oom || !len)
		return;
	if (b->n + len > b->cap) {
		size_t ncap = b->cap ? b->cap : 256;
		uint8_t *nd;

		while (ncap < b->n + len)
			ncap *= 2;
		nd = realloc(b->d, ncap);
		if (!nd) {
			b->oom = true;
			return;
		}
		b->d = nd;
		b->cap = ncap;
	}
	memcpy(b->d + b->n, data, len);
	b->n += len;
}

static void pb_varint(struct pbuf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	pb_put(b, tmp, n);
}

enum { WT_VARINT = 0, WT_LEN = 2 };

static void pb_key(struct pbuf *b, unsigned field, unsigned wt)
{
	pb_varint(b, ((uint64_t)field << 3) | wt);
}

static void pb_uint(struct pbuf *b, unsigned field, uint64_t v)
{
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pbuf *b, unsigned field, const void *d,
		     size_t len)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, len);
	pb_put(b, d, len);
}

/* Appends sub as field of b, then empties sub. */
static void pb_msg(struct pbuf *b, unsigned field, struct pbuf *sub)
{
	if (sub->oom)
		b->oom = true;
	pb_bytes(b, field, sub->d, sub->n);
	sub->n = 0;
}

struct strtab {
	struct pbuf out;	/* string_table fields, in order */
	uint64_t n;
};

static uint64_t str_add(struct strtab *t, const char *s)
{
	pb_bytes(&t->out, 6, s, strlen(s));
	return t->n++;
}

static void value_type(struct pbuf *b, unsigned field, uint64_t type,
		       uint64_t unit)
{
	struct pbuf v = { 0 };

	pb_uint(&v, 1, type);
	pb_uint(&v, 2, unit);
	pb_msg(b, field, &v);
	free(v.d);
}

/* A sample's labels: the keys' strings, and this sample's values. */
struct labels {
	uint64_t s_tid, s_program, s_thread;	/* the keys' strings */
	uint32_t tid;			/* 0: no "tid" label */
	uint64_t program;		/* string index; 0: no "program" */
	uint64_t thread;		/* string index; 0: no "thread" */
};

/*
 * state: METER_STATE_ONCPU or 1 + meter_off_kind; -1: a CPU profile.
 * calls: the last value (a function's call count, 0 for a sampled stack).
 */
static void sample(struct pbuf *b, struct pbuf *tmp, struct pbuf *packed,
		   const uint64_t *locs, size_t nlocs, uint64_t count,
		   uint64_t period, int state, uint64_t calls,
		   const struct labels *l)
{
	size_t i;
	int k;

	for (i = 0; i < nlocs; i++)
		pb_varint(packed, locs[i]);
	pb_msg(tmp, 1, packed);
	pb_varint(packed, count);
	pb_varint(packed, count * period);
	for (k = 0; state >= 0 && k <= METER_OFF_KINDS; k++)
		pb_varint(packed, k == state ? count * period : 0);
	pb_varint(packed, calls);
	pb_msg(tmp, 2, packed);
	/* packed is empty again: the label's scratch */
	if (l->tid) {
		pb_uint(packed, 1, l->s_tid);
		pb_uint(packed, 3, l->tid);
		pb_msg(tmp, 3, packed);
	}
	if (l->program) {
		pb_uint(packed, 1, l->s_program);
		pb_uint(packed, 2, l->program);
		pb_msg(tmp, 3, packed);
	}
	if (l->thread) {
		pb_uint(packed, 1, l->s_thread);
		pb_uint(packed, 2, l->thread);
		pb_msg(tmp, 3, packed);
	}
	pb_msg(b, 2, tmp);
}

/* The string of the program of stack's process proc; 0: not known. */
static uint64_t program_label(const struct meter_profile *p,
			      const struct meter_program *progs, size_t n,
			      const uint64_t *str, uint32_t proc)
{
	const char *c;
	size_t i;

	if (!proc || proc > p->nprocs)
		return 0;
	c = p->procs[proc - 1].command;
	if (!c || !*c)
		c = "?";
	for (i = 0; i < n; i++)
		if (!strcmp(progs[i].command, c))
			return str[i];
	return 0;
}

/* The string of the name of stack s's thread (str: p->threads'); 0: none
 * known. */
static uint64_t thread_label(const struct meter_profile *p,
			     const struct meter_stack *s, const uint64_t *str)
{
	size_t i;

	for (i = 0; s->tid && i < p->nthreads; i++)
		if (p->threads[i].tid == s->tid)
			return str[i];
	return 0;
}

/* d[0..n) as one gzip member: zlib's deflate with the gzip wrapper. */
static int write_gzip(FILE *out, const uint8_t *d, size_t n)
{
	uint8_t buf[16384];
	z_stream z;
	int ret;

	if (n > UINT32_MAX)
		return -1;
	memset(&z, 0, sizeof(z));
	/* window bits 15 + 16: a gzip header and trailer, not zlib's */
	if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	z.next_in = (Bytef *)d;
	z.avail_in = (uInt)n;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			break;
		fwrite(buf, 1, sizeof(buf) - z.avail_out, out);
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return ret == Z_STREAM_END && !ferror(out) ? 0 : -1;
}

int render_pprof(const struct analysis *an, const struct render_opts *o,
		 FILE *out)
{
	const struct meter_profile *p = an->p;
	struct pbuf b = { 0 }, tmp = { 0 }, packed = { 0 }, sub = { 0 };
	struct strtab st = { 0 };
	uint64_t *locs = NULL, *leaf = NULL;
	uint64_t s_samples, s_count, s_cpu, s_ns, s_time, nocur_loc = 0;
	uint64_t trunc_loc = 0, *prog_str = NULL, *thread_str = NULL;
	struct labels lab = { 0 }, none;
	struct meter_program *progs = NULL;
	size_t nprogs = 0;
	const int nst = 1 + METER_OFF_KINDS;	/* leaf[] per state */
	const char *extra[2];	/* pseudo functions after p->funcs */
	size_t i, k, maxd = 1, nextra = 0;
	char line[600];
	int ret = -1;

	(void)o;
	str_add(&st, "");	/* index 0 is always "" */
	s_samples = str_add(&st, "samples");
	s_count = str_add(&st, "count");
	s_cpu = str_add(&st, "cpu");
	s_ns = str_add(&st, "nanoseconds");
	s_time = p->wall ? str_add(&st, "wall") : s_cpu;
	lab.s_tid = str_add(&st, "tid");
	lab.s_program = str_add(&st, "program");
	lab.s_thread = str_add(&st, "thread");
	none = lab;
	/* a tree or runs merged: each stack's program as a label */
	if (p->nprocs > 1)
		nprogs = meter_programs(p, &progs);
	prog_str = calloc(nprogs ? nprogs : 1, sizeof(*prog_str));
	thread_str = calloc(p->nthreads ? p->nthreads : 1,
			    sizeof(*thread_str));
	if (!prog_str || !thread_str)
		goto out;
	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].name[0])
			thread_str[i] = str_add(&st, p->threads[i].name);
	for (i = 0; i < nprogs; i++)
		prog_str[i] = str_add(&st, progs[i].command);
	value_type(&b, 1, s_samples, s_count);
	value_type(&b, 1, s_time, s_ns);
	if (p->wall) {
		value_type(&b, 1, s_cpu, s_ns);
		value_type(&b, 1, str_add(&st, "runq"), s_ns);
		value_type(&b, 1, str_add(&st, "blocked"), s_ns);
	}
	value_type(&b, 1, str_add(&st, "calls"), s_count);

	for (i = 0; i < p->nstacks; i++) {
		if (p->stacks[i].depth > maxd)
			maxd = p->stacks[i].depth;
		if (p->stacks[i].truncated && p->stacks[i].samples &&
		    !trunc_loc) {
			extra[nextra++] = "[truncated]";
			trunc_loc = an->n + nextra;
		}
	}
	if (p->no_current) {
		extra[nextra++] = "[no current function]";
		nocur_loc = an->n + nextra;
	}
	locs = malloc((maxd + 1) * sizeof(*locs));
	leaf = calloc((an->n ? an->n : 1) * nst, sizeof(*leaf));
	if (!locs || !leaf)
		goto out;

	/* Location and function i + 1 stand for p->funcs[i]. */
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];
		size_t n = 0;

		if (!s->samples || !s->depth)
			continue;
		for (k = s->depth; k-- > 0;) {
			const struct meter_func *f =
				meter_profile_find(p, s->frames[k]);

			if (f)
				locs[n++] = (uint64_t)(f - p->funcs) + 1;
		}
		if (!n)
			continue;
		leaf[(locs[0] - 1) * nst + s->state] += s->samples;
		/* The kernel kept the leaf-most frames: mark the cut. */
		if (s->truncated)
			locs[n++] = trunc_loc;
		lab.tid = s->tid;
		lab.program = program_label(p, progs, nprogs, prog_str,
					    s->proc);
		lab.thread = thread_label(p, s, thread_str);
		sample(&b, &tmp, &packed, locs, n, s->samples, p->period_ns,
		       p->wall ? s->state : -1, 0, &lab);
	}
	for (i = 0; i < an->n; i++) {
		const struct meter_func *f = &p->funcs[i];
		uint64_t want[1 + METER_OFF_KINDS];
		int k;

		want[0] = f->self_samples - f->self_off[METER_OFF_RUNQ] -
			  f->self_off[METER_OFF_BLOCKED];
		for (k = 0; k < METER_OFF_KINDS; k++)
			want[1 + k] = f->self_off[k];
		for (k = 0; k < nst; k++) {
			if (want[k] <= leaf[i * nst + k])
				continue;
			locs[0] = i + 1;
			sample(&b, &tmp, &packed, locs, 1,
			       want[k] - leaf[i * nst + k], p->period_ns,
			       p->wall ? k : -1, 0, &none);
		}
		if (f->calls) {
			locs[0] = i + 1;
			sample(&b, &tmp, &packed, locs, 1, 0, p->period_ns,
			       p->wall ? METER_STATE_ONCPU : -1, f->calls,
			       &none);
		}
	}
	if (p->no_current) {
		locs[0] = nocur_loc;
		sample(&b, &tmp, &packed, locs, 1, p->no_current,
		       p->period_ns, p->wall ? METER_STATE_ONCPU : -1, 0,
		       &none);
	}

	for (i = 0; i < an->n + nextra; i++) {
		pb_uint(&tmp, 1, i + 1);
		pb_uint(&sub, 1, i + 1);
		pb_msg(&tmp, 4, &sub);
		pb_msg(&b, 4, &tmp);
	}
	for (i = 0; i < an->n + nextra; i++) {
		uint64_t name = str_add(&st, i < an->n ? an_whole_name(an, i) :
					extra[i - an->n]);

		pb_uint(&tmp, 1, i + 1);
		pb_uint(&tmp, 2, name);
		pb_uint(&tmp, 3, name);
		pb_msg(&b, 5, &tmp);
	}
	if (p->end_ns > p->start_ns && p->start_ns)
		pb_uint(&b, 10, p->end_ns - p->start_ns);
	value_type(&b, 11, s_time, s_ns);
	pb_uint(&b, 12, p->period_ns);

	snprintf(line, sizeof(line), "meter: %s pid %" PRId32 " backend %s, "
		 "%" PRIu32 " run%s, %" PRIu64 " samples",
		 p->command ? p->command : "???", p->pid,
		 p->backend[0] ? p->backend : "unknown", p->runs,
		 p->runs == 1 ? "" : "s", an->samples);
	pb_uint(&b, 13, str_add(&st, line));
	pb_uint(&b, 14, s_time);
	if (p->call_cost_ps) {
		snprintf(line, sizeof(line), "call_cost_ps %" PRIu64,
			 p->call_cost_ps);
		pb_uint(&b, 13, str_add(&st, line));
	}
	if (p->corrected) {
		snprintf(line, sizeof(line), "instrumentation correction: "
			 "%.1f samples taken out", p->corrected_samples);
		pb_uint(&b, 13, str_add(&st, line));
	}
	pb_put(&b, st.out.d, st.out.n);
	if (b.oom || tmp.oom || packed.oom || sub.oom || st.out.oom) {
		errno = ENOMEM;
		goto out;
	}
	ret = write_gzip(out, b.d, b.n);
out:
	free(b.d);
	free(tmp.d);
	free(packed.d);
	free(sub.d);
	free(st.out.d);
	free(locs);
	free(leaf);
	free(progs);
	free(prog_str);
	free(thread_str);
	return ret;
}
