/* SPDX-License-Identifier: MIT */
/*
 * What a function's body is like where meter's pass sees it: high GIMPLE,
 * before any inlining, so every call in the source is still a call.
 */
#ifndef METER_PLUGIN_BODY_SHAPE_H
#define METER_PLUGIN_BODY_SHAPE_H

struct body_shape {
	bool reaches_code;	/* a call that may reach instrumented code */
	bool manual;		/* METER_FUNCTION() is already there */
	bool loops;		/* a jump back: a loop */
	bool recurses;		/* calls itself */
	unsigned stmts;		/* statements, labels and debug ones aside */
};

/* Whether a call (a GIMPLE_CALL) may reach instrumented code: the leaf
 * rule's test, before inlining and after (plugin/entry_forms.cc). */
bool call_reaches_code(const gimple *g);

/* The shape of fn's body (gimple_body(fn)). */
struct body_shape body_shape_of(tree fn);

#endif
