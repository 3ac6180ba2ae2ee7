// SPDX-License-Identifier: MIT
/*
 * The shape of a function's body, read by meter's pass before it
 * instruments the function (plugin/meter_plugin.cc):
 *
 * - the leaf rule: a function is flat when no call in its body can reach
 *   instrumented code.  Nothing is inlined yet, so every call in the
 *   source is still a call; builtins (memcpy, sqrt, ...) and internal
 *   functions never call back into the program.
 * - the tiny rule: how many statements, and whether any jump goes back
 *   (the gimplifier has made every loop a backward goto or condition by
 *   now) or the function calls itself.
 */
#include "gcc-plugin.h"
#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"

#include <map>

#include "body_shape.h"

namespace {

/*
 * C library functions that GCC does not know as builtins but that, as the
 * builtins, take no callback: string collation and conversion (Lua's
 * string comparison is strcoll), errno and <ctype.h>'s tables (glibc's
 * macros call these), plain I/O and the clock.  Only as glibc's headers
 * declare them, C functions at file scope under their own symbol: a
 * function of the same name that the program declares itself may be its
 * own, and a C++ method of the name (std::ostream::write) may call the
 * program's virtual functions.  None allocates; the builtins malloc and
 * free are leaves by the same rule, a malloc the program defines aside.
 */
const char *const libc_leaves[] = {
	"__ctype_b_loc", "__ctype_tolower_loc", "__ctype_toupper_loc",
	"__errno_location", "atoi", "atol", "atoll", "clock",
	"clock_gettime", "close", "feof", "ferror", "fileno", "getenv",
	"gettimeofday", "lseek", "memmem", "pread", "pwrite", "read",
	"strcasecmp", "strcoll", "strncasecmp", "strnlen", "strtol",
	"strtoll", "strtoul", "strtoull", "time", "write",
};

bool libc_leaf(tree callee)
{
	tree ctx;
	const char *n;

	if (!callee || !DECL_EXTERNAL(callee) || !DECL_NAME(callee) ||
	    !DECL_IN_SYSTEM_HEADER(callee))
		return false;
	ctx = DECL_CONTEXT(callee);
	if (ctx && TREE_CODE(ctx) != TRANSLATION_UNIT_DECL)
		return false;
	/* the symbol: a C++ function's is mangled, a renamed one differs */
	n = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(callee));
	if (strcmp(n, IDENTIFIER_POINTER(DECL_NAME(callee))))
		return false;
	for (const char *l : libc_leaves)
		if (!strcmp(n, l))
			return true;
	return false;
}

} /* namespace */

/* Builtins (memcpy, sqrt, ...), internal functions and the C library's
 * leaves above never call back into the program; any other call may. */
bool call_reaches_code(const gimple *g)
{
	tree callee = gimple_call_fndecl(g);

	if (gimple_call_internal_p(g))
		return false;
	return !(callee && (fndecl_built_in_p(callee, BUILT_IN_NORMAL) ||
			    libc_leaf(callee)));
}

namespace {

bool calls_meter_entry(tree callee)
{
	const char *n;

	if (!callee || !DECL_NAME(callee))
		return false;
	n = IDENTIFIER_POINTER(DECL_NAME(callee));
	return !strncmp(n, "meter__enter", 12) || !strcmp(n, "meter_enter");
}

struct walker {
	tree fn;
	struct body_shape shape = {};
	/* each label's place in the walk's order: a jump to a label at or
	 * before the jump is a jump back */
	std::map<tree, unsigned> label_at;
	unsigned pos = 0;
	bool second = false;	/* labels known: look at the jumps */

	void jump_to(tree label)
	{
		auto l = label_at.find(label);

		if (second && l != label_at.end() && l->second <= pos)
			shape.loops = true;
	}

	void call(gimple *g)
	{
		tree callee = gimple_call_fndecl(g);

		if (calls_meter_entry(callee))
			shape.manual = true;
		if (callee == fn)
			shape.recurses = true;
		if (call_reaches_code(g))
			shape.reaches_code = true;
	}

	void seq(gimple_seq s)
	{
		for (gimple_stmt_iterator i = gsi_start(s); !gsi_end_p(i);
		     gsi_next(&i))
			stmt(gsi_stmt(i));
	}

	void stmt(gimple *g);
};

void walker::stmt(gimple *g)
{
	pos++;
	switch (gimple_code(g)) {
	case GIMPLE_LABEL:
		if (!second)
			label_at[gimple_label_label(as_a<glabel *>(g))] = pos;
		return;
	case GIMPLE_DEBUG:
	case GIMPLE_NOP:
	case GIMPLE_PREDICT:
		return;
	case GIMPLE_BIND:
		seq(gimple_bind_body(as_a<gbind *>(g)));
		return;
	case GIMPLE_TRY:
		seq(gimple_try_eval(g));
		seq(gimple_try_cleanup(g));
		return;
	case GIMPLE_CATCH:
		seq(gimple_catch_handler(as_a<gcatch *>(g)));
		return;
	case GIMPLE_EH_FILTER:
		seq(gimple_eh_filter_failure(g));
		return;
	case GIMPLE_EH_ELSE: {
		geh_else *e = as_a<geh_else *>(g);

		seq(gimple_eh_else_n_body(e));
		seq(gimple_eh_else_e_body(e));
		return;
	}
	case GIMPLE_CALL:
		call(g);
		break;
	case GIMPLE_GOTO:
		if (TREE_CODE(gimple_goto_dest(g)) == LABEL_DECL)
			jump_to(gimple_goto_dest(g));
		else
			shape.loops = true;	/* computed goto: assume so */
		break;
	case GIMPLE_COND:
		jump_to(gimple_cond_true_label(as_a<gcond *>(g)));
		jump_to(gimple_cond_false_label(as_a<gcond *>(g)));
		break;
	case GIMPLE_SWITCH: {
		gswitch *sw = as_a<gswitch *>(g);

		for (unsigned k = 0; k < gimple_switch_num_labels(sw); k++)
			jump_to(CASE_LABEL(gimple_switch_label(sw, k)));
		break;
	}
	default:
		/* OpenMP and transactional regions: assume the worst */
		if (gimple_has_substatements(g)) {
			shape.reaches_code = true;
			shape.loops = true;
		}
		break;
	}
	if (!second)
		shape.stmts++;
}

} /* namespace */

struct body_shape body_shape_of(tree fn)
{
	walker w;

	w.fn = fn;
	w.seq(gimple_body(fn));
	w.second = true;
	w.pos = 0;
	w.seq(gimple_body(fn));
	return w.shape;
}
