/* SPDX-License-Identifier: MIT */
/*
 * The JSON reader's parts for the samples by address and the
 * process's mappings (json_addrs.c, json-format.md): called by
 * profile_json.c once the functions are read.  Internal to meter.
 */
#ifndef METER_JSON_ADDRS_H
#define METER_JSON_ADDRS_H

#include "json_schema.h"
#include "model.h"

int json_read_addrs(struct schema *sc, struct json_object *root,
		    struct meter_profile *p);
int json_read_maps(struct schema *sc, struct json_object *root,
		   struct meter_profile *p);

#endif /* METER_JSON_ADDRS_H */
