// SPDX-License-Identifier: MIT
/*
 * What a Python call costs under meter, measured as libmeter measures a
 * C call (METERING's stub): an empty Python function called in a loop,
 * with the hook of the mode in place and without, its code marked so
 * that the hook finds no record for it (EXTRA_SKIP).  The difference a
 * call is the hook's own work and what it costs the interpreter (with
 * the frame function, CPython 3.11 no longer runs a Python call inside
 * its caller's evaluation); meter_enter() and meter_leave() are
 * libmeter's calibrated call, which libmeter adds (meter_api_call_cost).
 * The best of CALIB_ROUNDS rounds each way, on the thread's CPU clock:
 * about 2 ms at start().
 */
#include <time.h>

#include "cputime.h"
#include "meter_py.h"

#define CALIB_CALLS	5000
#define CALIB_ROUNDS	3

static const char stub_src[] =
	"def stub():\n"
	"    pass\n"
	"def loop(n):\n"
	"    for _ in range(n):\n"
	"        stub()\n";

/* The fastest of CALIB_ROUNDS runs of loop(CALIB_CALLS); 0 on error. */
static uint64_t best_loop(PyObject *loop)
{
	uint64_t best = 0, t0, t;
	PyObject *r;
	int i;

	for (i = 0; i <= CALIB_ROUNDS; i++) {
		t0 = meter_thread_cpu_ns();
		r = PyObject_CallFunction(loop, "i", CALIB_CALLS);
		t = meter_thread_cpu_ns() - t0;
		if (!r) {
			PyErr_Clear();
			return 0;
		}
		Py_DECREF(r);
		if (i && (!best || t < best))	/* the first warms up */
			best = t;
	}
	return best;
}

/* The stub's two functions, their code marked to get no record. */
static PyObject *stub_loop(PyObject *ns)
{
	PyObject *r = PyRun_String(stub_src, Py_file_input, ns, ns);
	const char *names[] = { "stub", "loop" };
	PyObject *f;
	size_t i;

	if (!r)
		return NULL;
	Py_DECREF(r);
	for (i = 0; i < 2; i++) {
		f = PyDict_GetItemString(ns, names[i]);
		if (!f || !PyFunction_Check(f))
			return NULL;
		_PyCode_SetExtra(PyFunction_GET_CODE(f), py_extra_index,
				 (void *)EXTRA_SKIP);
	}
	return PyDict_GetItemString(ns, "loop");
}

uint64_t py_calibrate(void (*install)(bool on))
{
	PyObject *ns = PyDict_New(), *loop;
	uint64_t plain = 0, hooked = 0;

	if (!ns)
		goto out;
	if (PyDict_SetItemString(ns, "__builtins__", PyEval_GetBuiltins()))
		goto out;
	loop = stub_loop(ns);
	if (!loop)
		goto out;
	plain = best_loop(loop);
	install(true);
	hooked = best_loop(loop);
	install(false);
out:
	PyErr_Clear();
	Py_XDECREF(ns);
	if (!plain || !hooked || hooked <= plain)
		return 1;	/* below resolution; 0 would mean unknown */
	return (hooked - plain) * 1000 / CALIB_CALLS;
}
