/* Restartable sequence critical sections.  x86_64 version.
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
# error "Never include <bits/rseq-percpu-x86_64.h> directly; use <sys/rseq-percpu.h> instead."
#endif

#define __RSEQ_PERCPU_ARCH 1

#define __RSEQ_STR1(x) #x
#define __RSEQ_STR(x) __RSEQ_STR1 (x)

/* Every critical section uses the same local labels:
     1  start_ip: the first instruction checks the CPU;
     2  post_commit_ip: right after the commit store;
     3  the struct rseq_cs descriptor;
     4  abort_ip, in section __rseq_failure, preceded by RSEQ_SIG.
   Tests' injection hooks must not use labels 1 to 4.  */

/* The descriptor: version 0, flags 0, start_ip, post_commit_offset,
   abort_ip; and its address in __rseq_cs_ptr_array for tools.  */
#define __RSEQ_CS_DESCRIPTOR						\
  ".pushsection __rseq_cs, \"aw\"\n\t"					\
  ".balign 32\n"							\
  "3:\n\t"								\
  ".long 0x0, 0x0\n\t"							\
  ".quad 1f, (2f - 1f), 4f\n\t"						\
  ".popsection\n\t"							\
  ".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
  ".quad 3b\n\t"							\
  ".popsection\n\t"

/* Arm the section: rseq_cs of the area points at the descriptor.  The
   store precedes start_ip, so the kernel ignores a preemption here and
   the CPU check below catches a migration.  */
#define __RSEQ_ARM							\
  "leaq 3b(%%rip), %%rax\n\t"						\
  "movq %%rax, %[rseq_cs]\n"						\
  "1:\n\t"

/* Still on CPU?  Otherwise the caller's CPU is stale and nothing ran:
   not an abort (the kernel restarted nothing), but
   __RSEQ_PERCPU_CPU_CHANGED.  */
#define __RSEQ_CHECK_CPU						\
  "cmpl %[cpu], %[cpu_field]\n\t"					\
  "jnz %l[__rseq_cpu_changed]\n\t"

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
  [cpu] "r" (__c),							\
  [rseq_cs] "m" (*(__uint64_t *)				\
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
			     "cmpq %[v], %[expect]\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movq %[newv], %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "r" (__expect),
			       [newv] "r" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "rax"
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
			     "addq %[count], %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [count] "r" (__count)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "rax"
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
			     "movq %[v], %%rbx\n\t"
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "cmpq %%rbx, %[expectnot]\n\t"
			     "je %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movq %%rbx, %[load]\n\t"
			     "addq %[voffp], %%rbx\n\t"
			     "movq (%%rbx), %%rbx\n\t"
			     "movq %%rbx, %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expectnot] "r" (__expectnot),
			       [voffp] "er" (__voffp), [load] "m" (*__load)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "rax", "rbx"
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
			     "cmpq %[v], %[expect]\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "cmpq %[v2], %[expect2]\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (4)
			     "movq %[newv], %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "r" (__expect),
			       [v2] "m" (*__v2), [expect2] "r" (__expect2),
			       [newv] "r" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "rax"
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
   visible before the commit with or without RELEASE; the asm's memory
   clobber keeps the compiler from reordering around it.  */
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
			     "cmpq %[v], %[expect]\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movq %[newv2], %[v2]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (4)
			     "movq %[newv], %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "r" (__expect),
			       [v2] "m" (*__v2), [newv2] "r" (__newv2),
			       [newv] "r" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "rax"
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
   handler with the copy incomplete and nothing committed.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_trymemcpy_storev (struct rseq *__area, int __off,
				       intptr_t *__v, intptr_t __expect,
				       void *__dst, const void *__src,
				       size_t __len, intptr_t __newv,
				       int __cpu, int __release)
{
  (void) __release;
  __asm__ __volatile__ goto (__RSEQ_CS_DESCRIPTOR
			     __RSEQ_ARM
			     RSEQ_PERCPU_INJECT_ASM (1)
			     __RSEQ_CHECK_CPU
			     RSEQ_PERCPU_INJECT_ASM (2)
			     "cmpq %[v], %[expect]\n\t"
			     "jnz %l[__rseq_cmpfail]\n\t"
			     RSEQ_PERCPU_INJECT_ASM (3)
			     "movq %[src], %%rsi\n\t"
			     "movq %[dst], %%rdi\n\t"
			     "movq %[len], %%rcx\n\t"
			     "rep movsb\n\t"
			     RSEQ_PERCPU_INJECT_ASM (4)
			     "movq %[newv], %[v]\n"
			     "2:\n\t"
			     __RSEQ_ABORT_HANDLER
			     : /* No outputs.  */
			     : __RSEQ_COMMON_INPUTS (__area, __off, __cpu),
			       [v] "m" (*__v), [expect] "r" (__expect),
			       [dst] "rm" (__dst), [src] "rm" (__src),
			       [len] "rm" (__len), [newv] "r" (__newv)
			       RSEQ_PERCPU_INJECT_INPUT
			     : "memory", "cc", "rax", "rcx", "rsi", "rdi"
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
