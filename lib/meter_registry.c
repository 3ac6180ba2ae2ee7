// SPDX-License-Identifier: MIT
/*
 * The record registry: one id per profiled function, handed out in order
 * (a METER_FUNCTION() or plugin record when its module's records are
 * first seen, a -finstrument-functions address, an API record), with its
 * whole name; the names go to meter.ko as they come (nlreg.c).
 */
#include <stdlib.h>
#include <string.h>

#include "meter_internal.h"

bool meter_registry_ready(void)
{
	if (!meter_g.recs)
		meter_g.recs = meter_map((size_t)(METER_FUNCS_MAX + 1) *
					 sizeof(struct meter_rec_info));
	return meter_g.recs != NULL;
}


/* Hands out the next id; the lock is held.  0 when none is left. */
uint32_t meter_record_new_locked(uint32_t kind, const char *name,
				 uintptr_t addr)
{
	uint32_t id = atomic_load_explicit(&meter_g.next_id,
					   memory_order_relaxed);

	if (id >= METER_CALIB_ID || !meter_registry_ready())
		return 0;
	meter_g.recs[id].kind = kind;
	meter_g.recs[id].addr = addr;
	if (name) {
		/* whole: the kernel's copy is cut where it is sent (nlreg.c) */
		meter_g.recs[id].name = strdup(name);
		if (!meter_g.recs[id].name)
			return 0;
	}
	atomic_store_explicit(&meter_g.next_id, id + 1, memory_order_release);
	return id;
}

/* An API record with its source; file (malloc'd) is the record's. */
uint32_t meter_record_new_at(const char *name, char *file, uint32_t line)
{
	uint32_t id;

	pthread_mutex_lock(&meter_g.lock);
	id = meter_record_new_locked(METER_REC_API, name, 0);
	if (id) {
		meter_g.recs[id].file = file;
		meter_g.recs[id].line = line;
	}
	if (id && meter_tstate == METER_T_LIVE)
		meter_send_names_locked();
	pthread_mutex_unlock(&meter_g.lock);
	return id;
}

uint32_t meter_record_new(uint32_t kind, const char *name, uintptr_t addr)
{
	uint32_t id;

	pthread_mutex_lock(&meter_g.lock);
	id = meter_record_new_locked(kind, name, addr);
	if (id && meter_tstate == METER_T_LIVE)
		meter_send_names_locked();
	pthread_mutex_unlock(&meter_g.lock);
	return id;
}

void meter_api_call_cost(uint64_t ps)
{
	__atomic_store_n(&meter_g.api_extra_ps, ps, __ATOMIC_RELAXED);
}

void meter_api_call_cost_whole(uint64_t ps)
{
	__atomic_store_n(&meter_g.api_whole, true, __ATOMIC_RELAXED);
	meter_api_call_cost(ps);
}

uint64_t meter_rec_cost_ps(uint32_t id)
{
	uint64_t extra = __atomic_load_n(&meter_g.api_extra_ps,
					 __ATOMIC_RELAXED);

	/* the kernel's profile has no flat flag: a flat function's own cost */
	if (meter_g.recs[id].flat && meter_g.flat_cost_ps)
		return meter_g.flat_cost_ps;
	if (meter_g.recs[id].kind != METER_REC_API || !extra)
		return 0;
	if (__atomic_load_n(&meter_g.api_whole, __ATOMIC_RELAXED))
		return extra;
	return extra + meter_g.call_cost_ps;
}

const char *meter_rec_name(uint32_t id)
{
	struct meter_rec_info *r = &meter_g.recs[id];

	if (!r->name && r->kind == METER_REC_AUTO)
		r->name = meter_symbol_name(r->addr);
	return r->name ? r->name : "?";
}

static struct meter_record **modules;	/* section starts seen */
static size_t nmodules;

/* A METER_FUNCTION() or GCC plugin record's id; the lock is held. */
static uint32_t manual_record_new_locked(const struct meter_record *r)
{
	uint32_t id = meter_record_new_locked(METER_REC_MANUAL, r->name, 0);

	if (id)
		meter_g.recs[id].flat = METER__REC_FLAT_CALLS(r->flags);
	return id;
}

void meter__module_records(struct meter_record *start,
			   struct meter_record *stop)
{
	struct meter_record **m;
	struct meter_record *r;
	size_t i;

	pthread_mutex_lock(&meter_g.lock);
	for (i = 0; i < nmodules; i++)
		if (modules[i] == start)
			goto out;
	m = realloc(modules, (nmodules + 1) * sizeof(*m));
	if (!m)
		goto out;
	modules = m;
	modules[nmodules++] = start;
	for (r = start; r < stop; r++) {
		if (r->magic != METER__RECORD_MAGIC ||
		    __atomic_load_n(&r->id, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&r->id, manual_record_new_locked(r),
				 __ATOMIC_RELEASE);
	}
	/* a module loaded later (dlopen) names its functions at once */
	if (meter_tstate == METER_T_LIVE)
		meter_send_names_locked();
out:
	pthread_mutex_unlock(&meter_g.lock);
}

uint32_t meter_manual_record_id(struct meter_record *rec)
{
	uint32_t id;

	pthread_mutex_lock(&meter_g.lock);
	id = __atomic_load_n(&rec->id, __ATOMIC_ACQUIRE);
	if (!id && rec->magic == METER__RECORD_MAGIC) {
		id = manual_record_new_locked(rec);
		__atomic_store_n(&rec->id, id, __ATOMIC_RELEASE);
		if (id && meter_tstate == METER_T_LIVE)
			meter_send_names_locked();
	}
	pthread_mutex_unlock(&meter_g.lock);
	return id;
}

meter_record_t *meter_record_register_at(const char *name, const char *file,
					 uint32_t line)
{
	meter_record_t *rec = aligned_alloc(_Alignof(meter_record_t),
					    sizeof(*rec));
	char *f = file ? strdup(file) : NULL;

	if (!rec || (file && !f))
		goto fail;
	memset(rec, 0, sizeof(*rec));
	rec->magic = METER__RECORD_MAGIC;
	rec->id = meter_record_new_at(name ? name : "?", f, line);
	if (!rec->id)
		goto fail;
	rec->name = meter_g.recs[rec->id].name;
	rec->file = f;
	rec->line = line;
	return rec;
fail:
	free(f);
	free(rec);
	return NULL;
}

meter_record_t *meter_record_register(const char *name)
{
	return meter_record_register_at(name, NULL, 0);
}
