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

   A port needs only its primitives: its own bits/rseq-percpu.h defines
   __RSEQ_PERCPU_ARCH and the instructions, operands and clobbers listed
   in <bits/rseq-percpu-ops.h>, then includes that file, which writes
   every operation once as a critical section of those primitives: a
   struct rseq_cs descriptor in section __rseq_cs (its address in
   __rseq_cs_ptr_array and every early exit in __rseq_exit_point_array),
   the abort handler outside [start_ip, post_commit_ip) right after
   RSEQ_SIG, a check of the CPU field against the caller's CPU as the
   first instruction after start_ip, and the commit store as the last
   instruction before post_commit_ip.  */
