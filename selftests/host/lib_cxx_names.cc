// SPDX-License-Identifier: MIT
/*
 * C++ names the size of ninja's: 1000 functions, Deep<T, I>::run() for I
 * in 0..999, whose demangled names run to about 270 characters and differ
 * only in their last ones (I), as a template's instantiations do.  Built with
 * meter's GCC plugin at -O2.  Deep<T, I>::run() is called I % 5 + 1 times.
 *
 *   lib_cxx_names        prints "functions=1000 calls=N" (N: all calls)
 */
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

/* Deep<Long, I>::run() is 268 to 270 characters, demangled */
using Long = std::map<std::vector<long>, std::pair<double, unsigned short>>;

static volatile unsigned long sink;

template <typename T, int I>
struct Deep {
	/* past the plugin's tiny functions, which it leaves uncounted */
	__attribute__((noinline)) static void run()
	{
		for (int k = 0; k < 3; k++)
			sink = sink * 31 + I + k;
	}
};

/* Deep<Long, I>::run() I % 5 + 1 times, for I from Lo to I */
template <int I, int Lo>
struct Chain {
	static unsigned long go()
	{
		unsigned long calls = Chain<I - 1, Lo>::go();

		for (int k = 0; k < I % 5 + 1; k++, calls++)
			Deep<Long, I>::run();
		return calls;
	}
};

template <int Lo>
struct Chain<Lo - 1, Lo> {
	static unsigned long go() { return 0; }
};

int main()
{
	/* two chains: a template recursion 1000 deep is past GCC's limit */
	unsigned long calls = Chain<499, 0>::go() + Chain<999, 500>::go();

	std::printf("functions=1000 calls=%lu\n", calls);
	return 0;
}
