// SPDX-License-Identifier: MIT
/*
 * After inlining: each entry expanded in the form its body then allows.
 *
 * meter's pass decides flat or stacked before any inlining, from the
 * calls in the source (the leaf rule, plugin/body_shape.cc), and leaves a
 * mark (plugin/sequences.cc, seq_entry_mark) that the inliner weighs as
 * one statement.  At -O2 many of a body's calls are gone by the time code
 * is made: a call to a tiny function (left alone by the tiny rule) is
 * inlined, and what remains of the caller calls nothing.  Such a body
 * would push a frame that no sampled stack needs: nothing can run above
 * it but a signal handler, whose own frames hang from whatever is on top.
 * zstd's hottest instrumented functions (ZSTD_count, ZSTD_getMatchPrice,
 * ZSTD_readMINMATCH) are such bodies, most of them inlined copies.
 *
 * So this pass, placed after the IPA passes (inlining included) and
 * before the optimisations, expands each mark of a stacked function per
 * body (METER_FORM_* in plugin/sequences.h):
 *
 * - counted only, for an inlined copy that calls nothing, in a unit
 *   whose inline records tell its instructions from its host's (-g): its
 *   host stays current and pushes nothing for it, and the reports give
 *   its samples to it by address, under its host (analysis/byaddr.c).
 *   Its count is two instructions that a loop around it can keep in a
 *   register; its returns are taken out.  It takes its host's page: the
 *   own entry's, or, in a function without one (a tiny function left
 *   alone that the copy was inlined into), the page read once at the
 *   function's start, where a thread not registered yet registers
 *   (meter__page_thunk);
 * - flat (counted and current, nothing pushed) when the body holds no
 *   call that may reach instrumented code and no other instrumented body
 *   inlined into it but copies counted only, so that its samples have
 *   the stacks they would have had;
 * - the push, as before, otherwise; for an inlined copy the push without
 *   the stale-frame test, unless its host may be resumed by longjmp, a
 *   nonlocal goto or a catch (resumed_abnormally()).  A copy's frame
 *   address is its host's, so the test could only tell frames left above
 *   the host, and only such a resumption leaves them;
 * - for a copy in a function whose own entry comes first (a leaf by the
 *   leaf rule too), each form without a slow path: that entry took it if
 *   the thread was not registered.  The copy takes the page that entry
 *   found (a call not profiled: libmeter's scratch block, whole) rather
 *   than loading meter__tls again.  (A forked child's thread is not
 *   registered again until a function's own entry runs: calls in copies
 *   of the functions already running when it forked count into the
 *   child's own block, which that registration reports.)
 *
 * A body is the function's own, or an inlined copy: the statements under
 * the copy's outermost BLOCK, whose abstract origin is the inlined
 * function (tree-inline.cc's expand_call_inline).
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
#include "tree-into-ssa.h"
#include "diagnostic-core.h"
#include "langhooks.h"
#include "except.h"
#include "cgraph.h"
#include "flags.h"
#include "builtins.h"

#include <set>
#include <vector>

#define METER__LAYOUT_ONLY 1
#include "meter.h"

#include "body_shape.h"
#include "entry_forms.h"
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

/* The slow path of <meter.h>'s macro, stacked or flat: an instrumented
 * body that the macro made (the plugin's are marks until this pass) */
bool is_entry_thunk(const gimple *g)
{
	const gasm *a = dyn_cast<const gasm *>(g);

	return a && (strstr(gimple_asm_string(a), "meter__enter_thunk") ||
		     strstr(gimple_asm_string(a), "meter__enter_flat_thunk"));
}

/*
 * Whether the pushes in fun store their return address (sites[]), for a
 * function not resumed abnormally (resumed_abnormally(): then always).  Only
 * an entry that finds a frame at its own frame address on top reads it,
 * to tell the host it was inlined into (the same return address) from a
 * sibling left there by longjmp or an exception: the plugin's copies with
 * the stale-frame test, in a function resumed abnormally, and the
 * macro's entries and -finstrument-functions' hooks inlined here (their
 * slow paths without thunks too); and the slow path of an untested copy
 * (PUSH_UNTESTED, past the stack's capacity), which always keeps its
 * own (expand_mark's caller).  A function's own entry never reads it,
 * and a frame at its address is a sibling left there, which the slow
 * path takes off whatever it finds in sites[] (lib/meter_shadow.c): two
 * instructions saved on every other push.
 */
bool frame_sites(function *fun)
{
	struct seq_decls sd;
	basic_block bb;
	tree rec, cfa;
	int form;

	FOR_EACH_BB_FN(bb, fun) {
		for (gimple_stmt_iterator i = gsi_start_bb(bb); !gsi_end_p(i);
		     gsi_next(&i)) {
			gimple *g = gsi_stmt(i);
			tree fn;

			/* a mark's asm holds the plugin's own slow path */
			if (seq_read_mark(g, &sd, &rec, &cfa, &form))
				continue;
			if (is_entry_thunk(g))
				return true;
			if (!is_gimple_call(g) ||
			    !(fn = gimple_call_fndecl(g)) || !DECL_NAME(fn))
				continue;
			const char *n = IDENTIFIER_POINTER(DECL_NAME(fn));
			if (!strcmp(n, "meter__enter_slow") ||
			    !strcmp(n, "__cyg_profile_func_enter"))
				return true;
		}
	}
	return false;
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
 * The record of the mark's function says what became of this body (the
 * flags in <meter.h>): the reports' correction charges a record whose
 * bodies are all leaves what the flat sequence costs.  The records are
 * written out after every function is compiled; where that cannot be
 * known (bodies_all_here()), a leaf is noted as a push, so that the
 * record keeps the stacked cost.
 */
void note_body(tree rec, bool leaf)
{
	varpool_node *vn;
	tree ctor;

	leaf = leaf && bodies_all_here();
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

/*
 * The form of a body (NULL_TREE: the function's own) that keeps its push
 * or not, in a function resumed abnormally or not, whose own entry has run
 * before its copies (entered) or not.  A copy in an entered function needs
 * no slow path: the thread was registered there if it could be (but for a
 * forked child: see the top of this file).
 */
int body_form(tree body, bool push, bool resumed, bool entered)
{
	bool copy = body && entered;

	if (!push)
		return copy ? METER_FORM_FLAT_COPY : METER_FORM_FLAT;
	if (!body)
		return METER_FORM_PUSH_OWN;
	if (resumed)
		return METER_FORM_PUSH;
	return copy ? METER_FORM_PUSH_COPY : METER_FORM_PUSH_UNTESTED;
}

/* The form of a body whose mark has one already: a leaf by the leaf rule,
 * or a push under flat=none; a copy in an entered host loses the slow
 * path (and a push's copy the stale-frame test) as above. */
int fixed_form(int form, tree body, bool resumed, bool entered)
{
	if (form == METER_FORM_LEAF)
		return body && entered ? METER_FORM_LEAF_COPY : form;
	if (form == METER_FORM_PUSH)
		return body_form(body, true, resumed, entered);
	return form;
}

/* Forms that take their host's page rather than meter__tls's. */
bool copy_form(int form)
{
	return form == METER_FORM_FLAT_COPY || form == METER_FORM_PUSH_COPY ||
	       form == METER_FORM_LEAF_COPY || form == METER_FORM_COUNT_COPY ||
	       form == METER_FORM_COUNT_LEAF_COPY;
}

/*
 * The rare ways out of the straight line, as <meter.h>'s __builtin_expect
 * puts them: the blocks first..last of an entry just built had their
 * probabilities guessed, the slow path as likely as the push.  The edges
 * into the blocks labelled unlikely made so, then the blocks' counts again
 * from their predecessors, in order (the sequence only jumps forward).
 */
void weigh_entry(function *fun, basic_block first, basic_block last,
		 const std::vector<tree> &unlikely)
{
	basic_block bb;
	edge e, o;
	edge_iterator ei;

	for (tree l : unlikely)
		FOR_EACH_EDGE(e, ei, label_to_block(fun, l)->preds) {
			if (EDGE_COUNT(e->src->succs) != 2)
				continue;
			o = EDGE_SUCC(e->src, 0) == e ? EDGE_SUCC(e->src, 1) :
							EDGE_SUCC(e->src, 0);
			e->probability = profile_probability::very_unlikely();
			o->probability = e->probability.invert();
		}
	for (bb = first;; bb = bb->next_bb) {
		profile_count c = profile_count::zero();

		FOR_EACH_EDGE(e, ei, bb->preds)
			c += e->count();
		bb->count = c;
		if (bb == last)
			break;
	}
}

/*
 * at (a statement) replaced by seq, a sequence with jumps, in blocks of
 * its own: on the line loc and in the lexical block given (its
 * temporaries and memory put into SSA form by the pass's
 * TODO_update_ssa), the edges into the labels unlikely made so.
 */
void replace_by_blocks(function *fun, gimple *at, gimple_seq seq,
		       location_t loc, tree block,
		       const std::vector<tree> &unlikely)
{
	gimple_stmt_iterator i;

	for (i = gsi_start(seq); !gsi_end_p(i); gsi_next(&i)) {
		gimple_set_location(gsi_stmt(i), loc);
		gimple_set_block(gsi_stmt(i), block);
		update_stmt(gsi_stmt(i));
	}
	gimple *last = gimple_seq_last_stmt(seq);
	basic_block from = gimple_bb(at);

	i = gsi_for_stmt(at);
	gimple_find_sub_bbs(seq, &i);
	gsi_remove(&i, true);
	weigh_entry(fun, from->next_bb, gimple_bb(last), unlikely);
}

/* The mark replaced by its entry in a form, the mark's outputs set at
 * the end. */
void expand_mark(function *fun, gimple *mark, const struct seq_decls &sd,
		 tree rec, tree cfa, tree host_page, int form, bool site)
{
	gasm *a = as_a<gasm *>(mark);
	tree page = create_tmp_var(ptr_type_node, "meter_fpage");
	tree cd = create_tmp_var(uint64_type_node, "meter_fcd");
	std::vector<tree> unlikely;
	gimple_seq seq = seq_enter(sd, rec, cfa, host_page, page, cd, form,
				   site, unlikely);

	gimple_seq_add_stmt(&seq, gimple_build_assign(
		TREE_VALUE(gimple_asm_output_op(a, 0)), page));
	gimple_seq_add_stmt(&seq, gimple_build_assign(
		TREE_VALUE(gimple_asm_output_op(a, 1)), cd));
	replace_by_blocks(fun, mark, seq, gimple_location(mark),
			  gimple_block(mark), unlikely);
}

/*
 * The page for the counted copies that no own entry dominates, made at
 * the function's start (seq_page_entry), in a block of its own on the
 * entry edge, on the line of the mark it is made for (meter's own:
 * <meter>, without the copy's block).
 */
tree page_at_start(function *fun, const struct seq_decls &sd, gimple *mark)
{
	tree page = create_tmp_var(ptr_type_node, "meter_hpage");
	std::vector<tree> unlikely;
	gimple_seq seq = seq_page_entry(sd, page, unlikely);
	basic_block at = split_edge(single_succ_edge(
		ENTRY_BLOCK_PTR_FOR_FN(fun)));
	gimple *nop = gimple_build_nop();
	gimple_stmt_iterator i = gsi_start_bb(at);

	gsi_insert_before(&i, nop, GSI_NEW_STMT);
	replace_by_blocks(fun, nop, seq, LOCATION_LOCUS(gimple_location(mark)),
			  NULL_TREE, unlikely);
	return page;
}

const pass_data entry_forms_data = {
	GIMPLE_PASS,		/* type */
	"meter_entries",		/* name */
	OPTGROUP_NONE,		/* optinfo_flags */
	TV_NONE,		/* tv_id */
	PROP_cfg | PROP_ssa,	/* properties_required */
	0,			/* properties_provided */
	0,			/* properties_destroyed */
	0,			/* todo_flags_start */
	0,			/* todo_flags_finish */
};

class entry_forms : public gimple_opt_pass {
public:
	entry_forms(gcc::context *ctx, bool verbose, tree *page_ptr)
		: gimple_opt_pass(entry_forms_data, ctx), verbose(verbose),
		  page_ptr(page_ptr)
	{
	}

	unsigned int execute(function *fun) final override;

private:
	bool verbose;
	tree *page_ptr;
};

/*
 * Whether this unit's inline records will tell an inlined copy's
 * instructions from its host's: DWARF at -g's level or above (the reports
 * read DW_TAG_inlined_subroutine through libdw).  Without them a copy
 * keeps its own current store.
 */
bool copies_by_address(void)
{
	return dwarf_debuginfo_p() && debug_info_level >= DINFO_LEVEL_NORMAL;
}

/* The returns of a copy counted only: the stores through the page its
 * mark gives, which would store back what its entry found */
void drop_returns(gimple *mark)
{
	tree page = TREE_VALUE(gimple_asm_output_op(as_a<gasm *>(mark), 0));
	std::vector<gimple *> dead;
	imm_use_iterator it;
	gimple *u;

	if (TREE_CODE(page) != SSA_NAME)
		return;
	FOR_EACH_IMM_USE_STMT(u, it, page)
		if (gimple_store_p(u))
			dead.push_back(u);
	for (gimple *g : dead) {
		gimple_stmt_iterator i = gsi_for_stmt(g);

		unlink_stmt_vdef(g);
		gsi_remove(&i, true);
		release_defs(g);
	}
}

/* The note -fplugin-arg-meter-verbose gives a body that pushes nothing. */
void note_flat(function *fun, tree body, int form)
{
	const char *how = form == METER_FORM_COUNT_COPY ?
		" (an inlined copy, counted only: its time by address)" :
		body ? " (an inlined copy)" : "";

	inform(body ? BLOCK_SOURCE_LOCATION(body) :
	       DECL_SOURCE_LOCATION(fun->decl),
	       "meter: %qs flat once inlining is done%s",
	       lang_hooks.decl_printable_name(body ? BLOCK_ABSTRACT_ORIGIN(body) :
					      fun->decl, 2), how);
}

/*
 * Whether a call will be one in the code made: not an internal function,
 * nor one of GCC's built-ins that never make a call (a bit count, a byte
 * swap, __builtin_expect), nor a memcpy, memmove or memset of at most 64
 * bytes known at compile time (a load and a store: zstd's MEM_read64).
 * Other built-ins (malloc, printf, a memcpy of a length not known) may
 * become a call to the C library.
 */
bool stays_a_call(const gimple *g)
{
	tree fn, len;

	if (gimple_call_internal_p(g))
		return false;
	if (!gimple_call_builtin_p(g, BUILT_IN_NORMAL))
		return true;
	fn = gimple_call_fndecl(g);
	if (is_inexpensive_builtin(fn))
		return false;
	switch (DECL_FUNCTION_CODE(fn)) {
	case BUILT_IN_MEMCPY:
	case BUILT_IN_MEMMOVE:
	case BUILT_IN_MEMSET:
		len = gimple_call_arg(g, 2);
		return !(TREE_CODE(len) == INTEGER_CST &&
			 tree_fits_uhwi_p(len) && tree_to_uhwi(len) <= 64);
	default:
		return true;
	}
}

/*
 * The marks of fun's bodies, into marks; the bodies that call what may
 * reach instrumented code or hold a slow path the macro made, into
 * pushing; those that make any call that stays one (GCC's built-ins
 * aside), into calling.  Returns the function's own entry's mark, or
 * NULL.
 */
gimple *scan_bodies(function *fun, std::vector<gimple *> &marks,
		    std::set<tree> &pushing, std::set<tree> &calling)
{
	struct seq_decls sd;
	gimple *own = NULL;
	basic_block bb;
	tree rec, cfa;
	int form;

	FOR_EACH_BB_FN(bb, fun) {
		for (gimple_stmt_iterator i = gsi_start_bb(bb); !gsi_end_p(i);
		     gsi_next(&i)) {
			gimple *g = gsi_stmt(i);

			if (seq_read_mark(g, &sd, &rec, &cfa, &form)) {
				marks.push_back(g);
				/* the function's own entry, at its start */
				if (!copy_of(gimple_block(g)))
					own = g;
			} else if (is_entry_thunk(g)) {
				mark_enclosing(pushing, gimple_block(g), false);
			} else if (is_gimple_call(g)) {
				if (stays_a_call(g))
					mark_enclosing(calling,
						       gimple_block(g), true);
				if (call_reaches_code(g))
					mark_enclosing(pushing,
						       gimple_block(g), true);
			}
		}
	}
	return own;
}

/*
 * Which marks are inlined copies counted only: by_address, a copy whose
 * body neither pushes nor calls, nor asks for a push (flat=none).  A
 * counted copy makes no host push; any other mark makes every body
 * around it push (into pushing), which may leave a copy around it that
 * was to be counted with a push: again until nothing changes.
 */
std::vector<bool> counted_copies(const std::vector<gimple *> &marks,
				 std::set<tree> &pushing,
				 const std::set<tree> &calling,
				 bool by_address)
{
	std::vector<bool> counted(marks.size()), done(marks.size());
	struct seq_decls sd;
	tree rec, cfa;
	int form;

	for (bool changed = true; changed;) {
		changed = false;
		for (size_t k = 0; k < marks.size(); k++) {
			tree body = copy_of(gimple_block(marks[k]));

			if (done[k])
				continue;
			seq_read_mark(marks[k], &sd, &rec, &cfa, &form);
			counted[k] = by_address && body &&
				     form != METER_FORM_PUSH &&
				     !pushing.count(body) &&
				     !calling.count(body);
			if (counted[k])
				continue;
			mark_enclosing(pushing, gimple_block(marks[k]), false);
			done[k] = changed = true;
		}
	}
	return counted;
}

unsigned int entry_forms::execute(function *fun)
{
	std::set<tree> pushing;	/* bodies that keep the push */
	std::set<tree> calling;	/* bodies that call (GCC's built-ins aside) */
	std::vector<gimple *> marks;
	struct seq_decls sd;
	gimple *own;		/* the function's own entry */
	tree rec, cfa;
	int form;

	own = scan_bodies(fun, marks, pushing, calling);
	if (marks.empty())
		return 0;
	if (!*page_ptr)
		*page_ptr = seq_page_pointer_type();
	sd.page_ptr = *page_ptr;

	bool resumed = resumed_abnormally(fun), entered = own;
	bool site = resumed || frame_sites(fun);
	/* the page the own entry found, which its copies take: an SSA name
	 * the own entry defines, at the function's start */
	tree own_page = own ? TREE_VALUE(gimple_asm_output_op(
					 as_a<gasm *>(own), 0)) : NULL_TREE;
	bool has_page = own_page && TREE_CODE(own_page) == SSA_NAME;

	calculate_dominance_info(CDI_DOMINATORS);
	/* host page: the own entry's, which dominates the mark */
	std::vector<bool> host_page(marks.size());
	for (size_t k = 0; k < marks.size(); k++)
		host_page[k] = has_page &&
			dominated_by_p(CDI_DOMINATORS, gimple_bb(marks[k]),
				       gimple_bb(own));
	std::vector<bool> counted = counted_copies(marks, pushing, calling,
						     copies_by_address());

	std::vector<int> forms;
	for (size_t k = 0; k < marks.size(); k++) {
		gimple *g = marks[k];
		tree body = copy_of(gimple_block(g));

		seq_read_mark(g, &sd, &rec, &cfa, &form);
		if (counted[k]) {
			form = form == METER_FORM_LEAF ?
				METER_FORM_COUNT_LEAF_COPY :
				METER_FORM_COUNT_COPY;
			note_body(rec, true);
			if (verbose)
				note_flat(fun, body, METER_FORM_COUNT_COPY);
		} else {
			form = fixed_form(form, body, resumed, entered);
		}
		if (form == METER_FORM_AUTO) {
			form = body_form(body, pushing.count(body), resumed,
					 entered);
			note_body(rec, form == METER_FORM_FLAT ||
				       form == METER_FORM_FLAT_COPY);
			if (verbose && (form == METER_FORM_FLAT ||
					form == METER_FORM_FLAT_COPY))
				note_flat(fun, body, form);
		}
		forms.push_back(form);
	}
	/* expanding splits blocks: what dominates what is known first */
	tree start_page = NULL_TREE;
	for (size_t k = 0; k < marks.size(); k++) {
		tree page = copy_form(forms[k]) && host_page[k] ? own_page :
								  NULL_TREE;

		if (counted[k]) {
			drop_returns(marks[k]);
			if (!page && !start_page)
				start_page = page_at_start(fun, sd, marks[k]);
			if (!page)
				page = start_page;
		}
		seq_read_mark(marks[k], &sd, &rec, &cfa, &form);
		/* an untested copy's slow path tests the frame below by
		 * its return address: a copy it nests in keeps it too */
		expand_mark(fun, marks[k], sd, rec, cfa, page, forms[k],
			    site || forms[k] == METER_FORM_PUSH_UNTESTED);
	}
	/* the blocks changed under them */
	free_dominance_info(fun, CDI_DOMINATORS);
	free_dominance_info(fun, CDI_POST_DOMINATORS);
	mark_virtual_operands_for_renaming(fun);
	return TODO_update_ssa | TODO_cleanup_cfg;
}

} /* namespace */

opt_pass *make_entry_forms(gcc::context *ctx, bool verbose, tree *page_ptr)
{
	return new entry_forms(ctx, verbose, page_ptr);
}
