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
 * The entry of a function whose record is rec: its frame's page and saved
 * word into the variables page_out and cd_out.  Stacked, or flat.
 */
gimple_seq seq_enter(const struct seq_decls &d, tree rec, tree page_out,
		     tree cd_out, bool flat);
/* The return: the saved word back into the page. */
gimple_seq seq_leave(const struct seq_decls &d, tree page, tree cd,
		     bool flat);

#endif
