/* SPDX-License-Identifier: MIT */
/*
 * The pass that, once inlining is done, expands each function's entry in
 * the form its body then allows (plugin/leaf_gates.cc).
 */
#ifndef METER_PLUGIN_LEAF_GATES_H
#define METER_PLUGIN_LEAF_GATES_H

/* verbose: a note for each body made flat; page_ptr: the unit's
 * seq_decls.page_ptr (a GC root; made here under -flto's link) */
opt_pass *make_leaf_gates(gcc::context *ctx, bool verbose, tree *page_ptr);

#endif
