// SPDX-License-Identifier: GPL-2.0
/*
 * Live call counts.
 *
 * A registered thread counts its calls in its own memory (Appel's
 * counters: one u64 per function id, a plain increment on the call path)
 * at the address it gave at registration.  A snapshot reads them from the
 * thread's address space, so a running program's profile has exact call
 * counts without a signal, a flush or any cost on the call path.
 *
 * When the thread sends its counts with ADD_CALLS (naming its tid, ids in
 * ascending order over several messages), they are folded message by
 * message: the session holds ids up to the highest one sent, and those
 * are not read from the memory again.  Folding, reading and a reset's
 * rebase all hold the session's live_lock, so a call is never counted
 * twice and never goes missing between two snapshots.
 *
 * The reading is slow (a page lookup per page of counters per thread,
 * waiting on the target's mmap lock and faults), so it is done under
 * live_lock alone, never under meter_mutex, which every REGISTER takes:
 * one user's snapshots and resets keep only that session's own senders
 * waiting (test_harden_mutex).  The threads to read are collected under
 * meter_mutex first; their records cannot go meanwhile, as a release
 * folds under live_lock before anything of the record is freed.
 *
 * Only private anonymous memory is read, never a file mapping (FUSE),
 * whose fault could keep the reader waiting.  The target's mmap lock is
 * held for read while the VMA is checked and each page is looked up, and
 * every counter is read with one 64-bit load so that none is ever torn.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/version.h>

#include "meter_kmod.h"

static long meter_live_gup(struct mm_struct *mm, unsigned long addr,
			   struct page **page)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
	return get_user_pages_remote(mm, addr, 1, 0, page, NULL);
#else
	return get_user_pages_remote(mm, addr, 1, 0, page, NULL, NULL);
#endif
}

/* Copies n counters at addr; the mmap lock is held for read. */
static int meter_live_copy(struct mm_struct *mm, unsigned long addr,
			   u64 *out, size_t n)
{
	while (n) {
		size_t off = offset_in_page(addr);
		size_t k = min_t(size_t, n, (PAGE_SIZE - off) / sizeof(u64));
		struct vm_area_struct *vma = vma_lookup(mm, addr);
		const u64 *src;
		struct page *page;
		size_t i;

		if (!vma || !vma_is_anonymous(vma) ||
		    (vma->vm_flags & VM_SHARED))
			return -EFAULT;
		if (meter_live_gup(mm, addr, &page) != 1)
			return -EFAULT;
		src = kmap_local_page(page);
		for (i = 0; i < k; i++)
			out[i] = READ_ONCE(src[off / sizeof(u64) + i]);
		kunmap_local(src);
		put_page(page);
		addr += k * sizeof(u64);
		out += k;
		n -= k;
	}
	return 0;
}

/* Copies counters 0..max_id of t from its memory into out, as they are. */
static int meter_live_raw(struct meter_thread *t, u32 max_id, u64 *out)
{
	struct mm_struct *mm = t->mm;
	int ret;

	if (!t->counts_addr || !mm || !mmget_not_zero(mm))
		return -ESRCH;
	ret = mmap_read_lock_killable(mm);
	if (!ret) {
		ret = meter_live_copy(mm, t->counts_addr, out, max_id + 1);
		mmap_read_unlock(mm);
	}
	mmput(mm);
	return ret;
}

/* Reads the calls of t not yet sent, less its base, into out[0..max_id]. */
int meter_live_read(struct meter_thread *t, u32 max_id, u64 *out)
{
	u32 i;
	int ret = meter_live_raw(t, max_id, out);

	if (ret)
		return ret;
	for (i = 0; i <= max_id; i++)
		out[i] = i <= t->counts_folded ? 0 :
			 out[i] - min(out[i], meter_live_base(t, i));
	return 0;
}

/*
 * The session's thread with this tid whose counters are still live.
 * Caller holds meter_mutex (the list) and s->live_lock.
 */
struct meter_thread *meter_live_thread(struct meter_session *s, pid_t tid)
{
	struct meter_thread *t;

	list_for_each_entry(t, &s->threads, node)
		if (t->tid == tid && t->counts_addr)
			return t;
	return NULL;
}

u64 meter_live_base(const struct meter_thread *t, u32 id)
{
	return t->counts_base && id < t->counts_base_n ? t->counts_base[id] : 0;
}

/*
 * ADD_CALLS sent ids 1..upto of t (and all of them if last).  Caller
 * holds s->live_lock.
 */
void meter_live_fold(struct meter_thread *t, u32 upto, bool last)
{
	t->counts_folded = max(t->counts_folded, upto);
	if (!last)
		return;
	t->counts_addr = 0;
	if (t->counts_base)
		t->session->live_bytes -= (size_t)t->counts_base_n * sizeof(u64);
	kvfree(t->counts_base);
	t->counts_base = NULL;
	t->counts_base_n = 0;
}

void meter_live_set_free(struct meter_live_set *ls)
{
	u32 i;

	if (ls->base)
		for (i = 0; i < ls->n; i++)
			kvfree(ls->base[i]);
	kvfree(ls->base);
	kvfree(ls->t);
	memset(ls, 0, sizeof(*ls));
}

/*
 * The threads of s whose counters are live, and the highest id named.
 * Caller holds s->live_lock and meter_mutex; the set stays valid while
 * live_lock is held.
 */
int meter_live_collect(struct meter_session *s, struct meter_live_set *ls)
{
	struct meter_thread *t;
	u32 n = 0;

	memset(ls, 0, sizeof(*ls));
	ls->max_id = READ_ONCE(s->max_id);
	list_for_each_entry(t, &s->threads, node)
		n += !!t->counts_addr;
	if (!n)
		return 0;
	ls->t = kvmalloc_array(n, sizeof(*ls->t), GFP_KERNEL_ACCOUNT);
	if (!ls->t)
		return -ENOMEM;
	list_for_each_entry(t, &s->threads, node)
		if (t->counts_addr)
			ls->t[ls->n++] = t;
	return 0;
}

/*
 * A reset's new base for each thread of the set, before anything is
 * reset: -ENOMEM when there is no memory, or when the bases would take
 * the session past max_session_mb (what the session holds, with the
 * bases it has).  Caller holds s->live_lock only.
 */
int meter_live_bases_alloc(struct meter_session *s, struct meter_live_set *ls)
{
	size_t one = ((size_t)ls->max_id + 1) * sizeof(u64);
	size_t limit = (size_t)READ_ONCE(meter_max_session_mb) << 20;
	u32 i;

	if (!ls->n)
		return 0;
	if (READ_ONCE(s->bytes) + s->live_bytes + ls->n * one > limit)
		return -E2BIG;
	ls->base = kvcalloc(ls->n, sizeof(*ls->base), GFP_KERNEL_ACCOUNT);
	if (!ls->base)
		return -ENOMEM;
	for (i = 0; i < ls->n; i++) {
		ls->base[i] = kvmalloc(one, GFP_KERNEL_ACCOUNT);
		if (!ls->base[i])
			return -ENOMEM;
	}
	return 0;
}

/*
 * SESSION_RESET, after the session's calls were zeroed: what each thread
 * of the set has counted so far becomes its base.  A thread whose memory
 * cannot be read keeps its old base: its calls before the reset will
 * show.  Caller holds s->live_lock only.
 */
void meter_live_rebase(struct meter_session *s, struct meter_live_set *ls)
{
	u32 i, j, max_id = ls->max_id;

	for (i = 0; i < ls->n; i++) {
		struct meter_thread *t = ls->t[i];
		u64 *buf = ls->base[i];

		if (meter_live_raw(t, max_id, buf))
			continue;
		/* ids already sent are the session's: no base */
		for (j = 0; j <= min(t->counts_folded, max_id); j++)
			buf[j] = 0;
		if (t->counts_base)
			s->live_bytes -= (size_t)t->counts_base_n * sizeof(u64);
		kvfree(t->counts_base);
		t->counts_base = buf;
		t->counts_base_n = max_id + 1;
		s->live_bytes += (size_t)t->counts_base_n * sizeof(u64);
		ls->base[i] = NULL;
	}
}
