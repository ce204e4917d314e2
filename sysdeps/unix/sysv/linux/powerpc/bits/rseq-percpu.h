/* Restartable sequence critical sections: 64-bit POWER primitives.
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

/* 64-bit only; 32-bit powerpc has no critical sections.  r17 is the
   scratch register R, cr7 the condition register; the copy also uses
   r18 and r19.  Memory operands are "m", printed with %U and %X so that
   update and indexed forms get the right mnemonic.  */
#ifdef __powerpc64__
# define __RSEQ_PERCPU_ARCH 1

# define __RSEQ_ASM_U64(x) ".quad " x
# define __RSEQ_ASM_SIGNATURE ".long " __RSEQ_STR (RSEQ_SIG) "\n"
# define __RSEQ_ASM_JUMP "b"
# define __RSEQ_PPC_MEM(insn, reg, var)				\
  insn "%U[" #var "]%X[" #var "] " reg ", %[" #var "]\n\t"

/* Position-independent: the PC from a branch-and-link to the next
   instruction (a form the link stack predictor ignores), plus the
   descriptor's offset.  The store precedes start_ip: the kernel ignores
   a preemption before it, and the CPU check right after start_ip
   catches a migration.  */
# define __RSEQ_ASM_STORE_RSEQ_CS(table, anchor)	\
  "bcl 20, 31, " __RSEQ_STR (anchor) "f\n"				\
  __RSEQ_STR (anchor) ":\n\t"						\
  "mflr %%r17\n\t"							\
  "addis %%r17, %%r17, (" __RSEQ_STR (table) "b - "			\
  __RSEQ_STR (anchor) "b)@ha\n\t"					\
  "addi %%r17, %%r17, (" __RSEQ_STR (table) "b - "			\
  __RSEQ_STR (anchor) "b)@l\n\t"					\
  __RSEQ_PPC_MEM ("std", "%%r17", rseq_cs)

# define __RSEQ_ASM_CMP_CPU_ID(exit)					\
  __RSEQ_PPC_MEM ("lwz", "%%r17", cpu_field)				\
  "cmpw %%cr7, %[cpu], %%r17\n\t"					\
  "bne- %%cr7, %l[" #exit "]\n\t"

# define __RSEQ_ASM_OP_CMPEQ(var, expect, exit)			\
  __RSEQ_PPC_MEM ("ld", "%%r17", var)					\
  "cmpd %%cr7, %%r17, %[" #expect "]\n\t"				\
  "bne- %%cr7, %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_STORE(value, var)				\
  __RSEQ_PPC_MEM ("std", "%[" #value "]", var)
# define __RSEQ_ASM_OP_FINAL_STORE(value, var)			\
  __RSEQ_ASM_OP_STORE (value, var)
/* lwsync orders every earlier load and store before the commit.  */
# define __RSEQ_ASM_OP_FINAL_STORE_RELEASE(value, var)		\
  "lwsync\n\t"								\
  __RSEQ_ASM_OP_FINAL_STORE (value, var)
# define __RSEQ_ASM_OP_FINAL_ADD(count, var)			\
  __RSEQ_ASM_OP_R_LOAD (var)						\
  "add %%r17, %%r17, %[" #count "]\n\t"					\
  __RSEQ_ASM_OP_R_FINAL_STORE (var)

# define __RSEQ_ASM_OP_R_LOAD(var)					\
  __RSEQ_PPC_MEM ("ld", "%%r17", var)
# define __RSEQ_ASM_OP_R_CMPEQ(expect, exit)				\
  "cmpd %%cr7, %%r17, %[" #expect "]\n\t"				\
  "beq- %%cr7, %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_R_STORE(var)					\
  __RSEQ_PPC_MEM ("std", "%%r17", var)
# define __RSEQ_ASM_OP_R_LOAD_OFF(off)					\
  "ldx %%r17, %%r17, %[" #off "]\n\t"
# define __RSEQ_ASM_OP_R_FINAL_STORE(var)			\
  __RSEQ_ASM_OP_R_STORE (var)

/* A byte loop from the end, so that only the index changes.  DST and
   SRC are "b" operands: r0 as a base would read as zero.  */
# define __RSEQ_ASM_OP_MEMCPY(dst, src, len, loop, done)		\
  "cmpdi %%cr7, %[" #len "], 0\n\t"					\
  "beq %%cr7, " __RSEQ_STR (done) "f\n\t"				\
  "mr %%r18, %[" #len "]\n"						\
  __RSEQ_STR (loop) ":\n\t"						\
  "addi %%r18, %%r18, -1\n\t"						\
  "lbzx %%r19, %[" #src "], %%r18\n\t"					\
  "stbx %%r19, %[" #dst "], %%r18\n\t"					\
  "cmpdi %%cr7, %%r18, 0\n\t"						\
  "bne %%cr7, " __RSEQ_STR (loop) "b\n"					\
  __RSEQ_STR (done) ":\n\t"

# define __RSEQ_ASM_AREA_INPUTS(__a, __o, __c)				\
  [cpu_field] "m" (*(const int *) ((const char *) (__a) + (__o))),	\
  [cpu] "r" (__c),							\
  [rseq_cs] "m" (*(__uint64_t *)					\
		 ((char *) (__a) + __RSEQ_AREA_RSEQ_CS_OFFSET))
# define __RSEQ_ASM_VAR(name, ptr) [name] "m" (*(ptr))
# define __RSEQ_ASM_VAL(name, value) [name] "r" (value)
# define __RSEQ_ASM_OFF(name, value) [name] "b" (value)
# define __RSEQ_ASM_MEMCPY_INPUTS(__d, __s, __l)			\
  [dst] "b" (__d), [src] "b" (__s), [len] "r" (__l)
# define __RSEQ_ASM_CLOBBERS "memory", "cc", "cr7", "r17", "lr"
# define __RSEQ_ASM_MEMCPY_CLOBBERS , "r18", "r19"

# include <bits/rseq-percpu-ops.h>
#endif
