/* Restartable sequence critical sections.  x86 version.
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

/* x86 headers are shared by the 64-bit and 32-bit ABIs; each has its
   own file.  See the generic bits/rseq-percpu.h for the contract.  */
#if defined __x86_64__ && !defined __ILP32__
# include <bits/rseq-percpu-x86_64.h>
#elif defined __i386__
# include <bits/rseq-percpu-i386.h>
#endif
