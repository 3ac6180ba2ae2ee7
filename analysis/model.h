/* SPDX-License-Identifier: MIT */
/*
 * The profile model's operations (analysis/profile.c, merge.c,
 * profile_json.c): build a profile row by row (the netlink dumps, the JSON
 * reader), find, total, merge and read.  The tools and the tests link them from
 * libmeter-analysis.a; a profiled process never does.
 */
#ifndef METER_MODEL_H
#define METER_MODEL_H

#include "profile.h"

struct meter_profile *meter_profile_new(void);

/*
 * A copy of a function's name as reports show it: demangled where it is
 * a mangled C++ name (a record, a DWARF linkage name).  NULL on ENOMEM.
 */
char *meter_name_demangled(const char *name);
void meter_profile_free(struct meter_profile *p);

/* Grows *arr (elements of size sz) to hold at least need; 0, or -1 on
 * ENOMEM.  The appenders' growth, and the merge's (merge.c). */
int meter_array_grow(void **arr, size_t *cap, size_t need, size_t sz);

/* Appenders copy their arguments; they return NULL or -1 on ENOMEM. */
/* f's source, copied, where it has none yet (file NULL, line 0: none) */
int meter_func_set_source(struct meter_func *f, const char *file,
			  uint32_t line);
struct meter_func *meter_profile_add_func(struct meter_profile *p,
					  uint32_t id, const char *name);
struct meter_stack *meter_profile_add_stack(struct meter_profile *p,
					    const uint32_t *frames,
					    uint32_t depth, uint64_t samples);
struct meter_thread_row *meter_profile_add_thread(struct meter_profile *p,
						  uint32_t tid, uint64_t samples);
struct meter_addr *meter_profile_add_addr(struct meter_profile *p,
					  uint64_t ip, uint32_t func,
					  uint64_t samples);
struct meter_map_row *meter_profile_add_map(struct meter_profile *p,
					   uint64_t start, uint64_t end,
					   uint64_t pgoff, const char *path);
struct meter_proc_row *meter_profile_add_proc(struct meter_profile *p,
					      int32_t pid, const char *command);

/*
 * 0 when the parts add up to no more than the whole: the stacks' samples,
 * the functions' self samples and the addresses' samples each at most the
 * profile's samples.
 * Else -1 and why in err.
 */
int meter_profile_check_sums(const struct meter_profile *p, char *err,
			     size_t errlen);

/* Removes the stacks left with no samples (a correction's, by address). */
void meter_profile_drop_empty_stacks(struct meter_profile *p);

/* NULL when no function has that id. */
struct meter_func *meter_profile_find(const struct meter_profile *p,
				      uint32_t id);

/*
 * Recompute total_samples of every function from the stacks (each function
 * once per sample).  Used where stacks are the source of truth: the signal
 * backend's file, merges.
 */
void meter_profile_compute_totals(struct meter_profile *p);

/*
 * Names every function id that a stack uses but the profile does not name
 * ("[id N]", as merges name them), with its samples from the stacks, so
 * that every renderer, and the JSON reader, accept it.  Returns the number
 * added (fewer on ENOMEM).
 */
size_t meter_profile_name_unknown_ids(struct meter_profile *p);

/*
 * Add src into dst, matching functions by name (ids are renumbered in
 * dst).  runs add up; counters add up.  dst's process rows gain src's, or
 * one for src itself when it has none.  Returns 0 or -1: errno ENOMEM, or
 * EINVAL when one is sampled on CPU time and the other on wall time.
 */
int meter_profile_merge(struct meter_profile *dst,
			const struct meter_profile *src);
/*
 * A row is a name in every report: records of one name (a static inline
 * function copied into each translation unit, a function in two
 * processes) are one function.  Returns p's copy with one function per
 * name, or NULL when p's names are already unique (*failed false) or on
 * ENOMEM (*failed true).
 */
struct meter_profile *meter_profile_by_name(const struct meter_profile *p,
					    bool *failed);
/*
 * What one call of f's instrumentation costs in ps: its own cost_ps, else
 * its profile's flat or stacked calibrated cost (0: not calibrated).  A
 * merge by name keeps the mean over the calls of what it adds up.
 */
uint64_t meter_func_call_cost_ps(const struct meter_profile *p,
				 const struct meter_func *f);
/* What a failed merge's errno means, for a message. */
const char *meter_profile_merge_strerror(int err);

/*
 * The reader of common/profile_write.c's JSON.  On error returns NULL and
 * writes a one-line reason into err.
 */
struct meter_profile *meter_profile_read_json(FILE *in, char *err,
					      size_t errlen);

#endif /* METER_MODEL_H */
