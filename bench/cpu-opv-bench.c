/* Cost of each cpu_opv vector shape against the same operation done by
   an rseq critical section, on the CPU the thread runs on.  Runs in the
   test VM (build-scripts/vm/run-vm), which is emulated: only the ratios
   mean anything.  Rows are measured in interleaved rounds and the
   median of each is printed as a Markdown table.
     cpu-opv-bench [ROUNDS]  */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/cpu_opv.h>
#include <sys/rseq-percpu.h>
#include <time.h>

#define RECORD 64

static intptr_t word, word2;
static char record_src[RECORD], record_dst[RECORD];

struct row
{
  const char *name;
  void (*rseq_op) (int cpu);	/* One operation through rseq.  */
  void (*opv_op) (int cpu);	/* The same through cpu_opv.  */
};

static void
fail (const char *what)
{
  fprintf (stderr, "%s failed: %s\n", what, strerror (errno));
  exit (1);
}

/* The rseq operations retry on abort, as real callers do.  */
#define RSEQ_RETRY(call) while ((call) < 0)

static void
rseq_add (int cpu)
{
  RSEQ_RETRY (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &word, 1, cpu));
}

static void
opv_add (int cpu)
{
  if (cpu_opv_add (&word, 1, sizeof word, cpu) != 0)
    fail ("cpu_opv_add");
}

static void
rseq_cmpstore (int cpu)
{
  RSEQ_RETRY (rseq_percpu_cmpeqv_storev (RSEQ_PERCPU_INDEX_CPU_ID, &word, word,
					 word + 1, cpu));
}

static void
opv_cmpstore (int cpu)
{
  if (cpu_opv_cmpstore (&word, word, word + 1, cpu) < 0)
    fail ("cpu_opv_cmpstore");
}

static void
rseq_2cmp1store (int cpu)
{
  RSEQ_RETRY (rseq_percpu_cmpeqv_cmpeqv_storev (RSEQ_PERCPU_INDEX_CPU_ID, &word,
						word, &word2, word2,
						word + 1, cpu));
}

static void
opv_2cmp1store (int cpu)
{
  if (cpu_opv_2cmp1store (&word, word, &word2, word2, word + 1, cpu) < 0)
    fail ("cpu_opv_2cmp1store");
}

static void
rseq_1cmp2store (int cpu)
{
  RSEQ_RETRY (rseq_percpu_cmpeqv_trystorev_storev (RSEQ_PERCPU_INDEX_CPU_ID, &word,
						   word, &word2, word2 + 1,
						   word + 1, cpu));
}

static void
opv_1cmp2store (int cpu)
{
  if (cpu_opv_1cmp2store (&word, word, &word2, word2 + 1, word + 1, cpu) < 0)
    fail ("cpu_opv_1cmp2store");
}

static void
rseq_memcpy (int cpu)
{
  RSEQ_RETRY (rseq_percpu_cmpeqv_trymemcpy_storev (RSEQ_PERCPU_INDEX_CPU_ID, &word,
						   word, record_dst,
						   record_src, RECORD,
						   word + 1, cpu));
}

static void
opv_memcpy (int cpu)
{
  if (cpu_opv_cmpstorememcpy (&word, word, record_dst, record_src, RECORD,
			      word + 1, cpu) < 0)
    fail ("cpu_opv_cmpstorememcpy");
}

static const struct row rows[] = {
  { "add", rseq_add, opv_add },
  { "compare-store", rseq_cmpstore, opv_cmpstore },
  { "2-compare-1-store", rseq_2cmp1store, opv_2cmp1store },
  { "1-compare-2-store", rseq_1cmp2store, opv_1cmp2store },
  { "compare-store-memcpy (64 B)", rseq_memcpy, opv_memcpy },
};
#define NROWS (sizeof rows / sizeof rows[0])

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per operation of OP over ITERS calls on the current CPU.  */
static double
time_op (void (*op) (int), long iters)
{
  double start = now_ns ();
  for (long i = 0; i < iters; i++)
    op (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID));
  return (now_ns () - start) / iters;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? atoi (argv[1]) : 5;
  if (rounds < 1 || rounds > 100)
    rounds = 5;
  if (rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID) < 0)
    {
      puts ("UNSUPPORTED: rseq is not registered");
      return 77;
    }
  if (!(cpu_opv (NULL, 0, 0, 0) < 0 && errno == EINVAL))
    {
      puts ("UNSUPPORTED: the kernel has no cpu_opv");
      return 77;
    }

  double rseq_ns[NROWS][100], opv_ns[NROWS][100];
  for (int r = 0; r < rounds; r++)
    for (size_t i = 0; i < NROWS; i++)
      {
	rseq_ns[i][r] = time_op (rows[i].rseq_op, 200000);
	opv_ns[i][r] = time_op (rows[i].opv_op, 5000);
      }

  printf ("| operation | rseq ns/op | cpu_opv ns/op | cpu_opv / rseq |\n");
  printf ("|---|---:|---:|---:|\n");
  for (size_t i = 0; i < NROWS; i++)
    {
      double a = median (rseq_ns[i], rounds), b = median (opv_ns[i], rounds);
      printf ("| %s | %.1f | %.0f | %.0f |\n", rows[i].name, a, b, b / a);
    }
  printf ("\n(%d rounds, medians; emulated CPU: compare ratios only)\n",
	  rounds);
  return 0;
}
