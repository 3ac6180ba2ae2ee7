// SPDX-License-Identifier: MIT
/*
 * meter._meter: Python functions as libmeter records, entered and left in C.
 *
 * Every Python code object gets a record (kept on the code object itself,
 * through the code-extra slot, so a call finds it in a few loads), named
 * module.qualname with its file and first line; code objects with the same
 * file, line and qualname (a template compiled twice) share one.
 *
 * The calls are caught by the frame evaluation function (PEP 523), not by
 * the profile hook: CPython 3.11 hands every frame it runs to it, for a
 * function call, a generator's creation and every resume alike, on every
 * thread, and it costs about 140 instructions a call where the profile
 * hook costs 1,100 before it does anything (it makes a frame object for
 * every call and saves the exception state around it; callgrind here).
 * A call is meter_enter(), a resume meter_resume() (a frame owned by a
 * generator), and however the frame ends, by a return, a yield or an
 * exception, meter_leave() follows, so the shadow stack stays balanced.
 *
 * Builtins (builtins.sorted, str.join) pass through no frame; with
 * builtins on, the profile hook takes the place of the frame function and
 * counts them too, keyed as cProfile keys them (by their PyMethodDef),
 * at the profile hook's cost.  One hook per thread: start() sets it on
 * every thread that exists, threading.setprofile() hands new threads a
 * callable that puts the C hook in its own place at its first call, and
 * an audit hook reports anyone else who takes a thread's hook
 * (sys.setprofile, cProfile).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <opcode.h>
#include <stdbool.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>	/* struct _PyInterpreterFrame */
#undef Py_BUILD_CORE

#include "meter.h"

#define GEN_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)

static Py_ssize_t extra_index = -1;
static PyObject *by_key;	/* (file, line, qualname) -> record address */
static PyObject *names_taken;	/* name -> the key that has it */
static PyObject *thread_start;	/* what threading.setprofile() is given */
static bool active;
static bool with_builtins;	/* the profile hook rather than the frames */
static _PyFrameEvalFunction prev_eval;	/* what start() found */
static bool setting_own;	/* our own _PyEval_SetProfile calls */
static bool audit_added;
static unsigned long hook_taken;	/* times another took a thread's hook */

/* builtins: PyMethodDef address -> record, open addressing */
struct c_slot {
	const void *def;
	meter_record_t *rec;
};
static struct c_slot *c_tab;
static size_t c_cap, c_used;

static int hook(PyObject *obj, PyFrameObject *frame, int what,
		PyObject *arg);

/* ------------------------------------------------------------------ */
/* records of Python functions                                         */

/* the record's name: module.qualname, or with :line when that is taken */
static PyObject *code_name(PyObject *globals, PyCodeObject *co,
			   PyObject *key)
{
	PyObject *mod = NULL, *name, *owner;

	if (globals)
		mod = PyDict_GetItemString(globals, "__name__");
	if (mod && PyUnicode_Check(mod))
		name = PyUnicode_FromFormat("%U.%U", mod, co->co_qualname);
	else
		name = PyUnicode_FromFormat("%U", co->co_qualname);
	if (!name)
		return NULL;
	owner = PyDict_GetItemWithError(names_taken, name);
	if (owner && PyObject_RichCompareBool(owner, key, Py_EQ) != 1) {
		Py_SETREF(name, PyUnicode_FromFormat("%U:%d", name,
						     co->co_firstlineno));
		if (!name)
			return NULL;
	}
	if (PyDict_SetDefault(names_taken, name, key) == NULL) {
		Py_DECREF(name);
		return NULL;
	}
	return name;
}

static meter_record_t *new_code_record(PyObject *globals, PyCodeObject *co)
{
	PyObject *key, *found, *name = NULL, *addr;
	meter_record_t *rec = NULL;
	const char *n, *f;

	key = Py_BuildValue("(OiO)", co->co_filename, co->co_firstlineno,
			    co->co_qualname);
	if (!key)
		return NULL;
	found = PyDict_GetItemWithError(by_key, key);
	if (found) {
		rec = PyLong_AsVoidPtr(found);
		goto out;
	}
	name = code_name(globals, co, key);
	n = name ? PyUnicode_AsUTF8(name) : NULL;
	f = PyUnicode_Check(co->co_filename) ?
		PyUnicode_AsUTF8(co->co_filename) : NULL;
	if (!n)
		goto out;
	rec = meter_record_register_at(n, f, (uint32_t)co->co_firstlineno);
	if (!rec)
		goto out;
	addr = PyLong_FromVoidPtr(rec);
	if (addr) {
		PyDict_SetItem(by_key, key, addr);
		Py_DECREF(addr);
	}
out:
	Py_XDECREF(name);
	Py_DECREF(key);
	return rec;
}

/*
 * CPython 3.11 runs a Python __getitem__ reached by obj[key] inside its
 * caller's evaluation, without the frame function, once the subscript is
 * specialized (BINARY_SUBSCR_GETITEM; its specialization does not check
 * for PEP 523 as the call's does): networkx's were 19 calls where cProfile
 * saw 44,459.  The specialization needs the function's version to fit in
 * 16 bits, so a __getitem__ gets one that does not, from a range of its
 * own where versions never meet the interpreter's (they count up from 1):
 * its subscripts stay generic, and a site specialized before start()
 * fails its version check and goes back.  It has to happen before any
 * subscript specializes on the function, which code that has warmed up
 * (quickened after a few loops) does at the first execution, often
 * before the function has run through the frame function at all.  So
 * the versions are set where __getitem__ functions come from: when a
 * class body (or a module, or exec'd code) has run, in the namespace it
 * leaves, and at start() in every function that exists.  A __getitem__
 * put on a class later (setattr, type() with a function made elsewhere)
 * gets its version when it first runs through the frame function, and
 * calls inlined before that are not counted.
 */
#define EXTRA_GETITEM	((uintptr_t)1)	/* records are 32-byte aligned */

static uint32_t next_wide_version = 0x80000000u;

static void keep_unspecialized(PyFunctionObject *f)
{
	if (f && f->func_version < 0x80000000u)
		f->func_version = next_wide_version++;
}

static PyObject *getitem_str;	/* "__getitem__", interned */

/* After a class body ran: its namespace's __getitem__, if a function. */
static void keep_namespace_unspecialized(PyObject *ns)
{
	PyObject *f = PyDict_GetItem(ns, getitem_str);

	if (f && PyFunction_Check(f))
		keep_unspecialized((PyFunctionObject *)f);
}

static bool is_getitem(PyCodeObject *co)
{
	return co->co_argcount == 2 &&
	       PyUnicode_CompareWithASCIIString(co->co_name,
						"__getitem__") == 0;
}

/*
 * The code object's record, tagged EXTRA_GETITEM for a __getitem__; 0
 * when none can be made.  globals is borrowed, for the module's name.
 */
static uintptr_t code_extra(PyObject *globals, PyCodeObject *co)
{
	PyObject *type, *value, *tb;
	uintptr_t x;
	void *got = NULL;

	if (_PyCode_GetExtra((PyObject *)co, extra_index, &got) == 0 && got)
		return (uintptr_t)got;
	/* a return by exception comes with the exception set: keep it */
	PyErr_Fetch(&type, &value, &tb);
	x = (uintptr_t)new_code_record(globals, co);
	if (x && is_getitem(co))
		x |= EXTRA_GETITEM;
	if (x)
		_PyCode_SetExtra((PyObject *)co, extra_index, (void *)x);
	PyErr_Clear();
	PyErr_Restore(type, value, tb);
	return x;
}

static meter_record_t *code_record(PyObject *globals, PyCodeObject *co)
{
	return (meter_record_t *)(code_extra(globals, co) & ~EXTRA_GETITEM);
}

/*
 * Whether the frame starts rather than resumes: its instruction is the
 * RESUME with argument 0 that opens every code object (a resume after a
 * yield or an await is RESUME 1 to 3).
 */
static bool first_entry(PyFrameObject *frame, PyCodeObject *co)
{
	int lasti = PyFrame_GetLasti(frame);
	_Py_CODEUNIT unit;

	if (lasti < 0 || lasti / 2 >= Py_SIZE(co))
		return true;
	unit = ((const _Py_CODEUNIT *)co->co_code_adaptive)[lasti / 2];
	return (_Py_OPCODE(unit) == RESUME ||
		_Py_OPCODE(unit) == RESUME_QUICK) && _Py_OPARG(unit) == 0;
}

static void on_call(PyFrameObject *frame)
{
	PyCodeObject *co = PyFrame_GetCode(frame);
	PyObject *globals = PyFrame_GetGlobals(frame);
	meter_record_t *rec = code_record(globals, co);

	if ((co->co_flags & GEN_FLAGS) && !first_entry(frame, co))
		meter_resume(rec);
	else
		meter_enter(rec);
	Py_XDECREF(globals);
	Py_DECREF(co);
}

static void on_return(PyFrameObject *frame)
{
	PyCodeObject *co = PyFrame_GetCode(frame);
	void *x = NULL;

	/* a frame entered before start() has no record: nothing to end */
	if (_PyCode_GetExtra((PyObject *)co, extra_index, &x) == 0 && x)
		meter_leave((void *)((uintptr_t)x & ~EXTRA_GETITEM));
	Py_DECREF(co);
}

/*
 * The frame evaluation function: every frame CPython runs.  A generator's
 * frame counts its call when it is created (the call of the generator
 * function runs the frame up to RETURN_GENERATOR); every later run is a
 * resume.
 */
static PyObject *eval_frame(PyThreadState *ts, struct _PyInterpreterFrame *fr,
			    int throwflag)
{
	uintptr_t x = code_extra(fr->f_globals, fr->f_code);
	meter_record_t *rec = (meter_record_t *)(x & ~EXTRA_GETITEM);
	PyObject *r, *ns = NULL;

	if (!rec)
		return prev_eval(ts, fr, throwflag);
	if (x & EXTRA_GETITEM)
		keep_unspecialized(fr->f_func);
	if (!(fr->f_code->co_flags & CO_OPTIMIZED) && fr->f_locals &&
	    PyDict_CheckExact(fr->f_locals)) {
		ns = fr->f_locals;	/* a class body's, a module's */
		Py_INCREF(ns);
	}
	if (fr->owner == FRAME_OWNED_BY_GENERATOR)
		meter_resume(rec);
	else
		meter_enter(rec);
	r = prev_eval(ts, fr, throwflag);
	meter_leave(rec);
	if (ns) {
		keep_namespace_unspecialized(ns);
		Py_DECREF(ns);
	}
	return r;
}

/* ------------------------------------------------------------------ */
/* records of builtins                                                 */

static size_t c_hash(const void *def)
{
	uintptr_t h = (uintptr_t)def;

	h ^= h >> 17;
	h *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 20);
}

static struct c_slot *c_find(const void *def)
{
	size_t i;

	if (!c_cap)
		return NULL;
	for (i = c_hash(def) & (c_cap - 1); c_tab[i].def;
	     i = (i + 1) & (c_cap - 1))
		if (c_tab[i].def == def)
			return &c_tab[i];
	return &c_tab[i];
}

static bool c_grow(void)
{
	struct c_slot *old = c_tab, *s;
	size_t i, n = c_cap;

	c_cap = n ? 2 * n : 1024;
	c_tab = PyMem_RawCalloc(c_cap, sizeof(*c_tab));
	if (!c_tab) {
		c_tab = old;
		c_cap = n;
		return false;
	}
	for (i = 0; i < n; i++)
		if (old[i].def) {
			s = c_find(old[i].def);
			*s = old[i];
		}
	PyMem_RawFree(old);
	return true;
}

/* The builtin's PyMethodDef and the type or module it belongs to. */
static const PyMethodDef *c_def(PyObject *fn, PyObject **self,
				PyTypeObject **type)
{
	*self = NULL;
	*type = NULL;
	if (PyCFunction_Check(fn)) {
		*self = PyCFunction_GET_SELF(fn);
		return ((PyCFunctionObject *)fn)->m_ml;
	}
	if (Py_IS_TYPE(fn, &PyMethodDescr_Type)) {
		*type = PyDescr_TYPE(fn);
		return ((PyMethodDescrObject *)fn)->d_method;
	}
	return NULL;
}

/* The type that defines the method (list for a subclass's append), as
 * cProfile names it; self's own type when that cannot be found. */
static const char *defining_type(PyObject *self, const PyMethodDef *def)
{
	PyObject *name = PyUnicode_FromString(def->ml_name), *d;

	d = name ? _PyType_Lookup(Py_TYPE(self), name) : NULL;
	Py_XDECREF(name);
	if (d && Py_IS_TYPE(d, &PyMethodDescr_Type) &&
	    ((PyMethodDescrObject *)d)->d_method == def)
		return PyDescr_TYPE(d)->tp_name;
	return Py_TYPE(self)->tp_name;
}

static PyObject *c_name(PyObject *fn, const PyMethodDef *def,
			PyObject *self, PyTypeObject *type)
{
	PyObject *mod;

	if (type)
		return PyUnicode_FromFormat("%s.%s", type->tp_name,
					    def->ml_name);
	if (self && PyModule_Check(self)) {
		const char *m = PyModule_GetName(self);

		if (m)
			return PyUnicode_FromFormat("%s.%s", m, def->ml_name);
		PyErr_Clear();
	}
	if (self && PyType_Check(self))
		return PyUnicode_FromFormat("%s.%s",
					    ((PyTypeObject *)self)->tp_name,
					    def->ml_name);
	if (self)
		return PyUnicode_FromFormat("%s.%s", defining_type(self, def),
					    def->ml_name);
	mod = ((PyCFunctionObject *)fn)->m_module;
	if (mod && PyUnicode_Check(mod))
		return PyUnicode_FromFormat("%U.%s", mod, def->ml_name);
	return PyUnicode_FromString(def->ml_name);
}

static meter_record_t *c_record(PyObject *fn, bool make)
{
	PyObject *self, *name, *type_, *value, *tb;
	PyTypeObject *type;
	const PyMethodDef *def = c_def(fn, &self, &type);
	struct c_slot *s;
	const char *n;

	if (!def)
		return NULL;
	s = c_find(def);
	if ((s && s->def) || !make)
		return s && s->def ? s->rec : NULL;
	if ((c_used + 1) * 2 > c_cap && !c_grow())
		return NULL;
	PyErr_Fetch(&type_, &value, &tb);
	name = c_name(fn, def, self, type);
	n = name ? PyUnicode_AsUTF8(name) : NULL;
	s = c_find(def);
	s->rec = n ? meter_record_register(n) : NULL;
	if (s->rec) {
		s->def = def;
		c_used++;
	}
	Py_XDECREF(name);
	PyErr_Clear();
	PyErr_Restore(type_, value, tb);
	return s->rec;
}

/* ------------------------------------------------------------------ */
/* the hook, on every thread                                           */

static int hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	meter_record_t *rec;

	(void)obj;
	switch (what) {
	case PyTrace_CALL:
		on_call(frame);
		break;
	case PyTrace_RETURN:
		on_return(frame);
		break;
	case PyTrace_C_CALL:
		rec = c_record(arg, true);
		if (rec)
			meter_enter(rec);
		break;
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		rec = c_record(arg, false);
		if (rec)
			meter_leave(rec);
		break;
	}
	return 0;
}

static void set_hook(PyThreadState *ts, bool on)
{
	setting_own = true;
	_PyEval_SetProfile(ts, on ? hook : NULL, NULL);
	setting_own = false;
}

/*
 * threading.setprofile()'s callable: a new thread calls it through
 * sys.setprofile's trampoline on its first event; it puts the C hook in
 * the trampoline's place and passes that event on.
 */
static PyObject *thread_first_event(PyObject *mod, PyObject *args)
{
	PyObject *frame, *event, *arg;

	(void)mod;
	if (!PyArg_ParseTuple(args, "OUO", &frame, &event, &arg))
		return NULL;
	if (!active)
		Py_RETURN_NONE;
	set_hook(PyThreadState_Get(), true);
	if (PyFrame_Check(frame) &&
	    PyUnicode_CompareWithASCIIString(event, "call") == 0)
		on_call((PyFrameObject *)frame);
	Py_RETURN_NONE;
}

static int audit(const char *event, PyObject *args, void *data)
{
	(void)args;
	(void)data;
	/* a thread's first setprofile (threading's, for a new thread) takes
	 * nothing of ours */
	if (active && !setting_own && !strcmp(event, "sys.setprofile") &&
	    PyThreadState_Get()->c_profilefunc == hook) {
		hook_taken++;
		PySys_WriteStderr("meter: sys.setprofile() (or a profiler such "
				  "as cProfile) took meter's profile hook on "
				  "this thread: its calls from here on are "
				  "not counted\n");
	}
	return 0;
}

static PyObject *call_threading_setprofile(PyObject *fn)
{
	PyObject *threading = PyImport_ImportModule("threading"), *r;

	if (!threading)
		return NULL;
	r = PyObject_CallMethod(threading, "setprofile", "O", fn);
	Py_DECREF(threading);
	return r;
}

static int start_hooks(void)
{
	PyThreadState *ts;
	PyObject *r;

	if (!audit_added) {
		if (PySys_AddAuditHook(audit, NULL) < 0)
			return -1;
		audit_added = true;
	}
	r = call_threading_setprofile(thread_start);
	if (!r)
		return -1;
	Py_DECREF(r);
	active = true;
	for (ts = PyInterpreterState_ThreadHead(PyInterpreterState_Get()); ts;
	     ts = PyThreadState_Next(ts))
		set_hook(ts, true);
	return 0;
}

/* Every __getitem__ function that exists: gc.get_objects() holds them. */
static int keep_all_unspecialized(void)
{
	PyObject *gc = PyImport_ImportModule("gc"), *all;
	Py_ssize_t i;

	if (!gc)
		return -1;
	all = PyObject_CallMethod(gc, "get_objects", NULL);
	Py_DECREF(gc);
	if (!all)
		return -1;
	for (i = 0; i < PyList_GET_SIZE(all); i++) {
		PyObject *o = PyList_GET_ITEM(all, i);

		if (PyFunction_Check(o) &&
		    is_getitem((PyCodeObject *)PyFunction_GET_CODE(o)))
			keep_unspecialized((PyFunctionObject *)o);
	}
	Py_DECREF(all);
	return 0;
}

static PyObject *start(PyObject *mod, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = { "builtins", NULL };
	PyInterpreterState *interp = PyInterpreterState_Get();
	int builtins = 0;

	(void)mod;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|p", kwlist, &builtins))
		return NULL;
	if (active)
		Py_RETURN_FALSE;
	with_builtins = builtins;
	if (with_builtins) {
		if (start_hooks())
			return NULL;
		Py_RETURN_TRUE;
	}
	if (keep_all_unspecialized())
		return NULL;
	/* another PEP 523 user's function (a debugger's) runs inside ours */
	prev_eval = _PyInterpreterState_GetEvalFrameFunc(interp);
	_PyInterpreterState_SetEvalFrameFunc(interp, eval_frame);
	active = true;
	Py_RETURN_TRUE;
}

/* Ends this thread's Python frames on the shadow stack, innermost first. */
static void leave_frames(void)
{
	PyFrameObject *f = PyEval_GetFrame(), *back;

	Py_XINCREF(f);
	while (f) {
		on_return(f);
		back = PyFrame_GetBack(f);
		Py_DECREF(f);
		f = back;
	}
}

static int stop_hooks(void)
{
	PyThreadState *ts;
	PyObject *r;

	for (ts = PyInterpreterState_ThreadHead(PyInterpreterState_Get()); ts;
	     ts = PyThreadState_Next(ts))
		if (ts->c_profilefunc == hook)
			set_hook(ts, false);
	leave_frames();
	r = call_threading_setprofile(Py_None);
	if (!r)
		return -1;
	Py_DECREF(r);
	return 0;
}

/*
 * The frames running now keep their evaluation function's leave (it is
 * on the C stack): they end on the shadow stack as they return.
 */
static PyObject *stop(PyObject *mod, PyObject *unused)
{
	PyInterpreterState *interp = PyInterpreterState_Get();

	(void)mod;
	(void)unused;
	if (!active)
		Py_RETURN_FALSE;
	active = false;
	if (with_builtins) {
		if (stop_hooks())
			return NULL;
		Py_RETURN_TRUE;
	}
	if (_PyInterpreterState_GetEvalFrameFunc(interp) == eval_frame) {
		_PyInterpreterState_SetEvalFrameFunc(interp, prev_eval);
	} else {
		hook_taken++;
		PySys_WriteStderr("meter: another tool replaced meter's frame "
				  "evaluation function (PEP 523): the calls "
				  "after that were not counted\n");
	}
	Py_RETURN_TRUE;
}

static PyObject *hooks_taken(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	return PyLong_FromUnsignedLong(hook_taken);
}

static PyObject *backend(PyObject *mod, PyObject *unused)
{
	(void)mod;
	(void)unused;
	return PyUnicode_FromString(meter_backend());
}

static PyMethodDef methods[] = {
	{ "start", (PyCFunction)(void (*)(void))start,
	  METH_VARARGS | METH_KEYWORDS,
	  "start(builtins=False) -> bool: profile every thread from here on; "
	  "builtins=True counts builtins too, at the profile hook's cost" },
	{ "stop", stop, METH_NOARGS,
	  "stop() -> bool: stop counting calls on every thread" },
	{ "hooks_taken", hooks_taken, METH_NOARGS,
	  "times another tool took a thread's profile hook" },
	{ "backend", backend, METH_NOARGS,
	  "libmeter's backend: kernel, signal or off" },
	{ "_thread_first_event", thread_first_event, METH_VARARGS,
	  "what threading.setprofile() is given" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "meter._meter",
	.m_doc = "CPython's profile hook over libmeter (see meter/__init__.py)",
	.m_size = -1,
	.m_methods = methods,
};

PyMODINIT_FUNC PyInit__meter(void)
{
	PyObject *m = PyModule_Create(&module);

	if (!m)
		return NULL;
	if (extra_index < 0)
		extra_index = _PyEval_RequestCodeExtraIndex(NULL);
	by_key = PyDict_New();
	names_taken = PyDict_New();
	thread_start = PyObject_GetAttrString(m, "_thread_first_event");
	getitem_str = PyUnicode_InternFromString("__getitem__");
	if (extra_index < 0 || !by_key || !names_taken || !thread_start ||
	    !getitem_str) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
