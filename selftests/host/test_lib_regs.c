// SPDX-License-Identifier: MIT
/*
 * The slow paths of METER_FUNCTION() and METER_FUNCTION_FLAT() (a thread's
 * first profiled call registers it: mmap, timers, libc's vectorised string
 * functions) leave the caller's registers alone: integer, floating-point
 * and AVX arguments are intact after the macro, on fresh threads, for
 * every backend (the variants).  The test re-runs itself as the profiled
 * program.
 */
#include <pthread.h>
#include <immintrin.h>

#include "kselftest_harness.h"
#include "lib_run.h"
#include "meter.h"

#define NOINLINE __attribute__((noinline, noclone))

static int bad;

NOINLINE static double stacked_scalars(long a, long b, long c, long d,
				       long e, long f, double x0, double x1,
				       double x2, double x3, double x4,
				       double x5, double x6, double x7)
{
	METER_FUNCTION();
	return (double)(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f) +
	       x0 + 2 * x1 + 3 * x2 + 4 * x3 + 5 * x4 + 6 * x5 + 7 * x6 +
	       8 * x7;
}

NOINLINE static double flat_scalars(long a, long b, long c, long d,
				    long e, long f, double x0, double x1,
				    double x2, double x3, double x4,
				    double x5, double x6, double x7)
{
	METER_FUNCTION_FLAT();
	return (double)(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f) +
	       x0 + 2 * x1 + 3 * x2 + 4 * x3 + 5 * x4 + 6 * x5 + 7 * x6 +
	       8 * x7;
}

#define SCALAR_ARGS 1, 2, 3, 4, 5, 6, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5
/* 91 + 0.5 + 3 + 7.5 + 14 + 22.5 + 33 + 45.5 + 60 */
#define SCALAR_SUM 277.0

__attribute__((target("avx"))) NOINLINE static double
stacked_avx(__m256d a, __m256d b, __m256d c, __m256d d)
{
	METER_FUNCTION();
	double r[4];

	_mm256_storeu_pd(r, _mm256_add_pd(_mm256_add_pd(a, b),
					  _mm256_add_pd(c, d)));
	return r[0] + 10 * r[1] + 100 * r[2] + 1000 * r[3];
}

__attribute__((target("avx"))) NOINLINE static double
flat_avx(__m256d a, __m256d b, __m256d c, __m256d d)
{
	METER_FUNCTION_FLAT();
	double r[4];

	_mm256_storeu_pd(r, _mm256_add_pd(_mm256_add_pd(a, b),
					  _mm256_add_pd(c, d)));
	return r[0] + 10 * r[1] + 100 * r[2] + 1000 * r[3];
}

__attribute__((target("avx"))) static void check_avx(int flat)
{
	__m256d a = _mm256_set_pd(4, 3, 2, 1);	/* lanes 1, 2, 3, 4 */
	__m256d b = _mm256_set_pd(40, 30, 20, 10);
	__m256d c = _mm256_set_pd(400, 300, 200, 100);
	__m256d d = _mm256_set_pd(4000, 3000, 2000, 1000);
	/* lanes 1111, 2222, 3333, 4444 */
	double want = 1111 + 22220 + 333300 + 4444000;
	double got = flat ? flat_avx(a, b, c, d) : stacked_avx(a, b, c, d);

	if (got != want)
		bad++;
}

static void *thread_main(void *arg)
{
	int which = (int)(intptr_t)arg;

	/* the thread's first profiled call takes the slow path */
	switch (which) {
	case 0:
		if (stacked_scalars(SCALAR_ARGS) != SCALAR_SUM)
			bad++;
		break;
	case 1:
		if (flat_scalars(SCALAR_ARGS) != SCALAR_SUM)
			bad++;
		break;
	case 2:
		check_avx(0);
		break;
	case 3:
		check_avx(1);
		break;
	}
	return NULL;
}

static int child(void)
{
	int avx = __builtin_cpu_supports("avx");
	int i, r;

	for (r = 0; r < 20; r++)
		for (i = 0; i < (avx ? 4 : 2); i++) {
			pthread_t t;

			if (pthread_create(&t, NULL, thread_main,
					   (void *)(intptr_t)i) ||
			    pthread_join(t, NULL))
				bad++;
		}
	printf("avx=%d bad=%d\n", avx, bad);
	return 0;
}

FIXTURE(regs) {
	char out[256];
};

FIXTURE_VARIANT(regs) {
	const char *backend;
};

FIXTURE_VARIANT_ADD(regs, off) { .backend = "off" };
FIXTURE_VARIANT_ADD(regs, signal) { .backend = "signal" };
/* without meter.ko: registration fails, every call takes the slow path */
FIXTURE_VARIANT_ADD(regs, kernel) { .backend = "kernel" };

FIXTURE_SETUP(regs)
{
	const char *args[] = { "child", NULL };
	struct meter_profile *p;
	int status;

	p = run_profile("test_lib_regs", variant->backend, args, self->out,
			sizeof(self->out), variant->backend, NULL, &status);
	meter_profile_free(p);
	ASSERT_EQ(0, status);
}

FIXTURE_TEARDOWN(regs)
{
	scratch_cleanup();
}

TEST_F(regs, arguments_intact_after_the_slow_paths)
{
	EXPECT_NE(NULL, strstr(self->out, "bad=0")) TH_LOG("%s", self->out);
}

/* "child": the profiled program, this executable again; else the tests */
int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	return test_harness_run(argc, argv);
}
