/* The thread pointer for <bits/rseq-area.h>.  Generic version.
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
# error "Never include <bits/rseq-thread-pointer.h> directly; use <sys/rseq.h> instead."
#endif

/* The thread pointer, from which __rseq_offset counts, where the
   compiler can reach it.  A port whose compiler cannot has a file of
   its own.  */
#if __glibc_has_builtin (__builtin_thread_pointer)
__RSEQ_INLINE_HELPER char *
__rseq_thread_pointer (void)
{
  return (char *) __builtin_thread_pointer ();
}
# define __RSEQ_HAVE_THREAD_POINTER 1
#endif
