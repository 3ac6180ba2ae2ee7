// SPDX-License-Identifier: MIT
/*
 * Hostile pages.  At registration: a kernel address, a page that would
 * cross into the next one, a PROT_NONE page and an address mapped only in
 * another process are refused with a message.  After registration: ids
 * and depths that are garbage are counted invalid; munmap, MAP_FIXED over
 * the page, MADV_DONTNEED and mremap of the page never let the kernel
 * touch freed
 * memory: the pin keeps the page, the thread keeps running, its profile
 * is read back, the charge goes when the registration ends (vm-run fails
 * the run on any kernel WARN, BUG or Oops).
 */
#include <sys/wait.h>

#include "kmod_util.h"

static struct meter_nl *nl;

static int try_reg(void *addr, char *msg, size_t len)
{
	struct meter_nl_reg reg = { .page_addr = (uintptr_t)addr };
	int ret = meter_nl_register(nl, &reg, NULL, NULL, msg, len);

	if (!ret)
		meter_nl_unregister(nl, NULL, 0);
	return ret;
}

/* A session of a fresh child process; the parent reads it after exit. */
typedef void (*work_fn)(struct meter_page *pg);

static struct meter_profile *run_child(work_fn fn, long *lck_after)
{
	int fds[2], st;
	long lck[2] = { -1, -1 };
	uint64_t cookie = 0;
	pid_t pid;

	if (pipe(fds))
		ku_bail("pipe", -errno, NULL);
	pid = fork();
	if (!pid) {
		struct meter_nl *cnl;
		struct meter_page *pg;

		alarm(60);
		cnl = ku_open();
		pg = ku_page();

		cookie = ku_register(cnl, pg, 100000);
		ku_funcs(cnl, 3);
		fn(pg);
		meter_nl_unregister(cnl, NULL, 0);
		/* the release runs on the module's workqueue */
		for (int k = 0; k < 100 && (lck[0] = ku_vmlck_kb(0)) != 0; k++)
			usleep(100000);
		if (write(fds[1], &cookie, sizeof(cookie)) != sizeof(cookie) ||
		    write(fds[1], lck, sizeof(lck)) != sizeof(lck))
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &cookie, sizeof(cookie)) != sizeof(cookie) ||
	    read(fds[0], lck, sizeof(lck)) != sizeof(lck))
		cookie = 0;
	close(fds[0]);
	waitpid(pid, &st, 0);
	*lck_after = lck[0];
	if (!cookie || !WIFEXITED(st) || WEXITSTATUS(st))
		return NULL;
	return ku_profile(nl, cookie, 0);
}

static void garbage(struct meter_page *pg)
{
	pg->current_id = 0xffffffffu;		/* id out of range */
	ku_burn(50000000);
	pg->current_id = 1;
	pg->depth = 0xffffffffu;		/* depth out of range */
	pg->stack[METER_STACK_CAP - 1] = 0x7fffffffu;	/* garbage frame */
	ku_burn(50000000);
	pg->depth = 0;
	pg->magic = 0;				/* bad magic */
	ku_burn(50000000);
	pg->magic = METER_PAGE_MAGIC;
}

static void unmapped(struct meter_page *pg)
{
	ku_enter(pg, 1);
	munmap(pg, METER_PAGE_SIZE);	/* the kernel keeps its pinned page */
	ku_burn(100000000);
}

static void mapped_over(struct meter_page *pg)
{
	struct meter_page *np;

	ku_enter(pg, 1);
	np = mmap(pg, METER_PAGE_SIZE, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (np != pg)
		_exit(5);
	/* The new page says "2"; the kernel still reads the pinned one. */
	np->magic = METER_PAGE_MAGIC;
	np->version = METER_PAGE_VERSION;
	np->depth = 1;
	np->stack[0] = 2;
	np->current_id = 2;
	ku_burn(100000000);
}

/*
 * MADV_DONTNEED drops the page from the mapping; the next write gets a
 * fresh zero page, which the kernel never sees: it goes on reading the
 * pinned page as it was at the zap (design.md, "A stale page").
 */
static void zapped(struct meter_page *pg)
{
	ku_enter(pg, 1);
	if (madvise(pg, METER_PAGE_SIZE, MADV_DONTNEED))
		_exit(5);
	pg->magic = METER_PAGE_MAGIC;
	pg->version = METER_PAGE_VERSION;
	pg->depth = 1;
	pg->stack[0] = 2;
	pg->current_id = 2;
	ku_burn(100000000);
}

static void remapped(struct meter_page *pg)
{
	struct meter_page *np;

	ku_enter(pg, 1);
	np = mremap(pg, METER_PAGE_SIZE, METER_PAGE_SIZE, MREMAP_MAYMOVE);
	if (np == MAP_FAILED)
		_exit(5);
	if (np == pg) {	/* force a move */
		void *hole = mmap(NULL, 2 * METER_PAGE_SIZE, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		np = mremap(pg, METER_PAGE_SIZE, METER_PAGE_SIZE,
			    MREMAP_MAYMOVE | MREMAP_FIXED, hole);
		if (np == MAP_FAILED)
			_exit(5);
	}
	ku_burn(50000000);
	np->stack[0] = 3;	/* the thread carries on at the new address */
	np->current_id = 3;
	ku_burn(50000000);
}

int main(void)
{
	char msg[256] = "";
	struct meter_profile *p;
	long lck;
	int ret;

	ku_plan(12);
	nl = ku_open();

	ret = try_reg((void *)0xffffffff81000000ull, msg, sizeof(msg));
	ku_ok(ret == -EINVAL && strstr(msg, "user address"),
	      "a kernel address is refused: %s", msg);
	{
		char *pg = (char *)ku_page();

		ret = try_reg(pg + METER_PAGE_SIZE / 2, msg, sizeof(msg));
		ku_ok(ret == -EINVAL && msg[0],
		      "a block crossing into the next page is refused: %s",
		      msg);
		mprotect(pg, METER_PAGE_SIZE, PROT_NONE);
		ret = try_reg(pg, msg, sizeof(msg));
		ku_ok(ret == -EACCES && strstr(msg, "writable"),
		      "a PROT_NONE page is refused: %s", msg);
	}
	{
		/* A page another process maps; here the address is free. */
		int fds[2], st;
		void *addr = NULL;
		pid_t pid;

		if (pipe(fds))
			return 1;
		pid = fork();
		if (!pid) {
			struct meter_page *pg = mmap(NULL, METER_PAGE_SIZE * 16,
						     PROT_READ | PROT_WRITE,
						     MAP_PRIVATE | MAP_ANONYMOUS,
						     -1, 0);

			pg = (struct meter_page *)((char *)pg +
						   8 * METER_PAGE_SIZE);
			pg->magic = METER_PAGE_MAGIC;
			pg->version = METER_PAGE_VERSION;
			if (write(fds[1], &pg, sizeof(pg)) != sizeof(pg))
				_exit(3);
			sleep(2);
			_exit(0);
		}
		if (read(fds[0], &addr, sizeof(addr)) != sizeof(addr))
			return 1;
		munmap((char *)addr - 8 * METER_PAGE_SIZE,
		       16 * METER_PAGE_SIZE);	/* make sure it is free here */
		ret = try_reg(addr, msg, sizeof(msg));
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		ku_ok(ret == -EFAULT && msg[0],
		      "an address mapped only in another process is refused: %s",
		      msg);
	}

	p = run_child(garbage, &lck);
	ku_ok(p && p->invalid > 0 && p->invalid + p->no_current +
	      ku_self(p, 1) + ku_self(p, 2) + ku_self(p, 3) == p->samples &&
	      p->invalid * 10 >= p->samples * 6,
	      "garbage ids, depths and magic in the page are counted invalid (%llu of %llu)",
	      p ? (unsigned long long)p->invalid : 0ULL,
	      p ? (unsigned long long)p->samples : 0ULL);
	meter_profile_free(p);

	p = run_child(unmapped, &lck);
	ku_ok(p && p->samples > 100 && ku_self(p, 1) + p->no_current == p->samples,
	      "after munmap the thread runs on and is sampled from the pinned page (%llu of %llu)",
	      p ? (unsigned long long)ku_self(p, 1) : 0ULL,
	      p ? (unsigned long long)p->samples : 0ULL);
	ku_ok(lck == 0, "the munmapped page's charge goes with its registration (VmLck %ld kB)",
	      lck);
	meter_profile_free(p);

	p = run_child(mapped_over, &lck);
	ku_ok(p && p->samples > 50 && ku_self(p, 2) == 0 &&
	      ku_self(p, 1) + p->no_current == p->samples,
	      "MAP_FIXED over the page: the kernel reads only the pinned page (f1 %llu, f2 %llu)",
	      p ? (unsigned long long)ku_self(p, 1) : 0ULL,
	      p ? (unsigned long long)ku_self(p, 2) : 0ULL);
	ku_ok(lck == 0, "the replaced page's charge goes with its registration (VmLck %ld kB)",
	      lck);
	meter_profile_free(p);

	p = run_child(zapped, &lck);
	ku_ok(p && p->samples > 50 && ku_self(p, 2) == 0 && p->invalid == 0 &&
	      ku_self(p, 1) + p->no_current == p->samples,
	      "MADV_DONTNEED on the page: the kernel reads the pinned page as it was, every sample to f1 (f1 %llu, f2 %llu, invalid %llu)",
	      p ? (unsigned long long)ku_self(p, 1) : 0ULL,
	      p ? (unsigned long long)ku_self(p, 2) : 0ULL,
	      p ? (unsigned long long)p->invalid : 0ULL);
	meter_profile_free(p);

	p = run_child(remapped, &lck);
	ku_ok(p && p->samples > 50 && p->invalid == 0,
	      "mremap of the page: the thread runs on and its profile reads back (f1 %llu, f3 %llu of %llu)",
	      p ? (unsigned long long)ku_self(p, 1) : 0ULL,
	      p ? (unsigned long long)ku_self(p, 3) : 0ULL,
	      p ? (unsigned long long)p->samples : 0ULL);
	ku_ok(lck == 0, "the moved page's charge goes with its registration (VmLck %ld kB)",
	      lck);
	meter_profile_free(p);

	meter_nl_close(nl);
	return ku_exit();
}
