// SPDX-License-Identifier: MIT
/*
 * A QEMU TCG plugin that counts the guest's instructions, user and kernel
 * apart, per vCPU, and reports them for regions the guest marks itself
 * (selftests/icount/icount.h).  Built against the qemu-plugin.h of the
 * QEMU that is installed (scripts/qemu-plugin-header); loaded by
 * `selftests/vm-run --count-insns`.
 *
 * Counting: every translation block adds its length to its vCPU's user or
 * kernel counter when it starts executing (an x86 block never mixes the
 * two: the privilege level changes only through instructions that end a
 * block, and kernel code lives in the upper half of the address space).
 * The one inexact case is a block left midway by a fault (a page fault on
 * a load, say): its instructions after the fault are counted although
 * they did not run, and the block counts again when it is re-entered.
 * Blocks cut short by interrupts are not affected: interrupts are taken
 * between blocks.
 *
 * Markers: the guest executes `nopl MARK(%rax,%rax,1)`, an 8-byte no-op
 * whose 32-bit displacement is 0x4d490000 | op ("MI").  The plugin sees
 * the bytes when it translates the block and calls back when the marker
 * runs.  op 1 (begin) takes a snapshot of every vCPU's counters; op 2
 * (end) writes one line to out= (a FIFO that vm-run connects to the
 * guest's virtio port meter.icount):
 *
 *	icount SEQ user U kernel K cpu0 U0 K0 cpu1 U1 K1 ...\n
 *
 * the instructions run since the begin marker, strictly between the two
 * markers, on every vCPU (U and K are the sums).  Without out= the lines
 * go to QEMU's log (qemu_plugin_outs).
 *
 * Arguments: out=PATH.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MARK_HI		0x4d490000u
#define OP_BEGIN	1u
#define OP_END		2u
#define MAX_VCPUS	64

/* one cache line per vCPU: each vCPU thread writes only its own */
struct counts {
	uint64_t n[2];			/* [0] user, [1] kernel */
	uint64_t pad[6];
};

static struct counts cpus[MAX_VCPUS];
static uint64_t snap[MAX_VCPUS][2];
static int n_vcpus;
static int out_fd = -1;
static uint64_t seq;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* udata of a block: its length and whether it is kernel code */
#define TB_DATA(n, k)	((void *)(uintptr_t)(((uint64_t)(n) << 1) | (k)))

static void tb_exec(unsigned int vcpu, void *udata)
{
	uintptr_t d = (uintptr_t)udata;

	if (vcpu < MAX_VCPUS)
		cpus[vcpu].n[d & 1] += d >> 1;
}

/*
 * udata of a marker: op, kernel bit and how many of its block's
 * instructions the region must not see (the block was counted whole when
 * it started).
 */
#define MARK_DATA(op, k, adj) \
	((void *)(uintptr_t)(((uint64_t)(adj) << 8) | ((k) << 4) | (op)))

static void write_all(const char *s, size_t len)
{
	while (len > 0) {
		ssize_t w = write(out_fd, s, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		len -= (size_t)w;
	}
}

static void mark_exec(unsigned int vcpu, void *udata)
{
	uintptr_t d = (uintptr_t)udata;
	unsigned int op = d & 0xf, k = (d >> 4) & 1;
	uint64_t adj = d >> 8, tot[2] = { 0, 0 };
	uint64_t u[MAX_VCPUS], kn[MAX_VCPUS];
	char line[64 + 48 * MAX_VCPUS];
	size_t len;
	int i;

	pthread_mutex_lock(&lock);
	if (op == OP_BEGIN) {
		for (i = 0; i < n_vcpus; i++) {
			snap[i][0] = cpus[i].n[0];
			snap[i][1] = cpus[i].n[1];
		}
		/* the block's instructions after the marker are the region's */
		if (vcpu < MAX_VCPUS)
			snap[vcpu][k] -= adj;
		pthread_mutex_unlock(&lock);
		return;
	}
	for (i = 0; i < n_vcpus; i++) {
		u[i] = cpus[i].n[0] - snap[i][0];
		kn[i] = cpus[i].n[1] - snap[i][1];
		/* ... and those from the marker on are not */
		if ((unsigned int)i == vcpu)
			*(k ? &kn[i] : &u[i]) -= adj;
		tot[0] += u[i];
		tot[1] += kn[i];
	}
	len = snprintf(line, sizeof(line), "icount %" PRIu64 " user %" PRIu64
		       " kernel %" PRIu64, ++seq, tot[0], tot[1]);
	for (i = 0; i < n_vcpus; i++)
		len += snprintf(line + len, sizeof(line) - len,
				" cpu%d %" PRIu64 " %" PRIu64, i, u[i], kn[i]);
	len += snprintf(line + len, sizeof(line) - len, "\n");
	if (out_fd >= 0)
		write_all(line, len);
	else
		qemu_plugin_outs(line);
	pthread_mutex_unlock(&lock);
}

/* the marker's op, or 0: nopl disp32(%rax,%rax,1) = 0f 1f 84 00 disp32 */
static unsigned int marker_op(struct qemu_plugin_insn *insn)
{
	const uint8_t *b = qemu_plugin_insn_data(insn);
	uint32_t disp;

	if (qemu_plugin_insn_size(insn) != 8 || b[0] != 0x0f ||
	    b[1] != 0x1f || b[2] != 0x84 || b[3] != 0x00)
		return 0;
	memcpy(&disp, b + 4, 4);
	if ((disp & 0xffff0000u) != MARK_HI)
		return 0;
	disp &= 0xffff;
	return disp == OP_BEGIN || disp == OP_END ? disp : 0;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	unsigned int k = qemu_plugin_tb_vaddr(tb) >> 63;

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     TB_DATA(n, k));
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		unsigned int op = marker_op(insn);
		/* begin: the n - 1 - i after it; end: the n - i from it on */
		size_t adj = op == OP_BEGIN ? n - 1 - i : n - i;

		if (op)
			qemu_plugin_register_vcpu_insn_exec_cb(
				insn, mark_exec, QEMU_PLUGIN_CB_NO_REGS,
				MARK_DATA(op, k, adj));
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "icount plugin: x86_64 system emulation only\n");
		return -1;
	}
	n_vcpus = info->system.max_vcpus;
	if (n_vcpus > MAX_VCPUS) {
		fprintf(stderr, "icount plugin: at most %d vCPUs\n", MAX_VCPUS);
		return -1;
	}
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			/* read-write: a FIFO opens at once, reader or not */
			out_fd = open(argv[i] + 4, O_RDWR | O_CLOEXEC);
			if (out_fd < 0) {
				fprintf(stderr, "icount plugin: %s: %s\n",
					argv[i] + 4, strerror(errno));
				return -1;
			}
		} else {
			fprintf(stderr, "icount plugin: unknown argument '%s'\n",
				argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
