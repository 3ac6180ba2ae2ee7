// SPDX-License-Identifier: MIT
/*
 * Allocation accounting (METER_ALLOC=1): malloc, calloc and realloc calls
 * and bytes are charged to the current function; without METER_ALLOC
 * nothing is counted.
 */
#include "lib_tap.h"

static void check(const char *mode, int on)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "alloc", "1000", NULL };
	const struct meter_func *f;
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s, METER_ALLOC=%d: allocating workload",
		 mode, on);
	p = run_backend(prog, "off", args, out, sizeof(out), label,
			on ? "METER_ALLOC=1" : "METER_ALLOC=0");
	f = func_named(p, "allocator");
	if (on) {
		ok(f && f->alloc_calls == 3000,
		   "%s: 1000 x (malloc, calloc, realloc) are 3000 allocation calls of allocator (got %llu)",
		   mode, f ? (unsigned long long)f->alloc_calls : 0ULL);
		ok(f && f->alloc_bytes == 400000,
		   "%s: and 400000 bytes (got %llu)", mode,
		   f ? (unsigned long long)f->alloc_bytes : 0ULL);
	} else {
		ok(f && f->alloc_calls == 0 && f->alloc_bytes == 0,
		   "%s: without METER_ALLOC=1 nothing is counted", mode);
	}
	meter_profile_free(p);
}

int main(void)
{
	check("manual", 1);
	check("auto", 1);
	check("manual", 0);
	scratch_cleanup();
	return tap_done();
}
