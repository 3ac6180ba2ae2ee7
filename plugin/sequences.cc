// SPDX-License-Identifier: MIT
/*
 * The entry and return sequences of meter's plugin, in GIMPLE: what
 * <meter.h>'s meter__enter(), meter__enter_flat() and the leaves do, with
 * the layout constants of that header (METER__LAYOUT_ONLY), so that the
 * plugin and the macro cannot disagree on the page (test_plugin_build
 * compares their instructions).  include/meter.h says why each store is where
 * it is.
 */
#include "gcc-plugin.h"
#include "tree.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "gimplify.h"
#include "stringpool.h"
#include "builtins.h"
#include "fold-const.h"
#include "stor-layout.h"
#include "alias.h"

#include <string>
#include <vector>

#define METER__LAYOUT_ONLY 1
#include "meter.h"

#include "sequences.h"

namespace {

tree asm_string(const char *s)
{
	return build_string(strlen(s) + 1, s);
}

/* an asm operand: ("constraint", value) as GCC's parser lists it */
tree asm_operand(const char *constraint, tree value)
{
	return build_tree_list(build_tree_list(NULL_TREE,
					       asm_string(constraint)), value);
}

gasm *thunk_asm(const char *name, tree rec_addr, tree sp, tree page,
		tree cd, tree form, tree tls);

struct builder {
	const struct seq_decls &d;
	gimple_seq seq = NULL;
	std::vector<tree> unlikely;	/* labels of blocks rarely entered */
	tree host_page = NULL_TREE;	/* the page the host's entry found */

	explicit builder(const struct seq_decls &decls) : d(decls)
	{
	}

	tree tmp(tree type, const char *name)
	{
		return create_tmp_var(type, name);
	}

	void add(gimple *g)
	{
		gimple_seq_add_stmt(&seq, g);
	}

	/* *(type *)((char *)base + off), in the sequences' alias set, or
	 * (any) in alias set 0 */
	tree mem(tree base, tree type, HOST_WIDE_INT off, bool any = false)
	{
		tree ptr = any ? build_pointer_type(char_type_node) :
				 d.page_ptr;

		return build2(MEM_REF, type, base, build_int_cst(ptr, off));
	}

	/* A load of the page's words, which <meter.h>'s macro stores too (a
	 * body it built may be inlined into one of ours, or the other way
	 * round): in alias set 0, so that it sees every store; own: a word
	 * only the sequences reach (a count, a record's id), in theirs. */
	tree load(tree base, tree type, HOST_WIDE_INT off, const char *n,
		  bool own = false)
	{
		tree t = tmp(type, n);

		add(gimple_build_assign(t, mem(base, type, off, !own)));
		return t;
	}

	/* vol: a store the sampler reads (current, depth, a frame); the
	 * compiler keeps volatile accesses in their order and never drops
	 * one, which is all the order the page needs (a fence would also
	 * pin the program's own loads and stores around every entry) */
	void store(tree base, tree type, HOST_WIDE_INT off, tree val,
		   bool vol = false)
	{
		tree ref = mem(base, type, off);

		if (vol)
			TREE_THIS_VOLATILE(ref) = 1;
		gimple *g = gimple_build_assign(ref, val);

		if (vol)
			gimple_set_has_volatile_ops(g, true);
		add(g);
	}

	tree op(enum tree_code code, tree type, tree a, tree b,
		const char *n)
	{
		tree t = tmp(type, n);

		add(gimple_build_assign(t, code, a, b));
		return t;
	}

	tree convert(tree type, tree a, const char *n)
	{
		tree t = tmp(type, n);

		add(gimple_build_assign(t, NOP_EXPR, a));
		return t;
	}

	/* base + index * scale, as a pointer */
	tree index(tree base, tree idx, unsigned scale, const char *n)
	{
		tree off = op(MULT_EXPR, sizetype, idx,
			      size_int(scale), "meter_off");

		return op(POINTER_PLUS_EXPR, ptr_type_node, base, off, n);
	}

	tree builtin(enum built_in_function b, tree arg, tree type,
		     const char *n)
	{
		tree t = tmp(type, n);
		gcall *c = gimple_build_call(builtin_decl_explicit(b), 1, arg);

		gimple_call_set_lhs(c, t);
		add(c);
		return t;
	}

	/* meter__tls.page: meter.h's struct when the unit includes it,
	 * else our pointer-typed declaration of the same symbol.  A copy
	 * takes its host's instead: one load fewer, and no second register
	 * holding the same page across the body. */
	tree page(void)
	{
		tree t = tmp(ptr_type_node, "meter_page"), ref = d.tls;

		if (host_page)
			return host_page;

		if (TREE_CODE(TREE_TYPE(ref)) == RECORD_TYPE) {
			tree f = TYPE_FIELDS(TREE_TYPE(ref));

			while (TREE_CODE(f) != FIELD_DECL)
				f = DECL_CHAIN(f);
			ref = build3(COMPONENT_REF, TREE_TYPE(f), ref, f,
				     NULL_TREE);
		}
		add(gimple_build_assign(t, ref));
		return t;
	}

	/* l, a block entered rarely (the slow path, taken once per thread
	 * and for unprofiled calls; the stale-frame test's longer way): out
	 * of the straight line, as __builtin_expect puts the macro's */
	void unlikely_label(tree l)
	{
		label(l);
		unlikely.push_back(l);
	}

	/* if (a code b) yes else no, yes rarely */
	void cond_unlikely(enum tree_code code, tree a, tree b, tree yes,
			   tree no)
	{
		cond(code, a, b, yes, no);
		unlikely.push_back(yes);
	}

	void label(tree l)
	{
		add(gimple_build_label(l));
	}

	void jump(tree l)
	{
		add(gimple_build_goto(l));
	}

	void cond(enum tree_code code, tree a, tree b, tree yes, tree no)
	{
		add(gimple_build_cond(code, a, b, yes, no));
	}

	/* asm("" : "=r"(out) : "0"(v)), as meter.h does to the frame
	 * address: computed once, not rematerialised on each path */
	tree pin(tree v)
	{
		tree t = tmp(TREE_TYPE(v), "meter_pinned");
		vec<tree, va_gc> *in = NULL, *out = NULL;
		vec_safe_push(out, asm_operand("=r", t));
		vec_safe_push(in, asm_operand("0", v));
		add(gimple_build_asm_vec("", in, out, NULL, NULL));
		return t;
	}

	/* meter.h's METER__VSTORE32() and METER__VSTOREPTR(): a volatile
	 * store at an indexed address in one instruction (GCC keeps a
	 * volatile store's address out of it, in an lea) */
	void store_asm(tree base, tree type, HOST_WIDE_INT off, tree val)
	{
		vec<tree, va_gc> *in = NULL, *out = NULL;
		bool wide = TYPE_PRECISION(type) == 64;

		vec_safe_push(out, asm_operand("=m", mem(base, type, off)));
		vec_safe_push(in, asm_operand("r", val));
		gasm *a = gimple_build_asm_vec(wide ? METER__STOREPTR_ASM :
						      METER__STORE32_ASM,
					       in, out, NULL, NULL);

		gimple_asm_set_volatile(a, true);
		add(a);
	}

	/* meter.h's METER__DEPTH_UP(): the push's last store, depth + 1,
	 * added in place in one instruction where GCC would add and store */
	void depth_up(tree page, HOST_WIDE_INT off)
	{
		vec<tree, va_gc> *out = NULL;

		vec_safe_push(out, asm_operand("+m",
					       mem(page, unsigned_type_node,
						   off)));
		gasm *a = gimple_build_asm_vec(METER__DEPTH_UP_ASM, NULL, out,
					       NULL, NULL);

		gimple_asm_set_volatile(a, true);
		add(a);
	}

	/*
	 * The slow path through lib/meter_thunk.c's thunk, which keeps every
	 * register but r10 and r11: the record goes in r11, the frame address
	 * in rax (stacked), the return address in r10; r11 and r10 come back
	 * as the frame's page and saved word.
	 */
	void thunk(const char *name, tree rec_addr, tree sp, tree page, tree cd)
	{
		add(thunk_asm(name, rec_addr, sp, page, cd, NULL_TREE,
			      NULL_TREE));
	}
};

/*
 * The thunk's asm (builder::thunk); with a form, an entry's mark: the same
 * code, what runs if nothing expands the mark (-flto without the plugin
 * at the link: every call then takes the slow path, counted and pushed,
 * and the profile's slow-path count says so), and the inputs the
 * expansion reads, never printed: the form and meter__tls.
 */
gasm *thunk_asm(const char *name, tree rec_addr, tree sp, tree page,
		tree cd, tree form, tree tls)
{
	std::string text = std::string(form ? METER_ENTRY_ASM "\n\t" : "") +
		"mov %2, %%r11\n\t"
		"lea 1f(%%rip), %%r10\n\t"
		"jmp *" + name + "@GOTPCREL(%%rip)\n"
		"1:\n\tmov %%r11, %0\n\tmov %%r10, %1";
	vec<tree, va_gc> *in = NULL, *out = NULL, *clob = NULL;

	vec_safe_push(out, asm_operand("=r", page));
	vec_safe_push(out, asm_operand("=r", cd));
	vec_safe_push(in, asm_operand("r", rec_addr));
	if (form) {
		vec_safe_push(in, asm_operand("i", form));
		vec_safe_push(in, asm_operand("X", tls));
	}
	if (sp)
		vec_safe_push(in, asm_operand("a", sp));
	for (const char *c : { "r10", "r11", "memory", "cc" })
		vec_safe_push(clob, build_tree_list(NULL_TREE, asm_string(c)));
	gasm *a = gimple_build_asm_vec(ggc_strdup(text.c_str()), in, out,
				       clob, NULL);

	gimple_asm_set_volatile(a, true);
	return a;
}

/* The page header's words, as in struct meter__page_hdr. */
const HOST_WIDE_INT OFF_CURRENT = offsetof(struct meter__page_hdr, current_id);
const HOST_WIDE_INT OFF_DEPTH = offsetof(struct meter__page_hdr, depth);
const HOST_WIDE_INT OFF_STACK = offsetof(struct meter__page_hdr, stack);

/* A 32-bit word of the page or record, widened at once: one zero-extending
 * load, as meter.h's uintptr_t locals get (the stores narrow for free). */
tree load_word(builder &b, tree base, HOST_WIDE_INT off, const char *n,
	       bool own = false)
{
	tree w = b.load(base, unsigned_type_node, off, n, own);

	return b.convert(pointer_sized_int_node, w, n);
}

/* The thread's call count of id, counts[id]++ (both entries). */
void build_count(builder &b, tree page, tree id)
{
	tree cnt = b.index(page, id, 8, "meter_cnt");
	tree n = b.load(cnt, uint64_type_node, METER__BLOCK_COUNTS, "meter_n",
			true);
	tree n1 = b.op(PLUS_EXPR, uint64_type_node, n,
		       build_int_cst(uint64_type_node, 1), "meter_n1");

	b.store(cnt, uint64_type_node, METER__BLOCK_COUNTS, n1);
}

/* __builtin_return_address(0), as an integer */
tree return_address(builder &b)
{
	tree ra = b.builtin(BUILT_IN_RETURN_ADDRESS, integer_zero_node,
			    ptr_type_node, "meter_ra");

	return b.convert(pointer_sized_int_node, ra, "meter_site");
}

/* Counted, nothing pushed: the frame is the page and the word as found. */
void build_counted(builder &b, tree page, tree id, tree cd, tree page_out,
		   tree cd_out, tree done)
{
	build_count(b, page, id);
	b.add(gimple_build_assign(page_out, page));
	b.add(gimple_build_assign(cd_out, cd));
	b.jump(done);
}

/*
 * A frame at or below ours on top: this function is inlined into the one
 * on top (its frame and return address, another function: pushed), or
 * the top frame is stale (longjmp, exception): the slow path pops it.  A
 * function's own entry (own) is never inlined: any such frame is stale.
 */
void build_stale_test(builder &b, tree page, tree d, tree sp,
		      tree rec_addr, tree check, tree fast, tree slow,
		      bool own)
{
	tree u32 = unsigned_type_node, uptr = pointer_sized_int_node;
	tree same = create_artificial_label(UNKNOWN_LOCATION);

	b.label(check);
	/* sps[d - 1], its address computed here, in the test's block, so
	 * that it folds into the comparison */
	tree slot = b.index(page, d, 8, "meter_slot");
	tree below = b.load(slot, uptr, METER__BLOCK_SPS, "meter_below");
	b.cond_unlikely(GE_EXPR, sp, below, own ? slow : same, fast);
	if (own)
		return;

	tree same_site = create_artificial_label(UNKNOWN_LOCATION);
	tree same_id = create_artificial_label(UNKNOWN_LOCATION);

	b.label(same);
	b.cond(NE_EXPR, sp, below, slow, same_site);
	b.label(same_site);
	/* its own copy of the address: one the fast path shares would be
	 * computed into a register before the first test */
	tree dl = b.pin(d);
	tree lslot = b.index(page, dl, 8, "meter_lslot");
	tree below_site = b.load(lslot, uptr, METER__BLOCK_SITES,
				 "meter_bsite");
	b.cond(NE_EXPR, below_site, return_address(b), slow, same_id);
	b.label(same_id);
	tree dm1 = b.op(PLUS_EXPR, uptr, dl, build_int_cst(uptr, -1),
			"meter_dm1");
	tree stk_below = b.index(page, dm1, 4, "meter_stkb");
	tree below_id = b.load(stk_below, u32, OFF_STACK, "meter_bid");
	/* the record's id loaded again: one register fewer across the
	 * test, as in meter.h */
	tree rec_id = b.load(rec_addr, u32, 0, "meter_rid", true);
	b.cond(EQ_EXPR, below_id, rec_id, slow, fast);
}

/*
 * meter__enter(): see include/meter.h for why each store is where it is,
 * in the form (METER_FORM_*) plugin/entry_forms.cc chose once inlining
 * had shown what the body calls and where it lies: pushed with the
 * stale-frame test (a function's own body, or a copy in a host that may
 * be resumed abnormally), without it, or not pushed at all.  The return
 * address goes into sites[] only where site says a frame may be tested
 * by it (plugin/entry_forms.cc, frame_sites()).
 */
void build_enter(builder &b, tree rec, tree cfa, tree page_out, tree cd_out,
		 int form, bool site)
{
	tree u32 = unsigned_type_node, uptr = pointer_sized_int_node;
	tree slow = create_artificial_label(UNKNOWN_LOCATION);
	tree check = create_artificial_label(UNKNOWN_LOCATION);
	tree fast = create_artificial_label(UNKNOWN_LOCATION);
	tree counted = create_artificial_label(UNKNOWN_LOCATION);
	tree done = create_artificial_label(UNKNOWN_LOCATION);
	tree rec_addr = build_fold_addr_expr(rec);
	bool flat = form == METER_FORM_FLAT || form == METER_FORM_FLAT_COPY;
	bool own = form == METER_FORM_PUSH_OWN;
	bool tested = own || form == METER_FORM_PUSH;

	tree page = b.page();
	tree d = load_word(b, page, OFF_DEPTH, "meter_depth");
	tree id = load_word(b, rec_addr, 0, "meter_id", true);
	tree sp = b.convert(uptr, cfa, "meter_sp");
	sp = b.pin(sp);
	id = b.pin(id);
	tree cd = b.load(page, uint64_type_node, OFF_CURRENT, "meter_cd");
	/*
	 * current first, even on the shared page: what follows is sampled
	 * as the callee's.  But for an entry with the stale-frame test,
	 * whose slow path takes frames off before it pushes: current after
	 * the test, so that no sample sees the callee over a frame it is
	 * about to take off (its own line, <meter>, keeps what comes
	 * before out of the caller's time by address).
	 */
	tree id32 = b.convert(u32, id, "meter_id32");
	if (!tested)
		b.store(page, u32, OFF_CURRENT, id32, true);

	if (form == METER_FORM_FLAT)
		/* not registered: the stacked slow path, whose push the
		 * return's 64-bit store takes back */
		b.cond(EQ_EXPR, d, build_int_cst(uptr, UINT32_MAX), slow,
		       counted);
	else if (!flat)
		/* not registered (depth UINT32_MAX) or deep: slot is not
		 * ours; a copy in an entered host is then counted only */
		b.cond(GE_EXPR, d, build_int_cst(uptr, METER__STACK_CAP),
		       form == METER_FORM_PUSH_COPY ? counted : slow,
		       tested ? check : fast);
	if (!tested && form != METER_FORM_PUSH_UNTESTED) {
		b.label(counted);
		build_counted(b, page, id, cd, page_out, cd_out, done);
	}
	if (tested)
		build_stale_test(b, page, d, sp, rec_addr, check, fast,
				 slow, own);
	if (!flat) {
		b.label(fast);
		/*
		 * The depth again, through an empty asm: GCC would otherwise
		 * compute &sps[d - 1] once into a register for the test and
		 * the stores (an lea); each now folds into its instruction.
		 * The test's d dies here, so the copy takes its register.
		 */
		tree dp = b.pin(d);
		tree wslot = b.index(page, dp, 8, "meter_wslot");

		if (tested)
			b.store(page, u32, OFF_CURRENT, id32, true);
		build_count(b, page, id);
		b.store_asm(wslot, uptr, METER__BLOCK_SPS + 8, sp);
		tree stk = b.index(page, dp, 4, "meter_stk");
		b.store_asm(stk, u32, OFF_STACK, id32);
		if (site) {
			/* last, through its own copy of the depth, as in
			 * meter.h */
			tree ds = b.pin(dp);

			b.store_asm(b.index(page, ds, 8, "meter_sslot"), uptr,
				    METER__BLOCK_SITES + 8,
				    return_address(b));
		}
		b.depth_up(page, OFF_DEPTH);
		b.add(gimple_build_assign(page_out, page));
		b.add(gimple_build_assign(cd_out, cd));
		b.jump(done);
	}
	if (form != METER_FORM_FLAT_COPY && form != METER_FORM_PUSH_COPY) {
		b.unlikely_label(slow);
		b.thunk(own ? "meter__enter_own_thunk" : "meter__enter_thunk",
			rec_addr, sp, page_out, cd_out);
	}
	b.label(done);
}

/* meter__enter_flat(): become current, count, push nothing; a copy in an
 * entered host (copy) without the slow path */
void build_enter_flat(builder &b, tree rec, tree page_out, tree cd_out,
		      bool copy)
{
	tree u32 = unsigned_type_node;
	tree slow = create_artificial_label(UNKNOWN_LOCATION);
	tree fast = create_artificial_label(UNKNOWN_LOCATION);
	tree done = create_artificial_label(UNKNOWN_LOCATION);
	tree rec_addr = build_fold_addr_expr(rec);

	tree page = b.page();
	tree id = load_word(b, rec_addr, 0, "meter_id", true);
	tree cur = b.load(page, u32, OFF_CURRENT, "meter_cur");
	b.store(page, u32, OFF_CURRENT, b.convert(u32, id, "meter_id32"), true);
	if (!copy) {
		tree d32 = b.load(page, u32, OFF_DEPTH, "meter_depth");

		b.cond(EQ_EXPR, d32, build_int_cst(u32, UINT32_MAX), slow,
		       fast);
	}
	b.label(fast);
	build_count(b, page, id);
	b.add(gimple_build_assign(page_out, page));
	b.add(gimple_build_assign(cd_out, NOP_EXPR, cur));
	b.jump(done);

	if (!copy) {
		b.unlikely_label(slow);
		b.thunk("meter__enter_flat_thunk", rec_addr, NULL_TREE,
			page_out, cd_out);
	}
	b.label(done);
}

/*
 * An inlined copy counted only (plugin/entry_forms.cc), on the page its
 * host found (its own entry's, or seq_page_entry's).  What a return would
 * store back (the 64-bit word when wide) is the word as found, should one
 * remain.
 */
void build_enter_counted(builder &b, tree rec, tree page_out, tree cd_out,
			 bool wide)
{
	tree page = b.page();
	tree id = load_word(b, build_fold_addr_expr(rec), 0, "meter_id", true);

	build_count(b, page, id);
	b.add(gimple_build_assign(page_out, page));
	b.add(gimple_build_assign(cd_out, NOP_EXPR,
				  b.load(page, wide ? uint64_type_node :
						      unsigned_type_node,
					 OFF_CURRENT, "meter_cd")));
}

void build_leave(builder &b, tree page, tree cd, bool flat)
{
	if (flat) {
		tree cur = b.convert(unsigned_type_node, cd, "meter_back");

		b.store(page, unsigned_type_node, OFF_CURRENT, cur, true);
	} else {
		b.store(page, uint64_type_node, OFF_CURRENT, cd, true);
	}
}


} /* namespace */

gimple_seq seq_enter(const struct seq_decls &d, tree rec, tree cfa,
		     tree page, tree page_out, tree cd_out, int form,
		     bool site, std::vector<tree> &unlikely)
{
	builder b(d);

	b.host_page = page;
	if (form == METER_FORM_COUNT_COPY || form == METER_FORM_COUNT_LEAF_COPY)
		build_enter_counted(b, rec, page_out, cd_out,
				    form == METER_FORM_COUNT_COPY);
	else if (form == METER_FORM_LEAF || form == METER_FORM_LEAF_COPY)
		build_enter_flat(b, rec, page_out, cd_out,
				 form == METER_FORM_LEAF_COPY);
	else
		build_enter(b, rec, cfa, page_out, cd_out, form, site);
	unlikely = b.unlikely;
	return b.seq;
}

/*
 * The entry as the inliner sees it: one asm (and the frame's address),
 * expanded once inlining is done, so that instrumentation keeps no
 * function from being inlined that would be without it: the whole
 * sequence weighs about 70 in GCC's estimate, a small function 20 to 50.
 * An "asm inline" weighs 1.  The frame's address is taken here, where a
 * call that may return abnormally (in a function that calls setjmp) gets
 * its edge as the graph is built; in an inlined copy it is the host's.
 */
gimple_seq seq_entry_mark(const struct seq_decls &d, tree rec, tree page_out,
			  tree cd_out, int form)
{
	gimple_seq seq = NULL;
	tree cfa = NULL_TREE;

	if (form != METER_FORM_LEAF) {
		cfa = create_tmp_var(ptr_type_node, "meter_cfa");
		gcall *c = gimple_build_call(
			builtin_decl_explicit(BUILT_IN_DWARF_CFA), 0);

		gimple_call_set_lhs(c, cfa);
		gimple_seq_add_stmt(&seq, c);
	}
	gasm *a = thunk_asm(form == METER_FORM_LEAF ?
			    "meter__enter_flat_thunk" : "meter__enter_thunk",
			    build_fold_addr_expr(rec), cfa, page_out, cd_out,
			    build_int_cst(integer_type_node, form),
			    build_fold_addr_expr(d.tls));

	gimple_asm_set_inline(a, true);
	gimple_seq_add_stmt(&seq, a);
	return seq;
}

bool seq_read_mark(const gimple *g, struct seq_decls *d, tree *rec,
		   tree *cfa, int *form)
{
	const gasm *a = dyn_cast<const gasm *>(g);
	size_t n = strlen(METER_ENTRY_ASM);
	tree r, f, t;

	if (!a || strncmp(gimple_asm_string(a), METER_ENTRY_ASM, n) ||
	    gimple_asm_string(a)[n] != '\n' || gimple_asm_ninputs(a) < 3 ||
	    gimple_asm_noutputs(a) != 2)
		return false;
	r = TREE_VALUE(gimple_asm_input_op(a, 0));
	f = TREE_VALUE(gimple_asm_input_op(a, 1));
	t = TREE_VALUE(gimple_asm_input_op(a, 2));
	if (TREE_CODE(r) != ADDR_EXPR || TREE_CODE(f) != INTEGER_CST ||
	    TREE_CODE(t) != ADDR_EXPR)
		return false;
	*rec = TREE_OPERAND(r, 0);
	*form = (int)tree_to_shwi(f);
	d->tls = TREE_OPERAND(t, 0);
	*cfa = gimple_asm_ninputs(a) > 3 ?
	       TREE_VALUE(gimple_asm_input_op(a, 3)) : NULL_TREE;
	return true;
}

/*
 * The type the sequences store the page's words and reach the counts and
 * the records through: bytes in an alias set of their own, which conflicts
 * with no access of the program's (with -fno-strict-aliasing,
 * new_alias_set() gives 0: every access may alias).  So the program's
 * loads may be kept in registers and moved out of loops across an inlined
 * entry, as they are without meter.  The page's words are loaded in alias
 * set 0 (builder::load), which sees these stores and the macro's; what
 * orders the stores the sampler reads is that they are volatile.  One type
 * for the unit's sequences, the returns built before inlining included
 * (under -flto the link reads the returns' type back as a plain byte, in
 * alias set 0: correct, and no better than a fence at each return).
 */
tree seq_page_pointer_type(void)
{
	tree t = build_distinct_type_copy(unsigned_char_type_node);

	TYPE_ALIAS_SET(t) = new_alias_set();
	return build_pointer_type(t);
}

gimple_seq seq_page_entry(const struct seq_decls &d, tree page_out,
			  std::vector<tree> &unlikely)
{
	builder b(d);
	tree u32 = unsigned_type_node;
	tree slow = create_artificial_label(UNKNOWN_LOCATION);
	tree fast = create_artificial_label(UNKNOWN_LOCATION);
	tree done = create_artificial_label(UNKNOWN_LOCATION);

	tree page = b.page();
	tree d32 = b.load(page, u32, OFF_DEPTH, "meter_depth");
	b.cond(EQ_EXPR, d32, build_int_cst(u32, UINT32_MAX), slow, fast);
	b.label(fast);
	b.add(gimple_build_assign(page_out, page));
	b.jump(done);
	b.unlikely_label(slow);
	b.thunk("meter__page_thunk", null_pointer_node, NULL_TREE, page_out,
		create_tmp_var(uint64_type_node, "meter_pcd"));
	b.label(done);
	unlikely = b.unlikely;
	return b.seq;
}

gimple_seq seq_leave(const struct seq_decls &d, tree page, tree cd, bool flat)
{
	builder b(d);

	build_leave(b, page, cd, flat);
	return b.seq;
}
