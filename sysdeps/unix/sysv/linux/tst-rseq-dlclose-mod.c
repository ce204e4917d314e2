/* Module for tst-rseq-dlclose: an inline per-CPU operation.
   Copyright (C) 2026 Free Software Foundation, Inc.

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
#include <stdint.h>
#include <sys/rseq-percpu.h>

/* Built with optimization, so that the critical section of
   rseq_percpu_addv and its struct rseq_cs descriptor are in this
   module: after the operation, the calling thread's rseq_cs points
   here.  */
#if defined __OPTIMIZE__ && !defined __NO_INLINE__
int mod_inline_sections = 1;
#else
int mod_inline_sections = 0;
#endif

/* A descriptor of an empty critical section, for the test to store
   into rseq_cs where no operation of this module does (no critical
   sections on this architecture, or the module built without
   optimization).  The kernel finds every instruction outside the
   section and clears rseq_cs, once it has checked that abort_ip
   follows the signature.  */
#ifdef RSEQ_SIG
static const uint32_t mod_signature[2] = { RSEQ_SIG, 0 };
#else
static const uint32_t mod_signature[2];
#endif
static struct rseq_cs mod_cs;

struct rseq_cs *
mod_empty_cs (void)
{
  mod_cs.version = 0;
  mod_cs.flags = 0;
  mod_cs.start_ip = (uintptr_t) &mod_signature[1];
  mod_cs.post_commit_offset = 0;
  mod_cs.abort_ip = (uintptr_t) &mod_signature[1];
  return &mod_cs;
}

#define SLOTS 1024

static intptr_t slots[SLOTS];

/* Add one to the slot of the calling thread's CPU.  Return 0, or -1
   with errno set if per-CPU operations cannot run.  */
int
mod_add (void)
{
  for (;;)
    {
      int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
      if (cpu < 0)
	return -1;
      if (cpu >= SLOTS)
	{
	  errno = ERANGE;
	  return -1;
	}
      if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &slots[cpu], 1, cpu)
	  == 0)
	return 0;
      if (errno != EAGAIN && errno != ENOSYS)
	return -1;
    }
}
