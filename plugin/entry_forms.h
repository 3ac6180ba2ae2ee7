/* SPDX-License-Identifier: MIT */
/*
 * The pass that, once inlining is done, expands each function's entry in
 * the form its body then allows (plugin/entry_forms.cc).
 */
#ifndef METER_PLUGIN_ENTRY_FORMS_H
#define METER_PLUGIN_ENTRY_FORMS_H

/* verbose: a note for each body made flat; page_ptr: the unit's
 * seq_decls.page_ptr (a GC root; made here under -flto's link) */
opt_pass *make_entry_forms(gcc::context *ctx, bool verbose, tree *page_ptr);

#endif
