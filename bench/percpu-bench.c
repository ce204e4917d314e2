/* Counter increments and per-CPU structure operations, for the table in
   docs/benchmarks.md.  percpu-bench METHOD THREADS ITERATIONS prints ns per
   operation per thread (wall time / ITERATIONS, all threads running
   at once).  */
#define _GNU_SOURCE
#include "percpu.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long iterations;
static pthread_barrier_t start;
static struct percpu_counter counter;
static struct percpu_lock lock;
static intptr_t *locked_counts;
static struct percpu_list list;
static struct percpu_buffer records;
static intptr_t shared_counter __attribute__ ((aligned (64)));
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static struct percpu_slot *atomic_slots;
static int nr_slots;

struct record { intptr_t a, b, c, d; };

static void
die (const char *what)
{
  perror (what);
  exit (1);
}

/* The sequence inlined in the loop, as in the seed's table.  */
static void
run_rseq_counter (void)
{
  for (long i = 0; i < iterations; i++)
    for (;;)
      {
	int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
	if (cpu < 0)
	  die ("rseq_percpu_current_cpu");
	if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &counter.slots[cpu].value,
			      1, cpu) == 0)
	  break;
      }
}

/* The same through percpu/'s counter (a function call per add).  */
static void
run_rseq_counter_lib (void)
{
  for (long i = 0; i < iterations; i++)
    if (percpu_counter_add (&counter, 1) != 0)
      die ("percpu_counter_add");
}

static void
run_rseq_spinlock (void)
{
  for (long i = 0; i < iterations; i++)
    {
      int cpu = percpu_lock_acquire (&lock);
      if (cpu < 0)
	die ("percpu_lock_acquire");
      locked_counts[cpu * 8]++;
      percpu_lock_release (&lock, cpu);
    }
}

static void
run_lock_add (void)
{
  for (long i = 0; i < iterations; i++)
    __atomic_fetch_add (&shared_counter, 1, __ATOMIC_RELAXED);
}

static void
run_lock_cmpxchg (void)
{
  for (long i = 0; i < iterations; i++)
    {
      intptr_t old = __atomic_load_n (&shared_counter, __ATOMIC_RELAXED);
      while (!__atomic_compare_exchange_n (&shared_counter, &old, old + 1, 0,
					   __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED))
	;
    }
}

static void
run_mutex (void)
{
  for (long i = 0; i < iterations; i++)
    {
      pthread_mutex_lock (&mutex);
      shared_counter++;
      pthread_mutex_unlock (&mutex);
    }
}

static void
run_percpu_atomic (void)
{
  for (long i = 0; i < iterations; i++)
    {
      int cpu = rseq_area_cpu ();
      __atomic_fetch_add (&atomic_slots[cpu % nr_slots].value, 1,
			  __ATOMIC_RELAXED);
    }
}

static void
run_list (void)
{
  for (long i = 0; i < iterations; i++)
    {
      struct percpu_node *n = percpu_list_pop (&list);
      if (n != NULL && percpu_list_push (&list, n) < 0)
	die ("percpu_list_push");
    }
}

static void
run_records (void)
{
  struct record r;
  for (long i = 0; i < iterations; i++)
    if (percpu_buffer_pop_record (&records, &r) == 0
	&& percpu_buffer_push_record (&records, &r) != 0)
      die ("percpu_buffer_push_record");
}

static const struct
{
  const char *name;
  void (*run) (void);
} methods[] = {
  { "rseq-counter", run_rseq_counter },
  { "rseq-counter-lib", run_rseq_counter_lib },
  { "rseq-spinlock", run_rseq_spinlock },
  { "lock-add", run_lock_add },
  { "lock-cmpxchg", run_lock_cmpxchg },
  { "mutex", run_mutex },
  { "percpu-atomic", run_percpu_atomic },
  { "list-pop-push", run_list },
  { "memcpy-buffer-pop-push", run_records },
};

static void (*method) (void);

/* Each thread times itself: the main thread may not run at all while
   the workers do, so its own clock would miss their work.  */
struct span
{
  struct timespec begin, end;
};

static double
ns_of (const struct timespec *t)
{
  return t->tv_sec * 1e9 + t->tv_nsec;
}

static void *
thread_main (void *arg)
{
  struct span *span = arg;
  pthread_barrier_wait (&start);
  clock_gettime (CLOCK_MONOTONIC, &span->begin);
  method ();
  clock_gettime (CLOCK_MONOTONIC, &span->end);
  return NULL;
}

static void
setup (int nthreads)
{
  nr_slots = percpu_nr_slots ();
  if (percpu_counter_init (&counter, RSEQ_PERCPU_INDEX_CPU_ID) != 0
      || percpu_lock_init (&lock, RSEQ_PERCPU_INDEX_CPU_ID) != 0
      || percpu_list_init (&list, RSEQ_PERCPU_INDEX_CPU_ID) != 0
      || percpu_buffer_init (&records, RSEQ_PERCPU_INDEX_CPU_ID, 4 * nthreads,
			     sizeof (struct record)) != 0)
    die ("init");
  locked_counts = calloc (nr_slots * 8, sizeof *locked_counts);
  atomic_slots = aligned_alloc (64, nr_slots * sizeof *atomic_slots);
  if (locked_counts == NULL || atomic_slots == NULL)
    die ("calloc");
  memset (atomic_slots, 0, nr_slots * sizeof *atomic_slots);
  /* One node and one record per thread on every CPU.  */
  for (int i = 0; i < nthreads * nr_slots; i++)
    {
      struct percpu_node *n = calloc (1, sizeof *n);
      struct record r = { i, i, i, i };
      if (n == NULL || percpu_list_push (&list, n) < 0)
	die ("list");
      percpu_buffer_push_record (&records, &r);
    }
}

int
main (int argc, char **argv)
{
  if (argc != 4)
    {
      fprintf (stderr, "usage: %s METHOD THREADS ITERATIONS\n", argv[0]);
      return 2;
    }
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
    if (strcmp (argv[1], methods[i].name) == 0)
      method = methods[i].run;
  int nthreads = atoi (argv[2]);
  iterations = atol (argv[3]);
  if (method == NULL || nthreads <= 0 || iterations <= 0)
    {
      fprintf (stderr, "%s: bad method, thread count or iterations\n",
	       argv[0]);
      return 2;
    }
  setup (nthreads);
  pthread_t *threads = calloc (nthreads, sizeof *threads);
  struct span *spans = calloc (nthreads, sizeof *spans);
  if (threads == NULL || spans == NULL)
    die ("calloc");
  pthread_barrier_init (&start, NULL, nthreads);
  for (int i = 0; i < nthreads; i++)
    if (pthread_create (&threads[i], NULL, thread_main, &spans[i]) != 0)
      die ("pthread_create");
  double first = 0, last = 0;
  for (int i = 0; i < nthreads; i++)
    {
      pthread_join (threads[i], NULL);
      double b = ns_of (&spans[i].begin), e = ns_of (&spans[i].end);
      if (i == 0 || b < first)
	first = b;
      if (i == 0 || e > last)
	last = e;
    }
  printf ("%.3f\n", (last - first) / iterations);
  return 0;
}
