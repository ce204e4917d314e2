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
#include <fcntl.h>
#include <not-cancel.h>
#include <stdbool.h>
#include <string.h>
#include <cpu_opv-internal.h>
#include <sysdep.h>

/* The rseq toolchain's kernel patches use 500 on every architecture.
   Upstream Linux has not reserved it, so a kernel without cpu_opv may
   use it for something else: it is called only when the kernel says,
   in CPU_OPV_SYSCTL, that it is cpu_opv.  */
#ifndef __NR_cpu_opv
# define __NR_cpu_opv 500
#endif
#define CPU_OPV_SYSCTL "/proc/sys/kernel/cpu_opv_syscall"

/* 0: not probed yet; 1: the kernel has cpu_opv; -1: it has not.  */
static int cpu_opv_state;

/* Read the system call number the kernel publishes; -1 if none.  */
static long int
cpu_opv_published_number (void)
{
  char buf[24];
  int fd = __open_nocancel (CPU_OPV_SYSCTL, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = __read_nocancel (fd, buf, sizeof buf - 1);
  __close_nocancel_nostatus (fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';

  long int nr = 0;
  char *p = buf;
  if (*p < '0' || *p > '9')
    return -1;
  for (; *p >= '0' && *p <= '9' && nr < 100000; p++)
    nr = nr * 10 + (*p - '0');
  return *p == '\n' || *p == '\0' ? nr : -1;
}

static bool
cpu_opv_present (void)
{
  int state = atomic_load_relaxed (&cpu_opv_state);
  if (state == 0)
    {
      int saved_errno = errno;
      state = cpu_opv_published_number () == __NR_cpu_opv ? 1 : -1;
      __set_errno (saved_errno);
      atomic_store_relaxed (&cpu_opv_state, state);
    }
  return state > 0;
}

int
cpu_opv (struct cpu_op *ops, int count, int cpu, int flags)
{
  if (!cpu_opv_present ())
    return INLINE_SYSCALL_ERROR_RETURN_VALUE (ENOSYS);
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
