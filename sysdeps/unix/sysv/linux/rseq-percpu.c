/* Out-of-line per-CPU operations built on restartable sequences.
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

/* The same critical sections as the inline versions of
   <sys/rseq-percpu.h>, for callers that do not inline (compiling
   without optimization, foreign function interfaces).  */

#define __RSEQ_PERCPU_NO_INLINE 1
#include <errno.h>
#include <sys/rseq-percpu.h>

#ifdef __RSEQ_PERCPU_ARCH

int
rseq_percpu_current_cpu (int __field)
{
  int cpu = __rseq_percpu_current_cpu (__field);
  if (cpu < 0)
    __set_errno (__field == RSEQ_PERCPU_CPU_ID || __field == RSEQ_PERCPU_MM_CID
		 ? ENOSYS : EINVAL);
  return cpu;
}

int
rseq_percpu_cmpeqv_storev (int __field, intptr_t *__v, intptr_t __expect,
			   intptr_t __newv, int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_storev, __v, __expect, __newv, __cpu);
}

int
rseq_percpu_addv (int __field, intptr_t *__v, intptr_t __count, int __cpu)
{
  __RSEQ_PERCPU_CALL (addv, __v, __count, __cpu);
}

int
rseq_percpu_cmpnev_storeoffp_load (int __field, intptr_t *__v,
				   intptr_t __expectnot, long int __voffp,
				   intptr_t *__load, int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpnev_storeoffp_load, __v, __expectnot, __voffp,
		      __load, __cpu);
}

int
rseq_percpu_cmpeqv_cmpeqv_storev (int __field, intptr_t *__v,
				  intptr_t __expect, intptr_t *__v2,
				  intptr_t __expect2, intptr_t __newv,
				  int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_cmpeqv_storev, __v, __expect, __v2, __expect2,
		      __newv, __cpu);
}

int
rseq_percpu_cmpeqv_trystorev_storev (int __field, intptr_t *__v,
				     intptr_t __expect, intptr_t *__v2,
				     intptr_t __newv2, intptr_t __newv,
				     int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_trystorev_storev, __v, __expect, __v2, __newv2,
		      __newv, __cpu, 0);
}

int
rseq_percpu_cmpeqv_trystorev_storev_release (int __field, intptr_t *__v,
					     intptr_t __expect,
					     intptr_t *__v2,
					     intptr_t __newv2,
					     intptr_t __newv, int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_trystorev_storev, __v, __expect, __v2, __newv2,
		      __newv, __cpu, 1);
}

int
rseq_percpu_cmpeqv_trymemcpy_storev (int __field, intptr_t *__v,
				     intptr_t __expect, void *__dst,
				     const void *__src, size_t __len,
				     intptr_t __newv, int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_trymemcpy_storev, __v, __expect, __dst, __src,
		      __len, __newv, __cpu, 0);
}

int
rseq_percpu_cmpeqv_trymemcpy_storev_release (int __field, intptr_t *__v,
					     intptr_t __expect, void *__dst,
					     const void *__src, size_t __len,
					     intptr_t __newv, int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_trymemcpy_storev, __v, __expect, __dst, __src,
		      __len, __newv, __cpu, 1);
}

#else /* !__RSEQ_PERCPU_ARCH */

/* No critical sections on this architecture: no CPU is usable, and
   every operation reports an abort that rseq_percpu_current_cpu then
   explains.  */

int
rseq_percpu_current_cpu (int __field)
{
  __set_errno (ENOSYS);
  return -1;
}

# define NO_CRITICAL_SECTIONS(name, ...)				\
  int name (int __field, __VA_ARGS__)					\
  {									\
    return -1;								\
  }

NO_CRITICAL_SECTIONS (rseq_percpu_cmpeqv_storev, intptr_t *__v,
		      intptr_t __expect, intptr_t __newv, int __cpu)
NO_CRITICAL_SECTIONS (rseq_percpu_addv, intptr_t *__v, intptr_t __count,
		      int __cpu)
NO_CRITICAL_SECTIONS (rseq_percpu_cmpnev_storeoffp_load, intptr_t *__v,
		      intptr_t __expectnot, long int __voffp,
		      intptr_t *__load, int __cpu)
NO_CRITICAL_SECTIONS (rseq_percpu_cmpeqv_cmpeqv_storev, intptr_t *__v,
		      intptr_t __expect, intptr_t *__v2, intptr_t __expect2,
		      intptr_t __newv, int __cpu)
NO_CRITICAL_SECTIONS (rseq_percpu_cmpeqv_trystorev_storev, intptr_t *__v,
		      intptr_t __expect, intptr_t *__v2, intptr_t __newv2,
		      intptr_t __newv, int __cpu)
NO_CRITICAL_SECTIONS (rseq_percpu_cmpeqv_trystorev_storev_release,
		      intptr_t *__v, intptr_t __expect, intptr_t *__v2,
		      intptr_t __newv2, intptr_t __newv, int __cpu)
NO_CRITICAL_SECTIONS (rseq_percpu_cmpeqv_trymemcpy_storev, intptr_t *__v,
		      intptr_t __expect, void *__dst, const void *__src,
		      size_t __len, intptr_t __newv, int __cpu)
NO_CRITICAL_SECTIONS (rseq_percpu_cmpeqv_trymemcpy_storev_release,
		      intptr_t *__v, intptr_t __expect, void *__dst,
		      const void *__src, size_t __len, intptr_t __newv,
		      int __cpu)
#endif /* !__RSEQ_PERCPU_ARCH */
