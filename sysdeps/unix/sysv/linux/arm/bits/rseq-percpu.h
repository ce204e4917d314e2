/* Restartable sequence critical sections: Arm (AArch32) primitives.
   Copyright (C) 2026 Free Software Foundation, Inc.
   This file is part of the GNU C Library.

   The GNU C Library is free software; you can redistribute it and/or
   modify it under the terms of the GNU Lesser General Public
   License as published by the Free Software Foundation; either
   version 2.1 of the License, or (at your option) any later version.

   The GNU C Library is distributed in the hope that it will be useful,
   but WITHOUT ANY WARRANTY; without even the implied warranty of
   MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
   Lesser General Public License for more details.

   You should have received a copy of the GNU Lesser General Public
   License along with the GNU C Library; if not, see
   <https://www.gnu.org/licenses/>.  */

#ifndef _SYS_RSEQ_PERCPU_H
# error "Never include <bits/rseq-percpu.h> directly; use <sys/rseq-percpu.h> instead."
#endif

/* ARMv7 and later, A32 or T32, little-endian.  r12 (ip) is the scratch
   register R; the copy also uses lr.  */
#if __ARM_ARCH >= 7 && !defined __ARMEB__
# define __RSEQ_PERCPU_ARCH 1

# define __RSEQ_ASM_U64(x) ".long " x ", 0x0"
/* RSEQ_SIG as data: the kernel compares the word before abort_ip.  */
# define __RSEQ_ASM_SIGNATURE						\
  ".balign 4\n\t"							\
  ".word " __RSEQ_STR (RSEQ_SIG) "\n"
# define __RSEQ_ASM_JUMP "b"
/* 64 lines: more than the instructions of the largest section function
   (the copy's two variants), see bits/rseq-percpu-ops.h.  */
# define __RSEQ_ASM_SIZE_HINT						\
  __asm__ __volatile__ ("\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"		\
			"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"		\
			"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n"		\
			"\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n")

/* Position-independent in A32 and in T32, whichever the function
   containing the section is compiled for (target attributes may mix
   both in one file): movw and movt load the descriptor's offset from
   the PC as the add reads it.  Reading the PC gives the address of the
   instruction plus 8 in A32 and plus 4 in T32, which is twice the size
   of that add in either mode (4 or 2 bytes), so the assembler computes
   the bias itself.  The store is the last instruction: start_ip follows
   it.  The high word of rseq_cs stays zero.  */
# define __RSEQ_ASM_STORE_RSEQ_CS(table, anchor)		\
  "movw r12, #:lower16:(" __RSEQ_STR (table) "b - .Lrseq_pc%=)\n\t"	\
  "movt r12, #:upper16:(" __RSEQ_STR (table) "b - .Lrseq_pc%=)\n"	\
  __RSEQ_STR (anchor) ":\n\t"						\
  "add r12, r12, pc\n\t"						\
  ".set .Lrseq_pc%=, " __RSEQ_STR (anchor) "b + 2 * (. - "		\
  __RSEQ_STR (anchor) "b)\n\t"						\
  "str r12, %[rseq_cs]\n\t"

# define __RSEQ_ASM_CMP_CPU_ID(exit)					\
  "ldr r12, %[cpu_field]\n\t"						\
  "cmp r12, %[cpu]\n\t"							\
  "bne %l[" #exit "]\n\t"

# define __RSEQ_ASM_OP_CMPEQ(var, expect, exit)			\
  "ldr r12, %[" #var "]\n\t"						\
  "cmp r12, %[" #expect "]\n\t"						\
  "bne %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_STORE(value, var)				\
  "str %[" #value "], %[" #var "]\n\t"
# define __RSEQ_ASM_OP_FINAL_STORE(value, var)			\
  "str %[" #value "], %[" #var "]\n\t"
/* A barrier orders every earlier load and store before the commit.  */
# define __RSEQ_ASM_OP_FINAL_STORE_RELEASE(value, var)		\
  "dmb ish\n\t"								\
  __RSEQ_ASM_OP_FINAL_STORE (value, var)
# define __RSEQ_ASM_OP_FINAL_ADD(count, var)			\
  "ldr r12, %[" #var "]\n\t"						\
  "add r12, r12, %[" #count "]\n\t"					\
  __RSEQ_ASM_OP_R_FINAL_STORE (var)

# define __RSEQ_ASM_OP_R_LOAD(var)					\
  "ldr r12, %[" #var "]\n\t"
# define __RSEQ_ASM_OP_R_CMPEQ(expect, exit)				\
  "cmp r12, %[" #expect "]\n\t"						\
  "beq %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_R_STORE(var)					\
  "str r12, %[" #var "]\n\t"
# define __RSEQ_ASM_OP_R_LOAD_OFF(off)					\
  "ldr r12, [r12, %[" #off "]]\n\t"
# define __RSEQ_ASM_OP_R_FINAL_STORE(var)			\
  "str r12, %[" #var "]\n\t"

/* A byte loop from the end, so that only the index changes.  */
# define __RSEQ_ASM_OP_MEMCPY(dst, src, len, loop, done)		\
  "cmp %[" #len "], #0\n\t"						\
  "beq " __RSEQ_STR (done) "f\n\t"					\
  "mov r12, %[" #len "]\n"						\
  __RSEQ_STR (loop) ":\n\t"						\
  "subs r12, r12, #1\n\t"						\
  "ldrb lr, [%[" #src "], r12]\n\t"					\
  "strb lr, [%[" #dst "], r12]\n\t"					\
  "bne " __RSEQ_STR (loop) "b\n"					\
  __RSEQ_STR (done) ":\n\t"

# define __RSEQ_ASM_AREA_INPUTS(__a, __o, __c)				\
  [cpu_field] "m" (*(const int *) ((const char *) (__a) + (__o))),	\
  [cpu] "r" (__c),							\
  [rseq_cs] "m" (*(unsigned int *)					\
		 ((char *) (__a) + __RSEQ_AREA_RSEQ_CS_OFFSET))
# define __RSEQ_ASM_VAR(name, ptr) [name] "m" (*(ptr))
# define __RSEQ_ASM_VAL(name, value) [name] "r" (value)
# define __RSEQ_ASM_OFF(name, value) [name] "r" (value)
# define __RSEQ_ASM_MEMCPY_INPUTS(__d, __s, __l)			\
  [dst] "r" (__d), [src] "r" (__s), [len] "r" (__l)
# define __RSEQ_ASM_CLOBBERS "memory", "cc", "r12"
# define __RSEQ_ASM_MEMCPY_CLOBBERS , "lr"

# include <bits/rseq-percpu-ops.h>
#endif
