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
 *   Location:  id 1, line 4;  Line: function_id 1, line 2
 *   Function:  id 1, name 2, system_name 3, filename 4, start_line 5
 * A function with a source (a Python function's file and first line) has
 * its filename and start line, and its location that line, so that
 * `go tool pprof -list` finds the source.
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
#include "proctree.h"

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

/* What the writing of one profile carries from part to part. */
struct pprof {
	const struct analysis *an;
	const struct meter_profile *p;
	struct pbuf b, tmp, packed, sub;	/* the message, scratch */
	struct strtab st;
	uint64_t s_count, s_cpu, s_ns, s_time;	/* strings */
	struct labels lab, none;
	struct meter_program *progs;
	size_t nprogs;
	uint64_t *prog_str, *thread_str;	/* label strings */
	uint64_t *locs;				/* one stack's locations */
	uint64_t *leaf;		/* per function and state: samples as leaf */
	const char *extra[2];	/* pseudo functions after p->funcs */
	size_t nextra;
	uint64_t trunc_loc, nocur_loc;
};

#define PPROF_STATES (1 + METER_OFF_KINDS)

/* The string table's fixed entries, the sample types and label strings. */
static int pprof_types(struct pprof *x)
{
	const struct meter_profile *p = x->p;
	uint64_t s_samples;
	size_t i;

	str_add(&x->st, "");	/* index 0 is always "" */
	s_samples = str_add(&x->st, "samples");
	x->s_count = str_add(&x->st, "count");
	x->s_cpu = str_add(&x->st, "cpu");
	x->s_ns = str_add(&x->st, "nanoseconds");
	x->s_time = p->wall ? str_add(&x->st, "wall") : x->s_cpu;
	x->lab.s_tid = str_add(&x->st, "tid");
	x->lab.s_program = str_add(&x->st, "program");
	x->lab.s_thread = str_add(&x->st, "thread");
	x->none = x->lab;
	/* a tree or runs merged: each stack's program as a label */
	if (p->nprocs > 1)
		x->nprogs = meter_programs(p, &x->progs);
	x->prog_str = calloc(x->nprogs ? x->nprogs : 1, sizeof(uint64_t));
	x->thread_str = calloc(p->nthreads ? p->nthreads : 1,
			       sizeof(uint64_t));
	if (!x->prog_str || !x->thread_str)
		return -1;
	for (i = 0; i < p->nthreads; i++)
		if (p->threads[i].name[0])
			x->thread_str[i] = str_add(&x->st, p->threads[i].name);
	for (i = 0; i < x->nprogs; i++)
		x->prog_str[i] = str_add(&x->st, x->progs[i].command);
	value_type(&x->b, 1, s_samples, x->s_count);
	value_type(&x->b, 1, x->s_time, x->s_ns);
	if (p->wall) {
		value_type(&x->b, 1, x->s_cpu, x->s_ns);
		value_type(&x->b, 1, str_add(&x->st, "runq"), x->s_ns);
		value_type(&x->b, 1, str_add(&x->st, "blocked"), x->s_ns);
	}
	value_type(&x->b, 1, str_add(&x->st, "calls"), x->s_count);
	return 0;
}

/* The pseudo functions ([truncated], [no current function]), scratch. */
static int pprof_extras(struct pprof *x)
{
	const struct meter_profile *p = x->p;
	size_t i, maxd = 1, n = x->an->n;

	for (i = 0; i < p->nstacks; i++) {
		if (p->stacks[i].depth > maxd)
			maxd = p->stacks[i].depth;
		if (p->stacks[i].truncated && p->stacks[i].samples &&
		    !x->trunc_loc) {
			x->extra[x->nextra++] = "[truncated]";
			x->trunc_loc = n + x->nextra;
		}
	}
	if (p->no_current) {
		x->extra[x->nextra++] = "[no current function]";
		x->nocur_loc = n + x->nextra;
	}
	x->locs = malloc((maxd + 1) * sizeof(*x->locs));
	x->leaf = calloc((n ? n : 1) * PPROF_STATES, sizeof(*x->leaf));
	return x->locs && x->leaf ? 0 : -1;
}

/* One sample per sampled stack; location i + 1 is p->funcs[i]. */
static void pprof_stacks(struct pprof *x)
{
	const struct meter_profile *p = x->p;
	size_t i, k;

	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];
		size_t n = 0;

		if (!s->samples || !s->depth)
			continue;
		for (k = s->depth; k-- > 0;) {
			const struct meter_func *f =
				meter_profile_find(p, s->frames[k]);

			if (f)
				x->locs[n++] = (uint64_t)(f - p->funcs) + 1;
		}
		if (!n)
			continue;
		x->leaf[(x->locs[0] - 1) * PPROF_STATES + s->state] +=
			s->samples;
		/* The kernel kept the leaf-most frames: mark the cut. */
		if (s->truncated)
			x->locs[n++] = x->trunc_loc;
		x->lab.tid = s->tid;
		x->lab.program = program_label(p, x->progs, x->nprogs,
					       x->prog_str, s->proc);
		x->lab.thread = thread_label(p, s, x->thread_str);
		sample(&x->b, &x->tmp, &x->packed, x->locs, n, s->samples,
		       p->period_ns, p->wall ? s->state : -1, 0, &x->lab);
	}
}

/*
 * Per function: the self samples no kept stack holds (the stack table was
 * full), as one-frame samples, and its call count; then the ticks with no
 * current function.
 */
static void pprof_functions(struct pprof *x)
{
	const struct meter_profile *p = x->p;
	int wall_on = p->wall ? METER_STATE_ONCPU : -1;
	size_t i;

	for (i = 0; i < x->an->n; i++) {
		const struct meter_func *f = &p->funcs[i];
		const uint64_t *leaf = &x->leaf[i * PPROF_STATES];
		uint64_t want[PPROF_STATES];
		int k;

		want[0] = f->self_samples - f->self_off[METER_OFF_RUNQ] -
			  f->self_off[METER_OFF_BLOCKED];
		for (k = 0; k < METER_OFF_KINDS; k++)
			want[1 + k] = f->self_off[k];
		x->locs[0] = i + 1;
		for (k = 0; k < PPROF_STATES; k++)
			if (want[k] > leaf[k])
				sample(&x->b, &x->tmp, &x->packed, x->locs, 1,
				       want[k] - leaf[k], p->period_ns,
				       p->wall ? k : -1, 0, &x->none);
		if (f->calls)
			sample(&x->b, &x->tmp, &x->packed, x->locs, 1, 0,
			       p->period_ns, wall_on, f->calls, &x->none);
	}
	if (p->no_current) {
		x->locs[0] = x->nocur_loc;
		sample(&x->b, &x->tmp, &x->packed, x->locs, 1, p->no_current,
		       p->period_ns, wall_on, 0, &x->none);
	}
}

/* Locations and functions: one each per function, whole names. */
static void pprof_locations(struct pprof *x)
{
	size_t i, n = x->an->n + x->nextra;

	for (i = 0; i < n; i++) {
		const struct meter_func *f = i < x->an->n ? &x->p->funcs[i] :
							    NULL;

		pb_uint(&x->tmp, 1, i + 1);
		pb_uint(&x->sub, 1, i + 1);
		if (f && f->line)
			pb_uint(&x->sub, 2, f->line);
		pb_msg(&x->tmp, 4, &x->sub);
		pb_msg(&x->b, 4, &x->tmp);
	}
	for (i = 0; i < n; i++) {
		const struct meter_func *f = i < x->an->n ? &x->p->funcs[i] :
							    NULL;
		uint64_t name = str_add(&x->st, f ? an_whole_name(x->an, i) :
					x->extra[i - x->an->n]);

		pb_uint(&x->tmp, 1, i + 1);
		pb_uint(&x->tmp, 2, name);
		pb_uint(&x->tmp, 3, name);
		if (f && f->file)
			pb_uint(&x->tmp, 4, str_add(&x->st, f->file));
		if (f && f->line)
			pb_uint(&x->tmp, 5, f->line);
		pb_msg(&x->b, 5, &x->tmp);
	}
}

/* Duration, period, default sample type and the comments. */
static void pprof_trailer(struct pprof *x)
{
	const struct meter_profile *p = x->p;
	char line[600];

	if (p->end_ns > p->start_ns && p->start_ns)
		pb_uint(&x->b, 10, p->end_ns - p->start_ns);
	value_type(&x->b, 11, x->s_time, x->s_ns);
	pb_uint(&x->b, 12, p->period_ns);
	snprintf(line, sizeof(line), "meter: %s pid %" PRId32 " backend %s, "
		 "%" PRIu32 " run%s, %" PRIu64 " samples",
		 p->command ? p->command : "???", p->pid,
		 p->backend[0] ? p->backend : "unknown", p->runs,
		 p->runs == 1 ? "" : "s", x->an->samples);
	pb_uint(&x->b, 13, str_add(&x->st, line));
	pb_uint(&x->b, 14, x->s_time);
	if (p->call_cost_ps) {
		snprintf(line, sizeof(line), "call_cost_ps %" PRIu64,
			 p->call_cost_ps);
		pb_uint(&x->b, 13, str_add(&x->st, line));
	}
	if (p->corrected) {
		snprintf(line, sizeof(line), "instrumentation correction: "
			 "%.1f samples taken out", p->corrected_samples);
		pb_uint(&x->b, 13, str_add(&x->st, line));
	}
	pb_put(&x->b, x->st.out.d, x->st.out.n);
}

int render_pprof(const struct analysis *an, const struct report_opts *o,
		 FILE *out)
{
	struct pprof x = { .an = an, .p = an->p };
	int ret = -1;

	(void)o;
	if (pprof_types(&x) || pprof_extras(&x))
		goto out;
	pprof_stacks(&x);
	pprof_functions(&x);
	pprof_locations(&x);
	pprof_trailer(&x);
	if (x.b.oom || x.tmp.oom || x.packed.oom || x.sub.oom ||
	    x.st.out.oom) {
		errno = ENOMEM;
		goto out;
	}
	ret = write_gzip(out, x.b.d, x.b.n);
out:
	free(x.b.d);
	free(x.tmp.d);
	free(x.packed.d);
	free(x.sub.d);
	free(x.st.out.d);
	free(x.locs);
	free(x.leaf);
	free(x.progs);
	free(x.prog_str);
	free(x.thread_str);
	return ret;
}
