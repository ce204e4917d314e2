/* What the malloc benchmarks of bench/ share: error exits, the clock,
   argument parsing and the peak resident set (vmhwm.h).  Define BENCH_NAME (the
   program's name, for messages) before including it.  */

#ifndef MALLOC_BENCH_UTIL_H
#define MALLOC_BENCH_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vmhwm.h"

/* Exit 2 with "BENCH_NAME: " and FMT, which formats ARG.  */
static void
die (const char *fmt, const char *arg)
{
  fprintf (stderr, BENCH_NAME ": ");
  fprintf (stderr, fmt, arg);
  fputc ('\n', stderr);
  exit (2);
}

/* Exit 2 if ERR, an error number WHAT returned, is not 0.  */
static void
check (int err, const char *what)
{
  if (err != 0)
    {
      fprintf (stderr, BENCH_NAME ": %s: %s\n", what, strerror (err));
      exit (2);
    }
}

/* CLOCK_MONOTONIC in seconds.  */
static double
now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* S as an integer from MIN to MAX; else exit 2 naming WHAT.  */
static uint64_t
parse_count (const char *s, const char *what, uint64_t min, uint64_t max)
{
  char *end;
  errno = 0;
  if (s[0] < '0' || s[0] > '9')
    goto bad;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max)
    goto bad;
  return v;
bad:
  fprintf (stderr, BENCH_NAME ": %s must be an integer from %" PRIu64
           " to %" PRIu64 ", not '%s'\n", what, min, max, s);
  exit (2);
}

#endif /* MALLOC_BENCH_UTIL_H */
