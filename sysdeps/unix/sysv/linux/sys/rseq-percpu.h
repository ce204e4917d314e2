/* Per-CPU operations built on restartable sequences.
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
#define _SYS_RSEQ_PERCPU_H 1

#include <features.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/rseq.h>

/* Each operation runs as one restartable sequence on the CPU CPU of the
   calling thread: it first checks that the thread still runs there,
   then does its loads and compares, and commits with a single ordinary
   store as its last instruction.  If the thread is preempted, migrated
   or interrupted by a signal before the commit, the kernel moves it to
   the abort handler and nothing is committed.

   All operations return
     0   done: the final store was committed;
     >0  a compare failed: nothing was written;
     <0  not done: nothing was committed.  Read the CPU again with
	 rseq_percpu_current_cpu and retry.

   A sequence aborts when the kernel restarts it: the thread was
   preempted, migrated or got a signal inside it.  A thread found on
   another CPU than CPU as the sequence starts has nothing to restart:
   the operation fails with EAGAIN at once.  rseq_percpu_aborts counts
   the restarts only, so it matches what the kernel's rseq_ip_fixup
   trace event reports for the thread.  A debugger that single-steps
   through a sequence aborts it every time, so an operation retries it
   at most RSEQ_PERCPU_RETRIES times and then falls back to the cpu_opv
   system call (<sys/cpu_opv.h>), which performs the same operation on
   CPU with preemption disabled, atomically with respect to the
   sequences running there, and returns 0 or >0 like the sequence.  The
   fallback is for RSEQ_PERCPU_INDEX_CPU_ID only: a concurrency ID is
   not a CPU.

   Whenever an operation returns <0 it sets errno, inline or not:
     EAGAIN  the sequence aborted and no fallback ran
	     (RSEQ_PERCPU_INDEX_MM_CID, rseq_percpu_set_fallback
	     (RSEQ_PERCPU_FALLBACK_NEVER)), or CPU is no longer the CPU
	     of the calling thread (it migrated before or during the
	     call): read the CPU again and retry;
     ENOSYS  per-CPU operations cannot run on this thread (see
	     rseq_percpu_current_cpu), or the fallback was needed and the
	     kernel has no cpu_opv, as upstream Linux: the caller's retry
	     loop then works as it always did, except under
	     single-stepping, where it cannot make progress;
     EINVAL  FIELD is not an RSEQ_PERCPU_INDEX_* value, CPU is not a
	     possible CPU (negative, or not below the number of configured
	     CPUs, get_nprocs_conf), or V is not aligned to intptr_t.

   Every pointer argument must be valid (the operations are declared
   nonnull).  V, the target of the commit, must be aligned to intptr_t,
   as any intptr_t pointer must be in C: the commit is one store that
   the loads of other CPUs and of cpu_opv see whole.  The operations
   check it before anything runs, inline and in libc alike (a
   misaligned V fails with EINVAL, and nothing is written); V2, DST, SRC
   and LOAD are the caller's to get right.

   Only the final store is a commit.  The "try" stores of the
   trystorev and trymemcpy operations happen before it and may be
   left behind by an aborted sequence; they must target memory that is
   not published until the final store (a free slot of a per-CPU
   buffer, for example).  So does the store to *LOAD of
   cmpnev_storeoffp_load: an aborted attempt may leave *LOAD
   changed, so *LOAD must be the caller's own memory and is only
   meaningful when the operation returns 0.

   The CPU number is either the cpu_id the kernel maintains
   (RSEQ_PERCPU_INDEX_CPU_ID) or the memory-map concurrency ID
   (RSEQ_PERCPU_INDEX_MM_CID, Linux 6.3 and later), a compact index below both
   the number of CPUs and the number of threads of the process, suited
   to per-thread-group arrays.  CPU must be the value
   rseq_percpu_current_cpu returned for the same field.

   The operations are inline when compiling with optimization (any
   -O level but -O0, with GCC or Clang) on an architecture with rseq
   critical sections (x86_64, i386, aarch64, ARMv7 and later in A32 or
   T32, little-endian, and 64-bit powerpc), and otherwise calls to the same
   functions in libc (symbol version RSEQ_1.0), which is also what
   foreign function interfaces use.  The inline versions make one
   attempt and leave retries, the fallback and errno to libc, so both
   behave alike.  Define RSEQ_PERCPU_NO_INLINE before including this
   header to always call libc.  */

enum
{
  RSEQ_PERCPU_INDEX_CPU_ID = 0,	/* Index by cpu_id.  */
  RSEQ_PERCPU_INDEX_MM_CID = 1	/* Index by mm_cid.  */
};

/* Attempts of a sequence before falling back to cpu_opv.  */
#define RSEQ_PERCPU_RETRIES 8

/* Per-thread fallback modes.  */
enum
{
  RSEQ_PERCPU_FALLBACK_AUTO = 0,	/* cpu_opv after RSEQ_PERCPU_RETRIES
					   aborts (the default).  */
  RSEQ_PERCPU_FALLBACK_NEVER = 1,	/* Return <0 after each abort.  */
  RSEQ_PERCPU_FALLBACK_ALWAYS = 2	/* cpu_opv at once, for testing
					   and debugging.  */
};

__BEGIN_DECLS

/* Set the fallback mode of the calling thread; return the previous one,
   or -1 with errno EINVAL for an unknown MODE.  RSEQ_PERCPU_FALLBACK_ALWAYS
   applies to the libc functions; an inline operation still makes its
   one attempt first.  */
extern int rseq_percpu_set_fallback (int __mode) __THROW;

/* The number of cpu_opv system calls the calling thread's operations
   have made as their fallback, whatever the kernel answered (one per
   cpu_opv trace event of the thread in those operations; a list pop
   whose head changed under it makes two).  */
extern unsigned long int rseq_percpu_fallbacks (void) __THROW;

/* The number of attempts of the calling thread's operations, inline
   and in libc, that the kernel aborted.  */
extern unsigned long int rseq_percpu_aborts (void) __THROW;

/* The CPU the calling thread runs on, for indexing per-CPU data and as
   the CPU argument of the operations (cpu_id_start, or mm_cid, at the
   time of the call).  Returns -1 if per-CPU operations cannot run on
   this thread: rseq is not registered, the kernel does not provide the
   requested field, FIELD is invalid, or the architecture has no rseq
   critical sections; errno is then ENOSYS, or EINVAL for an invalid
   FIELD.  */
extern int rseq_percpu_current_cpu (int __field) __THROW;

/* The libc continuations of the inline versions (see below);
   not for direct use.  __rseq_percpu_cpu_changed is the result of an
   attempt that found the thread on another CPU than CPU before it
   started: -1 with errno EAGAIN, or EINVAL when CPU is not a possible
   CPU (ENOSYS or EINVAL if per-CPU operations cannot run at all), not
   an abort.  */
extern int __rseq_percpu_cpu_changed (int __field, int __cpu) __THROW;
extern int __rseq_percpu_current_cpu_slow (int __field) __THROW;

/* Each operation of <bits/rseq-percpu-table.h>, and its libc
   continuation.  */
#include <bits/rseq-percpu-table.h>
#define __RSEQ_PERCPU_DECLARE(name, params, args, section, section_args, \
			      vector, release)				\
  extern int rseq_percpu_##name params __THROW __nonnull (());		\
  extern int __rseq_percpu_##name##_slow params __THROW __nonnull (());
__RSEQ_PERCPU_OPERATIONS (__RSEQ_PERCPU_DECLARE)
#undef __RSEQ_PERCPU_DECLARE

__END_DECLS

/* Not an interface: stress tests inject delays at numbered points
   inside the inline critical sections (see <bits/rseq-percpu-ops.h>)
   by defining all three before including this header.  The names are
   reserved, so that no program defines them by accident.  */
#ifndef __RSEQ_PERCPU_INJECT_ASM
# define __RSEQ_PERCPU_INJECT_ASM(n)
# define __RSEQ_PERCPU_INJECT_INPUT
# define __RSEQ_PERCPU_INJECT_CLOBBER
#endif

/* What the single attempts below return when the CPU check at the
   start of the section failed: the caller's CPU is stale, and nothing
   ran or was restarted.  */
#define __RSEQ_PERCPU_CPU_CHANGED (-2)

/* The architecture's critical sections, if any: defines
   __RSEQ_PERCPU_ARCH and __RSEQ_INLINE_HELPER __rseq_percpu_<op> functions
   taking the area and the offset of the CPU field.  */
#include <bits/rseq-percpu.h>

#ifdef __RSEQ_PERCPU_ARCH

/* Offset in AREA of the field holding the CPU number for FIELD, or -1
   if no operation may run on it: there is no area, the kernel does not
   provide the field, or (for mm_cid) the area is not registered.  A
   vfork child has no area (__rseq_area_pointer).  A section indexed by
   cpu_id finds an unregistered area by itself (its CPU check fails on a
   negative cpu_id); mm_cid keeps its last value after unregistration,
   so it is checked here, where the inline and the libc operations both
   pass.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_field_offset (struct rseq *__area, int __field)
{
  if (__area == 0)
    return -1;
  if (__field == RSEQ_PERCPU_INDEX_CPU_ID)
    return __RSEQ_AREA_CPU_ID_OFFSET;
  if (__field == RSEQ_PERCPU_INDEX_MM_CID
      && __rseq_area_has_field (__RSEQ_AREA_MM_CID_OFFSET)
      && __rseq_area_load (__area, __RSEQ_AREA_CPU_ID_OFFSET) >= 0)
    return __RSEQ_AREA_MM_CID_OFFSET;
  return -1;
}

/* The CPU number for FIELD, or -1.  Shared by the inline functions
   below and libc's out-of-line ones.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_current_cpu (int __field)
{
  struct rseq *__area = __rseq_area_pointer ();
  int __off = __rseq_percpu_field_offset (__area, __field);

  if (__area == 0 || __off < 0
      || __rseq_area_load (__area, __RSEQ_AREA_CPU_ID_OFFSET) < 0)
    return -1;
  /* cpu_id_start rather than cpu_id: always a valid CPU number.  */
  return __rseq_area_load (__area, __field == RSEQ_PERCPU_INDEX_CPU_ID
			   ? __RSEQ_AREA_CPU_ID_START_OFFSET : __off);
}

/* Whether V, an operation's commit target, is not aligned to intptr_t
   (libc then fails the operation with EINVAL).  Folded away where the
   compiler knows the pointer's alignment.  */
__RSEQ_INLINE_HELPER int
__rseq_percpu_misaligned (const intptr_t *__v)
{
  return ((uintptr_t) __v & (__alignof__ (intptr_t) - 1)) != 0;
}

/* One attempt of each operation: the critical section alone, with the
   results described at the top of this file (-1 when it aborted),
   __RSEQ_PERCPU_CPU_CHANGED when the thread was not on CPU as it
   started, or -1 when per-CPU operations cannot run or V is misaligned
   (libc's continuation tells them apart).  The offset of the
   CPU field, __coff, is a constant in each branch so that the critical
   section addresses the field relative to the register holding the
   area; when FIELD is a constant, only one branch remains.  */

#define __RSEQ_PERCPU_DEFINE_TRY(name, params, args, section,		\
				 section_args, vector, release)		\
  __RSEQ_INLINE_HELPER int						\
  __rseq_percpu_try_##name params					\
  {									\
    struct rseq *__area = __rseq_area_pointer ();			\
    int __off = __rseq_percpu_field_offset (__area, __field);		\
    const int __release = (release);					\
									\
    (void) __release;							\
    if (__area == 0 || __off < 0					\
	|| __rseq_percpu_misaligned (__v))				\
      return -1;							\
    if (__off == __RSEQ_AREA_CPU_ID_OFFSET)				\
      {									\
	const int __coff = __RSEQ_AREA_CPU_ID_OFFSET;			\
	return section section_args;					\
      }									\
    {									\
      const int __coff = __RSEQ_AREA_MM_CID_OFFSET;			\
      return section section_args;					\
    }									\
  }
__RSEQ_PERCPU_OPERATIONS (__RSEQ_PERCPU_DEFINE_TRY)
#undef __RSEQ_PERCPU_DEFINE_TRY

/* Inline at every optimization level but -O0, unlike the other
   extern inlines of glibc (__USE_EXTERN_INLINES excludes -Os): the
   critical section in the caller's code is the point of these
   functions.  */
# if defined __OPTIMIZE__ && !defined __NO_INLINE__ \
  && defined __extern_always_inline && !defined __RSEQ_PERCPU_NO_INLINE \
  && !defined RSEQ_PERCPU_NO_INLINE

__BEGIN_DECLS

/* The inline versions make one attempt.  When it fails they call the
   libc function __rseq_percpu_OP_slow, which counts the aborted
   attempt and then does what rseq_percpu_OP does: retries, the cpu_opv
   fallback (see rseq_percpu_set_fallback) and errno.  The
   continuation has a name of its own because a compiler may discard an
   inline definition that calls its own symbol (Clang does), and would
   then never inline the critical section.  */

__extern_always_inline int
__NTH (rseq_percpu_current_cpu (int __field))
{
  int __cpu = __rseq_percpu_current_cpu (__field);

  if (__glibc_likely (__cpu >= 0))
    return __cpu;
  return __rseq_percpu_current_cpu_slow (__field);
}

#define __RSEQ_PERCPU_DEFINE_INLINE(name, params, args, section,	\
				    section_args, vector, release)	\
  __extern_always_inline int						\
  __NTH (rseq_percpu_##name params)					\
  {									\
    int __ret = __rseq_percpu_try_##name args;				\
									\
    if (__glibc_likely (__ret >= 0))					\
      return __ret;							\
    if (__ret == __RSEQ_PERCPU_CPU_CHANGED)				\
      return __rseq_percpu_cpu_changed (__field, __cpu);		\
    return __rseq_percpu_##name##_slow args;				\
  }
__RSEQ_PERCPU_OPERATIONS (__RSEQ_PERCPU_DEFINE_INLINE)
#undef __RSEQ_PERCPU_DEFINE_INLINE

__END_DECLS

# endif /* Inline.  */
#endif /* __RSEQ_PERCPU_ARCH */

#endif /* sys/rseq-percpu.h */
