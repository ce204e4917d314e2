/* A spinlock whose holder asks the scheduler not to preempt it, with
   the time slice extension of Linux 7.0 and later (<sys/rseq.h>).

   More threads than CPUs take turns at one spinlock.  When the
   scheduler preempts a thread while it holds the lock, every waiter
   spins through its own time slice for nothing, and the hold lasts a
   whole scheduling period instead of a microsecond.  With --slice each
   holder requests an extension before taking the lock and releases it
   after dropping the lock: a tick that would preempt it then grants it
   a few microseconds instead, enough to finish.

   The program reports how many holds lasted longer than a tick's worth
   (--long-us, 500 us: the holder was preempted while holding the lock)
   per million holds, the longest hold, and the holds per second.
   bench/slice-bench.sh runs it with and without --slice in the Linux
   7.x VM and reports the ratio.

   Build and run:
     out/bin/rseq-gcc -O2 -Wall -pthread -o out/slice-lock examples/slice-lock.c
     out/slice-lock [--slice] [--threads N] [--seconds S] [--hold-us U]

   Without the extension (an older kernel, or a kernel without
   CONFIG_RSEQ_SLICE_EXTENSION), --slice says so and exits 77.  */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/rseq.h>

struct options
{
  int slice;
  int threads;
  double seconds;
  double hold_us;
  double long_us;
};

static struct options opt = { 0, 0, 3.0, 2.0, 500.0 };

static atomic_int lock;
static atomic_int stop;
static unsigned long shared_counter;	/* Protected by lock.  */

struct worker
{
  pthread_t thread;
  unsigned long holds, long_holds, grants, yields;
  double max_hold_us;
  int error;
};

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
spin_lock (void)
{
  for (;;)
    {
      if (!atomic_exchange_explicit (&lock, 1, memory_order_acquire))
	return;
      while (atomic_load_explicit (&lock, memory_order_relaxed))
	;
    }
}

static void
spin_unlock (void)
{
  atomic_store_explicit (&lock, 0, memory_order_release);
}

/* Work inside the lock for about HOLD_US, with no system call (the
   vDSO clock is not one), since a system call ends a granted
   extension.  */
static void
critical_work (double start)
{
  while (now_us () - start < opt.hold_us)
    shared_counter++;
}

static void *
work (void *arg)
{
  struct worker *w = arg;

  if (opt.slice && rseq_slice_extension_set (1) != 0)
    {
      w->error = errno;
      return NULL;
    }
  while (!atomic_load_explicit (&stop, memory_order_relaxed))
    {
      if (opt.slice)
	rseq_slice_request ();
      spin_lock ();
      double start = now_us ();
      critical_work (start);
      double held = now_us () - start;
      spin_unlock ();
      if (opt.slice)
	{
	  w->grants += rseq_slice_granted () != 0;
	  w->yields += rseq_slice_release () == 1;
	}
      w->holds++;
      if (held > opt.long_us)
	w->long_holds++;
      if (held > w->max_hold_us)
	w->max_hold_us = held;
      /* Some work outside the lock, so that it is not always taken.  */
      double outside = now_us ();
      while (now_us () - outside < opt.hold_us)
	;
    }
  return NULL;
}

static void
usage (const char *prog)
{
  fprintf (stderr, "usage: %s [--slice] [--threads N] [--seconds S] "
	   "[--hold-us U] [--long-us U]\n", prog);
  exit (2);
}

static double
positive (const char *s, const char *prog)
{
  char *end;
  double v = strtod (s, &end);
  if (*end != '\0' || !(v > 0))
    usage (prog);
  return v;
}

static void
parse (int argc, char **argv)
{
  static const struct option longopts[] = {
    { "slice", no_argument, NULL, 's' },
    { "threads", required_argument, NULL, 't' },
    { "seconds", required_argument, NULL, 'd' },
    { "hold-us", required_argument, NULL, 'h' },
    { "long-us", required_argument, NULL, 'l' },
    { NULL, 0, NULL, 0 },
  };
  int c;
  while ((c = getopt_long (argc, argv, "", longopts, NULL)) != -1)
    switch (c)
      {
      case 's': opt.slice = 1; break;
      case 't': opt.threads = (int) positive (optarg, argv[0]); break;
      case 'd': opt.seconds = positive (optarg, argv[0]); break;
      case 'h': opt.hold_us = positive (optarg, argv[0]); break;
      case 'l': opt.long_us = positive (optarg, argv[0]); break;
      default: usage (argv[0]);
      }
  if (optind != argc)
    usage (argv[0]);
  if (opt.threads == 0)
    opt.threads = 3 * (int) sysconf (_SC_NPROCESSORS_ONLN);
}

int
main (int argc, char **argv)
{
  parse (argc, argv);
  if (opt.slice && rseq_slice_extension_get () < 0)
    {
      printf ("no time slice extension here: %s\n", strerror (errno));
      return 77;
    }

  struct worker *w = calloc (opt.threads, sizeof *w);
  if (w == NULL)
    return 1;
  for (int i = 0; i < opt.threads; i++)
    if (pthread_create (&w[i].thread, NULL, work, &w[i]) != 0)
      {
	perror ("pthread_create");
	return 1;
      }
  usleep ((useconds_t) (opt.seconds * 1e6));
  atomic_store (&stop, 1);

  unsigned long holds = 0, long_holds = 0, grants = 0, yields = 0;
  double max_hold = 0;
  for (int i = 0; i < opt.threads; i++)
    {
      pthread_join (w[i].thread, NULL);
      if (w[i].error != 0)
	{
	  fprintf (stderr, "rseq_slice_extension_set: %s\n",
		   strerror (w[i].error));
	  return 1;
	}
      holds += w[i].holds;
      long_holds += w[i].long_holds;
      grants += w[i].grants;
      yields += w[i].yields;
      if (w[i].max_hold_us > max_hold)
	max_hold = w[i].max_hold_us;
    }
  printf ("slice=%d threads=%d holds=%lu holds_per_s=%.0f "
	  "preempted_per_million=%.1f max_hold_us=%.0f grants=%lu "
	  "yields=%lu\n", opt.slice, opt.threads, holds, holds / opt.seconds,
	  holds ? 1e6 * long_holds / holds : 0.0, max_hold, grants, yields);
  free (w);
  return 0;
}
