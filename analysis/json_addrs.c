// SPDX-License-Identifier: MIT
/*
 * The JSON reader's "addresses" and "maps" (json-format.md): the
 * CPU-clock samples by address, and the executable mappings that tell
 * which file and offset an address is at.  Their "proc" is checked
 * against "processes" once those are read (profile_json.c).
 */
#include <inttypes.h>
#include <stdio.h>

#include "json_addrs.h"

/* The samples by address (optional): each of a function listed. */
int json_read_addrs(struct schema *sc, struct json_object *root,
		      struct meter_profile *p)
{
	struct json_object *arr;
	size_t i, n = js_opt_array_len(sc, root, "addresses", &arr);
	char ctx[48];

	if (sc->failed)
		return -1;
	if (n && p->wall) {
		js_serr(sc, "\"addresses\" in a wall-clock profile: they are "
			"CPU-clock samples");
		return -1;
	}
	for (i = 0; i < n; i++) {
		struct json_object *o;
		struct meter_addr *a;
		uint64_t ip, samples;
		uint32_t func;

		snprintf(ctx, sizeof(ctx), "addresses[%zu]", i);
		o = js_object_at(sc, arr, i, ctx);
		if (!o)
			return -1;
		ip = js_get_uint_as(sc, o, ctx, "ip", UINT64_MAX, true, true);
		func = (uint32_t)js_get_uint(sc, o, ctx, "func", UINT32_MAX,
					     true);
		samples = js_get_uint(sc, o, ctx, "samples", UINT64_MAX, true);
		if (sc->failed)
			return -1;
		if (!meter_profile_find(p, func)) {
			js_serr(sc, "%s: \"func\" %" PRIu32 " is not in "
				"\"functions\"", ctx, func);
			return -1;
		}
		a = meter_profile_add_addr(p, ip, func, samples);
		if (!a) {
			js_serr(sc, "out of memory");
			return -1;
		}
		/* checked against "processes" once they are read */
		a->proc = (uint32_t)js_get_uint(sc, o, ctx, "proc", 0xffffff,
						false);
		if (sc->failed)
			return -1;
	}
	return 0;
}

/* The process's executable mappings (optional). */
int json_read_maps(struct schema *sc, struct json_object *root,
		     struct meter_profile *p)
{
	struct json_object *arr;
	size_t i, n = js_opt_array_len(sc, root, "maps", &arr);
	char ctx[48];

	if (sc->failed)
		return -1;
	for (i = 0; i < n; i++) {
		struct json_object *o;
		struct meter_map_row *m;
		uint64_t start, end, pgoff;
		const char *path;

		snprintf(ctx, sizeof(ctx), "maps[%zu]", i);
		o = js_object_at(sc, arr, i, ctx);
		if (!o)
			return -1;
		start = js_get_uint_as(sc, o, ctx, "start", UINT64_MAX, true,
				       true);
		end = js_get_uint_as(sc, o, ctx, "end", UINT64_MAX, true, true);
		pgoff = js_get_uint_as(sc, o, ctx, "pgoff", UINT64_MAX, false,
				       true);
		path = js_str_value(sc, js_get(o, "path"));
		if (sc->failed)
			return -1;
		if (!path || !path[0] || start >= end) {
			js_serr(sc, "%s: %s", ctx, start >= end ?
				"\"start\" must be below \"end\"" :
				"\"path\" must be a non-empty string");
			return -1;
		}
		m = meter_profile_add_map(p, start, end, pgoff, path);
		if (!m) {
			js_serr(sc, "out of memory");
			return -1;
		}
		/* checked against "processes" once they are read */
		m->proc = (uint32_t)js_get_uint(sc, o, ctx, "proc", 0xffffff,
						false);
		if (sc->failed)
			return -1;
	}
	return 0;
}

