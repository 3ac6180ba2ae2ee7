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
#include "predict.h"
#include "gimple-predict.h"
#include "gimplify.h"
#include "stringpool.h"
#include "builtins.h"
#include "fold-const.h"
#include "stor-layout.h"

#include <string>

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

struct builder {
	const struct seq_decls &d;
	gimple_seq seq = NULL;

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

	/* *(type *)((char *)base + off), aliasing everything */
	tree mem(tree base, tree type, HOST_WIDE_INT off)
	{
		return build2(MEM_REF, type, base,
			      build_int_cst(d.char_ptr, off));
	}

	tree load(tree base, tree type, HOST_WIDE_INT off, const char *n)
	{
		tree t = tmp(type, n);

		add(gimple_build_assign(t, mem(base, type, off)));
		return t;
	}

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

	/* __atomic_signal_fence(__ATOMIC_SEQ_CST): orders the page's
	 * stores against the tick on this thread, costs no instruction */
	void fence(void)
	{
		add(gimple_build_call(
			builtin_decl_explicit(BUILT_IN_ATOMIC_SIGNAL_FENCE),
			1, build_int_cst(integer_type_node, 5)));
	}

	/* meter__tls.page: meter.h's struct when the unit includes it,
	 * else our pointer-typed declaration of the same symbol */
	tree page(void)
	{
		tree t = tmp(ptr_type_node, "meter_page"), ref = d.tls;

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

	/* the slow path is taken once per thread and for unprofiled
	 * calls: keep it out of the straight line, as __builtin_expect
	 * does for the macro */
	void cold(void)
	{
		add(gimple_build_predict(PRED_COLD_LABEL, NOT_TAKEN));
	}

	/* if (__builtin_expect(a code b, 0)) yes else no: out of the
	 * straight line but not cold, as the macro's __builtin_expect */
	void cond_unlikely(enum tree_code code, tree a, tree b, tree yes,
			   tree no)
	{
		tree l = long_integer_type_node;
		tree t = op(code, boolean_type_node, a, b, "meter_t");
		tree w = convert(l, t, "meter_w");
		tree e = tmp(l, "meter_e");
		gcall *c = gimple_build_call(
			builtin_decl_explicit(BUILT_IN_EXPECT), 2, w,
			build_int_cst(l, 0));

		gimple_call_set_lhs(c, e);
		add(c);
		cond(NE_EXPR, e, build_int_cst(l, 0), yes, no);
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

	/* asm("# ..." : "=r"(g) : "0"(METER_GATE_PUSH), "X"(rec_addr)): a
	 * value no pass before plugin/leaf_gates.cc's can see through, which
	 * that pass turns into the constant it chooses; the record, never
	 * printed, tells that pass whose body the gate is in */
	tree gate(tree rec_addr)
	{
		tree t = tmp(long_integer_type_node, "meter_gate");
		vec<tree, va_gc> *in = NULL, *out = NULL;
		vec_safe_push(out, asm_operand("=r", t));
		vec_safe_push(in, asm_operand("0", build_int_cst(
					long_integer_type_node,
					METER_GATE_PUSH)));
		vec_safe_push(in, asm_operand("X", rec_addr));
		add(gimple_build_asm_vec(METER_GATE_ASM, in, out, NULL, NULL));
		return t;
	}

	/* meter.h's METER__PLUS_ONE(out, v): the new depth in one
	 * instruction where GCC would copy and add */
	tree plus_one(tree v, tree type, const char *n)
	{
		tree t = tmp(type, n);
		vec<tree, va_gc> *in = NULL, *out = NULL;
		vec_safe_push(out, asm_operand("=r", t));
		vec_safe_push(in, asm_operand("r", v));
		add(gimple_build_asm_vec(METER__PLUS_ONE_ASM, in, out, NULL,
					 NULL));
		return t;
	}

	/*
	 * The slow path through lib/meter_thunk.c's thunk, which keeps every
	 * register but r10 and r11: the record goes in r11, the frame address
	 * in rax (stacked), the return address in r10; r11 and r10 come back
	 * as the frame's page and saved word.
	 */
	void thunk(const char *name, tree rec_addr, tree sp, tree page, tree cd)
	{
		std::string text = std::string("mov %2, %%r11\n\t"
			"lea 1f(%%rip), %%r10\n\t"
			"jmp *") + name + "@GOTPCREL(%%rip)\n"
			"1:\n\tmov %%r11, %0\n\tmov %%r10, %1";
		vec<tree, va_gc> *in = NULL, *out = NULL, *clob = NULL;
		vec_safe_push(out, asm_operand("=r", page));
		vec_safe_push(out, asm_operand("=r", cd));
		vec_safe_push(in, asm_operand("r", rec_addr));
		if (sp)
			vec_safe_push(in, asm_operand("a", sp));
		for (const char *c : { "r10", "r11", "memory", "cc" })
			vec_safe_push(clob, build_tree_list(NULL_TREE,
							    asm_string(c)));
		gasm *a = gimple_build_asm_vec(ggc_strdup(text.c_str()), in,
					       out, clob, NULL);

		gimple_asm_set_volatile(a, true);
		add(a);
	}
};

/* The page header's words, as in struct meter__page_hdr. */
const HOST_WIDE_INT OFF_CURRENT = offsetof(struct meter__page_hdr, current_id);
const HOST_WIDE_INT OFF_DEPTH = offsetof(struct meter__page_hdr, depth);
const HOST_WIDE_INT OFF_STACK = offsetof(struct meter__page_hdr, stack);

/* A 32-bit word of the page or record, widened at once: one zero-extending
 * load, as meter.h's uintptr_t locals get (the stores narrow for free). */
tree load_word(builder &b, tree base, HOST_WIDE_INT off, const char *n)
{
	tree w = b.load(base, unsigned_type_node, off, n);

	return b.convert(pointer_sized_int_node, w, n);
}

/* The thread's call count of id, counts[id]++ (both entries). */
void build_count(builder &b, tree page, tree id)
{
	tree cnt = b.index(page, id, 8, "meter_cnt");
	tree n = b.load(cnt, uint64_type_node, METER__BLOCK_COUNTS, "meter_n");
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

/*
 * The flat path of a gated entry: the function made current above (the
 * page and cd as the stacked path has them), counted, nothing pushed; an
 * unregistered thread goes to the stacked slow path, whose push the
 * return's 64-bit store of cd takes back as it does a stacked frame's.
 */
void build_flat_path(builder &b, tree page, tree d, tree id, tree cd,
		     tree page_out, tree cd_out, tree slow, tree done)
{
	tree fast = create_artificial_label(UNKNOWN_LOCATION);

	b.cond(EQ_EXPR, d, build_int_cst(pointer_sized_int_node, UINT32_MAX),
	       slow, fast);
	b.label(fast);
	build_count(b, page, id);
	b.add(gimple_build_assign(page_out, page));
	b.add(gimple_build_assign(cd_out, cd));
	b.jump(done);
}

/*
 * meter__enter(): see include/meter.h for why each store is where it is.
 * gated: behind a gate whose value plugin/leaf_gates.cc chooses once
 * inlining has shown what the body calls and where it lies
 * (METER_GATE_*): the flat path, the push, or the push without the
 * stale-frame test.
 */
void build_enter(builder &b, tree rec, tree page_out, tree cd_out, bool gated)
{
	tree u32 = unsigned_type_node, uptr = pointer_sized_int_node;
	tree slow = create_artificial_label(UNKNOWN_LOCATION);
	tree check = create_artificial_label(UNKNOWN_LOCATION);
	tree tested = create_artificial_label(UNKNOWN_LOCATION);
	tree fast = create_artificial_label(UNKNOWN_LOCATION);
	tree same = create_artificial_label(UNKNOWN_LOCATION);
	tree same_site = create_artificial_label(UNKNOWN_LOCATION);
	tree same_id = create_artificial_label(UNKNOWN_LOCATION);
	tree done = create_artificial_label(UNKNOWN_LOCATION);
	tree rec_addr = build_fold_addr_expr(rec);

	tree page = b.page();
	tree d = load_word(b, page, OFF_DEPTH, "meter_depth");
	tree id = load_word(b, rec_addr, 0, "meter_id");
	tree cfa = b.tmp(ptr_type_node, "meter_cfa");
	gcall *c = gimple_build_call(builtin_decl_explicit(BUILT_IN_DWARF_CFA),
				     0);
	gimple_call_set_lhs(c, cfa);
	b.add(c);
	tree sp = b.convert(uptr, cfa, "meter_sp");
	/* &sps[d - 1], as meter.h's slot */
	tree dd = b.op(PLUS_EXPR, uptr, d,
		       build_int_cst(uptr, METER__BLOCK_SPS / 8), "meter_dd");
	tree slot = b.index(page, dd, 8, "meter_slot");
	sp = b.pin(sp);
	id = b.pin(id);
	tree cd = b.load(page, uint64_type_node, OFF_CURRENT, "meter_cd");
	b.fence();
	/* current first, even on the shared page: what follows is sampled
	 * as the callee's */
	tree id32 = b.convert(u32, id, "meter_id32");
	b.store(page, u32, OFF_CURRENT, id32);
	b.fence();

	tree g = NULL_TREE;

	if (gated) {
		tree stacked = create_artificial_label(UNKNOWN_LOCATION);
		tree flat = create_artificial_label(UNKNOWN_LOCATION);

		g = b.gate(rec_addr);
		b.cond(NE_EXPR, g, build_int_cst(long_integer_type_node,
						  METER_GATE_FLAT), stacked, flat);
		b.label(flat);
		build_flat_path(b, page, d, id, cd, page_out, cd_out, slow,
				done);
		b.label(stacked);
	}
	/* not registered (depth UINT32_MAX) or deep: slot is not ours */
	b.cond(GE_EXPR, d, build_int_cst(uptr, METER__STACK_CAP), slow,
	       gated ? tested : check);
	if (gated) {
		b.label(tested);
		b.cond(EQ_EXPR, g, build_int_cst(long_integer_type_node,
						  METER_GATE_PUSH_UNTESTED),
		       fast, check);
	}
	b.label(check);
	tree below = b.load(slot, uptr, 0, "meter_below");
	b.cond_unlikely(GE_EXPR, sp, below, same, fast);

	/* inlined into the function on top: its frame and return address,
	 * another function (else a stale frame, for the slow path) */
	b.label(same);
	b.cond(NE_EXPR, sp, below, slow, same_site);
	b.label(same_site);
	tree below_site = b.load(slot, uptr,
				 (METER__SITE_SLOT - 1) * 8, "meter_bsite");
	b.cond(NE_EXPR, below_site, return_address(b), slow, same_id);
	b.label(same_id);
	tree dm1 = b.op(PLUS_EXPR, uptr, d, build_int_cst(uptr, -1),
			"meter_dm1");
	tree stk_below = b.index(page, dm1, 4, "meter_stkb");
	tree below_id = b.load(stk_below, u32, OFF_STACK, "meter_bid");
	/* the record's id loaded again: one register fewer across the
	 * test, as in meter.h */
	tree rec_id = b.load(rec_addr, u32, 0, "meter_rid");
	b.cond(EQ_EXPR, below_id, rec_id, slow, fast);

	b.label(fast);
	tree d1 = b.plus_one(d, u32, "meter_d1");
	build_count(b, page, id);
	b.store(slot, uptr, 8, sp);
	b.store(slot, uptr, METER__SITE_SLOT * 8, return_address(b));
	tree stk = b.index(page, d, 4, "meter_stk");
	b.store(stk, u32, OFF_STACK, id32);
	b.fence();
	b.store(page, u32, OFF_DEPTH, d1);
	b.add(gimple_build_assign(page_out, page));
	b.add(gimple_build_assign(cd_out, cd));
	b.jump(done);

	b.label(slow);
	b.cold();
	b.thunk("meter__enter_thunk", rec_addr, sp, page_out, cd_out);
	b.label(done);
}

/* meter__enter_flat(): become current, count, push nothing */
void build_enter_flat(builder &b, tree rec, tree page_out, tree cd_out)
{
	tree u32 = unsigned_type_node;
	tree slow = create_artificial_label(UNKNOWN_LOCATION);
	tree fast = create_artificial_label(UNKNOWN_LOCATION);
	tree done = create_artificial_label(UNKNOWN_LOCATION);
	tree rec_addr = build_fold_addr_expr(rec);

	tree page = b.page();
	tree id = load_word(b, rec_addr, 0, "meter_id");
	tree cur = b.load(page, u32, OFF_CURRENT, "meter_cur");
	b.fence();
	b.store(page, u32, OFF_CURRENT, b.convert(u32, id, "meter_id32"));
	b.fence();
	tree d32 = b.load(page, u32, OFF_DEPTH, "meter_depth");
	b.cond(EQ_EXPR, d32, build_int_cst(u32, UINT32_MAX), slow, fast);

	b.label(fast);
	build_count(b, page, id);
	b.add(gimple_build_assign(page_out, page));
	b.add(gimple_build_assign(cd_out, NOP_EXPR, cur));
	b.jump(done);

	b.label(slow);
	b.cold();
	b.thunk("meter__enter_flat_thunk", rec_addr, NULL_TREE, page_out,
		cd_out);
	b.label(done);
}

void build_leave(builder &b, tree page, tree cd, bool flat)
{
	b.fence();
	if (flat) {
		tree cur = b.convert(unsigned_type_node, cd, "meter_back");

		b.store(page, unsigned_type_node, OFF_CURRENT, cur, true);
	} else {
		b.store(page, uint64_type_node, OFF_CURRENT, cd);
	}
}


} /* namespace */

gimple_seq seq_enter(const struct seq_decls &d, tree rec, tree page_out,
		     tree cd_out, enum seq_form form)
{
	builder b(d);

	if (form == SEQ_FLAT)
		build_enter_flat(b, rec, page_out, cd_out);
	else
		build_enter(b, rec, page_out, cd_out, form == SEQ_GATED);
	return b.seq;
}

gimple_seq seq_leave(const struct seq_decls &d, tree page, tree cd, bool flat)
{
	builder b(d);

	build_leave(b, page, cd, flat);
	return b.seq;
}
