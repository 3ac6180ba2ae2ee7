// SPDX-License-Identifier: MIT
/*
 * The source of fuzz_patch_elf's two seeds (fuzz/corpus/patch_elf/),
 * built once by hand into small static executables, one with a symbol
 * table and one stripped with only .eh_frame (Documentation/fuzzing.md):
 *   gcc -O2 -nostdlib -static -fno-asynchronous-unwind-tables \
 *       -Wl,--build-id=none -Wl,-N -o sym patch_elf_seed.c
 *   gcc -O2 -nostdlib -static -Wl,--build-id=none -Wl,-N -o eh \
 *       patch_elf_seed.c && strip eh
 */
static volatile long sink;
__attribute__((noinline)) static long leaf(long x) { return x * 3 + sink; }
__attribute__((noinline)) long mid(long n) { long s = 0; for (long i = 0; i < n; i++) s += leaf(i); return s; }
void _start(void) { sink = mid(10); for (;;) ; }
