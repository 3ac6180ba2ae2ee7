// SPDX-License-Identifier: MIT
/*
 * The displaced instructions, re-encoded to run from a copy (patch_plan.h
 * says which): a direct jump or conditional jump with a 32-bit
 * displacement to the same target, a direct call as a push of the
 * original return address and a jump (the callee returns into the
 * function itself), a RIP-relative operand with its displacement moved,
 * anything else as it was.  Then a jump back to the first instruction
 * left in place.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <capstone/capstone.h>

#include "patch_reloc.h"

static int put_rel32(uint8_t *p, uint64_t from_end, uint64_t target)
{
	int64_t d = (int64_t)(target - from_end);

	if (d != (int32_t)d)
		return -ERANGE;
	memcpy(p, &(int32_t){ (int32_t)d }, 4);
	return 0;
}

/* A jump's condition code, from its opcode; -1 if it has none. */
static int jcc_cond(const cs_x86 *x)
{
	if (x->opcode[0] >= 0x70 && x->opcode[0] <= 0x7f)
		return x->opcode[0] - 0x70;
	if (x->opcode[0] == 0x0f && x->opcode[1] >= 0x80 &&
	    x->opcode[1] <= 0x8f)
		return x->opcode[1] - 0x80;
	return -1;
}

/* lea -8(%rsp),%rsp; movl lo,(%rsp); movl hi,4(%rsp): a push of ret. */
static void push_ret(uint8_t *out, uint64_t ret)
{
	static const uint8_t lea[] = { 0x48, 0x8d, 0x64, 0x24, 0xf8 };
	static const uint8_t lo[] = { 0xc7, 0x04, 0x24 };
	static const uint8_t hi[] = { 0xc7, 0x44, 0x24, 0x04 };
	uint32_t w;

	memcpy(out, lea, sizeof(lea));
	memcpy(out + 5, lo, sizeof(lo));
	w = (uint32_t)ret;
	memcpy(out + 8, &w, 4);
	memcpy(out + 12, hi, sizeof(hi));
	w = (uint32_t)(ret >> 32);
	memcpy(out + 16, &w, 4);
}

/* A copy of a RIP-relative instruction, its displacement moved. */
static int copy_rip(const cs_insn *in, int64_t bias, uint8_t *out,
		    uint64_t at)
{
	const cs_x86 *x = &in->detail->x86;
	uint8_t i;

	memcpy(out, in->bytes, in->size);
	for (i = 0; i < x->op_count; i++) {
		uint64_t abs;

		if (x->operands[i].type != X86_OP_MEM ||
		    x->operands[i].mem.base != X86_REG_RIP)
			continue;
		if (!x->encoding.disp_offset)
			return -EINVAL;
		abs = in->address + in->size +
		      (uint64_t)x->operands[i].mem.disp + (uint64_t)bias;
		if (put_rel32(out + x->encoding.disp_offset, at + in->size,
			      abs))
			return -ERANGE;
	}
	return in->size;
}

/* One instruction at out (runtime address at); its length, or -errno. */
static int reloc_one(const cs_insn *in, int64_t bias, uint8_t *out,
		     uint64_t at)
{
	const cs_x86 *x = &in->detail->x86;
	bool imm = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
	uint64_t target = imm ? (uint64_t)x->operands[0].imm + (uint64_t)bias
			      : 0;
	int cc;

	if (imm && in->id == X86_INS_JMP) {
		out[0] = 0xe9;
		return put_rel32(out + 1, at + 5, target) ? -ERANGE : 5;
	}
	if (imm && in->id == X86_INS_CALL) {
		push_ret(out, in->address + in->size + (uint64_t)bias);
		out[20] = 0xe9;
		return put_rel32(out + 21, at + 25, target) ? -ERANGE : 25;
	}
	cc = imm ? jcc_cond(x) : -1;
	if (cc >= 0) {
		out[0] = 0x0f;
		out[1] = (uint8_t)(0x80 + cc);
		return put_rel32(out + 2, at + 6, target) ? -ERANGE : 6;
	}
	return copy_rip(in, bias, out, at);
}

int patch_reloc(const struct patch_func *f, int64_t bias, uint8_t *out,
		size_t room, uint64_t out_addr)
{
	uint64_t addr = f->addr + f->patch_off;
	const uint8_t *code = (const uint8_t *)(uintptr_t)(addr + bias);
	size_t left = f->patch_len, used = 0;
	cs_insn *in;
	csh cs;
	int n, ret = 0;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return -EINVAL;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(cs);
	while (in && left && !ret) {
		if (room - used < 32 ||
		    !cs_disasm_iter(cs, &code, &left, &addr, in)) {
			ret = -EINVAL;
			break;
		}
		n = reloc_one(in, bias, out + used, out_addr + used);
		if (n < 0)
			ret = n;
		else
			used += (size_t)n;
	}
	if (!in)
		ret = -ENOMEM;
	if (!ret && room - used >= 5) {
		out[used] = 0xe9;
		ret = put_rel32(out + used + 1, out_addr + used + 5,
				f->addr + f->patch_off + f->patch_len +
				(uint64_t)bias);
		used += 5;
	} else if (!ret) {
		ret = -ENOSPC;
	}
	if (in)
		cs_free(in, 1);
	cs_close(&cs);
	return ret ? ret : (int)used;
}
