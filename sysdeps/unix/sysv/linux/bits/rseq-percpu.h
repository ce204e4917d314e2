/* Restartable sequence critical sections.  Generic version.
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
# error "Never include <bits/rseq-percpu.h> directly; use <sys/rseq-percpu.h> instead."
#endif

/* This architecture has no rseq critical sections: __RSEQ_PERCPU_ARCH
   stays undefined, the functions of <sys/rseq-percpu.h> are not
   inlined, and libc's versions report that no CPU is usable
   (rseq_percpu_current_cpu returns -1 with errno set to ENOSYS).

   An architecture port defines, in its own bits/rseq-percpu.h,
   __RSEQ_PERCPU_ARCH and, for each operation OP of
   <sys/rseq-percpu.h>, a function

     __RSEQ_INLINE_HELPER int
     __rseq_percpu_OP (struct rseq *area, int cpu_field_offset, ...)

   taking the operation's arguments after the field selector, plus a
   final int RELEASE for the _release pairs (extern inline where the
   compiler allows, since the inline versions of <sys/rseq-percpu.h>
   call it).  Each function is one
   critical section: a struct rseq_cs descriptor in section __rseq_cs
   (and its address in __rseq_cs_ptr_array), the abort handler outside
   [start_ip, post_commit) and preceded by RSEQ_SIG, a check of the CPU
   field at CPU_FIELD_OFFSET of AREA against CPU as the first
   instruction after start_ip, and the commit store as the last
   instruction before post_commit.  Each section may include the test
   hooks RSEQ_PERCPU_INJECT_ASM(N) for N = 1..6 at numbered points,
   with their operands RSEQ_PERCPU_INJECT_INPUT and clobbers
   RSEQ_PERCPU_INJECT_CLOBBER.  */
