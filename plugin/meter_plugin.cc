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
 * The sequences (plugin/sequences.cc) mirror meter__enter(),
 * meter__enter_flat() and the leaves in <meter.h>, and the layout constants
 * come from that header, so a change of layout is a change of
 * METER__ABI_SYMBOL for both; a body's shape, for the leaf and tiny rules,
 * is plugin/body_shape.cc's.  See Documentation/gcc-plugin.md for the
 * options and the rules.
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
#include "entry_forms.h"
#include "sequences.h"

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
	tree page_ptr;		/* the page's words: an alias set of their own */
	int nrecords;
} d;

/*
 * Where meter's own instructions say they come from: lines of a file of
 * their own, "<meter>", in the debug information's line table (1: the
 * entries, 2: the returns).  A sample's address in one of them is
 * meter's time, not the function's (Documentation/gcc-plugin.md, "Lines
 * of its own").  Made by the first function's pass, once the source is
 * parsed (a precompiled header read while parsing replaces the line
 * table), as a file entered and left at once.  Only the lowering passes
 * make sequences, and lto1 does not run them: its reader makes the
 * locations it reads, and a map made among them would take theirs.
 */
location_t entry_location, return_location;

/*
 * Unoptimised code and coverage builds keep the sequences without a line
 * (each instruction takes the line before it, as before): at -O0 every
 * line is a statement, and a debugger's breakpoint on a function would
 * stop at <meter>:1, a file that does not exist; gcov would list it.
 */
bool own_lines(void)
{
	bool tracing = line_table->trace_includes;

	if (!optimize || flag_test_coverage)
		return false;
	if (entry_location)
		return true;
	/* not a header: -H lists the files the line table enters */
	line_table->trace_includes = false;
	linemap_add(line_table, LC_ENTER, false, "<meter>", 1);
	entry_location = linemap_line_start(line_table, 1, 1);
	return_location = linemap_line_start(line_table, 2, 1);
	linemap_add(line_table, LC_LEAVE, false, NULL, 0);
	line_table->trace_includes = tracing;
	return true;
}

#define ROOT(field) \
	{ &d.field, 1, sizeof(tree), gt_ggc_mx_tree_node, gt_pch_nx_tree_node }
const struct ggc_root_tab meter_roots[] = {
	ROOT(tls), ROOT(rec_type), ROOT(module_records), ROOT(start),
	ROOT(stop), ROOT(page_ptr), LAST_GGC_ROOT_TAB
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
 * In an executable, meter__tls defined here as <meter.h> defines it there:
 * weak, starting at libmeter's block for threads not registered, read at
 * a fixed offset from the thread pointer (one load a call fewer).
 */
tree exe_tls(void)
{
	tree nb = extern_var("meter__no_block", METER__NO_BLOCK_SYMBOL,
			     char_type_node);
	tree v = build_decl(UNKNOWN_LOCATION, VAR_DECL,
			    get_identifier("meter__tls"), ptr_type_node);

	TREE_ADDRESSABLE(nb) = 1;
	SET_DECL_ASSEMBLER_NAME(v, get_identifier(METER__ABI_SYMBOL));
	TREE_PUBLIC(v) = 1;
	TREE_STATIC(v) = 1;
	TREE_USED(v) = 1;
	DECL_ARTIFICIAL(v) = 1;
	DECL_IGNORED_P(v) = 1;
	declare_weak(v);
	/* exported under -fvisibility=hidden too: libmeter must reach it */
	DECL_VISIBILITY(v) = VISIBILITY_DEFAULT;
	DECL_VISIBILITY_SPECIFIED(v) = 1;
	set_decl_tls_model(v, TLS_MODEL_LOCAL_EXEC);
	DECL_INITIAL(v) = fold_convert(ptr_type_node, build_fold_addr_expr(nb));
	DECL_CONTEXT(v) = NULL_TREE;
	varpool_node::finalize_decl(v);
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
	d.page_ptr = seq_page_pointer_type();
	d.tls = existing_decl(METER__ABI_SYMBOL);
	if (!d.tls && (flag_pie || !flag_pic))
		d.tls = exe_tls();
	if (!d.tls)
		d.tls = extern_var("meter__tls", METER__ABI_SYMBOL,
				   ptr_type_node);
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

/*
 * A C++ lambda's body: its closure's operator(), which the front end marks
 * artificial as it does the functions it makes up itself.  The closure's
 * name is an identifier the front end flags as a lambda's (cp-tree.h's
 * IDENTIFIER_LAMBDA_P, read here without the C++ front end's headers: the
 * plugin also runs in cc1).
 */
static bool lambda_body(tree fn)
{
	tree ctx = DECL_CONTEXT(fn), name;

	if (!DECL_NAME(fn) || strcmp(IDENTIFIER_POINTER(DECL_NAME(fn)),
				     "operator()") ||
	    !ctx || TREE_CODE(ctx) != RECORD_TYPE || !TYPE_NAME(ctx) ||
	    TREE_CODE(TYPE_NAME(ctx)) != TYPE_DECL)
		return false;
	name = DECL_NAME(TYPE_NAME(ctx));
	return name && TREE_CODE(name) == IDENTIFIER_NODE &&
	       name->base.protected_flag;
}

/* A call to one of meter.h's inline entries: the function is already
 * instrumented by hand. */
bool excluded(tree fn)
{
	/* the attribute itself: gimplification sets the DECL flag on every
	 * function it has done */
	if ((DECL_ARTIFICIAL(fn) && !lambda_body(fn)) ||
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

/*
 * One constructor per translation unit hands the section's bounds to
 * libmeter before any default-priority constructor runs, as meter.h's
 * meter__register_module() does (libmeter ignores the second of two).
 * Made as the first record is, in the lowering passes, where a new
 * function is queued and lowered like any other: made once the IPA
 * passes start (as it was), it crashed cc1 under -flto, whose
 * free_lang_data pass found it unlowered.  cgraph_build_static_cdtor
 * leaves no function current; the pass's is set back.
 */
void make_module_constructor(void)
{
	function *was = cfun;
	tree was_decl = current_function_decl;
	tree start = build_fold_addr_expr(d.start);
	tree stop = build_fold_addr_expr(d.stop);
	tree call = build_call_expr(d.module_records, 2,
				    fold_convert(ptr_type_node, start),
				    fold_convert(ptr_type_node, stop));

	cgraph_build_static_cdtor('I', call, 101);
	set_cfun(was);
	current_function_decl = was_decl;
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
	if (!d.nrecords)
		make_module_constructor();
	tree rec = make_record(fn, flat);
	tree page = create_tmp_var(ptr_type_node, "meter_fpage");
	tree cd = create_tmp_var(uint64_type_node, "meter_fcd");
	struct seq_decls sd = { d.tls, d.page_ptr };

	int form = flat ? METER_FORM_LEAF :
		   opts.flat == FLAT_AUTO ? METER_FORM_AUTO : METER_FORM_PUSH;
	gimple_seq seq = seq_entry_mark(sd, rec, page, cd, form);
	gimple_seq leave = seq_leave(sd, page, cd, flat);

	if (own_lines()) {
		gimple_seq_set_location(seq, entry_location);
		gimple_seq_set_location(leave, return_location);
	}
	gtry *t = gimple_build_try(gimple_body(fn), leave,
				   GIMPLE_TRY_FINALLY);

	gimple_seq_add_stmt(&seq, t);
	gbind *bind = gimple_build_bind(NULL_TREE, seq, NULL_TREE);

	gimple_set_body(fn, gimple_seq_alloc_with_stmt(bind));
	if (opts.verbose)
		inform(DECL_SOURCE_LOCATION(fn), "meter: %qs %s (%u statements)",
		       function_name(fn), flat ? "flat" : "stacked",
		       shape.stmts);
	return 0;
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
	struct register_pass_info pass, entries;

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
	/* after the IPA passes, the first pass every output function takes */
	entries.pass = make_entry_forms(g, opts.verbose, &d.page_ptr);
	entries.reference_pass_name = "ehdisp";
	entries.ref_pass_instance_number = 1;
	entries.pos_op = PASS_POS_INSERT_AFTER;
	register_callback(plugin_name, PLUGIN_PASS_MANAGER_SETUP, NULL,
			  &entries);
	return 0;
}
