// SPDX-License-Identifier: MIT
/*
 * Where a function resumes other than by a call's return, its frame's
 * word is put back.
 *
 * longjmp leaves on the shadow stack the frames of the functions it
 * skipped: their returns never ran.  <meter.h>'s macro finds them at the
 * next entry, by comparing frame addresses (the stale-frame test, three
 * instructions on every call).  The plugin sees every place where its
 * functions can be resumed so: after a call that returns twice (setjmp,
 * sigsetjmp, __builtin_setjmp, vfork, getcontext) and at a nonlocal label
 * (a GNU C nested function's goto to its parent).  There it stores the
 * word that its entry left in the page (current and depth, read just
 * after the entry): the frames above it are gone at once, before anything
 * else is called or sampled, and no entry needs the test.  GCC never
 * inlines a function that calls setjmp, so the word is the function's
 * own; it is not changed after the entry, so it survives the longjmp.
 *
 * An exception needs nothing here: every frame's return runs on the
 * exception edges (the try/finally around the body).  A longjmp into a
 * function not built with the plugin leaves the frames until that
 * function returns into one that is (Documentation/gcc-plugin.md).
 */
#include "gcc-plugin.h"
#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"

#include "resume.h"

namespace {

struct resumer {
	const struct seq_decls &d;
	tree page, own;

	void seq(gimple_seq *s)
	{
		for (gimple_stmt_iterator i = gsi_start(*s); !gsi_end_p(i);
		     gsi_next(&i))
			stmt(&i);
	}

	/* the word put back after *i, i left on the last statement added */
	void put_back(gimple_stmt_iterator *i)
	{
		gsi_insert_seq_after(i, seq_resume(d, page, own),
				     GSI_CONTINUE_LINKING);
	}

	void stmt(gimple_stmt_iterator *i);
};

void resumer::stmt(gimple_stmt_iterator *i)
{
	gimple *g = gsi_stmt(*i);

	switch (gimple_code(g)) {
	case GIMPLE_BIND:
		seq(gimple_bind_body_ptr(as_a<gbind *>(g)));
		return;
	case GIMPLE_TRY:
		seq(gimple_try_eval_ptr(g));
		seq(gimple_try_cleanup_ptr(g));
		return;
	case GIMPLE_CATCH:
		seq(gimple_catch_handler_ptr(as_a<gcatch *>(g)));
		return;
	case GIMPLE_EH_FILTER:
		seq(gimple_eh_filter_failure_ptr(g));
		return;
	case GIMPLE_EH_ELSE: {
		geh_else *e = as_a<geh_else *>(g);

		seq(gimple_eh_else_n_body_ptr(e));
		seq(gimple_eh_else_e_body_ptr(e));
		return;
	}
	case GIMPLE_CALL:
		if (gimple_call_flags(g) & ECF_RETURNS_TWICE)
			put_back(i);
		return;
	case GIMPLE_LABEL:
		if (DECL_NONLOCAL(gimple_label_label(as_a<glabel *>(g))))
			put_back(i);
		return;
	default:
		return;
	}
}

} /* namespace */

void add_resumes(gimple_seq *body, const struct seq_decls &d, tree page,
		 tree own)
{
	resumer r = { d, page, own };

	r.seq(body);
}
