// SPDX-License-Identifier: MIT
/*
 * C++ exceptions through patched frames (test_patch_counts): thrown from
 * recursion and caught levels up, past destructors that call patched
 * functions while the stack unwinds, rethrown from a catch, caught and
 * thrown again inside a loop, and thrown from deeper than the shadow
 * stack's page (1008 frames).  Built as users build (-O2 -g); prints a
 * checksum that the patched run must print too.  With a file name, it
 * first waits for the file to exist (test_patch_attach: a C++ process to
 * attach to), having created the second file it is given, if any: the
 * sign that it runs main, past the dynamic loader.
 */
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <unistd.h>

static volatile long sink;

extern "C" __attribute__((noinline)) void on_cleanup(long x)
{
	sink += x;
}

struct guard {
	long v;
	explicit guard(long x) : v(x) {}
	~guard() { on_cleanup(v); }
};

extern "C" __attribute__((noinline)) long thrower(int n)
{
	guard g(n);

	if (n == 0)
		throw std::runtime_error("bottom");
	return thrower(n - 1) + sink;
}

extern "C" __attribute__((noinline)) long rethrower(int n)
{
	try {
		return thrower(n);
	} catch (const std::exception &) {
		sink += 1;
		throw;
	}
}

extern "C" __attribute__((noinline)) long catcher(int n)
{
	try {
		return rethrower(n);
	} catch (const std::runtime_error &e) {
		return (long)e.what()[0];
	}
}

/* after a catch the live frames' returns are caught again */
extern "C" __attribute__((noinline)) long after_catch(int n)
{
	long s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += catcher(i % 5);
	return s;
}

/* a frame with a cleanup at every level: a recursion, not a loop */
extern "C" __attribute__((noinline)) long deep_throw(int n)
{
	guard g(1);

	if (n == 0)
		throw 7;
	return deep_throw(n - 1) + 1;
}

int main(int argc, char **argv)
{
	long s = 0;
	int i;

	if (argc > 2) {
		std::FILE *ready = std::fopen(argv[2], "w");

		if (!ready || std::fclose(ready))
			return 2;
	}
	while (argc > 1 && access(argv[1], F_OK) != 0)
		usleep(10000);

	for (i = 0; i < 20; i++)
		s += after_catch(10);
	for (i = 0; i < 3; i++) {
		try {
			s += deep_throw(1500);
		} catch (int v) {
			s += v;
		}
	}
	std::printf("%ld %ld\n", s, (long)sink);
	return 0;
}
