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

   A sequence aborts when the thread is preempted, migrated or gets a
   signal, or no longer runs on CPU.  A debugger that single-steps
   through a sequence aborts it every time, so an operation retries it
   at most RSEQ_PERCPU_RETRIES times and then falls back to the cpu_opv
   system call (<sys/cpu_opv.h>), which performs the same operation on
   CPU with preemption disabled, atomically with respect to the
   sequences running there, and returns 0 or >0 like the sequence.  The
   fallback is for RSEQ_PERCPU_CPU_ID only: a concurrency ID is not a
   CPU.  Without it (RSEQ_PERCPU_MM_CID, rseq_percpu_set_fallback
   (RSEQ_PERCPU_FALLBACK_NEVER), or a kernel without cpu_opv, such as
   upstream Linux) the operation returns <0 after the attempts, with
   errno set by the libc function: ENOSYS when the kernel has no
   cpu_opv, EINVAL when CPU is not a CPU the thread may run on.  The
   caller's retry loop then works as it always did, except under
   single-stepping, where it cannot make progress.

   Only the final store is a commit.  The "try" stores of the
   trystorev and trymemcpy operations happen before it and may be
   left behind by an aborted sequence; they must target memory that is
   not published until the final store (a free slot of a per-CPU
   buffer, for example).

   The CPU number is either the cpu_id the kernel maintains
   (RSEQ_PERCPU_CPU_ID) or the memory-map concurrency ID
   (RSEQ_PERCPU_MM_CID, Linux 6.3 and later), a compact index below both
   the number of CPUs and the number of threads of the process, suited
   to per-thread-group arrays.  CPU must be the value
   rseq_percpu_current_cpu returned for the same field.

   The operations are inline when compiling with optimization on an
   architecture with rseq critical sections (x86_64 and i386), and
   otherwise calls to the same functions in libc (symbol version
   RSEQ_1.0), which is also what foreign function interfaces use.  The
   inline versions make one attempt and leave retries and the fallback
   to libc.  Define RSEQ_PERCPU_NO_INLINE before including this header
   to always call libc.  */

enum
{
  RSEQ_PERCPU_CPU_ID = 0,	/* Index by cpu_id.  */
  RSEQ_PERCPU_MM_CID = 1	/* Index by mm_cid.  */
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

/* The number of operations the calling thread has completed through the
   cpu_opv fallback.  */
extern unsigned long int rseq_percpu_fallbacks (void) __THROW;

/* The number of aborted attempts of the calling thread's operations,
   inline and in libc.  */
extern unsigned long int rseq_percpu_aborts (void) __THROW;

/* Counts an aborted inline attempt; internal to the inline versions.  */
extern void __rseq_percpu_count_abort (void) __THROW;

/* The CPU the calling thread runs on, for indexing per-CPU data and as
   the CPU argument of the operations (cpu_id_start, or mm_cid, at the
   time of the call).  Returns -1 if per-CPU operations cannot run on
   this thread: rseq is not registered, the kernel does not provide the
   requested field, FIELD is invalid, or the architecture has no rseq
   critical sections.  */
extern int rseq_percpu_current_cpu (int __field) __THROW;

/* If *V == EXPECT, store NEWV into *V.  */
extern int rseq_percpu_cmpeqv_storev (int __field, intptr_t *__v,
				      intptr_t __expect, intptr_t __newv,
				      int __cpu) __THROW;

/* *V += COUNT.  */
extern int rseq_percpu_addv (int __field, intptr_t *__v, intptr_t __count,
			     int __cpu) __THROW;

/* If *V != EXPECTNOT, store *V into *LOAD, then store the pointer-sized
   value at *V + VOFFP into *V (the pop of a linked list).  */
extern int rseq_percpu_cmpnev_storeoffp_load (int __field, intptr_t *__v,
					      intptr_t __expectnot,
					      long int __voffp,
					      intptr_t *__load,
					      int __cpu) __THROW;

/* If *V == EXPECT and *V2 == EXPECT2, store NEWV into *V.  */
extern int rseq_percpu_cmpeqv_cmpeqv_storev (int __field, intptr_t *__v,
					     intptr_t __expect,
					     intptr_t *__v2,
					     intptr_t __expect2,
					     intptr_t __newv,
					     int __cpu) __THROW;

/* If *V == EXPECT, store NEWV2 into *V2 (try store), then NEWV into *V
   (commit).  The _release variant orders the try store before the
   commit for other CPUs.  */
extern int rseq_percpu_cmpeqv_trystorev_storev (int __field, intptr_t *__v,
						intptr_t __expect,
						intptr_t *__v2,
						intptr_t __newv2,
						intptr_t __newv,
						int __cpu) __THROW;
extern int rseq_percpu_cmpeqv_trystorev_storev_release (int __field,
							intptr_t *__v,
							intptr_t __expect,
							intptr_t *__v2,
							intptr_t __newv2,
							intptr_t __newv,
							int __cpu) __THROW;

/* If *V == EXPECT, copy LEN bytes from SRC to DST (try stores), then
   store NEWV into *V (commit).  The _release variant orders the copy
   before the commit for other CPUs.  */
extern int rseq_percpu_cmpeqv_trymemcpy_storev (int __field, intptr_t *__v,
						intptr_t __expect,
						void *__dst,
						const void *__src,
						size_t __len,
						intptr_t __newv,
						int __cpu) __THROW;
extern int rseq_percpu_cmpeqv_trymemcpy_storev_release (int __field,
							intptr_t *__v,
							intptr_t __expect,
							void *__dst,
							const void *__src,
							size_t __len,
							intptr_t __newv,
							int __cpu) __THROW;

__END_DECLS

/* Hooks for tests that inject delays at numbered points inside the
   critical sections (see the generic bits/rseq-percpu.h).  Define all
   three before including this header; the operations must then be
   inlined (compile with optimization) for the hooks to take effect.  */
#ifndef RSEQ_PERCPU_INJECT_ASM
# define RSEQ_PERCPU_INJECT_ASM(n)
# define RSEQ_PERCPU_INJECT_INPUT
# define RSEQ_PERCPU_INJECT_CLOBBER
#endif

/* The architecture's critical sections, if any: defines
   __RSEQ_PERCPU_ARCH and static inline __rseq_percpu_<op> functions
   taking the area and the offset of the CPU field.  */
#include <bits/rseq-percpu.h>

#ifdef __RSEQ_PERCPU_ARCH

/* Offset of the field holding the CPU number for FIELD, or -1 if the
   kernel does not provide it.  */
static __always_inline int
__rseq_percpu_field_offset (int __field)
{
  if (__field == RSEQ_PERCPU_CPU_ID)
    return RSEQ_AREA_CPU_ID_OFFSET;
  if (__field == RSEQ_PERCPU_MM_CID
      && __rseq_area_has_field (RSEQ_AREA_MM_CID_OFFSET))
    return RSEQ_AREA_MM_CID_OFFSET;
  return -1;
}

/* Shared by the inline functions below and libc's out-of-line ones.  */
static __always_inline int
__rseq_percpu_current_cpu (int __field)
{
  struct rseq *__area = rseq_area_pointer ();
  int __off = __rseq_percpu_field_offset (__field);
  if (__area == 0 || __off < 0
      || __rseq_area_load (__area, RSEQ_AREA_CPU_ID_OFFSET) < 0)
    return -1;
  /* cpu_id_start rather than cpu_id: always a valid CPU number.  */
  return __rseq_area_load (__area, __field == RSEQ_PERCPU_CPU_ID
			   ? RSEQ_AREA_CPU_ID_START_OFFSET : __off);
}

/* Run OP with the area and the offset of the CPU field, or report an
   abort when per-CPU operations cannot run (the caller then finds out
   from rseq_percpu_current_cpu).  The offset is passed as a constant
   in each branch so that the critical section addresses the field
   relative to the area register; when FIELD is a constant, only one
   branch remains.  */
# define __RSEQ_PERCPU_CALL(op, ...)					\
  struct rseq *__area = rseq_area_pointer ();				\
  int __off = __rseq_percpu_field_offset (__field);			\
  if (__area == 0 || __off < 0)						\
    return -1;								\
  if (__off == RSEQ_AREA_CPU_ID_OFFSET)					\
    return __rseq_percpu_##op (__area, RSEQ_AREA_CPU_ID_OFFSET,		\
			       __VA_ARGS__);				\
  return __rseq_percpu_##op (__area, RSEQ_AREA_MM_CID_OFFSET, __VA_ARGS__)

/* One attempt of each operation: the critical section alone, with the
   results described at the top of this file.  */

static __always_inline int
__rseq_percpu_try_cmpeqv_storev (int __field, intptr_t *__v,
				 intptr_t __expect, intptr_t __newv, int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_storev, __v, __expect, __newv, __cpu);
}

static __always_inline int
__rseq_percpu_try_addv (int __field, intptr_t *__v, intptr_t __count,
			int __cpu)
{
  __RSEQ_PERCPU_CALL (addv, __v, __count, __cpu);
}

static __always_inline int
__rseq_percpu_try_cmpnev_storeoffp_load (int __field, intptr_t *__v,
					 intptr_t __expectnot,
					 long int __voffp, intptr_t *__load,
					 int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpnev_storeoffp_load, __v, __expectnot, __voffp,
		      __load, __cpu);
}

static __always_inline int
__rseq_percpu_try_cmpeqv_cmpeqv_storev (int __field, intptr_t *__v,
					intptr_t __expect, intptr_t *__v2,
					intptr_t __expect2, intptr_t __newv,
					int __cpu)
{
  __RSEQ_PERCPU_CALL (cmpeqv_cmpeqv_storev, __v, __expect, __v2, __expect2,
		      __newv, __cpu);
}

static __always_inline int
__rseq_percpu_try_cmpeqv_trystorev_storev (int __field, intptr_t *__v,
					   intptr_t __expect, intptr_t *__v2,
					   intptr_t __newv2, intptr_t __newv,
					   int __cpu, int __release)
{
  __RSEQ_PERCPU_CALL (cmpeqv_trystorev_storev, __v, __expect, __v2, __newv2,
		      __newv, __cpu, __release);
}

static __always_inline int
__rseq_percpu_try_cmpeqv_trymemcpy_storev (int __field, intptr_t *__v,
					   intptr_t __expect, void *__dst,
					   const void *__src, size_t __len,
					   intptr_t __newv, int __cpu,
					   int __release)
{
  __RSEQ_PERCPU_CALL (cmpeqv_trymemcpy_storev, __v, __expect, __dst, __src,
		      __len, __newv, __cpu, __release);
}

# if defined __USE_EXTERN_INLINES && !defined __RSEQ_PERCPU_NO_INLINE \
  && !defined RSEQ_PERCPU_NO_INLINE

/* The inline versions make one attempt; after an abort they call the
   libc function of the same name, which retries and then falls back to
   cpu_opv (see rseq_percpu_set_fallback).  */

__extern_always_inline int
__NTH (rseq_percpu_current_cpu (int __field))
{
  return __rseq_percpu_current_cpu (__field);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_cmpeqv_storev,
			   (int __field, intptr_t *__v, intptr_t __expect,
			    intptr_t __newv, int __cpu),
			   rseq_percpu_cmpeqv_storev);

__extern_always_inline int
__NTH (rseq_percpu_cmpeqv_storev (int __field, intptr_t *__v,
				  intptr_t __expect, intptr_t __newv,
				  int __cpu))
{
  int __ret = __rseq_percpu_try_cmpeqv_storev (__field, __v, __expect,
					       __newv, __cpu);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_cmpeqv_storev (__field, __v, __expect, __newv,
					   __cpu);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_addv,
			   (int __field, intptr_t *__v, intptr_t __count,
			    int __cpu),
			   rseq_percpu_addv);

__extern_always_inline int
__NTH (rseq_percpu_addv (int __field, intptr_t *__v, intptr_t __count,
			 int __cpu))
{
  int __ret = __rseq_percpu_try_addv (__field, __v, __count, __cpu);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_addv (__field, __v, __count, __cpu);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_cmpnev_storeoffp_load,
			   (int __field, intptr_t *__v, intptr_t __expectnot,
			    long int __voffp, intptr_t *__load, int __cpu),
			   rseq_percpu_cmpnev_storeoffp_load);

__extern_always_inline int
__NTH (rseq_percpu_cmpnev_storeoffp_load (int __field, intptr_t *__v,
					  intptr_t __expectnot,
					  long int __voffp, intptr_t *__load,
					  int __cpu))
{
  int __ret = __rseq_percpu_try_cmpnev_storeoffp_load (__field, __v,
						       __expectnot, __voffp,
						       __load, __cpu);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_cmpnev_storeoffp_load (__field, __v, __expectnot,
						   __voffp, __load, __cpu);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_cmpeqv_cmpeqv_storev,
			   (int __field, intptr_t *__v, intptr_t __expect,
			    intptr_t *__v2, intptr_t __expect2,
			    intptr_t __newv, int __cpu),
			   rseq_percpu_cmpeqv_cmpeqv_storev);

__extern_always_inline int
__NTH (rseq_percpu_cmpeqv_cmpeqv_storev (int __field, intptr_t *__v,
					 intptr_t __expect, intptr_t *__v2,
					 intptr_t __expect2, intptr_t __newv,
					 int __cpu))
{
  int __ret = __rseq_percpu_try_cmpeqv_cmpeqv_storev (__field, __v, __expect,
						      __v2, __expect2,
						      __newv, __cpu);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_cmpeqv_cmpeqv_storev (__field, __v, __expect,
						  __v2, __expect2, __newv,
						  __cpu);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_cmpeqv_trystorev_storev,
			   (int __field, intptr_t *__v, intptr_t __expect,
			    intptr_t *__v2, intptr_t __newv2,
			    intptr_t __newv, int __cpu),
			   rseq_percpu_cmpeqv_trystorev_storev);

__extern_always_inline int
__NTH (rseq_percpu_cmpeqv_trystorev_storev (int __field, intptr_t *__v,
					    intptr_t __expect,
					    intptr_t *__v2, intptr_t __newv2,
					    intptr_t __newv, int __cpu))
{
  int __ret = __rseq_percpu_try_cmpeqv_trystorev_storev (__field, __v,
							 __expect, __v2,
							 __newv2, __newv,
							 __cpu, 0);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_cmpeqv_trystorev_storev (__field, __v, __expect,
						     __v2, __newv2, __newv,
						     __cpu);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_cmpeqv_trystorev_storev_release,
			   (int __field, intptr_t *__v, intptr_t __expect,
			    intptr_t *__v2, intptr_t __newv2,
			    intptr_t __newv, int __cpu),
			   rseq_percpu_cmpeqv_trystorev_storev_release);

__extern_always_inline int
__NTH (rseq_percpu_cmpeqv_trystorev_storev_release (int __field,
						    intptr_t *__v,
						    intptr_t __expect,
						    intptr_t *__v2,
						    intptr_t __newv2,
						    intptr_t __newv,
						    int __cpu))
{
  int __ret = __rseq_percpu_try_cmpeqv_trystorev_storev (__field, __v,
							 __expect, __v2,
							 __newv2, __newv,
							 __cpu, 1);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_cmpeqv_trystorev_storev_release (__field, __v,
							     __expect, __v2,
							     __newv2, __newv,
							     __cpu);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_cmpeqv_trymemcpy_storev,
			   (int __field, intptr_t *__v, intptr_t __expect,
			    void *__dst, const void *__src, size_t __len,
			    intptr_t __newv, int __cpu),
			   rseq_percpu_cmpeqv_trymemcpy_storev);

__extern_always_inline int
__NTH (rseq_percpu_cmpeqv_trymemcpy_storev (int __field, intptr_t *__v,
					    intptr_t __expect, void *__dst,
					    const void *__src, size_t __len,
					    intptr_t __newv, int __cpu))
{
  int __ret = __rseq_percpu_try_cmpeqv_trymemcpy_storev (__field, __v,
							 __expect, __dst,
							 __src, __len,
							 __newv, __cpu, 0);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_cmpeqv_trymemcpy_storev (__field, __v, __expect,
						     __dst, __src, __len,
						     __newv, __cpu);
}

extern int __REDIRECT_NTH (__rseq_percpu_libc_cmpeqv_trymemcpy_storev_release,
			   (int __field, intptr_t *__v, intptr_t __expect,
			    void *__dst, const void *__src, size_t __len,
			    intptr_t __newv, int __cpu),
			   rseq_percpu_cmpeqv_trymemcpy_storev_release);

__extern_always_inline int
__NTH (rseq_percpu_cmpeqv_trymemcpy_storev_release (int __field,
						    intptr_t *__v,
						    intptr_t __expect,
						    void *__dst,
						    const void *__src,
						    size_t __len,
						    intptr_t __newv,
						    int __cpu))
{
  int __ret = __rseq_percpu_try_cmpeqv_trymemcpy_storev (__field, __v,
							 __expect, __dst,
							 __src, __len,
							 __newv, __cpu, 1);
  if (__glibc_likely (__ret >= 0))
    return __ret;
  __rseq_percpu_count_abort ();
  return __rseq_percpu_libc_cmpeqv_trymemcpy_storev_release (__field, __v,
							     __expect, __dst,
							     __src, __len,
							     __newv, __cpu);
}

# endif /* __USE_EXTERN_INLINES */
#endif /* __RSEQ_PERCPU_ARCH */

#endif /* sys/rseq-percpu.h */
