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
	tree page_ptr;		/* the page's and records' words (an alias
				   set of their own) */
};

/*
 * The forms of an entry.  The plugin's pass marks each function's entry
 * (seq_entry_mark) with the form the source allows: LEAF (the leaf rule:
 * counted and made current, nothing pushed; the return stores current
 * alone), or PUSH; plugin/entry_forms.cc expands each mark once inlining
 * is done, in the form the body it lies in then allows.  The return of
 * every form but LEAF is the same 64-bit store.
 */
#define METER_FORM_LEAF 0
#define METER_FORM_FLAT 1		/* a body that became a leaf: counted
					   and current (a thread not yet
					   registered: the slow path) */
#define METER_FORM_PUSH 2		/* the stacked entry, stale-frame
					   test and all */
#define METER_FORM_PUSH_UNTESTED 3	/* pushed without the stale-frame
					   test: an inlined copy whose host
					   no longjmp or catch re-enters */
/* Copies in a function whose own entry comes first (and has taken the
 * slow path if the thread was not registered): no slow path, so no call
 * in the copy (unregistered, they count into libmeter's meter_no_block:
 * a forked child until a function's own entry registers it). */
#define METER_FORM_FLAT_COPY 4		/* as FLAT */
#define METER_FORM_PUSH_COPY 5		/* as PUSH_UNTESTED; past the
					   stack's capacity (or not
					   registered) counted and current,
					   not pushed */

/* A mark's form: plugin/entry_forms.cc chooses (a stacked function). */
#define METER_FORM_AUTO 6
/* A copy of a LEAF in a function whose own entry comes first: as LEAF,
 * without the slow path (as FLAT_COPY). */
#define METER_FORM_LEAF_COPY 7

/* A function's own entry, never an inlined copy: as PUSH, but a frame at
 * its own address on top can only be a sibling left by longjmp (the same
 * call site through a pointer too), which the slow path pops
 * (METER__SP_OWN in <meter.h>). */
#define METER_FORM_PUSH_OWN 8

/*
 * A copy whose body calls nothing (plugin/entry_forms.cc), in a unit whose
 * inline records tell its instructions from its host's: counted, nothing
 * else, on the page its host found (its own entry's, or
 * seq_page_entry's).  Its host stays current and the reports give the
 * copy's samples to it by address.  Its returns are taken out; the word
 * they would store back is loaded as found, should one remain.  COUNT_COPY's
 * return is the 64-bit store, COUNT_LEAF_COPY's (a LEAF's copy) the
 * current word alone.
 */
#define METER_FORM_COUNT_COPY 9
#define METER_FORM_COUNT_LEAF_COPY 10

/* The first line of a mark's asm (a comment; the rest is the slow path). */
#define METER_ENTRY_ASM "# meter: entry"

/* The mark of a function's entry: its frame's page and saved word into the
 * variables page_out and cd_out. */
gimple_seq seq_entry_mark(const struct seq_decls &d, tree rec, tree page_out,
			  tree cd_out, int form);
/* What seq_enter() needs, from a mark made by seq_entry_mark(); false if
 * the statement is not one. */
bool seq_read_mark(const gimple *g, struct seq_decls *d, tree *rec,
		   tree *cfa, int *form);
/* The entry of a function whose record is rec and frame address cfa (the
 * mark's), in a form; unlikely: the labels of its blocks that are entered
 * rarely (the graph's builder gives their edges their probabilities).
 * page: the thread's page as the host's own entry found it (a copy's
 * forms), or NULL_TREE to load it from meter__tls.  site: a push stores
 * its return address (sites[]) for the tests that read it. */
gimple_seq seq_enter(const struct seq_decls &d, tree rec, tree cfa,
		     tree page, tree page_out, tree cd_out, int form,
		     bool site, std::vector<tree> &unlikely);
/*
 * The page a function without an entry of its own gives its counted
 * copies (METER_FORM_COUNT_COPY): meter__tls's, read at its start; a
 * thread not registered yet takes meter__page_thunk, which registers it if
 * it can.
 */
gimple_seq seq_page_entry(const struct seq_decls &d, tree page_out,
			  std::vector<tree> &unlikely);
/* The type of seq_decls' page_ptr, made once per unit (a GC root). */
tree seq_page_pointer_type(void);
/* The return: the saved word back into the page. */
gimple_seq seq_leave(const struct seq_decls &d, tree page, tree cd,
		     bool flat);

#endif
