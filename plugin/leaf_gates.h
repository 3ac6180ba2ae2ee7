/* SPDX-License-Identifier: MIT */
/*
 * The pass that, once inlining is done, gives the flat form to the
 * stacked bodies that became leaves (plugin/leaf_gates.cc).
 */
#ifndef METER_PLUGIN_LEAF_GATES_H
#define METER_PLUGIN_LEAF_GATES_H

/* verbose: a note for each body made flat */
opt_pass *make_leaf_gates(gcc::context *ctx, bool verbose);

#endif
