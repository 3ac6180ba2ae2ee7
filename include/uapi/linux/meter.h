/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * meter: Appel-style profiling with a kernel CPU-time timer.
 *
 * This header is the one contract between meter.ko and userspace: the
 * generic netlink family, its commands and attribute tree, the layout of
 * the page each profiled thread shares with the kernel, and the limits.
 *
 * ---------------------------------------------------------------------
 * The shared page
 * ---------------------------------------------------------------------
 * Each profiled thread owns one page-aligned, page-sized block of private
 * anonymous memory laid out as struct meter_page.  The thread writes it;
 * the module pins it at registration and only reads it, from the sampling
 * interrupt on the CPU where the thread runs.  Because the interrupt
 * interrupts the thread itself, the thread needs only compiler ordering
 * (a signal fence), never atomics (with METER_CLOCK_WALL the page is also
 * read from other CPUs while the thread runs: on x86 its stores are seen
 * in program order, and a read that races an entry or a return sees the
 * stack one frame early or late):
 *
 *   on entry:   stack[depth] = id; current = id; depth = depth + 1;
 *   on return:  depth = depth - 1; current = depth ? stack[depth - 1] : 0;
 *
 * (current and depth are adjacent: a return may restore both in one
 * 64-bit store.)  A function may also be "flat": on entry current = id,
 * on return current = the caller's id, nothing pushed.  The sampled stack
 * is stack[0..depth), then current if it is not the top of that stack (a
 * flat function, or a call between its two stores): the current function
 * is always the leaf.
 *
 * depth may grow past METER_STACK_CAP (deep recursion): frames beyond the
 * capacity have no slot in stack[].  The library then keeps the frames
 * nearest the leaf in deep[]: deep[i] is frame deep_top -
 * METER_DEEP_WINDOW + i (frame k is the one stack[k] would hold), written
 * on every push past the capacity, with deep_top set to 0 while it is
 * rewritten.  Frames of deep[] at or above depth are stale (popped);
 * deep_top below depth, or 0, means none is known.  The sampled stack is
 * then the known frames that end at the top (cut to the ones nearest the
 * leaf, and marked truncated), then current if it is not the known top:
 * the leaf is current at any depth.  Nothing read from the page is
 * trusted: an id of 0 means "no current function"; an id above the
 * session's registered ids or a magic or version mismatch is counted as
 * invalid.
 *
 * ---------------------------------------------------------------------
 * Commands (family METER_GENL_NAME, version METER_GENL_VERSION)
 * ---------------------------------------------------------------------
 * METER_CMD_REGISTER (do; the sending thread registers itself)
 *   in:  METER_A_PAGE_ADDR        u64  address of the thread's meter_page
 *        METER_A_PERIOD_NS        u64  optional, sampling period
 *        METER_A_PARENT_COOKIE    u64  optional, the session of the
 *                                      nearest profiled ancestor (a forked
 *                                      child's parent, the process above an
 *                                      exec), or a token of the tool that
 *                                      started the tree; echoed, not checked
 *        METER_A_CALL_COST_PS     u64  optional, calibrated cost of one
 *                                      instrumented call, picoseconds
 *        METER_A_COUNTS_ADDR      u64  optional, the thread's live call
 *                                      counters (below)
 *        METER_A_CLOCK            u32  optional, enum meter_clock
 *   out: METER_A_COOKIE, METER_A_PERIOD_NS (effective period),
 *        METER_A_CLOCK (the session's clock)
 *   The first thread of a process creates its session, with its period
 *   and clock; later threads of the same process (same mm) join it and
 *   take the session's.
 *
 * Clocks.  METER_CLOCK_CPU samples each thread on its own CPU time (a
 * perf task-clock counter; the tick runs on the thread's CPU, in the
 * thread's context).  METER_CLOCK_WALL samples each thread on wall-clock
 * time whether it runs or not (a per-thread hrtimer in hard interrupt
 * context, on any CPU): each sample is charged to the current function
 * and stack with the thread's state at that moment (enum
 * meter_sample_state): on a CPU, runnable but waiting for one, or blocked
 * (sleeping, waiting on I/O, a lock, a futex).  A sleeping thread costs
 * one read of its pinned page per tick.
 *
 * METER_CMD_UNREGISTER (do; the sending thread)
 *   Stops sampling the thread and folds its counts into its session.
 *
 * METER_CMD_ADD_FUNCS (do; the sender's session)
 *   in:  METER_A_FUNCS (nest) of METER_A_FUNC (nest, repeated):
 *          METER_A_FUNC_ID u32, METER_A_FUNC_NAME string,
 *          METER_A_FUNC_FILE string (optional), METER_A_FUNC_LINE u32
 *          (optional): the source the function is defined in and the
 *          line its definition starts on (a runtime's functions: Python's),
 *          METER_A_FUNC_COST_PS u64 (optional): what one call of the
 *          function's instrumentation costs where it is not the session's
 *          CALL_COST_PS (a runtime's calls through the explicit API;
 *          a flat function's, the flat sequence's)
 *   Names a function id.  Ids are chosen by userspace, 1..METER_FUNCS_MAX.
 *   A name and its file take at most METER_FUNC_NAME_MAX bytes together,
 *   each with its NUL.
 *   A request applies whole or not at all (an error names nothing).
 *
 * METER_CMD_ADD_CALLS (do; the sender's session)
 *   in:  METER_A_CALLS  binary, an array of struct meter_call_counts
 *        METER_A_TID      u32  optional, the thread whose counters these
 *                              are (default: the sender)
 *        METER_A_LAST     flag optional, the thread's last ADD_CALLS
 *        METER_A_SLOW_ENTRIES u64 optional, the thread's calls that
 *                              took libmeter's slow path since its last
 *                              ADD_CALLS (the session sums them)
 *   Adds call counts (Appel's CC), kept per thread in userspace and
 *   flushed at thread exit and process exit, ids in ascending order over
 *   as many messages as needed.  The thread's live counters (below) are
 *   folded as they arrive: ids up to the highest id of the message are no
 *   longer read from its memory, none after METER_A_LAST; the session
 *   holds them from then on.
 *
 * Live call counts.  A thread that gives METER_A_COUNTS_ADDR keeps its
 * call counts there: an array of __u64 indexed by function id (index 0
 * unused), 8-byte aligned, in private anonymous memory, each counter
 * written with one aligned 64-bit store (a plain increment).  Until its
 * counts are folded by ADD_CALLS, a PROFILE_GET reads counters 1..the
 * highest named id from the thread's memory and adds them to FUNC_CALLS,
 * so that a running program's snapshot has every call made so far: never
 * more than were made, never fewer than an earlier snapshot's.  Memory
 * that is not private anonymous, or not mapped, is not read (the thread's
 * counts are then missing from the snapshot).  SESSION_RESET keeps the
 * values it saw as the thread's base and subtracts them from what is read
 * and folded later.
 *
 * METER_CMD_SET_PERIOD (do; the sender's session)
 *   in:  METER_A_PERIOD_NS u64; applies to all the session's threads.
 *
 * METER_CMD_SESSION_GET (dump: every readable session; do: one session)
 *   in:  (do) METER_A_COOKIE or METER_A_PID (newest session of that pid)
 *   out: one message per session, attributes at top level:
 *        COOKIE, PARENT_COOKIE, PID, UID, COMM, STATE, THREADS,
 *        THREADS_TOTAL, PERIOD_NS, START_NS, END_NS, SAMPLES, NO_CURRENT,
 *        INVALID, LOST, TRUNCATED, NFUNCS, NSTACKS, CALL_COST_PS, TICKS,
 *        CLOCK, SAMPLES_RUNQ, SAMPLES_BLOCKED, SLOW_ENTRIES,
 *        STRETCHED_TICKS, NADDRS, ADDRS_LOST, NMAPS
 *   SAMPLES counts periods of the thread's CPU time: a late interrupt
 *   weighs the whole periods that passed since the previous one, so
 *   SAMPLES per CPU-second is the requested rate.  TICKS counts the
 *   sampling interrupts actually taken for the session's threads (about
 *   SAMPLES when interrupts come on time; fewer where they come late, as
 *   under emulation).  Every other counter is in samples.  With
 *   METER_CLOCK_WALL, SAMPLES counts periods of wall-clock time of every
 *   registered thread; SAMPLES_RUNQ and SAMPLES_BLOCKED are the part of
 *   them taken off the CPU (both 0 with METER_CLOCK_CPU).
 *   STRETCHED_TICKS counts the wall-clock ticks that came later than the
 *   period because the owner's threads together asked for more ticks a
 *   second than the module's user_wall_ticks budget (unprivileged users
 *   only); each weighs the periods it stands for, so SAMPLES stays whole.
 *   NADDRS counts the session's distinct (address, current function)
 *   pairs, ADDRS_LOST the CPU-clock samples whose pair was not kept (the
 *   module's addr_entries reached).  NMAPS counts the MAP nests.
 *
 * METER_CMD_PROFILE_GET (dump)
 *   in:  METER_A_COOKIE or METER_A_PID
 *   out: a snapshot of the session taken when the dump starts, as a run of
 *        messages, each carrying exactly one of these nests:
 *        METER_A_SESSION  (nest) the attributes of SESSION_GET, first
 *        METER_A_FUNC     (nest) FUNC_ID, FUNC_NAME, FUNC_CALLS,
 *                                FUNC_SELF, FUNC_TOTAL, FUNC_ALLOC_CALLS,
 *                                FUNC_ALLOC_BYTES, FUNC_SELF_RUNQ,
 *                                FUNC_SELF_BLOCKED, FUNC_FILE,
 *                                FUNC_LINE and FUNC_COST_PS (where
 *                                ADD_FUNCS gave them)
 *        METER_A_STACK    (nest) STACK_SAMPLES, STACK_FRAMES (binary,
 *                                __u32 ids, root first), STACK_TRUNCATED
 *                                (flag), STACK_STATE (u32, absent: on a
 *                                CPU), STACK_TID (u32, the thread
 *                                sampled)
 *        METER_A_THREAD   (nest) THREAD_TID, THREAD_SAMPLES,
 *                                THREAD_STATE, THREAD_COMM (string, the
 *                                thread's name when it registered or,
 *                                once it has ended, when it ended),
 *                                THREAD_FOLDED (u32: past the module's
 *                                max_thread_rows, this many ended
 *                                threads with the fewest samples
 *                                together in one nest, TID 0, no COMM)
 *        METER_A_ADDR     (nest) ADDR_IP (u64, the user address the
 *                                thread was to resume at), ADDR_FUNC
 *                                (u32, the current function's id),
 *                                ADDR_SAMPLES (u64); CPU clock only
 *        METER_A_MAP      (nest) MAP_START, MAP_END (u64, the range),
 *                                MAP_PGOFF (u64, the file offset at
 *                                START), MAP_PATH (string): an
 *                                executable file mapping of the process
 *   FUNC_TOTAL counts each sample once per function however often the
 *   function recurs in the sampled stack.  FUNC_SELF counts every sample
 *   as current; FUNC_SELF_RUNQ and FUNC_SELF_BLOCKED the part of it taken
 *   off the CPU (wall clock).  A stack is kept once per thread and state:
 *   the same frames may come as several STACK nests.  The ADDR nests
 *   split the CPU-clock samples by where the thread was interrupted: with
 *   the program's line table, they tell a function's own instructions
 *   from the instrumentation's and from those of an uninstrumented
 *   function inlined into it.  A sample taken in the kernel counts at the
 *   address the thread returns to.  The MAP nests are the process's
 *   executable file mappings as of the last REGISTER or ADD_FUNCS of any
 *   of its threads (at most 4096; the path as the process saw it, one
 *   longer than 2047 bytes left out).
 *
 * METER_CMD_SESSION_RESET (do)  in: COOKIE or PID.  Zeroes the counters.
 * METER_CMD_SESSION_DEL (do)    in: COOKIE or PID.  Forgets a finished
 *                               session (a live one: -EBUSY).
 *
 * Errors come back as negative errno with an extended-ack message.
 * Reading, resetting and deleting a session needs the uid that registered
 * it, or CAP_PERFMON or CAP_SYS_ADMIN; a session registered by a
 * non-dumpable or set-id process needs CAP_PERFMON or CAP_SYS_ADMIN.
 * Limits (module parameters) give an error when hit, never a silent
 * truncation: see Documentation/security.md.
 */
#ifndef _UAPI_LINUX_METER_H
#define _UAPI_LINUX_METER_H

#include <linux/types.h>

#define METER_GENL_NAME		"meter"
#define METER_GENL_VERSION	1

/* The shared page. */
#define METER_PAGE_MAGIC	0x5254454dU	/* "METR" little-endian */
#define METER_PAGE_VERSION	1
#define METER_PAGE_SIZE		4096
#define METER_PAGE_HDR_WORDS	16
#define METER_STACK_CAP		(METER_PAGE_SIZE / 4 - METER_PAGE_HDR_WORDS)
#define METER_DEEP_WINDOW	10	/* frames kept past the capacity */

struct meter_page {
	__u32 magic;		/* METER_PAGE_MAGIC */
	__u32 version;		/* METER_PAGE_VERSION */
	__u32 current_id;	/* id of the current function; 0: none */
	__u32 depth;		/* frames pushed; may exceed METER_STACK_CAP */
	__u32 deep[METER_DEEP_WINDOW];	/* past the capacity: see above */
	__u32 deep_top;		/* frame after deep[]'s last; 0: none */
	__u32 reserved;		/* 0: stack[-1] reads as "no function" */
	__u32 stack[METER_STACK_CAP];	/* ids, root first */
};

/* One element of METER_A_CALLS. */
struct meter_call_counts {
	__u32 id;
	__u32 reserved;		/* must be 0 */
	__u64 calls;
	__u64 alloc_calls;	/* allocation accounting, 0 if off */
	__u64 alloc_bytes;
};

/* Limits. */
#define METER_FUNCS_MAX		(1U << 20)	/* highest function id */
/*
 * With the NUL; a name and its file together, each with its NUL.  They
 * and their function's other attributes fit one dump message of
 * NLMSG_GOODSIZE (3 KiB on 4 KiB pages).  Modules before names this long
 * took 256: libmeter cuts to that when the module refuses.
 */
#define METER_FUNC_NAME_MAX	2048
#define METER_SAMPLE_DEPTH_MAX	128	/* frames kept per sampled stack */
#define METER_PERIOD_MIN_NS	10000ULL	/* privileged floor, 10 us */
#define METER_PERIOD_MAX_NS	1000000000ULL	/* 1 s */
#define METER_PERIOD_DEFAULT_NS	1000000ULL	/* 1 ms, 1 kHz */

enum meter_cmd {
	METER_CMD_UNSPEC,
	METER_CMD_REGISTER,
	METER_CMD_UNREGISTER,
	METER_CMD_ADD_FUNCS,
	METER_CMD_ADD_CALLS,
	METER_CMD_SET_PERIOD,
	METER_CMD_SESSION_GET,
	METER_CMD_PROFILE_GET,
	METER_CMD_SESSION_RESET,
	METER_CMD_SESSION_DEL,
	__METER_CMD_MAX
};
#define METER_CMD_MAX (__METER_CMD_MAX - 1)

enum meter_session_state {
	METER_STATE_LIVE = 1,	/* at least one thread registered */
	METER_STATE_EXITED,	/* every thread gone; kept until deleted */
};

enum meter_thread_state {
	METER_THREAD_LIVE = 1,
	METER_THREAD_EXITED,
};

enum meter_clock {
	METER_CLOCK_CPU,	/* the thread's CPU time (default) */
	METER_CLOCK_WALL,	/* wall-clock time, running or not */
	__METER_CLOCK_MAX
};

enum meter_sample_state {
	METER_SAMPLE_ONCPU,	/* running on a CPU */
	METER_SAMPLE_RUNQ,	/* runnable, waiting for a CPU */
	METER_SAMPLE_BLOCKED,	/* sleeping or waiting on an event */
	__METER_SAMPLE_STATE_MAX
};

enum meter_attr {
	METER_A_UNSPEC,
	METER_A_PAD,
	METER_A_PAGE_ADDR,	/* u64 */
	METER_A_PERIOD_NS,	/* u64 */
	METER_A_COOKIE,		/* u64 */
	METER_A_PARENT_COOKIE,	/* u64 */
	METER_A_CALL_COST_PS,	/* u64 */
	METER_A_PID,		/* u32 */
	METER_A_UID,		/* u32 */
	METER_A_COMM,		/* string */
	METER_A_STATE,		/* u32, enum meter_session_state */
	METER_A_THREADS,	/* u32, threads registered now */
	METER_A_THREADS_TOTAL,	/* u32, threads ever registered */
	METER_A_START_NS,	/* u64, CLOCK_BOOTTIME */
	METER_A_END_NS,		/* u64, CLOCK_BOOTTIME, 0 while live */
	METER_A_SAMPLES,	/* u64, every tick */
	METER_A_NO_CURRENT,	/* u64, ticks with current == 0 */
	METER_A_INVALID,	/* u64, ticks with a bad id, depth or page */
	METER_A_LOST,		/* u64, stacks not kept: table full */
	METER_A_TRUNCATED,	/* u64, stacks deeper than kept */
	METER_A_NFUNCS,		/* u32 */
	METER_A_NSTACKS,	/* u32 */
	METER_A_FUNCS,		/* nest of METER_A_FUNC */
	METER_A_FUNC,		/* nest, enum meter_func_attr */
	METER_A_CALLS,		/* binary, struct meter_call_counts[] */
	METER_A_SESSION,	/* nest, attributes of this enum */
	METER_A_STACK,		/* nest, enum meter_stack_attr */
	METER_A_THREAD,		/* nest, enum meter_thread_attr */
	METER_A_TICKS,		/* u64, interrupts taken */
	METER_A_COUNTS_ADDR,	/* u64, the thread's __u64 counters by id */
	METER_A_TID,		/* u32 */
	METER_A_LAST,		/* flag */
	METER_A_CLOCK,		/* u32, enum meter_clock */
	METER_A_SAMPLES_RUNQ,	/* u64, wall clock: runnable, not running */
	METER_A_SAMPLES_BLOCKED,	/* u64, wall clock: blocked */
	METER_A_SLOW_ENTRIES,	/* u64, calls on libmeter's slow path */
	METER_A_STRETCHED_TICKS,	/* u64, ticks the user's budget delayed */
	METER_A_NADDRS,		/* u32 */
	METER_A_ADDRS_LOST,	/* u64, samples whose address was not kept */
	METER_A_ADDR,		/* nest, enum meter_addr_attr */
	METER_A_NMAPS,		/* u32 */
	METER_A_MAP,		/* nest, enum meter_map_attr */
	__METER_A_MAX
};
#define METER_A_MAX (__METER_A_MAX - 1)

enum meter_func_attr {
	METER_A_FUNC_UNSPEC,
	METER_A_FUNC_PAD,
	METER_A_FUNC_ID,		/* u32 */
	METER_A_FUNC_NAME,		/* string */
	METER_A_FUNC_CALLS,		/* u64 */
	METER_A_FUNC_SELF,		/* u64, samples as current */
	METER_A_FUNC_TOTAL,		/* u64, samples on the stack */
	METER_A_FUNC_ALLOC_CALLS,	/* u64 */
	METER_A_FUNC_ALLOC_BYTES,	/* u64 */
	METER_A_FUNC_SELF_RUNQ,		/* u64, part of SELF */
	METER_A_FUNC_SELF_BLOCKED,	/* u64, part of SELF */
	METER_A_FUNC_FILE,		/* string, the source file */
	METER_A_FUNC_LINE,		/* u32, its first line, >= 1 */
	METER_A_FUNC_COST_PS,		/* u64, a call's instrumentation */
	__METER_A_FUNC_MAX
};
#define METER_A_FUNC_MAX (__METER_A_FUNC_MAX - 1)

enum meter_stack_attr {
	METER_A_STACK_UNSPEC,
	METER_A_STACK_PAD,
	METER_A_STACK_SAMPLES,		/* u64 */
	METER_A_STACK_FRAMES,		/* binary, __u32 ids, root first */
	METER_A_STACK_TRUNCATED,	/* flag */
	METER_A_STACK_STATE,		/* u32, enum meter_sample_state */
	METER_A_STACK_TID,		/* u32, the sampled thread */
	__METER_A_STACK_MAX
};
#define METER_A_STACK_MAX (__METER_A_STACK_MAX - 1)

enum meter_thread_attr {
	METER_A_THREAD_UNSPEC,
	METER_A_THREAD_PAD,
	METER_A_THREAD_TID,		/* u32 */
	METER_A_THREAD_SAMPLES,		/* u64 */
	METER_A_THREAD_STATE,		/* u32, enum meter_thread_state */
	METER_A_THREAD_COMM,		/* string, at most 15 bytes */
	METER_A_THREAD_FOLDED,		/* u32, ended threads in one row */
	__METER_A_THREAD_MAX
};
#define METER_A_THREAD_MAX (__METER_A_THREAD_MAX - 1)

enum meter_addr_attr {
	METER_A_ADDR_UNSPEC,
	METER_A_ADDR_PAD,
	METER_A_ADDR_IP,		/* u64, a user address */
	METER_A_ADDR_FUNC,		/* u32, the current function's id */
	METER_A_ADDR_SAMPLES,		/* u64 */
	__METER_A_ADDR_MAX
};
#define METER_A_ADDR_MAX (__METER_A_ADDR_MAX - 1)

enum meter_map_attr {
	METER_A_MAP_UNSPEC,
	METER_A_MAP_PAD,
	METER_A_MAP_START,		/* u64 */
	METER_A_MAP_END,		/* u64 */
	METER_A_MAP_PGOFF,		/* u64, bytes */
	METER_A_MAP_PATH,		/* string */
	__METER_A_MAP_MAX
};
#define METER_A_MAP_MAX (__METER_A_MAP_MAX - 1)

#endif /* _UAPI_LINUX_METER_H */
