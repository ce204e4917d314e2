/* Test getcpu, which is served from the rseq area when node_id is valid.
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

/* When __rseq_size covers node_id (Linux 6.3 and later), getcpu reads
   cpu_id and node_id from the rseq area instead of asking the kernel.
   Check that it reports the CPU a thread is pinned to and the node the
   kernel reports for it, on every CPU of the affinity mask, with null
   arguments, and from several threads at once, pinned and roaming.  */

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <support/check.h>
#include <support/xthread.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Number of getcpu calls per thread.  */
#define ITERATIONS 100000

/* At most this many threads.  */
#define MAX_THREADS 16

/* The CPUs of the affinity mask, and the node of each CPU according to
   the kernel.  */
static cpu_set_t allowed;
static int cpus[CPU_SETSIZE];
static int ncpus;
static int node_of_cpu[CPU_SETSIZE];

static pthread_barrier_t barrier;

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

/* Pin the calling thread to each CPU in turn and compare getcpu with
   the kernel.  Fills node_of_cpu.  */
static void
check_each_cpu (void)
{
  for (int i = 0; i < ncpus; i++)
    {
      int cpu = cpus[i];
      int kcpu;
      int knode;
      unsigned int c = -1;
      unsigned int n = -1;

      pin (cpu);
      kernel_getcpu (&kcpu, &knode);
      TEST_COMPARE (kcpu, cpu);
      node_of_cpu[cpu] = knode;

      TEST_COMPARE (getcpu (&c, &n), 0);
      TEST_COMPARE (c, (unsigned int) cpu);
      TEST_COMPARE (n, (unsigned int) knode);
      TEST_COMPARE (sched_getcpu (), cpu);

      /* Either argument may be a null pointer.  */
      TEST_COMPARE (getcpu (NULL, NULL), 0);
      c = -1;
      TEST_COMPARE (getcpu (&c, NULL), 0);
      TEST_COMPARE (c, (unsigned int) cpu);
      n = -1;
      TEST_COMPARE (getcpu (NULL, &n), 0);
      TEST_COMPARE (n, (unsigned int) knode);
    }
}

/* A thread pinned to the CPU at index ARG % ncpus of cpus or, if ARG
   is negative, free to run on every CPU of the affinity mask.  Returns
   the number of wrong results.  */
static void *
thread_func (void *arg)
{
  int index = (int) (intptr_t) arg;
  int roaming = index < 0;
  int cpu = roaming ? -1 : cpus[index % ncpus];
  long int mismatches = 0;

  if (!roaming)
    pin (cpu);
  xpthread_barrier_wait (&barrier);

  for (int i = 0; i < ITERATIONS; i++)
    {
      unsigned int c = -1;
      unsigned int n = -1;
      if (getcpu (&c, &n) != 0)
	{
	  printf ("error: getcpu failed: %m\n");
	  ++mismatches;
	  continue;
	}
      /* A roaming thread cannot know its CPU, but the CPU and the node
	 it gets must belong together: a migration between the loads of
	 cpu_id and node_id must not mix up two CPUs.  */
      if (c >= CPU_SETSIZE || !CPU_ISSET (c, &allowed)
	  || (!roaming && c != (unsigned int) cpu)
	  || n != (unsigned int) node_of_cpu[c])
	{
	  if (mismatches == 0)
	    printf ("error: thread %d (CPU %d): getcpu returned CPU %u,"
		    " node %u\n", index, cpu, c, n);
	  ++mismatches;
	}
      if (!roaming && sched_getcpu () != cpu)
	++mismatches;
      /* Let the threads that share a CPU preempt each other.  */
      if (i % 1000 == 0)
	sched_yield ();
    }

  return (void *) (intptr_t) mismatches;
}

static int
do_test (void)
{
  printf ("info: __rseq_size: %u, getcpu %s the rseq area\n", __rseq_size,
	  __rseq_size >= 24 ? "is served from" : "does not use");

  if (sched_getaffinity (0, sizeof (allowed), &allowed) != 0)
    FAIL_EXIT1 ("sched_getaffinity: %m");
  for (int i = 0; i < CPU_SETSIZE; i++)
    if (CPU_ISSET (i, &allowed))
      cpus[ncpus++] = i;
  TEST_VERIFY_EXIT (ncpus > 0);
  printf ("info: %d CPUs in the affinity mask\n", ncpus);

  check_each_cpu ();

  /* Back to the whole mask, so that the threads may use every CPU.  */
  if (sched_setaffinity (0, sizeof (allowed), &allowed) != 0)
    FAIL_EXIT1 ("sched_setaffinity: %m");

  /* Two pinned threads per CPU, so that threads sharing a CPU preempt
     each other, and one roaming thread.  */
  int npinned = 2 * ncpus;
  if (npinned > MAX_THREADS - 1)
    npinned = MAX_THREADS - 1;
  int nthreads = npinned + 1;
  pthread_t threads[MAX_THREADS];
  xpthread_barrier_init (&barrier, NULL, nthreads);
  for (int i = 0; i < nthreads; i++)
    threads[i] = xpthread_create (NULL, thread_func,
				  (void *) (intptr_t) (i < npinned ? i : -1));
  for (int i = 0; i < nthreads; i++)
    TEST_COMPARE ((intptr_t) xpthread_join (threads[i]), 0);
  xpthread_barrier_destroy (&barrier);

  /* Once more on the main thread, after the others have run.  */
  check_each_cpu ();

  return 0;
}

#include <support/test-driver.c>
