// SPDX-License-Identifier: MIT
/*
 * After inlining: the bodies that became leaves take the flat form.
 *
 * meter's pass decides flat or stacked before any inlining, from the
 * calls in the source (the leaf rule, plugin/body_shape.cc).  At -O2 many
 * of those calls are gone by the time code is made: a call to a tiny
 * function (left alone by the tiny rule) is inlined, and what remains of
 * the caller calls nothing.  Such a body pushes a frame that no sampled
 * stack needs: nothing can run above it but a signal handler, whose own
 * frames hang from whatever is on top.  zstd's hottest instrumented
 * functions (ZSTD_count, ZSTD_getMatchPrice, ZSTD_readMINMATCH) are
 * such bodies, most of them inlined copies.
 *
 * So a stacked entry carries its push behind a gate (plugin/sequences.cc,
 * SEQ_GATED): an opaque 1 that this pass, placed after the IPA passes
 * (inlining included) and before the optimisations, replaces per body:
 *
 * - 0 (the flat path: counted and current, nothing pushed) when the body
 *   holds no call that may reach instrumented code and no other
 *   instrumented body inlined into it, so that its samples have the
 *   stacks they would have had;
 * - 1 (the push, as before) otherwise; for an inlined copy, 2: the push
 *   without the stale-frame test, unless its host may be resumed by
 *   longjmp, a nonlocal goto or a catch (resumed_abnormally()).  A copy's
 *   frame address is its host's, so the test could only tell frames left
 *   above the host, and only such a resumption leaves them.
 *
 * A body is the function's own, or an inlined copy: the statements under
 * the copy's outermost BLOCK, whose abstract origin is the inlined
 * function (tree-inline.cc's expand_call_inline).  The constant is then
 * propagated into the gate's test, and the CFG cleanup removes the path
 * not taken.
 */
#include "gcc-plugin.h"
#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "tree-cfg.h"
#include "ssa.h"
#include "diagnostic-core.h"
#include "langhooks.h"
#include "except.h"
#include "cgraph.h"

#include <set>
#include <vector>

#define METER__LAYOUT_ONLY 1
#include "meter.h"

#include "body_shape.h"
#include "leaf_gates.h"
#include "sequences.h"

namespace {

/*
 * Whether the function's own code may be resumed other than by a call's
 * normal return: after longjmp (or any call that returns twice), a
 * nonlocal goto, or an exception caught in it.  Only there can frames
 * left above the function's own be on the stack when an inlined copy is
 * entered; everywhere else every call has taken its frames back on
 * return (the 64-bit store of depth).
 */
bool resumed_abnormally(function *fun)
{
	eh_region r;

	if (fun->calls_setjmp || fun->has_nonlocal_label)
		return true;
	if (!fun->eh)
		return false;
	for (r = fun->eh->region_tree; r;) {
		if (r->type == ERT_TRY || r->type == ERT_ALLOWED_EXCEPTIONS)
			return true;
		if (r->inner) {
			r = r->inner;
			continue;
		}
		while (r && !r->next_peer)
			r = r->outer;
		if (r)
			r = r->next_peer;
	}
	return false;
}

/* The outermost BLOCK of the inlined copy block lies in, or NULL_TREE for
 * the function's own body. */
tree copy_of(tree block)
{
	for (; block && TREE_CODE(block) == BLOCK;
	     block = BLOCK_SUPERCONTEXT(block)) {
		tree o = BLOCK_ABSTRACT_ORIGIN(block);

		if (o && TREE_CODE(o) == FUNCTION_DECL)
			return block;
	}
	return NULL_TREE;
}

/* Every body around block's, its own included when own. */
void mark_enclosing(std::set<tree> &marked, tree block, bool own)
{
	tree c = copy_of(block);

	if (own)
		marked.insert(c);
	while (c) {
		c = copy_of(BLOCK_SUPERCONTEXT(c));
		marked.insert(c);
	}
}

bool is_gate(const gimple *g)
{
	const gasm *a = dyn_cast<const gasm *>(g);

	return a && !strcmp(gimple_asm_string(a), METER_GATE_ASM);
}

/* The stacked slow path, the plugin's or <meter.h>'s macro's: a body that
 * may push */
bool is_stacked_thunk(const gimple *g)
{
	const gasm *a = dyn_cast<const gasm *>(g);

	return a && strstr(gimple_asm_string(a), "meter__enter_thunk");
}

/*
 * Whether every body of this unit's records is compiled in this process,
 * before the records are written.  Not under -flto with several
 * partitions (a copy in another partition cannot mark the record), nor
 * with -fno-toplevel-reorder (-O0's default), where symbols are written
 * in the order they were made and the clones the IPA passes make
 * (.constprop, .isra) are compiled after the records are written.
 */
bool bodies_all_here(void)
{
	static int known = -1;
	symtab_node *n;

	if (known < 0) {
		known = flag_toplevel_reorder;
		if (known && in_lto_p)
			FOR_EACH_SYMBOL(n)
				if (n->in_other_partition) {
					known = 0;
					break;
				}
	}
	return known;
}

/*
 * The record of the gate's function says what became of this body (the
 * flags in <meter.h>): the reports' correction charges a record whose
 * bodies are all leaves what the flat sequence costs.  The records are
 * written out after every function is compiled; where that cannot be
 * known (bodies_all_here()), a leaf is noted as a push, so that the
 * record keeps the stacked cost.
 */
void note_body(gasm *gate, bool leaf)
{
	tree rec = gimple_asm_ninputs(gate) > 1 ?
		   TREE_VALUE(gimple_asm_input_op(gate, 1)) : NULL_TREE;
	varpool_node *vn;
	tree ctor;

	if (!rec || TREE_CODE(rec) != ADDR_EXPR)
		return;
	leaf = leaf && bodies_all_here();
	rec = TREE_OPERAND(rec, 0);
	vn = VAR_P(rec) ? varpool_node::get(rec) : NULL;
	if (!vn || !vn->definition || vn->in_other_partition)
		return;
	/* under -flto the initializer is read in when first asked for */
	ctor = vn->get_constructor();
	if (!ctor || TREE_CODE(ctor) != CONSTRUCTOR)
		return;
	for (constructor_elt &e : *CONSTRUCTOR_ELTS(ctor)) {
		if (!e.index || TREE_CODE(e.index) != FIELD_DECL ||
		    !DECL_NAME(e.index) ||
		    strcmp(IDENTIFIER_POINTER(DECL_NAME(e.index)), "flags") ||
		    TREE_CODE(e.value) != INTEGER_CST)
			continue;
		e.value = build_int_cst(TREE_TYPE(e.value),
					tree_to_uhwi(e.value) |
					(leaf ? METER__REC_LEAF_BODY :
						METER__REC_PUSH_BODY));
	}
}

const pass_data leaf_gates_data = {
	GIMPLE_PASS,		/* type */
	"meter_leaves",		/* name */
	OPTGROUP_NONE,		/* optinfo_flags */
	TV_NONE,		/* tv_id */
	PROP_cfg | PROP_ssa,	/* properties_required */
	0,			/* properties_provided */
	0,			/* properties_destroyed */
	0,			/* todo_flags_start */
	0,			/* todo_flags_finish */
};

class leaf_gates : public gimple_opt_pass {
public:
	leaf_gates(gcc::context *ctx, bool verbose)
		: gimple_opt_pass(leaf_gates_data, ctx), verbose(verbose)
	{
	}

	unsigned int execute(function *fun) final override;

private:
	bool verbose;
};

unsigned int leaf_gates::execute(function *fun)
{
	std::set<tree> pushing;	/* bodies that keep the push */
	std::vector<gimple *> gates;
	basic_block bb;

	FOR_EACH_BB_FN(bb, fun) {
		for (gimple_stmt_iterator i = gsi_start_bb(bb); !gsi_end_p(i);
		     gsi_next(&i)) {
			gimple *g = gsi_stmt(i);

			if (is_gate(g))
				gates.push_back(g);
			if (is_gate(g) || is_stacked_thunk(g))
				mark_enclosing(pushing, gimple_block(g), false);
			else if (is_gimple_call(g) && call_reaches_code(g))
				mark_enclosing(pushing, gimple_block(g), true);
		}
	}
	bool resumed = resumed_abnormally(fun);

	for (gimple *g : gates) {
		tree body = copy_of(gimple_block(g));
		bool push = pushing.count(body);
		tree out = TREE_VALUE(gimple_asm_output_op(as_a<gasm *>(g), 0));
		gimple_stmt_iterator i = gsi_for_stmt(g);
		int v = !push ? METER_GATE_FLAT :
			body && !resumed ? METER_GATE_PUSH_UNTESTED :
			METER_GATE_PUSH;

		bool reg = TREE_CODE(out) == SSA_NAME;

		/* not a register: the gate stays 1, the push */
		note_body(as_a<gasm *>(g), reg && v == METER_GATE_FLAT);
		if (!reg)
			continue;
		if (verbose && !push)
			inform(body ? BLOCK_SOURCE_LOCATION(body) :
			       DECL_SOURCE_LOCATION(fun->decl),
			       "meter: %qs flat once inlining is done%s",
			       lang_hooks.decl_printable_name(
					body ? BLOCK_ABSTRACT_ORIGIN(body) :
					       fun->decl, 2),
			       body ? " (an inlined copy)" : "");
		gsi_replace(&i, gimple_build_assign(out, build_int_cst(
				TREE_TYPE(out), v)), true);
		replace_uses_by(out, build_int_cst(TREE_TYPE(out), v));
	}
	return gates.empty() ? 0 : TODO_cleanup_cfg;
}

} /* namespace */

opt_pass *make_leaf_gates(gcc::context *ctx, bool verbose)
{
	return new leaf_gates(ctx, verbose);
}
