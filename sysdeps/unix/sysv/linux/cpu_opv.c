/* The cpu_opv system call wrapper and its vector helpers.  Linux version.
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

#include <atomic.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/auxv.h>
#include <cpu_opv-internal.h>
#include <sysdep.h>

/* The rseq toolchain's kernel patches use 500 on every architecture.
   Upstream Linux has not reserved it, so a kernel without cpu_opv may
   use it for something else: it is called only when the kernel says,
   in the AT_CPU_OPV entry of the auxiliary vector, that it is cpu_opv.
   Reading the auxiliary vector is no system call, so the answer costs
   nothing on kernels without cpu_opv and cannot run into a seccomp
   filter or SECCOMP_MODE_STRICT, and it is final: the entry does not
   change during the life of the process.  */
#ifndef __NR_cpu_opv
# define __NR_cpu_opv 500
#endif

static bool
cpu_opv_present (void)
{
  unsigned long int nr;
  return __getauxval2 (AT_CPU_OPV, &nr) && nr == __NR_cpu_opv;
}

__thread unsigned long int __cpu_opv_calls attribute_hidden;

int
cpu_opv (struct cpu_op *ops, int count, int cpu, int flags)
{
  if (!cpu_opv_present ())
    return INLINE_SYSCALL_ERROR_RETURN_VALUE (ENOSYS);
  ++__cpu_opv_calls;
  return INLINE_SYSCALL_CALL (cpu_opv, ops, count, cpu, flags);
}
libc_hidden_def (cpu_opv)

/* Operation builders.  Unused argument bytes are zero.  */

static uint64_t
op_address (const void *p)
{
  return (uintptr_t) p;
}

static void
op_compare_eq (struct cpu_op *op, const void *a, const void *b, size_t len)
{
  memset (op, 0, sizeof *op);
  op->op = CPU_COMPARE_EQ_OP;
  op->len = len;
  op->u.compare_op.a = op_address (a);
  op->u.compare_op.b = op_address (b);
}

static void
op_memcpy (struct cpu_op *op, void *dst, const void *src, size_t len)
{
  memset (op, 0, sizeof *op);
  op->op = CPU_MEMCPY_OP;
  op->len = len;
  op->u.memcpy_op.dst = op_address (dst);
  op->u.memcpy_op.src = op_address (src);
}

static void
op_add (struct cpu_op *op, void *p, int64_t count, size_t len)
{
  memset (op, 0, sizeof *op);
  op->op = CPU_ADD_OP;
  op->len = len;
  op->u.arithmetic_op.p = op_address (p);
  op->u.arithmetic_op.count = count;
}

/* cpu_opv, run again while the thread was moved away.  The vector did
   not run when it fails with EAGAIN, so running it again is safe.  */
static int
run_vector (struct cpu_op *ops, int count, int cpu)
{
  int ret;
  do
    ret = cpu_opv (ops, count, cpu, 0);
  while (ret < 0 && errno == EAGAIN);
  return ret;
}

int
cpu_opv_cmpstore (intptr_t *v, intptr_t expect, intptr_t newv, int cpu)
{
  struct cpu_op ops[2];
  op_compare_eq (&ops[0], v, &expect, sizeof *v);
  op_memcpy (&ops[1], v, &newv, sizeof *v);
  return run_vector (ops, 2, cpu);
}
libc_hidden_def (cpu_opv_cmpstore)

int
cpu_opv_2cmp1store (intptr_t *v, intptr_t expect, intptr_t *v2,
		      intptr_t expect2, intptr_t newv, int cpu)
{
  struct cpu_op ops[3];
  op_compare_eq (&ops[0], v, &expect, sizeof *v);
  op_compare_eq (&ops[1], v2, &expect2, sizeof *v2);
  op_memcpy (&ops[2], v, &newv, sizeof *v);
  return run_vector (ops, 3, cpu);
}
libc_hidden_def (cpu_opv_2cmp1store)

int
cpu_opv_1cmp2store (intptr_t *v, intptr_t expect, intptr_t *v2,
		      intptr_t newv2, intptr_t newv, int cpu)
{
  struct cpu_op ops[3];
  op_compare_eq (&ops[0], v, &expect, sizeof *v);
  op_memcpy (&ops[1], v2, &newv2, sizeof *v2);
  op_memcpy (&ops[2], v, &newv, sizeof *v);
  return run_vector (ops, 3, cpu);
}
libc_hidden_def (cpu_opv_1cmp2store)

int
cpu_opv_cmpxchg (intptr_t *v, intptr_t expect, intptr_t *old,
		   intptr_t newv, int cpu)
{
  struct cpu_op ops[3];
  op_memcpy (&ops[0], old, v, sizeof *v);
  op_compare_eq (&ops[1], v, &expect, sizeof *v);
  op_memcpy (&ops[2], v, &newv, sizeof *v);
  return run_vector (ops, 3, cpu);
}
libc_hidden_def (cpu_opv_cmpxchg)

int
cpu_opv_add (void *p, int64_t count, size_t len, int cpu)
{
  struct cpu_op op;
  op_add (&op, p, count, len);
  return run_vector (&op, 1, cpu);
}
libc_hidden_def (cpu_opv_add)

int
cpu_opv_cmpstorememcpy (intptr_t *v, intptr_t expect, void *dst,
			  const void *src, size_t len, intptr_t newv, int cpu)
{
  struct cpu_op ops[CPU_OP_VEC_LEN_MAX];
  int count = 0;

  /* The copy is split into pieces the kernel accepts, between the
     compare and the final store.  */
  if (len > (size_t) (CPU_OP_VEC_LEN_MAX - 2) * CPU_OP_DATA_LEN_MAX)
    return INLINE_SYSCALL_ERROR_RETURN_VALUE (EINVAL);
  op_compare_eq (&ops[count++], v, &expect, sizeof *v);
  for (size_t done = 0; done < len; done += CPU_OP_DATA_LEN_MAX)
    {
      size_t piece = len - done < CPU_OP_DATA_LEN_MAX
		     ? len - done : CPU_OP_DATA_LEN_MAX;
      op_memcpy (&ops[count++], (char *) dst + done,
		 (const char *) src + done, piece);
    }
  op_memcpy (&ops[count++], v, &newv, sizeof *v);
  return run_vector (ops, count, cpu);
}
libc_hidden_def (cpu_opv_cmpstorememcpy)

/* The pop of a per-CPU list for the fallback of
   rseq_percpu_cmpnev_storeoffp_load: the head is read here, and the
   vector checks it is still the head while it unlinks it.  Returns 0
   with *LOAD set, 1 if the head is EXPECTNOT, or -1 with errno set.  */
int
__cpu_opv_cmpnev_storeoffp_load (intptr_t *v, intptr_t expectnot,
				 long int voffp, intptr_t *load, int cpu)
{
  for (;;)
    {
      intptr_t head = atomic_load_relaxed (v);
      if (head == expectnot)
	return 1;

      struct cpu_op ops[2];
      op_compare_eq (&ops[0], v, &head, sizeof *v);
      op_memcpy (&ops[1], v, (const char *) head + voffp, sizeof *v);
      int ret = run_vector (ops, 2, cpu);
      if (ret == 0)
	{
	  *load = head;
	  return 0;
	}
      if (ret < 0)
	return ret;
      /* The head changed between the read and the vector: read again.  */
    }
}
