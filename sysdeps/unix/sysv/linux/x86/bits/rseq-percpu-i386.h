/* Restartable sequence critical sections.  i386 version.
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
# error "Never include <bits/rseq-percpu-i386.h> directly; use <sys/rseq-percpu.h> instead."
#endif

#define __RSEQ_PERCPU_ARCH 1

#define __RSEQ_STR1(x) #x
#define __RSEQ_STR(x) __RSEQ_STR1 (x)

/* Local labels as on x86_64:
     1  start_ip: the first instruction checks the CPU;
     2  post_commit_ip: right after the commit store;
     3  the struct rseq_cs descriptor;
     4  abort_ip, in section __rseq_failure, preceded by RSEQ_SIG;
     5  used to find the descriptor's address in position-independent code.
   Tests' injection hooks must not use labels 1 to 5.

   With only seven general registers, scalars are passed as "g" or
   "rm" operands and %eax serves as the scratch register, so that every
   section fits with a frame pointer and position-independent code.  */

/* The descriptor, 64-bit fields with zero high words; and its address
   in __rseq_cs_ptr_array for tools.  */
#define __RSEQ_CS_DESCRIPTOR						\
  ".pushsection __rseq_cs, \"aw\"\n\t"					\
  ".balign 32\n"							\
  "3:\n\t"								\
  ".long 0x0, 0x0\n\t"							\
  ".long 1f, 0x0, (2f - 1f), 0x0, 4f, 0x0\n\t"				\
  ".popsection\n\t"							\
  ".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
  ".long 3b, 0x0\n\t"							\
  ".popsection\n\t"

/* Arm the section: store the descriptor's address into the low word of
   rseq_cs (the high word is always zero).  Position-independent code
   has no absolute addresses and i386 no PC-relative addressing, so the
   address is computed from the return address of a call.  */
#ifdef __PIC__
# define __RSEQ_DESCRIPTOR_TO(reg)					\
  "call 5f\n"								\
  "5:\n\t"								\
  "popl " reg "\n\t"							\
  "leal (3b - 5b)(" reg "), " reg "\n\t"
#else
# define __RSEQ_DESCRIPTOR_TO(reg)					\
  "movl $3b, " reg "\n\t"
#endif
#define __RSEQ_ARM_WITH(reg)						\
  __RSEQ_DESCRIPTOR_TO (reg)						\
  "movl " reg ", %[rseq_cs]\n"						\
  "1:\n\t"
#define __RSEQ_ARM __RSEQ_ARM_WITH ("%%eax")

/* Still on CPU?  Otherwise the caller's CPU is stale and nothing ran:
   not an abort (the kernel restarted nothing), but
   __RSEQ_PERCPU_CPU_CHANGED.  */
#define __RSEQ_CHECK_CPU_WITH(reg)					\
  "movl %[cpu], " reg "\n\t"						\
  "cmpl " reg ", %[cpu_field]\n\t"					\
  "jnz %l[__rseq_cpu_changed]\n\t"
#define __RSEQ_CHECK_CPU __RSEQ_CHECK_CPU_WITH ("%%eax")

/* The abort handler, out of line: RSEQ_SIG as the operand of a ud1
   instruction (the kernel checks the four bytes before abort_ip), then
   a jump to the C label.  */
#define __RSEQ_ABORT_HANDLER						\
  ".pushsection __rseq_failure, \"ax\"\n\t"				\
  ".byte 0x0f, 0xb9, 0x3d\n\t"						\
  ".long " __RSEQ_STR (RSEQ_SIG) "\n"					\
  "4:\n\t"								\
  "jmp %l[__rseq_abort]\n\t"						\
  ".popsection\n\t"

#define __RSEQ_COMMON_INPUTS(__a, __o, __c)				\
  [cpu_field] "m" (*(const int *) ((const char *) (__a) + (__o))),	\
  [cpu] "g" (__c),							\
  [rseq_cs] "m" (*(unsigned int *)					\
		 ((char *) (__a) + __RSEQ_AREA_RSEQ_CS_OFFSET))

__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_storev (struct rseq *__area, int __off, intptr_t *__v,
			     intptr_t __expect, intptr_t __newv, int __cpu)
{
  __asm__ __volatile__ goto (__RSEQ_CS_DESCRIPTOR
			     __RSEQ_ARM
			     RSEQ_PERCPU_INJECT_ASM (1)
			     __RSEQ_CHECK_CPU
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "movl %[expect], %%eax\n\t"
			     "cmpl %[v], %%eax\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movl %[newv], %%eax\n\t"
			     "movl %%eax, %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "g" (__expect),
			       [newv] "g" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "eax"
			       RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  return 0;
 __rseq_abort:
  return -1;
 __rseq_cpu_changed:
  return __RSEQ_PERCPU_CPU_CHANGED;
 __rseq_cmpfail:
  return 1;
}

__RSEQ_INLINE_HELPER int
__rseq_percpu_addv (struct rseq *__area, int __off, intptr_t *__v,
		    intptr_t __count, int __cpu)
{
  /* The commit is the add to memory itself: one instruction.  */
  __asm__ __volatile__ goto (__RSEQ_CS_DESCRIPTOR
			     __RSEQ_ARM
			     RSEQ_PERCPU_INJECT_ASM (1)
			     __RSEQ_CHECK_CPU
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "movl %[count], %%eax\n\t"
			     "addl %%eax, %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [count] "g" (__count)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "eax"
			       RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cpu_changed);
  return 0;
 __rseq_abort:
  return -1;
 __rseq_cpu_changed:
  return __RSEQ_PERCPU_CPU_CHANGED;
}

__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpnev_storeoffp_load (struct rseq *__area, int __off,
				     intptr_t *__v, intptr_t __expectnot,
				     long int __voffp, intptr_t *__load,
				     int __cpu)
{
  __asm__ __volatile__ goto (__RSEQ_CS_DESCRIPTOR
			     __RSEQ_ARM
			     RSEQ_PERCPU_INJECT_ASM (1)
			     __RSEQ_CHECK_CPU
			     "movl %[v], %%eax\n\t"
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "cmpl %[expectnot], %%eax\n\t"
			     "je %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movl %%eax, %[load]\n\t"
			     "addl %[voffp], %%eax\n\t"
			     "movl (%%eax), %%eax\n\t"
			     "movl %%eax, %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expectnot] "ri" (__expectnot),
			       [voffp] "g" (__voffp), [load] "m" (*__load)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "eax"
			       RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  return 0;
 __rseq_abort:
  return -1;
 __rseq_cpu_changed:
  return __RSEQ_PERCPU_CPU_CHANGED;
 __rseq_cmpfail:
  return 1;
}

__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_cmpeqv_storev (struct rseq *__area, int __off,
				    intptr_t *__v, intptr_t __expect,
				    intptr_t *__v2, intptr_t __expect2,
				    intptr_t __newv, int __cpu)
{
  __asm__ __volatile__ goto (__RSEQ_CS_DESCRIPTOR
			     __RSEQ_ARM
			     RSEQ_PERCPU_INJECT_ASM (1)
			     __RSEQ_CHECK_CPU
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "movl %[expect], %%eax\n\t"
			     "cmpl %[v], %%eax\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movl %[expect2], %%eax\n\t"
			     "cmpl %[v2], %%eax\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (4)
			     "movl %[newv], %%eax\n\t"
			     "movl %%eax, %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "g" (__expect),
			       [v2] "m" (*__v2), [expect2] "g" (__expect2),
			       [newv] "g" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "eax"
			       RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  return 0;
 __rseq_abort:
  return -1;
 __rseq_cpu_changed:
  return __RSEQ_PERCPU_CPU_CHANGED;
 __rseq_cmpfail:
  return 1;
}

/* x86 does not reorder stores with other stores, so the try store is
   visible before the commit with or without RELEASE.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_trystorev_storev (struct rseq *__area, int __off,
				       intptr_t *__v, intptr_t __expect,
				       intptr_t *__v2, intptr_t __newv2,
				       intptr_t __newv, int __cpu,
				       int __release)
{
  (void) __release;
  __asm__ __volatile__ goto (__RSEQ_CS_DESCRIPTOR
			     __RSEQ_ARM
			     RSEQ_PERCPU_INJECT_ASM (1)
			     __RSEQ_CHECK_CPU
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "movl %[expect], %%eax\n\t"
			     "cmpl %[v], %%eax\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movl %[newv2], %%eax\n\t"
			     "movl %%eax, %[v2]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (4)
			     "movl %[newv], %%eax\n\t"
			     "movl %%eax, %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "g" (__expect),
			       [v2] "m" (*__v2), [newv2] "g" (__newv2),
			       [newv] "g" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "eax"
			       RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  return 0;
 __rseq_abort:
  return -1;
 __rseq_cpu_changed:
  return __RSEQ_PERCPU_CPU_CHANGED;
 __rseq_cmpfail:
  return 1;
}

/* The copy is a rep movsb: if the kernel interrupts it, the instruction
   pointer is inside the section and the thread resumes at the abort
   handler with the copy incomplete and nothing committed.  %ecx, which
   rep movsb needs anyway, is the only scratch register, leaving the
   compiler four registers for the operands.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_trymemcpy_storev (struct rseq *__area, int __off,
				       intptr_t *__v, intptr_t __expect,
				       void *__dst, const void *__src,
				       size_t __len, intptr_t __newv,
				       int __cpu, int __release)
{
  (void) __release;
  __asm__ __volatile__ goto (__RSEQ_CS_DESCRIPTOR
			     __RSEQ_ARM_WITH ("%%ecx")
			     RSEQ_PERCPU_INJECT_ASM (1)
			     __RSEQ_CHECK_CPU_WITH ("%%ecx")
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "movl %[expect], %%ecx\n\t"
			     "cmpl %[v], %%ecx\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movl %[src], %%esi\n\t"
			     "movl %[dst], %%edi\n\t"
			     "movl %[len], %%ecx\n\t"
			     "rep movsb\n\t"
			     RSEQ_PERCPU_INJECT_ASM (4)
			     "movl %[newv], %%ecx\n\t"
			     "movl %%ecx, %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "g" (__expect),
			       [dst] "g" (__dst), [src] "g" (__src),
			       [len] "g" (__len), [newv] "g" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "ecx", "esi", "edi"
			       RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  return 0;
 __rseq_abort:
  return -1;
 __rseq_cpu_changed:
  return __RSEQ_PERCPU_CPU_CHANGED;
 __rseq_cmpfail:
  return 1;
}
