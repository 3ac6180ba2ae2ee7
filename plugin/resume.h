/* SPDX-License-Identifier: MIT */
/*
 * The frame's word put back where a function resumes other than by a
 * call's return (plugin/resume.cc).
 */
#ifndef METER_PLUGIN_RESUME_H
#define METER_PLUGIN_RESUME_H

#include "sequences.h"

/*
 * After every call in body that returns twice and at every nonlocal label:
 * own (seq_own_word's, read just after the entry) stored back into page.
 */
void add_resumes(gimple_seq *body, const struct seq_decls &d, tree page,
		 tree own);

#endif
