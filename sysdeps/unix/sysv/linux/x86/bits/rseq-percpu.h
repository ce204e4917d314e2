/* Restartable sequence critical sections: x86 primitives.
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

/* One file for x86_64 and i386: they differ in register width, in how
   values may be passed (i386 has too few registers, so its values may
   be memory operands or immediates) and in how the descriptor's address
   is found.  x32 has no critical sections.  %rcx/%ecx is the scratch
   register of every section, and the only one but for the copy's.  */
#if defined __x86_64__ && !defined __ILP32__
# define __RSEQ_X86_SEL(q, l) q
# define __RSEQ_ASM_U64(x) ".quad " x
/* No 64-bit immediates: mov and cmp take 32 bits sign-extended.  */
# define __RSEQ_X86_VAL "rme"
#elif defined __i386__
# define __RSEQ_X86_SEL(q, l) l
# define __RSEQ_ASM_U64(x) ".long " x ", 0x0"
# define __RSEQ_X86_VAL "g"
#endif

#ifdef __RSEQ_X86_SEL
# define __RSEQ_PERCPU_ARCH 1

# define __RSEQ_X86_OP(op) op __RSEQ_X86_SEL ("q", "l") " "
# define __RSEQ_X86_TMP __RSEQ_X86_SEL ("%%rcx", "%%ecx")
# define __RSEQ_X86_OPND(name) "%[" #name "]"

/* RSEQ_SIG as the operand of a ud1 instruction.  */
# define __RSEQ_ASM_SIGNATURE						\
  ".byte 0x0f, 0xb9, 0x3d\n\t"						\
  ".long " __RSEQ_STR (RSEQ_SIG) "\n"
# define __RSEQ_ASM_JUMP "jmp"

/* The store precedes start_ip: the kernel ignores a preemption before
   it, and the CPU check right after start_ip catches a migration.  */
# if defined __x86_64__
#  define __RSEQ_X86_TABLE_ADDRESS(table, anchor)			\
  "leaq " __RSEQ_STR (table) "b(%%rip), %%rcx\n\t"
# elif defined __PIC__
/* i386 has no PC-relative addressing.  The return address of a call
   gives the PC; the thunk returns, so calls and returns stay paired for
   the return-stack predictor.  One copy per object (.ifndef) and per
   link (a COMDAT group).  */
#  define __RSEQ_X86_TABLE_ADDRESS(table, anchor)			\
  ".ifndef __rseq_percpu_pc_thunk_cx\n\t"				\
  ".pushsection .text.__rseq_percpu_pc_thunk_cx, \"axG\", @progbits, "	\
  "__rseq_percpu_pc_thunk_cx, comdat\n\t"				\
  ".globl __rseq_percpu_pc_thunk_cx\n\t"				\
  ".hidden __rseq_percpu_pc_thunk_cx\n\t"				\
  ".type __rseq_percpu_pc_thunk_cx, @function\n"			\
  "__rseq_percpu_pc_thunk_cx:\n\t"					\
  "movl (%%esp), %%ecx\n\t"						\
  "ret\n\t"								\
  ".size __rseq_percpu_pc_thunk_cx, . - __rseq_percpu_pc_thunk_cx\n\t"	\
  ".popsection\n\t"							\
  ".endif\n\t"								\
  "call __rseq_percpu_pc_thunk_cx\n"					\
  __RSEQ_STR (anchor) ":\n\t"						\
  "leal (" __RSEQ_STR (table) "b - " __RSEQ_STR (anchor) "b)(%%ecx), %%ecx\n\t"
# else
#  define __RSEQ_X86_TABLE_ADDRESS(table, anchor)			\
  "movl $" __RSEQ_STR (table) "b, %%ecx\n\t"
# endif
# define __RSEQ_ASM_STORE_RSEQ_CS(table, anchor)	\
  __RSEQ_X86_TABLE_ADDRESS (table, anchor)				\
  __RSEQ_X86_OP ("mov") __RSEQ_X86_TMP ", %[rseq_cs]\n\t"

# define __RSEQ_ASM_CMP_CPU_ID(exit)					\
  "movl %[cpu], %%ecx\n\t"						\
  "cmpl %%ecx, %[cpu_field]\n\t"					\
  "jnz %l[" #exit "]\n\t"

# define __RSEQ_ASM_OP_R_LOAD(var)					\
  __RSEQ_X86_OP ("mov") __RSEQ_X86_OPND (var) ", " __RSEQ_X86_TMP "\n\t"
# define __RSEQ_ASM_OP_R_STORE(var)					\
  __RSEQ_X86_OP ("mov") __RSEQ_X86_TMP ", " __RSEQ_X86_OPND (var) "\n\t"
# define __RSEQ_ASM_OP_R_CMPEQ(expect, exit)				\
  __RSEQ_X86_OP ("cmp") __RSEQ_X86_OPND (expect) ", " __RSEQ_X86_TMP "\n\t" \
  "je %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_R_LOAD_OFF(off)					\
  __RSEQ_X86_OP ("add") __RSEQ_X86_OPND (off) ", " __RSEQ_X86_TMP "\n\t"	\
  __RSEQ_X86_OP ("mov") "(" __RSEQ_X86_TMP "), " __RSEQ_X86_TMP "\n\t"
# define __RSEQ_ASM_OP_R_FINAL_STORE(var)			\
  __RSEQ_ASM_OP_R_STORE (var)

/* Values go through the scratch register: i386 may pass them in
   memory.  */
# define __RSEQ_ASM_OP_CMPEQ(var, expect, exit)			\
  __RSEQ_ASM_OP_R_LOAD (expect)						\
  __RSEQ_X86_OP ("cmp") __RSEQ_X86_OPND (var) ", " __RSEQ_X86_TMP "\n\t"	\
  "jnz %l[" #exit "]\n\t"
# define __RSEQ_ASM_OP_STORE(value, var)				\
  __RSEQ_ASM_OP_R_LOAD (value)						\
  __RSEQ_ASM_OP_R_STORE (var)
# define __RSEQ_ASM_OP_FINAL_STORE(value, var)			\
  __RSEQ_ASM_OP_R_LOAD (value)						\
  __RSEQ_ASM_OP_R_FINAL_STORE (var)
/* x86 does not reorder stores with other stores.  */
# define __RSEQ_ASM_OP_FINAL_STORE_RELEASE __RSEQ_ASM_OP_FINAL_STORE
/* The commit is the add to memory itself: one instruction.  */
# define __RSEQ_ASM_OP_FINAL_ADD(count, var)			\
  __RSEQ_ASM_OP_R_LOAD (count)						\
  __RSEQ_X86_OP ("add") __RSEQ_X86_TMP ", " __RSEQ_X86_OPND (var) "\n\t"

/* rep movsb: when the kernel interrupts it, the instruction pointer is
   inside the section and the thread resumes at the abort handler with
   the copy incomplete and nothing committed.  */
# define __RSEQ_ASM_OP_MEMCPY(dst, src, len, loop, done)		\
  __RSEQ_X86_OP ("mov") __RSEQ_X86_OPND (src) ", "			\
  __RSEQ_X86_SEL ("%%rsi", "%%esi") "\n\t"				\
  __RSEQ_X86_OP ("mov") __RSEQ_X86_OPND (dst) ", "			\
  __RSEQ_X86_SEL ("%%rdi", "%%edi") "\n\t"				\
  __RSEQ_X86_OP ("mov") __RSEQ_X86_OPND (len) ", " __RSEQ_X86_TMP "\n\t"	\
  "rep movsb\n\t"

# define __RSEQ_ASM_AREA_INPUTS(__a, __o, __c)				\
  [cpu_field] "m" (*(const int *) ((const char *) (__a) + (__o))),	\
  [cpu] __RSEQ_X86_VAL (__c),						\
  [rseq_cs] "m" (*(uintptr_t *)						\
		 ((char *) (__a) + __RSEQ_AREA_RSEQ_CS_OFFSET))
# define __RSEQ_ASM_VAR(name, ptr) [name] "m" (*(ptr))
# define __RSEQ_ASM_VAL(name, value) [name] __RSEQ_X86_VAL (value)
# define __RSEQ_ASM_OFF(name, value) [name] __RSEQ_X86_VAL (value)
# define __RSEQ_ASM_MEMCPY_INPUTS(__d, __s, __l)			\
  [dst] __RSEQ_X86_VAL (__d), [src] __RSEQ_X86_VAL (__s),		\
  [len] __RSEQ_X86_VAL (__l)
# define __RSEQ_ASM_CLOBBERS "memory", "cc", __RSEQ_X86_SEL ("rcx", "ecx")
# define __RSEQ_ASM_MEMCPY_CLOBBERS , __RSEQ_X86_SEL ("rsi", "esi"),	\
    __RSEQ_X86_SEL ("rdi", "edi")

# include <bits/rseq-percpu-ops.h>
#endif
