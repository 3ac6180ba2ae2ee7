// SPDX-License-Identifier: MIT
/*
 * The patch plan (patch_plan.h), with Capstone's x86-64 decoder: one pass
 * over every function's bytes for the targets of direct branches, then
 * each function's first instructions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capstone/capstone.h>

#include "patch_plan.h"

#define PATCH_JMP_LEN	5	/* jmp rel32 */

struct targets {
	uint64_t *v;
	size_t n, cap;
};

static int add_target(struct targets *t, uint64_t addr)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		uint64_t *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = addr;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A return, a trap or a system call: nothing runs after it in line. */
static bool ends_flow(const cs_insn *in)
{
	const cs_detail *d = in->detail;
	uint8_t i;

	for (i = 0; i < d->groups_count; i++)
		switch (d->groups[i]) {
		case CS_GRP_RET:
		case CS_GRP_INT:
		case CS_GRP_IRET:
			return true;
		}
	switch (in->id) {
	case X86_INS_SYSCALL:
	case X86_INS_SYSENTER:
	case X86_INS_INT3:
	case X86_INS_UD2:
	case X86_INS_HLT:
		return true;
	}
	return false;
}

/* A jump, a call, or an instruction after which the flow does not go on. */
static bool is_flow(const cs_insn *in)
{
	const cs_detail *d = in->detail;
	uint8_t i;

	for (i = 0; i < d->groups_count; i++)
		if (d->groups[i] == CS_GRP_JUMP || d->groups[i] == CS_GRP_CALL)
			return true;
	return ends_flow(in);
}

static bool direct_target(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;

	if (!is_flow(in) || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return false;
	*target = (uint64_t)x->operands[0].imm;
	return true;
}

/* Every direct branch target in the object's functions, sorted. */
static int collect_targets(csh cs, const struct patch_obj *obj,
			   struct targets *t)
{
	cs_insn *in = cs_malloc(cs);
	size_t i;
	int ret = 0;

	if (!in)
		return -ENOMEM;
	for (i = 0; i < obj->nfuncs && !ret; i++) {
		const struct patch_func *f = &obj->funcs[i];
		const uint8_t *code = patch_obj_bytes(obj, f->addr, f->size);
		size_t left = f->size;
		uint64_t addr = f->addr, target;

		if (!code)
			continue;
		while (left && !ret) {
			if (!cs_disasm_iter(cs, &code, &left, &addr, in)) {
				/* data in the text, or padding: step over */
				code++;
				left--;
				addr++;
				continue;
			}
			if (direct_target(in, &target))
				ret = add_target(t, target);
		}
	}
	cs_free(in, 1);
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_u64);
	return ret;
}

/* Whether some target lies in (from, to): the entry itself may be one. */
static bool lands_inside(const struct targets *t, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid] <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->v[lo] < to;
}

/*
 * Why a displaced instruction cannot run from the copy, or NULL.  Direct
 * jumps, conditional jumps and calls are re-encoded (patch_plan.h);
 * indirect ones go where they went (a RIP-relative operand re-encoded).
 */
static const char *displaced_refusal(const cs_insn *in)
{
	switch (in->id) {
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
	case X86_INS_JRCXZ:
	case X86_INS_JECXZ:
		return PATCH_REFUSED_JUMP;
	}
	return ends_flow(in) ? PATCH_REFUSED_RET : NULL;
}

static bool in_glue(const struct patch_obj *obj, uint64_t addr)
{
	size_t i;

	for (i = 0; i < obj->nglue; i++)
		if (addr >= obj->glue[i].addr &&
		    addr - obj->glue[i].addr < obj->glue[i].size)
			return true;
	return false;
}

/* The instructions the jump displaces, or why the entry is refused. */
static const char *plan_entry(csh cs, cs_insn *in, const struct patch_obj *obj,
			      struct patch_func *f)
{
	const uint8_t *code = patch_obj_bytes(obj, f->addr, f->size);
	size_t left = f->size;
	uint64_t addr = f->addr;
	const char *why;

	if (in_glue(obj, f->addr))
		return PATCH_REFUSED_GLUE;
	if (f->addr == obj->entry)
		return PATCH_REFUSED_ENTRY;
	if (f->size < PATCH_JMP_LEN)
		return PATCH_REFUSED_SMALL;
	if (!code)
		return PATCH_REFUSED_BYTES;
	f->patch_off = 0;
	f->patch_len = 0;
	while (f->patch_len < PATCH_JMP_LEN) {
		if (!cs_disasm_iter(cs, &code, &left, &addr, in))
			return PATCH_REFUSED_DECODE;
		if (in->id == X86_INS_ENDBR64 && !f->patch_off && !f->patch_len) {
			f->patch_off = in->size;
			continue;
		}
		why = displaced_refusal(in);
		if (why)
			return why;
		f->patch_len += in->size;
	}
	/* the jump after an endbr64 must fit; the copy may be all of it */
	if (f->size < f->patch_off + PATCH_JMP_LEN)
		return PATCH_REFUSED_SMALL;
	if (f->size < f->patch_off + f->patch_len)
		return PATCH_REFUSED_DECODE;
	return NULL;
}

int patch_plan(struct patch_obj *obj, struct patch_counts *counts,
	       char *err, size_t errlen)
{
	struct targets t = { 0 };
	cs_insn *in = NULL;
	size_t i;
	csh cs;
	int ret;

	memset(counts, 0, sizeof(*counts));
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone: cannot open the x86-64 decoder");
		return -EINVAL;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	ret = collect_targets(cs, obj, &t);
	in = ret ? NULL : cs_malloc(cs);
	if (!ret && !in)
		ret = -ENOMEM;
	for (i = 0; !ret && i < obj->nfuncs; i++) {
		struct patch_func *f = &obj->funcs[i];
		uint64_t start;

		f->refused = plan_entry(cs, in, obj, f);
		start = f->addr + f->patch_off;
		if (!f->refused &&
		    lands_inside(&t, start, start + PATCH_JMP_LEN))
			f->refused = PATCH_REFUSED_INTO;
		if (f->refused)
			counts->refused++;
		else
			counts->patchable++;
	}
	if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	if (in)
		cs_free(in, 1);
	free(t.v);
	cs_close(&cs);
	return ret;
}
