/* Forget restartable sequences of an object dlclose unmaps.  Linux version.
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

#ifndef _DL_RSEQ_CLOSE_H
#define _DL_RSEQ_CLOSE_H

#include <atomic.h>
#include <endian.h>
#include <ldsodefs.h>
#include <list.h>
#include <lowlevellock.h>
#include <rseq-internal.h>
#include <stddef.h>
#include <thread_pointer.h>
#include <stdint.h>
#include <tls.h>

/* A critical section inlined into a shared object leaves the thread's
   rseq_cs pointing at the object's descriptor after it commits or
   aborts; nothing clears it on that path, to keep the commit one store.
   The kernel reads the descriptor at the thread's next preemption or
   signal, and once the object is unmapped that read fails and kills
   the thread.  So dlclose clears every rseq_cs that points into the
   object, before unmapping it.

   A compare-and-exchange, not a store: the owning thread may arm a
   section of another object at the same time, and that pointer must
   survive.  The sections store only the low word of rseq_cs on 32-bit
   targets (the high word stays zero), so the exchange there is on the
   low word alone.  */
static inline void
_dl_rseq_forget_thread (struct pthread *pd, ptrdiff_t tp_offset,
			uintptr_t start, uintptr_t end)
{
  /* The area lies in the thread's extra TLS block, at __rseq_offset
     from its thread pointer, which is TP_OFFSET from its descriptor.  */
  uintptr_t *cs = (uintptr_t *) ((char *) pd + tp_offset + __rseq_offset
				 + offsetof (struct rseq_area, rseq_cs));
#if __WORDSIZE == 32 && __BYTE_ORDER == __BIG_ENDIAN
  cs++;
#endif
  uintptr_t seen = atomic_load_relaxed (cs);
  while (seen >= start && seen < end
	 && !atomic_compare_exchange_weak_relaxed (cs, &seen, 0))
    continue;
}

/* Called by dlclose before it unmaps MAP, with the load lock held: no
   thread runs the object's code any more, but rseq_cs of any thread may
   still point into it.  The stack lock keeps the thread lists still.  */
static inline void
_dl_rseq_forget_object (struct link_map *map)
{
  uintptr_t start = map->l_map_start;
  uintptr_t end = map->l_map_end;
  /* Every thread's thread pointer lies as far from its descriptor as
     the caller's does.  */
  ptrdiff_t tp_offset = (char *) __thread_pointer () - (char *) THREAD_SELF;
  list_t *runp;

  if (start >= end)
    return;
  lll_lock (GL (dl_stack_cache_lock), LLL_PRIVATE);
  list_for_each (runp, &GL (dl_stack_used))
    _dl_rseq_forget_thread (list_entry (runp, struct pthread, list),
			    tp_offset, start, end);
  list_for_each (runp, &GL (dl_stack_user))
    _dl_rseq_forget_thread (list_entry (runp, struct pthread, list),
			    tp_offset, start, end);
  lll_unlock (GL (dl_stack_cache_lock), LLL_PRIVATE);
}

#endif /* dl-rseq-close.h */
