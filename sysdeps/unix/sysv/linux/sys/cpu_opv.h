/* CPU operation vectors: the cpu_opv system call.
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

#ifndef _SYS_CPU_OPV_H
#define _SYS_CPU_OPV_H 1

#include <features.h>
#include <stddef.h>
#include <stdint.h>

/* cpu_opv runs a vector of at most CPU_OP_VEC_LEN_MAX operations on a
   given CPU with preemption disabled, atomically with respect to
   restartable sequences and other vectors on that CPU.  It is the slow
   path of the per-CPU operations of <sys/rseq-percpu.h>.  The system
   call is provided by the rseq toolchain's Linux patches, not by
   upstream Linux.

   The definitions below are the kernel's <linux/cpu_opv.h>; when that
   header was included first, its definitions are used.  */

#ifndef _LINUX_CPU_OPV_H
# define _LINUX_CPU_OPV_H 1

# define CPU_OP_VEC_LEN_MAX	16	/* Operations per vector.  */
# define CPU_OP_DATA_LEN_MAX	4096	/* Bytes per compare or memcpy.  */
# define CPU_OP_ARG_LEN_MAX	16	/* Size of the argument union.  */

enum cpu_op_type
{
  CPU_COMPARE_EQ_OP = 0,	/* Continue if *a == *b (len bytes).  */
  CPU_COMPARE_NE_OP = 1,	/* Continue if *a != *b (len bytes).  */
  CPU_MEMCPY_OP = 2,		/* *dst = *src (len bytes, no overlap).  */
  CPU_ADD_OP = 3,		/* *p += count (len 1, 2, 4 or 8).  */
  CPU_OR_OP = 4,		/* *p |= mask.  */
  CPU_AND_OP = 5,		/* *p &= mask.  */
  CPU_XOR_OP = 6,		/* *p ^= mask.  */
  CPU_LSHIFT_OP = 7,		/* *p <<= bits.  */
  CPU_RSHIFT_OP = 8		/* *p >>= bits (logical).  */
};

/* One operation.  Addresses are pointers converted to uint64_t, so the
   layout is the same for 32-bit and 64-bit processes.  Integer operands
   are naturally aligned unsigned integers of len bytes in native byte
   order; count and mask are truncated to len bytes.  */
struct cpu_op
{
  int32_t op;			/* enum cpu_op_type.  */
  uint32_t len;			/* Operand length in bytes.  */
  union
  {
    struct
    {
      uint64_t a;
      uint64_t b;
    } compare_op;
    struct
    {
      uint64_t dst;
      uint64_t src;
    } memcpy_op;
    struct
    {
      uint64_t p;
      int64_t count;
    } arithmetic_op;
    struct
    {
      uint64_t p;
      uint64_t mask;
    } bitwise_op;
    struct
    {
      uint64_t p;
      uint32_t bits;
    } shift_op;
    unsigned char __reserved[CPU_OP_ARG_LEN_MAX];
  } u;
};
#endif /* !_LINUX_CPU_OPV_H */

/* Entry of the auxiliary vector (getauxval) holding the number of the
   cpu_opv system call; absent when the kernel has no cpu_opv.  */
#ifndef AT_CPU_OPV
# define AT_CPU_OPV 0x1000
#endif

__BEGIN_DECLS

/* Run the COUNT operations of OPS in order on CPU with preemption
   disabled.  FLAGS must be 0.  Returns 0 when every operation ran, or
   the index + 1 of the first compare that failed (the operations after
   it did not run).  Returns -1 with errno set to
     ENOSYS  the running kernel has no cpu_opv (the system call number is
	     never used unless the AT_CPU_OPV entry of the auxiliary vector
	     names it);
     EINVAL  a malformed vector or flags, or CPU offline or not allowed;
     EFAULT  memory that cannot be read or written;
     EAGAIN  the thread kept being moved off CPU; the vector did not run.
   A vector that fails with EINVAL or EFAULT has written nothing.  To ask
   whether the kernel has cpu_opv, call cpu_opv (NULL, 0, 0, 0): it fails
   with EINVAL if it has and with ENOSYS if it has not.  */
extern int cpu_opv (struct cpu_op *__ops, int __count, int __cpu,
		    int __flags) __THROW;

/* Vectors for common shapes, run on CPU.  They retry while cpu_opv fails
   with EAGAIN and otherwise return its result: 0 when done, the index +
   1 of the compare that failed, or -1 with errno set.  V and V2 are
   pointer-sized integers.  */

/* if (*V == EXPECT) *V = NEWV.  */
extern int cpu_opv_cmpstore (intptr_t *__v, intptr_t __expect,
			     intptr_t __newv, int __cpu) __THROW;

/* if (*V == EXPECT && *V2 == EXPECT2) *V = NEWV.  */
extern int cpu_opv_2cmp1store (intptr_t *__v, intptr_t __expect,
			       intptr_t *__v2, intptr_t __expect2,
			       intptr_t __newv, int __cpu) __THROW;

/* if (*V == EXPECT) { *V2 = NEWV2; *V = NEWV; }  */
extern int cpu_opv_1cmp2store (intptr_t *__v, intptr_t __expect,
			       intptr_t *__v2, intptr_t __newv2,
			       intptr_t __newv, int __cpu) __THROW;

/* *OLD = *V; if (*V == EXPECT) *V = NEWV.  A failed compare returns 2.  */
extern int cpu_opv_cmpxchg (intptr_t *__v, intptr_t __expect,
			    intptr_t *__old, intptr_t __newv,
			    int __cpu) __THROW;

/* *P += COUNT, where P is an unsigned integer of LEN (1, 2, 4 or 8)
   bytes, naturally aligned.  */
extern int cpu_opv_add (void *__p, int64_t __count, size_t __len,
			int __cpu) __THROW;

/* if (*V == EXPECT) { memcpy (DST, SRC, LEN); *V = NEWV; }  LEN may
   exceed CPU_OP_DATA_LEN_MAX up to (CPU_OP_VEC_LEN_MAX - 2) times it;
   beyond that the call fails with EINVAL.  */
extern int cpu_opv_cmpstorememcpy (intptr_t *__v, intptr_t __expect,
				   void *__dst, const void *__src,
				   size_t __len, intptr_t __newv,
				   int __cpu) __THROW;

__END_DECLS

#endif /* sys/cpu_opv.h */
