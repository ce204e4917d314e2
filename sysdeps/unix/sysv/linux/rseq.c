/* rseq system call wrapper.  Linux version.
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

#include <sys/rseq.h>
#include <sysdep.h>

/* Register (FLAGS == 0) or unregister (FLAGS == RSEQ_FLAG_UNREGISTER)
   AREA of LEN bytes with signature SIG for the calling thread.  The
   kernel does all validation; errors are reported through errno.
   glibc registers its own area for every thread unless the
   glibc.pthread.rseq tunable is 0; otherwise registering that area
   again fails with EBUSY, and another area, or that one with another
   length, with EINVAL.  */
int
rseq (struct rseq *area, uint32_t len, int flags, uint32_t sig)
{
#ifdef __NR_rseq
  return INLINE_SYSCALL_CALL (rseq, area, len, flags, sig);
#else
  __set_errno (ENOSYS);
  return -1;
#endif
}
