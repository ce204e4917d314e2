/* Test the cpu_opv system call wrapper and its vector helpers.
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

/* cpu_opv is provided by the rseq toolchain's Linux patches only.  On a
   kernel without it every call must fail with ENOSYS, without the
   system call number ever being used, and without writing anything;
   the one error the wrapper reports by itself is EINVAL for a copy
   that cpu_opv_cmpstorememcpy cannot split into one vector.  On a
   kernel with it, malformed vectors must fail with EINVAL or EFAULT
   without writing anything, compares must return the index + 1 of the
   first one that failed, and concurrent vectors on the same CPU must
   not lose updates.  */

#include <errno.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/cpu_opv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <support/check.h>
#include <support/support.h>
#include <support/xthread.h>
#include <support/xunistd.h>

/* The number the rseq toolchain's kernel patches give cpu_opv on every
   architecture.  A kernel without cpu_opv may use it for something
   else, which is why glibc only calls it when AT_CPU_OPV names it.  */
#define CPU_OPV_NUMBER 500

/* Check that EXPR fails with errno ERR.  */
#define CHECK_FAILURE(expr, err)					\
  do									\
    {									\
      errno = 0;							\
      int check_ret = (expr);						\
      int check_errno = errno;						\
      if (check_ret != -1 || check_errno != (err))			\
	FAIL ("%s: returned %d, errno %d (%s), expected -1 with %s",	\
	      #expr, check_ret, check_errno, strerrorname_np (check_errno), \
	      #err);							\
    }									\
  while (0)

/* The largest copy cpu_opv_cmpstorememcpy can do in one vector: every
   operation but the compare and the final store copies at most
   CPU_OP_DATA_LEN_MAX bytes.  */
#define MEMCPY_MAX ((CPU_OP_VEC_LEN_MAX - 2) * CPU_OP_DATA_LEN_MAX)

static unsigned char copy_src[MEMCPY_MAX + 1];
static unsigned char copy_dst[MEMCPY_MAX + 1];

static void
op_add (struct cpu_op *op, void *p, int64_t count, uint32_t len)
{
  memset (op, 0, sizeof *op);
  op->op = CPU_ADD_OP;
  op->len = len;
  op->u.arithmetic_op.p = (uintptr_t) p;
  op->u.arithmetic_op.count = count;
}

static void
op_compare (struct cpu_op *op, int type, const void *a, const void *b,
	    uint32_t len)
{
  memset (op, 0, sizeof *op);
  op->op = type;
  op->len = len;
  op->u.compare_op.a = (uintptr_t) a;
  op->u.compare_op.b = (uintptr_t) b;
}

static void
op_memcpy (struct cpu_op *op, void *dst, const void *src, uint32_t len)
{
  memset (op, 0, sizeof *op);
  op->op = CPU_MEMCPY_OP;
  op->len = len;
  op->u.memcpy_op.dst = (uintptr_t) dst;
  op->u.memcpy_op.src = (uintptr_t) src;
}

static void
op_bitwise (struct cpu_op *op, int type, void *p, uint64_t mask,
	    uint32_t len)
{
  memset (op, 0, sizeof *op);
  op->op = type;
  op->len = len;
  op->u.bitwise_op.p = (uintptr_t) p;
  op->u.bitwise_op.mask = mask;
}

static void
op_shift (struct cpu_op *op, int type, void *p, uint32_t bits, uint32_t len)
{
  memset (op, 0, sizeof *op);
  op->op = type;
  op->len = len;
  op->u.shift_op.p = (uintptr_t) p;
  op->u.shift_op.bits = bits;
}

static int
current_cpu (void)
{
  int cpu = sched_getcpu ();
  TEST_VERIFY_EXIT (cpu >= 0);
  return cpu;
}

/* cpu_opv_cmpstorememcpy splits a copy into the operations of a single
   vector, and refuses one that does not fit before calling the kernel,
   with or without cpu_opv.  */
static void
test_memcpy_limit (bool present)
{
  intptr_t v = 1;
  memset (copy_src, 0x5a, sizeof copy_src);
  memset (copy_dst, 0, sizeof copy_dst);

  CHECK_FAILURE (cpu_opv_cmpstorememcpy (&v, 1, copy_dst, copy_src,
					 MEMCPY_MAX + 1, 2, 0), EINVAL);
  TEST_COMPARE (v, 1);
  TEST_COMPARE (copy_dst[0], 0);
  TEST_COMPARE (copy_dst[MEMCPY_MAX], 0);

  if (present)
    {
      int cpu = current_cpu ();
      /* A mismatch copies nothing.  */
      TEST_COMPARE (cpu_opv_cmpstorememcpy (&v, 7, copy_dst, copy_src,
					    MEMCPY_MAX, 2, cpu), 1);
      TEST_COMPARE (v, 1);
      TEST_COMPARE (copy_dst[0], 0);
      TEST_COMPARE (copy_dst[MEMCPY_MAX - 1], 0);
      /* The largest copy: 14 pieces between compare and store.  */
      TEST_COMPARE (cpu_opv_cmpstorememcpy (&v, 1, copy_dst, copy_src,
					    MEMCPY_MAX, 2, cpu), 0);
      TEST_COMPARE (v, 2);
      TEST_COMPARE_BLOB (copy_dst, MEMCPY_MAX, copy_src, MEMCPY_MAX);
      TEST_COMPARE (copy_dst[MEMCPY_MAX], 0);
    }
  else
    CHECK_FAILURE (cpu_opv_cmpstorememcpy (&v, 1, copy_dst, copy_src,
					   MEMCPY_MAX, 2, 0), ENOSYS);
  TEST_COMPARE (v, present ? 2 : 1);
}

/* Without cpu_opv, every entry point fails with ENOSYS and writes
   nothing, whatever its arguments: the wrapper checks nothing else
   before asking the auxiliary vector.  */
static void
check_enosys (void)
{
  intptr_t v = 5, v2 = 6, old = 7;
  uint64_t x = 10;
  struct cpu_op ops[CPU_OP_VEC_LEN_MAX + 1];

  for (int i = 0; i < CPU_OP_VEC_LEN_MAX + 1; i++)
    op_add (&ops[i], &x, 1, sizeof x);

  CHECK_FAILURE (cpu_opv (NULL, 0, 0, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv (ops, 1, 0, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv (ops, 1, 0, 1), ENOSYS);
  CHECK_FAILURE (cpu_opv (ops, -1, 0, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv (ops, CPU_OP_VEC_LEN_MAX + 1, 0, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv (ops, 1, -1, 0), ENOSYS);
  TEST_COMPARE (x, 10u);

  CHECK_FAILURE (cpu_opv_cmpstore (&v, 5, 8, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv_2cmp1store (&v, 5, &v2, 6, 8, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv_1cmp2store (&v, 5, &v2, 9, 8, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv_cmpxchg (&v, 5, &old, 8, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv_add (&x, 1, sizeof x, 0), ENOSYS);
  CHECK_FAILURE (cpu_opv_add (&x, 1, 3, -1), ENOSYS);
  CHECK_FAILURE (cpu_opv_cmpstorememcpy (&v, 5, &v2, &old, sizeof v2, 8, 0),
		 ENOSYS);
  TEST_COMPARE (v, 5);
  TEST_COMPARE (v2, 6);
  TEST_COMPARE (old, 7);
  TEST_COMPARE (x, 10u);

  test_memcpy_limit (false);
}

/* Run check_enosys in a subprocess in which the cpu_opv number fails
   with EPERM: ENOSYS then shows that the wrapper did not make the
   system call.  */
static void
check_enosys_without_syscall (void)
{
  pid_t pid = xfork ();
  if (pid == 0)
    {
      struct sock_filter filter[] =
	{
	  BPF_STMT (BPF_LD | BPF_W | BPF_ABS,
		    offsetof (struct seccomp_data, nr)),
	  BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, CPU_OPV_NUMBER, 0, 1),
	  BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	  BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
      struct sock_fprog prog =
	{
	  .len = sizeof (filter) / sizeof (filter[0]),
	  .filter = filter,
	};
      if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
	  || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
	{
	  printf ("info: no seccomp filter (%m), checking without it\n");
	  check_enosys ();
	  _exit (0);
	}
      printf ("info: system call %d fails with EPERM: ENOSYS shows that "
	      "it is not made\n", CPU_OPV_NUMBER);
      check_enosys ();
      _exit (0);
    }
  int status;
  xwaitpid (pid, &status, 0);
  TEST_VERIFY (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}

/* Malformed vectors and arguments: EINVAL or EFAULT, and nothing
   written, not even by the valid operations before the bad one.  */
static void
test_bad_vectors (int cpu, void *no_access)
{
  uint64_t x = 100;
  uint32_t y = 200;
  unsigned char bytes[16] = { 0 };
  struct cpu_op ops[CPU_OP_VEC_LEN_MAX + 1];

  for (int i = 0; i < CPU_OP_VEC_LEN_MAX + 1; i++)
    op_add (&ops[i], &x, 1, sizeof x);

  CHECK_FAILURE (cpu_opv (NULL, 0, 0, 0), EINVAL);
  CHECK_FAILURE (cpu_opv (ops, 1, cpu, 1), EINVAL);
  CHECK_FAILURE (cpu_opv (ops, 0, cpu, 0), EINVAL);
  CHECK_FAILURE (cpu_opv (ops, -1, cpu, 0), EINVAL);
  CHECK_FAILURE (cpu_opv (ops, CPU_OP_VEC_LEN_MAX + 1, cpu, 0), EINVAL);
  CHECK_FAILURE (cpu_opv (ops, 1, -1, 0), EINVAL);
  CHECK_FAILURE (cpu_opv (ops, 1, INT_MAX, 0), EINVAL);
  TEST_COMPARE (x, 100u);

  /* The full length is accepted.  */
  TEST_COMPARE (cpu_opv (ops, CPU_OP_VEC_LEN_MAX, cpu, 0), 0);
  TEST_COMPARE (x, 100u + CPU_OP_VEC_LEN_MAX);
  x = 100;

  /* A valid add followed by each kind of bad operation.  */
  ops[1].op = CPU_RSHIFT_OP + 1;
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);
  op_add (&ops[1], &y, 1, 3);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);
  op_add (&ops[1], bytes + 1, 1, 4);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);
  op_shift (&ops[1], CPU_LSHIFT_OP, &y, 32, sizeof y);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);
  op_memcpy (&ops[1], bytes, bytes + 4, 8);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);
  op_memcpy (&ops[1], copy_dst, copy_src, 0);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);
  op_memcpy (&ops[1], copy_dst, copy_src, CPU_OP_DATA_LEN_MAX + 1);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);
  op_compare (&ops[1], CPU_COMPARE_EQ_OP, &x, &x, CPU_OP_DATA_LEN_MAX + 1);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EINVAL);

  /* Memory that cannot be read or written.  */
  op_add (&ops[1], no_access, 1, sizeof x);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EFAULT);
  op_compare (&ops[1], CPU_COMPARE_EQ_OP, &y, no_access, sizeof y);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EFAULT);
  op_memcpy (&ops[1], &y, no_access, sizeof y);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EFAULT);
  op_add (&ops[1], NULL, 1, sizeof x);
  CHECK_FAILURE (cpu_opv (ops, 2, cpu, 0), EFAULT);
  CHECK_FAILURE (cpu_opv ((struct cpu_op *) no_access, 1, cpu, 0), EFAULT);

  TEST_COMPARE (x, 100u);
  TEST_COMPARE (y, 200u);
  for (size_t i = 0; i < sizeof bytes; i++)
    TEST_COMPARE (bytes[i], 0);

  /* The helpers report the kernel's errors.  */
  CHECK_FAILURE (cpu_opv_add (&y, 1, 3, cpu), EINVAL);
  CHECK_FAILURE (cpu_opv_add (&y, 1, sizeof y, -1), EINVAL);
  CHECK_FAILURE (cpu_opv_add (no_access, 1, sizeof y, cpu), EFAULT);
  intptr_t v = 1;
  CHECK_FAILURE (cpu_opv_cmpstore (&v, 1, 2, INT_MAX), EINVAL);
  TEST_COMPARE (v, 1);
  TEST_COMPARE (y, 200u);
}

/* A CPU outside the caller's affinity mask is refused.  */
static void
test_cpu_not_allowed (const cpu_set_t *allowed)
{
  int first = -1, second = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE && second < 0; cpu++)
    if (CPU_ISSET (cpu, allowed))
      {
	if (first < 0)
	  first = cpu;
	else
	  second = cpu;
      }
  if (second < 0)
    {
      puts ("info: one CPU only: affinity check skipped");
      return;
    }

  cpu_set_t one;
  CPU_ZERO (&one);
  CPU_SET (first, &one);
  TEST_COMPARE (sched_setaffinity (0, sizeof one, &one), 0);
  intptr_t v = 1;
  CHECK_FAILURE (cpu_opv_cmpstore (&v, 1, 2, second), EINVAL);
  TEST_COMPARE (v, 1);
  TEST_COMPARE (cpu_opv_cmpstore (&v, 1, 2, first), 0);
  TEST_COMPARE (v, 2);
  TEST_COMPARE (sched_setaffinity (0, sizeof *allowed, allowed), 0);
}

/* Results of successful and failed compares, and every operation.  */
static void
test_vectors (int cpu)
{
  intptr_t v = 10, v2 = 20, old = 0;

  /* Compare and store: 0 when it matched, else 1 (the index + 1 of the
     compare) and nothing stored.  */
  TEST_COMPARE (cpu_opv_cmpstore (&v, 10, 11, cpu), 0);
  TEST_COMPARE (v, 11);
  TEST_COMPARE (cpu_opv_cmpstore (&v, 10, 12, cpu), 1);
  TEST_COMPARE (v, 11);

  TEST_COMPARE (cpu_opv_2cmp1store (&v, 11, &v2, 20, 13, cpu), 0);
  TEST_COMPARE (v, 13);
  TEST_COMPARE (cpu_opv_2cmp1store (&v, 12, &v2, 20, 14, cpu), 1);
  TEST_COMPARE (cpu_opv_2cmp1store (&v, 13, &v2, 21, 14, cpu), 2);
  TEST_COMPARE (v, 13);

  TEST_COMPARE (cpu_opv_1cmp2store (&v, 13, &v2, 22, 15, cpu), 0);
  TEST_COMPARE (v, 15);
  TEST_COMPARE (v2, 22);
  TEST_COMPARE (cpu_opv_1cmp2store (&v, 13, &v2, 23, 16, cpu), 1);
  TEST_COMPARE (v, 15);
  TEST_COMPARE (v2, 22);

  TEST_COMPARE (cpu_opv_cmpxchg (&v, 15, &old, 17, cpu), 0);
  TEST_COMPARE (old, 15);
  TEST_COMPARE (v, 17);
  TEST_COMPARE (cpu_opv_cmpxchg (&v, 15, &old, 18, cpu), 2);
  TEST_COMPARE (old, 17);
  TEST_COMPARE (v, 17);

  /* Integer lengths wrap within their bytes and leave their neighbours
     alone.  */
  union
  {
    uint64_t word;
    uint8_t bytes[8];
  } u = { .word = 0 };
  u.bytes[1] = 0xff;
  TEST_COMPARE (cpu_opv_add (&u.bytes[1], 1, 1, cpu), 0);
  TEST_COMPARE (u.word, 0u);
  TEST_COMPARE (cpu_opv_add (&v, -7, sizeof v, cpu), 0);
  TEST_COMPARE (v, 10);

  /* A raw vector that fails its third operation, a compare: the
     operations before it ran, those after it did not.  */
  uint64_t x = 1, y = 1, expect = 1, wrong = 2;
  struct cpu_op ops[4];
  op_compare (&ops[0], CPU_COMPARE_EQ_OP, &x, &expect, sizeof x);
  op_add (&ops[1], &x, 5, sizeof x);
  op_compare (&ops[2], CPU_COMPARE_NE_OP, &y, &expect, sizeof y);
  op_add (&ops[3], &y, 5, sizeof y);
  TEST_COMPARE (cpu_opv (ops, 4, cpu, 0), 3);
  TEST_COMPARE (x, 6u);
  TEST_COMPARE (y, 1u);
  op_compare (&ops[2], CPU_COMPARE_NE_OP, &y, &wrong, sizeof y);
  TEST_COMPARE (cpu_opv (ops, 4, cpu, 0), 1);
  TEST_COMPARE (x, 6u);
  expect = 6;
  TEST_COMPARE (cpu_opv (ops, 4, cpu, 0), 0);
  TEST_COMPARE (x, 11u);
  TEST_COMPARE (y, 6u);

  /* The bitwise and shift operations.  */
  uint32_t w = 0x0f;
  uint16_t h = 0x8001;
  op_bitwise (&ops[0], CPU_XOR_OP, &w, 0xff, sizeof w);
  op_bitwise (&ops[1], CPU_OR_OP, &w, 0x100, sizeof w);
  op_bitwise (&ops[2], CPU_AND_OP, &w, 0x1f0, sizeof w);
  op_shift (&ops[3], CPU_RSHIFT_OP, &h, 15, sizeof h);
  TEST_COMPARE (cpu_opv (ops, 4, cpu, 0), 0);
  TEST_COMPARE (w, 0x1f0u);
  TEST_COMPARE (h, 1);
  op_shift (&ops[0], CPU_LSHIFT_OP, &h, 15, sizeof h);
  TEST_COMPARE (cpu_opv (ops, 1, cpu, 0), 0);
  TEST_COMPARE (h, 0x8000);
}

/* Concurrent additions.  Every thread adds to the counter of every
   allowed CPU, starting at a different one, so that vectors of several
   threads target the same CPU and the same counter at the same time:
   each must see the others' results.  */
enum { THREADS = 4, ROUNDS = 100 };

struct counter
{
  uint64_t value;
} __attribute__ ((aligned (64)));

static struct counter *counters;
static cpu_set_t allowed_cpus;
static pthread_barrier_t start_barrier;

static void *
adder (void *closure)
{
  int index = (int) (intptr_t) closure;
  int64_t count = index + 1;
  xpthread_barrier_wait (&start_barrier);
  for (int round = 0; round < ROUNDS; round++)
    for (int i = 0; i < CPU_SETSIZE; i++)
      {
	int cpu = (i + index) % CPU_SETSIZE;
	if (CPU_ISSET (cpu, &allowed_cpus))
	  TEST_COMPARE (cpu_opv_add (&counters[cpu].value, count,
				     sizeof counters[cpu].value, cpu), 0);
      }
  return NULL;
}

static void
test_concurrent_add (void)
{
  counters = xcalloc (CPU_SETSIZE, sizeof *counters);
  pthread_t threads[THREADS];
  xpthread_barrier_init (&start_barrier, NULL, THREADS);
  for (int i = 0; i < THREADS; i++)
    threads[i] = xpthread_create (NULL, adder, (void *) (intptr_t) i);
  for (int i = 0; i < THREADS; i++)
    xpthread_join (threads[i]);
  xpthread_barrier_destroy (&start_barrier);

  uint64_t expected = 0;
  for (int i = 0; i < THREADS; i++)
    expected += ROUNDS * (i + 1);
  int ncpus = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &allowed_cpus))
      {
	ncpus++;
	if (counters[cpu].value != expected)
	  FAIL ("counter of CPU %d is %llu, expected %llu", cpu,
		(unsigned long long int) counters[cpu].value,
		(unsigned long long int) expected);
      }
    else
      TEST_COMPARE (counters[cpu].value, 0u);
  printf ("info: %d threads added to the counters of %d CPUs\n", THREADS,
	  ncpus);
  free (counters);
}

static int
do_test (void)
{
  /* cpu_opv (NULL, 0, 0, 0) tells whether the kernel has cpu_opv.  */
  errno = 0;
  int ret = cpu_opv (NULL, 0, 0, 0);
  int err = errno;
  TEST_COMPARE (ret, -1);
  if (err != EINVAL && err != ENOSYS)
    FAIL_EXIT1 ("cpu_opv (NULL, 0, 0, 0): errno %d (%s), expected EINVAL "
		"or ENOSYS", err, strerrorname_np (err));

  if (err == ENOSYS)
    {
      check_enosys_without_syscall ();
      FAIL_UNSUPPORTED ("the kernel has no cpu_opv");
    }

  TEST_COMPARE (sched_getaffinity (0, sizeof allowed_cpus, &allowed_cpus),
		0);
  void *no_access = xmmap (NULL, 4096, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1);
  int cpu = current_cpu ();
  test_memcpy_limit (true);
  test_bad_vectors (cpu, no_access);
  test_cpu_not_allowed (&allowed_cpus);
  test_vectors (current_cpu ());
  test_concurrent_add ();
  xmunmap (no_access, 4096);
  return 0;
}

#include <support/test-driver.c>
