// SPDX-License-Identifier: MIT
/*
 * vm-icount [-o FILE] [--] COMMAND [ARG...]: run COMMAND in a VM started
 * by `selftests/vm-run --count-insns` and print the instructions the VM
 * executed meanwhile (fork, COMMAND, its exit and the wait; every vCPU;
 * user and kernel apart) as the plugin's report line, on stderr or into
 * FILE.  Exits with COMMAND's status (128+N if signal N killed it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "icount.h"

int main(int argc, char **argv)
{
	const char *out = NULL;
	struct icount c;
	int fd, st, i = 1;
	pid_t pid;
	FILE *f;

	if (i + 1 < argc && !strcmp(argv[i], "-o")) {
		out = argv[i + 1];
		i += 2;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc) {
		fprintf(stderr, "usage: vm-icount [-o FILE] [--] COMMAND [ARG...]\n");
		return 2;
	}
	fd = icount_open();
	if (fd < 0) {
		fprintf(stderr, "vm-icount: no meter.icount port (run in selftests/vm-run --count-insns)\n");
		return 2;
	}
	ICOUNT_BEGIN();
	pid = fork();
	if (pid == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "vm-icount: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0) {
		perror("vm-icount");
		return 2;
	}
	ICOUNT_END();
	if (icount_read(fd, &c) < 0) {
		fprintf(stderr, "vm-icount: no report from the plugin\n");
		return 2;
	}
	f = out ? fopen(out, "w") : stderr;
	if (!f) {
		perror(out);
		return 2;
	}
	fprintf(f, "icount user %" PRIu64 " kernel %" PRIu64, c.user, c.kernel);
	for (i = 0; i < c.ncpus; i++)
		fprintf(f, " cpu%d %" PRIu64 " %" PRIu64, i, c.cpu[i][0],
			c.cpu[i][1]);
	fprintf(f, "\n");
	if (out)
		fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
