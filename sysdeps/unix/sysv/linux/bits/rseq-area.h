/* Inline access to the rseq area glibc registers for each thread.
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

#ifndef _SYS_RSEQ_H
# error "Never include <bits/rseq-area.h> directly; use <sys/rseq.h> instead."
#endif

/* Byte offsets of the fields of the rseq area (kernel ABI).  They are
   used instead of struct rseq members because the definition of
   struct rseq in scope may come from kernel headers older than the
   running kernel.  A field is valid only when __rseq_size, the active
   feature size, covers it.  The names in the implementation namespace
   are for other glibc headers; the public accessors below are GNU
   extensions, so that programs written for earlier versions of
   <sys/rseq.h> see no new names unless they ask for them.  */
#define __RSEQ_AREA_CPU_ID_START_OFFSET	0
#define __RSEQ_AREA_CPU_ID_OFFSET	4
#define __RSEQ_AREA_RSEQ_CS_OFFSET	8
#define __RSEQ_AREA_FLAGS_OFFSET	16
#define __RSEQ_AREA_NODE_ID_OFFSET	20
#define __RSEQ_AREA_MM_CID_OFFSET	24
#define __RSEQ_AREA_SLICE_CTRL_OFFSET	28

/* Not a kernel field: glibc's own 32-bit word right before the area,
   nonzero while the thread running on it is the child of vfork (or of
   clone with CLONE_VM | CLONE_VFORK and no CLONE_SETTLS).  The kernel
   does not update the area for such a child, and user space must never
   write the fields the kernel owns, so the readers below check this
   word instead of finding a negative cpu_id.  */
#define __RSEQ_AREA_VFORK_OFFSET	(-4)

/* Helpers that extern inline functions call must not be static (C99
   6.7.4, checked by -pedantic), so they are extern inline themselves:
   always inlined, never emitted, no symbol in libc.  */
#ifdef __extern_always_inline
# define __RSEQ_INLINE_HELPER __extern_always_inline
#else
# define __RSEQ_INLINE_HELPER static __inline
#endif

#include <bits/rseq-thread-pointer.h>

/* True if the active feature size covers the 32-bit field at OFFSET.  */
#define __rseq_area_has_field(offset) (__rseq_size >= (offset) + 4)

/* Address of the calling thread's rseq area, or a null pointer if glibc
   did not register one (rseq unavailable, denied, or disabled by the
   glibc.pthread.rseq tunable), the calling thread is a vfork child
   (see __RSEQ_AREA_VFORK_OFFSET), or the compiler cannot reach the
   thread pointer.  */
__RSEQ_INLINE_HELPER struct rseq *
__rseq_area_pointer (void)
{
  char *__area = 0;
#ifdef __RSEQ_HAVE_THREAD_POINTER
  if (__rseq_size != 0)
    __area = __rseq_thread_pointer () + __rseq_offset;
#endif
  if (__area != 0
      && *(const volatile unsigned int *) (__area
					   + __RSEQ_AREA_VFORK_OFFSET) != 0)
    __area = 0;
  return (struct rseq *) __area;
}

/* Single-copy-atomic load of the 32-bit field at OFFSET of AREA.  */
__RSEQ_INLINE_HELPER int
__rseq_area_load (const struct rseq *__area, unsigned int __offset)
{
  return *(const volatile int *) ((const char *) __area + __offset);
}

#ifdef __USE_GNU

# define RSEQ_AREA_CPU_ID_START_OFFSET	__RSEQ_AREA_CPU_ID_START_OFFSET
# define RSEQ_AREA_CPU_ID_OFFSET	__RSEQ_AREA_CPU_ID_OFFSET
# define RSEQ_AREA_RSEQ_CS_OFFSET	__RSEQ_AREA_RSEQ_CS_OFFSET
# define RSEQ_AREA_FLAGS_OFFSET		__RSEQ_AREA_FLAGS_OFFSET
# define RSEQ_AREA_NODE_ID_OFFSET	__RSEQ_AREA_NODE_ID_OFFSET
# define RSEQ_AREA_MM_CID_OFFSET	__RSEQ_AREA_MM_CID_OFFSET
# define RSEQ_AREA_SLICE_CTRL_OFFSET	__RSEQ_AREA_SLICE_CTRL_OFFSET
# define RSEQ_AREA_VFORK_OFFSET		__RSEQ_AREA_VFORK_OFFSET

__BEGIN_DECLS

/* Fallbacks when the area is not usable; declared by <sched.h> under
   the same condition.  */
extern int sched_getcpu (void) __THROW;
extern int getcpu (unsigned int *, unsigned int *) __THROW;

/* Address of the calling thread's rseq area, or a null pointer (see
   __rseq_area_pointer).  */
static __inline struct rseq *
rseq_area_pointer (void)
{
  return __rseq_area_pointer ();
}

/* Nonzero if the calling thread's rseq area is registered.  */
static __inline int
rseq_area_registered (void)
{
  struct rseq *__area = __rseq_area_pointer ();
  return (__area != 0
	  && __rseq_area_load (__area, __RSEQ_AREA_CPU_ID_OFFSET) >= 0);
}

/* Current CPU number, as sched_getcpu, which it calls when the area is
   not registered.  */
static __inline int
rseq_area_cpu (void)
{
  struct rseq *__area = __rseq_area_pointer ();
  if (__area != 0)
    {
      int __cpu = __rseq_area_load (__area, __RSEQ_AREA_CPU_ID_OFFSET);
      if (__cpu >= 0)
	return __cpu;
    }
  return sched_getcpu ();
}

/* Current NUMA node.  Served from node_id when the kernel provides it
   (Linux 6.3 and later), from getcpu otherwise.  Returns -1 with errno
   set if getcpu fails.  */
static __inline int
rseq_area_node (void)
{
  struct rseq *__area = __rseq_area_pointer ();
  unsigned int __node;

  if (__area != 0 && __rseq_area_has_field (__RSEQ_AREA_NODE_ID_OFFSET)
      && __rseq_area_load (__area, __RSEQ_AREA_CPU_ID_OFFSET) >= 0)
    return __rseq_area_load (__area, __RSEQ_AREA_NODE_ID_OFFSET);
  if (getcpu ((unsigned int *) 0, &__node) != 0)
    return -1;
  return (int) __node;
}

/* Current memory-map concurrency ID: a compact per-process CPU index,
   smaller than both the number of CPUs and the number of threads of
   the process (Linux 6.3 and later).  Returns -1 when the kernel or
   the registration does not provide it; there is no system call to
   fall back to.  */
static __inline int
rseq_area_mm_cid (void)
{
  struct rseq *__area = __rseq_area_pointer ();
  if (__area != 0 && __rseq_area_has_field (__RSEQ_AREA_MM_CID_OFFSET)
      && __rseq_area_load (__area, __RSEQ_AREA_CPU_ID_OFFSET) >= 0)
    return __rseq_area_load (__area, __RSEQ_AREA_MM_CID_OFFSET);
  return -1;
}

__END_DECLS

#endif /* __USE_GNU */
