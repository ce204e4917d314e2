/* A per-CPU counter on <sys/rseq-percpu.h>: several threads add to the
   slot of the CPU they run on, with no atomic instruction and no lock,
   and the total is the sum of the slots.

   Build and run (see README.md, "Per-CPU operations"):
     out/bin/rseq-gcc -O2 -Wall -pthread -o out/percpu-counter examples/percpu-counter.c
     out/percpu-counter [THREADS [ADDS_PER_THREAD]]  */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/rseq-percpu.h>

/* One slot per possible CPU, each on its own cache line so that CPUs do
   not share lines.  The counted value is an intptr_t, the type every
   per-CPU operation takes: a long would draw a pointer-type warning on
   i386, where intptr_t is int.  */
struct slot
{
  intptr_t count;
} __attribute__ ((aligned (64)));

static struct slot *slots;
static long int nslots;

/* Adds that could not run as per-CPU operations (rseq unavailable, or a
   CPU number beyond the slot array): counted atomically instead.  */
static intptr_t fallback_count;

static long int adds_per_thread = 1000000;

/* Add COUNT to the calling CPU's slot.  */
static void
counter_add (intptr_t count)
{
  for (;;)
    {
      int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
      /* -1: per-CPU operations cannot run on this thread (rseq off or
	 refused).  cpu >= nslots: a CPU the array has no slot for, which
	 only a kernel reporting more CPUs than _SC_NPROCESSORS_CONF
	 could produce.  Never index the array without this check.  */
      if (cpu < 0 || cpu >= nslots)
	{
	  __atomic_fetch_add (&fallback_count, count, __ATOMIC_RELAXED);
	  return;
	}
      /* 0: committed.  <0: preempted, migrated or signalled before the
	 commit, nothing written: read the CPU again and retry.  */
      if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &slots[cpu].count, count,
			    cpu) == 0)
	return;
    }
}

static intptr_t
counter_sum (void)
{
  intptr_t sum = __atomic_load_n (&fallback_count, __ATOMIC_RELAXED);
  for (long int cpu = 0; cpu < nslots; cpu++)
    sum += __atomic_load_n (&slots[cpu].count, __ATOMIC_RELAXED);
  return sum;
}

static void *
worker (void *unused)
{
  (void) unused;
  for (long int i = 0; i < adds_per_thread; i++)
    counter_add (1);
  return NULL;
}

/* Parse a positive count argument or exit with a message.  */
static long int
parse_count (const char *arg, const char *what, long int max)
{
  char *end;
  errno = 0;
  long int value = strtol (arg, &end, 10);
  if (errno != 0 || end == arg || *end != '\0' || value < 1 || value > max)
    {
      fprintf (stderr, "percpu-counter: %s must be 1..%ld, not '%s'\n",
	       what, max, arg);
      exit (2);
    }
  return value;
}

int
main (int argc, char **argv)
{
  long int nthreads = 4;
  if (argc > 3)
    {
      fprintf (stderr, "usage: percpu-counter [THREADS [ADDS_PER_THREAD]]\n");
      return 2;
    }
  if (argc > 1)
    nthreads = parse_count (argv[1], "THREADS", 1024);
  if (argc > 2)
    /* Keeps the total within a 32-bit intptr_t on i386.  */
    adds_per_thread = parse_count (argv[2], "ADDS_PER_THREAD",
				   INT32_MAX / nthreads);

  /* Configured, not online, CPUs: a CPU brought online later still
     has a slot.  */
  nslots = sysconf (_SC_NPROCESSORS_CONF);
  if (nslots < 1)
    nslots = 1;
  slots = aligned_alloc (_Alignof (struct slot), nslots * sizeof *slots);
  if (slots == NULL)
    {
      perror ("percpu-counter: aligned_alloc");
      return 1;
    }
  memset (slots, 0, nslots * sizeof *slots);

  pthread_t threads[1024];
  for (long int t = 0; t < nthreads; t++)
    {
      int err = pthread_create (&threads[t], NULL, worker, NULL);
      if (err != 0)
	{
	  fprintf (stderr, "percpu-counter: pthread_create: %s\n",
		   strerror (err));
	  return 1;
	}
    }
  for (long int t = 0; t < nthreads; t++)
    pthread_join (threads[t], NULL);

  intptr_t expected = (intptr_t) nthreads * adds_per_thread;
  intptr_t total = counter_sum ();
  printf ("%ld threads x %ld adds: total %ld (expected %ld)\n",
	  nthreads, adds_per_thread, (long int) total, (long int) expected);
  for (long int cpu = 0; cpu < nslots; cpu++)
    printf ("  CPU %ld: %ld\n", cpu, (long int) slots[cpu].count);
  printf ("  not per-CPU (rseq unavailable): %ld\n",
	  (long int) fallback_count);
  free (slots);
  return total == expected ? 0 : 1;
}
