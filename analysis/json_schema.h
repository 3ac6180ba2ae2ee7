/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader's schema checks (json_schema.c): typed look-ups in a
 * json-c tree that record the first error, in one line, and let the
 * reader (profile_json.c) go on without checking after each.  Internal
 * to meter; not installed.
 */
#ifndef METER_JSON_SCHEMA_H
#define METER_JSON_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

/* Where the first error goes; failed once it has. */
struct schema {
	char *err;
	size_t errlen;
	bool failed;
};

/* Keeps an error message on one line whatever the input held. */
void js_one_line(char *s);

void js_serr(struct schema *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

struct json_object *js_get(struct json_object *obj, const char *key);

const char *js_type_name(struct json_object *v);

bool js_is_type(struct json_object *v, enum json_type t);

/* A string value, or NULL; one holding \u0000 is an error. */
const char *js_str_value(struct schema *sc, struct json_object *v);

/*
 * Element k of ctx's array arr, an unsigned integer no larger than max;
 * an error names it ("stacks[3].frames[2]").  json-c saturates integers
 * past 2^64 - 1 to 2^64 - 1, so that value is refused too: an overflow
 * cannot pass for it.
 */
uint64_t js_elem_uint(struct schema *sc, struct json_object *v,
			  const char *ctx, const char *arr, size_t k,
			  uint64_t max);

/*
 * obj's key as an unsigned integer no larger than max; absent is 0 unless
 * required.  ctx names the enclosing element ("" or "functions[3]").
 */
uint64_t js_get_uint_as(struct schema *sc, struct json_object *obj,
			    const char *ctx, const char *key, uint64_t max,
			    bool required, bool as_string);

uint64_t js_get_uint(struct schema *sc, struct json_object *obj,
			 const char *ctx, const char *key, uint64_t max,
			 bool required);

bool js_get_bool(struct schema *sc, struct json_object *obj,
		     const char *ctx, const char *key);

struct json_object *js_get_array(struct schema *sc,
				     struct json_object *obj, const char *key);

/*
 * obj's optional array key: its length, *arr the array (NULL, and 0, when
 * absent); 0 with the error when it is not an array.
 */
size_t js_opt_array_len(struct schema *sc, struct json_object *obj,
			const char *key, struct json_object **arr);

/* arr[i], which must be an object (ctx names it); NULL with the error. */
struct json_object *js_object_at(struct schema *sc, struct json_object *arr,
				 size_t i, const char *ctx);

#endif /* METER_JSON_SCHEMA_H */
