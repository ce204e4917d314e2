/* For every CPU in the affinity mask, pinned there: sched_getcpu,
   getcpu, rseq_area_cpu and rseq_area_node give that CPU and its node,
   in the main thread and in a new thread.  */
#include "cpu-helpers.h"
#include <pthread.h>

static cpu_set_t allowed;

static void
check_pinned_cpus (const char *where)
{
  int tested = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    {
      if (!CPU_ISSET (cpu, &allowed))
	continue;
      pin_to_cpu (cpu);
      int node = sysfs_node_of_cpu (cpu);
      unsigned int c = ~0u, n = ~0u, sc, sn;

      CHECK_EQ (sched_getcpu (), cpu);
      CHECK (getcpu (&c, &n) == 0);
      CHECK_EQ (c, cpu);
      CHECK_EQ (n, node);
      CHECK (syscall_getcpu (&sc, &sn) == 0);
      CHECK_EQ (sn, n);
      CHECK_EQ (rseq_area_cpu (), cpu);
      CHECK_EQ (rseq_area_node (), node);
      /* Null arguments are allowed, as for the system call.  */
      c = ~0u;
      CHECK (getcpu (&c, NULL) == 0);
      CHECK_EQ (c, cpu);
      n = ~0u;
      CHECK (getcpu (NULL, &n) == 0);
      CHECK_EQ (n, node);
      tested++;
    }
  if (tested == 0)
    FAIL ("%s: empty affinity mask", where);
  /* Restore the full mask for whoever runs next.  */
  CHECK (sched_setaffinity (0, sizeof allowed, &allowed) == 0);
}

static void *
thread_main (void *arg)
{
  check_pinned_cpus ("thread");
  return arg;
}

int
main (void)
{
  require_kernel_rseq ();
  CHECK (sched_getaffinity (0, sizeof allowed, &allowed) == 0);
  check_pinned_cpus ("main");
  pthread_t t;
  CHECK (pthread_create (&t, NULL, thread_main, NULL) == 0);
  CHECK (pthread_join (t, NULL) == 0);
  return 0;
}
