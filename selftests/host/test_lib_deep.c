// SPDX-License-Identifier: MIT
/*
 * Recursion past METER_STACK_CAP (3000 frames, capacity 1008) is counted,
 * not corrupted: exact calls, the stack comes back, samples taken at the
 * bottom are marked truncated, none is invalid, the process does not crash.
 * A stack deeper than the frames a sample keeps (300 > 128) keeps its
 * leaf-most frames, as meter.ko does: the leaf is the function running
 * (spin), the root-most (main) is what was dropped, in the profile and in
 * the folded stacks meter-stat prints from it.
 */
#include "lib_tap.h"

static void check(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "deep", "3000", "200", NULL };
	struct meter_profile *p;
	const struct meter_func *spin;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s: 3000-deep recursion", mode);
	p = run_backend(prog, "signal", args, out, sizeof(out), label, NULL);
	ok(printed_depth(out) == 1, "%s: depth back to 1 (got %ld)", mode,
	   printed_depth(out));
	if (!p) {
		ok(0, "%s: profile written", mode);
		return;
	}
	ok(calls_of(p, "deep") == 3000, "%s: deep reports 3000 calls (got %lld)",
	   mode, calls_of(p, "deep"));
	ok(p->truncated > 0, "%s: samples past the capacity counted as truncated (%llu)",
	   mode, (unsigned long long)p->truncated);
	ok(p->invalid == 0, "%s: no invalid samples", mode);
	spin = func_named(p, "spin");
	ok(spin && spin->self_samples * 10 >= p->samples * 8,
	   "%s: the bottom's spin keeps its self time", mode);
	meter_profile_free(p);
}

static void leaf_kept(const char *mode)
{
	char prog[64], label[64], out[256], cmd[PATH_MAX * 2], line[8192];
	const char *args[] = { "deep", "300", "200", NULL };
	uint64_t leaf_spin, with_main, truncated;
	struct meter_profile *p;
	long folded = 0, folded_bad = 0;
	size_t i;
	FILE *f;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s: 300-deep recursion", mode);
	p = run_backend(prog, "signal", args, out, sizeof(out), label, NULL);
	truncated_ends(p, "spin", "main", &truncated, &leaf_spin, &with_main);
	/* a sample taken on the way down may end in deep: spin runs 200 ms */
	ok(truncated && leaf_spin * 10 >= truncated * 9 && !with_main,
	   "%s: stacks deeper than kept end in the running function and drop the root (%llu of %llu samples end in spin, %llu start at main)",
	   mode, (unsigned long long)leaf_spin, (unsigned long long)truncated,
	   (unsigned long long)with_main);
	/* the file run_backend() named after the label */
	for (i = 0; label[i]; i++)
		if (label[i] == ' ' || label[i] == '/')
			label[i] = '-';
	snprintf(cmd, sizeof(cmd),
		 "'%s/../../tools/meter-stat' -i '%s/%s.json' -f folded --no-correction",
		 self_dir(), scratch(), label);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');

		if (!sp || sp - line < 6 || !strstr(line, "deep;deep;deep"))
			continue;
		folded++;
		*sp = 0;
		if (strcmp(sp - 5, ";spin") && strcmp(sp - 4, "spin"))
			folded_bad++;
	}
	if (f)
		pclose(f);
	ok(folded && !folded_bad,
	   "%s: the folded stacks of deep samples end in spin too (%ld lines, %ld not)",
	   mode, folded, folded_bad);
	meter_profile_free(p);
}

int main(void)
{
	leaf_kept("manual");
	leaf_kept("plugin");
	check("manual");
	check("auto");
	check("plugin");
	scratch_cleanup();
	return tap_done();
}
