// SPDX-License-Identifier: MIT
/*
 * Where a function resumes other than by a call's return, its frame's
 * word is put back.
 *
 * longjmp leaves on the shadow stack the frames of the functions it
 * skipped: their returns never ran.  <meter.h>'s macro finds them at the
 * next entry, by comparing frame addresses (the stale-frame test: a
 * compare and a branch on every call, after the frame's addresses are
 * noted).  The plugin sees every place where its functions can be
 * resumed so: after a call that returns twice (setjmp, sigsetjmp,
 * __builtin_setjmp, vfork, getcontext), at a nonlocal label (a GNU C
 * nested function's goto to its parent) and where a catch handler
 * starts.  There it stores the word that the body's entry left in the
 * page (current and depth, read just after the entry): the frames above
 * it are gone at once, before anything else is called or sampled, and no
 * entry needs the test.  The word is never changed after the entry, so it
 * survives the longjmp; an inlined copy (GCC never inlines a function that
 * calls setjmp, but may one that catches) has its own.
 *
 * Every frame the plugin built returns on the exception edges (the
 * try/finally around the body), but frames of C built without
 * -fexceptions have no such edges: an exception thrown through them (from
 * a callback) leaves their frames, which the catch's put-back takes off.
 * A longjmp into a function not built with the plugin leaves the frames
 * until that function returns into one that is
 * (Documentation/gcc-plugin.md).
 */
#include "gcc-plugin.h"
#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"

#include "gimple_walk.h"
#include "resume.h"

void add_resumes(gimple_seq *body, const struct seq_decls &d, tree page,
		 tree own)
{
	for_each_stmt(body, [&](gimple_stmt_iterator *i) {
		gimple *g = gsi_stmt(*i);
		glabel *l = dyn_cast<glabel *>(g);
		gcatch *c = dyn_cast<gcatch *>(g);

		if (c) {
			gimple_seq *h = gimple_catch_handler_ptr(c);
			gimple_stmt_iterator at = gsi_start(*h);

			gsi_insert_seq_before(&at, seq_resume(d, page, own),
					      GSI_SAME_STMT);
		} else if ((is_gimple_call(g) &&
			    (gimple_call_flags(g) & ECF_RETURNS_TWICE)) ||
			   (l && DECL_NONLOCAL(gimple_label_label(l)))) {
			gsi_insert_seq_after(i, seq_resume(d, page, own),
					     GSI_CONTINUE_LINKING);
		}
	});
}
