// SPDX-License-Identifier: MIT
/*
 * Under meter.ko: 3000 longjmps out of 50-deep recursion, 2000 C++
 * exceptions through 20 frames and 3000-deep recursion (past
 * METER_STACK_CAP) all leave exact counts, no stale frames in the sampled
 * stacks and no invalid samples; the deep run's samples are truncated.
 * 300-deep recursion (past the 128 frames a sample keeps, within the page)
 * keeps the leaf-most frames: the stacks end in spin and have lost main,
 * as with the signal backend (test_lib_deep).
 */
#include "lib_kernel.h"

static void no_stale(const struct meter_profile *p, const char *mode,
		     const char *root, uint32_t maxdepth)
{
	char buf[8192];
	size_t i, bad = 0, rooted = 0;

	for (i = 0; p && i < p->nstacks; i++) {
		stack_string(p, &p->stacks[i], buf, sizeof(buf));
		if (p->stacks[i].depth > maxdepth ||
		    (strncmp(buf, root, strlen(root)) && strcmp(buf, "main;spin") &&
		     strcmp(buf, "main"))) {
			diag("%s: unexpected stack %.200s", mode, buf);
			bad++;
		} else if (!strncmp(buf, root, strlen(root))) {
			rooted++;
		}
	}
	/* no stacks at all would prove nothing: some must be under root */
	ok(p && bad == 0 && rooted > 0,
	   "%s: no sampled stack carries unwound frames (%zu stacks under %s)",
	   mode, rooted, root);
}

static void longjmps(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "longjmp", "3000", "50", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s longjmp", mode);
	/* 10 kHz: the run is short, and the stacks must be seen */
	p = run_kernel_env(prog, args, out, sizeof(out), label,
			   "METER_PERIOD_NS=100000");
	ok(printed_depth(out) == 1, "%s: stack back to depth 1 after longjmps",
	   mode);
	ok(p && calls_of(p, "recurse") == 150000 && calls_of(p, "jumper") == 3000,
	   "%s: exact counts after longjmps", mode);
	if (p) {
		no_stale(p, label, "main;jumper", 53);
		ok(p->invalid == 0, "%s: no invalid samples", label);
	}
	meter_profile_free(p);
}

static void exceptions(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "2000", "20", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_cxx_%s", mode);
	snprintf(label, sizeof(label), "%s exceptions", mode);
	p = run_kernel_env(prog, args, out, sizeof(out), label,
			   "METER_PERIOD_NS=100000");
	ok(printed_depth(out) == 1, "%s: stack back to depth 1 after exceptions",
	   mode);
	ok(p && calls_of(p, "thrower") == 40000 && calls_of(p, "catcher") == 2000,
	   "%s: exact counts through exceptions", mode);
	if (p)
		no_stale(p, label, "main;catcher", 23);
	meter_profile_free(p);
}

static void deep(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "deep", "3000", "200", NULL };
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s deep", mode);
	p = run_kernel(prog, args, out, sizeof(out), label);
	ok(printed_depth(out) == 1, "%s: stack back to depth 1 after 3000-deep recursion",
	   mode);
	ok(p && calls_of(p, "deep") == 3000, "%s: deep reports 3000 calls", mode);
	ok(p && p->truncated > 0 && p->invalid == 0,
	   "%s: samples past the capacity truncated, none invalid", mode);
	meter_profile_free(p);
}

static void leaf_kept(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "deep", "300", "200", NULL };
	uint64_t leaf_spin, with_main, truncated;
	struct meter_profile *p;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s deep300", mode);
	p = run_kernel(prog, args, out, sizeof(out), label);
	truncated_ends(p, "spin", "main", &truncated, &leaf_spin, &with_main);
	/* a sample taken on the way down may end in deep: spin runs 200 ms */
	ok(truncated && leaf_spin * 10 >= truncated * 9 && !with_main,
	   "%s: stacks deeper than kept end in the running function and drop the root (%llu of %llu samples end in spin, %llu start at main)",
	   mode, (unsigned long long)leaf_spin, (unsigned long long)truncated,
	   (unsigned long long)with_main);
	meter_profile_free(p);
}

int main(void)
{
	leaf_kept("manual");
	leaf_kept("plugin");
	longjmps("manual");
	longjmps("auto");
	longjmps("plugin");
	exceptions("manual");
	exceptions("auto");
	exceptions("plugin");
	deep("manual");
	deep("auto");
	deep("plugin");
	scratch_cleanup();
	return tap_done();
}
