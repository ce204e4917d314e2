/* Every pthread gets its own registered area: 1 to 64 threads at once,
   each checking its registration while all of them are alive.  */
#include "rseq-test.h"
#include <pthread.h>

#define MAX_THREADS 64

static pthread_barrier_t barrier;
static struct rseq *areas[MAX_THREADS];
static int mm_cids[MAX_THREADS];
static int live_threads;

static void *
worker (void *arg)
{
  long index = (long) arg;
  pthread_barrier_wait (&barrier);
  check_thread_registered ("thread");
  areas[index] = rseq_area_pointer ();
  mm_cids[index] = rseq_area_mm_cid ();
  pthread_barrier_wait (&barrier);
  return NULL;
}

static void
run_round (int nthreads)
{
  pthread_t threads[MAX_THREADS];

  /* The main thread waits on the barrier too.  */
  CHECK (pthread_barrier_init (&barrier, NULL, nthreads + 1) == 0);
  for (long i = 0; i < nthreads; i++)
    if (pthread_create (&threads[i], NULL, worker, (void *) i) != 0)
      FAIL ("pthread_create %ld of %d", i, nthreads);
  live_threads = nthreads + 1;
  pthread_barrier_wait (&barrier);
  pthread_barrier_wait (&barrier);
  for (int i = 0; i < nthreads; i++)
    CHECK (pthread_join (threads[i], NULL) == 0);
  pthread_barrier_destroy (&barrier);

  /* Areas are distinct and do not overlap each other or main's.  */
  unsigned int len = registration_length (__rseq_size);
  for (int i = 0; i < nthreads; i++)
    {
      CHECK (areas[i] != NULL);
      CHECK (areas[i] != rseq_area_pointer ());
      for (int j = 0; j < i; j++)
	{
	  uintptr_t a = (uintptr_t) areas[i], b = (uintptr_t) areas[j];
	  if ((a < b ? b - a : a - b) < len)
	    FAIL ("areas of threads %d and %d overlap", i, j);
	}
      if (__rseq_size >= 28 && mm_cids[i] >= live_threads)
	FAIL ("mm_cid %d with %d live threads", mm_cids[i], live_threads);
    }
}

int
main (void)
{
  require_kernel_rseq ();
  check_thread_registered ("main");
  for (int n = 1; n <= MAX_THREADS; n++)
    run_round (n);
  check_thread_registered ("main after threads");
  return 0;
}
