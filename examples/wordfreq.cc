// SPDX-License-Identifier: MIT
/*
 * wordfreq: a C++ program built as C++ is usually built (-O2, templates,
 * lambdas, the standard library), with meter's GCC plugin, the example of
 * C++ names in reports (user guide, "C++ programs").
 *
 *   wordfreq [WORDS]     count WORDS words (default 200000)
 *
 * A text of pseudo-random words is made (Text::make), its words counted in
 * a std::unordered_map (Counter<std::string>::add), the counts sorted by
 * a lambda and the three most frequent printed.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

const char *const vocabulary[] = {
	"meter", "profile", "sample", "tick", "call", "count", "stack",
	"frame", "thread", "kernel", "page", "record", "session", "report",
};

class Text {
public:
	explicit Text(unsigned long seed) : state_(seed) {}

	std::vector<std::string> make(long words)
	{
		std::vector<std::string> out;

		out.reserve(words);
		for (long i = 0; i < words; i++)
			out.push_back(word());
		return out;
	}

private:
	std::string word()
	{
		std::string w = vocabulary[next() % 14];

		/* a suffix makes a few thousand distinct words */
		w += std::to_string(next() % 300);
		return w;
	}

	unsigned long next()
	{
		state_ = state_ * 6364136223846793005UL + 1442695040888963407UL;
		return state_ >> 33;
	}

	unsigned long state_;
};

template <typename Key>
class Counter {
public:
	void add(const Key &k) { ++counts_[k]; }

	std::vector<std::pair<Key, long>> sorted() const
	{
		std::vector<std::pair<Key, long>> v(counts_.begin(),
						    counts_.end());

		std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) {
			return a.second != b.second ? a.second > b.second :
						      a.first < b.first;
		});
		return v;
	}

private:
	std::unordered_map<Key, long> counts_;
};

} // namespace

int main(int argc, char **argv)
{
	long words = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 200000;
	Counter<std::string> counter;

	if (words < 1) {
		std::fprintf(stderr, "usage: wordfreq [WORDS >= 1]\n");
		return 2;
	}
	for (int round = 0; round < 3; round++) {
		Text text(42 + round);

		for (const std::string &w : text.make(words / 3))
			counter.add(w);
	}
	auto top = counter.sorted();
	for (size_t i = 0; i < 3 && i < top.size(); i++)
		std::printf("%s %ld\n", top[i].first.c_str(), top[i].second);
	return 0;
}
