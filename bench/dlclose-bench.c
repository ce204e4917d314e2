/* What dlclose's clearing of rseq_cs costs (the glibc patch "elf: Clear
   rseq_cs pointing into an object before dlclose"), against the
   alternative it was chosen over: clearing rseq_cs after every commit.
   Built twice from this file: with -DBENCH_LIB -shared -fPIC as the
   library, and as the program:

     dlclose-bench LIBRARY ROUNDS

   Prints, as medians of ROUNDS interleaved rounds (Markdown):
     - ns per inline per-CPU increment, as the operations are, and with
       a store clearing rseq_cs after each commit (the alternative);
     - ns per dlopen + one operation + dlclose of LIBRARY with 1 thread
       and with 64 more threads alive (dlclose walks every thread).  */
#define _GNU_SOURCE
#include <sys/rseq-percpu.h>
#include <errno.h>
#include <stdint.h>

#ifdef BENCH_LIB

static intptr_t slots[1024];

int
lib_add (void)
{
  for (;;)
    {
      int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
      if (cpu < 0)
	return -1;
      if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &slots[cpu % 1024], 1,
			    cpu) == 0)
	return 0;
      if (errno != EAGAIN)
	return -1;
    }
}

#else

# include <dlfcn.h>
# include <pthread.h>
# include <stdio.h>
# include <stdlib.h>
# include <string.h>
# include <time.h>

# define OPS 20000000
# define CYCLES 2000
# define MORE_THREADS 64
# define MAX_ROUNDS 101

static intptr_t counters[1024];

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* OPS inline increments; with CLEAR, each followed by the store the
   alternative design would add to every operation.  */
static double
increments (int clear)
{
  struct rseq *area = rseq_area_pointer ();
  volatile __typeof__ (area->rseq_cs) *cs = &area->rseq_cs;
  double start = now_ns ();
  for (long i = 0; i < OPS; i++)
    {
      int cpu;
      do
	cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
      while (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID,
			       &counters[cpu % 1024], 1, cpu) != 0);
      if (clear)
	*cs = 0;
    }
  return (now_ns () - start) / OPS;
}

static double
dlclose_cycles (const char *lib)
{
  double start = now_ns ();
  for (int i = 0; i < CYCLES; i++)
    {
      void *h = dlopen (lib, RTLD_NOW | RTLD_LOCAL);
      if (h == NULL)
	{
	  fprintf (stderr, "dlopen: %s\n", dlerror ());
	  exit (1);
	}
      int (*add) (void) = (int (*) (void)) dlsym (h, "lib_add");
      if (add == NULL || add () != 0 || dlclose (h) != 0)
	{
	  fprintf (stderr, "lib_add or dlclose failed\n");
	  exit (1);
	}
    }
  return (now_ns () - start) / CYCLES;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int finished;

static void *
idle_thread (void *arg)
{
  (void) arg;
  pthread_mutex_lock (&lock);
  while (!finished)
    pthread_cond_wait (&done, &lock);
  pthread_mutex_unlock (&lock);
  return NULL;
}

static int
compare (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, compare);
  return v[n / 2];
}

int
main (int argc, char **argv)
{
  if (argc != 3 || atoi (argv[2]) < 1 || atoi (argv[2]) > MAX_ROUNDS)
    {
      fprintf (stderr, "usage: %s LIBRARY ROUNDS (1..%d)\n", argv[0],
	       MAX_ROUNDS);
      return 2;
    }
  if (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID) < 0)
    {
      fprintf (stderr, "per-CPU operations cannot run here\n");
      return 77;
    }
  const char *lib = argv[1];
  int rounds = atoi (argv[2]);
  static double plain[MAX_ROUNDS], cleared[MAX_ROUNDS];
  static double one[MAX_ROUNDS], many[MAX_ROUNDS];
  for (int r = 0; r < rounds; r++)
    {
      plain[r] = increments (0);
      cleared[r] = increments (1);
      one[r] = dlclose_cycles (lib);
    }
  pthread_t threads[MORE_THREADS];
  for (int i = 0; i < MORE_THREADS; i++)
    if (pthread_create (&threads[i], NULL, idle_thread, NULL) != 0)
      return 1;
  for (int r = 0; r < rounds; r++)
    many[r] = dlclose_cycles (lib);
  pthread_mutex_lock (&lock);
  finished = 1;
  pthread_cond_broadcast (&done);
  pthread_mutex_unlock (&lock);
  for (int i = 0; i < MORE_THREADS; i++)
    pthread_join (threads[i], NULL);

  double p = median (plain, rounds), c = median (cleared, rounds);
  double o = median (one, rounds), m = median (many, rounds);
  printf ("### dlclose and rseq_cs (median of %d rounds)\n\n", rounds);
  printf ("| benchmark | ns |\n|---|---:|\n");
  printf ("| inline per-CPU increment (as built) | %.2f |\n", p);
  printf ("| the same, clearing rseq_cs after each commit | %.2f |\n", c);
  printf ("| dlopen + one operation + dlclose, 1 thread | %.0f |\n", o);
  printf ("| the same, %d more threads alive | %.0f |\n\n", MORE_THREADS, m);
  printf ("| ratio | value |\n|---|---:|\n");
  printf ("| increment clearing rseq_cs / as built | %.2f |\n", c / p);
  printf ("| dlclose cycle, %d more threads / 1 thread | %.2f |\n",
	  MORE_THREADS, m / o);
  printf ("| extra ns per dlclose per thread | %.1f |\n",
	  (m - o) / MORE_THREADS);
  return 0;
}

#endif
