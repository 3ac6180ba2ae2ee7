// SPDX-License-Identifier: MIT
/*
 * exec and _exit end a process's profile as exit does.  The call counts live in the
 * process's memory until meter_process_finish() sends them (kernel
 * backend) or writes the profile file (signal and off); an exec replaces
 * that memory without running the destructors, so these definitions of
 * libc's exec functions finish the profile first, then call libc's.  Each
 * is defined because glibc's own calls from one to another do not come
 * back through the dynamic linker.  posix_spawn and vfork children exec
 * through glibc internally and are not seen, which is right: they are
 * other processes.  If the exec fails, the process goes on unprofiled.
 *
 * _exit and _Exit skip the destructors too: a forked child that leaves
 * with them (the usual way, so that the parent's stdio buffers are not
 * flushed twice) would lose its calls and its profile.  A vfork child
 * shares its parent's memory and must touch nothing of libmeter's:
 * meter_process_finish() does nothing in a process that is not the one
 * libmeter set up (fork's child handler makes a forked child one; vfork
 * runs none).  A direct exit_group system call is not seen.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "meter_internal.h"

extern char **environ;

static void *libc_exec(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		errno = ENOSYS;
	return f;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]);

	meter_process_finish(true);
	real = (int (*)(const char *, char *const[], char *const[]))
		libc_exec("execve");
	if (!real)	/* no dynamic libc: the system call is all it does */
		return (int)syscall(SYS_execve, path, argv, envp);
	return real(path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]);

	meter_process_finish(true);
	real = (int (*)(const char *, char *const[], char *const[]))
		libc_exec("execvpe");
	return real ? real(file, argv, envp) : -1;
}

int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
	int (*real)(int, char *const[], char *const[]);

	meter_process_finish(true);
	real = (int (*)(int, char *const[], char *const[]))
		libc_exec("fexecve");
	return real ? real(fd, argv, envp) : -1;
}

/*
 * execl, execlp and execle: the list up to its NULL as an argv (and for
 * execle the environment after it), then the v form.
 */
static int exec_list(int (*v)(const char *, char *const[], char *const[]),
		     const char *path, const char *arg0, va_list *ap,
		     bool with_env)
{
	size_t n = 1, cap = 16;
	char **argv = malloc(cap * sizeof(*argv)), **envp = environ;
	char *a;
	int ret;

	if (!argv)
		return -1;
	argv[0] = (char *)arg0;
	do {
		a = va_arg(*ap, char *);
		if (n == cap) {
			char **more = realloc(argv, 2 * cap * sizeof(*argv));

			if (!more) {
				free(argv);
				return -1;
			}
			argv = more;
			cap *= 2;
		}
		argv[n++] = a;
	} while (a);
	if (with_env)
		envp = va_arg(*ap, char **);
	ret = v(path, argv, envp);
	free(argv);
	return ret;
}

int execl(const char *path, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(execve, path, arg0, &ap, false);
	va_end(ap);
	return ret;
}

int execlp(const char *file, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(execvpe, file, arg0, &ap, false);
	va_end(ap);
	return ret;
}

int execle(const char *path, const char *arg0, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg0);
	ret = exec_list(execve, path, arg0, &ap, true);
	va_end(ap);
	return ret;
}

static __attribute__((noreturn)) void leave(int status)
{
	meter_process_finish(false);
	for (;;)
		syscall(SYS_exit_group, status);
}

void _exit(int status)
{
	leave(status);
}

void _Exit(int status)
{
	leave(status);
}
