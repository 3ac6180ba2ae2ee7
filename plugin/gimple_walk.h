/* SPDX-License-Identifier: MIT */
/*
 * Every statement of a body in high GIMPLE (where meter's pass runs:
 * before `lower`, binds and try blocks still nested), for the passes that
 * read or change it (plugin/body_shape.cc, plugin/resume.cc).
 */
#ifndef METER_PLUGIN_GIMPLE_WALK_H
#define METER_PLUGIN_GIMPLE_WALK_H

/*
 * Calls f(gimple_stmt_iterator *) on each statement of *s in order,
 * walking into binds, both halves of try blocks, EH filters and elses
 * instead of passing them.  A catch is passed, then walked into (its
 * handler is where an exception resumes the function).  Any other
 * statement that holds others (OpenMP's, transactions) is passed whole.
 * f may insert after its statement through the iterator, leaving it on
 * the last one it inserted, or at the start of a catch's handler.
 */
template <typename F> void for_each_stmt(gimple_seq *s, F &&f)
{
	for (gimple_stmt_iterator i = gsi_start(*s); !gsi_end_p(i);
	     gsi_next(&i)) {
		gimple *g = gsi_stmt(i);

		switch (gimple_code(g)) {
		case GIMPLE_BIND:
			for_each_stmt(gimple_bind_body_ptr(as_a<gbind *>(g)), f);
			break;
		case GIMPLE_TRY:
			for_each_stmt(gimple_try_eval_ptr(g), f);
			for_each_stmt(gimple_try_cleanup_ptr(g), f);
			break;
		case GIMPLE_CATCH:
			f(&i);
			for_each_stmt(gimple_catch_handler_ptr(
					as_a<gcatch *>(g)), f);
			break;
		case GIMPLE_EH_FILTER:
			for_each_stmt(gimple_eh_filter_failure_ptr(g), f);
			break;
		case GIMPLE_EH_ELSE: {
			geh_else *e = as_a<geh_else *>(g);

			for_each_stmt(gimple_eh_else_n_body_ptr(e), f);
			for_each_stmt(gimple_eh_else_e_body_ptr(e), f);
			break;
		}
		default:
			f(&i);
			break;
		}
	}
}

#endif
