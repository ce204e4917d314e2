/* The per-CPU operations of <sys/rseq-percpu.h>, each described once.
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
# error "Never include <bits/rseq-percpu-table.h> directly; use <sys/rseq-percpu.h> instead."
#endif

/* __RSEQ_PERCPU_OPERATIONS (OP) expands OP once per operation, with
     NAME	  the operation is rseq_percpu_NAME;
     PARAMS	  its parenthesized parameter list, FIELD first and CPU
		  last;
     ARGS	  the same names as a call's argument list;
     SECTION	  the critical section of <bits/rseq-percpu-ops.h> that
		  makes one attempt;
     SECTION_ARGS its arguments: the area, __coff (the offset of the CPU
		  field, a constant where the section is used), then the
		  operation's own;
     VECTOR	  the equivalent cpu_opv vector of the fallback, an
		  expression of the parameters (only libc expands it);
     RELEASE	  1 for the release form of an operation (see
		  __RSEQ_PERCPU_WITH_RELEASE), else 0: the section's
		  __release argument.
   <sys/rseq-percpu.h> declares the operations and their libc
   continuations, defines the single attempts (__rseq_percpu_try_NAME)
   and the inline versions from it; libc defines the functions and the
   continuations.  */
#define __RSEQ_PERCPU_OPERATIONS(OP)					\
  /* If *V == EXPECT, store NEWV into *V.  */				\
  OP (cmpeqv_storev,							\
      (int __field, intptr_t *__v, intptr_t __expect, intptr_t __newv,	\
       int __cpu),							\
      (__field, __v, __expect, __newv, __cpu),				\
      __rseq_percpu_cmpeqv_storev,					\
      (__area, __coff, __v, __expect, __newv, __cpu),			\
      cpu_opv_cmpstore (__v, __expect, __newv, __cpu), 0)		\
  /* *V += COUNT.  */							\
  OP (addv,								\
      (int __field, intptr_t *__v, intptr_t __count, int __cpu),	\
      (__field, __v, __count, __cpu),					\
      __rseq_percpu_addv,						\
      (__area, __coff, __v, __count, __cpu),				\
      cpu_opv_add (__v, __count, sizeof *__v, __cpu), 0)		\
  /* If *V != EXPECTNOT, store *V into *LOAD, then store the		\
     pointer-sized value at *V + VOFFP into *V (the pop of a linked	\
     list).  */								\
  OP (cmpnev_storeoffp_load,						\
      (int __field, intptr_t *__v, intptr_t __expectnot, long int __voffp, \
       intptr_t *__load, int __cpu),					\
      (__field, __v, __expectnot, __voffp, __load, __cpu),		\
      __rseq_percpu_cmpnev_storeoffp_load,				\
      (__area, __coff, __v, __expectnot, __voffp, __load, __cpu),	\
      __cpu_opv_cmpnev_storeoffp_load (__v, __expectnot, __voffp, __load, \
				       __cpu), 0)			\
  /* If *V == EXPECT and *V2 == EXPECT2, store NEWV into *V.  */	\
  OP (cmpeqv_cmpeqv_storev,						\
      (int __field, intptr_t *__v, intptr_t __expect, intptr_t *__v2,	\
       intptr_t __expect2, intptr_t __newv, int __cpu),			\
      (__field, __v, __expect, __v2, __expect2, __newv, __cpu),		\
      __rseq_percpu_cmpeqv_cmpeqv_storev,				\
      (__area, __coff, __v, __expect, __v2, __expect2, __newv, __cpu),	\
      cpu_opv_2cmp1store (__v, __expect, __v2, __expect2, __newv, __cpu), \
      0)								\
  /* If *V == EXPECT, store NEWV2 into *V2 (try store), then NEWV into	\
     *V (commit).  */							\
  __RSEQ_PERCPU_WITH_RELEASE (OP, cmpeqv_trystorev_storev,		\
      (int __field, intptr_t *__v, intptr_t __expect, intptr_t *__v2,	\
       intptr_t __newv2, intptr_t __newv, int __cpu),			\
      (__field, __v, __expect, __v2, __newv2, __newv, __cpu),		\
      __rseq_percpu_cmpeqv_trystorev_storev,				\
      (__area, __coff, __v, __expect, __v2, __newv2, __newv, __cpu,	\
       __release),							\
      cpu_opv_1cmp2store (__v, __expect, __v2, __newv2, __newv, __cpu))	\
  /* If *V == EXPECT, copy LEN bytes from SRC to DST (try stores), then \
     store NEWV into *V (commit).  */					\
  __RSEQ_PERCPU_WITH_RELEASE (OP, cmpeqv_trymemcpy_storev,		\
      (int __field, intptr_t *__v, intptr_t __expect, void *__dst,	\
       const void *__src, size_t __len, intptr_t __newv, int __cpu),	\
      (__field, __v, __expect, __dst, __src, __len, __newv, __cpu),	\
      __rseq_percpu_cmpeqv_trymemcpy_storev,				\
      (__area, __coff, __v, __expect, __dst, __src, __len, __newv, __cpu, \
       __release),							\
      cpu_opv_cmpstorememcpy (__v, __expect, __dst, __src, __len, __newv, \
			      __cpu))

/* An operation whose commit has a release form: rseq_percpu_NAME, and
   rseq_percpu_NAME_release, which orders the try stores before the
   commit for other CPUs.  Their sections are one with a RELEASE
   argument, __release in SECTION_ARGS.  cpu_opv orders every store
   after the operations before it, so both have the same vector.  */
#define __RSEQ_PERCPU_WITH_RELEASE(OP, name, params, args, section,	\
				   section_args, vector)		\
  OP (name, params, args, section, section_args, vector, 0)		\
  OP (name##_release, params, args, section, section_args, vector, 1)
