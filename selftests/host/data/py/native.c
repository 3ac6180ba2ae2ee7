// SPDX-License-Identifier: MIT
/*
 * meter_native: a C extension built with meter's GCC plugin, for the mixed
 * Python and native stacks of test_py_counts and test_py_kernel.  Python
 * calls call_back(f, n), which calls f n times through run_callback;
 * native_spin(n) burns CPU in a native function of its own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static __attribute__((noinline)) PyObject *run_callback(PyObject *f)
{
	return PyObject_CallNoArgs(f);
}

static PyObject *call_back(PyObject *self, PyObject *args)
{
	PyObject *f, *r;
	int n, i;

	(void)self;
	if (!PyArg_ParseTuple(args, "Oi", &f, &n))
		return NULL;
	for (i = 0; i < n; i++) {
		r = run_callback(f);
		if (!r)
			return NULL;
		Py_DECREF(r);
	}
	Py_RETURN_NONE;
}

static __attribute__((noinline)) unsigned long spin_loop(long n)
{
	volatile unsigned long s = 0;
	long i;

	for (i = 0; i < n; i++)
		s += (unsigned long)i;
	return s;
}

static PyObject *native_spin(PyObject *self, PyObject *args)
{
	long n;

	(void)self;
	if (!PyArg_ParseTuple(args, "l", &n))
		return NULL;
	return PyLong_FromUnsignedLong(spin_loop(n));
}

struct c_thread_job {
	PyObject *f;
	int n, failed;
};

static void *c_thread_main(void *arg)
{
	struct c_thread_job *job = arg;
	PyGILState_STATE st = PyGILState_Ensure();
	PyObject *r;
	int i;

	for (i = 0; i < job->n && !job->failed; i++) {
		r = PyObject_CallNoArgs(job->f);
		if (!r) {
			PyErr_Clear();
			job->failed = 1;
		}
		Py_XDECREF(r);
	}
	PyGILState_Release(st);
	return NULL;
}

static PyObject *in_c_thread(PyObject *self, PyObject *args)
{
	struct c_thread_job job = { .n = 0 };
	pthread_t th;

	(void)self;
	if (!PyArg_ParseTuple(args, "Oi", &job.f, &job.n))
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	if (pthread_create(&th, NULL, c_thread_main, &job) == 0)
		pthread_join(th, NULL);
	else
		job.failed = 1;
	Py_END_ALLOW_THREADS
	if (job.failed) {
		PyErr_SetString(PyExc_RuntimeError, "the C thread failed");
		return NULL;
	}
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "call_back", call_back, METH_VARARGS, "call f n times" },
	{ "native_spin", native_spin, METH_VARARGS, "a native loop of n" },
	{ "in_c_thread", in_c_thread, METH_VARARGS,
	  "call f n times from a thread made in C" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, .m_name = "meter_native", .m_size = -1,
	.m_methods = methods,
};

PyMODINIT_FUNC PyInit_meter_native(void)
{
	return PyModule_Create(&module);
}
