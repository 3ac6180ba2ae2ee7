// SPDX-License-Identifier: MIT
/*
 * The one writer of the JSON profile (Documentation/json-format.md): fixed
 * key order, integers only, so that the same profile always gives the same
 * bytes.  Shared by libmeter (the signal backend's file at exit) and the
 * tools (-f json, merge); it only writes, and reads nothing but the struct.
 */
#include <inttypes.h>
#include <string.h>

#include "profile.h"

void meter_json_string(FILE *out, const char *s, bool in_script)
{
	const unsigned char *c = (const unsigned char *)s;

	fputc('"', out);
	for (; *c; c++) {
		switch (*c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		default:
			if (*c < 0x20 || *c == 0x7f ||
			    (in_script && (*c == '<' || *c == '>' || *c == '&')))
				fprintf(out, "\\u%04x", *c);
			else if (in_script && c[0] == 0xe2 && c[1] == 0x80 &&
				 (c[2] == 0xa8 || c[2] == 0xa9)) {
				/* U+2028/9 end a line in older script parsers */
				fprintf(out, "\\u%04x", c[2] == 0xa8 ? 0x2028 :
					0x2029);
				c += 2;
			} else {
				fputc(*c, out);
			}
		}
	}
	fputc('"', out);
}

static void put_string(FILE *out, const char *s)
{
	meter_json_string(out, s, false);
}

/* The profile's own keys, up to "functions". */
static void write_header(const struct meter_profile *p, FILE *out)
{

	fprintf(out, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n",
		METER_JSON_FORMAT, METER_JSON_VERSION);
	fputs("  \"command\": ", out);
	if (p->command)
		put_string(out, p->command);
	else
		fputs("null", out);
	fputs(",\n  \"backend\": ", out);
	{
		char b[sizeof(p->backend) + 1];

		memcpy(b, p->backend, sizeof(p->backend));
		b[sizeof(p->backend)] = '\0';
		put_string(out, b);
	}
	/* cookies are strings: exact in jq and JavaScript (doubles) too */
	fprintf(out, ",\n  \"pid\": %" PRId32 ",\n  \"uid\": %" PRIu32
		",\n  \"cookie\": \"%" PRIu64 "\",\n  \"parent_cookie\": \"%" PRIu64
		"\",\n  \"exited\": %s,\n  \"runs\": %" PRIu32
		",\n  \"period_ns\": %" PRIu64 ",\n  \"start_ns\": %" PRIu64
		",\n  \"end_ns\": %" PRIu64 ",\n  \"samples\": %" PRIu64,
		p->pid, p->uid, p->cookie, p->parent_cookie,
		p->exited ? "true" : "false", p->runs, p->period_ns,
		p->start_ns, p->end_ns, p->samples);
	/* Interrupts taken (kernel backend); absent means 0, as in files
	 * written before the key existed.
	 */
	if (p->ticks)
		fprintf(out, ",\n  \"ticks\": %" PRIu64, p->ticks);
	/* the wall clock's keys; absent: CPU time, as before they existed */
	if (p->wall)
		fprintf(out, ",\n  \"clock\": \"wall\",\n  \"samples_runq\": %"
			PRIu64 ",\n  \"samples_blocked\": %" PRIu64,
			p->samples_off[METER_OFF_RUNQ],
			p->samples_off[METER_OFF_BLOCKED]);
	fprintf(out, ",\n  \"no_current\": %" PRIu64 ",\n  \"invalid\": %" PRIu64
		",\n  \"lost\": %" PRIu64 ",\n  \"truncated\": %" PRIu64
		",\n  \"call_cost_ps\": %" PRIu64,
		p->no_current, p->invalid, p->lost, p->truncated,
		p->call_cost_ps);
	/* the flat sequence's cost; absent means unknown (older files) */
	if (p->flat_call_cost_ps)
		fprintf(out, ",\n  \"flat_call_cost_ps\": %" PRIu64,
			p->flat_call_cost_ps);
	/* absent means none (or a file from before the key) */
	if (p->slow_entries)
		fprintf(out, ",\n  \"slow_entries\": %" PRIu64,
			p->slow_entries);
	if (p->stretched_ticks)
		fprintf(out, ",\n  \"stretched_ticks\": %" PRIu64,
			p->stretched_ticks);
	if (p->unsampled_ns)
		fprintf(out, ",\n  \"unsampled_ns\": %" PRIu64,
			p->unsampled_ns);
	if (p->addrs_lost)
		fprintf(out, ",\n  \"addresses_lost\": %" PRIu64,
			p->addrs_lost);
	fputs(",\n", out);
}

static void write_functions(const struct meter_profile *p, FILE *out)
{
	size_t i;

	fputs("  \"functions\": [", out);
	for (i = 0; i < p->nfuncs; i++) {
		const struct meter_func *f = &p->funcs[i];

		fprintf(out, "%s\n    {\"id\": %" PRIu32 ", \"name\": ",
			i ? "," : "", f->id);
		put_string(out, f->name ? f->name : "");
		fprintf(out, ", \"calls\": %" PRIu64 ", \"self_samples\": %"
			PRIu64 ", \"total_samples\": %" PRIu64
			", \"alloc_calls\": %" PRIu64 ", \"alloc_bytes\": %"
			PRIu64, f->calls, f->self_samples,
			f->total_samples, f->alloc_calls, f->alloc_bytes);
		if (p->wall)
			fprintf(out, ", \"self_runq\": %" PRIu64
				", \"self_blocked\": %" PRIu64,
				f->self_off[METER_OFF_RUNQ],
				f->self_off[METER_OFF_BLOCKED]);
		if (f->file) {
			fputs(", \"file\": ", out);
			put_string(out, f->file);
		}
		if (f->line)
			fprintf(out, ", \"line\": %" PRIu32, f->line);
		if (f->cost_ps)
			fprintf(out, ", \"cost_ps\": %" PRIu64, f->cost_ps);
		if (f->refused) {
			fputs(", \"refused\": ", out);
			put_string(out, f->refused);
		}
		fprintf(out, "%s}", f->flat ? ", \"flat\": true" : "");
	}
	fputs(p->nfuncs ? "\n  ],\n" : "],\n", out);
}

static void write_stacks(const struct meter_profile *p, FILE *out)
{
	size_t i, k;

	fputs("  \"stacks\": [", out);
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		fprintf(out, "%s\n    {\"frames\": [", i ? "," : "");
		for (k = 0; k < s->depth; k++)
			fprintf(out, "%s%" PRIu32, k ? ", " : "",
				s->frames[k]);
		fprintf(out, "], \"samples\": %" PRIu64
			", \"truncated\": %s", s->samples,
			s->truncated ? "true" : "false");
		if (s->state)
			fprintf(out, ", \"state\": \"%s\"",
				s->state == 1 + METER_OFF_RUNQ ? "runq" :
				"blocked");
		if (s->tid)
			fprintf(out, ", \"tid\": %" PRIu32, s->tid);
		if (s->proc)
			fprintf(out, ", \"proc\": %" PRIu32, s->proc);
		fputc('}', out);
	}
	fputs(p->nstacks ? "\n  ],\n" : "],\n", out);
}

static void write_threads(const struct meter_profile *p, FILE *out)
{
	size_t i;

	fputs("  \"threads\": [", out);
	for (i = 0; i < p->nthreads; i++) {
		const struct meter_thread_row *t = &p->threads[i];

		fprintf(out, "%s\n    {\"tid\": %" PRIu32 ", \"samples\": %"
			PRIu64 ", \"exited\": %s", i ? "," : "", t->tid,
			t->samples, t->exited ? "true" : "false");
		if (t->pid)
			fprintf(out, ", \"pid\": %" PRId32, t->pid);
		if (t->folded)
			fprintf(out, ", \"folded\": %" PRIu32, t->folded);
		if (t->name[0]) {
			fputs(", \"name\": ", out);
			put_string(out, t->name);
		}
		fputc('}', out);
	}
	fputs(p->nthreads ? "\n  ]" : "]", out);
}

/*
 * the samples by address (absent: none); an address is a decimal
 * string, as a cookie is, exact where numbers are doubles
 */
static void write_addrs(const struct meter_profile *p, FILE *out)
{
	size_t i;

	if (p->naddrs)
		fputs(",\n  \"addresses\": [", out);
	for (i = 0; i < p->naddrs; i++) {
		const struct meter_addr *a = &p->addrs[i];

		fprintf(out, "%s\n    {\"ip\": \"%" PRIu64 "\", \"func\": %"
			PRIu32 ", \"samples\": %" PRIu64, i ? "," : "", a->ip,
			a->func, a->samples);
		if (a->proc)
			fprintf(out, ", \"proc\": %" PRIu32, a->proc);
		fputc('}', out);
	}
	if (p->naddrs)
		fputs("\n  ]", out);
}

/* the executable mappings (absent: none); addresses as strings */
static void write_maps(const struct meter_profile *p, FILE *out)
{
	size_t i;

	if (p->nmaps)
		fputs(",\n  \"maps\": [", out);
	for (i = 0; i < p->nmaps; i++) {
		const struct meter_map_row *m = &p->maps[i];

		fprintf(out, "%s\n    {\"start\": \"%" PRIu64 "\", \"end\": \"%"
			PRIu64 "\", \"pgoff\": \"%" PRIu64 "\", \"path\": ",
			i ? "," : "", m->start, m->end, m->pgoff);
		put_string(out, m->path);
		if (m->proc)
			fprintf(out, ", \"proc\": %" PRIu32, m->proc);
		fputc('}', out);
	}
	if (p->nmaps)
		fputs("\n  ]", out);
}

/* a merged profile's processes; a single process's file has none */
static void write_procs(const struct meter_profile *p, FILE *out)
{
	size_t i;

	if (p->nprocs)
		fputs(",\n  \"processes\": [", out);
	for (i = 0; i < p->nprocs; i++) {
		const struct meter_proc_row *r = &p->procs[i];

		fprintf(out, "%s\n    {\"pid\": %" PRId32 ", \"cookie\": \"%"
			PRIu64 "\", \"parent_cookie\": \"%" PRIu64
			"\", \"command\": ", i ? "," : "", r->pid, r->cookie,
			r->parent_cookie);
		put_string(out, r->command ? r->command : "");
		fprintf(out, ", \"samples\": %" PRIu64 ", \"calls\": %" PRIu64
			"}", r->samples, r->calls);
	}
	fputs(p->nprocs ? "\n  ]\n}\n" : "\n}\n", out);
}

int meter_profile_write_json(const struct meter_profile *p, FILE *out)
{
	write_header(p, out);
	write_functions(p, out);
	write_stacks(p, out);
	write_threads(p, out);
	write_addrs(p, out);
	write_maps(p, out);
	write_procs(p, out);
	if (fflush(out) || ferror(out))
		return -1;
	return 0;
}
