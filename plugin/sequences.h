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
#define METER_GATE_PUSH 1		/* the stacked entry, as ever */
#define METER_GATE_PUSH_UNTESTED 2	/* pushed without the stale-frame
					   test: an inlined copy whose host
					   no longjmp or catch re-enters */

/*
 * The entry of a function whose record is rec: its frame's page and saved
 * word into the variables page_out and cd_out.
 */
gimple_seq seq_enter(const struct seq_decls &d, tree rec, tree page_out,
		     tree cd_out, enum seq_form form);
/* The return: the saved word back into the page. */
gimple_seq seq_leave(const struct seq_decls &d, tree page, tree cd,
		     bool flat);

#endif
