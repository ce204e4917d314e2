/* rseq time slice extension (Linux 7.0 and later).  Linux version.
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

#include <errno.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sysdep.h>

/* The kernel's numbers, for headers older than Linux 7.0.  The system
   call has the same number on every architecture.  */
#ifndef __NR_rseq_slice_yield
# define __NR_rseq_slice_yield 471
#endif
#ifndef PR_RSEQ_SLICE_EXTENSION
# define PR_RSEQ_SLICE_EXTENSION 79
# define PR_RSEQ_SLICE_EXTENSION_GET 1
# define PR_RSEQ_SLICE_EXTENSION_SET 2
# define PR_RSEQ_SLICE_EXT_ENABLE 0x01
#endif

/* ENOTSUPP, the kernel-internal code the prctl returns when the
   extension is compiled out, disabled at boot, or the registration is
   the 32-byte legacy one.  */
#define KERNEL_ENOTSUPP 524

/* The prctl's errors in terms of the API: the arguments are checked
   before the call, so EINVAL means that the kernel does not know the
   option (before Linux 7.0); ENXIO that the thread has no registration
   (the glibc.pthread.rseq tunable, a vfork child).  All mean that the
   thread cannot have the extension.  */
static int
slice_prctl (unsigned long int op, unsigned long int arg)
{
  /* A vfork child must not change its parent's thread state.  */
  if (rseq_area_pointer () == NULL)
    {
      __set_errno (ENOSYS);
      return -1;
    }
  int ret = INTERNAL_SYSCALL_CALL (prctl, PR_RSEQ_SLICE_EXTENSION, op, arg,
				   0, 0);
  if (!INTERNAL_SYSCALL_ERROR_P (ret))
    return ret;
  int err = INTERNAL_SYSCALL_ERRNO (ret);
  if (err == EINVAL || err == ENXIO || err == KERNEL_ENOTSUPP)
    err = ENOSYS;
  __set_errno (err);
  return -1;
}

int
rseq_slice_extension_set (int enable)
{
  if (enable != 0 && enable != 1)
    {
      __set_errno (EINVAL);
      return -1;
    }
  return slice_prctl (PR_RSEQ_SLICE_EXTENSION_SET,
		      enable ? PR_RSEQ_SLICE_EXT_ENABLE : 0) < 0 ? -1 : 0;
}

int
rseq_slice_extension_get (void)
{
  int ret = slice_prctl (PR_RSEQ_SLICE_EXTENSION_GET, 0);
  if (ret < 0)
    return -1;
  if ((ret & PR_RSEQ_SLICE_EXT_ENABLE) != 0)
    return 1;
  /* The kernel answers GET from the thread's state even where the
     extension is off (disabled at boot, or a legacy registration).
     Disabling it again changes nothing and tells whether the thread
     could have it.  */
  return slice_prctl (PR_RSEQ_SLICE_EXTENSION_SET, 0) < 0 ? -1 : 0;
}

int
rseq_slice_yield (void)
{
  return INLINE_SYSCALL_CALL (rseq_slice_yield);
}
