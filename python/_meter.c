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
#include "meter_py.h"

#include <dlfcn.h>

#include <opcode.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>	/* struct _PyInterpreterFrame */
#undef Py_BUILD_CORE

#define GEN_FLAGS (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)

static PyObject *thread_start;	/* what threading.setprofile() is given */
static bool active;
static bool with_builtins;	/* the profile hook rather than the frames */
static _PyFrameEvalFunction prev_eval;	/* what start() found */
static bool setting_own;	/* our own _PyEval_SetProfile calls */
static bool audit_added;
static unsigned long hook_taken;	/* times another took a thread's hook */


static int hook(PyObject *obj, PyFrameObject *frame, int what,
		PyObject *arg);

static meter_record_t *code_record(PyObject *globals, PyCodeObject *co)
{
	return py_extra_record(py_code_extra(globals, co));
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
	if (_PyCode_GetExtra((PyObject *)co, py_extra_index, &x) == 0 && x &&
	    py_extra_record((uintptr_t)x))
		meter_leave(py_extra_record((uintptr_t)x));
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
	uintptr_t x = py_code_extra(fr->f_globals, fr->f_code);
	meter_record_t *rec = py_extra_record(x);
	PyObject *r, *ns = NULL;

	if (!rec)
		return prev_eval(ts, fr, throwflag);
	if (x & EXTRA_GETITEM)
		py_keep_unspecialized(fr->f_func);
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
		py_keep_namespace_unspecialized(ns);
		Py_DECREF(ns);
	}
	return r;
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
		rec = py_c_record(arg, true);
		if (rec)
			meter_enter(rec);
		break;
	case PyTrace_C_RETURN:
	case PyTrace_C_EXCEPTION:
		rec = py_c_record(arg, false);
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


static void install_frame_function(bool on)
{
	_PyInterpreterState_SetEvalFrameFunc(PyInterpreterState_Get(),
					     on ? eval_frame : prev_eval);
}

static void install_own_hook(bool on)
{
	set_hook(PyThreadState_Get(), on);
}

/*
 * A call's cost in the mode, measured once for each: what the reports'
 * correction takes out of a Python call (calibrate.c).
 */
static void calibrate_once(bool builtins)
{
	static uint64_t ps[2];

	if (!ps[builtins])
		ps[builtins] = py_calibrate(builtins ? install_own_hook :
					   install_frame_function);
	meter_api_call_cost(ps[builtins]);
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
	/* another PEP 523 user's function (a debugger's) runs inside ours */
	prev_eval = _PyInterpreterState_GetEvalFrameFunc(interp);
	calibrate_once(with_builtins);
	if (with_builtins) {
		if (start_hooks())
			return NULL;
		Py_RETURN_TRUE;
	}
	if (py_keep_all_unspecialized())
		return NULL;
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

/*
 * os._exit's stand-in: libmeter's _exit, which writes the profile (or
 * sends the counts) first.  The interpreter's own call of _exit reaches
 * libc's: libmeter, loaded with this module, comes after libc in the
 * order symbols are looked up in.
 */
static void (*libmeter_exit)(int);

static PyObject *exit_now(PyObject *mod, PyObject *arg)
{
	int code = PyLong_AsLong(arg);

	(void)mod;
	if (code == -1 && PyErr_Occurred())
		return NULL;
	if (libmeter_exit)
		libmeter_exit(code);
	_exit(code);
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
	{ "_exit", exit_now, METH_O,
	  "_exit(n): os._exit, the profile written first" },
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
	void *lib;

	if (!m)
		return NULL;
	thread_start = PyObject_GetAttrString(m, "_thread_first_event");
	lib = dlopen("libmeter.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (lib)
		libmeter_exit = (void (*)(int))dlsym(lib, "_exit");
	if (py_records_init() || !thread_start) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
