/* The one glibc-internal header glibc's benchtests/bench-timing.h needs
   when bench-malloc-thread.c and bench-malloc-simple.c are compiled
   outside glibc's build (bench/malloc-bench.sh): the timer of glibc's
   own USE_CLOCK_GETTIME benchtests build (sysdeps/generic/hp-timing.h,
   CLOCK_MONOTONIC in nanoseconds), without the internal headers that
   file pulls in.  So the benchtests' times are wall nanoseconds, not
   TSC ticks.  */
#ifndef _HP_TIMING_H
#define _HP_TIMING_H 1

#include <stdint.h>
#include <time.h>

typedef uint64_t hp_timing_t;

#define HP_TIMING_INLINE (0)
#define HP_TIMING_NOW(var) \
  ({ struct timespec tv; \
     clock_gettime (CLOCK_MONOTONIC, &tv); \
     (var) = tv.tv_nsec + UINT64_C (1000000000) * tv.tv_sec; })
#define HP_TIMING_DIFF(diff, start, end) ((diff) = (end) - (start))
#define HP_TIMING_ACCUM_NT(sum, diff) ((sum) += (diff))

#endif
