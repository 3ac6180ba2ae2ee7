/* SPDX-License-Identifier: MIT */
/*
 * The sequences <meter.h>'s METER_FUNCTION() and METER_FUNCTION_FLAT()
 * expand to, built in GIMPLE for meter's plugin (plugin/sequences.cc).
 */
#ifndef METER_PLUGIN_SEQUENCES_H
#define METER_PLUGIN_SEQUENCES_H

/* What the sequences reach, declared once per translation unit. */
struct seq_decls {
	tree tls;		/* meter__tls (its first word: the page) */
	tree char_ptr;		/* the alias-everything pointer type */
};

/*
 * The forms of an entry: flat (counted and made current, nothing pushed),
 * stacked, or stacked with a flat path behind a gate (METER_GATE_ASM)
 * that plugin/leaf_gates.cc sets once inlining is done.  The return of
 * the last two is the same 64-bit store.
 */
enum seq_form { SEQ_FLAT, SEQ_STACKED, SEQ_GATED };

/* The gate's asm: its output is METER_GATE_PUSH until leaf_gates.cc
 * replaces it with the value it chooses. */
#define METER_GATE_ASM "# meter: push unless a leaf"
#define METER_GATE_FLAT 0		/* a leaf: the flat path */
#define METER_GATE_PUSH 1		/* the stacked entry */

/*
 * The entry of a function whose record is rec: its frame's page and saved
 * word into the variables page_out and cd_out.  The push has no
 * stale-frame test (<meter.h>'s METER__PUSH_UNTESTED): the plugin puts
 * the frame's word back where a function resumes (plugin/resume.cc).
 */
gimple_seq seq_enter(const struct seq_decls &d, tree rec, tree page_out,
		     tree cd_out, enum seq_form form);
/* The return: the saved word back into the page. */
gimple_seq seq_leave(const struct seq_decls &d, tree page, tree cd,
		     bool flat);
/* Just after the entry: the frame's own word (current and depth, as the
 * entry left them) into own_out. */
gimple_seq seq_own_word(const struct seq_decls &d, tree page, tree own_out);
/* Where the function resumes other than by a call's return (after setjmp,
 * at a nonlocal label): its own word back into the page, which takes off
 * the frames that the longjmp or goto left above it. */
gimple_seq seq_resume(const struct seq_decls &d, tree page, tree own);

#endif
