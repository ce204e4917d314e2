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
   continuations (__rseq_percpu_OP_slow) of the inline versions whose
   attempt failed.  Both paths end here, so they report the same results
   and set errno alike.  */

#define __RSEQ_PERCPU_NO_INLINE 1
#include <cpu_opv-internal.h>
#include <errno.h>
#include <stdbool.h>
#include <sys/rseq-percpu.h>
#include <sys/sysinfo.h>

/* The functions call each other inside libc without the PLT.  */
libc_hidden_proto (rseq_percpu_current_cpu)
libc_hidden_proto (__rseq_percpu_cpu_changed)
#define HIDDEN_PROTO(name, params, args, section, section_args, vector,	\
		     release)						\
  libc_hidden_proto (rseq_percpu_##name)
__RSEQ_PERCPU_OPERATIONS (HIDDEN_PROTO)

/* Per-thread fallback mode, and counts of aborted attempts and of the
   cpu_opv system calls made by the fallback.  */
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

static bool
valid_field (int field)
{
  return field == RSEQ_PERCPU_INDEX_CPU_ID
	 || field == RSEQ_PERCPU_INDEX_MM_CID;
}

/* Whether CPU can be a CPU number of either field: cpu_id and mm_cid
   are both below the number of configured CPUs.  Only asked once an
   operation cannot run on CPU, to tell a stale CPU (EAGAIN: read it
   again) from one that never was (EINVAL).  */
static bool
possible_cpu (int cpu)
{
  return cpu >= 0 && cpu < __get_nprocs_conf ();
}

/* Set errno for an operation asked to run on CPU while the thread runs
   on another one.  */
static void
set_errno_not_current (int cpu)
{
  __set_errno (possible_cpu (cpu) ? EAGAIN : EINVAL);
}

/* An attempt found the thread on another CPU than CPU: no abort,
   and no point in retrying on a CPU the caller no longer runs on.
   rseq_percpu_current_cpu sets errno when no CPU is usable at all.  */
int
__rseq_percpu_cpu_changed (int field, int cpu)
{
  if (rseq_percpu_current_cpu (field) >= 0)
    set_errno_not_current (cpu);
  return -1;
}
libc_hidden_def (__rseq_percpu_cpu_changed)

#ifdef __RSEQ_PERCPU_ARCH

int
rseq_percpu_current_cpu (int field)
{
  int cpu = __rseq_percpu_current_cpu (field);
  if (cpu < 0)
    __set_errno (valid_field (field) ? ENOSYS : EINVAL);
  return cpu;
}
libc_hidden_def (rseq_percpu_current_cpu)
strong_alias (rseq_percpu_current_cpu, __rseq_percpu_current_cpu_slow)

static bool
may_fall_back (int field)
{
  return field == RSEQ_PERCPU_INDEX_CPU_ID
	 && fallback_mode != RSEQ_PERCPU_FALLBACK_NEVER;
}

/* Whether an operation on CPU may start: per-CPU operations can run on
   this thread and CPU is still the thread's CPU for FIELD.  A CPU that
   is no longer current (the caller migrated after reading it) must not
   be run there through cpu_opv: that would move the thread back and
   hide the migration from the caller, which is told to read its CPU
   again instead.  Sets errno when it returns false.  */
static bool
may_start (int field, int cpu)
{
  int current = rseq_percpu_current_cpu (field);
  if (current < 0)
    return false;
  if (current != cpu)
    {
      set_errno_not_current (cpu);
      return false;
    }
  return true;
}

/* Whether V, the commit target, is aligned to intptr_t; sets errno
   when it is not.  */
static bool
aligned_target (const intptr_t *v)
{
  if (__rseq_percpu_misaligned (v))
    {
      __set_errno (EINVAL);
      return false;
    }
  return true;
}

/* The result of a cpu_opv fallback in the operations' terms: 0 done,
   1 a compare failed, -1 not done (errno from cpu_opv).  */
static int
fallback_result (int ret)
{
  if (ret < 0)
    return -1;
  return ret > 0;
}

/* The body of each operation: make up to RSEQ_PERCPU_RETRIES attempts
   of the critical section ATTEMPT, then run FALLBACK, an equivalent
   cpu_opv vector, unless the thread's mode or FIELD rule the fallback
   out.  */
#define RSEQ_PERCPU_OP(attempt, fallback)				\
  do									\
    {									\
      bool fall_back = may_fall_back (__field);				\
      if (!aligned_target (__v) || !may_start (__field, __cpu))		\
	return -1;							\
      if (!fall_back || fallback_mode != RSEQ_PERCPU_FALLBACK_ALWAYS)	\
	for (int tries = 0; tries < RSEQ_PERCPU_RETRIES; tries++)	\
	  {								\
	    int ret = (attempt);					\
	    if (ret >= 0)						\
	      return ret;						\
	    if (ret == __RSEQ_PERCPU_CPU_CHANGED)			\
	      return __rseq_percpu_cpu_changed (__field, __cpu);	\
	    ++abort_count;						\
	    if (!fall_back)						\
	      {								\
		__set_errno (EAGAIN);					\
		return -1;						\
	      }								\
	  }								\
      if (!may_start (__field, __cpu))					\
	return -1;							\
      unsigned long int calls = __cpu_opv_calls;			\
      int ret = (fallback);						\
      fallback_count += __cpu_opv_calls - calls;			\
      return fallback_result (ret);					\
    }									\
  while (0)

/* Each operation of <bits/rseq-percpu-table.h>, out of line, and the
   continuation of its inline version whose attempt failed: that counts
   the abort (an attempt that could not run at all, or refused a
   misaligned V, is not one), then
   runs the operation as a caller without inlining would.  */
#define DEFINE_OPERATION(name, params, args, section, section_args,	\
			 vector, release)				\
  int									\
  rseq_percpu_##name params						\
  {									\
    RSEQ_PERCPU_OP (__rseq_percpu_try_##name args, vector);		\
  }									\
  libc_hidden_def (rseq_percpu_##name)					\
									\
  int									\
  __rseq_percpu_##name##_slow params					\
  {									\
    if (!__rseq_percpu_misaligned (__v)					\
	&& __rseq_percpu_current_cpu (__field) >= 0)			\
      ++abort_count;							\
    return rseq_percpu_##name args;					\
  }
__RSEQ_PERCPU_OPERATIONS (DEFINE_OPERATION)

#else /* !__RSEQ_PERCPU_ARCH */

/* No critical sections on this architecture: no CPU is usable, and
   every operation fails with ENOSYS (EINVAL for an invalid field), as
   rseq_percpu_current_cpu does.  The _slow continuations exist so that
   every port exports the same symbols; nothing calls them here.  */

int
rseq_percpu_current_cpu (int field)
{
  __set_errno (valid_field (field) ? ENOSYS : EINVAL);
  return -1;
}
libc_hidden_def (rseq_percpu_current_cpu)
strong_alias (rseq_percpu_current_cpu, __rseq_percpu_current_cpu_slow)

# define DEFINE_WITHOUT_SECTIONS(name, params, args, section,		\
				section_args, vector, release)		\
  int									\
  rseq_percpu_##name params						\
  {									\
    return rseq_percpu_current_cpu (__field);				\
  }									\
  libc_hidden_def (rseq_percpu_##name)					\
  strong_alias (rseq_percpu_##name, __rseq_percpu_##name##_slow)
__RSEQ_PERCPU_OPERATIONS (DEFINE_WITHOUT_SECTIONS)
#endif /* !__RSEQ_PERCPU_ARCH */
