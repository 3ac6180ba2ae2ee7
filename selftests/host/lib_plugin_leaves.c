// SPDX-License-Identifier: MIT
/*
 * Bodies that become leaves once inlining is done (plugin/entry_forms.cc),
 * in a program built as people build (-O2, the plugin's default rules;
 * selftests/host/lib.mk):
 *
 *   lib_plugin_leaves N W
 *
 *   mix           tiny: left alone by the tiny rule, inlined everywhere
 *   became_leaf   calls mix in the source, so the leaf rule stacks it;
 *                 once mix is inlined it calls nothing: the flat form
 *   inlined_leaf  the same, always inlined into hosts_copy: each copy
 *                 counted only where the build has inline records (-g),
 *                 its host staying current; else flat
 *   hosts_copy    holds inlined_leaf's copies: flat where they are
 *                 counted only, else keeps its push
 *   tiny_start    a thread's start, left alone by the tiny rule: its only
 *                 instrumented code is a copy of inlined_leaf, which
 *                 registers the thread (at tiny_start's start where the
 *                 copy is counted only)
 *   keeps_call    calls the C library: keeps its push
 *   in_line_stacked  calls the C library, always inlined: each copy
 *                 pushes, without the stale-frame test in host_plain,
 *                 with it in host_setjmp, which longjmp re-enters with
 *                 deep_jump's frames left above its own
 *   by_macro      instrumented by METER_FUNCTION(), always inlined into
 *                 host_macro, which the plugin instruments: its entry
 *                 finds host_macro's frame at its own address and takes
 *                 it for its host by the return address, which
 *                 host_macro's push keeps for it (plugin/entry_forms.cc,
 *                 frame_sites)
 *   nest_outer, nest_inner  push, always inlined (one into the other)
 *                 into tiny_nest, a tiny function with no entry of
 *                 its own, called at the stack's last slot (descend):
 *                 the inner copy's slow path finds the outer copy at
 *                 its own frame address and keeps it by its return
 *                 address
 *
 * main calls each N times with one round of work, then once with W
 * rounds (the time the sampled tests look at), and prints what each saw
 * of the shadow stack: "NAME=P", P the frames it pushed (its depth less
 * its caller's), then "depth=D" as seen from main at the end.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "meter.h"

#define NOINLINE __attribute__((noinline, noclone))
#define INLINE_UNTOUCHED \
	static inline __attribute__((always_inline, no_instrument_function))

static volatile unsigned long sink;
static unsigned seen_became, seen_inlined, seen_hosts, seen_keeps;

/* the depth on the thread's page, read in line: no call */
INLINE_UNTOUCHED unsigned depth_now(void)
{
	const struct meter__page_hdr *pg =
		(const struct meter__page_hdr *)meter__tls.page;

	return pg ? pg->depth : 0;
}

static unsigned mix(unsigned x)
{
	return (x * 2654435761u) >> 7;
}

NOINLINE static void became_leaf(unsigned i, unsigned long w)
{
	unsigned long k;

	seen_became = depth_now();
	for (k = 0; k < w; k++)
		sink += mix(i + (unsigned)k);
}

static inline __attribute__((always_inline)) void
inlined_leaf(unsigned i, unsigned long w)
{
	unsigned long k;

	seen_inlined = depth_now();
	for (k = 0; k < w; k++)
		sink += mix(i ^ (unsigned)k);
}

/* no loop and two statements: the tiny rule leaves it alone */
static void *tiny_start(void *arg)
{
	inlined_leaf((unsigned)(unsigned long)arg, 1);
	return NULL;
}

/* a loop, so that the tiny rule leaves it be */
NOINLINE static void hosts_copy(unsigned i, unsigned long w)
{
	unsigned r;

	seen_hosts = depth_now();
	for (r = 0; r < 2; r++)
		inlined_leaf(i + r, r ? 1 : w);
}

NOINLINE static void keeps_call(unsigned i)
{
	int k;

	seen_keeps = depth_now();
	for (k = 0; k < 2; k++)
		sink += mix(i) + (unsigned)getppid();
}

static jmp_buf jb;

static inline __attribute__((always_inline)) void
in_line_stacked(unsigned i, unsigned *seen)
{
	int k;

	*seen = depth_now();
	for (k = 0; k < 2; k++)
		sink += i + (unsigned)getppid();
}

/* stacked (it calls), n + 1 frames deep when it leaves by longjmp */
NOINLINE static void deep_jump(int n)
{
	if (n < 0)
		return;	/* never: a way out for -Winfinite-recursion */
	if (n > 0)
		deep_jump(n - 1);
	longjmp(jb, 1);
}

/* its copy's push, minus its own depth */
NOINLINE static unsigned host_plain(unsigned i)
{
	unsigned mine = depth_now(), seen = 0, r;

	for (r = 0; r < 2; r++)
		in_line_stacked(i + r, &seen);
	return seen - mine;
}

NOINLINE static unsigned host_setjmp(unsigned i)
{
	/* read after longjmp: volatile, as C asks of a local that lives
	 * across setjmp (GCC's -Wclobbered says so where it is kept in a
	 * register) */
	volatile unsigned mine = depth_now();
	unsigned seen = 0, r;

	if (!setjmp(jb))
		deep_jump(3);
	for (r = 0; r < 2; r++)
		in_line_stacked(i + r, &seen);
	return seen - mine;
}

#ifndef PLUGIN_ONLY	/* test_plugin_build's -flto builds: the plugin's alone */
static inline __attribute__((always_inline)) void
by_macro(unsigned i, unsigned *seen)
{
	int k;

	METER_FUNCTION();
	*seen = depth_now();
	for (k = 0; k < 2; k++)
		sink += i + (unsigned)getppid();
}

/* by_macro's push, minus host_macro's depth */
NOINLINE static unsigned host_macro(unsigned i)
{
	unsigned mine = depth_now(), seen = 0, r;

	for (r = 0; r < 2; r++)
		by_macro(i + r, &seen);
	return seen - mine;
}
#endif

static unsigned nest_seen;

/* a loop in each, so that the tiny rule leaves them be */
static inline __attribute__((always_inline)) void nest_inner(unsigned i)
{
	int k;

	nest_seen = depth_now();
	for (k = 0; k < 2; k++)
		sink += i + (unsigned)getppid();
}

static inline __attribute__((always_inline)) void nest_outer(unsigned i)
{
	int k;

	for (k = 0; k < 2; k++)
		sink += (unsigned)getppid();
	nest_inner(i);
}

/* no loop and one statement: the tiny rule leaves it alone */
NOINLINE static void tiny_nest(unsigned i)
{
	nest_outer(i);
}

/* down to the stack's last slot, then the nested copies' push above it
 * less the depth they were called at */
NOINLINE static unsigned descend(unsigned i)
{
	unsigned mine = depth_now(), r;

	if (mine + 1 < METER__STACK_CAP) {
		r = descend(i + 1);
		sink += r;
		return r;
	}
	tiny_nest(i);
	return nest_seen - mine;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	unsigned long w = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	unsigned mine = depth_now();
	unsigned long i;
	pthread_t t;

	for (i = 0; i < n; i++) {
		became_leaf((unsigned)i, 1);
		hosts_copy((unsigned)i, 1);
		keeps_call((unsigned)i);
	}
	became_leaf(0, w);
	hosts_copy(0, w);
	printf("host_plain=%u host_setjmp=%u\n", host_plain(1),
	       host_setjmp(2));
#ifndef PLUGIN_ONLY
	for (i = 0; i < n; i++)
		sink += host_macro((unsigned)i);
	printf("host_macro=%u\n", host_macro(3));
#endif
	printf("nested_at_cap=%u\n", descend(0));
	printf("became_leaf=%u inlined_leaf=%u hosts_copy=%u keeps_call=%u\n",
	       seen_became - mine, seen_inlined - seen_hosts,
	       seen_hosts - mine, seen_keeps - mine);
	/* after the line above: the copy sets seen_inlined */
	if (pthread_create(&t, NULL, tiny_start, (void *)7UL) ||
	    pthread_join(t, NULL))
		return 1;
	printf("depth=%u\n", depth_now());
	return 0;
}
