// SPDX-License-Identifier: MIT
/*
 * The JSON profile's reader (Documentation/json-format.md; the writer is
 * common/profile_write.c): it parses any JSON text into a small tree, then
 * checks it against the schema.  The reader never trusts its input: every error -- a syntax
 * error, a wrong type, an out-of-range number, a stack naming an unknown
 * function -- ends in NULL and one line saying what and where.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define JSON_DEPTH_MAX		64
#define JSON_INPUT_MAX		((size_t)1 << 31)	/* 2 GiB */

/* ------------------------------------------------------------------ */
/* Parser: JSON text -> tree                                           */
/* ------------------------------------------------------------------ */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	bool b;
	union {
		/* J_NUM: the literal's text (points into the input). */
		struct {
			const char *text;
			size_t len;
		} num;
		/* J_STR: a NUL-terminated copy (no embedded NUL allowed). */
		char *str;
		/* J_ARR, J_OBJ: elements; J_OBJ has keys parallel to them. */
		struct {
			struct jval *items;
			char **keys;
			size_t n, cap;
		} arr;
	} u;
};

struct parser {
	const char *s, *end, *p;
	char *err;
	size_t errlen;
	bool failed;
};

static void where(const struct parser *ps, const char *at, size_t *line,
		  size_t *col)
{
	const char *c;

	*line = 1;
	*col = 1;
	for (c = ps->s; c < at && c < ps->end; c++) {
		if (*c == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* Keeps an error message on one line whatever the input held. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

static void perr(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void perr(struct parser *ps, const char *fmt, ...)
{
	char msg[200];
	size_t line, col;
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->p >= ps->end) {
		snprintf(ps->err, ps->errlen,
			 "invalid JSON: unexpected end of input: %s", msg);
		one_line(ps->err);
		return;
	}
	where(ps, ps->p, &line, &col);
	snprintf(ps->err, ps->errlen, "invalid JSON at line %zu, column %zu: %s",
		 line, col, msg);
	one_line(ps->err);
}

static void jfree(struct jval *v)
{
	size_t i;

	if (!v)
		return;
	if (v->type == J_STR)
		free(v->u.str);
	if (v->type == J_ARR || v->type == J_OBJ) {
		for (i = 0; i < v->u.arr.n; i++) {
			jfree(&v->u.arr.items[i]);
			if (v->u.arr.keys)
				free(v->u.arr.keys[i]);
		}
		free(v->u.arr.items);
		free(v->u.arr.keys);
	}
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
				   *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static const char *describe(const struct parser *ps)
{
	static char buf[32];
	unsigned char c;

	if (ps->p >= ps->end)
		return "end of input";
	c = (unsigned char)*ps->p;
	if (c >= 0x21 && c < 0x7f)
		snprintf(buf, sizeof(buf), "'%c'", c);
	else
		snprintf(buf, sizeof(buf), "byte 0x%02x", c);
	return buf;
}

static int hex4(struct parser *ps, unsigned *out)
{
	unsigned v = 0;
	int i;

	if (ps->end - ps->p < 4) {
		ps->p = ps->end;
		perr(ps, "truncated \\u escape");
		return -1;
	}
	for (i = 0; i < 4; i++) {
		char c = ps->p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else {
			perr(ps, "bad \\u escape");
			return -1;
		}
	}
	ps->p += 4;
	*out = v;
	return 0;
}

static void put_utf8(char *buf, size_t *len, unsigned cp)
{
	if (cp < 0x80) {
		buf[(*len)++] = (char)cp;
	} else if (cp < 0x800) {
		buf[(*len)++] = (char)(0xc0 | (cp >> 6));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		buf[(*len)++] = (char)(0xe0 | (cp >> 12));
		buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		buf[(*len)++] = (char)(0xf0 | (cp >> 18));
		buf[(*len)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
		buf[(*len)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		buf[(*len)++] = (char)(0x80 | (cp & 0x3f));
	}
}

/* At the opening quote.  Returns a malloc'd string or NULL. */
static char *parse_string(struct parser *ps)
{
	const char *start;
	char *buf;
	size_t len = 0;

	ps->p++;	/* '"' */
	start = ps->p;
	/* The decoded string is never longer than the literal. */
	while (ps->p < ps->end && *ps->p != '"') {
		if (*ps->p == '\\' && ps->p + 1 < ps->end)
			ps->p++;
		ps->p++;
	}
	if (ps->p >= ps->end) {
		perr(ps, "unterminated string");
		return NULL;
	}
	buf = malloc((size_t)(ps->p - start) + 1);
	if (!buf) {
		perr(ps, "out of memory");
		return NULL;
	}
	ps->p = start;
	while (*ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p;

		if (c < 0x20) {
			perr(ps, "control character in string");
			goto fail;
		}
		if (c != '\\') {
			buf[len++] = (char)c;
			ps->p++;
			continue;
		}
		ps->p++;
		switch (*ps->p++) {
		case '"': buf[len++] = '"'; break;
		case '\\': buf[len++] = '\\'; break;
		case '/': buf[len++] = '/'; break;
		case 'b': buf[len++] = '\b'; break;
		case 'f': buf[len++] = '\f'; break;
		case 'n': buf[len++] = '\n'; break;
		case 'r': buf[len++] = '\r'; break;
		case 't': buf[len++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;

			if (hex4(ps, &cp))
				goto fail;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (ps->end - ps->p < 6 || ps->p[0] != '\\' ||
				    ps->p[1] != 'u') {
					perr(ps, "lone surrogate in \\u escape");
					goto fail;
				}
				ps->p += 2;
				if (hex4(ps, &lo))
					goto fail;
				if (lo < 0xdc00 || lo > 0xdfff) {
					perr(ps, "bad surrogate pair");
					goto fail;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				perr(ps, "lone surrogate in \\u escape");
				goto fail;
			}
			if (cp == 0) {
				perr(ps, "\\u0000 is not allowed in a string");
				goto fail;
			}
			put_utf8(buf, &len, cp);
			break;
		}
		default:
			ps->p--;
			perr(ps, "bad escape in string");
			goto fail;
		}
	}
	ps->p++;	/* '"' */
	buf[len] = '\0';
	return buf;
fail:
	free(buf);
	return NULL;
}

static int parse_value(struct parser *ps, struct jval *v, int depth);

static int add_item(struct parser *ps, struct jval *v, struct jval *item,
		    char *key)
{
	if (v->u.arr.n == v->u.arr.cap) {
		size_t ncap = v->u.arr.cap ? v->u.arr.cap * 2 : 8;
		struct jval *ni = realloc(v->u.arr.items, ncap * sizeof(*ni));

		if (!ni)
			goto oom;
		v->u.arr.items = ni;
		if (v->type == J_OBJ) {
			char **nk = realloc(v->u.arr.keys, ncap * sizeof(*nk));

			if (!nk)
				goto oom;
			v->u.arr.keys = nk;
		}
		v->u.arr.cap = ncap;
	}
	v->u.arr.items[v->u.arr.n] = *item;
	if (v->type == J_OBJ)
		v->u.arr.keys[v->u.arr.n] = key;
	v->u.arr.n++;
	return 0;
oom:
	perr(ps, "out of memory");
	jfree(item);
	free(key);
	return -1;
}

static int parse_array(struct parser *ps, struct jval *v, int depth)
{
	v->type = J_ARR;
	ps->p++;	/* '[' */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct jval item;

		if (parse_value(ps, &item, depth + 1))
			return -1;
		if (add_item(ps, v, &item, NULL))
			return -1;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			return 0;
		}
		perr(ps, "expected ',' or ']' in array, found %s",
		     describe(ps));
		return -1;
	}
}

static int parse_object(struct parser *ps, struct jval *v, int depth)
{
	v->type = J_OBJ;
	ps->p++;	/* '{' */
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return 0;
	}
	for (;;) {
		struct jval item;
		char *key;

		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '"') {
			perr(ps, "expected a string key in object, found %s",
			     describe(ps));
			return -1;
		}
		key = parse_string(ps);
		if (!key)
			return -1;
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':') {
			perr(ps, "expected ':' after key \"%.40s\", found %s",
			     key, describe(ps));
			free(key);
			return -1;
		}
		ps->p++;
		if (parse_value(ps, &item, depth + 1)) {
			free(key);
			return -1;
		}
		if (add_item(ps, v, &item, key))
			return -1;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			return 0;
		}
		perr(ps, "expected ',' or '}' in object, found %s",
		     describe(ps));
		return -1;
	}
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int parse_number(struct parser *ps, struct jval *v)
{
	const char *s = ps->p;

	v->type = J_NUM;
	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || !is_digit(*ps->p)) {
		perr(ps, "bad number");
		return -1;
	}
	if (*ps->p == '0' && ps->p + 1 < ps->end && is_digit(ps->p[1])) {
		perr(ps, "leading zero in number");
		return -1;
	}
	while (ps->p < ps->end && is_digit(*ps->p))
		ps->p++;
	if (ps->p < ps->end && *ps->p == '.') {
		ps->p++;
		if (ps->p >= ps->end || !is_digit(*ps->p)) {
			perr(ps, "bad fraction in number");
			return -1;
		}
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p >= ps->end || !is_digit(*ps->p)) {
			perr(ps, "bad exponent in number");
			return -1;
		}
		while (ps->p < ps->end && is_digit(*ps->p))
			ps->p++;
	}
	v->u.num.text = s;
	v->u.num.len = (size_t)(ps->p - s);
	return 0;
}

static int parse_literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n)) {
		perr(ps, "unexpected %s", describe(ps));
		return -1;
	}
	ps->p += n;
	return 0;
}

static int parse_value(struct parser *ps, struct jval *v, int depth)
{
	memset(v, 0, sizeof(*v));
	if (depth > JSON_DEPTH_MAX) {
		perr(ps, "nested deeper than %d levels", JSON_DEPTH_MAX);
		return -1;
	}
	skip_ws(ps);
	if (ps->p >= ps->end) {
		perr(ps, "expected a value");
		return -1;
	}
	switch (*ps->p) {
	case '{':
		if (parse_object(ps, v, depth)) {
			jfree(v);
			return -1;
		}
		return 0;
	case '[':
		if (parse_array(ps, v, depth)) {
			jfree(v);
			return -1;
		}
		return 0;
	case '"':
		v->type = J_STR;
		v->u.str = parse_string(ps);
		return v->u.str ? 0 : -1;
	case 't':
		v->type = J_BOOL;
		v->b = true;
		return parse_literal(ps, "true");
	case 'f':
		v->type = J_BOOL;
		return parse_literal(ps, "false");
	case 'n':
		v->type = J_NULL;
		return parse_literal(ps, "null");
	default:
		if (*ps->p == '-' || is_digit(*ps->p))
			return parse_number(ps, v);
		perr(ps, "unexpected %s", describe(ps));
		return -1;
	}
}

/* ------------------------------------------------------------------ */
/* Schema: tree -> profile                                             */
/* ------------------------------------------------------------------ */

struct schema {
	char *err;
	size_t errlen;
	bool failed;
};

static void serr(struct schema *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void serr(struct schema *sc, const char *fmt, ...)
{
	char msg[220];
	va_list ap;

	if (sc->failed)
		return;
	sc->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(sc->err, sc->errlen, "not a valid meter profile: %s", msg);
	one_line(sc->err);
}

static const struct jval *get(const struct jval *obj, const char *key)
{
	size_t i;

	/* The last one wins, as in most JSON readers. */
	for (i = obj->u.arr.n; i-- > 0;)
		if (!strcmp(obj->u.arr.keys[i], key))
			return &obj->u.arr.items[i];
	return NULL;
}

static const char *type_name(enum jtype t)
{
	static const char *const names[] = {
		"null", "a boolean", "a number", "a string", "an array",
		"an object",
	};
	return names[t];
}

/*
 * An unsigned integer no larger than max; absent is 0 unless required.
 * ctx names the enclosing element ("" or "functions[3]").
 */
static uint64_t get_uint(struct schema *sc, const struct jval *obj,
			 const char *ctx, const char *key, uint64_t max,
			 bool required)
{
	const struct jval *v = get(obj, key);
	uint64_t n = 0;
	size_t i;

	if (sc->failed)
		return 0;
	if (!v) {
		if (required)
			serr(sc, "%s%s\"%s\" is missing", ctx, *ctx ? ": " : "",
			     key);
		return 0;
	}
	if (v->type != J_NUM) {
		serr(sc, "%s%s\"%s\" must be a number, not %s", ctx,
		     *ctx ? ": " : "", key, type_name(v->type));
		return 0;
	}
	for (i = 0; i < v->u.num.len; i++) {
		unsigned d;

		if (!is_digit(v->u.num.text[i])) {
			serr(sc, "%s%s\"%s\" must be a non-negative integer, "
			     "not %.*s", ctx, *ctx ? ": " : "", key,
			     (int)(v->u.num.len > 30 ? 30 : v->u.num.len), v->u.num.text);
			return 0;
		}
		d = (unsigned)(v->u.num.text[i] - '0');
		if (n > (max - d) / 10) {
			serr(sc, "%s%s\"%s\" is out of range (at most %" PRIu64
			     ")", ctx, *ctx ? ": " : "", key, max);
			return 0;
		}
		n = n * 10 + d;
	}
	return n;
}

static bool get_bool(struct schema *sc, const struct jval *obj,
		     const char *ctx, const char *key)
{
	const struct jval *v = get(obj, key);

	if (sc->failed || !v)
		return false;
	if (v->type != J_BOOL) {
		serr(sc, "%s%s\"%s\" must be true or false, not %s", ctx,
		     *ctx ? ": " : "", key, type_name(v->type));
		return false;
	}
	return v->b;
}

static const struct jval *get_array(struct schema *sc, const struct jval *obj,
				    const char *key)
{
	const struct jval *v = get(obj, key);

	if (sc->failed)
		return NULL;
	if (!v) {
		serr(sc, "\"%s\" is missing", key);
		return NULL;
	}
	if (v->type != J_ARR) {
		serr(sc, "\"%s\" must be an array, not %s", key,
		     type_name(v->type));
		return NULL;
	}
	return v;
}

/* "clock" (absent: cpu) and, for the wall clock, the off-CPU parts. */
static int read_clock(struct schema *sc, const struct jval *root,
		      struct meter_profile *p)
{
	const struct jval *v = get(root, "clock");

	if (v && (v->type != J_STR || (strcmp(v->u.str, "cpu") &&
				       strcmp(v->u.str, "wall")))) {
		serr(sc, "\"clock\" must be \"cpu\" or \"wall\"");
		return -1;
	}
	p->wall = v && !strcmp(v->u.str, "wall");
	p->samples_off[METER_OFF_RUNQ] =
		get_uint(sc, root, "", "samples_runq", p->samples, false);
	p->samples_off[METER_OFF_BLOCKED] =
		get_uint(sc, root, "", "samples_blocked",
			 p->samples - p->samples_off[METER_OFF_RUNQ], false);
	if (!sc->failed && !p->wall &&
	    (p->samples_off[METER_OFF_RUNQ] ||
	     p->samples_off[METER_OFF_BLOCKED])) {
		serr(sc, "off-CPU samples in a profile whose \"clock\" is not \"wall\"");
		return -1;
	}
	return sc->failed ? -1 : 0;
}

/* A stack's "state": absent or "cpu", "runq", "blocked". */
static uint8_t read_state(struct schema *sc, const struct jval *o,
			  const char *ctx, const struct meter_profile *p)
{
	const struct jval *v = get(o, "state");

	if (!v || sc->failed)
		return METER_STATE_ONCPU;
	if (v->type == J_STR && p->wall) {
		if (!strcmp(v->u.str, "cpu"))
			return METER_STATE_ONCPU;
		if (!strcmp(v->u.str, "runq"))
			return 1 + METER_OFF_RUNQ;
		if (!strcmp(v->u.str, "blocked"))
			return 1 + METER_OFF_BLOCKED;
	}
	serr(sc, "%s: \"state\" must be \"cpu\", \"runq\" or \"blocked\", in a wall-clock profile",
	     ctx);
	return METER_STATE_ONCPU;
}

static int read_header(struct schema *sc, const struct jval *root,
		       struct meter_profile *p)
{
	const struct jval *v;
	uint64_t version;

	v = get(root, "format");
	if (!v || v->type != J_STR || strcmp(v->u.str, METER_JSON_FORMAT)) {
		serr(sc, "\"format\" is not \"%s\"", METER_JSON_FORMAT);
		return -1;
	}
	version = get_uint(sc, root, "", "version", UINT32_MAX, true);
	if (!sc->failed && version != METER_JSON_VERSION) {
		serr(sc, "version %" PRIu64 " is not supported (this reader "
		     "knows version %d)", version, METER_JSON_VERSION);
		return -1;
	}

	v = get(root, "command");
	if (v && v->type == J_STR) {
		p->command = strdup(v->u.str);
		if (!p->command) {
			serr(sc, "out of memory");
			return -1;
		}
	} else if (v && v->type != J_NULL) {
		serr(sc, "\"command\" must be a string or null");
		return -1;
	}
	v = get(root, "backend");
	if (v && v->type == J_STR) {
		if (strlen(v->u.str) >= sizeof(p->backend)) {
			serr(sc, "\"backend\" is longer than %zu characters",
			     sizeof(p->backend) - 1);
			return -1;
		}
		strcpy(p->backend, v->u.str);
	} else if (v) {
		serr(sc, "\"backend\" must be a string");
		return -1;
	}

	v = get(root, "pid");
	if (v && v->type == J_NUM && v->u.num.len && v->u.num.text[0] == '-') {
		struct jval neg = *v;
		uint64_t n;
		struct jval tmp = { .type = J_OBJ, .u.arr.n = 1 };
		char *k = "pid";

		neg.u.num.text++;
		neg.u.num.len--;
		tmp.u.arr.items = &neg;
		tmp.u.arr.keys = &k;
		n = get_uint(sc, &tmp, "", "pid", (uint64_t)INT32_MAX + 1,
			     true);
		p->pid = (int32_t)(-(int64_t)n);
	} else {
		p->pid = (int32_t)get_uint(sc, root, "", "pid", INT32_MAX,
					   false);
	}
	p->uid = (uint32_t)get_uint(sc, root, "", "uid", UINT32_MAX, false);
	p->cookie = get_uint(sc, root, "", "cookie", UINT64_MAX, false);
	p->parent_cookie = get_uint(sc, root, "", "parent_cookie", UINT64_MAX,
				    false);
	p->exited = get_bool(sc, root, "", "exited");
	p->runs = (uint32_t)get_uint(sc, root, "", "runs", UINT32_MAX, false);
	if (!p->runs)
		p->runs = 1;
	p->period_ns = get_uint(sc, root, "", "period_ns", UINT64_MAX, true);
	p->start_ns = get_uint(sc, root, "", "start_ns", UINT64_MAX, false);
	p->end_ns = get_uint(sc, root, "", "end_ns", UINT64_MAX, false);
	p->samples = get_uint(sc, root, "", "samples", UINT64_MAX, true);
	p->ticks = get_uint(sc, root, "", "ticks", UINT64_MAX, false);
	p->no_current = get_uint(sc, root, "", "no_current", UINT64_MAX,
				 false);
	p->invalid = get_uint(sc, root, "", "invalid", UINT64_MAX, false);
	p->lost = get_uint(sc, root, "", "lost", UINT64_MAX, false);
	p->truncated = get_uint(sc, root, "", "truncated", UINT64_MAX, false);
	p->call_cost_ps = get_uint(sc, root, "", "call_cost_ps", UINT64_MAX,
				   false);
	p->flat_call_cost_ps = get_uint(sc, root, "", "flat_call_cost_ps",
					UINT64_MAX, false);
	return sc->failed ? -1 : read_clock(sc, root, p);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int read_functions(struct schema *sc, const struct jval *root,
			  struct meter_profile *p)
{
	const struct jval *arr = get_array(sc, root, "functions");
	uint32_t *ids;
	size_t i;
	char ctx[48];

	if (!arr)
		return -1;
	for (i = 0; i < arr->u.arr.n; i++) {
		const struct jval *o = &arr->u.arr.items[i];
		const struct jval *name;
		struct meter_func *f;
		uint32_t id;

		snprintf(ctx, sizeof(ctx), "functions[%zu]", i);
		if (o->type != J_OBJ) {
			serr(sc, "%s must be an object, not %s", ctx,
			     type_name(o->type));
			return -1;
		}
		id = (uint32_t)get_uint(sc, o, ctx, "id", UINT32_MAX, true);
		name = get(o, "name");
		if (sc->failed)
			return -1;
		if (!id) {
			serr(sc, "%s: \"id\" must be at least 1", ctx);
			return -1;
		}
		if (!name || name->type != J_STR) {
			serr(sc, "%s: \"name\" must be a string", ctx);
			return -1;
		}
		f = meter_profile_add_func(p, id, name->u.str);
		if (!f) {
			serr(sc, "out of memory");
			return -1;
		}
		f->calls = get_uint(sc, o, ctx, "calls", UINT64_MAX, false);
		f->self_samples = get_uint(sc, o, ctx, "self_samples",
					   UINT64_MAX, false);
		f->total_samples = get_uint(sc, o, ctx, "total_samples",
					    UINT64_MAX, false);
		f->alloc_calls = get_uint(sc, o, ctx, "alloc_calls",
					  UINT64_MAX, false);
		f->alloc_bytes = get_uint(sc, o, ctx, "alloc_bytes",
					  UINT64_MAX, false);
		f->flat = get_bool(sc, o, ctx, "flat");
		f->self_off[METER_OFF_RUNQ] =
			get_uint(sc, o, ctx, "self_runq", f->self_samples,
				 false);
		f->self_off[METER_OFF_BLOCKED] =
			get_uint(sc, o, ctx, "self_blocked", f->self_samples -
				 f->self_off[METER_OFF_RUNQ], false);
		if (sc->failed)
			return -1;
		if (!p->wall && (f->self_off[0] || f->self_off[1])) {
			serr(sc, "%s: off-CPU samples in a profile whose \"clock\" is not \"wall\"",
			     ctx);
			return -1;
		}
	}
	/* Ids must be unique. */
	ids = malloc((p->nfuncs ? p->nfuncs : 1) * sizeof(*ids));
	if (!ids) {
		serr(sc, "out of memory");
		return -1;
	}
	for (i = 0; i < p->nfuncs; i++)
		ids[i] = p->funcs[i].id;
	qsort(ids, p->nfuncs, sizeof(*ids), cmp_u32);
	for (i = 1; i < p->nfuncs; i++) {
		if (ids[i] == ids[i - 1]) {
			serr(sc, "function id %" PRIu32 " appears twice",
			     ids[i]);
			free(ids);
			return -1;
		}
	}
	free(ids);
	return 0;
}

static int read_stacks(struct schema *sc, const struct jval *root,
		       struct meter_profile *p)
{
	const struct jval *arr = get_array(sc, root, "stacks");
	uint32_t *frames = NULL;
	size_t i, k;
	char ctx[48];

	if (!arr)
		return -1;
	for (i = 0; i < arr->u.arr.n; i++) {
		const struct jval *o = &arr->u.arr.items[i];
		const struct jval *fr;
		struct meter_stack *s;
		uint64_t samples;
		uint32_t *nf;

		snprintf(ctx, sizeof(ctx), "stacks[%zu]", i);
		if (o->type != J_OBJ) {
			serr(sc, "%s must be an object, not %s", ctx,
			     type_name(o->type));
			goto fail;
		}
		fr = get(o, "frames");
		if (!fr || fr->type != J_ARR) {
			serr(sc, "%s: \"frames\" must be an array", ctx);
			goto fail;
		}
		if (fr->u.arr.n > UINT32_MAX) {
			serr(sc, "%s: too many frames", ctx);
			goto fail;
		}
		nf = realloc(frames, (fr->u.arr.n ? fr->u.arr.n : 1) * sizeof(*frames));
		if (!nf) {
			serr(sc, "out of memory");
			goto fail;
		}
		frames = nf;
		for (k = 0; k < fr->u.arr.n; k++) {
			const struct jval *e = &fr->u.arr.items[k];
			struct jval tmp = { .type = J_OBJ, .u.arr.n = 1 };
			char *key = "frame";
			char fctx[96];

			tmp.u.arr.items = (struct jval *)e;
			tmp.u.arr.keys = &key;
			snprintf(fctx, sizeof(fctx), "%s.frames[%zu]", ctx, k);
			frames[k] = (uint32_t)get_uint(sc, &tmp, fctx, "frame",
						       UINT32_MAX, true);
			if (sc->failed)
				goto fail;
			if (!meter_profile_find(p, frames[k])) {
				serr(sc, "%s names function id %" PRIu32
				     ", which is not in \"functions\"", fctx,
				     frames[k]);
				goto fail;
			}
		}
		samples = get_uint(sc, o, ctx, "samples", UINT64_MAX, true);
		if (sc->failed)
			goto fail;
		s = meter_profile_add_stack(p, frames, (uint32_t)fr->u.arr.n,
					    samples);
		if (!s) {
			serr(sc, "out of memory");
			goto fail;
		}
		s->truncated = get_bool(sc, o, ctx, "truncated");
		s->state = read_state(sc, o, ctx, p);
		s->tid = (uint32_t)get_uint(sc, o, ctx, "tid", UINT32_MAX,
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

static int read_threads(struct schema *sc, const struct jval *root,
			struct meter_profile *p)
{
	const struct jval *arr = get(root, "threads");
	size_t i;
	char ctx[48];

	if (!arr)
		return 0;	/* optional */
	if (arr->type != J_ARR) {
		serr(sc, "\"threads\" must be an array, not %s",
		     type_name(arr->type));
		return -1;
	}
	for (i = 0; i < arr->u.arr.n; i++) {
		const struct jval *o = &arr->u.arr.items[i];
		struct meter_thread_row *t;
		uint32_t tid;
		uint64_t samples;

		snprintf(ctx, sizeof(ctx), "threads[%zu]", i);
		if (o->type != J_OBJ) {
			serr(sc, "%s must be an object, not %s", ctx,
			     type_name(o->type));
			return -1;
		}
		tid = (uint32_t)get_uint(sc, o, ctx, "tid", UINT32_MAX, true);
		samples = get_uint(sc, o, ctx, "samples", UINT64_MAX, false);
		if (sc->failed)
			return -1;
		t = meter_profile_add_thread(p, tid, samples);
		if (!t) {
			serr(sc, "out of memory");
			return -1;
		}
		t->exited = get_bool(sc, o, ctx, "exited");
		if (sc->failed)
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

			if (cap >= JSON_INPUT_MAX) {
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
	*len = n;
	return buf;
}

struct meter_profile *meter_profile_read_json(FILE *in, char *err,
					      size_t errlen)
{
	struct parser ps = { 0 };
	struct schema sc = { 0 };
	struct meter_profile *p = NULL;
	struct jval root;
	char dummy[2];
	size_t len;
	char *buf;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	buf = slurp(in, &len, err, errlen);
	if (!buf)
		return NULL;
	ps.s = ps.p = buf;
	ps.end = buf + len;
	ps.err = err;
	ps.errlen = errlen;
	skip_ws(&ps);
	if (ps.p >= ps.end) {
		snprintf(err, errlen, "empty input: not a meter JSON profile");
		free(buf);
		return NULL;
	}
	if (*ps.p != '{') {
		perr(&ps, "a meter profile is a JSON object, found %s",
		     describe(&ps));
		free(buf);
		return NULL;
	}
	if (parse_value(&ps, &root, 0)) {
		free(buf);
		return NULL;
	}
	skip_ws(&ps);
	if (ps.p < ps.end) {
		perr(&ps, "trailing data after the profile: %s",
		     describe(&ps));
		goto out;
	}

	sc.err = err;
	sc.errlen = errlen;
	p = meter_profile_new();
	if (!p) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (read_header(&sc, &root, p) || read_functions(&sc, &root, p) ||
	    read_stacks(&sc, &root, p) || read_threads(&sc, &root, p)) {
		meter_profile_free(p);
		p = NULL;
	}
out:
	jfree(&root);
	free(buf);
	return p;
}
