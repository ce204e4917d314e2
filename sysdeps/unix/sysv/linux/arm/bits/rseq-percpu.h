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

/* Position-independent: the descriptor's offset from the PC, kept in
   a literal the section branches over.  Reading the PC gives the
   address of the instruction plus 4 in T32 and plus 8 in A32.  */
# ifdef __thumb__
#  define __RSEQ_ARM_ADD_PC "add r12, pc\n\t"
#  define __RSEQ_ARM_PC_BIAS "4"
# else
#  define __RSEQ_ARM_ADD_PC "add r12, pc, r12\n\t"
#  define __RSEQ_ARM_PC_BIAS "8"
# endif
/* The store precedes start_ip: the kernel ignores a preemption before
   it, and the CPU check right after start_ip catches a migration.  The
   high word of rseq_cs stays zero.  */
# define __RSEQ_ASM_STORE_RSEQ_CS(start, table, anchor, literal)	\
  "ldr r12, " __RSEQ_STR (literal) "f\n"				\
  __RSEQ_STR (anchor) ":\n\t"						\
  __RSEQ_ARM_ADD_PC							\
  "str r12, %[rseq_cs]\n\t"						\
  "b " __RSEQ_STR (start) "f\n\t"					\
  ".balign 4\n"								\
  __RSEQ_STR (literal) ":\n\t"						\
  ".word " __RSEQ_STR (table) "b - (" __RSEQ_STR (anchor) "b + "	\
  __RSEQ_ARM_PC_BIAS ")\n"						\
  __RSEQ_STR (start) ":\n\t"

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
# define __RSEQ_ASM_OP_FINAL_STORE(value, var, commit)			\
  "str %[" #value "], %[" #var "]\n"					\
  __RSEQ_STR (commit) ":\n\t"
/* A barrier orders every earlier load and store before the commit.  */
# define __RSEQ_ASM_OP_FINAL_STORE_RELEASE(value, var, commit)		\
  "dmb ish\n\t"								\
  __RSEQ_ASM_OP_FINAL_STORE (value, var, commit)
# define __RSEQ_ASM_OP_FINAL_ADD(count, var, commit)			\
  "ldr r12, %[" #var "]\n\t"						\
  "add r12, r12, %[" #count "]\n\t"					\
  __RSEQ_ASM_OP_R_FINAL_STORE (var, commit)

# define __RSEQ_ASM_OP_R_LOAD(var)					\
  "ldr r12, %[" #var "]\n\t"
# define __RSEQ_ASM_OP_R_CMPEQ(expect, exit)				\
  "cmp r12, %[" #expect "]\n\t"						\
  "beq %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_R_STORE(var)					\
  "str r12, %[" #var "]\n\t"
# define __RSEQ_ASM_OP_R_LOAD_OFF(off)					\
  "ldr r12, [r12, %[" #off "]]\n\t"
# define __RSEQ_ASM_OP_R_FINAL_STORE(var, commit)			\
  "str r12, %[" #var "]\n"						\
  __RSEQ_STR (commit) ":\n\t"

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
