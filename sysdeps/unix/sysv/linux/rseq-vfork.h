/* Keep the rseq area truthful across vfork.  Internal interface.
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

#ifndef _RSEQ_VFORK_H
#define _RSEQ_VFORK_H 1

/* The clone flags that make a child run on its parent's thread
   descriptor while the parent waits for it, as vfork's child does
   (CLONE_VM and CLONE_VFORK without CLONE_SETTLS), for clone.S.  The
   values are the kernel's CLONE_* (checked in rseq-vfork.c).  The bit
   numbers serve architectures that test one bit at a time.  */
#define RSEQ_VFORK_CLONE_VM_BIT		8
#define RSEQ_VFORK_CLONE_VFORK_BIT	14
#define RSEQ_VFORK_CLONE_SETTLS_BIT	19
#define RSEQ_VFORK_CLONE_VM		(1 << RSEQ_VFORK_CLONE_VM_BIT)
#define RSEQ_VFORK_CLONE_VFORK		(1 << RSEQ_VFORK_CLONE_VFORK_BIT)
#define RSEQ_VFORK_CLONE_SETTLS		(1 << RSEQ_VFORK_CLONE_SETTLS_BIT)

#ifndef __ASSEMBLER__
# include <sys/types.h>

/* Called by vfork, and by clone for such children, with its result in
   both processes before returning it: PID is 0 in the child and the
   child's ID in the parent.  Tells readers of the shared rseq area that
   it is not registered for the child, and undoes that in the parent,
   without writing the area (see rseq-vfork.c).  Returns PID.  */
extern pid_t __rseq_vfork_return (pid_t pid) attribute_hidden;
#endif

#endif /* rseq-vfork.h */
