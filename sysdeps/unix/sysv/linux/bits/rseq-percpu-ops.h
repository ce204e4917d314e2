/* Restartable sequence critical sections: each operation described once.
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
# error "Never include <bits/rseq-percpu-ops.h> directly; use <sys/rseq-percpu.h> instead."
#endif

/* Each operation of <sys/rseq-percpu.h> is one critical section, written
   here once in terms of the primitives an architecture's
   bits/rseq-percpu.h defines before including this file:

     __RSEQ_ASM_U64 (X)		a 64-bit data word holding X
     __RSEQ_ASM_SIGNATURE		RSEQ_SIG, placed so that its four bytes
				end right where the next instruction starts
     __RSEQ_ASM_JUMP		the unconditional branch mnemonic
     __RSEQ_ASM_STORE_RSEQ_CS (TABLE, ANCHOR)
				store the address of descriptor TABLE into
				operand rseq_cs; the store must be the
				last instruction, with nothing after it
				(no label, data, alignment or branch):
				this file puts start_ip right after it,
				so that no instruction between arming and
				start_ip lies outside the section
     __RSEQ_ASM_CMP_CPU_ID (EXIT)	branch to EXIT unless operand cpu_field
				equals operand cpu
     __RSEQ_ASM_OP_CMPEQ (VAR, EXPECT, EXIT)
				branch to EXIT unless VAR == EXPECT
     __RSEQ_ASM_OP_STORE (VALUE, VAR)	VAR = VALUE
     __RSEQ_ASM_OP_FINAL_STORE (VALUE, VAR)
     __RSEQ_ASM_OP_FINAL_STORE_RELEASE (VALUE, VAR)
				the commit: VAR = VALUE (after every
				earlier store for _RELEASE)
     __RSEQ_ASM_OP_FINAL_ADD (COUNT, VAR)
				the commit: VAR += COUNT
     __RSEQ_ASM_OP_R_LOAD (VAR)	the scratch register R = VAR
     __RSEQ_ASM_OP_R_CMPEQ (EXPECT, EXIT)	branch to EXIT if R == EXPECT
     __RSEQ_ASM_OP_R_STORE (VAR)	VAR = R
     __RSEQ_ASM_OP_R_LOAD_OFF (OFF)	R = *(R + OFF)
     __RSEQ_ASM_OP_R_FINAL_STORE (VAR)	the commit: VAR = R

   Each commit primitive ends with the committing store, and this file
   puts post_commit_ip right after it, so that the commit is the last
   instruction of every section.
     __RSEQ_ASM_OP_MEMCPY (DST, SRC, LEN, LOOP, DONE)
				copy LEN bytes; interruptible, so that an
				abort leaves it incomplete and uncommitted

   and the operand lists __RSEQ_ASM_AREA_INPUTS (AREA, OFFSET, CPU)
   (operands cpu_field, cpu and rseq_cs), __RSEQ_ASM_VAR (NAME, POINTER)
   for an intptr_t in memory, __RSEQ_ASM_VAL (NAME, VALUE) and
   __RSEQ_ASM_OFF (NAME, OFFSET) for values, __RSEQ_ASM_MEMCPY_INPUTS
   (DST, SRC, LEN), and the clobbers __RSEQ_ASM_CLOBBERS and
   __RSEQ_ASM_MEMCPY_CLOBBERS.  Operands are named; VAR, EXPECT and the
   like are operand names, EXIT is the name of a C label, and START,
   COMMIT and the other capitals are numeric local labels, which the
   primitives receive as arguments.  Every section uses the labels
   below; code injected through __RSEQ_PERCPU_INJECT_ASM may use 6 and 7.  */

#define __RSEQ_STR1(x) #x
#define __RSEQ_STR(x) __RSEQ_STR1 (x)

#define __RSEQ_L_START	1	/* start_ip, right before the CPU check.  */
#define __RSEQ_L_COMMIT	2	/* post_commit_ip, right after the commit.  */
#define __RSEQ_L_TABLE	3	/* The struct rseq_cs descriptor.  */
#define __RSEQ_L_ABORT	4	/* abort_ip, right after RSEQ_SIG.  */
#define __RSEQ_L_ANCHOR	5	/* Address computations.  */
#define __RSEQ_L_LOOP	8	/* Loops.  */
#define __RSEQ_L_DONE	9

/* The descriptor (version 0, flags 0, start_ip, post_commit_offset,
   abort_ip), and its address in __rseq_cs_ptr_array for tools.  */
#define __RSEQ_ASM_DEFINE_TABLE(table, start, commit, abort)		\
  ".pushsection __rseq_cs, \"aw\"\n\t"					\
  ".balign 32\n"							\
  __RSEQ_STR (table) ":\n\t"						\
  ".long 0x0, 0x0\n\t"							\
  __RSEQ_ASM_U64 (__RSEQ_STR (start) "f") "\n\t"			\
  __RSEQ_ASM_U64 ("(" __RSEQ_STR (commit) "f - "			\
		  __RSEQ_STR (start) "f)") "\n\t"			\
  __RSEQ_ASM_U64 (__RSEQ_STR (abort) "f") "\n\t"			\
  ".popsection\n\t"							\
  ".pushsection __rseq_cs_ptr_array, \"aw\"\n\t"			\
  ".balign 8\n\t"							\
  __RSEQ_ASM_U64 (__RSEQ_STR (table) "b") "\n\t"			\
  ".popsection\n\t"

/* A way out of the section other than the commit and the abort: the
   pair (start_ip, exit address) in __rseq_exit_point_array, so that a
   debugger stepping over the section can stop at every exit.  */
#define __RSEQ_ASM_DEFINE_EXIT_POINT(start, exit)			\
  ".pushsection __rseq_exit_point_array, \"aw\"\n\t"			\
  ".balign 8\n\t"							\
  __RSEQ_ASM_U64 (__RSEQ_STR (start) "b") "\n\t"			\
  __RSEQ_ASM_U64 ("%l[" #exit "]") "\n\t"				\
  ".popsection\n\t"

/* The abort handler, outside the section: RSEQ_SIG (the kernel checks
   the four bytes before abort_ip), then a branch to the C label.  */
#define __RSEQ_ASM_DEFINE_ABORT(abort, exit)				\
  ".pushsection __rseq_failure, \"ax\"\n\t"				\
  ".balign 4\n\t"							\
  __RSEQ_ASM_SIGNATURE							\
  __RSEQ_STR (abort) ":\n\t"						\
  __RSEQ_ASM_JUMP " %l[" #exit "]\n\t"					\
  ".popsection\n\t"

/* Every section begins alike: descriptor, arming store, start_ip, the
   first test hook and the CPU check.  A stale CPU is not an abort (the
   kernel restarted nothing) but __RSEQ_PERCPU_CPU_CHANGED.  */
#define __RSEQ_ASM_BEGIN						\
  __RSEQ_ASM_DEFINE_TABLE (__RSEQ_L_TABLE, __RSEQ_L_START,		\
			   __RSEQ_L_COMMIT, __RSEQ_L_ABORT)		\
  __RSEQ_ASM_STORE_RSEQ_CS (__RSEQ_L_TABLE, __RSEQ_L_ANCHOR)		\
  __RSEQ_STR (__RSEQ_L_START) ":\n\t"					\
  __RSEQ_PERCPU_INJECT_ASM (1)						\
  __RSEQ_ASM_CMP_CPU_ID (__rseq_cpu_changed)				\
  __RSEQ_ASM_DEFINE_EXIT_POINT (__RSEQ_L_START, __rseq_cpu_changed)

/* post_commit_ip: right after the commit primitive, always.  */
#define __RSEQ_ASM_COMMIT(commit_primitive)				\
  commit_primitive							\
  __RSEQ_STR (__RSEQ_L_COMMIT) ":\n\t"

#define __RSEQ_ASM_END							\
  __RSEQ_ASM_DEFINE_ABORT (__RSEQ_L_ABORT, __rseq_abort)

/* GCC counts an asm goto as one instruction when it estimates code
   size (the length of a jump instruction is not scaled by the lines of
   its template), and ARM places literal pools by that estimate: a
   function with a few dozen inlined sections then loads a literal out
   of reach, and the assembler fails ("offset out of range").  A port
   with that problem defines __RSEQ_ASM_SIZE_HINT as an empty asm of at
   least as many lines as a section function has instructions in all
   its asm gotos: GCC counts each line, and it assembles to nothing.
   Every section function starts with it.  */
#ifndef __RSEQ_ASM_SIZE_HINT
# define __RSEQ_ASM_SIZE_HINT
#endif

/* The results of one attempt, in the order of the C labels.  */
#define __RSEQ_PERCPU_RESULTS						\
  return 0;								\
 __rseq_abort:								\
  return -1;								\
 __rseq_cpu_changed:							\
  return __RSEQ_PERCPU_CPU_CHANGED;					\
 __rseq_cmpfail:							\
  return 1

/* if (*V == EXPECT) *V = NEWV.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_storev (struct rseq *__area, int __off, intptr_t *__v,
			     intptr_t __expect, intptr_t __newv, int __cpu)
{
  __RSEQ_ASM_SIZE_HINT;
  __asm__ __volatile__ goto (__RSEQ_ASM_BEGIN
			     __RSEQ_PERCPU_INJECT_ASM (2)
			     __RSEQ_ASM_OP_CMPEQ (v, expect, __rseq_cmpfail)
			     __RSEQ_ASM_DEFINE_EXIT_POINT (__RSEQ_L_START,
							   __rseq_cmpfail)
			     __RSEQ_PERCPU_INJECT_ASM (3)
			     __RSEQ_ASM_COMMIT (
			       __RSEQ_ASM_OP_FINAL_STORE (newv, v))
			     __RSEQ_ASM_END
			     : /* No outputs.  */
			     : __RSEQ_ASM_AREA_INPUTS (__area, __off, __cpu),
			       __RSEQ_ASM_VAR (v, __v),
			       __RSEQ_ASM_VAL (expect, __expect),
			       __RSEQ_ASM_VAL (newv, __newv)
			       __RSEQ_PERCPU_INJECT_INPUT
			     : __RSEQ_ASM_CLOBBERS
			       __RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  __RSEQ_PERCPU_RESULTS;
}

/* *V += COUNT.  Never fails the comparison: __rseq_cmpfail is only
   there for __RSEQ_PERCPU_RESULTS.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_addv (struct rseq *__area, int __off, intptr_t *__v,
		    intptr_t __count, int __cpu)
{
  __RSEQ_ASM_SIZE_HINT;
  __asm__ __volatile__ goto (__RSEQ_ASM_BEGIN
			     __RSEQ_PERCPU_INJECT_ASM (2)
			     __RSEQ_ASM_COMMIT (
			       __RSEQ_ASM_OP_FINAL_ADD (count, v))
			     __RSEQ_ASM_END
			     : /* No outputs.  */
			     : __RSEQ_ASM_AREA_INPUTS (__area, __off, __cpu),
			       __RSEQ_ASM_VAR (v, __v),
			       __RSEQ_ASM_VAL (count, __count)
			       __RSEQ_PERCPU_INJECT_INPUT
			     : __RSEQ_ASM_CLOBBERS
			       __RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cpu_changed);
  return 0;
 __rseq_abort:
  return -1;
 __rseq_cpu_changed:
  return __RSEQ_PERCPU_CPU_CHANGED;
}

/* if (*V != EXPECTNOT) { *LOAD = *V; *V = *(*V + VOFFP); }  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpnev_storeoffp_load (struct rseq *__area, int __off,
				     intptr_t *__v, intptr_t __expectnot,
				     long int __voffp, intptr_t *__load,
				     int __cpu)
{
  __RSEQ_ASM_SIZE_HINT;
  __asm__ __volatile__ goto (__RSEQ_ASM_BEGIN
			     __RSEQ_ASM_OP_R_LOAD (v)
			     __RSEQ_PERCPU_INJECT_ASM (2)
			     __RSEQ_ASM_OP_R_CMPEQ (expectnot, __rseq_cmpfail)
			     __RSEQ_ASM_DEFINE_EXIT_POINT (__RSEQ_L_START,
							   __rseq_cmpfail)
			     __RSEQ_PERCPU_INJECT_ASM (3)
			     __RSEQ_ASM_OP_R_STORE (load)
			     __RSEQ_ASM_OP_R_LOAD_OFF (voffp)
			     __RSEQ_ASM_COMMIT (
			       __RSEQ_ASM_OP_R_FINAL_STORE (v))
			     __RSEQ_ASM_END
			     : /* No outputs.  */
			     : __RSEQ_ASM_AREA_INPUTS (__area, __off, __cpu),
			       __RSEQ_ASM_VAR (v, __v),
			       __RSEQ_ASM_VAL (expectnot, __expectnot),
			       __RSEQ_ASM_OFF (voffp, __voffp),
			       __RSEQ_ASM_VAR (load, __load)
			       __RSEQ_PERCPU_INJECT_INPUT
			     : __RSEQ_ASM_CLOBBERS
			       __RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  __RSEQ_PERCPU_RESULTS;
}

/* if (*V == EXPECT && *V2 == EXPECT2) *V = NEWV.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_cmpeqv_storev (struct rseq *__area, int __off,
				    intptr_t *__v, intptr_t __expect,
				    intptr_t *__v2, intptr_t __expect2,
				    intptr_t __newv, int __cpu)
{
  __RSEQ_ASM_SIZE_HINT;
  __asm__ __volatile__ goto (__RSEQ_ASM_BEGIN
			     __RSEQ_PERCPU_INJECT_ASM (2)
			     __RSEQ_ASM_OP_CMPEQ (v, expect, __rseq_cmpfail)
			     __RSEQ_ASM_DEFINE_EXIT_POINT (__RSEQ_L_START,
							   __rseq_cmpfail)
			     __RSEQ_PERCPU_INJECT_ASM (3)
			     __RSEQ_ASM_OP_CMPEQ (v2, expect2, __rseq_cmpfail)
			     __RSEQ_PERCPU_INJECT_ASM (4)
			     __RSEQ_ASM_COMMIT (
			       __RSEQ_ASM_OP_FINAL_STORE (newv, v))
			     __RSEQ_ASM_END
			     : /* No outputs.  */
			     : __RSEQ_ASM_AREA_INPUTS (__area, __off, __cpu),
			       __RSEQ_ASM_VAR (v, __v),
			       __RSEQ_ASM_VAL (expect, __expect),
			       __RSEQ_ASM_VAR (v2, __v2),
			       __RSEQ_ASM_VAL (expect2, __expect2),
			       __RSEQ_ASM_VAL (newv, __newv)
			       __RSEQ_PERCPU_INJECT_INPUT
			     : __RSEQ_ASM_CLOBBERS
			       __RSEQ_PERCPU_INJECT_CLOBBER
			     : __rseq_abort, __rseq_cmpfail,
			       __rseq_cpu_changed);
  __RSEQ_PERCPU_RESULTS;
}

/* if (*V == EXPECT) { *V2 = NEWV2; *V = NEWV; }, the commit ordered
   after the try store by FINAL_STORE, which is one statement for the
   plain and the _release pair.  */
#define __RSEQ_PERCPU_TRYSTOREV_STOREV(final_store)			\
  __asm__ __volatile__ goto (__RSEQ_ASM_BEGIN				\
			     __RSEQ_PERCPU_INJECT_ASM (2)			\
			     __RSEQ_ASM_OP_CMPEQ (v, expect, __rseq_cmpfail) \
			     __RSEQ_ASM_DEFINE_EXIT_POINT (__RSEQ_L_START, \
							   __rseq_cmpfail) \
			     __RSEQ_PERCPU_INJECT_ASM (3)			\
			     __RSEQ_ASM_OP_STORE (newv2, v2)		\
			     __RSEQ_PERCPU_INJECT_ASM (4)			\
			     __RSEQ_ASM_COMMIT (final_store (newv, v))	\
			     __RSEQ_ASM_END				\
			     : /* No outputs.  */			\
			     : __RSEQ_ASM_AREA_INPUTS (__area, __off, __cpu), \
			       __RSEQ_ASM_VAR (v, __v),			\
			       __RSEQ_ASM_VAL (expect, __expect),	\
			       __RSEQ_ASM_VAR (v2, __v2),		\
			       __RSEQ_ASM_VAL (newv2, __newv2),		\
			       __RSEQ_ASM_VAL (newv, __newv)		\
			       __RSEQ_PERCPU_INJECT_INPUT			\
			     : __RSEQ_ASM_CLOBBERS			\
			       __RSEQ_PERCPU_INJECT_CLOBBER		\
			     : __rseq_abort, __rseq_cmpfail,		\
			       __rseq_cpu_changed)

__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_trystorev_storev (struct rseq *__area, int __off,
				       intptr_t *__v, intptr_t __expect,
				       intptr_t *__v2, intptr_t __newv2,
				       intptr_t __newv, int __cpu,
				       int __release)
{
  __RSEQ_ASM_SIZE_HINT;
  if (__release)
    __RSEQ_PERCPU_TRYSTOREV_STOREV (__RSEQ_ASM_OP_FINAL_STORE_RELEASE);
  else
    __RSEQ_PERCPU_TRYSTOREV_STOREV (__RSEQ_ASM_OP_FINAL_STORE);
  __RSEQ_PERCPU_RESULTS;
}

/* if (*V == EXPECT) { memcpy (DST, SRC, LEN); *V = NEWV; }  */
#define __RSEQ_PERCPU_TRYMEMCPY_STOREV(final_store)			\
  __asm__ __volatile__ goto (__RSEQ_ASM_BEGIN				\
			     __RSEQ_PERCPU_INJECT_ASM (2)			\
			     __RSEQ_ASM_OP_CMPEQ (v, expect, __rseq_cmpfail) \
			     __RSEQ_ASM_DEFINE_EXIT_POINT (__RSEQ_L_START, \
							   __rseq_cmpfail) \
			     __RSEQ_PERCPU_INJECT_ASM (3)			\
			     __RSEQ_ASM_OP_MEMCPY (dst, src, len,	\
						   __RSEQ_L_LOOP,	\
						   __RSEQ_L_DONE)	\
			     __RSEQ_PERCPU_INJECT_ASM (4)			\
			     __RSEQ_ASM_COMMIT (final_store (newv, v))	\
			     __RSEQ_ASM_END				\
			     : /* No outputs.  */			\
			     : __RSEQ_ASM_AREA_INPUTS (__area, __off, __cpu), \
			       __RSEQ_ASM_VAR (v, __v),			\
			       __RSEQ_ASM_VAL (expect, __expect),	\
			       __RSEQ_ASM_MEMCPY_INPUTS (__dst, __src, __len), \
			       __RSEQ_ASM_VAL (newv, __newv)		\
			       __RSEQ_PERCPU_INJECT_INPUT			\
			     : __RSEQ_ASM_CLOBBERS			\
			       __RSEQ_ASM_MEMCPY_CLOBBERS		\
			       __RSEQ_PERCPU_INJECT_CLOBBER		\
			     : __rseq_abort, __rseq_cmpfail,		\
			       __rseq_cpu_changed)

__RSEQ_INLINE_HELPER int
__rseq_percpu_cmpeqv_trymemcpy_storev (struct rseq *__area, int __off,
				       intptr_t *__v, intptr_t __expect,
				       void *__dst, const void *__src,
				       size_t __len, intptr_t __newv,
				       int __cpu, int __release)
{
  __RSEQ_ASM_SIZE_HINT;
  if (__release)
    __RSEQ_PERCPU_TRYMEMCPY_STOREV (__RSEQ_ASM_OP_FINAL_STORE_RELEASE);
  else
    __RSEQ_PERCPU_TRYMEMCPY_STOREV (__RSEQ_ASM_OP_FINAL_STORE);
  __RSEQ_PERCPU_RESULTS;
}
