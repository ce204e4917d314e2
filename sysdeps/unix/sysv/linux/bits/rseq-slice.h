/* Inline and library functions of the rseq time slice extension.
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
# error "Never include <bits/rseq-slice.h> directly; use <sys/rseq.h> instead."
#endif

#ifdef __USE_GNU

__BEGIN_DECLS

/* Time slice extension (Linux 7.0 and later): a thread that holds a
   lock, say, asks the scheduler not to preempt it for a few
   microseconds.  The kernel keeps the extension for full-size
   registrations on kernels built with it; everywhere else the
   functions below fail with ENOSYS and the inline ones do nothing.

     rseq_slice_extension_set (1);      once per thread
     rseq_slice_request ();             before taking the lock
     ... critical section, no system calls ...
     rseq_slice_release ();             after releasing it

   Enable (ENABLE 1) or disable (0) the extension for the calling
   thread.  Returns 0, or -1 with errno ENOSYS (the kernel or this
   thread's registration has no extension) or EINVAL.  */
extern int rseq_slice_extension_set (int __enable) __THROW;

/* 1 if the extension is enabled for the calling thread, 0 if not, -1
   with errno ENOSYS if the thread cannot have it (as for
   rseq_slice_extension_set).  */
extern int rseq_slice_extension_get (void) __THROW;

/* Give the CPU back after a granted extension, without other side
   effects.  Returns 1 if the extension was granted and this ended it
   (the thread was rescheduled), 0 if not; -1 with errno ENOSYS before
   Linux 7.0.  */
extern int rseq_slice_yield (void) __THROW;

/* Nonzero if the calling thread's area has the slice_ctrl field.  */
__RSEQ_INLINE_HELPER int
__rseq_slice_area (struct rseq **__areap)
{
  *__areap = __rseq_area_pointer ();
  return (*__areap != 0
	  && __rseq_area_has_field (__RSEQ_AREA_SLICE_CTRL_OFFSET));
}

/* Ask not to be preempted until rseq_slice_release.  Returns 0, or -1
   if the area has no slice_ctrl (the request then does nothing).
   Whether the extension is enabled is not checked: a request without
   it is ignored by the kernel.  */
static __inline int
rseq_slice_request (void)
{
  struct rseq *__area;
  if (!__rseq_slice_area (&__area))
    return -1;
  /* slice_ctrl.request, a byte the kernel clears when it grants.  */
  *((volatile unsigned char *) __area + __RSEQ_AREA_SLICE_CTRL_OFFSET) = 1;
  __asm__ __volatile__ ("" ::: "memory");
  return 0;
}

/* Nonzero if the kernel granted an extension since the request: the
   thread should give the CPU back soon (rseq_slice_release does).  */
static __inline int
rseq_slice_granted (void)
{
  struct rseq *__area;
  if (!__rseq_slice_area (&__area))
    return 0;
  return ((volatile unsigned char *) __area)
    [__RSEQ_AREA_SLICE_CTRL_OFFSET + 1] != 0;
}

/* End the section started by rseq_slice_request: withdraw the request
   and, if an extension was granted meanwhile, yield the CPU as the
   kernel expects.  Returns 1 if it yielded, 0 if not, -1 if the area
   has no slice_ctrl.  */
static __inline int
rseq_slice_release (void)
{
  struct rseq *__area;
  if (!__rseq_slice_area (&__area))
    return -1;
  __asm__ __volatile__ ("" ::: "memory");
  *((volatile unsigned char *) __area + __RSEQ_AREA_SLICE_CTRL_OFFSET) = 0;
  if (((volatile unsigned char *) __area)[__RSEQ_AREA_SLICE_CTRL_OFFSET + 1])
    return rseq_slice_yield () > 0;
  return 0;
}

__END_DECLS

#endif /* __USE_GNU */
