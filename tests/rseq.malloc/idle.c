/* malloc's per-CPU cache empties a cache as idle only when no operation
   used it between two of its looks (one look per 1024 refills and
   flushes of a cache, at least 0.2 s after the last), on every ABI.  A
   thread on CPU 0 frees and allocates one block at a time with eight
   blocks cached: pushes and pops only, never a refill or flush.  A
   thread on CPU 1 fills and empties its arrays; its refills and flushes
   drive the looks.  While the first thread works (2 s, and at least 16
   times 1024 refills and flushes on CPU 1) its cache must never be
   emptied; once it stops, with chunks left there, the cache must be
   emptied (within 30 s).

   Runs itself with glibc.malloc.percpu=cpu_id,
   glibc.malloc.percpu_local=1 and no thread cache (cache N is CPU N's;
   every malloc and free reaches it, own chunks included).  77 with fewer
   than 2 usable CPUs or without the per-CPU cache.  */
#include "malloc-test.h"
#include <pthread.h>
#include <stdatomic.h>

#define TUNABLES \
  "glibc.malloc.percpu=cpu_id:glibc.malloc.percpu_local=1:glibc.malloc.tcache_count=0"
#define SCAN_INTERVAL 1024
#define HELD 8
#define BUSY_SECONDS 2
#define BUSY_LOOKS 16

static atomic_bool steady_stop, fill_stop;
static atomic_ulong steady_ops;
static pthread_barrier_t steady_stopped, may_exit;

static bool
pin (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  return sched_setaffinity (0, sizeof set, &set) == 0 && sched_getcpu () == cpu;
}

/* Attribute ATTR of the cache element of cache INDEX (0 without one).  */
static long
cache_attr (int index, const char *attr)
{
  char start[48];
  snprintf (start, sizeof start, "<cache index=\"%d\" ", index);
  char *line = malloc_info_line (start);
  long value = line != NULL ? malloc_info_attr (line, attr) : 0;
  free (line);
  return value;
}

static void *
steady (void *arg)
{
  (void) arg;
  CHECK (pin (0));
  void *p[2 * HELD];
  for (int i = 0; i < 2 * HELD; i++)
    CHECK ((p[i] = malloc (48)) != NULL);
  for (int i = HELD; i < 2 * HELD; i++)
    free (p[i]);
  for (unsigned long n = 0; !atomic_load (&steady_stop); n++)
    {
      free (p[n % HELD]);
      CHECK ((p[n % HELD] = malloc (48)) != NULL);
      atomic_store_explicit (&steady_ops, n + 1, memory_order_relaxed);
    }
  pthread_barrier_wait (&steady_stopped);
  pthread_barrier_wait (&may_exit);
  for (int i = 0; i < HELD; i++)
    free (p[i]);
  return NULL;
}

static void *
fill (void *arg)
{
  (void) arg;
  CHECK (pin (1));
  void *p[600];
  while (!atomic_load (&fill_stop))
    {
      for (int i = 0; i < 600; i++)
	CHECK ((p[i] = malloc (100)) != NULL);
      for (int i = 0; i < 600; i++)
	free (p[i]);
    }
  return NULL;
}

/* Refills and flushes of cache 1 over SCAN_INTERVAL: the looks it could
   have made, but for the time between them.  */
static long
look_chances (void)
{
  return (cache_attr (1, "refills") + cache_attr (1, "flushes")) / SCAN_INTERVAL;
}

int
main (int argc, char **argv)
{
  (void) argc;
  reexec_with_tunables (argv, TUNABLES);
  /* This thread's malloc_info calls use CPU 1's cache only.  */
  if (!pin (1) || !pin (0) || !pin (1))
    UNSUPPORTED ("cannot run on CPUs 0 and 1");
  /* Volatile: the compiler may drop a malloc and free that nothing
     uses.  */
  char *volatile warm = malloc (32);
  CHECK (warm != NULL);
  free (warm);
  if (cache_attr (1, "count") == 0)
    UNSUPPORTED ("malloc_info shows no per-CPU cache with " TUNABLES);

  CHECK_EQ (pthread_barrier_init (&steady_stopped, NULL, 2), 0);
  CHECK_EQ (pthread_barrier_init (&may_exit, NULL, 2), 0);
  pthread_t steady_thread, fill_thread;
  CHECK_EQ (pthread_create (&steady_thread, NULL, steady, NULL), 0);
  while (atomic_load (&steady_ops) == 0)
    usleep (1000);
  CHECK_EQ (pthread_create (&fill_thread, NULL, fill, NULL), 0);

  long chances = look_chances ();
  int ms = 0;
  for (; ms < 60000; ms += 10)
    {
      if (ms >= BUSY_SECONDS * 1000 && look_chances () >= chances + BUSY_LOOKS)
	break;
      usleep (10000);
    }
  printf ("busy: %lu operations on cache 0 in %d ms, %ld chances to look,"
	  " cache 0: %ld chunks, %ld drains\n", atomic_load (&steady_ops), ms,
	  look_chances () - chances, cache_attr (0, "count"),
	  cache_attr (0, "drains"));
  CHECK (look_chances () >= chances + BUSY_LOOKS);
  CHECK_EQ (cache_attr (0, "drains"), 0);
  CHECK (cache_attr (0, "count") > 0);
  CHECK_EQ (cache_attr (0, "refills") + cache_attr (0, "flushes"), 0);

  atomic_store (&steady_stop, true);
  pthread_barrier_wait (&steady_stopped);
  CHECK (cache_attr (0, "count") > 0);
  for (ms = 0; ms < 30000 && cache_attr (0, "drains") == 0; ms += 10)
    usleep (10000);
  printf ("idle: after %d ms cache 0: %ld chunks, %ld drains\n", ms,
	  cache_attr (0, "count"), cache_attr (0, "drains"));
  CHECK_EQ (cache_attr (0, "drains"), 1);
  CHECK_EQ (cache_attr (0, "count"), 0);

  atomic_store (&fill_stop, true);
  CHECK_EQ (pthread_join (fill_thread, NULL), 0);
  pthread_barrier_wait (&may_exit);
  CHECK_EQ (pthread_join (steady_thread, NULL), 0);
  return 0;
}
