/* Show, per thread, what the patched glibc sees in its rseq area:
   registration state, CPU, NUMA node and mm_cid.  Built by `make`
   with rseq-gcc as the toolchain's demo.  */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/rseq.h>

#define NTHREADS 4

static pthread_barrier_t all_started;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void
report (const char *who)
{
  unsigned int cpu, node;
  int getcpu_ok = getcpu (&cpu, &node) == 0;

  pthread_mutex_lock (&print_lock);
  printf ("%-9s registered=%s cpu=%d node=%d mm_cid=%d getcpu=%d/%d\n",
          who, rseq_area_registered () ? "yes" : "no", rseq_area_cpu (),
          rseq_area_node (), rseq_area_mm_cid (),
          getcpu_ok ? (int) cpu : -1, getcpu_ok ? (int) node : -1);
  pthread_mutex_unlock (&print_lock);
}

static void *
worker (void *arg)
{
  char name[16];
  snprintf (name, sizeof name, "thread %ld", (long) (size_t) arg);
  /* Keep every thread alive together so their mm_cids are distinct.  */
  pthread_barrier_wait (&all_started);
  report (name);
  pthread_barrier_wait (&all_started);
  return NULL;
}

int
main (void)
{
  pthread_t threads[NTHREADS];

  printf ("__rseq_size=%u __rseq_offset=%td __rseq_flags=%u"
          " AT_RSEQ_FEATURE_SIZE=%lu AT_RSEQ_ALIGN=%lu\n",
          __rseq_size, __rseq_offset, __rseq_flags,
          getauxval (AT_RSEQ_FEATURE_SIZE), getauxval (AT_RSEQ_ALIGN));
  report ("main");

  pthread_barrier_init (&all_started, NULL, NTHREADS);
  for (long i = 0; i < NTHREADS; i++)
    if (pthread_create (&threads[i], NULL, worker, (void *) i) != 0)
      {
        perror ("pthread_create");
        return 1;
      }
  for (int i = 0; i < NTHREADS; i++)
    pthread_join (threads[i], NULL);
  return 0;
}
