// SPDX-License-Identifier: MIT
/*
 * The profile file of the signal and off backends, written once at process
 * exit (METER_OUTPUT): libmeter's counters laid out as a struct
 * meter_profile and handed to the one JSON writer (common/profile_write.c).
 * The arrays are sized from what is known at exit and the stacks point into
 * the signal backend's table, so nothing of the analysis library's model
 * is needed in a profiled process.  Called with meter_g.lock held.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meter_internal.h"
#include "profile.h"

/*
 * METER_OUTPUT with %p replaced; before an exec, with the session's cookie
 * appended, so that the program the exec starts, which has the same pid,
 * does not write over this one's profile.
 */
static char *output_path(bool before_exec)
{
	char *out = malloc(sizeof(meter_g.output) + 64);
	const char *s = meter_g.output;
	size_t n = 0;

	if (!out)
		return NULL;
	while (*s && n < sizeof(meter_g.output)) {
		if (s[0] == '%' && s[1] == 'p') {
			n += (size_t)sprintf(out + n, "%d", (int)getpid());
			s += 2;
		} else {
			out[n++] = *s++;
		}
	}
	out[n] = 0;
	if (before_exec)
		sprintf(out + n, ".%" PRIx64, meter_g.cookie);
	return out;
}

/*
 * A thread's name (pthread_setname_np's, or the program's), from
 * /proc/self/task/TID/comm; false if it cannot be read.
 */
bool meter_thread_comm(pid_t tid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	n = strcspn(buf, "\n");
	buf[n] = '\0';
	return n > 0;
}

static void fill_header(struct meter_profile *p)
{
	struct meter_thr *th;

	snprintf(p->backend, sizeof(p->backend), "%s",
		 meter_g.backend == METER_BK_SIGNAL ? "signal" : "off");
	p->command = program_invocation_short_name;
	p->pid = getpid();
	p->uid = getuid();
	p->cookie = meter_g.cookie;
	p->parent_cookie = meter_g.parent_cookie;
	p->exited = true;
	p->runs = 1;
	p->period_ns = meter_g.backend == METER_BK_SIGNAL ?
		       meter_g.period_ns : 0;
	p->start_ns = meter_g.start_ns;
	p->end_ns = meter_now_ns(CLOCK_BOOTTIME);
	p->samples = atomic_load(&meter_g.samples);
	p->ticks = atomic_load(&meter_g.ticks);
	p->unsampled_ns = atomic_load(&meter_g.unsampled_ns);
	p->no_current = atomic_load(&meter_g.no_current);
	p->invalid = atomic_load(&meter_g.invalid);
	p->lost = atomic_load(&meter_g.lost);
	p->truncated = atomic_load(&meter_g.truncated);
	p->call_cost_ps = meter_g.call_cost_ps;
	p->flat_call_cost_ps = meter_g.flat_cost_ps;
	for (th = meter_g.threads; th; th = th->next)
		p->slow_entries += __atomic_load_n(&th->slow_entries,
						   __ATOMIC_RELAXED);
}

/* funcs[id - 1] is function id: ids are dense from 1. */
static void fill_func(struct meter_func *f, uint32_t id)
{
	struct meter_thr *th;

	f->id = id;
	f->name = (char *)meter_rec_name(id);
	f->flat = meter_g.recs[id].flat;
	f->file = meter_g.recs[id].file;
	f->line = meter_g.recs[id].line;
	f->cost_ps = meter_rec_cost_ps(id);
	f->calls = meter_g.calls_done[id];
	if (meter_g.alloc_calls_done) {
		f->alloc_calls = meter_g.alloc_calls_done[id];
		f->alloc_bytes = meter_g.alloc_bytes_done[id];
	}
	for (th = meter_g.threads; th; th = th->next) {
		if (th->exited || !th->counts)
			continue;
		f->calls += th->counts[id];
		if (th->alloc_calls) {
			f->alloc_calls += th->alloc_calls[id];
			f->alloc_bytes += th->alloc_bytes[id];
		}
	}
	if (meter_g.self_samples)
		f->self_samples = atomic_load(&meter_g.self_samples[id]);
}

/*
 * A function's total counts each sample whose stack holds it once, however
 * often it recurses there; seen[id] is the last stack that counted it.
 */
static int fill_totals(struct meter_profile *p)
{
	size_t *seen = calloc(p->nfuncs + 1, sizeof(*seen));
	size_t i, k;

	if (!seen)
		return -1;
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		for (k = 0; k < s->depth; k++) {
			uint32_t id = s->frames[k];

			if (!id || id > p->nfuncs || seen[id] == i + 1)
				continue;
			seen[id] = i + 1;
			p->funcs[id - 1].total_samples += s->samples;
		}
	}
	free(seen);
	return 0;
}

/* The samples by address, and the mappings that say where they are. */
static int fill_addrs(struct meter_profile *p)
{
	size_t n = meter_signal_addrs(NULL, 0);

	p->addrs = calloc(n ? n : 1, sizeof(*p->addrs));
	if (!p->addrs)
		return -1;
	p->naddrs = meter_signal_addrs(p->addrs, n);
	p->addrs_lost = atomic_load(&meter_g.addrs_lost);
	p->nmaps = meter_maps_read(&p->maps);
	return 0;
}

static int fill(struct meter_profile *p)
{
	uint32_t hi = atomic_load_explicit(&meter_g.next_id,
					   memory_order_acquire) - 1;
	struct meter_thr *th;
	size_t n = 0;
	uint32_t id;

	fill_header(p);
	for (th = meter_g.threads; th; th = th->next)
		n++;
	p->funcs = calloc(hi ? hi : 1, sizeof(*p->funcs));
	p->threads = calloc(n ? n : 1, sizeof(*p->threads));
	if (!p->funcs || !p->threads)
		return -1;
	p->nfuncs = hi;
	for (id = 1; id <= hi; id++)
		fill_func(&p->funcs[id - 1], id);
	for (th = meter_g.threads; th; th = th->next) {
		/* written at process exit: every thread has ended */
		struct meter_thread_row *t = &p->threads[p->nthreads++];
		char name[16];

		*t = (struct meter_thread_row){
			.tid = (uint32_t)th->tid, .samples = th->samples,
			.exited = true,
		};
		if (th->name[0])
			meter_thread_name_set(t, th->name, sizeof(th->name));
		else if (meter_thread_comm(th->tid, name, sizeof(name)))
			meter_thread_name_set(t, name, sizeof(name));
	}
	if (meter_g.backend == METER_BK_SIGNAL) {
		n = meter_signal_stacks(NULL, 0);
		p->stacks = calloc(n ? n : 1, sizeof(*p->stacks));
		if (!p->stacks)
			return -1;
		p->nstacks = meter_signal_stacks(p->stacks, n);
		if (fill_addrs(p))
			return -1;
	}
	return fill_totals(p);
}

void meter_write_profile(bool before_exec)
{
	struct meter_profile p = { 0 };
	char *path;
	FILE *f;

	if (!meter_g.output[0])	/* no profile asked for */
		return;
	path = output_path(before_exec);
	if (!path || fill(&p)) {
		meter_notice("out of memory writing the profile");
		goto out;
	}
	/* a lost profile is said even with METER_QUIET: it is not a notice */
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "meter: cannot write the profile to %s: %s; "
			"the profile is lost (METER_OUTPUT names where it "
			"goes)\n", path, strerror(errno));
		goto out;
	}
	if (meter_profile_write_json(&p, f) || fclose(f))
		fprintf(stderr, "meter: writing the profile to %s failed; the "
			"profile is lost\n", path);
out:
	free(p.funcs);
	free(p.stacks);
	free(p.threads);
	free(p.addrs);
	meter_maps_free(p.maps, p.nmaps);
	free(path);
}
