// SPDX-License-Identifier: GPL-2.0
/*
 * The session's executable file mappings: what a reader needs to turn the
 * ADDR nests' addresses into a file and an offset in it, after the
 * process is gone.  They are read from the caller's own mm in process
 * context, when a thread registers and when records are named (ADD_FUNCS:
 * new records mostly mean new code, a dlopen), under the session's
 * maps_lock (one reader at a time) and outside every lock a reader of the
 * profile takes; the session takes the new set under meter_mutex.  The
 * mm's lock is taken killably: a process that holds its own mmap lock
 * (a fault on a FUSE file) keeps only its own registration waiting.  A
 * first pass without paths tells whether anything changed since the set
 * the session holds, so that a thread registering in a process whose
 * mappings stand still costs a walk of its VMAs and no allocation.  The
 * paths are bounded (METER_MAP_PATH_MAX each, METER_MAPS_TEXT_MAX in
 * all): a longer one is left out, and its addresses are read as in no map.
 */
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/limits.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "meter_kmod.h"

static bool meter_map_wanted(const struct vm_area_struct *vma)
{
	return (vma->vm_flags & VM_EXEC) && vma->vm_file;
}

/* Caller holds mm's mmap lock: the wanted VMAs' count and a summary. */
static u32 meter_maps_sum(struct mm_struct *mm, u64 *sum)
{
	struct vm_area_struct *vma;
	struct vma_iterator vmi;
	u32 n = 0;

	vma_iter_init(&vmi, mm, 0);
	*sum = 0;
	for_each_vma(vmi, vma) {
		if (!meter_map_wanted(vma))
			continue;
		n++;
		*sum = hash_64(*sum ^ vma->vm_start ^
			       (vma->vm_end << 1) ^ vma->vm_pgoff ^
			       (unsigned long)vma->vm_file, 64);
	}
	return n;
}

/* Caller holds mm's mmap lock; m has room for n maps. */
static int meter_maps_fill(struct mm_struct *mm, struct meter_maps *m, u32 n,
			   char *buf)
{
	struct vm_area_struct *vma;
	struct vma_iterator vmi;
	size_t used = 0;

	vma_iter_init(&vmi, mm, 0);
	for_each_vma(vmi, vma) {
		struct meter_map *d;
		char *path, *text;
		size_t len;

		if (!meter_map_wanted(vma) || m->n == n)
			continue;
		path = d_path(&vma->vm_file->f_path, buf, PATH_MAX);
		if (IS_ERR(path))
			continue;
		len = strlen(path) + 1;
		if (len > METER_MAP_PATH_MAX || used + len > METER_MAPS_TEXT_MAX)
			continue;
		if (used + len > m->text_cap) {
			size_t cap = min_t(size_t, METER_MAPS_TEXT_MAX,
					   max(used + len, 2 * m->text_cap));

			text = krealloc(m->text, cap,
					GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
			if (!text)
				return -ENOMEM;
			m->text = text;
			m->text_cap = cap;
		}
		memcpy(m->text + used, path, len);
		d = &m->v[m->n++];
		d->start = vma->vm_start;
		d->end = vma->vm_end;
		d->pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
		d->path_off = used;
		used += len;
	}
	m->text_len = used;
	return 0;
}

/*
 * The current process's mappings into fresh, unless they sum to what
 * held has (1: unchanged).  0: fresh holds them; <0: error.
 */
static int meter_maps_read(const struct meter_maps *held,
			   struct meter_maps *fresh)
{
	struct mm_struct *mm = current->mm;
	char *buf;
	u64 sum;
	u32 n;
	int ret;

	memset(fresh, 0, sizeof(*fresh));
	if (!mm)
		return 1;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (mmap_read_lock_killable(mm)) {
		kfree(buf);
		return -EINTR;
	}
	n = min_t(u32, meter_maps_sum(mm, &sum), METER_MAPS_MAX);
	ret = 1;
	if (n == held->seen && sum == held->sum)
		goto out;
	ret = -ENOMEM;
	fresh->v = kvcalloc(max(n, 1U), sizeof(*fresh->v),
			    GFP_KERNEL_ACCOUNT);
	if (!fresh->v)
		goto out;
	fresh->sum = sum;
	fresh->seen = n;
	ret = meter_maps_fill(mm, fresh, n, buf);
out:
	mmap_read_unlock(mm);
	kfree(buf);
	if (ret < 0)
		meter_maps_free(fresh);
	return ret;
}

size_t meter_maps_bytes(const struct meter_maps *m)
{
	return (size_t)m->n * sizeof(*m->v) + m->text_cap;
}

void meter_maps_free(struct meter_maps *m)
{
	kvfree(m->v);
	kfree(m->text);
	memset(m, 0, sizeof(*m));
}

/*
 * The calling thread's session takes its process's mappings as they are
 * now.  Best effort: on failure, or past max_session_mb, the session
 * keeps the set it has (a reader then finds some addresses in no map).
 */
void meter_maps_update(void)
{
	size_t limit = (size_t)meter_max_session_mb << 20;
	struct meter_maps fresh, *held;
	struct meter_session *s;

	mutex_lock(&meter_mutex);
	s = current->mm ? meter_session_find_live(current) : NULL;
	if (s)
		meter_session_get(s);
	mutex_unlock(&meter_mutex);
	if (!s)
		return;
	/* only this process's threads replace the set: one at a time */
	mutex_lock(&s->maps_lock);
	held = &s->maps;
	if (meter_maps_read(held, &fresh))
		goto out;
	mutex_lock(&meter_mutex);
	if (s->bytes - meter_maps_bytes(held) + meter_maps_bytes(&fresh) <=
	    limit) {
		s->bytes += meter_maps_bytes(&fresh) - meter_maps_bytes(held);
		swap(*held, fresh);
	}
	mutex_unlock(&meter_mutex);
	meter_maps_free(&fresh);
out:
	mutex_unlock(&s->maps_lock);
	meter_session_put(s);
}

/* A snapshot's copy of m: caller holds meter_mutex. */
int meter_maps_copy(const struct meter_maps *m, struct meter_maps *out)
{
	memset(out, 0, sizeof(*out));
	out->v = kvmalloc_array(max(m->n, 1U), sizeof(*out->v),
				GFP_KERNEL_ACCOUNT);
	out->text = kmalloc(max_t(size_t, m->text_len, 1), GFP_KERNEL_ACCOUNT);
	if (!out->v || !out->text) {
		meter_maps_free(out);
		return -ENOMEM;
	}
	memcpy(out->v, m->v, m->n * sizeof(*m->v));
	memcpy(out->text, m->text, m->text_len);
	out->n = m->n;
	out->text_len = m->text_len;
	out->text_cap = max_t(size_t, m->text_len, 1);
	return 0;
}
