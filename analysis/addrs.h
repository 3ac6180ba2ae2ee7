/* SPDX-License-Identifier: MIT */
/*
 * The CPU-clock samples by address, read (Documentation/user-guide.md,
 * "Where the samples go"): addr_resolve.c finds where each address is
 * through the process's mappings and the files' DWARF line and inline
 * records; byaddr.c gives the samples to what they found.  Internal to
 * meter.
 */
#ifndef METER_ADDRS_H
#define METER_ADDRS_H

#include "model.h"

enum addr_kind {
	ADDR_UNRESOLVED,	/* in no map, no file, no debug records */
	ADDR_METER,		/* meter's own: a "<meter>" line, libmeter,
				 * an inlined meter__ helper
				 */
	ADDR_FUNC,		/* in a function of the program, by name */
};

struct addr_where {
	enum addr_kind kind;
	bool plugin;		/* its file has the plugin's "<meter>" lines */
	char *func;		/* ADDR_FUNC: the innermost function
				 * (inline frames included), as reports
				 * name it
				 */
	char **outer;		/* the functions func is inlined into,
				 * innermost first: the last is the one
				 * the symbol is (none: not inlined, or
				 * no inline records)
				 */
	size_t nouter;
	bool no_records;	/* in a file built for meter, named by its
				 * symbol: no debug records there (-g0)
				 */
	char *sym;		/* named by its symbol, a clone's (spin.
				 * constprop.0): the symbol whole, func
				 * being its name cut (spin); else NULL
				 */
};

/*
 * Where each of p's addresses is: out[i] for p->addrs[i] (the caller
 * frees them with addr_where_free).  Files are opened by the paths of
 * p's maps, as they are now.  0, or -1 on ENOMEM.
 */
int addr_resolve(const struct meter_profile *p, struct addr_where *out);
void addr_where_free(struct addr_where *w, size_t n);

/* What byaddr_apply() did, for the report's line. */
struct byaddr_result {
	uint64_t resolved;	/* samples whose address was found */
	uint64_t meter;		/* of them, meter's own, taken out */
	uint64_t moved;		/* of them, moved to another function */
	uint64_t unresolved;	/* samples left with the current function:
				 * in a library, or not read
				 */
};

/*
 * Gives p's samples by address (p: one row per name): a sample on meter's
 * own instructions is taken out of its function, one in another function
 * of the program goes to that one (a row made for it when it has none: a
 * function inlined without a record), as a callee of the function that
 * was current, through the functions it is inlined into inside that one
 * (an inlined copy the plugin counted without making it current); the
 * rest stay with the current function.  A row is made
 * only for a function in code the plugin built (its tiny rule left the
 * function alone): a library's function (libc's memcpy) and a helper left
 * uninstrumented in a build by hand keep their time with the function
 * that calls them, as in every report of meter.  The totals stay as
 * measured (p->corrected, corrected_samples: what was taken out).
 * where[i] is p->addrs[i]'s.  0, or -1 on ENOMEM.
 */
int byaddr_apply(struct meter_profile *p, const struct addr_where *where,
		 struct byaddr_result *r);

#endif /* METER_ADDRS_H */
