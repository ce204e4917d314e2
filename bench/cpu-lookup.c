/* Micro-benchmarks for CPU and node lookup and thread creation.  Built
   twice by bench/run.sh: with rseq-gcc (patched glibc) and with the
   system gcc (stock glibc), so both run side by side.
     cpu-lookup BENCH ITERATIONS  -> prints ns/op for BENCH  */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static __thread volatile int tls_value;

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void
bench_tls_load (long n)
{
  unsigned long acc = 0;
  for (long i = 0; i < n; i++)
    acc += tls_value;
  sink = acc;
}

#ifdef RSEQ_AREA_CPU_ID_OFFSET
static void
bench_accessor (long n)
{
  unsigned long acc = 0;
  for (long i = 0; i < n; i++)
    acc += rseq_area_cpu ();
  sink = acc;
}

static void
bench_accessor_node (long n)
{
  unsigned long acc = 0;
  for (long i = 0; i < n; i++)
    acc += rseq_area_cpu () + rseq_area_node ();
  sink = acc;
}
#endif

static void
bench_sched_getcpu (long n)
{
  unsigned long acc = 0;
  for (long i = 0; i < n; i++)
    acc += sched_getcpu ();
  sink = acc;
}

static void
bench_getcpu_node (long n)
{
  unsigned long acc = 0;
  unsigned int cpu, node;
  for (long i = 0; i < n; i++)
    {
      getcpu (&cpu, &node);
      acc += cpu + node;
    }
  sink = acc;
}

static void
bench_getcpu_syscall (long n)
{
  unsigned long acc = 0;
  unsigned int cpu, node;
  for (long i = 0; i < n; i++)
    {
      syscall (SYS_getcpu, &cpu, &node, NULL);
      acc += cpu;
    }
  sink = acc;
}

static void *
noop (void *arg)
{
  return arg;
}

static void
bench_thread_create (long n)
{
  for (long i = 0; i < n; i++)
    {
      pthread_t t;
      if (pthread_create (&t, NULL, noop, NULL) != 0
	  || pthread_join (t, NULL) != 0)
	{
	  perror ("pthread_create");
	  exit (1);
	}
    }
}

static const struct
{
  const char *name;
  void (*run) (long);
} benches[] = {
  { "tls-load", bench_tls_load },
#ifdef RSEQ_AREA_CPU_ID_OFFSET
  { "accessor", bench_accessor },
  { "accessor-node", bench_accessor_node },
#endif
  { "sched_getcpu", bench_sched_getcpu },
  { "getcpu-node", bench_getcpu_node },
  { "getcpu-syscall", bench_getcpu_syscall },
  { "thread-create", bench_thread_create },
};

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: %s BENCH ITERATIONS\n", argv[0]);
      return 2;
    }
  long n = atol (argv[2]);
  if (n <= 0)
    {
      fprintf (stderr, "%s: ITERATIONS must be positive\n", argv[0]);
      return 2;
    }
  for (size_t i = 0; i < sizeof benches / sizeof benches[0]; i++)
    if (strcmp (argv[1], benches[i].name) == 0)
      {
	benches[i].run (n / 10 + 1);	/* Warm up.  */
	double start = now_ns ();
	benches[i].run (n);
	printf ("%.3f\n", (now_ns () - start) / n);
	return 0;
      }
  fprintf (stderr, "%s: unknown benchmark '%s'\n", argv[0], argv[1]);
  return 2;
}
