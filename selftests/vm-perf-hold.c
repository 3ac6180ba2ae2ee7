// SPDX-License-Identifier: MIT
/*
 * vm-perf-hold: keeps one per-task perf event open for the life of a test
 * VM, started by vm-run's init before anything else runs.
 *
 * Why: the first per-task perf event switches on the static key behind
 * perf's context-switch hooks, and the last one to go switches it off; the
 * kernel patches __schedule's code live (text_poke_bp) each time.  Under
 * QEMU's multi-threaded TCG that patching has been seen to leave the other
 * vCPU executing the temporary int3 ("Oops: int3" in __schedule, 6.12),
 * which is an emulation artefact, not a fault of the code being tested.
 * Holding an event keeps the key on, so the code is patched once, here,
 * while the VM is idle, and never under a test.  vm-run now runs one TCG
 * thread, which keeps live patching coherent (meter.ko's own preempt-
 * notifier key is patched under tests); the hold stays so that every VM,
 * the counted one included, has perf's switch hooks on as bench's
 * figures were measured, and for VM_RUN_TCG_THREAD=multi.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		perror("vm-perf-hold: perf_event_open");
		return 1;
	}
	for (;;)
		pause();
}
