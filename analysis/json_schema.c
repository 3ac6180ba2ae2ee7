// SPDX-License-Identifier: MIT
/*
 * The JSON reader's schema checks (json_schema.h): a value of the wanted
 * type, or the first error in one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json_schema.h"

void js_one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

void js_serr(struct schema *sc, const char *fmt, ...)
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
	js_one_line(sc->err);
}

struct json_object *js_get(struct json_object *obj, const char *key)
{
	struct json_object *v = NULL;

	/* a repeated key: the last one wins (json-c keeps the last) */
	return json_object_object_get_ex(obj, key, &v) ? v : NULL;
}

const char *js_type_name(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "a boolean";
	case json_type_double:
	case json_type_int:
		return "a number";
	case json_type_string:
		return "a string";
	case json_type_array:
		return "an array";
	default:
		return "an object";
	}
}

bool js_is_type(struct json_object *v, enum json_type t)
{
	return v && json_object_get_type(v) == t;
}

/* A string value, or NULL; one holding \u0000 is an error. */
const char *js_str_value(struct schema *sc, struct json_object *v)
{
	const char *s;

	if (!js_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	if (strlen(s) != (size_t)json_object_get_string_len(v)) {
		js_serr(sc, "a string holds \\u0000, which the reader refuses");
		return NULL;
	}
	return s;
}

/* What an unsigned integer value can be found to be. */
enum uint_fault {
	UINT_OK,
	UINT_BAD_STRING,	/* as_string: not a decimal of at most max */
	UINT_NEGATIVE,		/* a fraction or below zero */
	UINT_NOT_NUMBER,
	UINT_TOO_BIG,
};

/*
 * v's value into *n, or the fault; json-c saturates integers past
 * 2^64 - 1 to 2^64 - 1, so that value is refused too: an overflow cannot
 * pass for it.  as_string also takes a decimal string (cookies: exact in
 * jq and JavaScript, which read numbers as doubles).
 */
static enum uint_fault uint_of(struct schema *sc, struct json_object *v,
			       uint64_t max, bool as_string, uint64_t *n)
{
	if (as_string && js_is_type(v, json_type_string)) {
		const char *s = js_str_value(sc, v);
		char *end;

		errno = 0;
		*n = s && *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
		if (!s || *s < '0' || *s > '9' || *end || errno || *n > max)
			return UINT_BAD_STRING;
		return UINT_OK;
	}
	if (js_is_type(v, json_type_double) ||
	    (js_is_type(v, json_type_int) && json_object_get_int64(v) < 0))
		return UINT_NEGATIVE;
	if (!js_is_type(v, json_type_int))
		return UINT_NOT_NUMBER;
	*n = json_object_get_uint64(v);
	return *n > max ? UINT_TOO_BIG : UINT_OK;
}

/* The error of fault f of v, which what names. */
static void uint_error(struct schema *sc, struct json_object *v,
		       const char *what, uint64_t max, enum uint_fault f)
{
	const char *s = js_is_type(v, json_type_string) ?
		json_object_get_string(v) : "";

	switch (f) {
	case UINT_BAD_STRING:
		js_serr(sc, "%s must be a decimal integer of at most %" PRIu64
			", not \"%.30s\"", what, max, s);
		break;
	case UINT_NEGATIVE:
		js_serr(sc, "%s must be a non-negative integer, not %.30s", what,
			json_object_to_json_string_ext(v,
						       JSON_C_TO_STRING_PLAIN));
		break;
	case UINT_NOT_NUMBER:
		js_serr(sc, "%s must be a number, not %s", what,
			js_type_name(v));
		break;
	case UINT_TOO_BIG:
		js_serr(sc, "%s is out of range (at most %" PRIu64 ")", what,
			max);
		break;
	case UINT_OK:
		break;
	}
}

/*
 * Element k of ctx's array arr, an unsigned integer no larger than max;
 * an error names it ("stacks[3].frames[2]").
 */
uint64_t js_elem_uint(struct schema *sc, struct json_object *v,
			  const char *ctx, const char *arr, size_t k,
			  uint64_t max)
{
	enum uint_fault f;
	char what[96];
	uint64_t n = 0;

	if (max == UINT64_MAX)
		max = UINT64_MAX - 1;
	f = uint_of(sc, v, max, false, &n);
	if (f == UINT_OK)
		return n;
	snprintf(what, sizeof(what), "%s.%s[%zu]", ctx, arr, k);
	uint_error(sc, v, what, max, f);
	return 0;
}

/*
 * obj's key as an unsigned integer no larger than max; absent is 0 unless
 * required.  ctx names the enclosing element ("" or "functions[3]"), put
 * into words only for an error: a profile has tens of thousands of keys.
 */
uint64_t js_get_uint_as(struct schema *sc, struct json_object *obj,
			    const char *ctx, const char *key, uint64_t max,
			    bool required, bool as_string)
{
	struct json_object *v = js_get(obj, key);
	enum uint_fault f;
	char what[120];
	uint64_t n = 0;

	if (sc->failed)
		return 0;
	if (!v) {
		if (required)
			js_serr(sc, "%s%s\"%s\" is missing", ctx, *ctx ? ": " : "",
			     key);
		return 0;
	}
	if (max == UINT64_MAX && !as_string)
		max = UINT64_MAX - 1;
	f = uint_of(sc, v, max, as_string, &n);
	if (f == UINT_OK)
		return n;
	snprintf(what, sizeof(what), "%s%s\"%s\"", ctx, *ctx ? ": " : "", key);
	uint_error(sc, v, what, max, f);
	return 0;
}

uint64_t js_get_uint(struct schema *sc, struct json_object *obj,
			 const char *ctx, const char *key, uint64_t max,
			 bool required)
{
	return js_get_uint_as(sc, obj, ctx, key, max, required, false);
}

bool js_get_bool(struct schema *sc, struct json_object *obj,
		     const char *ctx, const char *key)
{
	struct json_object *v = js_get(obj, key);

	if (sc->failed || !v)
		return false;
	if (!js_is_type(v, json_type_boolean)) {
		js_serr(sc, "%s%s\"%s\" must be true or false, not %s", ctx,
		     *ctx ? ": " : "", key, js_type_name(v));
		return false;
	}
	return json_object_get_boolean(v);
}

struct json_object *js_get_array(struct schema *sc,
				     struct json_object *obj, const char *key)
{
	struct json_object *v = js_get(obj, key);

	if (sc->failed)
		return NULL;
	if (!v) {
		js_serr(sc, "\"%s\" is missing", key);
		return NULL;
	}
	if (!js_is_type(v, json_type_array)) {
		js_serr(sc, "\"%s\" must be an array, not %s", key,
		     js_type_name(v));
		return NULL;
	}
	return v;
}

size_t js_opt_array_len(struct schema *sc, struct json_object *obj,
			const char *key, struct json_object **arr)
{
	*arr = js_get(obj, key);
	if (sc->failed || !*arr)
		return 0;
	if (!js_is_type(*arr, json_type_array)) {
		js_serr(sc, "\"%s\" must be an array, not %s", key,
			js_type_name(*arr));
		return 0;
	}
	return json_object_array_length(*arr);
}

struct json_object *js_object_at(struct schema *sc, struct json_object *arr,
				 size_t i, const char *ctx)
{
	struct json_object *o = json_object_array_get_idx(arr, i);

	if (!js_is_type(o, json_type_object)) {
		js_serr(sc, "%s must be an object, not %s", ctx,
			js_type_name(o));
		return NULL;
	}
	return o;
}
