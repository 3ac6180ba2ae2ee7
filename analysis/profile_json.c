// SPDX-License-Identifier: MIT
/*
 * The JSON profile's reader (Documentation/json-format.md; the writer is
 * common/profile_write.c).  json-c parses the text (strict mode, bounded
 * depth); this file checks the tree against the schema.  The reader never
 * trusts its input: every error -- a syntax error, a wrong type, an
 * out-of-range number, a stack naming an unknown function -- ends in NULL
 * and one line saying what and where.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "json_addrs.h"
#include "json_schema.h"
#include "model.h"

#define JSON_DEPTH_MAX		64
#define JSON_DEPTH_TEXT		"64"
/* json-c takes the length as an int */
#define JSON_INPUT_MAX		((size_t)INT_MAX)

/* The 1-based line and column of byte off of s. */
static void where(const char *s, size_t off, size_t *line, size_t *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Schema: tree -> profile                                             */
/* ------------------------------------------------------------------ */

/* "clock" (absent: cpu) and, for the wall clock, the off-CPU parts. */
static int read_clock(struct schema *sc, struct json_object *root,
		      struct meter_profile *p)
{
	struct json_object *v = js_get(root, "clock");
	const char *c = js_str_value(sc, v);

	if (v && (!c || (strcmp(c, "cpu") && strcmp(c, "wall")))) {
		js_serr(sc, "\"clock\" must be \"cpu\" or \"wall\"");
		return -1;
	}
	p->wall = c && !strcmp(c, "wall");
	p->samples_off[METER_OFF_RUNQ] =
		js_get_uint(sc, root, "", "samples_runq", p->samples, false);
	p->samples_off[METER_OFF_BLOCKED] =
		js_get_uint(sc, root, "", "samples_blocked",
			 p->samples - p->samples_off[METER_OFF_RUNQ], false);
	if (!sc->failed && !p->wall &&
	    (p->samples_off[METER_OFF_RUNQ] ||
	     p->samples_off[METER_OFF_BLOCKED])) {
		js_serr(sc, "off-CPU samples in a profile whose \"clock\" is not \"wall\"");
		return -1;
	}
	return sc->failed ? -1 : 0;
}

/* A stack's "state": absent or "cpu", "runq", "blocked". */
static uint8_t read_state(struct schema *sc, struct json_object *o,
			  const char *ctx, const struct meter_profile *p)
{
	struct json_object *v = js_get(o, "state");
	const char *st = js_str_value(sc, v);

	if (!v || sc->failed)
		return METER_STATE_ONCPU;
	if (st && p->wall) {
		if (!strcmp(st, "cpu"))
			return METER_STATE_ONCPU;
		if (!strcmp(st, "runq"))
			return 1 + METER_OFF_RUNQ;
		if (!strcmp(st, "blocked"))
			return 1 + METER_OFF_BLOCKED;
	}
	js_serr(sc, "%s: \"state\" must be \"cpu\", \"runq\" or \"blocked\", in a wall-clock profile",
	     ctx);
	return METER_STATE_ONCPU;
}

/* "pid": a signed 32-bit integer (a merge of nothing writes -1). */
/* obj's "pid", a signed 32-bit integer; absent is 0. */
static int32_t read_pid(struct schema *sc, struct json_object *obj,
			const char *ctx)
{
	struct json_object *v = js_get(obj, "pid");
	const char *sep = *ctx ? ": " : "";
	int64_t n;

	if (!v || sc->failed)
		return 0;
	if (!js_is_type(v, json_type_int)) {
		js_serr(sc, "%s%s\"pid\" must be an integer, not %.30s", ctx, sep,
		     json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
		return 0;
	}
	n = json_object_get_int64(v);
	if (n < INT32_MIN || n > INT32_MAX) {
		js_serr(sc, "%s%s\"pid\" is out of range (a signed 32-bit "
		     "integer)", ctx, sep);
		return 0;
	}
	return (int32_t)n;
}

static int read_header(struct schema *sc, struct json_object *root,
		       struct meter_profile *p)
{
	struct json_object *v;
	const char *str;
	uint64_t version;

	str = js_str_value(sc, js_get(root, "format"));
	if (!str || strcmp(str, METER_JSON_FORMAT)) {
		js_serr(sc, "\"format\" is not \"%s\"", METER_JSON_FORMAT);
		return -1;
	}
	version = js_get_uint(sc, root, "", "version", UINT32_MAX, true);
	if (!sc->failed && version != METER_JSON_VERSION) {
		js_serr(sc, "version %" PRIu64 " is not supported (this reader "
		     "knows version %d)", version, METER_JSON_VERSION);
		return -1;
	}

	v = js_get(root, "command");
	str = js_str_value(sc, v);
	if (str) {
		p->command = strdup(str);
		if (!p->command) {
			js_serr(sc, "out of memory");
			return -1;
		}
	} else if (v && !js_is_type(v, json_type_null)) {
		js_serr(sc, "\"command\" must be a string or null");
		return -1;
	}
	v = js_get(root, "backend");
	str = js_str_value(sc, v);
	if (str) {
		if (strlen(str) >= sizeof(p->backend)) {
			js_serr(sc, "\"backend\" is longer than %zu characters",
			     sizeof(p->backend) - 1);
			return -1;
		}
		strcpy(p->backend, str);
	} else if (v) {
		js_serr(sc, "\"backend\" must be a string");
		return -1;
	}

	p->pid = read_pid(sc, root, "");
	p->uid = (uint32_t)js_get_uint(sc, root, "", "uid", UINT32_MAX, false);
	p->cookie = js_get_uint_as(sc, root, "", "cookie", UINT64_MAX, false,
				true);
	p->parent_cookie = js_get_uint_as(sc, root, "", "parent_cookie",
				       UINT64_MAX, false, true);
	p->exited = js_get_bool(sc, root, "", "exited");
	p->runs = (uint32_t)js_get_uint(sc, root, "", "runs", UINT32_MAX, false);
	if (!p->runs)
		p->runs = 1;
	p->period_ns = js_get_uint(sc, root, "", "period_ns", UINT64_MAX, true);
	p->start_ns = js_get_uint(sc, root, "", "start_ns", UINT64_MAX, false);
	p->end_ns = js_get_uint(sc, root, "", "end_ns", UINT64_MAX, false);
	p->samples = js_get_uint(sc, root, "", "samples", UINT64_MAX, true);
	p->ticks = js_get_uint(sc, root, "", "ticks", UINT64_MAX, false);
	p->no_current = js_get_uint(sc, root, "", "no_current", UINT64_MAX,
				 false);
	p->invalid = js_get_uint(sc, root, "", "invalid", UINT64_MAX, false);
	p->lost = js_get_uint(sc, root, "", "lost", UINT64_MAX, false);
	p->truncated = js_get_uint(sc, root, "", "truncated", UINT64_MAX, false);
	p->call_cost_ps = js_get_uint(sc, root, "", "call_cost_ps", UINT64_MAX,
				   false);
	p->flat_call_cost_ps = js_get_uint(sc, root, "", "flat_call_cost_ps",
					UINT64_MAX, false);
	p->slow_entries = js_get_uint(sc, root, "", "slow_entries", UINT64_MAX,
				   false);
	p->stretched_ticks = js_get_uint(sc, root, "", "stretched_ticks",
				      UINT64_MAX, false);
	p->unsampled_ns = js_get_uint(sc, root, "", "unsampled_ns", UINT64_MAX,
				   false);
	p->addrs_lost = js_get_uint(sc, root, "", "addresses_lost", UINT64_MAX,
				    false);
	return sc->failed ? -1 : read_clock(sc, root, p);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* A function's "file" and "line" (optional): where it is defined. */
/* An optional string member into *out (NULL when absent). */
static int read_opt_string(struct schema *sc, struct json_object *o,
			   const char *ctx, const char *key, char **out)
{
	struct json_object *v = js_get(o, key);
	const char *s;

	if (!v)
		return 0;
	s = js_str_value(sc, v);
	if (!s) {
		if (!sc->failed)
			js_serr(sc, "%s: \"%s\" must be a string", ctx, key);
		return -1;
	}
	*out = strdup(s);
	if (!*out) {
		js_serr(sc, "out of memory");
		return -1;
	}
	return 0;
}

static int read_source(struct schema *sc, struct json_object *o,
		       const char *ctx, struct meter_func *f)
{

	f->line = (uint32_t)js_get_uint(sc, o, ctx, "line", UINT32_MAX, false);
	f->cost_ps = js_get_uint(sc, o, ctx, "cost_ps", UINT64_MAX, false);
	if (sc->failed)
		return -1;
	if (read_opt_string(sc, o, ctx, "file", &f->file))
		return -1;
	return read_opt_string(sc, o, ctx, "refused", &f->refused);
}

static int read_functions(struct schema *sc, struct json_object *root,
			  struct meter_profile *p)
{
	struct json_object *arr = js_get_array(sc, root, "functions");
	uint32_t *ids;
	size_t i, n;
	char ctx[48];

	if (!arr)
		return -1;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		const char *name;
		struct meter_func *f;
		uint32_t id;

		snprintf(ctx, sizeof(ctx), "functions[%zu]", i);
		if (!js_is_type(o, json_type_object)) {
			js_serr(sc, "%s must be an object, not %s", ctx,
			     js_type_name(o));
			return -1;
		}
		id = (uint32_t)js_get_uint(sc, o, ctx, "id", UINT32_MAX, true);
		name = js_str_value(sc, js_get(o, "name"));
		if (sc->failed)
			return -1;
		if (!id) {
			js_serr(sc, "%s: \"id\" must be at least 1", ctx);
			return -1;
		}
		if (!name) {
			js_serr(sc, "%s: \"name\" must be a string", ctx);
			return -1;
		}
		f = meter_profile_add_func(p, id, name);
		if (!f) {
			js_serr(sc, "out of memory");
			return -1;
		}
		f->calls = js_get_uint(sc, o, ctx, "calls", UINT64_MAX, false);
		f->self_samples = js_get_uint(sc, o, ctx, "self_samples",
					   UINT64_MAX, false);
		f->total_samples = js_get_uint(sc, o, ctx, "total_samples",
					    UINT64_MAX, false);
		f->alloc_calls = js_get_uint(sc, o, ctx, "alloc_calls",
					  UINT64_MAX, false);
		f->alloc_bytes = js_get_uint(sc, o, ctx, "alloc_bytes",
					  UINT64_MAX, false);
		f->flat = js_get_bool(sc, o, ctx, "flat");
		if (read_source(sc, o, ctx, f))
			return -1;
		f->self_off[METER_OFF_RUNQ] =
			js_get_uint(sc, o, ctx, "self_runq", f->self_samples,
				 false);
		f->self_off[METER_OFF_BLOCKED] =
			js_get_uint(sc, o, ctx, "self_blocked", f->self_samples -
				 f->self_off[METER_OFF_RUNQ], false);
		if (sc->failed)
			return -1;
		if (!p->wall && (f->self_off[0] || f->self_off[1])) {
			js_serr(sc, "%s: off-CPU samples in a profile whose \"clock\" is not \"wall\"",
			     ctx);
			return -1;
		}
	}
	/* Ids must be unique. */
	ids = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*ids));
	if (!ids) {
		js_serr(sc, "out of memory");
		return -1;
	}
	for (i = 0; i < p->nfuncs; i++)
		ids[i] = p->funcs[i].id;
	qsort(ids, p->nfuncs, sizeof(*ids), cmp_u32);
	for (i = 1; i < p->nfuncs; i++) {
		if (ids[i] == ids[i - 1]) {
			js_serr(sc, "function id %" PRIu32 " appears twice",
			     ids[i]);
			free(ids);
			return -1;
		}
	}
	free(ids);
	return 0;
}

static int read_stacks(struct schema *sc, struct json_object *root,
		       struct meter_profile *p)
{
	struct json_object *arr = js_get_array(sc, root, "stacks");
	uint32_t *frames = NULL;
	size_t i, k, n, depth;
	char ctx[48];

	if (!arr)
		return -1;
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		struct json_object *fr;
		struct meter_stack *s;
		uint64_t samples;
		uint32_t *nf;

		snprintf(ctx, sizeof(ctx), "stacks[%zu]", i);
		if (!js_is_type(o, json_type_object)) {
			js_serr(sc, "%s must be an object, not %s", ctx,
			     js_type_name(o));
			goto fail;
		}
		fr = js_get(o, "frames");
		if (!js_is_type(fr, json_type_array)) {
			js_serr(sc, "%s: \"frames\" must be an array", ctx);
			goto fail;
		}
		depth = json_object_array_length(fr);
		if (depth > UINT32_MAX) {
			js_serr(sc, "%s: too many frames", ctx);
			goto fail;
		}
		nf = realloc(frames, (depth ? depth : 1) * sizeof(*frames));
		if (!nf) {
			js_serr(sc, "out of memory");
			goto fail;
		}
		frames = nf;
		for (k = 0; k < depth; k++) {
			frames[k] = (uint32_t)js_elem_uint(sc,
				json_object_array_get_idx(fr, k), ctx,
				"frames", k, UINT32_MAX);
			if (sc->failed)
				goto fail;
			if (!meter_profile_find(p, frames[k])) {
				js_serr(sc, "%s.frames[%zu] names function id %"
				     PRIu32 ", which is not in \"functions\"",
				     ctx, k, frames[k]);
				goto fail;
			}
		}
		samples = js_get_uint(sc, o, ctx, "samples", UINT64_MAX, true);
		if (sc->failed)
			goto fail;
		s = meter_profile_add_stack(p, frames, (uint32_t)depth,
					    samples);
		if (!s) {
			js_serr(sc, "out of memory");
			goto fail;
		}
		s->truncated = js_get_bool(sc, o, ctx, "truncated");
		s->state = read_state(sc, o, ctx, p);
		s->tid = (uint32_t)js_get_uint(sc, o, ctx, "tid", UINT32_MAX,
					    false);
		/* checked against "processes" once they are read */
		s->proc = (uint32_t)js_get_uint(sc, o, ctx, "proc", 0xffffff,
					     false);
		if (sc->failed)
			goto fail;
	}
	free(frames);
	return 0;
fail:
	free(frames);
	return -1;
}

/* A thread's "name" (optional): a string, kept as the model keeps it. */
static int read_thread_name(struct schema *sc, struct json_object *o,
			    const char *ctx, struct meter_thread_row *t)
{
	struct json_object *v = js_get(o, "name");
	const char *s;

	if (sc->failed)
		return -1;
	if (!v)
		return 0;
	s = js_str_value(sc, v);
	if (!s) {
		if (!sc->failed)
			js_serr(sc, "%s: \"name\" must be a string", ctx);
		return -1;
	}
	meter_thread_name_set(t, s, strlen(s));
	return 0;
}

static int read_threads(struct schema *sc, struct json_object *root,
			struct meter_profile *p)
{
	struct json_object *arr = js_get(root, "threads");
	size_t i, n;
	char ctx[48];

	if (!arr)
		return 0;	/* optional */
	if (!js_is_type(arr, json_type_array)) {
		js_serr(sc, "\"threads\" must be an array, not %s",
		     js_type_name(arr));
		return -1;
	}
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(arr, i);
		struct meter_thread_row *t;
		uint32_t tid;
		uint64_t samples;

		snprintf(ctx, sizeof(ctx), "threads[%zu]", i);
		if (!js_is_type(o, json_type_object)) {
			js_serr(sc, "%s must be an object, not %s", ctx,
			     js_type_name(o));
			return -1;
		}
		tid = (uint32_t)js_get_uint(sc, o, ctx, "tid", UINT32_MAX, true);
		samples = js_get_uint(sc, o, ctx, "samples", UINT64_MAX, false);
		if (sc->failed)
			return -1;
		t = meter_profile_add_thread(p, tid, samples);
		if (!t) {
			js_serr(sc, "out of memory");
			return -1;
		}
		t->exited = js_get_bool(sc, o, ctx, "exited");
		t->pid = read_pid(sc, o, ctx);
		t->folded = (uint32_t)js_get_uint(sc, o, ctx, "folded",
						  UINT32_MAX, false);
		if (read_thread_name(sc, o, ctx, t))
			return -1;
	}
	return 0;
}

/* A merged profile's "processes" (optional). */
static int read_procs(struct schema *sc, struct json_object *root,
		      struct meter_profile *p)
{
	struct json_object *arr;
	size_t i, n = js_opt_array_len(sc, root, "processes", &arr);
	char ctx[48];

	if (sc->failed)
		return -1;
	for (i = 0; i < n; i++) {
		struct json_object *o, *c;
		struct meter_proc_row *r;
		const char *cmd;

		snprintf(ctx, sizeof(ctx), "processes[%zu]", i);
		o = js_object_at(sc, arr, i, ctx);
		if (!o)
			return -1;
		c = js_get(o, "command");
		cmd = js_str_value(sc, c);
		if (sc->failed)
			return -1;
		if (c && !cmd) {
			js_serr(sc, "%s: \"command\" must be a string", ctx);
			return -1;
		}
		r = meter_profile_add_proc(p, read_pid(sc, o, ctx), cmd);
		if (!r) {
			js_serr(sc, "out of memory");
			return -1;
		}
		r->cookie = js_get_uint_as(sc, o, ctx, "cookie", UINT64_MAX,
					false, true);
		r->parent_cookie = js_get_uint_as(sc, o, ctx, "parent_cookie",
					       UINT64_MAX, false, true);
		r->samples = js_get_uint(sc, o, ctx, "samples", UINT64_MAX, true);
		r->calls = js_get_uint(sc, o, ctx, "calls", UINT64_MAX, false);
		if (sc->failed)
			return -1;
	}
	for (i = 0; i < p->nstacks; i++)
		if (p->stacks[i].proc > p->nprocs) {
			js_serr(sc, "stacks[%zu]: \"proc\" %" PRIu32 " names no "
			     "process (%zu listed)", i, p->stacks[i].proc,
			     p->nprocs);
			return -1;
		}
	for (i = 0; i < p->naddrs; i++)
		if (p->addrs[i].proc > p->nprocs) {
			js_serr(sc, "addresses[%zu]: \"proc\" %" PRIu32 " names "
				"no process (%zu listed)", i, p->addrs[i].proc,
				p->nprocs);
			return -1;
		}
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].proc > p->nprocs) {
			js_serr(sc, "maps[%zu]: \"proc\" %" PRIu32 " names no "
				"process (%zu listed)", i, p->maps[i].proc,
				p->nprocs);
			return -1;
		}
	return 0;
}

static char *slurp(FILE *in, size_t *len, char *err, size_t errlen)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *nb;

			if (cap > JSON_INPUT_MAX) {
				snprintf(err, errlen, "input larger than %zu "
					 "bytes", JSON_INPUT_MAX);
				free(buf);
				return NULL;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		got = fread(buf + n, 1, cap - n, in);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(in)) {
		snprintf(err, errlen, "read error: %s", strerror(errno));
		free(buf);
		return NULL;
	}
	if (n > JSON_INPUT_MAX) {
		snprintf(err, errlen, "input larger than %zu bytes",
			 JSON_INPUT_MAX);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

/*
 * The text to a tree, or NULL and the error: json-c's, placed by line and
 * column.  Strict mode; a NUL byte is refused before json-c sees it.
 */
static struct json_object *parse(const char *buf, size_t len, char *err,
				 size_t errlen)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH_MAX);
	const char *nul = memchr(buf, 0, len);
	enum json_tokener_error e;
	struct json_object *root;
	size_t line, col, off = 0;

	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = nul ? NULL : json_tokener_parse_ex(tok, buf, (int)len);
	e = nul ? json_tokener_success : json_tokener_get_error(tok);
	if (!nul && !root && e == json_tokener_success)
		e = json_tokener_continue;	/* a number at the very end */
	if (nul) {
		off = (size_t)(nul - buf);
	} else if (e != json_tokener_success) {
		off = json_tokener_get_parse_end(tok);
	} else {
		/* whitespace after the object is all that may follow */
		for (off = json_tokener_get_parse_end(tok); off < len &&
		     strchr(" \t\r\n", buf[off]); off++)
			;
	}
	json_tokener_free(tok);
	if (!nul && e == json_tokener_continue) {
		snprintf(err, errlen,
			 "invalid JSON: unexpected end of input");
		return NULL;
	}
	if (!nul && e == json_tokener_success && off == len)
		return root;
	json_object_put(root);
	where(buf, off, &line, &col);
	snprintf(err, errlen, "invalid JSON at line %zu, column %zu: %s",
		 line, col, nul ? "a NUL byte" :
		 e == json_tokener_error_depth ?
		 "nested deeper than " JSON_DEPTH_TEXT " levels" :
		 e != json_tokener_success ? json_tokener_error_desc(e) :
		 "trailing data after the profile");
	js_one_line(err);
	return NULL;
}

struct meter_profile *meter_profile_read_json(FILE *in, char *err,
					      size_t errlen)
{
	struct schema sc = { 0 };
	struct meter_profile *p = NULL;
	struct json_object *root;
	char dummy[2];
	size_t len, i;
	char *buf;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	buf = slurp(in, &len, err, errlen);
	if (!buf)
		return NULL;
	for (i = 0; i < len && buf[i] && strchr(" \t\r\n", buf[i]); i++)
		;
	if (i == len) {
		snprintf(err, errlen, "empty input: not a meter JSON profile");
		free(buf);
		return NULL;
	}
	if (buf[i] != '{') {
		snprintf(err, errlen, "a meter profile is a JSON object, found %s",
			 buf[i] == '[' ? "an array" : "something else");
		free(buf);
		return NULL;
	}
	root = parse(buf, len, err, errlen);
	free(buf);
	if (!root)
		return NULL;
	sc.err = err;
	sc.errlen = errlen;
	p = meter_profile_new();
	if (!p) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (read_header(&sc, root, p) || read_functions(&sc, root, p) ||
	    read_stacks(&sc, root, p) || read_threads(&sc, root, p) ||
	    json_read_addrs(&sc, root, p) || json_read_maps(&sc, root, p) ||
	    read_procs(&sc, root, p) ||
	    meter_profile_check_sums(p, err, errlen)) {
		meter_profile_free(p);
		p = NULL;
	}
out:
	json_object_put(root);
	return p;
}
