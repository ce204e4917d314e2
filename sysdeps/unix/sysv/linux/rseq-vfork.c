/* Keep the rseq area truthful across vfork.
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

#include <rseq-vfork.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/rseq.h>
#include <tls.h>

/* A vfork child runs on its parent's thread descriptor, so it reads the
   parent's rseq area, but the kernel does not register that area for
   the child (CLONE_VM clears the registration).  The area would show
   the parent's CPU however the child migrates, and the child's per-CPU
   operations would commit on the wrong CPU without protection.  The
   same holds for a child of clone with CLONE_VM and CLONE_VFORK but
   without CLONE_SETTLS.  So the
   child marks the area as not registered (cpu_id
   RSEQ_CPU_ID_REGISTRATION_FAILED): sched_getcpu, getcpu and the
   accessors then fall back to the system call, and per-CPU operations
   report that they cannot run.

   The parent, suspended meanwhile, finds the mark when it resumes.  If
   it was scheduled out during the vfork, the kernel has already
   rewritten the area on the way back to user space, mark included.
   Otherwise it still runs on the CPU it entered vfork on, whose number
   is still in cpu_id_start, which the child did not touch; the parent
   copies it back into cpu_id.  The flag is thread-local, so it is the
   vforking thread's own, shared with its child like the area.  */
static __thread bool rseq_vfork_marked;

_Static_assert (RSEQ_VFORK_CLONE_VM == CLONE_VM, "CLONE_VM");
_Static_assert (RSEQ_VFORK_CLONE_VFORK == CLONE_VFORK, "CLONE_VFORK");
_Static_assert (RSEQ_VFORK_CLONE_SETTLS == CLONE_SETTLS, "CLONE_SETTLS");

static void
mark_child (struct pthread *self)
{
  if ((int) THREAD_GETMEM_VOLATILE (self, rseq_area.cpu_id) < 0)
    return;
  rseq_vfork_marked = true;
  THREAD_SETMEM (self, rseq_area.cpu_id, RSEQ_CPU_ID_REGISTRATION_FAILED);
}

/* Undo the child's mark.  A preemption between the load of
   cpu_id_start and the store to cpu_id makes the kernel rewrite both;
   the store may then have put back a stale CPU, which shows as a
   changed cpu_id_start, and the loop stores the fresh one.  A
   preemption after the last load rewrites both fields again.  */
static void
unmark_parent (struct pthread *self)
{
  if (!rseq_vfork_marked)
    return;
  rseq_vfork_marked = false;
  if ((int) THREAD_GETMEM_VOLATILE (self, rseq_area.cpu_id)
      != RSEQ_CPU_ID_REGISTRATION_FAILED)
    return;

  uint32_t start;
  do
    {
      start = THREAD_GETMEM_VOLATILE (self, rseq_area.cpu_id_start);
      THREAD_SETMEM (self, rseq_area.cpu_id, start);
    }
  while (THREAD_GETMEM_VOLATILE (self, rseq_area.cpu_id_start) != start);
}

pid_t
__rseq_vfork_return (pid_t pid)
{
  if (__rseq_size != 0)
    {
      if (pid == 0)
	mark_child (THREAD_SELF);
      else
	unmark_parent (THREAD_SELF);
    }
  return pid;
}
