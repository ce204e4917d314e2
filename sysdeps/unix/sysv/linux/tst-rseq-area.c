/* Test the inline accessors for the rseq area in <sys/rseq.h>.
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

/* rseq_area_pointer, rseq_area_registered, rseq_area_cpu,
   rseq_area_node and rseq_area_mm_cid read the calling thread's rseq
   area when glibc registered it, and otherwise fall back to
   sched_getcpu and getcpu (or -1 for mm_cid).  Check them against the
   kernel on every CPU of the affinity mask, in several threads, and in
   a vfork child, which runs on its parent's area but is not registered
   with the kernel.  The test also passes with the glibc.pthread.rseq
   tunable set to 0, where every accessor takes its fallback.  */

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <support/check.h>
#include <support/xthread.h>
#include <support/xunistd.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <thread_pointer.h>
#include <unistd.h>

/* Number of threads reading their mm_cid at the same time.  */
#define NTHREADS 4

/* Number of reads per thread.  */
#define ITERATIONS 10000

/* The CPUs of the affinity mask.  */
static cpu_set_t allowed;
static int cpus[CPU_SETSIZE];
static int ncpus;

/* Bound for mm_cid: below the number of CPUs (possible CPUs, not only
   those of the affinity mask) or below the number of threads that ever
   ran, whichever is larger.  */
static int mm_cid_bound;

static pthread_barrier_t barrier;

/* The rseq area of the calling thread, or a null pointer if glibc did
   not register one.  */
static struct rseq *
expected_area (void)
{
  if (__rseq_size == 0)
    return NULL;
  return (struct rseq *) ((char *) __thread_pointer () + __rseq_offset);
}

static void
pin (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  if (sched_setaffinity (0, sizeof (set), &set) != 0)
    FAIL_EXIT1 ("sched_setaffinity (%d): %m", cpu);
}

/* The CPU and node of the calling thread, from the system call.  */
static void
kernel_getcpu (int *cpu, int *node)
{
  unsigned int c;
  unsigned int n;
  if (syscall (SYS_getcpu, &c, &n, NULL) != 0)
    FAIL_EXIT1 ("getcpu system call: %m");
  *cpu = c;
  *node = n;
}

/* Check rseq_area_mm_cid in a thread that is not a vfork child.  */
static void
check_mm_cid (void)
{
  int mm_cid = rseq_area_mm_cid ();
  if (__rseq_size < 28)
    TEST_COMPARE (mm_cid, -1);
  else
    {
      TEST_VERIFY (mm_cid >= 0);
      TEST_VERIFY (mm_cid < mm_cid_bound);
    }
}

/* Check the accessors of the calling thread, pinned to each CPU in
   turn.  */
static void
check_each_cpu (void)
{
  TEST_VERIFY (rseq_area_pointer () == expected_area ());
  TEST_COMPARE (rseq_area_registered (), __rseq_size > 0);

  for (int i = 0; i < ncpus; i++)
    {
      int cpu = cpus[i];
      int kcpu;
      int knode;
      unsigned int c;
      unsigned int n;

      pin (cpu);
      kernel_getcpu (&kcpu, &knode);
      TEST_COMPARE (kcpu, cpu);

      TEST_COMPARE (rseq_area_cpu (), cpu);
      TEST_COMPARE (sched_getcpu (), cpu);
      TEST_COMPARE (rseq_area_node (), knode);
      TEST_COMPARE (getcpu (&c, &n), 0);
      TEST_COMPARE (c, (unsigned int) cpu);
      TEST_COMPARE (n, (unsigned int) knode);
      check_mm_cid ();
    }

  if (sched_setaffinity (0, sizeof (allowed), &allowed) != 0)
    FAIL_EXIT1 ("sched_setaffinity: %m");
}

static void *
thread_func (void *closure)
{
  struct rseq *main_area = closure;

  /* Each thread has an area of its own.  */
  TEST_VERIFY (rseq_area_pointer () == expected_area ());
  if (main_area != NULL)
    TEST_VERIFY (rseq_area_pointer () != main_area);

  xpthread_barrier_wait (&barrier);
  for (int i = 0; i < ITERATIONS; i++)
    {
      check_mm_cid ();
      int cpu = rseq_area_cpu ();
      TEST_VERIFY (cpu >= 0 && cpu < CPU_SETSIZE
		   && CPU_ISSET (cpu, &allowed));
      if (i % 1000 == 0)
	sched_yield ();
    }
  xpthread_barrier_wait (&barrier);

  check_each_cpu ();
  return NULL;
}

/* The ports whose vfork and clone mark their children (see
   rseq-vfork.c); the others do not yet.  */
#if defined __x86_64__ || defined __i386__ || defined __aarch64__ \
  || defined __arm__ || defined __powerpc64__
# define VFORK_MARKS_CHILD 1
#else
# define VFORK_MARKS_CHILD 0
#endif

/* What the vfork child saw.  volatile because the compiler does not
   know that the child's stores reach the parent.  */
static volatile struct
{
  int pointer_is_null;
  int registered;
  int cpu;
  int node;
  int mm_cid;
  int kernel_cpu;
  int kernel_node;
} view;

/* The body of the vfork child: move to OTHER (unless it is negative)
   and record what the accessors and the kernel say.  Only stores to
   VIEW; the caller exits with _exit.  */
static void
child_body (int other)
{
  if (other >= 0)
    {
      cpu_set_t set;
      CPU_ZERO (&set);
      CPU_SET (other, &set);
      if (sched_setaffinity (0, sizeof (set), &set) != 0)
	return;
    }
  view.pointer_is_null = rseq_area_pointer () == NULL;
  view.registered = rseq_area_registered ();
  view.cpu = rseq_area_cpu ();
  view.node = rseq_area_node ();
  view.mm_cid = rseq_area_mm_cid ();
  unsigned int c;
  unsigned int n;
  if (syscall (SYS_getcpu, &c, &n, NULL) == 0)
    {
      view.kernel_cpu = c;
      view.kernel_node = n;
    }
}

/* Check the accessors in a vfork child of the calling thread, pinned
   to HOME, which moves to OTHER (unless it is negative).  */
static void
check_vfork (int home, int other)
{
  pin (home);
  view.pointer_is_null = -1;
  view.registered = -1;
  view.cpu = -1;
  view.node = -1;
  view.mm_cid = -2;
  view.kernel_cpu = -2;
  view.kernel_node = -2;

  pid_t pid = vfork ();
  if (pid == 0)
    {
      child_body (other);
      _exit (0);
    }
  if (pid < 0)
    FAIL_EXIT1 ("vfork: %m");

  int status;
  xwaitpid (pid, &status, 0);
  TEST_VERIFY (WIFEXITED (status));
  TEST_COMPARE (WEXITSTATUS (status), 0);

  /* The child is not registered: it must not use its parent's area,
     which still shows HOME.  */
  TEST_COMPARE (view.pointer_is_null, 1);
  TEST_COMPARE (view.registered, 0);
  TEST_COMPARE (view.mm_cid, -1);
  if (other >= 0)
    TEST_COMPARE (view.kernel_cpu, other);
  TEST_COMPARE (view.cpu, view.kernel_cpu);
  TEST_COMPARE (view.node, view.kernel_node);

  /* The parent uses its area again.  */
  TEST_VERIFY (rseq_area_pointer () == expected_area ());
  TEST_COMPARE (rseq_area_registered (), __rseq_size > 0);
  TEST_COMPARE (rseq_area_cpu (), home);

  if (sched_setaffinity (0, sizeof (allowed), &allowed) != 0)
    FAIL_EXIT1 ("sched_setaffinity: %m");
}

static int
do_test (void)
{
  printf ("info: __rseq_size: %u, rseq_area_pointer: %p\n", __rseq_size,
	  (void *) rseq_area_pointer ());

  if (sched_getaffinity (0, sizeof (allowed), &allowed) != 0)
    FAIL_EXIT1 ("sched_getaffinity: %m");
  for (int i = 0; i < CPU_SETSIZE; i++)
    if (CPU_ISSET (i, &allowed))
      cpus[ncpus++] = i;
  TEST_VERIFY_EXIT (ncpus > 0);

  /* The main thread, the test threads, and the vfork children.  */
  mm_cid_bound = get_nprocs_conf ();
  if (mm_cid_bound < NTHREADS + 2)
    mm_cid_bound = NTHREADS + 2;
  printf ("info: %d CPUs in the affinity mask, %d configured,"
	  " mm_cid %d\n", ncpus, get_nprocs_conf (), rseq_area_mm_cid ());

  check_each_cpu ();
  check_mm_cid ();

  pthread_t threads[NTHREADS];
  xpthread_barrier_init (&barrier, NULL, NTHREADS);
  for (int i = 0; i < NTHREADS; i++)
    threads[i] = xpthread_create (NULL, thread_func, rseq_area_pointer ());
  for (int i = 0; i < NTHREADS; i++)
    xpthread_join (threads[i]);
  xpthread_barrier_destroy (&barrier);

  for (int i = 0; i < 4; i++)
    if (VFORK_MARKS_CHILD)
      check_vfork (cpus[i % ncpus], ncpus > 1 ? cpus[(i + 1) % ncpus] : -1);

  check_each_cpu ();
  return 0;
}

#include <support/test-driver.c>
