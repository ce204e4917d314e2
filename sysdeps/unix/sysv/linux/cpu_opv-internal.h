/* Internal declarations for cpu_opv.  Linux version.
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

#ifndef _CPU_OPV_INTERNAL_H
#define _CPU_OPV_INTERNAL_H 1

#include <sys/cpu_opv.h>

/* The per-CPU operations fall back to these.  */
libc_hidden_proto (cpu_opv)
libc_hidden_proto (cpu_opv_cmpstore)
libc_hidden_proto (cpu_opv_2cmp1store)
libc_hidden_proto (cpu_opv_1cmp2store)
libc_hidden_proto (cpu_opv_cmpxchg)
libc_hidden_proto (cpu_opv_add)
libc_hidden_proto (cpu_opv_cmpstorememcpy)

/* If *V != EXPECTNOT: *LOAD = *V; *V = *(*V + VOFFP), on CPU (the pop of
   a per-CPU list).  Returns 0, 1 if *V == EXPECTNOT, or -1 with errno.  */
/* cpu_opv system calls made by the calling thread, whatever their
   result: the per-CPU operations' fallback counts its own calls as the
   difference across each fallback (rseq_percpu_fallbacks).  */
extern __thread unsigned long int __cpu_opv_calls attribute_hidden;

extern int __cpu_opv_cmpnev_storeoffp_load (intptr_t *v, intptr_t expectnot,
					    long int voffp, intptr_t *load,
					    int cpu) attribute_hidden;

#endif
