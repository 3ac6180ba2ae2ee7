/* SPDX-License-Identifier: MIT */
/*
 * The Python integration's parts (python/): the records of Python
 * functions and builtins (records.c), the calibration of a call
 * (calibrate.c), and the hooks and the module (_meter.c).
 */
#ifndef METER_PY_H
#define METER_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <stdbool.h>
#include <stdint.h>

#include "meter.h"

/*
 * What a code object's extra slot holds: its record's address, tagged
 * EXTRA_GETITEM for a __getitem__ (records are 32-byte aligned), or
 * EXTRA_SKIP for the calibration's own code, which gets no record.
 */
#define EXTRA_GETITEM	((uintptr_t)1)
#define EXTRA_SKIP	((uintptr_t)2)

extern Py_ssize_t py_extra_index;

int py_records_init(void);
/* the code object's extra (above), made on first sight; 0: none */
uintptr_t py_code_extra(PyObject *globals, PyCodeObject *co);
static inline meter_record_t *py_extra_record(uintptr_t x)
{
	return x == EXTRA_SKIP ? NULL :
		(meter_record_t *)(x & ~EXTRA_GETITEM);
}
/* a builtin's record (made when make), NULL for other callables */
meter_record_t *py_c_record(PyObject *fn, bool make);

/* keeping __getitem__ functions out of CPython 3.11's inlined subscript */
void py_keep_unspecialized(PyFunctionObject *f);
void py_keep_namespace_unspecialized(PyObject *ns);
int py_keep_all_unspecialized(void);

/*
 * What the hook of the mode adds to a Python call, in picoseconds:
 * install(true) puts it in place, install(false) takes it out.
 */
uint64_t py_calibrate(void (*install)(bool on));

#endif
