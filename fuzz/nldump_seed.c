// SPDX-License-Identifier: MIT
/*
 * nldump-seed: the seeds of fuzz_nldump, made from real profiles.  There
 * is no meter.ko on the host to dump from, so a JSON profile (one the
 * kernel backend wrote in the VM, or any other) is turned back into the
 * messages meter.ko sends for it, attribute by attribute as
 * kmod/snapshot.c puts them (u64s after a PAD where one is needed to
 * align them).
 *
 *   nldump-seed profile IN.json OUT    PROFILE_GET's dump of IN, then DONE
 *   nldump-seed list OUT IN.json...    SESSION_GET's dump of every IN
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/meter.h>
#include <linux/netlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include "model.h"

/* any id a family gets is at least this; libnl only needs it valid */
#define SEED_FAMILY	0x20

static struct nl_msg *msg;

/* nla_put_u64_64bit(): a PAD first where the value would be unaligned */
static void put_u64(int type, int pad, uint64_t v)
{
	size_t off = (size_t)((char *)nlmsg_tail(nlmsg_hdr(msg)) -
			      (char *)nlmsg_hdr(msg));

	if ((off + NLA_HDRLEN) % 8)
		nla_put(msg, pad, 0, NULL);
	nla_put_u64(msg, type, v);
}

static void begin(int cmd)
{
	msg = nlmsg_alloc_size(1 << 16);
	if (!msg || !genlmsg_put(msg, 0, 1, SEED_FAMILY, 0, NLM_F_MULTI, cmd,
				 METER_GENL_VERSION)) {
		fprintf(stderr, "nldump-seed: out of memory\n");
		exit(1);
	}
}

static void end(FILE *out)
{
	struct nlmsghdr *h = nlmsg_hdr(msg);

	fwrite(h, 1, h->nlmsg_len, out);
	nlmsg_free(msg);
}

static void done(FILE *out)
{
	struct {
		struct nlmsghdr h;
		int code;
	} d = { { sizeof(d), NLMSG_DONE, NLM_F_MULTI, 1, 0 }, 0 };

	fwrite(&d, 1, sizeof(d), out);
}

/* kmod/snapshot.c's session attributes */
static void session(const struct meter_profile *p)
{
	put_u64(METER_A_COOKIE, METER_A_PAD, p->cookie);
	put_u64(METER_A_PARENT_COOKIE, METER_A_PAD, p->parent_cookie);
	nla_put_u32(msg, METER_A_PID, (uint32_t)p->pid);
	nla_put_u32(msg, METER_A_UID, p->uid);
	nla_put_string(msg, METER_A_COMM, p->command ? p->command : "");
	nla_put_u32(msg, METER_A_STATE, p->exited ? METER_STATE_EXITED :
		    METER_STATE_LIVE);
	nla_put_u32(msg, METER_A_THREADS, p->exited ? 0 :
		    (uint32_t)p->nthreads);
	nla_put_u32(msg, METER_A_THREADS_TOTAL, (uint32_t)p->nthreads);
	put_u64(METER_A_PERIOD_NS, METER_A_PAD, p->period_ns);
	put_u64(METER_A_START_NS, METER_A_PAD, p->start_ns);
	put_u64(METER_A_END_NS, METER_A_PAD, p->end_ns);
	put_u64(METER_A_SAMPLES, METER_A_PAD, p->samples);
	put_u64(METER_A_NO_CURRENT, METER_A_PAD, p->no_current);
	put_u64(METER_A_INVALID, METER_A_PAD, p->invalid);
	put_u64(METER_A_LOST, METER_A_PAD, p->lost);
	put_u64(METER_A_TRUNCATED, METER_A_PAD, p->truncated);
	nla_put_u32(msg, METER_A_NFUNCS, (uint32_t)p->nfuncs);
	nla_put_u32(msg, METER_A_NSTACKS, (uint32_t)p->nstacks);
	put_u64(METER_A_CALL_COST_PS, METER_A_PAD, p->call_cost_ps);
	put_u64(METER_A_TICKS, METER_A_PAD, p->ticks);
	nla_put_u32(msg, METER_A_CLOCK, p->wall ? METER_CLOCK_WALL :
		    METER_CLOCK_CPU);
	put_u64(METER_A_SAMPLES_RUNQ, METER_A_PAD, p->samples_off[0]);
	put_u64(METER_A_SAMPLES_BLOCKED, METER_A_PAD, p->samples_off[1]);
	put_u64(METER_A_SLOW_ENTRIES, METER_A_PAD, p->slow_entries);
	put_u64(METER_A_STRETCHED_TICKS, METER_A_PAD, p->stretched_ticks);
	nla_put_u32(msg, METER_A_NADDRS, (uint32_t)p->naddrs);
	put_u64(METER_A_ADDRS_LOST, METER_A_PAD, p->addrs_lost);
	nla_put_u32(msg, METER_A_NMAPS, (uint32_t)p->nmaps);
}

static void profile(const struct meter_profile *p, FILE *out)
{
	struct nlattr *nest;
	size_t i;

	begin(METER_CMD_PROFILE_GET);
	nest = nla_nest_start(msg, METER_A_SESSION);
	session(p);
	nla_nest_end(msg, nest);
	end(out);
	for (i = 0; i < p->nfuncs; i++) {
		const struct meter_func *f = &p->funcs[i];

		begin(METER_CMD_PROFILE_GET);
		nest = nla_nest_start(msg, METER_A_FUNC);
		nla_put_u32(msg, METER_A_FUNC_ID, f->id);
		nla_put_string(msg, METER_A_FUNC_NAME, f->name);
		put_u64(METER_A_FUNC_CALLS, METER_A_FUNC_PAD, f->calls);
		put_u64(METER_A_FUNC_SELF, METER_A_FUNC_PAD, f->self_samples);
		put_u64(METER_A_FUNC_TOTAL, METER_A_FUNC_PAD, f->total_samples);
		put_u64(METER_A_FUNC_ALLOC_CALLS, METER_A_FUNC_PAD,
			f->alloc_calls);
		put_u64(METER_A_FUNC_ALLOC_BYTES, METER_A_FUNC_PAD,
			f->alloc_bytes);
		put_u64(METER_A_FUNC_SELF_RUNQ, METER_A_FUNC_PAD,
			f->self_off[0]);
		put_u64(METER_A_FUNC_SELF_BLOCKED, METER_A_FUNC_PAD,
			f->self_off[1]);
		nla_nest_end(msg, nest);
		end(out);
	}
	for (i = 0; i < p->nstacks; i++) {
		const struct meter_stack *s = &p->stacks[i];

		begin(METER_CMD_PROFILE_GET);
		nest = nla_nest_start(msg, METER_A_STACK);
		put_u64(METER_A_STACK_SAMPLES, METER_A_STACK_PAD, s->samples);
		nla_put(msg, METER_A_STACK_FRAMES,
			(int)(s->depth * sizeof(uint32_t)), s->frames);
		if (s->truncated)
			nla_put_flag(msg, METER_A_STACK_TRUNCATED);
		if (s->state)
			nla_put_u32(msg, METER_A_STACK_STATE, s->state);
		nla_put_u32(msg, METER_A_STACK_TID, s->tid);
		nla_nest_end(msg, nest);
		end(out);
	}
	for (i = 0; i < p->nthreads; i++) {
		const struct meter_thread_row *t = &p->threads[i];

		begin(METER_CMD_PROFILE_GET);
		nest = nla_nest_start(msg, METER_A_THREAD);
		nla_put_u32(msg, METER_A_THREAD_TID, t->tid);
		put_u64(METER_A_THREAD_SAMPLES, METER_A_THREAD_PAD, t->samples);
		nla_put_u32(msg, METER_A_THREAD_STATE, t->exited ?
			    METER_THREAD_EXITED : METER_THREAD_LIVE);
		if (t->folded)
			nla_put_u32(msg, METER_A_THREAD_FOLDED, t->folded);
		nla_nest_end(msg, nest);
		end(out);
	}
	for (i = 0; i < p->naddrs; i++) {
		const struct meter_addr *a = &p->addrs[i];

		begin(METER_CMD_PROFILE_GET);
		nest = nla_nest_start(msg, METER_A_ADDR);
		put_u64(METER_A_ADDR_IP, METER_A_ADDR_PAD, a->ip);
		nla_put_u32(msg, METER_A_ADDR_FUNC, a->func);
		put_u64(METER_A_ADDR_SAMPLES, METER_A_ADDR_PAD, a->samples);
		nla_nest_end(msg, nest);
		end(out);
	}
	for (i = 0; i < p->nmaps; i++) {
		const struct meter_map_row *m = &p->maps[i];

		begin(METER_CMD_PROFILE_GET);
		nest = nla_nest_start(msg, METER_A_MAP);
		put_u64(METER_A_MAP_START, METER_A_MAP_PAD, m->start);
		put_u64(METER_A_MAP_END, METER_A_MAP_PAD, m->end);
		put_u64(METER_A_MAP_PGOFF, METER_A_MAP_PAD, m->pgoff);
		nla_put_string(msg, METER_A_MAP_PATH, m->path);
		nla_nest_end(msg, nest);
		end(out);
	}
	done(out);
}

static struct meter_profile *load(const char *path)
{
	struct meter_profile *p;
	char err[300];
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		exit(1);
	}
	p = meter_profile_read_json(f, err, sizeof(err));
	fclose(f);
	if (!p) {
		fprintf(stderr, "nldump-seed: %s: %s\n", path, err);
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	struct meter_profile *p;
	FILE *out;
	int i;

	if (argc < 4 || (strcmp(argv[1], "profile") &&
			 strcmp(argv[1], "list"))) {
		fprintf(stderr, "usage: nldump-seed profile IN.json OUT | "
			"list OUT IN.json...\n");
		return 2;
	}
	out = fopen(argv[1][0] == 'p' ? argv[3] : argv[2], "w");
	if (!out) {
		perror("nldump-seed");
		return 1;
	}
	if (argv[1][0] == 'p') {
		p = load(argv[2]);
		profile(p, out);
		meter_profile_free(p);
	} else {
		for (i = 3; i < argc; i++) {
			p = load(argv[i]);
			begin(METER_CMD_SESSION_GET);
			session(p);
			end(out);
			meter_profile_free(p);
		}
		done(out);
	}
	return fclose(out) ? 1 : 0;
}
