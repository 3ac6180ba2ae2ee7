// SPDX-License-Identifier: MIT
/*
 * meter's GCC plugin: every function it compiles does what METER_FUNCTION()
 * does, written straight into GIMPLE.
 *
 *	gcc -fplugin=$(pkg-config --variable=gccplugin meter) prog.c \
 *		$(pkg-config --cflags --libs meter)
 *
 * Per function: a static struct meter_record in the section
 * "meter_records" (the macro's section, so the same constructor numbers
 * both), and around the body
 *
 *	frame = <stacked or flat entry>;	(inline, no call when hot)
 *	try { body } finally { <leave: restore current and depth> }
 *
 * The pass runs in the lowering passes, just before "lower" (pass_lower_cf):
 * the body is still high GIMPLE (binds and try/finally are allowed, and
 * lower_cf and lower_eh turn the finally into the code on every return
 * and every EH edge, as for -finstrument-functions' exit hook), and no
 * inlining has happened yet: a function later inlined into its caller
 * carries its own record, count and current store along with it (Appel's
 * property; gprof loses it).
 *
 * The sequences mirror meter__enter(), meter__enter_flat() and the leaves
 * in <meter.h>, and the layout constants come from that header, so a change
 * of layout is a change of METER__ABI_SYMBOL for both.  See
 * Documentation/gcc-plugin.md for the options and the leaf rule.
 */
#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "predict.h"
#include "gimple-predict.h"
#include "gimplify.h"
#include "stringpool.h"
#include "attribs.h"
#include "cgraph.h"
#include "langhooks.h"
#include "varasm.h"
#include "stor-layout.h"
#include "fold-const.h"
#include "tree-iterator.h"
#include "diagnostic-core.h"
#include "builtins.h"
#include "gtype-desc.h"
#include "ggc.h"

#include <string>
#include <vector>

/* the layout, and nothing else, from the header the macro lives in */
#define METER__LAYOUT_ONLY 1
#include "meter.h"

#include "body_shape.h"

int plugin_is_GPL_compatible;

/*
 * The tiny rule's default: functions of at most this many statements,
 * without a loop or recursion, are left alone (Documentation/gcc-plugin.md,
 * "Tiny functions").
 */
#define METER_PLUGIN_TINY 8

static const char *plugin_name = "meter";

namespace {

enum flat_mode { FLAT_AUTO, FLAT_ALL, FLAT_NONE };

struct options {
	std::vector<std::string> exclude_functions;
	std::vector<std::string> exclude_files;
	enum flat_mode flat = FLAT_AUTO;
	unsigned tiny = METER_PLUGIN_TINY;
	bool verbose = false;
} opts;

/* the declarations the sequences reach, made once per translation unit
 * (GC roots: see meter_roots) */
struct decls {
	tree tls;		/* meter__tls (its first word: the page) */
	tree rec_type;		/* struct meter_record, as a plain record */
	tree module_records;	/* meter__module_records() */
	tree start, stop;	/* __start_/__stop_meter_records */
	tree char_ptr;		/* the alias-everything pointer type */
	int nrecords;
} d;

#define ROOT(field) \
	{ &d.field, 1, sizeof(tree), gt_ggc_mx_tree_node, gt_pch_nx_tree_node }
const struct ggc_root_tab meter_roots[] = {
	ROOT(tls), ROOT(rec_type), ROOT(module_records), ROOT(start),
	ROOT(stop), ROOT(char_ptr), LAST_GGC_ROOT_TAB
};
#undef ROOT

void split_list(const char *arg, std::vector<std::string> &out)
{
	std::string s(arg ? arg : "");
	size_t i = 0;

	while (i <= s.size()) {
		size_t j = s.find(',', i);

		if (j == std::string::npos)
			j = s.size();
		if (j > i)
			out.push_back(s.substr(i, j - i));
		i = j + 1;
	}
}

/* An existing declaration of asmname (a TU that also includes meter.h)
 * is reused: two decls of one symbol would clash in the symbol table. */
tree existing_decl(const char *asmname)
{
	symtab_node *n = symtab_node::get_for_asmname(get_identifier(asmname));

	return n ? n->decl : NULL_TREE;
}

tree extern_var(const char *name, const char *asmname, tree type)
{
	tree v = existing_decl(asmname);

	if (v)
		return v;
	v = build_decl(UNKNOWN_LOCATION, VAR_DECL, get_identifier(name), type);
	if (strcmp(name, asmname))
		SET_DECL_ASSEMBLER_NAME(v, get_identifier(asmname));
	DECL_EXTERNAL(v) = 1;
	TREE_PUBLIC(v) = 1;
	TREE_STATIC(v) = 0;
	DECL_ARTIFICIAL(v) = 1;
	DECL_IGNORED_P(v) = 1;
	return v;
}

/*
 * struct meter_record { u32 id, magic; const char *name, *file;
 *			 u32 line, flags; } aligned(32): built here rather
 * than found, so a translation unit need not include meter.h.
 */
tree make_record_type(void)
{
	static const struct {
		const char *name;
		tree *type;
	} fields[] = {
		{ "id", &unsigned_type_node },
		{ "magic", &unsigned_type_node },
		{ "name", &const_ptr_type_node },
		{ "file", &const_ptr_type_node },
		{ "line", &unsigned_type_node },
		{ "flags", &unsigned_type_node },
	};
	tree t = make_node(RECORD_TYPE), chain = NULL_TREE;

	for (int i = (int)ARRAY_SIZE(fields) - 1; i >= 0; i--) {
		tree f = build_decl(UNKNOWN_LOCATION, FIELD_DECL,
				    get_identifier(fields[i].name),
				    *fields[i].type);

		DECL_CONTEXT(f) = t;
		DECL_CHAIN(f) = chain;
		chain = f;
	}
	TYPE_FIELDS(t) = chain;
	SET_TYPE_ALIGN(t, 32 * BITS_PER_UNIT);
	TYPE_USER_ALIGN(t) = 1;
	layout_type(t);
	gcc_assert(tree_to_uhwi(TYPE_SIZE_UNIT(t)) ==
		   sizeof(struct meter_record));
	return t;
}

void init_decls(void)
{
	tree fn_type;

	if (d.tls)
		return;
	d.char_ptr = build_pointer_type(char_type_node);
	d.tls = extern_var("meter__tls", METER__ABI_SYMBOL, ptr_type_node);
	if (!DECL_THREAD_LOCAL_P(d.tls))
		set_decl_tls_model(d.tls, TLS_MODEL_INITIAL_EXEC);
	d.rec_type = make_record_type();

	d.module_records = existing_decl("meter__module_records");
	if (!d.module_records) {
		fn_type = build_function_type_list(void_type_node,
						   ptr_type_node,
						   ptr_type_node, NULL_TREE);
		d.module_records = build_fn_decl("meter__module_records",
						 fn_type);
		DECL_ARTIFICIAL(d.module_records) = 1;
	}
	d.start = extern_var("__start_meter_records",
			     "__start_meter_records", char_type_node);
	d.stop = extern_var("__stop_meter_records",
			    "__stop_meter_records", char_type_node);
	for (tree v : { d.start, d.stop }) {
		DECL_WEAK(v) = 1;
		DECL_VISIBILITY(v) = VISIBILITY_HIDDEN;
		DECL_VISIBILITY_SPECIFIED(v) = 1;
	}
}

/* ---- what gets instrumented ------------------------------------------ */

/* libiberty's demangler, linked into cc1 and cc1plus (no header ships) */
extern "C" char *cplus_demangle(const char *mangled, int options);
#define METER_DMGL_PARAMS (1 << 0)
#define METER_DMGL_ANSI (1 << 1)

/*
 * C: the identifier, static functions too (as __func__ names them).
 * C++: the mangled name demangled, as the automatic mode's ELF lookup
 * shows it ("ns::f<int>(int)").
 */
const char *function_name(tree fn)
{
	if (lang_GNU_CXX() && DECL_ASSEMBLER_NAME_SET_P(fn)) {
		const char *m = IDENTIFIER_POINTER(DECL_ASSEMBLER_NAME(fn));
		char *dm = cplus_demangle(m, METER_DMGL_PARAMS |
					     METER_DMGL_ANSI);

		if (dm) {
			const char *r = ggc_strdup(dm);

			free(dm);
			return r;
		}
		return m;
	}
	return IDENTIFIER_POINTER(DECL_NAME(fn));
}

bool listed(const std::vector<std::string> &list, const char *s)
{
	for (const std::string &e : list)
		if (strstr(s, e.c_str()))
			return true;
	return false;
}

/* A call to one of meter.h's inline entries: the function is already
 * instrumented by hand. */
bool excluded(tree fn)
{
	/* the attribute itself: gimplification sets the DECL flag on every
	 * function it has done */
	if (DECL_ARTIFICIAL(fn) ||
	    lookup_attribute("no_instrument_function", DECL_ATTRIBUTES(fn)))
		return true;
	/* a nested function's frame is its parent's business */
	if (DECL_STATIC_CHAIN(fn))
		return true;
	/*
	 * An extern inline (gnu_inline) body, such as glibc's atoi in
	 * <stdlib.h>, is another library's function: its real copy is that
	 * library's, uninstrumented, and its time belongs to the caller as
	 * a call to that copy's would.
	 */
	if (DECL_EXTERNAL(fn))
		return true;
	if (listed(opts.exclude_files, DECL_SOURCE_FILE(fn)))
		return true;
	return listed(opts.exclude_functions, function_name(fn));
}

/*
 * Tiny: a body of a few statements with no loop and no recursion, such as
 * an accessor or a bit trick.  Inlined, it is a few instructions, which
 * counting would double or triple, and in which nearly every sample would
 * be the count's own cost: its time is its caller's (as where gprof and
 * perf by symbol see an inlined function), its calls are not counted.
 * main is never tiny.
 */
bool tiny(tree fn, const struct body_shape &shape)
{
	return shape.stmts <= opts.tiny && !shape.loops && !shape.recurses &&
	       !MAIN_NAME_P(DECL_NAME(fn));
}

/* ---- GIMPLE building -------------------------------------------------- */

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
	gimple_seq seq = NULL;

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

/* meter__enter(): see lib/meter.h for why each store is where it is */
void build_enter(builder &b, tree rec, tree page_out, tree cd_out)
{
	tree u32 = unsigned_type_node, uptr = pointer_sized_int_node;
	tree slow = create_artificial_label(UNKNOWN_LOCATION);
	tree check = create_artificial_label(UNKNOWN_LOCATION);
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

	/* not registered (depth UINT32_MAX) or deep: slot is not ours */
	b.cond(GE_EXPR, d, build_int_cst(uptr, METER__STACK_CAP), slow,
	       check);
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

/* The function's record, static, in the section meter__module_records()
 * numbers. */
tree make_record(tree fn, bool flat)
{
	char name[32];
	tree v, ctor;
	const char *fname = function_name(fn);
	const char *file = DECL_SOURCE_FILE(fn);
	vec<constructor_elt, va_gc> *elts = NULL;
	tree f = TYPE_FIELDS(d.rec_type);

	snprintf(name, sizeof(name), "meter__rec_p%d", d.nrecords++);
	v = build_decl(DECL_SOURCE_LOCATION(fn), VAR_DECL,
		       get_identifier(name), d.rec_type);
	TREE_STATIC(v) = 1;
	TREE_PUBLIC(v) = 0;
	TREE_USED(v) = 1;
	TREE_ADDRESSABLE(v) = 1;
	DECL_ARTIFICIAL(v) = 1;
	DECL_IGNORED_P(v) = 1;
	DECL_PRESERVE_P(v) = 1;
	SET_DECL_ALIGN(v, 32 * BITS_PER_UNIT);
	DECL_USER_ALIGN(v) = 1;
	set_decl_section_name(v, "meter_records");

	auto str = [](const char *s) {
		return build_string_literal(strlen(s) + 1, s);
	};
	tree vals[] = {
		build_int_cst(unsigned_type_node, 0),
		build_int_cst(unsigned_type_node, METER__RECORD_MAGIC),
		str(fname), str(file ? file : ""),
		build_int_cst(unsigned_type_node, DECL_SOURCE_LINE(fn)),
		build_int_cst(unsigned_type_node, flat ? METER__REC_FLAT : 0),
	};
	for (tree val : vals) {
		CONSTRUCTOR_APPEND_ELT(elts, f,
				       fold_convert(TREE_TYPE(f), val));
		f = DECL_CHAIN(f);
	}
	ctor = build_constructor(d.rec_type, elts);
	TREE_CONSTANT(ctor) = 1;
	TREE_STATIC(ctor) = 1;
	DECL_INITIAL(v) = ctor;
	DECL_CONTEXT(v) = NULL_TREE;
	varpool_node::finalize_decl(v);
	return v;
}

/* ---- the pass ----------------------------------------------------------- */

const pass_data meter_pass_data = {
	GIMPLE_PASS,		/* type */
	"meter",		/* name */
	OPTGROUP_NONE,		/* optinfo_flags */
	TV_NONE,		/* tv_id */
	PROP_gimple_any,	/* properties_required */
	0,			/* properties_provided */
	0,			/* properties_destroyed */
	0,			/* todo_flags_start */
	0,			/* todo_flags_finish */
};

class meter_pass : public gimple_opt_pass {
public:
	meter_pass(gcc::context *ctx) : gimple_opt_pass(meter_pass_data, ctx)
	{
	}

	unsigned int execute(function *fun) final override;
};

unsigned int meter_pass::execute(function *fun)
{
	tree fn = fun->decl;
	struct body_shape shape;
	bool flat;

	if (!gimple_body(fn) || excluded(fn))
		return 0;
	shape = body_shape_of(fn);
	if (shape.manual)
		return 0;	/* METER_FUNCTION() already there */
	if (tiny(fn, shape)) {
		if (opts.verbose)
			inform(DECL_SOURCE_LOCATION(fn),
			       "meter: %qs tiny (%u statements), left alone",
			       function_name(fn), shape.stmts);
		return 0;
	}
	flat = !shape.reaches_code;
	if (opts.flat == FLAT_ALL)
		flat = true;
	else if (opts.flat == FLAT_NONE)
		flat = false;

	init_decls();
	tree rec = make_record(fn, flat);
	tree page = create_tmp_var(ptr_type_node, "meter_fpage");
	tree cd = create_tmp_var(uint64_type_node, "meter_fcd");
	builder enter, leave;

	if (flat)
		build_enter_flat(enter, rec, page, cd);
	else
		build_enter(enter, rec, page, cd);
	build_leave(leave, page, cd, flat);

	gimple_seq seq = enter.seq;
	gtry *t = gimple_build_try(gimple_body(fn), leave.seq, GIMPLE_TRY_FINALLY);

	gimple_seq_add_stmt(&seq, t);
	gbind *bind = gimple_build_bind(NULL_TREE, seq, NULL_TREE);

	gimple_set_body(fn, gimple_seq_alloc_with_stmt(bind));
	if (opts.verbose)
		inform(DECL_SOURCE_LOCATION(fn), "meter: %qs %s (%u statements)",
		       function_name(fn), flat ? "flat" : "stacked",
		       shape.stmts);
	return 0;
}

/*
 * One constructor per translation unit hands the section's bounds to
 * libmeter before any default-priority constructor runs, as meter.h's
 * meter__register_module() does (libmeter ignores the second of two).
 */
void finish_unit(void *, void *)
{
	tree call, start, stop;

	if (!d.nrecords || seen_error())
		return;
	start = build_fold_addr_expr(d.start);
	stop = build_fold_addr_expr(d.stop);
	call = build_call_expr(d.module_records, 2,
			       fold_convert(ptr_type_node, start),
			       fold_convert(ptr_type_node, stop));
	cgraph_build_static_cdtor('I', call, 101);
}

bool parse_args(struct plugin_name_args *info)
{
	for (int i = 0; i < info->argc; i++) {
		const char *k = info->argv[i].key, *v = info->argv[i].value;

		if (!strcmp(k, "exclude-function")) {
			split_list(v, opts.exclude_functions);
		} else if (!strcmp(k, "exclude-file")) {
			split_list(v, opts.exclude_files);
		} else if (!strcmp(k, "flat")) {
			if (v && !strcmp(v, "auto"))
				opts.flat = FLAT_AUTO;
			else if (v && !strcmp(v, "all"))
				opts.flat = FLAT_ALL;
			else if (v && !strcmp(v, "none"))
				opts.flat = FLAT_NONE;
			else {
				error("%s: flat takes auto, all or none",
				      plugin_name);
				return false;
			}
		} else if (!strcmp(k, "tiny")) {
			char *end = NULL;
			unsigned long n = v ? strtoul(v, &end, 10) : 0;

			if (!v || !*v || *end || n > 1000) {
				error("%s: tiny takes a number of statements, "
				      "0 to 1000", plugin_name);
				return false;
			}
			opts.tiny = (unsigned)n;
		} else if (!strcmp(k, "verbose")) {
			opts.verbose = true;
		} else {
			error("%s: unknown argument %qs (known: "
			      "exclude-function, exclude-file, flat, tiny, "
			      "verbose)", plugin_name, k);
			return false;
		}
	}
	return true;
}

} /* namespace */

static struct plugin_info meter_plugin_info = {
	"0.1",
	"instruments every function as METER_FUNCTION() does; arguments: "
	"exclude-function=a,b exclude-file=x,y flat=auto|all|none tiny=N "
	"verbose",
};

int plugin_init(struct plugin_name_args *info,
		struct plugin_gcc_version *version)
{
	struct register_pass_info pass;

	plugin_name = info->base_name;
	if (!plugin_default_version_check(version, &gcc_version)) {
		error("%s: built for GCC %s, not this compiler",
		      plugin_name, gcc_version.basever);
		return 1;
	}
	if (!parse_args(info))
		return 1;
	register_callback(plugin_name, PLUGIN_INFO, NULL, &meter_plugin_info);
	register_callback(plugin_name, PLUGIN_REGISTER_GGC_ROOTS, NULL,
			  (void *)meter_roots);

	pass.pass = new meter_pass(g);
	pass.reference_pass_name = "lower";
	pass.ref_pass_instance_number = 1;
	pass.pos_op = PASS_POS_INSERT_BEFORE;
	register_callback(plugin_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
	register_callback(plugin_name, PLUGIN_ALL_IPA_PASSES_START, finish_unit,
			  NULL);
	return 0;
}
