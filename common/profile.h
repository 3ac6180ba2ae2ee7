/* SPDX-License-Identifier: MIT */
/*
 * The profile as userspace holds it: what the kernel's PROFILE_GET dump
 * returns, what the signal backend collects, what the JSON file stores and
 * what every renderer reads.  One shape, so that the kernel and signal
 * backends produce the same reports and merged profiles stay comparable.
 * libmeter fills it once at exit and writes it; everything that builds,
 * reads or combines profiles is in analysis/.
 *
 * Internal to meter (libmeter and the tools); not installed.
 */
#ifndef METER_PROFILE_H
#define METER_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Wall clock: why a sample found its thread off the CPU.  A sample is on
 * the CPU, or off it for one of these reasons (the kernel's enum
 * meter_sample_state, less one).
 */
enum meter_off_kind {
	METER_OFF_RUNQ,		/* runnable, waiting for a CPU */
	METER_OFF_BLOCKED,	/* sleeping, waiting for I/O, a lock */
	METER_OFF_KINDS
};

/* 0: on a CPU, else 1 + enum meter_off_kind */
#define METER_STATE_ONCPU	0

struct meter_func {
	uint32_t id;		/* unique within the profile, >= 1 */
	char *name;
	char *file;		/* the source it is defined in, or NULL */
	uint32_t line;		/* the line its definition starts on, or 0 */
	uint64_t cost_ps;	/* a call's instrumentation; 0: the header's */
	uint64_t calls;
	uint64_t self_samples;
	uint64_t total_samples;	/* once per sample, recursion or not */
	uint64_t alloc_calls;
	uint64_t alloc_bytes;
	/* wall clock: the part of self_samples off the CPU, by why */
	uint64_t self_off[METER_OFF_KINDS];
	bool flat;		/* instrumented with the flat sequence */
	char *refused;		/* meter-run --patch left it unpatched:
				 * why (so it counted nothing); NULL: not
				 */
};

struct meter_stack {
	uint32_t depth;
	uint32_t *frames;	/* function ids, root first */
	uint64_t samples;
	bool truncated;
	uint8_t state;		/* METER_STATE_ONCPU or 1 + meter_off_kind */
	uint32_t tid;		/* the thread sampled; 0: not known */
	uint32_t proc;		/* merged: 1 + its index in procs; 0: none */
};

/*
 * The CPU-clock samples (meter.ko's, the signal backend's) by where the
 * thread was interrupted: a user address and the function current then.  With the process's line table
 * they tell a function's own instructions from the instrumentation's and
 * from those of a function inlined into it without a record.
 */
struct meter_addr {
	uint64_t ip;
	uint64_t samples;
	uint32_t func;		/* the current function's id */
	uint32_t proc;		/* merged: 1 + its index in procs; 0: none */
};

/*
 * An executable file mapping of the profiled process (meter.ko): an
 * address in [start, end) is at file offset pgoff + (address - start) of
 * path.
 */
struct meter_map_row {
	uint64_t start, end;
	uint64_t pgoff;
	char *path;
	uint32_t proc;		/* merged: 1 + its index in procs; 0: none */
};

#define METER_THREAD_NAME_MAX	16	/* the kernel's TASK_COMM_LEN */

struct meter_thread_row {
	uint32_t tid;
	uint64_t samples;
	bool exited;
	char name[METER_THREAD_NAME_MAX];	/* "": not known */
	int32_t pid;		/* its process in a merged profile; 0: p->pid */
	uint32_t folded;	/* > 0: that many ended threads in one row
				 * (meter.ko's max_thread_rows), tid 0
				 */
};

/*
 * Sets t's name from len bytes (from the kernel, a file, the thread): up
 * to the first NUL, at most 15 bytes, anything but printable ASCII as '?'
 * so that no report or terminal takes it for control.
 */
static inline void meter_thread_name_set(struct meter_thread_row *t,
					 const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i + 1 < sizeof(t->name) && s[i]; i++)
		t->name[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	t->name[i] = '\0';
}

/*
 * One process of a merged profile (a --follow-fork tree, runs merged):
 * its session and what it contributed.  A profile of one process has
 * none; a merge lists every input's (analysis/profile.c), so that the
 * reports can sum by program and rebuild the tree from the cookies.
 */
struct meter_proc_row {
	int32_t pid;
	uint64_t cookie;
	uint64_t parent_cookie;	/* nearest profiled ancestor, or the run */
	char *command;		/* the program's short name */
	uint64_t samples;
	uint64_t calls;
};

struct meter_profile {
	char *command;
	char backend[16];	/* "kernel", "signal", "off" */
	int32_t pid;
	uint32_t uid;
	uint64_t cookie;
	uint64_t parent_cookie;
	bool exited;
	uint32_t runs;		/* profiles merged into this one, >= 1 */
	uint64_t period_ns;
	uint64_t start_ns, end_ns;
	bool wall;		/* sampled on wall-clock time, not CPU time */
	uint64_t samples;	/* periods of CPU (or wall) time sampled */
	uint64_t samples_off[METER_OFF_KINDS];	/* wall: off the CPU */
	uint64_t ticks;		/* sampling interrupts taken (kernel) */
	uint64_t no_current;
	uint64_t invalid;
	uint64_t lost;
	uint64_t truncated;
	uint64_t call_cost_ps;	/* calibrated cost of one call, 0: unknown */
	uint64_t flat_call_cost_ps;	/* the same for a flat function */
	uint64_t slow_entries;	/* profiled calls that took libmeter's
				   slow path (registration, deep or
				   stale stacks) */
	uint64_t stretched_ticks;	/* meter.ko: wall-clock ticks the
					   user's tick budget delayed */
	uint64_t unsampled_ns;	/* signal backend: CPU time of ended
				   threads that no tick covered */
	uint64_t addrs_lost;	/* CPU-clock samples with no address row */
	/* set by the reports' correction (analysis/correct.c), never stored */
	bool corrected;
	double corrected_samples;	/* samples taken out */
	/* ... or by their reading by address (analysis/byaddr.c): then
	 * corrected_samples were on meter's own instructions
	 */
	bool by_address;
	uint64_t addr_moved;		/* samples given to another function */
	uint64_t addr_unresolved;	/* samples whose address was not read */
	/* set by --hide-idle (analysis/idle.c), never stored */
	size_t idle_threads;		/* threads set aside */
	uint64_t idle_samples;		/* their samples */

	struct meter_func *funcs;
	size_t nfuncs, funcs_cap;
	/* an id added at or below the one before it: meter_profile_find()
	 * scans where it would otherwise stop at the binary search */
	bool funcs_unordered;
	struct meter_stack *stacks;
	size_t nstacks, stacks_cap;
	struct meter_thread_row *threads;
	size_t nthreads, threads_cap;
	struct meter_proc_row *procs;
	size_t nprocs, procs_cap;
	struct meter_addr *addrs;
	size_t naddrs, addrs_cap;
	struct meter_map_row *maps;
	size_t nmaps, maps_cap;
};

/*
 * JSON, the schema in Documentation/json-format.md: the one writer
 * (common/profile_write.c).  The reader and the model's operations are
 * the analysis library's (analysis/model.h).
 */
#define METER_JSON_FORMAT	"meter-profile"
#define METER_JSON_VERSION	1

int meter_profile_write_json(const struct meter_profile *p, FILE *out);
/*
 * s as a JSON string, quoted; in_script: also safe inside an HTML <script>
 * (no <, >, &, U+2028 or U+2029 as themselves).
 */
void meter_json_string(FILE *out, const char *s, bool in_script);

#endif /* METER_PROFILE_H */
