// SPDX-License-Identifier: MIT
/*
 * exec under meter-run --patch --follow-fork (test_patch_counts): the
 * program runs itself again through vfork and exec, and through fork and
 * exec; each new image is patched as it loads (the preload is inherited),
 * and the merged profile counts work() in all of them.  The vfork child
 * shares its parent's memory, the shadow stack included, until its exec.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) long work(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += i ^ sink;
	sink += s;
	return s;
}

__attribute__((noinline)) void spawn(const char *self, int use_vfork)
{
	pid_t pid = use_vfork ? vfork() : fork();
	int st;

	if (pid == 0) {
		execl(self, self, "child", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st)) {
		fprintf(stderr, "patch_exec: a child failed\n");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int i;

	if (argc > 1 && !strcmp(argv[1], "child")) {
		for (i = 0; i < 5; i++)
			work(1000);
		return 0;
	}
	for (i = 0; i < 3; i++) {
		spawn(argv[0], 1);
		spawn(argv[0], 0);
	}
	work(10);
	printf("done\n");
	return 0;
}
