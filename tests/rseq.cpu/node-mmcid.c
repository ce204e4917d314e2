/* node_id and mm_cid (Linux 6.3 and later): the node matches getcpu
   and sysfs for the CPU the thread runs on, and mm_cid is below the
   number of live threads (0 for a single-threaded process).  */
#include "cpu-helpers.h"
#include <pthread.h>

#define NTHREADS 8

static pthread_barrier_t barrier;
static volatile int live;

static void
check_node_here (const char *where)
{
  for (int attempt = 0; attempt < 1000; attempt++)
    {
      unsigned int cpu, node;
      int before = rseq_area_cpu ();
      int area_node = rseq_area_node ();
      CHECK (syscall_getcpu (&cpu, &node) == 0);
      if (before != (int) cpu || rseq_area_cpu () != before)
	continue;		/* Migrated meanwhile; try again.  */
      if (area_node != (int) node)
	FAIL ("%s: node_id %d, getcpu says %u", where, area_node, node);
      if (area_node != sysfs_node_of_cpu (before))
	FAIL ("%s: node_id %d, sysfs says %d for CPU %d", where,
	      area_node, sysfs_node_of_cpu (before), before);
      return;
    }
  FAIL ("%s: never a stable CPU reading", where);
}

static void
check_mm_cid_here (const char *where)
{
  int cid = rseq_area_mm_cid ();
  if (cid < 0 || cid >= live)
    FAIL ("%s: mm_cid %d with %d live threads", where, cid, live);
}

static void *
worker (void *arg)
{
  pthread_barrier_wait (&barrier);
  check_node_here ("thread");
  check_mm_cid_here ("thread");
  pthread_barrier_wait (&barrier);
  return arg;
}

int
main (void)
{
  require_kernel_rseq ();
  if (__rseq_size < 28)
    UNSUPPORTED ("kernel provides no node_id/mm_cid (__rseq_size %u)",
		 __rseq_size);

  live = 1;
  check_node_here ("main");
  check_mm_cid_here ("main");
  /* A single-threaded process has one concurrency ID: 0.  */
  CHECK_EQ (rseq_area_mm_cid (), 0);

  /* Pinned to each CPU, the node follows.  */
  cpu_set_t allowed;
  CHECK (sched_getaffinity (0, sizeof allowed, &allowed) == 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &allowed))
      {
	pin_to_cpu (cpu);
	CHECK_EQ (rseq_area_node (), sysfs_node_of_cpu (cpu));
	check_mm_cid_here ("main, pinned");
      }
  CHECK (sched_setaffinity (0, sizeof allowed, &allowed) == 0);

  pthread_t threads[NTHREADS];
  CHECK (pthread_barrier_init (&barrier, NULL, NTHREADS + 1) == 0);
  live = NTHREADS + 1;
  for (long i = 0; i < NTHREADS; i++)
    CHECK (pthread_create (&threads[i], NULL, worker, (void *) i) == 0);
  pthread_barrier_wait (&barrier);
  check_mm_cid_here ("main with threads");
  pthread_barrier_wait (&barrier);
  for (int i = 0; i < NTHREADS; i++)
    CHECK (pthread_join (threads[i], NULL) == 0);
  return 0;
}
