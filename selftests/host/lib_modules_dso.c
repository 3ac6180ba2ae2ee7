// SPDX-License-Identifier: MIT
/*
 * A shared library with manual instrumentation, for the modules test:
 * linked into the program (MODNAME=linked) and opened with dlopen
 * (MODNAME=opened).  Each has its own meter_records section.
 */
#include "meter.h"

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static volatile int sink;

int CAT(MODNAME, _func)(int x)
{
	METER_FUNCTION();
	sink += x;
	return x;
}
