// SPDX-License-Identifier: MIT
/*
 * The records of the Python integration: one per Python function (code
 * objects with the same file, line and qualname share it), kept on the
 * code object through its extra slot, and one per builtin, by its
 * PyMethodDef as cProfile keys them.  Also what keeps __getitem__
 * functions where the frame function sees them.
 */
#include "meter_py.h"

Py_ssize_t py_extra_index = -1;
static PyObject *by_key;	/* (file, line, qualname) -> record address */
static PyObject *names_taken;	/* name -> the key that has it */
static PyObject *getitem_str;	/* "__getitem__", interned */

/* builtins: PyMethodDef address -> record, open addressing */
struct c_slot {
	const void *def;
	meter_record_t *rec;
};
static struct c_slot *c_tab;
static size_t c_cap, c_used;

int py_records_init(void)
{
	if (py_extra_index < 0)
		py_extra_index = _PyEval_RequestCodeExtraIndex(NULL);
	by_key = PyDict_New();
	names_taken = PyDict_New();
	getitem_str = PyUnicode_InternFromString("__getitem__");
	return py_extra_index < 0 || !by_key || !names_taken || !getitem_str ?
		-1 : 0;
}

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
static uint32_t next_wide_version = 0x80000000u;

void py_keep_unspecialized(PyFunctionObject *f)
{
	if (f && f->func_version < 0x80000000u)
		f->func_version = next_wide_version++;
}

/* After a class body ran: its namespace's __getitem__, if a function. */
void py_keep_namespace_unspecialized(PyObject *ns)
{
	PyObject *f = PyDict_GetItem(ns, getitem_str);

	if (f && PyFunction_Check(f))
		py_keep_unspecialized((PyFunctionObject *)f);
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
uintptr_t py_code_extra(PyObject *globals, PyCodeObject *co)
{
	PyObject *type, *value, *tb;
	uintptr_t x;
	void *got = NULL;

	if (_PyCode_GetExtra((PyObject *)co, py_extra_index, &got) == 0 && got)
		return (uintptr_t)got;
	/* a return by exception comes with the exception set: keep it */
	PyErr_Fetch(&type, &value, &tb);
	x = (uintptr_t)new_code_record(globals, co);
	if (x && is_getitem(co))
		x |= EXTRA_GETITEM;
	if (x)
		_PyCode_SetExtra((PyObject *)co, py_extra_index, (void *)x);
	PyErr_Clear();
	PyErr_Restore(type, value, tb);
	return x;
}

/* Every __getitem__ function that exists: gc.get_objects() holds them. */
int py_keep_all_unspecialized(void)
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
			py_keep_unspecialized((PyFunctionObject *)o);
	}
	Py_DECREF(all);
	return 0;
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

meter_record_t *py_c_record(PyObject *fn, bool make)
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
