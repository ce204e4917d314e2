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

#include <rseq-internal.h>
#include <rseq-vfork.h>
#include <sched.h>
#include <stddef.h>
#include <sys/rseq.h>
#include <sysdep.h>
#include <tls.h>

/* A vfork child runs on its parent's thread descriptor, so it reads the
   parent's rseq area, but the kernel does not register that area for
   the child (CLONE_VM clears the registration).  The area shows the
   parent's CPU however the child migrates, and the child's per-CPU
   operations would commit on the wrong CPU without protection.  The
   same holds for a child of clone with CLONE_VM and CLONE_VFORK but
   without CLONE_SETTLS.

   The child must not mark the area itself: cpu_id_start, cpu_id,
   node_id and mm_cid belong to the kernel, which checks that they still
   hold what it last wrote (always for registrations longer than 32
   bytes on Linux 6.19 and later, for every registration with
   CONFIG_DEBUG_RSEQ) and kills the task that changed them, here the
   parent as soon as it resumes.  So the child sets glibc's own word
   right before the area (in the same extra TLS block,
   __RSEQ_AREA_VFORK_OFFSET in <sys/rseq.h>).  Every reader checks it
   before the area: the accessors and sched_getcpu and getcpu then ask
   the kernel, and per-CPU operations report that they cannot run
   (ENOSYS).

   The word counts the vfork children running on the descriptor: the
   child adds one, and the parent takes one off when it resumes, so a
   parent that is itself a vfork child (nested vfork) still reads
   nonzero.  Nothing else tells a parent whether it runs on a descriptor
   of its own: the descriptor's cached thread ID is its creator's in a
   process made by clone without CLONE_VM, which must find the word
   clear after its own vfork child.  The parent of clone with
   CLONE_VFORK but without CLONE_VM also takes one off, for a child that
   ran in memory of its own; the count saturates at zero, so this only
   matters for such a clone made by a vfork child, between its vfork and
   its exec.  The word only changes while its owner is suspended and is
   only read by the thread running on the descriptor, so plain loads and
   stores suffice.  */

_Static_assert (RSEQ_VFORK_CLONE_VM == CLONE_VM, "CLONE_VM");
_Static_assert (RSEQ_VFORK_CLONE_VFORK == CLONE_VFORK, "CLONE_VFORK");
_Static_assert (RSEQ_VFORK_CLONE_SETTLS == CLONE_SETTLS, "CLONE_SETTLS");
#ifdef __RSEQ_AREA_VFORK_OFFSET
_Static_assert (__RSEQ_AREA_VFORK_OFFSET == RSEQ_AREA_PREFIX_VFORK_OFFSET,
		"<sys/rseq.h> publishes the offset of the vfork word");
#endif

pid_t
__rseq_vfork_return (pid_t pid)
{
  uint32_t *word = rseq_vfork_word ();
  uint32_t depth = *word;

  if (pid == 0)
    *word = depth + 1;
  else if (depth != 0)
    *word = depth - 1;
  return pid;
}
