/* Restartable sequence critical sections: AArch64 primitives.
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

/* x9 is the scratch register R; the copy also uses x10 and x11.
   Memory operands are "Q" (a base register, no offset), which every
   load and store here accepts, stlr included.  */
#ifdef __LP64__
# define __RSEQ_PERCPU_ARCH 1

# define __RSEQ_ASM_U64(x) ".quad " x
/* RSEQ_SIG_CODE is a BRK instruction; .inst keeps it in instruction
   byte order whatever the data byte order.  */
# define __RSEQ_ASM_SIGNATURE ".inst " __RSEQ_STR (RSEQ_SIG_CODE) "\n"
# define __RSEQ_ASM_JUMP "b"

/* The store precedes start_ip: the kernel ignores a preemption before
   it, and the CPU check right after start_ip catches a migration.  */
# define __RSEQ_ASM_STORE_RSEQ_CS(table, anchor)	\
  "adrp x9, " __RSEQ_STR (table) "b\n\t"				\
  "add x9, x9, :lo12:" __RSEQ_STR (table) "b\n\t"			\
  "str x9, %[rseq_cs]\n\t"

# define __RSEQ_ASM_CMP_CPU_ID(exit)					\
  "ldr w9, %[cpu_field]\n\t"						\
  "cmp w9, %w[cpu]\n\t"							\
  "b.ne %l[" #exit "]\n\t"

# define __RSEQ_ASM_OP_CMPEQ(var, expect, exit)			\
  "ldr x9, %[" #var "]\n\t"						\
  "cmp x9, %[" #expect "]\n\t"						\
  "b.ne %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_STORE(value, var)				\
  "str %[" #value "], %[" #var "]\n\t"
# define __RSEQ_ASM_OP_FINAL_STORE(value, var)			\
  "str %[" #value "], %[" #var "]\n\t"
/* Store-release: every earlier load and store is observed first.  */
# define __RSEQ_ASM_OP_FINAL_STORE_RELEASE(value, var)		\
  "stlr %[" #value "], %[" #var "]\n\t"
# define __RSEQ_ASM_OP_FINAL_ADD(count, var)			\
  "ldr x9, %[" #var "]\n\t"						\
  "add x9, x9, %[" #count "]\n\t"					\
  __RSEQ_ASM_OP_R_FINAL_STORE (var)

# define __RSEQ_ASM_OP_R_LOAD(var)					\
  "ldr x9, %[" #var "]\n\t"
# define __RSEQ_ASM_OP_R_CMPEQ(expect, exit)				\
  "cmp x9, %[" #expect "]\n\t"						\
  "b.eq %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_R_STORE(var)					\
  "str x9, %[" #var "]\n\t"
# define __RSEQ_ASM_OP_R_LOAD_OFF(off)					\
  "ldr x9, [x9, %[" #off "]]\n\t"
# define __RSEQ_ASM_OP_R_FINAL_STORE(var)			\
  "str x9, %[" #var "]\n\t"

/* A byte loop from the end, so that only the index changes.  */
# define __RSEQ_ASM_OP_MEMCPY(dst, src, len, loop, done)		\
  "cbz %[" #len "], " __RSEQ_STR (done) "f\n\t"				\
  "mov x10, %[" #len "]\n"						\
  __RSEQ_STR (loop) ":\n\t"						\
  "sub x10, x10, #1\n\t"						\
  "ldrb w11, [%[" #src "], x10]\n\t"					\
  "strb w11, [%[" #dst "], x10]\n\t"					\
  "cbnz x10, " __RSEQ_STR (loop) "b\n"					\
  __RSEQ_STR (done) ":\n\t"

# define __RSEQ_ASM_AREA_INPUTS(__a, __o, __c)				\
  [cpu_field] "Q" (*(const int *) ((const char *) (__a) + (__o))),	\
  [cpu] "r" (__c),							\
  [rseq_cs] "Q" (*(__uint64_t *)					\
		 ((char *) (__a) + __RSEQ_AREA_RSEQ_CS_OFFSET))
# define __RSEQ_ASM_VAR(name, ptr) [name] "Q" (*(ptr))
# define __RSEQ_ASM_VAL(name, value) [name] "r" (value)
# define __RSEQ_ASM_OFF(name, value) [name] "r" (value)
# define __RSEQ_ASM_MEMCPY_INPUTS(__d, __s, __l)			\
  [dst] "r" (__d), [src] "r" (__s), [len] "r" (__l)
# define __RSEQ_ASM_CLOBBERS "memory", "cc", "x9"
# define __RSEQ_ASM_MEMCPY_CLOBBERS , "x10", "x11"

# include <bits/rseq-percpu-ops.h>
#endif
