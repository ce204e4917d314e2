/* Checks for a process in which glibc's rseq registration is off or
   failed: nothing aborts, threads start, and the CPU lookups fall back
   to the vDSO or system call and still give the right answers.  */
#include "../rseq.cpu/cpu-helpers.h"
#include <pthread.h>

static void
check_unregistered (const char *where)
{
  CHECK_EQ (__rseq_size, 0);
  /* The area still exists and says registration failed.  */
  CHECK_EQ (raw_area_cpu_id (), RSEQ_CPU_ID_REGISTRATION_FAILED);
  CHECK (rseq_area_pointer () == NULL);
  CHECK (!rseq_area_registered ());
  CHECK_EQ (rseq_area_mm_cid (), -1);

  cpu_set_t allowed;
  CHECK (sched_getaffinity (0, sizeof allowed, &allowed) == 0);
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET (cpu, &allowed))
      {
	pin_to_cpu (cpu);
	unsigned int c, n;
	CHECK_EQ (sched_getcpu (), cpu);
	CHECK (getcpu (&c, &n) == 0);
	CHECK_EQ (c, cpu);
	CHECK_EQ (n, sysfs_node_of_cpu (cpu));
	CHECK_EQ (rseq_area_cpu (), cpu);
	CHECK_EQ (rseq_area_node (), sysfs_node_of_cpu (cpu));
      }
  CHECK (sched_setaffinity (0, sizeof allowed, &allowed) == 0);
  (void) where;
}

static void *
unregistered_thread (void *arg)
{
  check_unregistered ("thread");
  return arg;
}

/* Run the checks in the main thread and in several new threads.  */
static void
check_process_unregistered (void)
{
  check_unregistered ("main");
  pthread_t t[4];
  for (int i = 0; i < 4; i++)
    CHECK (pthread_create (&t[i], NULL, unregistered_thread, NULL) == 0);
  for (int i = 0; i < 4; i++)
    CHECK (pthread_join (t[i], NULL) == 0);
}

static char self_path[4096];

/* Path of the running executable, for re-executing it.  */
static const char *
self_exe (void)
{
  ssize_t n = readlink ("/proc/self/exe", self_path, sizeof self_path - 1);
  CHECK (n > 0);
  self_path[n] = '\0';
  return self_path;
}
