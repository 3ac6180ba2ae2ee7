/* SPDX-License-Identifier: MIT */
#ifndef RUN_PYTHON_H
#define RUN_PYTHON_H

/*
 * meter-run's way into a Python program (Documentation/python.md): when
 * PROG is a Python interpreter (python, python3, python3.N), its command
 * line with "-m meter._run" put before the program (SCRIPT, -m MODULE,
 * -c COMMAND or -), and PYTHONPATH led by the build tree's python/
 * directory when meter-run runs from the build tree.  NULL when PROG is
 * not an interpreter, or runs no program (--version, an interactive
 * session): the command line is used as it is.  Called in the child,
 * before the exec; the new vector is malloc'd.
 */
char **run_python_argv(char **argv);

#endif
