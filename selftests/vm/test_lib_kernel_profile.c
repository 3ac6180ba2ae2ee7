// SPDX-License-Identifier: MIT
/*
 * meter.ko samples what libmeter publishes: a CPU-bound run is charged to
 * the function that burnt the time, through the right callers, at the
 * requested rate; manual, automatic and explicit-API instrumentation give
 * the same profile; the signal backend, run side by side, gives the same
 * functions, calls and stack shares (at its lower rate).
 */
#include "lib_kernel.h"

static struct meter_profile *spin(const char *mode)
{
	char prog[64], label[64], out[256];
	const char *args[] = { "spin", "300", NULL };
	struct meter_profile *p;
	const struct meter_func *s;
	uint64_t ab, c;

	snprintf(prog, sizeof(prog), "lib_workload_%s", mode);
	snprintf(label, sizeof(label), "%s spin", mode);
	p = run_kernel(prog, args, out, sizeof(out), label);
	if (!p) {
		ok(0, "%s: session read back", mode);
		return NULL;
	}
	/* 600 ms of CPU at the default 1 kHz */
	ok(p->samples >= 400, "%s: kernel took samples at the requested rate (%llu)",
	   mode, (unsigned long long)p->samples);
	s = func_named(p, "spin");
	/* of the samples charged to a function: a slower kernel (the debug
	 * one) stretches start-up and exit, not spin
	 */
	ok(s && s->self_samples * 10 >= (p->samples - p->no_current) * 9,
	   "%s: >= 90%% of the samples charged to a function are self time of spin (%llu of %llu; %llu with no current function)",
	   mode, s ? (unsigned long long)s->self_samples : 0ULL,
	   (unsigned long long)p->samples,
	   (unsigned long long)p->no_current);
	ab = samples_of_stack(p, "main;a;b;spin");
	c = samples_of_stack(p, "main;c;spin");
	ok(ab * 10 >= p->samples * 3 && c * 10 >= p->samples * 3,
	   "%s: stacks main;a;b;spin (%llu) and main;c;spin (%llu) each hold >= 30%%",
	   mode, (unsigned long long)ab, (unsigned long long)c);
	ok(p->invalid == 0, "%s: no invalid samples", mode);
	return p;
}

static void signal_side_by_side(const struct meter_profile *k)
{
	char out[256], env_out[PATH_MAX + 16], path[PATH_MAX];
	const char *env[] = { "METER_BACKEND=signal", env_out,
			      "METER_QUIET=1", NULL };
	const char *args[] = { "spin", "300", NULL };
	struct meter_profile *p;
	double ks, ss;

	snprintf(path, sizeof(path), "%s/signal.json", scratch());
	snprintf(env_out, sizeof(env_out), "METER_OUTPUT=%s", path);
	ok(run_prog("../host/lib_workload_manual", env, args, out,
		    sizeof(out)) == 0, "signal backend in the VM: exits 0");
	p = load_profile(path);
	ok(p && p->samples > 0, "signal backend in the VM: took samples");
	ok(same_spin_calls(k, p),
	   "kernel and signal backends: same functions and calls");
	if (p && k && p->samples && k->samples) {
		ks = (double)samples_of_stack(k, "main;a;b;spin") / (double)k->samples;
		ss = (double)samples_of_stack(p, "main;a;b;spin") / (double)p->samples;
		diag("kernel: %llu of %llu samples; signal: %llu of %llu",
		     (unsigned long long)samples_of_stack(k, "main;a;b;spin"),
		     (unsigned long long)k->samples,
		     (unsigned long long)samples_of_stack(p, "main;a;b;spin"),
		     (unsigned long long)p->samples);
		ok(ks - ss < 0.15 && ss - ks < 0.15,
		   "kernel and signal backends: main;a;b;spin share %.2f vs %.2f",
		   ks, ss);
	} else {
		ok(0, "kernel and signal backends: comparable stack shares");
	}
	meter_profile_free(p);
}

int main(void)
{
	struct meter_profile *m = spin("manual");
	struct meter_profile *a = spin("auto"), *x = spin("api");
	struct meter_profile *g = spin("plugin");

	ok(same_spin_calls(m, a),
	   "manual and auto: same functions with the same call counts");
	ok(same_spin_calls(m, x),
	   "manual and api: same functions with the same call counts");
	ok(same_spin_calls(m, g),
	   "manual and plugin: same functions with the same call counts");
	meter_profile_free(a);
	meter_profile_free(g);
	meter_profile_free(x);
	signal_side_by_side(m);
	meter_profile_free(m);
	scratch_cleanup();
	return tap_done();
}
