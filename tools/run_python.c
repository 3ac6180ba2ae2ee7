// SPDX-License-Identifier: MIT
/*
 * A Python interpreter's command line, with meter's Python integration
 * (python/meter/_run.py) put before the program.  Python's own options
 * come first and stay there; the program starts at the first argument
 * that is not one of them (a script), or at -c or -m.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "run_python.h"

static bool is_interpreter(const char *prog)
{
	const char *b = strrchr(prog, '/'), *p;

	b = b ? b + 1 : prog;
	if (strncmp(b, "python", 6))
		return false;
	p = b + 6;
	if (!*p)
		return true;
	if (*p++ != '3')
		return false;
	if (!*p)
		return true;
	if (*p++ != '.' || !*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/*
 * The index of the program's first argument; 0 when the command line runs
 * none.  Options that take a value (-W, -X) take the rest of their
 * argument or the next one.
 */
static int program_start(char **argv)
{
	int i;
	const char *a;

	for (i = 1; argv[i]; i++) {
		a = argv[i];
		if (a[0] != '-' || !strcmp(a, "-"))
			return i;
		if (a[1] == '-')	/* --help, --version, --check-hash... */
			return 0;
		for (a++; *a; a++) {
			if (*a == 'c' || *a == 'm')
				return a == argv[i] + 1 ? i : 0;
			if (*a == 'W' || *a == 'X') {
				if (!a[1] && !argv[++i])
					return 0;
				break;
			}
		}
	}
	return 0;
}

/* build/tools/meter-run runs from the build tree: build/python holds meter */
static void python_path_from_build_tree(void)
{
	char build[PATH_MAX], dir[PATH_MAX + 32], *path;
	const char *old = getenv("PYTHONPATH");

	if (cli_build_tree("python/meter/_run.py", build, sizeof(build)))
		return;
	snprintf(dir, sizeof(dir), "%s/python", build);
	if (old && *old) {
		path = malloc(strlen(dir) + strlen(old) + 2);
		if (!path)
			return;
		sprintf(path, "%s:%s", dir, old);
		setenv("PYTHONPATH", path, 1);
		free(path);
	} else {
		setenv("PYTHONPATH", dir, 1);
	}
}

char **run_python_argv(char **argv)
{
	int start, n, i;
	char **v;

	if (!argv[0] || !is_interpreter(argv[0]))
		return NULL;
	start = program_start(argv);
	if (!start)
		return NULL;
	for (n = 0; argv[n]; n++)
		;
	v = malloc((size_t)(n + 3) * sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < start; i++)
		v[i] = argv[i];
	v[start] = "-m";
	v[start + 1] = "meter._run";
	for (i = start; i <= n; i++)
		v[i + 2] = argv[i];
	python_path_from_build_tree();
	return v;
}
