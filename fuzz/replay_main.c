// SPDX-License-Identifier: MIT
/*
 * The replay driver: a fuzz target without libFuzzer, for make check
 * (selftests/host/test_fuzz_replay.sh).  Each file named is read and
 * handed to LLVMFuzzerTestOneInput() once, in a buffer of exactly its
 * size so that AddressSanitizer catches a read past the end as libFuzzer
 * would.  Built with gcc, so check needs no clang; a crash, a sanitizer
 * report or a leak ends the process with a non-zero status, and the name
 * printed last is the input that did it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
	size_t cap = 4096, n = 0, got;
	uint8_t *buf = malloc(cap), *exact, *nb;
	FILE *f = fopen(path, "rb");

	if (!f || !buf) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		free(buf);
		if (f)
			fclose(f);
		return -1;
	}
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(f) || n == cap) {
		fprintf(stderr, "replay: %s: cannot read it whole\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	exact = malloc(n ? n : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, n);
	free(buf);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
	LLVMFuzzerTestOneInput(exact, n);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int i, failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	for (i = 1; i < argc; i++)
		if (replay(argv[i]))
			failed = 1;
	if (!failed)
		fprintf(stderr, "replay: %d inputs, no crash\n", argc - 1);
	return failed;
}
