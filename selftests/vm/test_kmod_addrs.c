// SPDX-License-Identifier: MIT
/*
 * meter.ko counts each CPU-clock sample at the user address the thread was
 * interrupted at, with the function current then (the ADDR nests of
 * PROFILE_GET), and the wall clock at none.
 */
#include <limits.h>

#include "kmod_util.h"

/*
 * Two loops whose addresses the tests know: each runs n rounds between
 * global labels, so that a sample taken in it has an address between
 * them.  noinline: one copy of each label.
 */
extern const char loop_a_start[], loop_a_end[];
extern const char loop_b_start[], loop_b_end[];

static __attribute__((noinline)) void loop_a(uint64_t n)
{
	__asm__ volatile("loop_a_start:\n"
			 "1: dec %0\n"
			 "jnz 1b\n"
			 "loop_a_end:\n" : "+r"(n));
}

static __attribute__((noinline)) void loop_b(uint64_t n)
{
	__asm__ volatile("loop_b_start:\n"
			 "1: sub $1, %0\n"
			 "jnz 1b\n"
			 "loop_b_end:\n" : "+r"(n));
}

/* ns of this thread's CPU time in loop (in pieces between clock reads) */
static void spin(void (*loop)(uint64_t), uint64_t ns)
{
	uint64_t start = ku_thread_cpu_ns();

	while (ku_thread_cpu_ns() - start < ns)
		loop(2000000);
}

/* The samples at addresses in [lo, hi): of id, and of any other id. */
static void in_range(const struct meter_profile *p, const char *lo,
		     const char *hi, uint32_t id, uint64_t *of_id,
		     uint64_t *of_other)
{
	size_t i;

	*of_id = *of_other = 0;
	for (i = 0; i < p->naddrs; i++) {
		const struct meter_addr *a = &p->addrs[i];

		if (a->ip < (uintptr_t)lo || a->ip >= (uintptr_t)hi)
			continue;
		if (a->func == id)
			*of_id += a->samples;
		else
			*of_other += a->samples;
	}
}

FIXTURE(addrs) {
	struct meter_nl *nl;
	struct meter_page *pg;
	uint64_t cookie;
};

FIXTURE_SETUP(addrs)
{
	self->nl = ku_open();
	self->pg = ku_page();
	self->cookie = ku_register(self->nl, self->pg, 200000);
	ku_funcs(self->nl, 3);
}

FIXTURE_TEARDOWN(addrs)
{
	meter_nl_close(self->nl);
}

TEST_F(addrs, a_sample_is_counted_where_it_interrupted_the_thread)
{
	uint64_t a1, a_other, b2, b_other;
	struct meter_profile *p;

	ku_enter(self->pg, 1);
	spin(loop_a, 100000000);
	ku_leave(self->pg);
	ku_enter(self->pg, 2);
	spin(loop_b, 100000000);
	ku_leave(self->pg);
	p = ku_profile(self->nl, self->cookie, 0);
	in_range(p, loop_a_start, loop_a_end, 1, &a1, &a_other);
	in_range(p, loop_b_start, loop_b_end, 2, &b2, &b_other);
	TH_LOG("f1: %llu of %llu samples in loop_a; f2: %llu of %llu in loop_b",
		(unsigned long long)a1, (unsigned long long)ku_self(p, 1),
		(unsigned long long)b2, (unsigned long long)ku_self(p, 2));
	/* the loops hold all but the clock reads between their pieces */
	EXPECT_LT(100, a1);
	EXPECT_LE(ku_self(p, 1) * 9 / 10, a1);
	EXPECT_LT(100, b2);
	EXPECT_LE(ku_self(p, 2) * 9 / 10, b2);
	/* each loop ran with its own function current, and only then */
	EXPECT_EQ(0, a_other);
	EXPECT_EQ(0, b_other);
	meter_profile_free(p);
}

TEST_F(addrs, a_reset_empties_the_addresses)
{
	struct meter_nl_sel sel = { .cookie = self->cookie };
	uint64_t a1, a_other;
	struct meter_profile *p;
	char err[256] = "";

	ku_enter(self->pg, 1);
	spin(loop_a, 30000000);
	ku_leave(self->pg);
	ASSERT_EQ(0, meter_nl_reset(self->nl, &sel, err, sizeof(err)))
		TH_LOG("reset: %s", err);
	p = ku_profile(self->nl, self->cookie, 0);
	in_range(p, loop_a_start, loop_a_end, 1, &a1, &a_other);
	EXPECT_EQ(0, a1 + a_other);
	meter_profile_free(p);
}

/* The dumped mapping holding addr: NULL if none. */
static const struct meter_map_row *map_of(const struct meter_profile *p,
					  uintptr_t addr)
{
	size_t i;

	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].start <= addr && addr < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

TEST_F(addrs, the_mapping_of_the_sampled_code_names_its_file)
{
	const struct meter_map_row *m;
	struct meter_profile *p;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	ASSERT_LT(0, n);
	exe[n] = 0;
	p = ku_profile(self->nl, self->cookie, 0);
	m = map_of(p, (uintptr_t)loop_a_start);
	ASSERT_NE(NULL, m) TH_LOG("%zu maps, none holds loop_a", p->nmaps);
	EXPECT_STREQ(exe, m->path);
	/* the file offset: the page's, as /proc/self/maps gives it */
	EXPECT_EQ(0, m->pgoff % 4096);
	meter_profile_free(p);
}

/* new records (a dlopen's): the mappings are read again */
TEST_F(addrs, a_mapping_made_later_is_dumped_once_records_are_named)
{
	int fd = open("/proc/self/exe", O_RDONLY);
	struct meter_profile *p;
	void *at;

	ASSERT_LE(0, fd);
	at = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 8192);
	close(fd);
	ASSERT_NE(MAP_FAILED, at);
	p = ku_profile(self->nl, self->cookie, 0);
	EXPECT_EQ(NULL, map_of(p, (uintptr_t)at));
	meter_profile_free(p);
	ku_funcs(self->nl, 4);
	p = ku_profile(self->nl, self->cookie, 0);
	ASSERT_NE(NULL, map_of(p, (uintptr_t)at));
	EXPECT_EQ(8192, map_of(p, (uintptr_t)at)->pgoff);
	EXPECT_EQ((uintptr_t)at, map_of(p, (uintptr_t)at)->start);
	meter_profile_free(p);
	munmap(at, 4096);
}

/* A child's whole run, read once it has ended: nothing ticks meanwhile. */
static struct meter_profile *child_profile(struct meter_nl *nl,
					   uint32_t clock)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		ku_bail("fork", -errno, NULL);
	if (!pid) {
		struct meter_nl *cnl = ku_open();
		struct meter_page *pg = ku_page();
		struct meter_nl_reg reg = {
			.page_addr = (uintptr_t)pg,
			.period_ns = 200000,
			.clock = clock,
		};
		uint64_t cookie = 0, eff = 0;
		char err[256] = "";

		if (meter_nl_register(cnl, &reg, &cookie, &eff, err,
				      sizeof(err)))
			_exit(2);
		ku_funcs(cnl, 3);
		ku_enter(pg, 1);
		spin(loop_a, 50000000);
		ku_enter(pg, 2);
		spin(loop_b, 50000000);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		ku_bail("child", -ECHILD, "did not register and run");
	return ku_profile(nl, 0, pid);
}

TEST_F(addrs, the_addresses_hold_the_samples_the_stacks_hold)
{
	struct meter_profile *p = child_profile(self->nl, METER_CLOCK_CPU);
	uint64_t stacks = p->lost, addrs = p->addrs_lost;
	size_t i;

	for (i = 0; i < p->nstacks; i++)
		stacks += p->stacks[i].samples;
	for (i = 0; i < p->naddrs; i++)
		addrs += p->addrs[i].samples;
	TH_LOG("%zu addresses, %llu samples; stacks %llu",
		p->naddrs, (unsigned long long)addrs,
		(unsigned long long)stacks);
	EXPECT_LT(200, addrs);
	EXPECT_EQ(stacks, addrs);
	meter_profile_free(p);
}

TEST_F(addrs, wall_clock_samples_have_no_address)
{
	struct meter_profile *p = child_profile(self->nl, METER_CLOCK_WALL);

	EXPECT_LT(200, p->samples);
	EXPECT_EQ(0, p->naddrs);
	EXPECT_EQ(0, p->addrs_lost);
	meter_profile_free(p);
}

TEST_HARNESS_MAIN
