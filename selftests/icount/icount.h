/* SPDX-License-Identifier: MIT */
/*
 * Guest side of the instruction counter (selftests/icount/plugin.c): mark
 * a region, then read what the VM executed in it, exactly, user and
 * kernel apart, per vCPU.  Works only in a VM started by
 * `selftests/vm-run --count-insns`; elsewhere the markers are no-ops and
 * icount_open() fails.
 *
 *	int fd = icount_open();
 *	ICOUNT_BEGIN();
 *	... region ...
 *	ICOUNT_END();
 *	icount_read(fd, &c);
 *
 * Every vCPU's instructions between the two markers count, whichever
 * process runs them: pin what is measured and keep the other vCPUs idle
 * (or read them apart: c.cpu[i]).
 */
#ifndef METER_ICOUNT_H
#define METER_ICOUNT_H

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* nopl 0x4d49000N(%rax,%rax,1): the plugin's markers */
#define ICOUNT_MARK(op) \
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0x00\n\t.long 0x4d490000 + " \
			 #op ::: "memory")
#define ICOUNT_BEGIN()	ICOUNT_MARK(1)
#define ICOUNT_END()	ICOUNT_MARK(2)

#define ICOUNT_MAX_CPUS 16

struct icount {
	uint64_t seq, user, kernel;
	int ncpus;
	uint64_t cpu[ICOUNT_MAX_CPUS][2];	/* user, kernel */
};

/* The virtio port the plugin's reports arrive on, or -1. */
static inline int icount_open(void)
{
	DIR *d = opendir("/sys/class/virtio-ports");
	struct dirent *e;
	int fd = -1;

	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		char path[300], name[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) &&
		    !strcmp(name, "meter.icount\n")) {
			snprintf(path, sizeof(path), "/dev/%s", e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		fclose(f);
	}
	closedir(d);
	return fd;
}

/* Parses one report line; 0 or -1. */
static inline int icount_parse(const char *line, struct icount *c)
{
	int n, off;

	memset(c, 0, sizeof(*c));
	if (sscanf(line, "icount %" SCNu64 " user %" SCNu64 " kernel %" SCNu64
		   "%n", &c->seq, &c->user, &c->kernel, &off) != 3)
		return -1;
	line += off;
	while (c->ncpus < ICOUNT_MAX_CPUS &&
	       sscanf(line, " cpu%d %" SCNu64 " %" SCNu64 "%n", &n,
		      &c->cpu[c->ncpus][0], &c->cpu[c->ncpus][1], &off) == 3 &&
	       n == c->ncpus) {
		c->ncpus++;
		line += off;
	}
	return 0;
}

/* The report of the last ICOUNT_END(): blocks until it arrives. */
static inline int icount_read(int fd, struct icount *c)
{
	char line[1024];
	size_t len = 0;

	while (len < sizeof(line) - 1) {
		ssize_t r = read(fd, line + len, 1);

		if (r <= 0)
			return -1;
		if (line[len] == '\n')
			break;
		len++;
	}
	line[len] = 0;
	return icount_parse(line, c);
}

#endif
