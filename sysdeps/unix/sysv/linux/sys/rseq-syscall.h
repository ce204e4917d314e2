/* The rseq system call.
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

#ifndef _SYS_RSEQ_SYSCALL_H
#define _SYS_RSEQ_SYSCALL_H 1

/* The wrapper has a header of its own rather than a declaration in
   <sys/rseq.h>: programs written against earlier versions of
   <sys/rseq.h> define helpers named rseq, or use rseq as the name of the
   structure in C++, and a function of that name would break them.  */

#include <features.h>
#include <stdint.h>
#include <sys/rseq.h>

__BEGIN_DECLS

/* Register the rseq area AREA of LEN bytes for the calling thread with
   signature SIG (FLAGS is 0), or unregister it (FLAGS is
   RSEQ_FLAG_UNREGISTER).  Returns 0, or -1 with errno set.  glibc
   already registers an area for each thread (see __rseq_size), so this
   is only useful when that registration is disabled with the
   glibc.pthread.rseq tunable.  */
extern int rseq (struct rseq *__area, uint32_t __len, int __flags,
		 uint32_t __sig) __THROW;

__END_DECLS

#endif /* sys/rseq-syscall.h */
