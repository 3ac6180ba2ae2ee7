// SPDX-License-Identifier: MIT
/*
 * The one writer of the JSON profile (Documentation/json-format.md): fixed
 * key order, integers only, so that the same profile always gives the same
 * bytes.  Shared by libmeter (the signal backend's file at exit) and the
 * tools (-f json, merge); it only writes, and reads nothing but the struct.
 *
 * The rows are written with the stream locked once and integers formatted
 * here: fprintf's parsing of its format, per number, was three quarters
 * of what meter-run spent on a profile (49 instructions a byte; the bench's
 * lua5.4 run, Documentation/performance.md).
 */
#include <inttypes.h>
#include <string.h>

#include "profile.h"

static void put(FILE *out, const char *s)
{
	fputs_unlocked(s, out);
}

static void put_u64(FILE *out, uint64_t v)
{
	char b[20];
	size_t n = sizeof(b);

	do {
		b[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	/* a call to fwrite costs more than the digits' stores */
	while (n < sizeof(b))
		putc_unlocked(b[n++], out);
}

static void put_i64(FILE *out, int64_t v)
{
	if (v < 0)
		putc_unlocked('-', out);
	put_u64(out, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

/* key, then v: key holds the separator, the quoted name and the colon */
static void put_key(FILE *out, const char *key, uint64_t v)
{
	put(out, key);
	put_u64(out, v);
}

/* the same, the value a decimal string (cookies, addresses) */
static void put_key_str(FILE *out, const char *key, uint64_t v)
{
	put(out, key);
	putc_unlocked('"', out);
	put_u64(out, v);
	putc_unlocked('"', out);
}

/* the characters that need no escape, as they are */
static bool json_plain(unsigned char c, bool in_script)
{
	return c >= 0x20 && c != 0x7f && c != '"' && c != '\\' &&
	       !(in_script && (c == '<' || c == '>' || c == '&' || c == 0xe2));
}

static void json_escape(FILE *out, const unsigned char **cp, bool in_script)
{
	const unsigned char *c = *cp;

	switch (*c) {
	case '"':
		put(out, "\\\"");
		break;
	case '\\':
		put(out, "\\\\");
		break;
	case '\n':
		put(out, "\\n");
		break;
	case '\t':
		put(out, "\\t");
		break;
	case '\r':
		put(out, "\\r");
		break;
	default:
		if (*c < 0x20 || *c == 0x7f ||
		    (in_script && (*c == '<' || *c == '>' || *c == '&'))) {
			fprintf(out, "\\u%04x", *c);
		} else if (in_script && c[0] == 0xe2 && c[1] == 0x80 &&
			   (c[2] == 0xa8 || c[2] == 0xa9)) {
			/* U+2028/9 end a line in older script parsers */
			fprintf(out, "\\u%04x", c[2] == 0xa8 ? 0x2028 :
				0x2029);
			c += 2;
		} else {
			putc_unlocked(*c, out);
		}
	}
	*cp = c + 1;
}

void meter_json_string(FILE *out, const char *s, bool in_script)
{
	const unsigned char *c = (const unsigned char *)s;

	flockfile(out);
	putc_unlocked('"', out);
	while (*c) {
		const unsigned char *run = c;

		while (*c && json_plain(*c, in_script))
			c++;
		fwrite_unlocked(run, 1, (size_t)(c - run), out);
		if (*c)
			json_escape(out, &c, in_script);
	}
	putc_unlocked('"', out);
	funlockfile(out);
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

	put(out, "  \"functions\": [");
	for (i = 0; i < p->nfuncs; i++) {
		const struct meter_func *f = &p->funcs[i];

		put_key(out, i ? ",\n    {\"id\": " : "\n    {\"id\": ", f->id);
		put(out, ", \"name\": ");
		put_string(out, f->name ? f->name : "");
		put_key(out, ", \"calls\": ", f->calls);
		put_key(out, ", \"self_samples\": ", f->self_samples);
		put_key(out, ", \"total_samples\": ", f->total_samples);
		put_key(out, ", \"alloc_calls\": ", f->alloc_calls);
		put_key(out, ", \"alloc_bytes\": ", f->alloc_bytes);
		if (p->wall) {
			put_key(out, ", \"self_runq\": ",
				f->self_off[METER_OFF_RUNQ]);
			put_key(out, ", \"self_blocked\": ",
				f->self_off[METER_OFF_BLOCKED]);
		}
		if (f->file) {
			put(out, ", \"file\": ");
			put_string(out, f->file);
		}
		if (f->line)
			put_key(out, ", \"line\": ", f->line);
		if (f->cost_ps)
			put_key(out, ", \"cost_ps\": ", f->cost_ps);
		if (f->refused) {
			put(out, ", \"refused\": ");
			put_string(out, f->refused);
		}
		put(out, f->flat ? ", \"flat\": true}" : "}");
	}
	put(out, p->nfuncs ? "\n  ],\n" : "],\n");
}

static void write_stacks(const struct meter_profile *p, FILE *out)
{
	size_t i, k;

	put(out, "  \"stacks\": [");
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		put(out, i ? ",\n    {\"frames\": [" : "\n    {\"frames\": [");
		for (k = 0; k < s->depth; k++)
			put_key(out, k ? ", " : "", s->frames[k]);
		put_key(out, "], \"samples\": ", s->samples);
		put(out, s->truncated ? ", \"truncated\": true" :
			", \"truncated\": false");
		if (s->state)
			put(out, s->state == 1 + METER_OFF_RUNQ ?
				", \"state\": \"runq\"" :
				", \"state\": \"blocked\"");
		if (s->tid)
			put_key(out, ", \"tid\": ", s->tid);
		if (s->proc)
			put_key(out, ", \"proc\": ", s->proc);
		putc_unlocked('}', out);
	}
	put(out, p->nstacks ? "\n  ],\n" : "],\n");
}

static void write_threads(const struct meter_profile *p, FILE *out)
{
	size_t i;

	put(out, "  \"threads\": [");
	for (i = 0; i < p->nthreads; i++) {
		const struct meter_thread_row *t = &p->threads[i];

		put_key(out, i ? ",\n    {\"tid\": " : "\n    {\"tid\": ",
			t->tid);
		put_key(out, ", \"samples\": ", t->samples);
		put(out, t->exited ? ", \"exited\": true" :
			", \"exited\": false");
		if (t->pid) {
			put(out, ", \"pid\": ");
			put_i64(out, t->pid);
		}
		if (t->folded)
			put_key(out, ", \"folded\": ", t->folded);
		if (t->name[0]) {
			put(out, ", \"name\": ");
			put_string(out, t->name);
		}
		putc_unlocked('}', out);
	}
	put(out, p->nthreads ? "\n  ]" : "]");
}

/*
 * the samples by address (absent: none); an address is a decimal
 * string, as a cookie is, exact where numbers are doubles
 */
static void write_addrs(const struct meter_profile *p, FILE *out)
{
	size_t i;

	if (p->naddrs)
		put(out, ",\n  \"addresses\": [");
	for (i = 0; i < p->naddrs; i++) {
		const struct meter_addr *a = &p->addrs[i];

		put_key_str(out, i ? ",\n    {\"ip\": " : "\n    {\"ip\": ",
			    a->ip);
		put_key(out, ", \"func\": ", a->func);
		put_key(out, ", \"samples\": ", a->samples);
		if (a->proc)
			put_key(out, ", \"proc\": ", a->proc);
		putc_unlocked('}', out);
	}
	if (p->naddrs)
		put(out, "\n  ]");
}

/* the executable mappings (absent: none); addresses as strings */
static void write_maps(const struct meter_profile *p, FILE *out)
{
	size_t i;

	if (p->nmaps)
		put(out, ",\n  \"maps\": [");
	for (i = 0; i < p->nmaps; i++) {
		const struct meter_map_row *m = &p->maps[i];

		put_key_str(out, i ? ",\n    {\"start\": " :
			    "\n    {\"start\": ", m->start);
		put_key_str(out, ", \"end\": ", m->end);
		put_key_str(out, ", \"pgoff\": ", m->pgoff);
		put(out, ", \"path\": ");
		put_string(out, m->path);
		if (m->proc)
			put_key(out, ", \"proc\": ", m->proc);
		putc_unlocked('}', out);
	}
	if (p->nmaps)
		put(out, "\n  ]");
}

/* a merged profile's processes; a single process's file has none */
static void write_procs(const struct meter_profile *p, FILE *out)
{
	size_t i;

	if (p->nprocs)
		put(out, ",\n  \"processes\": [");
	for (i = 0; i < p->nprocs; i++) {
		const struct meter_proc_row *r = &p->procs[i];

		put(out, i ? ",\n    {\"pid\": " : "\n    {\"pid\": ");
		put_i64(out, r->pid);
		put_key_str(out, ", \"cookie\": ", r->cookie);
		put_key_str(out, ", \"parent_cookie\": ", r->parent_cookie);
		put(out, ", \"command\": ");
		put_string(out, r->command ? r->command : "");
		put_key(out, ", \"samples\": ", r->samples);
		put_key(out, ", \"calls\": ", r->calls);
		putc_unlocked('}', out);
	}
	put(out, p->nprocs ? "\n  ]\n}\n" : "\n}\n");
}

int meter_profile_write_json(const struct meter_profile *p, FILE *out)
{
	int err;

	flockfile(out);
	write_header(p, out);
	write_functions(p, out);
	write_stacks(p, out);
	write_threads(p, out);
	write_addrs(p, out);
	write_maps(p, out);
	write_procs(p, out);
	err = fflush_unlocked(out) || ferror_unlocked(out);
	funlockfile(out);
	return err ? -1 : 0;
}
