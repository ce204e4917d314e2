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

/* The per-CPU operations for callers that do not inline them, and the
   retries and cpu_opv fallback for those that do: an inline operation
   that aborts calls the function of the same name here.  */

#define __RSEQ_PERCPU_NO_INLINE 1
#include <cpu_opv-internal.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/rseq-percpu.h>

/* Per-thread fallback mode, and counts of aborted attempts and of
   operations done by cpu_opv.  */
static __thread int fallback_mode;
static __thread unsigned long int abort_count;
static __thread unsigned long int fallback_count;

int
rseq_percpu_set_fallback (int mode)
{
  if (mode != RSEQ_PERCPU_FALLBACK_AUTO
      && mode != RSEQ_PERCPU_FALLBACK_NEVER
      && mode != RSEQ_PERCPU_FALLBACK_ALWAYS)
    {
      __set_errno (EINVAL);
      return -1;
    }
  int old = fallback_mode;
  fallback_mode = mode;
  return old;
}

unsigned long int
rseq_percpu_fallbacks (void)
{
  return fallback_count;
}

unsigned long int
rseq_percpu_aborts (void)
{
  return abort_count;
}

void
__rseq_percpu_count_abort (void)
{
  ++abort_count;
}

#ifdef __RSEQ_PERCPU_ARCH

static bool
may_fall_back (int field)
{
  return field == RSEQ_PERCPU_CPU_ID
	 && fallback_mode != RSEQ_PERCPU_FALLBACK_NEVER;
}

/* The result of a cpu_opv fallback in the operations' terms: 0 done,
   1 a compare failed, -1 not done (errno from cpu_opv).  */
static int
fallback_result (int ret)
{
  if (ret < 0)
    return -1;
  ++fallback_count;
  return ret > 0;
}

/* Make up to RSEQ_PERCPU_RETRIES attempts of the critical section
   ATTEMPT, then run FALLBACK, an equivalent cpu_opv vector, unless the
   thread's mode or FIELD rule the fallback out.  */
#define RSEQ_PERCPU_OP(attempt, fallback)				\
  do									\
    {									\
      bool fall_back = may_fall_back (field);				\
      if (!fall_back || fallback_mode != RSEQ_PERCPU_FALLBACK_ALWAYS)	\
	for (int tries = 0; tries < RSEQ_PERCPU_RETRIES; tries++)	\
	  {								\
	    int ret = (attempt);					\
	    if (ret >= 0)						\
	      return ret;						\
	    ++abort_count;						\
	    if (!fall_back)						\
	      return ret;						\
	  }								\
      return fallback_result (fallback);				\
    }									\
  while (0)

int
rseq_percpu_current_cpu (int field)
{
  int cpu = __rseq_percpu_current_cpu (field);
  if (cpu < 0)
    __set_errno (field == RSEQ_PERCPU_CPU_ID || field == RSEQ_PERCPU_MM_CID
		 ? ENOSYS : EINVAL);
  return cpu;
}

int
rseq_percpu_cmpeqv_storev (int field, intptr_t *v, intptr_t expect,
			   intptr_t newv, int cpu)
{
  RSEQ_PERCPU_OP (__rseq_percpu_try_cmpeqv_storev (field, v, expect, newv,
						   cpu),
		  cpu_opv_cmpstore (v, expect, newv, cpu));
}

int
rseq_percpu_addv (int field, intptr_t *v, intptr_t count, int cpu)
{
  RSEQ_PERCPU_OP (__rseq_percpu_try_addv (field, v, count, cpu),
		  cpu_opv_add (v, count, sizeof *v, cpu));
}

int
rseq_percpu_cmpnev_storeoffp_load (int field, intptr_t *v,
				   intptr_t expectnot, long int voffp,
				   intptr_t *load, int cpu)
{
  RSEQ_PERCPU_OP (__rseq_percpu_try_cmpnev_storeoffp_load (field, v,
							   expectnot, voffp,
							   load, cpu),
		  __cpu_opv_cmpnev_storeoffp_load (v, expectnot, voffp, load,
						   cpu));
}

int
rseq_percpu_cmpeqv_cmpeqv_storev (int field, intptr_t *v, intptr_t expect,
				  intptr_t *v2, intptr_t expect2,
				  intptr_t newv, int cpu)
{
  RSEQ_PERCPU_OP (__rseq_percpu_try_cmpeqv_cmpeqv_storev (field, v, expect,
							  v2, expect2, newv,
							  cpu),
		  cpu_opv_2cmp1store (v, expect, v2, expect2, newv, cpu));
}

/* cpu_opv orders every store after the operations before it, so the
   fallback of the _release variants is the same vector; only the
   sequences differ.  */

static __always_inline int
trystorev_storev (int field, intptr_t *v, intptr_t expect, intptr_t *v2,
		  intptr_t newv2, intptr_t newv, int cpu, int release)
{
  RSEQ_PERCPU_OP (__rseq_percpu_try_cmpeqv_trystorev_storev (field, v,
							     expect, v2,
							     newv2, newv,
							     cpu, release),
		  cpu_opv_1cmp2store (v, expect, v2, newv2, newv, cpu));
}

int
rseq_percpu_cmpeqv_trystorev_storev (int field, intptr_t *v,
				     intptr_t expect, intptr_t *v2,
				     intptr_t newv2, intptr_t newv, int cpu)
{
  return trystorev_storev (field, v, expect, v2, newv2, newv, cpu, 0);
}

int
rseq_percpu_cmpeqv_trystorev_storev_release (int field, intptr_t *v,
					     intptr_t expect, intptr_t *v2,
					     intptr_t newv2, intptr_t newv,
					     int cpu)
{
  return trystorev_storev (field, v, expect, v2, newv2, newv, cpu, 1);
}

static __always_inline int
trymemcpy_storev (int field, intptr_t *v, intptr_t expect, void *dst,
		  const void *src, size_t len, intptr_t newv, int cpu,
		  int release)
{
  RSEQ_PERCPU_OP (__rseq_percpu_try_cmpeqv_trymemcpy_storev (field, v,
							     expect, dst,
							     src, len, newv,
							     cpu, release),
		  cpu_opv_cmpstorememcpy (v, expect, dst, src, len, newv,
					  cpu));
}

int
rseq_percpu_cmpeqv_trymemcpy_storev (int field, intptr_t *v,
				     intptr_t expect, void *dst,
				     const void *src, size_t len,
				     intptr_t newv, int cpu)
{
  return trymemcpy_storev (field, v, expect, dst, src, len, newv, cpu, 0);
}

int
rseq_percpu_cmpeqv_trymemcpy_storev_release (int field, intptr_t *v,
					     intptr_t expect, void *dst,
					     const void *src, size_t len,
					     intptr_t newv, int cpu)
{
  return trymemcpy_storev (field, v, expect, dst, src, len, newv, cpu, 1);
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
